"""Benchmark: throughput of the pure-math core against plain numpy/scipy versions of the same formulas.

For each public numeric function of ``grokclocks.rmt``, ``linear``, ``clocks``, ``kramers``, ``coverage``,
``spectral`` and ``repulsion`` whose arguments are numbers (a sweep over parameters), a *plain version* is written
here from the function's equation with numpy/scipy only (nothing from grokclocks): the closed form as printed,
``scipy.special`` for the special functions, a vectorised bisection for a root, and for an integral with no
closed form the straightforward scipy one, ``scipy.integrate.quad`` (+ ``brentq``) per point.  The two are
timed side by side in one process on the same seeded random arguments at 1e3, 1e5 and 1e6 points,
interleaved (library, plain, plain, library, ...), the median of ``--repeats`` (>= 5) runs each (>= 25 for
calls under 50 ms).  A plain version that loops in Python per point is timed on a subsample
(``--loop-points``, default 200) and scaled linearly to the full size, and so is a vectorised plain version
that would take over 20 s a run (timed at the next smaller size); both are marked ``extrapolated``.  Besides throughput it records the latency of
one scalar call (median of 7 x 200 calls), the largest relative difference between the two versions on the
benchmark's points, and where the plain formula loses digits, its error against mpmath at a few points.

Functions that take data (matrices, training records, logs), return exact Python integers, or build tables
are listed in the results with the reason they are not swept here.

Writes ``benchmarks/results/core.json``; ``--render`` rewrites the table of ``docs/benchmarks.md`` from it.
Run from the repository root:  ``python benchmarks/bench_core.py`` (about 30 min on the shared 2-core EPYC),
``--only rmt,linear``, ``--sizes 1000,100000``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import statistics
import sys
import time
import timeit
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy
from scipy import integrate, special

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import grokclocks.clocks as CL  # noqa: E402
import grokclocks.coverage as CO  # noqa: E402
import grokclocks.kramers as KR  # noqa: E402
import grokclocks.linear as LI  # noqa: E402
import grokclocks.repulsion as RE  # noqa: E402
import grokclocks.rmt as RM  # noqa: E402
import grokclocks.spectral as SP  # noqa: E402
import naive_reference  # noqa: E402

ERF_SQRT2 = float(special.erf(math.sqrt(2.0)))


# ----------------------------------------------------------------------------------------- plain formulas
# Written from the equations, numpy/scipy only.  Phi_1, Phi_0: the MP Laplace transforms of levi:eq19 and
# levi:gen-closed (Bessel + Marcum-Q closed form), L* = eps/4 at the default level.

def p_edges(lam):
    r = np.sqrt(lam)
    return (1 - r) ** 2, (1 + r) ** 2


def p_phi1(s, lam):
    r = np.sqrt(lam)
    z = 2 * s * r
    with np.errstate(all="ignore"):
        return np.where(z > 0, np.exp(-s * (1 - r) ** 2) * special.ive(1, z) / (s * r), 1.0)


def p_phi0(s, lam):
    """E[e^{-s nu}] = e^{-s(1+lam)}[I0 + I1/sqrt(lam)] + (1 - 1/lam)[1 - Q_1(sqrt(2s), sqrt(2 lam s))]."""
    r = np.sqrt(lam)
    z = 2 * s * r
    with np.errstate(all="ignore"):
        bes = np.exp(-s * (1 - r) ** 2) * (special.ive(0, z) + special.ive(1, z) / r)
        return bes + (1 - 1 / lam) * special.chndtr(2 * lam * s, 2, 2 * s)


def p_cdf(x, lam):
    """Textbook antiderivative in the angle, nu = 1 + lam - 2 sqrt(lam) cos(theta)."""
    r = np.sqrt(lam)
    lm, lp = p_edges(lam)
    with np.errstate(all="ignore"):
        th = np.arccos(np.clip((1 + lam - x) / (2 * r), -1, 1))
        cont = (lam * th + r * np.sin(th) - (1 - lam) * np.arctan2(r * np.sin(th), 1 - r * np.cos(th))) / (np.pi * lam)
    atom = np.where((lam > 1) & (x >= 0), 1 - 1 / lam, 0.0)
    return np.where(x <= lm, atom, np.where(x >= lp, atom + np.minimum(1, 1 / lam), cont))


def p_m(w, lam):
    b = 1 - lam + w
    return (-b + np.sqrt(b * b + 4 * lam * w)) / (2 * lam * w)


def p_m2(w, lam):
    m = p_m(w, lam)
    b = 1 - lam + w
    return m * (1 + lam * m) / np.sqrt(b * b + 4 * lam * w)


def p_bisect(f, lo, hi, iters=80):
    """Vectorised bisection of a decreasing function on [lo, hi] (in the variable given)."""
    lo, hi = np.array(lo, float), np.array(hi, float)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        pos = f(mid) > 0
        lo = np.where(pos, mid, lo)
        hi = np.where(pos, hi, mid)
    return 0.5 * (lo + hi)


def p_t_star(which, lam, eps, eta0):
    """Root in log t of log L(t) = log(eps/4), L = Phi_q(4 eta0 t) (L(0) = 1, d_out = 1; 80 bisections on
    [log 1e-3, log 1e12])."""
    phi = p_phi1 if which == "train" else p_phi0
    target = np.log(eps / 4)
    x = p_bisect(lambda u: np.log(phi(4 * eta0 * np.exp(u), lam)) - target,
                 np.full(np.shape(lam), math.log(1e-3)), np.full(np.shape(lam), math.log(1e12)))
    return np.exp(x)


def p_accuracy(L, eps):
    return special.erf(np.sqrt(eps / (2 * L)))


def p_lambertw(lam, eps, eta0, gen):
    r = np.sqrt(lam)
    a = (1 - r) ** 2
    z = 2 ** (5 / 3) * (a ** (1 / 3) if gen else a) / (3 * np.pi ** (1 / 3) * r * eps ** (2 / 3))
    return 3 / (8 * eta0 * a) * special.lambertw(z).real


def p_late_train(t, lam, eta0):
    r = np.sqrt(lam)
    return np.exp(-4 * eta0 * (1 - r) ** 2 * t) / (16 * np.sqrt(np.pi) * lam ** 0.75 * (eta0 * t) ** 1.5)


def p_late_gen(t, lam, eta0):
    r = np.sqrt(lam)
    x = 4 * eta0 * t * (1 - r) ** 2
    return (np.exp(-x) / (2 * np.sqrt(np.pi) * lam ** 0.75 * np.sqrt(eta0 * t))
            - np.abs(1 - r) * special.gammaincc(0.5, x) * special.gamma(0.5) / (np.sqrt(np.pi) * lam ** 0.75))


def p_kl_gap(t, gap0, a, theta, t0=0.0):
    k = 2 * theta - 1
    return (gap0 ** (-k) + a * k * (t - t0)) ** (-1 / k)


def p_kl_differential(d, th):
    """(c^2 d^(2 theta), C^2 d^(2 theta)) at c = 1/2, C = 2: the power once for both sides."""
    f = d ** (2 * th)
    return 0.25 * f, 4.0 * f


def p_kl_time(delta, gap0, a, theta, t0=0.0):
    k = 2 * theta - 1
    return t0 + (delta ** (-k) - gap0 ** (-k)) / (a * k)


def p_grok_time_dout(lam, eps, eta0, d):
    """Delta t at a real output dimension d (default level): t*(d) = d t*_1 at the threshold d L*_d (d L = Phi_q(s),
    L(0) = 1/d), L*_d = eps d /
    (2 P^-1(d/2, erf sqrt 2)) (time enters as s = 4 eta0 t/d, and d L depends on s only)."""
    log_target = np.log(eps * d * d / (2 * special.gammaincinv(d / 2, ERF_SQRT2)))
    tt = [np.exp(p_bisect(lambda u: np.log(phi(4 * eta0 * np.exp(u), lam)) - log_target,
                          np.full(np.shape(lam), math.log(1e-3)), np.full(np.shape(lam), math.log(1e12))))
          for phi in (p_phi0, p_phi1)]
    return d * (tt[0] - tt[1])


def p_dout_max(lam, eps, eta0):
    """One point: the 25-node scan of p_grok_time_dout in log d over [0, log(10/eps)] (one vectorised call), then
    scipy's bounded minimize_scalar on the neighbouring cells (xatol 1e-7): max Delta t."""
    from scipy import optimize
    grid = np.linspace(0.0, math.log(10 / eps), 25)
    vals = p_grok_time_dout(np.full(25, lam), eps, eta0, np.exp(grid))
    k = int(np.argmax(vals))
    res = optimize.minimize_scalar(lambda u: -float(p_grok_time_dout(np.array([lam]), eps, eta0, math.exp(u))[0]),
                                   bounds=(grid[max(k - 1, 0)], grid[min(k + 1, 24)]), method="bounded",
                                   options={"xatol": 1e-7})
    return max(-res.fun, vals[k])


