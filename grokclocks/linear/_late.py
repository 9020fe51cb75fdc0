"""Levi et al.: late-time expansions of the losses (eqs. 10, 21, 22)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import _floats as FL
from .. import _validate as V
from .. import rmt
from ..citations import cites
from ._conventions import _d_out, _eta0, _lam_not_one, _LOG_SQRT_PI, _scalar_call, _t_late


# The engine below runs on arrays or, for a scalar call, on Python floats (`FL.ops_of`): the same operations in
# the same order, so a scalar call equals an array call bit for bit (tests/test_vector_scalar.py).

# sqrt(lam) in double-double straight from lam where every intermediate of FL.dd_sqrt is a normal double (between
# lam 2^-110 and lam 2^27): then it equals the power-of-two-scaled evaluation below bit for bit (each operation
# is correctly rounded and commutes with the scaling), ten array passes fewer
_SQRT_DIRECT = (2.0 ** -800, 2.0 ** 800)


def _sqrt_dd(lam):
    """sqrt(lam) as a double-double for every positive double (scaled by an even power of two)."""
    lo, hi = FL.extrema(lam)
    if _SQRT_DIRECT[0] <= lo and hi <= _SQRT_DIRECT[1]:
        return FL.dd_sqrt(lam)
    xp = FL.ops_of(lam)
    m, k = xp.frexp(lam)
    odd = (k % 2) != 0
    m = xp.where(odd, 2.0 * m, m)  # lam = m 2^k, k even, m in [1/2, 2)
    k = xp.where(odd, k - 1, k)
    hi, lo = FL.dd_sqrt(m)
    return xp.ldexp(hi, k // 2), xp.ldexp(lo, k // 2)


# 1 - sqrt(lam) as the quotient (1 - lam)/(1 + sqrt(lam)) only within 2^-19 of lam = 1; elsewhere |q| > 2^-21 and
# the difference 1 - (rh + rl) carries the ~1e-31 absolute error of the double-double sqrt: below 1e-25 of q,
# 1e-22 of x at x = 2000 (e^-x needs 1e-17), at a fifth of the quotient's array passes
_NEAR_ONE = 2.0 ** -19


def _one_minus_sqrt_dd(lam):
    """q = 1 - sqrt(lam) as a double-double, to ~1e-25 relative: (1 - lam)/(1 + sqrt(lam)) within 2^-19 of
    lam = 1 (1 - lam exact: no cancellation), 1 - sqrt(lam) elsewhere.  Each form is evaluated on every point
    only when all points take it (elementwise: the same bits either way)."""
    rh, rl = _sqrt_dd(lam)
    lo, hi = FL.extrema(lam)
    if hi < 1.0 - _NEAR_ONE or lo > 1.0 + _NEAR_ONE:
        return _one_minus_sqrt_difference(rh, rl, 1.0 if hi < 1.0 else -1.0)
    xp = FL.ops_of(lam)
    near = xp.abs(1.0 - lam) <= _NEAR_ONE  # 1 - lam exact there
    if lo >= 1.0 - _NEAR_ONE and hi <= 1.0 + _NEAR_ONE:
        return _one_minus_sqrt_quotient(lam, rh, rl)
    qh, ql = _one_minus_sqrt_quotient(xp.where(near, lam, 0.0), xp.where(near, rh, 0.0), xp.where(near, rl, 0.0))
    bh, bl = _one_minus_sqrt_difference(xp.where(near, 4.0, rh), xp.where(near, 0.0, rl))
    return xp.where(near, qh, bh), xp.where(near, ql, bl)


def _one_minus_sqrt_quotient(lam, rh, rl):
    """(1 - lam)/(1 + r), r = rh + rl = sqrt(lam) (lam near 1)."""
    uh, ul = FL.dd_two_sum(1.0, -lam)
    vh, vl = FL.dd_two_sum(1.0, rh)
    vh, vl = FL.dd_two_sum(vh, vl + rl)
    return FL.dd_div(uh, ul, vh, vl)


def _one_minus_sqrt_difference(rh, rl, side=0.0):
    """1 - r, r = rh + rl = sqrt(lam) (lam away from 1): 1 - rh exact (two_sum), then rl taken off.

    With `side` 1 (every r < 1) or -1 (every r > 1) the larger of 1 and -rh is known and Dekker's fast two-sum
    gives the same exact pair in three operations instead of six; rl is taken off the same way (|1 - rh| > 2^-21
    is far above |bl - rl| <= 2^-52 max(1, rh): the same pair as two_sum)."""
    if side > 0.0:
        bh, bl = FL._fast_two_sum(1.0, -rh)
    elif side < 0.0:
        bh, bl = FL._fast_two_sum(-rh, 1.0)
    else:
        bh, bl = FL.dd_two_sum(1.0, -rh)
    return FL._fast_two_sum(bh, bl - rl)


# every factor within 2^+-200 (and lam within 2^+-400, so 2^-55 <= |1 - sqrt(lam)| <= 2^200): every intermediate of
# the double-double product, its split halves and error terms included, is a normal double, and the product
# taken directly equals the mantissa-and-exponent evaluation bit for bit (a dozen array passes fewer)
_DIRECT = 2.0 ** 200


# Dekker's split of a double into a head of 53 - s significant bits and an exact tail (factor 2^s + 1): heads of 26
# bits multiply exactly in pairs (52 bits), heads of 17 bits in threes (51 bits)
_HEAD26 = 2.0 ** 27 + 1.0
_HEAD17 = 2.0 ** 36 + 1.0


def _split(a, factor):
    c = factor * a
    h = c - (c - a)
    return h, a - h


def _product_dd(e, t, qh, ql):
    r"""e t q² as a normalised double-double (x_hi, x_lo), q = qh + ql a double-double, e, t > 0, for numbers
    whose products and split parts are normal doubles (the callers' `direct` bounds, or mantissas).

    Three heads of 17 bits multiply exactly (51 bits), so only the tails are rounded: with q_h = u + v (u of 26
    bits: u² exact), q² = u² + w, w = v(2u + v) + 2q_hq_l (q_l² < 2^-104 q² left out), u² = A + B (A of 17
    bits), e = e_1 + e_2 and t = t_1 + t_2 (17-bit heads),

    .. math:: e\,t\,q^2 = e_1t_1A + \big[e_1t_1(B + w) + (e_1t_2 + e_2t)(u^2 + w)\big],

    the first term exact, the bracket (below 2^-15 of the product) with relative error ~2^-51: x to ~2^-66
    relative, 2.5e-17 absolute at x = 1800 (e^-x needs 1e-16 relative); normalised by a fast two-sum.  Every
    intermediate within a factor 2^-130 of the product's factors stays normal inside the callers' bounds.
    """
    u, v = _split(qh, _HEAD26)
    u2 = u * u
    w = v * (2.0 * u + v) + 2.0 * qh * ql
    a_hi, a_lo = _split(u2, _HEAD17)
    e1, e2 = _split(e, _HEAD17)
    t1, t2 = _split(t, _HEAD17)
    et1 = e1 * t1
    return FL._fast_two_sum(et1 * a_hi, et1 * (a_lo + w) + (e1 * t2 + e2 * t) * (u2 + w))


def _exponent_dd(tt, ll, et, d):
    r"""x = 4 eta0 t (1 - sqrt(lam))^2 / d_out as a double-double (x_hi, x_lo), relative error ~1e-20.

    e^(-x) with x rounded to a double carries |x| ulps (x ~ 650: 4.8e-13 of the late-time losses); with
    the double-double x it carries one.  The mantissas are multiplied in [1/16, 1) and the binary exponents
    added apart, so no intermediate overflows or underflows: x_hi is inf only where x exceeds 1.8e308 (the
    factors themselves where they are all moderate: the same bits)."""
    xp = FL.ops_of(tt, ll, et)
    qh, ql = _one_minus_sqrt_dd(ll)  # on lam's own shape (a scalar lam beside an array of t: once)
    (t_lo, t_hi), (e_lo, e_hi), (l_lo, l_hi) = FL.extrema(tt), FL.extrema(et), FL.extrema(ll)
    direct = (1.0 / _DIRECT <= min(t_lo, e_lo) and max(t_hi, e_hi) <= _DIRECT
              and 1.0 / _DIRECT ** 2 <= l_lo and l_hi <= _DIRECT ** 2)
    if direct:
        xh, xl = _product_dd(et, tt, qh, ql)
    else:
        mq, kq = xp.frexp(qh)
        me, ke = xp.frexp(et)
        mt, kt = xp.frexp(tt)
        xh, xl = _product_dd(me, mt, mq, xp.ldexp(ql, -kq))  # ((1 - sqrt lam) 2^-kq)^2 in [1/4, 1)
    di = int(d)
    if di != 1:
        dh = float(di)
        xh, xl = FL.dd_div(xh, xl, dh, float(di - int(dh)))
    if direct:
        return 4.0 * xh, 4.0 * xl
    k = xp.to_int(ke + kt + 2 * kq + 2, -2200, 2200)  # ldexp saturates to 0 / inf well before
    with xp.errstate(over="ignore", under="ignore"):
        return xp.ldexp(xh, k), xp.ldexp(xl, k)


def _late_args(t, lam, eta0, d_out, what):
    """The checked arguments of a late-time form: (t, lam, eta0, d_out, whether a scalar call: Python floats)."""
    sc = _scalar_call(t, lam, eta0)
    return _t_late(t, sc), _lam_not_one(lam, what, sc), _eta0(eta0, sc), _d_out(d_out), sc


def _late_parts(tt, l0, et, di, xp):
    """The pieces every late-time form shares, from checked arguments: (log s, x, lam, lam_-, d_out)."""
    d = float(di)
    t0, e0 = tt, et  # as checked: a scalar eta0 stays one number in the double-double engine
    if xp is FL.SCALAR:
        ll = l0
        a = float(rmt._gap(ll))
    else:
        tt, ll, et = np.broadcast_arrays(tt, l0, et)
        a = rmt._gap(ll)
    # s = 4 eta0 t/d_out from its logarithm where it is not a normal double (s itself under/overflows for
    # t, eta0 near 1e+-300); x = s lam_- as a double-double (_Exponent)
    with xp.errstate(over="ignore", under="ignore"):
        s = 4.0 * e0 * t0 / d  # on the arguments as checked (a scalar eta0: 4 eta0 once, not on every point)
        lo, hi = FL.extrema(s)
        if lo > 2.3e-308 and hi < math.inf:  # two reductions: every s normal
            log_s = xp.log(s)
        else:
            normal = (s > 2.3e-308) & xp.isfinite(s)
            log_s = xp.where(normal, xp.log(xp.where(normal, s, 1.0)),
                             math.log(4.0) + xp.log(et) + xp.log(tt) - math.log(d))
    return log_s, _Exponent(tt, l0, et, di, s, a, xp, (t0, e0)), ll, a, d


def _late_common(t, lam, eta0, d_out, what):
    """The checked arguments and the pieces every late-time form shares: (log s, x, lam, lam_-, d_out, xp)."""
    tt, l0, et, di, sc = _late_args(t, lam, eta0, d_out, what)
    xp = FL.SCALAR if sc else FL.ARRAY
    return (*_late_parts(tt, l0, et, di, xp), xp)


def _late_map(engine, t, lam, eta0, d_out, what, *extra):
    """``engine(log s, x, lam, lam_-, d_out, xp, *extra)`` for a late-time form: on a scalar call's Python floats,
    else on blocks of `FL.BLOCK` points of the broadcast arguments (`FL.blockwise`: no temporary of the full
    size; the engine is elementwise, every choice it makes from extremes gives the same bits either way)."""
    tt, l0, et, di, sc = _late_args(t, lam, eta0, d_out, what)
    if sc:
        return float(engine(*_late_parts(tt, l0, et, di, FL.SCALAR), FL.SCALAR, *extra))

    def block(t_, l_, e_):
        return engine(*_late_parts(t_, l_, e_, di, FL.ARRAY), FL.ARRAY, *extra)

    shape = np.broadcast_shapes(np.shape(tt), np.shape(l0), np.shape(et))
    return V.scalar_or_array(FL.blockwise(block, shape, tt, l0, et))


# e^(rest - x) is 0 in float64 where rest - x < -745.2; a point is skipped (0 without the double-double) only
# where the plain double x = s lam_- (relative error < 1e-14 where s is a normal double, inf or too large
# only where x itself is beyond 1e275) puts rest - x below -800
_DEAD = 800.0


class _Exponent:
    """x = 4 eta0 t (1 - sqrt(lam))^2 / d_out: the plain double s lam_- on every point, the double-double
    (`_exponent_dd`) only where e^(rest - x) is not certainly 0."""

    def __init__(self, tt, l0, et, d_out, s, a, xp, checked):
        self.tt, self.l0, self.et, self.d_out, self.xp = tt, l0, et, d_out, xp
        self.t0, self.e0 = checked  # t and eta0 before broadcasting (0-d where a scalar was given)
        with xp.errstate(over="ignore", under="ignore", invalid="ignore"):
            self.plain = s * a

    def dd(self):
        """(x_hi, x_lo) on every point."""
        if self.xp is FL.SCALAR or not self.tt.shape:
            return _exponent_dd(self.tt, self.l0, self.et, self.d_out)
        return FL.blockwise(self._dd_block, self.tt.shape, self.t0, self.l0, self.e0)

    def _dd_block(self, tt, ll, et):
        return _exponent_dd(tt, ll, et, self.d_out)

    def _exp_block(self, tt, ll, et, rest):
        return _exp_minus_x_plus(*_exponent_dd(tt, ll, et, self.d_out), rest)

    def exp_minus_plus(self, rest, need=True):
        """e^(rest - x), the double-double x on the points where the value is not certainly 0 (the same
        operations there as on every point: bit-identical); 0 where `need` is False (points not asked for)."""
        if self.xp is FL.SCALAR:
            dead = self.plain * (1.0 - 1e-12) - rest > _DEAD  # NaN (inf - inf) is not dead, as below
            return 0.0 if dead or not need else _exp_minus_x_plus(*self.dd(), rest)
        shape = self.tt.shape
        rest = np.broadcast_to(np.asarray(rest, dtype=np.float64), shape)
        with np.errstate(over="ignore", invalid="ignore"):
            dead = self.plain * (1.0 - 1e-12) - rest > _DEAD
            if need is not True:
                dead |= ~need
        if not shape:
            return _exp_minus_x_plus(*self.dd(), rest)
        k = int(np.count_nonzero(dead))
        if 2 * k <= dead.size:
            # most points alive: the double-double on every point (a dead point gives e^(rest - x) = 0 there as
            # well: exp of an exponent below -799) and 0 put on the dead ones; cheaper than gathering the live
            # points and scattering them back (70 % alive: 9.1 against 13.3 ms per 1e5 points)
            out = FL.blockwise(self._exp_block, shape, self.t0, self.l0, self.e0, rest)
            if k:
                np.putmask(out, dead, 0.0)
            return out
        idx = np.flatnonzero(~dead)
        out = np.zeros(shape)
        if idx.size:
            at = np.unravel_index(idx, shape)
            t, lam, eta0 = (v if v.ndim == 0 else np.broadcast_to(v, shape)[at] for v in (self.t0, self.l0, self.e0))
            out.reshape(-1)[idx] = FL.blockwise(self._exp_block, idx.shape, t, lam, eta0, rest[at])
        return out


def _exp_minus_x_plus(xh, xl, rest):
    """e^(rest - x), x = xh + xl a double-double, rest a double: the sum kept exact (two_sum) and the
    exponential taken of the double-double (FL.dd_exp); 0 where x is beyond the double range."""
    xp = FL.ops_of(xh, xl, rest)
    with xp.errstate(invalid="ignore"):
        eh, el = FL.dd_two_sum(-xh, rest)
        el = el - xl
    if FL.extrema(xh)[1] < math.inf:  # x >= 0: every x finite (one reduction instead of three selections)
        return FL.dd_exp(eh, el)
    finite = xp.isfinite(xh)
    return xp.where(finite, FL.dd_exp(xp.where(finite, eh, 0.0), xp.where(finite, el, 0.0)), 0.0)


def _log_train_late0(log_s, lam, xp):
    """log of eq. 21's leading term without its e^(-x): -log(16 sqrt(pi)) - 3/4 log lam - 3/2 log(s/4)
    (written with s = 4 eta0 t: -log 2 - log sqrt(pi) - 3/4 log lam - 3/2 log s)."""
    return -math.log(2.0) - _LOG_SQRT_PI - 0.75 * xp.log(lam) - 1.5 * log_s


def _result(val, xp):
    """The public return: a Python float for a scalar call, else `V.scalar_or_array`."""
    return float(val) if xp is FL.SCALAR else V.scalar_or_array(val)


@cites("levi:eq21", "levi:fig5")
@V.broadcasting()
def loss_train_late(t, lam, eta0, *, d_out=1, order=0):
    r"""Late-time expansion of the training loss (paper eq. 21, with its first correction on request).

    .. math::
        \mathcal L_{\rm tr}\simeq\frac{e^{-4\eta_0(1-\sqrt\lambda)^2t}}{16\sqrt\pi\,\lambda^{3/4}(\eta_0t)^{3/2}}
        \Big[1-\frac{3}{64\,\eta_0t\sqrt\lambda}\Big]_{\text{order}=1}

    In words: e^(−4η₀(1 − √λ)²t)/(16√π λ^(3/4)(η₀t)^(3/2)), times 1 − 3/(64η₀t√λ) at `order=1`; for d_out > 1
    it is L⁽¹⁾(η₀/d_out, t)/d_out. Valid for 8η₀t√λ/d_out ≫ 1; the relative error of the leading term is about
    3d_out/(64η₀t√λ). For λ > 1 it is the whole train loss too.

    Parameters
    ----------
    t : float or array_like
        Time t > 0 in gradient-descent steps (real-valued); the expansion needs large t.
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, λ ≠ 1 (the expansions diverge there).
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    order : {0, 1}
        0 (default): the paper's leading term; 1: with the correction factor 1 − 3/(64η₀t√λ).

    Returns
    -------
    float or ndarray
        The approximate L_tr(t), the broadcast shape of `t`, `lam`, `eta0`.

    Notes
    -----
    Accuracy: relative error ≤ 4e-16 (10 + |log t| + |log λ| + |log η₀|). The exponent
    x = 4η₀(1 - √λ)²t/d_out is formed in double-double arithmetic, so e^(-x) costs one ulp, not |x|
    ulps (4.8e-13 at x ≈ 650 before).

    References
    ----------
    Levi et al., eq. (21); spec `levi:eq21`, `levi:fig5`.
    """
    o = V.integer_at_least(order, "order", 0)
    if o > 1:
        raise V.DomainError(f"order must be 0 or 1 (got {o})")
    return _late_map(_train_late, t, lam, eta0, d_out, "the late-time expansion (eq. 21)", o)


def _train_late(log_s, x, ll, a, d, xp, o):
    """`loss_train_late` from the shared pieces (numbers or one block of arrays)."""
    rest = _log_train_late0(log_s, ll, xp)
    with xp.errstate(under="ignore", over="ignore"):  # 0 / inf only where the value itself is beyond float64
        val = x.exp_minus_plus(rest)
    if o == 1:
        # the correction 1 - q, q = 3/(16 s sqrt(lam)), multiplies the leading term where both and the product
        # are normal doubles; elsewhere log|1 - q| joins the exponent (the leading term alone can be
        # subnormal where the product is not: q = 2.3e66 beside e^-720 lost 6e-10 as a product)
        log_q = math.log(3.0 / 16.0) - log_s - 0.5 * xp.log(ll)
        with xp.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            c = 1.0 - 3.0 / 16.0 * xp.exp(-log_s - 0.5 * xp.log(ll))
            direct = val * c
            ok = ((val >= FL.TINY) & xp.isfinite(val) & xp.isfinite(c)
                  & (((xp.abs(direct) >= FL.TINY) & xp.isfinite(direct)) | (c == 0.0)))
            if xp.all(ok):  # the exponent a second time only where some point needs it
                val = direct
            else:
                log_c = xp.where(log_q < 0.0, xp.log1p(-xp.exp(xp.minimum(log_q, 0.0))),  # q < 1
                                 xp.where(log_q > math.log(2.0), log_q + xp.log1p(-xp.exp(-log_q)),  # q > 2
                                          xp.log(xp.abs(c))))
                need = xp.where(ok, False, True)
                far = xp.where(log_q > 0.0, -1.0, 1.0) * x.exp_minus_plus(rest + log_c, need)
                val = xp.where(ok, direct, far)
    return val / d if d != 1.0 else val  # / 1 is exact


# continued-fraction terms by the smallest x they serve: relative error <= 3.5e-16 there (measured against
# mpmath at 40 digits, 300 log-spaced x in [1, 1e6])
_CF_TERMS = ((16.0, 12), (8.0, 20), (4.0, 40), (2.0, 60), (1.0, 100))


def _log_erfc_bracket(x):
    r"""log of π^(-1/2) - √x erfcx(√x), x ≥ 0 (an array, or a Python float for a scalar call).

    The bracket is e^x x^(1/2) Γ(-1/2, x) / (2√π) (√(πx) erfcx(√x) = √x e^x Γ(1/2, x), and
    Γ(1/2, x) = x^(-1/2) e^(-x) - Γ(-1/2, x)/2 by Γ(a + 1, x) = a Γ(a, x) + x^a e^(-x)); for x ≥ 1 it is
    taken from the Legendre continued fraction of e^x x^(1/2) Γ(-1/2, x) = 1/(x + 3/2 - 1·3/2 / (x + 7/2 - 2·5/2 / (x + 11/2 - ...))),
    which has no cancellation.  The difference itself, for x < 1 only, loses ~log10(2x + 1) digits (its
    two terms cancel to 1/(2√π x)): 4.8e-13 of it at x = 650 before.  0 at x = inf gives -inf."""
    if type(x) is float:
        if x < 1.0:
            return _log_bracket_direct(x, FL.SCALAR)
        return _log_bracket_cf(x, x, FL.SCALAR) if x < math.inf else -math.inf
    x = np.asarray(x, dtype=np.float64)
    out = np.full(x.shape, -np.inf)
    small = x < 1.0
    if np.any(small):
        out[small] = _log_bracket_direct(x[small], FL.ARRAY)
    cf = ~small & np.isfinite(x)
    if np.any(cf):
        xc = x[cf]
        lo = float(np.min(xc))  # the number of terms for the whole call, the blocks only bound the temporaries
        out[cf] = FL.blockwise(lambda xb: _log_bracket_cf(xb, lo, FL.ARRAY), xc.shape, xc)
    return out


def _log_bracket_direct(x, xp):
    """The bracket as the difference (x < 1)."""
    r = xp.sqrt(x)
    return xp.log(1.0 / math.sqrt(math.pi) - r * _float_or_array(special.erfcx(r)))


def _float_or_array(v):
    """A NumPy scalar as a Python float (the engines' float path), an array as it is."""
    return float(v) if type(v) is np.float64 else v


def _log_bracket_cf(x, lo, xp):
    """The bracket from the continued fraction (x >= 1), with the number of terms that serves the smallest x, `lo`."""
    n = next(terms for start, terms in _CF_TERMS if lo >= start)
    t = x + (2 * n + 1.5)
    for k in range(n, 0, -1):
        t = x + (2 * (k - 1) + 1.5) - k * (k + 0.5) / t
    return -math.log(2.0) - _LOG_SQRT_PI - xp.log(t)


@cites("levi:eq22", "levi:fig5")
@V.broadcasting()
def loss_gen_late(t, lam, eta0, *, d_out=1):
    r"""Late-time generalisation loss: eq. 21 integrated in time (paper eq. 22).

    .. math::
        \mathcal L_{\rm gen}\simeq\frac{e^{-4\eta_0(1-\sqrt\lambda)^2t}}{2\sqrt\pi\,\lambda^{3/4}\sqrt{\eta_0t}}
        -\frac{|1-\sqrt\lambda|\,\Gamma\big(\tfrac12,4\eta_0t(1-\sqrt\lambda)^2\big)}{\sqrt\pi\,\lambda^{3/4}}
        \;\Big[+\Big(1-\frac1\lambda\Big)\ \text{for}\ \lambda>1\Big]

    In words: the time integral of eq. 21, plus the plateau 1 − 1/λ when λ > 1. It is evaluated as
    e^(−x)/(λ^(3/4)√s)·[π^(−1/2) − √x·erfcx(√x)] with s = 4η₀t and x = s(1 − √λ)², the bracket from a
    continued fraction for x ≥ 1 (no cancellation); the d_out rule is that of `loss_train_late`.

    Parameters
    ----------
    t : float or array_like
        Time t > 0 in gradient-descent steps (real-valued); the expansion needs large t.
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, λ ≠ 1 (the expansions diverge there).
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.

    Returns
    -------
    float or ndarray
        The approximate L_gen(t), the broadcast shape of `t`, `lam`, `eta0`.

    Notes
    -----
    Accuracy: relative error ≤ 4e-16 (10 + |log t| + |log λ| + |log η₀|). The exponent
    x = 4η₀(1 - √λ)²t/d_out is formed in double-double arithmetic, so e^(-x) costs one ulp, not |x|
    ulps (4.8e-13 at x ≈ 650 before). The bracket comes from a continued fraction for x ≥ 1 (no cancellation).

    References
    ----------
    Levi et al., eq. (22); spec `levi:eq22`, `levi:fig5`.
    """
    log_s, x, ll, a, d, xp = _late_common(t, lam, eta0, d_out, "the late-time expansion (eq. 22)")
    xh, xl = x.dd()  # the bracket reads x on every point
    with xp.errstate(under="ignore", over="ignore", divide="ignore"):  # idem; bracket(x = inf) = 0
        rest = -0.75 * xp.log(ll) - 0.5 * log_s + _log_erfc_bracket(xh)
        plateau = xp.where(ll > 1.0, (ll - 1.0) / ll, 0.0)
        return _result((_exp_minus_x_plus(xh, xl, rest) + plateau) / d, xp)


@cites("levi:eq10", "levi:fig5")
@V.broadcasting()
def loss_gen_late_simple(t, lam, eta0, *, d_out=1):
    r"""The paper's simplest late-time generalisation loss: eq. 21 divided by (1 − √λ)² (eq. 10).

    .. math::
        \mathcal L_{\rm gen}\simeq\frac{\mathcal L_{\rm tr}^{\rm (eq.21)}}{(1-\sqrt\lambda)^2}\;
        \Big[+\Big(1-\frac1\lambda\Big)\ \text{for}\ \lambda>1\Big]

    In words: the leading term of `loss_train_late` divided by (1 − √λ)², plus the plateau 1 − 1/λ when λ > 1.
    Narrow validity: it needs x = 4η₀t(1 − √λ)²/d_out ≫ 1.5 (the next order is 1 − 3/(2x)); e.g. 102 % error
    at λ = 0.9, η₀t = 100.

    Parameters
    ----------
    t : float or array_like
        Time t > 0 in gradient-descent steps (real-valued); the expansion needs large t.
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, λ ≠ 1 (the expansions diverge there).
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.

    Returns
    -------
    float or ndarray
        The approximate L_gen(t), the broadcast shape of `t`, `lam`, `eta0`.

    Notes
    -----
    Accuracy: relative error ≤ 4e-16 (10 + |log t| + |log λ| + |log η₀|). The exponent
    x = 4η₀(1 - √λ)²t/d_out is formed in double-double arithmetic, so e^(-x) costs one ulp, not |x|
    ulps (4.8e-13 at x ≈ 650 before).

    References
    ----------
    Levi et al., eq. (10); spec `levi:eq10`, `levi:fig5`.
    """
    return _late_map(_gen_late_simple, t, lam, eta0, d_out, "the late-time expansion (eq. 10)")


def _gen_late_simple(log_s, x, ll, a, d, xp):
    """`loss_gen_late_simple` from the shared pieces (numbers or one block of arrays)."""
    with xp.errstate(under="ignore", over="ignore"):
        val = x.exp_minus_plus(_log_train_late0(log_s, ll, xp) - xp.log(a))
        if FL.extrema(ll)[1] > 1.0:  # the plateau where some lam > 1 (val + 0 is val: no pass where none is)
            val = val + xp.where(ll > 1.0, (ll - 1.0) / ll, 0.0)
        return val / d if d != 1.0 else val  # / 1 is exact
