"""Widgets that edit a TrainerConfig: the preset selector and an "advanced" form with every
dimension. Widget values live in session state under ``w_`` keys (never passed as ``value=``),
so they survive page switches without Streamlit's "set twice" warning."""

from __future__ import annotations

import streamlit as st

from ..bpe.config import (
    ALPHABET_ORDERS,
    ALPHABETS,
    PRESETS,
    SEED_REPLAYS,
    SPECIALS_IN_TEXT,
    TIE_BREAKS,
    TrainerConfig,
    char_level_choices,
    corpus_config,
)
from ..errors import ExplorerError
from ..stages.markers import MARKERS
from ..stages.normalizers import NORMALIZERS
from ..stages.pretokenizers import PRETOKENIZERS, SEQUENCE_MODES
from ..stages.units import UNITS
from . import render, state

PAIRS_SHOWN = [5, 10, 20, state.RECORDED_PAIRS]  # rows of the pair table a view may ask for

__all__ = [
    "ADVANCED_OPEN",
    "preset_selector",
    "size_input",
    "advanced_form",
    "load_into_widgets",
    "seed_replay_picker",
    "size_label",
    "sidebar",
    "gpt2_chars_toggle",
]

ADVANCED_OPEN = "w_advanced_open"  # whether the "Advanced settings" expander is open (kept across pages)
_SIZE_ERROR = "size_error"  # why the last size typed in the sidebar was refused (shown once)

# field -> (label, name -> what it does); the stages' maps follow their registries, so an entry
# added there is offered here when the form is next drawn
_CHOICES = {
    "normalizer": ("Normalizer", NORMALIZERS),
    "pretokenizer": ("Pre-tokenizer", PRETOKENIZERS),
    "sequences": ("Sequences", SEQUENCE_MODES),
    "unit": ("Unit", UNITS),
    "marker": ("Word marker", MARKERS),
    "alphabet": ("Alphabet", ALPHABETS),
    "alphabet_order": ("Alphabet order (ids)", ALPHABET_ORDERS),
    "tie_break": ("Tie-break", TIE_BREAKS),
    "specials_in_text": ("Special tokens found in the corpus", SPECIALS_IN_TEXT),
}


def _key(field: str) -> str:
    return f"w_cfg_{field}"


def load_into_widgets(config: TrainerConfig) -> None:
    """Show a config in the advanced form's widgets (called before they are drawn)."""
    for field in _CHOICES:
        st.session_state[_key(field)] = getattr(config, field)
    st.session_state[_key("pattern")] = config.pattern or ""
    st.session_state[_key("special")] = ", ".join(config.special_tokens)
    st.session_state[_key("stop")] = (
        "vocab size"
        if config.vocab_size is not None
        else ("merges" if config.num_merges is not None else "until no pair is left")
    )
    st.session_state[_key("amount")] = (
        config.vocab_size
        if config.vocab_size is not None
        else (config.num_merges if config.num_merges is not None else 1000)
    )
    st.session_state[_key("min_frequency")] = config.min_frequency
    st.session_state[_key("reuse_ids")] = config.reuse_ids
    st.session_state["w_size"] = _size_of(config)


def _size_of(config: TrainerConfig) -> int:
    return config.num_merges if config.num_merges is not None else (config.vocab_size or 0)


def size_label(config: TrainerConfig) -> str:
    """The stop rule in a few words, for the one-line summary.

    >>> from explorer import corpus_config, make_config
    >>> size_label(corpus_config("gpt2")), size_label(make_config("gpt2"))
    ('1,000 merges', 'vocabulary 100')
    """
    if config.num_merges is not None:
        return f"{config.num_merges:,} merges"
    if config.vocab_size is not None:
        return f"vocabulary {config.vocab_size:,}"
    return "until no pair is left"


def _on_preset() -> None:
    name = st.session_state["w_preset"]
    config = corpus_config(name)  # choosing a preset ends a seed replay
    state.set_config(name, config)
    load_into_widgets(config)
    st.session_state["w_seed"] = "—"


