"""Resolvent (Stieltjes) moments of the Marchenko–Pastur law and the weight-decay plateaus built on them."""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import _pointwise as P
from .. import _validate as V
from ..citations import cites
from ._support import _lam, _pick_nonnegative

# sqrt(hb^2 + lam w) as three operations wherever the point's own numbers keep both terms from overflowing and the
# larger from the subnormal range (as `P.hypot`'s rule); hypot(hb, sqrt(lam) sqrt(w)) on the other points
_ROOT_HB = 2.0**510
_ROOT_PRODUCT = 2.0**1020
_ROOT_FLOOR = 2.0**-960


def _half_root(hb, a, ww):
    r""":math:`D/2=\sqrt{(b/2)^2+\lambda w}`, `hb` = b/2: one square root (``hypot`` of ``b/2`` and ``sqrt(lam) sqrt(w)``
    took three and cost a third of `mp_stieltjes` at 1e5 points), within an ulp of the true value where
    |b/2| ≤ 2⁵¹⁰, λw ≤ 2¹⁰²⁰ and max((b/2)², λw) ≥ 2⁻⁹⁶⁰; `P.hypot` elsewhere (which form a point takes
    depends on its own numbers: an array call gives the scalar calls' bits).  The caller's errstate."""
    p = a * ww
    if not isinstance(p, np.ndarray) or p.ndim == 0:
        if abs(hb) <= _ROOT_HB and p <= _ROOT_PRODUCT and (hb * hb >= _ROOT_FLOOR or p >= _ROOT_FLOOR):
            return np.sqrt(hb * hb + p)
        return P.hypot(hb, np.sqrt(a) * np.sqrt(ww))
    out = np.multiply(hb, hb)
    out = np.add(out, p, out=P.into(out, p))
    np.sqrt(out, out=out)
    h_lo, h_hi = P.extrema(hb)
    p_lo, p_hi = P.extrema(p)
    if max(-h_lo, h_hi) <= _ROOT_HB and p_hi <= _ROOT_PRODUCT \
            and (p_lo >= _ROOT_FLOOR or h_lo * h_lo >= _ROOT_FLOOR and h_lo > 0 or h_hi * h_hi >= _ROOT_FLOOR and h_hi < 0):
        return out  # every point safe, from six reductions
    q = hb * hb
    risky = (np.abs(hb) > _ROOT_HB) | (p > _ROOT_PRODUCT) | ((q < _ROOT_FLOOR) & (p < _ROOT_FLOOR))
    return P.patch(out, risky, lambda h_, a_, w_: P.hypot(h_, np.sqrt(a_) * np.sqrt(w_)), hb, a, ww)


def _resolvent_engine(ww, a, want_M: bool = True, want_m: bool = True):
    r"""``(m, D/2, M)`` for validated broadcast arrays: :math:`m(w)`, half of :math:`D=\sqrt{(1-\lambda+w)^2+4\lambda w}`
    and :math:`M=w\,m(w)\in(0,1]`, free of cancellation and of spurious over/underflow,
    for validated floats or broadcast arrays, in the caller's errstate (divide, invalid and over ignored); M is None
    where not `want_M`, m None where not `want_m` (an array's passes and temporaries spared).

    Every intermediate is halved, so none overflows where the result itself does not:
    :math:`D/2=\sqrt{(b/2)^2+\lambda w}` (`_half_root`: ``hypot(b/2, sqrt(lam) sqrt(w))`` where a square would
    overflow or underflow); :math:`m=1/(b/2+D/2)` for :math:`b=1-\lambda+w>0` (the numerator :math:`D-b` cancels there),
    :math:`m=((D/2-b/2)/\lambda)/w` otherwise (:math:`D-b=D+|b|`; formed as ``(D - b) / (2 lam)`` it
    was ``inf / inf`` = NaN at :math:`\lambda=1.7\cdot10^{308}`).  ``D`` itself is ``inf`` only where it
    would exceed 1.8e308 (:math:`\lambda w>8\cdot10^{615}`), so :math:`D/2` is returned.
    """
    # on arrays each intermediate goes into a temporary of this engine no longer needed (P.into; None on numbers)
    b = 1.0 - a + ww
    every_pos = P.all_positive(b)  # one reduction on an array: every b > 0, the rationalised form alone
    pos = None if every_pos else b > 0
    hb = 0.5 * b if P.into(b) is None else np.multiply(b, 0.5, out=b)  # b itself halved on an array (its sign is read)
    Dh = _half_root(hb, a, ww)
    den = hb + Dh
    if every_pos:
        M = ww / den if want_M else None
        return (np.divide(1.0, den, out=P.into(den)) if want_m else None), Dh, M
    M_neg = np.divide(np.subtract(Dh, hb, out=P.into(hb)), a, out=P.into(hb))
    if not want_m:  # M alone (the weight-decay plateaus): m's quotient and select spared
        return None, Dh, _pick_nonnegative(pos, ww / den, M_neg)
    m_neg = M_neg / ww if want_M else np.divide(M_neg, ww, out=P.into(M_neg))
    M = _pick_nonnegative(pos, ww / den, M_neg) if want_M else None
    return _pick_nonnegative(pos, np.divide(1.0, den, out=P.into(den)), m_neg), Dh, M



