"""The Train page's panels: controls, the current merge, pair table, words, charts, history."""

from __future__ import annotations

import html
import itertools
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import streamlit as st

from ..bpe.records import StepRecord
from ..bpe.tokenizer import Tokenizer
from ..bpe.trainer import PairStat, Trainer, train_words_to_end
from ..errors import ExplorerError
from ..formats.corpora import mib
from ..stages.units import display_to_bytes
from . import charts, clicks, interop_view, links, live_view, render, server, state, stepper, tables
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
    "sentence",
    "entry",
    "words_rows",
    "token_lengths",
]

_RUN_CHUNK_S = 0.15  # progress redraws this often during "Run to end"
_WORDS = 24
_WORD_CHARS = 1_000


# ---- controls --------------------------------------------------------------------------
# Step, +10, +100, Back, Play and the slider are the stepper's (``stepper``: they move through
# steps the browser already holds). The script keeps its own Step / +10 / +100 and slider for
# sessions with no browser, where no component's script runs (AppTest). The slider's key: this
# and a generation ("view_slider_3", clicks.moved_widget), so that a late value of a slider it
# replaced moves nothing.
_SLIDER = "view_slider"
_SCRIPT_CONTROLS = "train_script_controls"


def _forward(n: int) -> None:
    live = state.live()
    live.playing = False
    live.forward(n)


def _moved_by_server() -> None:
    """The server moved the view itself: the stepper adopts it (a new generation)."""
    window = st.session_state.get(_WINDOW)
    if window is not None:
        window.moves += 1
    st.session_state[_PLAYING] = False


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
    _moved_by_server()


def _reset() -> None:
    state.live(reset=True)
    st.session_state[_PLAYING] = False


def _on_slider(key: str) -> None:
    if not clicks.is_current(key):
        return  # the value of a slider the page has replaced since
    state.live().view = int(st.session_state[key])


def controls(live: state.Live) -> None:
    """Run to end and Reset (the server's to do; the stepper has the rest)."""
    # a trainer the stepper trained to its end ahead of the person still has steps to reach:
    # Run to end goes there (disabled only once the last step is reached)
    row = st.container(horizontal=True, gap="small", vertical_alignment="center")
    row.button("Run to end", key="run", on_click=_start_run, disabled=live.reached_end)
    row.button("Reset", key="reset", on_click=_reset)


def script_controls(live: state.Live) -> None:
    """The script's own Step / +10 / +100, status and slider, for sessions where the stepper's
    script does not run (AppTest)."""
    trainer = live.trainer
    assert trainer is not None
    at_end = trainer.done and live.view >= live.recorded  # (steps trained ahead are still to come)
    hidden = st.container(key=_SCRIPT_CONTROLS)
    buttons = hidden.container(horizontal=True, gap="small")
    buttons.button("Step", key="step", on_click=_forward, args=(1,), disabled=at_end, type="primary")
    buttons.button("+10", key="step10", on_click=_forward, args=(10,), disabled=at_end)
    buttons.button("+100", key="step100", on_click=_forward, args=(100,), disabled=at_end)
    with hidden:
        status(live)


def status(live: state.Live) -> None:
    """The step shown and the slider that moves it, as Streamlit elements (the script's own; the
    browser's are the stepper's)."""
    trainer = live.trainer
    assert trainer is not None
    status = f"Step **{live.view:,}** of {live.trained:,} trained · vocabulary {_vocab_at(live):,}{_status_tail(live)}"
    if not live.trained:
        st.markdown(status)
        return
    st.markdown(status)
    key = clicks.moved_widget(_SLIDER, live.view)
    st.slider("Step shown", 0, live.trained, key=key, on_change=_on_slider, args=(key,))


def _status_tail(live: state.Live) -> str:
    trainer = live.trainer
    assert trainer is not None
    # said once the person reached the last step (a trainer that ended among the steps trained ahead)
    return f" · training stopped: {_stop_reason(trainer)}" if live.reached_end else ""


def _vocab_at(live: state.Live, k: int | None = None) -> int:
    """The vocabulary at step k (default: the step shown), not of the last step trained (with id
    reuse a merge can leave it as it was)."""
    return len(live.tokenizer(live.view if k is None else k).vocab)


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
        # the end, the steps trained ahead included: a trainer the stepper had already trained
        # to its end trains nothing here, and its last steps are reached only now
        live.reach(live.recorded)
    _moved_by_server()
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


