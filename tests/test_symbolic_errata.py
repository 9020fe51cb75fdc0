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
    if sp.cancel(sp.together(expr)) == 0:  # rational functions (matrix identities, series): fast
        return True
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


def _resolvent_series(order: int, atom) -> sp.Expr:
    """m(w) = E[1/(nu + w)] near w = 0 from the MP self-consistent equation lambda w m^2 + (1 - lambda + w) m = 1
    (which grokclocks' closed form solves), as atom/w + c_0 + c_1 w + ..., coefficient by coefficient."""
    w = S.w
    c = sp.symbols(f"c0:{order + 1}")
    m = atom / w + sum(c[k] * w**k for k in range(order + 1))
    eq = sp.expand((lam * w * m**2 + (1 - lam + w) * m - 1) * w)
    sol = {}
    for k in range(order + 1):
        sol[c[k]] = sp.solve(eq.coeff(w, k + 1).subs(sol), c[k])[0]
    return m.subs(sol)


def _small_gamma(atom, below):
    """The t -> oo limits of eq. 14, expanded to gamma^2, on one side of lambda = 1."""
    assert sp.expand(lam * S.w * LV.stieltjes**2 + (1 - lam + S.w) * LV.stieltjes - 1) == 0  # the closed form solves it
    m = _resolvent_series(2, atom)
    m2 = -sp.diff(m, S.w)
    g = S.gamma / 2
    tr, gen = (S.gamma**2 / 8 * (m - S.w * m2)).subs(S.w, g), (S.gamma**2 / 8 * m2).subs(S.w, g)
    cut = lambda e: sp.series(sp.expand(e), S.gamma, 0, 3).removeO()  # noqa: E731 - a polynomial in gamma
    return sp.simplify(cut(tr).subs(below)), sp.simplify(cut(gen).subs(below))


def test_levi_1_weight_decay_plateaus_are_gamma_squared_over_8():
    """levi-1: the t -> oo limit of eq. 14 is (gamma^2/8) E[q/(nu + gamma/2)^2] (grokclocks' eq. 15); expanded in
    gamma (from the MP resolvent's equation) for lambda < 1 it is gamma^2/(8(1-lambda)) (train),
    gamma^2/(8(1-lambda)^3) (gen); the paper prints gamma^2/4 for both."""
    tr, gen = _plateaus_from_eq14()
    exact = formula("levi:eq15").subs(d, 1)
    assert same(tr, exact[0]) and same(gen, exact[1])
    below = {lam: 1 - delta}
    tr_series, gen_series = _small_gamma(0, below)
    small = formula("levi:eq15/small-gamma")
    assert same(tr_series, piece(small[0], lam < 1).subs(below))
    assert same(gen_series, piece(small[1], lam < 1).subs(below))
    paper_tr, paper_gen = S.gamma**2 / (4 * (1 - lam)), S.gamma**2 / (4 * (1 - lam) ** 3)
    assert sp.simplify(paper_tr.subs(below) / tr_series) == 2 and sp.simplify(paper_gen.subs(below) / gen_series) == 2


def test_levi_3_weight_decay_plateaus_above_lambda_one():
    """levi-3: for lambda > 1 (the resolvent has the atom's pole (1 - 1/lambda)/w) the same limit expands to
    gamma^2/(8 lambda (lambda-1)) and (1-1/lambda)/2 + gamma^2/(8(lambda-1)^3): half the gamma = 0 plateau, not
    'the same as eq. 15'."""
    above = {lam: 1 + delta}
    tr_series, gen_series = _small_gamma(1 - 1 / lam, above)
    small = formula("levi:eq15/small-gamma")
    assert same(tr_series, piece(small[0], True).subs(above))
    assert same(gen_series, piece(small[1], True).subs(above))
    assert same(gen_series.subs(S.gamma, 0), (1 - 1 / lam).subs(above) / 2)  # half of (1 - 1/lambda)
    # the lambda < 1 form continued to lambda > 1 is negative there: not the same behaviour
    assert (S.gamma**2 / (8 * (1 - lam) ** 3)).subs({lam: 2, S.gamma: Rational(1, 100)}) < 0
    # and the exact plateau tends to (1 - 1/lambda)/2 as gamma -> 0 (checked at lambda = 3)
    gen_exact = formula("levi:eq15").subs(d, 1)[1].subs(lam, 3)
    assert sp.limit(gen_exact, S.gamma, 0, "+") == Rational(1, 3)


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
    # 0F1(;2;x) = sum_k x^k/(k! (k+1)!), e^{-s(1+lambda)} by its Taylor polynomial: a product of polynomials
    hyp = sum((lam * s**2) ** k / (sp.factorial(k) * sp.factorial(k + 1)) for k in range(order))
    ex = sum((-s * (1 + lam)) ** k / sp.factorial(k) for k in range(order))
    series = sp.expand(hyp * ex)
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
    tt, a, x0 = sp.Symbol("t", positive=True), sp.Rational(5, 2), 3  # Gamma(a, x) at a = 5/2, x = 3
    correct = sp.Integral(exp(-tt) * tt ** (a - 1), (tt, x0, oo)).evalf(30)  # int_x^oo e^-t t^(a-1) dt
    swapped = sp.Integral(exp(-tt) * tt ** (x0 - 1), (tt, a, oo)).evalf(30)  # the paper's int_a^oo e^-t t^(x-1)
    assert abs(correct - sp.uppergamma(a, x0).evalf(30)) < 1e-25 and abs(correct - swapped) > 0.1


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


