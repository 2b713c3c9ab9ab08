"""Merges given as token strings that name nothing else (seed 004's ``a b -> ab`` lines, the
merges CSV): no alphabet, unit, marker or pre-tokenizer. What the tokenizer is made of is
inferred from the symbols and said, in sentences for a page, as the reader's notes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from ..bpe.config import EncodeOptions, MarkerName, UnitName
from ..bpe.tokenizer import Tokenizer
from ..bpe.vocab import Vocab, VocabBuilder
from ..errors import ConfigError, FormatError
from ..stages.markers import EOW, G_SUFFIX, SP_PREFIX
from ..stages.pipeline import Pipeline
from ..stages.units import byte_alphabet
from .base import Imported, ImportOptions, Upload, require
from .shared import implied_alphabet, pretokenizer_note

__all__ = ["PLACEHOLDER", "merges_are_bytes", "read_token_merges", "tokenizer_from_token_merges"]

# GPT-2's byte symbols: the 256 display characters, and the 68 of them that stand in for bytes
# that are not printable (space = 'Ġ', newline = 'Ċ'); only byte-level tokens hold those as a rule
_BYTE_SYMBOLS = frozenset(byte_alphabet())


_STAND_INS = frozenset(c for c in _BYTE_SYMBOLS if ord(c) >= 256)


PLACEHOLDER = "<unused_{}>"  # an id a merges CSV leaves unexplained (before its merges' symbols)


_MARKER_NOTES = {
    "eow": "'</w>' is a symbol of its own: words end with a separate '</w>' (Sennrich et al. 2016)",
    "eow-glued": "'</w>' is glued to a word's last character (subword-nmt 0.2)",
    "g-suffix": "'Ġ' only ever ends a symbol: read as seed 004's pipeline ('Ġ' after every word, whitespace collapsed)",
    "sp-prefix": "'▁' starts the words (SentencePiece style)",
}


class _Layout(NamedTuple):
    unit: UnitName
    marker: MarkerName


def _guess_layout(merges: Sequence[tuple[str, str]], alphabet: Sequence[str]) -> _Layout:
    """Unit and word marker from the symbols of a merge list that names neither.

    >>> _guess_layout([("Ġ", "t"), ("h", "e")], ["Ġ", "t", "h", "e"])
    _Layout(unit='byte', marker='none')
    >>> _guess_layout([("e", "Ġ"), ("t", "h")], ["e", "Ġ", "t", "h"])
    _Layout(unit='char', marker='g-suffix')
    >>> _guess_layout([("l", "o"), ("lo", "w</w>")], ["l", "o", "w</w>"])
    _Layout(unit='char', marker='eow-glued')
    """
    symbols = [*alphabet, *(a + b for a, b in merges)]
    chars = set().union(*map(set, symbols))
    if any(EOW in s for s in symbols):
        return _Layout("char", "eow" if EOW in alphabet else "eow-glued")
    if SP_PREFIX in chars:
        return _Layout("char", "sp-prefix")
    stand_ins = chars & _STAND_INS
    if stand_ins == {G_SUFFIX} and all(s.find(G_SUFFIX) in (-1, len(s) - 1) for s in symbols):
        return _Layout("char", "g-suffix")
    if stand_ins and chars <= _BYTE_SYMBOLS and all(len(s) == 1 for s in alphabet):
        return _Layout("byte", "none")
    return _Layout("char", "none")


def tokenizer_from_token_merges(
    merges: Sequence[tuple[str, str]],
    *,
    ids: Sequence[int] | None = None,
    pretokenizer: str | None = None,
    pattern: str | None = None,
    name: str = "merges.txt",
    where: Callable[[int], str] | None = None,
    what: str = "arrow merges",
) -> tuple[Tokenizer, list[str]]:
    """(tokenizer, notes) from merges given as token strings (``read_arrow_merges``,
    ``read_merges_csv``), which name no alphabet, unit, marker or pre-tokenizer:

    - unit and marker from the symbols (GPT-2's byte symbols, stand-ins such as 'Ġ' leading
      tokens: byte level with all 256 bytes, sorted as the presets sort them; '</w>', a final 'Ġ',
      '▁': character level with that marker; else character level);
    - character level: the alphabet is the symbols the merges use that no merge makes, in order of
      first use, and other characters become the unknown token;
    - ``pretokenizer`` (and ``pattern``) as chosen, else gpt2 for byte level and whitespace for
      character level;
    - ``ids`` (a CSV's): the id each merge makes, checked; ids before the merges' symbols that the
      file does not explain are kept as placeholder special tokens (``<unused_0>``, ...), so that
      every merge keeps its id.

    The notes say, in sentences for a page, what was assumed.

    >>> tok, notes = tokenizer_from_token_merges([("l", "o"), ("lo", "w")])
    >>> tok.tokens(tok.encode("low lot")), notes[0]
    (['low', 'lo', '<unk>'], 'arrow merges carry no alphabet: 3 symbols implied by the merges; other characters become <unk>')
    """
    at = where or (lambda n: f"{name} merge {n + 1}")
    implied = implied_alphabet(merges)
    unit, marker = _guess_layout(merges, implied)
    for s in implied:
        if (
            len(s) != 1
            and not (marker == "eow" and s == EOW)
            and not (marker == "eow-glued" and len(s) == len(EOW) + 1 and s.endswith(EOW))
        ):
            n = next(i for i, pair in enumerate(merges) if s in pair)
            raise FormatError(
                f"{at(n)}: {s!r} is made by no merge, so it would start the vocabulary, but it is not one character"
            )
    notes: list[str] = []
    if unit == "byte":
        full = ids is None or (bool(ids) and ids[0] >= 256)
        base = sorted(byte_alphabet()) if full else sorted(implied)
        notes.append(
            f"{what} carry no alphabet: read as byte level (the merges use GPT-2's byte symbols, such as 'Ġ' "
            "for a space), "
            + (
                "with all 256 bytes in the presets' sorted order"
                if full
                else f"with the {len(base)} bytes the merges use (the ids leave no room for all "
                "256); other bytes become <unk>"
            )
        )
    else:
        base = implied
        notes.append(
            f"{what} carry no alphabet: {len(base)} symbols implied by the merges; other characters become <unk>"
        )
        if marker != "none":
            notes.append(_MARKER_NOTES[marker])
    reserved: list[str] = []
    reuse = True
    if ids is not None:
        require(
            ids[0] >= len(base),
            f"{at(0)} makes id {ids[0]}, but the {len(base)} symbols the merges start from "
            f"take ids 0-{len(base) - 1} or more",
        )
        taken = set(base) | {a + b for a, b in merges}
        k = 0
        while len(reserved) < ids[0] - len(base):
            if PLACEHOLDER.format(k) not in taken:
                reserved.append(PLACEHOLDER.format(k))
            k += 1
        first_id: dict[str, int] = {}
        for (a, b), i in zip(merges, ids):
            if first_id.setdefault(a + b, i) != i:
                reuse = False  # a token made twice with two ids: the trainer's reuse_ids was off
        if reserved:
            notes.append(
                f"ids 0-{len(reserved) - 1} come before the merges' symbols, but {name} does not say what they "
                f"are (special tokens, characters no merge uses): kept as placeholders "
                f"{reserved[0]}{'…' if len(reserved) > 1 else ''}, so that every merge keeps its id"
            )
    else:
        notes.append(f"{what} hold no ids and no special tokens: the alphabet takes the first ids, then one per merge")
    used = pretokenizer or ("gpt2" if unit == "byte" else "whitespace")
    notes.append(pretokenizer_note(what, pretokenizer, used))
    seed004 = marker == "g-suffix"
    try:
        pipeline = Pipeline(
            normalizer="collapse-whitespace" if seed004 else "none",
            pretokenizer=used,
            pattern=pattern,
            unit=unit,
            marker=marker,
        )
    except ConfigError as err:
        raise FormatError(f"{name}: {err}") from None
    vocab = VocabBuilder(reserved, base, reuse_ids=reuse)
    pairs = []
    for n, (a, b) in enumerate(merges):
        for part in (a, b):
            require(part in vocab.ids, f"{at(n)}: {part!r} is made only by a later merge")
        made, _ = vocab.add_merge(vocab.ids[a], vocab.ids[b])
        if ids is not None:
            require(
                ids[n] == made,
                f"{at(n)} says {a + b!r} has id {ids[n]}, but its place gives it id {made} "
                "(ids run: the ids before the merges, then one per new token in order)",
            )
        pairs.append((vocab.ids[a], vocab.ids[b]))
    return Tokenizer(
        pipeline=pipeline,
        vocab=Vocab(tuple(reserved), tuple(base), tuple(pairs), reuse),
        encoding=EncodeOptions(dropout_style="once") if seed004 else EncodeOptions(),
    ), notes


def merges_are_bytes(merges: Sequence[tuple[str, str]]) -> bool:
    """Whether merges read as byte level (so a page asks for the regex that splits the text).

    >>> merges_are_bytes([("Ġ", "t")]), merges_are_bytes([("l", "o")])
    (True, False)
    """
    return _guess_layout(merges, implied_alphabet(merges)).unit == "byte"


def read_token_merges(
    upload: Upload,
    merges: Sequence[tuple[str, str]],
    lines: Sequence[int],
    options: ImportOptions,
    *,
    ids: Sequence[int] | None = None,
    what: str,
) -> Imported:
    """A reader's result for merges read from ``upload``, merge n on line ``lines[n]``."""
    tok, notes = tokenizer_from_token_merges(
        merges,
        ids=ids,
        pretokenizer=options.pretokenizer,
        pattern=options.pattern,
        name=upload.name,
        where=lambda n: f"{upload.name} line {lines[n]}",
        what=what,
    )
    return Imported(tok, notes)