# ---- panels ----------------------------------------------------------------------------
# A step's panels are computed first and drawn after, in one go: the browser redraws the page
# for each batch of elements that arrives, so elements sent over 50 ms of computing cost several
# redraws per step where one burst costs one. Each panel is one HTML block (heading, table and
# caption), and the widgets that a Step does not change (pairs shown, the searches, the full
# history switch, the download) sit in the sidebar, outside the fragment a Step reruns: every
# element a Step redraws costs the browser a few milliseconds.
def token_style(live: state.Live) -> render.TokenStyle:
    """How the page writes the trainer's tokens: as text (bytes that are part of a character in
    hex), or, when the sidebar's view setting asks for it, as GPT-2's characters."""
    return _style_in(live, st.session_state)


def _style_in(live: state.Live, view: Mapping) -> render.TokenStyle:
    """The token style the view settings in ``view`` ask for (widget key -> value; one not there
    at its default)."""
    assert live.trainer is not None
    return render.style_of(live.trainer.config.unit, gpt2_chars=bool(view.get(state.GPT2_CHARS)))


def sentence(live: state.Live, style: render.TokenStyle, *, step: int | None = None) -> tuple[str, str, str]:
    """What step ``step`` (default: the one shown) says about itself, as plain text: (lead in bold,
    the sentence, "info" or "warning")."""
    trainer = live.trainer
    assert trainer is not None
    k = live.view if step is None else step
    if k == 0:
        unit = " (bytes)" if trainer.config.unit == "byte" else ""
        if trainer.done and not trainer.records:
            # Step is disabled: say why instead of inviting a click
            return (
                "",
                f"No merge can be made: {_stop_reason(trainer)}. Every word stays as its characters{unit}; "
                "raise the number of merges or choose another corpus.",
                "warning",
            )
        return (
            "",
            f"Nothing merged yet: every word is still its characters{unit}. Press Step to make the first merge.",
            "info",
        )
    record = trainer.records[k - 1]
    return f"Step {record.step}.", explain(record, config=trainer.config, style=style), "info"


def current_merge(live: state.Live, style: render.TokenStyle) -> None:
    """The step shown's sentence as a Streamlit box (the Class page's; the Train page's is in its stepper)."""
    lead, text, tone = sentence(live, style)
    body = (f"**{lead}** " if lead else "") + render.md_text(text)
    if live.view == 0:
        body = body.replace("Press Step", "Press **Step**")
    (st.warning if tone == "warning" else st.info)(body)


def _next_table(live: state.Live, k: int) -> tuple[PairStat, ...]:
    trainer = live.trainer
    assert trainer is not None
    if k < live.recorded:
        return trainer.records[k].top_pairs
    return () if trainer.done else trainer.peek()


def _pair_panel(live: state.Live, k: int, pairs: tuple[PairStat, ...], style: render.TokenStyle) -> str:
    trainer = live.trainer
    assert trainer is not None
    if not pairs:
        done = f'<div class="bpe-done">Training finished: {html.escape(_stop_reason(trainer))}.</div>'
        return render.panel("Pair counts now", done)
    table = render.pair_rows(pairs, style=style)
    if k < live.recorded and trainer.records[k].compact:
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


def words_rows(live: state.Live, style: render.TokenStyle, *, step: int | None = None) -> str:
    """The most frequent words segmented at step ``step`` (default: the step viewed), as HTML rows."""
    trainer = live.trainer
    assert trainer is not None
    k = live.view if step is None else step
    now = live.tokenizer(k)
    before = live.tokenizer(k - 1) if k else now
    new_id = trainer.records[k - 1].token_id if k else -1
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
        changed = k > 0 and ids != before.encode_piece(word)
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


def _words_panel(live: state.Live, k: int, style: render.TokenStyle, query: str) -> str:
    body = words_rows(live, style, step=k)
    caption = (
        "The most frequent words at this step; yellow rows changed with this merge, the outlined chip is the new token."
    )
    found = _lookup(live.tokenizer(k), query, style) if query.strip() else ""
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
    cols = {name: values[: live.trained + 1] for name, values in cols.items()}  # not the steps trained ahead
    return live_view.chart_data(cols, live.view, lengths=token_lengths(live, live.view), unit=trainer.config.unit)


_HISTORY_WINDOW = 12
_HISTORY_MATCHES = 60


def _history_panel(live: state.Live, k: int, query: str, style: render.TokenStyle) -> str:
    """The merges around the step viewed (newest first, current highlighted), or the latest of
    those matching the sidebar's search."""
    trainer = live.trainer
    assert trainer is not None
    records = trainer.records
    shown: Sequence[StepRecord]
    if query.strip():
        found = tables.matching(records[: live.trained], query, style)  # not the steps trained ahead
        caption = (
            f"{len(found):,} of {live.trained:,} merges match {render.isolate(repr(query.strip()[:60]), into='text')}"
        )
        shown = found[-_HISTORY_MATCHES:]
    else:
        shown = tables.recent(records, k, window=_HISTORY_WINDOW, ahead=state.HISTORY_AHEAD)
        caption = "The merges around the step shown (highlighted), newest first"
    body = tables.history_html(tables.history_rows(shown, k), style=style) if shown else ""
    return render.panel("Merge history", body, caption)


