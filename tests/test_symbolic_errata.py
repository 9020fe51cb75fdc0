"""Errata proven symbolically: each test starts from the paper's own starting equation (a gradient flow, a
loss, a matrix identity, an integral), derives the corrected statement with sympy, checks that it is the
expression grokclocks.symbolic holds (the one the library implements), and shows that the paper's printed
form differs.

The records of grokclocks.errata that these tests prove name them (`proof`); the others are measured.
A derivation that sympy cannot close in general is done at a concrete size (a 2 x 3 matrix of symbols,
depths 2-4) or to a stated order, and the test says so.
"""

from __future__ import annotations

import math

import pytest
import sympy as sp
from sympy import Rational, besseli, exp, log, oo, pi, sqrt

from grokclocks.errata import ERRATA
from grokclocks.symbolic import formula
from grokclocks.symbolic import _levi as LV
from grokclocks.symbolic import _symbols as S
from test_symbolic_series import hankel_coefficients

lam, s, t, eta0, d, nu = S.lam, S.s, S.t, S.eta0, S.d_out, S.nu
delta = sp.Symbol("delta", positive=True)  # lambda = 1 -/+ delta on either side of lambda = 1
u = sp.Symbol("u", positive=True)
BELOW_ONE = {lam: 1 / (1 + u) ** 2}  # lambda < 1 with sqrt(lambda) = 1/(1+u), 1 - sqrt(lambda) = u/(1+u) > 0


def zero(expr) -> bool:
    """Whether `expr` simplifies to 0 (Bessel I_2 reduced by its recurrence first, erf written as erfc)."""
    expr = expr.replace(lambda x: isinstance(x, besseli) and x.args[0] == 2,
                        lambda x: besseli(0, x.args[1]) - 2 * besseli(1, x.args[1]) / x.args[1])
    return sp.simplify(sp.expand(expr)) == 0 or sp.simplify(sp.expand(expr.rewrite(sp.erfc))) == 0


def same(a, b) -> bool:
    return zero(a - b)


def piece(expr, condition):
    """The branch of a Piecewise whose condition is `condition` (e.g. lam < 1)."""
    for value, cond in expr.args:
        if cond == condition or cond is sp.true:
            return value
    raise AssertionError(f"no branch {condition} in {expr}")


# ------------------------------------------------------------------ levi-1, levi-3: weight-decay plateaus


def _plateaus_from_eq14():
    """t -> infinity of the paper's eq. 14 (its 1/2 = |T|^2 and the teacher term), per eigenvalue nu."""
    g = S.gamma / 2
    pos = {nu: sp.Symbol("nu_", positive=True), S.gamma: sp.Symbol("gamma_", positive=True)}
    bracket = LV._wd_bracket().subs(d, 1).subs(pos)
    limit = sp.limit(bracket, t, oo)  # the student term decays, the teacher term -> (g/(nu+g))^2
    assert same(limit, ((g / (nu + g)) ** 2).subs(pos))
    # E[q g^2/(2 (nu+g)^2)] in resolvent moments: 1/(nu+g)^2 = m_2, nu/(nu+g)^2 = m - g m_2 (partial fractions)
    assert same(nu / (nu + g) ** 2, 1 / (nu + g) - g / (nu + g) ** 2)
    prefactor = sp.Rational(1, 2) * g**2
    assert prefactor == S.gamma**2 / 8  # the paper's 1/4 would need |T|^2 = 1
    m, m2 = LV.stieltjes.subs(S.w, g), LV.stieltjes2.subs(S.w, g)
    return prefactor * (m - g * m2), prefactor * m2


def test_levi_1_weight_decay_plateaus_are_gamma_squared_over_8():
    """levi-1: the t -> oo limit of eq. 14, expanded in gamma for lambda < 1, is gamma^2/(8(1-lambda)) (train),
    gamma^2/(8(1-lambda)^3) (gen); the paper prints gamma^2/4 for both."""
    tr, gen = _plateaus_from_eq14()
    exact = formula("levi:eq15").subs(d, 1)
    assert same(tr, exact[0]) and same(gen, exact[1])
    below = {lam: 1 - delta}  # lambda < 1
    tr_series = sp.series(tr.subs(below), S.gamma, 0, 3).removeO()
    gen_series = sp.series(gen.subs(below), S.gamma, 0, 3).removeO()
    small = formula("levi:eq15/small-gamma")
    assert same(tr_series, piece(small[0], lam < 1).subs(below))
    assert same(gen_series, piece(small[1], lam < 1).subs(below))
    paper_tr, paper_gen = S.gamma**2 / (4 * (1 - lam)), S.gamma**2 / (4 * (1 - lam) ** 3)
    assert sp.simplify(paper_tr.subs(below) / tr_series) == 2 and sp.simplify(paper_gen.subs(below) / gen_series) == 2


