"""The Playground page's panels: pick a text and tokenizers, see the tokens, ask why a piece is
split as it is, and put character-level and byte-level BPE side by side."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd
import streamlit as st

from ..analysis.lineage import keyword_in_context, lineage
from ..analysis.text import round_trip, sample_segmentations
from ..bpe.tokenizer import DECODE_ERRORS
from ..errors import ExplorerError
from ..formats.pretrained import PRETRAINED
from . import catalog, charts, data, links, projector, render, state, storage
from . import playground_model as model
from .catalog import Entry
from .playground_model import (
    CHIP_LIMIT,
    DECODE_ROWS,
    DROPOUT_CHARS,
    EXAMPLE_BUTTONS,
    EXAMPLES,
    ID_LIMIT,
    MAX_CHARS,
    TWIN_EXAMPLES,
    VIEWS,
    WHY_CHARS,
    Encoded,
    Keys,
    Session,
)

__all__ = [
    "EXAMPLES",
    "Keys",
    "Encoded",
    "text_input",
    "choose_tokenizers",
    "rewind_inputs",
    "compare_panel",
    "details_panel",
    "display_options",
    "dropout_panel",
    "length_histogram",
    "shortest_panel",
    "why_panel",
    "char_byte_panel",
    "decode_panel",
    "view_picker",
    "link_params",
    "apply_link",
]


def _set_example(name: str) -> None:
    st.session_state[Keys.TEXT] = EXAMPLES[name]


def text_input() -> str:
    """The text box, under one row of example buttons."""
    state.widget_default(Keys.TEXT, EXAMPLES["English prose"])
    row = st.container(horizontal=True, gap="small", vertical_alignment="center")
    row.caption("Examples:")
    for i, name in enumerate(EXAMPLES):
        row.button(EXAMPLE_BUTTONS[name], key=Keys.example(i), on_click=_set_example, args=(name,), help=name)
    return st.text_area(
        "Text to encode",
        key=Keys.TEXT,
        height=86,
        max_chars=MAX_CHARS,
        label_visibility="collapsed",
        placeholder="Type or paste any text",
        help="Press Ctrl+Enter (or click outside the box) to encode.",
    )


def choose_tokenizers() -> list[Entry]:
    """Up to four of the catalog's tokenizers: the session's trained one (as of merge k), the
    bundled ones and the ones imported in this session, each of these whole or rewound to one
    of its merges (the Rewind button beside the picker)."""
    options = catalog.keys()
    state.widget_default(Keys.TOKENIZERS, [catalog.TRAINED, "cl100k_base"])
    # an imported tokenizer let go (a newer one took its place) leaves the selection
    st.session_state[Keys.TOKENIZERS] = [k for k in st.session_state[Keys.TOKENIZERS] if k in options]
    # labels looked up, not computed: a format_func may be called outside the session's run
    labels = {k: catalog.label(k) for k in options}
    pick, opts, back = st.columns([4, 1, 1], vertical_alignment="bottom")
    keys = pick.multiselect(
        "Tokenizers (up to four)",
        options,
        key=Keys.TOKENIZERS,
        format_func=labels.__getitem__,
        max_selections=4,
        label_visibility="collapsed",
        placeholder="Choose up to four tokenizers",
        help="trained in this session: the Train page's tokenizer, as of merge k  \n"
        + catalog.picker_help()
        + "  \nRewind: a table or an imported tokenizer as of one of its merges.",
    )
    with opts.popover("Options", width="stretch"):
        display_options()
    wholes = {key: _whole_choice(key) for key in keys if key != catalog.TRAINED}
    with back.popover("Rewind", width="stretch", help="A table or an imported tokenizer as of its merge k"):
        at = rewind_inputs([e for e in wholes.values() if e is not None])
    out = []
    for key in keys:
        if key == catalog.TRAINED:
            entry = _trained_choice()
        elif at.get(key) is None:
            entry = wholes[key]
        else:
            with st.spinner(f"Rewinding {catalog.label(key)} to merge {at[key]:,} (once per server)…"):
                entry = catalog.get(catalog.rewound_key(key, at[key]))
        if entry is not None:
            out.append(entry)
            note = catalog.rewind_note(entry)
            if note:
                st.caption(render.md_text(note) + ".")
    return out


def _whole_choice(key: str) -> Entry | None:
    """A table or an import of the picker, whole."""
    if key in PRETRAINED:
        with st.spinner(f"Loading {key}'s table (once per server)…"):
            return catalog.get(key)
    return catalog.get(key)  # keyed by content: a re-import resets the pickers keyed by it


def rewind_inputs(entries: list[Entry]) -> dict[str, int | None]:
    """One "as of merge" box per table or import of the picker that has merges (empty: the whole
    of it); the merge each is rewound to, by its key."""
    ss = st.session_state
    rewindable = [e for e in entries if e.tokenizer.num_merges]
    if not rewindable:
        st.caption(
            "Choose a bundled table or an imported tokenizer above to see it as of one of its merges "
            "(the session's own tokenizer has its slider under the picker)."
        )
        return {}
    st.caption(
        "Each tokenizer as of its merge k: its first k merges only (a table's first 256 + k ranks). "
        "Empty: the whole of it."
    )
    out: dict[str, int | None] = {}
    for entry in rewindable:
        n = entry.tokenizer.num_merges
        widget = Keys.REWIND_OF + entry.key
        if widget not in ss or model.rewind_at(ss[widget], n) is None:
            ss[widget] = None  # the whole of it
        out[entry.key] = st.number_input(
            f"{render.md_text(entry.label)}: as of merge",
            min_value=0,
            max_value=n,
            value=None,  # empty: the whole of it (a None default beside session state draws no warning)
            step=model.rewind_step(n),
            key=widget,
            placeholder=f"all {n:,} merges",
        )
    return out


def _trained_choice() -> Entry | None:
    with st.spinner("Counting the corpus's words…"):
        live = state.live()
    if live.oversize is not None:
        st.info("The corpus is over the server's step-through limit: choose on the Train page how to train on it.")
        return None
    if live.trainer is None:
        st.warning(f"The session's trainer could not start: {render.md_text(live.error or '')}")
        return None
    k = live.trained
    if live.trained:
        state.widget_default(Keys.K, live.trained)
        if st.session_state[Keys.K] > live.trained:
            st.session_state[Keys.K] = live.trained
        k = st.slider(
            "Trained tokenizer as of merge k",
            0,
            live.trained,
            key=Keys.K,
            help="The session's tokenizer after its first k merges: slide to watch the same text "
            "compress as the vocabulary grows.",
        )
    else:
        st.caption(
            "The session's tokenizer has no merges yet: press Step or Run to end on the Train page. "
            "Until then it cuts the text into its base symbols."
        )
    return catalog.get(catalog.trained_key(k))


def display_options() -> None:
    """How tokens are drawn (view settings): whitespace marks and special tokens."""
    state.widget_default(Keys.WHITESPACE, True)
    st.toggle("Show whitespace (· space, ↵ newline, → tab)", key=Keys.WHITESPACE)
    st.toggle(
        "Allow special tokens (e.g. <|endoftext|> as one id)",
        key=Keys.SPECIAL,
        help="Off: special-token text is encoded as plain text, as tiktoken's encode_ordinary does.",
    )


def _encode(choice: Entry, text: str, allow_special: bool) -> Encoded | None:
    try:
        return model.encode(choice, text, allow_special=allow_special)
    except ExplorerError as err:
        st.error(render.md_text(f"{choice.label}: {err}"))
        return None


_SIDE_BY_SIDE_CHARS = 280  # two tokenizers on a text this short: their chips in two columns


def compare_panel(choices: list[Entry], text: str, *, allow_special: bool, show_ws: bool) -> list[Encoded]:
    """The answer first: one row per tokenizer (tokens, characters and bytes per token, unknown
    symbols, round trip, and how many times the fewest tokens it takes), then each one's chips
    in a wrapped strip (two side by side when the text is short)."""
    encoded = [e for e in (_encode(c, text, allow_special) for c in choices) if e is not None]
    if not encoded:
        return []
    st.html(render.comparison_table(model.comparison_rows(encoded)))
    strips = [
        render.token_strip(
            e.choice.short,
            f"{e.stats.tokens:,} tokens",
            render.encoded_chips(e.choice.tokenizer, e.ids, show_ws=show_ws, limit=CHIP_LIMIT),
            more=len(e.ids) - CHIP_LIMIT,
        )
        for e in encoded
    ]
    if len(strips) == 2 and len(text) <= _SIDE_BY_SIDE_CHARS:
        for column, strip in zip(st.columns(2), strips):
            column.html(strip)
    else:
        st.html("".join(strips))
    return encoded


def details_panel(encoded: list[Encoded]) -> None:
    """Each tokenizer's ids and round trip, one tab each, folded under the comparison."""
    if not encoded:
        return
    # drawn only while open: the ids' code blocks cost the browser a third of a second to lay out
    box = st.expander("Token ids and round trip", key=Keys.DETAILS, on_change="rerun")
    if not box.open:
        return
    with box:
        for tab, e in zip(st.tabs([e.choice.short for e in encoded]), encoded):
            with tab:
                _details(e)


