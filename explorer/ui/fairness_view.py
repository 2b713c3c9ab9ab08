"""The Fairness page: classical BPE and a parity-aware variant (Foroutan et al. 2025) trained side
by side on the same languages and merge budget, then stepped through merge by merge.

What the page knows and computes (its keys, languages, request, sentences, cards, rows, checks
and link) is :mod:`explorer.ui.fairness_model`; this module keeps the session and draws. The page
trains both sides once per choice (kept for the whole server, so the next visitor or a refresh
does not train again) and every step afterwards only reads the records.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import cast

import streamlit as st

from ..analysis.compare import Memo
from ..bpe.config import PRESETS
from ..bpe.parity import BALANCES, Balance
from ..errors import ConfigError, ExplorerError
from ..formats.corpora import mib
from ..formats.parallel import UDHR_LANGUAGES
from . import clicks, links, projector, render, server, stepper, storage
from . import fairness_charts as charts
from . import fairness_model as model
from .fairness_model import (
    BUTTONS,
    MAX_LANGUAGES,
    MAX_MERGES,
    MAX_NAME,
    MAX_UPLOAD_BYTES,
    MAX_WINDOW,
    MIN_LANGUAGES,
    MIN_MERGES,
    UPLOAD_PREFIX,
    VARIANT_LABELS,
    VARIANTS,
    Keys,
    Lab,
    Language,
    Request,
    Session,
    Side,
    build_side,
)

__all__ = [
    "Keys",
    "Session",
    "Language",
    "Request",
    "bundled_language",
    "settings_form",
    "upload_form",
    "current_request",
    "train",
    "controls",
    "step_view",
    "step_area",
    "entry",
    "describe",
    "link_params",
    "apply_link",
]

describe = model.describe


# ---- languages ---------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def bundled_language(code: str) -> Language:
    """A bundled UDHR translation cut by article, read once for the whole server."""
    return model.udhr_language(code)


def _uploads() -> dict[str, Language]:
    return st.session_state.setdefault(Session.UPLOADS, {})


def _language(key: str) -> Language | None:
    if key in UDHR_LANGUAGES:
        return bundled_language(key)
    return _uploads().get(key)


# ---- the settings ------------------------------------------------------------------------
def _submit() -> None:
    st.session_state[Session.REQUEST] = model.request_from(st.session_state.to_dict())
    st.session_state[Session.K] = None  # a new run opens at its last merge


def _widgets_from(request: Request) -> None:
    st.session_state.update(model.widget_values(request))


def current_request() -> Request:
    """The request shown: the last one trained, or the defaults on a first visit."""
    request = st.session_state.get(Session.REQUEST)
    if request is None:
        request = st.session_state[Session.REQUEST] = Request()
    return request


def settings_form() -> None:
    """The languages, preset, budget and variant, applied together by "Train both"."""
    request = current_request()
    if Keys.LANGUAGES not in st.session_state:
        _widgets_from(request)
    uploads = _uploads()
    options = [*UDHR_LANGUAGES, *uploads]
    st.session_state[Keys.LANGUAGES] = [k for k in st.session_state[Keys.LANGUAGES] if k in options]
    # looked up, not computed: a format_func may run outside the script
    labels = {k: model.language_label(k, uploads) for k in options}
    with st.form(Keys.FORM, border=False):
        st.multiselect(
            f"Languages ({MIN_LANGUAGES} to {MAX_LANGUAGES})",
            options,
            key=Keys.LANGUAGES,
            format_func=labels.__getitem__,
            max_selections=MAX_LANGUAGES,
            help="The Universal Declaration of Human Rights in each (parallel: the same articles), and the "
            "languages you add below. Their order breaks ties.",
        )
        st.selectbox(
            "Preset",
            list(PRESETS),
            key=Keys.PRESET,
            format_func=model.preset_label,
            help=render.choices_help({n: p.description for n, p in PRESETS.items()}),
        )
        st.number_input("Merges (each side)", min_value=MIN_MERGES, max_value=MAX_MERGES, step=100, key=Keys.MERGES)
        st.radio(
            "Right-hand side",
            VARIANTS,
            key=Keys.VARIANT,
            format_func=VARIANT_LABELS.__getitem__,
            help=render.choices_help({v: BALANCES[v] for v in VARIANTS}),
        )
        c1, c2 = st.columns(2)
        c1.number_input(
            "Window",
            min_value=1,
            max_value=MAX_WINDOW,
            step=10,
            key=Keys.WINDOW,
            help="parity-window: recent merges counted",
        )
        c2.number_input(
            "Alpha",
            min_value=1.0,
            max_value=20.0,
            step=0.5,
            key=Keys.ALPHA,
            help="parity-window: a language waits once it served more than alpha / (number of languages) of "
            "the window's merges",
        )
        st.number_input(
            "Global merges first",
            min_value=1,
            max_value=MAX_MERGES,
            step=50,
            key=Keys.GLOBAL,
            help="parity-hybrid: this many classical merges, then parity",
        )
        st.form_submit_button("Train both", type="primary", on_click=_submit, width="stretch")


def _part(part: str, round_: int) -> tuple[str, bytes] | None:
    """An upload form's file as its name and bytes (None: none chosen)."""
    upload = st.session_state.get(Keys.upload_part(part, round_))
    return None if upload is None else (upload.name, upload.getvalue())