# ------------------------------------------------------------------ clocks


def test_clocks_2_weight_decay_tail_is_exponential():
    """clocks-2: linearising the balanced drift d sigma/dt = L sigma^(2-2/L) F - mu L sigma at sigma -> 0: at L = 2
    it is linear, sigma ~ e^{-2(mu - F)t}, so sigma^2 (the tail) decays at 4(mu - F); at L >= 3 the data term is
    o(sigma) and sigma^2 decays at 2 mu L: grokclocks' weight_decay_tail_rate, an exponential clock, not the
    polynomial one a KL exponent theta > 1/2 gives (d Delta/dt = -a Delta^(2 theta))."""
    sig, mu, F, L = sp.Symbol("sigma", positive=True), sp.Symbol("mu", positive=True), sp.Symbol("F", positive=True), \
        sp.Symbol("L", integer=True, positive=True)
    rate = formula("clocks:appF2-wd-rate")
    syms = {str(x): x for x in rate.free_symbols}
    for depth in (2, 3, 4, 7):
        drift = depth * sig ** (2 - Rational(2, depth)) * F - mu * depth * sig
        lin = sp.limit(drift / sig, sig, 0)  # d log sigma/dt at sigma -> 0
        ours = rate.subs({syms["L"]: depth, syms["mu"]: mu, syms["F_perp"]: F})
        assert same(-2 * lin, ours), depth  # tail = sigma^2: twice the rate of sigma
    y = sp.Function("y")
    sol = sp.dsolve(sp.Eq(y(t).diff(t), -4 * (mu - F) * y(t)), y(t)).rhs
    assert sol.has(exp(-4 * t * (mu - F))) or same(sp.diff(log(sol), t), -4 * (mu - F))


def test_clocks_3_kl_clock_worked_example():
    """clocks-3: d Delta/dt = -a Delta^(2 theta) from Delta_0 solves to grokclocks' kl_gap_solution
    (Delta_0^(1-2theta) + a(2theta-1)(t-t0))^(-1/(2theta-1)); at theta = 3/4, a = 16, Delta_0 = 1, t = 10 it is
    81^-2, and Delta = 1e-4 is reached at t = 12.375."""
    sol = formula("clocks:thm4.9")
    syms = {str(x): x for x in sol.free_symbols}
    tt, th = syms["t"], syms["theta"]
    base = syms["Delta_0"] ** (1 - 2 * th) + syms["a"] * (2 * th - 1) * (tt - syms["t_0"])
    X = sp.Symbol("X", positive=True)  # the bracket, positive on the solution's interval
    ode = (sp.diff(sol, tt) + syms["a"] * sol ** (2 * th)).subs(base, X)
    assert zero(sp.powsimp(sp.powdenest(ode, force=True), force=True))
    assert sol.subs(tt, syms["t_0"]) == syms["Delta_0"] or same(sol.subs(tt, syms["t_0"]), syms["Delta_0"])
    ex = {syms["theta"]: Rational(3, 4), syms["a"]: 16, syms["Delta_0"]: 1, syms["t_0"]: 0}
    assert sol.subs(ex).subs(tt, 10) == Rational(1, 81**2)
    clock = formula("clocks:thm4.9/clock")
    csyms = {str(x): x for x in clock.free_symbols}
    assert clock.subs({csyms["theta"]: Rational(3, 4), csyms["a"]: 16, csyms["Delta_0"]: 1, csyms["t_0"]: 0,
                       csyms["delta"]: Rational(1, 10**4)}) == Rational(12375, 1000)