def p_clock_bound(eps, delta, K, rate, t0, gamma0, C, theta, gap0, T):
    """Theorem 5.6 as printed: T + [delta^(1-2 theta) - gap0^(1-2 theta)]_+ / (C^2 (2 theta - 1)) - t0
    - [log((K - 1)/eps) - gamma0]_+ / rate."""
    k = 2 * theta - 1
    with np.errstate(over="ignore", invalid="ignore"):
        rep = np.maximum(delta ** (-k) - gap0 ** (-k), 0) / (C * C * k)
    return T + rep - t0 - np.maximum(np.log((K - 1) / eps) - gamma0, 0) / rate


def p_coupled_bound(eps, kappa, K, rate, t0, gamma0, C, theta, gap0, T):
    """p_clock_bound at delta = eps^kappa."""
    return p_clock_bound(eps, eps ** kappa, K, rate, t0, gamma0, C, theta, gap0, T)


def p_crossover_eps(kappa, theta):
    """Vectorised brute force: p_coupled_bound on the 3001 nodes of log eps in [log 1e-300 / max(kappa, 1), -1e-12]
    for all points (blocks of 64 points), the last change from > 0 to <= 0, then 60 vectorised bisections in log eps."""
    out = np.empty(np.shape(kappa))
    for i in range(0, kappa.size, 64):
        kp, th = kappa[i:i + 64, None], theta[i:i + 64, None]
        lo = math.log(1e-300) / np.maximum(kp, 1.0)
        us = lo + (-1e-12 - lo) * np.linspace(0.0, 1.0, 3001)[None, :]
        pos = p_coupled_bound(np.exp(us), kp, 4, 0.5, 0.0, 0.0, 1.0, th, 1.0, 0.0) > 0
        ch = pos[:, :-1] & ~pos[:, 1:]
        j = 2999 - np.argmax(ch[:, ::-1], axis=1)
        r = np.arange(kp.shape[0])
        u = p_bisect(lambda x: p_coupled_bound(np.exp(x), kp[:, 0], 4, 0.5, 0.0, 0.0, 1.0, th[:, 0], 1.0, 0.0),
                     us[r, j], us[r, j + 1], iters=60)
        out[i:i + 64] = np.exp(u)
    return out


def p_torus_ball(p, n):
    """C_T(p, n) = #{(a, b) in Z_p^2 : d(a) + d(b) < n}, d(a) = min(a, p - a): the definition, counted."""
    d = np.minimum(np.arange(int(p)), int(p) - np.arange(int(p)))
    return int(np.count_nonzero(d[:, None] + d[None, :] < n))


def p_log_binom(n, k):
    return special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)


# per-point (quadrature / root) plain versions, from naive_reference: scipy quad (QAWS) + brentq

