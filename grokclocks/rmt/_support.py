"""The support of the Marchenko–Pastur law: its edges, its atom and distances to the edges."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import _floats as FL
from .. import _pointwise as P
from .. import _validate as V
from ..citations import cites


def _lower_edge(a):
    r"""The engine of `_gap` on a float or a float64 array (the caller's errstate, over ignored)."""
    q2 = P.square((1.0 - a) / (1.0 + FL.ops_of(a).sqrt(a)))
    big = a >= 1e300
    if not P.any_of(big):
        return q2
    return P.pick(big, a - 2.0 * np.sqrt(P.pick(big, a, 1.0)), q2)


def _gap(a):
    r"""λ₋ = (1 - √λ)² as ((1 - λ)/(1 + √λ))²: no cancellation near λ = 1.

    From λ = 10³⁰⁰ on as λ - 2√λ, correctly rounded there (the 1 is below an ulp): the square of the
    rounded quotient overflowed to `inf` at the largest double."""
    a = np.asarray(a, dtype=np.float64)
    with np.errstate(over="ignore"):
        return _lower_edge(a)


def _upper_edge(a):
    r"""λ₊ = (1 + √λ)²; from λ = 10³⁰⁰ on as λ + 2√λ, correctly rounded (the square of the rounded √λ
    came out an ulp below λ₋ at the largest double).  A float or a float64 array."""
    big = a >= 1e300
    sq = P.square(1.0 + np.sqrt(a))
    if not P.any_of(big):
        return sq
    return P.pick(big, a + 2.0 * np.sqrt(P.pick(big, a, 1.0)), sq)


def _edge_distances(x, a):
    r""":math:`(x-\lambda_-,\ \lambda_+-x)` for float x, each to a few ulps of the width :math:`4\sqrt\lambda`.

    The edges :math:`(1\mp\sqrt\lambda)^2` themselves are only good to an ulp of their size, which is
    wider than the whole support for :math:`\lambda\lesssim10^{-32}` or :math:`\gtrsim10^{32}`.  So:
    :math:`\sqrt\lambda\le0.29` (support in [0.5, 2]): :math:`(x-1)+(2\sqrt\lambda-\lambda)` with
    :math:`x-1` exact; :math:`\sqrt\lambda\ge3.42` (support in [λ/2, 2λ]):
    :math:`(x-\lambda)+(2\sqrt\lambda-1)` with :math:`x-\lambda` exact (Sterbenz); in between
    :math:`x-\lambda_-` with :math:`\lambda_-` from :func:`_gap` (its error, ~1e-16 :math:`\lambda_-`, is
    below 1e-16 of the width there).  Same for the upper edge.  Floats or broadcast float64 arrays (the
    caller's errstate: over and invalid ignored); on floats only the branch that applies is formed.
    """
    r = FL.ops_of(a).sqrt(a)  # a float stays a float (math.sqrt: the same correctly rounded value)
    small, large = r <= 0.29, r >= 3.42
    if isinstance(small, (bool, np.bool_)):
        if small:
            return (x - 1.0) + (2.0 * r - a), (1.0 - x) + (2.0 * r + a)
        if large:
            return (x - a) + (2.0 * r - 1.0), (a - x) + (2.0 * r + 1.0)
        q = 1.0 + r
        return x - _lower_edge(a), q * q - x
    # arrays: the branches some point takes, from the extremes of sqrt(lam) (a select on a random mask costs ~3 ns a
    # point, more than the arithmetic of a branch: 0.3 ms at 1e5 points); the same operations per point
    r_lo, r_hi = P.extrema(r)
    x_lo, x_hi = P.extrema(x)
    # every branch's value finite (|x|, lam <= 1e300): a select as a sum of masked products (below)
    blend = max(-x_lo, x_hi) <= 1e300 and r_hi <= 1e150
    lo = hi = None
    if r_lo <= 0.29:
        lo, hi = (x - 1.0) + (2.0 * r - a), (1.0 - x) + (2.0 * r + a)
    if r_hi >= 3.42:
        lo_l, hi_l = (x - a) + (2.0 * r - 1.0), (a - x) + (2.0 * r + 1.0)
        lo, hi = (lo_l, hi_l) if lo is None else _pick_finite(large, (lo_l, hi_l), (lo, hi), blend)
    if r_hi > 0.29 and r_lo < 3.42:  # some point may lie between the two
        q = 1.0 + r
        lo_m, hi_m = x - _lower_edge(a), P.square(q) - x
        if lo is None:
            return lo_m, hi_m
        lo, hi = _pick_finite(~(small | large), (lo_m, hi_m), (lo, hi), blend)
    return lo, hi


def _pick_finite(mask, yes, no, blend):
    """(np.where(mask, y, n) for y, n in zip(yes, no)) for arrays; with `blend` (every value finite) as
    y·[mask] + n·[not mask]: the same values but for the sign of a zero distance (y + (±0) = y; -0 + +0 = +0),
    which no caller reads (they compare with 0 or take max(., 0)); np.where's branch per point on a random mask
    cost 0.6 ms at 1e5 points against ~0.2 ms."""
    if not blend or np.ndim(mask) == 0:
        return tuple(np.where(mask, y, n) for y, n in zip(yes, no))
    f = mask.astype(np.float64)
    g = 1.0 - f
    out = []
    for y, n in zip(yes, no):
        o = np.multiply(y, f, out=P.into(y, f))
        out.append(np.add(o, np.multiply(n, g, out=P.into(n, g)), out=o))
    return tuple(out)


def _pick_nonnegative(pos, yes, no):
    """`P.pick` (`yes` where `pos`, else `no`) for values >= 0; `yes` and `no` may be overwritten where they are this
    engine's temporaries (`P.into`).

    On arrays with every value finite (two reductions), max(yes·[pos], no·[not pos]), the same values (x·1 = x,
    x·0 = +0 for a finite x >= 0, max(x, +0) = x) without np.where's branch per point: a select on a random mask
    cost 0.6 ms at 1e5 points against 0.18 ms (shared 2-core EPYC), a third of `mp_stieltjes`.  np.where
    elsewhere (inf·0 would be NaN)."""
    if not (isinstance(pos, np.ndarray) and pos.ndim and isinstance(yes, np.ndarray) and isinstance(no, np.ndarray)
            and yes.shape == pos.shape == no.shape and float(yes.max()) < math.inf and float(no.max()) < math.inf):
        return P.pick(pos, yes, no)
    f = pos.astype(np.float64)
    out = np.multiply(yes, f, out=P.into(yes))
    np.subtract(1.0, f, out=f)
    np.multiply(no, f, out=f)
    return np.maximum(out, f, out=out)

def _lam(lam, scalar: bool = False):
    return V.positive(lam, "lam", scalar=scalar)


class MPEdges(NamedTuple):
    r"""Result of `mp_edges`: the edges `lam_minus` = λ₋ and `lam_plus` = λ₊ of the continuous part of the Marchenko–Pastur law."""

    lam_minus: float | np.ndarray
    """The lower edge λ₋ = (1 − √λ)²."""
    lam_plus: float | np.ndarray
    """The upper edge λ₊ = (1 + √λ)²."""


@cites("levi:eq6")
def mp_edges(lam):
    r"""Edges of the continuous part of the Marchenko–Pastur law.

    .. math:: \lambda_\pm=(1\pm\sqrt\lambda)^2

    In words: λ₋ = (1 − √λ)² and λ₊ = (1 + √λ)², the smallest and largest eigenvalue of the Gram
    matrix's continuous spectrum (accuracy under Returns).

    Parameters
    ----------
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    (lam_minus, lam_plus) : tuple of float or ndarray
        An `MPEdges` named tuple (λ₋, λ₊), each of the shape of `lam`; it unpacks like a plain tuple.
        λ₋ is evaluated as ((1 − λ)/(1 + √λ))² (no cancellation near λ = 1); both to a few ulps for
        every λ in [10⁻³⁰⁸, 1.8·10³⁰⁸] (above 10³⁰⁰ as λ ∓ 2√λ, correctly rounded).

    References
    ----------
    Levi et al., eq. (6); spec `levi:eq6`.
    """
    a = _lam(lam, P.scalars(lam))
    with np.errstate(over="ignore"):
        return MPEdges(P.result(_lower_edge(a)), P.result(_upper_edge(a)))


@cites("levi:eq6")
def mp_atom(lam):
    r"""Mass of the Marchenko–Pastur atom at ν = 0: max(0, 1 − 1/λ), non-zero only for λ > 1.

    Parameters
    ----------
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        The mass in [0, 1), the shape of `lam`.

    References
    ----------
    Levi et al., eq. (6); spec `levi:eq6`.
    """
    a = _lam(lam, P.scalars(lam))
    if type(a) is float:
        return (a - 1.0) / a if a > 1.0 else 0.0
    # (lam - 1)/lam <= 0 exactly where lam <= 1: the maximum with 0 is the select, branch-free and in place
    # (np.where on a random mask cost 0.3 ms of the 1.1 ms at 1e5 points; (1 - 1)/1 = +0.0 either way)
    with np.errstate(over="ignore"):  # -inf at a subnormal lam, a point the maximum sets to 0
        out = np.subtract(a, 1.0)
        out = np.divide(out, a, out=P.into(out))
        return P.result(np.maximum(out, 0.0, out=P.into(out)))
