"""The accuracy contract of the pure-math core: one case per public function and domain.

A case names a grokclocks function, an independent reference at >= 30 significant digits
(mpmath, exact rational arithmetic or a closed form evaluated in mpmath), the domain of each
argument and the worst error the function promises there. ``cases_<module>.py`` files in this
folder each export ``CASES: list[AccuracyCase]``; ``test_accuracy.py`` draws from every case with
hypothesis (log-uniform draws that include the end points), and ``docs/gen_accuracy.py`` measures
the worst error over a large sample for the docs page.

Stratified draws: a function that switches formula at some value of an argument (a series below a
threshold, an asymptotic form beyond one) or of a quantity formed from its arguments (the late-time
exponent ``x = 4 eta0 (1 - sqrt(lam))^2 t``) declares it as a ``Branch``: the quantity's range is cut
at the switch points, and each draw first picks one of the pieces (or, with the same chance, the plain
draw over the whole domain), so that every formula of the function is exercised, however narrow its
interval in the log-uniform measure of the whole domain (a narrow piece on either side of each
switch point too: a truncated series is worst just below its threshold).  The points just below and
just above each switch are checked with the corners, and a case may also list fixed ``points`` (the
worst points found by earlier measurements).

The domain is the documented domain of the function: on it the function must return a value
within the contract of the reference, or raise ``DomainError`` only on a documented sub-domain
(``raises`` predicate).

Error measures (``kind``), with :math:`v` the value and :math:`R` the reference:

``"rel"``  :math:`|v-R|/\\max(|R|, \\text{TINY})` -- relative error; below the smallest normal double
           (TINY = 2.2e-308) the comparison is absolute at the scale TINY (subnormal results carry
           fewer bits, and 0 is the correctly rounded value of anything below 2^-1075);
``"log"``  :math:`|v-R|/\\max(1, |R|)` -- for logarithms (an absolute error of :math:`\\log L` is a
           relative error of :math:`L`);
``"exp"``  :math:`|v-R|/(\\max(|R|,\\text{TINY})\\max(1, |\\log R|))` -- relative error of a value that is
           exponentially small or large: evaluating :math:`e^y` from a :math:`y` correct to an ulp
           already costs :math:`|y|` ulps, so this is the relative error per unit of :math:`|\\log R|`.

A value ``+-inf`` is correct where the reference lies beyond the largest double plus half an ulp
(2^1024 - 2^970) with the same sign: that is IEEE rounding of an overflow (a reference between the
largest double and that threshold rounds to the largest double, and is compared as usual).  ``rtol`` and ``atol`` may be callables of the
case's arguments when the contract depends on them (e.g. near an edge where the input's own
rounding sets the attainable accuracy); ``rtol_doc`` then says the formula for the docs page.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mpmath
import numpy as np

TINY = float(np.finfo(np.float64).tiny)  # smallest positive normal double, 2.2e-308
HUGE = float(np.finfo(np.float64).max)  # largest double, 1.8e308
# IEEE rounding overflows to inf from 2^1024 - 2^970 (the largest double plus half an ulp); below it,
# a value beyond HUGE rounds to HUGE
OVERFLOW = mpmath.mpf(2) ** 1024 - mpmath.mpf(2) ** 970

__all__ = ["AccuracyCase", "Arg", "Branch", "TINY", "HUGE", "fixed_points", "draw_point", "sample_points",
           "relative_error", "case_error", "evaluate", "run_case"]


def _draw_in(lo: float, hi: float, scale: str, u: float) -> float:
    """Map ``u`` in [0, 1] to [lo, hi], log-uniformly (``scale="log"``, lo > 0) or uniformly."""
    if scale == "log":
        x = math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))
    else:
        x = lo + u * (hi - lo)
    return min(max(x, lo), hi)


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
        return self.clip(_draw_in(self.lo, self.hi, self.scale, u))

    def clip(self, x: float) -> float:
        """``x`` moved into the domain (the nearest value of ``values``; rounded for an integer)."""
        if self.values:
            return min(self.values, key=lambda v: abs(v - x))
        x = min(max(x, self.lo), self.hi)
        return float(round(x)) if self.integer else x


@dataclasses.dataclass(frozen=True)
class Branch:
    """Switch points of a quantity the function branches on: draws are stratified across its pieces.

    arg    : the argument that is set from the drawn quantity
    points : the switch points in the code (in the units of the quantity), inside (lo, hi)
    lo, hi : the range of the quantity that is cut into pieces (default: the argument's domain)
    scale  : ``"log"`` or ``"lin"`` draw inside each piece
    solve  : ``solve(q, **point)`` -> the value of ``arg`` at which the quantity equals ``q``, the other
             arguments as drawn (``None``: the quantity is ``arg`` itself); the result is clipped into
             the argument's domain
    near   : each switch point also gets a narrow piece on either side, a factor ``near`` wide (``"log"``)
             or ``near`` times the range (``"lin"``): a truncated series is worst just below its
             threshold and an asymptotic form just above it, and a piece of several decades would
             rarely draw there
    what   : the quantity in words (docs page), e.g. ``"x = 4 eta0 (1 - sqrt(lam))^2 t"``

    Beside the draws, ``fixed_points`` puts one point just below and one just above each switch point
    (relative offset 1e-9), the other arguments at the middle of their domains.
    """

    arg: str
    points: tuple[float, ...]
    lo: float | None = None
    hi: float | None = None
    scale: str = "log"
    solve: Callable[..., float] | None = None
    near: float | None = None
    what: str = ""

    def _range(self, domain: Arg) -> tuple[float, float]:
        return (domain.lo if self.lo is None else self.lo), (domain.hi if self.hi is None else self.hi)

    def cuts(self, domain: Arg) -> list[float]:
        """The switch points inside the range, sorted."""
        lo, hi = self._range(domain)
        return sorted(p for p in self.points if lo < p < hi)

    def edges(self, domain: Arg) -> list[float]:
        lo, hi = self._range(domain)
        out = {lo, hi, *self.cuts(domain)}
        for c in self.cuts(domain):
            if self.scale == "log":
                f = 10.0 if self.near is None else self.near
                out |= {c / f, c * f}
            else:
                w = (hi - lo) * (0.05 if self.near is None else self.near)
                out |= {c - w, c + w}
        return sorted(x for x in out if lo <= x <= hi)

    def pieces(self, domain: Arg) -> int:
        """Number of intervals; a draw picks one of them or (index == pieces) the plain draw."""
        return len(self.edges(domain)) - 1

    def value(self, q: float, point: Mapping[str, float], domain: Arg) -> float:
        """The argument's value at which the quantity equals ``q`` (clipped into the domain)."""
        others = {k: v for k, v in point.items() if k != self.arg}
        return domain.clip(q if self.solve is None else float(self.solve(q, **others)))

    def apply(self, point: dict[str, float], domain: Arg, piece: int, u: float) -> None:
        """Set ``point[arg]`` so that the quantity lies in interval ``piece`` at relative position ``u``
        (``piece == pieces``: leave the plain draw)."""
        e = self.edges(domain)
        if piece >= len(e) - 1:
            return
        point[self.arg] = self.value(_draw_in(e[piece], e[piece + 1], self.scale, u), point, domain)

    def beside(self, domain: Arg) -> list[float]:
        """Values of the quantity just below and just above each switch point."""
        lo, hi = self._range(domain)
        out = []
        for c in self.cuts(domain):
            d = 1e-9 * (abs(c) if self.scale == "log" or c != 0 else hi - lo)
            out += [c - d, c + d]
        return out


@dataclasses.dataclass(frozen=True)
class AccuracyCase:
    """``func(**args, **fixed)`` against ``reference(**args, **fixed)`` (an mpmath number).

    name      : dotted public name, e.g. ``"grokclocks.rmt.mp_laplace"`` (plus a tag if one function
                has several cases: ``"grokclocks.linear.grok_time [d_out=5]"``)
    args      : argument name -> :class:`Arg`
    rtol/atol : the contract; error (see ``kind``) <= rtol, or |f - ref| <= atol; either may be a
                callable of the arguments
    raises    : predicate on the arguments: True where a ``DomainError`` is the documented answer
    dps       : mpmath working precision of the reference
    kind      : error measure, ``"rel"`` (default), ``"log"`` or ``"exp"`` (module docstring)
    ci_examples : hypothesis draws in the ``ci`` profile if fewer than the profile's (slow references);
                0 skips the case (corners too) in the ``ci`` profile
    rtol_doc  : how a callable ``rtol`` reads on the docs page
    raises_doc: the documented DomainError sub-domain in words (docs page)
    branches  : the function's switch points (:class:`Branch`), for stratified draws
    points    : fixed points checked beside the corners (hard points found earlier)
    """

    name: str
    func: Callable[..., Any]
    reference: Callable[..., Any]
    args: Mapping[str, Arg]
    rtol: float | Callable[..., float]
    atol: float | Callable[..., float] = 0.0
    fixed: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    raises: Callable[..., bool] | None = None
    dps: int = 40
    note: str = ""
    kind: str = "rel"
    ci_examples: int | None = None
    rtol_doc: str = ""
    raises_doc: str = ""
    branches: tuple[Branch, ...] = ()
    points: tuple[Mapping[str, float], ...] = ()

    def __post_init__(self):
        for b in self.branches:
            if b.arg not in self.args or self.args[b.arg].values:
                raise ValueError(f"{self.name}: a branch must set a continuous argument (got {b.arg!r})")
        for pt in self.points:
            if set(pt) != set(self.args):
                raise ValueError(f"{self.name}: a fixed point must give every argument (got {sorted(pt)})")


def fixed_points(case: AccuracyCase) -> list[dict[str, float]]:
    """Every corner of the domain, then the case's fixed ``points``, then a point just below and one just
    above each branch's switch points (the other arguments at the middle of their domains)."""
    names = list(case.args)
    corners = [[]]
    for nm in names:
        corners = [c + [v] for c in corners for v in case.args[nm].extremes()]
    pts = [dict(zip(names, c)) for c in corners] + [dict(pt) for pt in case.points]
    middle = {nm: a.draw(0.5) for nm, a in case.args.items()}
    for b in case.branches:
        dom = case.args[b.arg]
        pts += [{**middle, b.arg: b.value(q, middle, dom)} for q in b.beside(dom)]
    return pts


def draw_point(case: AccuracyCase, us: Sequence[float], pieces: Sequence[int] = (),
               branch_us: Sequence[float] = ()) -> dict[str, float]:
    """One draw: ``us[i]`` in [0, 1] for each argument, then for each branch ``pieces[j]`` (an interval of
    its quantity, or ``Branch.pieces`` for the plain draw) at position ``branch_us[j]``."""
    pt = {nm: a.draw(float(u)) for (nm, a), u in zip(case.args.items(), us)}
    for b, k, u in zip(case.branches, pieces, branch_us):
        b.apply(pt, case.args[b.arg], int(k), float(u))
    return pt


def sample_points(case: AccuracyCase, n: int, seed: int = 0) -> list[dict[str, float]]:
    """The fixed points (corners and ``points``), then ``n`` seeded draws, each branch's pieces (and
    the plain draw) chosen with equal chance."""
    pts = fixed_points(case)
    rng = np.random.default_rng(seed)
    for u in rng.random((n, len(case.args))):
        pieces = [int(rng.integers(0, b.pieces(case.args[b.arg]) + 1)) for b in case.branches]
        pts.append(draw_point(case, u, pieces, rng.random(len(case.branches))))
    return pts


def relative_error(value: Any, ref: Any) -> float:
    """|value - ref| / max(|ref|, TINY) in mpmath (0 when both are 0)."""
    v, r = mpmath.mpf(value), mpmath.mpf(ref)
    if v == r:
        return 0.0
    return float(abs(v - r) / max(abs(r), mpmath.mpf(TINY)))


def case_error(kind: str, value: Any, ref: Any) -> float:
    """The error measure ``kind`` (module docstring) of ``value`` against ``ref``."""
    v, r = mpmath.mpf(value), mpmath.mpf(ref)
    if v == r:
        return 0.0
    if kind == "log":
        return float(abs(v - r) / max(1, abs(r)))
    rel = abs(v - r) / max(abs(r), mpmath.mpf(TINY))
    if kind == "exp":
        return float(rel / max(1, abs(mpmath.log(max(abs(r), mpmath.mpf(TINY))))))
    if kind != "rel":
        raise ValueError(f"unknown error kind {kind!r}")
    return float(rel)


def mp_isnan(x: Any) -> bool:
    try:
        return bool(mpmath.isnan(x))
    except TypeError:
        return False


def _tol(t: float | Callable[..., float], kw: Mapping[str, Any]) -> float:
    return float(t(**kw)) if callable(t) else float(t)


def evaluate(case: AccuracyCase, point: Mapping[str, float]) -> tuple[str, float]:
    """One point: ``("ok", err)``, ``("raised", nan)`` (documented DomainError), or a failure
    ``("bad: ...", err)`` -- an undocumented exception, a non-finite value, or err > contract.

    ``err`` is the error measure of ``case.kind`` divided by nothing: compare it with the rtol."""
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
        if math.isnan(v) and mp_isnan(ref):
            return "ok", 0.0  # a documented NaN (e.g. grok_time when neither accuracy reaches the level)
        if not math.isfinite(v):
            if not math.isnan(v) and abs(ref) >= OVERFLOW and (v > 0) == (ref > 0):
                return "ok", 0.0  # IEEE overflow of a value beyond the float range
            return f"bad: non-finite {v} (reference {mpmath.nstr(ref, 17)})", math.inf
        if abs(ref) >= OVERFLOW:
            return f"bad: finite {v!r} where the reference {mpmath.nstr(ref, 5)} overflows", math.inf
        err = case_error(case.kind, v, ref)
        rtol = _tol(case.rtol, kw)
        atol = _tol(case.atol, kw)
        ok = err <= rtol or abs(mpmath.mpf(v) - ref) <= atol
        return ("ok" if ok else f"bad: {case.kind} error {err:.3g} > {rtol:g} (got {v!r}, ref "
                f"{mpmath.nstr(ref, 17)})"), err


def run_case(case: AccuracyCase, points: Sequence[Mapping[str, float]]) -> dict[str, Any]:
    """Worst error and failures over ``points`` (for the docs page and the thorough profile).

    ``worst`` is the largest error measure, ``worst_ratio`` the largest error / contract (the
    same when ``rtol`` is a constant)."""
    worst, worst_at, bad, raised = 0.0, None, [], 0
    worst_ratio, worst_ratio_at = 0.0, None
    for pt in points:
        status, err = evaluate(case, pt)
        if status == "raised":
            raised += 1
        elif status.startswith("bad"):
            bad.append((dict(pt), status))
        if math.isfinite(err):
            if err > worst:
                worst, worst_at = err, dict(pt)
            ratio = err / max(_tol(case.rtol, {**case.fixed, **pt}), 1e-300)
            if ratio > worst_ratio:
                worst_ratio, worst_ratio_at = ratio, dict(pt)
    return {"name": case.name, "n": len(points), "worst": worst, "worst_at": worst_at, "bad": bad,
            "raised": raised, "rtol": case.rtol if not callable(case.rtol) else None,
            "worst_ratio": worst_ratio, "worst_ratio_at": worst_ratio_at}
