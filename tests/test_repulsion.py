"""grokclocks.repulsion against independent references, the spec's identities, properties and domain errors.

References are built here from scratch: B by mpmath matrix inversion at 40 digits and by numpy ``inv``,
the leave-two-out projector by explicitly deleting the two columns, the rolling Gram by stacking each
window, rho_tian by forming the n x n kernel, gradients by central finite differences, one torch-Adam
step by its textbook formula.  Spec: shared/spec/repulsion.md (sections 4-8, 10 R1).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grokclocks import DomainError
from grokclocks import repulsion as R


def _features(n, K, seed=0, offset=0.0):
    """Centred squares of Gaussians (like trained x^2 features), float64."""
    rng = np.random.default_rng(seed)
    return R.center_features(rng.standard_normal((n, K)) ** 2 + offset)


def _loo_direct(F, eta, j, l):
    """c = f_j^T P_{eta,-jl} f_l with the two columns deleted explicitly."""
    K = F.shape[1]
    keep = np.ones(K, bool)
    keep[[j, l]] = False
    Fm = F[:, keep]
    P = np.eye(F.shape[0]) - Fm @ np.linalg.solve(Fm.T @ Fm + eta * np.eye(K - 2), Fm.T)
    return F[:, j] @ P @ F[:, l], F[:, j] @ P @ F[:, j] + eta, F[:, l] @ P @ F[:, l] + eta


# ============================================================================ model and loss


def test_one_hot_pairs_and_forward():
    M = 5
    a, b = np.array([0, 4, 2]), np.array([3, 1, 2])
    X = R.one_hot_pairs(a, b, M)
    assert X.shape == (3, 10)
    assert np.array_equal(X.sum(axis=1), [2, 2, 2])
    assert X[0, 0] == 1 and X[0, 5 + 3] == 1 and X[1, 4] == 1 and X[1, 6] == 1
    rng = np.random.default_rng(0)
    W, Vo = rng.standard_normal((10, 7)), rng.standard_normal((7, M))
    F, Y = R.tian_forward(W, Vo, X)
    H = W[a] + W[M + b]  # one-hot rows select and add rows of W
    np.testing.assert_allclose(F, H**2, rtol=1e-15)
    np.testing.assert_allclose(Y, H**2 @ Vo, rtol=1e-13)
    F2, _ = R.tian_forward(W, Vo, X, activation="relu")
    np.testing.assert_allclose(F2, np.maximum(H, 0))


def test_loss_code_form_closed():
    """Code form = (1/n) sum(|y_zm|^2 - 2 y_zm[y] + 1 - 1/M) (spec section 2, second expression)."""
    rng = np.random.default_rng(1)
    n, M = 13, 7
    Yh = rng.standard_normal((n, M))
    y = rng.integers(0, M, n)
    zm = Yh - Yh.mean(axis=1, keepdims=True)
    ref = np.mean(np.sum(zm**2, axis=1) - 2 * zm[np.arange(n), y] + 1 - 1 / M)
    assert R.tian_mse_loss(Yh, y, M) == pytest.approx(ref, rel=1e-14)
    # perfect prediction of the zero-meaned target gives 0; a constant shift per row is invisible
    T = np.eye(M)[y] - 1 / M
    assert R.tian_mse_loss(T + 3.0, y, M) == pytest.approx(0.0, abs=1e-14)


def test_loss_forms_not_proportional():
    """Erratum repulsion-4: eq. 3 (sample centring, 1/2) vs the trained loss (class centring, mean)."""
    rng = np.random.default_rng(2)
    n, M = 50, 11
    y = rng.integers(0, M, n)
    ratios = []
    for s in range(5):
        Yh = rng.standard_normal((n, M)) * (0.1 + s)
        ratios.append(R.tian_mse_loss(Yh, y, M, "paper") / R.tian_mse_loss(Yh, y, M))
    ratios = np.array(ratios)
    assert np.ptp(ratios) / np.mean(ratios) > 0.05  # not proportional
    # both vanish on the exact target; scale ratio of the residual part ~ n/2 (1/2 sum vs mean)
    Yh = np.eye(M)[y] - 1 / M + 1e-3 * rng.standard_normal((n, M))
    Yh -= Yh.mean(axis=0, keepdims=True) - (np.eye(M)[y] - 1 / M).mean(axis=0, keepdims=True)
    Yh -= Yh.mean(axis=1, keepdims=True)
    r = R.tian_mse_loss(Yh, y, M, "paper") / R.tian_mse_loss(Yh, y, M)
    assert r == pytest.approx(n / 2, rel=0.2)


@pytest.mark.parametrize("act", ["sqr", "relu"])
def test_loss_grad_vs_finite_differences(act):
    rng = np.random.default_rng(3)
    M, K, n = 5, 6, 9
    a, b = rng.integers(0, M, n), rng.integers(0, M, n)
    X = R.one_hot_pairs(a, b, M)
    y = (a + b) % M
    W, Vo = rng.standard_normal((2 * M, K)), rng.standard_normal((K, M))
    _, dW, dV = R.tian_loss_grad(W, Vo, X, y, M, act)
    h = 1e-6
    for (P, dP, which) in ((W, dW, "W"), (Vo, dV, "V")):
        num = np.zeros_like(P)
        for idx in np.ndindex(P.shape):
            Pp, Pm = P.copy(), P.copy()
            Pp[idx] += h
            Pm[idx] -= h
            args_p = (Pp, Vo) if which == "W" else (W, Pp)
            args_m = (Pm, Vo) if which == "W" else (W, Pm)
            lp = R.tian_mse_loss(R.tian_forward(*args_p, X, act)[1], y, M)
            lm = R.tian_mse_loss(R.tian_forward(*args_m, X, act)[1], y, M)
            num[idx] = (lp - lm) / (2 * h)
        # central differences: truncation ~h^2, rounding ~1e-16 |L| / h ~ 1e-8 at |L| ~ 1e2
        np.testing.assert_allclose(dP, num, rtol=1e-6, atol=1e-6)


def test_adam_l2_first_steps():
    """torch.optim.Adam(weight_decay=eta): coupled L2; step 1 moves by lr * g/(|g| + eps)."""
    p = np.array([1.0, -2.0, 0.5])
    g = np.array([0.3, 0.0, -1e-3])
    eta, lr = 0.1, 1e-3
    p1, m1, v1 = R.adam_l2_update(p, g, np.zeros(3), np.zeros(3), 1, lr=lr, eta=eta)
    ge = g + eta * p
    np.testing.assert_allclose(p1, p - lr * ge / (np.abs(ge) + 1e-8), rtol=1e-12)
    p2, _, _ = R.adam_l2_update(p1, g, m1, v1, 2, lr=lr, eta=eta)
    g2 = g + eta * p1
    m2 = 0.9 * m1 + 0.1 * g2
    v2 = 0.999 * v1 + 0.001 * g2**2
    ref = p1 - lr * (m2 / (1 - 0.9**2)) / (np.sqrt(v2 / (1 - 0.999**2)) + 1e-8)
    np.testing.assert_allclose(p2, ref, rtol=1e-12)


def test_setup_and_init_bounds():
    s = R.tian_setup()
    assert (s["M"], s["K"], s["n_train"], s["n_test"]) == (71, 2048, 2016, 3025)
    assert s["n_train"] / 71**2 == pytest.approx(0.39992, abs=1e-5)
    assert s["init_W_halfwidth"] == pytest.approx(1 / math.sqrt(142))
    assert s["init_V_halfwidth"] == pytest.approx(1 / math.sqrt(2048))
    with pytest.raises(TypeError):
        s["eta"] = 0.0  # read-only


# ============================================================================ B and Woodbury


def test_B_vs_mpmath():
    F = _features(6, 9, seed=4)
    eta = 2e-2
    mp.mp.dps = 40
    A = mp.matrix(F.T.tolist()) * mp.matrix(F.tolist()) + mp.mpf(eta) * mp.eye(9)
    Bref = np.array((A**-1).tolist(), dtype=float)
    for method in ("woodbury", "direct", "auto"):
        B = R.feature_gram_inverse(F, eta, method)
        assert np.max(np.abs(B - Bref)) / np.max(np.abs(Bref)) < 1e-11


@pytest.mark.parametrize("n,K", [(30, 50), (50, 30), (40, 80), (5, 60), (60, 20), (20, 20)])
@pytest.mark.parametrize("eta", [1e-6, 2e-4, 1e-2, 0.5, 1.0, 10.0])
def test_woodbury_equals_direct(n, K, eta):
    """Spec R1 (corrected): <= 1e-9 where both routes are well conditioned; at eta = 1e-6 one route loses
    accuracy by cancellation (cond ~ |F|^2 / eta ~ 1e8), so 1e-7 there.  That includes n == K: centring
    makes rank F~ <= n - 1 < K, so the direct K x K system is the ill-conditioned one (measured 1.6e-9 at
    (20, 20) with numpy 2.4 / OpenBLAS, above 1e-9; <= 7e-9 elsewhere).  The smaller-side route itself is
    checked against mpmath at eta = 1e-6 below, (20, 20) included, at 1e-9."""
    F = _features(n, K, seed=n * K)
    Bw = R.feature_gram_inverse(F, eta, "woodbury")
    Bd = R.feature_gram_inverse(F, eta, "direct")
    err = np.max(np.abs(Bw - Bd)) / np.max(np.abs(Bd))
    assert err <= (1e-9 if eta >= 2e-4 else 1e-7), err


@pytest.mark.parametrize("n,K,seed", [(5, 12, 17), (12, 5, 17), (20, 20, 400)])
def test_smaller_side_route_vs_mpmath_small_eta(n, K, seed):
    F = _features(n, K, seed=seed)
    eta = 1e-6
    mp.mp.dps = 40
    A = mp.matrix(F.T.tolist()) * mp.matrix(F.tolist()) + mp.mpf(eta) * mp.eye(K)
    Bref = np.array((A**-1).tolist(), dtype=float)
    B = R.feature_gram_inverse(F, eta, "auto")
    assert np.max(np.abs(B - Bref)) / np.max(np.abs(Bref)) < 1e-9


def test_paper_eq4_is_wrong_except_eta_one():
    """Erratum repulsion-1: eq. 4 differs by > 1 relative for eta <= 1e-2, agrees at eta = 1;
    its off-diagonal entries are B_jl / eta."""
    F = _features(40, 80, seed=5)
    errs = {}
    for eta in (2e-4, 1e-2, 1.0):
        Bd = R.feature_gram_inverse(F, eta, "direct")
        Bp = R.feature_gram_inverse(F, eta, "paper_eq4")
        errs[eta] = np.max(np.abs(Bp - Bd)) / np.max(np.abs(Bd))
        off = ~np.eye(80, dtype=bool)
        np.testing.assert_allclose(Bp[off], Bd[off] / eta, rtol=1e-6, atol=1e-9 * np.abs(Bd).max() / eta)
    assert errs[2e-4] > 1e3 and errs[1e-2] > 10 and errs[1.0] < 1e-12, errs
    np.testing.assert_array_equal(R.feature_gram_inverse_paper_eq4(F, 1e-2), R.feature_gram_inverse(F, 1e-2, "paper_eq4"))


# ============================================================================ the sign rule


@pytest.mark.parametrize("n,K,eta", [(30, 50, 1e-2), (50, 30, 0.5), (40, 80, 2e-4), (10, 5, 1e-6), (25, 25, 3.0),
                                     (5, 20, 10.0), (60, 60, 1.0)])
def test_sign_rule_exact_on_random_matrices(n, K, eta):
    """Spec section 5 / R1: sgn B_jl = -sgn c on ALL off-diagonal pairs; magnitude identity <= 1e-6;
    full projector identity f_j^T P_eta f_l = -eta^2 B_jl <= 1e-9 (relative to max |eta^2 B|)."""
    F = _features(n, K, seed=7 * n + K)
    j, l = np.triu_indices(K, 1)
    B, c, al, be = R.sign_rule_terms(F, eta, j, l)
    assert np.all(al * be - c**2 > 0)
    assert np.mean(np.sign(B) == -np.sign(c)) == 1.0
    assert np.max(np.abs(B + c / (al * be - c**2))) / np.max(np.abs(B)) < 1e-6
    full = R.full_projector_residual(F, eta, j, l)
    assert np.mean(np.sign(B) == -np.sign(full)) == 1.0
    assert np.max(np.abs(full + eta**2 * B)) / np.max(np.abs(eta**2 * B)) < 1e-9
    k = min(200, K * (K - 1) // 2)
    assert R.sign_match_fraction(F, eta, k, "exact") == 1.0
    assert R.sign_match_fraction(F, eta, k, "full") == 1.0


@pytest.mark.parametrize("eta", [2e-4, 1e-2, 1.0])
def test_leave_two_out_vs_explicit_deletion(eta):
    F = _features(30, 40, seed=8)
    rng = np.random.default_rng(0)
    for _ in range(6):
        j, l = rng.choice(40, 2, replace=False)
        cref, aref, bref = _loo_direct(F, eta, j, l)
        c = R.leave_two_out_residual(F, eta, j, l)
        _, c2, a2, b2 = R.sign_rule_terms(F, eta, j, l)
        assert isinstance(c, float)
        assert c == pytest.approx(cref, rel=1e-8, abs=1e-12 * abs(aref))
        assert (c2, a2, b2) == pytest.approx((cref, aref, bref), rel=1e-8)


def test_full_projector_diagonal_identity():
    """f_j^T P_eta f_l = eta (delta_jl - eta B_jl); checked off-diagonal through the public function and
    on the diagonal through P_eta = eta (F F^T + eta I)^{-1} explicitly."""
    F = _features(20, 30, seed=9)
    eta = 0.05
    B = R.feature_gram_inverse(F, eta)
    P = eta * np.linalg.inv(F @ F.T + eta * np.eye(20))
    np.testing.assert_allclose(F.T @ P @ F, eta * (np.eye(30) - eta * B), rtol=1e-9, atol=1e-12)


def test_top_similar_pairs_ordering_and_ties():
    F = _features(15, 12, seed=10)
    j, l, s = R.top_similar_pairs(F, 20)
    assert np.all(j < l)
    assert np.all(np.diff(np.abs(s)) <= 1e-15)
    Fn = F / np.linalg.norm(F, axis=0)
    np.testing.assert_allclose(s, np.sum(Fn[:, j] * Fn[:, l], axis=0), rtol=1e-12)
    # exact ties: duplicated columns -> all pairs among copies have |cos| = 1, lexicographic order
    G = np.repeat(F[:, :1], 4, axis=1)
    j, l, s = R.top_similar_pairs(G, 6)
    assert list(zip(j, l)) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]


def test_repulsion_fraction_definition():
    F = _features(20, 25, seed=11)
    eta = 1e-2
    j, l, s = R.top_similar_pairs(F, 50)
    B = R.feature_gram_inverse(F, eta)
    pos = s > 0
    assert R.repulsion_fraction(F, eta, 50) == pytest.approx(np.mean(B[j[pos], l[pos]] < 0))


def test_legacy_statistic_is_the_code_formula():
    """residual='legacy' = the code's residual_similarity_signs: B_code and f_j.(f_l - F B_code F^T f_l)."""
    F = _features(30, 60, seed=12)
    eta = 2e-4
    j, l, _ = R.top_similar_pairs(F, 100)
    Bc = np.eye(60) / eta - F.T @ np.linalg.inv(F @ F.T + eta * np.eye(30)) @ F / eta**2
    res = np.sum(F[:, j] * (F[:, l] - F @ (Bc @ F.T @ F[:, l])), axis=0)
    ref = np.mean(np.sign(Bc[j, l]) == -np.sign(res))
    assert R.sign_match_fraction(F, eta, 100, "legacy") == pytest.approx(ref)


