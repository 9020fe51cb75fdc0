"""Spectral: covering numbers and robustness generalisation bounds."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .. import _floats as FL
from .. import _pointwise as P
from .. import _validate as V
from .._results import Bounds
from .._validate import DomainError
from ..citations import cites
from ._drift import _scalar
from ._tails import eckart_young_rank


_MAX = float(np.finfo(np.float64).max)
_LOG2_BITS = np.float64(0.6932).view(np.uint64)  # just above log 2


@cites("clocks:prop5.1", "clocks:prop5.3")
@V.broadcasting()
def log_covering_number_ball_bounds(R, r, k, *, upper="vershynin"):
    r"""Logarithms of the bounds on the covering number N(B_R^k, r) of a Euclidean ball by balls of radius r.

    .. math:: k\log\frac Rr\ \le\ \log N(B_R^k,r)\ \le\ k\log\Big(1+\frac{2R}{r}\Big)\ \le\ k\log\frac{3R}{r}

    In words: k·log(R/r) ≤ log N ≤ k·log(1 + 2R/r) ≤ k·log(3R/r), for external covers (Vershynin 2018,
    Cor. 4.2.13).  The lower bound is returned as max(0, k·log(R/r)) since N ≥ 1.  For covers with
    centres inside the set use radius r/2: N_int(S, r) ≤ N_ext(S, r/2) (spec ID `clocks:prop5.3`, the
    cover of a projected representation P_{V_k}·H with ‖P_{V_k}·h‖ ≤ R).  R and r broadcast together.

    Parameters
    ----------
    R : float or array_like
        Radius R of the ball being covered, finite and > 0.
    r : float or array_like
        Radius r of the covering balls, finite and > 0 (and ≤ R for `upper="3R"`).
    k : int
        Dimension k of the ball, an integer ≥ 1.
    upper : {"vershynin", "3R"}, optional
        Form of the upper bound: `"vershynin"` (default) k·log(1 + 2R/r), valid for any r > 0; `"3R"`
        the paper's k·log(3R/r), which needs r ≤ R.

    Returns
    -------
    Bounds
        The named tuple (lower, upper) of the bounds on log N, in nats, each a float or an array of
        the broadcast shape.

    Raises
    ------
    DomainError
        If `R` or `r` is not finite and > 0, `k` is not an integer ≥ 1, `upper` is not one of the two
        forms, r > R with `upper="3R"`, or the arrays do not broadcast.

    References
    ----------
    Spec IDs `clocks:prop5.1` and `clocks:prop5.3` (paper Propositions 5.1 and 5.3).
    """
    Ra, ra, kk, up, ext = _cover_args(R, r, k, upper)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        lo, hi = _log_cover(Ra, ra, kk, up, ext)
    return Bounds(P.result(lo), P.result(hi))


def _cover_args(R, r, k, upper):
    """The validated arguments of the covering-number bounds: floats for a scalar call, else arrays."""
    sc = P.scalars(R, r)
    # each number a float (a 0-d array costs the array machinery in every operation on it)
    Ra, R_ext = V.positive(R, "R", scalar=sc or P.scalars(R), extrema=True)
    ra, r_ext = V.positive(r, "r", scalar=sc or P.scalars(r), extrema=True)
    kk = V.integer_at_least(k, "k", 1)
    up = V.choice(upper, "upper", ("vershynin", "3R"))
    if up == "3R" and (ra > Ra if sc else np.any(ra > Ra)):
        Rb, rb = np.broadcast_arrays(Ra, ra)
        raise DomainError(f"r must be <= R for upper='3R' (got r={float(rb[rb > Rb].flat[0])!r})")
    return Ra, ra, kk, up, (R_ext, r_ext)


def _log_cover(Ra, ra, kk, up, ext=None):
    """(lower, upper) bounds on log N(B_R^k, r) for validated R, r (floats or arrays; the caller's errstate
    ignores over/underflow, division by zero and invalid); `ext` the extremes ((R_lo, R_hi), (r_lo, r_hi)) the
    validation reduced (None: reduced here)."""
    (R_lo, R_hi), (r_lo, r_hi) = (P.extrema(Ra), P.extrema(ra)) if ext is None else ext
    if up == "3R":
        # bounds on every quotient R/r from the extremes (the quotient is monotone in each): one log where they
        # keep it away from [1/2, 2] and inside the normal range
        log_ratio = P.log_quotient(Ra, ra, (R_lo / r_hi * (1.0 - 2.0 ** -50), R_hi / r_lo * (1.0 + 2.0 ** -50)))
        hi = kk * (math.log(3.0) + log_ratio)
    else:
        # log1p(2 R / r) with 2 R / r a scaled product (exact binary exponent: no subnormal loss for
        # R/r < 1e-308); log(2) + log(R/r) + log1p(r / 2R) where it overflows
        x_lo = None
        if type(ra) is float and isinstance(Ra, np.ndarray) and Ra.ndim and Ra.size:
            # one radius r: R (1/r) is `P.product`'s direct product where R's extremes keep every factor and R/r
            # normal (rounding is monotone in R: the products of the extremes bound every point's); x's extremes
            # then follow from R's (two reductions and the proof's set-up spared)
            inv = 1.0 / ra
            if FL.TINY <= R_lo and FL.TINY <= inv <= _MAX and FL.TINY <= R_lo * inv and R_hi * inv <= _MAX:
                x = np.multiply(Ra, inv)
                x_lo, x_hi = R_lo * inv * 2.0, R_hi * inv * 2.0
        if x_lo is None:
            x = P.product([Ra, ra], [1, -1])
        x = x * 2.0 if P.into(x) is None else np.multiply(x, 2.0, out=x)  # inf for R/r > 9e307 (the log form below)
        if x_lo is None:
            x_lo, x_hi = P.extrema(x)  # the other forms only if some point needs them
        # R/r = x/2 to within 2 ulp: bounds on every quotient for log(R/r)
        bounds = (x_lo * (0.5 - 2.0 ** -50), x_hi * (0.5 + 2.0 ** -50))
        one_log = (bounds[0] > 2.0 or bounds[1] < 0.5) and FL.TINY <= bounds[0] and bounds[1] < math.inf
        if isinstance(x, np.ndarray) and x.ndim and not one_log:
            # only max(0, log(R/r)) is needed: the careful forms where R > r only (no quotient overflows where 2R/r
            # does not)
            lo = _log_excess(Ra, ra, finite=x_hi < math.inf)
            log_ratio = None
        else:
            log_ratio = P.log_quotient(Ra, ra, bounds)
        far = x == math.inf if x_hi == math.inf else False
        tiny = x < 2.0 ** -54 if not x_lo >= 2.0 ** -54 else False
        hi = np.log1p(x, out=P.into(x))
        hi = np.multiply(hi, kk, out=P.into(hi))
        # (each only where some point needs it: a patch of an array with no point on its mask still counts them)
        if far is not False:
            hi = P.patch(hi, far, lambda R_, r_: kk * (math.log(2.0) + P.log_quotient(R_, r_)), Ra, ra)
        # below 2^-54 log1p(x) = x: k 2 R / r as one scaled product (no rounding of a subnormal x first)
        if tiny is not False:
            hi = P.patch(hi, tiny, lambda R_, r_: P.product([R_, r_, 2.0 * kk], [1, -1, 1]), Ra, ra)
    if log_ratio is not None:
        # max(0, .) a no-op where every R/r > 2 (vershynin's one-log path)
        lo = log_ratio if up != "3R" and one_log and bounds[0] > 2.0 else np.maximum(0.0, log_ratio, out=P.into(log_ratio))
    lo = np.multiply(lo, kk, out=P.into(lo))
    return lo, hi


def _log_excess(a, b, finite=False):
    """max(0, log(a/b)) for float64 arrays a, b > 0 that broadcast: `P.log_quotient`'s value where a > b (log1p of the
    exact difference for b < a <= 2b, the log of the quotient where it is a normal double, log a - log b where it
    overflows), 0 where a <= b, whose value the careful forms do not change (each is <= 0 there).  One log on
    every point and the forms on the points that need them (the general `log_quotient` formed its near-1 test on
    every point: 4.8x the plain log1p bound at 1e5 points with R/r in [1e-2, 1e4]).  `finite`: the caller knows
    no quotient overflows (its overflow test spared)."""
    if np.ndim(b) == 0 and float(b) == 1.0:  # a / 1 is a exactly: no division (a new array for the log)
        out = np.log(a)
    else:
        q = np.divide(a, b)
        out = np.log(q, out=q)
    shape = out.shape
    if not finite and float(out.max()) == math.inf:  # a / b overflowed (log a - log b: |log(a/b)| > 708 there)
        out = P.patch(out, out == math.inf, lambda a_, b_: np.log(a_) - np.log(b_), a, b)
    # b < a <= 2b gives 1 <= fl(a/b) <= 2 (rounding is monotone): the exact test on those points only
    # 0 <= out <= 0.6932 as one unsigned comparison of the bits (a non-negative double's bits order as the value,
    # a negative one's sign bit puts it above)
    idx = np.flatnonzero(out.view(np.uint64) <= _LOG2_BITS)
    if idx.size:
        av, bv = _at(a, idx, shape), _at(b, idx, shape)
        near = (av > bv) & (av <= 2.0 * bv)
        av, bv = (v[near] if np.ndim(v) else v for v in (av, bv))
        out.reshape(-1)[idx[near]] = np.log1p((av - bv) / bv)
    # max(0, out) on the bits as int64: a negative double (-inf included) is a negative int64, a non-negative one
    # orders as its value; out holds no NaN and no -0 (a log or log1p of positive finite numbers), so the bits are
    # those of np.maximum(out, 0.0), in a SIMD integer loop (33 against 46 us per 1e5 points)
    bits = out.view(np.int64)
    np.maximum(bits, 0, out=bits)
    return out


def _at(x, idx, shape):
    """``x`` broadcast to `shape` at the flat indices `idx`: a number stays a number, an array of the full shape is
    gathered flat (no unravel_index: 56 against 96 us for 5,000 of 1e5 points), a broadcast view by indices."""
    if np.ndim(x) == 0:
        return x
    if np.shape(x) == shape:
        return np.asarray(x).reshape(-1)[idx]
    return np.broadcast_to(x, shape)[np.unravel_index(idx, shape)]


@cites("clocks:prop5.1", "clocks:prop5.3")
@V.broadcasting()
def covering_number_ball_bounds(R, r, k, *, upper="vershynin"):
    r"""Bounds (R/r)^k ≤ N(B_R^k, r) ≤ (1 + 2R/r)^k, or (3R/r)^k, on the covering number of a Euclidean ball.

    The exponentials of `log_covering_number_ball_bounds`; they overflow to `inf` quickly in k, so
    prefer the log version.

    Parameters
    ----------
    R : float or array_like
        Radius R of the ball being covered, finite and > 0.
    r : float or array_like
        Radius r of the covering balls, finite and > 0 (and ≤ R for `upper="3R"`).
    k : int
        Dimension k of the ball, an integer ≥ 1.
    upper : {"vershynin", "3R"}, optional
        Form of the upper bound: `"vershynin"` (default) (1 + 2R/r)^k, valid for any r > 0; `"3R"`
        the paper's (3R/r)^k, which needs r ≤ R.

    Returns
    -------
    Bounds
        The named tuple (lower, upper) of bounds on N, each ≥ 1, a float or an array of the broadcast
        shape; `inf` only where a bound exceeds 1.8·10³⁰⁸.

    Raises
    ------
    DomainError
        If an argument is outside its domain above or the arrays do not broadcast.

    References
    ----------
    Spec IDs `clocks:prop5.1` and `clocks:prop5.3` (paper Propositions 5.1 and 5.3).
    """
    Ra, ra, kk, up, ext = _cover_args(R, r, k, upper)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        lo, hi = _log_cover(Ra, ra, kk, up, ext)
        # inf only where the bound exceeds 1.8e308
        return Bounds(P.result(np.exp(lo, out=P.into(lo))), P.result(np.exp(hi, out=P.into(hi))))


@cites("clocks:thm2.2", "clocks:def2.1")
@V.broadcasting()
def robust_generalization_bound(eps_rob, n_cells, n, loss_bound, fail_prob, *, log_n_cells=None):
    r"""Xu–Mannor robustness bound on the generalization gap, holding with probability ≥ 1 − δ_f.

    For an (N, ε(·))-robust algorithm (spec ID `clocks:def2.1`) and a loss in [0, M]:

    .. math:: \big|\mathcal L_{\rm pop}-\mathcal L_{\rm emp}\big|\le\epsilon
        +M\sqrt{\frac{2N\ln2+2\ln(1/\delta_f)}{n}}

    In words: |L_pop − L_emp| ≤ ε + M·√((2N·ln 2 + 2·ln(1/δ_f))/n) (Bretagnolle–Huber–Carol).  Evaluated
    in log space where a term leaves the double range: `inf` only where the bound itself exceeds
    1.8·10³⁰⁸.  The arguments broadcast together.

    Parameters
    ----------
    eps_rob : float or array_like
        Robustness slack ε, finite and ≥ 0, in loss units.
    n_cells : float or array_like or None
        Number N of cells of the input partition, finite and ≥ 1.  May be `None` when `log_n_cells` is
        given; ignored when `log_n_cells` is given.
    n : float or array_like
        Sample size n, finite and ≥ 1.
    loss_bound : float or array_like
        Upper bound M of the loss (the loss lies in [0, M]), finite and > 0.
    fail_prob : float or array_like
        Failure probability δ_f, in the open interval (0, 1).
    log_n_cells : float or array_like, optional
        ln N instead of `n_cells`, finite and ≥ 0, for N beyond the double range; 2N·ln 2 is then
        2·ln 2·e^(ln N).  Default `None`: use `n_cells`.

    Returns
    -------
    float or numpy.ndarray
        The bound on |L_pop − L_emp|, in loss units, of the broadcast shape.

    Raises
    ------
    DomainError
        If `n_cells` and `log_n_cells` are both missing, or an argument is outside its domain above, or
        the arrays do not broadcast.

    References
    ----------
    Spec IDs `clocks:thm2.2` (paper Theorem 2.2; Xu & Mannor 2012, Theorem 3) and `clocks:def2.1`
    (Definition 2.1).
    """
    sc = P.scalars(eps_rob, n_cells if log_n_cells is None else log_n_cells, n, loss_bound, fail_prob)
    e = V.nonnegative(eps_rob, "eps_rob", scalar=sc)
    if log_n_cells is None:
        if n_cells is None:
            raise DomainError("n_cells must be given (>= 1) unless log_n_cells is")
        N = V.in_domain(n_cells, "n_cells", 1.0, math.inf, lo_open=False, hi_open=True, scalar=sc)
        logN = None  # log N only where the log-space form needs it
    else:
        logN = V.nonnegative(log_n_cells, "log_n_cells", scalar=sc)
    na = V.in_domain(n, "n", 1.0, math.inf, lo_open=False, hi_open=True, scalar=sc)
    M = V.positive(loss_bound, "loss_bound", scalar=sc)
    d = V.in_open_interval(fail_prob, "fail_prob", 0.0, 1.0, scalar=sc)
    # direct where the terms are normal doubles (N itself, not exp(log N): 1e300 keeps its last digit);
    # in log space where 2 N ln 2 or its quotient by n leaves the range (the bound is inf only beyond it)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        if logN is not None:
            N = np.exp(logN)
        cover = _TWO_LN2 * N
        conf = np.log(d)
        conf = np.multiply(conf, -2.0, out=P.into(conf))  # > 0
        arg = cover + conf
        arg = np.divide(arg, na, out=P.into(arg, na))
        root = np.sqrt(arg)
        root = np.multiply(root, M, out=P.into(root, M))
        a_lo, (r_lo, r_hi) = P.extrema(arg)[0], P.extrema(root)
        # reductions: the mask and the other form only if some point needs them
        fine = P.extrema(cover)[1] < math.inf and a_lo >= FL.TINY and r_lo >= FL.TINY and r_hi < math.inf
        if not fine:
            far = np.logical_not(np.isfinite(cover) & np.isfinite(root) & (arg >= FL.TINY) & (root >= FL.TINY))
        direct = np.add(e, root, out=P.into(root, e))
        if fine:
            return P.result(direct)
        if logN is None:
            logN = np.log(N)
        return P.result(P.patch(direct, far, _robust_far, e, cover, conf, na, M, logN))


_TWO_LN2 = 2.0 * math.log(2.0)


def _robust_far(e, cover, conf, na, M, logN):
    """e + M sqrt((2 N ln 2 + 2 ln(1/delta)) / n) where 2 N ln 2, its quotient by n or the root leaves the normal
    range (the points `robust_generalization_bound` finds there; the caller's errstate)."""
    # c = 2 N ln 2 + 2 ln(1/delta) finite, arg or root outside the normal range: M sqrt(c / n) from the
    # mantissas and exponents (frexp), the powers of two applied exactly by ldexp, so only the mantissas'
    # quotient, square root and product round (a subnormal root too: exp(log M + log_arg / 2) lost
    # 3e-15 there, its argument near -709 carrying an absolute error of ~1e-13)
    c = cover + conf
    mc, ec = np.frexp(c)
    mn, en = np.frexp(na)
    mm, em = np.frexp(M)
    q = ec - en
    odd = q % 2
    scaled = e + np.ldexp(mm * np.sqrt(np.ldexp(mc / mn, odd)), em + (q - odd) // 2)
    # c itself beyond the double range (N from log_n_cells): in log space
    log_arg = np.logaddexp(math.log(2.0 * math.log(2.0)) + logN, np.log(conf)) - np.log(na)
    return np.where(np.isfinite(c), scaled, e + np.exp(np.log(M) + 0.5 * log_arg))


@cites("clocks:thm5.5", "clocks:def5.4")
@V.broadcasting()
def stable_rank_generalization_bound(eps_rob, lip, eta, W_op, R, srank, cover_radius, n, loss_bound, fail_prob, *,
                                     upper="3R"):
    r"""Generalization bound through the representation clock (Theorem 5.5).

    .. math:: \big|\mathcal L_{\rm pop}-\mathcal L_{\rm emp}\big|\le\epsilon_{\rm rob}+2L_\ell\,\eta\,\Omega R
        +M\sqrt{\frac{2\,(3R/r)^{\lceil r_s/\eta^2\rceil}\ln2+2\ln(1/\delta_f)}{n}}

    In words: the robustness slack, plus the projection term 2·L_ℓ·η·Ω·R, plus the Xu–Mannor term with
    N = (3R/r)^k cells for the output-effective dimension k = ⌈r_s/η²⌉.  It builds k with
    `eckart_young_rank`, ln N with `log_covering_number_ball_bounds` (upper bound) and calls
    `robust_generalization_bound` with `log_n_cells`, so the cover term (3R/r)^k may exceed the double
    range; the result is `inf` only where the bound itself exceeds the largest double.  The projection
    term dominates unless η·Ω·R is small.

    Parameters
    ----------
    eps_rob : float or array_like
        Projected robustness slack ε_rob (spec ID `clocks:def5.4`), finite and ≥ 0.
    lip : float
        Lipschitz constant L_ℓ of the loss in the logits, a finite scalar ≥ 0.
    eta : float
        Relative output error η of the rank-k projection, in (0, 1].
    W_op : float
        Bound Ω ≥ ‖W‖₂ on the spectral norm of the head, a finite scalar > 0.
    R : float
        Bound on the norm of the embeddings, a finite scalar > 0.
    srank : float
        Stable rank r_s of the head W, a finite scalar ≥ 1.
    cover_radius : float
        Radius r of the covering balls, a finite scalar > 0 (≤ R for `upper="3R"`).
    n : float or array_like
        Sample size n, finite and ≥ 1.
    loss_bound : float or array_like
        Upper bound M of the loss (the loss lies in [0, M]), finite and > 0.
    fail_prob : float or array_like
        Failure probability δ_f, in the open interval (0, 1).
    upper : {"3R", "vershynin"}, optional
        Form of the cover bound: `"3R"` (default, the paper's) (3R/r)^k; `"vershynin"` (1 + 2R/r)^k.

    Returns
    -------
    float or numpy.ndarray
        The bound on |L_pop − L_emp|, in loss units; `inf` where it exceeds the largest double.  `eps_rob`,
        `n`, `loss_bound` and `fail_prob` broadcast together (a sweep over the sample size, say); the
        arguments that fix the rank k and the cover are scalars.

    Raises
    ------
    DomainError
        If an argument is outside its domain above, or cover_radius > R with `upper="3R"`.

    References
    ----------
    Spec IDs `clocks:thm5.5` (paper Theorem 5.5) and `clocks:def5.4` (Definition 5.4).
    """
    e = V.nonnegative(eps_rob, "eps_rob", scalar=P.scalars(eps_rob))
    li = _scalar(lip, "lip", nonnegative=True)
    Om = _scalar(W_op, "W_op", positive=True)
    Rr = _scalar(R, "R", positive=True)
    r_cover = _scalar(cover_radius, "cover_radius", positive=True)
    if upper == "3R" and r_cover > Rr:
        raise DomainError(f"cover_radius must be <= R = {Rr!r} for upper='3R' (got {r_cover!r})")
    k = eckart_young_rank(srank, eta)  # an exact int, possibly beyond the double range (eta = 1e-200)
    if k <= 2**53:
        up = V.choice(upper, "upper", ("vershynin", "3R"))
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            logN = float(_log_cover(Rr, r_cover, k, up)[1])
    else:
        logN = _log_cover_upper_huge_k(Rr, r_cover, k, upper)
    slack = e + 2.0 * li * float(eta) * Om * Rr
    if not math.isfinite(logN):  # ln N > 1.8e308: N, and with it the bound, is beyond the double range
        # n, loss_bound and fail_prob checked (and broadcast) by the same call, every point inf
        shape = np.shape(robust_generalization_bound(slack, None, n, loss_bound, fail_prob, log_n_cells=0.0))
        return math.inf if shape == () else np.full(shape, math.inf)
    return P.result(robust_generalization_bound(slack, None, n, loss_bound, fail_prob, log_n_cells=logN))


def _log_cover_upper_huge_k(R: float, r: float, k: int, upper: str) -> float:
    """Upper bound on ln N(B_R^k, r) for an integer k > 2^53 (possibly beyond the double range): k times
    the one-dimensional bound, multiplied exactly (Fraction); inf where the product exceeds 1.8e308.
    Where 2R/r < 2^-54 the one-dimensional bound log1p(2R/r) is 2R/r itself (relative error < 2^-55),
    taken exactly so that a subnormal 2R/r loses no digits."""
    _, h = log_covering_number_ball_bounds(R, r, 1, upper=upper)
    if upper == "vershynin" and FL.power_product([R, r], [1, -1]) * 2.0 < 2.0 ** -54:
        per_dim = 2 * Fraction(R) / Fraction(r)
    else:
        per_dim = Fraction(float(h))
    try:
        return float(k * per_dim)
    except OverflowError:
        return math.inf