def _add_language() -> None:
    ss = st.session_state
    round_ = ss.get(Session.UPLOAD_ROUND, 0)
    name = model.tidy_name(ss.get(Keys.UPLOAD_NAME))
    try:
        model.check_name(name, model.taken_names(_uploads()))
        train = model.upload_text("training", _part("train", round_), required=True)
        dev = model.upload_text("development", _part("dev", round_), required=True)
        test = model.upload_text("test", _part("test", round_), required=False)
        assert train is not None and dev is not None
        data = model.language_bundle(name, train, dev, test)
        try:
            key = UPLOAD_PREFIX + storage.put(data, kind="fairness-language", name=name)
        except ExplorerError as err:
            raise ConfigError(f"the server could not keep it ({err})") from None
    except ConfigError as err:
        ss[Session.UPLOAD_NOTE] = ("error", model.refused_note(name, err))
        return
    _uploads()[key] = model.read_bundle(data, key)
    ss[Keys.LANGUAGES] = model.with_language(ss.get(Keys.LANGUAGES, list(current_request().languages)), key)
    ss[Session.UPLOAD_NOTE] = ("success", model.added_note(name))
    ss[Session.UPLOAD_ROUND] = round_ + 1
    ss.pop(Keys.UPLOAD_NAME, None)


def upload_form() -> None:
    """Add a language of your own: a name, a training file and a development file (parallel to
    the others' development text), and a test file if you have one."""
    round_ = st.session_state.get(Session.UPLOAD_ROUND, 0)
    with st.form(Keys.UPLOAD_FORM, border=False):
        st.caption(f"UTF-8 text files of up to {mib(MAX_UPLOAD_BYTES)} each.")
        st.text_input("Name", key=Keys.UPLOAD_NAME, max_chars=MAX_NAME, placeholder="e.g. Swahili")
        st.file_uploader("Training text", key=Keys.upload_part("train", round_), type=None)
        st.file_uploader(
            "Development text",
            key=Keys.upload_part("dev", round_),
            help="The same content as the other languages' development text (UDHR articles 4, 9, 14, 19, 24, "
            "29): parity-aware training compares the languages on it.",
        )
        st.file_uploader(
            "Test text (optional)",
            key=Keys.upload_part("test", round_),
            help="Held out for the headline (UDHR articles 5, 10, ..., 30). Without it the development text is used.",
        )
        st.form_submit_button("Add language", on_click=_add_language)
    note = st.session_state.pop(Session.UPLOAD_NOTE, None)
    if note is not None:
        kind, text = note
        (st.error if kind == "error" else st.success)(render.escape(text, into="markdown"))


# ---- training ----------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def _memo() -> Memo:
    """Both sides of each request, for every session of this server."""
    return Memo(max_entries=16)


def _train_side(languages: Sequence[Language], request: Request, balance: Balance, done: Callable[[int], None]) -> Side:
    trainer = model.side_trainer(languages, request, balance)
    while not trainer.done:
        # heavy work takes turns with the other sessions' runs, a chunk at a time
        with server.HEAVY.turn():
            trainer.advance(100)
        done(len(trainer.records))
    return build_side(trainer, [lang.test for lang in languages])


def train(request: Request) -> Lab | None:
    """Both sides of the request, trained with a progress bar (or read from the server's memo);
    None, with a message on the page, when the request cannot be trained."""
    found = [_language(k) for k in request.languages]
    refusal = model.refusal(request, found)
    if refusal is not None:
        st.warning(refusal)
        return None
    chosen = cast(list[Language], found)
    try:
        balance = request.balance()
    except ConfigError as err:
        st.error(render.escape(str(err), into="markdown"))
        return None

    def make() -> Lab:
        bar = st.progress(0.0, text="Training…")
        try:
            sides = []
            for i, bal in enumerate((Balance("classical"), balance)):

                def show(n: int, i: int = i, mode: str = bal.mode) -> None:
                    fraction, text = model.progress(i, mode, n, request.merges)
                    bar.progress(fraction, text=text)

                sides.append(_train_side(chosen, request, bal, show))
        finally:
            bar.empty()
        return model.lab_of(chosen, request, sides[0], sides[1])

    try:
        return cast(Lab, _memo().get(request.key(), make))
    except ExplorerError as err:
        st.error(render.escape(str(err), into="markdown"))
        return None


