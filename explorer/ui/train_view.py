"""The Train page's panels: controls, the current merge, pair table, words, charts, history."""

from __future__ import annotations

import html
import time
from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from ..bpe.records import StepRecord
from ..bpe.tokenizer import Tokenizer
from ..bpe.trainer import PairStat, Trainer, train_words_to_end
from ..errors import ExplorerError
from ..formats.corpora import mib
from ..stages.units import display_to_bytes
from . import charts, clicks, interop_view, links, live_view, render, server, state, tables
from .explain import byte_legend, explain, tie_rule_sentence

__all__ = [
    "token_style",
    "live_area",
    "view_tools",
    "controls",
    "status",
    "run_to_end",
    "big_corpus_offer",
    "final_run",
    "session_notes",
    "current_merge",
    "words_rows",
    "token_lengths",
]

_SPEEDS = {"slow (2 s)": 2.0, "normal (1 s)": 1.0, "fast (0.4 s)": 0.4}
_RUN_CHUNK_S = 0.15  # progress redraws this often during "Run to end"
_MAX_CATCH_UP = 3  # steps one autoplay tick may take when ticks were dropped
_WORDS = 24
_STEP_BUTTONS = {"step": 1, "step10": 10, "step100": 100}  # widget key -> steps per click
_WORD_CHARS = 1_000


# ---- controls --------------------------------------------------------------------------
# The slider's key: this and a generation ("view_slider_3", clicks.moved_widget): a new slider
# each time a button or a tick moves the step, so that the browser's late value of the slider
# it replaced (sent with the next quick click) does not move the step back.
_SLIDER = "view_slider"


def _forward(n: int) -> None:
    live = state.live()
    live.playing = False
    live.forward(n)


def _start_run() -> None:
    live = state.live()
    live.playing = False
    live.running = True


def _stop_run() -> None:
    live = state.live()
    with live.lock:  # waits for the chunk in progress, so the view lands on the last merge
        if live.running and live.mode == "final":
            live.notice = (
                "Training stopped before the end. A run without step records trains in a worker "
                "process and keeps its merges when it finishes; press Train again to start it again."
            )
        live.running = False
        live.view = live.trained


def _reset() -> None:
    state.live(reset=True)


def _on_slider(key: str) -> None:
    live = state.live()
    if live.playing or not clicks.is_current(key):
        # the browser's value from before a Step or a timer tick moved the step (the slider is
        # disabled while playing): it must neither rewind the step nor stop the play
        return
    live.view = int(st.session_state[key])


def _set_playing(playing: bool) -> None:
    # idempotent (not a toggle): a click that lands during a tick's rerun cannot flip it back
    live = state.live()
    live.playing = playing
    live.last_tick = time.monotonic()


def _take_queued_clicks() -> None:
    """Step clicks counted in the browser since the last run (see ``clicks``), all of them."""
    queued = clicks.counted_clicks(list(_STEP_BUTTONS), key="w_step_clicks")
    if queued:
        _forward(sum(_STEP_BUTTONS[k] * n for k, n in queued.items()))


_BUTTONS = "train_buttons_drawn"  # what the buttons were drawn for: (at the end, training done, playing)


def _buttons_state(live: state.Live) -> tuple[bool, bool, bool]:
    trainer = live.trainer
    assert trainer is not None
    return trainer.done and live.view == live.trained, trainer.done, live.playing