def test_levi_3_weight_decay_plateaus_above_lambda_one():
    """levi-3: for lambda > 1 the same limit expands to gamma^2/(8 lambda (lambda-1)) and
    (1-1/lambda)/2 + gamma^2/(8(lambda-1)^3): half the gamma = 0 plateau, not 'the same as eq. 15'."""
    tr, gen = _plateaus_from_eq14()
    above = {lam: 1 + delta}
    tr_series = sp.series(tr.subs(above), S.gamma, 0, 3).removeO()
    gen_series = sp.series(gen.subs(above), S.gamma, 0, 3).removeO()
    small = formula("levi:eq15/small-gamma")
    assert same(tr_series, piece(small[0], True).subs(above))
    assert same(gen_series, piece(small[1], True).subs(above))
    assert same(gen_series.subs(S.gamma, 0), (1 - 1 / lam).subs(above) / 2)  # half of (1 - 1/lambda)
    # the lambda < 1 form continued to lambda > 1 is negative there: not the same behaviour
    assert (S.gamma**2 / (8 * (1 - lam) ** 3)).subs({lam: 2, S.gamma: Rational(1, 100)}) < 0


# ------------------------------------------------------------------ levi-4, levi-5: label noise, eq. 28


def _mode_solution(force):
    """Gradient flow of one eigen-mode of D (d_out = 1): dD/dt = -2 eta0 (nu D - force), D(0) = D0."""
    D = sp.Function("D")
    D0 = sp.Symbol("D0", real=True)
    ode = sp.Eq(D(t).diff(t), -2 * eta0 * (S.nu * D(t) - force))
    return sp.dsolve(ode, D(t), ics={D(0): D0}).rhs, D0


def test_levi_5_gradient_flow_solution():
    """levi-5: the paper's gradient flow dD/dt = -2 eta0 Sigma D (eq. 4) solves to exp(-2 eta0 nu t) D0 per
    eigen-mode (grokclocks' eq. 28); the paper's eq. 28 prints exp(-4 eta0 Sigma) D0 (factor 2, no t).  Its
    loss Tr(D^T Sigma D) is eq. 5's sum of w_i nu_i exp(-4 eta0 nu_i t)."""
    sol, D0 = _mode_solution(0)
    ours = formula("levi:eq28").subs({d: 1, sp.Symbol("Dbar_0"): D0})
    assert same(sol, ours)
    paper = exp(-4 * eta0 * S.nu) * D0
    assert not same(sol, paper) and not same(sol.subs(t, 1), paper)
    # eq. 5: L_tr = sum_i nu_i D_i(t)^2 with w_i = D_i(0)^2
    assert same(S.nu * sol**2, formula("levi:eq5/train").subs(d, 1).function.subs(
        {S.eig[S.i]: S.nu, S.proj[S.i]: D0**2}))