def _w_lam(w, lam):
    """w > 0 and lam > 0 checked: two floats for Python numbers, else broadcast arrays."""
    sc = P.scalars(w, lam)
    ww = V.positive(w, "w", scalar=sc)
    a = _lam(lam, sc)
    return (ww, a) if sc else np.broadcast_arrays(ww, a)


# Both plateaus in value space wherever g and lam lie in [2^-200, 2^200] (each point by its own two numbers, so an
# array call gives the scalar calls' bits): there M = g m(g) >= g/(1 + g) (Jensen, E[nu] = 1), D <= 2^202, and the
# smallest number formed, train = 2 g^2 M/(D (D + c)), is >= 2^-1004, the largest, D (D + c), <= 2^405: no
# intermediate leaves the normal range, and each value is a few roundings of the resolvent's M and D (4e-16 against
# mpmath where the log form lost |log L| ulps: 5e-14).  The log form only on the points outside.
_VALUE_LO = 2.0**-200
_VALUE_HI = 2.0**200


def _plateau_values(g, a):
    r"""(train, gen) :math:`g^2\,\mathbb E[q/(\nu+g)^2]` (spec ``levi:eq15``) in value space, on floats or broadcast arrays with g, λ in
    [2⁻²⁰⁰, 2²⁰⁰] (other points: unspecified values), in the caller's errstate (divide, invalid, over ignored).

    With :math:`M=g\,m(g)`, :math:`r=M/D`, :math:`c=\lambda-1+g`: gen :math:`=r\,(\lambda M+g)`, train
    :math:`=g\,r\,k` with :math:`k=(D-c)/2` for :math:`c\le0`, :math:`k=2g/(D+c)` for :math:`c>0`
    (:math:`D^2-c^2=4g`: no cancellation)."""
    _, Dh, M = _resolvent_engine(g, a, want_m=False)
    D = _op(np.multiply, Dh, 2.0)
    r = M / D
    gen = _op(np.multiply, _op(np.add, _op(np.multiply, M, a), g), r)  # M's buffer
    c = a - 1.0 + g
    if P.all_positive(c):  # every c > 0
        k = _op(np.multiply, _op(np.divide, g, _op(np.add, c, D), True), 2.0)
    else:
        pos = c > 0.0
        if not P.any_of(pos):  # every c <= 0 (a number: c <= 0)
            k = _op(np.multiply, _op(np.subtract, D, c, True), 0.5)
        else:  # both kinds of point: each form on every point, then a select (the same operations per point)
            up = np.multiply(np.divide(g, D + np.maximum(c, 0.0)), 2.0)
            down = np.multiply(np.subtract(D, c, out=c), 0.5, out=c)
            k = _pick_nonnegative(pos, up, down)
    return _op(np.multiply, _op(np.multiply, r, g), k), gen


def _op(ufunc, x, y, into_y: bool = False):
    """``ufunc(x, y)`` into `x` (`y` with `into_y`) where that is this engine's own temporary of the full shape
    (`P.into`), else a new value (on numbers: a NumPy scalar operation, ~0.1 µs against ~1 µs for a ufunc call)."""
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return ufunc(x, y, out=P.into(y, x) if into_y else P.into(x, y))
    return _OPERATORS[ufunc](x, y)


_OPERATORS = {np.multiply: operator.mul, np.add: operator.add, np.subtract: operator.sub, np.divide: operator.truediv}


def _inside(g, a) -> bool:
    """Whether every point of g and lam lies in the value-space box (four reductions on arrays)."""
    glo, ghi = P.extrema(g)
    alo, ahi = P.extrema(a)
    return glo >= _VALUE_LO and alo >= _VALUE_LO and ghi <= _VALUE_HI and ahi <= _VALUE_HI


