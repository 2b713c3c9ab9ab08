"""What the Fairness page knows and computes, apart from drawing it: its widget and session keys
(:class:`Keys`, :class:`Session`), its languages and the request it trains (:class:`Language`,
:class:`Request`), what it trains as data (one balance to the budget, :class:`Side`, built by
:func:`build_side`; classical against the variant on the same languages, :class:`Lab`), and the
sentences, cards, rows, checks and link params the page shows of them. No Streamlit here: the
page (:mod:`explorer.ui.fairness_view`) keeps the session and draws, and
:mod:`explorer.ui.fairness_charts` charts a Lab.

Data shapes (L languages, N merges, k the merge shown, 0..N)::

    Language    one language's three parallel parts: training, development (what parity-aware
                training measures) and test text (held out: what the headline measures)
    Side        one balance's run: its ParityStep records, and per k the development, training
                and test token counts of every language and their Gini coefficients
    Lab         both sides with the languages' names: what the page draws at any k
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, cast

from ..analysis.evaluate import piece_counts, replay
from ..analysis.fairness import gini
from ..bpe.config import PRESETS, corpus_config
from ..bpe.parity import Balance, BalanceName, ParityStep, ParityTrainer, worst_first
from ..errors import ConfigError, ExplorerError
from ..formats.corpora import decode_bytes, mib
from ..formats.parallel import UDHR_LANGUAGES, udhr_split
from . import render
from .params import choice_or, count_or

__all__ = [
    "Keys",
    "Session",
    "REFERENCE",
    "VARIANTS",
    "VARIANT_LABELS",
    "SIDE_TITLES",
    "DEFAULT_LANGUAGES",
    "DEFAULT_MERGES",
    "MIN_MERGES",
    "MAX_MERGES",
    "MIN_LANGUAGES",
    "MAX_LANGUAGES",
    "MAX_UPLOAD_BYTES",
    "MAX_NAME",
    "MAX_WINDOW",
    "UPLOAD_PREFIX",
    "BUTTONS",
    "Language",
    "udhr_language",
    "language_bundle",
    "read_bundle",
    "language_label",
    "taken_names",
    "tidy_name",
    "check_name",
    "upload_text",
    "refused_note",
    "added_note",
    "with_language",
    "Side",
    "build_side",
    "Lab",
    "Request",
    "preset_label",
    "describe",
    "request_from",
    "widget_values",
    "refusal",
    "side_trainer",
    "progress",
    "lab_of",
    "shown",
    "moved",
    "position",
    "merge_sentence",
    "lab_headlines",
    "LanguageRow",
    "language_rows",
    "language_table",
    "legend_html",
    "side_html",
    "stop_caption",
    "link_params",
    "unknown_language",
    "Link",
    "read_link",
]


class Keys:
    """The Fairness page's widget keys, one place for the page and its tests. Their values are a
    contract: saved sessions and tests find widgets by them. A name ending in ``_AT`` is a prefix,
    completed by the method beside it (or, the slider, by :func:`explorer.ui.clicks.moved_widget`)."""

    # the settings form, in the sidebar: applied together by "Train both"
    FORM = "w_fair_form"
    TRAIN = "FormSubmitter:w_fair_form-Train both"  # Streamlit's key of the form's button: the form's and its label
    LANGUAGES = "w_fair_langs"
    PRESET = "w_fair_preset"
    MERGES = "w_fair_merges"
    VARIANT = "w_fair_variant"
    WINDOW = "w_fair_window"
    ALPHA = "w_fair_alpha"
    GLOBAL = "w_fair_global"
    # the upload form: a language of one's own
    UPLOAD_FORM = "w_fair_up_form"
    ADD = "FormSubmitter:w_fair_up_form-Add language"
    UPLOAD_NAME = "w_fair_up_name"
    UPLOAD_TRAIN_AT = "fair_up_train_"  # + the form's round (a new round empties the file pickers)
    UPLOAD_DEV_AT = "fair_up_dev_"
    UPLOAD_TEST_AT = "fair_up_test_"
    # the step controls
    BACK = "fair_back"
    STEP = "fair_step"
    STEP10 = "fair_step10"
    CLICKS = "w_fair_clicks"  # the component that counts quick clicks on the three buttons
    SLIDER_AT = "fair_slider"  # + "_" and a generation: "fair_slider_3" (clicks.moved_widget)
    STEPPER = "fair_stepper"  # the stepper component (explorer.ui.stepper): its report

    @staticmethod
    def upload_part(part: str, round_: int) -> str:
        """The file picker of an upload's part ("train", "dev" or "test") in the form's round.

        >>> Keys.upload_part("dev", 2)
        'fair_up_dev_2'
        """
        prefix = {"train": Keys.UPLOAD_TRAIN_AT, "dev": Keys.UPLOAD_DEV_AT, "test": Keys.UPLOAD_TEST_AT}[part]
        return f"{prefix}{round_}"


class Session:
    """What the page keeps in the session beside its widgets."""

    REQUEST = "fair_request"  # the Request trained and shown
    K = "fair_k"  # the merge shown (None: the last)
    WINDOW = "fair_stepper_window"  # the stepper's stepper.Window: what the browser holds
    UPLOADS = "fair_uploads"  # {key: Language} the session added
    UPLOAD_NOTE = "fair_upload_note"  # ("error" | "success", text): what the last "Add" did, said once
    UPLOAD_ROUND = "fair_upload_round"  # bumped to empty the upload form's file pickers


REFERENCE = "English"  # parity is against English when it is among the languages
VARIANTS: tuple[BalanceName, ...] = ("parity", "parity-window", "parity-hybrid")
VARIANT_LABELS = {"parity": "parity", "parity-window": "parity-window", "parity-hybrid": "parity-hybrid"}
SIDE_TITLES = {
    "classical": "Classical BPE",
    "parity": "Parity-aware BPE (parity)",
    "parity-window": "Parity-aware BPE (parity-window)",
    "parity-hybrid": "Parity-aware BPE (parity-hybrid)",
}
DEFAULT_LANGUAGES = ("en", "hi", "zh_hans", "ar", "ru")
DEFAULT_MERGES, MIN_MERGES, MAX_MERGES = 500, 10, 5_000
MIN_LANGUAGES, MAX_LANGUAGES = 2, 12
MAX_WINDOW = 5_000
MAX_UPLOAD_BYTES = 2 * 1024 * 1024  # each part of an uploaded language: the page trains in its own process
MAX_NAME = 40
UPLOAD_PREFIX = "up:"  # a language key: a UDHR code, or "up:" + the stored bundle's SHA-256
BUTTONS = {Keys.BACK: -1, Keys.STEP: 1, Keys.STEP10: 10}  # widget key -> merges per click


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


def udhr_language(code: str) -> Language:
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


def language_label(key: str, uploads: Mapping[str, Language]) -> str:
    """A language's name as a picker shows it (a widget shows text as it is: no escaping); an
    upload without a test file says so, and a key the session does not know is shown as it is.

    >>> up = {"up:x": Language("up:x", "Swahili", "a", "b", "b", held_out=False)}
    >>> language_label("hi", up), language_label("up:x", up), language_label("up:y", up)
    ('Hindi', 'Swahili (no test file)', 'up:y')
    """
    if key in UDHR_LANGUAGES:
        return UDHR_LANGUAGES[key]
    lang = uploads.get(key)
    if lang is None:
        return key
    return lang.name if lang.held_out else f"{lang.name} (no test file)"


def taken_names(uploads: Mapping[str, Language]) -> set[str]:
    """The names (casefolded) a new language may not take: every picker label and every added name."""
    keys = (*UDHR_LANGUAGES, *uploads)
    return {language_label(k, uploads).casefold() for k in keys} | {lang.name.casefold() for lang in uploads.values()}


def tidy_name(typed: object) -> str:
    """A typed name with its whitespace collapsed (nothing typed: "").

    >>> tidy_name("  Kiswahili \\n sanifu "), tidy_name(None)
    ('Kiswahili sanifu', '')
    """
    return " ".join(str(typed or "").split())


def check_name(name: str, taken: Iterable[str]) -> None:
    """ConfigError when ``name`` (tidied) cannot be a new language's: empty, too long, or taken
    (``taken``: casefolded, :func:`taken_names`)."""
    if not name:
        raise ConfigError("give the language a name")
    if len(name) > MAX_NAME:
        raise ConfigError(f"a name of at most {MAX_NAME} characters, please")
    if name.casefold() in set(taken):
        raise ConfigError(f"there is a language called {name} already: give another name")


def upload_text(what: str, upload: tuple[str, bytes] | None, *, required: bool) -> str | None:
    """An uploaded part's text (``upload``: its file name and bytes; None when absent and
    optional); ConfigError says what is wrong.

    >>> upload_text("test", None, required=False) is None, upload_text("dev", ("d.txt", b"hi"), required=True)
    (True, 'hi')
    >>> upload_text("training", ("t.txt", b" "), required=True)
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: the training file t.txt is empty (or only whitespace)
    """
    if upload is None:
        if required:
            raise ConfigError(f"choose the {what} file")
        return None
    name, raw = upload
    try:
        text = decode_bytes(raw, limit=MAX_UPLOAD_BYTES).text
    except ExplorerError as err:
        if len(raw) > MAX_UPLOAD_BYTES:
            raise ConfigError(
                f"the {what} file {name} is {mib(len(raw))}; the Fairness page takes up to "
                f"{mib(MAX_UPLOAD_BYTES)} a file (it trains while you wait)"
            ) from None
        # this page offers no other decoding: what to do is to save the file as UTF-8
        reason = re.sub(r" \(choose another decoding[^)]*\)", "", str(err))
        raise ConfigError(f"the {what} file {name}: {reason}. Save it as UTF-8 text") from None
    if not text.strip():
        raise ConfigError(f"the {what} file {name} is empty (or only whitespace)")
    return text


def refused_note(name: str, err: Exception) -> str:
    """What the upload form says of a language it did not add.

    >>> refused_note("", ConfigError("give the language a name"))
    'The language was not added: give the language a name.'
    """
    return f"{name or 'The language'} was not added: {err}."


def added_note(name: str) -> str:
    """What the upload form says of a language it added."""
    return f"{name} added: press Train both."


def with_language(chosen: Sequence[str], key: str) -> list[str]:
    """The languages picked once ``key`` is added: last, once, and the most a request takes.

    >>> with_language(["en", "up:x", "hi"], "up:x")
    ['en', 'hi', 'up:x']
    >>> len(with_language([f"l{i}" for i in range(MAX_LANGUAGES)], "up:x")), with_language([f"l{i}" for i in range(MAX_LANGUAGES)], "up:x")[-2:]
    (12, ['l11', 'up:x'])
    """
    return ([k for k in chosen if k != key] + [key])[-MAX_LANGUAGES:]


# ---- what it trains ----------------------------------------------------------------------
@dataclass(frozen=True)
class Side:
    """One balance trained to the budget. ``dev[k]``, ``train[k]``, ``test[k]``: every language's
    development, training and test text in tokens after k merges (k = 0..N); ``gini_dev[k]``,
    ``gini_test[k]``: their Gini coefficients over the languages."""

    balance: Balance
    records: tuple[ParityStep, ...]
    dev: tuple[tuple[int, ...], ...]
    train: tuple[tuple[int, ...], ...]
    test: tuple[tuple[int, ...], ...]
    gini_dev: tuple[float, ...]
    gini_test: tuple[float, ...]
    stop_reason: str | None

    @property
    def merges(self) -> int:
        return len(self.records)

    @property
    def mode(self) -> str:
        return self.balance.mode

    def at(self, k: int) -> int:
        """k within what this side trained (a side that ran out of pairs stopped sooner)."""
        return max(0, min(k, self.merges))

    def saved(self, k: int) -> list[int]:
        """Each language's development tokens that merge k (1..N) saved."""
        return [b - a for b, a in zip(self.dev[k - 1], self.dev[k])]

    def owner(self, k: int) -> tuple[int, bool]:
        """Merge k's language and whether it served that language (True), or was chosen over all
        languages and shortened that one's development text most (False; ties: the first)."""
        served = self.records[k - 1].served
        if served is not None:
            return served, True
        saved = self.saved(k)
        return max(range(len(saved)), key=lambda i: (saved[i], -i)), False