def preset_selector() -> None:
    """The preset picker; choosing one loads its settings (and restarts training)."""
    preset, config = state.current_config()
    if "w_preset" not in st.session_state:
        st.session_state["w_preset"] = preset or state.DEFAULT_PRESET
    if _key("unit") not in st.session_state:
        load_into_widgets(config)
    st.selectbox(
        "Preset",
        list(PRESETS),
        key="w_preset",
        format_func=lambda name: name + (f" (seed {PRESETS[name].seed})" if PRESETS[name].seed else ""),
        on_change=_on_preset,
        help="Each preset follows the conventions of one seed notebook; the advanced settings below override any dimension.",
    )
    if preset is None:
        st.caption("Settings customised in the advanced panel.")
    else:
        st.caption(PRESETS[preset].description)


def _on_size() -> None:
    preset, config = state.current_config()
    n = int(st.session_state["w_size"])
    field = "num_merges" if config.num_merges is not None or config.vocab_size is None else "vocab_size"
    try:
        changed = config.replace(**{field: n})
    except ExplorerError as err:
        st.session_state["w_size"] = _size_of(config)
        st.session_state[_SIZE_ERROR] = f"{n:,} cannot be used: {err}. Kept {_size_of(config):,}."
        return
    state.set_config(preset, changed, seed=state.replayed_seed())
    load_into_widgets(changed)


def size_input() -> None:
    """The merge budget (or the vocabulary size, for a notebook that stops there): shown and
    editable; a change restarts training."""
    _, config = state.current_config()
    state.widget_default("w_size", _size_of(config))
    by_vocab = config.num_merges is None and config.vocab_size is not None
    st.number_input(
        "Vocabulary size" if by_vocab else "Merges",
        step=100,
        key="w_size",
        on_change=_on_size,
        help="Training stops here, or sooner when no pair is left to merge. Changing it restarts training.",
    )
    if _SIZE_ERROR in st.session_state:
        st.error(render.md_text(st.session_state.pop(_SIZE_ERROR)))


def gpt2_chars_toggle() -> None:
    """Byte-level tokens as GPT-2's stand-in characters (``Ġt``), as seed 003 and the files
    write them, instead of the text their bytes spell (a view setting: training is untouched)."""
    _, config = state.current_config()
    if config.unit == "byte":
        st.toggle(
            "Show byte-level tokens as GPT-2 characters (Ġ = space)",
            key=state.GPT2_CHARS,
            help="Off: a token shows the text its bytes spell, in any script, and bytes that are only part "
            "of a character in hex. On: the characters GPT-2's files (and seed 003) write, one per byte.",
        )


def sidebar() -> None:
    """The Train page's settings, folded into the sidebar so the main area keeps the controls,
    the explanation and the pair table on one screen."""
    with st.sidebar:
        preset_selector()
        size_input()
        seed_replay_picker()
        # drawn only while open (a rerun when it opens): its sixteen widgets cost every first visit
        # and every rerun of the Train page the browser's time for nothing while it is shut
        advanced = st.expander("Advanced settings", key=ADVANCED_OPEN, on_change="rerun")
        with advanced:
            if advanced.open:
                advanced_form()
        st.caption("View (nothing is retrained)")
        state.widget_default(state.TOP_K, state.TOP_K_DEFAULT)
        st.selectbox("Pairs shown", PAIRS_SHOWN, key=state.TOP_K, help="Rows of the pair-count table.")
        gpt2_chars_toggle()


