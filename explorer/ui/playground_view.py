"""The Playground page's panels: pick a text and tokenizers, see the tokens, ask why a piece is
split as it is, and put character-level and byte-level BPE side by side."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import altair as alt
import pandas as pd
import streamlit as st

from ..analysis.lineage import keyword_in_context, lineage, not_one_merge, walk
from ..analysis.shortest import PieceGap, piece_gaps
from ..analysis.text import RoundTrip, TextStats, round_trip, sample_segmentations, text_stats
from ..bpe.tokenizer import DECODE_ERRORS, EncodedPiece, Tokenizer
from ..errors import DecodeError, ExplorerError
from ..formats.pretrained import PRETRAINED
from ..stages.units import display_to_bytes
from . import catalog, charts, data, links, projector, render, state, storage
from .catalog import Entry

__all__ = [
    "EXAMPLES",
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
    "link_params",
    "apply_link",
]

EXAMPLES: dict[str, str] = {
    "English prose": "It was on a dreary night of November that I beheld the accomplishment of my toils. "
    "Tokenizers don't read words; they read pieces.",
    "Code": 'def greet(name: str) -> str:\n    """Say hello."""\n    return f"Hello, {name}!"  # 42\n\n'
    "for i in range(10):\n\tprint(greet('world'), i ** 2)\n",
    "Emoji (ZWJ, skin tones)": "Family 👨‍👩‍👧‍👦, coder 🧑🏽‍💻, thumbs 👍🏻👍🏿, flag 🇰🇷, keycap 1️⃣, heart ❤️‍🔥",
    "Korean": "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다.",
    "Chinese": "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心。",
    "Hindi": "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता और समानता प्राप्त है।",
    "Numbers and dates": "On 2024-03-15 at 09:45 the total was 1234567.89 (≈1.23e6); call +1 (555) 010-9999.",
    "A special token": "First document ends here.<|endoftext|>The second one starts here.",
}
_MAX_CHARS = 200_000
_CHIP_LIMIT = 3_000
_ID_LIMIT = 20_000
_VIEWS = ("Encode", "Why this split", "Char vs byte", "Decode ids")


def _set_example(name: str) -> None:
    st.session_state["w_play_text"] = EXAMPLES[name]


# the example buttons' short names, so that all of them fit one row at 1280x720
_EXAMPLE_BUTTONS = {
    "English prose": "Prose",
    "Code": "Code",
    "Emoji (ZWJ, skin tones)": "Emoji",
    "Korean": "Korean",
    "Chinese": "Chinese",
    "Hindi": "Hindi",
    "Numbers and dates": "Numbers",
    "A special token": "Special token",
}
assert set(_EXAMPLE_BUTTONS) == set(EXAMPLES)


def text_input() -> str:
    """The text box, under one row of example buttons."""
    state.widget_default("w_play_text", EXAMPLES["English prose"])
    row = st.container(horizontal=True, gap="small", vertical_alignment="center")
    row.caption("Examples:")
    for i, name in enumerate(EXAMPLES):
        row.button(_EXAMPLE_BUTTONS[name], key=f"example_{i}", on_click=_set_example, args=(name,), help=name)
    return st.text_area(
        "Text to encode",
        key="w_play_text",
        height=86,
        max_chars=_MAX_CHARS,
        label_visibility="collapsed",
        placeholder="Type or paste any text",
        help="Press Ctrl+Enter (or click outside the box) to encode.",
    )


_REWIND = "w_play_at:"  # + a table's or an import's key: the merge it is rewound to (None: the whole of it)


def choose_tokenizers() -> list[Entry]:
    """Up to four of the catalog's tokenizers: the session's trained one (as of merge k), the
    bundled ones and the ones imported in this session, each of these whole or rewound to one
    of its merges (the Rewind button beside the picker)."""
    options = catalog.keys()
    state.widget_default("w_play_tokenizers", [catalog.TRAINED, "cl100k_base"])
    # an imported tokenizer let go (a newer one took its place) leaves the selection
    st.session_state["w_play_tokenizers"] = [k for k in st.session_state["w_play_tokenizers"] if k in options]
    # labels looked up, not computed: a format_func may be called outside the session's run
    labels = {k: catalog.label(k) for k in options}
    pick, opts, back = st.columns([4, 1, 1], vertical_alignment="bottom")
    keys = pick.multiselect(
        "Tokenizers (up to four)",
        options,
        key="w_play_tokenizers",
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


def _step(merges: int) -> int:
    """The rewind input's +/- step: about a hundredth of the merges, a power of ten.

    >>> _step(100_000), _step(5_000), _step(500), _step(3)
    (1000, 10, 1, 1)
    """
    return 10 ** max(0, len(str(merges // 100)) - 1)


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
        widget = _REWIND + entry.key
        if not isinstance(ss.get(widget), int) or not 0 <= ss[widget] <= n:
            ss[widget] = None
        out[entry.key] = st.number_input(
            f"{render.md_text(entry.label)}: as of merge",
            min_value=0,
            max_value=n,
            value=None,  # empty: the whole of it (a None default beside session state draws no warning)
            step=_step(n),
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
        state.widget_default("w_play_k", live.trained)
        if st.session_state["w_play_k"] > live.trained:
            st.session_state["w_play_k"] = live.trained
        k = st.slider(
            "Trained tokenizer as of merge k",
            0,
            live.trained,
            key="w_play_k",
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
    state.widget_default("w_play_ws", True)
    st.toggle("Show whitespace (· space, ↵ newline, → tab)", key="w_play_ws")
    st.toggle(
        "Allow special tokens (e.g. <|endoftext|> as one id)",
        key="w_play_special",
        help="Off: special-token text is encoded as plain text, as tiktoken's encode_ordinary does.",
    )


@dataclass(frozen=True)
class Encoded:
    """One tokenizer's encoding of the text, and what the comparison shows of it."""

    choice: Entry
    ids: list[int]
    stats: TextStats
    trip: RoundTrip