def _details(e: Encoded) -> None:
    tok, ids, trip = e.choice.tokenizer, e.ids, e.trip
    st.caption(render.md_text(e.choice.label))
    st.code(str(tok.shown_ids(ids[:ID_LIMIT])), language=None, wrap_lines=True)
    if len(ids) > ID_LIMIT:
        st.caption(f"The first {ID_LIMIT:,} of {len(ids):,} ids.")
    if trip.exact:
        st.caption(model.trip_sentence(e))
    elif trip.unknown:
        st.warning(model.trip_sentence(e))
        st.dataframe(pd.DataFrame(model.unknown_rows(tok, trip.unknown)), hide_index=True)
    else:
        st.warning(model.trip_sentence(e))
        st.text(trip.decoded[:2000])


def dropout_panel(choices: list[Entry], text: str, *, show_ws: bool) -> None:
    """BPE-dropout: one sampled segmentation and the frequency of distinct segmentations."""
    box = st.expander("BPE-dropout: sample segmentations", key=Keys.DROPOUT, on_change="rerun")
    if not box.open:  # drawn only while open: its picker, slider and sample cost every first visit
        return
    with box:
        names = [c.label for c in choices]
        at = st.selectbox("Tokenizer", range(len(choices)), format_func=names.__getitem__, key=Keys.DROPOUT_TOKENIZER)
        choice = choices[at if at is not None and at < len(choices) else 0]
        c1, c2, c3 = st.columns(3)
        state.widget_default(Keys.DROPOUT_P, 0.1)
        p = c1.slider(
            "Dropout p",
            0.0,
            1.0,
            step=0.05,
            key=Keys.DROPOUT_P,
            help="Each applicable merge is skipped with probability p (Provilkov et al. 2020).",
        )
        state.widget_default(Keys.DROPOUT_SEED, 0)
        seed = int(c2.number_input("Seed", 0, 1_000_000, key=Keys.DROPOUT_SEED))
        state.widget_default(Keys.DROPOUT_SAMPLES, 50)
        n = int(c3.number_input("Samples", 1, 500, key=Keys.DROPOUT_SAMPLES))
        sample = text[:DROPOUT_CHARS]
        if len(text) > len(sample):
            st.caption(f"Dropout samples use the first {DROPOUT_CHARS:,} characters.")
        tok = choice.tokenizer
        try:  # a tokenizer with no dropout (PickyBPE's) says why
            ids = tok.encode(sample, dropout=p, seed=seed)
        except ExplorerError as err:
            st.error(render.md_text(str(err)))
            return
        st.html(render.encoded_chips(tok, ids, show_ws=show_ws, limit=CHIP_LIMIT))
        if st.button(f"Sample {n} segmentations", key=Keys.DROPOUT_SAMPLE):
            counts = sample_segmentations(tok, sample, dropout=p, samples=n, seed=seed)
            st.caption(model.dropout_caption(counts, samples=n, seed=seed, plain=len(tok.encode(sample))))
            table, chart = st.columns([3, 2])
            table.dataframe(pd.DataFrame(model.segmentation_rows(tok, counts)), hide_index=True, width="stretch")
            chart.altair_chart(projector.altair_chart(length_histogram(counts)), width="stretch")


