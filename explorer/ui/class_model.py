"""What the Class page knows and computes, apart from drawing it: its widget and session keys,
the room's trainer in this process, the questions a teacher asks, and the sentences, bars and
tables the teacher, the projector and the students see (:mod:`explorer.ui.class_view` and
:mod:`explorer.ui.class_teacher` draw them). No Streamlit here: each function takes the room's
records (:mod:`explorer.serving.rooms`) and trainers and gives plain data or HTML, every string
from a user or a corpus escaped, so the page's reasoning is tested without a session.
"""

from __future__ import annotations

import contextlib
import datetime
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

from ..bpe.budget import BudgetError
from ..bpe.trainer import Trainer
from ..errors import ExplorerError
from ..serving.room_results import most_missed
from ..serving.rooms import (
    MAX_SENTENCE,
    Answer,
    Member,
    Question,
    RoomError,
    Standing,
    Wait,
    follow_token,
    merge_options,
    normalize_code,
    public_name,
    right_options,
    winners,
)
from ..serving.store import QuotaError, StoreError
from . import render, tables
from .explain import tie_rule_sentence

__all__ = [
    "Keys",
    "Session",
    "RoomRun",
    "FALLBACK_SENTENCE",
    "UNREACHABLE",
    "said",
    "at_end",
    "completed",
    "pair_text",
    "pair_html",
    "tie_text",
    "tally_html",
    "board_html",
    "question_text",
    "reveal_html",
    "missed_html",
    "answer_label",
    "answer_caption",
    "result_sentence",
    "options_html",
    "room_status",
    "student_status",
    "hides_pairs",
    "pairs_panel",
    "history_panel",
    "last_step",
    "step_target",
    "merge_question",
    "count_question",
    "default_sentence",
    "start_refusal",
    "COOKIE_PREFIX",
    "cookie_name",
    "cookies",
    "presenter_address",
    "member_label",
    "hidden_names",
]


class Keys:
    """The Class page's widget keys (the lobby, the teacher's controls and moderation, a
    student's answers, the pages' watches), one place for the page and its tests. A name ending
    in ``_AT`` is a prefix, completed by the method beside it."""

    # the lobby
    CODE = "w_class_code"
    NAME = "w_class_name"
    JOIN = "class_join"
    START = "class_start"
    BACK_TO_AT = "class_back_to_"  # + a room's code: back to a room this browser teaches
    COOKIE = "class_teacher_cookie"  # the component that writes the teacher's cookies
    # the teacher's controls
    STEP = "class_step"
    STEP10 = "class_step10"
    BACK = "class_back"
    PLAY = "class_play"
    PAUSE = "class_pause"
    QR = "w_class_qr"
    SLIDER = "w_class_step"
    CLOSE = "class_close"
    REVEAL = "class_reveal"
    ASK_MERGE = "class_ask_merge"
    COUNTS = "w_class_counts"  # show the candidate pairs' counts, or not
    SENTENCE = "w_class_sentence"
    AHEAD = "w_class_ahead"
    ASK_COUNT = "class_ask_count"
    WATCH_TALLY = "class_watch_tally"
    PANELS_TEACHER = "class_panels_t"
    STEPPER_TEACHER = "class_stepper_t"  # the stepper (explorer.ui.stepper): the class's step, in the browser
    # moderation
    MOD_MEMBER = "w_class_mod_member"
    MOD_NAME = "w_class_mod_name"
    MOD_RENAME = "class_mod_rename"
    MOD_SHOW = "class_mod_show"
    MOD_HIDE = "class_mod_hide"
    MOD_REMOVE = "class_mod_remove"
    LOCK = "w_class_lock"
    CSV = "class_mod_csv"
    TO_LOBBY = "class_mod_lobby"
    END_SURE = "w_class_end_sure"
    END = "class_mod_end"
    # the presenter view
    PRESENT_REV = "class_present_rev"
    PRESENT_TALLY = "class_present_tally"
    PRESENT_STEP = "class_present_step"
    PANELS_PRESENTER = "class_panels_p"
    # a student
    OWN = "class_own"
    OWN_STEP = "class_own_step"
    OWN_STEP10 = "class_own_step10"
    FOLLOW = "class_follow"
    OPTION_AT = "class_opt_"  # + question id, "_", option index
    GUESS_AT = "w_class_guess_"  # + question id
    SEND_AT = "class_send_"  # + question id
    WATCH_REV = "class_watch_rev"
    PANELS_STUDENT = "class_panels_s"
    STEPPER_STUDENT = "class_stepper_s"  # following the teacher: the room's step, polled by the stepper itself
    STEPPER_OWN = "class_stepper_o"  # stepping ahead on its own

    @staticmethod
    def option(qid: int, i: int) -> str:
        """A next-merge question's option button.

        >>> Keys.option(3, 1), Keys.guess(3), Keys.send(3), Keys.back_to("K7QX2M")
        ('class_opt_3_1', 'w_class_guess_3', 'class_send_3', 'class_back_to_K7QX2M')
        """
        return f"{Keys.OPTION_AT}{qid}_{i}"

    @staticmethod
    def guess(qid: int) -> str:
        """A token-count question's number box."""
        return f"{Keys.GUESS_AT}{qid}"

    @staticmethod
    def send(qid: int) -> str:
        """A token-count question's send button."""
        return f"{Keys.SEND_AT}{qid}"

    @staticmethod
    def back_to(code: str) -> str:
        """The lobby's button back to a room this browser teaches."""
        return f"{Keys.BACK_TO_AT}{code}"