def test_clocks_4_smoothness_constant_is_attained():
    """clocks-4: the Hessian of the cross-entropy of one sample x at W = 0, K = 2 (pi = (1/2, 1/2)) has
    largest eigenvalue |x|^2/2: grokclocks' beta = B^2/2 is attained, so B^2/4 is not an upper bound."""
    x = sp.symbols("x0 x1", real=True)
    W = sp.Matrix(2, 2, lambda a, b: sp.Symbol(f"w{a}{b}", real=True))
    logits = W * sp.Matrix(x)
    loss = -logits[0] + log(exp(logits[0]) + exp(logits[1]))  # label 0
    wv = list(W)
    H = sp.hessian(loss, wv).subs({w: 0 for w in wv})
    eigs = [sp.simplify(e) for e in H.eigenvals()]
    norm2 = x[0] ** 2 + x[1] ** 2
    assert max(eigs, key=lambda e: e.subs({x[0]: 1, x[1]: 2})) == norm2 / 2
    B = [s_ for s_ in formula("clocks:lem3.2").free_symbols][0]
    assert formula("clocks:lem3.2") == B**2 / 2
    assert (B**2 / 4).subs(B, 1) < Rational(1, 2)  # the B^2/4 candidate is below the attained value


def test_clocks_6_balanced_drift_of_a_layer_trained_network():
    """clocks-6: gradient flow on the factors of W = w_L ... w_1 (one singular direction: scalars) with
    loss l(W) + (mu/2) sum w_l^2, from a balanced start w_l = sigma^(1/L), moves sigma at
    L sigma^(2-2/L) F - mu L sigma (F = -l'(sigma)) = L sigma^(2-2/L) (F - lambda p sigma^(p-1)) with
    lambda = mu L/2, p = 2/L: the end-to-end drift of eq. 4.3 (grokclocks' clocks:eq4.3 form) rescaled by
    L sigma^(2-2/L), not eq. 4.3 itself (checked at L = 2, 3, 4)."""
    sig, mu, F = sp.Symbol("sigma", positive=True), sp.Symbol("mu", positive=True), sp.Symbol("F", real=True)
    lam_, p = formula("clocks:eq2.7/coefficient"), sp.Symbol("p", positive=True)
    for depth in (2, 3, 4):
        w = sp.symbols(f"w1:{depth + 1}", positive=True)
        W = sp.prod(w)
        obj = -F * W + mu / 2 * sum(x**2 for x in w)  # the flow sees only l'(W) = -F at the current point
        wdot = [-sp.diff(obj, x) for x in w]
        Wdot = sum(sp.diff(W, x) * v for x, v in zip(w, wdot))
        balanced = {x: sig ** Rational(1, depth) for x in w}
        got = sp.simplify(Wdot.subs(balanced))
        lam_val = lam_.subs({[x for x in lam_.free_symbols if str(x) == "mu"][0]: mu,
                             [x for x in lam_.free_symbols if str(x) == "L"][0]: depth})
        end_to_end = F - lam_val * p * sig ** (p - 1)
        expected = depth * sig ** (2 - Rational(2, depth)) * end_to_end.subs(p, Rational(2, depth))
        assert same(got, expected), depth
        assert not same(got, end_to_end.subs(p, Rational(2, depth)))


# ------------------------------------------------------------------ kramers


