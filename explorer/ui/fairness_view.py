"""The Fairness page: classical BPE and a parity-aware variant (Foroutan et al. 2025) trained side
by side on the same languages and merge budget, then stepped through merge by merge.

Data shapes (L languages, N merges, k the merge shown, 0..N)::

    Language    one language's three parallel parts: training, development (what parity-aware
                training measures) and test text (held out: what the headline measures)
    Side        one balance's run: its ParityStep records, and per k the development, training
                and test token counts of every language and their Gini coefficients
    Lab         both sides with the languages' names: what the page draws at any k

The page trains both sides once per choice (kept for the whole server, so the next visitor or
a refresh does not train again) and every step afterwards only reads the records.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, cast

import streamlit as st

from ..analysis.compare import Memo
from ..bpe.config import PRESETS, corpus_config
from ..bpe.parity import BALANCES, Balance, BalanceName, ParityTrainer, worst_first
from ..errors import ConfigError, ExplorerError
from ..formats.corpora import decode_bytes, mib
from ..formats.parallel import UDHR_LANGUAGES, udhr_split
from . import clicks, links, projector, render, server, storage
from . import fairness_charts as charts
from .fairness_model import Lab, Side, build_side

__all__ = [
    "Language",
    "Request",
    "VARIANTS",
    "DEFAULT_LANGUAGES",
    "MAX_UPLOAD_BYTES",
    "bundled_language",
    "language_bundle",
    "read_bundle",
    "merge_sentence",
    "lab_headlines",
    "LanguageRow",
    "language_rows",
    "language_table",
    "settings_form",
    "upload_form",
    "current_request",
    "train",
    "controls",
    "step_view",
    "step_area",
    "describe",
    "link_params",
    "apply_link",
]

VARIANTS: tuple[BalanceName, ...] = ("parity", "parity-window", "parity-hybrid")
DEFAULT_LANGUAGES = ("en", "hi", "zh_hans", "ar", "ru")
DEFAULT_MERGES, MIN_MERGES, MAX_MERGES = 500, 10, 5_000
MIN_LANGUAGES, MAX_LANGUAGES = 2, 12
MAX_UPLOAD_BYTES = 2 * 1024 * 1024  # each part of an uploaded language: the page trains in its own process
MAX_NAME = 40
_UPLOAD_PREFIX = "up:"  # a language key: a UDHR code, or "up:" + the stored bundle's SHA-256

_REQUEST = "fair_request"  # the Request trained and shown
_K = "fair_k"  # the merge shown
_SLIDER = "fair_slider"  # its key: this and a generation, "fair_slider_3" (clicks.moved_widget)
_UPLOADS = "fair_uploads"  # {key: Language} the session added
_UPLOAD_NOTE = "fair_upload_note"  # ("error" | "success", text): what the last "Add" did, said once
_UPLOAD_ROUND = "fair_upload_round"  # bumped to empty the upload form's file pickers


# ---- languages ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Language:
    """One language: its name and three parallel parts. ``held_out``: the test part is text that
    neither training nor the choice of merges saw (an upload without a test file is measured on
    its development text instead)."""

    key: str
    name: str
    train: str
    dev: str
    test: str
    held_out: bool = True


@st.cache_resource(show_spinner=False)
def bundled_language(code: str) -> Language:
    """A bundled UDHR translation cut by article (``formats.parallel``)."""
    split = udhr_split(code)
    return Language(code, UDHR_LANGUAGES[code], split.train, split.dev, split.test)


def language_bundle(name: str, train: str, dev: str, test: str | None) -> bytes:
    """An uploaded language as one stored file (a link names it by its SHA-256).

    >>> read_bundle(language_bundle("Swahili", "a b", "c", None), "up:x")
    Language(key='up:x', name='Swahili', train='a b', dev='c', test='c', held_out=False)
    """
    body = {"name": name, "train": train, "dev": dev, "test": test}
    return json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8")


def read_bundle(data: bytes, key: str) -> Language:
    """The Language of a stored bundle; ConfigError when it is not one.

    >>> read_bundle(b'{"name": 3}', "up:x")
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: the stored file is not a language of the Fairness page
    """
    try:
        body = json.loads(data.decode("utf-8"))
    except ValueError:
        body = None
    fields = ("name", "train", "dev")
    if not (
        isinstance(body, dict)
        and all(isinstance(body.get(f), str) and body[f].strip() for f in fields)
        and isinstance(body.get("test"), str | None)
    ):
        raise ConfigError("the stored file is not a language of the Fairness page")
    test = body.get("test")
    return Language(key, body["name"], body["train"], body["dev"], test or body["dev"], held_out=bool(test))


def _uploads() -> dict[str, Language]:
    return st.session_state.setdefault(_UPLOADS, {})


def _language(key: str) -> Language | None:
    if key in UDHR_LANGUAGES:
        return bundled_language(key)
    return _uploads().get(key)


def _label(key: str) -> str:
    """A language's name as a picker shows it (a widget shows text as it is: no escaping)."""
    lang = _language(key)
    if lang is None:
        return key
    return lang.name if lang.held_out or key in UDHR_LANGUAGES else f"{lang.name} (no test file)"


