"""Levi, Beck & Bar-Sinai (ICLR 2024), *Grokking in linear estimators*: the Marchenko–Pastur tools
(`grokclocks.rmt`) and the paper's losses and grokking times (`grokclocks.linear`) as sympy.

Every expression is the form the library implements, errata applied (levi-1: plateaus γ²/8; levi-4:
label noise enters the dynamics; levi-7: the two-layer prefactor 1/d_out; levi-17: dL_gen/dt carries
1/d_out).  Time is in GD steps at learning rate η₀; s = 4η₀t/d_out.
"""

from __future__ import annotations

import sympy as sp
from sympy import Abs, Eq, Integral, Interval, LambertW, Max, Piecewise, Rational, Sum, Tuple, besseli, binomial
from sympy import erf, erfinv, exp, gamma as Gamma, log, lowergamma, pi, sqrt, uppergamma

from . import _symbols as S
from ._record import Formula

__all__: list[str] = []

lam, s, nu, w, t, eta0, d = S.lam, S.s, S.nu, S.w, S.t, S.eta0, S.d_out
eps, level, g = S.eps, S.level, S.gamma
R = "grokclocks.rmt."
LIN = "grokclocks.linear."
UNIT = Interval.open(0, 1)
NOT_ONE = sp.Union(Interval.open(0, 1), Interval.open(1, sp.oo))

# ------------------------------------------------------------------ the Marchenko–Pastur law (eq. 6)
lam_minus = (1 - sqrt(lam)) ** 2
lam_plus = (1 + sqrt(lam)) ** 2
atom = Max(0, 1 - 1 / lam)
mp_continuous = sqrt((lam_plus - nu) * (nu - lam_minus)) / (2 * pi * lam * nu)
mp_density = Piecewise((mp_continuous, (nu > lam_minus) & (nu < lam_plus)), (0, True))


def mp_expectation(f):
    """E[f(nu)] over the MP law as the atom's term plus an unevaluated integral over the support."""
    return atom * f.subs(nu, 0) + Integral(mp_continuous * f, (nu, lam_minus, lam_plus))


def mp_expectation_continuous(f):
    """E[f(nu); nu > 0] over the MP law: the integral over the support only."""
    return Integral(mp_continuous * f, (nu, lam_minus, lam_plus))


# ------------------------------------------------------------------ resolvent moments
_b = 1 - lam + w
stieltjes = (-_b + sqrt(_b**2 + 4 * lam * w)) / (2 * lam * w)
stieltjes2 = sp.factor(-sp.diff(stieltjes, w))
stieltjes_nu2 = stieltjes - w * stieltjes2

# ------------------------------------------------------------------ Laplace transforms (eq. 19, gen-closed)
z = 2 * s * sqrt(lam)
phi1 = exp(-s * (1 + lam)) * besseli(1, z) / (s * sqrt(lam))
phi0 = (exp(-s * (1 + lam)) * (besseli(0, z) + besseli(1, z) / sqrt(lam))
        + (1 - 1 / lam) * (1 - S.MarcumQ1(sqrt(2 * s), sqrt(2 * lam * s))))


def at_time(expr, rate=None):
    """`expr` (a function of s) at s = 4 eta_0 t/d_out (or at s = rate * t)."""
    return expr.subs(s, 4 * eta0 * t / d if rate is None else rate * t)


loss_train = at_time(phi1) / d
loss_gen = at_time(phi0) / d

# ------------------------------------------------------------------ thresholds and accuracies
lstar_1 = eps / (2 * erfinv(level) ** 2)  # d_out = 1: erf(sqrt(eps/(2 L*))) = level
a = lam_minus  # a = (1 - sqrt(lambda))^2 in eqs. 10-25


def _late_train(rate, a=lam_minus):
    """Eq. 21's leading term for d_out = 1 at learning rate `rate` (`a` = (1 - sqrt(lambda))^2)."""
    return exp(-4 * rate * a * t) / (16 * sqrt(pi) * lam ** Rational(3, 4) * (rate * t) ** Rational(3, 2))


