"""Rooms: a class following its teacher's lesson, and guessing the next merge.

A teacher starts a room from a corpus and its settings (the link's params, ``view``); the room
keeps the step the class is at, who joined, the questions asked and every answer. Students read
the room; only the holder of the teacher's key changes it. Everything lives in the store
(:mod:`explorer.serving.store`), so every app process sharing the store sees the same room: SQLite in
the data folder for the processes of one machine, Redis for several machines.

What a room holds (both backends keep the same records)::

    room      code "K7QX2M", key_hash sha256(teacher key), view {"corpus": "...", "preset": ...},
              step 12 (watched on its own: a student's stepper moves to it in the browser),
              rev 7 (bumped by what students must redraw besides the step: a question, a
              lock, a rename, a removal, the end),
              tally 31 (bumped by joins and answers: what the teacher's tally redraws),
              question 3 (the current one, or None), created, active (seconds since the epoch),
              top (the last step its training can reach), starter (the browser that started it)
    members   id (a secret of the student's browser), name (unique in the room, look-alikes too), joined, seen
    questions qid 1, 2, ... with kind "merge" | "count", the step asked at, options, state
              "open" -> "closed" -> "revealed", the answer once revealed
    answers   (qid, member) -> value (an option's index, or a guessed count), at (seconds after
              the question opened); one per member per question, so counted exactly once

Codes are six characters from an alphabet without look-alikes (32**6, about 10**9 codes); a wrong
code gives "no such room" and nothing else. The teacher's key is 192 random bits, kept only as
its SHA-256 and compared in constant time. A room idle for ``idle_hours`` is gone, one that
nobody joined sooner (``empty_minutes``; its teacher's open page keeps it, :meth:`Rooms.keep`);
the number of rooms and of members per room is bounded.

Nothing here can be exhausted or probed by one browser (:class:`Limits`, all from the environment):

- **Starting rooms is rate-limited** per browser and per network address (``starts`` and
  ``address_starts`` in the last hour); the counts are hit logs kept in the store (a table in
  SQLite, sorted sets in Redis), so every app process shares them. A refusal, like the limit of
  rooms, says when the next slot frees (:class:`Wait`).
- **Existence checks give nothing away.** Following a room (:meth:`Rooms.revs_for`) needs a
  member's id or the teacher's follow token (:func:`follow_token`, derived from the key, which
  it cannot stand in for); a missing room and a wrong credential are the same ``None``. Failed
  lookups count per browser and per address (:meth:`Rooms.miss`), and past ``misses`` a minute a
  lookup without a credential is refused (:meth:`Rooms.refused`), so codes cannot be guessed fast.
- **A room's step stays inside its training**: from 0 to ``top``, the last step its trainer can
  reach (given at create; :data:`MAX_STEP` when unknown).
- **A room holds the files its view names** (``holds`` at create): the store keeps them while the
  room lives (:meth:`explorer.serving.store.SqliteStore.hold`, holder ``room:CODE``, deadline moved
  by the room's activity, released by the purge).

>>> import tempfile
>>> from explorer.serving.store import SqliteStore
>>> with tempfile.TemporaryDirectory() as folder:
...     rooms = SqliteRooms(SqliteStore(folder, cap_bytes=2**20, session_quota=2**20))
...     room, key = rooms.create({"corpus": "toy.txt"}, step=0)
...     ana = rooms.join(room.code, "Ana")
...     other = rooms.join(room.code, " ana ")
...     room = rooms.set_step(room.code, key, 3)
...     rooms.close()
>>> ana.name, other.name, room.step, len(key) >= 32
('Ana', 'ana 2', 3, True)
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import functools
import hashlib
import hmac
import json
import math
import random
import re
import secrets
import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

import regex

from .. import settings
from ..errors import ExplorerError

__all__ = [
    "ALPHABET",
    "CODE_LENGTH",
    "MAX_NAME",
    "MAX_STEP",
    "MAX_OPTIONS",
    "Answer",
    "Limits",
    "Member",
    "Question",
    "Room",
    "Revs",
    "RoomError",
    "NoSuchRoom",
    "NotTeacher",
    "RoomEnded",
    "RoomFull",
    "RoomLocked",
    "ServerFull",
    "Wait",
    "Rooms",
    "SqliteRooms",
    "RedisRooms",
    "Standing",
    "ENDED_KEEP_S",
    "HIDDEN_NAME",
    "clean_name",
    "follow_token",
    "holder",
    "leaderboard",
    "merge_options",
    "name_note",
    "normalize_code",
    "public_name",
    "right_options",
    "when",
    "winners",
]

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I, O, 0, 1: read off a projector without doubt
CODE_LENGTH = 6
MAX_NAME = 48  # characters of a display name
MAX_OPTIONS = 8  # candidate pairs of a next-merge question
MAX_SENTENCE = 300  # characters of a token-count question's sentence
MAX_COUNT = 1_000_000  # the largest token count a student may guess
MAX_STEP = 200_000  # a room's last step when its training's is not known (a link's largest step)
START_WINDOW_S = 3600.0  # room starts are counted over the last hour
MISS_WINDOW_S = 60.0  # failed room lookups are counted over the last minute
PRESENT_S = 20.0  # a member seen this recently is present (the page asks every half second)
ENDED_KEEP_S = 3600.0  # an ended room is kept this long, so that its students' pages can say it ended
HIDDEN_NAME = "(name hidden)"  # a name the teacher hid, as every leaderboard shows it
Kind = Literal["merge", "count"]
State = Literal["open", "closed", "revealed"]


class RoomError(ExplorerError):
    """A room cannot do what was asked; the message is one sentence fit for a page."""


class NoSuchRoom(RoomError):
    """No room has that code (never made, expired, or mistyped)."""


class NotTeacher(RoomError):
    """A change to the room without the teacher's key."""


class RoomFull(RoomError):
    """The limit of rooms, or of members in a room, is reached."""


class RoomLocked(RoomError):
    """The teacher has locked the room: nobody new can join."""


class RoomEnded(RoomError):
    """The teacher has ended the room: nothing changes in it any more."""


class Wait(RoomError):
    """A limit that frees by itself at ``frees_at`` (seconds since the epoch): the room limit, the
    rate of room starts, the failed lookups. The message ends with when: ``head``, then
    ``the next one frees at 15:42, in 12 minutes`` (the server's clock; a page may say it again in
    the reader's time zone with :meth:`sentence`)."""

    def __init__(self, head: str, *, frees_at: float, now: float, verb: str = "the next one frees"):
        self.head, self.frees_at, self.now, self.verb = head, frees_at, now, verb
        super().__init__(self.sentence())

    def sentence(self, tz: datetime.tzinfo | None = None) -> str:
        """The message, the time of day in ``tz`` (None: the server's local time)."""
        return f"{self.head}: {self.verb} {when(self.frees_at, self.now, tz)}."


class ServerFull(Wait, RoomFull):
    """The server's limit of open rooms is reached; a place frees when the first idle one closes."""


@dataclass(frozen=True)
class Limits:
    """How many rooms a store keeps, how many members a room takes, how long an idle room lives
    (``empty_minutes`` for one nobody joined), how many rooms a browser and an address may start
    an hour, how many failed room lookups a browser and an address may make a minute. From
    ``BPE_EXPLORER_MAX_ROOMS``, ``BPE_EXPLORER_ROOM_SIZE``, ``BPE_EXPLORER_ROOM_HOURS``,
    ``BPE_EXPLORER_EMPTY_ROOM_MINUTES``, ``BPE_EXPLORER_ROOM_STARTS``,
    ``BPE_EXPLORER_ADDRESS_ROOM_STARTS``, ``BPE_EXPLORER_ROOM_MISSES`` and
    ``BPE_EXPLORER_ADDRESS_ROOM_MISSES``."""

    # the defaults, declared with their variables in ``explorer.settings``
    rooms: int = settings.default_count("BPE_EXPLORER_MAX_ROOMS")
    members: int = settings.default_count("BPE_EXPLORER_ROOM_SIZE")
    idle_hours: float = settings.default_number("BPE_EXPLORER_ROOM_HOURS")
    empty_minutes: float = settings.default_number("BPE_EXPLORER_EMPTY_ROOM_MINUTES")
    starts: int = settings.default_count("BPE_EXPLORER_ROOM_STARTS")
    address_starts: int = settings.default_count("BPE_EXPLORER_ADDRESS_ROOM_STARTS")
    misses: int = settings.default_count("BPE_EXPLORER_ROOM_MISSES")
    address_misses: int = settings.default_count("BPE_EXPLORER_ADDRESS_ROOM_MISSES")

    @classmethod
    def from_env(cls) -> Limits:
        """The limits the environment sets (``explorer.settings``: a bad value is logged and its
        default used)."""
        return cls(
            settings.count("BPE_EXPLORER_MAX_ROOMS"),
            settings.count("BPE_EXPLORER_ROOM_SIZE"),
            settings.number("BPE_EXPLORER_ROOM_HOURS"),
            settings.number("BPE_EXPLORER_EMPTY_ROOM_MINUTES"),
            settings.count("BPE_EXPLORER_ROOM_STARTS"),
            settings.count("BPE_EXPLORER_ADDRESS_ROOM_STARTS"),
            settings.count("BPE_EXPLORER_ROOM_MISSES"),
            settings.count("BPE_EXPLORER_ADDRESS_ROOM_MISSES"),
        )

    @property
    def idle_seconds(self) -> float:
        return self.idle_hours * 3600

    @property
    def empty_seconds(self) -> float:
        """How long a room nobody has joined lives idle (never longer than one with members)."""
        return min(self.empty_minutes * 60, self.idle_seconds)

    def lifetime(self, has_members: bool) -> float:
        """Seconds of idleness a room survives."""
        return self.idle_seconds if has_members else self.empty_seconds


@dataclass(frozen=True)
class Room:
    code: str
    view: dict[str, str]  # the link's params of the corpus and settings (no step)
    step: int
    rev: int  # bumped when what a student sees changes besides the step (a question, a lock, a name, the end)
    tally: int  # bumped when a member joins or answers (what the teacher's tally shows)
    question: int | None  # the current question's qid
    created: float
    active: float
    top: int = MAX_STEP  # the last step its training can reach: set_step refuses any past it
    locked: bool = False  # the teacher closed it to new members
    ended: bool = False  # the teacher ended it: its pages say so, nothing changes it any more


class Revs(NamedTuple):
    """The counters a page following a room watches (``/room-rev``): ``rev`` (what students
    redraw besides the step), ``tally`` (joins and answers: the teacher's tally) and the step."""

    rev: int
    tally: int
    step: int


class Member(NamedTuple):
    id: str  # the student's secret: whoever holds it answers as this member
    name: str
    joined: float
    hidden: bool = False  # the teacher hid the name: leaderboards show HIDDEN_NAME


