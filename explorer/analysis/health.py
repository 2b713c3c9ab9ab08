"""Token health: which tokens of a vocabulary encoding can never give, which hold only part of a
UTF-8 character, and which a reference text never uses (Land & Bartolo 2024, "Fishing for
Magikarp"; the tiktoken and HF issues about tokens that cannot be produced).

A token is **unreachable** when encoding its own text does not give exactly that one id. Its own
text is, at byte level, its bytes:

- bytes that are UTF-8 are decoded and encoded as any text is (normalizer, pre-tokenizer,
  merges; special tokens are plain text): tiktoken's ``encode_ordinary``. A token that the
  pre-tokenizer cuts in two (o200k_base's ``" I'"``: ``" I"`` + ``"'"``) is unreachable, and
  so is one that its merges rebuild otherwise.
- bytes that are not UTF-8 on their own (a part of a character) are encoded as tiktoken's
  ``_encode_bytes`` encodes them: the longest UTF-8 prefix is pre-tokenized and encoded, then
  its last piece (widened over the whitespace-only tokens before it) is joined to the rest of
  the bytes, and those bytes are one piece: a token if they are one (tiktoken's rules), else
  merged.

At character level the text of a token is ambiguous when there is a word marker (is ``es`` a
word, or the inside of one?), so a character-level token is tested as its own symbols (the
alphabet symbols its merges joined, marker included), merged alone: the merges rebuild it or
they do not.

A rank table need not be made by merges (tiktoken merges any two neighbours whose bytes joined are
a token): a token that merging its own bytes never makes (``Tokenizer.made_whole``, 678 of Llama
3's) is reached only as a whole piece, or never; the report lists them apart by which.

Special tokens are neither scanned nor counted among ``tokens``; ``special`` counts them.

Data shapes::

    HealthReport(tokens=50256, unreachable=(), partial_utf8=(94, 95, ...), unused=None,
                 special=1, reference_tokens=None, examples={"unreachable": (), ...})
    TokenNote(id=447, token="âĢ", hex="e2 80", encodes_as=None)     # GPT-2's, part of "…" and "’"
    TokenNote(id=3413, token="ĠI'", hex="20 49 27", encodes_as=(357, 6))  # o200k_base's: " I", "'"
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain, islice
from typing import Literal

from ..bpe.tokenizer import Tokenizer
from ..stages.pretokenizers import PATTERNS_COMPILED, iter_piece_texts
from ..stages.units import UNICODE_TO_BYTE, bytes_to_display

__all__ = ["EXAMPLES", "HealthReport", "Kind", "TokenNote", "bytes_ids", "encode_own_text", "scan"]

EXAMPLES = 5  # examples of each kind in a report
Kind = Literal["unreachable", "partial_utf8", "unused"]
_DISPLAY_TO_LATIN1 = {ord(c): b for c, b in UNICODE_TO_BYTE.items()}  # str.translate: "Ġ" -> " "
_SPACE = frozenset(b" \n\t")  # tiktoken widens an unfinished piece over tokens of these bytes only


@dataclass(frozen=True, slots=True)
class TokenNote:
    """One token shown as an example: its id, as the vocabulary file writes it, its bytes in hex
    and, for an unreachable token, the ids its own text encodes as."""

    id: int
    token: str
    hex: str
    encodes_as: tuple[int, ...] | None = None

    def as_dict(self, *, shown: Callable[[Sequence[int]], list[int]] = list) -> dict:
        """The note as JSON, its ids written by ``shown`` (``Tokenizer.shown_ids``: a file's own ids)."""
        out: dict = {"id": shown([self.id])[0], "token": self.token, "hex": self.hex}
        if self.encodes_as is not None:
            out["encodes_as"] = shown(self.encodes_as)
        return out


@dataclass(frozen=True, slots=True)
class HealthReport:
    """What ``scan`` found. ``unused`` and ``reference_tokens`` are None without a reference."""

    tokens: int  # token ids scanned: the vocabulary without its special tokens
    unreachable: tuple[int, ...]
    partial_utf8: tuple[int, ...]
    unused: tuple[int, ...] | None
    special: int
    reference_tokens: int | None = None  # tokens of the reference text
    examples: dict[Kind, tuple[TokenNote, ...]] = field(default_factory=dict)
    removed: tuple[int, ...] = ()  # PickyBPE's removed tokens: out of the vocabulary, not scanned
    # a rank table's tokens that merging their own bytes never makes (``Tokenizer.made_whole``),
    # by what tiktoken does with them: given for a piece that is the token whole, or never
    whole_piece_only: tuple[int, ...] = ()
    never_made: tuple[int, ...] = ()

    def as_dict(self, *, shown: Callable[[Sequence[int]], list[int]] = list) -> dict:
        """The CLI's JSON: ``tokens``, the unreachable ids, counts of the other kinds, then the
        rest; every id written by ``shown`` (``Tokenizer.shown_ids``, for a tokenizer that keeps
        its file's ids).

        >>> HealthReport(3, (2,), (), None, 1).as_dict()
        {'tokens': 3, 'unreachable': [2], 'partial_utf8': 0, 'unused': None, 'special': 1, 'reference_tokens': None, 'examples': {}}

        A PickyBPE vocabulary's removed ids are said apart, after ``unused``:

        >>> list(HealthReport(3, (), (), None, 0, removed=(5, 9)).as_dict())[:5]
        ['tokens', 'unreachable', 'partial_utf8', 'unused', 'removed']

        A rank table's tokens that are not one merge of two lower-ranked tokens are said apart
        too, by what tiktoken does with them:

        >>> HealthReport(3, (7,), (), None, 0, whole_piece_only=(5,), never_made=(7,)).as_dict()["not_one_merge"]
        {'whole_piece_only': [5], 'never': [7]}
        """
        removed: dict[str, object] = {"removed": shown(self.removed)} if self.removed else {}
        if self.whole_piece_only or self.never_made:
            removed["not_one_merge"] = {
                "whole_piece_only": shown(self.whole_piece_only),
                "never": shown(self.never_made),
            }
        return {
            "tokens": self.tokens,
            "unreachable": shown(self.unreachable),
            "partial_utf8": len(self.partial_utf8),
            "unused": None if self.unused is None else len(self.unused),
            **removed,
            "special": self.special,
            "reference_tokens": self.reference_tokens,
            "examples": {kind: [note.as_dict(shown=shown) for note in notes] for kind, notes in self.examples.items()},
        }


def scan(tokenizer: Tokenizer, *, reference: str | None = None) -> HealthReport:
    """Every token of the vocabulary (special tokens aside): unreachable, part of a UTF-8
    character, unused on ``reference``; up to EXAMPLES of each kind, merged tokens first.

    >>> from explorer import TrainerConfig
    >>> from explorer.stages.units import byte_alphabet
    >>> cfg = TrainerConfig(pretokenizer="none", alphabet="full-bytes")
    >>> tok = Tokenizer(config=cfg, alphabet=byte_alphabet(), merges=[(98, 99), (97, 98), (257, 99)])
    >>> report = scan(tok, reference="abcab")  # "abc" merges b + c first: a, bc
    >>> report.unreachable, len(report.partial_utf8), len(report.unused), report.reference_tokens
    ((258,), 128, 256, 3)
    >>> report.examples["unreachable"]
    (TokenNote(id=258, token='abc', hex='61 62 63', encodes_as=(97, 256)),)
    """
    removed = tokenizer.vocab.removed  # PickyBPE's: no longer tokens, so never made by design
    ids = [i for i in range(len(tokenizer)) if not tokenizer.is_special(i) and i not in removed]
    data = _token_bytes(tokenizer, ids)
    decoded = list(map(_decoded, data))
    partial = tuple(i for i, text in zip(ids, decoded) if isinstance(text, int))
    own = _own_encodings(tokenizer, ids, data, decoded)
    unreachable = tuple(i for i in ids if own[i] != (i,))
    not_merges = [i for i in ids if tokenizer.made_whole(i)] if tokenizer.rules == "tiktoken" else []
    unused: tuple[int, ...] | None = None
    reference_tokens = None
    if reference is not None:
        used = tokenizer.encode(reference)
        reference_tokens = len(used)
        unused = tuple(sorted(set(ids).difference(used)))
    examples: dict[Kind, tuple[TokenNote, ...]] = {
        "unreachable": _notes(tokenizer, unreachable, own),
        "partial_utf8": _notes(tokenizer, partial),
    }
    if unused is not None:
        examples["unused"] = _notes(tokenizer, unused)
    return HealthReport(
        tokens=len(ids),
        unreachable=unreachable,
        partial_utf8=partial,
        unused=unused,
        special=len(tokenizer.special_ids),
        reference_tokens=reference_tokens,
        examples=examples,
        removed=tuple(sorted(removed)),
        whole_piece_only=tuple(i for i in not_merges if own[i] == (i,)),
        never_made=tuple(i for i in not_merges if own[i] != (i,)),
    )


def encode_own_text(tokenizer: Tokenizer, token_id: int) -> tuple[int, ...]:
    """The ids a token's own text encodes as (the module's rule); ``(token_id,)`` when reachable.

    >>> from explorer import load_pretrained
    >>> tok = load_pretrained("o200k_base")
    >>> tok.tokens(encode_own_text(tok, tok.token_to_id("ĠI'")))
    ['ĠI', "'"]
    """
    if tokenizer.pipeline.unit != "byte":
        return _own_symbols(tokenizer, [token_id])[token_id]
    return bytes_ids(tokenizer, tokenizer.token_bytes(token_id))


def bytes_ids(tokenizer: Tokenizer, data: bytes) -> tuple[int, ...]:
    """Any bytes encoded as the scan encodes a byte-level token's own bytes (tiktoken's
    ``_encode_bytes``): UTF-8 as text, else the rule of the module's docstring.

    >>> from explorer import load_pretrained
    >>> tok = load_pretrained("gpt2")
    >>> tok.tokens(bytes_ids(tok, "a, bä".encode()[:-1])), tok.tokens(bytes_ids(tok, b"hi"))
    (['a', ',', 'Ġb', 'Ã'], ['hi'])
    """
    text = _decoded(data)
    if isinstance(text, int):
        return _partial_ids(tokenizer, data, text)
    return _pieces_ids(tokenizer, tokenizer.piece_texts(text))


def _own_encodings(
    tok: Tokenizer, ids: Sequence[int], data: Sequence[bytes], decoded: Sequence[str | int]
) -> dict[int, tuple[int, ...]]:
    """id -> what its own text encodes as, for the tokens ``ids`` whose bytes are ``data``,
    ``decoded`` (``_decoded``: the text, or how many bytes are UTF-8)."""
    if tok.pipeline.unit != "byte":
        return _own_symbols(tok, ids)
    out: dict[int, tuple[int, ...]] = {}
    texts: dict[int, str] = {}
    for i, raw, text in zip(ids, data, decoded):
        if isinstance(text, int):
            out[i] = _partial_ids(tok, raw, text)
        else:
            texts[i] = text
    # tiktoken's rules take a piece that is a token whole: a token left one piece is reached
    whole = tok.rules == "tiktoken"
    for (i, text), pieces in zip(texts.items(), _pieces_of(tok, texts.values())):
        out[i] = (i,) if whole and len(pieces) == 1 and pieces[0] == text else _pieces_ids(tok, pieces)
    return out


def _pieces_of(tok: Tokenizer, texts: Iterable[str]) -> Iterable[list[str]]:
    """The pieces ``encode`` merges, for each text: the pre-tokenizer's batch over all of them
    when nothing comes before it (no normalizer, the text one sequence), else text by text.

    >>> from explorer import load_pretrained
    >>> list(_pieces_of(load_pretrained("gpt2"), ["Ġa", " a b"]))
    [['Ġa'], [' a', ' b']]
    """
    cfg = tok.pipeline
    if cfg.normalizer == "none" and cfg.sequences == "text":
        pattern = PATTERNS_COMPILED.get(cfg.pretokenizer)
        if pattern is not None:  # a built-in regex: each token's text in one findall (in C)
            return map(pattern.findall, texts)
        if cfg.pattern is None:
            return iter_piece_texts(texts, pretokenizer=cfg.pretokenizer, pattern=cfg.pattern)
    # a custom regex (an imported table's own, Llama 3's): its time budget is per text, as when
    # encoding one; one budget for 128,000 tokens' texts would run out on a busy machine
    return (list(tok.piece_texts(t)) for t in texts)


def _pieces_ids(tok: Tokenizer, pieces: Iterable[str]) -> tuple[int, ...]:
    """The ids of pre-tokenized pieces as ``encode`` gives them, without filling its piece cache
    (a scan would put every token of the vocabulary there).

    >>> from explorer import load_pretrained
    >>> tok = load_pretrained("gpt2")
    >>> _pieces_ids(tok, [" hello", " wörld"]) == tuple(tok.encode(" hello wörld"))
    True
    """
    return tuple(chain.from_iterable(_piece_ids(tok, p) for p in pieces))


def _piece_ids(tok: Tokenizer, piece: str) -> Sequence[int]:
    whole = tok.whole_token(piece)
    return (whole,) if whole is not None else tok.encode_bytes(piece.encode("utf-8", "surrogatepass"))


def _partial_ids(tok: Tokenizer, raw: bytes, valid: int) -> tuple[int, ...]:
    """tiktoken's ``_encode_bytes`` of bytes whose first ``valid`` bytes are UTF-8: the prefix
    encoded piece by piece; its last piece's tokens, and the whitespace-only tokens before them,
    given back as bytes, joined to the rest; those bytes one piece.

    >>> from explorer import load_pretrained
    >>> tok = load_pretrained("gpt2")
    >>> tok.tokens(_partial_ids(tok, bytes.fromhex("20 e2 80"), 1))  # " " joins the bytes after it: a token
    ['ĠâĢ']
    """
    per_piece = [_piece_ids(tok, p) for p in tok.piece_texts(raw[:valid].decode("utf-8"))]
    ids = list(chain.from_iterable(per_piece))
    last = len(per_piece[-1]) if per_piece else 0
    space = lambda i: _SPACE.issuperset(tok.token_bytes(i))  # noqa: E731 - asked of a few tokens
    if last and space(ids[-last]):
        while last < len(ids) and space(ids[-last - 1]):
            last += 1
    head = len(ids) - last
    rest = b"".join(map(tok.token_bytes, ids[head:])) + raw[valid:]
    return (*ids[:head], *_bytes_ids(tok, rest))


def _bytes_ids(tok: Tokenizer, raw: bytes) -> Sequence[int]:
    """Bytes taken as one piece: a token when they are one (tiktoken's rules), else merged."""
    if tok.rules == "tiktoken":
        whole = tok.token_to_id(bytes_to_display(raw))
        if whole is not None and not tok.is_special(whole):
            return (whole,)
    return tok.encode_bytes(raw)


def _own_symbols(tok: Tokenizer, ids: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """Character level: each token's alphabet symbols (its merges' leaves, in order) merged
    alone by the tokenizer's merges.

    >>> from explorer import TrainerConfig
    >>> tok = Tokenizer(config=TrainerConfig(pretokenizer="none", unit="char"), alphabet=["a", "b", "c"], merges=[(1, 2), (0, 1), (4, 2)])
    >>> _own_symbols(tok, [3, 4, 5])  # "abc": b + c merge first
    {3: (3,), 4: (4,), 5: (0, 3)}
    """
    symbols: dict[int, tuple[int, ...]] = {}
    for (a, b), new in zip(tok.merges, tok.merged_ids):
        # a merge joins tokens made before it; a reused id keeps its first making
        symbols.setdefault(new, symbols.get(a, (a,)) + symbols.get(b, (b,)))
    return {i: tok.merge_symbols(symbols.get(i, (i,))) for i in ids}


def _notes(tok: Tokenizer, ids: Sequence[int], own: dict[int, tuple[int, ...]] | None = None) -> tuple[TokenNote, ...]:
    """Up to EXAMPLES tokens of ``ids`` as notes, merged tokens (the telling ones) first."""
    merged = (i for i in ids if tok.merge_rank(i) is not None)
    chosen = list(islice(chain(merged, (i for i in ids if tok.merge_rank(i) is None)), EXAMPLES))
    return tuple(
        TokenNote(i, tok.id_to_token(i), tok.token_bytes(i).hex(" "), None if own is None else own[i]) for i in chosen
    )


def _token_bytes(tok: Tokenizer, ids: Sequence[int]) -> list[bytes]:
    """The bytes of each token: at byte level all display strings mapped in one ``translate``
    and cut by their lengths (one display character per byte), else token by token.

    >>> from explorer import load_pretrained
    >>> _token_bytes(load_pretrained("gpt2"), [32, 220, 995])
    [b'A', b' ', b' world']
    """
    if tok.pipeline.unit == "byte":
        tokens = [tok.id_to_token(i) for i in ids]
        display = "".join(tokens)
        if set(display).issubset(UNICODE_TO_BYTE):  # else a token outside GPT-2's table: token_bytes says which
            joined = display.translate(_DISPLAY_TO_LATIN1).encode("latin-1")
            ends = list(accumulate(map(len, tokens)))
            return [joined[start:end] for start, end in zip([0, *ends], ends)]
    return list(map(tok.token_bytes, ids))


def _decoded(data: bytes) -> str | int:
    """The text of UTF-8 bytes, or how many of the first bytes are UTF-8 (tiktoken's
    ``valid_up_to``).

    >>> _decoded("é".encode()), _decoded("aé".encode()[:2])
    ('é', 1)
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.start