def _config_from_widgets() -> TrainerConfig:
    ss = st.session_state
    stop = ss[_key("stop")]
    amount = int(ss[_key("amount")])
    specials = tuple(t.strip() for t in ss[_key("special")].split(",") if t.strip())
    _, current = state.current_config()
    values = {field: ss[_key(field)] for field in _CHOICES}
    if values["unit"] == "char" and current.unit == "byte":
        # byte-only choices cannot follow a switch to characters: take the char-level ones
        values = char_level_choices(values)
    return current.replace(
        **values,
        # the regex box keeps its text when another pre-tokenizer is chosen; only "regex" uses it
        pattern=(ss[_key("pattern")] or None) if values["pretokenizer"] == "regex" else None,
        special_tokens=specials,
        vocab_size=amount if stop == "vocab size" else None,
        num_merges=amount if stop == "merges" else None,
        min_frequency=int(ss[_key("min_frequency")]),
        reuse_ids=bool(ss[_key("reuse_ids")]),
    )


def advanced_form() -> None:
    """Every configuration dimension; "Apply" restarts training with them (or says what is wrong)."""
    with st.form("w_advanced_form", border=False):
        for field, (label, options) in _CHOICES.items():
            # the short name in the box (never cut off in the sidebar), what each does in the help
            st.selectbox(label, list(options), key=_key(field), help=render.choices_help(options))
        st.text_input(
            "Custom regex (for the 'regex' pre-tokenizer)", key=_key("pattern"), placeholder=r"\w+|[^\w\s]+|\s+"
        )
        st.text_input("Special tokens (comma-separated, given the first ids)", key=_key("special"))
        st.radio("Stop at", ["vocab size", "merges", "until no pair is left"], key=_key("stop"), horizontal=True)
        # no min/max here: an out-of-range number reaches the check below and gets its message
        st.number_input("Vocab size / merges", step=100, key=_key("amount"))
        st.number_input(
            "Min frequency", key=_key("min_frequency"), help="Stop when the best pair occurs fewer times than this."
        )
        st.checkbox(
            "Reuse the id when a merge makes a string that already is a token (HF); off: every merge mints an id (minbpe)",
            key=_key("reuse_ids"),
        )
        submitted = st.form_submit_button("Apply and restart training", type="primary")
    if submitted:
        try:
            config = _config_from_widgets()
        except ExplorerError as err:
            st.error(f"These settings cannot be used: {render.md_text(str(err))}")
            return
        preset = st.session_state.get("w_preset")
        seed = state.replayed_seed()
        same = (
            preset in PRESETS
            and state.preset_config(preset).replace(vocab_size=config.vocab_size, num_merges=config.num_merges)
            == config
        )
        state.set_config(preset if same else None, config, seed=seed if same else None)
        st.rerun()


def _replay() -> None:
    seed = st.session_state["w_seed"]
    if seed not in SEED_REPLAYS:
        return
    state.replay_seed(seed)
    _, config = state.current_config()
    load_into_widgets(config)
    st.session_state["w_preset"] = SEED_REPLAYS[seed].preset
    # the Corpus page's widgets must show the seed's corpus too, or visiting it would undo this
    st.session_state["w_samples"] = [SEED_REPLAYS[seed].corpus]
    st.session_state["w_pasted"] = ""


def seed_replay_picker() -> None:
    """Load a seed notebook's own corpus and settings, to replay its merges."""
    seed = st.selectbox(
        "Replay a seed notebook",
        ["—", *SEED_REPLAYS],
        key="w_seed",
        format_func=lambda s: s if s == "—" else f"seed {s} ({SEED_REPLAYS[s].preset})",
        help=render.choices_help({f"seed {k}": r.title for k, r in SEED_REPLAYS.items()}),
    )
    if seed in SEED_REPLAYS:
        st.caption(render.md_text(SEED_REPLAYS[seed].title))
    st.button("Load this notebook's corpus and settings", key="replay", disabled=seed == "—", on_click=_replay)
    replaying = state.replayed_seed()
    if replaying is not None:
        _, config = state.current_config()
        note = f"Replaying seed {replaying} with the notebook's own settings ({size_label(config)})."
        if config.unit == "byte" and config.alphabet == "present":
            note += (
                " As in the notebook, the alphabet is only the bytes present in its corpus: any other byte "
                "becomes <unk>. Choose a preset to train with all 256 bytes."
            )
        st.caption(render.md_text(note))