def public_name(member: Member) -> str:
    """The name a leaderboard shows for ``member``: its own, or a placeholder once the teacher hid it.

    >>> public_name(Member("a", "Ana", 0.0)), public_name(Member("b", "rude", 0.0, hidden=True))
    ('Ana', '(name hidden)')
    """
    return HIDDEN_NAME if member.hidden else member.name


@dataclass(frozen=True)
class Question:
    """A question asked at ``step``. "merge": which pair merges next, among ``options`` (pairs of
    token strings, ``counts`` their counts, shown to students when ``show_counts``); ``answer``
    the pair that merges, and every option of the same count is right too (:func:`right_options`).
    "count": how many tokens ``sentence`` has after the next ``merges`` merges."""

    qid: int
    kind: Kind
    step: int
    options: tuple[tuple[str, str], ...] = ()
    counts: tuple[int, ...] = ()
    show_counts: bool = False
    sentence: str = ""
    merges: int = 1
    state: State = "open"
    answer: int | None = None  # the merged pair's index, or the true count (known at once, shown at reveal)
    opened: float = 0.0

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Question:
        raw = json.loads(text)
        raw["options"] = tuple(tuple(o) for o in raw.get("options", ()))
        raw["counts"] = tuple(raw.get("counts", ()))
        return cls(**raw)


class Answer(NamedTuple):
    member: str
    value: int
    at: float  # seconds after the question opened (the last change)


class Standing(NamedTuple):
    name: str
    points: int
    seconds: float  # the time taken by the answers that scored: the lower wins a tie
    answered: int


# ---- pure parts ------------------------------------------------------------------------------
def normalize_code(text: str) -> str:
    """A room code as typed (spaces, dashes, lower case) in its canonical form.

    >>> normalize_code(" k7q x2m "), normalize_code("k7q-x2m")
    ('K7QX2M', 'K7QX2M')
    """
    return re.sub(r"[\s-]+", "", text or "").upper()[: CODE_LENGTH * 2]


_JOINERS = "\u200c\u200d"  # ZWNJ, ZWJ: they shape Persian words and join emoji (family, flags with tags)
_BLACK_FLAG = "\U0001f3f4"  # a flag of tag characters (Scotland's) starts with it
# invisible though not format characters: the combining grapheme joiner, Hangul fillers, the blank
# braille pattern (a name made of them looks empty, or like another name)
_INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")
_EDGE_JOINERS = re.compile(r"(?<!\S)[\u200c\u200d]+|[\u200c\u200d]+(?!\S)")


def _is_tag(ch: str) -> bool:
    return "\U000e0020" <= ch <= "\U000e007f"


def _tidy_name(text: str) -> str:
    """A name's visible characters, spaces collapsed, not yet cut: control, bidi and other format
    characters dropped, except a joiner (ZWJ, ZWNJ) between two visible characters and the tags
    of a flag."""
    kept: list[str] = []
    for ch in (text or "")[: MAX_NAME * 16]:  # a pasted page is not a name: its head is enough to cut
        if ch.isspace():
            kept.append(" ")
        elif ch in _JOINERS:
            kept.append(ch)
        elif _is_tag(ch):
            if kept and (kept[-1] == _BLACK_FLAG or _is_tag(kept[-1])):
                kept.append(ch)
        elif unicodedata.category(ch)[0] != "C" and ch not in _INVISIBLE:
            kept.append(ch)
    words = " ".join("".join(kept).split())
    # a joiner at a word's edge joins nothing (and one doubled joins no more than one)
    words = re.sub(r"([\u200c\u200d])[\u200c\u200d]+", r"\1", _EDGE_JOINERS.sub("", words))
    return " ".join(words.split())


def _cut(name: str, limit: int = MAX_NAME) -> str:
    """``name`` cut to at most ``limit`` characters, between two graphemes (a flag or a family
    emoji is kept whole or left out, never split into other symbols), and before a word it
    would cut (unless that leaves less than half).

    >>> _cut("ab \U0001f1eb\U0001f1f7", 4), _cut("abc", 4), _cut("Ana Maria", 7), _cut("Anastasia", 7)
    ('ab', 'abc', 'Ana', 'Anastas')
    """
    if len(name) <= limit:
        return name
    out = ""
    for grapheme in regex.findall(r"\X", name):
        if len(out) + len(grapheme) > limit:
            break
        out += grapheme
    out = out or name[:limit]
    head = out.rsplit(" ", 1)[0]
    if not name[len(out)].isspace() and len(head) >= limit // 2:  # mid-word: the words before it
        out = head
    return _EDGE_JOINERS.sub("", out.strip()).strip()


def clean_name(text: str) -> str:
    """A display name as kept: control characters, bidi controls (RLO, LRM...) and invisible
    characters dropped, spaces collapsed, at most ``MAX_NAME`` characters. Joiners inside a name
    stay (an emoji family, Persian's zero-width non-joiner). Markup stays as typed: pages show
    names as text.

    >>> clean_name("  <b>Ana</b>\\n\\t x ")
    '<b>Ana</b> x'
    >>> clean_name("\\x00\\u200b\\u3164 \\u200d")
    ''
    >>> family = "\\U0001f468\\u200d\\U0001f467"
    >>> clean_name("\\u202eAna\\u202c"), clean_name(f"{family} Bo\\u200d") == f"{family} Bo"
    ('Ana', True)
    """
    return _cut(_tidy_name(text))


def name_note(typed: str, kept: str, *, shown: Callable[[str], str] = str) -> str:
    """What a student is told when the room keeps another name than the one typed: cut to the
    length limit, or suffixed because the name (or one that looks the same) is in the room;
    "" when the name is kept as typed (but for spaces and invisible characters). ``shown``
    writes a name as the sentence quotes it (a page sets a right-to-left name apart from the
    sentence, or its suffix and quotes would be drawn in the wrong places).

    >>> name_note("Ana", "Ana"), name_note("Ana", "Ana 2")
    ('', 'The name “Ana” is already in this room, or one that looks the same: you are “Ana 2”.')
    >>> name_note("x" * 50, "x" * 48)
    'Your name is cut short: a name has at most 48 characters.'
    """
    tidy = _tidy_name(typed)
    notes = []
    if len(tidy) > MAX_NAME:
        notes.append(f"Your name is cut short: a name has at most {MAX_NAME} characters.")
    wanted = _cut(tidy)
    if wanted and kept != wanted:
        notes.append(
            f"The name “{shown(wanted)}” is already in this room, or one that looks the same: you are “{shown(kept)}”."
        )
    return " ".join(notes)


@functools.cache
def _prototypes() -> dict[str, str]:
    """Each confusable character's prototype (Unicode's confusables, as the confusable-homoglyphs
    package ships them): characters that look alike share one, "m" looks like "rn". The package
    keeps each link both ways; a class of look-alikes is found by joining its links."""
    from confusable_homoglyphs.confusables import confusables_data

    parent: dict[str, str] = {}

    def root(ch: str) -> str:
        while parent.get(ch, ch) != ch:
            parent[ch] = parent.get(parent[ch], parent[ch])
            ch = parent[ch]
        return ch

    sequences: dict[str, str] = {}
    for char, links in confusables_data.items():
        char = char.strip("\u200e")  # right-to-left characters come wrapped in marks
        if len(char) != 1:
            continue
        for link in links:
            other = link["c"].strip("\u200e")
            if len(other) == 1:
                a, b = root(char), root(other)
                if a != b:
                    parent[max(a, b)] = min(a, b)
            else:  # a character whose prototype is a sequence (m -> rn)
                sequences[char] = other
    table = {ch: root(ch) for ch in parent}
    for char, sequence in sequences.items():
        table[char] = "".join(table.get(c, c) for c in sequence)
    return table


def _skeleton(name: str) -> str:
    """What a name looks like, after UTS #39's skeleton: invisible characters (a joiner)
    dropped, each character replaced by its confusables' prototype.

    >>> _skeleton("\\u0410na") == _skeleton("Ana"), _skeleton("Ana") == _skeleton("Ann")
    (True, False)
    """
    table = _prototypes()
    decomposed = unicodedata.normalize("NFD", name)
    shown = "".join(table.get(ch, ch) for ch in decomposed if unicodedata.category(ch) != "Cf")
    return unicodedata.normalize("NFD", shown)


def _looks(name: str) -> set[str]:
    """The skeletons of a name without case: folded first (Cyrillic "аna" is "ana"), and
    folded after (Greek capitals "ΑΝΑ" look like "ANA", while their small letters "ανα" do not
    look like "ana"). Two names that share one can pass for each other on a leaderboard.

    >>> sorted(_looks("\\u0391\\u039d\\u0391")), _looks("A\\u200dna") == _looks("\\u0430NA") == {"ana"}
    (['ana', 'ava'], True)
    """
    return {_skeleton(name.casefold()), _skeleton(_skeleton(name).casefold())}


def _suffixed(name: str, taken: set[str]) -> str:
    """``name``, or ``name 2``, ``name 3``... when taken (``taken``: the room's names case
    folded), or when it looks like a taken name (Cyrillic "Аna" beside "Ana").

    >>> _suffixed("Ana", {"ana", "ana 2"}), _suffixed("\\u0410na", {"ana"}) == "\\u0410na 2"
    ('Ana 3', True)
    """
    looks = set().union(*(_looks(t) for t in taken))

    def free(candidate: str) -> bool:
        return candidate.casefold() not in taken and not _looks(candidate) & looks

    if free(name):
        return name
    n = 2
    while True:
        candidate = _cut(f"{_cut(name, MAX_NAME - len(str(n)) - 1)} {n}")
        if free(candidate):
            return candidate
        n += 1


def _hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _token_of(key_hash: str) -> str:
    return hashlib.sha256(b"bpe-explorer follow\0" + key_hash.encode()).hexdigest()[:32]


def follow_token(key: str) -> str:
    """What the teacher's page sends to follow its room (``/room-rev``): derived from the key,
    checked against the key's hash the room keeps, and no use for changing the room (the key
    cannot be found from it).

    >>> len(follow_token("k")), follow_token("k") == follow_token("k"), follow_token("k") == follow_token("K")
    (32, True, False)
    """
    return _token_of(_hash_key(key))


def holder(code: str) -> str:
    """The store's holder name of a room (it holds the files the room's view names).

    >>> holder("k7qx2m")
    'room:K7QX2M'
    """
    return f"room:{normalize_code(code)}"


def _bucket(kind: str, who: str) -> str:
    """A rate limit's bucket: what is counted and a hash of whom (no address is kept).

    >>> _bucket("start:b", "b:0123")[:8], len(_bucket("start:b", "b:0123"))
    ('start:b:', 32)
    """
    return f"{kind}:{hashlib.sha256(who.encode('utf-8', 'replace')).hexdigest()[:24]}"