def _full_history(live: state.Live, style: render.TokenStyle) -> None:
    """The whole history in a scrollable grid, when the sidebar asks for it (20,000 rows cost
    ~0.1 s per rerun: built and sent only on request)."""
    trainer = live.trainer
    assert trainer is not None
    if st.session_state.get("w_full_history"):
        found = tables.matching(trainer.records[: live.trained], st.session_state.get("w_history_search", ""), style)
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
    """Run to end and Reset, then the stepper and the charts in a fragment: the stepper moves
    through the steps in the browser and reports the step shown, which reruns only the fragment
    (the view, the address bar and the charts follow, and the steps ahead are sent)."""
    live = state.live()
    if live.trainer is None:
        return
    controls(live)
    st.fragment(_live_area)()


def _live_area() -> None:
    live = state.live()
    if live.trainer is None:
        return
    if live.running:
        st.rerun(scope="app")  # "Run to end" runs at page level (only a full-page run can be interrupted by Stop)
    style = token_style(live)
    _draw_stepper(live, style)
    if not stepper.browser():
        # no browser behind the session (AppTest, which runs no component's script): the script's
        # own step controls stand in for the stepper's
        script_controls(live)
    links.keep_current(note=True)
    live_view.live_view([], _charts(live), key="w_live")
    _full_history(live, style)


# ---- the stepper: the steps around the one shown, rendered here, drawn in the browser ----------
_STEPPER = "train_stepper"
_WINDOW = "train_stepper_window"  # the session's stepper.Window
_PLAYING, _SPEED = "train_stepper_playing", "train_stepper_speed"  # as the stepper last reported
_TOKENS = itertools.count(1)  # a number for each trainer a session's stepper shows


@dataclass(frozen=True)
class _Look:
    """What an entry's look depends on besides its step: the sidebar's view settings."""

    style: render.TokenStyle
    top_k: int
    history_query: str
    word_query: str


def _look(live: state.Live, style: render.TokenStyle) -> _Look:
    state.widget_default(state.TOP_K, state.TOP_K_DEFAULT)
    return _look_in(style, st.session_state)


def _look_in(style: render.TokenStyle, view: Mapping) -> _Look:
    """The look the view settings in ``view`` ask for (widget key -> value; one not there at its
    default: a first visit's, which the warm-up renders)."""
    return _Look(
        style,
        int(view.get(state.TOP_K, state.TOP_K_DEFAULT)),
        view.get("w_history_search", ""),
        view.get("w_word_search", ""),
    )


# Steps rendered for one session serve every session with the same corpus, settings and look:
# training is deterministic, so step k of two such trainers is drawn alike once every step it
# shows is trained (the history's rows ahead of it too). Thirty students opening the teacher's
# link render the window around it once; a first visit of the default corpus renders none (the
# warm-up did, ``warm_default``), and its stepper's first report is answered in one run.
# (corpus key, config, mode, steps keeping full records, look, k) -> Entry; oldest out first
_SHARED: dict[tuple, stepper.Entry] = {}
_SHARED_LOCK = threading.Lock()
_SHARED_MAX = 640  # ~12 KB an entry: ten windows of 64 steps


def entry(live: state.Live, k: int, look: _Look) -> stepper.Entry:
    """Step k as the stepper draws it (:func:`_entry`), from the steps shared by every session
    when another drew it already."""
    key = _shared_key(live, k, look)
    if key is None:
        return _entry(live, k, look)
    with _SHARED_LOCK:
        hit = _SHARED.get(key)
    if hit is not None:
        return hit
    made = _entry(live, k, look)
    with _SHARED_LOCK:
        _SHARED[key] = made
        while len(_SHARED) > _SHARED_MAX:
            del _SHARED[next(iter(_SHARED))]
    return made


def _shared_key(live: state.Live, k: int, look: _Look) -> tuple | None:
    """Step k's key among the steps sessions share, or None when it is this session's own: a
    history search counts the merges this session reached, a step at the end of training says
    why it stopped (a budget's, say: this server's), and a big trainer's steps are big."""
    assert live.trainer is not None
    if k + state.HISTORY_AHEAD > live.recorded or look.history_query.strip() or live.big:
        return None
    return (live.corpus_key, live.config, live.mode, live.trainer.records.full, look, k)


def warm_default() -> None:
    """Render the window a first visit of the default corpus and preset asks for first (for the
    server's start-up warm-up, after ``state.warm_default``): every such visit then takes them."""
    live = state.default_live()
    look = _look_in(_style_in(live, {}), {})
    for k in stepper.wanted(0, last=live.recorded, held=set()):
        entry(live, k, look)


