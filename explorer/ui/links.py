"""Every page is a link: the URL carries what rebuilds the view, and a refresh, a shared link
or a server restart opens the same view.

What every page writes (the session's corpus and training, so its tokenizer follows the user)::

    corpus=NAME,upload:<sha256>[:decoding],pasted:<sha256>   bundled names and stored files
    preset=P  merges=N | vocab=N | merges=all  tie=T  seed=S  step=K  big=sample|final
    normalizer=... pretokenizer=... (any setting that differs from the preset's)

and what each page adds for its own view (the Playground's text, tokenizers, merge k and view;
the Compare page's corpora and configuration), through :func:`open_link` and
:func:`keep_current`. Files are named by content hash and read back from the store
(``explorer.serving.store``); a link whose file was evicted, or whose values are bad, opens the nearest
valid view and says what it left out in one line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import NamedTuple, cast

import streamlit as st

from ..bpe.config import PRESETS, SEED_REPLAYS, TIE_BREAKS, TrainerConfig, corpus_config
from ..errors import ConfigError, ExplorerError
from ..serving.store import Blob
from . import data, projector, render, state, storage
from .params import count_or, count_param  # a link's counts: read by the pages' models too
from .uploads import corpus_ref, parse_corpus_ref, restore_uploads

__all__ = [
    "Link",
    "parse_link",
    "link_params",
    "open_link",
    "keep_current",
    "training_params",
    "corpus_ref",
    "parse_corpus_ref",
    "pasted_ref",
    "count_param",
    "count_or",
    "stored_parts",
]

_CHECKED = "link_checked"  # the URL's params were read once, on the session's first run
_TRAINING_KEYS = ("corpus", "preset", "seed", "step", "merges", "vocab", "tie", "big")
# settings a link carries when they differ from the preset's (the stop rule and tie-break have
# their own short names above)
_SETTINGS = (
    "normalizer",
    "pretokenizer",
    "pattern",
    "sequences",
    "unit",
    "marker",
    "alphabet",
    "alphabet_order",
    "special_tokens",
    "min_frequency",
    "reuse_ids",
    "specials_in_text",
)
PageApply = Callable[[dict[str, str]], list[str]]


class Link(NamedTuple):
    corpus: tuple[str, ...]  # bundled names and refs ("upload:<sha256>[:decoding]", "pasted:<sha256>")
    preset: str | None  # None: custom settings on top of ``base``
    config: TrainerConfig
    step: int
    seed: str | None = None
    base: str = state.DEFAULT_PRESET
    big: state.Mode | None = None  # "sample" or "final": what to do with a corpus over the limit


def pasted_ref(choice: state.CorpusChoice) -> str | None:
    """The ref of the choice's pasted text, stored on first ask (StoreError when it cannot be)."""
    if not choice.pasted.strip():
        return None
    if "_pasted_ref" not in choice.__dict__:
        digest = storage.put(choice.pasted.encode("utf-8", "surrogatepass"), kind="pasted", name="pasted text")
        object.__setattr__(choice, "_pasted_ref", corpus_ref("pasted", digest))
    return choice.__dict__["_pasted_ref"]


# ---- settings ------------------------------------------------------------------------------
def _setting_text(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, tuple):
        return json.dumps(list(value), ensure_ascii=False)
    return str(value)


def _setting_value(field: str, raw: str) -> object:
    """A setting from its URL text (ConfigError when it is not of the field's kind)."""
    if field == "special_tokens":
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if not (isinstance(value, list) and all(isinstance(t, str) for t in value)):
            raise ConfigError(f"special_tokens in the link is not a JSON list of strings: {raw[:60]!r}")
        return tuple(value)
    if field == "reuse_ids":
        if raw not in ("0", "1"):
            raise ConfigError(f"reuse_ids={raw[:20]!r} in the link is not 0 or 1")
        return raw == "1"
    if field == "min_frequency":
        return count_param({field: raw}, field, low=0, high=1_000_000)
    return raw


def _settings_params(config: TrainerConfig, base: TrainerConfig) -> dict[str, str]:
    return {
        f: _setting_text(getattr(config, f))
        for f in _SETTINGS
        if getattr(config, f) != getattr(base, f) and getattr(config, f) is not None
    }