def controls(live: state.Live) -> None:
    """Step / +10 / +100 / Run to end / Reset, Play-Pause with a speed. Drawn by the page, not by
    the fragment a Step reruns: a Step's clicks are counted in the browser (``clicks``), so the
    buttons need not be redrawn with each step, only when their state changes (the fragment asks
    for a full run then)."""
    trainer = live.trainer
    assert trainer is not None
    at_end, done, _ = st.session_state[_BUTTONS] = _buttons_state(live)
    # a row that wraps rather than squeezing a label into "S…" (narrow screens, 150% zoom)
    row = st.container(horizontal=True, gap="small", vertical_alignment="center")
    row.button("Step", key="step", on_click=_forward, args=(1,), disabled=at_end, type="primary")
    row.button("+10", key="step10", on_click=_forward, args=(10,), disabled=at_end)
    row.button("+100", key="step100", on_click=_forward, args=(100,), disabled=at_end)
    row.button("Run to end", key="run", on_click=_start_run, disabled=done)
    row.button("Reset", key="reset", on_click=_reset)
    if live.playing:
        row.button("Pause", key="pause", on_click=_set_playing, args=(False,))
    else:
        row.button("Play", key="play", on_click=_set_playing, args=(True,), disabled=at_end)
    state.widget_default("w_speed", "normal (1 s)")
    row.selectbox("Speed", list(_SPEEDS), key="w_speed", label_visibility="collapsed", width=170)


def status(live: state.Live) -> None:
    """The step shown and the slider that moves it (redrawn by every Step)."""
    trainer = live.trainer
    assert trainer is not None
    status = f"Step **{live.view:,}** of {live.trained:,} trained · vocabulary {_vocab_at(live):,}"
    if trainer.done:
        status += f" · training stopped: {_stop_reason(trainer)}"
    if not live.trained:
        st.markdown(status)
        return
    # the status and the slider share a row: the pair table's top stays on the first screen
    left, right = st.columns([1, 1], vertical_alignment="center")
    left.markdown(status)
    key = clicks.moved_widget(_SLIDER, live.view)
    right.slider(
        "Step shown",
        0,
        live.trained,
        key=key,
        on_change=_on_slider,
        args=(key,),
        label_visibility="collapsed",
        disabled=live.playing,
        help="Jump to any step already trained (pause first while playing); the panels show the corpus as it was then.",
    )


def _vocab_at(live: state.Live) -> int:
    """The vocabulary of the step shown, not of the last step trained (with id reuse a merge
    can leave it as it was)."""
    return len(live.tokenizer(live.view).vocab)


def _stop_reason(trainer: Trainer) -> str:
    cfg, reason = trainer.config, trainer.stop_reason
    if reason == "vocab_size":
        return f"the vocabulary reached {cfg.vocab_size:,}"
    if reason == "num_merges":
        return f"{cfg.num_merges:,} merges done"
    if reason == "min_frequency":
        return f"the best pair occurs fewer than {cfg.min_frequency:,} times"
    if reason == "no pairs left":
        return "no pair of tokens is left to merge"
    return reason or ""


def big_corpus_offer(live: state.Live) -> None:
    """A corpus over the server's step-through limit, or too heavy to step through within a
    session's budget: say why, and offer a sample or a run to the end without step records (a
    corpus over the size limit is not counted until the user chooses)."""
    limit = server.step_limit()
    if live.held:
        st.warning(
            render.md_text(live.held)
            + " Step through a sample of it that fits, or train on all of it without step records."
        )
    else:
        st.warning(
            f"This corpus is {mib(live.oversize or 0)}: stepping through it merge by merge is limited to "
            f"{mib(limit)} per session on this server (the step records and the live panels of a bigger "
            "corpus would take too much of the server that the whole class shares)."
        )
    row = st.container(horizontal=True, gap="small")
    row.button(
        "Step through a sample of it that fits" if live.held else f"Step through its first {mib(limit)}",
        key="big_sample",
        type="primary",
        on_click=state.choose_big_mode,
        args=("sample",),
    )
    row.button(
        "Train on all of it, to the end, without step records",
        key="big_final",
        on_click=state.choose_big_mode,
        args=("final",),
    )
    st.caption(
        "Or choose a smaller corpus on the Corpus page. The limits are set by whoever runs the server "
        "(BPE_EXPLORER_STEP_MIB, BPE_EXPLORER_SESSION_TRAIN_MIB, BPE_EXPLORER_STEP_WORK)."
    )


def session_notes(live: state.Live) -> None:
    """What the page says about how this session trains: a sample, no step records, or a
    trainer rebuilt after the session idled (said once)."""
    note = state.big_corpus_note(live)
    if note:
        st.caption(render.md_text(note))
    if live.notice:
        st.info(render.md_text(live.notice))
        live.notice = None
    if live.held:
        st.warning(render.md_text(live.held))