def test_levi_4_label_noise_is_fitted():
    """levi-4: with fixed noisy labels y = T^T x + delta the gradient of (1/N)|XD - delta|^2 carries
    F = V^T X^T delta/N, F_k = sqrt(nu_k/N) delta_k (X = U sqrt(N nu) V^T); per mode the flow fits F/nu.
    Averaging over delta_k ~ N(0, sigma^2) and D0 gives grokclocks' eqs. 26-27 (noise terms lambda
    sigma^2 E[e^{-s nu}; nu > 0] + sigma^2 (1 - lambda)^+ and lambda sigma^2 E[(1 - e^{-s nu/2})^2/nu]), whose
    limits sigma^2 (1 - lambda) and sigma^2 lambda/(1 - lambda) (lambda < 1) refute the paper's L_tr + sigma^2,
    L_gen -> 0."""
    N, sigma2 = sp.Symbol("N", positive=True), S.sigma2
    dk = sp.Symbol("delta_k", real=True)
    force = sqrt(S.nu / N) * dk
    sol, D0 = _mode_solution(force)
    def average(e):  # delta_k independent of D0, zero mean, variance sigma^2
        e = sp.expand(e)
        return sp.expand(e.subs(D0 * dk, 0).subs(dk**2, sigma2).subs(D0**2, sp.Symbol("w")))

    s_ = 4 * eta0 * t
    gen_noise = average(sol**2).coeff(sigma2)  # per mode; times d_in modes / N = lambda
    assert same(N * gen_noise, ((1 - exp(-s_ * S.nu / 2)) ** 2 / S.nu))
    residual = sqrt(N * S.nu) * sol - dk  # the training residual along u_k
    tr_noise = average(residual**2 / N).coeff(sigma2)
    assert same(N * tr_noise, exp(-s_ * S.nu))
    # grokclocks' expressions (d_out = 1): the integrands of the noise terms are these per-mode forms
    integral = [x for x in formula("levi:eq27").atoms(sp.Integral)][0]
    integrand = integral.function / LV.mp_continuous
    assert same(integrand.subs(d, 1), (1 - exp(-s_ * S.nu / 2)) ** 2 / S.nu)
    assert formula("levi:eq27").has(sigma2 * lam * integral)
    # limits t -> oo (lambda < 1): E[1/nu] from the resolvent, E[e^{-s nu}] -> 0
    inv1 = sp.limit(LV.stieltjes.subs(lam, 1 - delta), S.w, 0)
    assert same(inv1, piece(formula("levi:mp-moments/inverse-1"), lam < 1).subs(lam, 1 - delta))
    gen_limit = sigma2 * (1 - delta) * inv1
    assert same(gen_limit, (sigma2 * lam / (1 - lam)).subs(lam, 1 - delta))
    tr_limit = sigma2 * (1 - lam)  # (1 - lambda)^+ sigma^2 + lambda sigma^2 E[e^{-s nu}] -> sigma^2 (1 - lambda)
    paper_gen_noise, paper_tr_noise = 0, sigma2
    assert gen_limit.subs({delta: Rational(1, 2), sigma2: 1}) == 1 != paper_gen_noise
    assert not same(tr_limit, paper_tr_noise)


# ------------------------------------------------------------------ levi-6, levi-7: the two-layer network


def _two_layer(d_in=2, d_h=2, d_out=2):
    """Symbolic two-layer linear net: S0 (d_in x d_h), S1 (d_h x d_out), teacher product T, symmetric Sigma."""
    S0 = sp.Matrix(d_in, d_h, lambda a, b: sp.Symbol(f"a{a}{b}", real=True))
    S1 = sp.Matrix(d_h, d_out, lambda a, b: sp.Symbol(f"b{a}{b}", real=True))
    T = sp.Matrix(d_in, d_out, lambda a, b: sp.Symbol(f"T{a}{b}", real=True))
    Sig = sp.Matrix(d_in, d_in, lambda a, b: sp.Symbol(f"s{min(a, b)}{max(a, b)}", real=True))
    return S0, S1, T, Sig


def test_levi_6_two_layer_hdot():
    """levi-6: from the loss (1/d_out) Tr(D^T Sigma D), D = S0 S1 - T, gradient flow gives for
    h = (|S0|^2 + |S1|^2)/2: dh/dt = -(4 eta0/d_out) Tr[(T + D)^T Sigma D] (grokclocks' eq. 17, checked at
    d_in = d_h = d_out = 2); the paper's -8 eta0 (T + D)^T Sigma D is 2 d_out times larger."""
    dout = 2
    S0, S1, T, Sig = _two_layer(d_out=dout)
    D = S0 * S1 - T
    loss = (D.T * Sig * D).trace() / dout
    dS0 = -eta0 * sp.Matrix(S0.shape[0], S0.shape[1], lambda a, b: sp.diff(loss, S0[a, b]))
    dS1 = -eta0 * sp.Matrix(S1.shape[0], S1.shape[1], lambda a, b: sp.diff(loss, S1[a, b]))
    assert zero((dS0 + 2 * eta0 / dout * Sig * D * S1.T).norm() ** 2)  # eq. 40 from eq. 1
    hdot = (S0.T * dS0).trace() + (S1.T * dS1).trace()
    ours = formula("levi:eq17")
    mats = {m.name: m for m in ours.atoms(sp.MatrixSymbol)}
    ours = ours.subs({mats["T"]: sp.ImmutableMatrix(T), mats["D"]: sp.ImmutableMatrix(D),
                      mats["Sigma"]: sp.ImmutableMatrix(Sig), d: dout, S.n: 2}).doit()
    assert zero(hdot - ours)
    paper = -8 * eta0 * ((T + D).T * Sig * D).trace()
    assert zero(paper - 2 * dout * hdot)