def _late_gen(rate, a=lam_minus):
    """Eq. 22 for d_out = 1 at learning rate `rate`: the time integral of eq. 21, plus the plateau."""
    x = 4 * rate * a * t
    return (exp(-x) / (2 * sqrt(pi) * lam ** Rational(3, 4) * sqrt(rate * t))
            - sqrt(a) * uppergamma(Rational(1, 2), x) / (sqrt(pi) * lam ** Rational(3, 4)) + atom)


_c = 3 / (8 * eta0 * a)
z_tr = 2 ** Rational(5, 3) * a / (3 * pi ** Rational(1, 3) * sqrt(lam) * eps ** Rational(2, 3))
z_gen = 2 ** Rational(5, 3) * a ** Rational(1, 3) / (3 * pi ** Rational(1, 3) * sqrt(lam) * eps ** Rational(2, 3))
t_tr_lambertw = _c * LambertW(z_tr)
t_gen_lambertw = _c * LambertW(z_gen)
grok_time_eq11 = -log(1 - sqrt(lam)) / (2 * eta0 * a)

# ------------------------------------------------------------------ weight decay (eqs. 14, 15)
gg = g / 2
wd_train_inf = g**2 / (8 * d) * stieltjes_nu2.subs(w, gg)
wd_gen_inf = g**2 / (8 * d) * stieltjes2.subs(w, gg)
_rate = eta0 / d


def _wd_bracket():
    """The bracket of eq. 14: student-init term plus teacher term, per eigenvalue nu."""
    decay = exp(-2 * _rate * (nu + gg) * t)
    return decay**2 + ((decay * nu + gg) / (nu + gg)) ** 2


# ------------------------------------------------------------------ finite spectra (eqs. 5, 7)
ii, n = S.i, S.n
eig, proj = S.eig, S.proj


def _finite(weight, q):
    return Sum(weight * q * exp(-4 * eta0 * eig[ii] * t / d), (ii, 1, n)) / d


# ------------------------------------------------------------------ label noise (App. C, corrected)
_sn = 4 * eta0 * t / d
noise_train = S.sigma2 * ((Max(0, 1 - lam)) + lam * (phi0.subs(s, _sn) - atom))
noise_gen = S.sigma2 * lam * mp_expectation_continuous((1 - exp(-_sn * nu / 2)) ** 2 / nu)

# ------------------------------------------------------------------ matrices of the two-layer network (eq. 17)
_T, _D = sp.MatrixSymbol("T", S.n, d), sp.MatrixSymbol("D", S.n, d)
_Sigma = sp.MatrixSymbol("Sigma", S.n, S.n)

# ------------------------------------------------------------------ abbreviations of the typeset forms
A = sp.Symbol("a", positive=True)
Phi0, Phi1 = sp.Function("Phi_0"), sp.Function("Phi_1")
M, M2 = sp.Function("m"), sp.Function("m_2")
ZG = sp.Symbol("z_gen", positive=True)
DEF_A = ((A, lam_minus),)
DEF_PHI1 = ((Phi1(s), phi1),)
DEF_PHI0 = ((Phi0(s), phi0),)
DEF_PHI = DEF_PHI1 + DEF_PHI0
DEF_M = ((M(w), stieltjes), (M2(w), -sp.Derivative(M(w), w)))
_c_a = 3 / (8 * eta0 * A)
DEF_ZG = ((ZG, z_gen.subs(lam_minus ** Rational(1, 3), A ** Rational(1, 3))), (A, lam_minus))

_lam_args = (("lambda", "lam"),)
_j = sp.Symbol("j", integer=True, nonnegative=True)
_time_args = (("t", "t"), ("lambda", "lam"), ("eta_0", "eta0"), ("d_out", "d_out"))
_T1 = "tests/test_symbolic_errata.py::"