def run_to_end(live: state.Live) -> None:
    """Train until a stop rule fires, with a progress bar and a Stop button; the trainer is
    updated in place, so stopping (or closing the tab) keeps every merge done so far.

    Call it from the page, not from a fragment: clicking Stop asks for a full rerun, which
    interrupts this loop at its next progress update."""
    if not live.running:
        return
    st.button("Stop training", key="stop", on_click=_stop_run, type="primary")
    bar = st.progress(0.0, text="Training…")
    if live.mode == "final":
        _run_in_worker(live, bar)
        st.rerun()
    trainer = live.trainer
    assert trainer is not None
    target = trainer.planned_merges
    chunk = 25
    while True:
        # heavy work takes turns with the other sessions' runs, a chunk at a time; a Step in
        # another session never waits for the lane
        with server.HEAVY.turn(), live.lock:
            if not live.running or trainer.done:
                break
            t0 = time.perf_counter()
            if not live.train(chunk):  # the session's budget stopped it: ``held`` says why
                break
            spent = time.perf_counter() - t0
        chunk = max(1, min(5000, int(chunk * _RUN_CHUNK_S / max(spent, 1e-4))))
        done = len(trainer.records)
        frac = min(1.0, done / target) if target else 0.0
        queued = server.HEAVY.waiting
        bar.progress(
            frac,
            text=f"Training… {done:,} merges"
            + (f" of {target:,}" if target else "")
            + (f" (taking turns with {queued} other session{'s' * (queued != 1)})" if queued else ""),
        )
    with live.lock:
        live.running = False
        live.view = live.trained
    st.rerun()


def final_run(live: state.Live) -> None:
    """A run without step records before its trainer came back: its progress while it trains in
    a worker, else why it stopped (Stop, a failed job) and a button to start it again."""
    if live.running:
        run_to_end(live)
        return
    st.info(render.md_text(live.notice or "Training without step records has not run yet."))
    st.button("Train again", key="final_again", type="primary", on_click=_reset)


def _run_in_worker(live: state.Live, bar) -> None:
    """A big corpus without step records is built and trained to the end in a worker process
    (the server's interpreter stays free for every other session's Step, and its memory never
    holds the position index): the trainer comes back trained (a few hundred KB), what it keeps
    within the session's budget. Stop, or leaving the page, ends the job."""
    try:
        words, config, encoding = state.final_words(live)
        job = server.pool().submit(
            train_words_to_end, words, config, encoding=encoding, budget=server.worker_budget(), progress=True
        )
        trained = server.wait_for(
            job, lambda fraction, text: bar.progress(fraction, text=text), what="Training in a worker process… "
        )
    except ExplorerError as err:
        with live.lock:
            live.running = False
            live.notice = f"Training did not finish: {err}"
        return
    trained.budget = server.session_budget()
    with live.lock:
        live.set_trainer(trained)
        live.held = trained.held
        live.running = False
        live.view = live.trained


_ARMED = "autoplay_armed"  # the timer interval the live area was registered with (None: no timer)


def _wanted_interval(live: state.Live) -> float | None:
    return _SPEEDS[st.session_state.get("w_speed", "normal (1 s)")] if live.playing else None


def _arm_autoplay_if_changed(live: state.Live) -> None:
    """Play/Pause and the speed are set inside the live fragment, but its timer is registered by
    a full page run: when the two disagree, rerun the whole page."""
    if _wanted_interval(live) != st.session_state.get(_ARMED):
        st.rerun(scope="app")


def _autoplay_step(live: state.Live) -> None:
    """The steps due since the last one, on each timer tick. The fragment also reruns for clicks
    and full page runs; the clock tells a tick from those. A redraw slower than the interval
    makes the browser drop timer ticks, so a tick takes every step that fell due (a few at
    most): the play keeps the pace its speed promises."""
    interval = st.session_state.get(_ARMED)
    if not live.playing or interval is None:
        return
    now = time.monotonic()
    due = int((now - live.last_tick) / interval + 0.2)
    if due < 1:
        return
    due = min(due, _MAX_CATCH_UP)
    live.last_tick = max(live.last_tick + due * interval, now - interval)
    if live.forward(due) == 0:
        live.playing = False


