"""Rooms: a class following its teacher's lesson, and guessing the next merge.

A teacher starts a room from a corpus and its settings (the link's params, ``view``); the room
keeps the step the class is at, who joined, the questions asked and every answer. Students read
the room; only the holder of the teacher's key changes it. Everything lives in the store
(:mod:`explorer.serving.store`), so every app process sharing the store sees the same room: SQLite in
the data folder for the processes of one machine, Redis for several machines.

What a room holds (both backends keep the same records)::

    room      code "K7QX2M", key_hash sha256(teacher key), view {"corpus": "...", "preset": ...},
              step 12, rev 7 (bumped by what students must redraw: step, question),
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
    rev: int  # bumped when what a student sees changes (the step, a question)
    tally: int  # bumped when a member joins or answers (what the teacher's tally shows)
    question: int | None  # the current question's qid
    created: float
    active: float
    top: int = MAX_STEP  # the last step its training can reach: set_step refuses any past it
    locked: bool = False  # the teacher closed it to new members
    ended: bool = False  # the teacher ended it: its pages say so, nothing changes it any more


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
    def revs(self, code: str) -> tuple[int, int] | None: ...
    def revs_for(self, code: str, *, member: str | None = None, token: str | None = None) -> tuple[int, int] | None: ...
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


# ---- SQLite ----------------------------------------------------------------------------------
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
_ROOM_COLUMNS = "code, view, step, rev, tally, question, created, active"
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


class SqliteRooms(_Base):
    """Rooms in the SQLite store's file (:class:`explorer.serving.store.SqliteStore`): its connection, its
    lock and its recovery from a damaged file; four tables of their own. Every change is one
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

    # -- plumbing --
    def _run(self, op: Callable[[Any], Any], *, write: bool = False) -> Any:
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
                return op(conn)
            with write_transaction(conn):
                return op(conn)

        return self.store._run(wrapped)

    def _room_row(self, conn, code: str) -> Room | None:
        row = conn.execute(
            f"SELECT {_ROOM_COLUMNS}, top, {_HAS_MEMBERS}, locked, ended FROM rooms WHERE code = ?",
            (normalize_code(code),),
        ).fetchone()
        if row is None or self._expired(row[7], bool(row[9]), row[11]):
            return None
        code, view, step, rev, tally, question, created, active, top, _, locked, ended = row
        return Room(
            code,
            json.loads(view),
            step,
            rev,
            tally,
            question,
            created,
            active,
            MAX_STEP if top is None else top,
            bool(locked),
            ended is not None,
        )

    def _room_for(self, conn, code: str) -> Room:
        room = self._room_row(conn, code)
        if room is None:
            raise self._no_room(code)
        return room

    def _teacher_room(self, conn, code: str, key: str | None) -> Room:
        """The room, for the holder of its key while it has not ended."""
        room = self._room_for(conn, code)
        (key_hash,) = conn.execute("SELECT key_hash FROM rooms WHERE code = ?", (room.code,)).fetchone()
        if not _key_matches(key, key_hash):
            raise self._not_teacher()
        if room.ended:
            raise self._ended()
        return room

    def _open_room(self, conn, code: str) -> Room:
        """The room, while it has not ended (a student's change)."""
        room = self._room_for(conn, code)
        if room.ended:
            raise self._ended()
        return room

    def _teacher_member(self, conn, code: str, key: str | None, member_id: str) -> tuple[Room, Member]:
        """The room and one of its members, for the holder of its key."""
        room = self._teacher_room(conn, code, key)
        member = self._member_row(conn, room.code, member_id)
        if member is None:
            raise self._stranger()
        return room, member

    @staticmethod
    def _member_row(conn, code: str, member_id: str) -> Member | None:
        row = conn.execute(
            "SELECT id, name, joined, hidden FROM room_members WHERE code = ? AND id = ?", (code, member_id)
        ).fetchone()
        return None if row is None else Member(row[0], row[1], row[2], bool(row[3]))

    def _bump(self, conn, code: str, *, rev: int = 0, tally: int = 0, **columns) -> None:
        from .store import extend_hold

        sets = ", ".join(f"{name} = ?" for name in columns)
        now = self.clock()
        conn.execute(
            f"UPDATE rooms SET rev = rev + ?, tally = tally + ?, active = ?{', ' + sets if sets else ''} "
            "WHERE code = ?",
            (rev, tally, now, *columns.values(), code),
        )
        # the files the room holds stay as long as it lives: its activity moves their deadline on
        (has_members,) = conn.execute("SELECT EXISTS (SELECT 1 FROM room_members WHERE code = ?)", (code,)).fetchone()
        extend_hold(conn, holder(code), now + self.limits.lifetime(bool(has_members)))

    def _take(self, buckets: list[tuple[str, int]], window: float, *, record: bool) -> tuple[int, float] | None:
        return self._run(lambda conn: self._take_in(conn, buckets, window, record=record), write=True)

    def _take_in(
        self, conn, buckets: list[tuple[str, int]], window: float, *, record: bool
    ) -> tuple[int, float] | None:
        """:meth:`_Base._take` inside a write transaction."""
        now = self.clock()
        for index, (bucket, limit) in enumerate(buckets):
            conn.execute("DELETE FROM room_hits WHERE bucket = ? AND at <= ?", (bucket, now - window))
            hits = [at for (at,) in conn.execute("SELECT at FROM room_hits WHERE bucket = ? ORDER BY at", (bucket,))]
            if len(hits) >= limit:  # the next slot frees when the hit that fills it leaves the window
                return index, hits[len(hits) - limit] + window
        if record:
            conn.executemany("INSERT INTO room_hits (bucket, at) VALUES (?, ?)", [(b, now) for b, _ in buckets])
        return None

    def _next_free(self, conn) -> float:
        """When the first of the open rooms expires, if nothing happens in it."""
        (at,) = conn.execute(
            f"SELECT MIN(active + CASE WHEN {_HAS_MEMBERS} THEN ? ELSE ? END) FROM rooms WHERE ended IS NULL",
            (self.limits.idle_seconds, self.limits.empty_seconds),
        ).fetchone()
        return self.clock() if at is None else at

    def _question(self, conn, code: str, qid: int) -> Question | None:
        row = conn.execute("SELECT body FROM room_questions WHERE code = ? AND qid = ?", (code, qid)).fetchone()
        return None if row is None else Question.from_json(row[0])

    def _put_question(self, conn, code: str, question: Question) -> None:
        conn.execute(
            "INSERT OR REPLACE INTO room_questions (code, qid, body) VALUES (?, ?, ?)",
            (code, question.qid, question.to_json()),
        )

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

        def op(conn) -> Room:
            self._purge(conn)
            blocked = self._take_in(conn, buckets, START_WINDOW_S, record=False)
            if blocked is not None:
                raise self._too_many_starts(buckets, blocked)
            (live,) = conn.execute("SELECT COUNT(*) FROM rooms WHERE ended IS NULL").fetchone()
            if live >= self.limits.rooms:
                raise self._full_rooms(self._next_free(conn))
            now = self.clock()
            while True:
                code = self._new_code()
                if conn.execute("SELECT 1 FROM rooms WHERE code = ?", (code,)).fetchone() is None:
                    break
            conn.execute(
                f"INSERT INTO rooms (key_hash, {_ROOM_COLUMNS}, top, starter) VALUES (?, ?, ?, ?, 1, 0, NULL, ?, ?, ?, ?)",
                (_hash_key(key), code, json.dumps(view, sort_keys=True), int(step), now, now, last, starter),
            )
            self._take_in(conn, buckets, START_WINDOW_S, record=True)
            return Room(code, dict(view), int(step), 1, 0, None, now, now, last)

        room = self._run(op, write=True)
        if holds:
            self.store.hold(holder(room.code), list(holds), until=room.active + self.limits.empty_seconds)
        return room, key

    def get(self, code: str) -> Room | None:
        return self._run(lambda conn: self._room_row(conn, code))

    def revs(self, code: str) -> tuple[int, int] | None:
        room = self.get(code)
        return None if room is None else (room.rev, room.tally)

    def revs_for(self, code: str, *, member: str | None = None, token: str | None = None) -> tuple[int, int] | None:
        """The room's (rev, tally) for one of its members or its teacher (the follow token); None
        for a missing room and a wrong credential alike."""

        def op(conn) -> tuple[int, int] | None:
            room = self._room_row(conn, code)
            if room is None:
                return None
            if (
                member
                and conn.execute("SELECT 1 FROM room_members WHERE code = ? AND id = ?", (room.code, member)).fetchone()
            ):
                return room.rev, room.tally
            (key_hash,) = conn.execute("SELECT key_hash FROM rooms WHERE code = ?", (room.code,)).fetchone()
            if token and hmac.compare_digest(_token_of(key_hash), token):
                return room.rev, room.tally
            return None

        return self._run(op)

    def starter(self, code: str) -> str | None:
        """The browser that started the room (None: gone, or not known)."""

        def op(conn) -> str | None:
            if self._room_row(conn, code) is None:
                return None
            row = conn.execute("SELECT starter FROM rooms WHERE code = ?", (normalize_code(code),)).fetchone()
            return row[0] if row else None

        return self._run(op)

    def is_teacher(self, code: str, key: str | None) -> bool:
        def op(conn) -> bool:
            with contextlib.suppress(RoomError):
                self._teacher_room(conn, code, key)
                return True
            return False

        return self._run(op)

    def set_step(self, code: str, key: str, step: int) -> Room:
        def op(conn) -> Room:
            room = self._teacher_room(conn, code, key)
            if self._check_step(step, room.top) != room.step:
                self._bump(conn, room.code, rev=1, step=int(step))
            return self._room_for(conn, room.code)

        return self._run(op, write=True)

    def join(self, code: str, name: str) -> Member:
        name = self._name(name)

        def op(conn) -> Member:
            room = self._open_room(conn, code)
            if room.locked:
                raise self._locked()
            folded = {row[0] for row in conn.execute("SELECT folded FROM room_members WHERE code = ?", (room.code,))}
            if len(folded) >= self.limits.members:
                raise self._full_room()
            kept = _suffixed(name, folded)
            member = Member(secrets.token_urlsafe(16), kept, self.clock())
            conn.execute(
                "INSERT INTO room_members (code, id, name, folded, joined, seen) VALUES (?, ?, ?, ?, ?, ?)",
                (room.code, member.id, kept, kept.casefold(), member.joined, member.joined),
            )
            self._bump(conn, room.code, tally=1)
            return member

        return self._run(op, write=True)

    def member(self, code: str, member_id: str) -> Member | None:
        def op(conn) -> Member | None:
            room = self._room_row(conn, code)
            if room is None or not member_id:
                return None
            return self._member_row(conn, room.code, member_id)

        return self._run(op)

    def members(self, code: str) -> list[Member]:
        def op(conn) -> list[Member]:
            room = self._room_for(conn, code)
            rows = conn.execute(
                "SELECT id, name, joined, hidden FROM room_members WHERE code = ? ORDER BY joined, name", (room.code,)
            ).fetchall()
            return [Member(i, name, joined, bool(hidden)) for i, name, joined, hidden in rows]

        return self._run(op)

    def seen(self, code: str, member_id: str) -> None:
        self._run(
            lambda conn: conn.execute(
                "UPDATE room_members SET seen = ? WHERE code = ? AND id = ?",
                (self.clock(), normalize_code(code), member_id),
            ),
            write=True,
        )

    def keep(self, code: str) -> bool:
        """The teacher's page is open: the room is not idle (its activity, and its files' hold,
        move on; nothing for the pages to redraw). False when the room is gone."""

        def op(conn) -> bool:
            room = self._room_row(conn, code)
            if room is None or room.ended:
                return False
            self._bump(conn, room.code)
            return True

        return self._run(op, write=True)

    def present(self, code: str) -> int:
        return self._run(
            lambda conn: conn.execute(
                "SELECT COUNT(*) FROM room_members WHERE code = ? AND seen >= ?",
                (normalize_code(code), self.clock() - PRESENT_S),
            ).fetchone()[0]
        )

    def ask(self, code: str, key: str, question: Question) -> Question:
        self._check_question(question)

        def op(conn) -> Question:
            room = self._teacher_room(conn, code, key)
            (last,) = conn.execute(
                "SELECT COALESCE(MAX(qid), 0) FROM room_questions WHERE code = ?", (room.code,)
            ).fetchone()
            if room.question is not None:  # a question left open is closed unrevealed: it scores nothing
                old = self._question(conn, room.code, room.question)
                if old is not None and old.state == "open":
                    self._put_question(conn, room.code, dataclasses.replace(old, state="closed"))
            asked = dataclasses.replace(question, qid=last + 1, state="open", opened=self.clock())
            self._put_question(conn, room.code, asked)
            self._bump(conn, room.code, rev=1, tally=1, question=asked.qid)
            return asked

        return self._run(op, write=True)

    def answer(self, code: str, member_id: str, qid: int, value: int) -> None:
        def op(conn) -> None:
            room = self._open_room(conn, code)
            if (
                conn.execute("SELECT 1 FROM room_members WHERE code = ? AND id = ?", (room.code, member_id)).fetchone()
                is None
            ):
                raise RoomError("You are not a member of this room: join it again with its code.")
            question = self._answering(self._question(conn, room.code, qid), room.question)
            checked = self._check_value(question, value)
            conn.execute(
                "INSERT INTO room_answers (code, qid, member, value, at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (code, qid, member) DO UPDATE SET value = excluded.value, at = excluded.at",
                (room.code, qid, member_id, checked, round(self.clock() - question.opened, 3)),
            )
            self._bump(conn, room.code, tally=1)

        self._run(op, write=True)

    def close_question(self, code: str, key: str, qid: int) -> Question:
        def op(conn) -> Question:
            room = self._teacher_room(conn, code, key)
            question = self._question(conn, room.code, qid)
            if question is None:
                raise self._never_asked()
            if question.state == "open":
                question = dataclasses.replace(question, state="closed")
                self._put_question(conn, room.code, question)
                self._bump(conn, room.code, rev=1, tally=1)
            return question

        return self._run(op, write=True)

    def reveal(self, code: str, key: str, qid: int) -> Room:
        def op(conn) -> Room:
            room = self._teacher_room(conn, code, key)
            question = self._question(conn, room.code, qid)
            if question is None:
                raise self._never_asked()
            if question.state != "revealed":
                self._put_question(conn, room.code, dataclasses.replace(question, state="revealed"))
                step = min(room.top, max(room.step, question.step + question.merges))
                self._bump(conn, room.code, rev=1, tally=1, step=step)
            return self._room_for(conn, room.code)

        return self._run(op, write=True)

    def question(self, code: str, qid: int) -> Question | None:
        return self._run(lambda conn: self._question(conn, normalize_code(code), qid))

    def questions(self, code: str) -> list[Question]:
        rows = self._run(
            lambda conn: conn.execute(
                "SELECT body FROM room_questions WHERE code = ? ORDER BY qid", (normalize_code(code),)
            ).fetchall()
        )
        return [Question.from_json(body) for (body,) in rows]

    def answers(self, code: str, qid: int) -> list[Answer]:
        rows = self._run(
            lambda conn: conn.execute(
                "SELECT member, value, at FROM room_answers WHERE code = ? AND qid = ? ORDER BY at, member",
                (normalize_code(code), qid),
            ).fetchall()
        )
        return [Answer(*row) for row in rows]

    # -- moderation: the teacher's alone, each one write transaction --
    def lock(self, code: str, key: str, locked: bool = True) -> Room:
        """Close the room to new members (``locked``), or open it again; the room as it is then."""

        def op(conn) -> Room:
            room = self._teacher_room(conn, code, key)
            if room.locked != bool(locked):
                self._bump(conn, room.code, rev=1, tally=1, locked=int(bool(locked)))
            return self._room_for(conn, room.code)

        return self._run(op, write=True)

    def end(self, code: str, key: str) -> None:
        """End the room: its students' pages say so (for ``ENDED_KEEP_S``, then it is gone), it
        counts no more against the server's limit of rooms, and the files it held are let go."""
        from .store import release_hold

        def op(conn) -> None:
            room = self._teacher_room(conn, code, key)
            self._bump(conn, room.code, rev=1, tally=1, ended=self.clock())
            release_hold(conn, holder(room.code))

        self._run(op, write=True)

    def remove(self, code: str, key: str, member_id: str) -> None:
        """Take a member out of the room: its answers leave every tally and the leaderboard, and
        its page says it was removed (:meth:`removed`)."""

        def op(conn) -> None:
            room, member = self._teacher_member(conn, code, key, member_id)
            conn.execute("DELETE FROM room_members WHERE code = ? AND id = ?", (room.code, member.id))
            conn.execute("DELETE FROM room_answers WHERE code = ? AND member = ?", (room.code, member.id))
            conn.execute("INSERT OR IGNORE INTO room_removed (code, id) VALUES (?, ?)", (room.code, member.id))
            self._bump(conn, room.code, rev=1, tally=1)

        self._run(op, write=True)

    def rename(self, code: str, key: str, member_id: str, name: str) -> Member:
        """Give a member another name (cleaned, and suffixed when another member has it)."""
        wanted = self._name(name)

        def op(conn) -> Member:
            room, member = self._teacher_member(conn, code, key, member_id)
            taken = {
                row[0]
                for row in conn.execute(
                    "SELECT folded FROM room_members WHERE code = ? AND id != ?", (room.code, member.id)
                )
            }
            kept = _suffixed(wanted, taken)
            conn.execute(
                "UPDATE room_members SET name = ?, folded = ? WHERE code = ? AND id = ?",
                (kept, kept.casefold(), room.code, member.id),
            )
            self._bump(conn, room.code, rev=1, tally=1)
            return member._replace(name=kept)

        return self._run(op, write=True)

    def hide(self, code: str, key: str, member_id: str, hidden: bool = True) -> Member:
        """Hide a member's name on every leaderboard (:data:`HIDDEN_NAME`), or show it again."""

        def op(conn) -> Member:
            room, member = self._teacher_member(conn, code, key, member_id)
            conn.execute(
                "UPDATE room_members SET hidden = ? WHERE code = ? AND id = ?",
                (int(bool(hidden)), room.code, member.id),
            )
            self._bump(conn, room.code, rev=1, tally=1)
            return member._replace(hidden=bool(hidden))

        return self._run(op, write=True)

    def removed(self, code: str, member_id: str) -> bool:
        """Whether the teacher removed this member from the room (which is still there)."""

        def op(conn) -> bool:
            room = self._room_row(conn, code)
            return (
                room is not None
                and bool(member_id)
                and conn.execute(
                    "SELECT 1 FROM room_removed WHERE code = ? AND id = ?", (room.code, member_id)
                ).fetchone()
                is not None
            )

        return self._run(op)

    def purge(self) -> int:
        return self._run(self._purge, write=True)

    def _purge(self, conn) -> int:
        """Delete the rooms idle past the limit (a shorter one for rooms nobody joined), with
        their members, questions and answers, and release the files they held; forget the
        start and lookup counts that no window reaches any more."""
        from .store import release_hold

        now = self.clock()
        gone = [
            code
            for (code,) in conn.execute(
                f"SELECT code FROM rooms WHERE active < ? OR (active < ? AND NOT {_HAS_MEMBERS}) OR ended < ?",
                (now - self.limits.idle_seconds, now - self.limits.empty_seconds, now - ENDED_KEEP_S),
            ).fetchall()
        ]
        for code in gone:
            for table in _ROOM_TABLES:
                conn.execute(f"DELETE FROM {table} WHERE code = ?", (code,))
            release_hold(conn, holder(code))
        conn.execute("DELETE FROM room_hits WHERE at <= ?", (now - max(START_WINDOW_S, MISS_WINDOW_S),))
        return len(gone)