def length_histogram(counts: Sequence[tuple[Sequence[int], int]]) -> alt.Chart:
    """Samples by their number of tokens: a bar per length, over every sample (not only the
    distinct segmentations the table lists).

    >>> chart = length_histogram([((1, 2), 3), ((1, 2, 3), 1), ((4, 5), 2)])
    >>> chart.to_dict()["mark"]["type"], chart.data.to_dict("records")
    ('bar', [{'tokens': 2, 'samples': 5}, {'tokens': 3, 'samples': 1}])
    """
    frame = pd.DataFrame(model.length_counts(counts), columns=["tokens", "samples"])
    return (
        alt.Chart(frame, title="Segmentation lengths")
        .mark_bar(color="#2563eb")
        .encode(
            x=alt.X("tokens:O", title="tokens in the sample"),
            y=alt.Y("samples:Q", title="samples"),
            tooltip=[alt.Tooltip("tokens:Q", title="tokens"), alt.Tooltip("samples:Q", title="samples")],
        )
        .properties(height=240)
    )


def shortest_panel(choices: list[Entry], text: str, *, show_ws: bool) -> None:
    """BPE's split and the fewest tokens the same vocabulary allows, one above the other, with
    the pieces where BPE's greedy merges spend more outlined and listed."""
    box = st.expander("The fewest tokens: BPE's split against the shortest", key=Keys.SHORTEST, on_change="rerun")
    if not box.open:  # drawn only while open: a second pass over the text's pieces
        return
    with box:
        names = [c.label for c in choices]
        at = st.selectbox("Tokenizer", range(len(choices)), format_func=names.__getitem__, key=Keys.SHORTEST_TOKENIZER)
        tok = choices[at if at is not None and at < len(choices) else 0].tokenizer
        try:
            found = model.shortest(tok, text)
        except ExplorerError as err:
            st.error(render.md_text(str(err)))
            return
        st.caption(found.caption)
        strips = [
            render.token_strip(
                name,
                f"{len(ids):,} tokens",
                render.encoded_chips(
                    tok, ids, show_ws=show_ws, limit=CHIP_LIMIT, highlight=model.positions(found.gaps, shortest=fewest)
                ),
                more=len(ids) - CHIP_LIMIT,
            )
            for name, ids, fewest in (("BPE's merges", found.bpe, False), ("The fewest tokens", found.fewest, True))
        ]
        st.html("".join(strips))
        if not found.rows:
            st.caption("BPE's merges already cut every piece of this text into the fewest tokens.")
            return
        st.dataframe(pd.DataFrame(found.rows), hide_index=True, width="stretch")