class Session:
    """What the page keeps in the session beside its widgets."""

    ERROR = "class_error"  # a sentence for the next run: what the room refused
    NOTICE = "class_notice"  # ... what went well (a room ended)
    NOTE = "class_note"  # ... what to know (a name cut or suffixed)
    MISSED = "class_missed"  # the wrong credentials already counted as failed lookups
    PLAYING = "class_playing"  # the teacher's Play is on
    RETRY_AFTER = "class_retry_after"  # while the store is out of reach: no retry before this
    OWN_LIVE = "class_own_live"  # a student's own Live while stepping ahead: (room code, Live)
    ROOM_LIVE = "class_room_live"  # this session's view of the room's shared trainer: (RoomRun, Live)
    TEACHER_KEYS = "class_teacher_keys"  # {room code: teacher key}
    TEACHER_ROOM = "class_teacher_room"  # the room this session teaches (the sidebar brings it back)
    TEACHER_GONE = "class_teacher_gone"  # room codes whose cookie is to be deleted
    CHOSEN = "class_mod_member"  # the student the moderation tools act on (a member id)
    # each stepper's stepper.Window: what its browser holds, its generation and epoch
    WINDOW_TEACHER = "class_window_t"
    WINDOW_STUDENT = "class_window_s"
    WINDOW_OWN = "class_window_o"


FALLBACK_SENTENCE = "the lowest newest widest"  # a count question's sentence when the corpus has none
UNREACHABLE = "The class server's store is unreachable; retrying…"


def said(err: ExplorerError, tz: datetime.tzinfo | None = None) -> str:
    """What the page says for an error: the store out of reach is always the same sentence (its
    cause is for the server's log); a limit that frees by itself says when in the reader's time
    zone ``tz``; any other error, its own sentence.

    >>> said(StoreError("database is locked")), said(QuotaError("over your 8 MiB")), said(RoomError("No."))
    ("The class server's store is unreachable; retrying…", 'over your 8 MiB', 'No.')
    """
    if isinstance(err, StoreError) and not isinstance(err, QuotaError):
        return UNREACHABLE
    return err.sentence(tz) if isinstance(err, Wait) else str(err)