# ---- Redis -----------------------------------------------------------------------------------
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
# Every write is a Lua script (atomic on the server) that also sets the room's keys to expire a
# while after the room's idle limit: Redis forgets abandoned rooms by itself. The store's
# ``holders`` (the files a room holds) gets the room's expiry as its deadline with every change.

# A rate limit's check: the hit logs KEYS[first..first+n-1] (sorted sets of times) with their
# limits ARGV[at..at+n-1]. nil when each has room for one more hit (then, when record, a hit
# ``id`` at ``t`` is logged in each); else 'rate:<which, from 1>:<when the first full one frees>'.
_LUA_TAKE = """
local function take(first, at, n, window, t, id, record)
  for i = 0, n - 1 do
    local key, limit = KEYS[first + i], tonumber(ARGV[at + i])
    redis.call('ZREMRANGEBYSCORE', key, '-inf', t - window)
    local count = redis.call('ZCARD', key)
    if count >= limit then  -- the next slot frees when the hit that fills it leaves the window
      local hit = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
      return 'rate:' .. (i + 1) .. ':' .. string.format('%.6f', tonumber(hit[2]) + window)
    end
  end
  if record then
    for i = 0, n - 1 do
      redis.call('ZADD', KEYS[first + i], string.format('%.6f', t), id)
      redis.call('EXPIRE', KEYS[first + i], math.ceil(window) + 1)
    end
  end
  return nil
end
"""

