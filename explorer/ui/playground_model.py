"""What the Playground page knows and computes, apart from drawing it: its widget and session
keys, its example texts and views, and the rows, labels and sentences its panels show, derived
from the engine (:mod:`explorer.ui.playground_view` draws them). No Streamlit here: each function
takes tokenizers, texts and numbers and gives plain data, so the page's reasoning is tested
without a session.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..analysis.lineage import Lineage, not_one_merge, walk
from ..analysis.shortest import PieceGap, piece_gaps
from ..analysis.text import RoundTrip, TextStats, round_trip, text_stats
from ..bpe.config import TrainerConfig
from ..bpe.tokenizer import DECODE_ERRORS, DecodeErrors, EncodedPiece, Tokenizer
from ..errors import DecodeError, ExplorerError
from ..stages.units import display_to_bytes
from . import render

if TYPE_CHECKING:  # the catalog keeps a session's tokenizers (Streamlit): its entries are only read here
    from .catalog import Entry

__all__ = [
    "Keys",
    "Session",
    "EXAMPLES",
    "EXAMPLE_BUTTONS",
    "TWIN_EXAMPLES",
    "VIEWS",
    "VIEW_SLUGS",
    "MAX_CHARS",
    "CHIP_LIMIT",
    "ID_LIMIT",
    "DECODE_ROWS",
    "SHORTEST_CHARS",
    "DROPOUT_CHARS",
    "WHY_CHARS",
    "Encoded",
    "encode",
    "trip_word",
    "comparison_rows",
    "unknown_rows",
    "trip_sentence",
    "rewind_step",
    "rewind_at",
    "twin_line",
    "dropout_caption",
    "segmentation_rows",
    "length_counts",
    "Shortest",
    "shortest",
    "positions",
    "piece_label",
    "default_piece",
    "piece_tokens",
    "token_option",
    "last_id",
    "typed_token",
    "bad_id_sentence",
    "lineage_caption",
    "label_of",
    "trace_rows",
    "trace_caption",
    "twin_caption",
    "twin_unknown_rows",
    "parse_ids",
    "decode_ids",
    "decode_caption",
    "decode_rows",
    "INLINE_TEXT",
    "INLINE_IDS",
    "text_digest",
    "text_params",
    "view_params",
    "view_values",
]


class Keys:
    """The Playground's widget keys, one place for the page and its tests. Their values are a
    contract: saved sessions and shared links restore widgets by them. A name ending in ``_AT``
    or ``_OF`` is a prefix, completed by the method beside it."""

    TEXT = "w_play_text"
    EXAMPLE_AT = "example_"  # + the example's index: the buttons over the text box
    TOKENIZERS = "w_play_tokenizers"
    REWIND_OF = "w_play_at:"  # + a table's or an import's key: the merge it is rewound to (None: whole)
    K = "w_play_k"  # the session's trained tokenizer as of merge k
    WHITESPACE = "w_play_ws"
    SPECIAL = "w_play_special"
    VIEW = "w_play_view"
    DETAILS = "w_play_details"  # the ids-and-round-trip expander
    SHORTEST = "w_play_shortest"  # the fewest-tokens expander
    DROPOUT = "w_play_dropout"  # the BPE-dropout expander
    SHORTEST_TOKENIZER = "w_short_tok"
    DROPOUT_TOKENIZER = "w_drop_tok"
    DROPOUT_P = "w_drop_p"
    DROPOUT_SEED = "w_drop_seed"
    DROPOUT_SAMPLES = "w_drop_n"
    DROPOUT_SAMPLE = "drop_sample"  # the button that samples
    WHY_TOKENIZER = "w_why_tok"
    WHY_PIECE = "w_why_piece"
    WHY_TOKEN_OF = "w_why_token:"  # + tokenizer key, ":", piece index: a picker whose options are that piece's
    WHY_ID = "w_why_id"
    TWIN_MERGES = "w_cb_merges"
    TWIN_EXAMPLE_AT = "cb_example_"  # + the index in TWIN_EXAMPLES
    DECODE_TOKENIZER = "w_dec_tok"
    DECODE_ERRORS = "w_dec_errors"
    DECODE_IDS = "w_dec_ids"

    @staticmethod
    def example(i: int) -> str:
        """The key of the ``i``-th example button.

        >>> Keys.example(2), Keys.twin_example(0)
        ('example_2', 'cb_example_0')
        """
        return f"{Keys.EXAMPLE_AT}{i}"

    @staticmethod
    def twin_example(i: int) -> str:
        """The key of the ``i``-th example button of the char-vs-byte view."""
        return f"{Keys.TWIN_EXAMPLE_AT}{i}"

    @staticmethod
    def rewind(key: str) -> str:
        """The Rewind box of a picked table or import.

        >>> Keys.rewind("gpt2")
        'w_play_at:gpt2'
        """
        return Keys.REWIND_OF + key

    @staticmethod
    def why_token(tokenizer: str, piece: int) -> str:
        """The lineage's token picker for one tokenizer's piece: a picker whose options change
        must not keep showing an old label.

        >>> Keys.why_token("trained@5", 3)
        'w_why_token:trained@5:3'
        """
        return f"{Keys.WHY_TOKEN_OF}{tokenizer}:{piece}"


class Session:
    """What the page keeps in the session beside its widgets."""

    TEXT_REF = "play_text_ref"  # (SHA-256 of the text, stored?) so that a rerun does not store it again
    SHOWN_TOKEN = "why_token_shown"  # the token whose lineage "Why this split" shows (the link's token=)


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
# the example buttons' short names, so that all of them fit one row at 1280x720
EXAMPLE_BUTTONS = {
    "English prose": "Prose",
    "Code": "Code",
    "Emoji (ZWJ, skin tones)": "Emoji",
    "Korean": "Korean",
    "Chinese": "Chinese",
    "Hindi": "Hindi",
    "Numbers and dates": "Numbers",
    "A special token": "Special token",
}
assert set(EXAMPLE_BUTTONS) == set(EXAMPLES)
TWIN_EXAMPLES = ("Emoji (ZWJ, skin tones)", "Korean", "Code")  # where char and byte level differ most
VIEWS = ("Encode", "Why this split", "Char vs byte", "Decode ids")
VIEW_SLUGS = {"Encode": "encode", "Why this split": "why", "Char vs byte": "char-byte", "Decode ids": "decode"}
MAX_CHARS = 200_000
CHIP_LIMIT = 3_000
ID_LIMIT = 20_000
DECODE_ROWS = 200
SHORTEST_CHARS = 20_000
DROPOUT_CHARS = 2_000
WHY_CHARS = 20_000
_DEFAULT_PIECES = 2_000  # the pieces searched for the most merged one
INLINE_TEXT = 400  # characters a link carries as they are; a longer text is stored and named by hash
INLINE_IDS = 2_000  # characters of typed ids a link carries


# ---- encode ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Encoded:
    """One tokenizer's encoding of the text, and what the comparison shows of it."""

    choice: Entry
    ids: list[int]
    stats: TextStats
    trip: RoundTrip