def build_side(trainer: ParityTrainer, tests: Sequence[str]) -> Side:
    """A trained ParityTrainer's run as a Side; ``tests``: each language's test text, counted after
    every k merges in one replay of the merges (``analysis.evaluate.replay``).

    >>> from explorer import TrainerConfig
    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=None, num_merges=3)
    >>> side = build_side(ParityTrainer(["aaaa aaaa aaaa", "bcbc"], ["aaaa", "bcbc"], cfg).run(), ["aa aa", "bc"])
    >>> side.dev, side.test
    (((4, 4), (2, 4), (2, 2), (1, 2)), ((4, 2), (2, 2), (2, 1), (2, 1)))
    >>> [round(g, 3) for g in side.gini_test]
    [0.167, 0.0, 0.167, 0.167]
    """
    records = tuple(trainer.records)
    tok = trainer.tokenizer()
    curves = [replay(tok, piece_counts(tok, text)) for text in tests]
    dev = (trainer.initial_dev_tokens, *(r.dev_tokens for r in records))
    train = (trainer.initial_train_tokens, *(r.train_tokens for r in records))
    test = tuple(tuple(curve[k] for curve in curves) for k in range(len(records) + 1))
    return Side(
        balance=trainer.balance,
        records=records,
        dev=dev,
        train=train,
        test=test,
        gini_dev=tuple(gini(row) for row in dev),
        gini_test=tuple(gini(row) for row in test),
        stop_reason=trainer.stop_reason,
    )


