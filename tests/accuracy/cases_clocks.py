"""Accuracy cases for grokclocks.clocks (the two training clocks, spec ``clocks``).

References are the defining formulas evaluated in mpmath at 40 digits from the exact double inputs
(closed forms, ``mpmath.findroot`` for the crossover).  Where a function's value is ill-conditioned
in an argument (``x**a`` in ``a``: condition number ``|a log x|``; a difference of two terms near a
zero of the result) the tolerance says so next to it.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from grokclocks import clocks as C
from harness import TINY, AccuracyCase, Arg, Branch

mpf = mpmath.mpf
BIG = 1e300
#: below the smallest normal double a value is compared absolutely at rtol * TINY (subnormal results
#: carry fewer significant bits; 0 is the right answer below ~5e-324).
ULP_SUB = TINY


# ---------------------------------------------------------------- switch points (stratified draws)
# (K-1) e^-gamma: ((K-1) e^(-gamma/2)) e^(-gamma/2) while e^(-gamma/2) is normal (gamma <= 1416.8), else in
# logs; the value itself leaves the normal range at gamma = 708.4 + log(K-1).  For gamma < 0 the product
# overflows at |gamma| + log(K-1) = 709.78 (then log1p gives way to logaddexp)
_TAIL_GAMMA = (708.4, 1416.8)


def _neg_tail_branch(arg="gamma"):
    return Branch(arg, (709.78,), lo=1.0, hi=1e4, what="|gamma| + log(K - 1)",
                  solve=lambda q, K, **_: q - math.log(_k(K) - 1) if _k(K) > 2 else q)


# the gap gamma0 + rate t of the fast-clock loss bound, at the tail's switch points
_GAM_BRANCH = Branch("t", _TAIL_GAMMA, lo=1e-3, hi=1e300, what="gamma = gamma0 + rate t",
                     solve=lambda q, K, rate, gamma0: (q - gamma0) / rate)


# contraction_clock_bound: k0 for eps >= loss0, log1p((loss0 - eps)/eps) for loss0 <= 2 eps, log of the quotient above
_CONTRACTION_BRANCH = Branch("loss0", (1.0, 2.0), lo=1e-3, hi=1e300, what="loss0/eps",
                             solve=lambda q, eps, rho: q * eps)


def _two_modes(x, y):
    """The p = 7 embedding (x cos(2 pi a/7), y sin(6 pi a/7)): energy x^2 at frequency 1, y^2 at 3."""
    a = np.arange(7)
    return np.stack([x * np.cos(2 * np.pi * a / 7), y * np.sin(6 * np.pi * a / 7)], axis=1)


def _amplitude_ratio(x, y):
    """sqrt(inside/outside) energy of `_two_modes`, at least 1."""
    return max(1.0, x / y)


def _ref_energy_outside(E, freqs):
    """Exact fraction of the (centred) energy of the float matrix E outside the folded frequencies
    ``freqs``: the DFT of each column in mpmath, the outside frequencies summed directly."""
    p = E.shape[0]
    cols = [[mpf(float(v)) for v in E[:, j]] for j in range(E.shape[1])]
    cols = [[v - mpmath.fsum(c) / p for v in c] for c in cols]
    energy = {}
    for k in range(1, p // 2 + 1):
        w = 1 if 2 * k == p else 2
        energy[k] = mpmath.fsum(
            w * (mpmath.fsum(c[a] * mpmath.cospi(mpf(2 * k * a) / p) for a in range(p)) ** 2
                 + mpmath.fsum(c[a] * mpmath.sinpi(mpf(2 * k * a) / p) for a in range(p)) ** 2) / p
            for c in cols)
    inside = {min(f % p, p - f % p) for f in freqs}
    return mpmath.fsum(e for k, e in energy.items() if k not in inside) / mpmath.fsum(energy.values())


def in_double(ref):
    """Wrap a reference so that it returns what a double can hold: +-inf beyond the largest double (the
    harness counts an infinite value as right only against an infinite reference) and the nearest
    double below the smallest normal one (subnormal results have fewer significant bits).  A local
    helper: harness.py compares with the unrounded mpmath value."""

    def wrapped(**kw):
        r = ref(**kw)
        if abs(r) >= DBL_OVERFLOW:
            return mpmath.inf if r > 0 else -mpmath.inf
        if abs(r) < TINY:
            return mpf(float(r))
        return r

    return wrapped


DBL_OVERFLOW = mpf(2) ** 1024 * (1 - mpf(2) ** -54)  # rounds to inf in round-to-nearest


def _k(K):
    return int(K)


def _theta(u):
    """theta = 1/2 + u as the double the function receives (u in (0, 1/2))."""
    return 0.5 + u


# ---------------------------------------------------------------- cross-entropy tail

def _ref_tail(gamma, K):
    return mpmath.log1p((mpf(int(K)) - 1) * mpmath.exp(-mpf(gamma)))


def _ref_tail_linear(gamma, K):
    return (mpf(int(K)) - 1) * mpmath.exp(-mpf(gamma))


def _ref_gap(eps, K, sharp=False):
    e = mpf(eps)
    return mpmath.log(mpf(int(K)) - 1) - (mpmath.log(mpmath.expm1(e)) if sharp else mpmath.log(e))


def _ref_log_pl(margin):
    m = mpf(margin)
    ell = mpmath.log1p(mpmath.exp(-m))
    dl = 1 / (1 + mpmath.exp(m))
    return 2 * mpmath.log(dl) - mpmath.log(ell)


def _ref_fast(eps, K, rate, t0=0.0, gamma0=0.0, sharp=False):
    need = _ref_gap(eps, K, sharp)
    return mpf(t0) + max(need - mpf(gamma0), 0) / mpf(rate)


def _g0(eps, K, f):
    """gamma0 = f * (the gap needed for eps), a double input."""
    return f * (math.log(int(K) - 1) - math.log(math.expm1(eps)))


def _ref_fast_loss(t, K, rate, t0=0.0, gamma0=0.0, linear=True):
    g = mpf(gamma0) + mpf(rate) * (mpf(t) - mpf(t0))
    return _ref_tail_linear(g, K) if linear else _ref_tail(g, K)


def _ref_contraction(eps, loss0, rho, k0=0, exact=False):
    e, l0, r = mpf(eps), mpf(loss0), mpf(rho)
    if e >= l0:
        return mpf(k0)
    rate = -mpmath.log1p(-r) if exact else r
    x = mpmath.log(l0 / e) / rate
    if abs(x - mpmath.nint(x)) <= 1e-9:  # the documented snap to the nearest integer
        x = mpmath.nint(x)
    return mpf(k0) + mpmath.ceil(x)


# ---------------------------------------------------------------- KL clock

def _ref_kl_gap(t, gap0, a, u, t0=0.0):
    e = 2 * mpf(_theta(u)) - 1
    return (mpf(gap0) ** (-e) + mpf(a) * e * (mpf(t) - mpf(t0))) ** (-1 / e)


def _ref_kl_time(delta, gap0, a, u, t0=0.0):
    e = 2 * mpf(_theta(u)) - 1
    d, d0 = mpf(delta), mpf(gap0)
    if d >= d0:
        return mpf(t0)
    return mpf(t0) + (d ** (-e) - d0 ** (-e)) / (mpf(a) * e)


def _ref_mismatch(eps, delta, K, rate, C_kl, u, gap0, t0=0.0, gamma0=0.0, T=0.0):
    tc = _ref_fast(eps, K, rate, t0, gamma0)
    tr = _ref_kl_time(delta, gap0, mpf(C_kl) ** 2, u, T)
    return tr - tc


def _coupled_ref(eps, kappa, K, rate, C_kl, u, gap0, t0=0.0, gamma0=0.0, T=0.0):
    delta = float(np.exp(kappa * np.log(eps)))  # the function forms delta = eps**kappa in float64 first
    return _ref_mismatch(eps, delta, K, rate, C_kl, u, gap0, t0, gamma0, T)


def _crossover_ref(kappa, K, rate, C_kl, u, gap0):
    """Root in log eps of the exact coupled bound (delta = eps**kappa exactly)."""
    e = 2 * mpf(_theta(u)) - 1

    def f(v):
        delta = mpmath.exp(mpf(kappa) * v)
        need = mpmath.log(mpf(int(K)) - 1) - v
        tr = (delta ** (-e) - mpf(gap0) ** (-e)) / (mpf(C_kl) ** 2 * e) if delta < gap0 else 0
        return tr - max(need, 0) / mpf(rate)

    # the last sign change from + to - of f on a grid in log eps, then bisection (mpmath, 40 digits)
    grid = [mpf(-690) * (1 - mpf(i) / 400) for i in range(400)] + [mpf(-1e-12)]
    vals = [f(v) for v in grid]
    j = max(i for i in range(len(grid) - 1) if vals[i] > 0 >= vals[i + 1])
    return mpmath.exp(mpmath.findroot(f, (grid[j], grid[j + 1]), solver="anderson"))


CASES = [
    AccuracyCase("grokclocks.clocks.ce_tail_bound [gamma>0]", lambda gamma, K: C.ce_tail_bound(gamma, _k(K)),
                 _ref_tail, {"gamma": Arg(TINY, BIG), "K": Arg(2, BIG, integer=True)},
                 rtol=4e-16, atol=4e-16 * ULP_SUB, branches=(Branch("gamma", _TAIL_GAMMA),)),
    AccuracyCase("grokclocks.clocks.ce_tail_bound [gamma<0]", lambda gamma, K: C.ce_tail_bound(-gamma, _k(K)),
                 lambda gamma, K: _ref_tail(-gamma, K), {"gamma": Arg(TINY, BIG), "K": Arg(2, BIG, integer=True)},
                 rtol=4e-16, branches=(_neg_tail_branch(),)),
    # exp(log(K-1) - gamma): the value's condition number in gamma is |gamma| (<= 745 where it is
    # neither 0 nor inf), so the bound is ~|gamma| eps.
    AccuracyCase("grokclocks.clocks.ce_tail_bound_linear", lambda gamma, K: C.ce_tail_bound_linear(gamma, _k(K)),
                 _ref_tail_linear, {"gamma": Arg(TINY, BIG), "K": Arg(2, BIG, integer=True)},
                 rtol=2e-13, atol=2e-13 * ULP_SUB, branches=(Branch("gamma", _TAIL_GAMMA),)),
    AccuracyCase("grokclocks.clocks.ce_tail_bound_linear [gamma<0]",
                 lambda gamma, K: C.ce_tail_bound_linear(-gamma, _k(K)),
                 lambda gamma, K: _ref_tail_linear(-gamma, K), {"gamma": Arg(TINY, BIG), "K": Arg(2, BIG, integer=True)},
                 rtol=2e-13, branches=(_neg_tail_branch(),)),
    # log(K-1) - log(eps): a difference; near its zero (eps ~ K-1) the error is absolute, eps * |log eps|
    AccuracyCase("grokclocks.clocks.gap_for_loss_level", lambda eps, K: C.gap_for_loss_level(eps, _k(K)),
                 _ref_gap, {"eps": Arg(TINY, BIG), "K": Arg(2, BIG, integer=True)}, rtol=4e-16, atol=4e-13),
    AccuracyCase("grokclocks.clocks.gap_for_loss_level [sharp]",
                 lambda eps, K: C.gap_for_loss_level(eps, _k(K), sharp=True),
                 lambda eps, K: _ref_gap(eps, K, True), {"eps": Arg(TINY, BIG), "K": Arg(2, BIG, integer=True)},
                 rtol=4e-16, atol=4e-13, branches=(Branch("eps", (1.0,)),)),  # log_expm1 switches at 1
    AccuracyCase("grokclocks.clocks.ce_smoothness_constant", C.ce_smoothness_constant, lambda B: mpf(B) ** 2 / 2,
                 {"B": Arg(TINY, BIG)}, rtol=2.3e-16, atol=2.3e-16 * ULP_SUB),
    AccuracyCase("grokclocks.clocks.log_binary_pl_ratio [m>0]", C.log_binary_pl_ratio, _ref_log_pl,
                 {"margin": Arg(TINY, BIG)}, rtol=1e-15, atol=1e-16,
                 branches=(Branch("margin", (36.0,)),)),  # the large-margin form above 36
    AccuracyCase("grokclocks.clocks.log_binary_pl_ratio [m<0]", lambda margin: C.log_binary_pl_ratio(-margin),
                 lambda margin: _ref_log_pl(-margin), {"margin": Arg(TINY, BIG)}, rtol=1e-15, atol=1e-16),
    # exp(log r): condition number |log r| <= 745
    AccuracyCase("grokclocks.clocks.binary_pl_ratio", C.binary_pl_ratio, lambda margin: mpmath.exp(_ref_log_pl(margin)),
                 {"margin": Arg(TINY, BIG)}, rtol=2e-13, atol=2e-13 * ULP_SUB, branches=(Branch("margin", (36.0,)),)),
    AccuracyCase("grokclocks.clocks.binary_pl_ratio [m<0]", lambda margin: C.binary_pl_ratio(-margin),
                 lambda margin: mpmath.exp(_ref_log_pl(-margin)), {"margin": Arg(TINY, BIG)}, rtol=2e-13),
    AccuracyCase("grokclocks.clocks.zero_one_loss_threshold", lambda n: C.zero_one_loss_threshold(int(n)),
                 lambda n: mpmath.log(2) / int(n), {"n": Arg(1, BIG, integer=True)}, rtol=2.3e-16),
    AccuracyCase("grokclocks.clocks.fast_clock_bound", lambda eps, K, rate, t0: C.fast_clock_bound(eps, _k(K), rate, t0),
                 _ref_fast, {"eps": Arg(TINY, BIG), "K": Arg(2, 1e6, integer=True), "rate": Arg(TINY, BIG),
                             "t0": Arg(TINY, BIG)}, rtol=1e-15, atol=1e-300),
    AccuracyCase("grokclocks.clocks.fast_clock_bound [sharp, gamma0]",
                 lambda eps, K, rate, f: C.fast_clock_bound(eps, _k(K), rate, 0.0, _g0(eps, K, f), sharp=True),
                 lambda eps, K, rate, f: _ref_fast(eps, K, rate, 0.0, _g0(eps, K, f), True),
                 {"eps": Arg(TINY, 1.0), "K": Arg(2, 1e6, integer=True), "rate": Arg(TINY, BIG), "f": Arg(0.0, 0.9, "lin")},
                 # [need - gamma0]_+ / rate is a difference: relative error eps (need + gamma0) / (need - gamma0)
                 # (measured 5e-15 at gamma0 = 0.99 need); gamma0 = f need, f <= 0.9, bounds it by 19 eps
                 rtol=4.5e-15, atol=1e-300),
    AccuracyCase("grokclocks.clocks.fast_clock_loss_bound [linear]",
                 lambda t, K, rate, gamma0: C.fast_clock_loss_bound(t, _k(K), rate, 0.0, gamma0),
                 lambda t, K, rate, gamma0: _ref_fast_loss(t, K, rate, 0.0, gamma0),
                 {"t": Arg(TINY, BIG), "K": Arg(2, 1e6, integer=True), "rate": Arg(TINY, BIG), "gamma0": Arg(TINY, 1e3)},
                 rtol=2e-13, atol=2e-13 * ULP_SUB, branches=(_GAM_BRANCH,)),
    AccuracyCase("grokclocks.clocks.fast_clock_loss_bound [log]",
                 lambda t, K, rate, gamma0: C.fast_clock_loss_bound(t, _k(K), rate, 0.0, gamma0, linear=False),
                 lambda t, K, rate, gamma0: _ref_fast_loss(t, K, rate, 0.0, gamma0, False),
                 {"t": Arg(TINY, BIG), "K": Arg(2, 1e6, integer=True), "rate": Arg(TINY, BIG), "gamma0": Arg(TINY, 1e3)},
                 rtol=2e-13, atol=2e-13 * ULP_SUB, branches=(_GAM_BRANCH,)),
    AccuracyCase("grokclocks.clocks.contraction_clock_bound",
                 lambda eps, loss0, rho: C.contraction_clock_bound(eps, loss0, rho),
                 _ref_contraction, {"eps": Arg(TINY, BIG), "loss0": Arg(TINY, BIG), "rho": Arg(TINY, 1 - 2 ** -53)},
                 # the ceiling of a float quotient x (error <= 1.5 ulp): one step off where x lies within
                 # 1.5 ulp of an integer (measured 1 step at x = 5.5e14); exact elsewhere
                 rtol=4e-16, atol=1.0, branches=(_CONTRACTION_BRANCH,)),
    AccuracyCase("grokclocks.clocks.contraction_clock_bound [exact]",
                 lambda eps, loss0, rho: C.contraction_clock_bound(eps, loss0, rho, exact=True),
                 lambda eps, loss0, rho: _ref_contraction(eps, loss0, rho, exact=True),
                 {"eps": Arg(TINY, BIG), "loss0": Arg(TINY, BIG), "rho": Arg(TINY, 1 - 2 ** -53)}, rtol=4e-16,
                 atol=1.0, branches=(_CONTRACTION_BRANCH,)),
    AccuracyCase("grokclocks.clocks.kl_decay_exponent", lambda u: C.kl_decay_exponent(_theta(u)),
                 lambda u: 1 / (2 * mpf(_theta(u)) - 1), {"u": Arg(2 ** -53, 0.5 - 2 ** -53)}, rtol=1.2e-16),
    AccuracyCase("grokclocks.clocks.representation_clock_exponent", lambda u: C.representation_clock_exponent(_theta(u)),
                 lambda u: 2 * mpf(_theta(u)) - 1, {"u": Arg(2 ** -53, 0.5 - 2 ** -53)}, rtol=0.0),
    # c^2 Delta^(2 theta): the condition number in theta is |2 theta log Delta| <= 1420
    AccuracyCase("grokclocks.clocks.kl_differential_bounds [upper]",
                 lambda gap, C_kl, u: C.kl_differential_bounds(gap, C_kl, C_kl, _theta(u))[1],
                 lambda gap, C_kl, u: mpf(C_kl) ** 2 * mpf(gap) ** (2 * mpf(_theta(u))),
                 {"gap": Arg(TINY, BIG), "C_kl": Arg(TINY, BIG), "u": Arg(2 ** -53, 0.5 - 2 ** -53)},
                 rtol=4e-13, atol=4e-13 * ULP_SUB),
    # Delta(t) = [Delta0^(-e) + a e tau]^(-1/e): relative error ~ eps |log Delta| (<= 745 eps in range)
    AccuracyCase("grokclocks.clocks.kl_gap_solution",
                 lambda t, gap0, a, u: C.kl_gap_solution(t, gap0, a, _theta(u)), _ref_kl_gap,
                 {"t": Arg(TINY, BIG), "gap0": Arg(TINY, BIG), "a": Arg(TINY, BIG), "u": Arg(2 ** -53, 0.5 - 2 ** -53)},
                 rtol=4e-13, atol=4e-13 * ULP_SUB),
    AccuracyCase("grokclocks.clocks.log_kl_gap_solution",
                 lambda t, gap0, a, u: C.log_kl_gap_solution(t, gap0, a, _theta(u)),
                 lambda t, gap0, a, u: mpmath.log(_ref_kl_gap(t, gap0, a, u)),
                 {"t": Arg(TINY, BIG), "gap0": Arg(TINY, BIG), "a": Arg(TINY, BIG), "u": Arg(2 ** -53, 0.5 - 2 ** -53)},
                 rtol=1e-14, atol=1e-15),
    AccuracyCase("grokclocks.clocks.kl_gap_solution_pl", lambda t, gap0, a: C.kl_gap_solution_pl(t, gap0, a),
                 lambda t, gap0, a: mpf(gap0) * mpmath.exp(-mpf(a) * mpf(t)),
                 {"t": Arg(TINY, BIG), "gap0": Arg(TINY, BIG), "a": Arg(TINY, BIG)}, rtol=4e-13, atol=4e-13 * ULP_SUB),
    AccuracyCase("grokclocks.clocks.kl_gap_bounds [lower]",
                 lambda t, gap0, C_kl, u: C.kl_gap_bounds(t, gap0, C_kl / 2, C_kl, _theta(u))[0],
                 lambda t, gap0, C_kl, u: _ref_kl_gap(t, gap0, mpf(C_kl) ** 2, u),
                 {"t": Arg(TINY, BIG), "gap0": Arg(TINY, BIG), "C_kl": Arg(TINY, BIG), "u": Arg(2 ** -53, 0.5 - 2 ** -53)},
                 rtol=4e-13, atol=4e-13 * ULP_SUB),
    # (delta^-e - Delta0^-e) / (a e): a difference; the error is relative to delta^-e / (a e)
    AccuracyCase("grokclocks.clocks.kl_clock_time",
                 lambda delta, a, u: C.kl_clock_time(delta, 1.0, a, _theta(u)),
                 lambda delta, a, u: _ref_kl_time(delta, 1.0, a, u),
                 {"delta": Arg(TINY, 1.0), "a": Arg(TINY, BIG), "u": Arg(2 ** -53, 0.5 - 2 ** -53)},
                 rtol=4e-13, atol=1e-300,
                 # log(gap0/delta) by log1p((gap0 - delta)/delta) for gap0 <= 2 delta (gap0 = 1)
                 branches=(Branch("delta", (0.5,)),)),
    AccuracyCase("grokclocks.clocks.kl_clock_time [gap0]",
                 lambda delta, gap0, u: C.kl_clock_time(delta, gap0, 1.0, _theta(u)),
                 lambda delta, gap0, u: _ref_kl_time(delta, gap0, 1.0, u),
                 {"delta": Arg(TINY, 1e-3), "gap0": Arg(1.0, BIG), "u": Arg(2 ** -53, 0.5 - 2 ** -53)},
                 rtol=4e-13, atol=1e-300),
    AccuracyCase("grokclocks.clocks.representation_clock_bounds [upper]",
                 lambda delta, c_kl, u: C.representation_clock_bounds(delta, 1.0, c_kl, c_kl, _theta(u), 0.0, 0.5, 2.0)[1],
                 lambda delta, c_kl, u: _ref_kl_time(float(delta / 2.0), 1.0, mpf(c_kl) ** 2, u),
                 {"delta": Arg(TINY, 1.0), "c_kl": Arg(TINY, BIG), "u": Arg(2 ** -53, 0.5 - 2 ** -53)},
                 rtol=4e-13, atol=1e-300),
    AccuracyCase("grokclocks.clocks.kl_exponent_power", C.kl_exponent_power, lambda q: 1 - 1 / mpf(q),
                 {"q": Arg(2 + 2 ** -51, BIG)}, rtol=2.3e-16),
    AccuracyCase("grokclocks.clocks.kl_rate_power", C.kl_rate_power, lambda q: mpf(q) ** 2,
                 {"q": Arg(2 + 2 ** -51, BIG)}, rtol=2.3e-16),
    AccuracyCase("grokclocks.clocks.kl_exponent_depth", lambda depth: C.kl_exponent_depth(int(depth)),
                 lambda depth: 1 - 1 / (2 * mpf(int(depth))), {"depth": Arg(2, BIG, integer=True)}, rtol=2.3e-16),
    AccuracyCase("grokclocks.clocks.kl_rate_depth",
                 lambda depth, m: C.kl_rate_depth(int(depth), int(m)),
                 lambda depth, m: int(m) * int(depth) * (2 / mpf(int(m))) ** (2 - 1 / mpf(int(depth))),
                 {"depth": Arg(2, 1e6, integer=True), "m": Arg(1, 1e6, integer=True)}, rtol=1e-15),
    AccuracyCase("grokclocks.clocks.kl_constants_critical_weight_decay [a]",
                 lambda: C.kl_constants_critical_weight_decay()[1], lambda: 4 * mpmath.sqrt(2), {}, rtol=2.3e-16),
    AccuracyCase("grokclocks.clocks.weight_decay_tail_rate [L=2]",
                 lambda mu, f: C.weight_decay_tail_rate(mu, 2, mu * f),
                 lambda mu, f: 4 * (mpf(mu) - mpf(mu * f)), {"mu": Arg(TINY, BIG), "f": Arg(0.0, 1.0, "lin")},
                 rtol=2.3e-16, atol=1e-300),
    AccuracyCase("grokclocks.clocks.weight_decay_tail_rate [L>=3]",
                 lambda mu, L: C.weight_decay_tail_rate(mu, int(L)),
                 lambda mu, L: 2 * mpf(mu) * int(L), {"mu": Arg(TINY, BIG), "L": Arg(3, 1e6, integer=True)},
                 rtol=2.3e-16),
    AccuracyCase("grokclocks.clocks.clock_mismatch_lower_bound",
                 lambda eps, delta, rate, C_kl, u: C.clock_mismatch_lower_bound(eps, delta, 4, rate, 0.0, 0.0, C_kl,
                                                                                 _theta(u), 1.0, 0.0),
                 lambda eps, delta, rate, C_kl, u: _ref_mismatch(eps, delta, 4, rate, C_kl, u, 1.0),
                 {"eps": Arg(TINY, 1.0), "delta": Arg(TINY, 1.0), "rate": Arg(1e-3, 1e3), "C_kl": Arg(1e-3, 1e3),
                  "u": Arg(1e-3, 0.5 - 2 ** -53)},
                 # a difference of the two clocks: absolute error eps * (t_rep + t_cls)
                 rtol=1e-12, atol=1e-10,
                 branches=(Branch("delta", (0.5,)),)),  # the KL clock's log1p branch for gap0 = 1 <= 2 delta
    AccuracyCase("grokclocks.clocks.coupled_mismatch_lower_bound",
                 lambda eps, kappa, u: C.coupled_mismatch_lower_bound(eps, kappa, 4, 0.5, 0.0, 0.0, 1.0, _theta(u), 1.0,
                                                                      0.0),
                 lambda eps, kappa, u: _coupled_ref(eps, kappa, 4, 0.5, 1.0, u, 1.0),
                 {"eps": Arg(1e-300, 1.0), "kappa": Arg(1e-3, 1.0), "u": Arg(1e-3, 0.5 - 2 ** -53)},
                 rtol=1e-12, atol=1e-10),
    AccuracyCase("grokclocks.clocks.crossover_eps",
                 lambda kappa, u: C.crossover_eps(kappa, 4, 0.5, 0.0, 0.0, 1.0, _theta(u), 1.0, 0.0),
                 lambda kappa, u: _crossover_ref(kappa, 4, 0.5, 1.0, u, 1.0),
                 {"kappa": Arg(0.2, 1.0), "u": Arg(0.05, 0.45)}, rtol=1e-13),  # brentq xtol 1e-14 on log eps
    AccuracyCase("grokclocks.clocks.cross_entropy_from_gaps [3 equal gaps]",
                 lambda gamma: C.cross_entropy_from_gaps([gamma, gamma, gamma]),
                 lambda gamma: mpmath.log1p(3 * mpmath.exp(-mpf(gamma))), {"gamma": Arg(TINY, BIG)},
                 rtol=4.5e-16, atol=4.5e-16 * ULP_SUB,
                 branches=(Branch("gamma", (708.4, 745.13)),)),  # the sum subnormal, then 0: logaddexp
    AccuracyCase("grokclocks.clocks.cross_entropy [logits (0, -gamma)]",
                 lambda gamma: C.cross_entropy([[0.0, -gamma]], [0]),
                 lambda gamma: mpmath.log1p(mpmath.exp(-mpf(gamma))), {"gamma": Arg(TINY, BIG)},
                 rtol=4.5e-16, atol=4.5e-16 * ULP_SUB),
    AccuracyCase("grokclocks.clocks.class_separation_ratio [2 x 2 rectangle]",
                 lambda x, y: C.class_separation_ratio([[0.0, 0.0], [0.0, 2 * y], [4 * x, 0.0], [4 * x, 2 * y]],
                                                       [0, 0, 1, 1]),
                 lambda x, y: mpf(y) ** 2 / (4 * mpf(x) ** 2), {"x": Arg(1e-100, 1e100), "y": Arg(1e-100, 1e100)},
                 rtol=1e-15, atol=1e-15 * ULP_SUB),
    AccuracyCase("grokclocks.clocks.class_separation_ratio [min_pair]",
                 lambda x, y: C.class_separation_ratio([[0.0, 0.0], [0.0, 2 * y], [4 * x, 0.0], [4 * x, 2 * y]],
                                                       [0, 0, 1, 1], between="min_pair"),
                 lambda x, y: mpf(y) ** 2 / (16 * mpf(x) ** 2), {"x": Arg(1e-100, 1e100), "y": Arg(1e-100, 1e100)},
                 rtol=1e-15, atol=1e-15 * ULP_SUB),
    AccuracyCase("grokclocks.clocks.fourier_energy_outside [p = 7, freqs {1}]",
                 lambda x, y: C.fourier_energy_outside(_two_modes(x, y), freqs=[1]),
                 lambda x, y: _ref_energy_outside(_two_modes(x, y), (1,)),
                 {"x": Arg(1e-100, 1e100), "y": Arg(1e-100, 1e100)},
                 # the reference is the exact fraction of the float matrix (its rounded cos/sin samples
                 # leak ~1e-16 of each mode into the other frequencies). The library's float DFT rows carry
                 # 1e-16 too: an absolute error ~1e-16 |E| in each outside coefficient, i.e. a relative error
                 # ~2e-16 sqrt(inside/outside) of the outside fraction (1 - inside/total cancelled: 2e-5 at a
                 # fraction of 1e-12, 0 at 1e-20)
                 rtol=lambda x, y: 1e-14 + 2e-15 * _amplitude_ratio(x, y), atol=1e-31,
                 rtol_doc="1e-14 + 2e-15 sqrt(inside/outside) (the float DFT rows leak 1e-16 of the inside "
                          "amplitude into each outside coefficient)",
                 points=({"x": 1.0, "y": 1e-6}, {"x": 1.0, "y": 1e-10})),
    AccuracyCase("grokclocks.clocks.softmax_logit_hessian [K = 2, off-diagonal]",
                 lambda q: C.softmax_logit_hessian([q, 1.0 - q])[0, 1],
                 lambda q: -mpf(q) * (1 - mpf(q)), {"q": Arg(2.0 ** -53, 0.5)},
                 # 1 - q is exact for q in [1/4, 1/2]; below it the input pair (q, 1 - q) itself is rounded
                 rtol=2.3e-16),
    AccuracyCase("grokclocks.clocks.first_layer_preact_change_bound [diag]",
                 lambda a, b, x_norm: C.first_layer_preact_change_bound(np.diag([a, a / 2]), [b, -b / 3], x_norm),
                 lambda a, b, x_norm: mpf(a) * mpf(x_norm) + mpf(b),
                 {"a": Arg(1e-100, 1e100), "b": Arg(1e-100, 1e100), "x_norm": Arg(1e-100, 1e100)}, rtol=4.5e-16),
    # the transition regions, which log-uniform draws over (1e-308, 1e300) rarely reach
    AccuracyCase("grokclocks.clocks.ce_tail_bound [gamma in (1, 800)]",
                 lambda gamma, K: C.ce_tail_bound(gamma, _k(K)), _ref_tail,
                 {"gamma": Arg(1.0, 800.0), "K": Arg(2, 1e6, integer=True)}, rtol=4.5e-16, atol=4.5e-16 * ULP_SUB),
    AccuracyCase("grokclocks.clocks.ce_tail_bound_linear [gamma in (1, 800)]",
                 lambda gamma, K: C.ce_tail_bound_linear(gamma, _k(K)), _ref_tail_linear,
                 {"gamma": Arg(1.0, 800.0), "K": Arg(2, 1e6, integer=True)}, rtol=4.5e-16, atol=4.5e-16 * ULP_SUB),
    AccuracyCase("grokclocks.clocks.cross_entropy_from_gaps [gamma in (1, 800)]",
                 lambda gamma: C.cross_entropy_from_gaps([gamma, gamma, 2 * gamma]),
                 lambda gamma: mpmath.log1p(2 * mpmath.exp(-mpf(gamma)) + mpmath.exp(-2 * mpf(gamma))),
                 {"gamma": Arg(1.0, 800.0)}, rtol=6.7e-16, atol=6.7e-16 * ULP_SUB),
    AccuracyCase("grokclocks.clocks.gap_for_loss_level [sharp, eps in (1e-3, 1e3)]",
                 lambda eps, K: C.gap_for_loss_level(eps, _k(K), sharp=True),
                 lambda eps, K: _ref_gap(eps, K, True), {"eps": Arg(1e-3, 1e3), "K": Arg(2, 1e6, integer=True)},
                 # a difference log(K-1) - log(e^eps - 1): absolute error eps (log K + eps) near its zero
                 rtol=4.5e-16, atol=4e-13),
    AccuracyCase("grokclocks.clocks.kl_gap_solution [theta -> 1/2, moderate t, gap0, a]",
                 lambda t, gap0, a, u: C.kl_gap_solution(t, gap0, a, _theta(u)), _ref_kl_gap,
                 {"t": Arg(1e-5, 1e5), "gap0": Arg(1e-5, 1e5), "a": Arg(1e-5, 1e5), "u": Arg(2 ** -53, 1e-3)},
                 rtol=4e-13, atol=4e-13 * ULP_SUB),
    AccuracyCase("grokclocks.clocks.log_binary_pl_ratio [m in (1, 800)]", C.log_binary_pl_ratio, _ref_log_pl,
                 {"margin": Arg(1.0, 800.0)}, rtol=1e-15),
    AccuracyCase("grokclocks.clocks.accumulated_time [3 steps]",
                 lambda a, b, c: C.accumulated_time([a, b, c])[-1], lambda a, b, c: mpf(a) + mpf(b) + mpf(c),
                 {"a": Arg(TINY, 1e300), "b": Arg(TINY, 1e300), "c": Arg(TINY, 1e300)},
                 rtol=4.5e-16, atol=4.5e-16 * ULP_SUB),
    AccuracyCase("grokclocks.clocks.energy_dissipation_residual [linear energy]",
                 lambda c, T: C.energy_dissipation_residual([0.0, T / 2, T], [c * T, c * T / 2, 0.0], [c, c, c])[-1],
                 lambda c, T: mpf(0), {"c": Arg(1e-100, 1e100), "T": Arg(1e-100, 1e100)},
                 # E(t) = c (T - t), |grad|^2 = c: the trapezoid is exact; the residual is a sum of terms of
                 # size c T that cancel: absolute error eps c T (the case scales it: c T <= 1e200)
                 rtol=0.0, atol=1e185),
    AccuracyCase("grokclocks.clocks.separation_ratio", C.separation_ratio, lambda t_rep, t_cls: mpf(t_rep) / mpf(t_cls),
                 {"t_rep": Arg(TINY, BIG), "t_cls": Arg(TINY, BIG)}, rtol=1.2e-16, atol=1.2e-16 * ULP_SUB),
]

import dataclasses as _dc  # noqa: E402

CASES = [_dc.replace(c, reference=in_double(c.reference)) for c in CASES]