def _encode(choice: Entry, text: str, allow_special: bool) -> Encoded | None:
    try:
        ids = choice.tokenizer.encode(text, allow_special=allow_special)
    except ExplorerError as err:
        st.error(render.md_text(f"{choice.label}: {err}"))
        return None
    tok = choice.tokenizer
    return Encoded(choice, ids, text_stats(tok, text, ids), round_trip(tok, text, ids))


def _trip_word(trip: RoundTrip) -> str:
    return "exact" if trip.exact else ("lossy: unknown symbols" if trip.unknown else "differs")


_SIDE_BY_SIDE_CHARS = 280  # two tokenizers on a text this short: their chips in two columns


def compare_panel(choices: list[Entry], text: str, *, allow_special: bool, show_ws: bool) -> list[Encoded]:
    """The answer first: one row per tokenizer (tokens, characters and bytes per token, unknown
    symbols, round trip, and how many times the fewest tokens it takes), then each one's chips
    in a wrapped strip (two side by side when the text is short)."""
    encoded = [e for e in (_encode(c, text, allow_special) for c in choices) if e is not None]
    if not encoded:
        return []
    fewest = min(e.stats.tokens for e in encoded)
    rows = [
        render.ComparisonRow(
            e.choice.short,
            e.stats.tokens,
            e.stats.chars_per_token,
            e.stats.bytes_per_token,
            e.stats.unknown,
            e.stats.tokens / fewest if fewest else 1.0,
            _trip_word(e.trip),
        )
        for e in encoded
    ]
    st.html(render.comparison_table(rows))
    strips = [
        render.token_strip(
            e.choice.short,
            f"{e.stats.tokens:,} tokens",
            render.encoded_chips(e.choice.tokenizer, e.ids, show_ws=show_ws, limit=_CHIP_LIMIT),
            more=len(e.ids) - _CHIP_LIMIT,
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
    box = st.expander("Token ids and round trip", key="w_play_details", on_change="rerun")
    if not box.open:
        return
    with box:
        for tab, e in zip(st.tabs([e.choice.short for e in encoded]), encoded):
            with tab:
                _details(e)


def _details(e: Encoded) -> None:
    tok, ids, trip = e.choice.tokenizer, e.ids, e.trip
    st.caption(render.md_text(e.choice.label))
    st.code(str(tok.shown_ids(ids[:_ID_LIMIT])), language=None, wrap_lines=True)
    if len(ids) > _ID_LIMIT:
        st.caption(f"The first {_ID_LIMIT:,} of {len(ids):,} ids.")
    if trip.exact:
        st.caption("Round trip: decode(encode(text)) gives the text back exactly.")
    elif trip.unknown:
        st.warning(
            f"Round trip is lossy: {e.stats.unknown:,} symbol(s) became the unknown token; "
            f"{len(trip.unknown):,} distinct, listed below."
        )
        st.dataframe(_unknown_frame(tok, trip.unknown), hide_index=True)
    else:
        st.warning(
            "Round trip differs: decoding does not give the text back (the normalizer or the word "
            "markers changed it). Decoded:"
        )
        st.text(trip.decoded[:2000])


def _unknown_frame(tok: Tokenizer, unknown) -> pd.DataFrame:
    rows = []
    for sym, n in unknown.most_common():
        if tok.pipeline.unit == "char":
            rows.append({"symbol": sym, "code point": f"U+{ord(sym):04X}", "count": n})
        else:
            rows.append({"symbol": f"byte {display_to_bytes(sym).hex()}", "code point": "", "count": n})
    return pd.DataFrame(rows)


def dropout_panel(choices: list[Entry], text: str, *, show_ws: bool) -> None:
    """BPE-dropout: one sampled segmentation and the frequency of distinct segmentations."""
    with st.expander("BPE-dropout: sample segmentations"):
        names = [c.label for c in choices]
        at = st.selectbox("Tokenizer", range(len(choices)), format_func=names.__getitem__, key="w_drop_tok")
        choice = choices[at if at is not None and at < len(choices) else 0]
        c1, c2, c3 = st.columns(3)
        state.widget_default("w_drop_p", 0.1)
        p = c1.slider(
            "Dropout p",
            0.0,
            1.0,
            step=0.05,
            key="w_drop_p",
            help="Each applicable merge is skipped with probability p (Provilkov et al. 2020).",
        )
        state.widget_default("w_drop_seed", 0)
        seed = int(c2.number_input("Seed", 0, 1_000_000, key="w_drop_seed"))
        state.widget_default("w_drop_n", 50)
        n = int(c3.number_input("Samples", 1, 500, key="w_drop_n"))
        sample = text[:2000]
        if len(text) > len(sample):
            st.caption("Dropout samples use the first 2,000 characters.")
        tok = choice.tokenizer
        try:  # a tokenizer with no dropout (PickyBPE's) says why
            ids = tok.encode(sample, dropout=p, seed=seed)
        except ExplorerError as err:
            st.error(render.md_text(str(err)))
            return
        st.html(render.encoded_chips(tok, ids, show_ws=show_ws, limit=_CHIP_LIMIT))
        if st.button(f"Sample {n} segmentations", key="drop_sample"):
            counts = sample_segmentations(tok, sample, dropout=p, samples=n, seed=seed)
            st.caption(
                f"{len(counts):,} distinct segmentations in {n:,} samples (seeds {seed}…{seed + n - 1}); "
                f"without dropout {len(tok.encode(sample)):,} tokens."
            )
            table, chart = st.columns([3, 2])
            table.dataframe(
                pd.DataFrame(
                    [
                        {
                            "times": k,
                            "tokens": len(seg),
                            "segmentation": render.in_reading_order([render.token_label(tok, i) for i in seg]),
                        }
                        for seg, k in counts[:100]
                    ]
                ),
                hide_index=True,
                width="stretch",
            )
            chart.altair_chart(projector.altair_chart(length_histogram(counts)), width="stretch")


def length_histogram(counts: Sequence[tuple[Sequence[int], int]]) -> alt.Chart:
    """Samples by their number of tokens: a bar per length, over every sample (not only the
    distinct segmentations the table lists).

    >>> chart = length_histogram([((1, 2), 3), ((1, 2, 3), 1), ((4, 5), 2)])
    >>> chart.to_dict()["mark"]["type"], chart.data.to_dict("records")
    ('bar', [{'tokens': 2, 'samples': 5}, {'tokens': 3, 'samples': 1}])
    """
    lengths: Counter[int] = Counter()
    for seg, k in counts:
        lengths[len(seg)] += k
    frame = pd.DataFrame(sorted(lengths.items()), columns=["tokens", "samples"])
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


_SHORTEST_CHARS = 20_000


def _positions(gaps: Sequence[PieceGap], *, shortest: bool) -> set[int]:
    """Where the tokens of the pieces that BPE spends more on fall in the text's ids.

    >>> gaps = [PieceGap("ab", (1, 2), (3,)), PieceGap("c", (4,), (4,))]
    >>> _positions(gaps, shortest=False), _positions(gaps, shortest=True)
    ({0, 1}, {0})
    """
    out: set[int] = set()
    at = 0
    for g in gaps:
        n = len(g.shortest if shortest else g.bpe)
        if g.gap > 0:
            out.update(range(at, at + n))
        at += n
    return out


def shortest_panel(choices: list[Entry], text: str, *, show_ws: bool) -> None:
    """BPE's split and the fewest tokens the same vocabulary allows, one above the other, with
    the pieces where BPE's greedy merges spend more outlined and listed."""
    box = st.expander("The fewest tokens: BPE's split against the shortest", key="w_play_shortest", on_change="rerun")
    if not box.open:  # drawn only while open: a second pass over the text's pieces
        return
    with box:
        names = [c.label for c in choices]
        at = st.selectbox("Tokenizer", range(len(choices)), format_func=names.__getitem__, key="w_short_tok")
        tok = choices[at if at is not None and at < len(choices) else 0].tokenizer
        sample = text[:_SHORTEST_CHARS]
        try:
            gaps = piece_gaps(tok, sample)
        except ExplorerError as err:
            st.error(render.md_text(str(err)))
            return
        bpe = [i for g in gaps for i in g.bpe]
        fewest = [i for g in gaps for i in g.shortest]
        differ = [g for g in gaps if g.gap > 0]
        saved = len(bpe) - len(fewest)
        share = f" ({saved / len(bpe):.1%} of BPE's)" if bpe else ""
        st.caption(
            f"Each piece cut into the fewest tokens of the same vocabulary (a shortest path; of equally short "
            f"splits, the longest first token). BPE's merges spend {saved:,} token(s) more{share}, in "
            f"{len(differ):,} of {len(gaps):,} pieces (outlined). Special-token text is plain text here, "
            "as the CLI's evaluate counts it."
            + (f" The first {_SHORTEST_CHARS:,} characters." if len(text) > len(sample) else "")
        )
        strips = [
            render.token_strip(
                name,
                f"{len(ids):,} tokens",
                render.encoded_chips(
                    tok, ids, show_ws=show_ws, limit=_CHIP_LIMIT, highlight=_positions(gaps, shortest=shortest)
                ),
                more=len(ids) - _CHIP_LIMIT,
            )
            for name, ids, shortest in (("BPE's merges", bpe, False), ("The fewest tokens", fewest, True))
        ]
        st.html("".join(strips))
        if not differ:
            st.caption("BPE's merges already cut every piece of this text into the fewest tokens.")
            return
        times = Counter(g.text for g in differ)
        first = {g.text: g for g in reversed(differ)}  # a piece's split is the same wherever it occurs
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "piece": render.user_text(render.visible(piece), into="text"),
                        "times": n,
                        "BPE": render.in_reading_order([render.token_label(tok, i) for i in first[piece].bpe]),
                        "fewest": render.in_reading_order([render.token_label(tok, i) for i in first[piece].shortest]),
                        "saved": first[piece].gap * n,
                    }
                    for piece, n in times.most_common(200)
                ]
            ),
            hide_index=True,
            width="stretch",
        )


