"""The Class page's steppers: the room's steps drawn by the stepper component
(:mod:`explorer.ui.stepper`) from a window of rendered steps, as the Train page's are.

- **The teacher** steps with the component's Step / +10 / Back / Play / slider / keys; each step
  is drawn at once from the window and reported without waiting; the report moves the room's
  step (the page's ``_set_step``: the same rules and key check as the buttons), so F5, the
  presenter and the students see it.
- **A student following the teacher** gets the same component with no controls: it polls the
  room's step itself (``/room-rev``, ``what=step``) and moves to it from the steps it holds, with
  no rerun of the page; it reports (one rerun of its fragment) only to extend its window. The
  page's own watch (``rev``) reruns it when anything else changed (a question, a name, the end).
- **A student stepping ahead on its own** steps its own copy with the controls, the room's step
  in its status line.

Each step's panels are those the page drew before (:func:`entry`: the Train page's sentence, the
Class page's pair table, hidden the quiz's way while a question is open, its history and words);
a room's entries are rendered once per process and look (``RoomRun.drawn``) and sent by every
session. Where no component's script runs (AppTest) nothing reports, and the page's own buttons
and slider stand in.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

import streamlit as st

from . import class_model as model
from . import follow, render, state, stepper, train_view
from .class_model import RoomRun

__all__ = ["Look", "look", "entry", "draw", "follow_url"]

_TOKENS = itertools.count(1)  # a number for each trainer a session's stepper shows
_DRAWN_KEPT = 20_000  # a room's rendered entries kept (a step's are a few KB)
_WORDS_CAPTION = "The most frequent words at this step; the outlined chip is the newest token."
# A following student's window: the steps ahead of the room's (the teacher steps forward), and
# the stepper's NEAR steps behind; it asks for more when the room comes within NEAR of its edge.
# Small: every student is sent it again when a question hides the pair table.
FOLLOW_AHEAD = 24


@dataclass
class _Window(stepper.Window):
    """A stepper's window, and the steps this side sent since the browser last said what it
    holds (a run for another reason, an answer say, does not send them again)."""

    sent: set[int] = field(default_factory=set)
    told: tuple = ()  # the (page load, report) last taken as what the browser holds


@dataclass(frozen=True)
class Look:
    """What a step's entry depends on besides the step: the quiz (a question hides the pair
    table), the pair table's rows and how tokens are written."""

    quiz: bool
    top: int
    style: render.TokenStyle


def look(live: state.Live, *, quiz: bool) -> Look:
    """The look of this session's entries: the quiz, the Train page's "Pairs shown" setting."""
    state.widget_default(state.TOP_K, state.TOP_K_DEFAULT)
    return Look(quiz, int(st.session_state[state.TOP_K]), train_view.token_style(live))


def entry(live: state.Live, k: int, how: Look) -> stepper.Entry:
    """Step k of the room's training as the stepper draws it: the step's sentence, the pair
    table (hidden in a quiz), the merge history and the words, by the helpers the page drew them
    with (``class_model``, ``train_view``, ``render``)."""
    trainer = live.trainer
    assert trainer is not None
    style = how.style
    pairs = model.pairs_panel(trainer, k, quiz=how.quiz, top=how.top, style=style)
    history = model.history_panel(trainer, k, style)
    words = render.panel("Words, segmented", train_view.words_rows(live, style, step=k), _WORDS_CAPTION)
    lead, text, tone = train_view.sentence(live, style, step=k)
    # the pair table at k is the record of merge k + 1: a step without it yet is sent again
    final = trainer.done or trainer.held is not None or k < len(trainer.records)
    return stepper.Entry(k, len(live.tokenizer(k).vocab), lead, text, tone, ((pairs, history), (words,)), final=final)


