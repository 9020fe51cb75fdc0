"""grokclocks.spectral against independent references, the spec's examples, properties and domain errors.

References computed here from scratch: singular values by mpmath's SVD at 30 digits; the layerwise
decay identity by direct BFGS minimisation over factorizations (scipy.optimize); the lambda = mu L / 2
constant by minimising the scalar factorized and end-to-end objectives separately; gradients and
drifts by central finite differences of singular values along the exact velocity; the imbalance
decay and the finite-time collapse by ODE solves (scipy DOP853).  Examples are the spec's
(shared/spec/clocks.md, sections 1, 4, 5).
"""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize

from grokclocks import DomainError
from grokclocks._validate import ResultOverflow
from grokclocks import spectral as S

mp.mp.dps = 30


def mp_svals(W):
    """Singular values by mpmath at 30 digits (decreasing), as mpf."""
    s = mp.svd_r(mp.matrix(np.asarray(W).tolist()), compute_uv=False)
    return sorted((s[i] for i in range(len(s))), reverse=True)


def _rand(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


# ============================================================================ stable rank (eq2.3)


@pytest.mark.parametrize("shape,seed", [((4, 5), 0), ((7, 3), 1), ((6, 6), 2), ((1, 9), 3)])
def test_stable_rank_vs_mpmath(shape, seed):
    W = _rand(shape, seed)
    s = mp_svals(W)
    ref = sum(x * x for x in s) / s[0] ** 2
    assert S.stable_rank(W) == pytest.approx(float(ref), rel=1e-14)
    assert S.stable_rank_from_singular_values([float(x) for x in s]) == pytest.approx(float(ref), rel=1e-14)


def test_stable_rank_batched_and_types():
    Ws = _rand((3, 2, 4, 5), 4)
    out = S.stable_rank(Ws)
    assert out.shape == (3, 2)
    for i in range(3):
        for j in range(2):
            assert out[i, j] == pytest.approx(S.stable_rank(Ws[i, j]), rel=1e-15)
    assert isinstance(S.stable_rank(Ws[0, 0]), float)
    # exact values: identity -> n, rank one -> 1
    assert S.stable_rank(np.eye(5)) == pytest.approx(5.0, rel=1e-15)
    assert S.stable_rank(np.outer([1.0, 2.0], [3.0, -1.0, 0.5])) == pytest.approx(1.0, rel=1e-14)


def test_stable_rank_extreme_scales():
    W = _rand((4, 5), 5)
    ref = S.stable_rank(W)
    for c in (1e-300, 1e-200, 1e200, 1e300):
        assert S.stable_rank(c * W) == pytest.approx(ref, rel=1e-14)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 10**6),
       st.floats(-1e6, 1e6).filter(lambda c: abs(c) > 1e-6))
def test_stable_rank_properties(m, n, seed, c):
    """appF4-scale and thm4.4: scale invariance and 1 <= srank <= rank."""
    W = _rand((m, n), seed)
    sr = S.stable_rank(W)
    assert S.stable_rank(c * W) == pytest.approx(sr, rel=1e-12)
    assert 1.0 - 1e-12 <= sr <= np.linalg.matrix_rank(W) + 1e-12