def when(at: float, now: float, tz: datetime.tzinfo | None = None) -> str:
    """When ``at`` comes, for a sentence: its time of day (in ``tz``; None: local time) and how
    far it is from ``now``.

    >>> utc = datetime.timezone.utc
    >>> when(1_800_000_720, 1_800_000_000, utc), when(1_800_000_040, 1_800_000_000, utc)
    ('at 08:12, in 12 minutes', 'at 08:00, in 40 seconds')
    >>> when(1_800_013_000, 1_800_000_000, utc)
    'at 11:36, in 3 h 37 min'
    """
    clock = datetime.datetime.fromtimestamp(at, tz).strftime("%H:%M")
    left = max(0.0, at - now)
    if left < 90:
        seconds = max(1, math.ceil(left))
        return f"at {clock}, in {seconds} second{'s' * (seconds != 1)}"
    minutes = math.ceil(left / 60)
    if minutes < 120:
        return f"at {clock}, in {minutes} minutes"
    return f"at {clock}, in {minutes // 60} h {minutes % 60} min"


def _key_matches(key: str | None, key_hash: str) -> bool:
    return bool(key) and hmac.compare_digest(_hash_key(key), key_hash)  # type: ignore[arg-type]


def merge_options(
    pairs: Sequence[tuple[str, str, int]], *, seed: str, limit: int = MAX_OPTIONS
) -> tuple[tuple[tuple[str, str], ...], tuple[int, ...], int]:
    """The options of a next-merge question: the winner (``pairs[0]``) and the next most frequent
    pairs, ``limit`` in all, in an order drawn from ``seed`` (so the winner's place tells
    nothing); (options, their counts, the winner's index). The counts are kept in the question:
    an option that ties with the winner is right as well.

    >>> opts, counts, right = merge_options([("e", "s", 9), ("s", "t", 9), ("l", "o", 7)], seed="K7QX2M:1")
    >>> sorted(opts) == [("e", "s"), ("l", "o"), ("s", "t")], opts[right], counts[right]
    (True, ('e', 's'), 9)
    """
    chosen = list(pairs[:limit])
    if not chosen:
        raise RoomError("No pair is left to merge at this step: there is nothing to guess.")
    order = list(range(len(chosen)))
    random.Random(hashlib.sha256(seed.encode()).digest()).shuffle(order)
    options = tuple((chosen[i][0], chosen[i][1]) for i in order)
    counts = tuple(int(chosen[i][2]) for i in order)
    return options, counts, order.index(0)


def right_options(question: Question) -> frozenset[int]:
    """The options of a next-merge question that are right: the pair that merges, and every
    offered pair whose count equals its count (as merge-worthy: the trainer's tie-break rule
    picked one of them). A question stored without counts has one right option.

    >>> q = Question(1, "merge", 0, options=(("a", "t"), ("e", "r"), ("o", "n")), counts=(7, 7, 5), answer=1)
    >>> sorted(right_options(q)), sorted(right_options(dataclasses.replace(q, counts=())))
    ([0, 1], [1])
    """
    answer = question.answer
    if question.kind != "merge" or answer is None:
        return frozenset()
    counts = question.counts
    if len(counts) != len(question.options) or not 0 <= answer < len(counts):
        return frozenset({answer})
    return frozenset(i for i, count in enumerate(counts) if count == counts[answer])


def winners(question: Question, answers: Sequence[Answer]) -> set[str]:
    """The members who win a revealed question: a right option (:func:`right_options`: ties
    count), or the closest count.

    >>> q = Question(1, "count", 0, sentence="low", merges=2, state="revealed", answer=5)
    >>> sorted(winners(q, [Answer("a", 4, 1.0), Answer("b", 6, 2.0), Answer("c", 9, 0.5)]))
    ['a', 'b']
    """
    if question.state != "revealed" or question.answer is None or not answers:
        return set()
    if question.kind == "merge":
        right = right_options(question)
        return {a.member for a in answers if a.value in right}
    best = min(abs(a.value - question.answer) for a in answers)
    return {a.member for a in answers if abs(a.value - question.answer) == best}


def leaderboard(
    members: Sequence[Member], questions: Sequence[Question], answers: Mapping[int, Sequence[Answer]]
) -> list[Standing]:
    """Points (one per question won), ties broken by the time the winning answers took (less is
    better), then by name.

    >>> ms = [Member("a", "Ana", 0), Member("b", "Bo", 0)]
    >>> q = Question(1, "merge", 0, options=(("e", "s"), ("l", "o")), state="revealed", answer=0)
    >>> [tuple(s) for s in leaderboard(ms, [q], {1: [Answer("a", 0, 3.0), Answer("b", 0, 1.5)]})]
    [('Bo', 1, 1.5, 1), ('Ana', 1, 3.0, 1)]
    """
    points = {m.id: 0 for m in members}
    seconds = {m.id: 0.0 for m in members}
    answered = {m.id: 0 for m in members}
    for q in questions:
        given = answers.get(q.qid, ())
        won = winners(q, given)
        for a in given:
            if a.member in answered:
                answered[a.member] += 1
            if a.member in won and a.member in points:
                points[a.member] += 1
                seconds[a.member] += a.at
    table = [Standing(m.name, points[m.id], round(seconds[m.id], 3), answered[m.id]) for m in members]
    return sorted(table, key=lambda s: (-s.points, s.seconds, s.name.casefold()))


def _check_count(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise RoomError(f"A guess is a whole number from 0 to {MAX_COUNT:,}.")
    return value


# ---- the store's interface -------------------------------------------------------------------
@runtime_checkable
class Rooms(Protocol):
    """What the app asks of the rooms, whatever store keeps them."""

    limits: Limits

    def create(
        self,
        view: dict[str, str],
        *,
        step: int = 0,
        top: int | None = None,
        starter: str | None = None,
        address: str | None = None,
        holds: Sequence[str] = (),
    ) -> tuple[Room, str]: ...
    def get(self, code: str) -> Room | None: ...
    def revs(self, code: str) -> Revs | None: ...
    def revs_for(self, code: str, *, member: str | None = None, token: str | None = None) -> Revs | None: ...
    def refused(self, *, browser: str | None = None, address: str | None = None) -> Wait | None: ...
    def miss(self, *, browser: str | None = None, address: str | None = None) -> Wait | None: ...
    def starter(self, code: str) -> str | None: ...
    def is_teacher(self, code: str, key: str | None) -> bool: ...
    def set_step(self, code: str, key: str, step: int) -> Room: ...
    def join(self, code: str, name: str) -> Member: ...
    def member(self, code: str, member_id: str) -> Member | None: ...
    def members(self, code: str) -> list[Member]: ...
    def seen(self, code: str, member_id: str) -> None: ...
    def keep(self, code: str) -> bool: ...
    def present(self, code: str) -> int: ...
    def ask(self, code: str, key: str, question: Question) -> Question: ...
    def answer(self, code: str, member_id: str, qid: int, value: int) -> None: ...
    def close_question(self, code: str, key: str, qid: int) -> Question: ...
    def reveal(self, code: str, key: str, qid: int) -> Room: ...
    def question(self, code: str, qid: int) -> Question | None: ...
    def questions(self, code: str) -> list[Question]: ...
    def answers(self, code: str, qid: int) -> list[Answer]: ...
    def lock(self, code: str, key: str, locked: bool = True) -> Room: ...
    def end(self, code: str, key: str) -> None: ...
    def remove(self, code: str, key: str, member_id: str) -> None: ...
    def rename(self, code: str, key: str, member_id: str, name: str) -> Member: ...
    def hide(self, code: str, key: str, member_id: str, hidden: bool = True) -> Member: ...
    def removed(self, code: str, member_id: str) -> bool: ...
    def purge(self) -> int: ...
    def gone_message(self, code: str, *, usual: str | None = None) -> str: ...
    def close(self) -> None: ...


class _Base:
    """What both backends share: the limits, the clock, the checks and the sentences."""

    def __init__(self, *, limits: Limits | None = None, clock: Callable[[], float] = time.time):
        self.limits = limits or Limits.from_env()
        self.clock = clock

    def _expired(self, active: float, has_members: bool = True, ended: float | None = None) -> bool:
        """Whether a room is gone: idle past its lifetime, or ended more than ``ENDED_KEEP_S`` ago."""
        if ended is not None:
            return self.clock() - ended > ENDED_KEEP_S
        return self.clock() - active > self.limits.lifetime(has_members)

    # -- rate limits (each backend keeps the hit logs: ``_take``) --
    def _take(self, buckets: list[tuple[str, int]], window: float, *, record: bool) -> tuple[int, float] | None:
        """None when every bucket (name, limit) has fewer than its limit of hits in the last
        ``window`` seconds (then, when ``record``, one more hit is logged in each); else the
        index of the first full bucket and when it frees."""
        raise NotImplementedError

    @staticmethod
    def _buckets(kind: str, browser: str | None, address: str | None, limits: tuple[int, int]) -> list[tuple[str, int]]:
        """The buckets of whoever is known: the browser (``b``) and the network address (``a``)."""
        found = []
        if browser:
            found.append((_bucket(f"{kind}:b", browser), limits[0]))
        if address:
            found.append((_bucket(f"{kind}:a", address), limits[1]))
        return found

    def _start_buckets(self, browser: str | None, address: str | None) -> list[tuple[str, int]]:
        return self._buckets("start", browser, address, (self.limits.starts, self.limits.address_starts))

    def _too_many_starts(self, buckets: list[tuple[str, int]], blocked: tuple[int, float]) -> Wait:
        index, frees_at = blocked
        name, limit = buckets[index]
        if name.startswith("start:a:"):
            head = (
                f"Your network address has started {limit:,} rooms in the last hour, its limit "
                "(BPE_EXPLORER_ADDRESS_ROOM_STARTS)"
            )
        else:
            head = f"This browser has started {limit:,} rooms in the last hour, its limit (BPE_EXPLORER_ROOM_STARTS)"
        return Wait(head, frees_at=frees_at, now=self.clock())

    def _lookups(self, browser: str | None, address: str | None, *, record: bool) -> Wait | None:
        buckets = self._buckets("miss", browser, address, (self.limits.misses, self.limits.address_misses))
        if not buckets:
            return None
        blocked = self._take(buckets, MISS_WINDOW_S, record=record)
        if blocked is None:
            return None
        return Wait(
            "Too many room codes that match no room were tried from this browser or its network address",
            frees_at=blocked[1],
            now=self.clock(),
            verb="try again",
        )

    def refused(self, *, browser: str | None = None, address: str | None = None) -> Wait | None:
        """Whether lookups without a member's id or the teacher's key are refused now for this
        browser or address (too many failed ones lately); the sentence saying until when."""
        return self._lookups(browser, address, record=False)

    def miss(self, *, browser: str | None = None, address: str | None = None) -> Wait | None:
        """Count a failed lookup (no such room, or a wrong member or key) for this browser and
        address; None, or the sentence when they are already at their limit (nothing counted)."""
        return self._lookups(browser, address, record=True)

    @staticmethod
    def _top(top: int | None, step: int) -> int:
        """A new room's last step, and its first one checked against it."""
        last = MAX_STEP if top is None else max(0, int(top))
        if not 0 <= int(step) <= last:
            raise RoomError(f"A room starts at a step from 0 to {last:,}, the last its training reaches.")
        return last

    @staticmethod
    def _check_step(step: int, top: int) -> int:
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= top:
            raise RoomError(f"Step {step!r} is outside this room's training: its steps go from 0 to {top:,}.")
        return step

    def _no_room(self, code: str) -> NoSuchRoom:
        return NoSuchRoom(self.gone_message(code))

    def gone_message(self, code: str, *, usual: str | None = None) -> str:
        """The sentence for a room that is not there (any more): lost with a store recreated
        within the rooms' idle time, else ``usual`` (by default: mistyped, or idle for hours)."""
        shown = normalize_code(code)[:CODE_LENGTH]
        lost = self._lost_store()
        if lost is not None:  # "idle hours" would be wrong: every room went with the store
            at = time.strftime("%H:%M", time.localtime(lost.created))
            return (
                f"No room has the code {shown!r} any more: the class server's store was found damaged, removed or "
                f"emptied and started again, empty, at {at} (server time), and every room in it is gone; the "
                "teacher can start a new room."
            )
        if usual is not None:
            return usual
        return (
            f"No room has the code {shown!r}: check the code on the teacher's screen (rooms close after a few "
            "idle hours)."
        )

    def _generation(self) -> Any:
        """The store's current Generation, or None when it cannot be told (each backend's)."""
        return None

    def _lost_store(self) -> Any:
        """The store's Generation when it replaced a lost store within the rooms' idle time
        (a room of the old store might still be in use), else None."""
        from .store import recreated_since

        generation = self._generation()
        if generation is not None and recreated_since(generation, seconds=self.limits.idle_seconds):
            return generation
        return None

    @staticmethod
    def _ended() -> RoomEnded:
        return RoomEnded("The teacher ended this room: nothing changes in it any more.")

    @staticmethod
    def _locked() -> RoomLocked:
        return RoomLocked("The teacher has locked this room: nobody new can join it now.")

    @staticmethod
    def _stranger() -> RoomError:
        return RoomError("That student is not in this room (any more).")

    @staticmethod
    def _not_teacher() -> NotTeacher:
        return NotTeacher("Only the teacher's link can change this room (its key is missing or wrong).")

    def _full_rooms(self, frees_at: float) -> ServerFull:
        return ServerFull(
            f"This server already has {self.limits.rooms:,} open rooms, its limit (BPE_EXPLORER_MAX_ROOMS), "
            "and closes a room when it has been idle for a while",
            frees_at=frees_at,
            now=self.clock(),
        )

    def _full_room(self) -> RoomFull:
        return RoomFull(f"This room already has {self.limits.members:,} members, its limit (BPE_EXPLORER_ROOM_SIZE).")

    @staticmethod
    def _new_code() -> str:
        return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))

    @staticmethod
    def _name(name: str) -> str:
        cleaned = clean_name(name)
        if not cleaned:
            raise RoomError("Type a name to join (the class sees it on the leaderboard).")
        return cleaned

    @staticmethod
    def _check_question(question: Question) -> Question:
        if question.kind == "merge":
            if (
                not 1 <= len(question.options) <= MAX_OPTIONS
                or question.answer is None
                or not 0 <= question.answer < len(question.options)
            ):
                raise RoomError("A next-merge question needs from 1 to 8 options, the right one among them.")
        elif question.kind == "count":
            if not question.sentence.strip() or len(question.sentence) > MAX_SENTENCE:
                raise RoomError(f"A token-count question needs a sentence of 1 to {MAX_SENTENCE} characters.")
            if not 1 <= question.merges <= 1000 or question.answer is None:
                raise RoomError("A token-count question looks from 1 to 1,000 merges ahead.")
        else:
            raise RoomError(f"Unknown kind of question {question.kind!r}.")
        return question

    def _check_value(self, question: Question, value: int) -> int:
        if question.kind == "merge":
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(question.options):
                raise RoomError("That answer is not one of the question's options.")
            return value
        return _check_count(value)

    @staticmethod
    def _answering(question: Question | None, current: int | None) -> Question:
        if question is None or question.qid != current or question.state != "open":
            raise _Base._closed()
        return question

    @staticmethod
    def _never_asked() -> RoomError:
        return RoomError("That question was never asked in this room.")

    @staticmethod
    def _closed() -> RoomError:
        return RoomError("This question is closed: the teacher has stopped taking answers.")