# ---- panels ----------------------------------------------------------------------------
# A step's panels are computed first and drawn after, in one go: the browser redraws the page
# for each batch of elements that arrives, so elements sent over 50 ms of computing cost several
# redraws per step where one burst costs one. Each panel is one HTML block (heading, table and
# caption), and the widgets that a Step does not change (pairs shown, the searches, the full
# history switch, the download) sit in the sidebar, outside the fragment a Step reruns: every
# element a Step redraws costs the browser a few milliseconds.
@dataclass(frozen=True)
class _View:
    """Everything the live area shows at the step viewed, computed before any of it is drawn."""

    style: render.TokenStyle
    pairs_panel: str
    history_panel: str
    words_panel: str
    charts: list[dict]  # the four charts' data (live_view.chart_data)


def token_style(live: state.Live) -> render.TokenStyle:
    """How the page writes the trainer's tokens: as text (bytes that are part of a character in
    hex), or, when the sidebar's view setting asks for it, as GPT-2's characters."""
    assert live.trainer is not None
    return render.style_of(live.trainer.config.unit, gpt2_chars=bool(st.session_state.get(state.GPT2_CHARS)))


def _prepare(live: state.Live) -> _View:
    state.widget_default("w_top_k", 10)
    style = token_style(live)
    pairs = _next_table(live)[: st.session_state["w_top_k"]]
    return _View(
        style,
        _pair_panel(live, pairs, style),
        _history_panel(live, st.session_state.get("w_history_search", ""), style),
        _words_panel(live, style, st.session_state.get("w_word_search", "")),
        _charts(live),
    )


def current_merge(live: state.Live, style: render.TokenStyle) -> None:
    trainer = live.trainer
    assert trainer is not None
    if live.view == 0:
        unit = " (bytes)" if trainer.config.unit == "byte" else ""
        if trainer.done and not trainer.records:
            # Step is disabled: say why instead of inviting a click
            st.warning(
                f"No merge can be made: {_stop_reason(trainer)}. Every word stays as its characters{unit}; "
                "raise the number of merges or choose another corpus."
            )
        else:
            st.info(
                f"Nothing merged yet: every word is still its characters{unit}. Press **Step** to make the first merge."
            )
        return
    record = trainer.records[live.view - 1]
    st.info(f"**Step {record.step}.** " + render.md_text(explain(record, config=trainer.config, style=style)))


def _next_table(live: state.Live) -> tuple[PairStat, ...]:
    trainer = live.trainer
    assert trainer is not None
    if live.view < live.trained:
        return trainer.records[live.view].top_pairs
    return () if trainer.done else trainer.peek()


def _pair_panel(live: state.Live, pairs: tuple[PairStat, ...], style: render.TokenStyle) -> str:
    trainer = live.trainer
    assert trainer is not None
    if not pairs:
        done = f'<div class="bpe-done">Training finished: {html.escape(_stop_reason(trainer))}.</div>'
        return render.panel("Pair counts now", done)
    table = render.pair_rows(pairs, style=style)
    if live.view < live.trained and trainer.records[live.view].compact:
        return render.panel(
            "Pair counts now",
            table,
            note=(
                f"A long run keeps the full pair table for the first {trainer.records.full:,} steps only; this step kept "
                "its winning pair (its count and the number of pairs tied with it are exact)."
            ),
        )
    tied = sum(1 for p in pairs[1:] if p.count == pairs[0].count)
    rule = trainer.config.tie_break
    if tied:
        caption = (
            f"{tied} pair(s) shown tie with the winner; tie-break {rule}: the winner is chosen because "
            f"{tie_rule_sentence(rule)}."
        )
    else:
        caption = f"Green: merges next. Yellow: tied with it (tie-break {rule})."
    return render.panel("Pair counts now", table, caption)