# ---- the room's trainer in this process ---------------------------------------------------------
@dataclass(eq=False)
class RoomRun:
    """The trainer of one room in this process, shared by every session in the room. It only
    moves forward, under its lock, one merge past the room's step (the pair table of the next
    merge is then a record, and no session reads the trainer's live heap while another trains)."""

    trainer: Trainer | None
    error: str | None = None
    sentence: str = ""  # a sentence of the corpus: the token-count question's default
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # the steps' entries as the steppers draw them, by (step, look): rendered once for the room,
    # every session's stepper sends them (a step's panels are the same for every student)
    drawn: dict = field(default_factory=dict, repr=False)

    def at(self, step: int) -> Trainer:
        """The trainer, trained at least to ``step`` + 1 (or to its end, or as far as the server's
        budget for a session lets it: ``held`` says so)."""
        trainer = self.trainer
        assert trainer is not None
        if len(trainer.records) <= step and not trainer.done and trainer.held is None:
            with self.lock:
                short = step + 1 - len(trainer.records)
                if short > 0 and not trainer.done:
                    with contextlib.suppress(BudgetError):
                        trainer.advance(short)
        return trainer


# ---- pairs as text and HTML --------------------------------------------------------------------------
def _partial_bytes(token: str, style: render.TokenStyle) -> int:
    """How many of a token's bytes are only part of a character (shown in hex)."""
    return sum(len(run.split()) for run, is_text in render.token_runs(token, style) if not is_text)


def completed(pair: tuple[str, str], style: render.TokenStyle) -> str | None:
    """The token a pair merges into, when its parts are partial bytes and merging them completes
    a character (the parts alone read as hex, the merged token as text); else None.

    >>> byte = render.TokenStyle(byte_level=True)
    >>> completed(("à¤", "ķ"), byte), completed(("à", "¤"), byte), completed(("e", "r"), byte)
    ('à¤ķ', None, None)
    """
    parts = sum(_partial_bytes(t, style) for t in pair)
    merged = "".join(pair)  # a byte-level token's string is its parts' strings, one character a byte
    return merged if parts and _partial_bytes(merged, style) < parts else None


def pair_text(pair: tuple[str, str], style: render.TokenStyle, *, into: render.Into = "text") -> str:
    """A pair as text (button labels, sentences): ``e + s``; parts that are pieces of a character
    are followed by the token they make: ``⟨e0 a4⟩ + ⟨95⟩ → क``.

    >>> pair_text(("à¤", "ķ"), render.TokenStyle(byte_level=True)), pair_text(("*", "a"), render.PLAIN, into="markdown")
    ('⟨e0 a4⟩ + ⟨95⟩ → क', '\\\\* + a')
    """
    text = " + ".join(render.token_text(t, style, into=into) for t in pair)
    merged = completed(pair, style)
    return text if merged is None else f"{text} → {render.token_text(merged, style, into=into)}"


def pair_html(pair: tuple[str, str], style: render.TokenStyle) -> str:
    """A pair as two chips (and the chip of the character they complete)."""
    left, right = pair
    merged = completed(pair, style)
    made = "" if merged is None else f" → {render.chips([merged], style=style)}"
    return f"{render.chips([left], style=style)} + {render.chips([right], style=style)}{made}"


def _answer_of(question: Question) -> int:
    """The right option's index, or the true count (set when the question is asked)."""
    assert question.answer is not None
    return question.answer


def tie_text(question: Question, style: render.TokenStyle, rule: str, *, into: render.Into) -> str:
    """The sentence of a revealed question whose merged pair tied with other options ("" when
    none did): every one of them was right, and which rule chose the merge.

    >>> q = Question(1, "merge", 0, options=(("a", "t"), ("e", "r")), counts=(3326, 3326), answer=1)
    >>> tie_text(q, render.PLAIN, "first-seen", into="text")
    'Tie: a + t occurs as often as e + r (3,326 times), both merge-worthy (right answers); the rule picked e + r because it occurs first in the corpus (first-seen).'
    """
    answer = _answer_of(question)
    tied = sorted(right_options(question) - {answer})
    if not tied:
        return ""
    picked = pair_text(question.options[answer], style, into=into)
    others = " and ".join(pair_text(question.options[i], style, into=into) for i in tied)
    verb, every = ("occurs", "both") if len(tied) == 1 else ("occur", "all")
    because = render.escape(tie_rule_sentence(rule), into=into)
    return (
        f"Tie: {others} {verb} as often as {picked} ({question.counts[answer]:,} times), {every} merge-worthy "
        f"(right answers); the rule picked {picked} because {because}."
    )