# ---- why this split ----------------------------------------------------------------------------
def _piece_label(pieces: list[EncodedPiece]):
    return lambda i: (
        f"{i + 1}: {render.user_text(render.visible(pieces[i].text)[:60], into='text')} "
        f"({len(pieces[i].ids)} token{'s' * (len(pieces[i].ids) != 1)})"
    )


def _forget_piece() -> None:
    """Another tokenizer cuts other pieces: start again from its most merged piece."""
    st.session_state.pop("w_why_piece", None)


def why_panel(choices: list[Entry], text: str) -> None:
    """The encode trace of one piece, and the lineage of one token."""
    names = [c.label for c in choices]
    at = st.selectbox(
        "Tokenizer", range(len(choices)), format_func=names.__getitem__, key="w_why_tok", on_change=_forget_piece
    )
    choice = choices[at if at is not None and at < len(choices) else 0]
    tok = choice.tokenizer
    try:
        pieces = tok.encode_pieces(text[:20_000])
    except ExplorerError as err:
        st.error(render.md_text(str(err)))
        return
    if not pieces:
        st.info("The text has no pieces to explain.")
        return
    # the piece that the most merges worked on, the most instructive to trace
    default = max(
        range(min(len(pieces), 2_000)), key=lambda i: len(tok.base_tokens(pieces[i].text)) - len(pieces[i].ids)
    )
    state.widget_default("w_why_piece", default)
    if st.session_state["w_why_piece"] >= len(pieces):
        st.session_state["w_why_piece"] = default
    i = st.selectbox(
        "Piece (what the pre-tokenizer cut; merges never cross it)",
        range(len(pieces)),
        format_func=_piece_label(pieces),
        key="w_why_piece",
    )
    piece = pieces[i]
    st.html(render.encoded_chips(tok, list(piece.ids)))
    trace_table(choice, piece.text)
    st.subheader("Lineage of a token")
    # the piece's tokens, the one built by the most merges first
    token_ids = sorted(
        dict.fromkeys(piece.ids), key=lambda t: -len(tok.token_bytes(t)) if tok.merge_rank(t) is not None else 0
    )
    # keyed by tokenizer and piece: a picker whose options change must not keep showing an old label
    j = st.selectbox(
        "Token",
        range(len(token_ids)),
        key=f"w_why_token:{choice.key}:{i}",
        format_func=lambda j: f"{render.token_label(tok, token_ids[j])}  (id {tok.shown_id(token_ids[j])})",
    )
    # ids typed and linked are the file's (SentencePiece's order: Tokenizer.shown_ids)
    last = len(tok.vocab) - 1 if tok.file_ids is None else tok.file_ids.extent - 1
    typed = st.text_input("…or any token id", key="w_why_id", placeholder=f"0 – {last}")
    token_id = token_ids[j if j is not None and j < len(token_ids) else 0]
    typed = typed.strip()
    if typed:
        # isdigit() alone accepts '²' and digit runs longer than int() will parse
        found = _typed_token(tok, typed)
        if found is None:
            st.error(f"A token id is a whole number from 0 to {last:,} that names a token of this tokenizer.")
            return
        token_id = found
    st.session_state[_SHOWN_TOKEN] = tok.shown_id(token_id)
    lineage_panel(choice, token_id)