def encode(choice: Entry, text: str, *, allow_special: bool) -> Encoded:
    """The text encoded by one picked tokenizer, its counts and its round trip (an
    :class:`ExplorerError` when the tokenizer refuses the text)."""
    tok = choice.tokenizer
    ids = tok.encode(text, allow_special=allow_special)
    return Encoded(choice, ids, text_stats(tok, text, ids), round_trip(tok, text, ids))


def trip_word(trip: RoundTrip) -> str:
    """The comparison's word for a round trip.

    >>> trip_word(RoundTrip(True, "a", Counter())), trip_word(RoundTrip(False, "?", Counter("x")))
    ('exact', 'lossy: unknown symbols')
    >>> trip_word(RoundTrip(False, "a", Counter()))
    'differs'
    """
    return "exact" if trip.exact else ("lossy: unknown symbols" if trip.unknown else "differs")


def comparison_rows(encoded: Sequence[Encoded]) -> list[render.ComparisonRow]:
    """One row per tokenizer: its counts and how many times the fewest tokens it takes."""
    fewest = min((e.stats.tokens for e in encoded), default=0)
    return [
        render.ComparisonRow(
            e.choice.short,
            e.stats.tokens,
            e.stats.chars_per_token,
            e.stats.bytes_per_token,
            e.stats.unknown,
            e.stats.tokens / fewest if fewest else 1.0,
            trip_word(e.trip),
        )
        for e in encoded
    ]