# ---- what the room shows -----------------------------------------------------------------------------
def tally_html(
    question: Question, answers: Sequence[Answer], style: render.TokenStyle, *, present: int, reveal: bool
) -> str:
    """The answers so far as bars: per option (a next-merge question) or per guess (a count);
    after the reveal, the right ones (the closest guesses) outlined."""
    if question.kind == "merge":
        counts = [0] * len(question.options)
        for a in answers:
            counts[a.value] += 1
        labels = [pair_html(p, style) for p in question.options]
        right = set(right_options(question)) if reveal else set()
    else:
        guessed = sorted({a.value for a in answers})
        counts = [sum(1 for a in answers if a.value == g) for g in guessed]
        labels = [f"{g:,} tokens" for g in guessed]
        best = min((abs(g - _answer_of(question)) for g in guessed), default=None) if reveal else None
        right = {i for i, g in enumerate(guessed) if best is not None and abs(g - _answer_of(question)) == best}
    top = max(counts, default=0) or 1
    rows = "".join(
        f'<div class="cls-bar-row{" cls-right" if i in right else ""}"><div class="cls-bar-label">{label}</div>'
        f'<div class="cls-bar"><span style="width:{100 * n / top:.0f}%"></span></div><b>{n}</b></div>'
        for i, (label, n) in enumerate(zip(labels, counts))
    )
    head = f'<div class="cls-count"><b>{len(answers)}</b> answers in / <b>{present}</b> students present</div>'
    return f'<div class="cls-tally">{head}{rows or render.caption("No answer yet.")}</div>'


def board_html(board: Sequence[Standing], *, me: str | None = None, limit: int = 10) -> str:
    """The leaderboard's first ``limit`` rows (``me``: the reading student's name, marked)."""
    if not board:
        return render.caption("Nobody has joined yet.")
    rows = []
    for rank, s in enumerate(board[:limit], 1):
        mine = ' class="cls-me"' if me is not None and s.name == me else ""
        rows.append(
            f"<tr{mine}><td>{rank}</td><td>{render.user_text(s.name, into='html')}</td><td>{s.points}</td><td>{s.seconds:.1f} s</td></tr>"
        )
    return (
        '<table class="cls-board"><tr><th>#</th><th>name</th><th>points</th><th>time</th></tr>'
        + "".join(rows)
        + "</table>"
    )


def question_text(question: Question) -> str:
    """What a question asks, after its number (Markdown; the sentence escaped).

    >>> question_text(Question(2, "count", 4, sentence="low *er*", merges=1))
    'how many tokens will “low \\\\*er\\\\*” have after 1 more merge?'
    >>> question_text(Question(1, "merge", 9, show_counts=False))
    'which pair merges at step 10? (intuition: no counts)'
    """
    if question.kind == "merge":
        return f"which pair merges at step {question.step + 1:,}? " + (
            "(counts shown)" if question.show_counts else "(intuition: no counts)"
        )
    return (
        f"how many tokens will “{render.user_text(question.sentence, into='markdown')}” have after "
        f"{question.merges:,} more merge{'s' * (question.merges != 1)}?"
    )


def reveal_html(question: Question, answers: Sequence[Answer], style: render.TokenStyle, *, rule: str) -> str:
    """What the reveal says: the merged pair and how many were right (a tie with other options
    said, and the tie-break ``rule`` that chose), or the true count."""
    won = len(winners(question, answers))
    if question.kind == "merge":
        right = pair_html(question.options[_answer_of(question)], style)
        tie = tie_text(question, style, rule, into="html")
        tie = f"<br>{tie}" if tie else ""
        return f'<div class="cls-option cls-right">Merged: {right} · {won} of {len(answers)} right{tie}</div>'
    return f'<div class="cls-option cls-right">{question.answer:,} tokens · {won} closest of {len(answers)}</div>'