def test_kramers_2_readout_residual_is_forced():
    """kramers-2: readout gradient flow with weight decay, da/dt = -phi r - gamma a, r = phi a - y (one feature
    and sample, kappa = phi^2), gives dr/dt = -(kappa + gamma) r - gamma y, whose solution is grokclocks' eq. 5
    and tends to r* = -gamma y/(kappa + gamma), not to 0 (the paper's dr/dt = -kappa r - gamma r)."""
    phi, y, r0, g = sp.Symbol("phi", positive=True), sp.Symbol("y", real=True), sp.Symbol("r_0", real=True), \
        sp.Symbol("gamma", positive=True)
    a = sp.Function("a")
    r = phi * a(t) - y
    adot = -phi * r - g * a(t)
    rdot = sp.expand(phi * adot)
    assert same(rdot, (-(phi**2 + g) * r - g * y).expand())
    R = sp.Function("R")
    sol = sp.dsolve(sp.Eq(R(t).diff(t), -(phi**2 + g) * R(t) - g * y), R(t), ics={R(0): r0}).rhs
    ours = formula("kramers:eq5")
    syms = {str(x): x for x in ours.free_symbols}
    ours = ours.subs({syms["kappa"]: phi**2, syms["lambda"]: g / 2, syms["y"]: y, syms["r_0"]: r0, syms["t"]: t})
    assert same(sol, ours)
    paper = sp.dsolve(sp.Eq(R(t).diff(t), -phi**2 * R(t) - g * R(t)), R(t), ics={R(0): r0}).rhs
    assert sp.limit(paper, t, oo) == 0 and same(sp.limit(sol, t, oo), -g * y / (phi**2 + g))


def test_kramers_3_separation_exponents_by_power_counting():
    """kramers-3: with every quantity a power of the width N, the paper's eq. 8 over eq. 6,
    tau_features/tau_readout = [N^(2 alpha)/(eta G)] / [1/(eta lambda_max(K))] with lambda_max(K) = Theta(N^(1-2 alpha))
    (grokclocks' kramers:lln) and G = |grad_w K|_unscaled = O(1) as the paper states, has exponent 1 for every
    alpha: the paper's own algebra refutes its Omega(N^(2 alpha)) except at alpha = 1/2.  Power counting at the
    paper's initialisation (a_j ~ N^(-1/2), |w_j| = O(1), residual O(1)) gives tau_r ~ N^(2 alpha - 1) and
    tau_W ~ N^(1/2 + alpha): grokclocks' weights exponent 3/2 - alpha.  (The kernel exponents 2 - alpha and
    2 - 2 alpha rest on a cancellation argument; they are measured, see the erratum's evidence.)"""
    a_ = sp.Symbol("alpha", nonnegative=True)
    lln = formula("kramers:lln")
    N = [x for x in lln.free_symbols if str(x) == "N"][0]
    alpha_l = [x for x in lln.free_symbols if str(x) == "alpha"][0]
    e_lmax = sp.simplify(sp.diff(sp.log(lln), N) * N).subs(alpha_l, a_)  # d log / d log N: the exponent
    assert e_lmax == 1 - 2 * a_
    e_features, e_readout = 2 * a_ - 0, -e_lmax  # tau_features ~ N^(2 alpha)/G, tau_readout ~ 1/lambda_max
    paper_algebra = sp.simplify(e_features - e_readout)
    assert paper_algebra == 1 == formula("kramers:sep/paper-algebra")
    assert sp.solve(sp.Eq(paper_algebra, 2 * a_), a_) == [Rational(1, 2)]  # the claim holds only at alpha = 1/2
    # weights: |dw_j/dt| = N^-alpha |a_j| O(1) with a_j ~ N^(-1/2), |w_j| = O(1)
    e_speed = -a_ - Rational(1, 2)
    e_tau_w = 0 - e_speed
    e_tau_r = -(1 - 2 * a_)  # tau_r = 1/lambda_max
    ours = formula("kramers:sep/weights")
    assert sp.simplify(e_tau_w - e_tau_r - ours.subs([(x, a_) for x in ours.free_symbols])) == 0
    assert not sp.simplify(e_tau_w - e_tau_r - 2 * a_) == 0


