"""Tables and imported tokenizers rewound to merge k on the Playground (AppTest): each gives the
ids tiktoken gives with the table's first 256 + k ranks only, its link names it at k and
reopens it there, and a bad k in a link is said in one sentence.

tiktoken's reference is built from tiktoken's own reading of the bundled cl100k_base file
(``test_pretrained``'s oracle), restricted to the ranks below 256 + k."""

from __future__ import annotations

import base64

import pytest
import tiktoken
from conftest import compare_chart, encode_view, read_sample, unescaped
from test_catalog import compare_link_for_all, probe  # a Compare link's session; one reading catalog entries
from test_compare_page import SUBMIT, compare_page
from test_links import open_link
from test_pretrained import oracle  # noqa: F401  (a fixture: tiktoken's cl100k_base from the bundled file)

from explorer import load_pretrained
from explorer.serving.store import default_store
from explorer.stages.pretokenizers import PATTERNS

PLAYGROUND, COMPARE = "pages/3_Playground.py", "pages/4_Compare.py"
K = 1_000
TEXT = (
    "Everyone has the right to life, liberty and security of person. 1948!  Tokenizers\n"
    + read_sample("udhr_ru.txt")[:300]
)


def first_ranks(ranks: dict[bytes, int], n: int) -> dict[bytes, int]:
    return {token: rank for token, rank in ranks.items() if rank < n}


def cut(oracle, n: int) -> tiktoken.Encoding:
    """tiktoken with cl100k_base's first n ranks only."""
    ranks = first_ranks(oracle("cl100k_base").ranks, n)
    return tiktoken.Encoding(f"cl100k-first-{n}", pat_str=PATTERNS["cl100k"], mergeable_ranks=ranks, special_tokens={})


def rank_table_notes(at) -> list[str]:
    return [unescaped(c.value) for c in at.caption if "is a rank table" in c.value]


def rewind_box(at, key: str):
    return at.number_input(key=f"w_play_at:{key}")


def test_cl100k_rewound_to_merge_k_gives_tiktokens_ids_for_its_first_256_plus_k_ranks(oracle):  # noqa: F811
    at = open_link(PLAYGROUND, {"tokenizers": "cl100k_base", "text": TEXT})
    assert rewind_box(at, "cl100k_base").value is None  # the whole table until a merge is typed
    rewind_box(at, "cl100k_base").set_value(K).run()
    assert not at.exception, at.exception
    ids = {panel.name: panel.ids for panel in encode_view(at)}
    assert list(ids) == [f"cl100k_base (merge {K:,})"]
    reference = cut(oracle, 256 + K).encode_ordinary(TEXT)
    assert ids[f"cl100k_base (merge {K:,})"] == reference
    assert reference != oracle("cl100k_base").enc.encode_ordinary(TEXT)  # rewinding shows another split
    assert dict(at.query_params)["tokenizers"] == f"cl100k_base@{K}"
    assert rank_table_notes(at) == []  # the bundled tables are all merges


def test_an_imported_rank_file_rewound_by_a_link_reopens_at_k_and_says_what_k_means(oracle):  # noqa: F811
    """A .tiktoken file of cl100k_base's first 3,000 ranks, kept in the store as another session
    imported it, named by a link at merge k."""
    ranks = first_ranks(oracle("cl100k_base").ranks, 3_000)
    data = "".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in sorted(ranks.items(), key=lambda x: x[1]))
    name = "my *ranks*"
    digest = default_store().put(
        data.encode(), kind="tokenizer", name="mine.tiktoken", meta={"label": name}, owner="s:" + "1" * 32
    )
    key = f"imported:{digest}:cl100k"
    at = open_link(PLAYGROUND, {"tokenizers": f"{key}@{K},gpt2", "text": TEXT})
    assert not at.warning, [w.value for w in at.warning]
    box = rewind_box(at, key)
    assert box.value == K and unescaped(box.label) == f"imported: {name} (tiktoken): as of merge"
    assert "\\*" in box.label  # the import's name is shown as text, not as Markdown
    ids = {panel.name: panel.ids for panel in encode_view(at)}
    assert ids[f"imported: {name} (tiktoken, merge {K:,})"] == cut(oracle, 256 + K).encode_ordinary(TEXT)
    assert dict(at.query_params)["tokenizers"] == f"{key}@{K},gpt2"
    (note,) = rank_table_notes(at)
    assert f"as of merge {K:,} it keeps its {256 + K:,} tokens of lowest rank" in note
    box.set_value(None).run()  # emptied: the whole file again
    assert dict(at.query_params)["tokenizers"] == f"{key},gpt2"
    assert rank_table_notes(at) == []