@dataclass(frozen=True)
class Lab:
    """Classical and the variant on the same languages and budget."""

    names: tuple[str, ...]
    held_out: tuple[bool, ...]
    byte_level: bool
    budget: int
    classical: Side
    variant: Side
    key: str = ""  # the request's: the charts are kept under it

    @property
    def merges(self) -> int:
        """How far the slider goes: the longer of the two runs."""
        return max(self.classical.merges, self.variant.merges)

    @property
    def reference(self) -> int | None:
        """English's index, when it is among the languages (parity is against it)."""
        return self.names.index(REFERENCE) if REFERENCE in self.names else None

    @property
    def style(self) -> render.TokenStyle:
        return render.TokenStyle(byte_level=self.byte_level)


# ---- the request -------------------------------------------------------------------------
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


def preset_label(name: str) -> str:
    """A preset as the picker and the line under the title name it.

    >>> preset_label("gpt2"), preset_label("sennrich")
    ('gpt2 (byte level)', 'sennrich (characters)')
    """
    unit = PRESETS[name].config.unit
    return f"{name} ({'byte level' if unit == 'byte' else 'characters'})"


def request_from(values: Mapping[str, object]) -> Request:
    """The Request the settings form's widgets hold (``values``: by :class:`Keys`)."""
    return Request(
        tuple(cast(Sequence[str], values[Keys.LANGUAGES])),
        str(values[Keys.PRESET]),
        int(cast(int, values[Keys.MERGES])),
        cast(BalanceName, values[Keys.VARIANT]),
        int(cast(int, values[Keys.WINDOW])),
        float(cast(float, values[Keys.ALPHA])),
        int(cast(int, values[Keys.GLOBAL])),
    )