# ---- why this split ----------------------------------------------------------------------------
def _forget_piece() -> None:
    """Another tokenizer cuts other pieces: start again from its most merged piece."""
    st.session_state.pop(Keys.WHY_PIECE, None)


def why_panel(choices: list[Entry], text: str) -> None:
    """The encode trace of one piece, and the lineage of one token."""
    names = [c.label for c in choices]
    at = st.selectbox(
        "Tokenizer", range(len(choices)), format_func=names.__getitem__, key=Keys.WHY_TOKENIZER, on_change=_forget_piece
    )
    choice = choices[at if at is not None and at < len(choices) else 0]
    tok = choice.tokenizer
    try:
        pieces = tok.encode_pieces(text[:WHY_CHARS])
    except ExplorerError as err:
        st.error(render.md_text(str(err)))
        return
    if not pieces:
        st.info("The text has no pieces to explain.")
        return
    default = model.default_piece(tok, pieces)
    state.widget_default(Keys.WHY_PIECE, default)
    if st.session_state[Keys.WHY_PIECE] >= len(pieces):
        st.session_state[Keys.WHY_PIECE] = default
    i = st.selectbox(
        "Piece (what the pre-tokenizer cut; merges never cross it)",
        range(len(pieces)),
        format_func=lambda i: model.piece_label(pieces, i),
        key=Keys.WHY_PIECE,
    )
    piece = pieces[i]
    st.html(render.encoded_chips(tok, list(piece.ids)))
    trace_table(choice, piece.text)
    st.subheader("Lineage of a token")
    token_ids = model.piece_tokens(tok, piece)
    j = st.selectbox(
        "Token",
        range(len(token_ids)),
        key=Keys.why_token(choice.key, i),
        format_func=lambda j: model.token_option(tok, token_ids[j]),
    )
    # ids typed and linked are the file's (SentencePiece's order: Tokenizer.shown_ids)
    typed = st.text_input("…or any token id", key=Keys.WHY_ID, placeholder=f"0 – {model.last_id(tok)}")
    token_id = token_ids[j if j is not None and j < len(token_ids) else 0]
    if typed.strip():
        found = model.typed_token(tok, typed)
        if found is None:
            st.error(model.bad_id_sentence(tok))
            return
        token_id = found
    st.session_state[Session.SHOWN_TOKEN] = tok.shown_id(token_id)
    lineage_panel(choice, token_id)