def missed_html(question: Question, answers: Sequence[Answer], style: render.TokenStyle) -> str:
    """One line after a reveal: the wrong answer most chosen (empty when nobody was wrong)."""
    missed = most_missed(question, answers)
    if missed is None:
        return ""
    if question.kind == "merge":
        what = pair_html(question.options[missed.value], style)
    else:
        what = f"{missed.value:,} tokens"
    return (
        f'<div class="cls-missed">Most missed: {what} · chosen by {missed.chosen} of the {missed.wrong} '
        f"wrong answer{'s' * (missed.wrong != 1)} ({missed.answered} in all)</div>"
    )


def answer_label(question: Question, value: int, style: render.TokenStyle) -> str:
    """An answer as the student's page names it (Markdown)."""
    if question.kind == "merge":
        return pair_text(question.options[value], style, into="markdown")
    return f"{value:,} tokens"


def answer_caption(question: Question, mine: Answer | None, style: render.TokenStyle) -> str | None:
    """The line under a student's question: its answer so far, or that answers are closed (None
    once revealed: the result says it)."""
    if question.state == "open":
        return (
            "Your answer: "
            + ("none yet" if mine is None else answer_label(question, mine.value, style))
            + " — you can change it until the teacher closes the question."
        )
    if question.state == "closed":
        return "Answers are closed: wait for the reveal."
    return None


def result_sentence(question: Question, *, won: bool, style: render.TokenStyle, rule: str) -> str:
    """What a revealed question tells a student (plain text: the page escapes it)."""
    right = (
        "the pair " + pair_text(question.options[_answer_of(question)], style)
        if question.kind == "merge"
        else f"{question.answer:,} tokens"
    )
    tie = tie_text(question, style, rule, into="text") if question.kind == "merge" else ""
    return ("You got it! " if won else "Not this time. ") + f"The answer: {right}. {tie}".rstrip()


def options_html(question: Question, mine: Answer | None, style: render.TokenStyle) -> str:
    """A next-merge question's options once answers are closed: the student's own marked, the
    right ones outlined after the reveal."""
    right = right_options(question) if question.state == "revealed" else set()
    return (
        '<div class="cls-options">'
        + "".join(
            f'<div class="cls-option{" cls-right" if i in right else ""}">'
            f"{pair_html(pair, style)}{' · your answer' if mine is not None and mine.value == i else ''}</div>"
            for i, pair in enumerate(question.options)
        )
        + "</div>"
    )


def room_status(step: int, members: int, present: int) -> str:
    """The teacher's and the projector's status line (Markdown).

    >>> room_status(1234, 3, 2)
    'Step **1,234** · 3 joined, 2 present'
    """
    return f"Step **{step:,}** · {members} joined, {present} present"


def student_status(code: str, member: Member, step: int, *, own: int | None = None) -> str:
    """A student's status line (Markdown; the name escaped): following the teacher, or stepping
    on its own at step ``own``."""
    head = f"Room **{render.md_text(code)}** · you are **{render.user_text(member.name, into='markdown')}** · "
    if own is None:
        return head + f"following the teacher at step **{step:,}**"
    return head + f"on your own at step **{own:,}** (the teacher is at {step:,})"


def at_end(trainer: Trainer, step: int) -> bool:
    """Whether the class is at the last step its training reaches: training finished, or held
    by the server's budget, and every merge made shown."""
    return (trainer.done or trainer.held is not None) and step >= len(trainer.records)


def hides_pairs(current: Question | None) -> bool:
    """A question not yet revealed hides the pair table (and what would give its answer away)."""
    return current is not None and current.state != "revealed"