def test_kramers_5_ridge_grokking_time():
    """kramers-5: the null-space part of ridge gradient flow obeys d theta_perp/dt = -gamma theta_perp, so
    (1/2)|P_perp theta0|^2 e^{-2 gamma t} = eps at grokclocks' t_grok = ln(|P_perp theta0|^2/(2 eps))/(2 gamma);
    under a change of time unit (rates / tau) it scales like a time, the paper's 1/(lambda lambda_min^+) like
    a time squared."""
    th = sp.Function("theta")
    g, N2, eps, tau = sp.Symbol("gamma", positive=True), sp.Symbol("N_perp", positive=True), \
        sp.Symbol("epsilon", positive=True), sp.Symbol("tau", positive=True)
    sol = sp.dsolve(sp.Eq(th(t).diff(t), -g * th(t)), th(t), ics={th(0): sqrt(N2)}).rhs
    tg = sp.solve(sp.Eq(sol**2 / 2, eps), t)
    ours = formula("kramers:ridge-delay")
    syms = {str(x): x for x in ours.free_symbols}
    ours = ours.subs({syms["lambda"]: g / 2, syms["N_perp"]: N2, syms["epsilon"]: eps})
    assert any(same(x, ours) for x in tg)
    lmin = sp.Symbol("lambda_min", positive=True)
    paper = 1 / ((g / 2) * lmin)
    rescale = {g: g / tau, lmin: lmin / tau}
    assert sp.simplify(ours.subs(rescale) / ours) == tau
    assert sp.simplify(paper.subs(rescale) / paper) == tau**2


def test_kramers_6_eq2_penalty_decays_at_two_lambda():
    """kramers-6: gradient flow on lambda |theta|^2 (eq. 2) decays theta as e^{-2 lambda t}: grokclocks'
    decay_rate 2 lambda; the paper's e^{-lambda t} is the lambda/2 convention."""
    th, lam_ = sp.Function("theta"), sp.Symbol("lambda", positive=True)
    sol = sp.dsolve(sp.Eq(th(t).diff(t), -sp.diff(lam_ * sp.Symbol("x") ** 2, sp.Symbol("x")).subs(
        sp.Symbol("x"), th(t))), th(t), ics={th(0): 1}).rhs
    assert sol == exp(-2 * lam_ * t)
    ours = formula("kramers:eq2")
    assert ours.subs([(x, lam_) for x in ours.free_symbols]) == 2 * lam_
    assert sol != exp(-lam_ * t)


def test_kramers_9_sgd_temperature_per_coordinate():
    """kramers-9: for the diffusion d theta = -H theta dt + sqrt(eta Sigma/B) dB the stationary covariance C solves
    H C + C H = eta Sigma/B, so tr(H C) = eta tr Sigma/(2B), the paper's T (checked at P = 2 with a general
    Sigma); a Boltzmann density e^{-F/T}, F = theta^T H theta/2, has C = T H^-1, i.e. tr(HC) = P T: the
    temperature is grokclocks' eta tr Sigma/(2BP).  The exact discrete 1-d recursion gives
    h Var theta = eta sigma^2/(B(2 - eta h))."""
    eta, B = sp.Symbol("eta", positive=True), sp.Symbol("B", positive=True)
    h1, h2 = sp.symbols("h1 h2", positive=True)
    s11, s12, s22 = sp.symbols("s11 s12 s22", real=True)
    H, Sig = sp.diag(h1, h2), sp.Matrix([[s11, s12], [s12, s22]])
    c11, c12, c22 = sp.symbols("c11 c12 c22", real=True)
    C = sp.Matrix([[c11, c12], [c12, c22]])
    sol = sp.solve(list(H * C + C * H - eta * Sig / B), [c11, c12, c22], dict=True)[0]
    trHC = sp.simplify((H * C).trace().subs(sol))
    assert same(trHC, eta * Sig.trace() / (2 * B))
    ours, paper = formula("kramers:teff-sgd"), formula("kramers:teff-sgd/paper")
    syms = {str(x): x for x in ours.free_symbols}
    P = syms["P"]
    assert same(paper / ours, P)
    T_ = sp.Symbol("T", positive=True)
    assert same((H * (T_ * H.inv())).trace(), 2 * T_)  # P = 2 coordinates
    # exact 1-d discrete SGD: theta' = (1 - eta h) theta - eta xi, Var xi = sigma^2/B
    v, h, sig2 = sp.Symbol("v", positive=True), sp.Symbol("h", positive=True), sp.Symbol("sigma2", positive=True)
    var = sp.solve(sp.Eq(v, (1 - eta * h) ** 2 * v + eta**2 * sig2 / B), v)[0]
    one_d = formula("kramers:teff-sgd/1d")
    s1 = {str(x): x for x in one_d.free_symbols}
    assert same(h * var, one_d.subs({s1["eta"]: eta, s1["sigma2"]: sig2, s1["B"]: B, s1["h"]: h}))