# ============================================================================ rolling Gram and detector


def _naive_rolling(D, w, k):
    T = D.shape[0]
    out = np.full((T + 1, k), np.nan)
    for t in range(2, T + 1):
        m = min(t, w)
        X = D[t - m:t]
        ev = np.linalg.eigvalsh(X @ X.T)[::-1]
        out[t, :min(k, m)] = ev[:min(k, m)]
    return out


@pytest.mark.parametrize("T,P,w,k", [(60, 300, 20, 5), (25, 50, 5, 5), (10, 7, 10, 3), (30, 1000, 2, 2)])
def test_rolling_gram_vs_naive(T, P, w, k):
    rng = np.random.default_rng(T + P)
    D = rng.standard_normal((T, P)) * np.linspace(1, 3, T)[:, None]
    E = R.rolling_gram_eigenvalues(D, w, k)
    N = _naive_rolling(D, w, k)
    assert E.shape == (T + 1, k)
    np.testing.assert_array_equal(np.isnan(E), np.isnan(N))
    np.testing.assert_allclose(E, N, rtol=1e-12, atol=1e-12 * np.nanmax(N))
    assert np.all(np.isnan(E[:2]))
    # float32 input gives the same numbers (accumulated in float64)
    E32 = R.rolling_gram_eigenvalues(D.astype(np.float32), w, k)
    np.testing.assert_allclose(E32, _naive_rolling(D.astype(np.float32).astype(np.float64), w, k), rtol=1e-10)
    # chunked lagged products = unchunked
    np.testing.assert_allclose(R.lagged_inner_products(D, w, chunk=3), R.lagged_inner_products(D, w), rtol=1e-14)