def trace_table(choice: Entry, piece: str) -> None:
    """The merges (and PickyBPE's removals) that encoding the piece applies, as a table."""
    rows = model.trace_rows(choice, piece)
    st.caption(model.trace_caption(choice, rows))
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def lineage_panel(choice: Entry, token_id: int) -> None:
    """How a token was built, merge by merge, and where it occurs in the training corpus."""
    tok = choice.tokenizer
    tree = lineage(tok, token_id)
    st.caption(model.lineage_caption(choice, token_id, tree))
    st.html(render.lineage_tree(tok, tree))
    if choice.trainer is not None and choice.corpus:
        rows = keyword_in_context(tok, choice.corpus, token_id)
        if rows:
            st.caption("Where it occurs in the training corpus (keyword in context):")
            st.html(render.kwic_rows(rows))
        else:
            st.caption("It does not occur as this token in the training corpus's lines.")


# ---- char vs byte ------------------------------------------------------------------------------
def char_byte_panel(text: str, *, show_ws: bool) -> None:
    """A character-level and a byte-level tokenizer trained alike on the session's corpus."""
    choice = state.corpus_choice()
    _, config = state.current_config()
    st.caption(model.twin_caption(choice.shown_label(), config))
    state.widget_default(Keys.TWIN_MERGES, 500)
    merges = int(st.number_input("Merges for each", 10, 5_000, step=50, key=Keys.TWIN_MERGES))
    cols = st.columns(3)
    for i, name in enumerate(TWIN_EXAMPLES):
        cols[i].button(name, key=Keys.twin_example(i), on_click=_set_example, args=(name,), width="stretch")
    texts = choice.texts()
    if not any(t.strip() for t in texts):
        st.warning("The corpus is empty: choose one on the Corpus page.")
        return
    try:
        with st.spinner(f"Training a character-level and a byte-level tokenizer, {merges:,} merges each…"):
            char_t, byte_t = data.twins(choice.key(), texts, config, merges)
    except ExplorerError as err:
        st.error(render.md_text(str(err)))
        return
    c1, c2 = st.columns(2)
    for col, name, trainer in ((c1, "Character level", char_t), (c2, "Byte level", byte_t)):
        with col:
            st.subheader(name)
            a, b = st.columns(2)
            a.metric("Base alphabet", f"{len(trainer.alphabet):,}")
            b.metric("Vocabulary", f"{len(trainer.vocab):,}")
    frames = {
        f"{name} ({len(t.records):,} merges)": charts.progress_frame(
            t.records, initial_tokens=t.initial_tokens, corpus_bytes=t.corpus_bytes, corpus_chars=t.corpus_chars
        )
        for name, t in (("character level", char_t), ("byte level", byte_t))
    }
    st.altair_chart(projector.altair_chart(charts.twin_chart(frames)), width="stretch")
    st.subheader("The playground's text, encoded by both")
    char_tok, byte_tok = char_t.tokenizer(), byte_t.tokenizer()
    for name, tok in (("Character level", char_tok), ("Byte level", byte_tok)):
        ids, line = model.twin_line(name, tok, text)
        st.caption(line)
        st.html(render.encoded_chips(tok, ids, show_ws=show_ws, limit=CHIP_LIMIT))
    trip = round_trip(char_tok, text, char_tok.encode(text))
    if trip.unknown:
        st.warning(
            f"Character level cannot represent {len(trip.unknown):,} distinct character(s) of this text; "
            "byte level spells each one out of bytes:"
        )
        rows = model.twin_unknown_rows(byte_tok, trip.unknown)
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    else:
        st.success("Character level represents every character of this text; try the emoji or Korean example.")