# ---- what a step says --------------------------------------------------------------------
def _q(token: str, style: render.TokenStyle) -> str:
    return "‘" + render.token_text(token, style) + "’"


def _names(items: Sequence[str]) -> str:
    """Names in a sentence.

    >>> _names(["A"]), _names(["A", "B"]), _names(["A", "B", "C"])
    ('A', 'A and B', 'A, B and C')
    """
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _against(tokens: Sequence[int], lang: int, names: Sequence[str], reference: int | None) -> str:
    """``lang``'s tokens against English's (or the best-compressed language's when English is not
    among them): ", 2.6× English's", or nothing for the reference itself.

    >>> _against([100, 260], 1, ["English", "Hindi"], 0), _against([100, 260], 0, ["English", "Hindi"], 0)
    (", 2.60× English's", '')
    >>> _against([100, 260, 90], 1, ["A", "B", "C"], None)
    ", 2.89× C's (the fewest)"
    """
    ref = reference if reference is not None else min(range(len(tokens)), key=lambda i: (tokens[i], i))
    if ref == lang or not tokens[ref]:
        return ""
    tail = "" if reference is not None else " (the fewest)"
    return f", {tokens[lang] / tokens[ref]:.2f}× {names[ref]}'s{tail}"


def merge_sentence(side: Side, k: int, names: Sequence[str], *, reference: int | None, style: render.TokenStyle) -> str:
    """What merge k of this side did and why, in plain text (escape it where it goes): the
    language it served and what made that language's turn (the rule), or for a merge chosen
    over all languages, whose development text it shortened most.

    >>> from explorer import TrainerConfig
    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=None, num_merges=3)
    >>> t = ParityTrainer(["aaaa aaaa aaaa", "bcbc"], ["aaaa", "bcbc"], cfg, names=["A", "B"]).run()
    >>> side = build_side(t, ["aa", "bc"])
    >>> merge_sentence(side, 0, t.languages, reference=None, style=render.PLAIN)
    'No merge yet: every language starts at 4 tokens on its development text.'
    >>> merge_sentence(side, 2, t.languages, reference=None, style=render.PLAIN)
    "Merge 2 (‘b’ + ‘c’ → ‘bc’) served B, the worst-compressed language: 4 tokens on its development text, 2.00× A's (the fewest)."
    >>> c = build_side(ParityTrainer(["aaaa aaaa aaaa", "bcbc"], ["aaaa", "bcbc"], cfg, balance=Balance("classical")).run(), ["aa", "bc"])
    >>> merge_sentence(c, 1, t.languages, reference=None, style=render.PLAIN)
    "Merge 1 (‘a’ + ‘a’ → ‘aa’) was the most frequent pair of all languages together (9 times); it shortened A's development text most, by 2 tokens."
    """
    if k == 0 or not side.records:
        before = side.dev[0]
        worst = worst_first(before)[0]
        if len(set(before)) == 1:
            return f"No merge yet: every language starts at {before[0]:,} tokens on its development text."
        return (
            f"No merge yet: {names[worst]} starts with the most tokens, {before[worst]:,} on its development text"
            f"{_against(before, worst, names, reference)}."
        )
    k = side.at(k)
    r = side.records[k - 1]
    before = side.dev[k - 1]
    what = f"Merge {k} ({_q(r.left, style)} + {_q(r.right, style)} → {_q(r.token, style)})"
    if r.served is None:
        saved = side.saved(k)
        most, _ = side.owner(k)
        helped = (
            f"it shortened {names[most]}'s development text most, by {saved[most]:,} token{'s' * (saved[most] != 1)}"
            if saved[most] > 0
            else "it shortened no language's development text"
        )
        return f"{what} was the most frequent pair of all languages together ({r.count:,} times); {helped}."
    lang = r.served
    tokens = f"{before[lang]:,} tokens on its development text{_against(before, lang, names, reference)}"
    if r.rule == "worst":
        return f"{what} served {names[lang]}, the worst-compressed language: {tokens}."
    order = worst_first(before)
    worse = order[: order.index(lang)]
    waited: list[int] = []
    if r.rule == "window":
        window = side.balance.window
        recent = [x.served for x in side.records[: k - 1] if x.served is not None][-window:]
        share = side.balance.window_alpha * window / len(names)
        waited = [i for i in worse if recent.count(i) > share]
        why = [
            f"{_names([f'{names[i]} ({recent.count(i):,})' for i in waited])} had served more than "
            f"{'its' if len(waited) == 1 else 'their'} share of the last {len(recent):,} merges "
            f"(at most {share:g} each)"
        ]
    else:
        why = []
    empty = [names[i] for i in worse if i not in waited]
    if empty:
        why.append(f"{_names(empty)} had no pair left to merge")
    return f"{what} served {names[lang]}, {tokens}: the worse-compressed {'; '.join(why)}."