def test_window_gram_eigenvalues_matches_svd():
    rng = np.random.default_rng(13)
    D = rng.standard_normal((3, 20, 200))
    ev = R.window_gram_eigenvalues(D, 5)
    sv = np.linalg.svd(D, compute_uv=False)[:, :5] ** 2
    np.testing.assert_allclose(ev, sv, rtol=1e-11)


def test_rank_two_updates_give_large_gap():
    """Updates confined to a 2-D subspace (+ tiny noise): sigma_2/sigma_3 huge; isotropic noise: gap ~ 1."""
    rng = np.random.default_rng(14)
    T, P = 80, 500
    U = rng.standard_normal((2, P))
    D = rng.standard_normal((T, 2)) @ U + 1e-4 * rng.standard_normal((T, P))
    g = R.eigengap(R.rolling_gram_eigenvalues(D, 20, 5))
    assert np.nanmin(g[20:]) > 1e4
    g0 = R.eigengap(R.rolling_gram_eigenvalues(rng.standard_normal((T, P)), 20, 5))
    assert np.nanmax(g0[20:]) < 1.5
    assert np.isnan(g[2]) and np.isfinite(g[3])  # gap needs >= 3 deltas


def test_eigengap_nan_rules():
    E = np.array([[3.0, 2.0, 1.0], [3.0, 2.0, 0.0], [np.nan, np.nan, np.nan]])
    g = R.eigengap(E)
    assert g[0] == 2.0 and np.isnan(g[1]) and np.isnan(g[2])
    assert R.eigengap(np.array([4.0, 2.0, 0.5])) == 4.0
    assert R.eigengap(E, 1, 2)[0] == 1.5