def loop(f):
    """A plain version that evaluates one point at a time (a Python loop): ``f(*scalars)``."""
    def run(*arrays):
        bs = np.broadcast_arrays(*[np.asarray(a, dtype=float) for a in arrays])
        flat = [b.reshape(-1) for b in bs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.array([f(*(float(v[i]) for v in flat)) for i in range(flat[0].size)]).reshape(bs[0].shape)
    run.per_point = True
    return run


def _quad_gd_gen(t, lam, eta0):
    """E_MP[(1 - 2 eta0 nu)^{2t}] (+ atom) by one QAWS quadrature (GD-exact gen loss, d_out = 1)."""
    lm, lp = p_edges(lam)
    b = 2 * eta0
    val, _ = integrate.quad(lambda nu: abs(1 - b * nu) ** (2 * t) / (2 * np.pi * lam * nu), lm, lp, weight="alg",
                            wvar=(0.5, 0.5), epsabs=0.0, epsrel=1e-12, limit=200)
    return val + max(0.0, 1 - 1 / lam)


def _quad_noise_gen(t, lam, eta0):
    s = 4 * eta0 * t
    lm, lp = p_edges(lam)
    val, _ = integrate.quad(lambda nu: math.expm1(-s * nu / 2) ** 2 / nu / (2 * np.pi * lam * nu), lm, lp,
                            weight="alg", wvar=(0.5, 0.5), epsabs=0.0, epsrel=1e-12, limit=200)
    return p_phi0(s, lam) + lam * val


# ----------------------------------------------------------------------------------------- the cases

@dataclasses.dataclass
class Case:
    name: str
    args: Callable[[np.random.Generator, int], tuple]  # arrays of length n (or scalars)
    lib: Callable[..., Any]
    plain: Callable[..., Any]
    kind: str = "closed form"  # what the library computes: closed form / rule / root / series
    note: str = ""
    compare: bool = True  # compare lib and plain values (False where they are different quantities)
    max_points: int | None = None  # a search per point: above this many points both are timed on the first
    # max_points and scaled linearly (marked extrapolated; dout_max at 1e6 points would take ~10 min a run)

    @property
    def module(self) -> str:
        return self.name.split(".")[0]


def U(rng, n, lo, hi, log=True):
    return np.exp(rng.uniform(math.log(lo), math.log(hi), n)) if log else rng.uniform(lo, hi, n)


LAM = (1e-3, 1e3)
CASES: list[Case] = [
    # ------------------------------------------------------------------ rmt
    Case("rmt.mp_edges", lambda r, n: (U(r, n, *LAM),), lambda l: RM.mp_edges(l), p_edges),
    Case("rmt.mp_atom", lambda r, n: (U(r, n, *LAM),), RM.mp_atom, lambda l: np.maximum(0, 1 - 1 / l)),
    Case("rmt.mp_density", lambda r, n: (U(r, n, 0.01, 10), U(r, n, 0.01, 10)), RM.mp_density,
         lambda x, l: np.where((x > p_edges(l)[0]) & (x < p_edges(l)[1]),
                               np.sqrt(np.abs((p_edges(l)[1] - x) * (x - p_edges(l)[0]))) / (2 * np.pi * l * x), 0.0)),
    Case("rmt.mp_cdf", lambda r, n: (U(r, n, 0.01, 10), U(r, n, 0.01, 10)), RM.mp_cdf, p_cdf),
    Case("rmt.mp_moment", lambda r, n: (U(r, n, *LAM),), lambda l: RM.mp_moment(5, l),
         lambda l: sum(l ** j * math.comb(5, j) * math.comb(4, j) / (j + 1) for j in range(5)), note="k = 5"),
    Case("rmt.mp_inverse_moment", lambda r, n: (U(r, n, *LAM),), lambda l: RM.mp_inverse_moment(1, l),
         lambda l: np.where(l < 1, 1 / (1 - l), 1 / (l * (l - 1))), note="k = 1"),
    Case("rmt.mp_stieltjes", lambda r, n: (U(r, n, 1e-3, 1e3), U(r, n, *LAM)), RM.mp_stieltjes, p_m),
    Case("rmt.mp_stieltjes2", lambda r, n: (U(r, n, 1e-3, 1e3), U(r, n, *LAM)), RM.mp_stieltjes2, p_m2),
    Case("rmt.mp_stieltjes_nu2", lambda r, n: (U(r, n, 1e-3, 1e3), U(r, n, *LAM)), RM.mp_stieltjes_nu2,
         lambda w, l: p_m(w, l) - w * p_m2(w, l)),
    Case("rmt.mp_laplace_nu", lambda r, n: (U(r, n, 1e-3, 1e4), U(r, n, *LAM)), RM.mp_laplace_nu, p_phi1),
    Case("rmt.mp_log_laplace_nu", lambda r, n: (U(r, n, 1e-3, 1e4), U(r, n, *LAM)), RM.mp_log_laplace_nu,
         lambda s, l: np.log(p_phi1(s, l))),
    Case("rmt.mp_laplace", lambda r, n: (U(r, n, 1e-3, 1e4), U(r, n, *LAM)), RM.mp_laplace, p_phi0, kind="series / rule"),
    Case("rmt.mp_log_laplace", lambda r, n: (U(r, n, 1e-3, 1e4), U(r, n, *LAM)), RM.mp_log_laplace,
         lambda s, l: np.log(p_phi0(s, l)), kind="series / rule"),
    # ------------------------------------------------------------------ linear: losses
    Case("linear.loss_train", lambda r, n: (U(r, n, 1e-2, 1e6), U(r, n, *LAM)), lambda t, l: LI.loss_train(t, l, 0.01),
         lambda t, l: p_phi1(0.04 * t, l), note="eta0 = 0.01"),
    Case("linear.loss_gen", lambda r, n: (U(r, n, 1e-2, 1e6), U(r, n, *LAM)), lambda t, l: LI.loss_gen(t, l, 0.01),
         lambda t, l: p_phi0(0.04 * t, l), kind="series / rule", note="eta0 = 0.01"),
    Case("linear.log_loss_train", lambda r, n: (U(r, n, 1e-2, 1e6), U(r, n, *LAM)),
         lambda t, l: LI.log_loss_train(t, l, 0.01), lambda t, l: np.log(p_phi1(0.04 * t, l))),
    Case("linear.log_loss_gen", lambda r, n: (U(r, n, 1e-2, 1e6), U(r, n, *LAM)),
         lambda t, l: LI.log_loss_gen(t, l, 0.01), lambda t, l: np.log(p_phi0(0.04 * t, l)), kind="series / rule"),
    Case("linear.loss_gen [gamma > 0]", lambda r, n: (U(r, n, 1.0, 1e5), U(r, n, 0.05, 2.0), U(r, n, 1e-6, 1e-2)),
         lambda t, l, g: LI.loss_gen(t, l, 0.01, gamma=g),
         loop(lambda t, l, g: naive_reference.loss(t, l, g, 0.01, "gen")), kind="rule (eq. 14)",
         note="plain: scipy QAWS quadrature per point"),
    Case("linear.loss_train [gamma > 0]", lambda r, n: (U(r, n, 1.0, 1e5), U(r, n, 0.05, 2.0), U(r, n, 1e-6, 1e-2)),
         lambda t, l, g: LI.loss_train(t, l, 0.01, gamma=g),
         loop(lambda t, l, g: naive_reference.loss(t, l, g, 0.01, "train")), kind="rule (eq. 14)",
         note="plain: scipy QAWS quadrature per point"),
    Case("linear.loss_gen [discrete]", lambda r, n: (np.floor(U(r, n, 1.0, 1e5)), U(r, n, 0.05, 2.0)),
         lambda t, l: LI.loss_gen(t, l, 0.01, discrete=True), loop(lambda t, l: _quad_gd_gen(t, l, 0.01)),
         kind="rule (GD)", note="eta0 = 0.01; plain: scipy QAWS quadrature per point"),
    Case("linear.loss_gen_label_noise", lambda r, n: (U(r, n, 1.0, 1e5), U(r, n, 0.05, 2.0)),
         lambda t, l: LI.loss_gen_label_noise(t, l, 0.01, 1.0), loop(lambda t, l: _quad_noise_gen(t, l, 0.01)),
         kind="rule", note="fixed noise, sigma2 = 1; plain: scipy QAWS quadrature per point"),
    Case("linear.loss_train_label_noise", lambda r, n: (U(r, n, 1.0, 1e5), U(r, n, 0.05, 2.0)),
         lambda t, l: LI.loss_train_label_noise(t, l, 0.01, 1.0),
         lambda t, l: p_phi1(0.04 * t, l) + np.maximum(0, 1 - l) + l * (p_phi0(0.04 * t, l) - np.maximum(0, 1 - 1 / l)),
         kind="series / rule", note="fixed noise, sigma2 = 1"),
    Case("linear.loss_two_layer", lambda r, n: (U(r, n, 1.0, 1e5),), lambda t: LI.loss_two_layer(t, 0.5, 0.01, 5, 1.0),
         lambda t: 1.0 / 5 * p_phi1(4 * 0.01 * 0.5 * t / 25, 0.5), note="lam = 0.5, d_out = 5 (lam a scalar)"),
    Case("linear.loss_train_finite", lambda r, n: (U(r, n, 1.0, 1e5),),
         lambda t: LI.loss_train_finite(t, np.linspace(0.1, 3, 50), np.full(50, 0.02), 0.01),
         lambda t: (np.linspace(0.1, 3, 50) * 0.02 * np.exp(-0.04 * np.outer(t, np.linspace(0.1, 3, 50)))).sum(1),
         note="50 eigenvalues"),
    Case("linear.loss_gen_equal_proj", lambda r, n: (U(r, n, 1.0, 1e5),),
         lambda t: LI.loss_gen_equal_proj(t, np.linspace(0.1, 3, 50), 0.01),
         lambda t: np.exp(-0.04 * np.outer(t, np.linspace(0.1, 3, 50))).sum(1) / 50, note="50 eigenvalues"),
    Case("linear.loss_train_late", lambda r, n: (U(r, n, 1e2, 1e6), U(r, n, 0.01, 0.9)),
         lambda t, l: LI.loss_train_late(t, l, 0.01), lambda t, l: p_late_train(t, l, 0.01)),
    Case("linear.loss_gen_late", lambda r, n: (U(r, n, 1e2, 1e6), U(r, n, 0.01, 0.9)),
         lambda t, l: LI.loss_gen_late(t, l, 0.01), lambda t, l: p_late_gen(t, l, 0.01)),
    Case("linear.loss_gen_late_simple", lambda r, n: (U(r, n, 1e2, 1e6), U(r, n, 0.01, 0.9)),
         lambda t, l: LI.loss_gen_late_simple(t, l, 0.01), lambda t, l: p_late_train(t, l, 0.01) / (1 - np.sqrt(l)) ** 2),
    # ------------------------------------------------------------------ linear: accuracy, thresholds, times
    Case("linear.accuracy_from_loss", lambda r, n: (U(r, n, 1e-6, 1.0), U(r, n, 1e-6, 1.0)), LI.accuracy_from_loss,
         p_accuracy),
    Case("linear.loss_threshold", lambda r, n: (U(r, n, 1e-8, 1.0), r.uniform(0.5, 0.99, n)),
         lambda e, lv: LI.loss_threshold(e, level=lv), lambda e, lv: e / (2 * special.erfinv(lv) ** 2)),
    Case("linear.t_star [train]", lambda r, n: (U(r, n, 1e-3, 0.95), U(r, n, 1e-8, 0.1)),
         lambda l, e: LI.t_star("train", l, e, 0.01), lambda l, e: p_t_star("train", l, e, 0.01), kind="root",
         note="plain: 80 vectorised bisections on the closed form"),
    Case("linear.t_star [gen]", lambda r, n: (U(r, n, 1e-3, 0.95), U(r, n, 1e-8, 0.1)),
         lambda l, e: LI.t_star("gen", l, e, 0.01), lambda l, e: p_t_star("gen", l, e, 0.01), kind="root",
         note="plain: 80 vectorised bisections on the closed form"),
    Case("linear.grok_time", lambda r, n: (U(r, n, 1e-3, 0.95), U(r, n, 1e-8, 0.1)),
         lambda l, e: LI.grok_time(l, e, 0.01),
         lambda l, e: p_t_star("gen", l, e, 0.01) - p_t_star("train", l, e, 0.01), kind="root",
         note="plain: two vectorised bisections"),
    Case("linear.grok_time [gamma > 0]", lambda r, n: (U(r, n, 0.05, 0.95), U(r, n, 1e-8, 1e-3)),
         lambda l, g: LI.grok_time(l, 1e-3, 0.01, gamma=g, level=0.95),
         loop(lambda l, g: naive_reference.grok_time(l, g, 1e-3, 0.01, 1.0, 0.95)[2]), kind="root on the rule",
         note="plain: QAWS + brentq per point (naive_reference)"),
    Case("linear.wd_asymptotes", lambda r, n: (U(r, n, *LAM), U(r, n, 1e-6, 1.0)), lambda l, g: LI.wd_asymptotes(l, g)[1],
         lambda l, g: g ** 2 / 8 * p_m2(g / 2, l), note="gen component"),
    Case("linear.wd_asymptotes [train, lam, gamma in 1e-30..1e30]", lambda r, n: (U(r, n, 1e-30, 1e30), U(r, n, 1e-30, 1e30)),
         lambda l, g: LI.wd_asymptotes(l, g)[0], lambda l, g: g ** 2 / 8 * (p_m(g / 2, l) - g / 2 * p_m2(g / 2, l)),
         note="train component; plain: m - g m2 (cancels for lam > 1)"),
    Case("linear.wd_asymptotes_small_gamma", lambda r, n: (U(r, n, 0.01, 0.9), U(r, n, 1e-6, 1e-2)),
         lambda l, g: LI.wd_asymptotes_small_gamma(l, g)[1], lambda l, g: g ** 2 / (8 * (1 - l) ** 3), note="gen"),
    Case("linear.wd_gamma_max", lambda r, n: (U(r, n, 0.01, 0.99), U(r, n, 1e-6, 1e-2)), LI.wd_gamma_max,
         lambda l, e: np.exp(p_bisect(lambda u: np.log(e / 4) - np.log(np.exp(u) ** 2 / 8 * p_m2(np.exp(u) / 2, l)),
                                      np.full(l.shape, -30.0), np.full(l.shape, 5.0))), kind="root",
         note="plain: 80 vectorised bisections"),
    Case("linear.t_star_train_lambertw", lambda r, n: (U(r, n, 1e-3, 0.95), U(r, n, 1e-8, 0.1)),
         lambda l, e: LI.t_star_train_lambertw(l, e, 0.01), lambda l, e: p_lambertw(l, e, 0.01, False)),
    Case("linear.t_star_gen_lambertw", lambda r, n: (U(r, n, 1e-3, 0.95), U(r, n, 1e-8, 0.1)),
         lambda l, e: LI.t_star_gen_lambertw(l, e, 0.01), lambda l, e: p_lambertw(l, e, 0.01, True)),
    Case("linear.grok_time_lambertw", lambda r, n: (U(r, n, 1e-3, 0.95), U(r, n, 1e-8, 0.1)),
         lambda l, e: LI.grok_time_lambertw(l, e, 0.01),
         lambda l, e: p_lambertw(l, e, 0.01, True) - p_lambertw(l, e, 0.01, False)),
    Case("linear.grok_time_asymptotic", lambda r, n: (U(r, n, 1e-3, 0.95),), lambda l: LI.grok_time_asymptotic(l, 0.01),
         lambda l: -np.log(1 - np.sqrt(l)) / (2 * 0.01 * (1 - np.sqrt(l)) ** 2)),
    Case("linear.grok_time_near_one", lambda r, n: (U(r, n, 0.5, 0.999),), lambda l: LI.grok_time_near_one(l, 0.01),
         lambda l: np.log(4 / (1 - l) ** 2) / (0.01 * (1 - l) ** 2)),
    Case("linear.grok_time_wd_paper", lambda r, n: (U(r, n, 1e-3, 0.95),), lambda l: LI.grok_time_wd_paper(l, 0.01),
         lambda l: np.log1p(np.sqrt(l)) / (2 * 0.01 * (1 - np.sqrt(l)) ** 2)),
    Case("linear.t_star_gen_critical", lambda r, n: (U(r, n, 1e-8, 0.1),), lambda e: LI.t_star_gen_critical(e, 0.01),
         lambda e: 4 / (np.pi * 0.01 * e ** 2)),
    Case("linear.dout_max", lambda r, n: (U(r, n, 0.05, 1.0), U(r, n, 1e-6, 1e-2)),
         lambda l, e: LI.dout_max(l, e, 0.01).dt_max, loop(lambda l, e: p_dout_max(l, e, 0.01)), kind="search",
         note="dt_max; plain: the 25-node scan + scipy bounded minimize_scalar per point on 80-bisection crossing "
              "times", max_points=1000),
    Case("linear.init_scale_factor", lambda r, n: (U(r, n, 1e-3, 1e3),), LI.init_scale_factor, lambda a: (1 + a * a) / 2),
    Case("linear.effective_eps", lambda r, n: (U(r, n, 1e-8, 1.0), U(r, n, 1e-3, 1e3)), LI.effective_eps,
         lambda e, a: 2 * e / (1 + a * a)),
    Case("linear.gamma_paper_convention", lambda r, n: (U(r, n, 1e-8, 1.0),),
         lambda g: LI.gamma_paper_convention(g, d_out=5, wd_convention="torch"), lambda g: 5 * g),
    # ------------------------------------------------------------------ clocks
    Case("clocks.ce_tail_bound", lambda r, n: (U(r, n, 1e-3, 1e2),), lambda g: CL.ce_tail_bound(g, 97),
         lambda g: np.log1p(96 * np.exp(-g)), note="K = 97"),
    Case("clocks.ce_tail_bound_linear", lambda r, n: (U(r, n, 1e-3, 1e2),), lambda g: CL.ce_tail_bound_linear(g, 97),
         lambda g: 96 * np.exp(-g)),
    Case("clocks.gap_for_loss_level", lambda r, n: (U(r, n, 1e-8, 1.0),), lambda e: CL.gap_for_loss_level(e, 97),
         lambda e: np.log(96 / e)),
    Case("clocks.ce_smoothness_constant", lambda r, n: (U(r, n, 1e-3, 1e3),), CL.ce_smoothness_constant,
         lambda b: b * b / 2),
    Case("clocks.binary_pl_ratio", lambda r, n: (r.uniform(-30, 30, n),), CL.binary_pl_ratio,
         lambda m: (1 / (1 + np.exp(m))) ** 2 / np.log1p(np.exp(-m))),
    Case("clocks.log_binary_pl_ratio", lambda r, n: (r.uniform(-30, 30, n),), CL.log_binary_pl_ratio,
         lambda m: np.log((1 / (1 + np.exp(m))) ** 2 / np.log1p(np.exp(-m)))),
    Case("clocks.fast_clock_bound", lambda r, n: (U(r, n, 1e-8, 1.0), U(r, n, 1e-3, 10)),
         lambda e, c: CL.fast_clock_bound(e, 97, c), lambda e, c: np.maximum(np.log(96 / e), 0) / c),
    Case("clocks.fast_clock_loss_bound", lambda r, n: (U(r, n, 1e-3, 1e3), U(r, n, 1e-3, 10)),
         lambda t, c: CL.fast_clock_loss_bound(t, 97, c), lambda t, c: 96 * np.exp(-c * t)),
    Case("clocks.contraction_clock_bound", lambda r, n: (U(r, n, 1e-8, 1.0), U(r, n, 1e-3, 0.9)),
         lambda e, rho: CL.contraction_clock_bound(e, 1.0, rho), lambda e, rho: np.ceil(np.log(1.0 / e) / rho)),
    Case("clocks.kl_decay_exponent", lambda r, n: (r.uniform(0.55, 0.99, n),), CL.kl_decay_exponent,
         lambda th: 1 / (2 * th - 1)),
    Case("clocks.representation_clock_exponent", lambda r, n: (r.uniform(0.55, 0.99, n),),
         CL.representation_clock_exponent, lambda th: 2 * th - 1),
    Case("clocks.kl_differential_bounds", lambda r, n: (U(r, n, 1e-6, 1.0), r.uniform(0.55, 0.99, n)),
         lambda d, th: CL.kl_differential_bounds(d, 0.5, 2.0, th), p_kl_differential,
         note="both sides (the function returns both); compared: lower"),
    Case("clocks.kl_gap_solution", lambda r, n: (U(r, n, 1e-3, 1e6), r.uniform(0.55, 0.99, n)),
         lambda t, th: CL.kl_gap_solution(t, 1.0, 1.0, th), lambda t, th: p_kl_gap(t, 1.0, 1.0, th)),
    Case("clocks.log_kl_gap_solution", lambda r, n: (U(r, n, 1e-3, 1e6), r.uniform(0.55, 0.99, n)),
         lambda t, th: CL.log_kl_gap_solution(t, 1.0, 1.0, th), lambda t, th: np.log(p_kl_gap(t, 1.0, 1.0, th))),
    Case("clocks.kl_gap_solution_pl", lambda r, n: (U(r, n, 1e-3, 1e3),), lambda t: CL.kl_gap_solution_pl(t, 1.0, 1.0),
         lambda t: np.exp(-t)),
    Case("clocks.kl_gap_bounds", lambda r, n: (U(r, n, 1e-3, 1e6), r.uniform(0.55, 0.99, n)),
         lambda t, th: CL.kl_gap_bounds(t, 1.0, 0.5, 2.0, th), lambda t, th: (p_kl_gap(t, 1.0, 4.0, th),
                                                                                p_kl_gap(t, 1.0, 0.25, th)),
         note="both sides (the function returns both); compared: lower"),
    Case("clocks.kl_clock_time", lambda r, n: (U(r, n, 1e-6, 0.9), r.uniform(0.55, 0.99, n)),
         lambda d, th: CL.kl_clock_time(d, 1.0, 1.0, th), lambda d, th: p_kl_time(d, 1.0, 1.0, th)),
    Case("clocks.representation_clock_bounds", lambda r, n: (U(r, n, 1e-6, 0.9), r.uniform(0.55, 0.99, n)),
         lambda d, th: CL.representation_clock_bounds(d, 1.0, 0.5, 2.0, th),
         lambda d, th: (p_kl_time(d, 1.0, 4.0, th), p_kl_time(d, 1.0, 0.25, th)),
         note="both sides (the function returns both); compared: lower"),
    Case("clocks.kl_exponent_power", lambda r, n: (U(r, n, 2.1, 100),), CL.kl_exponent_power, lambda q: 1 - 1 / q),
    Case("clocks.kl_rate_power", lambda r, n: (U(r, n, 2.1, 100),), CL.kl_rate_power, lambda q: q * q),
    Case("clocks.zero_one_loss_threshold", lambda r, n: (np.floor(U(r, n, 1, 1e6)),), CL.zero_one_loss_threshold,
         lambda k: np.log(2.0) / k),
    Case("clocks.kl_exponent_depth", lambda r, n: (np.floor(U(r, n, 2, 1e3)),), CL.kl_exponent_depth,
         lambda d: 1.0 - 1.0 / (2.0 * d)),
    Case("clocks.kl_rate_depth", lambda r, n: (np.floor(U(r, n, 2, 1e3)), np.floor(U(r, n, 1, 1e3))),
         CL.kl_rate_depth, lambda d, m: m * d * (2.0 / m) ** (2.0 - 1.0 / d)),
    Case("clocks.weight_decay_tail_rate", lambda r, n: (U(r, n, 1e-3, 10),), lambda mu: CL.weight_decay_tail_rate(mu, 3),
         lambda mu: 2 * mu * 3, note="depth 3"),
    Case("clocks.separation_ratio", lambda r, n: (U(r, n, 1, 1e4), U(r, n, 1, 1e4)), CL.separation_ratio,
         lambda a, b: a / b),
    Case("clocks.clock_mismatch_lower_bound", lambda r, n: (U(r, n, 1e-8, 1.0), U(r, n, 1e-6, 0.9), r.uniform(0.55, 0.99, n)),
         lambda e, d, th: CL.clock_mismatch_lower_bound(e, d, 4, 0.5, 0.0, 0.0, 1.0, th, 1.0, 0.0),
         lambda e, d, th: p_clock_bound(e, d, 4, 0.5, 0.0, 0.0, 1.0, th, 1.0, 0.0), note="K = 4, c = 0.5, C_KL = gap0 = 1"),
    Case("clocks.coupled_mismatch_lower_bound", lambda r, n: (U(r, n, 1e-8, 1.0), U(r, n, 0.1, 3.0), r.uniform(0.55, 0.99, n)),
         lambda e, k, th: CL.coupled_mismatch_lower_bound(e, k, 4, 0.5, 0.0, 0.0, 1.0, th, 1.0, 0.0),
         lambda e, k, th: p_coupled_bound(e, k, 4, 0.5, 0.0, 0.0, 1.0, th, 1.0, 0.0), note="K = 4, c = 0.5, C_KL = gap0 = 1"),
    Case("clocks.crossover_eps", lambda r, n: (U(r, n, 0.2, 3.0), r.uniform(0.55, 0.95, n)),
         lambda k, th: CL.crossover_eps(k, 4, 0.5, 0.0, 0.0, 1.0, th, 1.0, 0.0), p_crossover_eps, kind="search",
         note="K = 4, c = 0.5, C_KL = gap0 = 1; plain: the 3001-node scan of the printed bound for all points + 60 "
              "vectorised bisections", max_points=100000),
    # ------------------------------------------------------------------ kramers
    Case("kramers.decay_rate", lambda r, n: (U(r, n, 1e-6, 1.0),), KR.decay_rate, lambda lam: 2 * lam),
    Case("kramers.implicit_bias_time", lambda r, n: (U(r, n, 1.5, 1e3), U(r, n, 1e-6, 1.0)), KR.implicit_bias_time,
         lambda s, lam: np.log(s) / (2 * lam)),
    Case("kramers.eyring_kramers_time", lambda r, n: (U(r, n, 0.1, 10), U(r, n, 0.1, 10)),
         lambda dF, T: KR.eyring_kramers_time(np.diag([2.0, 3.0]), np.diag([-1.0, 2.0]), dF, T),
         lambda dF, T: 2 * np.pi / 1.0 * np.sqrt(2.0 / 6.0) * np.exp(dF / T), note="2-d Hessians fixed"),
    Case("kramers.log_eyring_kramers_time", lambda r, n: (U(r, n, 0.1, 10), U(r, n, 0.1, 10)),
         lambda dF, T: KR.log_eyring_kramers_time(np.diag([2.0, 3.0]), np.diag([-1.0, 2.0]), dF, T),
         lambda dF, T: np.log(2 * np.pi * np.sqrt(2.0 / 6.0)) + dF / T),
    Case("kramers.eyring_kramers_rate", lambda r, n: (U(r, n, 0.1, 10), U(r, n, 0.1, 10)),
         lambda dF, T: KR.eyring_kramers_rate(np.diag([2.0, 3.0]), np.diag([-1.0, 2.0]), dF, T),
         lambda dF, T: np.exp(-dF / T) / (2 * np.pi * np.sqrt(2.0 / 6.0))),
    Case("kramers.kramers_time_1d", lambda r, n: (U(r, n, 0.1, 10), U(r, n, 0.1, 10)),
         lambda dF, T: KR.kramers_time_1d(8.0, -4.0, dF, T), lambda dF, T: 2 * np.pi / np.sqrt(32.0) * np.exp(dF / T)),
    Case("kramers.log_kramers_time_1d", lambda r, n: (U(r, n, 0.1, 10), U(r, n, 0.1, 10)),
         lambda dF, T: KR.log_kramers_time_1d(8.0, -4.0, dF, T), lambda dF, T: np.log(2 * np.pi / np.sqrt(32.0)) + dF / T),
    Case("kramers.continuity_correction_shift", lambda r, n: (U(r, n, 1e-3, 5), U(r, n, 1e-4, 0.1)),
         KR.continuity_correction_shift, lambda T, dt: 0.5826 * np.sqrt(2 * T * dt)),
    Case("kramers.arrhenius_barrier", lambda r, n: (U(r, n, 1.0, 1e6),), KR.arrhenius_barrier, np.log),
    Case("kramers.t_eff_sgd", lambda r, n: (U(r, n, 1e-4, 1.0), U(r, n, 1e-3, 10)), lambda e, tr: KR.t_eff_sgd(e, tr, 32),
         lambda e, tr: e * tr / 64),
    Case("kramers.sgd_stationary_temperature_1d", lambda r, n: (U(r, n, 1e-4, 0.1), U(r, n, 1e-3, 10)),
         lambda e, s2: KR.sgd_stationary_temperature_1d(e, s2, 32, 1.0), lambda e, s2: e * s2 / (32 * (2 - e))),
    Case("kramers.t_eff_fullbatch_heuristic", lambda r, n: (U(r, n, 1e-4, 1.0), U(r, n, 1e-3, 100)),
         lambda e, tr: KR.t_eff_fullbatch_heuristic(e, tr, 0.5), lambda e, tr: 0.5 * e * e * tr),
    Case("kramers.ridge_grok_time_asymptotic", lambda r, n: (U(r, n, 1.0, 10), U(r, n, 1e-3, 1.0)),
         lambda nn, lam: KR.ridge_grok_time_asymptotic(nn, 1e-3, lam), lambda nn, lam: np.log(nn / 2e-3) / (4 * lam)),
    Case("kramers.kramers_ratio_first_order_estimate", lambda r, n: (U(r, n, 1e-3, 10),),
         lambda T: KR.kramers_ratio_first_order_estimate((8.0, -24.0, 24.0), (-4.0, 0.0, 24.0), T),
         lambda T: 1 + T * (5 * 24.0**2 / (24 * 8.0**3) - 24.0 / (8 * 8.0**2) + 24.0 / (8 * 4.0**2)),
         note="F = (x^2 - 1)^2 (derivatives fixed), T swept"),
    Case("kramers.feature_kernel_norm", lambda r, n: (np.floor(U(r, n, 1, 1e6)), r.uniform(0.0, 0.5, n)),
         lambda N, al: KR.feature_kernel_norm(N, 97, al), lambda N, al: N ** (-2 * al) * (1 + 2 * 97) / 3,
         note="p = 97, a_std = N^-1/2"),
    Case("kramers.readout_kernel_norm", lambda r, n: (np.floor(U(r, n, 1, 1e6)), np.floor(U(r, n, 2, 1e4)),
                                                    r.uniform(0.0, 0.5, n)), KR.readout_kernel_norm,
         lambda N, p, al: N ** (1 - 2 * al) * (p * p + 2 * p * (math.sqrt(3) / 2 + math.pi / 3 - 1)
                                               + (1 + math.pi / 3 - math.sqrt(3))) / (2 * math.pi * p)),
    Case("kramers.feature_timescale_estimate", lambda r, n: (np.floor(U(r, n, 1, 1e6)), r.uniform(0.0, 0.5, n)),
         KR.feature_timescale_estimate, lambda N, al: N ** (al + 0.5), note="a_std = N^-1/2"),
    Case("kramers.n_train", lambda r, n: (np.floor(U(r, n, 2, 1e4)), r.uniform(0.25, 0.75, n)), KR.n_train,
         lambda p, rho: np.floor(rho * p * p).astype(np.int64)),
    Case("kramers.separation_exponent", lambda r, n: (r.uniform(0.0, 0.5, n),),
         lambda al: KR.separation_exponent(al, "kernel"), lambda al: 2 - al, note='measure "kernel" (2 - alpha)'),
    Case("kramers.kernel_rate_factor", lambda r, n: (r.integers(1, 10**6, n),), lambda m: KR.kernel_rate_factor(m, "mean"),
         lambda m: 1 / m, note='loss_norm "mean"'),
    Case("kramers.spectral_delay_ratio", lambda r, n: (U(r, n, 1e-4, 0.9),),
         lambda eta: KR.spectral_delay_ratio(np.linspace(0.1, 1.0, 10), eta),
         lambda eta: np.log(np.abs(1 - eta * 1.0)) / np.log(np.abs(1 - eta * 0.1)),
         note="10 eigenvalues in [0.1, 1] fixed, eta swept"),
    Case("kramers.delay_scaling_estimate", lambda r, n: (np.floor(U(r, n, 1, 1e6)), r.uniform(0.0, 0.5, n)),
         lambda N, al: KR.delay_scaling_estimate("separation", N=N, alpha=al, measure="kernel"),
         lambda N, al: N ** (2 - al), note='mechanism "separation", measure "kernel"'),
    # ------------------------------------------------------------------ coverage
    Case("coverage.expected_uncovered", lambda r, n: (r.integers(0, 97 * 97 + 1, n),),
         lambda m: CO.expected_uncovered(97, 5, m),
         lambda m: 9409 * np.exp(p_log_binom(9409.0 - 41, m) - p_log_binom(9409.0, m)),
         note="p = 97, n = 5, torus (s = 41 for every point); plain: log-gamma"),
    Case("coverage.expected_uncovered_paper", lambda r, n: (r.integers(0, 97 * 97 + 1, n),),
         lambda m: CO.expected_uncovered_paper(97, 5, m), lambda m: 9409 * (1 - 41 / 9409) ** m),
    Case("coverage.expected_uncovered_paper (over p)", lambda r, n: (r.integers(50, 150, n),),
         lambda p: CO.expected_uncovered_paper(p, 5, 2100), lambda p: p * p * (1 - 41 / (p * p)) ** 2100,
         note="100 moduli, n = 5, m = 2100: the engine once per modulus"),
    Case("coverage.full_coverage_probability_lower_bound", lambda r, n: (r.integers(0, 97 * 97 + 1, n),),
         lambda m: CO.full_coverage_probability_lower_bound(97, 5, m),
         lambda m: np.maximum(0, 1 - 9409 * np.exp(p_log_binom(9409.0 - 41, m) - p_log_binom(9409.0, m)))),
    Case("coverage.ball_size", lambda r, n: (r.integers(1, 10**4, n),), CO.ball_size, lambda nn: 2 * nn * nn - 2 * nn + 1,
         kind="exact integer"),
    Case("coverage.ball_size_torus", lambda r, n: (r.integers(2, 200, n), r.integers(1, 400, n)), CO.ball_size_torus,
         loop(p_torus_ball), kind="exact integer", note="plain: the count of the definition, O(p^2) per point"),
    Case("coverage.required_train_fraction", lambda r, n: (r.integers(2, 2**14 + 1, n), r.integers(1, 30, n)),
         CO.required_train_fraction, lambda p, nn: np.log(p * p) / (2 * nn * nn - 2 * nn + 1), note="method paper"),
    # ------------------------------------------------------------------ spectral
    Case("spectral.weight_decay_to_penalty_coefficient", lambda r, n: (U(r, n, 1e-6, 1.0),),
         lambda mu: SP.weight_decay_to_penalty_coefficient(mu, 3), lambda mu: mu * 3 / 2),
    Case("spectral.imbalance_decay", lambda r, n: (U(r, n, 1e-3, 1e3),), lambda t: SP.imbalance_decay(1.0, 0.1, t),
         lambda t: np.exp(-0.2 * t)),
    Case("spectral.free_direction_collapse_time", lambda r, n: (U(r, n, 1e-3, 1e2), r.uniform(0.1, 1.9, n)),
         lambda s0, p: SP.free_direction_collapse_time(s0, 0.1, p), lambda s0, p: s0 ** (2 - p) / (0.1 * p * (2 - p))),
    Case("spectral.covering_number_ball_bounds", lambda r, n: (U(r, n, 1.0, 10),),
         lambda R: SP.covering_number_ball_bounds(R, 0.1, 10)[1], lambda R: (1 + 2 * R / 0.1) ** 10, note="upper"),
    Case("spectral.log_covering_number_ball_bounds", lambda r, n: (U(r, n, 1.0, 10),),
         lambda R: SP.log_covering_number_ball_bounds(R, 0.1, 10)[1], lambda R: 10 * np.log1p(2 * R / 0.1)),
    Case("spectral.log_covering_number_ball_bounds, R/r across 1", lambda r, n: (U(r, n, 1e-3, 1e3),),
         lambda R: SP.log_covering_number_ball_bounds(R, 1.0, 10)[1], lambda R: 10 * np.log1p(2 * R / 1.0),
         note="r = 1: the lower bound's careful forms on the points with 1 < R/r <= 2"),
    Case("spectral.robust_generalization_bound", lambda r, n: (U(r, n, 1e-3, 1.0), U(r, n, 100, 1e6)),
         lambda e, nn: SP.robust_generalization_bound(e, 100, nn, 1.0, 0.05),
         lambda e, nn: e + np.sqrt((200 * np.log(2) + 2 * np.log(20)) / nn)),
    Case("spectral.schatten_quasi_norm", lambda r, n: (r.uniform(0.1, 3.0, n),),
         lambda p: SP.schatten_quasi_norm(singular_values=np.linspace(3.0, 0.1, 20), p=p),
         lambda p: (np.linspace(3.0, 0.1, 20)[None, :] ** p[:, None]).sum(1) ** (1 / p), note="20 singular values, p swept"),
    # ------------------------------------------------------------------ repulsion
    Case("repulsion.eigengap", lambda r, n: (np.sort(U(r, n * 5, 1e-3, 1e3).reshape(n, 5), axis=1)[:, ::-1],),
         RE.eigengap, lambda e: e[:, 1] / e[:, 2], note="top-5 eigenvalues of n windows"),
]

NOT_SWEPT = {
    "rmt.mp_expect / mp_log_expect_exp": "the user's integrand (a Python callable) and a scalar lam: adaptive QAWS, the "
                                         "reference every fixed rule is measured against",
    "linear.grok_time_grid": "the phase-diagram benchmark (bench_phase_diagram.py)",
    "linear.fit_inverse_square, modular_lambda, fig*_table": "a fit to data, an exact rational, figure tables",
    "clocks (data)": "logit_gaps, cross_entropy, relu maps, estimators on records (first_hitting_time, classifier_clock, "
                     "...), Fourier energies: functions of data arrays, vectorised over the data",
    "kramers (data and integers)": "kernels, Jacobians, ridge flows, milestones (data); param_count (exact Python "
                                   "integers); mfpt_*_exact (a user's potential, quadrature/PDE per call); "
                                   "spectral_delay_ratio's eigs (one spectrum: swept over eta)",
    "coverage (data)": "tables, masks, splits, ceilings of a split (accuracy_ceiling*: functions of a split's data; "
                       "accuracy_ceiling broadcasts over the radius n); required_train_fraction's exact methods (a "
                       "bisection on the integer m per radius, in lockstep); expected_uncovered over p (the exact "
                       "engine once per modulus)",
    "spectral (data)": "stable ranks, penalties and drifts of matrices; eckart_young_rank (integer)",
    "repulsion (data)": "the Tian model, features, Gram matrices, detectors on training records",
}


# ----------------------------------------------------------------------------------------- timing

def _first(x):
    return x[0] if isinstance(x, tuple) else x


def _scalar_args(args):
    return tuple(float(np.asarray(a).reshape(-1)[0]) if np.ndim(a) == 1 else
                 (np.asarray(a)[:1] if np.ndim(a) > 1 else a) for a in args)


def _time(fn, args, repeats):
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args)
        ts.append(time.perf_counter() - t0)
    return ts