def words_rows(live: state.Live, style: render.TokenStyle) -> str:
    """The most frequent words segmented at the step viewed, as HTML rows."""
    trainer = live.trainer
    assert trainer is not None
    now = live.tokenizer(live.view)
    before = live.tokenizer(live.view - 1) if live.view else now
    new_id = trainer.records[live.view - 1].token_id if live.view else -1
    rows = []
    for i in live.top_words(_WORDS):
        word = trainer.words[i]
        note = ""
        if len(word) > _WORD_CHARS:
            # without pre-tokenization a "word" is a whole sequence (1 MB of Shakespeare, say):
            # drawing it, or merging it twice per rerun, would stall the page
            note = f"the first {_WORD_CHARS:,} of {len(word):,} characters, segmented on their own"
            word = word[:_WORD_CHARS]
        ids = now.encode_piece(word)
        changed = live.view > 0 and ids != before.encode_piece(word)
        rows.append(
            render.word_row(
                word,
                now.tokens(ids),
                trainer.freqs[i],
                style=style,
                changed=changed,
                highlight=[j for j, t in enumerate(ids) if t == new_id],
                note=note,
            )
        )
    return "".join(rows)


def _words_panel(live: state.Live, style: render.TokenStyle, query: str) -> str:
    body = words_rows(live, style)
    caption = (
        "The most frequent words at this step; yellow rows changed with this merge, the outlined chip is the new token."
    )
    found = _lookup(live.tokenizer(live.view), query, style) if query.strip() else ""
    return render.panel("Words, segmented", body, caption) + found


def _lookup(tok: Tokenizer, query: str, style: render.TokenStyle) -> str:
    """The sidebar's word look-up at the step viewed: each piece segmented, and the first piece's
    merges in order (HTML; the query is escaped)."""
    try:
        pieces = tok.encode_pieces(query[:2000])
    except ExplorerError as err:
        return render.panel(f"Look up: {render.isolate(query[:60], into='text')}", "", note=str(err))
    body = "".join(render.word_row(p.text, tok.tokens(p.ids), style=style) for p in pieces[:50])
    caption, note = "", ""
    if pieces:
        steps = tok.encode_trace(pieces[0].text)
        if steps:
            shown = render.isolate(repr(render.visible(pieces[0].text)), into="text")
            body += render.caption(f"How {shown} got its tokens, merge by merge:")
            # a PickyBPE removal is a step of its own: its token split into its parts
            body += "".join(
                f'<div class="bpe-row bpe-removal">after step {s.rank + 1}: ✂ {render.chips([s.left], style=style)} '
                f"removed → {render.chips(list(s.parts), style=style)} → {render.chips(s.tokens, style=style)}</div>"
                if s.removed
                else f'<div class="bpe-row">step {s.rank + 1}: {render.chips([s.left + s.right], style=style)} ← '
                f"{render.chips([s.left, s.right], style=style)} → {render.chips(s.tokens, style=style)}</div>"
                for s in steps[:40]
            )
        unknown = sum(1 for p in pieces for i in p.ids if i == tok.unk_id)
        if unknown:
            note = f"{unknown} symbol(s) never appeared in the training corpus and became {tok.encoding.unk_token}."
    else:
        caption = "The text has no pieces to segment."
    return render.panel(f"Look up: {render.isolate(query[:60], into='text')}", body, caption, note=note)


def token_lengths(live: state.Live, k: int) -> list[int]:
    """The length of each vocabulary token at step k, in bytes or characters (the trainer's
    unit). Each token's length is computed once per trainer (hashing the whole vocabulary as
    a cache key cost more than this)."""
    trainer = live.trainer
    assert trainer is not None
    tok = live.tokenizer(k)
    byte = trainer.config.unit == "byte"
    known = live.memo.setdefault("token_lengths", {})
    out = []
    for t in tok.vocab[tok.n_special :]:
        n = known.get(t)
        if n is None:
            n = known[t] = len(display_to_bytes(t)) if byte else len(t)
        out.append(n)
    return out


