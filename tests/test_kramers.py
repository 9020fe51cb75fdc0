"""grokclocks.kramers against independent references, the spec's tables, properties and domain errors.

References computed here from scratch: mpmath quadrature (30 digits) for the 1-D MFPT and the
arc-cosine kernel, mpmath ``expm`` for the readout residual, central finite differences for the
Jacobian, the kernel velocity and the potentials, numpy ``eigvalsh`` of explicitly built kernels,
``scipy.linalg.expm`` / explicit loops for the ridge solutions.  Table values are the spec's
(shared/spec/kramers.md §3, §9, §10).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import linalg

from grokclocks import DomainError
from grokclocks import kramers as K

mp.mp.dps = 30


def _net(p=7, N=33, seed=0, n_out=1):
    X, a_, b_, y = K.modadd_inputs(p)
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(N, 2 * p)) / math.sqrt(2 * p)
    a = rng.normal(size=(N,) if n_out == 1 else (N, n_out)) / math.sqrt(N)
    return X, W, a, y


# ============================================================================ conventions, model, task


def test_decay_rate():
    assert K.decay_rate(0.3) == pytest.approx(0.6, rel=1e-15)
    assert K.decay_rate(0.3, "half") == pytest.approx(0.3, rel=1e-15)
    np.testing.assert_allclose(K.decay_rate(np.array([0.1, 1.0]), "eq2"), [0.2, 2.0], rtol=1e-15)
    with pytest.raises(DomainError, match="penalty must be 'eq2' or 'half'"):
        K.decay_rate(0.1, "l2")
    with pytest.raises(DomainError, match="lam"):
        K.decay_rate(0.0)
    assert K.decay_rate(0.0, allow_zero=True) == 0.0


def test_kernel_rate_factor():
    assert K.kernel_rate_factor(10) == 1.0
    assert K.kernel_rate_factor(10, "mean") == pytest.approx(0.1)
    with pytest.raises(DomainError, match="loss_norm"):
        K.kernel_rate_factor(10, "avg")


def test_param_count():
    assert K.param_count(512, 97) == 99_840
    assert K.param_count(512, 97, n_out=97) == 148_992


def test_n_train_and_inputs():
    assert K.n_train(97, 0.3) == 2822
    X, a, b, y = K.modadd_inputs(5)
    assert X.shape == (25, 10) and np.all(X.sum(1) == 2)
    G = X @ X.T
    assert set(np.unique(G)) == {0.0, 1.0, 2.0}
    np.testing.assert_array_equal(y, (a + b) % 5)
    tr, te = K.modadd_split(11, 0.3, 0)
    np.testing.assert_array_equal(np.sort(np.concatenate([tr, te])), np.arange(121))
    np.testing.assert_array_equal(tr, np.random.default_rng(0).permutation(121)[:36])


def test_milestones():
    s = np.array([100, 200, 300, 400])
    # default train level 1.0 (grokclocks.task.TRAIN_LEVEL, the zero-one clock), the spec's 0.99 on request
    assert K.milestones(s, [0.5, 0.995, 1, 1], [0, 0.2, 0.9, 0.99]) == (300.0, 400.0)
    assert K.milestones(s, [0.5, 0.995, 1, 1], [0, 0.2, 0.9, 0.99], q_train=0.99) == (200.0, 400.0)
    assert K.milestones(s, [0.5, 0.9, 0.9, 0.9], [0, 0, 0, 0]) == (None, None)
    assert K.milestones(s, [0.5, 0.995, 1, 1], [0, 0.2, 0.9, 0.99], q_train=1.0) == (300.0, 400.0)


def test_forward_vector_readout():
    X, W, a, _ = _net(n_out=4)
    f = K.two_layer_forward(X, W, a, 0.25)
    assert f.shape == (49, 4)
    np.testing.assert_allclose(f[:, 2], K.two_layer_forward(X, W, a[:, 2], 0.25), rtol=1e-14)


# ============================================================================ Jacobian and NTK


def test_jacobian_and_ntk_vs_explicit_and_fd():
    X, W, a, _ = _net(p=7, N=33)
    al = 0.3
    Ja, JW = K.two_layer_jacobian(X, W, a, al)
    Ka, Kw = K.ntk_decomposition(X, W, a, al)
    JWf = JW.reshape(X.shape[0], -1)
    np.testing.assert_allclose(Ja @ Ja.T, Ka, rtol=1e-12, atol=1e-12 * np.abs(Ka).max())
    np.testing.assert_allclose(JWf @ JWf.T, Kw, rtol=1e-12, atol=1e-12 * np.abs(Kw).max())
    eps = 1e-6
    Ja_fd = np.empty_like(Ja)
    for j in range(W.shape[0]):
        e = np.zeros_like(a)
        e[j] = eps
        Ja_fd[:, j] = (K.two_layer_forward(X, W, a + e, al) - K.two_layer_forward(X, W, a - e, al)) / (2 * eps)
    JW_fd = np.empty_like(JW)
    for j in range(W.shape[0]):
        for k in range(W.shape[1]):
            E = np.zeros_like(W)
            E[j, k] = eps
            JW_fd[:, j, k] = (K.two_layer_forward(X, W + E, a, al) - K.two_layer_forward(X, W - E, a, al)) / (2 * eps)
    J = np.concatenate([JWf, Ja], 1)
    Jfd = np.concatenate([JW_fd.reshape(X.shape[0], -1), Ja_fd], 1)
    assert np.max(np.abs(J - Jfd)) / np.max(np.abs(J)) < 1e-8
    Kfd = Jfd @ Jfd.T
    assert np.linalg.norm(Kfd - (Ka + Kw)) / np.linalg.norm(Ka + Kw) < 1e-8


def test_ntk_vector_readout():
    X, W, A, _ = _net(p=5, N=20, n_out=3)
    Ka, Kw = K.ntk_decomposition(X, W, A, 0.2)
    assert Kw.shape == (3, 3, 25, 25)
    for c in range(3):
        Ka1, Kw1 = K.ntk_decomposition(X, W, A[:, c], 0.2)
        np.testing.assert_allclose(Ka, Ka1, rtol=1e-14)
        np.testing.assert_allclose(Kw[c, c], Kw1, rtol=1e-12, atol=1e-15)


def test_ntk_vs_jax_autodiff():
    jax = pytest.importorskip("jax")
    from grokclocks.sim import kramers as SK
    from grokclocks.sim import enable_x64

    enable_x64()
    X, W, a, _ = _net(p=5, N=17)
    Ka, Kw = K.ntk_decomposition(X, W, a, 0.4)
    Ka_j, Kw_j = SK.empirical_ntk({"W": jax.numpy.asarray(W), "a": jax.numpy.asarray(a)}, jax.numpy.asarray(X), 0.4)
    np.testing.assert_allclose(Ka_j, Ka, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(Kw_j, Kw, rtol=1e-12, atol=1e-14)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), c=st.floats(0.1, 10.0), al=st.floats(0.0, 0.5))
def test_ntk_properties(seed, c, al):
    X, W, a, _ = _net(p=4, N=9, seed=seed)
    Ka, Kw = K.ntk_decomposition(X, W, a, al)
    for M in (Ka, Kw):
        np.testing.assert_allclose(M, M.T, atol=1e-14)
        assert np.linalg.eigvalsh(M)[0] > -1e-12 * max(1.0, np.abs(M).max())
    Ka2, Kw2 = K.ntk_decomposition(X, c * W, a, al)
    np.testing.assert_allclose(Ka2, c * c * Ka, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(Kw2, Kw, rtol=1e-12, atol=1e-300)


# ============================================================================ infinite-width kernels


def _mp_relu_moment(rho, var):
    """E[relu(u) relu(v)], (u, v) Gaussian with variances var and correlation rho: 1-D mpmath quadrature over
    u after the Gaussian integral over v given u (E[relu(m + q z)] = m Phi(m/q) + q phi(m/q))."""
    r = mp.mpf(rho)
    q = mp.sqrt(1 - r * r)

    def cond(z1):
        m = r * z1
        return m * mp.ncdf(m / q) + q * mp.npdf(m / q)

    return var * mp.quad(lambda z1: z1 * cond(z1) * mp.npdf(z1), [0, mp.inf])


def test_nngp_vs_mpmath():
    p = 7
    kb, ko, kn = K.relu_nngp_modadd(p)
    old = mp.mp.dps
    mp.mp.dps = 20
    try:
        assert kb == pytest.approx(1 / (2 * p), rel=1e-15)  # E[relu(u)^2] = var/2
        assert ko == pytest.approx(float(_mp_relu_moment(0.5, mp.mpf(1) / p)), rel=1e-12)
        assert kn == pytest.approx(float(_mp_relu_moment(0.0, mp.mpf(1) / p)), rel=1e-12)
    finally:
        mp.mp.dps = old
    assert K.relu_feature_kernel_modadd(p) == (1.0, 1 / 3, 0.0)


@pytest.mark.parametrize("p", [3, 5, 7, 11, 13])
def test_nngp_spectrum_vs_eigvalsh(p):
    X, a, b, y = K.modadd_inputs(p)
    kap = K.nngp_kernel_matrix(a, b, p)
    ev = np.linalg.eigvalsh(kap)
    s = K.modadd_nngp_spectrum(p)
    m = s["multiplicities"]
    pred = np.sort(np.repeat([s["bottom"], s["mid"], s["top"]], [m[2], m[1], m[0]]))
    np.testing.assert_allclose(ev, pred, rtol=1e-10, atol=1e-12 * ev.max())
    # label-relevant Fourier functions lie in the bottom eigenspace
    for k in (1, 2):
        u = np.cos(2 * np.pi * k * y / p)
        np.testing.assert_allclose(kap @ u, s["bottom"] * u, atol=1e-12 * ev.max())


def test_nngp_spectrum_values():
    assert K.modadd_nngp_spectrum(11)["kappa"] == pytest.approx(448.7, abs=0.05)
    assert K.modadd_nngp_spectrum(97)["kappa"] == pytest.approx(30419, abs=1)
    assert K.modadd_nngp_spectrum(113)["kappa"] == pytest.approx(41174, abs=1)


def test_readout_kernel_norm_lln_finite_n():
    p, N = 11, 4096
    X, *_ = K.modadd_inputs(p)
    rng = np.random.default_rng(3)
    W = rng.normal(size=(N, 2 * p)) / math.sqrt(2 * p)
    a = rng.normal(size=N) / math.sqrt(N)
    Ka, Kw = K.ntk_decomposition(X, W, a, 0.25)
    assert np.linalg.eigvalsh(Ka)[-1] / K.readout_kernel_norm(N, p, 0.25) == pytest.approx(1.0, abs=0.03)
    assert np.linalg.eigvalsh(Kw)[-1] / K.feature_kernel_norm(N, p, 0.25) == pytest.approx(1.0, abs=0.05)


# ============================================================================ readout residual (eq. 5, corrected)


def _mp_residual(Kn, y, r0, g, t):
    Km = mp.matrix(Kn.tolist())
    n = Kn.shape[0]
    A = Km + g * mp.eye(n)
    ym, r0m = mp.matrix(y.tolist()), mp.matrix(r0.tolist())
    rstar = -g * (mp.inverse(A) * ym)
    return np.array((rstar + mp.expm(-A * t) * (r0m - rstar)).tolist(), dtype=float).ravel()


def test_readout_residual_vs_mpmath_expm():
    rng = np.random.default_rng(1)
    B = rng.normal(size=(5, 8))
    Kn = B @ B.T / 8
    y, r0 = rng.normal(size=5), rng.normal(size=5)
    for pen, g in (("eq2", 0.2), ("half", 0.1)):
        for t in (0.0, 0.3, 2.0, 50.0):
            ref = _mp_residual(Kn, y, r0, g, t)
            got = K.readout_residual(Kn, y, r0, 0.1, t, penalty=pen)
            np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    # mean loss divides the kernel by n, the forcing stays
    ref = _mp_residual(Kn / 5, y, r0, 0.2, 1.5)
    np.testing.assert_allclose(K.readout_residual(Kn, y, r0, 0.1, 1.5, loss_norm="mean"), ref, rtol=1e-10, atol=1e-12)
    # the paper's r -> 0 is wrong: the limit is the ridge residual
    r_inf = K.readout_residual(Kn, y, r0, 0.1, 1e4)
    np.testing.assert_allclose(r_inf, -0.2 * np.linalg.solve(Kn + 0.2 * np.eye(5), y), rtol=1e-10)
    assert np.linalg.norm(r_inf) > 0.01 * np.linalg.norm(y)


def test_readout_residual_solves_the_ode():
    rng = np.random.default_rng(2)
    B = rng.normal(size=(6, 6))
    Kn = B @ B.T
    y, r0 = rng.normal(size=6), rng.normal(size=6)
    ts = np.array([0.4 - 1e-6, 0.4, 0.4 + 1e-6])
    R = K.readout_residual(Kn, y, r0, 0.05, ts)
    drdt = (R[2] - R[0]) / 2e-6
    np.testing.assert_allclose(drdt, -(Kn + 0.1 * np.eye(6)) @ R[1] - 0.1 * y, rtol=1e-6, atol=1e-7)


def test_readout_timescale_eta_is_step_count():
    rng = np.random.default_rng(4)
    B = rng.normal(size=(5, 3))
    Kn = B @ B.T  # rank 3: zero modes are skipped by which="min"
    ev = np.linalg.eigvalsh(Kn)
    assert K.readout_timescale(Kn) == pytest.approx(1 / ev[-1], rel=1e-12)
    assert K.readout_timescale(Kn, "min") == pytest.approx(1 / ev[2], rel=1e-10)
    assert K.readout_timescale(Kn, eta=0.01) == pytest.approx(K.readout_timescale(Kn) / 0.01, rel=1e-14)
    assert K.readout_timescale(Kn, lam=0.5) == pytest.approx(1 / (ev[-1] + 1.0), rel=1e-12)
    assert K.readout_timescale(Kn, loss_norm="mean") == pytest.approx(5 / ev[-1], rel=1e-12)


# ============================================================================ separation


def test_initial_timescales_vs_finite_differences():
    p, N, al = 7, 300, 0.3
    X, W, a, yc = _net(p=p, N=N, seed=5)
    y = math.sqrt(2) * np.cos(2 * np.pi * yc / p)
    ts = K.initial_timescales(X, y, W, a, al)
    Ka, _ = K.ntk_decomposition(X, W, a, al)
    assert ts["tau_r"] == pytest.approx(1 / np.linalg.eigvalsh(Ka)[-1], rel=1e-12)
    # Wdot = -dL/dW by finite differences of the summed loss
    loss = lambda Wm: 0.5 * np.sum((K.two_layer_forward(X, Wm, a, al) - y) ** 2)  # noqa: E731
    eps = 1e-6
    G = np.zeros_like(W)
    for j in range(0, N, 37):
        for k in range(W.shape[1]):
            E = np.zeros_like(W)
            E[j, k] = eps
            G[j, k] = (loss(W + E) - loss(W - E)) / (2 * eps)
    c = N ** (-al)
    Z = X @ W.T
    r = c * np.maximum(Z, 0) @ a - y
    Wdot = -c * (((Z > 0) * r[:, None]) * a[None, :]).T @ X
    rows = np.arange(0, N, 37)
    np.testing.assert_allclose(-G[rows], Wdot[rows], rtol=1e-6, atol=1e-6 * np.abs(Wdot).max())
    assert ts["tau_W"] == pytest.approx(np.linalg.norm(W) / np.linalg.norm(Wdot), rel=1e-12)
    # Kdot along Wdot by central differences
    h = 1e-6
    Kp, _ = K.ntk_decomposition(X, W + h * Wdot, a, al)
    Km, _ = K.ntk_decomposition(X, W - h * Wdot, a, al)
    Kdot = (Kp - Km) / (2 * h)
    assert ts["tau_K"] == pytest.approx(np.linalg.norm(Ka) / np.linalg.norm(Kdot), rel=1e-6)


def test_separation_exponent_table():
    assert K.separation_exponent(0.25, "paper_claim") == 0.5
    assert K.separation_exponent(0.25, "paper_algebra") == 1.0
    assert K.separation_exponent(0.25, "weights") == 1.25
    assert K.separation_exponent(0.25, "kernel") == 1.75
    assert K.separation_exponent(0.25, "kernel_integrated") == 1.5
    assert K.separation_exponent(0.4, "weights", a_init="unit") == 0.5
    assert K.separation_exponent(0.4, "kernel", a_init="unit") == 1.0
    with pytest.raises(DomainError):
        K.separation_exponent(0.4, "paper_claim", a_init="unit")
    with pytest.raises(DomainError, match="measure"):
        K.separation_exponent(0.4, "speed")


def test_feature_timescale_estimate():
    assert K.feature_timescale_estimate(4096, 0.0) == pytest.approx(64.0)
    assert K.feature_timescale_estimate(4096, 0.5) == pytest.approx(4096.0)


def test_implicit_bias_time():
    assert K.implicit_bias_time_estimate(math.e**3, 0.5) == pytest.approx(3.0)
    assert K.implicit_bias_time_estimate(math.e**3, 0.5, "half") == pytest.approx(6.0)
    assert K.implicit_bias_time is K.implicit_bias_time_estimate


# ============================================================================ ridge


def _ridge_problem(n=6, D=9, seed=0):
    rng = np.random.default_rng(seed)
    Phi = rng.normal(size=(n, D))
    y = rng.normal(size=n)
    th0 = rng.normal(size=D)
    return Phi, y, th0


@pytest.mark.parametrize("shape", [(6, 9), (12, 5)])
def test_ridge_gf_vs_dense_expm(shape):
    Phi, y, th0 = _ridge_problem(*shape)
    n, D = Phi.shape
    g = 0.3  # lam=0.15, eq2
    A = Phi.T @ Phi / n + g * np.eye(D)
    thg = np.linalg.solve(A, Phi.T @ y / n)
    for t in (0.0, 0.7, 5.0):
        ref = thg + linalg.expm(-A * t) @ (th0 - thg)
        np.testing.assert_allclose(K.ridge_gf(Phi, y, 0.15, th0, t), ref, rtol=1e-10, atol=1e-12)
    out = K.ridge_gf(Phi, y, 0.3, th0, np.array([0.0, 1.0]), penalty="half")
    assert out.shape == (2, D)


def test_ridge_null_space_decay_and_gd():
    Phi, y, th0 = _ridge_problem(4, 10)
    Pn = np.eye(10) - np.linalg.pinv(Phi) @ Phi
    for t in (1.0, 7.0):
        th = K.ridge_gf(Phi, y, 0.05, th0, t)
        np.testing.assert_allclose(Pn @ th, math.exp(-0.1 * t) * (Pn @ th0), rtol=1e-9, atol=1e-13)
    eta, lam = 0.05, 0.05
    th = th0.copy()
    A = Phi.T @ Phi / 4
    b = Phi.T @ y / 4
    ks = np.array([0, 1, 10, 200])
    got = K.ridge_gd(Phi, y, lam, th0, eta, ks)
    for k in range(201):
        if k in ks:
            np.testing.assert_allclose(got[list(ks).index(k)], th, rtol=1e-10, atol=1e-12)
        th = th - eta * (A @ th - b + 0.1 * th)
    with pytest.raises(DomainError, match="eta"):
        K.ridge_gd(Phi, y, lam, th0, 10.0, 3)
    K.ridge_gd(Phi, y, lam, th0, 10.0, 3, allow_unstable=True)


def test_ridge_losses_and_delay():
    rng = np.random.default_rng(0)
    n, D = 10, 40
    Phi = rng.normal(size=(n, D))
    thT = Phi.T @ rng.normal(size=n)
    thT *= math.sqrt(5.0) / np.linalg.norm(thT)
    y = Phi @ thT
    th0 = 2 * rng.normal(size=D)
    tr, te = K.ridge_losses(Phi, y, 0.01, th0, 3.0, theta_teacher=thT, penalty="half")
    th = K.ridge_gf(Phi, y, 0.01, th0, 3.0, penalty="half")
    assert tr == pytest.approx(0.5 * np.mean((Phi @ th - y) ** 2), rel=1e-12)
    assert te == pytest.approx(0.5 * np.sum((th - thT) ** 2), rel=1e-12)
    Pt = rng.normal(size=(7, D))
    _, te2 = K.ridge_losses(Phi, y, 0.01, th0, 3.0, Phi_test=Pt, y_test=Pt @ thT, penalty="half")
    assert te2 == pytest.approx(0.5 * np.mean((Pt @ (th - thT)) ** 2), rel=1e-12)
    d = K.ridge_delay(Phi, y, 0.01, th0, 1e-3, 0.05, theta_teacher=thT, penalty="half")
    assert K.ridge_losses(Phi, y, 0.01, th0, d["t_grok"], theta_teacher=thT, penalty="half")[1] == pytest.approx(0.05, rel=1e-9)
    assert K.ridge_losses(Phi, y, 0.01, th0, d["t_mem"], theta_teacher=thT, penalty="half")[0] == pytest.approx(1e-3, rel=1e-9)
    Pn = np.eye(D) - np.linalg.pinv(Phi) @ Phi
    asym = K.ridge_grok_time_asymptotic(np.sum((Pn @ th0) ** 2), 0.05, 0.01, "half")
    assert d["t_grok"] == pytest.approx(asym, rel=0.01)
    tp, tn = K.ridge_timescales(Phi, 0.01, "half")
    assert tn == pytest.approx(100.0)
    mu = np.linalg.eigvalsh(Phi @ Phi.T / n)[0]
    assert tp == pytest.approx(1 / (mu + 0.01), rel=1e-10)
    assert d["ratio_asymptotic"] == pytest.approx(mu / 0.01, rel=1e-10)
    with pytest.raises(DomainError, match="exactly one"):
        K.ridge_losses(Phi, y, 0.01, th0, 1.0)
    with pytest.raises(DomainError, match="exactly one"):
        K.ridge_losses(Phi, y, 0.01, th0, 1.0, theta_teacher=thT, Phi_test=Pt, y_test=y[:7])


def test_rf_interpolant_norm():
    rng = np.random.default_rng(3)
    Phi = rng.normal(size=(6, 20))
    y = rng.normal(size=6)
    a_star = np.linalg.lstsq(Phi, y, rcond=None)[0]  # min-norm interpolant
    assert K.rf_interpolant_norm(Phi @ Phi.T, y) == pytest.approx(np.linalg.norm(a_star), rel=1e-10)
    B = rng.normal(size=(6, 3))
    with pytest.raises(DomainError, match="positive definite"):
        K.rf_interpolant_norm(B @ B.T - 1e-3 * np.eye(6), y)


# ============================================================================ Eyring-Kramers


def test_eyring_kramers_formula_1d_2d():
    dw = K.test_potential("double_well_1d", h=1.0)
    for T in (0.5, 0.25, 0.1):
        tau = K.eyring_kramers_time(dw["hess_min"], dw["hess_saddle"], dw["delta_F"], T)
        assert tau == pytest.approx(2 * math.pi / math.sqrt(32) * math.exp(1 / T), rel=1e-13)
        assert tau == pytest.approx(K.kramers_time_1d(8.0, -4.0, 1.0, T), rel=1e-13)
    sd = K.test_potential("saddle_2d", h=1.0, k=1.0, c=3.0)
    pref = 2 * math.pi / 4 * math.sqrt(1 / 8)
    assert pref == pytest.approx(0.555360, abs=1e-6)
    assert K.eyring_kramers_time(sd["hess_min"], sd["hess_saddle"], 1.0, 0.25) == pytest.approx(pref * math.e**4, rel=1e-13)
    # prefactor half the 1-D one (determinant ratio exercised)
    assert pref == pytest.approx(0.5 * 2 * math.pi / math.sqrt(32), rel=1e-13)
    # rotation invariance of the determinant prefactor
    R = np.array([[math.cos(0.3), -math.sin(0.3)], [math.sin(0.3), math.cos(0.3)]])
    t1 = K.eyring_kramers_time(R @ sd["hess_min"] @ R.T, R @ sd["hess_saddle"] @ R.T, 1.0, 0.25)
    assert t1 == pytest.approx(pref * math.e**4, rel=1e-12)
    assert K.eyring_kramers_rate(sd["hess_min"], sd["hess_saddle"], 1.0, 0.25) == pytest.approx(1 / t1, rel=1e-12)


def test_eyring_log_and_overflow():
    Hm, Hs = np.diag([2.0, 3.0, 5.0]), np.diag([-1.5, 3.0, 4.0])
    lt = K.log_eyring_kramers_time(Hm, Hs, 2.0, 0.5)
    assert lt == pytest.approx(math.log(K.eyring_kramers_time(Hm, Hs, 2.0, 0.5)), rel=1e-14)
    with pytest.raises(OverflowError, match="log_eyring_kramers_time"):
        K.eyring_kramers_time(Hm, Hs, 1000.0, 1.0)
    big = K.log_eyring_kramers_time(Hm, Hs, 1000.0, 1.0)
    assert big == pytest.approx(lt - 4.0 + 1000.0, rel=1e-14)
    with pytest.raises(OverflowError):
        K.kramers_time_1d(8, -4, 800, 1)
    assert K.log_kramers_time_1d(8, -4, 800, 1) == pytest.approx(math.log(2 * math.pi / math.sqrt(32)) + 800)


def test_first_order_correction_double_well():
    # F = h(x^2-1)^2: F''(m)=8h, F'''(m)=-24h (at -1), F''''=24h; F''(s)=-4h, F'''(s)=0
    T, h = 0.125, 1.0
    r = K.kramers_ratio_first_order_estimate((8 * h, -24 * h, 24 * h), (-4 * h, 0.0, 24 * h), T)
    assert r == pytest.approx(1 + 3 / 8 * T / h, rel=1e-14)


# ============================================================================ exact 1-D MFPT


def _mp_mfpt(coef, x0, b, T, lo=-3):
    """30-digit reference: (1/T) int_x0^b e^{F(y)/T} int_lo^y e^{-F(z)/T} dz dy (lo deep in the left wall)."""
    F = lambda x: sum(mp.mpf(c) * x**k for k, c in enumerate(coef))  # noqa: E731
    T = mp.mpf(T)
    gl = "gauss-legendre"
    inner = lambda y: mp.quad(lambda z: mp.exp(-F(z) / T), [lo, -1, y] if y > -1 else [lo, y], method=gl)  # noqa: E731
    pts = [x0] + [c for c in (0,) if x0 < c < b] + [b]
    return mp.quad(lambda y: mp.exp(F(y) / T) * inner(y), pts, method=gl) / T


def test_mfpt_1d_vs_mpmath():
    coef = [1.0, 0.0, -2.0, 0.0, 1.0]
    mp.mp.dps = 15  # ~2.5 s per value; agreement measured 1e-15 at dps 20 for Delta F/T = 8
    try:
        for T in (1 / 8, 1 / 16):
            ref = float(_mp_mfpt(coef, -1, 1, T))
            assert K.mfpt_1d_exact(coef, -1.0, 1.0, T) == pytest.approx(ref, rel=1e-8)
    finally:
        mp.mp.dps = 30


@pytest.mark.parametrize("dFT,to0,to1", [(2, 4.60654, 10.2586), (4, 33.9457, 69.2636), (8, 1749.19, 3500.03),
                                         (12, 93559.0, 187120), (16, 5.06064e6, 1.01213e7)])
def test_mfpt_1d_spec_table(dFT, to0, to1):
    coef = [1.0, 0.0, -2.0, 0.0, 1.0]
    assert K.mfpt_1d_exact(coef, -1.0, 0.0, 1 / dFT) == pytest.approx(to0, rel=2e-5)
    assert K.mfpt_1d_exact(coef, -1.0, 1.0, 1 / dFT) == pytest.approx(to1, rel=2e-5)


def test_mfpt_ratio_to_eyring_table():
    coef = [1.0, 0.0, -2.0, 0.0, 1.0]
    for dFT, ratio in ((4, 1.1422), (8, 1.0571), (16, 1.0255)):
        r = K.mfpt_1d_exact(coef, -1.0, 1.0, 1 / dFT) / K.kramers_time_1d(8, -4, 1, 1 / dFT)
        assert r == pytest.approx(ratio, abs=1e-4)


def test_mfpt_scaling_callable_and_log():
    coef = [1.0, 0.0, -2.0, 0.0, 1.0]
    h, T = 2.0, 0.4
    t_h = K.mfpt_1d_exact([h * c for c in coef], -1.0, 1.0, T)
    assert t_h == pytest.approx(K.mfpt_1d_exact(coef, -1.0, 1.0, T / h) / h, rel=1e-9)
    t_c = K.mfpt_1d_exact(lambda x: (x * x - 1) ** 2, -1.0, 1.0, 0.25)
    assert t_c == pytest.approx(69.2636447608363, rel=1e-8)
    # reflecting wall
    t_w = K.mfpt_1d_exact(coef, -1.0, 1.0, 0.25, lower=-1.5)
    assert t_w < 69.2636 and t_w > 60
    # huge barrier: only the log is finite; it approaches the Kramers law
    lt = K.log_mfpt_1d_exact(coef, -1.0, 1.0, 1e-3)
    assert lt == pytest.approx(K.log_kramers_time_1d(8, -4, 1, 1e-3), abs=1e-3)
    with pytest.raises(OverflowError):
        K.mfpt_1d_exact(coef, -1.0, 1.0, 1e-3)


def test_mfpt_2d_exact_vs_table_and_1d():
    sd = K.test_potential("saddle_2d", h=1.0, k=1.0, c=3.0)
    assert K.mfpt_2d_exact(sd["F_xy"], (-1.0, 0.0), 1.0, 0.25) == pytest.approx(42.4316, rel=1e-4)
    assert K.mfpt_2d_exact(sd["F_xy"], (-1.0, 0.0), 0.0, 0.25) == pytest.approx(20.4392, rel=1e-4)
    flat = K.test_potential("saddle_2d", h=1.0, k=1.0, c=0.0)
    assert K.mfpt_2d_exact(flat["F_xy"], (-1.0, 0.0), 1.0, 0.25) == pytest.approx(69.2636447608363, rel=1e-5)


def test_potentials_gradients_and_hessians():
    for name, kw in (("double_well_1d", dict(h=1.7)), ("saddle_2d", dict(h=1.3, k=0.7, c=2.0))):
        P = K.test_potential(name, **kw)
        d = P["dim"]
        F = (lambda z: P["F"](z[0])) if d == 1 else P["F"]
        z0 = np.array([0.37, -0.21])[:d]
        g = np.atleast_1d(P["grad"](z0[0] if d == 1 else z0))
        e = 1e-6
        fd = np.array([(F(z0 + e * np.eye(d)[i]) - F(z0 - e * np.eye(d)[i])) / (2 * e) for i in range(d)])
        np.testing.assert_allclose(g, fd, rtol=1e-7)
        for pt, Hk in ((P["x_min"], "hess_min"), (P["x_saddle"], "hess_saddle")):
            e2 = 1e-4
            H = np.array([[(F(pt + e2 * (np.eye(d)[i] + np.eye(d)[j])) - F(pt + e2 * (np.eye(d)[i] - np.eye(d)[j]))
                            - F(pt - e2 * (np.eye(d)[i] - np.eye(d)[j])) + F(pt - e2 * (np.eye(d)[i] + np.eye(d)[j])))
                           / (4 * e2 * e2) for j in range(d)] for i in range(d)])
            np.testing.assert_allclose(H, P[Hk], rtol=1e-5, atol=1e-6)
        assert F(P["x_saddle"]) - F(P["x_min"]) == pytest.approx(P["delta_F"], rel=1e-14)


# ============================================================================ temperatures, spectral, table


def test_temperatures():
    assert K.t_eff_sgd(0.01, 3.2, 10) == pytest.approx(0.0016)
    assert K.t_eff_sgd(0.01, 3.2, 10, n_params=8) == pytest.approx(0.0002)
    S = np.diag([1.0, 4.0])
    assert K.t_eff_sgd_direction(0.1, S, [0, 2.0], 5) == pytest.approx(0.1 * 4 / 10)
    # exact AR(1) stationary variance: Var = (eta^2 s2/B) / (1 - (1 - eta h)^2)
    eta, s2, B, h = 0.3, 2.0, 4, 1.5
    var = eta**2 * s2 / B / (1 - (1 - eta * h) ** 2)
    assert K.sgd_stationary_temperature_1d(eta, s2, B, h) == pytest.approx(h * var, rel=1e-14)
    assert K.t_eff_fullbatch_heuristic(0.1, 5.0, coef=2.0) == pytest.approx(0.1)
    with pytest.raises(TypeError):
        K.t_eff_fullbatch_heuristic(0.1, 5.0)  # coef is required


def test_spectral_delay_ratio():
    assert K.spectral_delay_ratio([0.05, 1, 4]) == pytest.approx(80.0, rel=1e-14)
    # mpmath from the exact doubles: the float expression log(1 - 0.0005) itself is off by 1.1e-13
    # (1 - 0.0005 rounds); the function restores the product's rounding error (9.5e-17 measured)
    with mp.workdps(40):
        ref = mp.log(1 - mp.mpf(0.01) * 4) / mp.log(1 - mp.mpf(0.01) * mp.mpf(0.05))
    assert K.spectral_delay_ratio([0.05, 1, 4], eta=0.01) == pytest.approx(float(ref), rel=4e-16)
    assert K.spectral_delay_ratio([1.0, 2.0], eta=1e-20) == pytest.approx(2.0, rel=1e-15)  # was ZeroDivisionError
    assert K.spectral_delay_ratio([0.05, 1, 4], eta=0.01) == pytest.approx(81.624, abs=1e-3)


def test_arrhenius_and_continuity():
    assert K.arrhenius_barrier(73) == pytest.approx(4.2905, abs=1e-4)
    assert K.arrhenius_barrier(73, 2.0) == pytest.approx(math.log(36.5))
    with pytest.warns(RuntimeWarning):
        K.arrhenius_barrier(0.5)
    assert K.continuity_correction_shift(0.25, 0.01) == pytest.approx(0.5826 * math.sqrt(0.005))


def test_delay_scaling_table():
    with pytest.raises(DomainError, match="measure"):
        K.delay_scaling("separation", N=1024, alpha=0.0)
    assert K.delay_scaling("separation", N=1024, alpha=0.0, measure="kernel_integrated") == pytest.approx(1024.0**2)
    assert K.delay_scaling("separation", N=1024, alpha=0.0, measure="paper_claim") == 1.0
    assert K.delay_scaling("implicit_bias", init_scale=100.0, lam=0.5) == pytest.approx(math.log(100))
    assert K.delay_scaling("ridge", mu_min=1.857, lam=0.01, penalty="half") == pytest.approx(185.7)
    dw = K.test_potential("double_well_1d", h=1.0)
    assert K.delay_scaling("kramers", hess_min=dw["hess_min"], hess_saddle=dw["hess_saddle"], delta_F=1.0,
                           T=0.25) == pytest.approx(60.6433, rel=1e-5)
    assert K.delay_scaling("spectral", eigs=[1.0, 4.0]) == 4.0
    assert K.headline_record()["ratio"] == 73.0 and K.HEADLINE["t_grok"] == 14600


# ============================================================================ domain errors


def test_domain_errors():
    X, W, a, _ = _net(p=3, N=4)
    Hm, Hs = np.diag([1.0, 2.0]), np.diag([-1.0, 2.0])
    cases = [
        (lambda: K.two_layer_forward(X, W, a, 0.6), "alpha must be in"),
        (lambda: K.two_layer_forward(X, W, a, -0.1), "alpha"),
        (lambda: K.param_count(0, 5), "N"),
        (lambda: K.param_count(4, 1), "p"),
        (lambda: K.n_train(5, 1.0), "rho"),
        (lambda: K.n_train(3, 0.05), "floor"),
        (lambda: K.implicit_bias_time(1.0, 0.1), "init_scale"),
        (lambda: K.implicit_bias_time(0.3, 0.1), "init_scale"),
        (lambda: K.decay_rate(0.1, "mean"), "penalty"),
        (lambda: K.eyring_kramers_time(Hm, Hs, 1.0, 0.0), "T"),
        (lambda: K.eyring_kramers_time(Hm, Hs, 0.0, 1.0), "delta_F"),
        (lambda: K.eyring_kramers_time(np.diag([-1.0, 2.0]), Hs, 1.0, 1.0), "positive definite"),
        (lambda: K.eyring_kramers_time(Hm, np.diag([-1.0, -2.0]), 1.0, 1.0), "exactly one negative"),
        (lambda: K.eyring_kramers_time(Hm, np.diag([1.0, 2.0]), 1.0, 1.0), "exactly one negative"),
        (lambda: K.eyring_kramers_time(Hm, np.diag([-1.0, 0.0]), 1.0, 1.0), "degenerate"),
        (lambda: K.eyring_kramers_time(np.diag([1.0, 0.0]), Hs, 1.0, 1.0), "degenerate"),
        (lambda: K.eyring_kramers_time(np.array([[1.0, 0.5], [0.0, 1.0]]), Hs, 1.0, 1.0), "symmetric"),
        (lambda: K.eyring_kramers_time(Hm, np.diag([-1.0, 2.0, 3.0]), 1.0, 1.0), "same shape"),
        (lambda: K.kramers_time_1d(8, 4, 1, 1), "curv_saddle"),
        (lambda: K.kramers_time_1d(-8, -4, 1, 1), "curv_min"),
        (lambda: K.mfpt_1d_exact([1, 0, -2, 0, 1], -1.0, -1.5, 0.25), "b must be > x0"),
        (lambda: K.mfpt_1d_exact([1, 0, -2, 0, 1], -1.0, 1.0, 0.25, lower=-0.5), "lower"),
        (lambda: K.mfpt_1d_exact([1, 0, -2, 0, 1], -1.0, 1.0, -0.25), "T"),
        (lambda: K.mfpt_1d_exact([0, 1, 0, 1], -1.0, 1.0, 0.25), "even degree"),
        (lambda: K.mfpt_1d_exact([1, 0, -2, 0, -1], -1.0, 1.0, 0.25), "positive leading"),
        (lambda: K.arrhenius_barrier(0.0), "delay_ratio"),
        (lambda: K.arrhenius_barrier(5.0, -1.0), "prefactor_ratio"),
        (lambda: K.t_eff_sgd(0.0, 1.0, 1), "eta"),
        (lambda: K.t_eff_sgd(0.1, -1.0, 1), "trace_sigma"),
        (lambda: K.t_eff_sgd(0.1, 1.0, 0), "batch_size"),
        (lambda: K.t_eff_sgd(0.1, 1.0, 1, n_params=0), "n_params"),
        (lambda: K.sgd_stationary_temperature_1d(1.0, 1.0, 1, 2.5), "eta\\*curvature"),
        (lambda: K.spectral_delay_ratio([0.0, 1.0]), "eigs"),
        (lambda: K.spectral_delay_ratio([0.5, 1.0], eta=2.5), "eta\\*mu_max"),
        (lambda: K.ridge_gf(np.ones((3, 4)), np.ones(2), 0.1, np.ones(4), 1.0), "y must be"),
        (lambda: K.ridge_gf(np.ones((3, 4)), np.ones(3), 0.1, np.ones(4), -1.0), "t"),
        (lambda: K.ridge_grok_time_asymptotic(1.0, 0.0, 0.1), "eps_test"),
        (lambda: K.readout_residual(np.eye(3), np.ones(3), np.ones(3), -0.1, 1.0), "lam"),
        (lambda: K.readout_residual(np.eye(3), np.ones(3), np.ones(3), 0.1, 1.0, loss_norm="avg"), "loss_norm"),
        (lambda: K.two_layer_forward(X, W, a, float("nan")), "finite"),
        (lambda: K.test_potential("quartic"), "name"),
        (lambda: K.delay_scaling("barrier"), "mechanism"),
    ]
    for fn, msg in cases:
        with pytest.raises(DomainError, match=msg):
            fn()


# ============================================================================ hypothesis properties


@settings(max_examples=8, deadline=None)
@given(T=st.floats(0.15, 2.0), h=st.floats(0.5, 3.0))
def test_mfpt_property_other_minimum_vs_saddle(T, h):
    """tau(-1 -> +1) > tau(-1 -> 0) and both scale as tau(h, T) = tau(1, T/h)/h."""
    coef = [h, 0.0, -2 * h, 0.0, h]
    t1 = K.mfpt_1d_exact(coef, -1.0, 1.0, T)
    t0 = K.mfpt_1d_exact(coef, -1.0, 0.0, T)
    assert t1 > t0 > 0
    assert t1 == pytest.approx(K.mfpt_1d_exact([1, 0, -2, 0, 1], -1.0, 1.0, T / h) / h, rel=1e-8)


@settings(max_examples=40, deadline=None)
@given(eigs=st.lists(st.floats(0.01, 10.0), min_size=2, max_size=6), eta=st.floats(1e-4, 0.19))
def test_spectral_ratio_properties(eigs, eta):
    k = K.spectral_delay_ratio(eigs)
    assert k >= 1.0
    assert K.spectral_delay_ratio(eigs, eta=eta) > 0


@settings(max_examples=30, deadline=None)
@given(T=st.floats(0.05, 5.0), dF=st.floats(0.1, 5.0), c=st.floats(0.0, 5.0))
def test_eyring_properties(T, dF, c):
    sd = K.test_potential("saddle_2d", h=1.0, k=1.0, c=c)
    lt = K.log_eyring_kramers_time(sd["hess_min"], sd["hess_saddle"], dF, T)
    assert lt == pytest.approx(math.log(math.pi / 2 * math.sqrt(1 / (2 * (1 + c)))) + dF / T, rel=1e-12, abs=1e-12)
    assert K.log_eyring_kramers_time(sd["hess_min"], sd["hess_saddle"], dF, T / 2) > lt


# ============================================================================ simulation layer (small)


def test_tail_corrected_estimator_exponential():
    from grokclocks.sim.langevin import tail_corrected_mean

    rng = np.random.default_rng(0)
    t = rng.exponential(10.0, size=200_000)
    h = 25.0
    mean, S, n = tail_corrected_mean(np.where(t <= h, t, np.inf), h)
    assert S == pytest.approx(math.exp(-2.5), abs=3e-3)
    assert mean == pytest.approx(10.0, rel=0.01)


def test_euler_maruyama_ou_stationary_variance():
    import jax

    from grokclocks.sim import langevin as L

    k, T, dt = 2.0, 0.3, 0.01
    x = L.euler_maruyama(lambda x: k * x, np.zeros((20_000, 1)), T, dt, 1000, jax.random.key(0))
    var = float(np.var(np.asarray(x)))
    exact_em = T / k / (1 - k * dt / 2)  # exact stationary variance of the EM recursion
    assert var == pytest.approx(exact_em, rel=0.03)
    with pytest.raises(DomainError, match="T"):
        L.euler_maruyama(lambda x: x, np.zeros((2, 1)), 0.0, dt, 10, jax.random.key(0))
    with pytest.raises(DomainError, match="n_walkers"):
        L.first_passage_times(lambda x: x, [0.0], 0, 0, 1.0, 0.1, 0.01, 10)


def test_overflow_is_a_domain_error_at_the_double_limit():
    # finite up to log tau = 709.78 (the old threshold 709.0 refused tau = 1.3e308); beyond it a DomainError
    # that is also an OverflowError, pointing to the log variant
    lt = K.log_kramers_time_1d(1.0, -1.0, 709.5 - math.log(2 * math.pi), 1.0)
    assert K.kramers_time_1d(1.0, -1.0, 709.5 - math.log(2 * math.pi), 1.0) == pytest.approx(math.exp(lt), rel=1e-13)
    with pytest.raises(DomainError, match="log_kramers_time_1d"):
        K.kramers_time_1d(1.0, -1.0, 710.0, 1.0)
    assert K.log_kramers_time_1d(1e-300, -1e-300, 1.0, 1.0) == pytest.approx(math.log(2 * math.pi) + 300 * math.log(10)
                                                                            + 1.0, rel=1e-15)  # was ValueError


def test_extreme_arguments_former_known_records():
    """Issue 15: the former Known records of the property suite, each at its exact limit."""
    import grokclocks.kramers as KR
    from grokclocks._validate import ResultOverflow

    out = KR.initial_timescales(X=[[1.0, 1.0]], W=[[-1.0, -1.0]], a=[1.0], y=[1.0], alpha=0.0)  # all units off
    assert out["tau_r"] == out["tau_W"] == out["tau_K"] == math.inf and out["feature_speed_median"] == 0.0
    # gamma = 3.4e308 overflows: r(t) = -y once gamma t >> 1, r0 at t = 0, r* + e^{-gamma t}(r0 - r*) between
    r = KR.readout_residual(K_a=[[0.116]], y=[0.126], r0=[0.126], lam=1.7e308, t=[0.0, 1e-310, 1e-6])
    assert r[0, 0] == 0.126 and r[2, 0] == -0.126
    assert r[1, 0] == pytest.approx(-0.126 + math.exp(-0.116e-310 - 3.4e-2) * 0.252, rel=1e-14)
    th = KR.ridge_gf(Phi=[[0.126]], y=[0.126], theta0=[0.126], lam=1.7e308, t=[0.0, 1e-6])
    assert th[0, 0] == 0.126 and th[1, 0] == pytest.approx(0.126**2 / 3.4e308, rel=1e-10)  # subnormal theta_gamma
    kw = dict(Phi=[[0.126]], y=[0.126], theta0=[0.126], theta_teacher=[0.126], eps_train=1e-4, eps_test=1e-4)
    with pytest.raises(DomainError, match="t_max"):
        KR.ridge_delay(lam=5e-324, **kw)  # 50 / gamma overflows
    a, b = KR.ridge_delay(lam=5e-324, t_max=1e300, **kw), KR.ridge_delay(lam=1e-300, **kw)
    assert a["t_mem"] == pytest.approx(b["t_mem"], rel=1e-12) and a["t_grok"] == 0.0
    F = lambda x, y: (x * x - 1) ** 2 + y * y  # noqa: E731
    with pytest.raises(ResultOverflow):
        KR.mfpt_2d_exact(F, (-1.0, 0.0), 0.0, 5e-324, h=0.1, richardson=False)


def test_mfpt_2d_exact_refuses_a_solve_that_has_lost_its_digits():
    """The refinement step's error estimate grows like exp(barrier / T) eps: at barrier / T = 20 the solve is
    kept (estimate 4e-7), at 25 and 30 (9e-5 and 1.3e-3, positive but wrong in the 4th-3rd digit) it raises.
    The kept value is half the Eyring-Kramers time to O(T) (absorption on the saddle line, T = 1/20)."""
    sd = K.test_potential("saddle_2d", h=1.0, k=1.0, c=3.0)
    t20 = K.mfpt_2d_exact(sd["F_xy"], (-1.0, 0.0), 0.0, 1 / 20, richardson=False)
    ek = K.eyring_kramers_time(sd["hess_min"], sd["hess_saddle"], sd["delta_F"], 1 / 20)
    assert 0.45 < t20 / ek < 0.6  # absorbed on the saddle line: half the Eyring-Kramers time (0.525: 1.41e8 / 2.69e8)
    for ratio in (25, 30):
        with pytest.raises(DomainError, match="relative error of"):
            K.mfpt_2d_exact(sd["F_xy"], (-1.0, 0.0), 0.0, 1 / ratio, richardson=False)


def test_mfpt_2d_exact_refuses_a_landscape_that_is_not_finite_or_not_vectorised():
    """A NaN / inf of F on the grid made every rate NaN and was reported as ResultOverflow ("exceeds the
    largest double"); a scalar-valued F broke on the grid's shape.  Both now name F."""
    F_log = lambda x, y: np.log(x + 1.5) + y ** 2  # noqa: E731  NaN for x < -1.5, inside the box
    with pytest.raises(DomainError, match=r"F must be finite .* = nan"), np.errstate(divide="ignore", invalid="ignore"):
        K.mfpt_2d_exact(F_log, (-1.0, 0.0), 0.0, 0.25, box=(-2.0, -1.0, 1.0), h=0.05, richardson=False)
    assert K.mfpt_2d_exact(F_log, (-1.0, 0.0), 0.0, 0.25, box=(-1.4, -1.0, 1.0), h=0.05) > 0.0
    with pytest.raises(DomainError, match="F must be vectorised"):
        K.mfpt_2d_exact(lambda x, y: 0.0, (-1.0, 0.0), 0.0, 0.25, box=(-2.0, -1.0, 1.0), h=0.05)


def test_mfpt_2d_exact_refuses_a_spacing_that_does_not_divide_the_box():
    """round((b - x_lo) / h) moved the reflecting wall: box (-1.35, -1, 1) at 2h = 0.1 was solved on
    (-1.4, -1, 1), and Richardson extrapolated two different boxes (review finding: 3.19649 against
    3.19905 from h = 0.0125 / 0.025 on the right box).  The spacing must now divide the box."""
    sd = K.test_potential("saddle_2d", h=1.0, k=1.0, c=3.0)
    with pytest.raises(DomainError, match=r"h must divide the box: \(b - x_lo\) / h = 13.5"):
        K.mfpt_2d_exact(sd["F_xy"], (-1.0, 0.0), 0.0, 0.5, box=(-1.35, -1.0, 1.0), h=0.05)  # 2h = 0.1
    with pytest.raises(DomainError, match="h must divide the box"):
        K.mfpt_2d_exact(sd["F_xy"], (-1.0, 0.0), 0.0, 0.5, box=(-1.4, -1.0, 1.05), h=0.1, richardson=False)
    fine = K.mfpt_2d_exact(sd["F_xy"], (-1.0, 0.0), 0.0, 0.5, box=(-1.35, -1.0, 1.0), h=0.05, richardson=False)
    assert math.isfinite(fine) and fine > 0.0  # h = 0.05 alone divides the box


def test_mfpt_2d_exact_is_second_order_with_a_wall_beside_the_minimum():
    """A reflecting wall where the density is not small (x = -1.35, minimum at -1, T = 1/2): the mirrored
    ghost node keeps the scheme O(h^2) (errors 2.6e-3 -> 6.5e-4 from h = 0.05 to 0.025 to 0.0125), so the
    Richardson values at h = 0.025 and 0.0125 agree to 4e-7 relative; a wall that only dropped the missing
    neighbour was first order there (4.9e-4 apart)."""
    sd = K.test_potential("saddle_2d", h=1.0, k=1.0, c=3.0)
    kw = dict(box=(-1.35, -1.0, 1.0))
    coarse = K.mfpt_2d_exact(sd["F_xy"], (-1.0, 0.0), 0.0, 0.5, h=0.025, **kw)
    fine = K.mfpt_2d_exact(sd["F_xy"], (-1.0, 0.0), 0.0, 0.5, h=0.0125, **kw)
    assert abs(coarse - fine) / fine < 1e-5


def test_diagonal_net_gf_rejects_rates_beyond_a_float64_solve():
    """Issue 15: init_scale or lam ~ 1e308 made the first right-hand side inf - inf (scipy ValueError)."""
    from grokclocks.sim.kramers import diagonal_net_gf

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((6, 3)), rng.standard_normal(6)
    kw = dict(X=X, y=y, Sigma_test=np.eye(3), beta_star=np.array([1.0, 0.0, 0.0]), t_max=5.0)
    with pytest.raises(DomainError, match="init_scale must be <="):
        diagonal_net_gf(init_scale=1.7e308, lam=0.01, **kw)
    with pytest.raises(DomainError, match="lam must give a decay rate"):
        diagonal_net_gf(init_scale=0.1, lam=1.7e308, **kw)


@pytest.mark.parametrize("func", [K.implicit_bias_time_estimate, K.implicit_bias_time],
                         ids=["implicit_bias_time_estimate", "implicit_bias_time"])
def test_shapes_that_do_not_broadcast_raise_domain_error(func):
    # init_scale (3,) against lam (4,) reached NumPy's bare "operands could not be broadcast" ValueError
    with pytest.raises(DomainError, match=r"init_scale, lam must broadcast against each other "
                                          r"\(got shapes init_scale \(3,\), lam \(4,\)\)"):
        func(np.full(3, 2.0), np.full(4, 0.1))
    # (3, 1) against (1, 4) still broadcasts, element by element equal to the scalar calls
    s, lam = 2.0 + np.arange(3.0), 0.1 + 0.05 * np.arange(4.0)
    got = func(s[:, None], lam[None, :])
    assert got.shape == (3, 4)
    np.testing.assert_array_equal(got, [[func(si, li) for li in lam] for si in s])


# ============================================================================ sweeps of the scalar-born formulas


def test_sweeps_broadcast_and_equal_the_number_calls():
    """readout/feature_kernel_norm, feature_timescale_estimate, n_train and kramers_ratio_first_order_estimate broadcast
    like the rest (numbers in, a float or int out); each point of an array call is the number call's value."""
    rng = np.random.default_rng(11)
    N = np.array([[1], [64], [4096], [10**6]])  # (4, 1)
    al = np.array([0.0, 0.1, 0.25, 0.37, 0.5])  # (5,): 0, 1/4, 1/2 give the powers 1, 1/2, -1, 0 exactly
    sa = np.exp(rng.uniform(-300, 300, (4, 5)))
    for f, args in ((K.feature_kernel_norm, (N, 97, al)), (K.feature_kernel_norm, (N, [[3], [11], [97], [1000]], al, sa)),
                    (K.readout_kernel_norm, (N, [[3], [11], [97], [1000]], al)),
                    (K.feature_timescale_estimate, (N, al)), (K.feature_timescale_estimate, (N, al, sa))):
        got = f(*args)
        assert got.shape == (4, 5)
        full = [np.broadcast_to(np.asarray(a), (4, 5)) for a in args]
        for i, j in np.ndindex(4, 5):
            one = f(*(int(a[i, j]) if a.dtype.kind == "i" else float(a[i, j]) for a in full))
            assert type(one) is float and one == got[i, j], (f.__name__, i, j)
    p, rho = np.array([2, 5, 97, 113, 2**31]), np.array([[0.3], [0.75], [0.999]])
    n = K.n_train(p, rho)
    assert n.shape == (3, 5) and n.dtype == np.int64
    for i, j in np.ndindex(3, 5):
        assert K.n_train(int(p[j]), float(rho[i, 0])) == n[i, j]
    T = np.exp(rng.uniform(-700, 700, 200))
    for dm, ds in (((8.0, -24.0, 24.0), (-4.0, 0.0, 24.0)), ((1e200, -1e160, 1e300), (-1e-100, 1e-50, -1e-200))):
        r = K.kramers_ratio_first_order_estimate(dm, ds, T)
        assert r.shape == (200,)
        for k in range(0, 200, 7):
            assert K.kramers_ratio_first_order_estimate(dm, ds, float(T[k])) == r[k]
    assert type(K.n_train(97, 0.3)) is int and type(K.feature_kernel_norm(512, 97, 0.25)) is float


def test_sweep_errors_name_the_parameter():
    with pytest.raises(DomainError, match=r"floor\(rho p\^2\).*rho=0.01, p=3"):
        K.n_train([97, 3], 0.01)
    with pytest.raises(DomainError, match="p must be <= 2147483648 in an array call"):
        K.n_train([2**32], 0.5)
    with pytest.raises(DomainError, match="p must be integers >= 2"):
        K.n_train([1, 3], 0.5)
    with pytest.raises(DomainError, match="N must be integers >= 1"):
        K.feature_kernel_norm([4, 0], 97, 0.2)
    with pytest.raises(DomainError, match=r"alpha must be in \[0, 0.5\].*got 0.6"):
        K.feature_timescale_estimate(4, [0.2, 0.6])
    with pytest.raises(DomainError, match="a_std must be > 0"):
        K.feature_kernel_norm(4, 97, 0.2, [1.0, -1.0])
    with pytest.raises(DomainError, match="T must be > 0"):
        K.kramers_ratio_first_order_estimate((8.0, 0.0, 24.0), (-4.0, 0.0, 24.0), [0.1, 0.0])
    with pytest.raises(DomainError, match="derivs_min must hold three derivatives"):
        K.kramers_ratio_first_order_estimate((8.0, 0.0), (-4.0, 0.0, 24.0), 0.1)
    with pytest.raises(DomainError, match="must broadcast"):
        K.feature_kernel_norm([4, 8], [3, 5, 7], 0.2)


def test_first_order_ratio_where_the_bracket_leaves_the_double_range():
    """B = 5m3²/(24m2³) − m4/(8m2²) + s4/(8s2²) + 5s3²/(24|s2|³) beyond 1.8e308 or below 2^-1000, with T·B a
    normal double: the quartic terms (~1e915) cancel exactly and leave the cubic ones; T·B formed without a spurious
    0 or inf (a first version of the T sweep scaled by the largest term and returned 1.0 here)."""
    tiny = 2.2250738585072626e-308
    for s3, T in ((2.0133829080200893e-232, tiny), (1e-250, 1e-300), (1.0, 1e-300)):
        dm, ds = (tiny, tiny, 1e300), (-tiny, s3, 1e300)
        m2, m3, m4, s2, s3_, s4 = (mp.mpf(v) for v in (*dm, *ds))
        B = (mp.mpf(5.0 / 24.0) * m3**2 / m2**3 - mp.mpf(1.0 / 8.0) * m4 / m2**2 + mp.mpf(1.0 / 8.0) * s4 / s2**2
             + mp.mpf(5.0 / 24.0) * s3_**2 / abs(s2) ** 3)
        ref = 1 + mp.mpf(T) * B
        for got in (K.kramers_ratio_first_order_estimate(dm, ds, T), K.kramers_ratio_first_order_estimate(dm, ds, [T])[0]):
            if ref > mp.mpf(np.finfo(float).max):
                assert got == math.inf
            else:
                assert abs(got - ref) <= 1e-14 * abs(ref), (s3, T, got, ref)


def test_arrhenius_barrier_mixed_shapes_equal_log_quotient():
    """The near-1 points of the array path, with one argument a number or 0-d array and the other an array (a 0-d
    delay ratio against an array of prefactors raised IndexError), and every quotient near 1 (the in-place form)."""
    import warnings

    from grokclocks import _floats as FL
    cases = [(np.array(1.0), np.array([0.1, 0.1, 1.0, 1.5, 0.7])), (np.array([0.1, 0.1, 1.0, 1.5, 0.7]), 1.3),
             (np.array([3.0, 1.2]), np.array([[1.0], [2.5]])), (np.linspace(0.6, 1.9, 7), np.linspace(0.7, 1.1, 7))]
    for a, b in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            assert np.array_equal(K.arrhenius_barrier(a, b), FL.log_quotient(a, b))


# ---------------------------------------------------------------- sweeps of the formerly scalar-only functions

def test_spectral_delay_ratio_over_eta_equals_scalar_calls():
    """An array of steps equals the number calls bit for bit on every branch: log1p(-x) below 1/2, the Dekker forms
    in [1/2, 3/2) and [3/2, 2), hi / lo where eta hi < 1e-290 and the scaled form where eta lo < 1e-290."""
    rng = np.random.default_rng(31)
    for eigs in (np.array([0.1, 0.5, 1.0, 3.0]), np.array([1e-200, 1.0]), np.array([1e-5, 1e5]), np.array([2.0])):
        top = float(eigs.max())
        for lo, hi in ((-14.0, -0.4), (-740.0, -690.0), (-1.6, 0.6), (-690.0, -0.4), (-700.0, -660.0)):
            eta = np.exp(rng.uniform(lo, hi, 600)) / top
            eta = eta[(eta > 0) & (eta * top < 2) & (eta * top != 1)]
            got = K.spectral_delay_ratio(eigs, eta)
            want = np.array([K.spectral_delay_ratio(eigs, float(x)) for x in eta])
            np.testing.assert_array_equal(got, want)
        eta = np.linspace(0.3, 1.99, 4001) / top
        eta = eta[eta * top != 1]
        np.testing.assert_array_equal(K.spectral_delay_ratio(eigs, eta.reshape(-1, 1)),
                                      np.array([[K.spectral_delay_ratio(eigs, float(x))] for x in eta]))
    assert isinstance(K.spectral_delay_ratio([1.0, 2.0], np.array(0.1)), float)
    with pytest.raises(DomainError, match=r"eta\*mu_max must be < 2"):
        K.spectral_delay_ratio([1.0, 2.0], [0.1, 1.0])
    with pytest.raises(DomainError, match="fastest mode vanish"):
        K.spectral_delay_ratio([1.0, 2.0], [0.1, 0.5])
    with pytest.raises(DomainError, match="eta must be > 0"):
        K.spectral_delay_ratio([1.0, 2.0], [0.1, 0.0])


def test_spectral_delay_ratio_huge_step_tiny_spectrum():
    """eta = 1e301 on eigenvalues 1e-303, 1e-302 (eta mu = 0.01, 0.1): log1p(-0.1)/log1p(-0.01) (the Dekker split of
    eta overflowed and gave NaN before the product itself was used below 1/2)."""
    want = math.log1p(-0.1) / math.log1p(-0.01)
    assert K.spectral_delay_ratio([1e-303, 1e-302], 1e301) == pytest.approx(want, rel=1e-15)
    np.testing.assert_allclose(K.spectral_delay_ratio([1e-303, 1e-302], [1e301]), [want], rtol=1e-15)


def test_separation_kernel_factor_and_delay_scaling_sweeps():
    """The formerly scalar-only functions broadcast: every point equals its number call, numbers give floats."""
    al = np.array([[0.0, 0.1, 0.25], [0.3, 0.45, 0.5]])
    for measure in ("paper_claim", "paper_algebra", "weights", "kernel", "kernel_integrated"):
        for a_init in ("paper", "unit"):
            if measure == "paper_claim" and a_init == "unit":
                with pytest.raises(DomainError, match="paper_claim"):
                    K.separation_exponent(al, measure, a_init)
                continue
            got = K.separation_exponent(al, measure, a_init)
            assert got.shape == al.shape
            np.testing.assert_array_equal(got, [[K.separation_exponent(float(a), measure, a_init) for a in row]
                                                for row in al])
    assert isinstance(K.separation_exponent(np.array(0.2), "kernel"), float)
    with pytest.raises(DomainError, match=r"alpha must be in \[0, 0.5\]"):
        K.separation_exponent([0.1, 0.6], "kernel")
    n = np.array([1, 7, 10**6, 2**60])
    np.testing.assert_array_equal(K.kernel_rate_factor(n, "mean"), [K.kernel_rate_factor(int(m), "mean") for m in n])
    np.testing.assert_array_equal(K.kernel_rate_factor(n, "sum"), np.ones(4))
    with pytest.raises(DomainError, match="n must be integers >= 1"):
        K.kernel_rate_factor([3, 0], "mean")
    N, alpha = np.array([[1.0], [512.0], [1e6]]), np.array([0.0, 0.2, 0.5])
    got = K.delay_scaling_estimate("separation", N=N, alpha=alpha, measure="kernel")
    assert got.shape == (3, 3)
    np.testing.assert_array_equal(got, [[K.delay_scaling_estimate("separation", N=int(m), alpha=float(a),
                                                                   measure="kernel") for a in alpha] for m in N[:, 0]])
    mu, lam = np.array([0.3, 2.0, 1e-300]), np.array([0.1, 1e-3, 1.0])
    np.testing.assert_array_equal(K.delay_scaling_estimate("ridge", mu_min=mu, lam=lam, penalty="half"),
                                  [K.delay_scaling_estimate("ridge", mu_min=float(m), lam=float(g), penalty="half")
                                   for m, g in zip(mu, lam)])
    np.testing.assert_array_equal(K.delay_scaling_estimate("spectral", eigs=[1.0, 3.0], eta=[0.1, 0.2]),
                                  [K.spectral_delay_ratio([1.0, 3.0], e) for e in (0.1, 0.2)])
    for mech, kw in (("separation", dict(N=[1, 2], alpha=[0.1, 0.2, 0.3], measure="kernel")),
                     ("ridge", dict(mu_min=[1.0, 2.0], lam=[1.0, 2.0, 3.0]))):
        with pytest.raises(DomainError, match="must broadcast against each other"):
            K.delay_scaling_estimate(mech, **kw)


def test_ridge_delay_level_within_rounding_is_a_domain_error():
    """eps_test = 5e-324 with theta0 at the teacher: the test loss is 0 at t = 0 on the scan's grid and 6e-33
    evaluated alone, so brentq's bracket had no sign change (ValueError, found by the thorough property run)."""
    Phi = np.array([[2.04091912, -2.55566503, 0.41809885, -0.56776961],
                    [-0.45264929, -0.21559716, -2.01998613, -0.23193238],
                    [-0.86521308, 3.32299952, 0.22578661, -0.35263079]])
    y = np.array([0.12573022, -0.13210486, 0.64042265])
    th = np.array([2.17234146, 1.01979501, -1.48179521, 0.87247777])
    with pytest.raises(DomainError, match="eps_test"):
        K.ridge_delay(Phi, y, 0.01, th, 1e-4, 5e-324, theta_teacher=th, penalty="eq2")
