"""grokclocks.clocks against independent references, the spec's worked examples, properties and domain errors.

References are built here from scratch: mpmath at 40 digits for the cross-entropy and the PL ratio,
finite differences for Hessians and gradients, scipy ODE solves (``solve_ivp``, DOP853, rtol 1e-12)
for the KL differential equations, explicit forward passes for the ReLU reduction.  Examples are
the spec's (shared/spec/clocks.md).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special

from grokclocks import DomainError
from grokclocks import clocks as C

mp.mp.dps = 40


# ============================================================================ spec examples


def test_examples_from_spec():
    assert C.ce_tail_bound(3.0, 4) == pytest.approx(math.log(1 + 3 * math.exp(-3)), rel=1e-15)
    assert C.ce_tail_bound(3.0, 4) == pytest.approx(0.139206, abs=1e-6)
    assert C.gap_for_loss_level(1e-3, 4) == pytest.approx(8.00637, abs=1e-5)
    assert C.gap_for_loss_level(1e-3, 4, sharp=True) == pytest.approx(8.00587, abs=1e-5)
    assert C.fast_clock_bound(1e-4, 3, 0.5, t0=10, gamma0=1) == pytest.approx(27.807, abs=1e-3)
    assert C.contraction_clock_bound(1e-6, 1.0, 0.1, k0=5) == 144
    assert C.contraction_clock_bound(1e-6, 1.0, 0.1, k0=5, exact=True) == 137
    assert C.clock_mismatch_lower_bound(1e-5, 1e-5, 4, 0.5, 0, 0, 1.0, 0.75, 1.0, 0) == pytest.approx(605.233, abs=1e-3)
    assert C.first_hitting_time([0, 1, 2, 3, 4, 5], [1, .5, .05, .2, .04, .03], 0.1, window=2) == 4.0
    assert C.first_hitting_time([0, 1, 2, 3, 4, 5], [1, .5, .05, .2, .04, .03], 0.1) == 2.0
    feats, labs = [[0, 0], [0, 2], [4, 0], [4, 2]], [0, 0, 1, 1]
    assert C.class_separation_ratio(feats, labs) == pytest.approx(0.25, rel=1e-15)
    assert C.class_separation_ratio(feats, labs, between="min_pair") == pytest.approx(0.0625, rel=1e-15)
    a = np.arange(7)
    E = np.stack([np.cos(2 * np.pi * a / 7), 0.5 * np.sin(6 * np.pi * a / 7)], axis=1)
    e = C.fourier_energies(E)
    assert e[1] == pytest.approx(3.5, rel=1e-13) and e[3] == pytest.approx(0.875, rel=1e-13)
    assert C.fourier_energy_outside(E, freqs=[1]) == pytest.approx(0.2, rel=1e-12)
    assert C.fourier_energy_outside(E, freqs=[6]) == pytest.approx(0.2, rel=1e-12)  # folded 6 = -1
    assert C.fourier_energy_outside(E, n_top=1) == pytest.approx(0.2, rel=1e-12)


def test_kl_examples_from_spec():
    assert C.kl_gap_solution(10.0, 1.0, 16.0, 0.75) == pytest.approx(81.0 ** -2, rel=1e-14)
    assert C.kl_gap_solution(10.0, 1.0, 16.0, 0.75) == pytest.approx(1.52416e-4, rel=1e-5)
    assert C.kl_clock_time(1e-4, 1.0, 16.0, 0.75) == pytest.approx(12.375, rel=1e-14)
    assert C.kl_decay_exponent(0.75) == 2.0 and C.representation_clock_exponent(0.75) == 0.5
    # ODE reference for the worked example theta = 3/4
    sol = integrate.solve_ivp(lambda t, d: -16.0 * np.abs(d) ** 1.5, (0, 10), [1.0], method="DOP853",
                              rtol=1e-12, atol=1e-16)
    assert sol.y[0, -1] == pytest.approx(C.kl_gap_solution(10.0, 1.0, 16.0, 0.75), rel=1e-8)


# ============================================================================ gaps and cross-entropy


def _mp_ce(z, y):
    z = [mp.mpf(float(v)) for v in z]
    return mp.log1p(mp.fsum(mp.exp(v - z[y]) for k, v in enumerate(z) if k != y))


def test_logit_gaps_order_and_min():
    z = np.array([[1.0, 3.0, 0.5], [0.0, -1.0, 2.0]])
    g = C.logit_gaps(z, [1, 0])
    np.testing.assert_array_equal(g, [[2.0, 2.5], [1.0, -2.0]])
    assert C.min_logit_gap(z, [1, 0]) == -2.0


def test_cross_entropy_vs_mpmath():
    rng = np.random.default_rng(1)
    for scale in (0.1, 3.0, 30.0, 300.0):
        z = rng.normal(size=(20, 5)) * scale
        y = rng.integers(0, 5, size=20)
        got = C.cross_entropy(z, y, reduction="none")
        ref = np.array([float(_mp_ce(z[i], y[i])) for i in range(20)])
        np.testing.assert_allclose(got, ref, rtol=1e-13, atol=0)
        assert C.cross_entropy(z, y) == pytest.approx(float(np.mean(ref)), rel=1e-13)


def test_cross_entropy_gap_form_vs_naive():
    # erratum clocks-6: the naive form cancels to exactly 0 at min gap 40 (float64)
    z = np.array([[40.0, 0.0, 0.0, 0.0]])
    naive = float(special.logsumexp(z[0]) - z[0, 0])
    gap = C.cross_entropy(z, [0])
    ref = float(_mp_ce(z[0], 0))
    assert naive == 0.0
    assert gap == pytest.approx(ref, rel=1e-15)
    assert gap == pytest.approx(1.27e-17, rel=1e-2)
    # tiny losses down to 1e-300
    z = np.array([[690.0, 0.0]])
    assert C.cross_entropy(z, [0]) == pytest.approx(float(_mp_ce(z[0], 0)), rel=1e-14)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 8), st.integers(1, 10), st.floats(0.0, 50.0), st.integers(0, 2**31 - 1))
def test_ce_below_tail_bound_of_min_gap(k, n, shift, seed):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k))
    y = rng.integers(0, k, size=n)
    z[np.arange(n), y] += shift + np.abs(z).max() * 2  # positive gaps
    gmin = C.min_logit_gap(z, y)
    ce = C.cross_entropy(z, y)
    assert ce <= C.ce_tail_bound(gmin, k) * (1 + 1e-14)
    assert C.ce_tail_bound(gmin, k) <= C.ce_tail_bound_linear(gmin, k) * (1 + 1e-14)


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-200, 10.0), st.integers(2, 1000))
def test_gap_for_loss_level_inverts_bounds(eps, k):
    g = C.gap_for_loss_level(eps, k)
    assert C.ce_tail_bound_linear(g, k) == pytest.approx(eps, rel=1e-12)
    gs = C.gap_for_loss_level(eps, k, sharp=True)
    assert C.ce_tail_bound(gs, k) == pytest.approx(eps, rel=1e-10)
    assert gs <= g + 1e-12


def test_tail_bound_negative_gamma_no_overflow():
    assert C.ce_tail_bound(-1000.0, 3) == pytest.approx(1000.0 + math.log(2), rel=1e-15)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(0, 2**31 - 1))
def test_zero_one_order(n, seed):
    # appF1-acc-order: loss < ln2 / n  =>  every sample correctly classified
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 3)) * 5
    y = rng.integers(0, 3, size=n)
    if C.cross_entropy(z, y) < C.zero_one_loss_threshold(n):
        assert C.min_logit_gap(z, y) > 0
    z[np.arange(n), y] += 40.0
    assert C.cross_entropy(z, y) < C.zero_one_loss_threshold(n)
    assert C.min_logit_gap(z, y) > 0


# ============================================================================ smoothness and PL


def test_softmax_hessian_max_eig_is_half():
    rng = np.random.default_rng(0)
    worst = 0.0
    for k in (2, 3, 5, 10):
        pi = rng.dirichlet(np.ones(k), size=2000)
        H = C.softmax_logit_hessian(pi)
        worst = max(worst, float(np.max(np.linalg.eigvalsh(H))))
    assert worst <= 0.5
    H = C.softmax_logit_hessian([0.5, 0.5])
    assert np.max(np.linalg.eigvalsh(H)) == pytest.approx(0.5, rel=1e-15)


def test_smoothness_constant_is_sharp():
    # erratum clocks-5: FD Hessian of the mean CE in W at W = 0, K = 2, one sample: lambda_max = |x|^2 / 2
    rng = np.random.default_rng(3)
    x = rng.normal(size=3)
    B = float(np.linalg.norm(x))

    def loss(w):
        W = w.reshape(2, 3)
        return C.cross_entropy((W @ x)[None, :], [0])

    n, h = 6, 1e-4
    Hm = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = np.eye(n)[i] * h, np.eye(n)[j] * h
            Hm[i, j] = (loss(ei + ej) - loss(ei - ej) - loss(-ei + ej) + loss(-ei - ej)) / (4 * h * h)
    lmax = float(np.max(np.linalg.eigvalsh(0.5 * (Hm + Hm.T))))
    assert lmax == pytest.approx(C.ce_smoothness_constant(B), rel=1e-6)
    assert lmax > B * B / 4 * 1.5  # the B^2/4 variant is violated


def test_binary_pl_ratio_vs_mpmath():
    for m in (-50.0, -1.0, 0.0, 1.0, 5.0, 10.0, 20.0, 36.5, 100.0, 800.0):
        mm = mp.mpf(m)
        ell = mp.log1p(mp.exp(-mm))
        dl = 1 / (1 + mp.exp(mm))
        ref = 2 * mp.log(dl) - mp.log(ell)
        assert C.log_binary_pl_ratio(m) == pytest.approx(float(ref), rel=1e-13, abs=1e-13)
    r = C.binary_pl_ratio(np.array([1.0, 5.0, 10.0, 20.0])) / np.exp(-np.array([1.0, 5.0, 10.0, 20.0]))
    np.testing.assert_allclose(r, [0.6276, 0.98998, 0.999932, 1 - 3e-9], rtol=2e-4)
    assert C.binary_pl_ratio(800.0) == 0.0  # true value ~ e^{-800} < 1e-308


# ============================================================================ fast clock


def test_fit_gap_growth_linear_record():
    t = np.linspace(0, 10, 101)
    g = -1 + 0.5 * t + 0.1 * np.sin(t) ** 2
    g0, c = C.fit_gap_growth(t, g, 2.0)
    assert g0 == pytest.approx(g[20])
    assert np.all(g[20:] >= g0 + c * (t[20:] - 2.0) - 1e-12)
    assert c > 0
    # a logarithmic gap (plain GD) has an admissible rate that shrinks with the record length
    t = np.linspace(1, 1e4, 10001)
    _, c_log = C.fit_gap_growth(t, np.log(t), 1.0)
    assert c_log < 1e-3
    g0, c = C.fit_gap_growth([0, 1, 2], [1, 0, 3], 0)
    assert c <= 0  # fails on this record: returned, not raised
    with pytest.raises(DomainError, match="t0"):
        C.fit_gap_growth([0, 1, 2], [1, 0, 3], 0.5)


def test_fast_clock_bound_holds_for_linear_gaps():
    K, c, t0, g0 = 5, 0.7, 2.0, 0.3
    t = np.linspace(t0, 60, 5801)
    loss = C.cross_entropy_from_gaps(np.tile((g0 + c * (t - t0))[:, None], (1, K - 1)))
    for eps in 10.0 ** -np.arange(1, 15):
        t_hit = C.first_hitting_time(t, loss, eps)
        assert t_hit <= C.fast_clock_bound(eps, K, c, t0, g0) + 0.01
        # the sharp bound is exact for uniform gaps (record spacing 0.01)
        assert t_hit == pytest.approx(C.fast_clock_bound(eps, K, c, t0, g0, sharp=True), abs=0.011)
    lb = C.fast_clock_loss_bound(t, K, c, t0, g0, linear=False)
    np.testing.assert_allclose(lb, loss, rtol=1e-13)
    assert np.all(C.fast_clock_loss_bound(t, K, c, t0, g0) >= loss * (1 - 1e-14))
    with pytest.raises(DomainError, match="t must be >= t0"):
        C.fast_clock_loss_bound(1.0, K, c, t0, g0)
    # the offending pair is named (t = 3 < t0 = 4), not min(t) = 0.5 beside max(t0) = 4 (each in order with its own)
    with pytest.raises(DomainError, match=r"t must be >= t0 \(got t=3.0 < t0=4.0\)"):
        C.fast_clock_loss_bound([3.0, 0.5], K, c, [4.0, 0.1], g0)
    with pytest.raises(DomainError, match=r"t must be >= t0 \(got t=3.0 < t0=4.0\)"):
        C.kl_gap_solution([3.0, 0.5], 1.0, 1.0, 0.75, t0=[4.0, 0.1])


def test_contraction_clock_bound_vs_geometric_sequence():
    rho, l0 = 0.05, 2.0
    k = np.arange(2000)
    L = l0 * (1 - rho) ** k
    for eps in (1e-1, 1e-5, 1e-12):
        first = int(np.argmax(L <= eps))
        assert C.contraction_clock_bound(eps, l0, rho, exact=True) == first
        assert C.contraction_clock_bound(eps, l0, rho) >= first
    # integer snapping: log(L0/eps)/rho is exactly 20 up to rounding
    assert C.contraction_clock_bound(math.exp(-2.0), 1.0, 0.1) == 20
    assert C.contraction_clock_bound(3.0, 2.0, 0.5, k0=7) == 7


# ============================================================================ ReLU reduction


def _forward(weights, biases, x):
    h = x
    for l, (W, b) in enumerate(zip(weights, biases)):
        h = W @ h + b
        if l < len(weights) - 1:
            h = np.maximum(h, 0.0)
    return h


def test_relu_active_affine_map_reproduces_network():
    rng = np.random.default_rng(0)
    dims = [5, 7, 6, 3]
    W = [rng.normal(size=(dims[i + 1], dims[i])) for i in range(3)]
    b = [rng.normal(size=dims[i + 1]) for i in range(3)]
    X = rng.normal(size=(11, 5))
    A, c, masks = C.relu_active_affine_map(W, b, X)
    assert A.shape == (11, 3, 5) and c.shape == (11, 3) and len(masks) == 2
    for i in range(11):
        f = _forward(W, b, X[i])
        np.testing.assert_allclose(A[i] @ X[i] + c[i], f, rtol=1e-13, atol=1e-13)
    A1, c1, m1 = C.relu_active_affine_map(W, b, X[0])
    np.testing.assert_allclose(A1, A[0])
    assert m1[0].shape == (7,)
    with pytest.raises(DomainError, match="same length"):
        C.relu_active_affine_map(W, b[:2], X)
    with pytest.raises(DomainError, match="do not fit"):
        C.relu_active_affine_map(W, b, rng.normal(size=(2, 4)))


def _mod_loss(E, W1, W2, b1, b2, a, bb, y):
    s = np.zeros(E.shape[1])
    s[a] += 1
    s[bb] += 1
    z = W2 @ np.maximum(W1 @ (E @ s) + b1, 0) + b2
    return float(special.logsumexp(z) - z[y])


def _fd_grad(f, X, h=1e-6):
    G = np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        Xp, Xm = X.copy(), X.copy()
        Xp[idx] += h
        Xm[idx] -= h
        G[idx] = (f(Xp) - f(Xm)) / (2 * h)
    return G


def test_head_embedding_gradient_norms_vs_finite_differences():
    rng = np.random.default_rng(2)
    p, de, dh = 7, 4, 6
    E, W1, W2 = rng.normal(size=(de, p)), rng.normal(size=(dh, de)), rng.normal(size=(p, dh))
    b1, b2 = rng.normal(size=dh), rng.normal(size=p)
    for (a, bb) in ((2, 5), (3, 3)):
        y = (a + bb) % p
        out = C.head_embedding_gradient_norms(E, W1, W2, a, bb, y, b1, b2)
        gE = _fd_grad(lambda M: _mod_loss(M, W1, W2, b1, b2, a, bb, y), E)
        g1 = _fd_grad(lambda M: _mod_loss(E, M, W2, b1, b2, a, bb, y), W1)
        g2 = _fd_grad(lambda M: _mod_loss(E, W1, M, b1, b2, a, bb, y), W2)
        assert out["embedding"] == pytest.approx(np.linalg.norm(gE), rel=1e-7)
        assert out["hidden"] == pytest.approx(np.linalg.norm(g1), rel=1e-7)
        assert out["head"] == pytest.approx(np.linalg.norm(g2), rel=1e-7)
        assert out["hidden"] <= out["hidden_bound"] * (1 + 1e-14)
        assert out["embedding"] <= out["embedding_bound"] * (1 + 1e-14)


def test_gate_functions():
    h1 = [np.array([[1.0, -2.0], [0.5, 3.0]])]
    assert C.gate_margin(h1) == 0.5
    assert C.gates_certified_stable(h1, [[h1[0] + 0.4], [h1[0] - 0.4]])
    assert not C.gates_certified_stable(h1, [[h1[0] + 0.6]])
    assert C.gate_pattern_changes(h1, [h1[0] - 0.6]) == 1
    assert C.gate_pattern_changes(h1, [h1[0] + 0.4]) == 0
    # certificate => no change (random paths)
    rng = np.random.default_rng(0)
    for _ in range(200):
        h = [rng.normal(size=(4, 5)), rng.normal(size=(4, 3))]
        path = [[x + rng.normal(size=x.shape) * 0.05 for x in h] for _ in range(3)]
        if C.gates_certified_stable(h, path):
            assert all(C.gate_pattern_changes(h, q) == 0 for q in path)
    assert C.first_layer_preact_change_bound(np.eye(2) * 0.1, [0.0, -0.2], 3.0) == pytest.approx(0.5)
    # the bound holds
    dW, db, x = rng.normal(size=(5, 4)), rng.normal(size=5), rng.normal(size=4)
    assert np.max(np.abs(dW @ x + db)) <= C.first_layer_preact_change_bound(dW, db, np.linalg.norm(x)) + 1e-12
    # a bias of another layer's width was accepted and its max-norm added (3.40 for a (3, 2) W1 with 4 biases)
    for bad_db in (rng.normal(size=4), rng.normal(size=(5, 1)), 0.1):
        with pytest.raises(DomainError, match=r"delta_b1 must have shape \(5,\)"):
            C.first_layer_preact_change_bound(dW, bad_db, 1.0)


# ============================================================================ KL clock


@pytest.mark.parametrize("theta", [0.55, 0.75, 0.9, 0.99])
def test_kl_gap_solution_vs_ode(theta):
    a, d0, t0 = 2.5, 0.8, 1.0
    ts = np.array([1.5, 3.0, 10.0, 50.0])
    sol = integrate.solve_ivp(lambda t, d: -a * np.abs(d) ** (2 * theta), (t0, 50.0), [d0], t_eval=ts,
                              method="DOP853", rtol=1e-12, atol=1e-20)
    np.testing.assert_allclose(C.kl_gap_solution(ts, d0, a, theta, t0), sol.y[0], rtol=1e-8)
    # differential bounds (thm4.8) are equalities on the solution with c = C = sqrt(a)
    lo, hi = C.kl_differential_bounds(sol.y[0], math.sqrt(a), math.sqrt(a), theta)
    np.testing.assert_allclose(lo, a * sol.y[0] ** (2 * theta), rtol=1e-14)
    np.testing.assert_allclose(hi, lo, rtol=1e-14)
    # clock time inverts the solution
    for t in ts:
        d = C.kl_gap_solution(t, d0, a, theta, t0)
        assert C.kl_clock_time(d, d0, a, theta, t0) == pytest.approx(t, rel=1e-9)


def test_kl_near_pl_limit_is_stable():
    d0, a = 0.5, 2.0
    for dth in (1e-8, 1e-11, 1e-13, 1e-15):
        for tau in (1.0, 10.0):
            got = C.kl_gap_solution(tau, d0, a, 0.5 + dth)
            pl = C.kl_gap_solution_pl(tau, d0, a)
            assert got == pytest.approx(pl, rel=1e-5)
    assert C.kl_gap_solution(10.0, 0.5, 2.0, 0.5 + 1e-15) == pytest.approx(0.5 * math.exp(-20), rel=1e-11)
    assert C.kl_clock_time(1e-6, 1.0, 2.0, 0.5 + 1e-14) == pytest.approx(math.log(1e6) / 2, rel=1e-9)
    assert C.log_kl_gap_solution(1e12, 1.0, 1.0, 0.75) == pytest.approx(-2 * math.log(1 + 0.5e12), rel=1e-14)


@pytest.mark.parametrize("ratio", [1.0000001, 1.01, 1.5, 1.999, 2.0])
@pytest.mark.parametrize("theta", [0.5 + 1e-9, 0.6, 0.75, 0.99])
def test_kl_clock_time_when_the_gap_is_within_a_factor_2(theta, ratio):
    """delta < Delta0 <= 2 delta: log(Delta0/delta) comes from log1p((Delta0 - delta)/delta), Delta0 - delta
    exact.  Against (delta^(1-2 theta) - Delta0^(1-2 theta))/(a (2 theta - 1)) in mpmath at 50 digits (a
    wrong divisor in that branch is -27 % at Delta0 = 1.5 delta)."""
    delta = 0.37
    d0 = delta * ratio
    a = 3.0
    with mp.workdps(50):
        e = 2 * mp.mpf(theta) - 1
        ref = (mp.mpf(delta) ** -e - mp.mpf(d0) ** -e) / (a * e)
    assert C.kl_clock_time(delta, d0, a, theta) == pytest.approx(float(ref), rel=1e-13)
    assert C.kl_clock_time(delta, d0, a, theta, 4.0) == pytest.approx(4.0 + float(ref), rel=1e-13)


def test_kl_bounds_and_representation_clock_bounds():
    lo, hi = C.kl_gap_bounds(np.linspace(0, 20, 9), 1.0, 0.8, 1.5, 0.8)
    assert np.all(lo <= hi)
    rlo, rhi = C.representation_clock_bounds(1e-3, 1.0, 0.8, 1.5, 0.8, T=2.0)
    assert rlo == pytest.approx(C.kl_clock_time(1e-3, 1.0, 1.5 ** 2, 0.8, 2.0))
    assert rhi == pytest.approx(C.kl_clock_time(1e-3, 1.0, 0.8 ** 2, 0.8, 2.0))
    assert rlo <= rhi
    # comparability constants widen the interval; a met threshold returns T
    rlo2, rhi2 = C.representation_clock_bounds(1e-3, 1.0, 0.8, 1.5, 0.8, T=2.0, m_G=0.5, M_G=2.0)
    assert rlo2 <= rlo and rhi2 >= rhi
    assert C.representation_clock_bounds(5.0, 1.0, 0.8, 1.5, 0.8, T=2.0) == (2.0, 2.0)
    assert C.kl_clock_time(2.0, 1.0, 1.0, 0.75, 3.0) == 3.0


@pytest.mark.parametrize("func, args, c_at, C_at", [
    (C.kl_differential_bounds, (np.array([[1.0], [2.0], [3.0]]), None, None, 0.75), 1, 2),
    (C.kl_gap_bounds, (np.array([[0.0], [1.0], [7.0]]), 1.0, None, None, 0.8), 2, 3),
    (C.representation_clock_bounds, (np.array([[1e-3], [1e-2], [0.5]]), 1.0, None, None, 0.8), 2, 3),
])
def test_kl_bounds_both_sides_broadcast_over_every_input(func, args, c_at, C_at):
    # lower depends on C_kl only and upper on c_kl only: an array c_kl with a scalar C_kl gave a (3, 4)
    # lower beside a (3, 1) upper (and the reverse), so lower[i, j] <= upper[i, j] could not be indexed
    c_row, C_row = np.array([[0.5, 0.8, 1.0, 1.2]]), np.array([[1.5, 2.0, 3.0, 4.0]])
    for c_kl, C_kl in ((c_row, 1.5), (0.5, C_row), (c_row, C_row)):
        a = list(args)
        a[c_at], a[C_at] = c_kl, C_kl
        lo, hi = func(*a)
        assert lo.shape == hi.shape == (3, 4)
        for i in range(3):
            for j in range(4):
                s = [x[i, 0] if k == 0 else (np.broadcast_to(x, (1, 4))[0, j] if k in (c_at, C_at) else x)
                     for k, x in enumerate(a)]
                assert (lo[i, j], hi[i, j]) == func(*s)
    with pytest.raises(DomainError, match=r"C_kl=3.0 < c_kl=5.0"):  # the offending pair, not min / max
        C.kl_gap_bounds(1.0, 1.0, np.array([1.0, 5.0]), np.array([2.0, 3.0]), 0.75)


def test_kl_example_landscapes_vs_ode():
    # power bottom in 1-D: x' = -q x^{q-1}, f = x^q obeys f' = -q^2 f^{2 theta}
    for q in (3.0, 4.0, 6.0):
        th, a = C.kl_exponent_power(q), C.kl_rate_power(q)
        sol = integrate.solve_ivp(lambda t, x: -q * np.abs(x) ** (q - 1), (0, 100), [0.9], method="DOP853",
                                  rtol=1e-12, atol=1e-20, t_eval=[100.0])
        assert sol.y[0, -1] ** q == pytest.approx(C.kl_gap_solution(100.0, 0.9 ** q, a, th), rel=1e-7)
        assert C.kl_decay_exponent(th) == pytest.approx(q / (q - 2))
    # depth L, m directions: sigma' = -L sigma^{3-2/L}, Delta = m sigma^2 / 2
    for L, m in ((2, 1), (3, 2), (4, 3)):
        th, a = C.kl_exponent_depth(L), C.kl_rate_depth(L, m)
        sol = integrate.solve_ivp(lambda t, s: -L * np.abs(s) ** (3 - 2 / L), (0, 50), [0.7], method="DOP853",
                                  rtol=1e-12, atol=1e-20, t_eval=[50.0])
        assert m * sol.y[0, -1] ** 2 / 2 == pytest.approx(C.kl_gap_solution(50.0, m * 0.49 / 2, a, th), rel=1e-7)
    assert C.kl_rate_depth(3, 2) == pytest.approx(6.0)
    # critical weight decay: sigma' = -2 sigma^2, Delta = sigma^2 / 2
    th, a = C.kl_constants_critical_weight_decay()
    sol = integrate.solve_ivp(lambda t, s: -2 * s ** 2, (0, 30), [1.3], method="DOP853", rtol=1e-12, atol=1e-20,
                              t_eval=[30.0])
    assert sol.y[0, -1] ** 2 / 2 == pytest.approx(C.kl_gap_solution(30.0, 1.3 ** 2 / 2, a, th), rel=1e-8)


def test_energy_dissipation_residual_quadratic_flow():
    # exact flow of E = x^2/2: x = e^{-t}, |grad|^2 = x^2
    t = np.linspace(0, 5, 5001)
    x = np.exp(-t)
    r = C.energy_dissipation_residual(t, x ** 2 / 2, x ** 2)
    assert np.max(np.abs(r)) < (t[1] - t[0]) ** 2  # trapezoid error (1/12) h^2 int |g''| = 1.7e-7
    r_bad = C.energy_dissipation_residual(t, x ** 2 / 2, 2 * x ** 2)
    assert np.max(np.abs(r_bad)) > 0.1


def test_weight_decay_tail_rate():
    assert C.weight_decay_tail_rate(0.01, 2) == pytest.approx(0.04)
    assert C.weight_decay_tail_rate(0.01, 2, 0.0025) == pytest.approx(0.03)
    assert C.weight_decay_tail_rate(0.01, 3, 0.5) == pytest.approx(0.06)
    # the linearised ODE of a null-block singular value, L = 3: tau ~ sigma^2 decays at 2 mu L
    mu, L, F = 0.05, 3, 0.3
    sol = integrate.solve_ivp(lambda t, s: L * np.abs(s) ** (2 - 2 / L) * F - mu * L * s, (0, 400), [1e-3],
                              method="DOP853", rtol=1e-12, atol=1e-30, t_eval=[300.0, 400.0])
    rate = -np.log(sol.y[0, 1] ** 2 / sol.y[0, 0] ** 2) / 100.0
    assert rate == pytest.approx(C.weight_decay_tail_rate(mu, L, F), rel=1e-3)
    with pytest.raises(DomainError, match="f_perp_norm"):
        C.weight_decay_tail_rate(0.01, 2, 0.02)


def test_mismatch_and_crossover():
    args = (4, 0.5, 0.0, 0.0, 1.0, 0.75, 1.0, 0.0)
    e = C.crossover_eps(1.0, *args)
    assert abs(C.coupled_mismatch_lower_bound(e, 1.0, *args)) < 1e-8
    assert C.coupled_mismatch_lower_bound(e / 10, 1.0, *args) > 0
    assert C.coupled_mismatch_lower_bound(min(1 - 1e-9, e * 10), 1.0, *args) < 0
    # coupled growth is polynomial: eps^{-kappa(2 theta - 1)}
    v1 = C.coupled_mismatch_lower_bound(1e-40, 1.0, *args)
    v2 = C.coupled_mismatch_lower_bound(1e-44, 1.0, *args)
    assert v2 / v1 == pytest.approx(100.0, rel=1e-3)
    with pytest.raises(DomainError, match="kappa"):
        C.crossover_eps(0.0, *args)


def test_crossover_eps_broadcasts_and_equals_scalar_calls():
    args = (4, 0.5, 0.0, 0.0, 1.0)
    kappa = np.array([[0.3], [1.0], [2.5]])
    theta = np.array([0.6, 0.75, 0.95])
    e = C.crossover_eps(kappa, *args, theta, 1.0, 0.0)
    assert e.shape == (3, 3)
    for i, j in np.ndindex(3, 3):
        one = C.crossover_eps(float(kappa[i, 0]), *args, float(theta[j]), 1.0, 0.0)
        assert isinstance(one, float) and one == e[i, j]  # each point scans and iterates on its own numbers
        assert C.coupled_mismatch_lower_bound(one / 1.001, float(kappa[i, 0]), *args, float(theta[j]), 1.0, 0.0) > 0
    # a point without a sign change is named with its values
    with pytest.raises(DomainError, match="no sign change .* at kappa=1.0, .*, T=1000000.0"):  # positive throughout
        C.crossover_eps(1.0, 4, 0.5, 0.0, 0.0, 1.0, 0.75, 1.0, np.array([0.0, 1e6]))


# ============================================================================ estimators


def test_first_hitting_time_conventions():
    t = [0.0, 1.0, 2.0, 3.0]
    assert C.first_hitting_time(t, [1.0, np.nan, 0.1, 0.1], 0.5) == 2.0  # NaN is not met
    assert C.first_hitting_time(t, [1.0, 1.0, 1.0, 0.1], 0.5, window=2) == math.inf  # runs past the end
    assert C.first_hitting_time(t, [1.0, 1.0, 1.0, 1.0], 0.5) == math.inf
    assert C.first_hitting_time(t, [0.5, 1.0, 1.0, 1.0], 0.5) == 0.0  # inclusive
    assert C.first_hitting_time(t, [0.1, 0.5, 0.9, 1.0], 0.9, direction="above") == 2.0
    assert C.accuracy_clock(t, [0.2, 1.0, 0.9, 1.0]) == 1.0
    assert C.accuracy_clock(t, [0.2, 1.0, 0.9, 1.0], window=2) == math.inf
    assert C.classifier_clock(t, [1, 0.01, 0.001, 1e-4], 1e-3) == 2.0
    assert C.representation_clock(t, [1, 0.01, 0.001, 1e-4], 0.05, window=3) == 1.0
    with pytest.raises(DomainError, match="strictly increasing"):
        C.first_hitting_time([0, 1, 1], [1, 1, 1], 0.5)
    with pytest.raises(DomainError, match="window"):
        C.first_hitting_time(t, [1, 1, 1, 1], 0.5, window=0)
    with pytest.raises(DomainError, match="shape"):
        C.first_hitting_time(t, [1, 1], 0.5)
    with pytest.raises(DomainError, match="eps"):
        C.classifier_clock(t, [1, 1, 1, 1], 0.0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30), st.floats(0, 1), st.integers(1, 5))
def test_window_estimator_is_monotone_in_window(vals, thr, w):
    t = np.arange(len(vals), dtype=float)
    a = C.first_hitting_time(t, vals, thr, window=w)
    b = C.first_hitting_time(t, vals, thr, window=w + 1)
    assert a <= b
    if a < math.inf:
        j = int(a)
        assert all(v <= thr for v in vals[j:j + w])


def test_accumulated_time_and_separation_ratio():
    np.testing.assert_allclose(C.accumulated_time([0.1, 0.2, 0.3]), [0, 0.1, 0.3, 0.6])
    np.testing.assert_allclose(C.accumulated_time(np.full(1000, 0.01))[-1], 10.0, rtol=1e-13)
    assert C.separation_ratio(10.0, 2.5) == 4.0
    assert C.separation_ratio(math.inf, 2.5) == math.inf
    with pytest.raises(DomainError, match="t_cls"):
        C.separation_ratio(1.0, 0.0)
    with pytest.raises(DomainError, match="lrs"):
        C.accumulated_time([0.1, -0.1])


def test_stable_rank_gap():
    s = np.array([3.0, 5.0, 2.0, 2.5])
    np.testing.assert_allclose(C.stable_rank_gap(s, target=2.2), [0.8, 2.8, 0, 0.3])
    np.testing.assert_allclose(C.stable_rank_gap(s), [1.0, 5.0, 1.0, 0.0])
    with pytest.raises(DomainError, match="S_0 == S_end"):
        C.stable_rank_gap([2.0, 3.0, 2.0])


def test_class_separation_invariances():
    rng = np.random.default_rng(0)
    H = rng.normal(size=(30, 4))
    y = rng.integers(0, 3, size=30)
    cs = C.class_separation_ratio(H, y)
    Q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    assert C.class_separation_ratio(3.0 * H @ Q + 5.0, y) == pytest.approx(cs, rel=1e-12)
    with pytest.raises(DomainError, match="2 classes"):
        C.class_separation_ratio(H, np.zeros(30))
    with pytest.raises(DomainError, match="coincide"):
        C.class_separation_ratio(np.ones((4, 2)), [0, 1, 0, 1])


@pytest.mark.parametrize("p", [2, 7, 10, 97])
def test_fourier_basis_and_characters(p):
    B = C.fourier_basis(p)
    np.testing.assert_allclose(B @ B.T, np.eye(p), atol=1e-13)
    chi = C.modular_characters(p)
    a, b = 3 % p, 5 % p
    np.testing.assert_allclose(chi[:, (a + b) % p], chi[:, a] * chi[:, b], atol=1e-12)
    re = C.modular_characters(p, [1], real=True)
    assert re.shape == (2, 1, p)
    rng = np.random.default_rng(p)
    E = rng.normal(size=(p, 5))
    e = C.fourier_energies(E)
    assert e[0] == pytest.approx(0.0, abs=1e-12)
    assert np.sum(e) == pytest.approx(np.sum((E - E.mean(0)) ** 2), rel=1e-12)  # Parseval
    assert np.sum(C.fourier_energies(E, center=False)) == pytest.approx(np.sum(E ** 2), rel=1e-12)
    # projection form
    if p > 4:
        rows, freq = C._fourier_rows(p)
        P = rows[np.isin(freq, [1, 2])]
        Ec = E - E.mean(0)
        proj = P.T @ (P @ Ec)
        assert C.fourier_energy_outside(E, freqs=[1, 2]) == pytest.approx(
            np.sum((Ec - proj) ** 2) / np.sum(Ec ** 2), rel=1e-12)
        np.testing.assert_allclose(C.fourier_energy_outside(E.T, freqs=[1], token_axis=1),
                                   C.fourier_energy_outside(E, freqs=[1]))


# ============================================================================ domain errors


@pytest.mark.parametrize("call, match", [
    (lambda: C.ce_tail_bound(1.0, 1), "n_classes"),
    (lambda: C.ce_tail_bound(np.inf, 3), "gamma"),
    (lambda: C.gap_for_loss_level(0.0, 3), "eps"),
    (lambda: C.gap_for_loss_level(1e-3, 2.5), "n_classes"),
    (lambda: C.fast_clock_bound(1e-3, 3, 0.0), "rate"),
    (lambda: C.fast_clock_bound(1e-3, 3, 1.0, t0=-1.0), "t0"),
    (lambda: C.fast_clock_bound(1e-3, 3, 1.0, gamma0=np.nan), "gamma0"),
    (lambda: C.contraction_clock_bound(1e-3, 1.0, 1.0), "rho"),
    (lambda: C.contraction_clock_bound(1e-3, -1.0, 0.5), "loss0"),
    (lambda: C.contraction_clock_bound(1e-3, 1.0, 0.5, k0=-1), "k0"),
    (lambda: C.contraction_clock_bound(1e-3, 1.0, 0.5, k0=1.5), "k0"),
    (lambda: C.ce_smoothness_constant(-1.0), "B"),
    (lambda: C.softmax_logit_hessian([0.5, 0.6]), "sum to 1"),
    (lambda: C.softmax_logit_hessian([-0.1, 1.1]), "probs"),
    (lambda: C.binary_pl_ratio(np.nan), "margin"),
    (lambda: C.logit_gaps(np.zeros(3), [0]), "2-D"),
    (lambda: C.logit_gaps(np.zeros((2, 1)), [0, 0]), "n_classes"),
    (lambda: C.logit_gaps(np.zeros((2, 3)), [0, 3]), "labels"),
    (lambda: C.logit_gaps(np.zeros((2, 3)), [0]), "labels"),
    (lambda: C.kl_gap_solution(1.0, 1.0, 1.0, 0.5), r"theta must be in \(1/2, 1\) for the polynomial clock"),
    (lambda: C.kl_gap_solution(1.0, 1.0, 1.0, 1.0), "theta"),
    (lambda: C.kl_gap_solution(1.0, 0.0, 1.0, 0.75), "gap0"),
    (lambda: C.kl_gap_solution(1.0, 1.0, 0.0, 0.75), "a must"),
    (lambda: C.kl_gap_solution(0.5, 1.0, 1.0, 0.75, t0=1.0), "t must be >= t0"),
    (lambda: C.kl_gap_bounds(1.0, 1.0, 2.0, 1.0, 0.75), "C_kl"),
    (lambda: C.kl_gap_bounds(1.0, 1.0, 0.0, 1.0, 0.75), "c_kl"),
    (lambda: C.kl_clock_time(0.0, 1.0, 1.0, 0.75), "delta"),
    (lambda: C.representation_clock_bounds(1e-3, 1.0, 1.0, 1.0, 0.75, m_G=2.0, M_G=1.0), "M_G"),
    (lambda: C.representation_clock_bounds(1e-3, 1.0, 1.0, 1.0, 0.75, m_G=0.0), "m_G"),
    (lambda: C.kl_exponent_power(2.0), "q"),
    (lambda: C.kl_exponent_depth(1), "depth"),
    (lambda: C.weight_decay_tail_rate(0.0, 2), "mu"),
    (lambda: C.weight_decay_tail_rate(0.1, 1), "depth"),
    (lambda: C.coupled_mismatch_lower_bound(1e-3, -1.0, 4, 0.5, 0, 0, 1.0, 0.75, 1.0, 0), "kappa"),
    (lambda: C.modular_characters(1), "p"),
    (lambda: C.modular_characters(5, [5]), "k must be in"),
    (lambda: C.fourier_energy_outside(np.ones((5, 2))), "exactly one"),
    (lambda: C.fourier_energy_outside(np.ones((5, 2)), freqs=[1], n_top=1), "exactly one"),
    (lambda: C.fourier_energy_outside(np.ones((5, 2)), freqs=[1]), "zero energy"),
    (lambda: C.fourier_energy_outside(np.eye(5), p=6, freqs=[1]), "p must equal"),
    (lambda: C.fourier_energy_outside(np.eye(5), freqs=[]), "freqs"),
    (lambda: C.accuracy_clock([0, 1], [0, 1], target=1.5), "target"),
    (lambda: C.zero_one_loss_threshold(0), "n"),
    (lambda: C.cross_entropy(np.zeros((2, 3)), [0, 1], reduction="max"), "reduction"),
])
def test_domain_errors(call, match):
    with pytest.raises(DomainError, match=match):
        call()


def test_mismatch_when_both_clocks_overflow():
    """Issue 15: both clock terms beyond 1.8e308 are compared in log space (was inf - inf = NaN)."""
    from grokclocks import clocks as CL

    kw = dict(eps=5e-324, n_classes=2, t0=1e-7, gamma0=0.0, theta=0.55, gap0=0.01, T=1e-7, kappa=0.1)
    assert CL.coupled_mismatch_lower_bound(rate=5e-324, C_kl=5e-324, **kw) == math.inf  # t_KL ~ 1e650 >> t_fast
    # t_KL = 3.0e308, t_fast = 2.0e308 (both overflow): the difference 9.99928e307 (mpmath, 50 digits)
    d = CL.coupled_mismatch_lower_bound(rate=3.7222e-306, C_kl=7.547e-153, **kw)
    assert d == pytest.approx(9.9992763996309967021e307, rel=3e-13)  # eps * ln(3e308) = 1.6e-13


def test_deep_linear_energy_floor_at_extreme_decay():
    """Issue 15: mu L overflowed (inf * 0 = NaN at sigma = 0); the floor is sum s^2 / 2 for mu ~ 1e308 and
    L mu sum s^{2/L} / 2 to O(mu^2) for a subnormal mu."""
    from grokclocks.sim.landscapes import deep_linear_energy_floor

    assert deep_linear_energy_floor((3.0, 1.0, 0.0), 3, 1.7e308) == 5.0
    assert deep_linear_energy_floor((3.0, 1.0, 0.0), 3, 5e-324) == pytest.approx(1.5 * 5e-324 * (3 ** (2 / 3) + 1),
                                                                                 abs=5e-324)


@pytest.mark.parametrize("func, args", [
    (C.fast_clock_bound, (1e-3, 10, 1.0, 0.5, 0.1)), (C.fast_clock_loss_bound, (5.0, 10, 1.0, 0.5, 0.1)),
    (C.kl_differential_bounds, (1.0, 0.5, 2.0, 0.75)), (C.kl_gap_solution, (2.0, 1.0, 1.0, 0.75, 0.5)),
    (C.log_kl_gap_solution, (2.0, 1.0, 1.0, 0.75, 0.5)), (C.kl_gap_solution_pl, (2.0, 1.0, 1.0, 0.5)),
    (C.kl_gap_bounds, (2.0, 1.0, 0.5, 2.0, 0.75, 0.5)), (C.kl_clock_time, (1e-3, 1.0, 1.0, 0.75, 0.5)),
    (C.representation_clock_bounds, (1e-3, 1.0, 0.5, 2.0, 0.75, 0.5, 0.5, 2.0)),
    (C.weight_decay_tail_rate, (0.1, 3, 0.5)), (C.separation_ratio, (10.0, 2.0)),
    (C.clock_mismatch_lower_bound, (1e-3, 1e-2, 10, 1.0, 0.0, 0.1, 2.0, 0.75, 1.0, 0.5)),
    (C.coupled_mismatch_lower_bound, (1e-3, 0.5, 10, 1.0, 0.0, 0.1, 2.0, 0.75, 1.0, 0.5)),
], ids=lambda c: getattr(c, "__name__", ""))
def test_shapes_that_do_not_broadcast_raise_domain_error(func, args):
    # (3,) against (4,) reached NumPy's bare "operands could not be broadcast" ValueError
    func(*args)
    for k in range(1, len(args)):
        if isinstance(args[k], int):  # n_classes, depth: scalar integers
            continue
        a = list(args)
        a[0], a[k] = np.full(3, args[0]), np.full(4, args[k])
        with pytest.raises(DomainError, match=r"must broadcast against each other \(got shapes \w+ \(3,\), \w+ \(4,\)\)"):
            func(*a)


def test_integer_argument_closed_forms_take_arrays():
    """zero_one_loss_threshold, kl_exponent_depth and kl_rate_depth sweep over arrays of integers (a list, an
    integer or an integral float array), broadcast like every argument, and give the scalar calls' values
    (numpy's power may round 19^(1/2) differently in its 8-point SIMD loop: kl_rate_depth within 2 ulp)."""
    n = np.array([1, 2, 7, 10**6, 10**15])
    np.testing.assert_array_equal(C.zero_one_loss_threshold(n), [C.zero_one_loss_threshold(int(k)) for k in n])
    depth = np.arange(2.0, 40.0)
    np.testing.assert_array_equal(C.kl_exponent_depth(depth), [C.kl_exponent_depth(int(d)) for d in depth])
    m = np.arange(1, 25)
    got = C.kl_rate_depth(depth[:, None], m)
    assert got.shape == (depth.size, m.size)
    want = np.array([[C.kl_rate_depth(int(d), int(k)) for k in m] for d in depth])
    assert np.all(np.abs(got - want) <= 2 * np.spacing(want))
    assert isinstance(C.kl_rate_depth(3, 2), float) and C.kl_rate_depth(3, 2) == 6.0
    for bad, fn in (([1, 0], C.zero_one_loss_threshold), ([2, 2.5], C.kl_exponent_depth),
                    ([True, 3], C.kl_exponent_depth), ([1, 2], C.kl_exponent_depth)):
        with pytest.raises(DomainError):
            fn(bad)
    with pytest.raises(DomainError, match="broadcast"):
        C.kl_rate_depth([2, 3], [1, 2, 3])