# ---- the rules, written once -------------------------------------------------------------------
# Every rule of a room (the teacher's key, its capacity, its names, its questions and answers, its
# life and the rate limits) is written here once, as Python over a transaction (:class:`_Tx`):
# each backend gives the storage primitives only, reads and writes that take effect together.


@dataclass(frozen=True)
class _Record:
    """A room as its store keeps it: what pages see (``room``) and what only the rules read."""

    room: Room
    key_hash: str  # sha256 of the teacher's key
    starter: str | None  # the browser that started it
    has_members: bool  # whether anyone has joined (a room nobody joined lives a shorter time)
    ended_at: float | None  # when the teacher ended it
    qids: int  # the last qid asked (0: none yet)


class _Tx(Protocol):
    """The storage primitives a backend gives the rules, holding no rule themselves: reads, and
    writes that take effect together or not at all (SQLite: one write transaction; Redis: one
    compare-and-set that writes only if what the transaction read is unchanged). ``code`` is
    always a canonical room code."""

    def ahead(self, code: str, *, member: str = "", qid: int | None = None, checked: bool = False) -> None:
        """A hint: the room, the member and the question this transaction is about to read (a
        backend across a network fetches them in one round trip; an embedded one ignores it).
        ``checked``: the change writes only if every read it decides on is unchanged, so a
        backend may hand it replies it read a moment ago instead of asking again."""

    def record(self, code: str) -> _Record | None: ...
    def member(self, code: str, member_id: str) -> Member | None: ...
    def members(self, code: str) -> list[Member]: ...
    def member_count(self, code: str) -> int: ...
    def names(self, code: str) -> dict[str, str]: ...  # case-folded name -> member id
    def question(self, code: str, qid: int) -> Question | None: ...
    def questions(self, code: str) -> list[Question]: ...
    def answers(self, code: str, qid: int) -> list[Answer]: ...
    def removed(self, code: str, member_id: str) -> bool: ...
    def present(self, code: str, since: float) -> int: ...
    def open_rooms(self) -> list[tuple[str, float, bool]]: ...  # (code, active, has members), not ended
    def idle_rooms(self, before: float) -> list[tuple[str, float, bool, float | None]]: ...  # and ended ones
    def hits(self, bucket: str, since: float) -> list[float]: ...  # the hits after ``since``, oldest first
    def add_room(self, record: _Record) -> None: ...
    def set_room(self, code: str, **fields: Any) -> None: ...  # step, question, qids, locked
    def touch(self, code: str, *, rev: int, tally: int, now: float, lifetime: float) -> None: ...
    def put_question(self, code: str, question: Question) -> None: ...
    def add_member(self, code: str, member: Member, folded: str) -> None: ...
    def set_member(self, code: str, member: Member, folded: str | None = None) -> None: ...
    def drop_member(self, code: str, member_id: str) -> None: ...
    def put_answer(self, code: str, qid: int, member_id: str, value: int, at: float) -> None: ...
    def see(self, code: str, member_id: str, now: float) -> None: ...
    def end(self, code: str, now: float) -> None: ...
    def release(self, code: str) -> None: ...
    def delete_room(self, code: str) -> None: ...
    def add_hit(self, bucket: str, now: float, window: float) -> None: ...
    def drop_hits(self, before: float) -> None: ...


