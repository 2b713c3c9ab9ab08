"""A file format is one module and one registry entry: a toy format registered at run time (a
fixture, undone after each test) is in EXPORT_FORMATS and IMPORT_FORMATS, a choice of the CLI's
``export --format``, written by ``export_files`` and ``bpe-explorer export``, and recognised by
``import_files`` from its content alone (under any name, zipped too). The registry's file kinds
are each tried at one place, and every format's file sets are made of kinds some format
defines."""

from __future__ import annotations

import io
from collections.abc import Mapping

import pytest
from conftest import read_sample

from explorer import FormatError, Tokenizer, make_config, train
from explorer.cli import main
from explorer.formats.base import FileFormat, FileKind, Files, Found, Imported, ImportOptions, Upload, require
from explorer.formats.exporters import EXPORT_FORMATS, export_files, zip_files
from explorer.formats.importers import IMPORT_FORMATS, import_files, import_report, needs_pretokenizer
from explorer.formats.registry import FORMATS, file_kinds, kind_of, sniff
from explorer.formats.token_merges import read_token_merges
from explorer.formats.trace import load_tokenizer, write_trace

# ---- the toy format: everything a new format is -------------------------------------------------
HEADER = "toy merges, version 1"  # then 'left<TAB>right' per merge


def _write(tok: Tokenizer, trace: Mapping) -> Files:
    return {"merges.toy": HEADER + "\n" + "".join(f"{tok.vocab[a]}\t{tok.vocab[b]}\n" for a, b in tok.merges)}


def _read(found: Found, options: ImportOptions) -> Imported:
    upload = found["toy"]
    lines = upload.text.split("\n")
    merges = []
    for line in lines[1:]:
        if line:
            left, tab, right = line.partition("\t")
            require(bool(tab), f"{upload.name}: expected 'left<TAB>right', found {line!r}")
            merges.append((left, right))
    return read_token_merges(upload, merges, list(range(2, len(merges) + 2)), options, what="toy merges")


TOY = FileFormat(
    name="toy",
    title="toy merges",
    description="one 'left<TAB>right' line per merge after a header",
    files="a .toy file (a header line, then tab-separated pairs)",
    write=_write,
    read=_read,
    kinds=(FileKind("toy", "text", 5, lambda upload: upload.stripped.startswith(HEADER)),),
    file_sets=(("toy",),),
)


@pytest.fixture
def toy(monkeypatch):
    """The whole of adding a format, once its module is written: one entry in the registry."""
    monkeypatch.setitem(FORMATS, TOY.name, TOY)
    return TOY.name


@pytest.fixture(scope="module")
def trainer():
    return train(read_sample("demo_sennrich_low_lower.txt"), make_config("sennrich", num_merges=10))


def pairs(tok: Tokenizer) -> list[tuple[str, str]]:
    return [(tok.vocab[a], tok.vocab[b]) for a, b in tok.merges]


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


# ---- registered, it is everywhere -----------------------------------------------------------------
def test_the_entry_is_in_both_maps_while_registered_and_gone_after(monkeypatch):
    with monkeypatch.context() as m:
        m.setitem(FORMATS, TOY.name, TOY)
        assert EXPORT_FORMATS["toy"].title == "toy merges" and not EXPORT_FORMATS["toy"].uses_trace
        assert IMPORT_FORMATS["toy"].files == TOY.files
        assert list(EXPORT_FORMATS)[-1] == list(IMPORT_FORMATS)[-1] == "toy"  # after the others, in their order
    assert "toy" not in EXPORT_FORMATS and "toy" not in IMPORT_FORMATS
    assert list(EXPORT_FORMATS) == ["hf", "gpt2", "tiktoken", "subword-nmt", "minbpe", "arrow", "csv", "trace"]


def test_export_files_writes_it_and_import_files_tells_it_from_its_content(toy, trainer):
    tok = trainer.tokenizer()
    files = export_files(tok, toy)
    assert list(files) == ["merges.toy"] and files["merges.toy"].startswith(b"toy merges, version 1\ne\ts\nes\tt\n")
    for given in (files, {"upload.txt": files["merges.toy"]}, {"bpe.zip": zip_files(files)}):
        report = import_report(given)
        assert report.format == "toy"
        assert pairs(report.tokenizer) == pairs(tok)
        text = "low lowest newest"  # characters the merges name (the toy file holds no alphabet)
        assert report.tokenizer.tokens(report.tokenizer.encode(text)) == tok.tokens(tok.encode(text))
    assert not needs_pretokenizer(files)