def test_slope_detector_closed_form():
    """x(t) = log g(t) piecewise linear: slope 0.05/epoch from epoch 150 -> s(t) = 0.05 (t - 150)/25 for
    t in [150, 175], so s > 0.04 first at t = 171 (s = 0.042)."""
    t = np.arange(401, dtype=float)
    x = np.where(t < 150, 0.0, 0.05 * (t - 150))
    g = np.exp(x)
    g[:2] = np.nan
    fire, s = R.slope_detector(g)
    assert fire == 171
    assert s[171] == pytest.approx(0.05 * 21 / 25)
    assert np.all(np.isnan(s[:25 + 2]))
    # a fire before t_min is ignored, NaN never fires, floor clips
    g2 = np.exp(0.05 * t)
    assert R.slope_detector(g2, t_min=100)[0] == 100
    assert R.slope_detector(np.full(200, np.nan))[0] is None
    gz = np.where(t < 200, 0.0, 1.0)
    fire, s = R.slope_detector(gz)  # log(1) - log(1e-6) over 25 = 0.55
    assert fire == 200 and s[200] == pytest.approx(-math.log(1e-6) / 25)


def test_late_separation_and_median():
    T = 401
    grok = np.vstack([np.full(T, 300.0), np.full(T, 200.0), np.full(T, 250.0)])
    ctrl = np.vstack([np.full(T, 1.3), np.full(T, 1.2)])
    grok[:, 250] = np.nan
    assert R.late_median_gap(grok[0]) == 300.0
    assert R.late_stage_separation(grok, ctrl) == pytest.approx(250.0 / 1.25)