def test_kramers_11_prefactor_from_laplace_on_the_exact_mfpt():
    """kramers-11: Laplace's method on the exact 1-d MFPT (1/T) int e^{F(y)/T} int e^{-F(z)/T} dz dy, the outer
    integral at the saddle and the inner at the minimum, gives 2 pi/sqrt(F''(m)|F''(s)|) e^{Delta F/T}:
    grokclocks' eyring-1d and the d = 1 case of the Eyring-Kramers law with omega_s = |lambda_s|; the
    frequency reading omega_s = sqrt|lambda_s| differs (and has the wrong dimension)."""
    x = sp.Symbol("x", real=True)
    km, ks, T, dF = sp.Symbol("k_m", positive=True), sp.Symbol("k_s", positive=True), sp.Symbol("T", positive=True), \
        sp.Symbol("Delta_F", positive=True)
    inner = sp.integrate(exp(-km * x**2 / (2 * T)), (x, -oo, oo))  # e^{-F(m)/T} factored out
    outer = sp.integrate(exp(-ks * x**2 / (2 * T)), (x, -oo, oo))  # F(s) - |F''(s)| x^2/2
    tau = outer * inner / T * exp(dF / T)
    ours = formula("kramers:eyring-1d")
    syms = {str(v): v for v in ours.free_symbols}
    ours = ours.subs({syms["kappa_m"]: km, syms["kappa_s"]: -ks, syms["Delta_F"]: dF, syms["T"]: T})
    assert same(tau, ours)
    eyring = formula("kramers:eyring")
    mu_m, mu_s = sorted(eyring.atoms(sp.IndexedBase), key=str)
    d1 = eyring.subs([(x_, 1) for x_ in eyring.free_symbols if str(x_) == "d"]).doit()
    d1 = d1.subs({mu_m[1]: km, mu_s[1]: -ks}).subs({v: {"Delta_F": dF, "T": T}[str(v)] for v in d1.free_symbols
                                                    if str(v) in ("Delta_F", "T")})
    assert same(d1, tau)
    frequency = 2 * pi / sqrt(ks) * sqrt(ks / km) * exp(dF / T)
    assert not same(frequency, tau)


# ------------------------------------------------------------------ uniformity


def test_uniformity_2_coverage_fraction_on_torus_and_grid():
    """uniformity-2: C(n) = #{z in Z^2: |z1| + |z2| < n} = 2n^2 - 2n + 1 (summed), and p^2 e^{-r C} = 1 gives the
    paper's r = ln(p^2)/C (grokclocks' Theorem 3.12 form).  It is sufficient on the torus, where
    E[U] = p^2 binom(p^2 - C, m)/binom(p^2, m) <= p^2 (1 - C/p^2)^m <= p^2 e^{-mC/p^2} (factor by factor);
    on the bounded grid it is not: at p = 97, n = 5, m = ceil(r p^2) = 2100 the exact E[U] (rational
    arithmetic, every point's coverer count counted) is 0.292 on the torus and 1.264 > 1 on the grid."""
    n, z1, p, r = sp.Symbol("n", integer=True, positive=True), sp.Symbol("z1", integer=True), \
        sp.Symbol("p", integer=True, positive=True), sp.Symbol("r", positive=True)
    count = sp.summation(2 * (n - 1 - sp.Abs(z1)) + 1, (z1, -(n - 1), n - 1))
    count = sp.summation(2 * (n - 1 - z1) + 1, (z1, 1, n - 1)) * 2 + (2 * (n - 1) + 1)
    ball = formula("uniformity:thm3.12/ball")
    nb = [x for x in ball.free_symbols][0]
    assert sp.expand(count - ball.subs(nb, n)) == 0
    C = sp.Symbol("C", positive=True)
    (root,) = sp.solve(sp.Eq(p**2 * exp(-r * C), 1), r)
    assert same(root, log(p**2) / C)
    ours = formula("uniformity:thm3.12")
    syms = {str(x): x for x in ours.free_symbols}
    assert same(ours.subs({syms["p"]: p, syms["n"]: n}), log(p**2) / (2 * n**2 - 2 * n + 1))
    # the exact torus value and the grid value at p = 97, n = 5, m = 2100
    P, N, M = 97, 5, 2100
    Cn = 2 * N**2 - 2 * N + 1
    torus = sp.Rational(P * P) * sp.binomial(P * P - Cn, M) / sp.binomial(P * P, M)
    assert torus < 1 and abs(float(torus) - 0.292) < 5e-4
    assert torus <= P * P * (1 - sp.Rational(Cn, P * P)) ** M
    counts = {}
    for i in range(P):
        for j in range(P):
            di, dj = min(i, N - 1), min(P - 1 - i, N - 1)
            c = sum(min(j, N - 1 - abs(k)) + min(P - 1 - j, N - 1 - abs(k)) + 1 for k in range(-di, dj + 1))
            counts[c] = counts.get(c, 0) + 1
    grid = sum(sp.Rational(cnt) * sp.binomial(P * P - c, M) for c, cnt in counts.items()) / sp.binomial(P * P, M)
    assert grid > 1 and abs(float(grid) - 1.264) < 5e-4
    assert M == math.ceil(float(ours.subs({syms["p"]: P, syms["n"]: N})) * P * P)