def test_levi_7_two_layer_prefactor():
    """levi-7: the reduced flow dD/dt = -(2 eta0 h/d_out^2) Sigma D (eq. 17, first line) and the loss of eq. 1,
    (1/d_out) Tr(D^T Sigma D), give per mode (|D0|^2/d_in)(nu/d_out) exp(-4 eta0 h nu t/d_out^2): the prefactor
    of grokclocks' eq. 18 is |D0|^2/d_out; the paper's |D0|^2 is d_out times larger."""
    D = sp.Function("D")
    D0, h = sp.Symbol("D0", real=True), S.h
    sol = sp.dsolve(sp.Eq(D(t).diff(t), -2 * eta0 * h / d**2 * S.nu * D(t)), D(t), ics={D(0): D0}).rhs
    per_mode = S.nu * sol**2 / d  # (1/d_out) nu D^2
    ours = formula("levi:eq18/train")
    phi_at = LV.phi1.subs(s, 4 * eta0 * h * t / d**2)  # E[nu exp(-s nu)] at the derived rate
    assert same(per_mode.subs(D0**2, S.D0_sq) / (S.nu * exp(-4 * eta0 * h * S.nu * t / d**2)), S.D0_sq / d)
    assert same(ours, S.D0_sq / d * phi_at)
    paper = S.D0_sq * phi_at
    assert sp.simplify(paper / ours) == d


# ------------------------------------------------------------------ levi-8, levi-9, levi-17: Laplace transforms


def test_levi_8_eq19_for_every_lambda():
    """levi-8: e^{-s(1+lambda)} 0F1(;2;lambda s^2) is the Bessel form of grokclocks' Phi_1 (regularised 0F1~ =
    0F1/Gamma(2) = 0F1, so the paper's 'x Gamma(a)' is harmless at a = 2), and its Taylor coefficients are
    the MP moments (-s)^k E[nu^(k+1)]/k! for every lambda > 0 (the atom contributes nu e^{-s nu} = 0), checked
    to order s^12."""
    hyper = exp(-s * (1 + lam)) * sp.hyper([], [2], lam * s**2)
    assert same(sp.hyperexpand(hyper), formula("levi:eq19"))
    assert sp.gamma(2) == 1
    order = 12
    series = sp.series(sp.hyperexpand(hyper), s, 0, order).removeO()
    moment = formula("levi:mp-moments")
    for k in range(order):
        nar = moment.subs(S.k, k + 1).doit()
        assert sp.expand(series.coeff(s, k) - (-1) ** k * nar / sp.factorial(k)) == 0, k


def test_levi_9_gen_loss_has_a_closed_form():
    """levi-9: grokclocks' Marcum-Q form Phi_0 satisfies Phi_0' = -Phi_1 and Phi_0(0) = 1, which define
    E[e^{-s nu}] (its derivative is -E[nu e^{-s nu}], its value at 0 is 1): the paper's 'no closed form is
    known' is refuted."""
    phi0, phi1 = formula("levi:gen-closed"), formula("levi:eq19")
    assert zero(sp.diff(phi0, s) + phi1)
    assert phi0.subs(s, 0) == 1  # Q_1(0, 0) = 1, I_1(0) = 0


def test_levi_17_gen_train_derivative_identity():
    """levi-17: d L_gen/dt = -(4 eta0/d_out) L_tr for grokclocks' eq. 8 at every d_out (the paper states
    -4 eta0 L_tr, the d_out = 1 case)."""
    lt, lg = formula("levi:eq8/train"), formula("levi:eq8/gen")
    assert zero(sp.diff(lg, t) + 4 * eta0 / d * lt)
    assert not zero((sp.diff(lg, t) + 4 * eta0 * lt).subs(d, 2))
    assert formula("levi:eq20").rhs == -4 * eta0 / d * sp.Function("L_tr")(t)


# ------------------------------------------------------------------ levi-10, levi-11, levi-12, levi-16: accuracy


