"""Importers: tokenizers made elsewhere, read into ours.

``import_files`` takes the uploaded files by name and finds their format from what they hold::

    {"tokenizer.json": b'{"model": {"type": "BPE", ...'}               -> hf
    {"vocab.json": ..., "merges.txt": b"#version: 0.2\\n..."}           -> gpt2
    {"cl100k_base.tiktoken": ..., ["tokenizer.json": {"pat_str": ...}]} -> tiktoken
    {"codes.txt": b"#version: 0.2\\ne s\\n..."}                          -> subword-nmt
    {"tokenizer.model": b"minbpe v1\\n...", ["tokenizer.vocab"]}         -> minbpe
    {"trace.json": ...}                                                 -> trace
    {"merges.txt": b"l o -> lo\\n..."}                                   -> arrow (seed 004)
    {"merges.csv": b"step,left,right,token,id,..."}                     -> csv
    {"bpe-udhr_en-20-merges-gpt2.zip": b"PK..."}                        -> the format of the files inside

A zip counts as the files it holds (bounded: see ``unzip_files``), so the Train page's download
of a format of several files imports as it is. Arrow merges and the CSV name no alphabet, unit or
pre-tokenizer; what was assumed is said in ``import_report``'s notes, as is a ``.tiktoken``
recognised as a bundled table (which brings its own regex and special tokens).

Merges are the source of truth here too: the ids a file gives must be the ids its merges derive
(special tokens, the alphabet, one id per merge), and a file that says otherwise is refused with
the line or key where it goes wrong, never half-loaded. Every failure is a FormatError with one
sentence that names the file.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from ..bpe.config import EncodeOptions, MarkerName, TrainerConfig, UnitName
from ..bpe.tokenizer import Tokenizer
from ..bpe.vocab import Vocab
from ..errors import ConfigError, FormatError
from ..stages.markers import EOW, G_SUFFIX, SP_PREFIX
from ..stages.units import byte_alphabet
from .base import decode_text, json_object, require
from .gpt2 import _gpt2_files, tokenizer_from_gpt2, tokenizer_from_gpt2_files
from .hf import tokenizer_from_hf
from .minbpe import tokenizer_from_minbpe
from .shared import implied_alphabet, pretokenizer_note, tokenizer_from_vocab_merges
from .subword_nmt import tokenizer_from_subword_nmt
from .tiktoken_ranks import _bundled, read_ranks, read_tiktoken, tokenizer_from_tiktoken
from .trace import TRACE_FORMAT, tokenizer_from_trace
from .zips import ZIP_MAX_MEMBERS, ZIP_MAX_RATIO, expand_zips, is_zip, unzip_files

__all__ = [
    "IMPORT_FORMATS",
    "ImportFormat",
    "ImportReport",
    "ZIP_MAX_MEMBERS",
    "ZIP_MAX_RATIO",
    "needs_pretokenizer",
    "import_files",
    "import_report",
    "import_with_format",
    "implied_alphabet",
    "is_zip",
    "read_arrow_merges",
    "read_merges_csv",
    "read_ranks",
    "read_tiktoken",
    "tokenizer_from_gpt2",
    "tokenizer_from_gpt2_files",
    "tokenizer_from_hf",
    "tokenizer_from_vocab_merges",
    "tokenizer_from_tiktoken",
    "tokenizer_from_subword_nmt",
    "tokenizer_from_minbpe",
    "tokenizer_from_token_merges",
    "unzip_files",
]


# ---- merge lists: seed 004's 'a b -> ab' lines, the merges CSV --------------------------------
# GPT-2's byte symbols: the 256 display characters, and the 68 of them that stand in for bytes
# that are not printable (space = 'Ġ', newline = 'Ċ'); only byte-level tokens hold those as a rule
_BYTE_SYMBOLS = frozenset(byte_alphabet())
_STAND_INS = frozenset(c for c in _BYTE_SYMBOLS if ord(c) >= 256)
CSV_NEEDED = ("step", "left", "right", "token", "id")  # the columns of exporters.CSV_COLUMNS read back
PLACEHOLDER = "<unused_{}>"  # an id a merges CSV leaves unexplained (before its merges' symbols)
_MARKER_NOTES = {
    "eow": "'</w>' is a symbol of its own: words end with a separate '</w>' (Sennrich et al. 2016)",
    "eow-glued": "'</w>' is glued to a word's last character (subword-nmt 0.2)",
    "g-suffix": "'Ġ' only ever ends a symbol: read as seed 004's pipeline ('Ġ' after every word, whitespace collapsed)",
    "sp-prefix": "'▁' starts the words (SentencePiece style)",
}


def read_arrow_merges(text: str, *, name: str = "merges.txt") -> tuple[list[tuple[str, str]], list[int]]:
    """Seed 004's merges file (``left right -> token`` per line) -> the pairs and the line each
    is on.

    >>> read_arrow_merges("l o -> lo\\n\\nlo w -> low\\n")
    ([('l', 'o'), ('lo', 'w')], [1, 3])
    >>> read_arrow_merges("l o -> lo\\nlo w low\\n")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: merges.txt line 2: expected 'left right -> token', found 'lo w low'
    """
    pairs, where = [], []
    for n, raw in enumerate(text.removeprefix("\ufeff").split("\n"), 1):
        line = raw.removesuffix("\r")
        if not line.strip():
            continue
        parts = line.split(" ")  # tokens hold no space (the exporter refuses one that does)
        require(
            len(parts) == 4 and parts[2] == "->" and all(parts),
            f"{name} line {n}: expected 'left right -> token', found {line[:60]!r}",
        )
        a, b, _, made = parts
        require(made == a + b, f"{name} line {n}: {a!r} + {b!r} makes {a + b!r}, not {made!r}")
        pairs.append((a, b))
        where.append(n)
    require(bool(pairs), f"{name} holds no merges")
    return pairs, where


def read_merges_csv(text: str, *, name: str = "merges.csv") -> tuple[list[tuple[str, str]], list[int], list[int]]:
    """The merges CSV (``exporters.to_merges_csv``) -> the pairs, the id each makes and the line
    each is on. Columns are found by the header's names; ``step, left, right, token, id`` must be
    there, the counts may be missing.

    >>> read_merges_csv('step,left,right,token,id\\n1,a,",","a,",3\\n')
    ([('a', ',')], [3], [2])
    >>> read_merges_csv('step,left,right,token,id\\n1,a,b,ab,3\\n2,ab,b,abc,4\\n')
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: merges.csv line 3: 'ab' + 'b' makes 'abb', but the token column says 'abc'
    """
    rows = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    pairs: list[tuple[str, str]] = []
    ids: list[int] = []
    where: list[int] = []
    try:
        header = next(rows, None)
        require(header is not None and any(h.strip() for h in header), f"{name} is empty")
        assert header is not None
        column: dict[str, int] = {}
        for i, h in enumerate(header):
            column.setdefault(h.strip().lower(), i)
        missing = [c for c in CSV_NEEDED if c not in column]
        require(
            not missing,
            f"{name} line 1: the header has no {', '.join(repr(c) for c in missing)} "
            f"column{'s' * (len(missing) > 1)} "
            f"(a merges CSV starts 'step,left,right,token,id'; found {','.join(header)[:60]!r})",
        )
        last = max(column[c] for c in CSV_NEEDED)
        for row in rows:
            n = rows.line_num
            if not any(cell.strip() for cell in row):
                continue
            require(
                len(row) > last,
                f"{name} line {n}: {len(row)} fields, but the header puts 'id' and the others in the first {last + 1}",
            )
            step, left, right, token, new = (row[column[c]] for c in CSV_NEEDED)
            require(
                step.strip() == str(len(pairs) + 1),
                f"{name} line {n}: step {step!r} where step {len(pairs) + 1} was expected (one row per merge, in order)",
            )
            require(bool(left) and bool(right), f"{name} line {n}: the left or right token is empty")
            require(
                token == left + right,
                f"{name} line {n}: {left!r} + {right!r} makes {left + right!r}, but the token column says {token!r}",
            )
            require(
                new.strip().isascii() and new.strip().isdigit(), f"{name} line {n}: id {new!r} is not a whole number"
            )
            pairs.append((left, right))
            ids.append(int(new))
            where.append(n)
    except csv.Error as err:
        raise FormatError(f"{name} line {rows.line_num}: {err}") from None
    require(bool(pairs), f"{name} holds no merges (only its header)")
    return pairs, ids, where


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
        config = TrainerConfig(
            normalizer="collapse-whitespace" if seed004 else "none",
            pretokenizer=used,
            pattern=pattern,
            unit=unit,
            marker=marker,
            alphabet="full-bytes" if unit == "byte" and len(base) == 256 else "present",
            alphabet_order="sorted" if unit == "byte" else "first-seen",
            special_tokens=tuple(reserved),
            reuse_ids=reuse,
            vocab_size=None,
            num_merges=None,
        ).validate()
    except ConfigError as err:
        raise FormatError(f"{name}: {err}") from None
    vocab = Vocab(reserved, base, reuse_ids=reuse)
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
        config=config,
        alphabet=base,
        merges=pairs,
        encoding=EncodeOptions(dropout_style="once") if seed004 else EncodeOptions(),
    ), notes


# ---- which files are which ------------------------------------------------------------------
class ImportFormat(NamedTuple):
    name: str
    title: str
    files: str  # what to upload, for people


_ZIPPED = ", or the .zip of them the Train page downloads"
IMPORT_FORMATS: dict[str, ImportFormat] = {
    f.name: f
    for f in (
        ImportFormat("hf", "Hugging Face tokenizer.json", "tokenizer.json (a BPE model)"),
        ImportFormat("gpt2", "GPT-2 vocab.json + merges.txt", "vocab.json and merges.txt (byte level)" + _ZIPPED),
        ImportFormat(
            "tiktoken",
            "tiktoken rank file",
            "a .tiktoken file and the JSON with pat_str beside it"
            + _ZIPPED
            + " (a bundled table, e.g. cl100k_base.tiktoken, alone)",
        ),
        ImportFormat("subword-nmt", "subword-nmt codes", "a codes file ('#version: 0.2' then 'a b' lines)"),
        ImportFormat("minbpe", "minbpe .model", "a .model file (its .vocab is optional)" + _ZIPPED),
        ImportFormat("arrow", "merges as 'a b -> ab'", "a merges file of 'left right -> token' lines (seed 004)"),
        ImportFormat("csv", "merge history (CSV)", "merges.csv as this app writes it (step,left,right,token,id,...)"),
        ImportFormat("trace", "BPE Explorer trace.json", "trace.json, as this app and its CLI write"),
    )
}


def _kind(name: str, data: bytes) -> tuple[str, object]:
    """What one file is, and its content: trace, hf, tiktoken-meta, vocab-json, tiktoken,
    minbpe-model, minbpe-vocab, csv, arrow or merges; a file of none of these layouts is a
    FormatError that lists the formats."""
    lower = name.lower()
    if lower.endswith(".tiktoken"):
        return "tiktoken", data
    text = decode_text(name, data)
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith("{") or lower.endswith(".json"):
        obj = json_object(stripped, name)
        if obj.get("format") == TRACE_FORMAT:
            return "trace", obj
        # a vocabulary may hold the tokens "model" and "pat_str" (GPT-2's holds "model"): only
        # token -> id entries make a vocab.json
        if obj and all(isinstance(v, int) and not isinstance(v, bool) for v in obj.values()):
            return "vocab-json", obj
        if isinstance(obj.get("model"), dict):
            return "hf", obj
        if "pat_str" in obj:
            return "tiktoken-meta", obj
        raise FormatError(
            f"{name}: a JSON file of no known layout (expected a tokenizer.json with 'model', a trace.json, "
            "a vocab.json of token -> id, or a tiktoken JSON with 'pat_str')"
        )
    if stripped.startswith("minbpe") or lower.endswith(".model"):
        return "minbpe-model", text
    if lower.endswith(".vocab"):
        return "minbpe-vocab", text
    first_line = stripped.split("\n", 1)[0]
    if lower.endswith(".csv") or first_line.lower().startswith("step,"):
        return "csv", text
    first = first_line.split()
    if len(first) == 2 and first[1].isdigit() and not stripped.startswith("#"):
        return "tiktoken", data
    if not stripped or stripped.startswith("#"):
        return "merges", text  # '#version' is checked where the merges are read
    if any(" -> " in line for line in stripped.split("\n", 50)[:50]):
        return "arrow", text
    if len(first_line.removesuffix("\r").split(" ")) == 2:
        return "merges", text  # merges without their '#version' line: said so where they are read
    raise FormatError(
        f"{name} is a file of no known layout (it starts {first_line[:40]!r}); give one of: "
        + "; ".join(f.files for f in IMPORT_FORMATS.values())
    )


def _classify(files: Mapping[str, bytes]) -> tuple[str, dict[str, tuple[str, object]]]:
    require(bool(files), "no file given")
    kinds = {name: _kind(name, data) for name, data in files.items()}
    found = sorted(k for k, _ in kinds.values())
    for fmt, wanted in (
        ("trace", ["trace"]),
        ("hf", ["hf"]),
        ("gpt2", ["merges", "vocab-json"]),
        ("tiktoken", ["tiktoken"]),
        ("tiktoken", ["tiktoken", "tiktoken-meta"]),
        ("subword-nmt", ["merges"]),
        ("minbpe", ["minbpe-model"]),
        ("minbpe", ["minbpe-model", "minbpe-vocab"]),
        ("arrow", ["arrow"]),
        ("csv", ["csv"]),
    ):
        if found == wanted:
            return fmt, kinds
    names = ", ".join(f"{n} ({k})" for n, (k, _) in kinds.items())
    hints = {
        "vocab-json": "a vocab.json needs its merges.txt",
        "tiktoken-meta": "a tiktoken JSON needs its .tiktoken file",
        "minbpe-vocab": "a minbpe .vocab needs its .model (only the .model is read)",
    }
    hint = next((hints[k] for k in found if k in hints and len(found) == 1), None)
    raise FormatError(
        f"cannot tell which tokenizer these files make: {names}"
        + (f"; {hint}" if hint else "; give one of: " + "; ".join(f.files for f in IMPORT_FORMATS.values()))
    )


def _merge_list(fmt: str, name: str, text: str) -> tuple[list[tuple[str, str]], list[int] | None, Callable[[int], str]]:
    if fmt == "arrow":
        pairs, lines = read_arrow_merges(text, name=name)
        return pairs, None, lambda n: f"{name} line {lines[n]}"
    pairs, ids, lines = read_merges_csv(text, name=name)
    return pairs, ids, lambda n: f"{name} line {lines[n]}"


def needs_pretokenizer(files: Mapping[str, bytes]) -> bool:
    """Whether these files leave the pre-tokenizer to the caller (vocab.json + merges.txt, a
    .tiktoken without its JSON that is not a bundled table, byte-level arrow merges or CSV): a
    page asks for it only then."""
    expanded = expand_zips(files)
    fmt, kinds = _classify(expanded)
    if fmt == "gpt2":
        return True
    if fmt == "tiktoken":
        found = {k: content for k, content in kinds.values()}
        return "tiktoken-meta" not in found and _bundled(found["tiktoken"]) is None
    if fmt in ("arrow", "csv"):
        ((name, (_, text)),) = kinds.items()
        merges, _, _ = _merge_list(fmt, name, text)
        return _guess_layout(merges, implied_alphabet(merges)).unit == "byte"
    return False


class ImportReport(NamedTuple):
    """What an import read: the format, the tokenizer, sentences for a page saying what was
    assumed or recognised (empty when the files say everything), and the files read (the
    members of a zip by their names)."""

    format: str
    tokenizer: Tokenizer
    notes: tuple[str, ...]
    members: tuple[str, ...]


def import_files(
    files: Mapping[str, bytes], *, pretokenizer: str | None = None, pattern: str | None = None
) -> Tokenizer:
    """The tokenizer the given files make (name -> content). ``pretokenizer`` (and ``pattern``
    for ``regex``) choose the split for formats that hold none (vocab.json + merges.txt: GPT-2's
    regex by default; a .tiktoken without its JSON: required unless it is a bundled table; arrow
    merges and the CSV: gpt2 for byte level, whitespace for character level).

    >>> from explorer import make_config, train
    >>> from explorer.formats.exporters import export_files
    >>> tok = train("low lower lowest", make_config("gpt4", num_merges=4)).tokenizer()
    >>> import_files(export_files(tok, "hf")).merges == tok.merges
    True
    """
    return import_report(files, pretokenizer=pretokenizer, pattern=pattern).tokenizer


def import_with_format(
    files: Mapping[str, bytes], *, pretokenizer: str | None = None, pattern: str | None = None
) -> tuple[str, Tokenizer]:
    """(format, tokenizer): :func:`import_files` with the format it found (each file is read
    once)."""
    report = import_report(files, pretokenizer=pretokenizer, pattern=pattern)
    return report.format, report.tokenizer


def import_report(
    files: Mapping[str, bytes], *, pretokenizer: str | None = None, pattern: str | None = None
) -> ImportReport:
    """:func:`import_files` with the format found, notes on what was assumed (for a page to show)
    and the names of the files read. A zip among the files counts as the files it holds.

    >>> from explorer import make_config, train
    >>> from explorer.formats.exporters import export_files, zip_files
    >>> tok = train("low lower lowest", make_config("gpt4", num_merges=4)).tokenizer()
    >>> report = import_report({"bpe.zip": zip_files(export_files(tok, "gpt2"))}, pretokenizer="cl100k")
    >>> report.format, report.members, report.tokenizer.merges == tok.merges
    ('gpt2', ('vocab.json', 'merges.txt'), True)
    >>> report.notes
    ('vocab.json + merges.txt name no pre-tokenizer: cl100k, as chosen',)
    """
    expanded = expand_zips(files)
    fmt, kinds = _classify(expanded)
    members = tuple(expanded)
    by_kind = {k: (name, content) for name, (k, content) in kinds.items()}
    notes: list[str] = []
    if fmt == "trace":
        tok = tokenizer_from_trace(by_kind["trace"][1])
    elif fmt == "hf":
        tok = tokenizer_from_hf(by_kind["hf"][1])
    elif fmt == "gpt2":
        used = pretokenizer or "gpt2"
        tok = _gpt2_files(by_kind["vocab-json"][1], by_kind["merges"][1], pretokenizer=used, pattern=pattern)
        notes.append(pretokenizer_note("vocab.json + merges.txt", pretokenizer, used))
    elif fmt == "tiktoken":
        name, data = by_kind["tiktoken"]
        meta = by_kind.get("tiktoken-meta", (None, None))[1]
        bundled = _bundled(data) if meta is None else None
        if bundled is not None:
            from .pretrained import PRETRAINED, load_pretrained

            tok = load_pretrained(bundled)
            notes.append(
                f"recognised as the bundled {bundled} table: its regex ({PRETRAINED[bundled].pretokenizer}) and "
                "special tokens come with it"
                + (
                    ", and the pre-tokenizer chosen is not used"
                    if pretokenizer not in (None, tok.config.pretokenizer)
                    else ""
                )
            )
        else:
            tok = tokenizer_from_tiktoken(data, meta, pretokenizer=pretokenizer, pattern=pattern, name=name)
            if meta is None:
                notes.append(f"{name} holds no regex: pre-tokenizer {pretokenizer}, as chosen")
    elif fmt == "subword-nmt":
        name, text = by_kind["merges"]
        tok = tokenizer_from_subword_nmt(text, name=name)
        notes.append(
            f"subword-nmt codes carry no alphabet: {len(tok.alphabet)} symbols implied by the merges; other "
            "characters become <unk>"
        )
    elif fmt in ("arrow", "csv"):
        name, text = by_kind[fmt]
        merges, ids, where = _merge_list(fmt, name, text)
        tok, notes = tokenizer_from_token_merges(
            merges,
            ids=ids,
            pretokenizer=pretokenizer,
            pattern=pattern,
            name=name,
            where=where,
            what="arrow merges" if fmt == "arrow" else "CSV merges",
        )
    else:
        name, text = by_kind["minbpe-model"]
        tok = tokenizer_from_minbpe(text, name=name)
    return ImportReport(fmt, tok, tuple(notes), members)