def _entry(live: state.Live, k: int, how: Look, run: RoomRun | None) -> stepper.Entry:
    """:func:`entry`, rendered once per room and look when ``run`` is the room's (its
    trainer is the one ``live`` reads): every student's stepper sends the same steps."""
    if run is None or run.trainer is not live.trainer:
        return entry(live, k, how)
    found = run.drawn.get((k, how))
    if found is None:
        found = entry(live, k, how)
        if found.final:
            if len(run.drawn) >= _DRAWN_KEPT:
                run.drawn.clear()
            run.drawn[(k, how)] = found
    return found


def follow_url(code: str, member: str) -> str:
    """The address the student's stepper polls for the room's step (the page's watch's own)."""
    return f"{follow.ROUTE}?" + urlencode({"code": code, "member": member})


def _token(live: state.Live) -> int:
    """A number for the trainer a Live reads (its memo goes with it)."""
    token = live.memo.get("class_stepper_token")
    if token is None:
        token = live.memo["class_stepper_token"] = next(_TOKENS)
    return token


def _window(window_key: str, live: state.Live, how: Look) -> _Window:
    """The session's window for one stepper, its epoch brought up to date (another trainer or
    look: the entries held are dropped)."""
    window = stepper.session_window(window_key, _Window)
    if window.renew(_token(live), how):
        window.sent.clear()
    return window


def _held(window: _Window, report: stepper.Report | None) -> set[int]:
    """The steps the browser holds as far as this side knows: those its newest report names
    (trusted alone when it is news: a step sent and lost is then sent again), and those sent
    since."""
    if report is None or report.epoch != window.epoch:
        return set(window.sent) if stepper.browser() else set()
    told = (report.load, report.seq)
    if told != window.told or not stepper.browser():  # no browser (AppTest): what its report names, alone
        window.told = told
        window.sent = stepper.held_steps(report.held)
    return set(window.sent)


def _generation(window: stepper.Window, live: state.Live, report: stepper.Report | None, view: int) -> None:
    """A new generation when the server moved the view itself (a reveal, a Back in another
    window of the teacher, a refused step): the view differs from the one the browser shows, as
    its newest report says (once), else as the server last sent it. The component adopts the
    view of a new generation and keeps its own otherwise."""
    seen, sent = window.seen or (None, None)
    fresh = report is not None and report.gen == window.gen and (report.load, report.seq) != seen
    expected = report.step if fresh and report is not None else sent
    if expected is not None and view != expected:
        window.moves += 1
    mark = (report.load, report.seq) if report is not None else seen
    window.seen = (mark, view)
    window.gen = f"{_token(live)}.{window.moves}"


def draw(
    live: state.Live,
    *,
    key: str,
    window_key: str,
    how: Look,
    view: int,
    run: RoomRun | None,
    on_report: Callable[[], None],
    controls: bool = True,
    status: Sequence[tuple[str, bool]] | None = None,
    follow_room: stepper.Follow | None = None,
) -> None:
    """Send the steps the browser lacks around ``view`` (the room's step, or a student's own),
    for about ``stepper.BATCH_S`` of rendering a run (the rest when it reports again), and draw
    the stepper. The steps end at the last one the trainer holds a pair table for."""
    trainer = live.trainer
    assert trainer is not None
    window = _window(window_key, live, how)
    report = stepper.report_of(key)
    _generation(window, live, report, view)
    held = _held(window, report)
    ended = trainer.done or trainer.held is not None
    last = len(trainer.records) if ended else max(view, len(trainer.records) - 1)
    if follow_room is not None and follow_room.move:
        near = stepper.NEAR
        steps = [k for k in stepper.wanted(view, last=last, held=held, ahead=FOLLOW_AHEAD) if k >= view - near]
    else:
        steps = stepper.wanted(view, last=last, held=held, far=stepper.AHEAD)
    entries = stepper.rendered(steps, lambda k: _entry(live, k, how, run), report=report)
    window.sent.update(e.step for e in entries if e.final)
    stepper.stepper(
        key=key,
        window=window,
        view=view,
        last=last,
        done=ended,
        final=last,
        tail="",
        report=report,
        entries=entries,
        held=held,
        more=len(entries) < len(steps),
        on_report=on_report,
        controls=controls,
        status=status,
        follow=follow_room,
    )
