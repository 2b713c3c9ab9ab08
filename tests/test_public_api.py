"""The engine's public API: ``explorer.__all__`` is the short list a user starts from (train,
the tokenizer, the bundled tables, files in and out, evaluation, the errors), and every module
states its own ``__all__``, each name of which exists."""

from __future__ import annotations

import importlib
import pkgutil

import explorer


def _modules() -> list[str]:
    return [
        m.name
        for m in pkgutil.walk_packages(explorer.__path__, "explorer.")
        if m.name != "explorer.__main__" and not m.name.startswith("explorer.ui")
    ]


def test_the_public_api_holds_training_encoding_files_evaluation_and_errors():
    for name in ("train", "Trainer", "TrainerConfig", "make_config", "PRESETS", "Tokenizer", "Pipeline", "Vocab"):
        assert name in explorer.__all__, name
    for name in ("load_pretrained", "import_files", "export_files", "evaluate", "replay", "ExplorerError"):
        assert name in explorer.__all__, name
    for name in explorer.__all__:
        assert getattr(explorer, name) is not None, name


def test_the_public_api_holds_no_stage_helper_and_no_display_helper():
    """Stage functions (pre_tokenize_str, bytes_to_display, ...) and analysis helpers stay in
    their modules: the package's own list stays short enough to read."""
    for name in explorer.__all__:
        home = getattr(getattr(explorer, name), "__module__", None)
        if home is None:  # a dict or a constant: its name says what it is
            continue
        helper = home.startswith("explorer.stages") and not isinstance(getattr(explorer, name), type)
        assert not helper and not home.startswith(("explorer.ui", "explorer.analysis.text")), (name, home)
    assert len(explorer.__all__) <= 36


def test_every_engine_module_states_its_public_names_and_each_exists():
    missing = []
    for module_name in _modules():
        module = importlib.import_module(module_name)
        if module.__file__ and module.__file__.endswith("__init__.py") and module_name != "explorer":
            continue  # a subpackage's __init__ only describes its folder
        names = getattr(module, "__all__", None)
        if names is None:
            missing.append(f"{module_name}: no __all__")
            continue
        missing += [f"{module_name}.{n}" for n in names if not hasattr(module, n)]
    assert not missing, missing


# the README's map: each layer of explorer/ imports only from the layers before it
_LAYERS = ("errors", "paths", "stages", "bpe", "formats", "analysis", "serving")


def _upward_imports(root) -> list[str]:
    import re

    found = []
    for path in sorted((root / "explorer").rglob("*.py")):
        parts = path.relative_to(root).parts
        if len(parts) < 3 or parts[1] not in _LAYERS:
            continue
        layer = parts[1]
        for dots, name in re.findall(r"^\s*from (\.+)(\w*)", path.read_text(encoding="utf-8"), re.M):
            target = layer if len(dots) == 1 else name if len(dots) == 2 else None
            if target in _LAYERS and _LAYERS.index(target) > _LAYERS.index(layer):
                found.append(f"{path.relative_to(root)} imports explorer.{target}")
    return found


def test_each_layer_imports_only_from_the_layers_before_it():
    from conftest import ROOT

    assert not _upward_imports(ROOT)


def test_an_upward_import_is_found(tmp_path):
    (tmp_path / "explorer" / "stages").mkdir(parents=True)
    (tmp_path / "explorer" / "stages" / "x.py").write_text("from ..bpe.config import TrainerConfig\n")
    assert _upward_imports(tmp_path) == ["explorer/stages/x.py imports explorer.bpe"]
