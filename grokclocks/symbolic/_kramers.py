"""*Analytical proof of grokking delay: timescale separation and Kramers barrier analysis* (2026; authors
not stated in the source): the readout, ridge, Arrhenius and Eyring–Kramers forms of `grokclocks.kramers`
as sympy.

Weight decay: the paper's eq. (2) penalty λ‖θ‖² decays an untouched component at γ = 2λ (erratum
kramers-6); the forms below are written in γ where the library's functions take λ and a ``penalty``
keyword, with the default "eq2" (γ = 2λ) substituted.
"""

from __future__ import annotations

import sympy as sp
from sympy import Abs, Interval, Product, Rational, Tuple, exp, log, pi, sqrt

from . import _symbols as S
from ._record import Formula

__all__: list[str] = []

KR = "grokclocks.kramers."

lam = sp.Symbol("lambda", positive=True)  # weight-decay coefficient of the eq. (2) penalty
dF, T = sp.Symbol("Delta_F", positive=True), sp.Symbol("T", positive=True)
k_m, k_s = sp.Symbol("kappa_m", positive=True), sp.Symbol("kappa_s", negative=True)  # F''(m) > 0, F''(s) < 0
F3m, F4m, F3s, F4s = sp.symbols("F3_m F4_m F3_s F4_s", real=True)
d = sp.Symbol("d", integer=True, positive=True)
i = sp.Idx("i")
mu_m, mu_s = sp.IndexedBase("mu_m"), sp.IndexedBase("mu_s")  # Hessian eigenvalues at the minimum and the saddle
ratio, pref = sp.Symbol("R", positive=True), sp.Symbol("R_0", positive=True)
eta, trace, B, P = (sp.Symbol("eta", positive=True), sp.Symbol("tr_Sigma", nonnegative=True),
                    sp.Symbol("B", integer=True, positive=True), sp.Symbol("P", integer=True, positive=True))
sig2, h = sp.Symbol("sigma2", nonnegative=True), sp.Symbol("h", positive=True)
trH, coef = sp.Symbol("tr_H", real=True), sp.Symbol("c", real=True)
s_init = sp.Symbol("s", positive=True)  # initialisation scale of Lyu et al. (init_scale)
null2, eps_te = sp.Symbol("N_perp", positive=True), sp.Symbol("epsilon", positive=True)
mu = sp.IndexedBase("mu")  # Hessian eigenvalues of a quadratic, mu_1 the largest
r = sp.Symbol("r", integer=True, positive=True)
kappa, y, r0, t = (sp.Symbol("kappa", nonnegative=True), sp.Symbol("y", real=True), sp.Symbol("r_0", real=True),
                   sp.Symbol("t", nonnegative=True))
phi, theta0 = sp.Symbol("phi", real=True), sp.Symbol("theta_0", real=True)
N, alpha = sp.Symbol("N", integer=True, positive=True), sp.Symbol("alpha", nonnegative=True)
p = sp.Symbol("p", integer=True, positive=True)

LATEX_NAMES = dict({dF: r"\Delta F", k_m: r"F''(m)", k_s: r"F''(s)", F3m: r"F'''(m)", F4m: r"F''''(m)",
                      F3s: r"F'''(s)", F4s: r"F''''(s)", ratio: r"t_{\rm grok}/t_{\rm mem}",
                      pref: r"\tau_0/t_{\rm mem}", trace: r"\operatorname{tr}\Sigma", trH: r"\operatorname{tr}\nabla^2F",
                      null2: r"\lVert P_\perp\theta_0\rVert^2", theta0: r"\theta_0", eps_te: r"\epsilon_{\rm te}"})

gamma = 2 * lam  # decay_rate(lam, "eq2")
_c = 2 * pi  # 2 pi p = c in the NNGP spectrum
_u = sqrt(3) / 2 + pi / 3 - 1
_v = 1 + pi / 3 - sqrt(3)
nngp_top = (p**2 + 2 * p * _u + _v) / (2 * pi * p)
nngp_mid = (p * _u + _v) / (2 * pi * p)
nngp_bottom = _v / (2 * pi * p)

eyring = (2 * pi / Abs(mu_s[1]) * sqrt(Abs(Product(mu_s[i], (i, 1, d))) / Product(mu_m[i], (i, 1, d)))
          * exp(dF / T))
kramers_1d = 2 * pi / sqrt(k_m * Abs(k_s)) * exp(dF / T)

# readout residual per eigen-mode kappa of K (y, r_0 its components): dr/dt = -(kappa + gamma) r - gamma y
r_star = -gamma * y / (kappa + gamma)
# ridge gradient flow in one mode: A = phi^2, b = phi y (n = D = 1)
theta_g = phi * y / (phi**2 + gamma)