def lab_headlines(lab: Lab, k: int) -> list[render.Headline]:
    """The answer at merge k, in three cards: the Gini coefficient of the languages' test-text
    token counts under each side, what the worst-off language pays against English, and the
    tokens all languages' test text costs (the global compression each side gives up or keeps).

    >>> from explorer import TrainerConfig
    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=None, num_merges=3)
    >>> sides = [build_side(ParityTrainer(["aaaa aaaa aaaa", "bcbc"], ["aaaa", "bcbc"], cfg, balance=Balance(m)).run(), ["aa aa", "bc"]) for m in ("classical", "parity")]
    >>> lab = Lab(("English", "B"), (True, True), False, 3, *sides)
    >>> cards = lab_headlines(lab, 2)  # English: 2 tokens either side; B: 2 classically, 1 with parity
    >>> [c.number for c in cards]
    ['0.000 → 0.167', '1.00× → 0.50×', '-25.0%']
    >>> cards[1].sentence
    "tokens against English's for the same text: B classically, B with parity"
    """
    c, v = lab.classical, lab.variant
    tc, tv = c.test[c.at(k)], v.test[v.at(k)]
    missing = [n for n, h in zip(lab.names, lab.held_out) if not h]
    where = "test text neither side trained on" + (f" ({_names(missing)}: development text)" if missing else "")
    cards = [
        render.Headline(
            f"Gini at merge {k:,}, held-out text",
            f"{c.gini_test[c.at(k)]:.3f} → {v.gini_test[v.at(k)]:.3f}",
            f"classical → {v.mode}, on {where}; 0: every language pays alike",
        )
    ]
    ref = lab.reference
    if ref is not None:
        wc = max((i for i in range(len(tc)) if i != ref), key=lambda i: tc[i])
        wv = max((i for i in range(len(tv)) if i != ref), key=lambda i: tv[i])
        rc, rv = tc[wc] / max(tc[ref], 1), tv[wv] / max(tv[ref], 1)
        against = f"{lab.names[ref]}'s"
    else:
        wc, wv = worst_first(tc)[0], worst_first(tv)[0]
        rc, rv = tc[wc] / max(min(tc), 1), tv[wv] / max(min(tv), 1)
        against = "the best-compressed language's"
    cards.append(
        render.Headline(
            "Worst-off language",
            f"{rc:.2f}× → {rv:.2f}×",
            f"tokens against {against} for the same text: {lab.names[wc]} classically, {lab.names[wv]} with {v.mode}",
        )
    )
    total_c, total_v = sum(tc), sum(tv)
    cards.append(
        render.Headline(
            f"Global cost at merge {k:,}",
            f"{(total_v - total_c) / max(total_c, 1):+.1%}",
            f"all languages' test text: {total_c:,} tokens classical, {total_v:,} with {v.mode}",
        )
    )
    return cards


class LanguageRow(NamedTuple):
    """One language at merge k: its test text in tokens under each side (and against English's,
    or the fewest's), and how many of the first k merges each side gave it."""

    language: str
    classical_tokens: int
    classical_ratio: float
    variant_tokens: int
    variant_ratio: float
    classical_merges: int  # merges chosen over all languages that shortened its text most
    variant_merges: int  # merges that served it (or, chosen over all, shortened it most)


def _shares(side: Side, k: int, n: int) -> list[int]:
    """How many of the first k merges each language got (``Side.owner``)."""
    got = [0] * n
    for i in range(1, side.at(k) + 1):
        got[side.owner(i)[0]] += 1
    return got