def pairs_panel(trainer: Trainer, step: int, *, quiz: bool, top: int, style: render.TokenStyle) -> str:
    """The pair table at ``step`` (its ``top`` rows), hidden while a question is open (``quiz``):
    which pair merges next is what the class is guessing."""
    if quiz:
        body = render.caption("Hidden until the reveal: which pair merges next is what the class is guessing.")
        return render.panel("Pair counts now", body)
    table = trainer.records[step].top_pairs if step < len(trainer.records) else ()
    if not table:
        return render.panel("Pair counts now", render.caption("Training finished: no pair is left to merge."))
    return render.panel(
        "Pair counts now", render.pair_rows(table[:top], style=style), "Green: merges next. Yellow: tied with it."
    )


def history_panel(trainer: Trainer, step: int, style: render.TokenStyle) -> str:
    """The merges made so far, newest first (never the one trained ahead of the room's step)."""
    shown = tables.recent(trainer.records, step, window=12)
    body = tables.history_html(tables.history_rows(shown, step), style=style) if shown else ""
    return render.panel("Merge history", body, f"{step:,} merges made in this room")


# ---- steps and questions -------------------------------------------------------------------------------
def last_step(trainer: Trainer | None) -> int | None:
    """The last step a room on this training can reach (None: not known): never more merges
    than the corpus has tokens (each merge takes at least one away), nor than its stop rule
    allows (a vocabulary size only bounds them when every merge adds a token: no id reuse).

    >>> from explorer import TrainerConfig
    >>> sized = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=10)
    >>> counted = sized.replace(vocab_size=None, num_merges=3)
    >>> [last_step(Trainer.from_texts("low lower", c)) for c in (sized, sized.replace(reuse_ids=False), counted)]
    [8, 5, 3]
    """
    if trainer is None or trainer.config.picky is not None:  # a PickyBPE removal gives tokens back
        return None
    cfg, tokens = trainer.config, trainer.initial_tokens
    if cfg.num_merges is not None or (cfg.vocab_size is not None and not cfg.reuse_ids):
        planned = trainer.planned_merges
        return tokens if planned is None else min(planned, tokens)
    return tokens


def step_target(step: int, *, trained: int | None, top: int) -> int:
    """The step the class moves to when the teacher asks for ``step``: kept within what the
    room's training reaches (``trained``: its merges so far, None when unknown) and its top.

    >>> step_target(-3, trained=5, top=9), step_target(7, trained=5, top=9), step_target(7, trained=None, top=6)
    (0, 5, 6)
    """
    target = max(0, step)
    if trained is not None:
        target = min(target, trained)
    return min(target, top)


def merge_question(trainer: Trainer, step: int, *, show_counts: bool, seed: str) -> Question:
    """Which pair merges at ``step`` + 1, among the true next merge and the next most frequent
    pairs (shuffled by ``seed``); a :class:`RoomError` when no merge is left or the step kept
    no pair table."""
    if step >= len(trainer.records):
        raise RoomError("Training has finished: no merge is left to guess.")
    record = trainer.records[step]
    if record.compact:
        raise RoomError("This step kept only its winning pair, not the pair table a question needs.")
    options, counts, right = merge_options([(p.left, p.right, p.count) for p in record.top_pairs], seed=seed)
    return Question(0, "merge", step, options=options, counts=counts, show_counts=show_counts, answer=right)


def count_question(run: RoomRun, step: int, sentence: str, ahead: int) -> Question:
    """How many tokens ``sentence`` has after the ``ahead`` merges that follow ``step`` (fewer
    when training ends first); a :class:`RoomError` for an empty sentence or no merge left."""
    sentence = sentence.strip()[:MAX_SENTENCE]
    if not sentence:
        raise RoomError("Type the sentence whose tokens the class should count.")
    trainer = run.at(step + ahead - 1)
    n = min(ahead, len(trainer.records) - step)
    if n < 1:
        raise RoomError("Training has finished: no merge is left to count ahead.")
    answer = len(trainer.tokenizer(step + n).encode(sentence))
    return Question(0, "count", step, sentence=sentence, merges=n, answer=answer)