def test_levi_10_accuracy_is_erf_of_sqrt_eps_over_2L():
    """levi-10: for z ~ N(0, L) (L the variance), Pr(|z| <= sqrt(eps)) = erf(sqrt(eps/(2L))) = grokclocks'
    eq. 9; reading L as the standard deviation gives erf(sqrt(eps)/(sqrt(2) L)), and 2 Pr exceeds 1."""
    z, L, eps = sp.Symbol("z", real=True), S.L, S.eps
    L = sp.Symbol("L", positive=True)
    density = exp(-z**2 / (2 * L)) / sqrt(2 * pi * L)
    prob = sp.integrate(density, (z, -sqrt(eps), sqrt(eps)))
    ours = formula("levi:eq9").subs(S.L, L)
    assert same(prob, ours)
    sd_reading = sp.integrate(exp(-z**2 / (2 * L**2)) / sqrt(2 * pi * L**2), (z, -sqrt(eps), sqrt(eps)))
    assert not same(sd_reading, ours)
    assert (2 * ours).subs({eps: 1, L: Rational(1, 10)}).evalf() > 1


def test_levi_11_incomplete_gamma_argument_order():
    """levi-11: with |z|^2/L ~ chi^2_{d_out}, Pr(|z|^2/d_out < eps) = P(d_out/2, d_out eps/(2L)), grokclocks'
    eq. 12 with Gamma(a, x) = int_x^oo e^-t t^(a-1) dt; it is eq. 9 at d_out = 1; the paper's definition
    int_a^oo e^-t t^(x-1) dt swaps the arguments and gives another value."""
    from sympy.stats import ChiSquared, cdf

    dd, x = sp.Symbol("k", positive=True, integer=True), sp.Symbol("x", positive=True)
    chi = cdf(ChiSquared("X", dd))(x)
    ours = formula("levi:eq12-acc")
    L = S.L
    assert same(chi.subs({dd: 2, x: 2 * S.eps / L}), ours.subs(d, 2))
    assert same(chi.subs({dd: 5, x: 5 * S.eps / L}).rewrite(sp.lowergamma), ours.subs(d, 5).rewrite(sp.lowergamma))
    assert same(ours.subs(d, 1).rewrite(sp.erf), formula("levi:eq9"))
    tt, a = sp.Symbol("t", positive=True), sp.Rational(5, 2)
    correct = sp.integrate(exp(-tt) * tt ** (a - 1), (tt, 3, oo))
    swapped = sp.integrate(exp(-tt) * tt ** (3 - 1), (tt, a, oo))
    assert same(correct, sp.uppergamma(a, 3)) and not same(correct, swapped)


def test_levi_12_eigenvectors_live_in_d_in():
    """levi-12: Sigma_tr = X^T X/N_tr is d_in x d_in, so its eigenvectors lie in R^{d_in}, not R^{d_out}."""
    N, d_in = sp.Symbol("N_tr", positive=True, integer=True), sp.Symbol("d_in", positive=True, integer=True)
    X = sp.MatrixSymbol("X", N, d_in)
    assert (X.T * X / N).shape == (d_in, d_in)


def test_levi_16_erf_sqrt2_level_gives_eps_over_4():
    """levi-16: at the level erf(sqrt 2) grokclocks' L* = eps/(2 erfinv(level)^2) is eps/4 exactly (and solves
    erf(sqrt(eps/(2L))) = erf(sqrt 2)); at the level 0.95 of Fig. 7 it is not."""
    lstar = formula("levi:lstar")
    assert lstar.subs(S.level, sp.erf(sqrt(2))) == S.eps / 4
    L = sp.Symbol("L", positive=True)
    assert sp.solve(sp.Eq(S.eps / (2 * L), 2), L) == [S.eps / 4]
    assert abs(float(lstar.subs({S.level: Rational(95, 100), S.eps: 1})) - 0.25) > 0.01


def test_levi_21_weight_decay_conventions():
    """levi-21: the paper's objective L_tr + gamma |S|^2/(2 d_out) adds (gamma/d_out) S to the gradient;
    PyTorch's weight_decay gamma_t adds gamma_t S to the same (mean-over-N d_out) loss's gradient: gamma =
    d_out gamma_t, grokclocks' conv-wd."""
    Sv, gt = sp.Symbol("S", real=True), sp.Symbol("gamma_t", nonnegative=True)
    paper = sp.diff(S.gamma * Sv**2 / (2 * d), Sv)
    g = sp.solve(sp.Eq(paper, gt * Sv), S.gamma)[0]
    assert same(g, formula("levi:conv-wd").subs(S.gamma, gt))


# ------------------------------------------------------------------ levi-13, levi-15, levi-19: asymptotics