def language_rows(lab: Lab, k: int) -> list[LanguageRow]:
    """Every language at merge k (see LanguageRow).

    >>> from explorer import TrainerConfig
    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=None, num_merges=3)
    >>> sides = [build_side(ParityTrainer(["aaaa aaaa aaaa", "bcbc"], ["aaaa", "bcbc"], cfg, balance=Balance(m)).run(), ["aa aa", "bc"]) for m in ("classical", "parity")]
    >>> language_rows(Lab(("English", "B"), (True, True), False, 3, *sides), 3)[1]
    LanguageRow(language='B', classical_tokens=1, classical_ratio=0.5, variant_tokens=1, variant_ratio=0.5, classical_merges=1, variant_merges=1)
    """
    c, v = lab.classical, lab.variant
    tc, tv = c.test[c.at(k)], v.test[v.at(k)]
    ref = lab.reference
    base_c = tc[ref] if ref is not None else min(tc)
    base_v = tv[ref] if ref is not None else min(tv)
    n = len(lab.names)
    got_c, got_v = _shares(c, k, n), _shares(v, k, n)
    return [
        LanguageRow(name, tc[i], tc[i] / max(base_c, 1), tv[i], tv[i] / max(base_v, 1), got_c[i], got_v[i])
        for i, name in enumerate(lab.names)
    ]


def language_table(lab: Lab, k: int) -> str:
    """:func:`language_rows` as an HTML table (names escaped)."""
    against = f"× {lab.names[lab.reference]}" if lab.reference is not None else "× fewest"
    mode = lab.variant.mode
    head = (
        f"<tr><th>language</th><th>classical: test tokens</th><th>{against}</th><th>merges it got</th>"
        f"<th>{mode}: test tokens</th><th>{against}</th><th>merges it got</th></tr>"
    )
    body = "".join(
        f'<tr><td>{render.escape(r.language, into="html")}</td><td class="num">{r.classical_tokens:,}</td>'
        f'<td class="num">{r.classical_ratio:.2f}</td><td class="num">{r.classical_merges:,}</td>'
        f'<td class="num">{r.variant_tokens:,}</td><td class="num">{r.variant_ratio:.2f}</td>'
        f'<td class="num">{r.variant_merges:,}</td></tr>'
        for r in language_rows(lab, k)
    )
    return (
        f'<div class="bpe-grid-title">Each language at merge {k:,} (test text; a merge chosen over all languages '
        "counts for the one it shortened most)</div>"
        f'<div class="bpe-scroll"><table class="bpe-cmp fair-langs">{head}{body}</table></div>'
    )


# ---- the settings ------------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    """What to train: languages (UDHR codes and upload keys, in order), the preset, the budget,
    and the variant for the right-hand side with its options."""

    languages: tuple[str, ...] = DEFAULT_LANGUAGES
    preset: str = "gpt2"
    merges: int = DEFAULT_MERGES
    variant: BalanceName = "parity"
    window: int = 100
    alpha: float = 2.0
    global_merges: int = 100

    def balance(self) -> Balance:
        """The variant's Balance (ConfigError when its options do not fit)."""
        if self.variant == "parity-hybrid":
            if self.global_merges >= self.merges:
                raise ConfigError(
                    f"the hybrid's {self.global_merges:,} global merges leave none of the {self.merges:,} for parity: "
                    "give fewer global merges or a bigger budget"
                )
            return Balance("parity-hybrid", global_merges=self.global_merges)
        if self.variant == "parity-window":
            return Balance("parity-window", window=self.window, window_alpha=self.alpha)
        return Balance(self.variant)

    def key(self) -> str:
        """The server-wide memo's key: every setting that changes a merge (uploads by content)."""
        fields = [
            self.languages,
            self.preset,
            self.merges,
            self.variant,
            self.window if self.variant == "parity-window" else None,
            self.alpha if self.variant == "parity-window" else None,
            self.global_merges if self.variant == "parity-hybrid" else None,
        ]
        return hashlib.sha256(json.dumps(fields).encode()).hexdigest()


_VARIANT_LABELS = {"parity": "parity", "parity-window": "parity-window", "parity-hybrid": "parity-hybrid"}


def _preset_label(name: str) -> str:
    unit = PRESETS[name].config.unit
    return f"{name} ({'byte level' if unit == 'byte' else 'characters'})"


def _submit() -> None:
    ss = st.session_state
    st.session_state[_REQUEST] = Request(
        tuple(ss["w_fair_langs"]),
        ss["w_fair_preset"],
        int(ss["w_fair_merges"]),
        ss["w_fair_variant"],
        int(ss["w_fair_window"]),
        float(ss["w_fair_alpha"]),
        int(ss["w_fair_global"]),
    )
    st.session_state[_K] = None  # a new run opens at its last merge


