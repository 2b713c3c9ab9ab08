"""Mistral's ``tekken.json`` as Mistral ships it, read as ``mistral_common``'s ``Tekkenizer`` reads
it: its ids (special tokens first, ranks cut to ``default_vocab_size``, the file's pattern) and its
text back, checked against ``Tekkenizer.from_file`` on the same file.

The real file is ``mistral_common/data/tekken_240911.json`` from the installed package (not
vendored); ``tekken_240718.json`` beside it has the same vocabulary and config (no image
settings), so it adds nothing and is not read. Files of the later layout (version v13, special
tokens listed) are the real file's first ranks under that layout (``conftest.small_tekken``),
checked against ``Tekkenizer`` as well.
"""

from __future__ import annotations

import io
import json
import time

import pytest
from conftest import (
    HOSTILE_SCRIPTS,
    ROOT,
    TEKKEN_FILE,
    encode_view,
    open_importer,
    read_sample,
    small_tekken,
    tekken_doc,
    unescaped,
)
from mistral_common.tokens.tokenizers.tekken import Tekkenizer
from streamlit.testing.v1 import AppTest

from explorer.cli import main
from explorer.errors import FormatError
from explorer.formats.importers import import_report
from explorer.formats.registry import sniff
from explorer.ui.state import CorpusChoice

APP = str(ROOT / "app.py")

# emoji (ZWJ, flags, skin tones), CJK, Devanagari, Arabic, whitespace runs, numbers, code,
# contractions in capitals, the special tokens' names as text, a long single piece
HOSTILE = HOSTILE_SCRIPTS + (
    "def f(x):\n    return x**2  # ok\n\tif a != b: print(f'{a!r}')\n"
    "I'M  'LL  DON'T we're\u00a0nbsp [INST] hi [/INST]</s><s> <SPECIAL_999> " + "x" * 300 + " " * 50 + "end\n"
)


def texts() -> list[str]:
    return [HOSTILE, read_sample("udhr_ru.txt")[:2000], read_sample("mixed_emoji_multilingual.txt")[:2000]]


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """(our import report, Tekkenizer, our seconds, Tekkenizer's seconds) of the real file,
    loaded once each, in the same run."""
    path = tmp_path_factory.mktemp("tekken") / TEKKEN_FILE
    path.write_bytes(json.dumps(tekken_doc()).encode())
    start = time.perf_counter()
    report = import_report({TEKKEN_FILE: path.read_bytes()})
    ours = time.perf_counter() - start
    start = time.perf_counter()
    ref = Tekkenizer.from_file(path)
    theirs = time.perf_counter() - start
    print(f"\nloading {TEKKEN_FILE}: ours {ours:.2f} s, Tekkenizer {theirs:.2f} s ({ours / theirs:.2f}x)")
    return report, ref


def test_the_real_tekken_json_gives_tekkenizers_ids_and_its_text_back(real):
    report, ref = real
    tok = report.tokenizer
    assert report.format == "tekken"
    for text in texts():
        ids = tok.encode(text)
        assert ids == ref.encode(text, bos=False, eos=False)
        assert tok.decode(ids) == ref.decode(ids) == text
    assert tok.encode("a\ud800b") == ref.encode("a\ud800b", bos=False, eos=False)  # a lone surrogate, as tiktoken


def test_the_real_tekken_json_has_tekkens_ids_for_every_token_special_tokens_first(real):
    """1,000 special tokens (the file lists none: Tekken's twenty of v3, then fillers), then the
    first 130,072 of its 150,000 ranks, each at its rank + 1,000."""
    report, ref = real
    tok = report.tokenizer
    assert tok.n_vocab == ref.n_words == 131_072
    assert [tok.vocab[i] for i in range(1000)] == [ref.id_to_piece(i) for i in range(1000)]
    assert dict(tok.special_ids) == {ref.id_to_piece(i): i for i in range(1000)}
    assert [tok.token_bytes(i) for i in range(1000, 131_072)] == [ref.id_to_byte_piece(i) for i in range(1000, 131_072)]
    assert len(tok.merges) == 131_072 - 1000 - 256  # every rank a merge of two lower ones
    assert report.notes == (
        f"{TEKKEN_FILE} lists 150,000 tokens; Tekken uses the first 130,072 ('config.default_vocab_size' 131,072 "
        "less 1,000 special tokens), at ids 1,000 and up",
        f"{TEKKEN_FILE} (version v3) lists no special tokens: Tekken's 20 of that version (<unk>, <s>, </s>, ...), "
        "then <SPECIAL_20> and up",
        f"{TEKKEN_FILE}'s image settings are not used here (text only)",
    )


def test_special_tokens_text_is_plain_text_as_tekkenizer_encodes_it_unless_allowed(real):
    tok, ref = real[0].tokenizer, real[1]
    text = "[INST] hi [/INST]</s>"
    assert tok.encode(text) == ref.encode(text, bos=False, eos=False)
    assert tok.encode(text, allow_special=True) == [
        ref.get_special_token("[INST]"),
        *ref.encode(" hi ", bos=False, eos=False),
        ref.get_special_token("[/INST]"),
        ref.eos_id,
    ]


def test_a_tekken_json_is_told_by_its_content_whatever_its_name():
    fmt, found = sniff({"vocab.json": small_tekken(tokens=300, used=280)})
    assert (fmt.name, list(found)) == ("tekken", ["tekken"])