def test_late_median_gap_window_is_inclusive():
    """m = median over a <= t <= b, both ends in: on exp(-t/50) the median over [200, 400] is the value at
    t = 300 (an exclusive end gives the mean of t = 299 and 300, 1 % higher), and a one-epoch window
    [a, a] is g(a) (an exclusive end leaves it empty: NaN)."""
    t = np.arange(500, dtype=float)
    g = np.exp(-t / 50.0)
    assert R.late_median_gap(g, (200, 400)) == g[300]
    assert R.late_median_gap(g, (7, 7)) == g[7]
    assert R.late_median_gap(g, (7, 8)) == pytest.approx((g[7] + g[8]) / 2, rel=1e-15)
    assert R.late_median_gap(g, (0, 499)) == pytest.approx((g[249] + g[250]) / 2, rel=1e-15)  # last epoch in
    np.testing.assert_array_equal(R.late_median_gap(np.vstack([g, 2 * g]), (7, 7)), [g[7], 2 * g[7]])


def test_late_stage_separation_is_a_median_over_runs():
    """median over runs of the per-run medians (spec repulsion:late-separation): run medians [1, 1, 10]
    against a control of 0.01 give 100 (their mean would give 400)."""
    T = 401
    grok = np.vstack([np.full(T, 1.0), np.full(T, 1.0), np.full(T, 10.0)])
    ctrl = np.vstack([np.full(T, 0.01), np.full(T, 0.01), np.full(T, 0.04)])  # run medians [0.01, 0.01, 0.04]
    assert R.late_stage_separation(grok, ctrl) == pytest.approx(100.0, rel=1e-15)


def test_late_separation_depends_on_window():
    """Erratum repulsion-6: a gap that rises then decays gives window-dependent separations."""
    t = np.arange(601, dtype=float)
    g = np.where(t < 170, 1.3, 300.0 * np.exp(-(t - 170) / 60.0) + 1.3)
    ctrl = np.full(601, 1.3)
    s_early = R.late_stage_separation(g, ctrl, (200, 400))
    s_late = R.late_stage_separation(g, ctrl, (300, 600))
    assert s_early > 5 * s_late


def test_first_crossing():
    s = np.array([np.nan, 0.1, 0.4, 0.5, 0.2, 0.9])
    assert R.first_crossing(s, 0.5) == 3
    assert R.first_crossing(s, 0.95) is None
    assert R.first_crossing(np.vstack([s, s[::-1]]), 0.5) == [3, 0]


# ============================================================================ rho_tian and extras


@pytest.mark.parametrize("n,K,offset", [(60, 40, 0.0), (30, 80, 2.0), (100, 10, 0.5)])
def test_rho_closed_form_vs_direct(n, K, offset):
    rng = np.random.default_rng(n + K)
    F = rng.standard_normal((n, K)) ** 2 + offset
    a = R.rho_tian(F)
    G = F @ F.T
    d = np.trace(G) / n
    o = (G.sum() - np.trace(G)) / (n * (n - 1))
    ideal = (d - o) * np.eye(n) + o
    ref = np.linalg.norm(G - ideal) / np.linalg.norm(G)
    assert a == pytest.approx(ref, rel=1e-12)
    assert R.rho_tian(F, method="direct") == pytest.approx(ref, rel=1e-13)
    # an exactly two-level kernel has rho = 0
    assert R.rho_tian(np.hstack([np.eye(n), np.ones((n, 1))])) == pytest.approx(0.0, abs=1e-7)