class _Rules(_Base):
    """The rooms' operations, each one transaction of the backend's (:meth:`_transact`)."""

    def _transact(self, op: Callable[[_Tx], Any], *, write: bool = True) -> Any:
        """``op`` on a transaction: its writes take effect together after it returns (none if
        it raises); ``write=False``: it only reads."""
        raise NotImplementedError

    # -- the checks --
    def _found(self, tx: _Tx, code: str) -> _Record | None:
        """The room, while it lives (not idle past its lifetime, nor ended long ago)."""
        record = tx.record(normalize_code(code))
        if record is None or self._expired(record.room.active, record.has_members, record.ended_at):
            return None
        return record

    def _live(self, tx: _Tx, code: str) -> _Record:
        record = self._found(tx, code)
        if record is None:
            raise self._no_room(code)
        return record

    def _open(self, tx: _Tx, code: str) -> _Record:
        """The room, while it has not ended (a student's change)."""
        record = self._live(tx, code)
        if record.room.ended:
            raise self._ended()
        return record

    def _teacher(self, tx: _Tx, code: str, key: str | None) -> _Record:
        """The room, for the holder of its key while it has not ended: every teacher's change
        starts here, in the transaction that makes the change."""
        record = self._live(tx, code)
        if not _key_matches(key, record.key_hash):
            raise self._not_teacher()
        if record.room.ended:
            raise self._ended()
        return record

    def _teacher_member(self, tx: _Tx, code: str, key: str | None, member_id: str) -> tuple[_Record, Member]:
        tx.ahead(normalize_code(code), member=member_id)
        record = self._teacher(tx, code, key)
        member = tx.member(record.room.code, member_id) if member_id else None
        if member is None:
            raise self._stranger()
        return record, member

    def _touch(
        self, tx: _Tx, record: _Record, *, rev: int = 0, tally: int = 0, has_members: bool | None = None
    ) -> None:
        """A change keeps the room alive: its activity, and the deadline of the files it holds."""
        has = record.has_members if has_members is None else has_members
        tx.touch(record.room.code, rev=rev, tally=tally, now=self.clock(), lifetime=self.limits.lifetime(has))

    # -- rate limits --
    def _take(self, buckets: list[tuple[str, int]], window: float, *, record: bool) -> tuple[int, float] | None:
        return self._transact(lambda tx: self._take_in(tx, buckets, window, record=record))

    def _take_in(
        self, tx: _Tx, buckets: list[tuple[str, int]], window: float, *, record: bool
    ) -> tuple[int, float] | None:
        """:meth:`_Base._take` in a transaction."""
        now = self.clock()
        for index, (bucket, limit) in enumerate(buckets):
            hits = tx.hits(bucket, now - window)
            if len(hits) >= limit:  # the next slot frees when the hit that fills it leaves the window
                return index, hits[len(hits) - limit] + window
        if record:
            for bucket, _ in buckets:
                tx.add_hit(bucket, now, window)
        return None

    # -- the interface --
    def create(
        self,
        view: dict[str, str],
        *,
        step: int = 0,
        top: int | None = None,
        starter: str | None = None,
        address: str | None = None,
        holds: Sequence[str] = (),
    ) -> tuple[Room, str]:
        """A new room and its teacher's key. ``top``: the last step its training reaches;
        ``starter`` and ``address``: who starts it (each limited to so many starts an hour);
        ``holds``: the stored files its view names, held while it lives."""
        key = secrets.token_urlsafe(24)
        last = self._top(top, step)
        buckets = self._start_buckets(starter, address)

        def op(tx: _Tx) -> Room:
            self._purge_in(tx)
            blocked = self._take_in(tx, buckets, START_WINDOW_S, record=False)
            if blocked is not None:
                raise self._too_many_starts(buckets, blocked)
            now = self.clock()
            ends = [
                active + self.limits.lifetime(has)
                for _, active, has in tx.open_rooms()
                if not self._expired(active, has)
            ]
            if len(ends) >= self.limits.rooms:  # full: say when the first open room expires, if nothing happens in it
                raise self._full_rooms(min(ends, default=now))
            while True:
                code = self._new_code()
                if tx.record(code) is None:
                    break
            room = Room(code, dict(view), int(step), 1, 0, None, now, now, last)
            record = _Record(room, _hash_key(key), starter, has_members=False, ended_at=None, qids=0)
            tx.add_room(record)
            self._touch(tx, record)
            self._take_in(tx, buckets, START_WINDOW_S, record=True)
            return room

        room = self._transact(op)
        if holds:
            self.store.hold(holder(room.code), list(holds), until=room.active + self.limits.empty_seconds)  # type: ignore[attr-defined]
        return room, key

    def get(self, code: str) -> Room | None:
        record = self._transact(lambda tx: self._found(tx, code), write=False)
        return None if record is None else record.room

    def revs(self, code: str) -> Revs | None:
        room = self.get(code)
        return None if room is None else Revs(room.rev, room.tally, room.step)

    def revs_for(self, code: str, *, member: str | None = None, token: str | None = None) -> Revs | None:
        """The room's counters (rev, tally, step) for one of its members or its teacher (the follow
        token); None for a missing room and a wrong credential alike."""

        def op(tx: _Tx) -> Revs | None:
            tx.ahead(normalize_code(code), member=member or "")
            record = self._found(tx, code)
            if record is None:
                return None
            room = record.room
            if member and tx.member(room.code, member) is not None:
                return Revs(room.rev, room.tally, room.step)
            if token and hmac.compare_digest(_token_of(record.key_hash), token):
                return Revs(room.rev, room.tally, room.step)
            return None

        return self._transact(op, write=False)

    def starter(self, code: str) -> str | None:
        """The browser that started the room (None: gone, or not known)."""
        record = self._transact(lambda tx: self._found(tx, code), write=False)
        return None if record is None else record.starter

    def is_teacher(self, code: str, key: str | None) -> bool:
        """Whether ``key`` is the room's, while the room lives and has not ended."""

        def op(tx: _Tx) -> bool:
            with contextlib.suppress(RoomError):
                self._teacher(tx, code, key)
                return True
            return False

        return self._transact(op, write=False)

    def set_step(self, code: str, key: str, step: int) -> Room:
        """Move the class to ``step``. The step is a counter of its own (:class:`Revs`): ``rev``
        is left alone, so the students' pages move to the step in the browser, without a rerun."""

        def op(tx: _Tx) -> None:
            record = self._teacher(tx, code, key)
            if self._check_step(step, record.room.top) != record.room.step:
                tx.set_room(record.room.code, step=int(step))
                self._touch(tx, record)

        return self._changed(code, op)

    def _changed(self, code: str, op: Callable[[_Tx], None]) -> Room:
        """Run a teacher's change ``op``, then read the room as it is."""
        self._transact(op)
        room = self.get(code)
        if room is None:
            raise self._no_room(code)
        return room

    def join(self, code: str, name: str) -> Member:
        name = self._name(name)

        def op(tx: _Tx) -> Member:
            record = self._open(tx, code)
            if record.room.locked:
                raise self._locked()
            if tx.member_count(record.room.code) >= self.limits.members:
                raise self._full_room()
            kept = _suffixed(name, set(tx.names(record.room.code)))
            member = Member(secrets.token_urlsafe(16), kept, self.clock())
            tx.add_member(record.room.code, member, kept.casefold())
            self._touch(tx, record, tally=1, has_members=True)
            return member

        return self._transact(op)

    def member(self, code: str, member_id: str) -> Member | None:
        def op(tx: _Tx) -> Member | None:
            tx.ahead(normalize_code(code), member=member_id)
            record = self._found(tx, code)
            if record is None or not member_id:
                return None
            return tx.member(record.room.code, member_id)

        return self._transact(op, write=False)

    def members(self, code: str) -> list[Member]:
        return self._transact(lambda tx: tx.members(self._live(tx, code).room.code), write=False)

    def seen(self, code: str, member_id: str) -> None:
        def op(tx: _Tx) -> None:
            canonical = normalize_code(code)
            if member_id and tx.member(canonical, member_id) is not None:
                tx.see(canonical, member_id, self.clock())

        self._transact(op)

    def keep(self, code: str) -> bool:
        """The teacher's page is open: the room is not idle (its activity, and its files' hold,
        move on; nothing for the pages to redraw). False when the room is gone."""

        def op(tx: _Tx) -> bool:
            tx.ahead(normalize_code(code), checked=True)
            record = self._found(tx, code)
            if record is None or record.room.ended:
                return False
            self._touch(tx, record)
            return True

        return self._transact(op)

    def present(self, code: str) -> int:
        return self._transact(lambda tx: tx.present(normalize_code(code), self.clock() - PRESENT_S), write=False)

    def ask(self, code: str, key: str, question: Question) -> Question:
        self._check_question(question)

        def op(tx: _Tx) -> Question:
            record = self._teacher(tx, code, key)
            room = record.room
            if room.question is not None:  # a question left open is closed unrevealed: it scores nothing
                old = tx.question(room.code, room.question)
                if old is not None and old.state == "open":
                    tx.put_question(room.code, dataclasses.replace(old, state="closed"))
            asked = dataclasses.replace(question, qid=record.qids + 1, state="open", opened=self.clock())
            tx.put_question(room.code, asked)
            tx.set_room(room.code, question=asked.qid, qids=asked.qid)
            self._touch(tx, record, rev=1, tally=1)
            return asked

        return self._transact(op)

    def answer(self, code: str, member_id: str, qid: int, value: int) -> None:
        def op(tx: _Tx) -> None:
            tx.ahead(normalize_code(code), member=member_id, qid=int(qid), checked=True)
            record = self._open(tx, code)
            room = record.room
            if not member_id or tx.member(room.code, member_id) is None:
                raise RoomError("You are not a member of this room: join it again with its code.")
            question = self._answering(tx.question(room.code, qid), room.question)
            checked = self._check_value(question, value)
            tx.put_answer(room.code, question.qid, member_id, checked, round(self.clock() - question.opened, 3))
            self._touch(tx, record, tally=1)

        self._transact(op)

    def _asked(self, tx: _Tx, record: _Record, qid: int) -> Question:
        question = tx.question(record.room.code, qid)
        if question is None:
            raise self._never_asked()
        return question

    def close_question(self, code: str, key: str, qid: int) -> Question:
        def op(tx: _Tx) -> Question:
            record = self._teacher(tx, code, key)
            question = self._asked(tx, record, qid)
            if question.state == "open":
                question = dataclasses.replace(question, state="closed")
                tx.put_question(record.room.code, question)
                self._touch(tx, record, rev=1, tally=1)
            return question

        return self._transact(op)

    def reveal(self, code: str, key: str, qid: int) -> Room:
        def op(tx: _Tx) -> None:
            record = self._teacher(tx, code, key)
            question, room = self._asked(tx, record, qid), record.room
            if question.state != "revealed":
                tx.put_question(room.code, dataclasses.replace(question, state="revealed"))
                tx.set_room(room.code, step=min(room.top, max(room.step, question.step + question.merges)))
                self._touch(tx, record, rev=1, tally=1)

        return self._changed(code, op)

    def question(self, code: str, qid: int) -> Question | None:
        return self._transact(lambda tx: tx.question(normalize_code(code), int(qid)), write=False)

    def questions(self, code: str) -> list[Question]:
        return self._transact(lambda tx: tx.questions(normalize_code(code)), write=False)

    def answers(self, code: str, qid: int) -> list[Answer]:
        return self._transact(lambda tx: tx.answers(normalize_code(code), int(qid)), write=False)

    # -- moderation: the teacher's alone --
    def lock(self, code: str, key: str, locked: bool = True) -> Room:
        """Close the room to new members (``locked``), or open it again; the room as it is then."""

        def op(tx: _Tx) -> None:
            record = self._teacher(tx, code, key)
            if record.room.locked != bool(locked):
                tx.set_room(record.room.code, locked=bool(locked))
                self._touch(tx, record, rev=1, tally=1)

        return self._changed(code, op)

    def end(self, code: str, key: str) -> None:
        """End the room: its students' pages say so (for ``ENDED_KEEP_S``, then it is gone), it
        counts no more against the server's limit of rooms, and the files it held are let go."""

        def op(tx: _Tx) -> None:
            record = self._teacher(tx, code, key)
            tx.end(record.room.code, self.clock())
            tx.release(record.room.code)

        self._transact(op)

    def remove(self, code: str, key: str, member_id: str) -> None:
        """Take a member out of the room: its answers leave every tally and the leaderboard, and
        its page says it was removed (:meth:`removed`)."""

        def op(tx: _Tx) -> None:
            record, member = self._teacher_member(tx, code, key, member_id)
            others = tx.member_count(record.room.code) - 1
            tx.drop_member(record.room.code, member.id)
            self._touch(tx, record, rev=1, tally=1, has_members=others > 0)

        self._transact(op)

    def rename(self, code: str, key: str, member_id: str, name: str) -> Member:
        """Give a member another name (cleaned, and suffixed when another member has it)."""
        wanted = self._name(name)

        def op(tx: _Tx) -> Member:
            record, member = self._teacher_member(tx, code, key, member_id)
            taken = {folded for folded, owner in tx.names(record.room.code).items() if owner != member.id}
            renamed = member._replace(name=_suffixed(wanted, taken))
            tx.set_member(record.room.code, renamed, renamed.name.casefold())
            self._touch(tx, record, rev=1, tally=1)
            return renamed

        return self._transact(op)

    def hide(self, code: str, key: str, member_id: str, hidden: bool = True) -> Member:
        """Hide a member's name on every leaderboard (:data:`HIDDEN_NAME`), or show it again."""

        def op(tx: _Tx) -> Member:
            record, member = self._teacher_member(tx, code, key, member_id)
            changed = member._replace(hidden=bool(hidden))
            tx.set_member(record.room.code, changed)
            self._touch(tx, record, rev=1, tally=1)
            return changed

        return self._transact(op)

    def removed(self, code: str, member_id: str) -> bool:
        """Whether the teacher removed this member from the room (which is still there)."""

        def op(tx: _Tx) -> bool:
            record = self._found(tx, code)
            return record is not None and bool(member_id) and tx.removed(record.room.code, member_id)

        return self._transact(op, write=False)

    def purge(self) -> int:
        """Delete the rooms idle past the limit (a shorter one for rooms nobody joined) or ended
        a while ago, with their members, questions and answers, and release the files they
        held; forget the start and lookup counts that no window reaches any more."""
        return len(self._transact(self._purge_in))

    def _purge_in(self, tx: _Tx) -> list[str]:
        now = self.clock()
        gone = [
            code
            for code, active, has_members, ended in tx.idle_rooms(now - self.limits.empty_seconds)
            if self._expired(active, has_members, ended)
        ]
        for code in gone:
            tx.delete_room(code)
        tx.drop_hits(now - max(START_WINDOW_S, MISS_WINDOW_S))
        return gone