def test_a_bad_merge_k_in_a_link_is_said_in_one_sentence_and_the_table_opens_whole():
    at = open_link(PLAYGROUND, {"tokenizers": "cl100k_base@1e3,gpt2@60000", "text": TEXT})
    (warning,) = at.warning
    said = unescaped(warning.value)
    assert "cl100k_base@1e3: the merge after '@' is not a whole number from 0 to 9,999,999" in said
    assert "gpt2 has 50,000 merges: it cannot be rewound to merge 60,000" in said
    assert [rewind_box(at, key).value for key in ("cl100k_base", "gpt2")] == [None, None]
    assert dict(at.query_params)["tokenizers"] == "cl100k_base,gpt2"

    at = open_link(PLAYGROUND, {"tokenizers": "gpt2@50000", "text": TEXT})  # its last merge: no refusal
    assert not at.warning and rewind_box(at, "gpt2").value == 50_000


def test_a_rewound_table_is_made_once_per_server_and_a_merge_past_its_last_names_nothing():
    keys = ["cl100k_base@1000", "cl100k_base@100000", "cl100k_base@100001", "gpt2@0"]
    first = probe(keys).session_state["probe_entries"]
    second = probe(keys[:1]).session_state["probe_entries"]
    assert second["cl100k_base@1000"].tokenizer is first["cl100k_base@1000"].tokenizer  # one per server
    assert first["cl100k_base@100000"].tokenizer is load_pretrained("cl100k_base")  # its last merge: the table
    assert first["cl100k_base@100001"] is None
    gpt2 = first["gpt2@0"]
    assert (gpt2.label, gpt2.short, len(gpt2.tokenizer)) == ("gpt2 (merge 0)", "gpt2 (merge 0)", 256)


def test_a_compare_link_may_name_a_rewound_table_for_all_corpora(oracle):  # noqa: F811
    _at, english_bpt = compare_link_for_all(f"cl100k_base@{K}")
    english = read_sample("udhr_en.txt")
    reference = cut(oracle, 256 + K).encode_ordinary(english)
    assert english_bpt == pytest.approx(len(english.encode()) / len(reference))


def test_comparings_as_of_merge_box_rewinds_the_pretrained_tokenizer_and_a_merge_past_its_last_is_one_sentence(
    oracle,  # noqa: F811
):
    at = compare_page(corpora=["udhr_en.txt", "udhr_ko.txt"], mode="pretrained", pretrained="cl100k_base", at=K)
    assert not at.warning, [unescaped(w.value) for w in at.warning]
    assert dict(at.query_params)["compare_tokenizer"] == f"cl100k_base@{K}"
    cross = compare_chart(at, "bytes per token")
    english = read_sample("udhr_en.txt")
    english_bpt = cross[cross["encoded"] == "udhr_en.txt"]["bytes per token"].iloc[0]
    assert english_bpt == pytest.approx(len(english.encode()) / len(cut(oracle, 256 + K).encode_ordinary(english)))

    at.number_input(key="w_cmp_at").set_value(50_000)  # its last merge: the whole table, no refusal
    at.selectbox(key="w_cmp_pretrained").set_value("gpt2")
    at.button(key=SUBMIT).click().run()
    assert not at.warning and dict(at.query_params)["compare_tokenizer"] == "gpt2@50000"

    at.number_input(key="w_cmp_at").set_value(50_001)
    at.button(key=SUBMIT).click().run()
    (warning,) = at.warning
    assert unescaped(warning.value).startswith("gpt2 has 50,000 merges: it cannot be rewound to merge 50,001.")
    assert not at.get("vega_lite_chart")  # no chart of the comparison before

    at.number_input(key="w_cmp_at").set_value(None)  # empty: the whole table
    at.button(key=SUBMIT).click().run()
    assert not at.warning and dict(at.query_params)["compare_tokenizer"] == "gpt2"


def test_the_cli_takes_a_table_at_merge_k_and_refuses_a_k_past_its_merges_in_one_line(oracle):  # noqa: F811
    import io
    import json

    from explorer.cli import main

    out, err = io.StringIO(), io.StringIO()
    assert main(["encode", "--tokenizer", f"cl100k_base@{K}", "--text", TEXT], out=out, err=err) == 0
    assert json.loads(out.getvalue())["ids"] == cut(oracle, 256 + K).encode_ordinary(TEXT)
    out, err = io.StringIO(), io.StringIO()
    assert main(["scan", "--tokenizer", "gpt2@60000"], out=out, err=err) == 2
    assert err.getvalue() == "python -m explorer: error: gpt2 has 50,000 merges: it cannot be rewound to merge 60,000\n"