def test_the_later_layout_with_special_tokens_listed_gives_tekkenizers_ids(tmp_path):
    """Version v13: eight special tokens listed, fillers to 30, 550 of 600 ranks used."""
    path = tmp_path / "tekken.json"
    path.write_bytes(small_tekken())
    ref = Tekkenizer.from_file(path)
    report = import_report({"tekken.json": path.read_bytes()})
    tok = report.tokenizer
    assert tok.n_vocab == ref.n_words == 580
    assert [tok.vocab[i] for i in range(30)] == [ref.id_to_piece(i) for i in range(30)]
    for text in texts():
        assert tok.encode(text) == ref.encode(text, bos=False, eos=False)
    assert report.notes == (
        "tekken.json lists 600 tokens; Tekken uses the first 550 ('config.default_vocab_size' 580 less 30 special "
        "tokens), at ids 30 and up",
    )


def refusals() -> dict[str, tuple[dict, str]]:
    """A broken file (a change to the later layout) -> the sentence; Tekkenizer refuses each too."""
    doc = json.loads(small_tekken(tokens=300, used=280))
    bad_rank = [dict(e) for e in doc["vocab"]]
    bad_rank[260]["rank"] = 261
    specials = [dict(s) for s in doc["special_tokens"]]
    return {
        "v11 without special tokens": (
            {k: v for k, v in doc.items() if k != "special_tokens"} | {"config": doc["config"] | {"version": "v11"}},
            "tekken.json lists no 'special_tokens': a file of version v8 or later must list them (Tekkenizer "
            "refuses it too)",
        ),
        "a rank out of place": (
            doc | {"vocab": bad_rank},
            "tekken.json 'vocab[260]' must be an object with 'rank' 260 and 'token_bytes' (base64), as the "
            "vocabulary lists tokens by rank",
        ),
        "more than it lists": (
            doc | {"config": doc["config"] | {"default_vocab_size": 331}},
            "tekken.json: 'config.default_vocab_size' 331 less 30 special tokens leaves 301 tokens; the vocabulary "
            "lists 300 and its first 256 are the bytes",
        ),
        "a special token twice": (
            doc | {"special_tokens": [*specials, {"rank": 8, "token_str": "<s>", "is_control": True}]},
            "tekken.json names the special token '<s>' twice",
        ),
    }


@pytest.mark.parametrize("case", list(refusals()))
def test_a_broken_tekken_json_is_refused_with_a_sentence_as_tekkenizer_refuses_it(case, tmp_path):
    doc, sentence = refusals()[case]
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises((ValueError, AssertionError)):
        Tekkenizer.from_file(path)
    with pytest.raises(FormatError) as refused:
        import_report({"tekken.json": path.read_bytes()})
    assert str(refused.value) == sentence


def test_special_tokens_listed_out_of_rank_order_are_refused_where_tekkenizer_gives_them_two_ids(tmp_path):
    """Tekkenizer loads it, but looks a special token up by name at its rank and decodes an id by
    its place in the list: here '<unk>' is 3 by name and id 0 decodes to '<unk>'."""
    doc = json.loads(small_tekken(tokens=300, used=280))
    doc["special_tokens"][0]["rank"], doc["special_tokens"][3]["rank"] = 3, 0
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    ref = Tekkenizer.from_file(path)
    assert (ref.get_special_token("<unk>"), ref.id_to_piece(0)) == (3, "<unk>")
    with pytest.raises(FormatError) as refused:
        import_report({"tekken.json": path.read_bytes()})
    assert str(refused.value) == "tekken.json 'special_tokens[0]' has rank 3, not 0"


def test_encode_takes_a_tekken_json_path_as_its_tokenizer(tmp_path):
    path = tmp_path / "tekken.json"
    path.write_bytes(small_tekken())
    out, err = io.StringIO(), io.StringIO()
    code = main(["encode", "--tokenizer", str(path), "--text", HOSTILE], out=out, err=err)
    assert (code, err.getvalue()) == (0, "")
    assert json.loads(out.getvalue())["ids"] == Tekkenizer.from_file(path).encode(HOSTILE, bos=False, eos=False)


def test_the_playground_imports_an_uploaded_tekken_json_and_shows_tekkenizers_ids(tmp_path):
    path = tmp_path / "tekken.json"
    path.write_bytes(small_tekken())
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["corpus_choice"] = CorpusChoice(samples=("udhr_en.txt",))
    at.run()
    at.switch_page("pages/3_Playground.py").run()
    at.text_area(key="w_play_text").input(HOSTILE).run()
    (uploader,) = open_importer(at).file_uploader
    uploader.set_value([("tekken.json", path.read_bytes(), "application/json")])
    at.run()
    at.button(key="import_go").click().run()
    assert not at.exception, at.exception
    (ok,) = at.success
    assert unescaped(ok.value).startswith("Imported 'tekken': format Mistral tekken.json, 294 merges")
    (panel,) = [p for p in encode_view(at) if p.name == "imported: tekken (tekken)"]
    assert panel.ids == Tekkenizer.from_file(path).encode(HOSTILE, bos=False, eos=False)


def test_a_rank_file_given_as_the_tokenizer_takes_the_pretokenizer_it_lacks(tmp_path):
    """--tokenizer FILE is any file import reads; --pretokenizer is for one that names none."""
    import base64

    import tiktoken
    from tiktoken_ext.openai_public import r50k_pat_str

    table = [bytes([b]) for b in range(256)] + [b"ab", b" ab", b"abab"]
    path = tmp_path / "ranks.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for r, t in enumerate(table)), encoding="ascii")
    ref = tiktoken.Encoding(
        "t", pat_str=r50k_pat_str, mergeable_ranks={t: r for r, t in enumerate(table)}, special_tokens={}
    )
    out, err = io.StringIO(), io.StringIO()
    code = main(["encode", "--tokenizer", str(path), "--pretokenizer", "gpt2", "--text", HOSTILE], out=out, err=err)
    assert (code, err.getvalue()) == (0, "")
    assert json.loads(out.getvalue())["ids"] == ref.encode_ordinary(HOSTILE)
