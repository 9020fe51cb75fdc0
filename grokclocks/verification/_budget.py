"""The GPU tier's time limits, the budget warnings of a certificate, and `BudgetItem` (verify/budget.py)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from .. import _validate as V

GPU_COMMAND_S = 540.0
"""Seconds one command of a GPU window (benchmarks/gpu_session.sh) takes at most: 540 s.

A GPU window is 15 minutes of device time in all (machine start-up included), at most 10 minutes a
command; the script starts no part (benchmark, suite) that would end past this many seconds, and never
runs past `GPU_COMMAND_HARD_S`."""
GPU_COMMAND_HARD_S = 570.0
"""Seconds one command of a GPU window never exceeds: 570 s, 30 s under the 10-minute limit of a command
(benchmarks/gpu_session.sh checks its own clock)."""
GPU_BENCH_S = 120.0
"""Seconds after which the quick engine benchmark of a window (bench_modular_engine.py --scale gpu-quick)
stops: 120 s."""
GPU_TEST_LIMIT_S = 240.0
"""Seconds of wall time, XLA compile included, that no single test of the GPU tier may exceed: 240 s
(`budget_warnings` lists a test over it)."""
GPU_SUITE_LIMIT_S = 420.0
"""Seconds of wall time, start-up included, that no suite (one pytest process) of the GPU tier may exceed:
420 s, so that one suite fits a window's command after the benchmark (`suite_certificate` warns above it)."""
GPU_COMPILE_LIMIT_S = 60.0
"""Seconds that no single XLA compile of a GPU test may exceed: 60 s (`budget_warnings` lists a test with a
longer one)."""
SUITE_START_S = 15.0
"""Seconds assumed for one suite's pytest process to start before its first test (Python, JAX and the test
modules imported, the tests collected): 15 s.

Measured 6-11 s wall (3-5 s CPU) for `pytest verify/<suite> --collect-only --scale gpu` on the 2-core AMD
EPYC under load 4; 5 s are added for CUDA initialisation on a GPU."""


def budget_warnings(tests: list[dict[str, Any]], scale: str) -> list[str]:
    """The per-test budget warnings of a certificate at GPU scale.

    Parameters
    ----------
    tests : list of dict
        The certificate's per-test records: each a dict with a "test" name and, where measured, "wall_s"
        and "compile_max_s" (None or a finite number ≥ 0, seconds), "compile_max_fun" (the function of the
        longest compile).
    scale : {"cpu", "gpu"}
        The certificate's scale; at "cpu" there is no budget and the list is empty.

    Returns
    -------
    list of str
        One line per test over `GPU_TEST_LIMIT_S` (240 s) of wall time and per test with one XLA compile
        over `GPU_COMPILE_LIMIT_S` (60 s).

    Raises
    ------
    DomainError
        If `scale` is not "cpu" or "gpu", or `tests` is not a list of such records.
    """
    scale = V.choice(scale, "scale", ("cpu", "gpu"))
    tests = _check_tests(tests)
    if scale != "gpu":
        return []
    out = []
    for t in tests:
        if (t.get("wall_s") or 0.0) > GPU_TEST_LIMIT_S:
            out.append(f"{t['test']}: wall time {t['wall_s']:.0f} s > {GPU_TEST_LIMIT_S:.0f} s")
        if (t.get("compile_max_s") or 0.0) > GPU_COMPILE_LIMIT_S:
            out.append(f"{t['test']}: one XLA compile took {t['compile_max_s']:.0f} s > {GPU_COMPILE_LIMIT_S:.0f} s "
                       f"({t.get('compile_max_fun', '?')})")
    return out


def _check_tests(tests: Any) -> list[dict[str, Any]]:
    """The per-test records of a certificate: a list of dicts, each with a "test" name and, where present,
    "wall_s" / "compile_max_s" None or a finite number ≥ 0."""
    items = V.sequence(tests, "tests", min_len=0, what="a list of per-test dicts")
    for i, t in enumerate(items):
        if not isinstance(t, dict) or not isinstance(t.get("test"), str):
            raise V.DomainError(f"tests[{i}] must be a dict with a 'test' name (got {V.show(t)})")
        for key in ("wall_s", "compile_max_s"):
            if t.get(key) is not None:
                V.nonnegative(t[key], f"tests[{i}][{key!r}]", scalar=True)
    return items


@dataclasses.dataclass(frozen=True)
class BudgetItem:
    """One program of a GPU-scale verify test, registered for the GPU time budget (verify/budget.py).

    A verify module lists its tests' dominant programs in a module-level `GPU_BUDGET` list; the budget
    script measures each on the CPU at the reduced size (`cpu_seeds`, `cpu_steps`), counts its FLOPs at the
    full size (`seeds`, `steps`) from the jaxpr (no execution), and estimates the H100 time.

    Raises
    ------
    ValueError
        If a count is not an integer ≥ 1, `precision` is unknown or `host_s` is negative or not finite.
    """

    test: str
    """The test function's name, e.g. "test_eq8_losses"; a test may register several items."""
    build: Callable[[int, int], tuple[Callable[..., Any], Callable[[], tuple]]] | None
    """The program's builder, or `None` for host work only (`host_s`).

    `build(n_seeds, n_steps)` returns `(program, make_inputs)`: `make_inputs()` is a JAX-traceable
    zero-argument function returning a tuple of arrays (traced abstractly with `jax.eval_shape` at the full
    size, so nothing large is allocated) and `program(*inputs)` is JAX-traceable (the script jit-compiles
    it)."""
    seeds: int
    """The batch size at the full GPU configuration (seeds, walkers / 2¹⁴, ...), an integer ≥ 1."""
    steps: int
    """The number of steps at the full GPU configuration, an integer ≥ 1."""
    cpu_seeds: int
    """The reduced batch size run on the CPU to measure the program, an integer ≥ 1."""
    cpu_steps: int
    """The reduced number of steps run on the CPU to measure the program, an integer ≥ 1."""
    calls: int = 1
    """How often the test runs the program with these shapes (e.g. 5 for five configurations), an integer
    ≥ 1; default 1."""
    config: str = ""
    """The GPU configuration in words (the budget table's config column); default "" (none given)."""
    precision: str = "float32"
    """The program's arithmetic, "float32" (default) or "float64"."""
    host_s: float = 0.0
    """Host-side (numpy/scipy) seconds at the full size outside the program, finite and ≥ 0, with its source
    in `note`; default 0 (none)."""
    note: str = ""
    """Where the numbers come from, in words; default "" (none given)."""
    on_host: bool = False
    """`True`: the test runs the program on the CPU device even on a GPU machine, so its estimate is the CPU
    time measured; default `False` (the program runs on the GPU)."""
    gpu_rate: float | None = None
    """Seconds per seed × step on the H100, measured in an earlier GPU run (its source in `note`); it replaces
    the FLOP model of the run time. Default `None` (the FLOP model is used)."""

    def __post_init__(self) -> None:
        for name in ("seeds", "steps", "cpu_seeds", "cpu_steps", "calls"):
            v = getattr(self, name)
            if not (isinstance(v, int) and v >= 1):
                raise ValueError(f"BudgetItem.{name} must be an integer >= 1 (got {v!r})")
        if self.precision not in ("float32", "float64"):
            raise ValueError(f"BudgetItem.precision must be 'float32' or 'float64' (got {self.precision!r})")
        if not (self.host_s >= 0 and math.isfinite(self.host_s)):
            raise ValueError(f"BudgetItem.host_s must be finite and >= 0 (got {self.host_s!r})")
