"""The documentation's Python examples run verbatim, and the values their comments state are right.

Every ```python block of README.md, docs/index.md and docs/getting-started.md is executed in order
(blocks of one file share a namespace, as a reader pasting them would). An expression statement
(or a single assignment) whose comment starts with a number, e.g. ``classifier_clock(t, loss, 1e-3)   # 1550.0: ...``, is
evaluated and compared with that number to half a unit of its last printed digit.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = ["README.md", "docs/index.md", "docs/getting-started.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
NUMBER = re.compile(r"#\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?=[\s:,;)]|$)")


def _blocks(name: str) -> list[str]:
    return BLOCK.findall((ROOT / name).read_text())


def _half_unit(text: str) -> float:
    mant, _, exp = text.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return 0.5 * 10.0 ** (-decimals) * 10.0 ** (int(exp) if exp else 0)


def _run(source: str, ns: dict, where: str) -> int:
    tree = ast.parse(source)
    lines = source.splitlines()
    checked = 0
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr):
            value = eval(compile(ast.Expression(stmt.value), where, "eval"), ns)
        else:
            exec(compile(ast.Module(body=[stmt], type_ignores=[]), where, "exec"), ns)
            single = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            value = ns[stmt.targets[0].id] if single else None
        comment = lines[stmt.end_lineno - 1].partition("#")[2]
        m = NUMBER.match("#" + comment.strip()) if comment else None
        if m and value is not None and not isinstance(value, (str, bytes)):
            arr = np.asarray(value, dtype=float)
            if arr.size == 1:  # "a, b  # equal" states no number; "x  # 0.99" checks one value
                assert math.isclose(float(arr), float(m.group(1)), abs_tol=_half_unit(m.group(1))), (
                    f"{where}: `{ast.unparse(stmt)}` gives {float(arr)!r}, the comment says {m.group(1)}")
                checked += 1
    return checked


# how many stated values each file must have checked (so the checks cannot silently vanish)
MIN_CHECKED = {"README.md": 1, "docs/index.md": 0, "docs/getting-started.md": 8}


@pytest.mark.parametrize("name", FILES)
def test_python_examples_run_verbatim(name):
    blocks = _blocks(name)
    assert blocks, f"{name} has no python example"
    ns: dict = {"__name__": "__docs__"}
    n = sum(_run(src, ns, f"{name} block {i + 1}") for i, src in enumerate(blocks))
    assert n >= MIN_CHECKED[name], f"{name}: only {n} stated values were checked"


def test_a_wrong_stated_value_is_caught():
    with pytest.raises(AssertionError, match="the comment says 1551.0"):
        _run("import numpy as np\nfloat(np.float64(1550.0))  # 1551.0: wrong on purpose\n", {}, "negative control")
    assert _half_unit("3500.03") == pytest.approx(0.005) and _half_unit("2e-3") == pytest.approx(5e-4)