# Every room script: KEYS = the rooms index, the room's hash, the store's holders; ARGV = code,
# now, the idle seconds of a room nobody joined, of one with members, then its own. It returns
# "ok" or the word for what stopped it ("gone", "full", "taken", ...).
_LUA_HEAD = """
local index, room, holders = KEYS[1], KEYS[2], KEYS[3]
local code, now, empty_idle, idle = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local room_prefix = string.sub(room, 1, #room - #code)
-- how long a room lives idle: shorter while nobody has joined (a room from before the count: long)
local function lifetime(key)
  if redis.call('HGET', key, 'members') == '0' then return empty_idle end
  return idle
end
local function alive()
  local active = redis.call('HGET', room, 'active')
  return active and tonumber(now) - tonumber(active) <= lifetime(room)
end
local function ended()
  local at = redis.call('HGET', room, 'ended')
  return at and at ~= ''
end
local function room_keys()
  local keys = {room, room .. ':members', room .. ':names', room .. ':seen', room .. ':questions', room .. ':removed'}
  for q = 1, tonumber(redis.call('HGET', room, 'qids') or '0') do keys[#keys + 1] = room .. ':answers:' .. q end
  return keys
end
local function touched(tally)
  -- a change keeps the room alive: its activity, its place in the index, its keys' expiry, and
  -- the deadline of the files it holds
  redis.call('HINCRBY', room, 'tally', tally)
  redis.call('HSET', room, 'active', now)
  redis.call('ZADD', index, now, code)
  local life = lifetime(room)
  for _, k in ipairs(room_keys()) do redis.call('EXPIRE', k, math.floor(life) + 3600) end
  redis.call('ZADD', holders, 'XX', string.format('%.6f', tonumber(now) + life), 'room:' .. code)
  return 'ok'
end
"""

