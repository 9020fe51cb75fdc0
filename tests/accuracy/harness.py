"""The accuracy contract of the pure-math core: one case per public function and domain.

A case names a grokclocks function, an independent reference at >= 30 significant digits
(mpmath, exact rational arithmetic or a closed form evaluated in mpmath), the domain of each
argument and the worst relative error the function promises there. ``cases_<module>.py`` files
in this folder each export ``CASES: list[AccuracyCase]``; ``test_accuracy.py`` draws from every
case with hypothesis (log-uniform draws that include the end points), and
``docs/gen_accuracy.py`` measures the worst error over a large sample for the docs page.

The domain is the documented domain of the function: on it the function must return a value
within ``rtol`` (relative, or ``atol`` absolute where the value can be 0) of the reference, or
raise ``DomainError`` only on a documented sub-domain (``raises`` predicate).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mpmath
import numpy as np

TINY = float(np.finfo(np.float64).tiny)  # smallest positive normal double, 2.2e-308

__all__ = ["AccuracyCase", "Arg", "TINY", "sample_points", "relative_error", "evaluate"]


@dataclasses.dataclass(frozen=True)
class Arg:
    """One argument's domain: ``[lo, hi]`` sampled log-uniformly (``scale="log"``, lo > 0),
    uniformly (``"lin"``), or from ``values`` (a finite list, e.g. integers)."""

    lo: float = 0.0
    hi: float = 1.0
    scale: str = "log"
    values: tuple = ()
    integer: bool = False

    def extremes(self) -> list[float]:
        if self.values:
            return [self.values[0], self.values[-1]]
        return [self.lo, self.hi]

    def draw(self, u: float) -> float:
        """Map ``u`` in [0, 1] to the domain."""
        if self.values:
            return self.values[min(int(u * len(self.values)), len(self.values) - 1)]
        if self.scale == "log":
            x = math.exp(math.log(self.lo) + u * (math.log(self.hi) - math.log(self.lo)))
        else:
            x = self.lo + u * (self.hi - self.lo)
        x = min(max(x, self.lo), self.hi)
        return float(round(x)) if self.integer else x


@dataclasses.dataclass(frozen=True)
class AccuracyCase:
    """``func(**args, **fixed)`` against ``reference(**args, **fixed)`` (an mpmath number).

    name      : dotted public name, e.g. ``"grokclocks.rmt.mp_laplace"`` (plus a tag if one function
                has several cases: ``"grokclocks.linear.grok_time [d_out=5]"``)
    args      : argument name -> :class:`Arg`
    rtol/atol : the contract; |f - ref| <= max(rtol |ref|, atol)
    raises    : predicate on the arguments: True where a ``DomainError`` is the documented answer
    dps       : mpmath working precision of the reference
    """

    name: str
    func: Callable[..., Any]
    reference: Callable[..., Any]
    args: Mapping[str, Arg]
    rtol: float
    atol: float = 0.0
    fixed: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    raises: Callable[..., bool] | None = None
    dps: int = 40
    note: str = ""


def sample_points(case: AccuracyCase, n: int, seed: int = 0) -> list[dict[str, float]]:
    """Every corner of the domain, then ``n`` quasi-random points (a seeded uniform draw)."""
    names = list(case.args)
    pts: list[dict[str, float]] = []
    corners = [[]]
    for nm in names:
        corners = [c + [v] for c in corners for v in case.args[nm].extremes()]
    pts += [dict(zip(names, c)) for c in corners]
    rng = np.random.default_rng(seed)
    for u in rng.random((n, len(names))):
        pts.append({nm: case.args[nm].draw(float(ui)) for nm, ui in zip(names, u)})
    return pts


def relative_error(value: Any, ref: Any) -> float:
    """|value - ref| / |ref| in mpmath (inf when ref = 0 and value != 0, 0 when both are 0)."""
    v, r = mpmath.mpf(value), mpmath.mpf(ref)
    if r == 0:
        return 0.0 if v == 0 else math.inf
    return float(abs(v - r) / abs(r))


def evaluate(case: AccuracyCase, point: Mapping[str, float]) -> tuple[str, float]:
    """One point: ``("ok", err)``, ``("raised", nan)`` (documented DomainError), or a failure
    ``("bad: ...", err)`` -- an undocumented exception, a non-finite value, or err > contract."""
    from grokclocks import DomainError

    kw = {**case.fixed, **point}
    documented = case.raises is not None and case.raises(**kw)
    try:
        value = case.func(**kw)
    except DomainError as e:
        return ("raised", math.nan) if documented else (f"bad: undocumented DomainError: {e}", math.nan)
    except Exception as e:  # noqa: BLE001 -- any other exception is a defect
        return f"bad: {type(e).__name__}: {e}", math.nan
    if documented:
        return f"bad: returned {value!r} where a DomainError is documented", math.nan
    with mpmath.workdps(case.dps):
        ref = case.reference(**kw)
    v = float(value)
    if not math.isfinite(v):
        if mpmath.isinf(ref) and (v > 0) == (ref > 0):
            return "ok", 0.0
        return f"bad: non-finite {v} (reference {mpmath.nstr(ref, 17)})", math.inf
    err = relative_error(v, ref)
    ok = abs(mpmath.mpf(v) - ref) <= max(case.rtol * abs(ref), case.atol)
    return ("ok" if ok else f"bad: rel. error {err:.3g} > {case.rtol:g} (got {v!r}, ref "
            f"{mpmath.nstr(ref, 17)})"), err


def run_case(case: AccuracyCase, points: Sequence[Mapping[str, float]]) -> dict[str, Any]:
    """Worst error and failures over ``points`` (for the docs page and the thorough profile)."""
    worst, worst_at, bad, raised = 0.0, None, [], 0
    for pt in points:
        status, err = evaluate(case, pt)
        if status == "raised":
            raised += 1
        elif status.startswith("bad"):
            bad.append((dict(pt), status))
        if math.isfinite(err) and err > worst:
            worst, worst_at = err, dict(pt)
    return {"name": case.name, "n": len(points), "worst": worst, "worst_at": worst_at, "bad": bad,
            "raised": raised, "rtol": case.rtol}