# ---- SQLite: the primitives ----------------------------------------------------------------------
_SQL = """
CREATE TABLE IF NOT EXISTS rooms (
    code TEXT PRIMARY KEY, key_hash TEXT NOT NULL, view TEXT NOT NULL, step INTEGER NOT NULL,
    rev INTEGER NOT NULL, tally INTEGER NOT NULL, question INTEGER, created REAL NOT NULL, active REAL NOT NULL,
    top INTEGER, starter TEXT
);
CREATE TABLE IF NOT EXISTS room_members (
    code TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, folded TEXT NOT NULL, joined REAL NOT NULL,
    seen REAL NOT NULL, PRIMARY KEY (code, id), UNIQUE (code, folded)
);
CREATE TABLE IF NOT EXISTS room_questions (
    code TEXT NOT NULL, qid INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (code, qid)
);
CREATE TABLE IF NOT EXISTS room_answers (
    code TEXT NOT NULL, qid INTEGER NOT NULL, member TEXT NOT NULL, value INTEGER NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (code, qid, member)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS room_removed (
    code TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (code, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS room_hits (bucket TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS room_hits_bucket ON room_hits (bucket, at);
"""
# a store file from before them gets them: (table, column, type)
_ADDED_COLUMNS = (
    ("rooms", "top", "INTEGER"),
    ("rooms", "starter", "TEXT"),
    ("rooms", "locked", "INTEGER"),
    ("rooms", "ended", "REAL"),
    ("room_members", "hidden", "INTEGER"),
)
_ROOM_TABLES = ("rooms", "room_members", "room_questions", "room_answers", "room_removed")
_HAS_MEMBERS = "EXISTS (SELECT 1 FROM room_members m WHERE m.code = rooms.code)"
_RECORD = (
    "SELECT code, key_hash, view, step, rev, tally, question, created, active, top, starter, locked, ended, "
    f"{_HAS_MEMBERS}, (SELECT COALESCE(MAX(qid), 0) FROM room_questions q WHERE q.code = rooms.code) "
    "FROM rooms WHERE code = ?"
)
_SET_COLUMNS: dict[str, Callable[[Any], object]] = {
    "step": int,
    "question": lambda qid: qid,
    "locked": int,
}  # qids: MAX(qid) of room_questions


class _SqliteTx:
    """The rooms' primitives on a connection to the store's file, inside the caller's write
    transaction (``BEGIN IMMEDIATE``) when it writes: each write happens at once, and the
    transaction's commit makes them all visible together."""

    def __init__(self, conn: Any):
        self.conn = conn

    def ahead(self, code: str, *, member: str = "", qid: int | None = None, checked: bool = False) -> None:
        """Nothing: a read of the file costs no round trip."""

    def record(self, code: str) -> _Record | None:
        row = self.conn.execute(_RECORD, (code,)).fetchone()
        if row is None:
            return None
        code, key_hash, view, step, rev, tally, question, created, active, top, starter, locked, ended, has, qids = row
        top = MAX_STEP if top is None else top
        room = Room(
            code, json.loads(view), step, rev, tally, question, created, active, top, bool(locked), ended is not None
        )
        return _Record(room, key_hash, starter, bool(has), ended, qids)

    def member(self, code: str, member_id: str) -> Member | None:
        row = self.conn.execute(
            "SELECT id, name, joined, hidden FROM room_members WHERE code = ? AND id = ?", (code, member_id)
        ).fetchone()
        return None if row is None else Member(row[0], row[1], row[2], bool(row[3]))

    def members(self, code: str) -> list[Member]:
        rows = self.conn.execute(
            "SELECT id, name, joined, hidden FROM room_members WHERE code = ? ORDER BY joined, name", (code,)
        ).fetchall()
        return [Member(i, name, joined, bool(hidden)) for i, name, joined, hidden in rows]

    def member_count(self, code: str) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM room_members WHERE code = ?", (code,)).fetchone()[0]

    def names(self, code: str) -> dict[str, str]:
        return dict(self.conn.execute("SELECT folded, id FROM room_members WHERE code = ?", (code,)).fetchall())

    def question(self, code: str, qid: int) -> Question | None:
        row = self.conn.execute("SELECT body FROM room_questions WHERE code = ? AND qid = ?", (code, qid)).fetchone()
        return None if row is None else Question.from_json(row[0])

    def questions(self, code: str) -> list[Question]:
        rows = self.conn.execute("SELECT body FROM room_questions WHERE code = ? ORDER BY qid", (code,)).fetchall()
        return [Question.from_json(body) for (body,) in rows]

    def answers(self, code: str, qid: int) -> list[Answer]:
        rows = self.conn.execute(
            "SELECT member, value, at FROM room_answers WHERE code = ? AND qid = ? ORDER BY at, member", (code, qid)
        ).fetchall()
        return [Answer(*row) for row in rows]

    def removed(self, code: str, member_id: str) -> bool:
        found = self.conn.execute("SELECT 1 FROM room_removed WHERE code = ? AND id = ?", (code, member_id))
        return found.fetchone() is not None

    def present(self, code: str, since: float) -> int:
        return self.conn.execute(
            "SELECT COUNT(*) FROM room_members WHERE code = ? AND seen >= ?", (code, since)
        ).fetchone()[0]

    def open_rooms(self) -> list[tuple[str, float, bool]]:
        rows = self.conn.execute(f"SELECT code, active, {_HAS_MEMBERS} FROM rooms WHERE ended IS NULL").fetchall()
        return [(code, active, bool(has)) for code, active, has in rows]

    def idle_rooms(self, before: float) -> list[tuple[str, float, bool, float | None]]:
        rows = self.conn.execute(
            f"SELECT code, active, {_HAS_MEMBERS}, ended FROM rooms WHERE active < ? OR ended IS NOT NULL", (before,)
        ).fetchall()
        return [(code, active, bool(has), ended) for code, active, has, ended in rows]

    def hits(self, bucket: str, since: float) -> list[float]:
        rows = self.conn.execute("SELECT at FROM room_hits WHERE bucket = ? AND at > ? ORDER BY at", (bucket, since))
        return [at for (at,) in rows]

    def add_room(self, record: _Record) -> None:
        room = record.room
        self.conn.execute(
            "INSERT INTO rooms (key_hash, code, view, step, rev, tally, question, created, active, top, starter) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.key_hash,
                room.code,
                json.dumps(room.view, sort_keys=True),
                room.step,
                room.rev,
                room.tally,
                room.question,
                room.created,
                room.active,
                room.top,
                record.starter,
            ),
        )

    def set_room(self, code: str, **fields: Any) -> None:
        kept = {name: _SET_COLUMNS[name](value) for name, value in fields.items() if name in _SET_COLUMNS}
        if kept:
            sets = ", ".join(f"{name} = ?" for name in kept)
            self.conn.execute(f"UPDATE rooms SET {sets} WHERE code = ?", (*kept.values(), code))

    def touch(self, code: str, *, rev: int, tally: int, now: float, lifetime: float) -> None:
        from .store import extend_hold

        self.conn.execute(
            "UPDATE rooms SET rev = rev + ?, tally = tally + ?, active = ? WHERE code = ?", (rev, tally, now, code)
        )
        extend_hold(self.conn, holder(code), now + lifetime)

    def put_question(self, code: str, question: Question) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO room_questions (code, qid, body) VALUES (?, ?, ?)",
            (code, question.qid, question.to_json()),
        )

    def add_member(self, code: str, member: Member, folded: str) -> None:
        self.conn.execute(
            "INSERT INTO room_members (code, id, name, folded, joined, seen, hidden) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (code, member.id, member.name, folded, member.joined, member.joined, int(member.hidden)),
        )

    def set_member(self, code: str, member: Member, folded: str | None = None) -> None:
        self.conn.execute(
            "UPDATE room_members SET name = ?, folded = COALESCE(?, folded), hidden = ? WHERE code = ? AND id = ?",
            (member.name, folded, int(member.hidden), code, member.id),
        )

    def drop_member(self, code: str, member_id: str) -> None:
        self.conn.execute("DELETE FROM room_members WHERE code = ? AND id = ?", (code, member_id))
        self.conn.execute("DELETE FROM room_answers WHERE code = ? AND member = ?", (code, member_id))
        self.conn.execute("INSERT OR IGNORE INTO room_removed (code, id) VALUES (?, ?)", (code, member_id))

    def put_answer(self, code: str, qid: int, member_id: str, value: int, at: float) -> None:
        self.conn.execute(
            "INSERT INTO room_answers (code, qid, member, value, at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (code, qid, member) DO UPDATE SET value = excluded.value, at = excluded.at",
            (code, qid, member_id, value, at),
        )

    def see(self, code: str, member_id: str, now: float) -> None:
        self.conn.execute("UPDATE room_members SET seen = ? WHERE code = ? AND id = ?", (now, code, member_id))

    def end(self, code: str, now: float) -> None:
        self.conn.execute(
            "UPDATE rooms SET rev = rev + 1, tally = tally + 1, active = ?, ended = ? WHERE code = ?", (now, now, code)
        )

    def release(self, code: str) -> None:
        from .store import release_hold

        release_hold(self.conn, holder(code))

    def delete_room(self, code: str) -> None:
        for table in _ROOM_TABLES:
            self.conn.execute(f"DELETE FROM {table} WHERE code = ?", (code,))
        self.release(code)

    def add_hit(self, bucket: str, now: float, window: float) -> None:
        self.conn.execute("DELETE FROM room_hits WHERE bucket = ? AND at <= ?", (bucket, now - window))
        self.conn.execute("INSERT INTO room_hits (bucket, at) VALUES (?, ?)", (bucket, now))

    def drop_hits(self, before: float) -> None:
        self.conn.execute("DELETE FROM room_hits WHERE at <= ?", (before,))