def widget_values(request: Request) -> dict[str, object]:
    """The settings form's widgets showing ``request`` (:func:`request_from` read back)."""
    return {
        Keys.LANGUAGES: list(request.languages),
        Keys.PRESET: request.preset,
        Keys.MERGES: request.merges,
        Keys.VARIANT: request.variant,
        Keys.WINDOW: request.window,
        Keys.ALPHA: request.alpha,
        Keys.GLOBAL: request.global_merges,
    }


def describe(request: Request) -> str:
    """One line under the title: what is compared (Markdown); the languages are in the legend.

    >>> print(describe(Request()))
    5 languages · gpt2 \\(byte level\\) · 500 merges each · classical BPE \\(left\\) against parity \\(right\\)\\; change them in the sidebar
    """
    return render.escape(
        f"{len(request.languages)} languages · {preset_label(request.preset)} · {request.merges:,} merges each · "
        f"classical BPE (left) against {request.variant} (right); change them in the sidebar",
        into="markdown",
    )


def refusal(request: Request, languages: Sequence[Language | None]) -> str | None:
    """Why the request cannot be trained (None: it can); ``languages``: its languages as the
    session knows them (None: an upload the session no longer has).

    >>> refusal(Request(("en",)), [None])
    'Choose 2 to 12 languages in the sidebar, then press Train both.'
    """
    if not MIN_LANGUAGES <= len(request.languages) <= MAX_LANGUAGES:
        return f"Choose {MIN_LANGUAGES} to {MAX_LANGUAGES} languages in the sidebar, then press Train both."
    if any(lang is None for lang in languages):
        return "A language you added is no longer in this session: add it again in the sidebar."
    return None