def _widgets_from(request: Request) -> None:
    ss = st.session_state
    ss["w_fair_langs"] = list(request.languages)
    ss["w_fair_preset"] = request.preset
    ss["w_fair_merges"] = request.merges
    ss["w_fair_variant"] = request.variant
    ss["w_fair_window"] = request.window
    ss["w_fair_alpha"] = request.alpha
    ss["w_fair_global"] = request.global_merges


def current_request() -> Request:
    """The request shown: the last one trained, or the defaults on a first visit."""
    request = st.session_state.get(_REQUEST)
    if request is None:
        request = st.session_state[_REQUEST] = Request()
    return request


def settings_form() -> None:
    """The languages, preset, budget and variant, applied together by "Train both"."""
    request = current_request()
    if "w_fair_langs" not in st.session_state:
        _widgets_from(request)
    options = [*UDHR_LANGUAGES, *_uploads()]
    st.session_state["w_fair_langs"] = [k for k in st.session_state["w_fair_langs"] if k in options]
    labels = {k: _label(k) for k in options}  # looked up, not computed: a format_func may run outside the script
    with st.form("w_fair_form", border=False):
        st.multiselect(
            f"Languages ({MIN_LANGUAGES} to {MAX_LANGUAGES})",
            options,
            key="w_fair_langs",
            format_func=labels.__getitem__,
            max_selections=MAX_LANGUAGES,
            help="The Universal Declaration of Human Rights in each (parallel: the same articles), and the "
            "languages you add below. Their order breaks ties.",
        )
        st.selectbox(
            "Preset",
            list(PRESETS),
            key="w_fair_preset",
            format_func=_preset_label,
            help=render.choices_help({n: p.description for n, p in PRESETS.items()}),
        )
        st.number_input("Merges (each side)", min_value=MIN_MERGES, max_value=MAX_MERGES, step=100, key="w_fair_merges")
        st.radio(
            "Right-hand side",
            VARIANTS,
            key="w_fair_variant",
            format_func=_VARIANT_LABELS.__getitem__,
            help=render.choices_help({v: BALANCES[v] for v in VARIANTS}),
        )
        c1, c2 = st.columns(2)
        c1.number_input(
            "Window",
            min_value=1,
            max_value=5_000,
            step=10,
            key="w_fair_window",
            help="parity-window: recent merges counted",
        )
        c2.number_input(
            "Alpha",
            min_value=1.0,
            max_value=20.0,
            step=0.5,
            key="w_fair_alpha",
            help="parity-window: a language waits once it served more than alpha / (number of languages) of "
            "the window's merges",
        )
        st.number_input(
            "Global merges first",
            min_value=1,
            max_value=MAX_MERGES,
            step=50,
            key="w_fair_global",
            help="parity-hybrid: this many classical merges, then parity",
        )
        st.form_submit_button("Train both", type="primary", on_click=_submit, width="stretch")


def _check_part(what: str, upload, *, required: bool) -> str | None:
    """An uploaded part's text (None when absent and optional); ConfigError says what is wrong."""
    if upload is None:
        if required:
            raise ConfigError(f"choose the {what} file")
        return None
    raw = upload.getvalue()
    try:
        text = decode_bytes(raw, limit=MAX_UPLOAD_BYTES).text
    except ExplorerError as err:
        if len(raw) > MAX_UPLOAD_BYTES:
            raise ConfigError(
                f"the {what} file {upload.name} is {mib(len(raw))}; the Fairness page takes up to "
                f"{mib(MAX_UPLOAD_BYTES)} a file (it trains while you wait)"
            ) from None
        # this page offers no other decoding: what to do is to save the file as UTF-8
        reason = re.sub(r" \(choose another decoding[^)]*\)", "", str(err))
        raise ConfigError(f"the {what} file {upload.name}: {reason}. Save it as UTF-8 text") from None
    if not text.strip():
        raise ConfigError(f"the {what} file {upload.name} is empty (or only whitespace)")
    return text