def _typed_token(tok: Tokenizer, typed: str) -> int | None:
    """The token id (``encode``'s) of an id typed as the tokenizer's file numbers it, or None
    when it is no whole number or names no token of the vocabulary."""
    if not (typed.isascii() and typed.isdigit() and len(typed) <= 12):
        return None
    try:
        (token_id,) = tok.ids_from_shown([int(typed)])
    except DecodeError:
        return None
    return token_id if token_id < len(tok.vocab) else None


def trace_table(choice: Entry, piece: str) -> None:
    tok = choice.tokenizer
    steps = tok.encode_trace(piece)
    if not steps:
        st.caption("No merge applies to this piece: it stays as its base symbols.")
        return
    picky = tok.events is not None
    rows = []
    for n, s in enumerate(steps, 1):
        row: dict[str, object] = {"#": n, "merge rank": s.rank}
        if picky:  # PickyBPE: a removal is a step of its own, its token split into its parts
            row["step"] = (
                f"✂ {_label_of(tok, s.left)} removed → {' + '.join(_label_of(tok, t) for t in s.parts)}"
                if s.removed
                else f"{_label_of(tok, s.left)} + {_label_of(tok, s.right)} → {_label_of(tok, s.token)}"
            )
        row["left"] = _label_of(tok, s.left)
        row["right"] = None if s.removed else _label_of(tok, s.right)
        row["new token"] = None if s.removed else _label_of(tok, s.token)
        row["tokens after"] = render.in_reading_order([_label_of(tok, t) for t in s.tokens])
        if choice.trainer is not None:
            record = choice.trainer.records[s.rank]
            row["learned at step"] = record.step
            row["pair count then"] = None if s.removed else record.count
        rows.append(row)
    removals = sum(s.removed for s in steps)
    st.caption(
        (
            f"{len(steps) - removals} merge(s) and {removals} removal(s) (✂) made on this piece in the order "
            "PickyBPE learned them; a removal splits a token into its parts, as training did right after the merge "
            "of its rank. "
            if picky
            else f"{len(steps)} merge(s) applied to this piece, lowest rank first (leftmost on ties). "
        )
        + (
            "Rank r is the merge learned at step r + 1."
            if choice.trainer is not None
            else "Rank r is the file's merge r + 1."
            if choice.kind == "imported"
            else "A table's rank is the token's id minus 256."
        )
    )
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def _label_of(tok: Tokenizer, display: str) -> str:
    token_id = tok.token_to_id(display)
    if token_id is None:  # a step's part that is no token of the vocabulary: written by the unit's rule
        return render.token_text(display, render.style_of(tok.pipeline.unit))
    return render.token_label(tok, token_id)