def side_trainer(languages: Sequence[Language], request: Request, balance: Balance) -> ParityTrainer:
    """One side's trainer, not yet run: the languages' training and development text under the
    request's preset and budget (no pair tables: the page shows none)."""
    return ParityTrainer(
        [lang.train for lang in languages],
        [lang.dev for lang in languages],
        corpus_config(request.preset, merges=request.merges),
        balance=balance,
        names=[lang.name for lang in languages],
        top_k=0,
        encoding=PRESETS[request.preset].encoding,
    )


def progress(side: int, mode: str, done: int, merges: int) -> tuple[float, str]:
    """The progress bar while side ``side`` (0: classical, 1: the variant) has ``done`` of its
    ``merges``: both sides fill one bar.

    >>> progress(1, "parity", 250, 500)
    (0.75, 'Training parity… 250 merges')
    """
    return min(1.0, (side * merges + done) / (2 * merges)), f"Training {mode}… {done:,} merges"


def lab_of(languages: Sequence[Language], request: Request, classical: Side, variant: Side) -> Lab:
    """Both sides of the request as the page keeps them."""
    return Lab(
        names=tuple(lang.name for lang in languages),
        held_out=tuple(lang.held_out for lang in languages),
        byte_level=PRESETS[request.preset].config.unit == "byte",
        budget=request.merges,
        classical=classical,
        variant=variant,
        key=request.key(),
    )


# ---- stepping ----------------------------------------------------------------------------
def shown(k: object, merges: int) -> int:
    """The merge shown: ``k`` within 0..merges, or the last when none is chosen (a new run opens
    at its end).

    >>> shown(None, 500), shown(700, 500), shown(-3, 500), shown(42, 500)
    (500, 500, 0, 42)
    """
    return merges if k is None else max(0, min(int(cast(int, k)), merges))


def moved(k: object, n: int, merges: int) -> int:
    """The merge shown after moving ``n`` merges from ``k`` (:func:`shown`), never past either end.

    >>> moved(None, -1, 500), moved(495, 10, 500), moved(0, -1, 500)
    (499, 500, 0)
    """
    return max(0, min(shown(k, merges) + n, merges))


def position(k: int, merges: int) -> str:
    """Where the slider stands, beside it (Markdown).

    >>> position(1200, 5000)
    'Merge **1,200** of 5,000'
    """
    return f"Merge **{k:,}** of {merges:,}"


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


def legend_html(names: Sequence[str], colours: Sequence[str]) -> str:
    """The languages' colours over the charts (names escaped; ``colours``: the charts', in order)."""
    swatches = "".join(
        f'<span style="white-space:nowrap;margin-right:1.1em"><span style="display:inline-block;width:.8em;'
        f'height:.8em;border-radius:2px;background:{colour};margin-right:.3em"></span>'
        f"{render.escape(name, into='html')}</span>"
        for name, colour in zip(names, colours)
    )
    return (
        '<div class="fair-legend" style="font-size:.9rem;color:#334155;line-height:1.6">'
        f"<b>Development-text tokens:</b> {swatches}</div>"
    )