def _add_language() -> None:
    ss = st.session_state
    round_ = ss.get(_UPLOAD_ROUND, 0)
    name = " ".join(str(ss.get("w_fair_up_name") or "").split())
    try:
        if not name:
            raise ConfigError("give the language a name")
        if len(name) > MAX_NAME:
            raise ConfigError(f"a name of at most {MAX_NAME} characters, please")
        taken = {_label(k).casefold() for k in (*UDHR_LANGUAGES, *_uploads())} | {
            lang.name.casefold() for lang in _uploads().values()
        }
        if name.casefold() in taken:
            raise ConfigError(f"there is a language called {name} already: give another name")
        train = _check_part("training", ss.get(f"fair_up_train_{round_}"), required=True)
        dev = _check_part("development", ss.get(f"fair_up_dev_{round_}"), required=True)
        test = _check_part("test", ss.get(f"fair_up_test_{round_}"), required=False)
        assert train is not None and dev is not None
        data = language_bundle(name, train, dev, test)
        try:
            key = _UPLOAD_PREFIX + storage.put(data, kind="fairness-language", name=name)
        except ExplorerError as err:
            raise ConfigError(f"the server could not keep it ({err})") from None
    except ConfigError as err:
        ss[_UPLOAD_NOTE] = ("error", f"{name or 'The language'} was not added: {err}.")
        return
    _uploads()[key] = read_bundle(data, key)
    chosen = [k for k in ss.get("w_fair_langs", list(current_request().languages)) if k != key]
    ss["w_fair_langs"] = (chosen + [key])[-MAX_LANGUAGES:]
    ss[_UPLOAD_NOTE] = ("success", f"{name} added: press Train both.")
    ss[_UPLOAD_ROUND] = round_ + 1
    ss.pop("w_fair_up_name", None)


def upload_form() -> None:
    """Add a language of your own: a name, a training file and a development file (parallel to
    the others' development text), and a test file if you have one."""
    round_ = st.session_state.get(_UPLOAD_ROUND, 0)
    with st.form("w_fair_up_form", border=False):
        st.caption(f"UTF-8 text files of up to {mib(MAX_UPLOAD_BYTES)} each.")
        st.text_input("Name", key="w_fair_up_name", max_chars=MAX_NAME, placeholder="e.g. Swahili")
        st.file_uploader("Training text", key=f"fair_up_train_{round_}", type=None)
        st.file_uploader(
            "Development text",
            key=f"fair_up_dev_{round_}",
            help="The same content as the other languages' development text (UDHR articles 4, 9, 14, 19, 24, "
            "29): parity-aware training compares the languages on it.",
        )
        st.file_uploader(
            "Test text (optional)",
            key=f"fair_up_test_{round_}",
            help="Held out for the headline (UDHR articles 5, 10, ..., 30). Without it the development text is used.",
        )
        st.form_submit_button("Add language", on_click=_add_language)
    note = st.session_state.pop(_UPLOAD_NOTE, None)
    if note is not None:
        kind, text = note
        (st.error if kind == "error" else st.success)(render.escape(text, into="markdown"))


# ---- training ----------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def _memo() -> Memo:
    """Both sides of each request, for every session of this server."""
    return Memo(max_entries=16)


def _train_side(languages: Sequence[Language], request: Request, balance: Balance, done: Callable[[int], None]) -> Side:
    config = corpus_config(request.preset, merges=request.merges)
    trainer = ParityTrainer(
        [lang.train for lang in languages],
        [lang.dev for lang in languages],
        config,
        balance=balance,
        names=[lang.name for lang in languages],
        top_k=0,
        encoding=PRESETS[request.preset].encoding,
    )
    while not trainer.done:
        # heavy work takes turns with the other sessions' runs, a chunk at a time
        with server.HEAVY.turn():
            trainer.advance(100)
        done(len(trainer.records))
    return build_side(trainer, [lang.test for lang in languages])


def train(request: Request) -> Lab | None:
    """Both sides of the request, trained with a progress bar (or read from the server's memo);
    None, with a message on the page, when the request cannot be trained."""
    if not MIN_LANGUAGES <= len(request.languages) <= MAX_LANGUAGES:
        st.warning(f"Choose {MIN_LANGUAGES} to {MAX_LANGUAGES} languages in the sidebar, then press Train both.")
        return None
    languages = [_language(k) for k in request.languages]
    if any(lang is None for lang in languages):
        st.warning("A language you added is no longer in this session: add it again in the sidebar.")
        return None
    chosen = cast(list[Language], languages)
    try:
        balance = request.balance()
    except ConfigError as err:
        st.error(render.escape(str(err), into="markdown"))
        return None

    def make() -> Lab:
        bar = st.progress(0.0, text="Training…")
        total = 2 * request.merges
        try:
            sides = []
            for i, bal in enumerate((Balance("classical"), balance)):

                def show(n: int, i: int = i, mode: str = bal.mode) -> None:
                    fraction = min(1.0, (i * request.merges + n) / total)
                    bar.progress(fraction, text=f"Training {mode}… {n:,} merges")

                sides.append(_train_side(chosen, request, bal, show))
        finally:
            bar.empty()
        return Lab(
            names=tuple(lang.name for lang in chosen),
            held_out=tuple(lang.held_out for lang in chosen),
            byte_level=PRESETS[request.preset].config.unit == "byte",
            budget=request.merges,
            classical=sides[0],
            variant=sides[1],
            key=request.key(),
        )

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
    k = st.session_state.get(_K)
    k = lab.merges if k is None else max(0, min(int(k), lab.merges))
    st.session_state[_K] = k
    return k