def test_levi_13_validity_of_the_late_time_forms():
    """levi-13: eq. 21 is the first term of Phi_1 with I_1(z) ~ e^z (1 - 3/(8z))/sqrt(2 pi z), z = 8 eta0 t sqrt
    lambda: its relative correction is 3/(64 eta0 t sqrt lambda), small iff 8 eta0 t sqrt lambda >> 1; the gen
    relation eq. 22/eq. 21 = (1 - 3/(2x) + ...)/a with x = 4 eta0 t a needs x >> 3/2.  The paper's eta0 t >>
    sqrt lambda is not these: at lambda = 0.9, eta0 t = 100 it holds 100-fold while x = 1.05."""
    c = hankel_coefficients(1, 2)  # e^-z I_1(z) sqrt(2 pi z) = 1 + c1/z + ...
    z = 8 * eta0 * t * sqrt(lam)
    lead = formula("levi:eq21").subs(d, 1)
    first = formula("levi:eq21/order-1").subs(d, 1)
    assert c[1] == -Rational(3, 8)
    assert same(first / lead, 1 + c[1] / z)
    x = sp.Symbol("x", positive=True)
    a = (u / (1 + u)) ** 2
    ratio = (formula("levi:eq22") / lead).subs(d, 1).subs(BELOW_ONE)
    ratio = sp.simplify(ratio.subs(t, x / (4 * eta0 * a)) * a)
    expansion = sp.series(ratio, x, oo, 3)
    assert same(expansion.removeO(), 1 - Rational(3, 2) / x + Rational(15, 4) / x**2)
    at = {lam: Rational(9, 10), eta0: Rational(1, 100), t: 10**4}
    assert float((eta0 * t / sqrt(lam)).subs(at)) > 100 and float((4 * eta0 * t * LV.a).subs(at)) < 1.1


def test_levi_15_grokking_time_is_finite_at_lambda_one():
    """levi-15: at lambda = 1 grokclocks' Phi_0 is e^{-2s}(I_0(2s) + I_1(2s)) ~ 1/sqrt(pi s) (Hankel), so
    L_gen(t) ~ 1/sqrt(4 pi eta0 t) and t*_gen = 1/(4 pi eta0 L*^2) is finite at every eps; eq. 11 (and
    the paper's 'Delta t diverges') holds only for eps -> 0 first."""
    phi0 = formula("levi:gen-closed").subs(lam, 1)
    assert same(phi0, exp(-2 * s) * (besseli(0, 2 * s) + besseli(1, 2 * s)))
    lead = (hankel_coefficients(0, 1)[0] + hankel_coefficients(1, 1)[0]) / sqrt(2 * pi * 2 * s)
    assert same(lead, 1 / sqrt(pi * s))
    Ls = sp.Symbol("L_star", positive=True)
    tstar = sp.solve(sp.Eq(lead.subs(s, 4 * eta0 * t), Ls), t)[0]
    ours = formula("levi:eq11-lim/critical")
    assert same(tstar.subs(Ls, LV.lstar_1), ours)
    assert ours.subs(S.level, sp.erf(sqrt(2))) == 4 / (pi * eta0 * S.eps**2)
    assert sp.limit(formula("levi:eq11"), lam, 1, "-") == oo


def test_levi_19_lambert_w_times_carry_eta0():
    """levi-19 (and eqs. 23/24 derived): solving eq. 21 = eps/4 and eq. 10 = eps/4 for t gives grokclocks' eqs.
    23/24, in eta0 (the paper's eqs. 24, 25 print eta): t e^{kt} = c is t = W(kc)/k."""
    k_, c_ = sp.Symbol("k", positive=True), sp.Symbol("c", positive=True)
    sol = sp.solve(sp.Eq(t * exp(k_ * t), c_), t)
    assert sol == [sp.LambertW(c_ * k_) / k_]
    L = S.eps / 4
    K = 4 * eta0 * (u / (1 + u)) ** 2  # 4 eta0 a
    for key, lead in (("levi:eq23", formula("levi:eq21").subs(d, 1)), ("levi:eq24", formula("levi:eq10").subs(d, 1))):
        lead = sp.simplify(lead.subs(BELOW_ONE))
        # lead = C t^(-3/2) e^(-K t) = L  <=>  t e^(2K t/3) = (C/L)^(2/3)
        C = sp.simplify(lead * t ** Rational(3, 2) * exp(K * t))
        assert not C.has(t), C
        derived = sol[0].subs({k_: 2 * K / 3, c_: (C / L) ** Rational(2, 3)})
        ours = formula(key).subs(BELOW_ONE)
        assert same(derived.rewrite(sp.exp), ours), key
        assert not derived.has(sp.Symbol("eta", positive=True))
