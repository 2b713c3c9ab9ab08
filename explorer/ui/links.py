"""Shareable links to the Train page: the URL carries what rebuilds the view.

``/Train?corpus=NAME[,NAME...]&preset=P&merges=N&step=K`` (``vocab=N`` instead of ``merges``
for a stop at a vocabulary size, ``tie=T`` when not the preset's tie-break, ``seed=S`` for a
seed notebook replayed with its own settings). Opening such a link, or refreshing the page,
trains to step K and shows it. Uploaded and pasted text never goes into a URL.
"""

from __future__ import annotations

from typing import NamedTuple

import streamlit as st

from ..config import PRESETS, SEED_REPLAYS, TIE_BREAKS, TrainerConfig, corpus_config
from ..errors import ConfigError, ExplorerError
from . import data, render, state

__all__ = ["Link", "parse_link", "link_params", "apply_link", "keep_link_current"]

_MAX_STEP = 200_000
_CHECKED = "link_checked"  # the URL's params were read once, on the session's first Train run


class Link(NamedTuple):
    corpus: tuple[str, ...]
    preset: str
    config: TrainerConfig
    step: int
    seed: str | None = None


def _count(params: dict[str, str], key: str, *, low: int) -> int | None:
    raw = params.get(key)
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 7) or not low <= int(raw) <= _MAX_STEP:
        raise ConfigError(f"{key}={raw!r} in the link is not a whole number from {low} to {_MAX_STEP:,}")
    return int(raw)


def parse_link(params: dict[str, str], *, samples: list[str]) -> Link | None:
    """The state a link asks for (None when it asks for nothing); ConfigError says what is wrong.

    >>> link = parse_link({"corpus": "a.txt", "preset": "sennrich", "step": "3"}, samples=["a.txt"])
    >>> link.corpus, link.preset, link.config.num_merges, link.step
    (('a.txt',), 'sennrich', 1000, 3)
    >>> parse_link({"corpus": "b.txt"}, samples=["a.txt"])
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: the link names a corpus that is not bundled: 'b.txt'
    """
    if not any(k in params for k in ("corpus", "preset", "seed", "step", "merges", "vocab", "tie")):
        return None
    seed = params.get("seed")
    if seed is not None and seed not in SEED_REPLAYS:
        raise ConfigError(f"the link names an unknown seed notebook {seed!r}; choose one of {', '.join(SEED_REPLAYS)}")
    names = tuple(n for n in params.get("corpus", "").split(",") if n)
    if seed is not None:
        names = names or (SEED_REPLAYS[seed].corpus,)
    missing = [n for n in names if n not in samples]
    if missing:
        raise ConfigError(f"the link names a corpus that is not bundled: {', '.join(map(repr, missing))}")
    preset = SEED_REPLAYS[seed].preset if seed is not None else params.get("preset", state.DEFAULT_PRESET)
    if preset not in PRESETS:
        raise ConfigError(f"the link names an unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    merges, vocab = _count(params, "merges", low=0), _count(params, "vocab", low=1)
    if merges is not None and vocab is not None:
        raise ConfigError("the link gives both merges and vocab: give one")
    sized: dict = {}
    if merges is not None:
        sized = {"num_merges": merges, "vocab_size": None}
    elif vocab is not None:
        sized = {"num_merges": None, "vocab_size": vocab}
    tie = params.get("tie")
    if tie is not None:
        if tie not in TIE_BREAKS:
            raise ConfigError(f"the link names an unknown tie-break {tie!r}; choose one of {', '.join(TIE_BREAKS)}")
        sized["tie_break"] = tie
    if seed is not None:
        config = SEED_REPLAYS[seed].config(**sized)
    else:
        config = corpus_config(preset).replace(**sized).validate()
    return Link(names or (state.DEFAULT_SAMPLE,), preset, config, _count(params, "step", low=0) or 0, seed)


def link_params(choice: state.CorpusChoice, preset: str | None, config: TrainerConfig, step: int,
                seed: str | None) -> tuple[dict[str, str], str | None]:
    """(the URL's params for this view, a note on what the link leaves out or None).

    >>> params, note = link_params(state.CorpusChoice(samples=("a.txt",)), "gpt2", corpus_config("gpt2"), 5, None)
    >>> params, note
    ({'corpus': 'a.txt', 'preset': 'gpt2', 'merges': '1000', 'step': '5'}, None)
    """
    notes = []
    params: dict[str, str] = {}
    if choice.samples:
        params["corpus"] = ",".join(choice.samples)
    if choice.uploads or choice.pasted.strip():
        notes.append("uploaded and pasted text are not put in a link: it opens on the bundled texts only")
    if seed is not None:
        params["seed"] = seed
        base = SEED_REPLAYS[seed].config()
    else:
        params["preset"] = preset or state.DEFAULT_PRESET
        base = corpus_config(preset or state.DEFAULT_PRESET)
        if preset is None:
            notes.append("custom settings beyond the stop rule and tie-break are not in the link")
    if config.num_merges is not None:
        params["merges"] = str(config.num_merges)
    elif config.vocab_size is not None:
        params["vocab"] = str(config.vocab_size)
    if config.tie_break != base.tie_break:
        params["tie"] = config.tie_break
    params["step"] = str(step)
    return params, ("; ".join(notes) if notes else None)


def apply_link() -> None:
    """Rebuild the session from the URL's params on its first visit to the page (a shared link
    opens, or a refresh, is a new session); a bad link gets a message and changes nothing.

    Only the first visit: later the URL only ever holds what this session wrote, and a rerun
    can carry it one step late (the browser updates it after the run that wrote it)."""
    if st.session_state.get(_CHECKED):
        return
    st.session_state[_CHECKED] = True
    params = st.query_params.to_dict()
    try:
        link = parse_link(params, samples=data.sample_names())
    except ExplorerError as err:
        st.error(f"This link cannot be opened: {render.md_text(str(err))}")
        return
    if link is None:
        return
    choice = state.CorpusChoice(samples=link.corpus)
    if (state.corpus_choice(), *state.current_config(), state.replayed_seed()) != (choice, link.preset, link.config, link.seed):
        state.set_corpus_choice(choice)
        state.set_config(link.preset, link.config, seed=link.seed)
        state.forget_widgets("w_cfg_", "w_size", "w_preset", "w_samples", "w_pasted")
    with st.spinner(f"Training to step {link.step:,}…"):
        live = state.live()
        if live.trainer is not None:
            with live.lock:
                live.playing = False
                live.view = min(live.view, live.trained)
                live.forward(link.step - live.view)
            st.session_state["view_slider"] = live.view


def keep_link_current(live: state.Live) -> None:
    """Write the view into the URL (called as the user steps), and say what a link leaves out."""
    preset, config = state.current_config()
    params, note = link_params(state.corpus_choice(), preset, config, live.view, state.replayed_seed())
    # not while playing: a URL change stops the fragment's timer (the URL catches up on Pause)
    if not live.playing and st.query_params.to_dict() != params:
        st.query_params.from_dict(params)
    if note:
        st.caption(f"Link to this view: {note}.")