def decode_panel(choices: list[Entry], text: str) -> None:
    """Ids back to text: paste ids (or take the text's own), pick how bytes that are not UTF-8
    are treated, and see each token's text, or its bytes when it holds part of a character."""
    names = [c.label for c in choices]
    state.widget_default(Keys.DECODE_TOKENIZER, names[0])
    if st.session_state[Keys.DECODE_TOKENIZER] not in names:
        st.session_state[Keys.DECODE_TOKENIZER] = names[0]
    left, right = st.columns([2, 1])
    label = left.selectbox("Tokenizer", names, key=Keys.DECODE_TOKENIZER)
    state.widget_default(Keys.DECODE_ERRORS, "replace")
    # the mode's name fits the column at 1280x720; what each does is in the help
    errors = right.selectbox(
        "errors=",
        list(DECODE_ERRORS),
        key=Keys.DECODE_ERRORS,
        help="  \n".join(f"{e}: {what}" for e, what in DECODE_ERRORS.items()),
    )
    tok = next(c.tokenizer for c in choices if c.label == label)
    typed = st.text_area(
        "Token ids",
        key=Keys.DECODE_IDS,
        height=90,
        placeholder="e.g. 15496, 11, 995 — empty: the ids of the playground's text",
    )
    try:
        ids, decoded = model.decode_ids(tok, typed, text, errors=errors)
    except ExplorerError as err:
        st.error(render.md_text(str(err)))
        return
    st.caption(model.decode_caption(ids, errors, decoded))
    st.code(decoded[:5000] or " ", language=None, wrap_lines=True)
    rows = model.decode_rows(tok, ids)
    st.dataframe(pd.DataFrame(rows, columns=["id", "token", "bytes", "note"]), hide_index=True, width="stretch")
    if len(ids) > DECODE_ROWS:
        st.caption(f"The first {DECODE_ROWS:,} of {len(ids):,} tokens are listed.")


def view_picker() -> str:
    """The four views of the page, one row of radio buttons."""
    state.widget_default(Keys.VIEW, VIEWS[0])
    return st.radio("View", VIEWS, key=Keys.VIEW, horizontal=True, label_visibility="collapsed")