@st.cache_resource(show_spinner=False)
def _spec_memo() -> Memo:
    """The charts of each Lab in ``_memo``, built once (a step only moves their rule)."""
    return Memo(max_entries=16)


def _specs(lab: Lab) -> dict[str, dict]:
    return cast(dict[str, dict], _spec_memo().get(lab.key, lambda: charts.lab_specs(lab)))


# ---- stepping ----------------------------------------------------------------------------
def _shown(lab: Lab) -> int:
    k = st.session_state[Session.K] = model.shown(st.session_state.get(Session.K), lab.merges)
    return k


def _move(n: int, lab: Lab) -> None:
    st.session_state[Session.K] = model.moved(_shown(lab), n, lab.merges)


def _on_slider(key: str) -> None:
    if clicks.is_current(key):  # not the late value of a slider a button has replaced
        st.session_state[Session.K] = int(st.session_state[key])


def controls(lab: Lab) -> int:
    """Back, Step, +10 and a slider for the merge shown; the merge k they settle on. Quick clicks
    all count (``clicks``): five clicks on Step move five merges. The stepper has these in a
    browser; they stand in where its script does not run (AppTest)."""
    queued = clicks.counted_clicks(list(BUTTONS), key=Keys.CLICKS)
    if queued:
        _move(sum(BUTTONS[key] * n for key, n in queued.items()), lab)
    k = _shown(lab)
    slider_key = clicks.moved_widget(Keys.SLIDER_AT, k)  # a new slider when a button moved k
    row = st.columns([0.9, 0.9, 0.9, 5.3, 2.4], vertical_alignment="center", gap="small")
    row[0].button("Back", key=Keys.BACK, on_click=_move, args=(-1, lab), disabled=k == 0, width="stretch")
    row[1].button(
        "Step",
        key=Keys.STEP,
        on_click=_move,
        args=(1, lab),
        disabled=k >= lab.merges,
        type="primary",
        width="stretch",
    )
    row[2].button("+10", key=Keys.STEP10, on_click=_move, args=(10, lab), disabled=k >= lab.merges, width="stretch")
    row[3].slider(
        "Merge shown",
        0,
        max(lab.merges, 1),
        key=slider_key,
        on_change=_on_slider,
        args=(slider_key,),
        label_visibility="collapsed",
        disabled=lab.merges == 0,
        help="Drag to any merge: every number and chart shows both tokenizers as of that merge.",
    )
    row[4].markdown(model.position(k, lab.merges))
    return k


def step_view(lab: Lab, k: int, *, answer: bool = True) -> None:
    """The answer at merge k (headline cards) and each side's sentence (``answer``: where the
    stepper does not draw them), the development-text curves and served-language strips, the
    languages' table, then the Gini coefficient and global cost over merges."""
    if answer:
        st.html(render.headline_cards(model.lab_headlines(lab, k)))
    st.html(model.legend_html(lab.names, charts.colours(len(lab.names))))
    specs = _specs(lab)
    sides = ((lab.classical, "classical"), (lab.variant, "variant"))
    if answer:
        # a row of columns each: the charts start level whichever sentence is longer
        for col, (side, _) in zip(st.columns(2, gap="medium"), sides):
            col.html(model.side_html(model.SIDE_TITLES[side.mode], _sentence(lab, side, k)))
    for chart in ("curves", "strip"):
        for col, (_, name) in zip(st.columns(2, gap="medium"), sides):
            col.vega_lite_chart(
                spec=projector.chart_spec(charts.at_merge(specs[f"{chart}:{name}"], k)), width="stretch"
            )
    st.html(model.language_table(lab, k))
    g, t = st.columns(2, gap="medium")
    g.vega_lite_chart(spec=projector.chart_spec(charts.at_merge(specs["gini"], k)), width="stretch")
    t.vega_lite_chart(spec=projector.chart_spec(charts.at_merge(specs["totals"], k)), width="stretch")
    stopped = model.stop_caption(lab)
    if stopped is not None:
        st.caption(render.escape(stopped, into="markdown"))


def _sentence(lab: Lab, side: Side, k: int) -> str:
    return model.merge_sentence(side, k, lab.names, reference=lab.reference, style=lab.style)


