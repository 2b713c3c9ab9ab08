"""The package's modules import one another without circles, and use no private name of another
module: read from the source with ``ast``, every import counted (at the top, inside functions,
under ``TYPE_CHECKING``), relative imports resolved."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from conftest import ROOT


def _modules(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Every module of ``package`` (a folder under ``root``): dotted name -> (file, is a package)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _imports(name: str, tree: ast.Module, is_package: bool, modules: dict) -> list[tuple[str, str, int, str]]:
    """(module imported, name used from it or "", line, the local name bound to the module or "")
    for each of the package's own modules this one imports, wherever the import is."""
    here = name if is_package else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [
                (a.name, "", node.lineno, a.asname or a.name.partition(".")[0]) for a in node.names if a.name in modules
            ]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from . import x, from ..y import z: relative to this module's package
                parts = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:  # a submodule: the import is of that module
                    out.append((f"{base}.{alias.name}", "", node.lineno, alias.asname or alias.name))
                elif base in modules:
                    out.append((base, alias.name, node.lineno, ""))
    return out


@functools.cache  # parsed once for the two tests of the package
def _trees(root: Path, package: str) -> dict[str, tuple[ast.Module, bool]]:
    return {
        name: (ast.parse(path.read_text(encoding="utf-8")), is_package)
        for name, (path, is_package) in _modules(root, package).items()
    }


def _graph(root: Path, package: str) -> dict[str, set[str]]:
    trees = _trees(root, package)
    return {
        name: {target for target, *_ in _imports(name, tree, is_package, trees)} - {name}
        for name, (tree, is_package) in trees.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each group of modules that import one another (Tarjan's strongly
    connected components), written as the path that closes it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_circle(graph, group) for group in groups]


def _circle(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A path from the group's first module back to itself, within the group (breadth first)."""
    start = min(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & group):
            if w == start:
                return [*paths[v], start]
            if w not in paths:
                paths[w] = [*paths[v], w]
                queue.append(w)
    raise AssertionError(f"no circle in {group}")  # pragma: no cover - a group of two or more has one


def _private_uses(root: Path, package: str) -> list[str]:
    """Each use of another module's private name (``from m import _x``, ``m._x``), as
    ``module:line: what``."""
    trees = _trees(root, package)
    uses = []
    for name, (tree, is_package) in trees.items():
        aliases = set()  # how the package's other modules are named here: ``m``, ``pkg.m`` (``import pkg.m``)
        for target, used, line, bound in _imports(name, tree, is_package, trees):
            if used.startswith("_") and not used.startswith("__") and target != name:
                uses.append(f"{name}:{line}: from {target} import {used}")
            if bound and target != name:
                aliases |= {bound, target}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                owner = _dotted(node.value)
                if owner in aliases:
                    uses.append(f"{name}:{node.lineno}: {owner}.{node.attr}")
    return uses


def _dotted(node: ast.expr) -> str:
    """``a.b.c`` for a chain of names and attributes, else ""."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value)):
        return f"{base}.{node.attr}"
    return ""


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", **files}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path


def test_the_package_has_no_import_circles():
    circles = _cycles(_graph(ROOT, "explorer"))
    assert not circles, "import circles: " + "; ".join(" -> ".join(c) for c in circles)


def test_an_import_inside_a_function_or_relative_closes_a_circle_as_any_other(tmp_path):
    root = _package(
        tmp_path,
        {
            "pkg/a.py": "from .sub import b\n",
            "pkg/sub/b.py": "def f():\n    from ..c import g\n    return g\n",
            "pkg/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\ndef g(): ...\n",
            "pkg/d.py": "from . import c\n",  # imports into the circle, not part of it
        },
    )
    assert _cycles(_graph(root, "pkg")) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]]


def test_no_module_uses_another_modules_private_names():
    uses = _private_uses(ROOT, "explorer")
    assert not uses, "private names used across modules:\n" + "\n".join(uses)


def test_a_private_name_from_another_module_is_found_however_it_is_reached(tmp_path):
    root = _package(
        tmp_path,
        {
            "pkg/a.py": "_x = 1\n_y = 2\n",
            "pkg/sub/b.py": "from ..a import _x\nfrom .. import a as other\nprint(other._y, other.__name__)\n",
            "pkg/c.py": "def f():\n    import pkg.a\n    return pkg.a.x, pkg.a._x\n_own = 3\nprint(_own)\n",
        },
    )
    assert _private_uses(root, "pkg") == [
        "pkg.c:3: pkg.a._x",
        "pkg.sub.b:1: from pkg.a import _x",
        "pkg.sub.b:3: other._y",
    ]