# ---- the page's link -----------------------------------------------------------------------
def _text_param(text: str) -> dict[str, str]:
    """The link's params of the text (:func:`playground_model.text_params`); a long text is
    stored once, and named by its digest."""
    if text == EXAMPLES["English prose"] or len(text) <= model.INLINE_TEXT:
        return model.text_params(text, stored=False)
    digest = model.text_digest(text)
    known = st.session_state.get(Session.TEXT_REF)
    if known is None or known[0] != digest:
        try:
            storage.put(text.encode("utf-8", "surrogatepass"), kind="text", name="playground text")
            known = (digest, True)
        except ExplorerError:
            known = (digest, False)  # the link then keeps the text's start: the most it can give
        st.session_state[Session.TEXT_REF] = known
    return model.text_params(text, stored=known[1])


def _picked_key(key: str) -> str:
    """A picked tokenizer's key as the link names it: a table or an import with the merge it is
    rewound to."""
    at = st.session_state.get(Keys.REWIND_OF + key)
    return key if key == catalog.TRAINED or at is None else catalog.rewound_key(key, at)


def link_params() -> dict[str, str]:
    """The Playground's view as URL params: text, tokenizers, merge k, view and what it shows."""
    ss = st.session_state
    params = _text_param(ss.get(Keys.TEXT, EXAMPLES["English prose"]))
    params["tokenizers"] = ",".join(_picked_key(key) for key in ss.get(Keys.TOKENIZERS, []))
    if catalog.TRAINED in ss.get(Keys.TOKENIZERS, []) and Keys.K in ss:
        params["k"] = str(ss[Keys.K])
    params.update(model.view_params(ss.to_dict()))
    return params


def _restored(named: str, problems: list[str]) -> str | None:
    """A tokenizer a link names, ready to pick (:func:`catalog.restore`); a table or an import
    with a bad merge k comes whole, the nearest view (said in ``problems``)."""
    try:
        return catalog.restore(named)
    except ExplorerError as err:
        problems.append(str(err))
    head, at, _ = named.partition("@")
    if not at or head == catalog.TRAINED:
        return None
    try:
        return catalog.restore(head)
    except ExplorerError:  # said once already: the same key without k
        return None


def apply_link(params: dict[str, str]) -> list[str]:
    """Set the Playground's widgets from a link (stored text and imported tokenizers read back);
    what it had to leave out."""
    ss = st.session_state
    problems: list[str] = []
    if "text_id" in params:
        blob = storage.get(params["text_id"])
        if blob is None:
            problems.append(storage.gone("the text", params["text_id"], again="type or paste it again"))
        else:
            ss[Keys.TEXT] = blob.data.decode("utf-8", "replace")[:MAX_CHARS]
    elif "text" in params:
        ss[Keys.TEXT] = params["text"][:MAX_CHARS]
    if "tokenizers" in params:
        keys = []
        for named in (k for k in params["tokenizers"].split(",") if k):
            key = _restored(named, problems)
            if key is None:
                continue
            parts = catalog.parse(key)
            if parts is not None and parts.kind == "trained" and parts.k is not None:
                ss[Keys.K], key = parts.k, catalog.TRAINED  # the page's slider holds the merge
            elif parts is not None and parts.k is not None:
                key = catalog.whole_key(key)
                ss[Keys.REWIND_OF + key] = parts.k  # the Rewind box holds the merge
            keys.append(key)
        if len(keys) > 4:
            problems.append("it names more than four tokenizers; the first four are shown")
        ss[Keys.TOKENIZERS] = list(dict.fromkeys(keys))[:4]
    numbers = {"k": Keys.K, "why_tokenizer": Keys.WHY_TOKENIZER, "piece": Keys.WHY_PIECE}
    for param, key in numbers.items():
        try:
            value = links.count_param(params, param, low=0)
        except ExplorerError as err:
            problems.append(str(err))
            continue
        if value is not None:
            ss[key] = value
    if "token" in params:
        try:
            token = links.count_param(params, "token", low=0, high=10_000_000)
        except ExplorerError as err:
            problems.append(str(err))
        else:
            ss[Keys.WHY_ID] = str(token)
    values, left_out = model.view_values(params)
    ss.update(values)
    problems += left_out
    return problems