def run_case(case: Case, sizes, repeats: int, loop_points: int, seed: int) -> dict:
    out = {"name": case.name, "kind": case.kind, "note": case.note, "sizes": {}}
    per_point = getattr(case.plain, "per_point", False)
    plain_per_point = None  # seconds a point of the plain version took at the previous size
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in sizes:
            rng = np.random.default_rng(seed)
            args = case.args(rng, n)
            n_timed = n
            if case.max_points is not None and n > case.max_points:  # both timed on the first max_points, scaled
                n_timed = case.max_points
                args = tuple(a[:n_timed] if np.ndim(a) >= 1 else a for a in args)
            m = min(n_timed, loop_points) if per_point else n_timed
            if not per_point and plain_per_point is not None and plain_per_point * n > 20.0:
                # a vectorised plain version that would take over 20 s a run (the bisections at 1e6 points):
                # timed on the previous size's point count and scaled linearly (it is linear in n)
                m = max(k for k in sizes if k < n)
            pargs = tuple(a[:m] if np.ndim(a) >= 1 else a for a in args)
            t_warm = _time(case.lib, args, 1)[0] + _time(case.plain, pargs, 1)[0]  # warm-up (rule caches, imports)
            # fast calls get more runs (>= 25, about 0.3 s in all): one preemption on the shared machine
            # otherwise decides a median of five millisecond runs
            reps = repeats if t_warm > 0.05 else max(repeats, min(101, int(0.3 / max(t_warm, 1e-6)) | 1, 25))
            tl, tp = [], []
            for k in range(reps):  # interleaved, the order alternating
                if k % 2 == 0:
                    tl += _time(case.lib, args, 1)
                    tp += _time(case.plain, pargs, 1)
                else:
                    tp += _time(case.plain, pargs, 1)
                    tl += _time(case.lib, args, 1)
            lib_s, plain_s = statistics.median(tl) * (n / n_timed), statistics.median(tp) * (n / m)
            plain_per_point = plain_s / n
            rec = {"lib_s": lib_s, "plain_s": plain_s, "ratio": lib_s / plain_s, "repeats": reps,
                   "lib_points_per_s": n / lib_s, "plain_extrapolated_from": m if m < n else None,
                   "lib_extrapolated_from": n_timed if n_timed < n else None,
                   "lib_range_s": [min(tl) * n / n_timed, max(tl) * n / n_timed],
                   "plain_range_s": [min(tp) * n / m, max(tp) * n / m]}
            if case.compare:
                a = np.asarray(_first(case.lib(*pargs)), dtype=float).reshape(-1)
                b = np.asarray(_first(case.plain(*pargs)), dtype=float).reshape(-1)
                both = np.isfinite(a) & np.isfinite(b) & (b != 0)
                rec["max_rel_diff"] = float(np.max(np.abs(a[both] / b[both] - 1))) if both.any() else None
                rec["non_finite_mismatch"] = int(np.sum(np.isfinite(a) != np.isfinite(b)))
            out["sizes"][str(n)] = rec
            print(f"  {case.name:48s} n={n:>8d}  lib {lib_s:9.4f} s  plain {plain_s:9.4f} s"
                  f"{' (extrap.)' if m < n else ''}  ratio {lib_s / plain_s:7.3f}", flush=True)
        sargs = _scalar_args(case.args(np.random.default_rng(seed), 1))
        t = timeit.Timer(lambda: case.lib(*sargs))
        out["scalar_call_us"] = statistics.median(t.repeat(repeat=7, number=200)) / 200 * 1e6
    return out