def _entry(live: state.Live, k: int, look: _Look) -> stepper.Entry:
    """Step k as the stepper draws it: its sentence, the pair table, the merge history and the
    words, rendered by the same helpers as every other view of a step (``render``, ``tables``)."""
    trainer = live.trainer
    assert trainer is not None
    style = look.style
    pairs = _next_table(live, k)[: look.top_k]
    rows: list[tuple[str, ...]] = [
        (_pair_panel(live, k, pairs, style), _history_panel(live, k, look.history_query, style)),
        (_words_panel(live, k, style, look.word_query),),
    ]
    if style.byte_level:
        rows.insert(0, (render.caption(byte_legend(style)),))
    lead, text, tone = sentence(live, style, step=k)
    # the history shows trained steps just past k, the pair table at the last step trained is a
    # look ahead: such a step is sent again once training moved on (or stopped)
    final = trainer.done or k + state.HISTORY_AHEAD <= live.recorded
    return stepper.Entry(k, _vocab_at(live, k), lead, text, tone, tuple(rows), final=final)


def _window(live: state.Live, look: _Look) -> stepper.Window:
    """The session's stepper window, its generation and epoch brought up to date: a new trainer
    (Reset, a link, other settings) is a new generation; a new look, a new epoch."""
    window = stepper.session_window(_WINDOW, stepper.Window)
    window.gen = _generation(live, window)
    # a history search lists matches among all merges trained: its entries follow training
    searched = live.trained if look.history_query.strip() else 0
    window.renew(_token(live), look, searched)
    return window


def _token(live: state.Live) -> int:
    """A number for the session's trainer (its memo goes with it)."""
    token = live.memo.get("stepper_token")
    if token is None:
        token = live.memo["stepper_token"] = next(_TOKENS)
    return token


def _generation(live: state.Live, window: stepper.Window) -> str:
    """The view's generation: the trainer, and how often the server moved the view itself."""
    return f"{_token(live)}.{window.moves}"


def _on_report() -> None:
    """The stepper moved (its report arrives before the fragment reruns): the server's view
    follows it, training up to it when the browser went past the steps trained."""
    report = stepper.report_of(_STEPPER)
    window: stepper.Window | None = st.session_state.get(_WINDOW)
    live: state.Live | None = st.session_state.get("live")
    # the generation as of now: a callback that ran before this one in the same run (Stop) may
    # have moved the view itself
    if report is None or window is None or live is None or live.trainer is None:
        return
    if report.gen != _generation(live, window):
        return  # a report for another trainer, or from before the server moved the view itself
    st.session_state[_PLAYING] = report.playing  # a page left while playing plays on when it comes back
    if report.speed is not None:
        st.session_state[_SPEED] = report.speed
    with live.lock:
        live.reach(report.step)  # a step trained ahead is reached now
        if report.step > live.recorded:
            live.forward(min(report.step, live.recorded + stepper.AHEAD) - live.view)
        live.playing = False
        _train_ahead(live)


def _train_ahead(live: state.Live) -> None:
    """Train the steps a browser stepping by itself may reach next (its window ahead), before it asks."""
    live.train_past_view(state.TRAINED_AHEAD)


def _draw_stepper(live: state.Live, style: render.TokenStyle) -> None:
    """Send the steps the browser lacks around the step shown (training ahead first, once the
    browser's script runs), for about ``stepper.BATCH_S`` of rendering a run; the rest next run."""
    trainer = live.trainer
    assert trainer is not None
    look = _look(live, style)
    window = _window(live, look)
    report = stepper.report_of(_STEPPER)
    held = window.held_by(report)
    if report is not None:  # a browser that steps by itself: the steps ahead are trained before it asks
        _train_ahead(live)
    end = trainer.done or bool(live.held)
    # the steps trained ahead are sent too, but the slider and the status end at the step reached
    steps = stepper.wanted(live.view, last=live.recorded, held=held)
    if live.big:
        # each step rendered derives a tokenizer or two, each a copy of a big trainer's vocabulary
        # (tens of MB when its tokens are long, three sessions of them past the server's ceiling
        # at once): the step shown only, the browser says "training…" for the next until it comes
        steps = steps[:1]
    entries = stepper.rendered(steps, lambda k: entry(live, k, look), report=report)
    more = len(entries) < len(steps)
    tail = _status_tail(live) + (f" · {live.held}" if live.held else "")
    stepper.stepper(
        key=_STEPPER,
        window=window,
        view=live.view,
        last=live.trained,
        done=end,
        final=live.recorded,
        tail=tail,
        report=report,
        entries=entries,
        held=held,
        more=more,
        playing=bool(st.session_state.get(_PLAYING)),
        speed=st.session_state.get(_SPEED),
        on_report=_on_report,
    )