def _charts(live: state.Live) -> list[dict]:
    """The four charts' data at the step shown: tokens, compression, winning count, token lengths."""
    trainer = live.trainer
    assert trainer is not None
    cols = charts.progress_columns(
        trainer.records,
        initial_tokens=trainer.initial_tokens,
        corpus_bytes=trainer.corpus_bytes,
        corpus_chars=trainer.corpus_chars,
    )
    return live_view.chart_data(cols, live.view, lengths=token_lengths(live, live.view), unit=trainer.config.unit)


_HISTORY_WINDOW = 12
_HISTORY_MATCHES = 60


def _history_panel(live: state.Live, query: str, style: render.TokenStyle) -> str:
    """The merges around the step viewed (newest first, current highlighted), or the latest of
    those matching the sidebar's search."""
    trainer = live.trainer
    assert trainer is not None
    records = trainer.records
    shown: Sequence[StepRecord]
    if query.strip():
        found = tables.matching(records, query, style)
        caption = (
            f"{len(found):,} of {live.trained:,} merges match {render.isolate(repr(query.strip()[:60]), into='text')}"
        )
        shown = found[-_HISTORY_MATCHES:]
    else:
        shown = tables.recent(records, live.view, window=_HISTORY_WINDOW, ahead=2)
        caption = f"{live.trained:,} merges trained; the highlighted row is the step shown"
    body = tables.history_html(tables.history_rows(shown, live.view), style=style) if shown else ""
    return render.panel("Merge history", body, caption)


def _full_history(live: state.Live, style: render.TokenStyle) -> None:
    """The whole history in a scrollable grid, when the sidebar asks for it (20,000 rows cost
    ~0.1 s per rerun: built and sent only on request)."""
    trainer = live.trainer
    assert trainer is not None
    if st.session_state.get("w_full_history"):
        found = tables.matching(trainer.records, st.session_state.get("w_history_search", ""), style)
        df = tables.history_table(tables.history_rows(found, live.view), style=style)
        st.dataframe(tables.style_history(df), hide_index=True, width="stretch", height=320)


def view_tools(live: state.Live) -> None:
    """The sidebar's tools for looking at the run (none of them retrains or redraws on a Step):
    a search of the history, a word look-up, the full history grid and the download."""
    st.text_input(
        "Search the history",
        key="w_history_search",
        placeholder="a token, e.g. th",
        help="Keeps the merges whose pair or new token contains this text.",
    )
    st.text_input(
        "Look up a word",
        key="w_word_search",
        placeholder="type any word or phrase",
        help="Segments it with the tokenizer as of the step shown, merge by merge (under the words).",
    )
    st.toggle("Full history", key="w_full_history", help="Every merge in a grid under the merge history.")
    interop_view.download_area(live)


def live_area() -> None:
    """The controls, then the status and panels in a fragment: Step, the slider and the play
    timer rerun only the fragment. While playing, it also reruns on a timer and steps, so
    autoplay redraws only this part too, at the speed chosen."""
    live = state.live()
    if live.trainer is not None:
        controls(live)
    interval = _wanted_interval(live)
    st.session_state[_ARMED] = interval
    st.fragment(_live_area, run_every=interval)()


def _live_area() -> None:
    live = state.live()
    if live.trainer is None:
        return
    _autoplay_step(live)
    _take_queued_clicks()
    _arm_autoplay_if_changed(live)
    if live.running or _buttons_state(live) != st.session_state.get(_BUTTONS):
        # "Run to end" runs at page level (only a full-page run can be interrupted by Stop), and
        # buttons whose state changed (the last step reached, say) are redrawn by the page
        st.rerun(scope="app")
    view = _prepare(live)
    status(live)
    links.keep_current(note=True)
    current_merge(live, view.style)
    # one element for all the panels and charts (the full history's grid, when asked for, under it)
    rows = [[view.pairs_panel, view.history_panel], [view.words_panel]]
    if view.style.byte_level:
        rows.insert(0, [render.caption(byte_legend(view.style))])
    live_view.live_view(rows, view.charts, key="w_live")
    _full_history(live, view.style)