def unknown_rows(tok: Tokenizer, unknown: Counter[str]) -> list[dict[str, object]]:
    """The symbols a lossy round trip lost, most frequent first: a character with its code
    point, or (byte level) the byte in hex."""
    rows: list[dict[str, object]] = []
    for sym, n in unknown.most_common():
        if tok.pipeline.unit == "char":
            rows.append({"symbol": sym, "code point": f"U+{ord(sym):04X}", "count": n})
        else:
            rows.append({"symbol": f"byte {display_to_bytes(sym).hex()}", "code point": "", "count": n})
    return rows


def trip_sentence(encoded: Encoded) -> str:
    """What the details say of a round trip (Markdown-safe: numbers and fixed words only)."""
    stats, trip = encoded.stats, encoded.trip
    if trip.exact:
        return "Round trip: decode(encode(text)) gives the text back exactly."
    if trip.unknown:
        return (
            f"Round trip is lossy: {stats.unknown:,} symbol(s) became the unknown token; "
            f"{len(trip.unknown):,} distinct, listed below."
        )
    return (
        "Round trip differs: decoding does not give the text back (the normalizer or the word "
        "markers changed it). Decoded:"
    )


def rewind_step(merges: int) -> int:
    """The rewind input's +/- step: about a hundredth of the merges, a power of ten.

    >>> rewind_step(100_000), rewind_step(5_000), rewind_step(500), rewind_step(3)
    (1000, 10, 1, 1)
    """
    return 10 ** max(0, len(str(merges // 100)) - 1)


def rewind_at(value: object, merges: int) -> int | None:
    """The merge a Rewind box holds, kept only when it is one of the tokenizer's (``merges`` of
    them); None, the whole of it, otherwise (a box left from another tokenizer, a bad link).

    >>> rewind_at(3, 10), rewind_at(10, 10), rewind_at(11, 10), rewind_at(-1, 10), rewind_at("3", 10)
    (3, 10, None, None, None)
    >>> rewind_at(True, 10) is None  # a bool is an int to isinstance, never a merge
    True
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= merges:
        return None
    return value


# ---- BPE-dropout ---------------------------------------------------------------------------------
def dropout_caption(counts: Sequence[tuple[Sequence[int], int]], *, samples: int, seed: int, plain: int) -> str:
    """What a run of dropout samples found (``plain``: the tokens without dropout).

    >>> dropout_caption([((1, 2), 3), ((1,), 2)], samples=5, seed=7, plain=1)
    '2 distinct segmentations in 5 samples (seeds 7…11); without dropout 1 tokens.'
    """
    return (
        f"{len(counts):,} distinct segmentations in {samples:,} samples (seeds {seed}…{seed + samples - 1}); "
        f"without dropout {plain:,} tokens."
    )


def segmentation_rows(
    tok: Tokenizer, counts: Sequence[tuple[Sequence[int], int]], *, limit: int = 100
) -> list[dict[str, object]]:
    """The distinct segmentations as the table lists them, the most sampled first."""
    return [
        {
            "times": k,
            "tokens": len(seg),
            "segmentation": render.in_reading_order([render.token_label(tok, i) for i in seg]),
        }
        for seg, k in counts[:limit]
    ]


def length_counts(counts: Sequence[tuple[Sequence[int], int]]) -> list[tuple[int, int]]:
    """Samples by their number of tokens, over every sample (not only the distinct
    segmentations the table lists), shortest first.

    >>> length_counts([((1, 2), 3), ((1, 2, 3), 1), ((4, 5), 2)])
    [(2, 5), (3, 1)]
    """
    lengths: Counter[int] = Counter()
    for seg, k in counts:
        lengths[len(seg)] += k
    return sorted(lengths.items())


# ---- the fewest tokens ---------------------------------------------------------------------------
def positions(gaps: Sequence[PieceGap], *, shortest: bool) -> set[int]:
    """Where the tokens of the pieces that BPE spends more on fall in the text's ids.

    >>> gaps = [PieceGap("ab", (1, 2), (3,)), PieceGap("c", (4,), (4,))]
    >>> positions(gaps, shortest=False), positions(gaps, shortest=True)
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


@dataclass(frozen=True)
class Shortest:
    """BPE's split of a text beside the fewest tokens of the same vocabulary."""

    gaps: list[PieceGap]
    bpe: list[int]
    fewest: list[int]
    caption: str
    rows: list[dict[str, object]]  # the pieces BPE spends more on, the most frequent first


def shortest(tok: Tokenizer, text: str, *, limit: int = 200) -> Shortest:
    """Each piece of the text (its first :data:`SHORTEST_CHARS` characters) cut by BPE and
    into the fewest tokens; the sentence that sums them up and one row per piece that differs."""
    sample = text[:SHORTEST_CHARS]
    gaps = piece_gaps(tok, sample)
    bpe = [i for g in gaps for i in g.bpe]
    fewest = [i for g in gaps for i in g.shortest]
    differ = [g for g in gaps if g.gap > 0]
    saved = len(bpe) - len(fewest)
    share = f" ({saved / len(bpe):.1%} of BPE's)" if bpe else ""
    caption = (
        f"Each piece cut into the fewest tokens of the same vocabulary (a shortest path; of equally short "
        f"splits, the longest first token). BPE's merges spend {saved:,} token(s) more{share}, in "
        f"{len(differ):,} of {len(gaps):,} pieces (outlined). Special-token text is plain text here, "
        "as the CLI's evaluate counts it."
        + (f" The first {SHORTEST_CHARS:,} characters." if len(text) > len(sample) else "")
    )
    times = Counter(g.text for g in differ)
    first = {g.text: g for g in reversed(differ)}  # a piece's split is the same wherever it occurs
    rows: list[dict[str, object]] = [
        {
            "piece": render.user_text(render.visible(piece), into="text"),
            "times": n,
            "BPE": render.in_reading_order([render.token_label(tok, i) for i in first[piece].bpe]),
            "fewest": render.in_reading_order([render.token_label(tok, i) for i in first[piece].shortest]),
            "saved": first[piece].gap * n,
        }
        for piece, n in times.most_common(limit)
    ]
    return Shortest(gaps, bpe, fewest, caption, rows)


# ---- why this split ------------------------------------------------------------------------------
def piece_label(pieces: Sequence[EncodedPiece], i: int) -> str:
    """The piece picker's label of piece ``i``: its place, its text (whitespace shown) and how
    many tokens it became."""
    n = len(pieces[i].ids)
    return f"{i + 1}: {render.user_text(render.visible(pieces[i].text)[:60], into='text')} ({n} token{'s' * (n != 1)})"


def default_piece(tok: Tokenizer, pieces: Sequence[EncodedPiece]) -> int:
    """The piece that the most merges worked on (the first such among the first 2,000), the
    most instructive to trace."""
    return max(
        range(min(len(pieces), _DEFAULT_PIECES)),
        key=lambda i: len(tok.base_tokens(pieces[i].text)) - len(pieces[i].ids),
    )


def piece_tokens(tok: Tokenizer, piece: EncodedPiece) -> list[int]:
    """A piece's distinct tokens for the lineage picker: the longest made by a merge first, then
    base symbols, each group in the piece's order."""
    return sorted(
        dict.fromkeys(piece.ids), key=lambda t: -len(tok.token_bytes(t)) if tok.merge_rank(t) is not None else 0
    )


def token_option(tok: Tokenizer, token_id: int) -> str:
    """A token as the lineage's picker names it (its id as the tokenizer's file numbers it)."""
    return f"{render.token_label(tok, token_id)}  (id {tok.shown_id(token_id)})"


def last_id(tok: Tokenizer) -> int:
    """The largest id a user may type: the vocabulary's, or the file's numbering (SentencePiece
    order, :attr:`Tokenizer.file_ids`)."""
    return len(tok.vocab) - 1 if tok.file_ids is None else tok.file_ids.extent - 1


def typed_token(tok: Tokenizer, typed: str) -> int | None:
    """The token id (``encode``'s) of an id typed as the tokenizer's file numbers it, or None
    when it is no whole number or names no token of the vocabulary."""
    typed = typed.strip()
    # isdigit() alone accepts '²', and digit runs longer than int() will parse
    if not (typed.isascii() and typed.isdigit() and len(typed) <= 12):
        return None
    try:
        (token_id,) = tok.ids_from_shown([int(typed)])
    except DecodeError:
        return None
    return token_id if token_id < len(tok.vocab) else None


def bad_id_sentence(tok: Tokenizer) -> str:
    """What the page says of a typed id that names no token."""
    return f"A token id is a whole number from 0 to {last_id(tok):,} that names a token of this tokenizer."


def lineage_caption(choice: Entry, token_id: int, tree: Lineage) -> str:
    """The sentence over a token's lineage (Markdown; the token's text escaped): a base symbol,
    a rank table's token no merge makes, or the merges that built it and when."""
    tok = choice.tokenizer
    head = f"{render.token_label(tok, token_id, into='markdown')} (id {tok.shown_id(token_id)})"
    if tree.rank is None:
        return f"{head} is a base symbol: no merge made it."
    if tree.whole:  # a rank table's token no merge makes: said so, no merge made up
        return f"{head}: merge rank {tree.rank:,}, {render.md_text(not_one_merge(tok, token_id) or '')}."
    size = sum(1 for _ in walk(tree))
    where = f"learned at step {tree.rank + 1:,}" if choice.trainer is not None else f"merge rank {tree.rank:,}"
    return (
        f"{head}: {where}; built by {size // 2:,} merge(s) from {(size + 1) // 2:,} base symbol(s). "
        "Yellow chips are base symbols."
    )


def label_of(tok: Tokenizer, display: str) -> str:
    """A trace step's part as text: the token's label, or (a part that is no token of the
    vocabulary) as the unit's rule writes it."""
    token_id = tok.token_to_id(display)
    if token_id is None:
        return render.token_text(display, render.style_of(tok.pipeline.unit))
    return render.token_label(tok, token_id)


def trace_rows(choice: Entry, piece: str) -> list[dict[str, object]]:
    """One row per merge (or PickyBPE removal) that encoding the piece applies, in order."""
    tok = choice.tokenizer
    picky = tok.events is not None
    rows = []
    for n, s in enumerate(tok.encode_trace(piece), 1):
        row: dict[str, object] = {"#": n, "merge rank": s.rank}
        if picky:  # PickyBPE: a removal is a step of its own, its token split into its parts
            row["step"] = (
                f"✂ {label_of(tok, s.left)} removed → {' + '.join(label_of(tok, t) for t in s.parts)}"
                if s.removed
                else f"{label_of(tok, s.left)} + {label_of(tok, s.right)} → {label_of(tok, s.token)}"
            )
        row["left"] = label_of(tok, s.left)
        row["right"] = None if s.removed else label_of(tok, s.right)
        row["new token"] = None if s.removed else label_of(tok, s.token)
        row["tokens after"] = render.in_reading_order([label_of(tok, t) for t in s.tokens])
        if choice.trainer is not None:
            record = choice.trainer.records[s.rank]
            row["learned at step"] = record.step
            row["pair count then"] = None if s.removed else record.count
        rows.append(row)
    return rows


def trace_caption(choice: Entry, rows: Sequence[dict[str, object]]) -> str:
    """The sentence over a piece's trace (``rows``: :func:`trace_rows`; empty: no merge applies)."""
    if not rows:
        return "No merge applies to this piece: it stays as its base symbols."
    removals = sum(1 for r in rows if r["right"] is None)
    if choice.tokenizer.events is not None:
        what = (
            f"{len(rows) - removals} merge(s) and {removals} removal(s) (✂) made on this piece in the order "
            "PickyBPE learned them; a removal splits a token into its parts, as training did right after the merge "
            "of its rank. "
        )
    else:
        what = f"{len(rows)} merge(s) applied to this piece, lowest rank first (leftmost on ties). "
    if choice.trainer is not None:
        rank = "Rank r is the merge learned at step r + 1."
    elif choice.kind == "imported":
        rank = "Rank r is the file's merge r + 1."
    else:
        rank = "A table's rank is the token's id minus 256."
    return what + rank


# ---- char vs byte --------------------------------------------------------------------------------
def twin_caption(corpus: str, config: TrainerConfig) -> str:
    """What the two twins share (Markdown; ``corpus``, the corpus's label, escaped)."""
    return (
        f"Both are trained on the session's corpus ({render.md_text(corpus)}) with the Train page's normalizer "
        f"({config.normalizer}) and pre-tokenizer ({config.pretokenizer}); only the unit differs."
    )


def twin_line(name: str, tok: Tokenizer, text: str) -> tuple[list[int], str]:
    """One twin's encoding of the playground's text and the line over its chips."""
    ids = tok.encode(text)
    stats = text_stats(tok, text, ids)
    return ids, f"{name}: {stats.tokens:,} tokens, {stats.unknown:,} unknown"


def twin_unknown_rows(byte_tok: Tokenizer, unknown: Counter[str]) -> list[dict[str, object]]:
    """Each character the char-level twin cannot represent, spelled out of bytes by the byte-level
    one, the most frequent first."""
    rows: list[dict[str, object]] = []
    for ch, n in unknown.most_common():
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
    return rows


# ---- decode ids ------------------------------------------------------------------------------------
_ID_TEXT = re.compile(r"[\s,;\[\]()]+")


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


def decode_ids(tok: Tokenizer, typed: str, text: str, *, errors: DecodeErrors) -> tuple[list[int], str]:
    """The ids to decode and what they decode to: the typed ids, numbered as the tokenizer's file
    numbers them (SentencePiece's order: :meth:`Tokenizer.shown_ids`, as the page shows ids
    everywhere), or, none typed, the first :data:`ID_LIMIT` ids of the playground's text. An
    :class:`ExplorerError` says what is wrong with typed ids."""
    ids = tok.ids_from_shown(parse_ids(typed)) if typed.strip() else tok.encode(text)[:ID_LIMIT]
    return ids, tok.decode(ids, errors=errors)


def decode_caption(ids: Sequence[int], errors: str, decoded: str) -> str:
    """The sentence over a decoding.

    >>> decode_caption([1, 2], "replace", "ab")
    "decode(2 ids, errors='replace') gives 2 characters:"
    """
    return f"decode({len(ids):,} ids, errors={errors!r}) gives {len(decoded):,} characters:"


def decode_rows(tok: Tokenizer, ids: Sequence[int]) -> list[dict[str, object]]:
    """Each of the first :data:`DECODE_ROWS` ids: its number as shown, its token, its bytes, and
    whether it holds only part of a character (its bytes then stand for it)."""
    rows: list[dict[str, object]] = []
    for i in ids[:DECODE_ROWS]:
        partial = isinstance(tok.token_text(i), bytes)
        rows.append(
            {
                "id": tok.shown_id(i),
                "token": render.token_label(tok, i),
                "bytes": tok.token_bytes(i).hex(" "),
                "note": "part of a character: its bytes in hex" if partial else "",
            }
        )
    return rows


# ---- the page's link -------------------------------------------------------------------------------
# A shared link or a saved session names the page's view by these params: a contract (their
# names and values never change), read back by :func:`view_values`.
def text_digest(text: str) -> str:
    """The name a stored text goes by in a link: its UTF-8's SHA-256 (lone surrogates kept).

    >>> text_digest("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def text_params(text: str, *, stored: bool) -> dict[str, str]:
    """The link's params of the text: none for the default example, the text itself up to
    :data:`INLINE_TEXT` characters, else its digest when it was ``stored`` (or its start, the
    most a link can give, when the store refused it).

    >>> text_params(EXAMPLES["English prose"], stored=False), text_params("hi", stored=False)
    ({}, {'text': 'hi'})
    >>> text_params("x" * 500, stored=True) == {"text_id": text_digest("x" * 500)}
    True
    >>> text_params("x" * 500, stored=False) == {"text": "x" * 400}
    True
    """
    if text == EXAMPLES["English prose"]:
        return {}
    if len(text) <= INLINE_TEXT:
        return {"text": text}
    return {"text_id": text_digest(text)} if stored else {"text": text[:INLINE_TEXT]}


def view_params(values: Mapping[str, object]) -> dict[str, str]:
    """The link's params of what the page shows beside its text and tokenizers, from the
    session's ``values`` (:class:`Keys`, :class:`Session`): the view (none: Encode), whitespace
    marks off, special tokens allowed, and the view's own choices (Why this split: tokenizer,
    piece and token; Decode ids: the typed ids and the errors mode).

    >>> view_params({Keys.VIEW: "Decode ids", Keys.DECODE_IDS: " 1, 2 ", Keys.DECODE_ERRORS: "strict"})
    {'view': 'decode', 'ids': '1, 2', 'errors': 'strict'}
    >>> view_params({Keys.WHITESPACE: False, Keys.SPECIAL: True, Keys.WHY_PIECE: 3})
    {'whitespace': '0', 'special': '1'}
    """
    params: dict[str, str] = {}
    view = values.get(Keys.VIEW, VIEWS[0])
    if view != VIEWS[0]:
        params["view"] = VIEW_SLUGS[str(view)]
    if not values.get(Keys.WHITESPACE, True):
        params["whitespace"] = "0"
    if values.get(Keys.SPECIAL):
        params["special"] = "1"
    if view == "Why this split":
        for param, key in (("why_tokenizer", Keys.WHY_TOKENIZER), ("piece", Keys.WHY_PIECE)):
            if values.get(key) is not None:
                params[param] = str(values[key])
        if values.get(Session.SHOWN_TOKEN) is not None:
            params["token"] = str(values[Session.SHOWN_TOKEN])
    if view == "Decode ids":
        ids = str(values.get(Keys.DECODE_IDS, "")).strip()
        if ids and len(ids) <= INLINE_IDS:
            params["ids"] = ids
        if values.get(Keys.DECODE_ERRORS, "replace") != "replace":
            params["errors"] = str(values[Keys.DECODE_ERRORS])
    return params


def view_values(params: Mapping[str, str]) -> tuple[dict[str, object], list[str]]:
    """The widgets' values a link's view params set (:func:`view_params` read back: the view,
    whitespace, special tokens, typed ids and errors mode), and what it had to leave out.

    >>> view_values({"view": "decode", "whitespace": "0", "ids": "1 2", "errors": "loud"})
    ({'w_play_view': 'Decode ids', 'w_play_ws': False, 'w_dec_ids': '1 2'}, ["errors='loud' is not one of replace, strict, ignore"])
    """
    values: dict[str, object] = {}
    problems: list[str] = []
    view = {slug: name for name, slug in VIEW_SLUGS.items()}.get(params.get("view", "encode"))
    if view is None:
        problems.append(f"view={params['view'][:20]!r} is not one of {', '.join(VIEW_SLUGS.values())}")
    else:
        values[Keys.VIEW] = view
    if "whitespace" in params:
        values[Keys.WHITESPACE] = params["whitespace"] != "0"
    if "special" in params:
        values[Keys.SPECIAL] = params["special"] == "1"
    if "ids" in params:
        values[Keys.DECODE_IDS] = params["ids"][:INLINE_IDS]
    if "errors" in params:
        if params["errors"] in DECODE_ERRORS:
            values[Keys.DECODE_ERRORS] = params["errors"]
        else:
            problems.append(f"errors={params['errors'][:20]!r} is not one of {', '.join(DECODE_ERRORS)}")
    return values, problems