def side_html(title: str, sentence: str) -> str:
    """A side's heading and its step sentence as one block (both escaped here)."""
    return (
        f'<div class="fair-side"><div style="font-weight:700;font-size:1.05rem;color:#0f172a">'
        f"{render.escape(title, into='html')}</div>"
        f'<div class="fair-say" style="background:#e0ecff;border-radius:6px;padding:.3rem .6rem;'
        f'color:#0f172a;min-height:4.2em;line-height:1.35">{render.escape(sentence, into="html")}</div></div>'
    )


def stop_caption(lab: Lab) -> str | None:
    """What the page says under the charts when a side stopped before its budget (plain text:
    escape it where it goes); None when both trained every merge."""
    stopped = [s for s in (lab.classical, lab.variant) if s.stop_reason != "num_merges"]
    if not stopped:
        return None
    return "; ".join(f"{s.mode} stopped after {s.merges:,} merges ({s.stop_reason})" for s in stopped)


# ---- the page's link ---------------------------------------------------------------------
def link_params(request: Request, k: int | None) -> dict[str, str]:
    """The request and merge shown (None: none chosen, the last) as URL params (uploads by
    their stored bundle's hash); a variant's options only for that variant.

    >>> link_params(Request(variant="parity-window", alpha=1.5), 12)
    {'fair': 'en,hi,zh_hans,ar,ru', 'fair_preset': 'gpt2', 'fair_merges': '500', 'fair_variant': 'parity-window', 'fair_window': '100', 'fair_alpha': '1.5', 'fair_k': '12'}
    """
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
    if k is not None:
        params["fair_k"] = str(k)
    return params


def unknown_language(key: str) -> str:
    """What a link is told about a language key that names no language.

    >>> unknown_language("xx")
    "fair names a language that is neither bundled nor added: 'xx'"
    """
    return f"fair names a language that is neither bundled nor added: {key[:40]!r}"


class Link(NamedTuple):
    """What a link names: the request, the merge shown (None: the last) and what it left out."""

    request: Request
    k: int | None
    problems: list[str]


def read_link(params: Mapping[str, str], *, restore: Callable[[str], str | None]) -> Link | None:
    """The request and merge a link names (None when it names none of the page's params), the
    nearest valid ones where a value is bad, and a sentence for each bad value. ``restore``
    reads an upload's key ("up:" + hash) back into the session: None when it did, else what
    the link is told (the file is gone, or it is no language).

    >>> link = read_link({"fair": "en,xx", "fair_merges": "5", "fair_k": "7"}, restore=lambda key: "gone")
    >>> link.request.languages, link.request.merges, link.k
    (('en', 'hi', 'zh_hans', 'ar', 'ru'), 500, 7)
    >>> link.problems
    ["fair names a language that is neither bundled nor added: 'xx'", "fair_merges='5' in the link is not a whole number from 10 to 5,000"]
    """
    if not any(k.startswith("fair") for k in params):
        return None
    problems: list[str] = []
    defaults = Request()
    languages = []
    for key in (k for k in params.get("fair", "").split(",") if k):
        if key in UDHR_LANGUAGES:
            languages.append(key)
        elif key.startswith(UPLOAD_PREFIX):
            problem = restore(key)
            if problem is None:
                languages.append(key)
            else:
                problems.append(problem)
        else:
            problems.append(unknown_language(key))
    preset = choice_or(params, "fair_preset", PRESETS, problems, default=defaults.preset)
    variant = choice_or(params, "fair_variant", VARIANTS, problems, default=defaults.variant)

    def number(key: str, low: int, high: int, default: int) -> int:
        return count_or(params, key, problems, low=low, high=high, default=default)

    merges = number("fair_merges", MIN_MERGES, MAX_MERGES, defaults.merges)
    window = number("fair_window", 1, MAX_WINDOW, defaults.window)
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
    k = number("fair_k", 0, MAX_MERGES, -1)
    return Link(request, None if k < 0 else k, problems)