_LUA_CREATE = (
    _LUA_HEAD
    + _LUA_TAKE
    + """
-- ARGV[5..]: key_hash, view, step, max_rooms, top, starter, window, hit id, then the limits of the
-- start logs KEYS[4..] (this browser's, this address's)
local n = #KEYS - 3
local blocked = take(4, 13, n, tonumber(ARGV[11]), tonumber(now), ARGV[12], false)
if blocked then return blocked end
redis.call('ZREMRANGEBYSCORE', index, '-inf', tonumber(now) - idle)
for _, other in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', tonumber(now) - empty_idle)) do
  if redis.call('HGET', room_prefix .. other, 'members') == '0' then redis.call('ZREM', index, other) end
end
if redis.call('ZCARD', index) >= tonumber(ARGV[8]) then
  -- full: say when the first open room expires, if nothing happens in it
  local first = nil
  local listed = redis.call('ZRANGE', index, 0, -1, 'WITHSCORES')
  for i = 1, #listed, 2 do
    local ends = tonumber(listed[i + 1]) + lifetime(room_prefix .. listed[i])
    if first == nil or ends < first then first = ends end
  end
  return 'full:' .. string.format('%.6f', first or tonumber(now))
end
if redis.call('EXISTS', room) == 1 then return 'taken' end
redis.call('HSET', room, 'key_hash', ARGV[5], 'view', ARGV[6], 'step', ARGV[7], 'rev', 1, 'tally', 0,
           'question', '', 'created', now, 'active', now, 'qids', 0, 'members', 0, 'top', ARGV[9],
           'starter', ARGV[10])
take(4, 13, n, tonumber(ARGV[11]), tonumber(now), ARGV[12], true)
return touched(0)
"""
)