def _move(n: int, lab: Lab) -> None:
    st.session_state[_K] = max(0, min(_shown(lab) + n, lab.merges))


def _on_slider(key: str) -> None:
    if clicks.is_current(key):  # not the late value of a slider a button has replaced
        st.session_state[_K] = int(st.session_state[key])


_BUTTONS = {"fair_back": -1, "fair_step": 1, "fair_step10": 10}  # widget key -> merges per click


def controls(lab: Lab) -> int:
    """Back, Step, +10 and a slider for the merge shown; the merge k they settle on. Quick clicks
    all count (``clicks``): five clicks on Step move five merges."""
    queued = clicks.counted_clicks(list(_BUTTONS), key="w_fair_clicks")
    if queued:
        _move(sum(_BUTTONS[key] * n for key, n in queued.items()), lab)
    k = _shown(lab)
    slider_key = clicks.moved_widget(_SLIDER, k)  # a new slider when a button moved k
    row = st.columns([0.9, 0.9, 0.9, 5.3, 2.4], vertical_alignment="center", gap="small")
    row[0].button("Back", key="fair_back", on_click=_move, args=(-1, lab), disabled=k == 0, width="stretch")
    row[1].button(
        "Step",
        key="fair_step",
        on_click=_move,
        args=(1, lab),
        disabled=k >= lab.merges,
        type="primary",
        width="stretch",
    )
    row[2].button("+10", key="fair_step10", on_click=_move, args=(10, lab), disabled=k >= lab.merges, width="stretch")
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
    row[4].markdown(f"Merge **{k:,}** of {lab.merges:,}")
    return k


def _legend(names: Sequence[str]) -> str:
    swatches = "".join(
        f'<span style="white-space:nowrap;margin-right:1.1em"><span style="display:inline-block;width:.8em;'
        f'height:.8em;border-radius:2px;background:{colour};margin-right:.3em"></span>'
        f"{render.escape(name, into='html')}</span>"
        for name, colour in zip(names, charts.colours(len(names)))
    )
    return (
        '<div class="fair-legend" style="font-size:.9rem;color:#334155;line-height:1.6">'
        f"<b>Development-text tokens:</b> {swatches}</div>"
    )


def _said(title: str, sentence: str) -> str:
    """A side's heading and its step sentence as one block (both escaped here)."""
    return (
        f'<div class="fair-side"><div style="font-weight:700;font-size:1.05rem;color:#0f172a">'
        f"{render.escape(title, into='html')}</div>"
        f'<div class="fair-say" style="background:#e0ecff;border-radius:6px;padding:.3rem .6rem;'
        f'color:#0f172a;min-height:4.2em;line-height:1.35">{render.escape(sentence, into="html")}</div></div>'
    )


_SIDE_TITLES = {
    "classical": "Classical BPE",
    "parity": "Parity-aware BPE (parity)",
    "parity-window": "Parity-aware BPE (parity-window)",
    "parity-hybrid": "Parity-aware BPE (parity-hybrid)",
}


def step_view(lab: Lab, k: int) -> None:
    """The answer at merge k (headline cards), then each side's sentence, development-text curves
    and served-language strip, then the Gini coefficient and global cost over merges."""
    st.html(render.headline_cards(lab_headlines(lab, k)))
    st.html(_legend(lab.names))
    specs = _specs(lab)
    sides = ((lab.classical, "classical"), (lab.variant, "variant"))
    # a row of columns each: the charts start level whichever sentence is longer
    for col, (side, _) in zip(st.columns(2, gap="medium"), sides):
        sentence = merge_sentence(side, k, lab.names, reference=lab.reference, style=lab.style)
        col.html(_said(_SIDE_TITLES[side.mode], sentence))
    for chart in ("curves", "strip"):
        for col, (_, name) in zip(st.columns(2, gap="medium"), sides):
            col.vega_lite_chart(
                spec=projector.chart_spec(charts.at_merge(specs[f"{chart}:{name}"], k)), width="stretch"
            )
    st.html(language_table(lab, k))
    g, t = st.columns(2, gap="medium")
    g.vega_lite_chart(spec=projector.chart_spec(charts.at_merge(specs["gini"], k)), width="stretch")
    t.vega_lite_chart(spec=projector.chart_spec(charts.at_merge(specs["totals"], k)), width="stretch")
    if lab.classical.stop_reason != "num_merges" or lab.variant.stop_reason != "num_merges":
        st.caption(
            render.escape(
                "; ".join(
                    f"{s.mode} stopped after {s.merges:,} merges ({s.stop_reason})"
                    for s in (lab.classical, lab.variant)
                    if s.stop_reason != "num_merges"
                ),
                into="markdown",
            )
        )