# ---- the training part of every link -------------------------------------------------------
def parse_link(params: dict[str, str], *, samples: list[str]) -> tuple[Link | None, list[str]]:
    """(the state a link asks for, or None when it asks for none; what it had to leave out).
    Each bad value is dropped on its own, so the link opens the nearest valid view.

    >>> link, problems = parse_link({"corpus": "a.txt", "preset": "sennrich", "step": "3"}, samples=["a.txt"])
    >>> link.corpus, link.preset, link.config.num_merges, link.step, problems
    (('a.txt',), 'sennrich', 1000, 3, [])
    >>> link, problems = parse_link({"corpus": "b.txt,a.txt", "step": "x"}, samples=["a.txt"])
    >>> link.corpus, link.step, problems
    (('a.txt',), 0, ["the link names a corpus that is not bundled: 'b.txt'", "step='x' in the link is not a whole number from 0 to 200,000"])
    """
    if not any(k in params for k in (*_TRAINING_KEYS, *_SETTINGS)):
        return None, []
    problems: list[str] = []

    def attempt(fn, default=None):
        try:
            return fn()
        except ConfigError as err:
            problems.append(str(err))
            return default

    seed = params.get("seed")
    if seed is not None and seed not in SEED_REPLAYS:
        problems.append(f"the link names an unknown seed notebook {seed!r}; choose one of {', '.join(SEED_REPLAYS)}")
        seed = None
    names = []
    for name in (n for n in params.get("corpus", "").split(",") if n):
        if name in samples or parse_corpus_ref(name) is not None:
            names.append(name)
        else:
            problems.append(f"the link names a corpus that is not bundled: {name!r}")
    if seed is not None:
        names = names or [SEED_REPLAYS[seed].corpus]
    base = SEED_REPLAYS[seed].preset if seed is not None else params.get("preset", state.DEFAULT_PRESET)
    if base not in PRESETS:
        problems.append(f"the link names an unknown preset {base!r}; choose one of {', '.join(PRESETS)}")
        base = state.DEFAULT_PRESET
    sized: dict = {}
    if params.get("merges") == "all" and "vocab" not in params:
        sized = {"num_merges": None, "vocab_size": None}
    else:
        merges = attempt(lambda: count_param(params, "merges", low=0))
        vocab = attempt(lambda: count_param(params, "vocab", low=1))
        if merges is not None and vocab is not None:
            problems.append("the link gives both merges and vocab: give one")
        elif merges is not None:
            sized = {"num_merges": merges, "vocab_size": None}
        elif vocab is not None:
            sized = {"num_merges": None, "vocab_size": vocab}
    tie = params.get("tie")
    if tie is not None:
        if tie in TIE_BREAKS:
            sized["tie_break"] = tie
        else:
            problems.append(f"the link names an unknown tie-break {tie!r}; choose one of {', '.join(TIE_BREAKS)}")
    base_config = SEED_REPLAYS[seed].config() if seed is not None else corpus_config(base)
    config = attempt(lambda: base_config.replace(**sized), base_config)
    settings = {}
    for field in _SETTINGS:
        if field in params:
            value = attempt(lambda f=field: _setting_value(f, params[f]))
            if value is not None:
                settings[field] = value
    if settings:
        if "pattern" in settings and settings.get("pretokenizer", config.pretokenizer) != "regex":
            problems.append("the link gives a regex without the 'regex' pre-tokenizer")
            settings.pop("pattern")
        custom = attempt(lambda: config.replace(**settings))
        if custom is not None and custom != config:
            config, seed = custom, None
    preset = (
        base
        if config == (SEED_REPLAYS[seed].config(**sized) if seed is not None else corpus_config(base).replace(**sized))
        else None
    )
    if seed is not None and preset is None:
        seed = None
    asked = params.get("big")
    big: state.Mode | None = None
    if asked in ("sample", "final"):
        big = cast(state.Mode, asked)
    elif asked is not None:
        problems.append(f"big={asked[:20]!r} in the link is neither 'sample' nor 'final'")
    step = attempt(lambda: count_param(params, "step", low=0)) or 0
    return Link(tuple(names) or (state.DEFAULT_SAMPLE,), preset, config, step, seed, base, big), problems


def link_params(
    choice: state.CorpusChoice,
    preset: str | None,
    config: TrainerConfig,
    step: int,
    seed: str | None,
    *,
    base: str | None = None,
    big: str | None = None,
) -> tuple[dict[str, str], str | None]:
    """(the URL's params for this corpus and training, a note on what the link leaves out or None).

    >>> params, note = link_params(state.CorpusChoice(samples=("a.txt",)), "gpt2", corpus_config("gpt2"), 5, None)
    >>> params, note
    ({'corpus': 'a.txt', 'preset': 'gpt2', 'merges': '1000', 'step': '5'}, None)
    >>> params, _ = link_params(state.CorpusChoice(samples=("a.txt",)), None, corpus_config("gpt2").replace(unit="char", alphabet="present"), 0, None, base="gpt2")
    >>> params["unit"], params["preset"]
    ('char', 'gpt2')
    """
    notes = []
    parts = list(choice.samples) + list(choice.upload_refs)
    if choice.uploads and len(choice.upload_refs) != len(choice.uploads):
        notes.append("an upload that could not be stored is not in the link")
    try:
        ref = pasted_ref(choice)
    except ExplorerError as err:
        ref = None
        notes.append(f"the pasted text is not in the link ({err})")
    if ref:
        parts.append(ref)
    params: dict[str, str] = {}
    if parts:
        params["corpus"] = ",".join(parts)
    if seed is not None:
        params["seed"] = seed
        base_config = SEED_REPLAYS[seed].config()
    else:
        name = preset or (base if base in PRESETS else state.DEFAULT_PRESET)
        params["preset"] = name
        base_config = corpus_config(name)
        params.update(_settings_params(config, base_config))
    if config.num_merges is not None:
        params["merges"] = str(config.num_merges)
    elif config.vocab_size is not None:
        params["vocab"] = str(config.vocab_size)
    else:
        params["merges"] = "all"
    if config.tie_break != base_config.tie_break:
        params["tie"] = config.tie_break
    if big:
        params["big"] = big
    params["step"] = str(step)
    return params, ("; ".join(notes) if notes else None)


