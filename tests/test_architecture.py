"""The import graph the layout promises (issue 10), read from the source with ``ast``.

- ``transcripts`` never imports ``summaries`` (summaries subscribes to transcripts' signals);
- no ``core/`` module imports Django, a web or task framework, or a non-core module of the
  project (the pure cores test on ``tmp_path`` alone; a core may read another app's core);
- no circle of files, counting every import: module-level, function-level and those inside
  ``if TYPE_CHECKING:`` (a circle closed for the type checker is still a circle to read);
- no private name (``_x``) imported from another module;
- a selector (a read) never imports a service (a write).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("transcripts", "summaries", "kirocrew_site")
FRAMEWORKS = ("django", "ninja", "channels", "celery", "daphne", "channels_redis")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            found[_module_name(path)] = path
    return found


MODULES = _modules()


def _import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import of the module, wherever it stands (``if TYPE_CHECKING:`` included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def _imports(name: str, path: Path) -> set[str]:
    """Absolute dotted names this module imports (``from x import y`` yields ``x.y`` when
    ``x.y`` is a module of the project, else ``x``)."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, base] if base else anchor)
        for alias in node.names:
            candidate = f"{base}.{alias.name}"
            out.add(candidate if candidate in MODULES else base)
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def test_the_graph_reads_the_whole_project() -> None:
    # A parse that found nothing would pass every rule below.
    assert len(MODULES) > 100
    assert "transcripts.core.store" in MODULES
    assert "transcripts.models" in GRAPH["transcripts.admin"]


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _top(n) == "transcripts"))
def test_transcripts_never_imports_summaries(name: str) -> None:
    assert not {i for i in GRAPH[name] if _top(i) == "summaries"}


def _is_core(name: str) -> bool:
    return ".core." in f"{name}." and _top(name) in PACKAGES


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _is_core(n)))
def test_a_core_module_is_pure(name: str) -> None:
    # Another app's core is pure too (summaries' core reads the transcript format).
    bad = {
        i for i in GRAPH[name] if _top(i) in FRAMEWORKS or (_top(i) in PACKAGES and not _is_core(i))
    }
    assert not bad, f"{name} imports {sorted(bad)}"


def _cycle() -> list[str] | None:
    """One circle of project modules, or None (iterative DFS, colours white/grey/black)."""
    edges = {n: sorted(i for i in deps if i in MODULES and i != n) for n, deps in GRAPH.items()}
    colour: dict[str, int] = dict.fromkeys(edges, 0)
    for start in sorted(edges):
        if colour[start]:
            continue
        path = [start]
        iters = [iter(edges[start])]
        colour[start] = 1
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                colour[path.pop()] = 2
                iters.pop()
                continue
            if colour[nxt] == 1:
                return [*path[path.index(nxt) :], nxt]
            if colour[nxt] == 0:
                colour[nxt] = 1
                path.append(nxt)
                iters.append(iter(edges[nxt]))
    return None


def test_no_circle_of_files() -> None:
    # A package's __init__ re-exporting its submodules is the one accepted shape: the
    # submodule importing a sibling through the package is what would make a circle.
    assert _cycle() is None, " -> ".join(_cycle() or [])


def _private_imports(name: str, path: Path) -> list[str]:
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found = []
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, base] if base else anchor)
        if _top(base) not in PACKAGES:
            continue
        found += [f"{base}.{a.name}" for a in node.names if a.name.startswith("_")]
    return found


def test_no_private_name_is_imported_from_another_module() -> None:
    found = {n: p for n, path in MODULES.items() if (p := _private_imports(n, path))}
    assert not found, found


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.rpartition(".")[2] == "selectors"))
def test_a_selector_never_imports_a_service(name: str) -> None:
    writes = {i for i in GRAPH[name] if i.rpartition(".")[2] == "services" or ".services." in i}
    assert not writes, f"{name} imports {sorted(writes)}"
