"""Architecture of the package: the modules of grokclocks import one another without a cycle, and the
pure core loads without JAX.

The import graph is read from the source (``ast``), not from ``sys.modules``: every ``import`` and
``from ... import`` statement of every file under ``grokclocks/``, at module level or inside a function
(a deferred import hides a cycle from the interpreter but not from a reader), except those under
``if TYPE_CHECKING:``.  An edge goes to the module a statement names (``from .linear import t_star`` ->
``grokclocks.linear``; ``from . import rmt`` -> ``grokclocks.rmt``).  A package's ``__init__`` importing
its own submodules is an edge like any other.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "grokclocks"


def module_name(path: pathlib.Path, root: pathlib.Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Import statements of a module, skipping ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph(pkg_dir: pathlib.Path = PKG) -> dict[str, set[str]]:
    """``module -> set of grokclocks modules it imports`` for every ``.py`` file below ``pkg_dir``."""
    root = pkg_dir.parent
    files = {module_name(p, root): p for p in sorted(pkg_dir.rglob("*.py"))}
    top = pkg_dir.name
    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        package = mod if is_pkg else mod.rpartition(".")[0]
        edges: set[str] = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    src = ".".join(base + ([node.module] if node.module else []))
                else:
                    src = node.module or ""
                targets = [f"{src}.{a.name}" if f"{src}.{a.name}" in files else src for a in node.names]
            for t in targets:
                while t and t not in files and "." in t:  # `import grokclocks.sim.train as T` names the module
                    t = t.rpartition(".")[0]
                if t in files and t.split(".")[0] == top and t != mod:
                    edges.add(t)
        graph[mod] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle ``[a, b, ..., a]``, or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if state.get(start):
            continue
        path, iters = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iters.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                iters.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_graph_reads_the_package():
    g = import_graph()
    assert "grokclocks.linear" in g and "grokclocks.sim.train" in g
    assert "grokclocks.linear._crossing" in g["grokclocks.linear"]  # `from ._crossing import ...`
    assert "grokclocks.rmt" in g["grokclocks.linear._crossing"]  # `from .. import rmt`
    assert "grokclocks._validate" in g["grokclocks.rmt"]  # `from . import _validate as V`


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle among grokclocks modules: " + " -> ".join(cycle)


def test_cycle_detector_finds_a_planted_cycle(tmp_path):
    """The check can fail: a package whose modules import each other (one inside a function) is a cycle."""
    pkg = tmp_path / "planted"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import B\nA = 1\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n    return a.A\nB = 2\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n")
    g = import_graph(pkg)
    assert g["planted.c"] == set()
    assert find_cycle(g) == ["planted.a", "planted.b", "planted.a"]


CORE_JAX_FREE = """
import sys
import grokclocks, grokclocks.linear, grokclocks.rmt, grokclocks.clocks, grokclocks.spectral
import grokclocks.repulsion, grokclocks._mpgrid, grokclocks.runfile
bad = sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib", "optax"))
print(" ".join(bad))
"""


def test_core_loads_without_jax():
    """The pure core (and the run-file reader) imports no JAX at load."""
    out = subprocess.run([sys.executable, "-c", CORE_JAX_FREE], capture_output=True, text=True, cwd=ROOT,
                         check=True)
    assert out.stdout.strip() == "", f"JAX modules loaded by the core: {out.stdout.strip()}"


if __name__ == "__main__":  # pragma: no cover - `python tests/test_architecture.py`: print the graph's cycles
    print(find_cycle(import_graph()) or "no cycle")
    pytest.main([__file__, "-q"])