class SqliteRooms(_Rules):
    """Rooms in the SQLite store's file (:class:`explorer.serving.store.SqliteStore`): its connection, its
    lock and its recovery from a damaged file; six tables of their own. Every change is one
    write transaction (``BEGIN IMMEDIATE``), so processes writing at once queue, and an answer
    is an upsert keyed by (room, question, member): counted once however many arrive together."""

    def __init__(self, store, *, limits: Limits | None = None, clock: Callable[[], float] = time.time):
        super().__init__(limits=limits, clock=clock)
        self.store = store
        self._ready: tuple | None = None  # (connection, file) the tables were made for

    def close(self) -> None:
        self.store.close()

    def _generation(self) -> Any:
        # the open file's, read when it was opened (rooms ask inside the store's own calls)
        return self.store._generation

    def _transact(self, op: Callable[[_Tx], Any], *, write: bool = True) -> Any:
        """``op`` on the store's connection, in one write transaction when it writes."""
        from .store import write_transaction

        def wrapped(conn):
            made_for = (id(conn), self.store._identity)
            if self._ready != made_for:
                with write_transaction(conn):
                    for statement in filter(str.strip, _SQL.split(";")):
                        conn.execute(statement)
                    for table, name, kind in _ADDED_COLUMNS:
                        if name not in {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}:
                            conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
                self._ready = made_for
            if not write:
                return op(_SqliteTx(conn))
            with write_transaction(conn):
                return op(_SqliteTx(conn))

        return self.store._run(wrapped)


# ---- Redis: the primitives -----------------------------------------------------------------------
# Keys, under the prefix (default "bpe-explorer:"):
#   rooms                      sorted set: code -> last activity (for the room limit and the purge)
#   room:CODE                  hash: key_hash, view, step, rev, tally, question, created, active, qids,
#                              members (how many joined), top, starter, locked ("1"), ended (when)
#   room:CODE:members          hash: member id -> {"name", "joined", "hidden"} (JSON)
#   room:CODE:names            hash: casefolded name -> member id (a name is unique in the room)
#   room:CODE:seen             sorted set: member id -> last seen
#   room:CODE:questions        hash: qid -> Question (JSON)
#   room:CODE:answers:QID      hash: member id -> {"value", "at"} (JSON)
#   room:CODE:removed          set: the ids of the members the teacher removed
#   hits:KIND:HASH             sorted set: one member per room start (or failed lookup) -> when
# A transaction reads with plain commands, noting what each decision read, and writes with one
# script, _LUA_CAS, which checks that all it read is unchanged and only then writes (else the
# rules run again on what is there now): the script holds no rule. Every change also sets the
# room's keys to expire a while after the room's idle limit, so Redis forgets abandoned rooms by
# itself, and moves the deadline of the files the room holds (the store's ``holders``).

# ARGV[1]: [checks, writes] as JSON. A check is [kind, key index, ...]: ["hget", k, field, value or
# false for none], ["hlen", k, n], ["zcount", k, min, max, n], ["exists", k, 0 or 1]; a write is
# [command, key index, args...]. 0 when every check held and everything was written; else the
# index (from 1) of the first check that failed, and nothing is written.
_LUA_CAS = """
local doc = cjson.decode(ARGV[1])
for i, c in ipairs(doc[1]) do
  local kind, key, found, want = c[1], KEYS[c[2]], nil, nil
  if kind == 'hget' then found, want = redis.call('HGET', key, c[3]), c[4]
  elseif kind == 'hlen' then found, want = redis.call('HLEN', key), c[3]
  elseif kind == 'zcount' then found, want = redis.call('ZCOUNT', key, c[3], c[4]), c[5]
  elseif kind == 'exists' then found, want = redis.call('EXISTS', key), c[3]
  else return redis.error_reply('unknown check: ' .. tostring(kind)) end
  if found ~= want then return i end
end
for _, w in ipairs(doc[2]) do
  local args = {}
  for j = 3, #w do args[#args + 1] = w[j] end
  redis.call(w[1], KEYS[w[2]], unpack(args))
end
return 0
"""
# the room's fields whose change must make a transaction that read them start again (its
# activity and tallies move with every answer and are only ever added to, never decided on)
_DECIDING = ("key_hash", "step", "top", "question", "qids", "locked", "ended", "view", "starter")
_CAS_TRIES = 200  # a transaction that finds its reads changed this many times in a row gives up
# how long a reply read ahead may stand in for a new read in a change that checks it (a room's
# activity, which no check covers, is then at most this old when its idle limit is judged), and
# how many replies are kept before the stale ones are forgotten
_RECENT_S = 2.0
_RECENT_MAX = 10_000
_ROOM_PARTS = ("members", "names", "seen", "questions", "removed")


def _when(raw: str | None) -> float | None:
    """A time kept in a Redis hash field ("" or missing: none).

    >>> _when("1800000000.5"), _when(""), _when(None)
    (1800000000.5, None, None)
    """
    return float(raw) if raw else None


def _member_of(member_id: str, body: str) -> Member:
    """A member from its JSON in a room's ``members`` hash."""
    raw = json.loads(body)
    return Member(member_id, raw["name"], float(raw["joined"]), bool(raw.get("hidden")))


def _member_body(member: Member) -> str:
    """A member's JSON in a room's ``members`` hash."""
    raw: dict[str, Any] = {"name": member.name, "joined": member.joined}
    if member.hidden:
        raw["hidden"] = True
    return json.dumps(raw, ensure_ascii=False)


def _send(client: Any, read: tuple[str, str, str]) -> Any:
    """A read (command, key, field; no field for a whole hash) sent on a client or a pipeline."""
    command, key, field = read
    return getattr(client, command)(key, *((field,) if field else ()))