# ---- the stepper: the lab's merges drawn in the browser ------------------------------------
def entry(lab: Lab, k: int) -> stepper.Entry:
    """Merge k of both sides as the stepper draws it: the headline cards, then each side's
    sentence, by the helpers the page drew them with. The stepper's sentence, announced to a
    screen reader at each step and not shown twice, reads both sides' sentences."""
    sides = (lab.classical, lab.variant)
    said = [_sentence(lab, side, k) for side in sides]
    rows = (
        (render.headline_cards(model.lab_headlines(lab, k)),),
        tuple(model.side_html(model.SIDE_TITLES[side.mode], text) for side, text in zip(sides, said)),
    )
    text = " ".join(f"{model.SIDE_TITLES[side.mode]}: {line}" for side, line in zip(sides, said))
    # the status line is the page's ("Merge k of n"): no vocabulary in it
    return stepper.Entry(k, 0, "", text, "hidden", rows)


def _window(lab: Lab) -> stepper.Window:
    """The session's stepper window: a new lab is a new epoch (its entries are another run's)."""
    window = stepper.session_window(Session.WINDOW, stepper.Window)
    window.renew(lab.key)
    window.gen = f"{window.epoch}.{window.moves}"
    return window


def _moved_here() -> None:
    """The server moved the merge shown itself (a link, the script's own buttons): the stepper
    adopts it."""
    window = st.session_state.get(Session.WINDOW)
    if isinstance(window, stepper.Window):
        window.moves += 1


def _on_report(merges: int) -> None:
    """The stepper showed another merge (its report arrives before the fragment reruns): the
    merge shown follows, and with it the charts, the table and the link."""
    report = stepper.report_of(Keys.STEPPER)
    window = st.session_state.get(Session.WINDOW)
    if report is not None and isinstance(window, stepper.Window) and report.gen == window.gen:
        st.session_state[Session.K] = max(0, min(report.step, merges))


def _draw_stepper(lab: Lab, k: int) -> None:
    """Send the merges the browser lacks around k, for about ``stepper.BATCH_S`` of rendering
    a run (a page's first run: k and its neighbours; the rest with the browser's reports)."""
    window = _window(lab)
    report = stepper.report_of(Keys.STEPPER)
    held = window.held_by(report)
    steps = stepper.wanted(k, last=lab.merges, held=held)
    entries = stepper.rendered(steps, lambda j: entry(lab, j), report=report)
    stepper.stepper(
        key=Keys.STEPPER,
        window=window,
        view=k,
        last=lab.merges,
        done=True,
        final=lab.merges,
        tail="",
        report=report,
        entries=entries,
        held=held,
        more=len(entries) < len(steps),
        on_report=functools.partial(_on_report, lab.merges),
        status=[("Merge ", False), ("{step}", True), (f" of {lab.merges:,}", False)],
    )


def step_area(lab: Lab) -> None:
    """The stepper and everything it moves (the page runs it as a fragment: a report reruns
    only this part, not the sidebar's forms). The stepper draws the cards and sentences of each
    merge at once in the browser; the charts and the table follow its report. Where the
    stepper's script does not run (AppTest) the page's own buttons and slider stand in."""
    browser = stepper.browser()
    if browser:
        k = _shown(lab)
    else:
        before = st.session_state.get(Session.K)
        k = controls(lab)
        if k != before:
            _moved_here()
    _draw_stepper(lab, k)
    links.keep_current(link_params())
    step_view(lab, k, answer=not browser)


# ---- the page's link ---------------------------------------------------------------------
def link_params() -> dict[str, str]:
    """The request and merge shown as URL params (uploads by their stored bundle's hash)."""
    return model.link_params(current_request(), st.session_state.get(Session.K))


def _restore_upload(key: str) -> str | None:
    """An upload a link names, read back from the store into the session; what the link is told
    when it cannot be (None: restored)."""
    digest = key[len(UPLOAD_PREFIX) :]
    if not storage.is_digest(digest):
        return model.unknown_language(key)
    blob = storage.get(digest)
    if blob is None:
        return storage.gone("a language you added", digest, again="add it again")
    try:
        _uploads()[key] = model.read_bundle(blob.data, key)
    except ConfigError as err:
        return str(err)
    return None


def apply_link(params: dict[str, str]) -> list[str]:
    """The request and merge a link names; what it had to leave out."""
    link = model.read_link(params, restore=_restore_upload)
    if link is None:
        return []
    st.session_state[Session.REQUEST] = link.request
    _widgets_from(link.request)
    st.session_state[Session.K] = link.k
    _moved_here()
    return link.problems