def step_area(lab: Lab) -> None:
    """The controls and everything they move (the page runs it as a fragment: a Step redraws
    only this part, not the sidebar's forms)."""
    k = controls(lab)
    links.keep_current(link_params())
    step_view(lab, k)


def describe(request: Request) -> str:
    """One line under the title: what is compared (Markdown); the languages are in the legend.

    >>> print(describe(Request()))
    5 languages · gpt2 \\(byte level\\) · 500 merges each · classical BPE \\(left\\) against parity \\(right\\)\\; change them in the sidebar
    """
    return render.escape(
        f"{len(request.languages)} languages · {_preset_label(request.preset)} · {request.merges:,} merges each · "
        f"classical BPE (left) against {request.variant} (right); change them in the sidebar",
        into="markdown",
    )


# ---- the page's link ---------------------------------------------------------------------
def link_params() -> dict[str, str]:
    """The request and merge shown as URL params (uploads by their stored bundle's hash)."""
    request = current_request()
    params = {
        "fair": ",".join(request.languages),
        "fair_preset": request.preset,
        "fair_merges": str(request.merges),
        "fair_variant": request.variant,
    }
    if request.variant == "parity-window":
        params["fair_window"] = str(request.window)
        params["fair_alpha"] = f"{request.alpha:g}"
    if request.variant == "parity-hybrid":
        params["fair_global"] = str(request.global_merges)
    k = st.session_state.get(_K)
    if k is not None:
        params["fair_k"] = str(k)
    return params


def _restore_upload(key: str, problems: list[str]) -> bool:
    digest = key[len(_UPLOAD_PREFIX) :]
    blob = storage.get(digest)
    if blob is None:
        problems.append(storage.gone("a language you added", digest, again="add it again"))
        return False
    try:
        _uploads()[key] = read_bundle(blob.data, key)
    except ConfigError as err:
        problems.append(str(err))
        return False
    return True


def apply_link(params: dict[str, str]) -> list[str]:
    """The request and merge a link names; what it had to leave out."""
    if not any(k.startswith("fair") for k in params):
        return []
    problems: list[str] = []
    defaults = Request()
    languages = []
    for key in (k for k in params.get("fair", "").split(",") if k):
        if key in UDHR_LANGUAGES:
            languages.append(key)
        elif key.startswith(_UPLOAD_PREFIX) and storage.is_digest(key[len(_UPLOAD_PREFIX) :]):
            if _restore_upload(key, problems):
                languages.append(key)
        else:
            problems.append(f"fair names a language that is neither bundled nor added: {key[:40]!r}")
    preset = params.get("fair_preset", defaults.preset)
    if preset not in PRESETS:
        problems.append(f"fair_preset={preset[:20]!r} is not one of {', '.join(PRESETS)}")
        preset = defaults.preset
    variant = params.get("fair_variant", defaults.variant)
    if variant not in VARIANTS:
        problems.append(f"fair_variant={variant[:20]!r} is not one of {', '.join(VARIANTS)}")
        variant = defaults.variant

    def number(key: str, low: int, high: int, default: int) -> int:
        return links.count_or(params, key, problems, low=low, high=high, default=default)

    merges = number("fair_merges", MIN_MERGES, MAX_MERGES, defaults.merges)
    window = number("fair_window", 1, 5_000, defaults.window)
    global_merges = number("fair_global", 1, MAX_MERGES, defaults.global_merges)
    alpha = defaults.alpha
    if "fair_alpha" in params:
        try:
            alpha = float(params["fair_alpha"])
            if not 1 <= alpha <= 20:
                raise ValueError
        except ValueError:
            problems.append(f"fair_alpha={params['fair_alpha'][:20]!r} is not a number from 1 to 20")
            alpha = defaults.alpha
    if len(languages) < MIN_LANGUAGES:  # the nearest view that trains: the defaults join
        languages += [k for k in defaults.languages if k not in languages]
    request = Request(
        tuple(languages[:MAX_LANGUAGES]),
        preset,
        merges,
        cast(BalanceName, variant),
        window,
        alpha,
        global_merges,
    )
    st.session_state[_REQUEST] = request
    _widgets_from(request)
    k = number("fair_k", 0, MAX_MERGES, -1)
    st.session_state[_K] = None if k < 0 else k
    return problems