class _RedisTx:
    """The rooms' primitives on a Redis client (replies in str): reads go to the server at once
    and are noted as checks; writes wait for :meth:`commit`, one script that applies them only
    if every check still holds."""

    def __init__(self, rooms: RedisRooms, client: Any, *, reuse: bool = False):
        self.rooms, self.client = rooms, client
        # whether this try may take recent replies (``ahead(checked=True)``), and whether it did
        self.reuse, self.reused = reuse, False
        self.keys: dict[str, int] = {}  # key -> its index in the script's KEYS, from 1
        self.checks: list[list[Any]] = []
        self.writes: list[list[Any]] = []
        self.after: list[Callable[[], object]] = []  # once written: the store's own calls
        self._qids: dict[str, int] = {}
        self._names: dict[str, dict[str, str]] = {}
        # replies read ahead (:meth:`ahead`), each taken once: (command, key, field) -> reply
        self._ahead: dict[tuple[str, str, str], Any] = {}

    def _key(self, code: str, part: str = "") -> str:
        # ``code`` is canonical here (the rules normalise it once): a room's keys are many a change
        return f"{self.rooms.prefix}room:{code}{':' + part if part else ''}"

    def ahead(self, code: str, *, member: str = "", qid: int | None = None, checked: bool = False) -> None:
        """One pipelined round trip for the reads the rules are about to make: an answer reads
        the room, its member and its question, and would wait on three replies in turn. A
        ``checked`` change takes them from this process's recent replies when it has them all
        (none: its compare-and-set checks each it decides on, and a stale one makes it run again
        on fresh replies)."""
        wanted = [("hgetall", self._key(code), "")]
        if member:
            wanted.append(("hget", self._key(code, "members"), member))
        if qid is not None:
            wanted.append(("hget", self._key(code, "questions"), str(int(qid))))
        if checked and self.reuse:
            recent = self.rooms.recent(wanted)
            if recent is not None:
                self._ahead.update(zip(wanted, recent))
                self.reused = True
                return
        pipe = self.client.pipeline(transaction=False)
        for read in wanted:
            _send(pipe, read)
        replies = pipe.execute()
        self._ahead.update(zip(wanted, replies))
        self.rooms.remember(wanted, replies)

    def _read(self, command: str, key: str, field: str = "") -> Any:
        """One read (``hgetall`` or ``hget``): its reply read ahead, else from the server now."""
        read = (command, key, field)
        return self._ahead.pop(read) if read in self._ahead else _send(self.client, read)

    def _at(self, key: str) -> int:
        return self.keys.setdefault(key, len(self.keys) + 1)

    def _check(self, kind: str, key: str, *args: Any) -> None:
        self.checks.append([kind, self._at(key), *args])

    def _write(self, command: str, key: str, *args: object) -> None:
        self.writes.append([command, self._at(key), *(str(a) for a in args)])

    def commit(self) -> bool:
        """Apply the writes if nothing read has changed; whether they were applied."""
        if not self.writes:
            return True
        doc = json.dumps([self.checks, self.writes], ensure_ascii=False)
        return self.rooms._cas(self.client, list(self.keys), doc) == 0

    # -- reads --
    def record(self, code: str) -> _Record | None:
        key = self._key(code)
        raw = self._read("hgetall", key)
        if not raw:
            self._check("exists", key, 0)
            return None
        for field in _DECIDING:
            self._check("hget", key, field, raw.get(field, False))
        qids = int(raw.get("qids") or 0)
        self._qids[code] = qids
        room = Room(
            code,
            json.loads(raw["view"]),
            int(raw["step"]),
            int(raw["rev"]),
            int(raw["tally"]),
            int(raw["question"]) if raw.get("question") else None,
            float(raw["created"]),
            float(raw["active"]),
            int(raw["top"]) if raw.get("top") else MAX_STEP,
            raw.get("locked") == "1",
            _when(raw.get("ended")) is not None,
        )
        # a room from before the count of members is taken for one with members (the long life)
        return _Record(
            room, raw["key_hash"], raw.get("starter") or None, raw.get("members") != "0", _when(raw.get("ended")), qids
        )

    def member(self, code: str, member_id: str) -> Member | None:
        key = self._key(code, "members")
        body = self._read("hget", key, member_id)
        self._check("hget", key, member_id, False if body is None else body)
        return None if body is None else _member_of(member_id, body)

    def members(self, code: str) -> list[Member]:
        raw = self.client.hgetall(self._key(code, "members"))
        return sorted((_member_of(mid, body) for mid, body in raw.items()), key=lambda m: (m.joined, m.name))

    def member_count(self, code: str) -> int:
        key = self._key(code, "members")
        count = int(self.client.hlen(key))
        self._check("hlen", key, count)
        return count

    def names(self, code: str) -> dict[str, str]:
        self._names[code] = dict(self.client.hgetall(self._key(code, "names")))
        return dict(self._names[code])

    def question(self, code: str, qid: int) -> Question | None:
        key = self._key(code, "questions")
        body = self._read("hget", key, str(int(qid)))
        self._check("hget", key, str(int(qid)), False if body is None else body)
        return None if body is None else Question.from_json(body)

    def questions(self, code: str) -> list[Question]:
        raw = self.client.hvals(self._key(code, "questions"))
        return sorted((Question.from_json(body) for body in raw), key=lambda q: q.qid)

    def answers(self, code: str, qid: int) -> list[Answer]:
        raw = self.client.hgetall(self._key(code, f"answers:{int(qid)}"))
        out = [
            Answer(mid, int(body["value"]), float(body["at"]))
            for mid, body in ((mid, json.loads(text)) for mid, text in raw.items())
        ]
        return sorted(out, key=lambda a: (a.at, a.member))

    def removed(self, code: str, member_id: str) -> bool:
        return bool(self.client.sismember(self._key(code, "removed"), member_id))

    def present(self, code: str, since: float) -> int:
        return int(self.client.zcount(self._key(code, "seen"), since, "+inf"))

    def _indexed(self, before: float | str) -> list[tuple[str, float, bool]]:
        index = self.rooms._index
        listed = self.client.zrangebyscore(index, "-inf", before, withscores=True)
        self._check("zcount", index, "-inf", str(before), len(listed))
        counts = self.client.pipeline(transaction=False)
        for code, _ in listed:
            counts.hget(self._key(code), "members")
        joined = counts.execute() if listed else []
        return [(code, float(active), has != "0") for (code, active), has in zip(listed, joined)]

    def open_rooms(self) -> list[tuple[str, float, bool]]:
        return self._indexed("+inf")

    def idle_rooms(self, before: float) -> list[tuple[str, float, bool, float | None]]:
        # an ended room has left the index: its keys expire by themselves
        return [(code, active, has, None) for code, active, has in self._indexed(repr(before))]

    def hits(self, bucket: str, since: float) -> list[float]:
        key = self.rooms._hits(bucket)
        found = [float(at) for _, at in self.client.zrangebyscore(key, f"({since!r}", "+inf", withscores=True)]
        self._check("zcount", key, f"({since!r}", "+inf", len(found))
        return found

    # -- writes --
    def _room_keys(self, code: str) -> list[str]:
        answers = [self._key(code, f"answers:{q}") for q in range(1, self._qids.get(code, 0) + 1)]
        return [self._key(code), *(self._key(code, part) for part in _ROOM_PARTS), *answers]

    def add_room(self, record: _Record) -> None:
        room = record.room
        self._write(
            "HSET",
            self._key(room.code),
            *("key_hash", record.key_hash, "view", json.dumps(room.view, sort_keys=True), "step", room.step),
            *("rev", room.rev, "tally", room.tally, "question", "", "created", repr(room.created)),
            *("active", repr(room.active), "qids", 0, "members", 0, "top", room.top, "starter", record.starter or ""),
        )
        self._qids[room.code] = 0

    def set_room(self, code: str, **fields: Any) -> None:
        shown: dict[str, Callable[[Any], object]] = {
            "step": lambda v: int(v),
            "question": lambda v: "" if v is None else int(v),
            "qids": lambda v: int(v),
            "locked": lambda v: "1" if v else "0",
        }
        pairs = [item for name, value in fields.items() for item in (name, shown[name](value))]
        self._write("HSET", self._key(code), *pairs)
        if "qids" in fields:
            self._qids[code] = int(fields["qids"])

    def touch(self, code: str, *, rev: int, tally: int, now: float, lifetime: float) -> None:
        room = self._key(code)
        if rev:
            self._write("HINCRBY", room, "rev", rev)
        self._write("HINCRBY", room, "tally", tally)
        self._write("HSET", room, "active", repr(now))
        self._write("ZADD", self.rooms._index, repr(now), code)
        for key in self._room_keys(code):
            self._write("EXPIRE", key, math.floor(lifetime) + 3600)
        self._write("ZADD", self.rooms.store.holders_key, "XX", f"{now + lifetime:.6f}", holder(code))

    def put_question(self, code: str, question: Question) -> None:
        self._write("HSET", self._key(code, "questions"), question.qid, question.to_json())

    def add_member(self, code: str, member: Member, folded: str) -> None:
        names = self._key(code, "names")
        self._check("hget", names, folded, False)
        self._write("HSET", names, folded, member.id)
        self._write("HSET", self._key(code, "members"), member.id, _member_body(member))
        self._write("HINCRBY", self._key(code), "members", 1)
        self._write("ZADD", self._key(code, "seen"), repr(member.joined), member.id)

    def set_member(self, code: str, member: Member, folded: str | None = None) -> None:
        if folded is not None:  # a new name: free (or already its own), and its old names let go
            names, known = self._key(code, "names"), self._names.get(code)
            if known is None:
                known = self.names(code)
            self._check("hget", names, folded, known.get(folded, False))
            stale = [name for name, owner in known.items() if owner == member.id and name != folded]
            if stale:
                self._write("HDEL", names, *stale)
            self._write("HSET", names, folded, member.id)
        self._write("HSET", self._key(code, "members"), member.id, _member_body(member))

    def drop_member(self, code: str, member_id: str) -> None:
        names = self._key(code, "names")
        stale = [name for name, owner in self.names(code).items() if owner == member_id]
        if stale:
            self._write("HDEL", names, *stale)
        self._write("HDEL", self._key(code, "members"), member_id)
        self._write("ZREM", self._key(code, "seen"), member_id)
        for q in range(1, self._qids.get(code, 0) + 1):
            self._write("HDEL", self._key(code, f"answers:{q}"), member_id)
        self._write("SADD", self._key(code, "removed"), member_id)
        self._write("HINCRBY", self._key(code), "members", -1)

    def put_answer(self, code: str, qid: int, member_id: str, value: int, at: float) -> None:
        self._write("HSET", self._key(code, f"answers:{int(qid)}"), member_id, json.dumps({"value": value, "at": at}))

    def see(self, code: str, member_id: str, now: float) -> None:
        self._write("ZADD", self._key(code, "seen"), repr(now), member_id)

    def end(self, code: str, now: float) -> None:
        room = self._key(code)
        self._write("HSET", room, "ended", repr(now))
        self._write("HINCRBY", room, "rev", 1)
        self._write("HINCRBY", room, "tally", 1)
        self._write("ZREM", self.rooms._index, code)
        for key in self._room_keys(code):  # kept until its pages have had time to say it ended
            self._write("EXPIRE", key, math.ceil(ENDED_KEEP_S) + 60)

    def release(self, code: str) -> None:
        self.after.append(lambda: self.rooms.store.release(holder(code)))

    def delete_room(self, code: str) -> None:
        qids = int(self.client.hget(self._key(code), "qids") or 0)
        self._qids[code] = max(qids, self._qids.get(code, 0))
        for key in self._room_keys(code):
            self._write("DEL", key)
        self._write("ZREM", self.rooms._index, code)
        self.release(code)

    def add_hit(self, bucket: str, now: float, window: float) -> None:
        key = self.rooms._hits(bucket)
        self._write("ZREMRANGEBYSCORE", key, "-inf", repr(now - window))
        self._write("ZADD", key, f"{now:.6f}", secrets.token_hex(8))
        self._write("EXPIRE", key, math.ceil(window) + 1)

    def drop_hits(self, before: float) -> None:
        """Nothing: a hit log expires by itself once its window has passed."""


class RedisRooms(_Rules):
    """Rooms on a Redis server, for app processes on several machines. A change reads what its
    rules need and writes with one compare-and-set script (:data:`_LUA_CAS`): when another
    server changed what it read in the meantime, nothing is written and the rules run again on
    what is there now, so two servers answering at once cannot both pass a check the other changes."""

    def __init__(self, store, *, limits: Limits | None = None, clock: Callable[[], float] = time.time):
        super().__init__(limits=limits, clock=clock)
        self.store = store  # a RedisStore: its clients, its prefix, its errors (StoreError, no password)
        self.prefix = store.prefix
        self._script: Any = None
        # replies read ahead lately, (command, key, field) -> (when, reply): an answer runs its
        # rules on them and its compare-and-set checks them, one round trip instead of two
        self._recent: dict[tuple[str, str, str], tuple[float, Any]] = {}

    def remember(self, reads: Sequence[tuple[str, str, str]], replies: Sequence[Any]) -> None:
        """Keep replies just read for a change that checks what it reads (``ahead(checked=True)``)."""
        now = time.monotonic()
        if len(self._recent) > _RECENT_MAX:  # rooms and members come and go: forget the stale
            # a copy of the items first: another session's thread may add to the dict meanwhile
            self._recent = {read: kept for read, kept in list(self._recent.items()) if now - kept[0] < _RECENT_S}
        self._recent.update((read, (now, reply)) for read, reply in zip(reads, replies))

    def recent(self, reads: Sequence[tuple[str, str, str]]) -> list[Any] | None:
        """The replies to ``reads`` read in the last ``_RECENT_S`` seconds, if all of them were."""
        now, out = time.monotonic(), []
        for read in reads:
            kept = self._recent.get(read)
            if kept is None or now - kept[0] >= _RECENT_S:
                return None
            out.append(kept[1])
        return out

    def close(self) -> None:
        self.store.close()

    def _generation(self) -> Any:
        from .store import StoreError

        try:
            return self.store.generation()
        except StoreError:  # unreachable: say what a missing room usually means
            return None

    def _transact(self, op: Callable[[_Tx], Any], *, write: bool = True) -> Any:
        """``op`` on a transaction of the store's client that replies in str, run again while
        what it read changes before its writes."""
        from .store import StoreError

        def run(client) -> tuple[Any, _RedisTx]:
            for attempt in range(_CAS_TRIES):
                tx = _RedisTx(self, client, reuse=write and attempt == 0)
                # a try on recent replies stands only once its compare-and-set confirms them: a
                # refusal, or a result with nothing to write, is decided again on fresh ones
                try:
                    result = op(tx)
                except RoomError:
                    if tx.reused:
                        continue
                    raise
                if tx.reused and not tx.writes:
                    continue
                if not write or tx.commit():
                    return result, tx
            raise StoreError(
                "The app's store is busy (other app processes are changing the room); try again in a moment."
            )

        result, tx = self.store._call(lambda client, _: run(client), text=True)
        for then in tx.after:
            then()
        return result

    def _cas(self, client: Any, keys: list[str], doc: str) -> int:
        if self._script is None:  # a script object is bound to no connection: client= picks one
            self._script = client.register_script(_LUA_CAS)
        return int(self._script(keys=keys, args=[doc], client=client))

    def _hits(self, bucket: str) -> str:
        return f"{self.prefix}hits:{bucket}"

    @property
    def _index(self) -> str:
        return f"{self.prefix}rooms"

    def _key(self, code: str, part: str = "") -> str:
        return f"{self.prefix}room:{normalize_code(code)}{':' + part if part else ''}"


def rooms_for(store) -> Rooms:
    """The rooms kept in the same place as ``store``'s files: its SQLite file, or its Redis."""
    from .store import RedisStore

    return RedisRooms(store) if isinstance(store, RedisStore) else SqliteRooms(store)