def default_sentence(corpus_sentence: str) -> str:
    """A count question's default: a real sentence of the room's corpus, cut to what a question
    takes, or (a corpus without one: no letters) a sentence of its own.

    >>> default_sentence(""), len(default_sentence("a" * 400))
    ('the lowest newest widest', 300)
    """
    return corpus_sentence[:MAX_SENTENCE] or FALLBACK_SENTENCE


def start_refusal(*, stepping: bool, left_out: str | None) -> str | None:
    """Why this session's corpus cannot start a room (None: it can): a room steps through merges
    one at a time, and its corpus must be one a link can name.

    >>> start_refusal(stepping=True, left_out="")
    >>> start_refusal(stepping=True, left_out="pasted text over 64 KiB")
    'This corpus cannot be shared with a room: pasted text over 64 KiB.'
    """
    if not stepping:
        return (
            "A room steps through merges one at a time: choose a corpus under the "
            "server's step-through limit, or its sample, on the Train page first."
        )
    if left_out:
        return f"This corpus cannot be shared with a room: {left_out}."
    return None


# ---- the teacher's side: cookies, the presenter's address, moderation -----------------------------------
COOKIE_PREFIX = "bpe_teacher_"


def cookie_name(code: str) -> str:
    """The cookie that keeps a room's key in the teacher's browser.

    >>> cookie_name("k7qx2m")
    'bpe_teacher_K7QX2M'
    """
    return COOKIE_PREFIX + normalize_code(code)


def cookies(keys: Mapping[str, str], gone: Iterable[str], *, lifetime: int) -> list[dict[str, object]]:
    """The cookies a teacher's page writes: each room's key it teaches (for the room's idle
    ``lifetime``, in seconds), and an empty one that deletes the cookie of each room ``gone``.

    >>> cookies({"K7QX2M": "s3cret"}, {"AB12CD"}, lifetime=60)
    [{'name': 'bpe_teacher_K7QX2M', 'value': 's3cret', 'max_age': 60}, {'name': 'bpe_teacher_AB12CD', 'value': '', 'max_age': 0}]
    """
    out: list[dict[str, object]] = [{"name": cookie_name(c), "value": k, "max_age": lifetime} for c, k in keys.items()]
    return out + [{"name": cookie_name(c), "value": "", "max_age": 0} for c in sorted(gone)]


def presenter_address(browser_url: str, code: str, key: str, extra: Mapping[str, str]) -> str:
    """The presenter view's address on the teacher's own machine, from the address of the
    teacher's page: the room's follow token, never its key, and ``extra`` params (the projector
    mode's). A page whose address is not known gets a relative one.

    >>> url = presenter_address("https://school.example/bpe/Class?room=K7QX2M", "K7QX2M", "k", {"projector": "1"})
    >>> url == f"https://school.example/bpe/Class?room=K7QX2M&present={follow_token('k')}&projector=1"
    True
    """
    parts = urlsplit(browser_url)
    base = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
    path = parts.path.rstrip("/")
    for page in ("/Class", "/class"):
        path = path.removesuffix(page)
    return f"{base}{path}/Class?" + urlencode({"room": code, "present": follow_token(key), **extra})


def member_label(members: Mapping[str, Member]) -> Callable[[str], str]:
    """How the moderation's student box names a member id: its name, said when hidden; a member
    gone since the box was drawn says so.

    >>> label = member_label({"m1": Member("m1", "Ana", 0.0), "m2": Member("m2", "Bo", 0.0, hidden=True)})
    >>> label("m1"), label("m2"), label("m3")
    ('Ana', 'Bo · hidden on the leaderboard', '(gone)')
    """

    def label(member_id: str) -> str:
        m = members.get(member_id)
        return "(gone)" if m is None else m.name + (" · hidden on the leaderboard" if m.hidden else "")

    return label


def hidden_names(members: Sequence[Member]) -> list[Member]:
    """``members`` as every leaderboard shows them: a name the teacher hid replaced."""
    return [m._replace(name=public_name(m)) for m in members]