_LUA_RATE = (
    _LUA_TAKE
    + """
-- KEYS: the hit logs; ARGV: window, now, hit id, "1" to log a hit, then each log's limit
return take(1, 5, #KEYS, tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4] == '1') or 'ok'
"""
)

_LUA_JOIN = (
    _LUA_HEAD
    + """
-- ARGV[5..]: member id, member json, folded name, max_members
if not alive() then return 'gone' end
if ended() then return 'ended' end
if redis.call('HGET', room, 'locked') == '1' then return 'locked' end
if redis.call('HLEN', room .. ':members') >= tonumber(ARGV[8]) then return 'full' end
if redis.call('HSETNX', room .. ':names', ARGV[7], ARGV[5]) == 0 then return 'taken' end
redis.call('HSET', room .. ':members', ARGV[5], ARGV[6])
redis.call('HINCRBY', room, 'members', 1)
redis.call('ZADD', room .. ':seen', now, ARGV[5])
return touched(1)
"""
)

_LUA_ANSWER = (
    _LUA_HEAD
    + """
-- ARGV[5..]: member id, qid, value. Answers only the current question while it is open.
if not alive() then return 'gone' end
if ended() then return 'ended' end
if redis.call('HEXISTS', room .. ':members', ARGV[5]) == 0 then return 'stranger' end
if redis.call('HGET', room, 'question') ~= ARGV[6] then return 'closed' end
local body = redis.call('HGET', room .. ':questions', ARGV[6])
if not body then return 'closed' end
local q = cjson.decode(body)
if q['state'] ~= 'open' then return 'closed' end
local at = math.floor((tonumber(now) - q['opened']) * 1000 + 0.5) / 1000
redis.call('HSET', room .. ':answers:' .. ARGV[6], ARGV[5], cjson.encode({value = tonumber(ARGV[7]), at = at}))
return touched(1)
"""
)

_LUA_TEACH = (
    _LUA_HEAD
    + """
-- ARGV[5..]: key_hash, rev, tally, then field/value pairs to set
if not alive() then return 'gone' end
if redis.call('HGET', room, 'key_hash') ~= ARGV[5] then return 'key' end
if ended() then return 'ended' end
for i = 8, #ARGV, 2 do redis.call('HSET', room, ARGV[i], ARGV[i + 1]) end
redis.call('HINCRBY', room, 'rev', tonumber(ARGV[6]))
return touched(tonumber(ARGV[7]))
"""
)


_LUA_KEEP = (
    _LUA_HEAD
    + """
if not alive() or ended() then return 'gone' end
return touched(0)
"""
)

# The teacher's moderation of one member: remove it (its answers, its name and its place go; its
# id is kept among the removed), rename it (the new folded name must be free), hide or show its name.
_LUA_MODERATE = (
    _LUA_HEAD
    + """
-- ARGV[5..]: key_hash, what ("remove", "rename", "hide", "show"), member id, then for a rename
-- the new name and its folded form
if not alive() then return 'gone' end
if redis.call('HGET', room, 'key_hash') ~= ARGV[5] then return 'key' end
if ended() then return 'ended' end
local what, id, members, names = ARGV[6], ARGV[7], room .. ':members', room .. ':names'
local body = redis.call('HGET', members, id)
if not body then return 'stranger' end
local function drop_names(except)
  local listed = redis.call('HGETALL', names)
  for i = 1, #listed, 2 do
    if listed[i + 1] == id and listed[i] ~= except then redis.call('HDEL', names, listed[i]) end
  end
end
if what == 'remove' then
  drop_names(nil)
  redis.call('HDEL', members, id)
  redis.call('ZREM', room .. ':seen', id)
  for q = 1, tonumber(redis.call('HGET', room, 'qids') or '0') do redis.call('HDEL', room .. ':answers:' .. q, id) end
  redis.call('SADD', room .. ':removed', id)
  redis.call('HINCRBY', room, 'members', -1)
else
  local member = cjson.decode(body)
  if what == 'rename' then
    if redis.call('HSETNX', names, ARGV[9], id) == 0 and redis.call('HGET', names, ARGV[9]) ~= id then
      return 'taken'
    end
    drop_names(ARGV[9])
    member['name'] = ARGV[8]
  else
    member['hidden'] = (what == 'hide')
  end
  redis.call('HSET', members, id, cjson.encode(member))
end
redis.call('HINCRBY', room, 'rev', 1)
return touched(1)
"""
)