def lineage_panel(choice: Entry, token_id: int) -> None:
    tok = choice.tokenizer
    tree = lineage(tok, token_id)
    size = sum(1 for _ in walk(tree))
    if tree.rank is None:
        st.caption(
            f"{render.token_label(tok, token_id, into='markdown')} (id {tok.shown_id(token_id)}) is a base symbol: no merge made it."
        )
    elif tree.whole:  # a rank table's token no merge makes: said so, no merge made up
        st.caption(
            f"{render.token_label(tok, token_id, into='markdown')} (id {tok.shown_id(token_id)}): merge rank {tree.rank:,}, "
            f"{render.md_text(not_one_merge(tok, token_id) or '')}."
        )
    else:
        where = f"learned at step {tree.rank + 1:,}" if choice.trainer is not None else f"merge rank {tree.rank:,}"
        st.caption(
            f"{render.token_label(tok, token_id, into='markdown')} (id {tok.shown_id(token_id)}): {where}; built by {size // 2:,} merge(s) "
            f"from {(size + 1) // 2:,} base symbol(s). Yellow chips are base symbols."
        )
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
    st.caption(
        f"Both are trained on the session's corpus ({render.md_text(choice.shown_label())}) with the Train page's normalizer "
        f"({config.normalizer}) and pre-tokenizer ({config.pretokenizer}); only the unit differs."
    )
    state.widget_default("w_cb_merges", 500)
    merges = int(st.number_input("Merges for each", 10, 5_000, step=50, key="w_cb_merges"))
    cols = st.columns(3)
    for i, name in enumerate(("Emoji (ZWJ, skin tones)", "Korean", "Code")):
        cols[i].button(name, key=f"cb_example_{i}", on_click=_set_example, args=(name,), width="stretch")
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
        ids = tok.encode(text)
        stats = text_stats(tok, text, ids)
        st.caption(f"{name}: {stats.tokens:,} tokens, {stats.unknown:,} unknown")
        st.html(render.encoded_chips(tok, ids, show_ws=show_ws, limit=_CHIP_LIMIT))
    trip = round_trip(char_tok, text, char_tok.encode(text))
    if trip.unknown:
        st.warning(
            f"Character level cannot represent {len(trip.unknown):,} distinct character(s) of this text; "
            "byte level spells each one out of bytes:"
        )
        rows = []
        for ch, n in trip.unknown.most_common():
            ids = byte_tok.encode(ch)
            rows.append(
                {
                    "character": render.user_text(ch, into="text"),
                    "code point": f"U+{ord(ch):04X}",
                    "count": n,
                    "UTF-8 bytes": " ".join(f"{b:02x}" for b in ch.encode("utf-8", "surrogatepass")),
                    "byte-level ids": ", ".join(map(str, ids)),
                    "byte-level tokens": render.in_reading_order([render.token_label(byte_tok, i) for i in ids]),
                }
            )
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    else:
        st.success("Character level represents every character of this text; try the emoji or Korean example.")


