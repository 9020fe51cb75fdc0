"""Accuracy cases for grokclocks.spectral (stable rank, Schatten quasi-norms, decay, covers, bounds).

Matrix functions are checked on parametrised families with a closed-form answer: ``diag(x, y)``
(singular values x, y exactly, so the reference is a formula in x and y) over the whole double range
of x and y.  References: the defining formulas in mpmath at 40 digits.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np

from cases_clocks import in_double
from grokclocks import spectral as S
from harness import HUGE, TINY, AccuracyCase, Arg, Branch

mpf = mpmath.mpf
BIG = 1e300
EPS = 2.0 ** -52


def _diag(x, y):
    return np.diag([x, y])


def _kept(x, y, rtol=2 * EPS):
    """Singular values kept by the default rank threshold (sigma_i > rtol sigma_1; rtol = max(m,n) eps)."""
    s1, s2 = max(x, y), min(x, y)
    return [mpf(s1)] + ([mpf(s2)] if s2 > rtol * s1 else [])


# ---------------------------------------------------------------- switch points (stratified draws)
# the default rank threshold keeps sigma_2 only above 2 eps sigma_1 (the ratio of the diagonal entries)
def _ratio_branch(arg="y", other="x", lo=1e-30):
    return Branch(arg, (2 * EPS,), lo=lo, hi=1.0, what=f"{arg}/{other}",
                  solve=lambda q, **kw: q * kw[other])


# the covering numbers: x = 2R/r below 2^-54 (a power product), the log form where x overflows; the
# lower bound's max(log(R/r), 0) at R = r
def _cover_branch(points):
    return Branch("r", points, lo=1e-300, hi=1e308, what="R/r", solve=lambda q, R, **_: R / q)


def _ref_pen(x, y, p):
    return mpmath.fsum(s ** mpf(p) for s in _kept(x, y))


def _ref_norm(x, y, p):
    return _ref_pen(x, y, p) ** (1 / mpf(p))


def _ref_tail(x, y, k):
    s = sorted([mpf(x), mpf(y)], reverse=True)
    return mpmath.fsum(v * v for v in s[int(k):]) / mpmath.fsum(v * v for v in s)


def _int_as_float(k: int) -> float:
    try:
        return float(k)
    except OverflowError:
        return math.inf


def _ref_ey(srank, eta):
    x = mpf(srank) / mpf(eta) ** 2
    if abs(x - mpmath.nint(x)) <= 1e-12 * x:
        x = mpmath.nint(x)
    return mpmath.ceil(x)


def _ref_logcov(R, r, k, upper):
    ratio = mpf(R) / mpf(r)
    return int(k) * (mpmath.log1p(2 * ratio) if upper == "vershynin" else mpmath.log(3 * ratio))


def _ref_robust(eps_rob, n_cells, n, loss_bound, fail_prob):
    N = mpf(n_cells)
    return mpf(eps_rob) + mpf(loss_bound) * mpmath.sqrt((2 * N * mpmath.log(2) - 2 * mpmath.log(mpf(fail_prob)))
                                                          / mpf(n))


def _ref_robust_log(eps_rob, log_n_cells, n, loss_bound, fail_prob):
    N = mpmath.exp(mpf(log_n_cells))
    return mpf(eps_rob) + mpf(loss_bound) * mpmath.sqrt((2 * N * mpmath.log(2) - 2 * mpmath.log(mpf(fail_prob)))
                                                          / mpf(n))


def _ref_srgb(srank, eta, R, r, n):
    k = _ref_ey(srank, eta)
    logN = k * mpmath.log(3 * mpf(R) / mpf(r))
    return 2 * mpf(eta) * mpf(R) + _ref_robust_log(0.0, logN, n, 1.0, 0.05)


CASES = [
    AccuracyCase("grokclocks.spectral.stable_rank [diag(x, y)]", lambda x, y: S.stable_rank(_diag(x, y)),
                 lambda x, y: (mpf(x) ** 2 + mpf(y) ** 2) / max(mpf(x), mpf(y)) ** 2,
                 {"x": Arg(TINY, BIG), "y": Arg(TINY, BIG)}, rtol=4.5e-16),
    AccuracyCase("grokclocks.spectral.stable_rank_from_singular_values",
                 lambda x, y: S.stable_rank_from_singular_values([x, y]),
                 lambda x, y: (mpf(x) ** 2 + mpf(y) ** 2) / max(mpf(x), mpf(y)) ** 2,
                 {"x": Arg(TINY, BIG), "y": Arg(TINY, BIG)}, rtol=4.5e-16),
    AccuracyCase("grokclocks.spectral.schatten_penalty [diag(x, y)]", lambda x, y, p: S.schatten_penalty(_diag(x, y), p),
                 _ref_pen, {"x": Arg(TINY, BIG), "y": Arg(TINY, BIG), "p": Arg(1e-3, 1e3)},
                 # direct sum of sigma_i^p where sigma_1^p is a normal double (<= 2 ulp); log space
                 # beyond, error ~ eps p |log sigma_1| (the condition number of sigma^p in p)
                 rtol=4e-13, atol=4e-13 * TINY, branches=(_ratio_branch(),)),
    AccuracyCase("grokclocks.spectral.schatten_penalty [singular_values, rtol=0]",
                 lambda x, y, p: S.schatten_penalty(singular_values=[x, y], p=p, rtol=0.0),
                 lambda x, y, p: mpf(x) ** mpf(p) + mpf(y) ** mpf(p),
                 {"x": Arg(TINY, BIG), "y": Arg(TINY, BIG), "p": Arg(TINY, BIG)}, rtol=4e-13, atol=4e-13 * TINY),
    AccuracyCase("grokclocks.spectral.schatten_quasi_norm [diag(x, y)]",
                 lambda x, y, p: S.schatten_quasi_norm(_diag(x, y), p), _ref_norm,
                 {"x": Arg(TINY, BIG), "y": Arg(TINY, BIG), "p": Arg(1e-3, 1e3)},
                 # sigma_1 (sum r_i^p)^(1/p): the rounding of the sum (<= 2 ulp) is raised to 1/p <= 1000
                 rtol=2e-13, atol=2e-13 * TINY, branches=(_ratio_branch(),)),
    AccuracyCase("grokclocks.spectral.schatten_quasi_norm [singular_values, p in (0, 1e300)]",
                 lambda x, y, p: S.schatten_quasi_norm(singular_values=[x, y], p=p, rtol=0.0),
                 lambda x, y, p: (mpf(x) ** mpf(p) + mpf(y) ** mpf(p)) ** (1 / mpf(p)),
                 {"x": Arg(TINY, BIG), "y": Arg(TINY, BIG), "p": Arg(TINY, BIG)}, rtol=2e-13, atol=2e-13 * TINY),
    AccuracyCase("grokclocks.spectral.layerwise_decay_penalty [diag(x, y)]",
                 lambda x, y, L: S.layerwise_decay_penalty(_diag(x, y), int(L)),
                 lambda x, y, L: int(L) * _ref_pen(x, y, mpf(2) / int(L)),
                 {"x": Arg(TINY, BIG), "y": Arg(TINY, BIG), "L": Arg(1, 1e6, integer=True)}, rtol=4e-13, atol=4e-13 * TINY,
                 branches=(_ratio_branch(),)),
    AccuracyCase("grokclocks.spectral.weight_decay_to_penalty_coefficient",
                 lambda mu, L: S.weight_decay_to_penalty_coefficient(mu, int(L)),
                 lambda mu, L: mpf(mu) * int(L) / 2, {"mu": Arg(TINY, HUGE), "L": Arg(1, 1e6, integer=True)},
                 # mu (L/2): one rounding; mu L overflowed first (inf at mu = 1e308, L = 3, exact 1.5e308)
                 rtol=1.2e-16, atol=1.2e-16 * TINY, points=({"mu": 1e308, "L": 3},)),
    AccuracyCase("grokclocks.spectral.imbalance_decay", S.imbalance_decay,
                 lambda D0, mu, t: mpf(D0) * mpmath.exp(-2 * mpf(mu) * mpf(t)),
                 {"D0": Arg(TINY, BIG), "mu": Arg(TINY, 1.7e308), "t": Arg(TINY, BIG)},  # mu > 9e307: 2 mu overflows
                 # e^{-2 mu t}: condition number 2 mu t (<= 745 where the value is a normal double)
                 rtol=2e-13, atol=2e-13 * TINY,
                 # D0 e^(-2 mu t) while e^(-2 mu t) is normal, exp(log D0 - 2 mu t) beyond
                 branches=(Branch("t", (708.4,), lo=1e-3, hi=1e300, what="2 mu t",
                                  solve=lambda q, D0, mu: q / (2.0 * mu)),)),
    AccuracyCase("grokclocks.spectral.end_to_end_energy [diag(x, y)]",
                 lambda x, lam, p: S.end_to_end_energy(1.0, _diag(x, x / 3), lam, p),
                 lambda x, lam, p: 1 + mpf(lam) * _ref_pen(x, x / 3, p),
                 {"x": Arg(TINY, BIG), "lam": Arg(TINY, BIG), "p": Arg(1e-3, 1e3)}, rtol=4e-13),
    AccuracyCase("grokclocks.spectral.end_to_end_energy_from_weight_decay [diag(x, y)]",
                 lambda x, mu, L: S.end_to_end_energy_from_weight_decay(1.0, _diag(x, x / 3), mu, int(L)),
                 lambda x, mu, L: 1 + mpf(mu) * int(L) / 2 * _ref_pen(x, x / 3, mpf(2) / int(L)),
                 {"x": Arg(TINY, BIG), "mu": Arg(TINY, BIG), "L": Arg(1, 1e6, integer=True)}, rtol=4e-13),
    AccuracyCase("grokclocks.spectral.free_direction_collapse_time", S.free_direction_collapse_time,
                 lambda sigma0, lam, p: mpf(sigma0) ** (2 - mpf(p)) / (mpf(lam) * mpf(p) * (2 - mpf(p))),
                 {"sigma0": Arg(TINY, BIG), "lam": Arg(TINY, BIG), "p": Arg(TINY, 2 - 2 ** -52)},
                 rtol=4e-13, atol=4e-13 * TINY),
    # singular values from LAPACK: relative accuracy is guaranteed only normwise (eps sigma_1); on
    # diag(x, y) with sigma_2 / sigma_1 >= 1e-300 they come out exact, beyond (diag(2.6e299, 4.4e-149))
    # the small one carries relative error 9e-15 (LAPACK's scaling), and underflows to 0 below 1e-308 ratio
    AccuracyCase("grokclocks.spectral.schatten_penalty_grad [diag(x, y), entry (0, 0)]",
                 lambda x, y, p: S.schatten_penalty_grad(_diag(x, y), p)[0, 0],
                 # the documented rank threshold: sigma <= 2 eps sigma_1 is treated as exactly 0
                 lambda x, y, p: mpf(p) * mpf(x) ** (mpf(p) - 1) if x > 2 * EPS * max(x, y) else mpf(0),
                 {"x": Arg(1e-20, 1e20), "y": Arg(1e-20, 1e20),
                                                                    "p": Arg(0.1, 10.0)},
                 rtol=2e-14, branches=(_ratio_branch("x", "y", lo=1e-40),)),
    AccuracyCase("grokclocks.spectral.singular_value_drift [diag, top]",
                 lambda x, f, gx, lam, p: S.singular_value_drift(_diag(x, x * f), np.diag([gx, -gx]), lam, p)[0],
                 lambda x, f, gx, lam, p: -mpf(gx) - mpf(lam) * mpf(p) * mpf(x) ** (mpf(p) - 1),
                 {"x": Arg(1e-20, 1e20), "f": Arg(1e-6, 0.5), "gx": Arg(1e-20, 1e20), "lam": Arg(1e-20, 1e20),
                  "p": Arg(0.1, 10.0)}, rtol=2e-14),
    AccuracyCase("grokclocks.spectral.balanced_singular_value_drift [diag, top]",
                 lambda x, f, gx, mu, L: S.balanced_singular_value_drift(_diag(x, x * f), np.diag([-gx, gx]), mu, int(L))[0],
                 lambda x, f, gx, mu, L: (int(L) * mpf(x) ** (2 - mpf(2) / int(L)) * mpf(gx)
                                          - mpf(mu) * int(L) * mpf(x)),
                 {"x": Arg(1e-20, 1e20), "f": Arg(1e-6, 0.5), "gx": Arg(1e-20, 1e20), "mu": Arg(1e-20, 1e20),
                  "L": Arg(1, 1e3, integer=True)},
                 # a difference of the force and the decay: relative error eps (|L x^(2-2/L) F| + mu L x) / |drift|
                 # (measured 1.9e-14 over 2000 points; the draws do not bound the cancellation)
                 rtol=1e-13, atol=1e-300),
    AccuracyCase("grokclocks.spectral.spectral_tail [diag(x, y), k=1]",
                 lambda x, y: S.spectral_tail(_diag(x, y), 1), lambda x, y: _ref_tail(x, y, 1),
                 # LAPACK returns the entries of diag(x, y) to ~1 ulp, not exactly (measured 1.04e-15, 5000 points)
                 {"x": Arg(1e-150, 1e150), "y": Arg(1e-150, 1e150)}, rtol=1.6e-15),
    AccuracyCase("grokclocks.spectral.spectral_tail [raw, k=1]",
                 lambda x, y: S.spectral_tail(_diag(x, y), 1, normalized=False),
                 lambda x, y: min(mpf(x), mpf(y)) ** 2, {"x": Arg(1e-150, 1e150), "y": Arg(1e-150, 1e150)},
                 rtol=1.1e-15, atol=1.1e-15 * TINY),  # measured 6.4e-16 (5000 points)
    # an exact Python int (rational arithmetic), up to 1e616 here: compared as a float (inf beyond 1.8e308,
    # accepted by the harness only where the reference overflows too)
    AccuracyCase("grokclocks.spectral.eckart_young_rank",
                 lambda srank, eta: _int_as_float(S.eckart_young_rank(srank, eta)), _ref_ey,
                 {"srank": Arg(1.0, BIG), "eta": Arg(TINY, 1.0)},
                 # exact ceil of the exact quotient; the 40-digit reference rounds quotients beyond 1e40
                 # (relative 1e-40), so atol one step and rtol of the float comparison (4e-16)
                 rtol=4e-16, atol=1.0),
    AccuracyCase("grokclocks.spectral.principal_projection_error [diag(x, y), k=1]",
                 lambda x, y: S.principal_projection_error(_diag(x, y), 1), lambda x, y: min(mpf(x), mpf(y)),
                 {"x": Arg(1e-150, 1e150), "y": Arg(1e-150, 1e150)}, rtol=6.7e-16),  # LAPACK: 2.9e-16 measured
    AccuracyCase("grokclocks.spectral.log_covering_number_ball_bounds [lower]",
                 lambda R, r, k: S.log_covering_number_ball_bounds(R, r, int(k))[0],
                 lambda R, r, k: int(k) * max(mpmath.log(mpf(R) / mpf(r)), 0),
                 {"R": Arg(TINY, BIG), "r": Arg(TINY, BIG), "k": Arg(1, 1e6, integer=True)}, rtol=4.5e-16,
                 branches=(_cover_branch((1.0,)),)),
    AccuracyCase("grokclocks.spectral.log_covering_number_ball_bounds [vershynin]",
                 lambda R, r, k: S.log_covering_number_ball_bounds(R, r, int(k))[1],
                 lambda R, r, k: _ref_logcov(R, r, k, "vershynin"),
                 {"R": Arg(TINY, BIG), "r": Arg(TINY, BIG), "k": Arg(1, 1e6, integer=True)}, rtol=4.5e-16,
                 branches=(_cover_branch((2.0 ** -55, 8.9e307)),)),
    AccuracyCase("grokclocks.spectral.log_covering_number_ball_bounds [3R]",
                 lambda R, f, k: S.log_covering_number_ball_bounds(R, R * f, int(k), upper="3R")[1],
                 lambda R, f, k: _ref_logcov(R, R * f, k, "3R"),
                 {"R": Arg(1e-4, BIG), "f": Arg(1e-300, 1.0), "k": Arg(1, 1e6, integer=True)}, rtol=4.5e-16),
    AccuracyCase("grokclocks.spectral.covering_number_ball_bounds [vershynin]",
                 lambda R, r: S.covering_number_ball_bounds(R, r, 3)[1],
                 lambda R, r: (1 + 2 * mpf(R) / mpf(r)) ** 3,
                 {"R": Arg(TINY, BIG), "r": Arg(TINY, BIG)}, rtol=2e-13,
                 branches=(_cover_branch((2.0 ** -55, 8.9e307)),)),
    AccuracyCase("grokclocks.spectral.robust_generalization_bound",
                 lambda eps_rob, n_cells, n, loss_bound, fail_prob: S.robust_generalization_bound(
                     eps_rob, n_cells, n, loss_bound, fail_prob),
                 _ref_robust, {"eps_rob": Arg(TINY, BIG), "n_cells": Arg(1.0, BIG), "n": Arg(1.0, BIG),
                               "loss_bound": Arg(TINY, BIG), "fail_prob": Arg(TINY, 1 - 2 ** -53)},
                 rtol=1e-15, atol=1e-15 * TINY),
    AccuracyCase("grokclocks.spectral.robust_generalization_bound [log_n_cells]",
                 lambda eps_rob, log_n_cells, n, loss_bound, fail_prob: S.robust_generalization_bound(
                     eps_rob, None, n, loss_bound, fail_prob, log_n_cells=log_n_cells),
                 _ref_robust_log, {"eps_rob": Arg(TINY, 1.0), "log_n_cells": Arg(TINY, 1e4), "n": Arg(1.0, BIG),
                                   "loss_bound": Arg(TINY, BIG), "fail_prob": Arg(TINY, 1 - 2 ** -53)},
                 # e^{log N}: condition number log N (<= 1e4 here)
                 rtol=4e-12, atol=4e-12 * TINY),
    AccuracyCase("grokclocks.spectral.stable_rank_generalization_bound",
                 lambda srank, eta, R, r, n: S.stable_rank_generalization_bound(0.0, 1.0, eta, 1.0, R, srank, R * r, n,
                                                                                 1.0, 0.05),
                 lambda srank, eta, R, r, n: _ref_srgb(srank, eta, R, R * r, n),
                 {"srank": Arg(1.0, 1e3), "eta": Arg(1e-2, 1.0), "R": Arg(TINY, BIG), "r": Arg(1e-3, 1.0),
                  "n": Arg(1.0, BIG)}, rtol=4e-12),
]

CASES = [dataclasses.replace(c, reference=in_double(c.reference)) for c in CASES]