def test_stable_rank_limit_continuity():
    """thm4.4: W(t) -> W_inf (rank 2) makes srank(W(t)) -> srank(W_inf) in [1, 2]."""
    Winf = np.outer([1.0, 0, 0], [1.0, 0, 0]) + 0.5 * np.outer([0, 1.0, 0], [0, 0, 1.0])
    E = _rand((3, 3), 6)
    target = S.stable_rank(Winf)
    assert target == pytest.approx(1.25, rel=1e-15)
    errs = [abs(S.stable_rank(Winf + t * E) - target) for t in (1e-2, 1e-4, 1e-6)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-5


def test_stable_rank_errors():
    with pytest.raises(DomainError, match="zero matrix"):
        S.stable_rank(np.zeros((3, 2)))
    with pytest.raises(DomainError, match="W must be"):
        S.stable_rank(np.ones(3))
    with pytest.raises(DomainError, match="finite"):
        S.stable_rank(np.array([[1.0, np.nan]]))
    with pytest.raises(DomainError, match="zero matrix"):
        S.stable_rank(np.stack([np.eye(2), np.zeros((2, 2))]))
    with pytest.raises(DomainError, match=">= 0"):
        S.stable_rank_from_singular_values([1.0, -0.1])
    with pytest.raises(DomainError, match="all zero"):
        S.stable_rank_from_singular_values([0.0, 0.0])


# ============================================================================ Schatten (eq2.6)


@pytest.mark.parametrize("p", [0.1, 0.5, 2 / 3, 1.0, 2.0, 3.7])
def test_schatten_vs_mpmath(p):
    W = _rand((5, 4), 7)
    s = mp_svals(W)
    pen = sum(x ** mp.mpf(p) for x in s)
    assert S.schatten_penalty(W, p) == pytest.approx(float(pen), rel=1e-13)
    assert S.schatten_quasi_norm(W, p) == pytest.approx(float(pen ** (1 / mp.mpf(p))), rel=1e-13)
    assert S.schatten_penalty(singular_values=[float(x) for x in s], p=p) == pytest.approx(float(pen), rel=1e-14)


def test_schatten_special_cases():
    W = _rand((4, 6), 8)
    assert S.schatten_quasi_norm(W, 1) == pytest.approx(np.linalg.norm(W, "nuc"), rel=1e-14)
    assert S.schatten_quasi_norm(W, 2) == pytest.approx(np.linalg.norm(W, "fro"), rel=1e-14)
    assert S.schatten_quasi_norm(W, 200.0) == pytest.approx(np.linalg.norm(W, 2), rel=1e-2)
    assert S.schatten_penalty(np.zeros((2, 3)), 0.5) == 0.0
    assert S.schatten_quasi_norm(np.zeros((2, 3)), 0.5) == 0.0
    # batched input and broadcast p
    Ws = _rand((3, 4, 6), 9)
    out = S.schatten_penalty(Ws, 0.5)
    assert out.shape == (3,) and out[1] == pytest.approx(S.schatten_penalty(Ws[1], 0.5), rel=1e-15)


def test_schatten_large_p_and_scales_no_overflow():
    W = _rand((3, 3), 10)
    ref = S.schatten_quasi_norm(W, 50.0)
    assert S.schatten_quasi_norm(1e250 * W, 50.0) == pytest.approx(1e250 * ref, rel=1e-13)
    assert S.schatten_quasi_norm(1e-250 * W, 0.3) == pytest.approx(1e-250 * S.schatten_quasi_norm(W, 0.3), rel=1e-13)
    assert S.schatten_penalty(1e250 * W, 50.0) == math.inf  # the true value overflows


def test_schatten_rank_threshold_for_small_p():
    """An exactly rank-2 matrix: round-off singular values (~1e-16 sigma_1) add ~(1e-16)^0.1 = 0.025 each."""
    rng = np.random.default_rng(11)
    U, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    Vm, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    W = (U[:, :2] * [3.0, 1.0]) @ Vm[:, :2].T
    exact = 3.0 ** 0.1 + 1.0
    assert S.schatten_penalty(W, 0.1) == pytest.approx(exact, rel=1e-13)
    assert S.schatten_penalty(W, 0.1, rtol=0) - exact > 0.01  # without the threshold: visibly wrong
    assert S.schatten_penalty(W, 2.0, rtol=0) == pytest.approx(10.0, rel=1e-13)


def test_schatten_errors():
    W = np.eye(2)
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(DomainError, match="p must be"):
            S.schatten_penalty(W, bad)
    with pytest.raises(DomainError, match="exactly one"):
        S.schatten_penalty(W, 1.0, singular_values=[1.0])
    with pytest.raises(DomainError, match="exactly one"):
        S.schatten_quasi_norm(p=1.0)
    with pytest.raises(DomainError, match="singular_values must be >= 0"):
        S.schatten_quasi_norm(singular_values=[1.0, -1e-3], p=1.0)
    with pytest.raises(DomainError, match="rtol"):
        S.schatten_penalty(W, 1.0, rtol=-1.0)


# ============================================================================ layerwise decay (eq2.7)


def _brute_min_factorization_cost(W, depth, restarts, seed):
    """min over W_1..W_{L-1} (square, invertible) of sum ||W_l||^2 with W_L = W (W_{L-1}...W_1)^{-1}."""
    n = W.shape[0]
    rng = np.random.default_rng(seed)

    def cost(x):
        Fs = x.reshape(depth - 1, n, n)
        P = np.eye(n)
        for F in Fs:
            P = F @ P
        WL = np.linalg.solve(P.T, W.T).T
        return float(np.sum(Fs ** 2) + np.sum(WL ** 2))

    best = math.inf
    for _ in range(restarts):
        x0 = (np.eye(n)[None] + 0.3 * rng.normal(size=(depth - 1, n, n))).ravel()
        res = optimize.minimize(cost, x0, method="BFGS", options={"gtol": 1e-10, "maxiter": 5000})
        best = min(best, res.fun)
    return best


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_layerwise_identity_vs_direct_minimisation(depth):
    W = _rand((3, 3), 20 + depth)
    brute = _brute_min_factorization_cost(W, depth, restarts=3, seed=depth)
    pen = S.layerwise_decay_penalty(W, depth)
    assert pen == pytest.approx(brute, rel=1e-8)
    s = np.linalg.svd(W, compute_uv=False)
    if depth == 3:  # wrong variants: no factor L (x 1/3), nuclear norm
        assert abs(np.sum(s ** (2 / 3)) / brute - 1) > 0.5
        assert abs(np.sum(s) / brute - 1) > 0.05
    # no factorization beats it: random ones and random re-couplings of the balanced one
    fs = S.balanced_factorization(W, depth)
    assert sum(np.sum(f ** 2) for f in fs) == pytest.approx(pen, rel=1e-13)


def test_layerwise_depth_special_cases():
    W = _rand((4, 3), 30)
    assert S.layerwise_decay_penalty(W, 1) == pytest.approx(np.sum(W ** 2), rel=1e-13)
    assert S.layerwise_decay_penalty(W, 2) == pytest.approx(2 * np.linalg.norm(W, "nuc"), rel=1e-13)


@pytest.mark.parametrize("depth,width", [(1, None), (2, None), (3, None), (4, 6), (3, 2)])
def test_balanced_factorization(depth, width):
    rng = np.random.default_rng(31)
    W = rng.normal(size=(5, 2)) @ rng.normal(size=(2, 4))  # rank 2
    fs = S.balanced_factorization(W, depth, width=width)
    assert len(fs) == depth
    assert np.allclose(S.end_to_end_map(fs), W, rtol=0, atol=1e-13)
    if depth > 1:
        hidden = 2 if width is None else width
        assert fs[0].shape == (hidden, 4) and fs[-1].shape == (5, hidden)
        assert np.all(S.layer_imbalance(fs) < 1e-13)
    assert sum(np.sum(f ** 2) for f in fs) == pytest.approx(S.layerwise_decay_penalty(W, depth), rel=1e-12)
    # orthogonal re-coupling W_l -> Q_l W_l Q_{l-1}^T keeps the product and the cost
    if depth == 3 and width is None:
        Q1, _ = np.linalg.qr(rng.normal(size=(2, 2)))
        Q2, _ = np.linalg.qr(rng.normal(size=(2, 2)))
        g = [Q1 @ fs[0], Q2 @ fs[1] @ Q1.T, fs[2] @ Q2.T]
        assert np.allclose(S.end_to_end_map(g), W, atol=1e-13)
        assert sum(np.sum(f ** 2) for f in g) == pytest.approx(S.layerwise_decay_penalty(W, 3), rel=1e-12)


def test_balanced_factorization_errors():
    W = np.diag([3.0, 2.0, 1.0])
    with pytest.raises(DomainError, match="width must be >= rank"):
        S.balanced_factorization(W, 2, width=2)
    for bad in (0, 1.5, -1, True):
        with pytest.raises(DomainError, match="depth"):
            S.balanced_factorization(W, bad)
    with pytest.raises(DomainError, match="2-D"):
        S.balanced_factorization(np.ones((2, 2, 2)), 2)


def _scalar_minimisers(y, mu, depth):
    """argmin_w of the factorized scalar problem (balanced, w = a^L) and of the end-to-end one."""
    fact = optimize.minimize_scalar(lambda a: 0.5 * (a ** depth - y) ** 2 + 0.5 * mu * depth * a * a,
                                    bounds=(1e-9, abs(y) ** (1 / depth) + 1), method="bounded",
                                    options={"xatol": 1e-14})
    return fact.x ** depth


def test_penalty_coefficient_lambda_equals_mu_L_over_2():
    """Independent check of lambda = mu L / 2: the factorized and end-to-end scalar problems share the minimiser
    (depth 3, where mu L / 2 differs from both wrong constants mu and mu L)."""
    y, mu, depth = 2.0, 0.3, 3
    w_fact = _scalar_minimisers(y, mu, depth)
    p = 2 / depth

    def e2e(lam):
        return optimize.minimize_scalar(lambda w: 0.5 * (w - y) ** 2 + lam * w ** p, bounds=(1e-9, y + 1),
                                        method="bounded", options={"xatol": 1e-14}).x

    lam = S.weight_decay_to_penalty_coefficient(mu, depth)
    assert lam == pytest.approx(mu * depth / 2, rel=1e-15)
    assert e2e(lam) == pytest.approx(w_fact, rel=1e-6)
    for wrong in (mu, mu * depth):
        assert abs(e2e(wrong) / w_fact - 1) > 1e-2
    # stationarity: F = mu sigma^{2/L - 1} with lambda p = mu
    assert (y - w_fact) == pytest.approx(mu * w_fact ** (p - 1), rel=1e-6)
    np.testing.assert_allclose(S.weight_decay_to_penalty_coefficient([0.0, 1.0], 4), [0.0, 2.0])
    with pytest.raises(DomainError, match="mu"):
        S.weight_decay_to_penalty_coefficient(-0.1, 2)


def test_end_to_end_energy():
    W = _rand((3, 4), 40)
    e = S.end_to_end_energy(0.7, W, 0.2, 0.5)
    assert e == pytest.approx(0.7 + 0.2 * np.sum(np.linalg.svd(W, compute_uv=False) ** 0.5), rel=1e-14)
    # from weight decay: = loss + (mu/2) min sum ||W_l||^2
    fs = S.balanced_factorization(W, 3)
    ew = S.end_to_end_energy_from_weight_decay(0.7, W, 0.2, 3)
    assert ew == pytest.approx(0.7 + 0.1 * sum(np.sum(f ** 2) for f in fs), rel=1e-13)
    with pytest.raises(DomainError, match="lam"):
        S.end_to_end_energy(0.1, W, -1.0, 1.0)


# ============================================================================ imbalance (appF2-balance)


def _layer_flow_rhs(shapes, X, Y, mu):
    sizes = [a * b for a, b in shapes]

    def unpack(z):
        out, i = [], 0
        for (a, b), n in zip(shapes, sizes):
            out.append(z[i:i + n].reshape(a, b))
            i += n
        return out

    def rhs(_, z):
        fs = unpack(z)
        W = S.end_to_end_map(fs)
        G = (W @ X.T - Y.T) @ X / X.shape[0]  # grad of (1/2n) ||X W^T - Y||^2
        grads = []
        for l in range(len(fs)):
            A = np.eye(fs[-1].shape[0])
            for f in reversed(fs[l + 1:]):
                A = A @ f
            B = np.eye(fs[0].shape[1])
            for f in fs[:l]:
                B = f @ B
            grads.append(-(A.T @ G @ B.T) - mu * fs[l])
        return np.concatenate([g.ravel() for g in grads])

    return unpack, rhs


@pytest.mark.parametrize("mu", [0.0, 0.2])
def test_imbalance_decay_vs_ode(mu):
    rng = np.random.default_rng(50)
    X = rng.normal(size=(20, 4))
    Y = X @ rng.normal(size=(4, 3))
    shapes = [(3, 4), (3, 3), (3, 3)]
    unpack, rhs = _layer_flow_rhs(shapes, X, Y, mu)
    z0 = np.concatenate([0.5 * rng.normal(size=s).ravel() for s in shapes])
    T = 3.0
    sol = integrate.solve_ivp(rhs, (0, T), z0, method="DOP853", rtol=1e-12, atol=1e-12)
    f0, fT = unpack(z0), unpack(sol.y[:, -1])
    D = lambda fs, l: fs[l + 1].T @ fs[l + 1] - fs[l] @ fs[l].T  # noqa: E731
    for l in range(2):
        np.testing.assert_allclose(D(fT, l), S.imbalance_decay(D(f0, l), mu, T), rtol=0, atol=1e-9)
    np.testing.assert_allclose(S.layer_imbalance(fT), S.imbalance_decay(S.layer_imbalance(f0), mu, T), rtol=1e-8)


def test_imbalance_helpers():
    assert S.imbalance_decay(2.0, 0.5, 1.0) == pytest.approx(2 * math.exp(-1.0), rel=1e-15)
    assert S.layer_imbalance([np.eye(2)]).shape == (0,)
    stack = [np.stack([np.eye(2), 2 * np.eye(2)]), np.stack([np.eye(2), np.eye(2)])]
    np.testing.assert_allclose(S.layer_imbalance(stack)[:, 0], [0.0, 3 * math.sqrt(2)])
    with pytest.raises(DomainError, match="columns"):
        S.layer_imbalance([np.ones((3, 2)), np.ones((2, 2))])
    with pytest.raises(DomainError, match="sequence"):
        S.layer_imbalance(np.ones((2, 2)))
    with pytest.raises(DomainError, match="t must be"):
        S.imbalance_decay(1.0, 0.1, -1.0)
    with pytest.raises(DomainError, match="mu must be"):
        S.imbalance_decay(1.0, -0.1, 1.0)


# ============================================================================ gradient (thmD.1)


@pytest.mark.parametrize("p", [0.5, 2 / 3, 1.0, 1.5, 2.0])
def test_schatten_grad_finite_difference(p):
    rng = np.random.default_rng(60)
    W = rng.normal(size=(4, 5))
    G = S.schatten_penalty_grad(W, p)
    for _ in range(3):
        E = rng.normal(size=W.shape)
        h = 1e-5
        fd = (S.schatten_penalty(W + h * E, p) - S.schatten_penalty(W - h * E, p)) / (2 * h)
        assert np.sum(G * E) == pytest.approx(fd, rel=1e-7)


def test_schatten_grad_special_cases():
    W = _rand((3, 5), 61)
    np.testing.assert_allclose(S.schatten_penalty_grad(W, 2.0), 2 * W, rtol=1e-13, atol=1e-14)
    U, _, Vt = np.linalg.svd(W, full_matrices=False)
    np.testing.assert_allclose(S.schatten_penalty_grad(W, 1.0), U @ Vt, atol=1e-14)
    # rank-deficient: the null directions are dropped (finite even for p < 1)
    R = np.outer([1.0, 2.0, 0.0], [0.0, 1.0, 1.0, 0.0, 0.0])
    g = S.schatten_penalty_grad(R, 0.5)
    assert np.all(np.isfinite(g)) and np.linalg.matrix_rank(g) == 1
    np.testing.assert_allclose(S.schatten_penalty_grad(np.zeros((2, 2)), 0.5), 0.0)
    with pytest.raises(DomainError, match="p must be"):
        S.schatten_penalty_grad(W, 0.0)


# ============================================================================ drift (eq4.3, appF2-balanced-drift)


def _sigma_dot_fd(W, Wdot, h=1e-6):
    """Central difference of the singular values along the exact velocity."""
    sp = np.linalg.svd(W + h * Wdot, compute_uv=False)
    sm = np.linalg.svd(W - h * Wdot, compute_uv=False)
    return (sp - sm) / (2 * h)


@pytest.mark.parametrize("p,lam", [(1.0, 0.05), (2 / 3, 0.1), (0.5, 0.2), (2.0, 0.3)])
def test_singular_value_drift_vs_finite_difference(p, lam):
    rng = np.random.default_rng(70)
    W = rng.normal(size=(4, 5))
    Gl = rng.normal(size=(4, 5))
    Wdot = -Gl - lam * S.schatten_penalty_grad(W, p)
    fd = _sigma_dot_fd(W, Wdot)
    terms = S.singular_value_drift_terms(W, Gl, lam, p)
    np.testing.assert_allclose(terms.drift, fd, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(S.singular_value_drift(W, Gl, lam, p), terms.drift, rtol=0, atol=0)
    np.testing.assert_allclose(terms.drift, terms.data_force - terms.shrinkage, rtol=1e-15)
    if p != 1.0 and p != 2.0:  # wrong variant: shrinkage lam sigma^{p-1} (missing p)
        wrong = terms.data_force - lam * terms.sigma ** (p - 1)
        assert np.max(np.abs(wrong - fd)) > 1e-3


@pytest.mark.parametrize("depth,mu", [(1, 0.1), (2, 0.1), (3, 0.1), (3, 0.0), (4, 0.05)])
def test_balanced_drift_vs_layer_velocity(depth, mu):
    """Exact velocity of the end-to-end map of a layer-trained balanced net: sum_l W_L..dW_l..W_1."""
    rng = np.random.default_rng(80 + depth)
    W = rng.normal(size=(3, 4))
    Gl = rng.normal(size=(3, 4))
    fs = S.balanced_factorization(W, depth)
    Wdot = np.zeros_like(W)
    for l in range(depth):
        A = np.eye(3)
        for f in reversed(fs[l + 1:]):
            A = A @ f
        B = np.eye(4)
        for f in fs[:l]:
            B = f @ B
        dWl = -(A.T @ Gl @ B.T) - mu * fs[l]
        Wdot += A @ dWl @ B
    fd = _sigma_dot_fd(W, Wdot, h=1e-7)
    pred = S.balanced_singular_value_drift(W, Gl, mu, depth)
    np.testing.assert_allclose(pred, fd, rtol=1e-6, atol=1e-8)
    # the rescaling by L sigma^{2-2/L} of the end-to-end drift (lambda = mu L/2, p = 2/L)
    e2e = S.singular_value_drift(W, Gl, mu * depth / 2, 2 / depth)
    s = np.linalg.svd(W, compute_uv=False)
    np.testing.assert_allclose(pred, depth * s ** (2 - 2 / depth) * e2e, rtol=1e-12, atol=1e-13)
    if depth >= 2:  # wrong variant: the end-to-end formula applied to the factorized flow
        assert np.max(np.abs(e2e - fd) / np.abs(fd)) > 0.1


def test_drift_degenerate_warning_and_errors():
    W = np.eye(3)
    with pytest.warns(S.SpectralStratumWarning):
        S.singular_value_drift(W, np.ones((3, 3)), 0.1, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        S.singular_value_drift(np.diag([3.0, 2.0, 1.0]), np.ones((3, 3)), 0.1, 1.0)
    # rank-deficient W: only the positive singular values are returned
    out = S.singular_value_drift(np.diag([3.0, 1.0, 0.0]), np.ones((3, 3)), 0.1, 0.5)
    assert out.shape == (2,)
    with pytest.raises(DomainError, match="lam"):
        S.singular_value_drift(W, W, -0.1, 1.0)
    with pytest.raises(DomainError, match="p must be"):
        S.singular_value_drift(W, W, 0.1, 0.0)
    with pytest.raises(DomainError, match="grad_loss must have the shape"):
        S.singular_value_drift(W, np.ones((3, 2)), 0.1, 1.0)
    with pytest.raises(DomainError, match="mu"):
        S.balanced_singular_value_drift(W, W, -1.0, 2)
    with pytest.raises(DomainError, match="depth"):
        S.balanced_singular_value_drift(W, W, 0.1, 0)


@pytest.mark.parametrize("p,lam,s0", [(0.5, 0.2, 1.3), (2 / 3, 0.05, 0.4), (1.0, 0.1, 2.0)])
def test_free_direction_collapse_time_vs_ode(p, lam, s0):
    """ODE solve of sigma' = -lam p sigma^{p-1} down to sigma = 1e-3 s0; the collapse time is the remaining
    closed-form time from there (at most 1e-3 of the total for p <= 1): ODE time + remainder = closed form."""
    t0 = S.free_direction_collapse_time(s0, lam, p)
    se = 1e-3 * s0
    ev = lambda t, y: y[0] - se  # noqa: E731
    ev.terminal = True
    sol = integrate.solve_ivp(lambda t, y: [-lam * p * max(y[0], 1e-300) ** (p - 1)], (0, 10 * t0), [s0],
                              events=ev, rtol=1e-12, atol=1e-14, method="DOP853")
    t_e = sol.t_events[0][0]
    rest = S.free_direction_collapse_time(se, lam, p)
    assert t_e + rest == pytest.approx(t0, rel=1e-9)
    assert rest <= 1e-3 * t0 * (1 + 1e-12)
    assert S.free_direction_collapse_time(1.0, 0.1, 2.0) == math.inf
    assert S.free_direction_collapse_time(1.0, 0.0, 0.5) == math.inf


# ============================================================================ spectral tail (appF4-tail)


def test_spectral_tail():
    W = _rand((5, 4), 90)
    for k in range(5):
        Wk = S.best_rank_k(W, k)
        ref = np.sum((W - Wk) ** 2) / np.sum(W ** 2)
        assert S.spectral_tail(W, k) == pytest.approx(ref, rel=1e-12, abs=1e-15)
        assert S.spectral_tail(W, k, normalized=False) == pytest.approx(np.sum((W - Wk) ** 2), rel=1e-12, abs=1e-15)
    assert S.spectral_tail(W, 0) == 1.0
    assert S.spectral_tail(W, 4) == 0.0
    assert S.spectral_tail(np.zeros((2, 2)), 1, normalized=False) == 0.0
    assert S.spectral_tail(_rand((3, 4, 5), 91), 2).shape == (3,)
    with pytest.raises(DomainError, match="k must be in 0..4"):
        S.spectral_tail(W, 5)
    with pytest.raises(DomainError, match="k must be"):
        S.spectral_tail(W, -1)
    with pytest.raises(DomainError, match="zero matrix"):
        S.spectral_tail(np.zeros((2, 2)), 1)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 10**6), st.floats(-1e5, 1e5).filter(lambda a: abs(a) > 1e-5), st.integers(0, 3))
def test_spectral_tail_scale(seed, a, k):
    """appF4-scale: tau_k(aW) = tau_k(W); the raw tail scales by a^2."""
    W = _rand((3, 4), seed)
    assert S.spectral_tail(a * W, k) == pytest.approx(S.spectral_tail(W, k), rel=1e-10, abs=1e-15)
    assert S.spectral_tail(a * W, k, normalized=False) == pytest.approx(a * a * S.spectral_tail(W, k, normalized=False),
                                                                      rel=1e-10, abs=1e-300)


# ============================================================================ Eckart-Young (thm5.2)


def test_eckart_young_rank_examples():
    assert S.eckart_young_rank(2.5, 0.5) == 10
    assert S.eckart_young_rank(2.7, 0.3) == 30  # naive ceil gives 31
    assert S.eckart_young_rank(4.9, 0.7) == 10  # naive ceil gives 11
    assert S.eckart_young_rank(2.5, 0.5, max_rank=4) == 4
    assert S.eckart_young_rank(1.0, 1.0) == 1
    for srank, eta, msg in ((0.9, 0.5, "srank"), (2.0, 0.0, "eta"), (2.0, 1.1, "eta")):
        with pytest.raises(DomainError, match=msg):
            S.eckart_young_rank(srank, eta)


def test_eckart_young_bound_never_violated():
    """thm5.2 on 600 random matrices (power-law spectra) plus flat spectra: sigma_{k+1} <= eta sigma_1."""
    rng = np.random.default_rng(100)
    worst = 0.0
    mats = [np.eye(n) for n in (4, 16)]
    for _ in range(600):
        m, n = rng.integers(2, 31, size=2)
        U, _ = np.linalg.qr(rng.normal(size=(m, m)))
        Vm, _ = np.linalg.qr(rng.normal(size=(n, n)))
        r = min(m, n)
        s = np.arange(1, r + 1) ** -rng.uniform(0, 2)
        mats.append((U[:, :r] * s) @ Vm[:, :r].T)
    for W in mats:
        eta = rng.uniform(0.05, 1.0)
        k = S.eckart_young_rank(S.stable_rank(W), eta)
        err = S.principal_projection_error(W, k)
        s1 = np.linalg.norm(W, 2)
        assert err <= eta * s1 * (1 + 1e-12)
        worst = max(worst, err / (eta * s1))
    assert worst < 1.0
    # wrong variant k = ceil(sqrt(r_s)/eta) on W = I_16, eta = 0.9: k = 5, sigma_6 = 1 > 0.9
    W = np.eye(16)
    k_wrong = math.ceil(math.sqrt(S.stable_rank(W)) / 0.9)
    assert k_wrong == 5 and S.principal_projection_error(W, k_wrong) > 0.9
    assert S.eckart_young_rank(S.stable_rank(W), 0.9) == 20 and S.principal_projection_error(W, 20) == 0.0


def test_best_rank_k_and_projection_error():
    rng = np.random.default_rng(110)
    W = rng.normal(size=(6, 5))
    s = np.linalg.svd(W, compute_uv=False)
    for k in (0, 1, 3):
        Wk = S.best_rank_k(W, k)
        assert np.linalg.matrix_rank(Wk) == k
        assert np.linalg.norm(W - Wk, 2) == pytest.approx(s[k], rel=1e-12)
        assert S.principal_projection_error(W, k) == pytest.approx(s[k], rel=1e-15)
        # Eckart-Young optimality against random rank-k matrices
        for _ in range(20):
            R = rng.normal(size=(6, k)) @ rng.normal(size=(k, 5))
            assert np.linalg.norm(W - R, 2) >= s[k] * (1 - 1e-12)
        # the projected-output inequality |Wh - W P_Vk h| <= sigma_{k+1} |h|
        _, _, Vt = np.linalg.svd(W)
        P = Vt[:k].T @ Vt[:k]
        for _ in range(20):
            h = rng.normal(size=5)
            assert np.linalg.norm(W @ h - W @ P @ h) <= s[k] * np.linalg.norm(h) * (1 + 1e-12)
    assert S.principal_projection_error(W, 5) == 0.0
    np.testing.assert_array_equal(S.best_rank_k(W, 7), W)
    with pytest.raises(DomainError, match="k must be"):
        S.best_rank_k(W, -1)


# ============================================================================ covering numbers (prop5.1, prop5.3)


@pytest.mark.parametrize("R,r", [(1.0, 0.3), (2.5, 1.0), (1.0, 1.0)])
def test_covering_k1_exact_inside_bounds(R, r):
    exact = math.ceil(R / r)  # intervals of length 2r cover [-R, R]
    for upper in ("vershynin", "3R"):
        lo, hi = S.covering_number_ball_bounds(R, r, 1, upper=upper)
        assert lo <= exact <= hi


def test_covering_bounds_values():
    lo, hi = S.covering_number_ball_bounds(1.0, 0.5, 2)
    assert (lo, hi) == (pytest.approx(4.0), pytest.approx(25.0))
    assert lo <= 7 <= hi  # optimal cover of the unit disc by discs of radius 1/2
    lo3, hi3 = S.covering_number_ball_bounds(1.0, 0.5, 2, upper="3R")
    assert hi3 == pytest.approx(36.0)
    llo, lhi = S.log_covering_number_ball_bounds(1.0, 1e-3, 500, upper="3R")
    assert lhi == pytest.approx(500 * math.log(3000), rel=1e-14)
    assert S.covering_number_ball_bounds(1.0, 1e-3, 500)[1] == math.inf
    assert S.log_covering_number_ball_bounds(1.0, 2.0, 3)[0] == 0.0  # N >= 1
    with pytest.raises(DomainError, match="r must be <= R"):
        S.log_covering_number_ball_bounds(1.0, 2.0, 3, upper="3R")
    for args, msg in (((0.0, 1.0, 1), "R must be"), ((1.0, 0.0, 1), "r must be"), ((1.0, 0.5, 0), "k must be"),
                      ((1.0, 0.5, 1.5), "k must be")):
        with pytest.raises(DomainError, match=msg):
            S.log_covering_number_ball_bounds(*args)
    with pytest.raises(DomainError, match="upper"):
        S.log_covering_number_ball_bounds(1.0, 0.5, 1, upper="2R")


# ============================================================================ robustness (thm2.2, thm5.5)


def test_robust_bound_example_and_log_form():
    b = S.robust_generalization_bound(0.05, 20, 5000, 2.0, 0.1)
    assert b == pytest.approx(0.05 + 2 * math.sqrt((40 * math.log(2) + 2 * math.log(10)) / 5000), rel=1e-15)
    assert b == pytest.approx(0.210826, abs=1e-6)
    assert S.robust_generalization_bound(0.05, None, 5000, 2.0, 0.1, log_n_cells=math.log(20)) == pytest.approx(b, rel=1e-14)
    assert S.robust_generalization_bound(0.0, None, 100, 1.0, 0.1, log_n_cells=1e4) == math.inf
    out = S.robust_generalization_bound(0.0, [1, 4], 100, 1.0, 0.5)
    assert out.shape == (2,) and out[0] < out[1]


def test_bretagnolle_huber_carol_monte_carlo():
    """The concentration step of thm2.2: Pr(sum_j |N_j/n - mu_j| >= lam) <= delta_f (N = 8, n = 200)."""
    rng = np.random.default_rng(120)
    N, n, delta = 8, 200, 0.05
    mu = rng.dirichlet(np.ones(N))
    lam = math.sqrt((2 * N * math.log(2) + 2 * math.log(1 / delta)) / n)
    counts = rng.multinomial(n, mu, size=20000)
    dev = np.sum(np.abs(counts / n - mu), axis=1)
    assert np.mean(dev >= lam) <= delta
    # the bound with M = 1, eps = 0 is exactly this lam
    assert S.robust_generalization_bound(0.0, N, n, 1.0, delta) == pytest.approx(lam, rel=1e-15)


def test_robust_bound_errors():
    good = dict(eps_rob=0.1, n_cells=4, n=100, loss_bound=1.0, fail_prob=0.1)
    for key, bad, msg in (("eps_rob", -0.1, "eps_rob"), ("n_cells", 0.5, "n_cells"), ("n", 0.5, "n must"),
                          ("loss_bound", 0.0, "loss_bound"), ("fail_prob", 1.0, "fail_prob"),
                          ("fail_prob", 0.0, "fail_prob"), ("n_cells", None, "n_cells")):
        kw = dict(good)
        kw[key] = bad
        with pytest.raises(DomainError, match=msg):
            S.robust_generalization_bound(**kw)
    with pytest.raises(DomainError, match="log_n_cells"):
        S.robust_generalization_bound(0.1, None, 100, 1.0, 0.1, log_n_cells=-1.0)


def test_stable_rank_generalization_bound_example():
    b = S.stable_rank_generalization_bound(0.01, 1.0, 0.5, 2.0, 1.0, 1.5, 0.5, 1e6, 1.0, 0.05)
    ref = 0.01 + 2.0 + math.sqrt((2 * 46656 * math.log(2) + 2 * math.log(20)) / 1e6)
    assert b == pytest.approx(ref, rel=1e-14)
    assert b == pytest.approx(2.2643, abs=1e-4)
    # lower stable rank -> smaller cover term
    lo = S.stable_rank_generalization_bound(0.0, 0.0, 0.5, 1.0, 1.0, 1.0, 0.5, 1e6, 1.0, 0.05)
    hi = S.stable_rank_generalization_bound(0.0, 0.0, 0.5, 1.0, 1.0, 2.0, 0.5, 1e6, 1.0, 0.05)
    assert lo < hi
    assert S.stable_rank_generalization_bound(0.0, 1.0, 0.05, 1.0, 1.0, 50.0, 0.01, 1e6, 1.0, 0.05) == math.inf
    for kw, msg in (({"lip": -1.0}, "lip"), ({"W_op": 0.0}, "W_op"), ({"cover_radius": 2.0}, "cover_radius must be <= R"),
                    ({"srank": 0.5}, "srank")):
        args = dict(eps_rob=0.0, lip=1.0, eta=0.5, W_op=1.0, R=1.0, srank=1.5, cover_radius=0.5, n=100,
                    loss_bound=1.0, fail_prob=0.1)
        args.update(kw)
        with pytest.raises(DomainError, match=msg):
            S.stable_rank_generalization_bound(**args)


def test_stable_rank_generalization_bound_sweeps_n_and_eps():
    """eps_rob, n, loss_bound and fail_prob broadcast (a curve over the sample size): each point is the scalar
    call's value; a bad entry names its parameter (an array n raised a TypeError before); inf everywhere where
    ln N itself overflows, after the same checks."""
    rng = np.random.default_rng(5)
    n = np.exp(rng.uniform(0.0, 30.0, 40))
    e, M, d = rng.random(40), rng.random(40) + 0.1, rng.random(40) * 0.9 + 0.01
    for eta, srank, upper in ((0.9, 2.0, "3R"), (0.5, 3.0, "vershynin")):
        got = S.stable_rank_generalization_bound(e, 1.0, eta, 2.0, 1.0, srank, 0.1, n, M, d, upper=upper)
        want = [S.stable_rank_generalization_bound(float(a), 1.0, eta, 2.0, 1.0, srank, 0.1, float(b), float(c),
                                                   float(f), upper=upper) for a, b, c, f in zip(e, n, M, d)]
        assert got.shape == (40,) and np.array_equal(got, want)
    grid = S.stable_rank_generalization_bound(0.01, 1.0, 0.9, 2.0, 1.0, 2.0, 0.1, [[100.0], [1e4]], 1.0, [0.05, 0.01])
    assert grid.shape == (2, 2) and grid[1, 0] < grid[0, 0]  # more samples, a tighter bound
    with pytest.raises(DomainError, match="n must be >= 1"):
        S.stable_rank_generalization_bound(0.01, 1.0, 0.9, 2.0, 1.0, 2.0, 0.1, np.array([100.0, 0.5]), 1.0, 0.05)
    with pytest.raises(DomainError, match="eps_rob"):
        S.stable_rank_generalization_bound(np.array([0.1, -1.0]), 1.0, 0.9, 2.0, 1.0, 2.0, 0.1, 100.0, 1.0, 0.05)
    # k = ceil(srank / eta^2) beyond 2^53 with ln N > 1.8e308: inf at every point, n still checked
    huge = S.stable_rank_generalization_bound(0.0, 1.0, 1e-200, 1.0, 1.0, 5.0, 0.1, np.array([1e3, 1e6]), 1.0, 0.05)
    assert np.array_equal(huge, [math.inf, math.inf])
    with pytest.raises(DomainError, match="n must be >= 1"):
        S.stable_rank_generalization_bound(0.0, 1.0, 1e-200, 1.0, 1.0, 5.0, 0.1, 0.5, 1.0, 0.05)


def test_citations_cover_module():
    import grokclocks.citations as c

    for name in S.__all__:
        obj = getattr(S, name)
        if callable(obj) and not isinstance(obj, type) and name != "SingularValueDrift":
            assert c.citations_of(obj), name


def test_extreme_arguments_give_the_limit_not_nan():
    """The former Known records of the property suite (issue 15): each example's exact answer."""
    assert S.schatten_penalty([[125.73022109]], 1.7e308, rtol=1e300) == 0.0  # rtol >= 1 keeps nothing
    assert S.end_to_end_energy(10.0, [[125.7, -132.1], [640.4, 1.0]], 0.0, 1.7e308, rtol=0.0) == 10.0  # lam = 0
    assert S.imbalance_decay(-1e300, 1.7e308, 0.0) == -1e300  # e^{-2 mu t} = 1 at t = 0
    assert S.imbalance_decay(-1e300, 1.7e308, 1.0) == 0.0
    W, g = [[0.08, 0.63], [0.10, 0.5], [1.0, 2.0]], [[-0.6, -0.5], [1.07, 0.2], [0.3, 0.1]]
    t = S.singular_value_drift_terms(W, g, 1e300, 1.7e308)
    # shrinkage 1e300 * 1.7e308 * sigma^(p-1): beyond the range for sigma_1 = 2.37, 0 for sigma_2 = 0.236
    assert t.shrinkage[0] == math.inf and t.shrinkage[1] == 0.0 and t.drift[1] == t.data_force[1]
    assert np.all(S.schatten_penalty_grad(np.array(W) / 10, 1.7e308) == 0.0)  # sigma < 1: p sigma^(p-1) -> 0
    with pytest.raises(ResultOverflow, match="p = 1.7e"):
        S.schatten_penalty_grad(W, 1.7e308)
    assert S.eckart_young_rank(1.0, 2.2250738585072014e-308) == 2**2044  # eta = 2^-1022: exact, beyond 1.8e308
    assert S.eckart_young_rank(2.7, 0.3) == 30
    # k = 1e320 dimensions of a ball with R / r = 5e-324 / 1e300: ln N = 1e320 * 1e-623, so N = 1
    b = S.stable_rank_generalization_bound(0.0, 0.0, 1e-160, 0.1, 5e-324, 1.0, 1e300, 10.0, 0.1, 0.001, upper="vershynin")
    assert b == pytest.approx(0.1 * math.sqrt((2 * math.log(2) + 2 * math.log(1000)) / 10), rel=1e-14)


@pytest.mark.parametrize("func, args", [
    (S.imbalance_decay, (1.0, 0.1, 2.0)), (S.free_direction_collapse_time, (1.0, 0.1, 0.5)),
    (S.covering_number_ball_bounds, (2.0, 0.5, 3)), (S.log_covering_number_ball_bounds, (2.0, 0.5, 3)),
    (S.robust_generalization_bound, (0.1, 100, 1000, 1.0, 0.05)),
    (S.stable_rank_generalization_bound, (0.1, 1.0, 0.1, 1.0, 1.0, 2.0, 0.5, 1000, 1.0, 0.05)),
], ids=lambda c: getattr(c, "__name__", ""))
def test_shapes_that_do_not_broadcast_raise_domain_error(func, args):
    # (3,) against (4,) reached NumPy's bare "operands could not be broadcast" ValueError
    func(*args)
    for k in range(1, len(args)):
        if func in (S.covering_number_ball_bounds, S.log_covering_number_ball_bounds) and k == 2:
            continue  # k: a scalar integer
        a = list(args)
        a[0], a[k] = np.full(3, args[0]), np.full(4, args[k])
        with pytest.raises(DomainError, match=r"must broadcast against each other \(got shapes \w+ \(3,\), \w+ \(4,\)\)"):
            func(*a)