# The teacher ends the room: its pages are told (rev), it leaves the index (no longer counted
# against the server's limit of rooms) and its keys expire once its pages have had time to say so.
_LUA_END = (
    _LUA_HEAD
    + """
-- ARGV[5..]: key_hash, seconds the ended room is kept
if not alive() then return 'gone' end
if redis.call('HGET', room, 'key_hash') ~= ARGV[5] then return 'key' end
if ended() then return 'ended' end
redis.call('HSET', room, 'ended', now)
redis.call('HINCRBY', room, 'rev', 1)
redis.call('HINCRBY', room, 'tally', 1)
redis.call('ZREM', index, code)
for _, k in ipairs(room_keys()) do redis.call('EXPIRE', k, math.ceil(tonumber(ARGV[6])) + 60) end
return 'ok'
"""
)

_LUA = {
    "create": _LUA_CREATE,
    "join": _LUA_JOIN,
    "answer": _LUA_ANSWER,
    "teach": _LUA_TEACH,
    "keep": _LUA_KEEP,
    "rate": _LUA_RATE,
    "moderate": _LUA_MODERATE,
    "end": _LUA_END,
}


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


def _blocked(outcome: str) -> tuple[int, float]:
    """A rate script's 'rate:<which, from 1>:<when it frees>' as (index, time).

    >>> _blocked("rate:2:1800000060.500000")
    (1, 1800000060.5)
    """
    _, which, frees = outcome.split(":")
    return int(which) - 1, float(frees)