FORMULAS: tuple[Formula, ...] = (
    Formula("levi:eq6/density", "levi:eq6", mp_density, r"p_{\rm MP}(\nu)", "6", R + "mp_density",
            (("nu", "nu"), ("lambda", "lam")),
            note="continuous part; the atom (1-1/λ)⁺ at ν = 0 is levi:eq6/atom"),
    Formula("levi:eq6/edges", "levi:eq6", Tuple(lam_minus, lam_plus), r"(\lambda_-,\lambda_+)", "6",
            R + "mp_edges", _lam_args),
    Formula("levi:eq6/atom", "levi:eq6", atom, r"\Pr(\nu=0)", "6", R + "mp_atom", _lam_args),
    Formula("levi:mp-moments", "levi:mp-moments",
            Sum(lam**_j / (_j + 1) * binomial(S.k, _j) * binomial(S.k - 1, _j), (_j, 0, S.k - 1)),
            r"\mathbb E\,\nu^k", None, R + "mp_moment", (("k", "k"), ("lambda", "lam")),
            domain=(("k", sp.Naturals),), note="Narayana polynomials"),
    Formula("levi:mp-moments/inverse-1", "levi:mp-moments",
            Piecewise((1 / (1 - lam), lam < 1), (1 / (lam * (lam - 1)), True)),
            r"\mathbb E[\nu^{-1};\nu>0]", None, R + "mp_inverse_moment", _lam_args, (("k", 1),),
            (("lambda", NOT_ONE),)),
    Formula("levi:mp-moments/inverse-2", "levi:mp-moments",
            Piecewise((1 / (1 - lam) ** 3, lam < 1), (1 / (lam - 1) ** 3, True)),
            r"\mathbb E[\nu^{-2};\nu>0]", None, R + "mp_inverse_moment", _lam_args, (("k", 2),),
            (("lambda", NOT_ONE),)),
    Formula("levi:mp-stieltjes", "levi:mp-stieltjes", stieltjes, r"m(w)\equiv\mathbb E\Big[\frac1{\nu+w}\Big]",
            None, R + "mp_stieltjes", (("w", "w"), ("lambda", "lam")), note="atom included"),
    Formula("levi:mp-stieltjes/second", "levi:mp-stieltjes", None,
            r"m_2(w)\equiv\mathbb E\Big[\frac1{(\nu+w)^2}\Big]", None, R + "mp_stieltjes2",
            (("w", "w"), ("lambda", "lam")), display=-sp.Derivative(M(w), w), defs=DEF_M[:1]),
    Formula("levi:mp-stieltjes/nu2", "levi:mp-stieltjes", None,
            r"\mathbb E\Big[\frac{\nu}{(\nu+w)^2}\Big]", None, R + "mp_stieltjes_nu2",
            (("w", "w"), ("lambda", "lam")), display=M(w) - w * M2(w), defs=DEF_M),
    Formula("levi:eq19", "levi:eq19", phi1, r"\Phi_1(s;\lambda)\equiv\mathbb E\big[\nu e^{-s\nu}\big]", "19",
            R + "mp_laplace_nu", (("s", "s"), ("lambda", "lam")), domain=(("s", Interval.open(0, sp.oo)),),
            note="valid for every λ > 0 (erratum levi-8); Φ₁(0) = 1 as a limit"),
    Formula("levi:gen-closed", "levi:gen-closed", phi0, r"\Phi_0(s;\lambda)\equiv\mathbb E\big[e^{-s\nu}\big]",
            None, R + "mp_laplace", (("s", "s"), ("lambda", "lam")),
            note="Marcum-Q closed form (erratum levi-9); grokclocks.rmt evaluates it by a Neumann series / "
                 "tail integral free of its cancellation"),
    Formula("levi:eq8/train", "levi:eq8", None, r"\mathcal L_{\rm tr}(t)", "8", LIN + "loss_train",
            _time_args, display=Phi1(4 * eta0 * t / d) / d, defs=DEF_PHI1, domain=(("t", Interval.open(0, sp.oo)),),
            note="with the output-dimension rule of eq. 12 built in"),
    Formula("levi:eq8/gen", "levi:eq8", None, r"\mathcal L_{\rm gen}(t)", "8", LIN + "loss_gen", _time_args,
            display=Phi0(4 * eta0 * t / d) / d, defs=DEF_PHI0),
    Formula("levi:eq20", "levi:eq20",
            Eq(sp.Derivative(sp.Function("L_gen")(t), t), -4 * eta0 / d * sp.Function("L_tr")(t)),
            "", "20", None, checked_by=_T1 + "test_levi_17_gen_train_derivative_identity",
            note="general d_out (erratum levi-17); γ = 0"),
    Formula("levi:eq9", "levi:eq9", erf(sqrt(eps / (2 * S.L))), r"\mathcal A", "9", LIN + "accuracy_from_loss",
            (("L", "L"), ("epsilon", "eps")), (("d_out", 1),), note="L is the variance of z (erratum levi-10)"),
    Formula("levi:eq12-acc", "levi:eq12-acc", lowergamma(d / 2, d * eps / (2 * S.L)) / Gamma(d / 2),
            r"\mathcal A", "12", LIN + "accuracy_from_loss",
            (("L", "L"), ("epsilon", "eps"), ("d_out", "d_out")),
            note="regularised lower incomplete gamma P(d_out/2, d_out ε/(2L)) (argument order: erratum levi-11)"),
    Formula("levi:lstar", "levi:lstar", lstar_1, r"\mathcal L^*", None, LIN + "loss_threshold",
            (("epsilon", "eps"), ("ell", "level")), (("d_out", 1),), (("ell", UNIT),),
            note="d_out = 1; at the default level erf(√2) it is ε/4 (erratum levi-16)"),
    Formula("levi:lstar/d_out", "levi:lstar",
            Eq(lowergamma(d / 2, d * eps / (2 * S.L_star)) / Gamma(d / 2), level), "", None,
            LIN + "loss_threshold", (("epsilon", "eps"), ("d_out", "d_out"), ("ell", "level")),
            domain=(("ell", UNIT),), unknown="L_star", numeric="closed form (scipy gammaincinv)"),
    Formula("levi:init-rescale", "levi:init-rescale", (1 + S.alpha**2) / 2, r"c_\alpha", None,
            LIN + "init_scale_factor", (("alpha", "alpha"),)),
    Formula("levi:init-rescale/eps", "levi:init-rescale", 2 * eps / (1 + S.alpha**2), r"\epsilon_{\rm eff}", None,
            LIN + "effective_eps", (("epsilon", "eps"), ("alpha", "alpha")), note="erratum levi-18"),
    Formula("levi:eq21", "levi:eq21", None, r"\mathcal L_{\rm tr}(t)", "21",
            LIN + "loss_train_late", _time_args, domain=(("t", Interval.open(0, sp.oo)), ("lambda", NOT_ONE)),
            note="asymptotic: needs 8η₀t√λ/d_out ≫ 1 (erratum levi-13)",
            display=_late_train(_rate, A) / d, defs=DEF_A),
    Formula("levi:eq21/order-1", "levi:eq21",
            None, r"\mathcal L_{\rm tr}(t)", "21",
            LIN + "loss_train_late", _time_args, (("order", 1),),
            (("t", Interval.open(0, sp.oo)), ("lambda", NOT_ONE)), note="with its first correction",
            display=_late_train(_rate, A) * (1 - 3 / (64 * _rate * t * sqrt(lam))) / d, defs=DEF_A),
    Formula("levi:eq22", "levi:eq22", None, r"\mathcal L_{\rm gen}(t)", "22",
            LIN + "loss_gen_late", _time_args, domain=(("t", Interval.open(0, sp.oo)), ("lambda", NOT_ONE)),
            note="eq. 21 integrated in time; |1-√λ| and the plateau cover λ > 1",
            display=_late_gen(_rate, A) / d, defs=DEF_A),
    Formula("levi:eq10", "levi:eq10", None, r"\mathcal L_{\rm gen}(t)", "10",
            LIN + "loss_gen_late_simple", _time_args, display=(_late_train(_rate, A) / A + atom) / d, defs=DEF_A,
            domain=(("t", Interval.open(0, sp.oo)), ("lambda", NOT_ONE)),
            note="narrow validity: needs 4η₀t(1-√λ)²/d_out ≫ 1.5 (erratum levi-13)"),
    Formula("levi:eq23", "levi:eq23", None, r"t^*_{\rm tr}", "23", LIN + "t_star_train_lambertw",
            (("lambda", "lam"), ("epsilon", "eps"), ("eta_0", "eta0")), domain=(("lambda", UNIT),),
            note="d_out = 1, level erf(√2) (L* = ε/4); the paper's cube roots simplified",
            display=t_tr_lambertw.subs(lam_minus, A), defs=DEF_A),
    Formula("levi:eq24", "levi:eq24", None, r"t^*_{\rm gen}", "24", LIN + "t_star_gen_lambertw",
            (("lambda", "lam"), ("epsilon", "eps"), ("eta_0", "eta0")), domain=(("lambda", UNIT),),
            note="η₀, not the paper's η (erratum levi-19)", display=_c_a * LambertW(ZG), defs=DEF_ZG),
    Formula("levi:eq24/difference", "levi:eq24", None, r"\Delta t_{\rm grok}", None,
            LIN + "grok_time_lambertw", (("lambda", "lam"), ("epsilon", "eps"), ("eta_0", "eta0")),
            domain=(("lambda", UNIT),), note="eq. 24 minus eq. 23",
            display=_c_a * (LambertW(ZG) - LambertW(A ** Rational(2, 3) * ZG)), defs=DEF_ZG),
    Formula("levi:eq25", "levi:eq25",
            None, r"\Delta t_{\rm grok}", "25",
            LIN + "grok_time_eq25", (("lambda", "lam"), ("epsilon", "eps"), ("eta_0", "eta0")),
            domain=(("lambda", UNIT),), note="undefined (NaN) where log z_tr ≤ 0",
            display=-log(1 - sqrt(lam)) / (2 * eta0 * A) + _c_a * log(1 + log(A ** Rational(2, 3)) / log(ZG)),
            defs=DEF_ZG),
    Formula("levi:eq11", "levi:eq11", grok_time_eq11, r"\Delta t_{\rm grok}", "11", LIN + "grok_time_asymptotic",
            (("lambda", "lam"), ("eta_0", "eta0")), domain=(("lambda", UNIT),),
            note="the ε → 0 limit of eq. 24 − eq. 23 (erratum levi-14: slowly approached)"),
    Formula("levi:eq11-lim", "levi:eq11-lim", log(4 / (1 - lam) ** 2) / (eta0 * (1 - lam) ** 2),
            r"\Delta t_{\rm grok}", "11", LIN + "grok_time_near_one", (("lambda", "lam"), ("eta_0", "eta0")),
            domain=(("lambda", UNIT),), note="λ → 1 form of eq. 11 (ε → 0 first)"),
    Formula("levi:eq11-lim/critical", "levi:eq11-lim", 1 / (4 * pi * eta0 * lstar_1**2),
            r"t^*_{\rm gen}(\lambda=1)", None, LIN + "t_star_gen_critical",
            (("epsilon", "eps"), ("eta_0", "eta0"), ("ell", "level")), domain=(("ell", UNIT),),
            note="finite at fixed ε (erratum levi-15): 4/(πη₀ε²) at the default level"),
    Formula("levi:eq15", "levi:eq15", None,
            r"\big(\mathcal L_{\rm tr}(\infty),\,\mathcal L_{\rm gen}(\infty)\big)", "15", LIN + "wd_asymptotes",
            (("lambda", "lam"), ("gamma", "gamma"), ("d_out", "d_out")),
            domain=(("gamma", Interval.open(0, sp.oo)),),
            note="exact t → ∞ limits of eq. 14, γ²/8 prefactor (errata levi-1, levi-3)",
            display=Tuple(g**2 / (8 * d) * (M(g / 2) - g / 2 * M2(g / 2)), g**2 / (8 * d) * M2(g / 2)), defs=DEF_M),
    Formula("levi:eq15/small-gamma", "levi:eq15",
            Tuple(Piecewise((g**2 / (8 * (1 - lam)), lam < 1), (g**2 / (8 * lam * (lam - 1)), True)),
                  Piecewise((g**2 / (8 * (1 - lam) ** 3), lam < 1),
                            ((1 - 1 / lam) / 2 + g**2 / (8 * (lam - 1) ** 3), True))),
            r"\big(\mathcal L_{\rm tr}(\infty),\,\mathcal L_{\rm gen}(\infty)\big)", "15",
            LIN + "wd_asymptotes_small_gamma", (("lambda", "lam"), ("gamma", "gamma")),
            domain=(("lambda", NOT_ONE),), note="small-γ forms, d_out = 1 (errata levi-1, levi-3)"),
    Formula("levi:eq15/gamma-max", "levi:eq15", None, "", None,
            LIN + "wd_gamma_max", (("lambda", "lam"), ("epsilon", "eps"), ("ell", "level")), (("d_out", 1),),
            (("lambda", UNIT),), unknown="gamma_max", numeric="root finding (the residual must vanish to 1e-12)",
            display=Eq(S.gamma_max**2 / 8 * M2(S.gamma_max / 2), lstar_1), defs=DEF_M),
    Formula("levi:eq15-dt", "levi:eq15-dt", log(1 + sqrt(lam)) / (2 * eta0 * a), r"\Delta t_{\rm grok}", "15",
            LIN + "grok_time_wd_paper", (("lambda", "lam"), ("eta_0", "eta0")), domain=(("lambda", UNIT),),
            note="the paper's claim, transcribed; contradicted by eq. 14 (erratum levi-2)"),
    Formula("levi:eq14/train", "levi:eq14", mp_expectation(nu * _wd_bracket()) / (2 * d), r"\mathcal L_{\rm tr}(t)",
            "14", LIN + "loss_train", (*_time_args, ("gamma", "gamma")), numeric="quadrature (1e-10)"),
    Formula("levi:eq14/gen", "levi:eq14", mp_expectation(_wd_bracket()) / (2 * d), r"\mathcal L_{\rm gen}(t)",
            "14", LIN + "loss_gen", (*_time_args, ("gamma", "gamma")), numeric="quadrature (1e-10)"),
    Formula("levi:tstar/train", "levi:tstar", None, "", None,
            LIN + "t_star", (("lambda", "lam"), ("epsilon", "eps"), ("eta_0", "eta0"), ("ell", "level")),
            (("which", "train"),), unknown="t_star", numeric="root finding (the residual must vanish to 1e-12)",
            display=Eq(Phi1(4 * eta0 * S.t_star), lstar_1), defs=DEF_PHI1),
    Formula("levi:tstar/gen", "levi:tstar", None, "", None,
            LIN + "t_star", (("lambda", "lam"), ("epsilon", "eps"), ("eta_0", "eta0"), ("ell", "level")),
            (("which", "gen"),), (("lambda", UNIT),), unknown="t_star", numeric="root finding (the residual must vanish to 1e-12)",
            display=Eq(Phi0(4 * eta0 * S.t_star), lstar_1), defs=DEF_PHI0),
    Formula("levi:eq5/train", "levi:eq5", _finite(proj[ii], eig[ii]), r"\mathcal L_{\rm tr}(t)", "5",
            LIN + "loss_train_finite", (("t", "t"), ("nu", "eigvals"), ("w", "proj_sq"), ("eta_0", "eta0"),
                                        ("d_out", "d_out"))),
    Formula("levi:eq5/gen", "levi:eq5", _finite(proj[ii], 1), r"\mathcal L_{\rm gen}(t)", "5",
            LIN + "loss_gen_finite", (("t", "t"), ("nu", "eigvals"), ("w", "proj_sq"), ("eta_0", "eta0"),
                                      ("d_out", "d_out"))),
    Formula("levi:eq7/train", "levi:eq7", _finite(S.D0_sq / n, eig[ii]), r"\mathcal L_{\rm tr}(t)", "7",
            LIN + "loss_train_equal_proj", (("t", "t"), ("nu", "eigvals"), ("eta_0", "eta0"), ("d_out", "d_out"),
                                            ("D0_sq", "D0_sq"))),
    Formula("levi:eq7/gen", "levi:eq7", _finite(S.D0_sq / n, 1), r"\mathcal L_{\rm gen}(t)", "7",
            LIN + "loss_gen_equal_proj", (("t", "t"), ("nu", "eigvals"), ("eta_0", "eta0"), ("d_out", "d_out"),
                                          ("D0_sq", "D0_sq"))),
    Formula("levi:eq28", "levi:eq28", exp(-2 * eta0 * nu * t / d) * sp.Symbol("Dbar_0"),
            r"\bar D_\nu(t)", "28", None, checked_by=_T1 + "test_levi_5_gradient_flow_solution",
            note="one eigen-mode of D(t) = exp(-2η₀Σt/d_out)D₀ (erratum levi-5: the paper prints exp(-4η₀Σ)D₀)"),
    Formula("levi:eq26", "levi:eq26", None, r"\mathcal L_{\rm tr}(t)", "26",
            LIN + "loss_train_label_noise", (*_time_args, ("sigma2", "sigma2")), defs=DEF_PHI,
            display=(Phi1(_sn) / d + S.sigma2 * (Max(0, 1 - lam) + lam * (Phi0(_sn) - atom))),
            note="fixed noisy labels: gradient descent fits the noise (erratum levi-4)"),
    Formula("levi:eq27", "levi:eq27", None, r"\mathcal L_{\rm gen}(t)", "27",
            LIN + "loss_gen_label_noise", (*_time_args, ("sigma2", "sigma2")), numeric="quadrature (1e-10)",
            note="fixed noisy labels: floor σ²λ/(1-λ) for λ < 1 (erratum levi-4)",
            display=Phi0(_sn) / d + noise_gen, defs=DEF_PHI0),
    Formula("levi:eq17", "levi:eq17", -4 * eta0 / d * sp.Trace((_T + _D).T * _Sigma * _D), r"\dot h", "17", None,
            checked_by=_T1 + "test_levi_6_two_layer_hdot",
            note="h = (‖S₀‖²+‖S₁‖²)/2, T + D = S₀S₁ (erratum levi-6: the paper prints -8η₀(T+D)ᵀΣD)"),
    Formula("levi:eq18/train", "levi:eq18", None,
            r"\mathcal L^{\rm 2\text{-}layer}_{\rm tr}(t)", "18", LIN + "loss_two_layer",
            (*_time_args, ("D0_sq", "D0_sq"), ("h", "h")), (("which", "train"),),
            domain=(("t", Interval.open(0, sp.oo)),), note="prefactor ‖D₀‖²/d_out (erratum levi-7)",
            display=S.D0_sq / d * Phi1(4 * eta0 * S.h * t / d**2), defs=DEF_PHI1),
    Formula("levi:eq18/gen", "levi:eq18", None,
            r"\mathcal L^{\rm 2\text{-}layer}_{\rm gen}(t)", "18", LIN + "loss_two_layer",
            (*_time_args, ("D0_sq", "D0_sq"), ("h", "h")), (("which", "gen"),),
            note="prefactor ‖D₀‖²/d_out (erratum levi-7)",
            display=S.D0_sq / d * Phi0(4 * eta0 * S.h * t / d**2), defs=DEF_PHI0),
    Formula("levi:conv-wd", "levi:conv-wd", d * g, r"\gamma_{\rm paper}", None, LIN + "gamma_paper_convention",
            (("gamma", "gamma"), ("d_out", "d_out")), (("wd_convention", "torch"),),
            note="a PyTorch weight decay in the paper's convention (erratum levi-21)"),
    Formula("levi:appG", "levi:appG", 2 / (S.alpha * S.p), r"\lambda", None, LIN + "modular_lambda",
            (("alpha", "alpha"), ("p", "p")), domain=(("alpha", Interval.Lopen(0, 1)),)),
)