def test_its_reader_s_errors_reach_the_caller(toy):
    with pytest.raises(FormatError, match=r"merges.toy: expected 'left<TAB>right', found 'l o'"):
        import_files({"merges.toy": b"toy merges, version 1\nl o\n"})


def test_the_cli_offers_it_writes_it_and_imports_it(toy, trainer, tmp_path):
    write_trace(trainer, tmp_path / "trained")
    code, out, err = run_cli("export", str(tmp_path / "trained"), "--format", "toy", "--out", str(tmp_path / "t.toy"))
    assert (code, err) == (0, "") and out.startswith("toy merges: 10 merges")
    code, out, err = run_cli("import", str(tmp_path / "t.toy"), "--out", str(tmp_path / "back"))
    assert (code, err) == (0, "") and out.startswith("toy merges: 10 merges")
    assert pairs(load_tokenizer(tmp_path / "back")) == pairs(trainer.tokenizer())


def test_without_the_entry_the_cli_refuses_it_and_its_file_is_of_no_known_layout(trainer, tmp_path):
    write_trace(trainer, tmp_path)
    code, _, err = run_cli("export", str(tmp_path), "--format", "toy", "--out", str(tmp_path / "t.toy"))
    assert code == 2 and "invalid choice: 'toy'" in err
    with pytest.raises(FormatError, match="merges.toy is a file of no known layout"):
        import_files({"merges.toy": _write(trainer.tokenizer(), {})["merges.toy"].encode()})


# ---- the registry's kinds ---------------------------------------------------------------------
def test_each_kind_is_tried_at_one_place_and_every_file_set_is_made_of_kinds_defined():
    kinds = file_kinds()
    places = [(k.stage, k.order) for k in kinds]
    assert len(set(places)) == len(places), "two kinds tried at the same place: which wins is left to chance"
    defined = {k.name for k in kinds}
    for fmt in FORMATS.values():
        for file_set in fmt.file_sets:
            assert set(file_set) <= defined, fmt.name


@pytest.mark.parametrize(
    ("name", "data", "kind"),
    [
        ("cl100k_base.tiktoken", b"\xff not even text", "tiktoken"),  # by its name, before decoding
        ("trace.json", b'{"format": "bpe-explorer-trace", "model": {}}', "trace"),  # before hf
        ("vocab.json", b'{"model": 0, "pat_str": 1}', "vocab-json"),  # tokens named like keys
        ("tokenizer.json", b'{"model": {}, "pat_str": "x"}', "hf"),  # before the tiktoken JSON
        ("t.json", b'{"pat_str": "x"}', "tiktoken-meta"),
        ("x.model", b"minbpe v1\n\n0\n", "minbpe-model"),
        ("tokenizer.model", b"IQ== 0\nIg== 1\n", "tiktoken"),  # by content, not name: Llama 3's ranks
        ("x.model", b"step,left\n", "csv"),
        ("merges.csv", b"IQ== 0\n", "csv"),  # by its name, before a rank line
        ("ranks.txt", b"IQ== 0\nIg== 1\n", "tiktoken"),
        ("codes.txt", b"#version: 0.2\na b -> ab\n", "merges"),  # '#' first, before arrows
        ("m.txt", b"a b -> ab\n", "arrow"),
        ("m.txt", b"a b\nab c\n", "merges"),  # two tokens, no '#version': said where it is read
    ],
)
def test_a_file_is_the_first_kind_that_recognises_it(name, data, kind):
    assert kind_of(Upload(name, data)) == kind


def test_files_that_make_no_file_set_are_named_with_their_kinds():
    with pytest.raises(FormatError, match=r"merges.txt \(merges\), codes.txt \(merges\); give one of: tokenizer.json"):
        sniff({"merges.txt": b"#version: 0.2\n", "codes.txt": b"#version: 0.2\n"})
    with pytest.raises(FormatError, match=r"t.json \(tiktoken-meta\); a tiktoken JSON needs its .tiktoken file$"):
        sniff({"t.json": b'{"pat_str": "x"}'})
    # a hint is for a file given alone: with another file beside it, the formats are listed
    with pytest.raises(FormatError, match=r"vocab.json \(vocab-json\), t.vocab \(minbpe-vocab\); give one of: "):
        sniff({"vocab.json": b'{"a": 0}', "t.vocab": b"[a] 0"})
