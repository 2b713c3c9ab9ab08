"""GPT-2's ``vocab.json`` + ``merges.txt`` (format ``gpt2``; HF's BPE files, RoBERTa's too), both
ways, and GPT-2's own ``encoder.json`` + ``vocab.bpe`` as it ships them (the bundled GPT-2)::

    vocab.json   {"!": 0, "\\"": 1, ..., "Ġt": 256, ..., "<|endoftext|>": 50256}
    merges.txt   #version: 0.2
                 Ġ t
                 ...

Byte level only; the files carry no pipeline, so the reader asks for the regex (GPT-2's by
default). Tokens that are neither bytes nor made by a merge are special tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import eq
from typing import Literal

from ..bpe.config import EncodeOptions
from ..bpe.tokenizer import Tokenizer
from ..bpe.vocab import Vocab
from ..errors import ConfigError, FormatError
from ..stages.pipeline import Pipeline
from ..stages.units import byte_alphabet
from .base import (
    FileFormat,
    FileKind,
    Files,
    Found,
    Imported,
    ImportOptions,
    Upload,
    dump_json,
    json_dict,
    json_object,
    require,
)
from .shared import byte_pipeline_only, full_vocab, one_id_per_token, pretokenizer_note, tokenizer_from_vocab_merges
from .subword_nmt import MERGES_KINDS, merge_lines, read_merge_lines
from .zips import OR_THEIR_ZIP

__all__ = [
    "FORMAT",
    "to_gpt2_merges",
    "to_gpt2_vocab",
    "tokenizer_from_gpt2",
    "tokenizer_from_gpt2_files",
]


# ---- writing ----------------------------------------------------------------------------------
def to_gpt2_vocab(tok: Tokenizer) -> dict[str, int]:
    """GPT-2's ``vocab.json`` (``encoder.json``): every token's byte-level display string -> id,
    special tokens included. The files carry no pipeline: the importer asks for the regex."""
    byte_pipeline_only(tok, "vocab.json + merges.txt")
    one_id_per_token(tok, "vocab.json")
    return full_vocab(tok)


def to_gpt2_merges(tok: Tokenizer) -> str:
    """GPT-2's ``merges.txt`` (``vocab.bpe``): ``#version: 0.2`` then ``left right`` per merge.

    >>> from explorer import make_config, train
    >>> print(to_gpt2_merges(train("aaa", make_config("bytes", num_merges=1)).tokenizer()), end="")
    #version: 0.2
    a a
    """
    byte_pipeline_only(tok, "vocab.json + merges.txt")
    return merge_lines(tok, version="0.2")


# ---- reading ----------------------------------------------------------------------------------
def _byte_vocab_merges(
    vocab: object,
    merges_text: str,
    *,
    pipeline: Pipeline,
    rules: Literal["merges", "tiktoken"],
    vocab_name: str,
    merges_name: str,
) -> Tokenizer:
    """GPT-2's two files, parsed vocabulary first: tokens that are neither bytes nor made by a
    merge are special tokens (``<|endoftext|>``)."""
    vocab = json_dict(vocab, f"{vocab_name} must map tokens to ids")
    merges, lines = read_merge_lines(merges_text, merges_name)
    made = list(map("".join, merges))
    others = vocab.keys() - set(made) - set(byte_alphabet())
    specials = {t: i for t, i in vocab.items() if t in others}  # in the file's order
    return tokenizer_from_vocab_merges(
        vocab,
        merges,
        pipeline=pipeline,
        specials=specials,
        rules=rules,
        # HF's BPE and GPT-2's encoder.py refuse text with a lone surrogate (tiktoken's rule fixes it)
        encoding=EncodeOptions(refuse_surrogates=rules == "merges"),
        where=lambda n: f"{merges_name} line {lines[n]}",
        vocab_name=vocab_name,
        made=made,
    )


def tokenizer_from_gpt2_files(
    vocab_json: str, merges_txt: str, *, pretokenizer: str = "gpt2", pattern: str | None = None
) -> Tokenizer:
    """GPT-2's ``vocab.json`` + ``merges.txt`` (HF's BPE files) as a byte-level tokenizer. The
    files carry no regex: ``pretokenizer`` (default GPT-2's). Tokens that are neither bytes nor
    made by a merge are special tokens (``<|endoftext|>``)."""
    return _gpt2_files(json_object(vocab_json, "vocab.json"), merges_txt, pretokenizer=pretokenizer, pattern=pattern)


def _gpt2_files(vocab: dict, merges_txt: str, *, pretokenizer: str, pattern: str | None) -> Tokenizer:
    try:
        pipeline = Pipeline(pretokenizer=pretokenizer, pattern=pattern, unit="byte")
    except ConfigError as err:
        raise FormatError(str(err)) from None
    return _byte_vocab_merges(
        vocab, merges_txt, pipeline=pipeline, rules="merges", vocab_name="vocab.json", merges_name="merges.txt"
    )


def tokenizer_from_gpt2(
    encoder_json: str, vocab_bpe: str, *, pretokenizer: str = "gpt2", own_merges_suffice: bool = False
) -> Tokenizer:
    """GPT-2's own ``encoder.json`` (token -> id) and ``vocab.bpe`` (its merges, in order), encoding
    as tiktoken's ``gpt2`` does (the bundled GPT-2). Ids 0-255 must be the 256 bytes and entries
    past the merges (``<|endoftext|>``) become special tokens. ``own_merges_suffice`` (see
    ``Tokenizer``) is taken for files as GPT-2 ships them.

    >>> import json
    >>> from explorer.stages.units import bytes_to_display
    >>> tok = tokenizer_from_gpt2(json.dumps({bytes_to_display(bytes([b])): b for b in range(256)} | {"ab": 256, "<|endoftext|>": 257}), "#version: 0.2\\na b\\n")
    >>> tok.encode("abab<|endoftext|>", allow_special=True)
    [256, 256, 257]
    """
    encoder = json_object(encoder_json, "encoder.json")
    first = sorted((i, t) for t, i in encoder.items() if isinstance(i, int) and 0 <= i < 256)
    require(
        [i for i, _ in first] == list(range(256)) and sorted(t for _, t in first) == sorted(byte_alphabet()),
        "ids 0-255 of encoder.json must be the 256 byte symbols",
    )
    pipeline = Pipeline(pretokenizer=pretokenizer, unit="byte")
    tok = _gpt2_as_shipped(
        encoder, vocab_bpe, alphabet=[t for _, t in first], pipeline=pipeline, own_merges_suffice=own_merges_suffice
    )
    if tok is not None:
        return tok
    # not as GPT-2 ships them: the careful reading says where they go wrong (or reads them)
    return _byte_vocab_merges(
        encoder, vocab_bpe, pipeline=pipeline, rules="tiktoken", vocab_name="encoder.json", merges_name="vocab.bpe"
    )


def _gpt2_as_shipped(
    encoder: dict, vocab_bpe: str, *, alphabet: list[str], pipeline: Pipeline, own_merges_suffice: bool = False
) -> Tokenizer | None:
    """GPT-2's files read in bulk when they are as GPT-2 ships them: after the ``#version`` line,
    each line of vocab.bpe is one merge ``left right`` of two tokens encoder.json lists; the
    tokens the merges make are encoder.json's other entries, id for id, from 256 on; and the
    entries past them are special tokens (``<|endoftext|>``). None when anything differs:
    ``tokenizer_from_vocab_merges`` reads the same files merge by merge, and the same tokenizer
    comes of files that pass here.

    >>> from explorer.stages.units import bytes_to_display
    >>> enc = {bytes_to_display(bytes([b])): b for b in range(256)} | {"ab": 256, "<|endoftext|>": 257}
    >>> pipe = Pipeline(pretokenizer="gpt2", unit="byte")
    >>> _gpt2_as_shipped(enc, "#version: 0.2\\na b\\n", alphabet=list(enc)[:256], pipeline=pipe).vocab[256:]
    ('ab',)
    >>> _gpt2_as_shipped(enc, "#version: 0.2\\r\\na b\\r\\n", alphabet=list(enc)[:256], pipeline=pipe) is None
    True
    """
    lines = vocab_bpe.split("\n")
    if not lines[0].startswith("#version") or not {int} >= set(map(type, encoder.values())):
        return None
    if lines[-1] == "":
        lines.pop()
    pairs = [line.split(" ") for line in lines[1:]]
    if not {2} >= set(map(len, pairs)):
        return None
    try:
        merges = [(encoder[a], encoder[b]) for a, b in pairs]
    except KeyError:
        return None
    end = 256 + len(merges)
    specials = {t: i for t, i in encoder.items() if i >= end}
    try:
        tok = Tokenizer(
            pipeline=pipeline,
            vocab=Vocab((), tuple(alphabet), tuple(merges)),
            special_ids=specials,
            rules="tiktoken",
            own_merges_suffice=own_merges_suffice,
        )
    except ValueError:  # a merge of a token made only later, a special token's id taken twice
        return None
    # every token made is encoder.json's at its id, and encoder.json holds nothing else below `end`
    if (
        len(tok.vocab) == end
        and len(encoder) == end + len(specials)
        and all(map(eq, map(encoder.get, tok.vocab), range(end)))
    ):
        return tok
    return None


# ---- the format ---------------------------------------------------------------------------------
def _is_vocab(upload: Upload) -> bool:
    # a vocabulary may hold the tokens "model" and "pat_str" (GPT-2's holds "model"): only
    # token -> id entries make a vocab.json
    vocab = upload.json
    return bool(vocab) and {int} >= set(map(type, vocab.values()))  # JSON's ints: no bool, no float


def _write(tok: Tokenizer, trace: Mapping) -> Files:
    return {"vocab.json": dump_json(to_gpt2_vocab(tok)), "merges.txt": to_gpt2_merges(tok)}


def _read(found: Found, options: ImportOptions) -> Imported:
    used = options.pretokenizer or "gpt2"
    tok = _gpt2_files(found["vocab-json"].json, found["merges"].text, pretokenizer=used, pattern=options.pattern)
    return Imported(tok, [pretokenizer_note("vocab.json + merges.txt", options.pretokenizer, used)])


def _always(found: Found) -> bool:
    return True


FORMAT = FileFormat(
    name="gpt2",
    title="GPT-2 vocab.json + merges.txt",
    description="the two files of GPT-2 and RoBERTa (byte level; the regex is chosen when loading)",
    files="vocab.json and merges.txt (byte level)" + OR_THEIR_ZIP,
    write=_write,
    read=_read,
    # after a trace.json, before tokenizer.json and the tiktoken JSON
    kinds=(
        FileKind(
            "vocab-json",
            "json",
            20,
            _is_vocab,
            hint="a vocab.json needs its merges.txt",
            what="a vocab.json of token -> id",
        ),
        *MERGES_KINDS,
    ),
    file_sets=(("merges", "vocab-json"),),
    needs_pretokenizer=_always,
)