def _plateaus(g, a, log: bool, den: float = 1.0):
    r"""THE weight-decay plateau engine (spec ``levi:eq15``): (train, gen) :math:`g^2\,\mathbb E[q/(\nu+g)^2]/\mathrm{den}`
    (their logs, without `den`, with `log`) for validated g > 0 and λ > 0, floats or arrays of one broadcast shape.

    Value space (`_plateau_values`) on the points with g, λ in [2⁻²⁰⁰, 2²⁰⁰]; the log form (`_log_plateaus`,
    then exp) on the others, where a value may leave the float range."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        if not isinstance(g, np.ndarray) and not isinstance(a, np.ndarray):
            if _VALUE_LO <= g <= _VALUE_HI and _VALUE_LO <= a <= _VALUE_HI:
                tr, ge = _plateau_values(g, a)
                return (np.log(tr), np.log(ge)) if log else (tr / den, ge / den)
            ltr, lge = _log_plateaus(g, a)
            if log:
                return ltr, lge
            shift = math.log(den)
            return np.exp(ltr - shift), np.exp(lge - shift)
        if np.shape(g) != np.shape(a):
            g, a = np.broadcast_arrays(g, a)
        if g.size == 0:
            return np.log(g) if log else g / den, np.log(g) if log else g / den
        if _inside(g, a):
            tr, ge = _plateau_values(g, a)
            if log:
                return np.log(tr, out=P.into(tr)), np.log(ge, out=P.into(ge))
            return np.divide(tr, den, out=P.into(tr)), np.divide(ge, den, out=P.into(ge))
        outside = (g < _VALUE_LO) | (g > _VALUE_HI) | (a < _VALUE_LO) | (a > _VALUE_HI)
        n_out = np.count_nonzero(outside)
        if 8 * n_out >= outside.size:  # many points outside: the log form everywhere, value space where it holds
            ltr, lge = _log_plateaus(g, a)
            if not log:
                shift = math.log(den)
                ltr, lge = np.exp(ltr - shift), np.exp(lge - shift)
            keep = ~outside
            if keep.any():
                tr, ge = _plateau_values(g[keep], a[keep])
                ltr[keep], lge[keep] = (np.log(tr), np.log(ge)) if log else (tr / den, ge / den)
            return ltr, lge
        tr, ge = _plateau_values(g, a)
        if log:
            tr, ge = np.log(tr, out=P.into(tr)), np.log(ge, out=P.into(ge))
        else:
            tr, ge = np.divide(tr, den, out=P.into(tr)), np.divide(ge, den, out=P.into(ge))
        ltr, lge = _log_plateaus(g[outside], a[outside])
        if not log:
            shift = math.log(den)
            ltr, lge = np.exp(ltr - shift), np.exp(lge - shift)
        tr, ge = (np.array(v, dtype=np.float64) if not (isinstance(v, np.ndarray) and v.flags.writeable) else v
                  for v in (tr, ge))
        tr[outside], ge[outside] = ltr, lge
        return tr, ge


def _wd_plateaus(g, a, den: float = 1.0):
    r"""(train, gen) weight-decay plateaus :math:`g^2\,\mathbb E[q/(\nu+g)^2]/\mathrm{den}`, :math:`q=\nu` (train) or
    1 (gen, atom included), for validated g > 0, λ > 0 (floats or broadcast arrays): `_plateaus`' value space where
    g, λ lie in [2⁻²⁰⁰, 2²⁰⁰], the exp of the log form elsewhere."""
    return _plateaus(g, a, False, den)


def _log_wd_plateaus(g, a):
    """(train, gen) logs of the plateaus (`_wd_plateaus`): the log of the value where g, lam lie in [2^-200, 2^200],
    the log form (which no over/underflow reaches) elsewhere."""
    return _plateaus(g, a, True)


def _log_wd_plateau(g, a, gen: bool):
    r""":math:`\log\big(g^2\,\mathbb E[q/(\nu+g)^2]\big)`, :math:`q=1` (gen, atom included) or :math:`\nu` (train),
    for validated g > 0, λ > 0 (floats or broadcast arrays): one of `_log_wd_plateaus`."""
    return _plateaus(g, a, True)[1 if gen else 0]


def _log_plateaus(g, a):
    r"""(train, gen) plateau logs (spec ``levi:eq15``) in log space, for validated g > 0 (``inf`` allowed) and λ > 0: the fallback of
    `_plateaus` where a value may over- or underflow, in its errstate (divide, invalid, over, under ignored).  With :math:`M=g\,m(g)`, :math:`c=\lambda-1+g`,

    .. math:: g^2m_2=\frac{M(\lambda M+g)}{D},\qquad
        g^2\,\mathbb E\Big[\frac{\nu}{(\nu+g)^2}\Big]=\frac{g\,M\,(D-c)}{2D},
        \quad D-c=\frac{4g}{D+c}\ (c>0).

    No product is formed: :math:`g^2` underflows below :math:`g=10^{-154}` (the former
    ``math.log(g*g*m2)`` raised "math domain error" at :math:`\gamma=10^{-200}`) and overflows above
    :math:`10^{154}` (NaN at :math:`\gamma=10^{200}`).
    """
    # g = inf (a weight decay converted to the paper's convention beyond 1.8e308): the limit g -> inf of
    # both, E[(1 + nu/g)^-2] and E[nu (1 + nu/g)^-2], is E[1] = E[nu] = 1, i.e. log = 0 (1 - O(1/g) = 1 in float
    # already for g > 1e17, as long as nu <= (1 + sqrt(lam))^2 << g: lam <= 1e290); the formulas gave inf/inf = NaN
    if P.high(g) < math.inf:  # one reduction: no g = inf, no select
        _, Dh, M = _resolvent_engine(g, a)
        return _plateau_from_resolvent(g, a, Dh, M, False), _plateau_from_resolvent(g, a, Dh, M, True)
    big = np.isinf(g)
    if np.any(big & (a > 1e290)):
        raise V.DomainError("the weight-decay plateau needs g = gamma/2 below 1.8e308 (after the conversion to the "
                            "paper's convention) where lam > 1e290: nu ~ lam is then not small against g "
                            f"(got g = inf, lam = {float(np.max(np.where(big, a, 0.0)))!r})")
    gf = P.pick(big, 1.0, g)
    _, Dh, M = _resolvent_engine(gf, a)
    return tuple(P.pick(big, 0.0, _plateau_from_resolvent(gf, a, Dh, M, gen)) for gen in (False, True))


def _plateau_from_resolvent(g, a, Dh, M, gen: bool):
    """The plateau's log from the resolvent's D/2 and M (see `_log_plateaus`), in its caller's errstate (`_plateaus`:
    divide, invalid, over and under ignored)."""
    # in quarters: lam M + g, D and D + c each overflowed near lam = g = 1e308 (NaN at lam = 1.7e308, g = 0.85e308)
    qD = 0.5 * Dh
    if gen:
        return np.log(M) + _log_ratio(0.25 * a * M + 0.25 * g, qD)
    qc = (0.25 * a - 0.25) + 0.25 * g
    if P.all_positive(qc):
        return math.log(2.0) + np.log(M) + _log_ratio(0.25 * g, qD) + _log_ratio(0.25 * g, qD + qc)
    pos = qc > 0
    qcc = np.where(pos, qc, 0.0)
    out = math.log(2.0) + np.log(M) + _log_ratio(0.25 * g, qD) + _log_ratio(0.25 * g, qD + qcc)
    # c <= 0: log M + log(g/2) + log1p(-c/D), on those points only
    return P.patch(out, np.logical_not(pos), lambda M_, g_, c_, d_: np.log(M_) + np.log(0.5 * g_) + np.log1p(-c_ / d_),
                   M, g, qc, qD)


def _log_ratio(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """log(x/y) for x, y > 0: of the ratio where it is a normal double (the difference of two large
    logarithms loses |log x| ulps: 5.7e-14 at gamma = 1.7e150), else log x - log y.  The caller's errstate
    (over, under and divide ignored)."""
    q = np.divide(x, y)
    if isinstance(q, np.ndarray) and q.size == 0:
        return np.log(q)
    lo, hi = P.extrema(q)
    if lo > 2.3e-308 and hi < 1e308:  # two reductions (a number: itself): every q normal
        return np.log(q)
    ok = (q > 2.3e-308) & (q < 1e308)
    return P.pick(ok, np.log(P.pick(ok, q, 1.0)), np.log(x) - np.log(y))


@cites("levi:mp-stieltjes")
@V.broadcasting()
def mp_stieltjes(w, lam):
    r"""Resolvent moment m(w) = E[1/(ν + w)] of the Marchenko–Pastur law, atom included.

    .. math:: m(w)=\frac{-(1-\lambda+w)+\sqrt{(1-\lambda+w)^2+4\lambda w}}{2\lambda w}

    In words: the positive root of λw·m² + (1 − λ + w)·m − 1 = 0, evaluated without cancellation (rationalised
    numerator when 1 − λ + w > 0) and without spurious overflow (`hypot` for the square root).

    Parameters
    ----------
    w : float or array_like
        The shift w > 0 of the resolvent, E[1/(ν + w)].
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        m(w), the broadcast shape of `w` and `lam`.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation): relative error ≤ 10⁻¹⁵ for every w, λ in [10⁻³⁰⁸,
    10³⁰⁰].

    References
    ----------
    Spec `levi:mp-stieltjes`.
    """
    ww, a = _w_lam(w, lam)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        m, _, _ = _resolvent_engine(ww, a, want_M=False)
    return P.result(m)


@cites("levi:mp-stieltjes")
@V.broadcasting()
def mp_stieltjes2(w, lam):
    r"""Second resolvent moment m₂(w) = E[1/(ν + w)²] = −m′(w) of the Marchenko–Pastur law, atom included.

    .. math:: m_2(w)=\frac{m(w)\,(1+\lambda m(w))}{\sqrt{(1-\lambda+w)^2+4\lambda w}} .

    In words: m(1 + λm)/√((1 − λ + w)² + 4λw) with m = `mp_stieltjes`, from differentiating λw·m² + (1 − λ +
    w)·m − 1 = 0. Relative error ≤ 4·10⁻¹⁵ for w, λ in [10⁻³⁰⁸, 1.8·10³⁰⁸] (0 or `inf` only where the value
    itself underflows or overflows).

    Parameters
    ----------
    w : float or array_like
        The shift w > 0 of the resolvent, E[1/(ν + w)].
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        m₂(w), the broadcast shape of `w` and `lam`.

    References
    ----------
    Spec `levi:mp-stieltjes`.
    """
    ww, a = _w_lam(w, lam)
    # inf/0 only where m2 itself is beyond the float range (D = inf only where m2 underflows: lam w > 8e615)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        m, Dh, _ = _resolvent_engine(ww, a, want_M=False)
        D = np.multiply(Dh, 2.0, out=P.into(Dh))  # the engine's own D/2, doubled in place on an array
        return P.result(m / D + (m * (a / D)) * m)


@cites("levi:mp-stieltjes", "levi:eq15")
@V.broadcasting()
def mp_stieltjes_nu2(w, lam):
    r"""Moment E[ν/(ν + w)²] = m(w) − w·m₂(w) of the Marchenko–Pastur law, without cancellation.

    .. math::
        \mathbb E\Big[\frac{\nu}{(\nu+w)^2}\Big]=\frac{m(w)\,(D-c)}{2D},\qquad
        D=\sqrt{(1-\lambda+w)^2+4\lambda w},\quad c=\lambda-1+w,

    In words: m(w)(D − c)/(2D) with D − c = 4w/(D + c) when c > 0. For λ > 1 the atom makes m and w·m₂ both
    about (1 − 1/λ)/w, so the difference m − w·m₂ would cancel catastrophically at small w; this form does
    not. It is the train-loss plateau with weight decay (spec `levi:eq15`). Relative error ≤ 4·10⁻¹⁵ for w, λ
    in [10⁻³⁰⁸, 1.8·10³⁰⁸].

    Parameters
    ----------
    w : float or array_like
        The shift w > 0 of the resolvent, E[1/(ν + w)].
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        E[ν/(ν + w)²], the broadcast shape of `w` and `lam`.

    References
    ----------
    Spec `levi:mp-stieltjes`, `levi:eq15`.
    """
    ww, a = _w_lam(w, lam)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        m, Dh, M = _resolvent_engine(ww, a)
        D = 2.0 * Dh  # inf only where the moment (< m/D) underflows
        c = a - 1.0 + ww  # inf only for lam + w > 1.8e308, where the moment (< 1/(lam w)) underflows to 0
        # m (D - c) = 4 M/(D + c) for c > 0 (M = w m: m ~ 1/w and 4w/(D+c) under/overflow separately at
        # w = 2e-308, lam = 1e148), then / (2D) (m k/(2D) with k/(2D) subnormal lost 4e-14 at w = 2.5e-284)
        pos = c > 0
        # max(c, 0): c where c > 0, else +0 (the select, branch-free)
        mk = _pick_nonnegative(pos, 4.0 * M / (D + np.maximum(c, 0.0)), m * (D - c))
        return P.result(mk / (2.0 * D))