FORMULAS: tuple[Formula, ...] = (
    Formula("kramers:eq2", "kramers:eq2", 2 * lam, r"\gamma", "2", KR + "decay_rate", (("lambda", "lam"),),
            note="decay rate of a component the data do not touch under L + λ‖θ‖² (penalty='eq2'; 'half': γ = λ)"),
    Formula("kramers:eyring", "kramers:eyring", eyring, r"\tau_{\rm EK}", None, KR + "eyring_kramers_time",
            (("mu_m", "hess_min"), ("mu_s", "hess_saddle"), ("Delta_F", "delta_F"), ("T", "T")),
            note="μ_s,1 < 0 the unstable eigenvalue at the saddle (a rate: erratum kramers-11); asymptotic as "
                 "T → 0 (14-40 % off at ΔF/T = 4: erratum kramers-13)"),
    Formula("kramers:eyring/log", "kramers:eyring", log(eyring), r"\log\tau_{\rm EK}", None,
            KR + "log_eyring_kramers_time",
            (("mu_m", "hess_min"), ("mu_s", "hess_saddle"), ("Delta_F", "delta_F"), ("T", "T"))),
    Formula("kramers:eyring/rate", "kramers:eyring", 1 / eyring, r"k_{\rm EK}", None, KR + "eyring_kramers_rate",
            (("mu_m", "hess_min"), ("mu_s", "hess_saddle"), ("Delta_F", "delta_F"), ("T", "T"))),
    Formula("kramers:eyring-1d", "kramers:eyring-1d", kramers_1d, r"\tau", None, KR + "kramers_time_1d",
            (("kappa_m", "curv_min"), ("kappa_s", "curv_saddle"), ("Delta_F", "delta_F"), ("T", "T"))),
    Formula("kramers:eyring-1d/log", "kramers:eyring-1d", log(kramers_1d), r"\log\tau", None,
            KR + "log_kramers_time_1d",
            (("kappa_m", "curv_min"), ("kappa_s", "curv_saddle"), ("Delta_F", "delta_F"), ("T", "T"))),
    Formula("kramers:eyring-1d/correction", "kramers:eyring-1d",
            1 + T * (5 * F3m**2 / (24 * k_m**3) - F4m / (8 * k_m**2) + F4s / (8 * k_s**2)
                     + 5 * F3s**2 / (24 * Abs(k_s) ** 3)),
            r"\tau_{\rm exact}/\tau_{\rm EK}", None, KR + "kramers_ratio_first_order_estimate",
            (("kappa_m", "derivs_min"), ("F3_m", "derivs_min"), ("F4_m", "derivs_min"), ("kappa_s", "derivs_saddle"),
             ("F3_s", "derivs_saddle"), ("F4_s", "derivs_saddle"), ("T", "T")),
            note="first order in T of Laplace's method at m and s (tests/test_symbolic_series.py derives it)"),
    Formula("kramers:arrhenius", "kramers:arrhenius", log(ratio / pref), r"\frac{\Delta F}{T_{\rm eff}}", None,
            KR + "arrhenius_barrier", (("R", "delay_ratio"), ("R_0", "prefactor_ratio")),
            note="exact algebra, heuristic use: ln 73 = 4.29 for the headline run"),
    Formula("kramers:teff-sgd", "kramers:teff-sgd", eta * trace / (2 * B * P), r"T_{\rm coord}", None,
            KR + "t_eff_sgd", (("eta", "eta"), ("tr_Sigma", "trace_sigma"), ("B", "batch_size"), ("P", "n_params")),
            note="per coordinate; the paper's ηtrΣ/(2B) is P times larger (erratum kramers-9)"),
    Formula("kramers:teff-sgd/paper", "kramers:teff-sgd", eta * trace / (2 * B), r"T_{\rm paper}", None,
            KR + "t_eff_sgd", (("eta", "eta"), ("tr_Sigma", "trace_sigma"), ("B", "batch_size")),
            note="the sum of the P mode temperatures, not a temperature for e^{ΔF/T}"),
    Formula("kramers:teff-sgd/1d", "kramers:teff-sgd", eta * sig2 / (B * (2 - eta * h)), r"h\,\mathrm{Var}\,\theta",
            None, KR + "sgd_stationary_temperature_1d",
            (("eta", "eta"), ("sigma2", "sigma2"), ("B", "batch_size"), ("h", "curvature")),
            note="exact stationary variance of θ ← θ - η(hθ + ξ), 0 < ηh < 2"),
    Formula("kramers:teff-gd", "kramers:teff-gd", coef * eta**2 * trH, r"T_{\rm eff}", None,
            KR + "t_eff_fullbatch_heuristic", (("eta", "eta"), ("tr_H", "trace_hessian"), ("c", "coef")),
            note="heuristic, dimensionally inconsistent without c (erratum kramers-12)"),
    Formula("kramers:lyu", "kramers:lyu", log(s_init) / gamma, r"t_\star", None, KR + "implicit_bias_time",
            (("s", "init_scale"), ("lambda", "lam")), domain=(("s", Interval.open(1, sp.oo)),),
            note="heuristic, up to an additive O(1/γ); γ = 2λ under eq. (2) (erratum kramers-6)"),
    Formula("kramers:ridge-delay", "kramers:ridge-delay", log(null2 / (2 * eps_te)) / (2 * gamma), r"t_{\rm grok}",
            None, KR + "ridge_grok_time_asymptotic", (("N_perp", "null_norm2"), ("epsilon", "eps_test"),
                                                       ("lambda", "lam")),
            note="null-space decay ½‖P⊥θ₀‖²e^{-2γt} = ε (erratum kramers-5)"),
    Formula("kramers:spectral", "kramers:spectral", mu[1] / mu[r], r"t_{\rm slow}/t_{\rm fast}", None,
            KR + "spectral_delay_ratio", (("mu", "eigs"),), note="μ₁ ≥ … ≥ μ_r > 0: the condition number κ"),
    Formula("kramers:spectral/gd", "kramers:spectral", log(Abs(1 - eta * mu[1])) / log(Abs(1 - eta * mu[r])),
            r"t_{\rm slow}/t_{\rm fast}", None, KR + "spectral_delay_ratio", (("mu", "eigs"), ("eta", "eta")),
            domain=(("eta", Interval.open(0, sp.oo)),), note="step counts of GD, η μ₁ < 2; → κ as η → 0"),
    Formula("kramers:eq5", "kramers:eq5", r_star + exp(-(kappa + gamma) * t) * (r0 - r_star), r"r(t)", "5",
            KR + "readout_residual", (("kappa", "K_a"), ("y", "y"), ("r_0", "r0"), ("lambda", "lam"), ("t", "t")),
            note="one eigen-mode κ of K (the paper drops -γy and claims r → 0: erratum kramers-2)"),
    Formula("kramers:ridge-gf", "kramers:ridge-gf", theta_g + exp(-(phi**2 + gamma) * t) * (theta0 - theta_g),
            r"\theta(t)", None, KR + "ridge_gf", (("phi", "Phi"), ("y", "y"), ("lambda", "lam"),
                                                  ("theta_0", "theta0"), ("t", "t")),
            note="one mode: A = φ², b = φy (n = D = 1); in general θ_γ + e^{-(A+γI)t}(θ₀ - θ_γ)"),
    Formula("kramers:nngp-spectrum", "kramers:nngp-spectrum", Tuple(nngp_top, nngp_mid, nngp_bottom),
            r"(\lambda_{\rm top},\lambda_{\rm mid},\lambda_{\rm bottom})", None, KR + "modadd_nngp_spectrum",
            (("p", "p"),), note="multiplicities 1, 2(p-1), (p-1)²"),
    Formula("kramers:sep/paper-algebra", "kramers:sep", sp.Integer(1), r"\tau_{\rm features}/\tau_{\rm readout}\sim N^{e},\ e",
            None, KR + "separation_exponent", (("alpha", "alpha"),), (("measure", "paper_algebra"),),
            domain=(("alpha", Interval(0, Rational(1, 2))),),
            note="the paper's eq. 8 over eq. 6 with λ_max(K) = Θ(N^{1-2α}): N/‖∇_wK‖, independent of α (erratum "
                 "kramers-3: the paper then asserts N^{2α})"),
    Formula("kramers:sep/weights", "kramers:sep", Rational(3, 2) - alpha, r"\tau_W/\tau_r\sim N^{e},\ e", None,
            KR + "separation_exponent", (("alpha", "alpha"),), (("measure", "weights"),),
            domain=(("alpha", Interval(0, Rational(1, 2))),),
            note="power counting at initialisation (a_j ~ N^{-1/2}): τ_W ~ N^{1/2+α}, τ_r ~ N^{2α-1}"),
    Formula("kramers:sep/kernel", "kramers:sep", 2 - alpha, r"\tau_K/\tau_r\sim N^{e},\ e", None,
            KR + "separation_exponent", (("alpha", "alpha"),), (("measure", "kernel"),),
            domain=(("alpha", Interval(0, Rational(1, 2))),),
            note="heuristic (first-order kernel drift cancels over random readout signs); measured 2.06/1.75/1.49"),
    Formula("kramers:sep/kernel-integrated", "kramers:sep", 2 - 2 * alpha, r"1/\Delta_K(20\tau_r)\sim N^{e},\ e",
            None, KR + "separation_exponent", (("alpha", "alpha"),), (("measure", "kernel_integrated"),),
            domain=(("alpha", Interval(0, Rational(1, 2))),), note="heuristic; measured 1.99/1.47 at α = 0/0.25"),
    Formula("kramers:lln", "kramers:lln", N ** (1 - 2 * alpha) * nngp_top, r"\lVert K_0^{(a)}\rVert_{\rm op}", None,
            KR + "readout_kernel_norm", (("N", "N"), ("p", "p"), ("alpha", "alpha")),
            domain=(("alpha", Interval(0, Rational(1, 2))),), note="law of large numbers, N → ∞"),
)