# ------------------------------------------------------------------ repulsion


def _features(n=2, K=3):
    """A generic n x K feature matrix of symbols, eta, and the field of rational functions in them."""
    F = sp.Matrix(n, K, lambda a, b: sp.Symbol(f"f{a}{b}", real=True))
    eta = sp.Symbol("eta", positive=True)
    field = sp.QQ.frac_field(*F, eta)
    return F, eta, field


def _dm(M, field):
    """A sympy matrix as a DomainMatrix over the field (exact: a rational function is 0 iff it is 0 there)."""
    from sympy.polys.matrices import DomainMatrix

    return DomainMatrix.from_Matrix(sp.Matrix(M)).convert_to(field)


def test_repulsion_1_woodbury_form():
    """repulsion-1: (1/eta)[I - F^T(F F^T + eta I)^-1 F] inverts F^T F + eta I (grokclocks' Woodbury form, in the
    field of rational functions of a 2 x 3 matrix of symbols and eta); the paper's
    (1/eta) I - (1/eta^2) F^T(...)^-1 F equals B/eta + (1/eta)(1 - 1/eta) I: B only at eta = 1, its off-diagonal
    entries B_jl/eta.  grokclocks' expression is this form (compared at a rational point)."""
    F, eta, K_ = _features()
    n, K = F.shape
    e, one = K_.convert(eta), K_.one
    Fd, In, IK = _dm(F, K_), _dm(sp.eye(n), K_), _dm(sp.eye(K), K_)
    inner = (Fd * Fd.transpose() + In * e).inv()
    ours = (IK - Fd.transpose() * inner * Fd) * (one / e)
    B = (Fd.transpose() * Fd + IK * e).inv()
    assert (ours - B).is_zero_matrix
    paper = IK * (one / e) - Fd.transpose() * inner * Fd * (one / (e * e))
    assert (paper - (B * (one / e) + IK * ((one / e) * (one - one / e)))).is_zero_matrix
    Bm, Pm = B.to_Matrix(), paper.to_Matrix()
    assert sp.cancel(Pm[0, 1] - Bm[0, 1] / eta) == 0 and sp.cancel(Pm[0, 0] - Bm[0, 0]) != 0
    assert sp.cancel((Pm - Bm).subs(eta, 1)) == sp.zeros(K)
    expr = formula("repulsion:woodbury/identity")
    (Ft,) = [x for x in expr.free_symbols if isinstance(x, sp.MatrixSymbol)]
    point = {x: sp.Rational(k - 2, 3) for k, x in enumerate(F)} | {eta: sp.Rational(2, 7)}
    at = expr.xreplace({Ft: sp.ImmutableMatrix(F.subs(point)), Ft.shape[0]: n, Ft.shape[1]: K,
                        [x for x in expr.free_symbols if str(x) == "eta"][0]: point[eta]})
    at = at.replace(lambda x: isinstance(x, sp.Identity), lambda x: sp.ImmutableMatrix(x.as_explicit())).doit()
    assert sp.Matrix(at) == Bm.subs(point)