def test_rho_paper_eq7_differs():
    """Erratum repulsion-3: eq. 7's centred numerator differs from the code's raw F F^T."""
    rng = np.random.default_rng(15)
    F = rng.standard_normal((60, 40)) ** 2
    code = R.rho_tian(F)
    paper = R.rho_tian(F, "paper_eq7")
    G = F @ F.T
    Gc = G - G.mean(axis=0, keepdims=True)
    d = np.trace(Gc) / 60
    o = (Gc.sum() - np.trace(Gc)) / (60 * 59)
    ref = np.linalg.norm(Gc - ((d - o) * np.eye(60) + o)) / np.linalg.norm(G)
    assert paper == pytest.approx(ref, rel=1e-12)
    assert abs(paper / code - 1) > 0.1, (code, paper)  # measured 0.410 (code) vs 0.348 (eq. 7)


def test_ftf_offdiag_ratio_and_gradient_norm():
    rng = np.random.default_rng(16)
    n, K, M = 20, 8, 5
    F = rng.standard_normal((n, K)) ** 2
    Ft = R.center_features(F)
    H = Ft.T @ Ft
    off = [abs(H[i, j]) for i in range(K) for j in range(K) if i != j]
    assert R.ftf_offdiag_ratio(Ft) == pytest.approx(np.mean(off) / np.mean(np.abs(np.diag(H))))
    Vo = rng.standard_normal((K, M))
    y = rng.integers(0, M, n)
    Y = np.eye(M)[y] - 1 / M
    C = np.eye(n) - np.ones((n, n)) / n
    GF = C @ (Y - F @ Vo) @ Vo.T
    assert R.backprop_gradient_norm(F, Vo, y, M) == pytest.approx(np.linalg.norm(GF), rel=1e-12)
    p1 = R.independence_proxy(F, Vo, y, M, 200, seed=3)
    assert p1 == R.independence_proxy(F, Vo, y, M, 200, seed=np.random.default_rng(3))
    assert 0 <= p1 <= 1


def test_fit_power_law_exact_and_paper_eta_sweep():
    eta = np.array([1e-5, 1e-4, 1e-3])
    g, A = R.fit_power_law(eta, 3.0 * eta**-0.7)
    assert (g, A) == pytest.approx((0.7, 3.0), rel=1e-10)


def test_fit_power_law_paper_eta_sweep():
    """Erratum repulsion-5: the paper's own medians give gamma = ln(312/101)/ln 4 = 0.81, then saturation."""
    tab = R.eta_sweep_table()
    g1, _ = R.fit_power_law([5e-5, 2e-4], [tab[5e-5]["grok"], tab[2e-4]["grok"]])
    assert g1 == pytest.approx(math.log(312 / 101) / math.log(4), rel=1e-12)
    assert g1 == pytest.approx(0.81, abs=0.005)
    g2, _ = R.fit_power_law([2e-4, 5e-4], [101, 102])
    assert abs(g2) < 0.02
    g3, _ = R.fit_power_law([5e-5, 1e-4, 2e-4], [312, 174, 101])
    assert 0.75 < g3 < 0.9  # "1/eta" (gamma = 1) is not what the paper's numbers show


def test_tables_are_consistent():
    h = R.headline_table()
    assert h["late_median_gap"]["spec_grok"] / h["late_median_gap"]["spec_control"] == pytest.approx(228.6, rel=2e-3)
    assert len(R.reduced_replication_table()) == 11
    assert R.scaling_sweep_table()["p_crit"][71] == pytest.approx(0.060, abs=1e-3)


# ============================================================================ hypothesis properties

_dims = st.integers(2, 25)
_etas = st.floats(1e-3, 10.0)


@settings(max_examples=40, deadline=None)
@given(n=_dims, K=_dims, eta=_etas, seed=st.integers(0, 2**31 - 1))
def test_B_symmetric_positive_definite(n, K, eta, seed):
    F = _features(n, K, seed)
    B = R.feature_gram_inverse(F, eta)
    assert np.array_equal(B, B.T)
    ev = np.linalg.eigvalsh(B)
    assert ev.min() > 0
    assert ev.max() <= (1 / eta) * (1 + 1e-9)  # B <= I/eta


@settings(max_examples=40, deadline=None)
@given(n=_dims, K=_dims, eta=_etas, seed=st.integers(0, 2**31 - 1))
def test_woodbury_equals_direct_property(n, K, eta, seed):
    F = _features(n, K, seed)
    Bw = R.feature_gram_inverse(F, eta, "woodbury")
    Bd = R.feature_gram_inverse(F, eta, "direct")
    assert np.max(np.abs(Bw - Bd)) <= 1e-9 * np.max(np.abs(Bd))


@settings(max_examples=30, deadline=None)
@given(n=_dims, K=st.integers(3, 25), eta=_etas, seed=st.integers(0, 2**31 - 1))
def test_sign_rule_property(n, K, eta, seed):
    F = _features(n, K, seed)
    j, l = np.triu_indices(K, 1)
    B, c, al, be = R.sign_rule_terms(F, eta, j, l)
    nz = np.abs(B) > 1e-12 * np.max(np.abs(B))
    assert np.all(np.sign(B[nz]) == -np.sign(c[nz]))
    assert np.all(al * be - c**2 > 0)


