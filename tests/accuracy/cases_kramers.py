"""Accuracy cases for grokclocks.kramers (escape rates, timescales, ridge flow, temperatures).

References: the defining formulas in mpmath at 40 digits from the exact double inputs.  Matrix
arguments use families with a closed form: diagonal Hessians (eigenvalues = entries), a 1 x 1 ridge
design (the flow is a scalar ODE), a diagonal kernel (Cholesky and eigh exact).
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import mpmath
import numpy as np

from cases_clocks import in_double
from grokclocks import kramers as K
from harness import TINY, AccuracyCase, Arg, Branch

mpf = mpmath.mpf
BIG = 1e300
PI = mpmath.pi


def _ek(a, b, c, d, dF, T):
    """log tau_EK for hess_min = diag(a, b), hess_saddle = diag(-c, d)."""
    a, b, c, d = (mpf(v) for v in (a, b, c, d))
    return mpmath.log(2 * PI / c * mpmath.sqrt(c * d / (a * b))) + mpf(dF) / mpf(T)


def _degenerate(a, b, c, d, **_):
    """The documented DomainError: a Hessian eigenvalue below 1e-12 of the largest one."""
    return min(a, b) < 1e-12 * max(a, b) or min(c, d) < 1e-12 * max(c, d)


def _ek_args():
    return {"a": Arg(TINY, BIG), "b": Arg(TINY, BIG), "c": Arg(TINY, BIG), "d": Arg(TINY, BIG),
            "dF": Arg(TINY, BIG), "T": Arg(TINY, BIG)}


def _ek_call(f):
    return lambda a, b, c, d, dF, T: f(np.diag([a, b]), np.diag([-c, d]), dF, T)


def _ratio_ref(m2, m3, m4, s2, s3, s4, T):
    """Exact rational arithmetic (the terms span 1e-900..1e900 and cancel: 40 digits are not enough)."""
    m2, m3, m4, s2, s3, s4, T = (Fraction(v) for v in (m2, m3, m4, s2, s3, s4, T))
    x = 1 + T * (5 * m3 ** 2 / (24 * m2 ** 3) - m4 / (8 * m2 ** 2) + s4 / (8 * s2 ** 2)
                 + 5 * s3 ** 2 / (24 * abs(s2) ** 3))
    return mpf(x.numerator) / x.denominator


def _log_abs_1m(eta, mu):
    x = mpf(eta) * mpf(mu)
    return mpmath.log1p(-x) if x < 0.5 else mpmath.log(abs(1 - x))


def _ridge_ref(x, y, lam, t):
    """theta(t) of the 1 x 1 ridge flow from theta0 = 0: theta_g (1 - e^{-(A+g)t}), A = x^2, g = 2 lam."""
    A, g = mpf(x) ** 2, 2 * mpf(lam)
    th_g = mpf(x) * mpf(y) / (A + g)
    return th_g * -mpmath.expm1(-(A + g) * mpf(t))


def _ridge_gd_ref(x, y, lam, eta_frac, k):
    A, g = mpf(x) ** 2, 2 * mpf(lam)
    eta = mpf(_eta_gd(x, lam, eta_frac))
    th_g = mpf(x) * mpf(y) / (A + g)
    return th_g * (1 - (1 - eta * (A + g)) ** int(k))


def _eta_gd(x, lam, eta_frac):
    return float(eta_frac / (x * x + 2 * lam))


def _residual_ref(k, y, lam, t):
    """1 x 1 readout flow from r0 = 0: r(t) = r_star (1 - e^{-(k+g)t}), r_star = -g y / (k + g)."""
    kk, g = mpf(k), 2 * mpf(lam)
    return -g * mpf(y) / (kk + g) * -mpmath.expm1(-(kk + g) * mpf(t))


CASES = [
    AccuracyCase("grokclocks.kramers.decay_rate", K.decay_rate, lambda lam: 2 * mpf(lam), {"lam": Arg(TINY, BIG)},
                 rtol=0.0),
    AccuracyCase("grokclocks.kramers.decay_rate [half]", lambda lam: K.decay_rate(lam, "half"), lambda lam: mpf(lam),
                 {"lam": Arg(TINY, BIG)}, rtol=0.0),
    AccuracyCase("grokclocks.kramers.kernel_rate_factor [mean]", lambda n: K.kernel_rate_factor(int(n), "mean"),
                 lambda n: 1 / mpf(int(n)), {"n": Arg(1, BIG, integer=True)}, rtol=1.2e-16),
    AccuracyCase("grokclocks.kramers.param_count", lambda N, p: K.param_count(int(N), int(p), 3),
                 lambda N, p: int(N) * (2 * int(p) + 3), {"N": Arg(1, 1e9, integer=True), "p": Arg(2, 1e9, integer=True)},
                 rtol=1.2e-16),  # an exact int; the harness compares its float
    AccuracyCase("grokclocks.kramers.relu_nngp_modadd [one]", lambda p: K.relu_nngp_modadd(int(p))[1],
                 lambda p: (mpmath.sqrt(3) / 2 + PI / 3) / (2 * PI * int(p)), {"p": Arg(2, BIG, integer=True)},
                 rtol=4.5e-16),
    AccuracyCase("grokclocks.kramers.relu_nngp_modadd [none]", lambda p: K.relu_nngp_modadd(int(p))[2],
                 lambda p: 1 / (2 * PI * int(p)), {"p": Arg(2, BIG, integer=True)}, rtol=4.5e-16),
    AccuracyCase("grokclocks.kramers.relu_feature_kernel_modadd [one]", lambda p: K.relu_feature_kernel_modadd(int(p))[1],
                 lambda p: mpf(1) / 3, {"p": Arg(2, BIG, integer=True)}, rtol=1.2e-16),
    AccuracyCase("grokclocks.kramers.modadd_nngp_spectrum [top]", lambda p: K.modadd_nngp_spectrum(int(p))["top"],
                 lambda p: (mpf(int(p)) ** 2 + 2 * int(p) * (mpmath.sqrt(3) / 2 + PI / 3 - 1) + (1 + PI / 3 - mpmath.sqrt(3)))
                 / (2 * PI * int(p)), {"p": Arg(2, BIG, integer=True)}, rtol=6.7e-16),
    AccuracyCase("grokclocks.kramers.modadd_nngp_spectrum [bottom]", lambda p: K.modadd_nngp_spectrum(int(p))["bottom"],
                 lambda p: (1 + PI / 3 - mpmath.sqrt(3)) / (2 * PI * int(p)), {"p": Arg(2, BIG, integer=True)},
                 rtol=4.5e-16),
    AccuracyCase("grokclocks.kramers.modadd_nngp_spectrum [kappa]", lambda p: K.modadd_nngp_spectrum(int(p))["kappa"],
                 lambda p: (mpf(int(p)) ** 2 + 2 * int(p) * (mpmath.sqrt(3) / 2 + PI / 3 - 1) + (1 + PI / 3 - mpmath.sqrt(3)))
                 / (1 + PI / 3 - mpmath.sqrt(3)), {"p": Arg(2, BIG, integer=True)}, rtol=6.7e-16),
    AccuracyCase("grokclocks.kramers.readout_kernel_norm",
                 lambda N, p, alpha: K.readout_kernel_norm(int(N), int(p), alpha),
                 lambda N, p, alpha: mpf(int(N)) ** (1 - 2 * mpf(alpha)) * (
                     mpf(int(p)) ** 2 + 2 * int(p) * (mpmath.sqrt(3) / 2 + PI / 3 - 1) + (1 + PI / 3 - mpmath.sqrt(3)))
                 / (2 * PI * int(p)),
                 {"N": Arg(1, BIG, integer=True), "p": Arg(2, 1e6, integer=True), "alpha": Arg(0.0, 0.5, "lin")},
                 # N^(1 - 2 alpha): condition number |(1 - 2 alpha) log N| <= 691
                 rtol=2e-13),
    AccuracyCase("grokclocks.kramers.feature_kernel_norm",
                 lambda N, p, alpha, a_std: K.feature_kernel_norm(int(N), int(p), alpha, a_std),
                 lambda N, p, alpha, a_std: mpf(int(N)) ** (1 - 2 * mpf(alpha)) * mpf(a_std) ** 2 * (1 + 2 * mpf(int(p))) / 3,
                 {"N": Arg(1, BIG, integer=True), "p": Arg(2, 1e6, integer=True), "alpha": Arg(0.0, 0.5, "lin"),
                  "a_std": Arg(TINY, BIG)}, rtol=4e-13, atol=4e-13 * TINY),
    AccuracyCase("grokclocks.kramers.feature_timescale_estimate",
                 lambda N, alpha, a_std: K.feature_timescale_estimate(int(N), alpha, a_std),
                 lambda N, alpha, a_std: mpf(int(N)) ** mpf(alpha) / mpf(a_std),
                 {"N": Arg(1, BIG, integer=True), "alpha": Arg(0.0, 0.5, "lin"), "a_std": Arg(TINY, BIG)},
                 rtol=4e-13, atol=4e-13 * TINY),
    AccuracyCase("grokclocks.kramers.separation_exponent [weights]", lambda alpha: K.separation_exponent(alpha, "weights"),
                 lambda alpha: mpf(3) / 2 - mpf(alpha), {"alpha": Arg(0.0, 0.5, "lin")}, rtol=1.2e-16),
    AccuracyCase("grokclocks.kramers.implicit_bias_time_estimate",
                 lambda s, lam: K.implicit_bias_time_estimate(1.0 + s, lam),
                 lambda s, lam: mpmath.log(mpf(1.0 + s)) / (2 * mpf(lam)), {"s": Arg(2.0 ** -52, BIG), "lam": Arg(TINY, BIG)},
                 rtol=4.5e-16),
    AccuracyCase("grokclocks.kramers.ridge_grok_time_asymptotic",
                 lambda e, f, lam: K.ridge_grok_time_asymptotic(2 * e * (1 + f), e, lam),
                 lambda e, f, lam: mpmath.log(mpf(2 * e * (1 + f)) / (2 * mpf(e))) / (4 * mpf(lam)),
                 {"e": Arg(TINY, 1e-10), "f": Arg(2.0 ** -52, 1e200), "lam": Arg(TINY, BIG)}, rtol=4.5e-16,
                 branches=(Branch("f", (1.0,)),)),  # log_quotient: log1p of the exact difference up to a ratio 2
    AccuracyCase("grokclocks.kramers.log_eyring_kramers_time [diag]", _ek_call(K.log_eyring_kramers_time), _ek,
                 _ek_args(), raises=_degenerate,
                 # a sum of logs: absolute error eps (|log a| + ... + dF/T); relative where it is large
                 rtol=1e-15, atol=1e-12),
    AccuracyCase("grokclocks.kramers.eyring_kramers_time [diag]", _ek_call(K.eyring_kramers_time),
                 lambda **kw: mpmath.exp(_ek(**kw)), _ek_args(),
                 raises=lambda **kw: _degenerate(**kw) or _ek(**kw) > mpmath.log(mpf(2) ** 1024 * (1 - mpf(2) ** -54)),
                 # exp(log tau): condition number log tau (<= 709.78) plus the sum of logs above
                 rtol=4e-13),
    AccuracyCase("grokclocks.kramers.eyring_kramers_rate [diag]", _ek_call(K.eyring_kramers_rate),
                 lambda **kw: mpmath.exp(-_ek(**kw)), _ek_args(), raises=_degenerate, rtol=4e-13, atol=4e-13 * TINY),
    AccuracyCase("grokclocks.kramers.log_kramers_time_1d",
                 lambda cm, cs, dF, T: K.log_kramers_time_1d(cm, -cs, dF, T),
                 lambda cm, cs, dF, T: mpmath.log(2 * PI / mpmath.sqrt(mpf(cm) * mpf(cs))) + mpf(dF) / mpf(T),
                 {"cm": Arg(TINY, BIG), "cs": Arg(TINY, BIG), "dF": Arg(TINY, BIG), "T": Arg(TINY, BIG)},
                 rtol=1e-15, atol=1e-12),
    AccuracyCase("grokclocks.kramers.kramers_time_1d",
                 lambda cm, cs, dF, T: K.kramers_time_1d(cm, -cs, dF, T),
                 lambda cm, cs, dF, T: 2 * PI / mpmath.sqrt(mpf(cm) * mpf(cs)) * mpmath.exp(mpf(dF) / mpf(T)),
                 {"cm": Arg(1e-100, 1e100), "cs": Arg(1e-100, 1e100), "dF": Arg(TINY, 1.0), "T": Arg(1e-3, BIG)},
                 raises=lambda cm, cs, dF, T: (mpmath.log(2 * PI / mpmath.sqrt(mpf(cm) * mpf(cs))) + mpf(dF) / mpf(T)
                                               > mpmath.log(mpf(2) ** 1024 * (1 - mpf(2) ** -54))),
                 rtol=4e-13),
    AccuracyCase("grokclocks.kramers.kramers_ratio_first_order_estimate",
                 lambda m2, m3, m4, s2, s3, s4, T: K.kramers_ratio_first_order_estimate((m2, m3, m4), (-s2, s3, s4), T),
                 lambda m2, m3, m4, s2, s3, s4, T: _ratio_ref(m2, m3, m4, -s2, s3, s4, T),
                 {"m2": Arg(TINY, BIG), "m3": Arg(TINY, BIG), "m4": Arg(TINY, BIG), "s2": Arg(TINY, BIG),
                  "s3": Arg(TINY, BIG), "s4": Arg(TINY, BIG), "T": Arg(TINY, BIG)},
                 # a signed sum of four terms (m4 enters with -): absolute error eps x (sum of |terms|)
                 rtol=1e-14, atol=1e-14),
    AccuracyCase("grokclocks.kramers.continuity_correction_shift", K.continuity_correction_shift,
                 lambda T, dt: mpf(0.5826) * mpmath.sqrt(2 * mpf(T) * mpf(dt)), {"T": Arg(TINY, BIG), "dt": Arg(TINY, BIG)},
                 rtol=6.7e-16),
    AccuracyCase("grokclocks.kramers.arrhenius_barrier", lambda r, p: K.arrhenius_barrier(r * (1 + p), r),
                 lambda r, p: mpmath.log(mpf(r * (1 + p)) / mpf(r)), {"r": Arg(TINY, 1e-10), "p": Arg(2.0 ** -52, 1e200)},
                 rtol=4.5e-16, branches=(Branch("p", (1.0,)),)),  # log_quotient, as above
    AccuracyCase("grokclocks.kramers.t_eff_sgd", lambda eta, tr, B, P: K.t_eff_sgd(eta, tr, int(B), int(P)),
                 lambda eta, tr, B, P: mpf(eta) * mpf(tr) / (2 * int(B) * int(P)),
                 {"eta": Arg(TINY, BIG), "tr": Arg(TINY, BIG), "B": Arg(1, 1e6, integer=True), "P": Arg(1, 1e9, integer=True)},
                 rtol=6.7e-16, atol=6.7e-16 * TINY),
    AccuracyCase("grokclocks.kramers.sgd_stationary_temperature_1d",
                 lambda eta, s2, B, u: K.sgd_stationary_temperature_1d(eta, s2, int(B), 2 * u / eta),
                 lambda eta, s2, B, u: mpf(eta) * mpf(s2) / (int(B) * (2 - mpf(eta) * mpf(2 * u / eta))),
                 {"eta": Arg(1e-150, 1e150), "s2": Arg(TINY, BIG), "B": Arg(1, 1e6, integer=True),
                  "u": Arg(1e-10, 1 - 2.0 ** -30)},
                 rtol=1.1e-15, atol=1.1e-15 * TINY),
    AccuracyCase("grokclocks.kramers.t_eff_fullbatch_heuristic", K.t_eff_fullbatch_heuristic,
                 lambda eta, trace_hessian, coef: mpf(coef) * mpf(eta) ** 2 * mpf(trace_hessian),
                 {"eta": Arg(TINY, BIG), "trace_hessian": Arg(TINY, BIG), "coef": Arg(TINY, BIG)},
                 rtol=6.7e-16, atol=6.7e-16 * TINY),
    AccuracyCase("grokclocks.kramers.spectral_delay_ratio", lambda lo, f: K.spectral_delay_ratio([lo, lo * f]),
                 lambda lo, f: mpf(lo * f) / mpf(lo), {"lo": Arg(1e-150, 1e150), "f": Arg(1.0, 1e150)}, rtol=1.2e-16),
    AccuracyCase("grokclocks.kramers.spectral_delay_ratio [GD]",
                 lambda lo, hi, u: K.spectral_delay_ratio([lo, hi], eta=2 * u / max(lo, hi)),
                 lambda lo, hi, u: _log_abs_1m(2 * u / max(lo, hi), max(lo, hi)) / _log_abs_1m(2 * u / max(lo, hi), min(lo, hi)),
                 {"lo": Arg(1e-150, 1e150), "hi": Arg(1e-150, 1e150), "u": Arg(1e-150, 1 - 2.0 ** -30)},
                 # exactly (Fractions): mpmath's default 53 bits rounded a product 1 - 1.2e-16 to 1 at u = 1/2
                 raises=lambda lo, hi, u: Fraction(2 * u / max(lo, hi)) * Fraction(max(lo, hi)) == 1,
                 rtol=1e-15,
                 # log|1 - eta mu|: log1p(-eta mu) below eta mu = 1/2, the exact difference up to 3/2, log1p of
                 # -(2 - eta mu) above (eta max(lo, hi) = 2u)
                 branches=(Branch("u", (0.25, 0.5, 0.75)),)),
    AccuracyCase("grokclocks.kramers.delay_scaling_estimate [ridge]",
                 lambda mu, lam: K.delay_scaling_estimate("ridge", mu_min=mu, lam=lam),
                 lambda mu, lam: mpf(mu) / (2 * mpf(lam)), {"mu": Arg(TINY, BIG), "lam": Arg(TINY, BIG)},
                 rtol=2.3e-16, atol=2.3e-16 * TINY),
    AccuracyCase("grokclocks.kramers.delay_scaling_estimate [separation]",
                 lambda N, alpha: K.delay_scaling_estimate("separation", N=int(N), alpha=alpha, measure="kernel"),
                 lambda N, alpha: mpf(int(N)) ** (2 - mpf(alpha)), {"N": Arg(1, BIG, integer=True), "alpha": Arg(0.0, 0.5, "lin")},
                 rtol=4e-13),
    AccuracyCase("grokclocks.kramers.ridge_gf [1x1]",
                 lambda x, y, lam, t: K.ridge_gf([[x]], [y], lam, [0.0], t)[0],
                 _ridge_ref, {"x": Arg(1e-100, 1e100), "y": Arg(1e-100, 1e100), "lam": Arg(1e-100, 1e100),
                              "t": Arg(1e-100, BIG)}, rtol=1e-15, atol=1e-15 * TINY),
    AccuracyCase("grokclocks.kramers.ridge_gd [1x1]",
                 lambda x, y, lam, eta_frac, k: K.ridge_gd([[x]], [y], lam, [0.0], _eta_gd(x, lam, eta_frac), int(k))[0],
                 _ridge_gd_ref, {"x": Arg(1e-100, 1e100), "y": Arg(1e-100, 1e100), "lam": Arg(1e-100, 1e100),
                                 "eta_frac": Arg(1e-12, 0.49), "k": Arg(1, 1e6, integer=True)},
                 # 1 - (1 - eta (A + g))^k as -expm1(k log1p(-eta (A + g))): no cancellation for k eta (A+g) << 1
                 rtol=1.5e-15, atol=1e-300),
    AccuracyCase("grokclocks.kramers.readout_residual [1x1]",
                 lambda k, y, lam, t: K.readout_residual([[k]], [y], [0.0], lam, t)[0],
                 _residual_ref, {"k": Arg(1e-100, 1e100), "y": Arg(1e-100, 1e100), "lam": Arg(1e-100, 1e100),
                                 "t": Arg(1e-100, BIG)}, rtol=1e-15, atol=1e-15 * TINY),
    AccuracyCase("grokclocks.kramers.two_layer_forward [one neuron]",
                 lambda x, w, a, alpha: K.two_layer_forward([[x]], [[w]], [a], alpha)[0],
                 lambda x, w, a, alpha: mpf(a) * mpf(x) * mpf(w),
                 {"x": Arg(1e-100, 1e100), "w": Arg(1e-100, 1e100), "a": Arg(1e-100, 1e100), "alpha": Arg(0.0, 0.5, "lin")},
                 rtol=4.5e-16, atol=4.5e-16 * TINY),
    AccuracyCase("grokclocks.kramers.t_eff_sgd_direction [diag sigma]",
                 lambda eta, s1, s2, B: K.t_eff_sgd_direction(eta, np.diag([s1, s2]), [0.0, 3.0], int(B)),
                 lambda eta, s1, s2, B: mpf(eta) * mpf(s2) / (2 * int(B)),
                 {"eta": Arg(1e-100, 1e100), "s1": Arg(1e-100, 1e100), "s2": Arg(1e-100, 1e100),
                  "B": Arg(1, 1e6, integer=True)}, rtol=6.7e-16),
    AccuracyCase("grokclocks.kramers.ridge_timescales [1x1, tau_par]",
                 lambda x, lam: K.ridge_timescales([[x]], lam)[0],
                 lambda x, lam: 1 / (mpf(x) ** 2 + 2 * mpf(lam)), {"x": Arg(1e-100, 1e100), "lam": Arg(1e-100, 1e100)},
                 rtol=4.5e-16, atol=4.5e-16 * TINY),
    AccuracyCase("grokclocks.kramers.rf_interpolant_norm [diag]",
                 lambda k1, k2, y: K.rf_interpolant_norm(np.diag([k1, k2]), [y, y]),
                 lambda k1, k2, y: mpf(y) * mpmath.sqrt(1 / mpf(k1) + 1 / mpf(k2)),
                 {"k1": Arg(1e-100, 1e100), "k2": Arg(1e-100, 1e100), "y": Arg(1e-100, 1e100)}, rtol=1e-15),
    AccuracyCase("grokclocks.kramers.readout_timescale [diag]",
                 lambda k1, k2, lam: K.readout_timescale(np.diag([k1, k2]), lam=lam),
                 lambda k1, k2, lam: 1 / (max(mpf(k1), mpf(k2)) + 2 * mpf(lam)),
                 {"k1": Arg(1e-150, 1e150), "k2": Arg(1e-150, 1e150), "lam": Arg(1e-150, 1e150)}, rtol=4.5e-16),
]

CASES = [dataclasses.replace(c, reference=in_double(c.reference)) for c in CASES]