def test_repulsion_2_sign_rule_is_an_identity():
    """repulsion-2: with A = F^T F + eta I, S = {j, l} and P_{eta,-jl} = I - F_R(F_R^T F_R + eta I)^-1 F_R^T, the
    Schur complement gives (A^-1)_SS = [[alpha, c], [c, beta]]^-1, so B_jl = -c/(alpha beta - c^2) (grokclocks'
    sign rule) and sgn B_jl = -sgn c for every F and eta > 0 (field of rational functions of a 2 x 3 matrix of
    symbols); and f_j^T P_eta f_l = eta(delta_jl - eta B_jl) with P_eta = eta (F F^T + eta I)^-1 (full
    projector)."""
    F, eta, K_ = _features()
    n, K = F.shape
    e = K_.convert(eta)
    Fd, In, IK = _dm(F, K_), _dm(sp.eye(n), K_), _dm(sp.eye(K), K_)
    B = (Fd.transpose() * Fd + IK * e).inv()
    FR = _dm(F[:, 2:], K_)
    P = In - FR * (FR.transpose() * FR + _dm(sp.eye(K - 2), K_) * e).inv() * FR.transpose()
    fj, fl = _dm(F[:, 0], K_), _dm(F[:, 1], K_)
    alpha = (fj.transpose() * P * fj).to_Matrix()[0] + eta
    beta = (fl.transpose() * P * fl).to_Matrix()[0] + eta
    c = (fj.transpose() * P * fl).to_Matrix()[0]
    rule = formula("repulsion:sign-rule")
    syms = {str(x): x for x in rule.free_symbols}
    b01 = K_.from_sympy(rule.subs({syms["alpha"]: alpha, syms["beta"]: beta, syms["c"]: c}))
    assert B[0, 1].element == b01
    Bm = B.to_Matrix()
    det = K_.from_sympy(alpha * beta - c**2) * K_.from_sympy(Bm[0, 0] * Bm[1, 1] - Bm[0, 1] ** 2)
    assert det == K_.one  # alpha beta - c^2 = 1/det((A^-1)_SS) > 0
    Peta = (Fd * Fd.transpose() + In * e).inv() * e
    full = Fd.transpose() * Peta * Fd
    assert (full - (IK - B * e) * e).is_zero_matrix


def test_repulsion_4_loss_forms_are_not_proportional():
    """repulsion-4: eq. 3, (1/2)|P_1^perp (Y - Y_hat)|^2 (centring over samples), and the trained loss,
    (1/n) sum_i |y_hat_i - mean(y_hat_i) - (e_{y_i} - 1/M)|^2 (centring over classes), have a ratio that
    depends on Y_hat (n = 2, M = 2, labels (0, 1)): they are not proportional."""
    n, M = 2, 2
    Yh = sp.Matrix(n, M, lambda a, b: sp.Symbol(f"y{a}{b}", real=True))
    Y = sp.Matrix([[1 - Rational(1, M), -Rational(1, M)], [-Rational(1, M), 1 - Rational(1, M)]])
    P1 = sp.eye(n) - sp.ones(n, n) / n
    eq3 = Rational(1, 2) * sum(x**2 for x in P1 * (Y - Yh))
    rows = [Yh[i, :] - sp.ones(1, M) * sum(Yh[i, :]) / M - Y[i, :] for i in range(n)]
    code = sum(sum(x**2 for x in r_) for r_ in rows) / n
    ratio = sp.simplify(eq3 / code)
    at1 = ratio.subs({Yh[0, 0]: 1, Yh[0, 1]: 0, Yh[1, 0]: 0, Yh[1, 1]: 2})
    at2 = ratio.subs({Yh[0, 0]: 3, Yh[0, 1]: 1, Yh[1, 0]: 0, Yh[1, 1]: 0})
    assert at1 != at2


# ------------------------------------------------------------------ which errata these tests prove


def test_every_symbolic_proof_named_by_an_erratum_exists_and_vice_versa():
    """The errata records that say 'proven symbolically' name a test of this file, and every erratum test of
    this file is named by its record."""
    here = {name for name in globals() if name.startswith("test_") and name[5:].split("_")[0] in
            ("levi", "clocks", "kramers", "uniformity", "repulsion")}
    named = {e.proof.split("::", 1)[1] for e in ERRATA if e.proof.startswith("tests/test_symbolic_errata.py::")}
    assert named == here, (sorted(here - named), sorted(named - here))
    for e in ERRATA:
        assert e.proof == "measured" or e.proof.startswith("tests/test_symbolic_errata.py::test_"), e.number
        if e.proof != "measured":
            test = e.proof.split("::", 1)[1]
            assert test.startswith("test_" + e.number.replace("-", "_") + "_"), (e.number, test)
            assert e.proof in e.checks, e.number