_ID_TEXT = re.compile(r"[\s,;\[\]()]+")
_DECODE_ROWS = 200


def parse_ids(text: str) -> list[int]:
    """Ids as typed or pasted: "[15496, 11, 995]", "15496 11 995", one a line...

    >>> parse_ids("[15496, 11,995]"), parse_ids(" 7\\n8 ")
    ([15496, 11, 995], [7, 8])
    >>> parse_ids("12, x3")
    Traceback (most recent call last):
    ...
    explorer.errors.ExplorerError: 'x3' (position 1) is not a whole number: give token ids separated by spaces or commas
    """
    out = []
    for k, part in enumerate(p for p in _ID_TEXT.split(text) if p):
        if not (part.isascii() and part.lstrip("-").isdigit()) or len(part) > 30:
            raise ExplorerError(
                f"{part[:40]!r} (position {k}) is not a whole number: give token ids separated by spaces or commas"
            )
        out.append(int(part))
    return out


def decode_panel(choices: list[Entry], text: str) -> None:
    """Ids back to text: paste ids (or take the text's own), pick how bytes that are not UTF-8
    are treated, and see each token's text, or its bytes when it holds part of a character."""
    names = [c.label for c in choices]
    state.widget_default("w_dec_tok", names[0])
    if st.session_state["w_dec_tok"] not in names:
        st.session_state["w_dec_tok"] = names[0]
    left, right = st.columns([2, 1])
    label = left.selectbox("Tokenizer", names, key="w_dec_tok")
    state.widget_default("w_dec_errors", "replace")
    # the mode's name fits the column at 1280x720; what each does is in the help
    errors = right.selectbox(
        "errors=",
        list(DECODE_ERRORS),
        key="w_dec_errors",
        help="  \n".join(f"{e}: {what}" for e, what in DECODE_ERRORS.items()),
    )
    tok = next(c.tokenizer for c in choices if c.label == label)
    typed = st.text_area(
        "Token ids",
        key="w_dec_ids",
        height=90,
        placeholder="e.g. 15496, 11, 995 — empty: the ids of the playground's text",
    )
    try:
        # typed ids are the file's (SentencePiece's order: Tokenizer.shown_ids), as shown everywhere
        ids = tok.ids_from_shown(parse_ids(typed)) if typed.strip() else tok.encode(text)[:_ID_LIMIT]
        decoded = tok.decode(ids, errors=errors)
    except ExplorerError as err:
        st.error(render.md_text(str(err)))
        return
    st.caption(f"decode({len(ids):,} ids, errors={errors!r}) gives {len(decoded):,} characters:")
    st.code(decoded[:5000] or " ", language=None, wrap_lines=True)
    rows = []
    for i in ids[:_DECODE_ROWS]:
        partial = isinstance(tok.token_text(i), bytes)
        rows.append(
            {
                "id": tok.shown_id(i),
                "token": render.token_label(tok, i),
                "bytes": tok.token_bytes(i).hex(" "),
                "note": "part of a character: its bytes in hex" if partial else "",
            }
        )
    st.dataframe(pd.DataFrame(rows, columns=["id", "token", "bytes", "note"]), hide_index=True, width="stretch")
    if len(ids) > _DECODE_ROWS:
        st.caption(f"The first {_DECODE_ROWS:,} of {len(ids):,} tokens are listed.")


