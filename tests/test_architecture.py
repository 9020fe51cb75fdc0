"""Architecture of the package: the modules of grokclocks import one another without a cycle, and the
pure core loads without JAX.

The import graph is read from the source (``ast``) by ``docs/gen_pages.py`` (the same graph
docs/architecture.md's module table shows): every ``import`` and ``from ... import`` statement of every
file under ``grokclocks/``, at module level or inside a function (a deferred import hides a cycle from
the interpreter but not from a reader).  An edge goes to the module a statement names
(``from .linear import t_star`` -> ``grokclocks.linear``; ``from . import rmt`` -> ``grokclocks.rmt``).
"""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _gen_pages():
    """docs/gen_pages.py, whose ``module_imports`` and ``import_cycles`` also build docs/architecture.md's table."""
    spec = importlib.util.spec_from_file_location("grokclocks_gen_pages", ROOT / "docs" / "gen_pages.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


G = _gen_pages()


def import_graph(package: pathlib.Path = ROOT / "grokclocks") -> dict[str, set[str]]:
    """Every import statement, deferred ones included (a deferred import hides a cycle from the
    interpreter, not from a reader)."""
    return G.module_imports(package, load_time_only=False)


def test_graph_reads_the_package():
    g = import_graph()
    assert "grokclocks.linear" in g and "grokclocks.sim.train" in g
    assert "grokclocks.linear._crossing" in g["grokclocks.linear"]  # `from ._crossing import ...`
    assert "grokclocks.rmt" in g["grokclocks.linear._crossing._delay"]  # `from ... import rmt`
    assert "grokclocks._validate" in g["grokclocks.rmt._support"]  # `from .. import _validate as V`
    assert "grokclocks.rmt._support" in g["grokclocks.rmt"]  # a package face: `from ._support import ...`


def test_no_import_cycle():
    cycles = G.import_cycles(import_graph())
    assert not cycles, f"import cycles among grokclocks modules (each a strongly connected group): {cycles}"


def test_cycle_detector_finds_a_planted_cycle(tmp_path, monkeypatch):
    """The check can fail: a package whose modules import each other (one inside a function) is a cycle."""
    monkeypatch.setattr(G, "ROOT", tmp_path)  # module names relative to the planted package's parent
    pkg = tmp_path / "grokclocks"  # the graph follows imports among modules of a package of this name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import B\nA = 1\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n    return a.A\nB = 2\n")
    (pkg / "c.py").write_text("from .a import A\n")
    g = import_graph(pkg)
    assert g["grokclocks.c"] == {"grokclocks.a"}
    assert G.import_cycles(g) == [["grokclocks.a", "grokclocks.b"]]
    assert G.import_cycles(G.module_imports(pkg)) == []  # at load time only: the deferred import hides it


# the layers of docs/architecture.md; a unit (a module, or a package with its private files) may import
# only from its own layer or the layers below
LAYERS = [
    {"grokclocks._validate", "grokclocks._floats", "grokclocks._pointwise", "grokclocks._constants", "grokclocks._results",
     "grokclocks._papers", "grokclocks._papers.clocks", "grokclocks._papers.kramers", "grokclocks._papers.levi",
     "grokclocks._papers.repulsion", "grokclocks._papers.uniformity", "grokclocks.citations", "grokclocks._facade",
     "grokclocks._fielddocs", "grokclocks._helpmaths", "grokclocks.errata", "grokclocks.runfile",
     "grokclocks._safe_io", "grokclocks._safe_write", "grokclocks._escape"},
    {"grokclocks.task"},
    {"grokclocks.rmt", "grokclocks._mpgrid", "grokclocks.linear", "grokclocks.clocks", "grokclocks.spectral",
     "grokclocks.kramers", "grokclocks.coverage", "grokclocks.repulsion"},
    "grokclocks.sim",  # every unit under grokclocks.sim
    {"grokclocks.symbolic"},  # sympy forms of the closed forms: above the theories, below the tools (cli cite --latex)
    {"grokclocks.logs", "grokclocks.runs"},  # reading a run: every log format, run files, arrays -> RunData
    {"grokclocks.compare", "grokclocks.forecast", "grokclocks.verification"},  # side by side on runs
    {"grokclocks._report", "grokclocks.cli", "grokclocks", "grokclocks.__main__"},  # composing them
]

# units of one layer that sit side by side and must not import each other
SIDE_BY_SIDE = [("grokclocks.compare", "grokclocks.forecast")]


# the one upward edge, deferred and numpy-only: train_modular(progress=True) shows the current forecast in its
# progress bar (grokclocks.sim.modular._forecast_line imports grokclocks.forecast.progress_line when called)
ALLOWED_UPWARD = {("grokclocks.sim.modular", "grokclocks.forecast")}


def _layer(unit: str) -> int:
    for k, layer in enumerate(LAYERS):
        if (unit == layer or unit.startswith(layer + ".")) if isinstance(layer, str) else unit in layer:
            return k
    raise AssertionError(f"{unit} is in no layer of docs/architecture.md: add it to LAYERS and to the page")


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports of a higher layer (the package root excepted: `runfile` and `verification` read its
    version lazily)."""
    bad = set()
    for module, deps in graph.items():
        unit = G._unit(module)
        for d in deps:
            du = G._unit(d)
            if du != unit and _layer(du) > _layer(unit) and du != "grokclocks" and (unit, du) not in ALLOWED_UPWARD:
                bad.add(f"{unit} (layer {_layer(unit)}) imports {du} (layer {_layer(du)})")
    return sorted(bad)


def test_layers_import_only_downwards():
    """No theory module imports the simulation layer or the tools, no foundation imports a theory, etc.
    (imports inside functions included)."""
    bad = layer_violations(import_graph())
    assert not bad, "imports against the layering:\n" + "\n".join(bad)


def sideways_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports between units that sit side by side (`SIDE_BY_SIDE`), either way, deferred ones included."""
    bad = set()
    pairs = {frozenset(p) for p in SIDE_BY_SIDE}
    for module, deps in graph.items():
        unit = G._unit(module)
        for d in deps:
            if frozenset((unit, G._unit(d))) in pairs:
                bad.add(f"{unit} imports {G._unit(d)} ({module} -> {d})")
    return sorted(bad)


def test_compare_and_forecast_sit_side_by_side_on_runs():
    """compare and forecast read runs through grokclocks.runs and neither imports the other (the CLI's report
    layer, grokclocks._report, puts compare's table and the forecast line together); the old layout -- compare's
    table importing forecast, forecast importing compare's input layer with its own copy of the dispatcher --
    fails here."""
    g = import_graph()
    assert not sideways_imports(g), sideways_imports(g)
    assert "grokclocks.runs._load" in g["grokclocks.compare._api"]
    assert "grokclocks.runs._load" in g["grokclocks.forecast._api"]
    planted = dict(g)
    planted["grokclocks.compare._result"] = g["grokclocks.compare._result"] | {"grokclocks.forecast"}
    assert sideways_imports(planted) == ["grokclocks.compare imports grokclocks.forecast "
                                         "(grokclocks.compare._result -> grokclocks.forecast)"]


def test_layer_check_finds_a_planted_upward_import():
    """The check can fail: a theory file importing the engine, even inside a function, is reported."""
    graph = import_graph()
    graph["grokclocks.linear._losses"] = graph["grokclocks.linear._losses"] | {"grokclocks.sim.train._engine"}
    assert layer_violations(graph) == ["grokclocks.linear (layer 2) imports grokclocks.sim.train (layer 3)"]


CORE_JAX_FREE = """
import sys
import grokclocks, grokclocks.linear, grokclocks.rmt, grokclocks.clocks, grokclocks.spectral
import grokclocks.repulsion, grokclocks._mpgrid, grokclocks.runfile, grokclocks.forecast
bad = sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib", "optax"))
print(" ".join(bad))
"""


def test_core_loads_without_jax():
    """The pure core (and the run-file reader, and the forecast) imports no JAX at load."""
    out = subprocess.run([sys.executable, "-c", CORE_JAX_FREE], capture_output=True, text=True, cwd=ROOT,
                         check=True)
    assert out.stdout.strip() == "", f"JAX modules loaded by the core: {out.stdout.strip()}"


if __name__ == "__main__":  # pragma: no cover - `python tests/test_architecture.py`: print the graph's cycles
    print(G.import_cycles(import_graph()) or "no cycle")


def _docstrings_with_control_characters(package: pathlib.Path) -> list[str]:
    """Docstrings holding a control character: a LaTeX ``\\frac`` / ``\\big`` / ``\\top`` in a string that is
    not raw becomes a form feed / backspace / tab, and the rendered equation loses its command."""
    import ast

    bad = []
    for f in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc and any(c in doc for c in "\a\b\t\v\f\r"):
                    bad.append(f"{f.relative_to(package.parent)}:{getattr(node, 'name', '<module>')}")
    return bad


def test_docstrings_hold_no_control_characters():
    assert _docstrings_with_control_characters(ROOT / "grokclocks") == []


def test_control_character_check_finds_a_planted_escape(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text('def f():\n    """x = \\frac{1}{2}"""\n')
    assert _docstrings_with_control_characters(pkg) == ["pkg/m.py:f"]