def stored_parts(
    names: tuple[str, ...], problems: list[str], *, again: str | None = None
) -> tuple[list[str], list[tuple[Blob, str | None]], str]:
    """What a link's corpus names: (bundled sample names, stored uploads with their decoding, the
    pasted text). A stored file that is gone is left out and said in ``problems`` (with what to
    do: ``again``, or upload or paste it again)."""
    samples, restored, pasted = [], [], ""
    for name in names:
        ref = parse_corpus_ref(name)
        if ref is None:
            samples.append(name)
            continue
        kind, digest, decoding = ref
        blob = storage.get(digest)
        if blob is None:
            problems.append(
                storage.gone(
                    "an uploaded file" if kind == "upload" else "the pasted text",
                    digest,
                    again=again or ("upload it again" if kind == "upload" else "paste it again"),
                )
            )
            continue
        if kind == "pasted":
            pasted = blob.data.decode("utf-8", "replace")
        else:
            restored.append((blob, decoding))
    return samples, restored, pasted


def _restore_corpus(names: tuple[str, ...], problems: list[str]) -> state.CorpusChoice:
    """The corpus a link names, its stored files read back (a missing one is left out, said)."""
    samples, restored, pasted = stored_parts(names, problems)
    uploads = restore_uploads(restored)  # the Corpus page lists them
    choice = state.CorpusChoice(
        tuple(samples), tuple((n, t) for n, t, _ in uploads), pasted, tuple(r for _, _, r in uploads if r is not None)
    )
    if not choice.texts():
        problems.append("nothing of its corpus is left, so it opens on the default corpus")
        choice = state.CorpusChoice()
    return choice


def _apply_training(link: Link, problems: list[str]) -> None:
    choice = _restore_corpus(link.corpus, problems)
    state.set_corpus_choice(choice)
    state.set_config(link.preset, link.config, seed=link.seed)
    if link.big:
        state.choose_big_mode(link.big)
    state.forget_widgets("w_cfg_", "w_size", "w_preset", "w_samples", "w_pasted")
    st.session_state["w_preset"] = link.preset or link.base
    if link.step:
        state.open_at_step(link.step)


def open_link(page: PageApply | None = None) -> None:
    """Call at the top of every page. On a session's first run (a shared link opens, or a
    refresh) rebuild it from the URL: the corpus, training and step, then the page's own view
    (``page`` reads its params and returns what it had to leave out). What a link could not give
    is said in one line; the nearest valid view opens."""
    # one container on every run, so the elements under it keep their places (an expander
    # opened under a one-off message would otherwise be drawn anew, closed, on the next run)
    notes = st.container()
    with notes:
        storage.show_notice()
    if st.session_state.get(_CHECKED):
        return
    st.session_state[_CHECKED] = True
    params = st.query_params.to_dict()
    link, problems = parse_link(params, samples=data.sample_names())
    try:
        if link is not None:
            _apply_training(link, problems)
        if page is not None:
            problems += page(params)
    except ExplorerError as err:  # the store could not be read: the default view
        problems.append(str(err))
    if problems:
        notes.warning(
            "This link cannot be opened as it is: "
            + render.md_text("; ".join(problems))
            + ". It shows the nearest view it allows."
        )


def training_params() -> tuple[dict[str, str], str | None]:
    """The session's corpus and training as URL params, at the step shown (or the one a link
    asked for while the trainer is not built yet)."""
    preset, config = state.current_config()
    live: state.Live | None = st.session_state.get("live")
    pending = state.pending_step()
    step = pending if pending is not None else (live.view if live is not None else 0)
    return link_params(
        state.corpus_choice(),
        preset,
        config,
        step,
        state.replayed_seed(),
        base=st.session_state.get("w_preset"),
        big=state.big_mode(),
    )


def keep_current(page: dict[str, str] | None = None, *, note: bool = False) -> None:
    """Write the view into the URL (every page calls this as the user works); ``note``: say
    under it what a link leaves out."""
    live: state.Live | None = st.session_state.get("live")
    params, left_out = training_params()
    params.update(page or {})
    params.update(projector.link_params())
    # not while playing: a URL change stops the fragment's timer (the URL catches up on Pause)
    if not (live is not None and live.playing) and st.query_params.to_dict() != params:
        st.query_params.from_dict(params)
    if note and left_out:
        st.caption(render.md_text(f"Link to this view: {left_out}."))
