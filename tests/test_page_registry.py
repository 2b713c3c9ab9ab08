"""The page list is declared once (explorer/ui/nav.py: PAGES): the scripts in pages/, the
navigation, the start-up warming and each page's prologue all come from it."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys

from conftest import ROOT

from explorer.ui import nav, startup


def test_every_script_in_pages_is_in_the_registry_and_every_line_of_it_has_its_script():
    scripts = sorted(f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py"))
    assert sorted(p.script for p in nav.PAGES) == scripts
    # the navigation's order is the scripts' (their digits), Home first and the default
    assert [p.script for p in nav.PAGES] == scripts and nav.PAGES[0].title == "Home"
    assert [p.title for p in nav.PAGES] == [s.split("_", 1)[1].removesuffix(".py") for s in scripts]  # the URLs


def _statements(script: str) -> list[str]:
    tree = ast.parse((ROOT / script).read_text(encoding="utf-8"))
    body = [s for s in tree.body if not isinstance(s, ast.Import | ast.ImportFrom)]
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return [ast.unparse(s) for s in body]


def test_each_page_script_starts_with_the_one_prologue_and_repeats_none_of_it():
    for spec in nav.PAGES:
        statements = _statements(spec.script)
        assert statements[0] == "nav.page(__file__)", spec.script
        calls = "\n".join(statements)
        for own in ("enter_page(", "keep_widget_state(", "open_link("):
            assert own not in calls, (spec.script, own)


def test_each_pages_view_is_warmed_at_start_and_has_the_link_function_its_line_names():
    warmed = startup.warm_modules()
    for spec in nav.PAGES:
        assert f"explorer.ui.{spec.view}" in warmed, spec
        view = importlib.import_module(f"explorer.ui.{spec.view}")
        if spec.apply is not None:
            assert spec.opens_links and callable(getattr(view, spec.apply)), spec
    assert warmed[:2] == ["explorer.ui.nav", "explorer.ui.links"]


def test_the_start_up_warm_up_leaves_the_corpus_pages_first_screen_computed(monkeypatch):
    # a first visit of the Corpus page draws the default corpus's sizes from the shared cache:
    # nothing is counted between the visit and its first screen
    from explorer.ui import corpus_view, data, home_view, server, state

    monkeypatch.setattr(state, "warm_default", lambda: None)  # the trainer and the miniature: other tests'
    monkeypatch.setattr(home_view, "toy", lambda: None)
    monkeypatch.setattr(server, "WORKER_MIN_BYTES", 1 << 40)  # counted here, not in a worker process
    data.corpus_stats.clear()
    startup._default_corpus()

    def counted(*args, **kwargs):
        raise AssertionError("the Corpus page's sizes were not computed by the warm-up")

    monkeypatch.setattr(data, "engine_corpus_stats", counted)
    stats = data.corpus_stats(state.CorpusChoice().texts(), top=corpus_view.TOP_WORDS)
    assert len(stats.top_words) == corpus_view.TOP_WORDS


def test_the_warm_up_pays_what_streamlit_does_once_per_process_before_the_first_visitor(tmp_path):
    """In a fresh interpreter, as a server starts: after the warm-up's step, the page icon's
    emoji check and the first element's REPL check (which walks the stack reading source files)
    are done, so the first page run does neither (0.35 s of a first visit's script run). (A
    script file, not ``-c``: Streamlit takes ``<string>`` for a REPL. Outside a server it warns
    that the script is not run by ``streamlit run``; a server's runtime says nothing.)"""
    script = tmp_path / "warm.py"
    script.write_text(
        "import sys\n"
        "from streamlit import delta_generator\n"
        "from explorer.ui import startup\n"
        "before = ('streamlit.emojis' in sys.modules, delta_generator._use_warning_has_been_displayed)\n"
        "startup._streamlit_once()\n"
        "print(before, ('streamlit.emojis' in sys.modules, delta_generator._use_warning_has_been_displayed))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["(False,", "False)", "(True,", "True)"], done.stdout + done.stderr