# ----------------------------------------------------------------------------------------- where plain loses digits

def digits_demo() -> list[dict]:
    """The plain formulas against mpmath where they lose digits, and the library at the same points (the references
    of tests/accuracy: the CDF's antiderivative in the angle, Phi_0 by quadrature in the angle, 40 digits)."""
    import mpmath as mp

    sys.path.insert(0, str(ROOT / "tests" / "accuracy"))
    import cases_rmt  # noqa: E402 -- the accuracy harness's mpmath references

    rows = []
    with mp.workdps(40):
        for lam, frac in ((1e-20, 0.3), (1e-12, 0.3), (1e-8, 0.3), (1e-3, 0.3), (0.5, 0.3), (0.999999, 0.3)):
            x = float(cases_rmt._nu_in_support(lam, frac))
            ref = cases_rmt.ref_cdf(x, lam)
            rows.append({"what": f"mp_cdf(x, lam = {lam:g}), x at {frac} of the support", "ref": float(ref),
                         "plain_rel_err": float(abs((mp.mpf(float(p_cdf(np.array(x), np.array(lam)))) - ref) / ref)),
                         "lib_rel_err": float(abs((mp.mpf(float(RM.mp_cdf(x, lam))) - ref) / ref))})
        for lam, s in ((0.3, 98.0), (0.7, 1124.0), (0.9, 1.9e4), (0.25, 400.0), (0.5, 1e3), (1e-30, 2.0)):
            ref = mp.exp(cases_rmt.ref_log_phi0(s, lam))
            a = (1 - math.sqrt(lam)) ** 2 * s
            rows.append({"what": f"Phi_0(s = {s:g}; lam = {lam:g}), s (1 - sqrt(lam))^2 = {a:.3g}", "ref": float(ref),
                         "plain_rel_err": float(abs((mp.mpf(float(p_phi0(np.array(s), np.array(lam)))) - ref) / ref)),
                         "lib_rel_err": float(abs((mp.mpf(float(RM.mp_laplace(s, lam))) - ref) / ref))})
    return rows