def view_picker() -> str:
    state.widget_default("w_play_view", _VIEWS[0])
    return st.radio("View", _VIEWS, key="w_play_view", horizontal=True, label_visibility="collapsed")


# ---- the page's link -----------------------------------------------------------------------
_VIEW_SLUGS = {"Encode": "encode", "Why this split": "why", "Char vs byte": "char-byte", "Decode ids": "decode"}
_INLINE_TEXT = 400  # characters a link carries as they are; a longer text is stored and named by hash
_INLINE_IDS = 2_000
_TEXT_REF = "play_text_ref"  # (SHA-256 of the text, stored?) so a rerun does not store it again
_SHOWN_TOKEN = "why_token_shown"  # the token whose lineage "Why this split" shows


def _text_param(text: str) -> dict[str, str]:
    if text == EXAMPLES["English prose"]:
        return {}
    if len(text) <= _INLINE_TEXT:
        return {"text": text}
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    known = st.session_state.get(_TEXT_REF)
    if known is None or known[0] != digest:
        try:
            storage.put(text.encode("utf-8", "surrogatepass"), kind="text", name="playground text")
            known = (digest, True)
        except ExplorerError:
            known = (digest, False)  # the link then keeps the text's start: the most it can give
        st.session_state[_TEXT_REF] = known
    return {"text_id": digest} if known[1] else {"text": text[:_INLINE_TEXT]}