class RedisRooms(_Base):
    """Rooms on a Redis server, for app processes on several machines. The checks that decide
    a write (the room alive, the key, the question open, the name free) run inside the write's
    Lua script, so two servers answering at once cannot both pass a check the other changes."""

    def __init__(self, store, *, limits: Limits | None = None, clock: Callable[[], float] = time.time):
        super().__init__(limits=limits, clock=clock)
        self.store = store  # a RedisStore: its clients, its prefix, its errors (StoreError, no password)
        self.prefix = store.prefix
        self._scripts: dict[str, Any] = {}

    def close(self) -> None:
        self.store.close()

    def _generation(self) -> Any:
        from .store import StoreError

        try:
            return self.store.generation()
        except StoreError:  # unreachable: say what a missing room usually means
            return None

    # -- plumbing --
    def _call(self, op: Callable[[Any], Any]) -> Any:
        """``op`` on the store's client that replies in str."""
        return self.store._call(lambda client, _: op(client), text=True)

    def _script(self, name: str, code: str, args: Sequence[object], *, keys: Sequence[str] = ()) -> str:
        """Run a script on the room: code, now and the idle limits first, then ``args``; its keys
        the index, the room's and the store's holders, then ``keys``."""
        head = [normalize_code(code), repr(self.clock()), self.limits.empty_seconds, self.limits.idle_seconds]
        return self._run_script(name, [self._index, self._key(code), self.store.holders_key, *keys], [*head, *args])

    def _run_script(self, name: str, keys: Sequence[str], args: Sequence[object]) -> str:
        def op(client) -> str:
            if name not in self._scripts:  # a script object is bound to no connection: client= picks one
                self._scripts[name] = client.register_script(_LUA[name])
            return self._scripts[name](keys=list(keys), args=[str(a) for a in args], client=client)

        return self._call(op)

    def _take(self, buckets: list[tuple[str, int]], window: float, *, record: bool) -> tuple[int, float] | None:
        outcome = self._run_script(
            "rate",
            [self._hits(b) for b, _ in buckets],
            [window, repr(self.clock()), secrets.token_hex(8), "1" if record else "0", *(n for _, n in buckets)],
        )
        return None if outcome == "ok" else _blocked(outcome)

    def _hits(self, bucket: str) -> str:
        return f"{self.prefix}hits:{bucket}"

    @property
    def _index(self) -> str:
        return f"{self.prefix}rooms"

    def _key(self, code: str, part: str = "") -> str:
        return f"{self.prefix}room:{normalize_code(code)}{':' + part if part else ''}"

    def _fields(self, code: str) -> dict[str, str] | None:
        raw = self._call(lambda client: client.hgetall(self._key(code)))
        if not raw or self._expired(float(raw["active"]), raw.get("members") != "0", _when(raw.get("ended"))):
            return None
        return raw

    @staticmethod
    def _room_of(code: str, raw: dict[str, str]) -> Room:
        return Room(
            normalize_code(code),
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

    def _teacher_fields(self, code: str, key: str | None) -> dict[str, str]:
        """The room's fields, read for the holder of its key while it has not ended."""
        raw = self._fields(code)
        if raw is None:
            raise self._no_room(code)
        if not _key_matches(key, raw["key_hash"]):
            raise self._not_teacher()
        if _when(raw.get("ended")) is not None:
            raise self._ended()
        return raw

    def _outcome(self, code: str, outcome: str) -> str:
        """A script's outcome, its refusals raised as the sentences the SQLite backend gives."""
        refusals: dict[str, Callable[[], RoomError]] = {
            "gone": lambda: self._no_room(code),
            "key": self._not_teacher,
            "ended": self._ended,
            "locked": self._locked,
            "stranger": self._stranger,
        }
        if outcome in refusals:
            raise refusals[outcome]()
        return outcome

    def _teach(self, code: str, key: str | None, *, rev: int, tally: int, **fields: object) -> None:
        """A teacher's change: its script checks the room and the key where it writes."""
        args: list[object] = [_hash_key(key or ""), rev, tally]
        for name, value in fields.items():
            args += [name, value]
        self._outcome(code, self._script("teach", code, args))

    def _teacher_question(self, code: str, key: str | None, qid: int) -> Question:
        self._teacher_fields(code, key)
        question = self.question(code, qid)
        if question is None:
            raise self._never_asked()
        return question

    def _put_question(self, code: str, question: Question) -> None:
        self._call(lambda client: client.hset(self._key(code, "questions"), str(question.qid), question.to_json()))

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
        """As :meth:`SqliteRooms.create`."""
        key = secrets.token_urlsafe(24)
        last = self._top(top, step)
        buckets = self._start_buckets(starter, address)
        while True:
            code = self._new_code()
            outcome = self._script(
                "create",
                code,
                [
                    _hash_key(key),
                    json.dumps(view, sort_keys=True),
                    int(step),
                    self.limits.rooms,
                    last,
                    starter or "",
                    START_WINDOW_S,
                    secrets.token_hex(8),
                    *(n for _, n in buckets),
                ],
                keys=[self._hits(b) for b, _ in buckets],
            )
            if outcome.startswith("rate:"):
                raise self._too_many_starts(buckets, _blocked(outcome))
            if outcome.startswith("full:"):
                raise self._full_rooms(float(outcome.split(":", 1)[1]))
            if outcome == "ok":
                room = self._must(code)
                if holds:
                    self.store.hold(holder(room.code), list(holds), until=room.active + self.limits.empty_seconds)
                return room, key

    def get(self, code: str) -> Room | None:
        raw = self._fields(code)
        return None if raw is None else self._room_of(code, raw)

    def revs(self, code: str) -> tuple[int, int] | None:
        rev, tally, active, members, ended = self._call(
            lambda client: client.hmget(self._key(code), "rev", "tally", "active", "members", "ended")
        )
        if rev is None or self._expired(float(active), members != "0", _when(ended)):
            return None
        return int(rev), int(tally)

    def revs_for(self, code: str, *, member: str | None = None, token: str | None = None) -> tuple[int, int] | None:
        """As :meth:`SqliteRooms.revs_for`: None for a missing room and a wrong credential alike."""
        raw = self._fields(code)
        if raw is None:
            return None
        known = bool(member) and bool(self._call(lambda client: client.hexists(self._key(code, "members"), member)))
        if known or (token and hmac.compare_digest(_token_of(raw["key_hash"]), token)):
            return int(raw["rev"]), int(raw["tally"])
        return None

    def starter(self, code: str) -> str | None:
        """The browser that started the room (None: gone, or not known)."""
        raw = self._fields(code)
        return (raw.get("starter") or None) if raw is not None else None

    def is_teacher(self, code: str, key: str | None) -> bool:
        raw = self._fields(code)
        return raw is not None and _key_matches(key, raw["key_hash"])

    def set_step(self, code: str, key: str, step: int) -> Room:
        raw = self._teacher_fields(code, key)
        if int(raw["step"]) == self._check_step(step, self._room_of(code, raw).top):
            return self._room_of(code, raw)
        self._teach(code, key, rev=1, tally=0, step=int(step))
        return self._must(code)

    def _must(self, code: str) -> Room:
        room = self.get(code)
        if room is None:
            raise self._no_room(code)
        return room

    def join(self, code: str, name: str) -> Member:
        name = self._name(name)
        if self.get(code) is None:
            raise self._no_room(code)
        taken: set[str] = set()
        while True:
            taken |= set(self._call(lambda client: client.hkeys(self._key(code, "names"))))
            kept = _suffixed(name, taken)
            member = Member(secrets.token_urlsafe(16), kept, self.clock())
            body = json.dumps({"name": kept, "joined": member.joined}, ensure_ascii=False)
            outcome = self._outcome(
                code, self._script("join", code, [member.id, body, kept.casefold(), self.limits.members])
            )
            if outcome == "ok":
                return member
            if outcome == "full":
                raise self._full_room()
            taken.add(kept.casefold())  # taken between our read and the script: try the next suffix

    def member(self, code: str, member_id: str) -> Member | None:
        if not member_id or self.get(code) is None:
            return None
        body = self._call(lambda client: client.hget(self._key(code, "members"), member_id))
        return None if body is None else _member_of(member_id, body)

    def members(self, code: str) -> list[Member]:
        if self.get(code) is None:
            raise self._no_room(code)
        raw = self._call(lambda client: client.hgetall(self._key(code, "members")))
        return sorted((_member_of(mid, body) for mid, body in raw.items()), key=lambda m: (m.joined, m.name))

    def seen(self, code: str, member_id: str) -> None:
        def op(client) -> None:
            if client.hexists(self._key(code, "members"), member_id):
                client.zadd(self._key(code, "seen"), {member_id: self.clock()})

        self._call(op)

    def present(self, code: str) -> int:
        return int(self._call(lambda client: client.zcount(self._key(code, "seen"), self.clock() - PRESENT_S, "+inf")))

    def keep(self, code: str) -> bool:
        """As :meth:`SqliteRooms.keep`: the room is not idle while its teacher's page is open."""
        return self._script("keep", code, []) == "ok"

    def ask(self, code: str, key: str, question: Question) -> Question:
        self._check_question(question)
        raw = self._teacher_fields(code, key)
        qid = int(self._call(lambda client: client.hincrby(self._key(code), "qids", 1)))
        if raw.get("question"):
            old = self.question(code, int(raw["question"]))
            if old is not None and old.state == "open":  # closed unrevealed: it scores nothing
                self._put_question(code, dataclasses.replace(old, state="closed"))
        asked = dataclasses.replace(question, qid=qid, state="open", opened=self.clock())
        self._put_question(code, asked)
        self._teach(code, key, rev=1, tally=1, question=qid)
        return asked

    def answer(self, code: str, member_id: str, qid: int, value: int) -> None:
        question = self.question(code, qid)
        if question is None:
            if self.get(code) is None:
                raise self._no_room(code)
            raise self._closed()
        checked = self._check_value(question, value)
        outcome = self._script("answer", code, [member_id, int(qid), checked])
        if outcome in ("gone", "ended"):
            self._outcome(code, outcome)
        if outcome == "stranger":
            raise RoomError("You are not a member of this room: join it again with its code.")
        if outcome == "closed":
            raise self._closed()

    def close_question(self, code: str, key: str, qid: int) -> Question:
        question = self._teacher_question(code, key, qid)
        if question.state == "open":
            # the state is set before the room's rev moves, so an answer's script that runs
            # after this reads "closed" (it checks the question's own record)
            question = dataclasses.replace(question, state="closed")
            self._put_question(code, question)
            self._teach(code, key, rev=1, tally=1)
        return question

    def reveal(self, code: str, key: str, qid: int) -> Room:
        question = self._teacher_question(code, key, qid)
        room = self._must(code)
        if question.state != "revealed":
            self._put_question(code, dataclasses.replace(question, state="revealed"))
            step = min(room.top, max(room.step, question.step + question.merges))
            self._teach(code, key, rev=1, tally=1, step=step)
        return self._must(code)

    def question(self, code: str, qid: int) -> Question | None:
        body = self._call(lambda client: client.hget(self._key(code, "questions"), str(int(qid))))
        return None if body is None else Question.from_json(body)

    def questions(self, code: str) -> list[Question]:
        raw = self._call(lambda client: client.hvals(self._key(code, "questions")))
        return sorted((Question.from_json(body) for body in raw), key=lambda q: q.qid)

    def answers(self, code: str, qid: int) -> list[Answer]:
        raw = self._call(lambda client: client.hgetall(self._key(code, f"answers:{int(qid)}")))
        out = [
            Answer(mid, int(body["value"]), float(body["at"]))
            for mid, body in ((mid, json.loads(text)) for mid, text in raw.items())
        ]
        return sorted(out, key=lambda a: (a.at, a.member))

    # -- moderation: the teacher's alone, each one script that checks the key where it writes --
    def lock(self, code: str, key: str, locked: bool = True) -> Room:
        """As :meth:`SqliteRooms.lock`."""
        raw = self._teacher_fields(code, key)
        if (raw.get("locked") == "1") != bool(locked):
            self._teach(code, key, rev=1, tally=1, locked="1" if locked else "0")
        return self._must(code)

    def end(self, code: str, key: str) -> None:
        """As :meth:`SqliteRooms.end`."""
        self._outcome(code, self._script("end", code, [_hash_key(key or ""), ENDED_KEEP_S]))
        self.store.release(holder(code))

    def _moderate(self, code: str, key: str | None, what: str, member_id: str, *more: object) -> str:
        return self._outcome(code, self._script("moderate", code, [_hash_key(key or ""), what, member_id, *more]))

    def remove(self, code: str, key: str, member_id: str) -> None:
        """As :meth:`SqliteRooms.remove`."""
        self._moderate(code, key, "remove", member_id)

    def rename(self, code: str, key: str, member_id: str, name: str) -> Member:
        """As :meth:`SqliteRooms.rename`."""
        wanted = self._name(name)
        self._teacher_fields(code, key)
        taken: set[str] = set()
        while True:
            names = self._call(lambda client: client.hgetall(self._key(code, "names")))
            taken |= {folded for folded, owner in names.items() if owner != member_id}
            kept = _suffixed(wanted, taken)
            if self._moderate(code, key, "rename", member_id, kept, kept.casefold()) == "ok":
                member = self.member(code, member_id)
                if member is None:
                    raise self._stranger()
                return member
            taken.add(kept.casefold())  # taken between our read and the script: try the next suffix

    def hide(self, code: str, key: str, member_id: str, hidden: bool = True) -> Member:
        """As :meth:`SqliteRooms.hide`."""
        self._moderate(code, key, "hide" if hidden else "show", member_id)
        member = self.member(code, member_id)
        if member is None:
            raise self._stranger()
        return member

    def removed(self, code: str, member_id: str) -> bool:
        """As :meth:`SqliteRooms.removed`."""
        if not member_id or self.get(code) is None:
            return False
        return bool(self._call(lambda client: client.sismember(self._key(code, "removed"), member_id)))

    def purge(self) -> int:
        """Forget the rooms idle past the limit (a shorter one for rooms nobody joined), and
        release the files they held (Redis also expires their keys by itself, and the store lets
        a hold go at its deadline)."""
        now = self.clock()

        def op(client) -> list[str]:
            gone = client.zrangebyscore(self._index, "-inf", now - self.limits.idle_seconds)
            for code in client.zrangebyscore(self._index, "-inf", now - self.limits.empty_seconds):
                if code not in gone and client.hget(self._key(code), "members") == "0":
                    gone.append(code)
            for code in gone:
                room = self._key(code)
                qids = int(client.hget(room, "qids") or 0)
                client.delete(
                    room,
                    *(f"{room}:{part}" for part in ("members", "names", "seen", "questions", "removed")),
                    *(f"{room}:answers:{q}" for q in range(1, qids + 1)),
                )
                client.zrem(self._index, code)
            return gone

        gone = self._call(op)
        for code in gone:
            self.store.release(holder(code))
        return len(gone)


def rooms_for(store) -> Rooms:
    """The rooms kept in the same place as ``store``'s files: its SQLite file, or its Redis."""
    from .store import RedisStore

    return RedisRooms(store) if isinstance(store, RedisStore) else SqliteRooms(store)