# ----------------------------------------------------------------------------------------- output

def machine() -> dict:
    from grokclocks.verification import _cpu_model

    return {"cpu_model": _cpu_model(), "logical_cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "platform": platform.platform()}


def loadavg() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:  # pragma: no cover - not Linux
        return []


def render(res: dict) -> str:
    """The Markdown table of docs/benchmarks.md's core section (ratio = library time / plain time)."""
    lines = ["| function | library computes | 1e3: lib / plain | 1e5: lib / plain (ratio) | 1e6: lib | scalar call | "
             "max rel. diff. | note |", "|---|---|---|---|---|---|---|---|"]
    for c in res["cases"]:
        sz = c["sizes"]

        def cell(n, full):
            r = sz.get(n)
            if r is None:
                return "–"
            ex = " (extrap.)" if r["plain_extrapolated_from"] else ""
            if full:
                return f"{r['lib_s'] * 1e3:.3g} / {r['plain_s'] * 1e3:.3g} ms{ex} (**{r['ratio']:.2f}**)"
            return f"{r['lib_s'] * 1e3:.3g} / {r['plain_s'] * 1e3:.3g} ms{ex}"

        big = sz.get("1000000")
        diff = sz.get("100000", sz.get("1000", {})).get("max_rel_diff")
        lines.append(f"| `{c['name']}` | {c['kind']} | {cell('1000', False)} | {cell('100000', True)} | "
                     f"{(big['lib_s'] if big else float('nan')):.3g} s | {c['scalar_call_us']:.0f} µs | "
                     f"{'–' if diff is None else f'{diff:.1e}'} | {c['note']} |")
    return "\n".join(lines)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,100000,1000000")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--loop-points", type=int, default=200)
    ap.add_argument("--only", default=None, help="modules, comma separated (rmt,linear,...)")
    ap.add_argument("--match", default=None, help="substrings of the function names, comma separated")
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "core.json")
    ap.add_argument("--render", action="store_true", help="write the Markdown table of an existing results file "
                    "into docs/benchmarks.md (between its core-table markers; printed if they are absent)")
    ap.add_argument("--merge", action="store_true", help="replace the re-run cases in an existing results file")
    ap.add_argument("--digits", action="store_true", help="recompute only the digits table of an existing file")
    args = ap.parse_args(argv)
    if args.render:
        table = render(json.loads(args.out.read_text()))
        page = ROOT / "docs" / "benchmarks.md"
        text = page.read_text() if page.exists() else ""
        start, end = "<!-- core-table:start -->", "<!-- core-table:end -->"
        if start in text and end in text:  # the generated block of the page, nothing else of it
            head, rest = text.split(start, 1)
            page.write_text(head + start + "\n" + table + "\n" + end + rest.split(end, 1)[1])
            print(f"wrote the table into {page}")
        else:
            print(table)
        return {}
    if args.digits:
        res = json.loads(args.out.read_text())
        res["digits"] = digits_demo()
        args.out.write_text(json.dumps(res, indent=1) + "\n")
        print(json.dumps(res["digits"], indent=1))
        return res
    if args.repeats < 5:
        ap.error("--repeats must be >= 5 (medians of at least five interleaved runs)")
    sizes = [int(x) for x in args.sizes.split(",")]
    cases = [c for c in CASES if (args.only is None or c.module in args.only.split(","))
             and (args.match is None or any(m in c.name for m in args.match.split(",")))]
    res = {"benchmark": "core throughput vs plain numpy/scipy versions (benchmarks/bench_core.py)",
           "machine": machine(), "load_before": loadavg(), "sizes": sizes, "repeats": args.repeats,
           "method": "median of interleaved runs (lib, plain alternating; >= 5, >= 25 for calls under 50 ms), "
                     "time.perf_counter; a per-point plain "
                     f"version timed on {args.loop_points} points and scaled linearly", "cases": [],
           "not_swept": NOT_SWEPT}
    t0 = time.time()
    for c in cases:
        rec = run_case(c, sizes, args.repeats, args.loop_points, args.seed)
        rec["load"] = loadavg()
        res["cases"].append(rec)
    res["digits"] = digits_demo()
    res["load_after"] = loadavg()
    res["wall_s"] = time.time() - t0
    if args.merge and args.out.exists():
        old = json.loads(args.out.read_text())
        fresh = {c["name"]: c for c in res["cases"]}
        old["cases"] = [fresh.pop(c["name"], c) for c in old["cases"]] + list(fresh.values())
        old.setdefault("reruns", []).append({"cases": sorted(c["name"] for c in res["cases"]), "load_before":
                                             res["load_before"], "load_after": res["load_after"]})
        old["digits"] = res["digits"]
        res = old
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1) + "\n")
    print(f"results: {args.out}; {res['wall_s']:.0f} s; load {res['load_before']} -> {res['load_after']}")
    return res


if __name__ == "__main__":
    main()