def _picked_key(key: str) -> str:
    """A picked tokenizer's key as the link names it: a table or an import with the merge it is
    rewound to."""
    at = st.session_state.get(_REWIND + key)
    return key if key == catalog.TRAINED or at is None else catalog.rewound_key(key, at)


def link_params() -> dict[str, str]:
    """The Playground's view as URL params: text, tokenizers, merge k, view and what it shows."""
    ss = st.session_state
    params = _text_param(ss.get("w_play_text", EXAMPLES["English prose"]))
    params["tokenizers"] = ",".join(_picked_key(key) for key in ss.get("w_play_tokenizers", []))
    if catalog.TRAINED in ss.get("w_play_tokenizers", []) and "w_play_k" in ss:
        params["k"] = str(ss["w_play_k"])
    view = ss.get("w_play_view", _VIEWS[0])
    if view != _VIEWS[0]:
        params["view"] = _VIEW_SLUGS[view]
    if not ss.get("w_play_ws", True):
        params["whitespace"] = "0"
    if ss.get("w_play_special"):
        params["special"] = "1"
    if view == "Why this split":
        for param, key in (("why_tokenizer", "w_why_tok"), ("piece", "w_why_piece")):
            if ss.get(key) is not None:
                params[param] = str(ss[key])
        if ss.get(_SHOWN_TOKEN) is not None:
            params["token"] = str(ss[_SHOWN_TOKEN])
    if view == "Decode ids":
        ids = ss.get("w_dec_ids", "").strip()
        if ids and len(ids) <= _INLINE_IDS:
            params["ids"] = ids
        if ss.get("w_dec_errors", "replace") != "replace":
            params["errors"] = ss["w_dec_errors"]
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
            ss["w_play_text"] = blob.data.decode("utf-8", "replace")[:_MAX_CHARS]
    elif "text" in params:
        ss["w_play_text"] = params["text"][:_MAX_CHARS]
    if "tokenizers" in params:
        keys = []
        for named in (k for k in params["tokenizers"].split(",") if k):
            key = _restored(named, problems)
            if key is None:
                continue
            parts = catalog.parse(key)
            if parts is not None and parts.kind == "trained" and parts.k is not None:
                ss["w_play_k"], key = parts.k, catalog.TRAINED  # the page's slider holds the merge
            elif parts is not None and parts.k is not None:
                key = catalog.whole_key(key)
                ss[_REWIND + key] = parts.k  # the Rewind box holds the merge
            keys.append(key)
        if len(keys) > 4:
            problems.append("it names more than four tokenizers; the first four are shown")
        ss["w_play_tokenizers"] = list(dict.fromkeys(keys))[:4]
    numbers = {"k": "w_play_k", "why_tokenizer": "w_why_tok", "piece": "w_why_piece"}
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
            ss["w_why_id"] = str(token)
    view = {slug: name for name, slug in _VIEW_SLUGS.items()}.get(params.get("view", "encode"))
    if view is None:
        problems.append(f"view={params['view'][:20]!r} is not one of {', '.join(_VIEW_SLUGS.values())}")
    else:
        ss["w_play_view"] = view
    for param, key, value in (
        ("whitespace", "w_play_ws", params.get("whitespace") != "0"),
        ("special", "w_play_special", params.get("special") == "1"),
    ):
        if param in params:
            ss[key] = value
    if "ids" in params:
        ss["w_dec_ids"] = params["ids"][:_INLINE_IDS]
    if "errors" in params:
        if params["errors"] in DECODE_ERRORS:
            ss["w_dec_errors"] = params["errors"]
        else:
            problems.append(f"errors={params['errors'][:20]!r} is not one of {', '.join(DECODE_ERRORS)}")
    return problems