@settings(max_examples=30, deadline=None)
@given(scale=st.floats(1e-6, 1e6), seed=st.integers(0, 2**31 - 1), w=st.integers(3, 12))
def test_detector_invariant_to_scaling_of_updates(scale, seed, w):
    rng = np.random.default_rng(seed)
    T, P = 150, 40
    U = rng.standard_normal((2, P))
    mix = np.clip((np.arange(T) - 60) / 30, 0, 1)[:, None]
    D = (rng.standard_normal((T, 2)) @ U) * mix + rng.standard_normal((T, P)) * (1 - 0.99 * mix)
    g1 = R.eigengap(R.rolling_gram_eigenvalues(D, w, 3))
    g2 = R.eigengap(R.rolling_gram_eigenvalues(D * scale, w, 3))
    np.testing.assert_allclose(g2, g1, rtol=1e-8)
    f1, s1 = R.slope_detector(g1, lag=10, threshold=0.02, t_min=20)
    f2, s2 = R.slope_detector(g2, lag=10, threshold=0.02, t_min=20)
    np.testing.assert_allclose(s2, s1, rtol=1e-6, atol=1e-9)
    # fire epochs agree unless s sits within rounding of the threshold at the first crossing
    if f1 != f2:
        t = min(x for x in (f1, f2) if x is not None)
        assert abs(s1[t] - 0.02) < 1e-8


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 30), K=st.integers(1, 30), c=st.floats(1e-3, 1e3), seed=st.integers(0, 2**31 - 1))
def test_rho_scale_invariant_and_bounded(n, K, c, seed):
    F = np.random.default_rng(seed).standard_normal((n, K)) ** 2 + 1e-3
    r = R.rho_tian(F)
    assert 0 <= r <= 1
    assert R.rho_tian(c * F) == pytest.approx(r, rel=1e-9, abs=1e-7)


# ============================================================================ domain errors


def test_domain_errors():
    F = _features(10, 12)
    for bad_eta in (0.0, -1e-3, float("nan"), float("inf")):
        with pytest.raises(DomainError, match="eta"):
            R.feature_gram_inverse(F, bad_eta)
    with pytest.raises(DomainError, match="eta must be > 0; B is undefined"):
        R.leave_two_out_residual(F, 0.0, 0, 1)
    with pytest.raises(DomainError, match="2-D"):
        R.feature_gram_inverse(np.ones(5), 0.1)
    with pytest.raises(DomainError, match="finite"):
        R.feature_gram_inverse(np.where(np.eye(10, 12) > 0, np.nan, F), 0.1)
    with pytest.raises(DomainError, match="method"):
        R.feature_gram_inverse(F, 0.1, "inv")
    with pytest.raises(DomainError, match="differ"):
        R.leave_two_out_residual(F, 0.1, 3, 3)
    with pytest.raises(DomainError, match=r"\[0, 12\)"):
        R.full_projector_residual(F, 0.1, 0, 12)
    with pytest.raises(DomainError, match="k must"):
        R.top_similar_pairs(F, 67)
    with pytest.raises(DomainError, match="k must"):
        R.sign_match_fraction(F, 0.1, 0)
    with pytest.raises(DomainError, match="residual"):
        R.sign_match_fraction(F, 0.1, 5, "approx")
    D = np.ones((10, 4))
    with pytest.raises(DomainError, match="window must be <="):
        R.rolling_gram_eigenvalues(D, 20)
    with pytest.raises(DomainError, match="window"):
        R.rolling_gram_eigenvalues(D, 1)
    with pytest.raises(DomainError, match="k must"):
        R.rolling_gram_eigenvalues(D, 5, 6)
    with pytest.raises(DomainError, match="k must"):
        R.rolling_gram_eigenvalues(D, 5, 0)
    with pytest.raises(DomainError, match="2-D"):
        R.rolling_gram_eigenvalues(np.ones(10), 5)
    Dn = D.copy()
    Dn[3, 1] = np.inf
    with pytest.raises(DomainError, match="finite"):
        R.rolling_gram_eigenvalues(Dn, 5)
    g = np.ones(50)
    with pytest.raises(DomainError, match="lag"):
        R.slope_detector(g, lag=0)
    with pytest.raises(DomainError, match="lag must be <"):
        R.slope_detector(g, lag=50)
    with pytest.raises(DomainError, match="t_min"):
        R.slope_detector(g, lag=5, t_min=-1)
    with pytest.raises(DomainError, match="floor"):
        R.slope_detector(g, lag=5, floor=0.0)
    with pytest.raises(DomainError, match="finite or NaN"):
        R.slope_detector(np.r_[g, np.inf], lag=5)
    with pytest.raises(DomainError, match="window"):
        R.late_stage_separation(np.ones(300), np.ones(300), (200, 400))
    with pytest.raises(DomainError, match="window"):
        R.late_median_gap(np.ones(500), (300, 200))
    with pytest.raises(DomainError, match="rows"):
        R.rho_tian(np.ones((1, 5)))
    with pytest.raises(DomainError, match="all zero"):
        R.rho_tian(np.zeros((4, 5)))
    with pytest.raises(DomainError, match="variant"):
        R.rho_tian(F, "centred")


def test_domain_errors_model():
    with pytest.raises(DomainError, match="M"):
        R.one_hot_pairs([0], [0], 1)
    with pytest.raises(DomainError, match=r"a must be in \[0, 5\)"):
        R.one_hot_pairs([5], [0], 5)
    with pytest.raises(DomainError, match="same length"):
        R.one_hot_pairs([0, 1], [0], 5)
    X = R.one_hot_pairs([0, 1], [2, 3], 5)
    with pytest.raises(DomainError, match="columns"):
        R.tian_forward(np.ones((9, 4)), np.ones((4, 5)), X)
    with pytest.raises(DomainError, match="Vout must be"):
        R.tian_forward(np.ones((10, 4)), np.ones((3, 5)), X)
    with pytest.raises(DomainError, match="activation"):
        R.tian_forward(np.ones((10, 4)), np.ones((4, 5)), X, "tanh")
    with pytest.raises(DomainError, match="y must be in"):
        R.tian_mse_loss(np.ones((2, 5)), [0, 5], 5)
    with pytest.raises(DomainError, match="shape"):
        R.tian_mse_loss(np.ones((2, 4)), [0, 1], 5)
    with pytest.raises(DomainError, match="form"):
        R.tian_mse_loss(np.ones((2, 5)), [0, 1], 5, "half")
    with pytest.raises(DomainError, match="n_train"):
        R.tian_setup(M=5, n_train=25)
    with pytest.raises(DomainError, match="eta"):
        R.tian_setup(eta=-1e-4)
    with pytest.raises(DomainError, match="lr"):
        R.tian_setup(lr=0.0)
    with pytest.raises(DomainError, match="step"):
        R.adam_l2_update([1.0], [1.0], [0.0], [0.0], 0)
    with pytest.raises(DomainError, match="eta"):
        R.fit_power_law([1e-4, -1e-4], [1, 2])
    with pytest.raises(DomainError, match="distinct"):
        R.fit_power_law([1e-4, 1e-4], [1, 2])
    with pytest.raises(DomainError, match="length"):
        R.fit_power_law([1e-4], [1])


def test_extreme_arguments_former_known_records():
    """Issue 15: eta below the Gram's rounding is a DomainError naming eta; Adam's overflow a ResultOverflow."""
    import grokclocks.repulsion as RP
    from grokclocks._validate import ResultOverflow

    with pytest.raises(DomainError, match="eta = 5e-324 is below the rounding level"):
        RP.feature_gram_inverse([[1.0, -1.0], [-1.0, 1.0]], 5e-324)  # rank 1: the Gram + eta I is singular in floats
    with pytest.raises(DomainError, match="eta"):
        RP.feature_gram_inverse_paper_eq4([[1.0, -1.0], [-1.0, 1.0]], 5e-324)
    B = RP.feature_gram_inverse_paper_eq4([[0.5], [-0.5]], 1e300)  # / eta / eta: no OverflowError
    assert np.all(np.isfinite(B)) and B[0, 0] == pytest.approx(1e-300, rel=1e-12)
    with pytest.raises(ResultOverflow, match="v exceeds"):  # g^2 = 5.8e598
        RP.adam_l2_update([0.24], [0.43], [-0.57], [0.17], 1, lr=1e300, eta=1e300, b1=2.2e-308, b2=1e-300, eps=1e300)
    st = RP.adam_l2_update([0.24], [0.43], [-0.57], [0.17], 1, lr=1.0, b1=2.2e-308, b2=0.0, eps=1e300)
    # b1 = 2.2e-308: 1 - b1 = 1 (was a math domain error); step lr m / (|g| + eps) = 0.43 / 1e300
    assert st.param[0] == pytest.approx(0.24 - 0.43 / (0.43 + 1e300), rel=1e-15) and st.m[0] == pytest.approx(0.43)


@pytest.mark.parametrize("func", [R.leave_two_out_residual, R.full_projector_residual, R.sign_rule_terms])
def test_pair_indices_that_do_not_broadcast_raise_domain_error(func):
    # j of shape (3,) against l of shape (2,) reached NumPy's bare "shape mismatch" ValueError
    F = np.random.default_rng(3).normal(size=(8, 6))
    F -= F.mean(axis=0)
    with pytest.raises(DomainError, match=r"j, l must broadcast against each other \(got shapes j \(3,\), l \(2,\)\)"):
        func(F, 0.1, np.array([0, 1, 2]), np.array([3, 4]))
    func(F, 0.1, np.array([[0], [1], [2]]), np.array([3, 4]))  # (3, 1) with (2,) broadcasts
