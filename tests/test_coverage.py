"""grokclocks.coverage (spec ``uniformity``) against brute force, closed forms, the spec's tables and the authors' code.

References are independent: distances and ceilings by explicit O(p^4) enumeration of all pairs,
E[uncovered] by enumerating every training set, designs by transcribing ``gen_train_test`` of the
authors' scripts (lists of tuples, ``random.seed``/``random.shuffle``), MED by transcribing
``calculate_embedding_diff``.
"""

from __future__ import annotations

import importlib
import itertools
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grokclocks import DomainError

# ``grokclocks.coverage`` as an attribute of the package is the re-exported citations.coverage()
# function (name clash); import the module itself.
C = importlib.import_module("grokclocks.coverage")

OPS = ("add", "sub", "mul", "sq_sum", "xy", "sq_of_sum")


# ============================================================================ brute-force references


def _dist(a, b, a2, b2, p, metric):
    da, db = abs(a - a2), abs(b - b2)
    if metric == "torus":
        da, db = min(da, p - da), min(db, p - db)
    return da + db


def _brute_dist_to_set(mask, metric):
    p = mask.shape[0]
    pts = list(zip(*np.nonzero(mask)))
    out = np.full((p, p), np.inf)
    for a in range(p):
        for b in range(p):
            for (a2, b2) in pts:
                out[a, b] = min(out[a, b], _dist(a, b, a2, b2, p, metric))
    return out


def _brute_delta(mask, lab, metric):
    p = mask.shape[0]
    pts = list(zip(*np.nonzero(mask)))
    out = np.full((p, p), np.inf)
    for a in range(p):
        for b in range(p):
            for (a2, b2) in pts:
                if lab[a2, b2] == lab[a, b]:
                    out[a, b] = min(out[a, b], _dist(a, b, a2, b2, p, metric))
    return out


def _random_mask(rng, p, frac):
    return rng.random((p, p)) < frac


# ============================================================================ §0, §1 task and classes


def test_label_table_small_exact():
    lab = C.label_table(5, "add")
    assert lab.dtype == np.int64 and lab.shape == (5, 5)
    assert lab[2, 4] == 1 and lab[0, 0] == 0 and lab[4, 4] == 3
    assert C.label_table(5, "sub")[1, 3] == 3  # (1 - 3) mod 5
    assert C.label_table(7, "mul")[3, 5] == 1
    assert C.label_table(7, "sq_sum")[2, 3] == (4 + 9) % 7
    assert C.label_table(7, "xy")[2, 3] == (4 + 6 + 9) % 7
    assert C.label_table(7, "sq_of_sum")[2, 3] == 25 % 7
    for op in OPS:
        lab = C.label_table(11, op)
        assert lab.min() >= 0 and lab.max() < 11
    f = lambda a, b: a ** 3 + 2 * b  # noqa: E731
    assert np.array_equal(C.label_table(11, f), np.mod(np.arange(11)[:, None] ** 3 + 2 * np.arange(11), 11))


def test_label_table_large_p_no_overflow():
    p = 2_147_483_647  # a^2 ~ 4.6e18 < 9.2e18: still exact in int64 for the closed ops
    a = np.array([p - 1])
    assert int(np.mod(a * a, p)[0]) == 1
    assert C._is_prime(p)


def test_xy_vs_sq_of_sum_differ():
    for p in (5, 7, 11, 97):
        xy, sq = C.label_table(p, "xy"), C.label_table(p, "sq_of_sum")
        assert np.count_nonzero(xy != sq) > 0
        a, b = np.meshgrid(np.arange(p), np.arange(p), indexing="ij")
        assert np.array_equal(xy == sq, (a * b) % p == 0)  # they differ exactly where ab != 0 mod p


def test_code_labels_shift():
    p = 97
    cl = C.code_labels(p, "add", d=60)
    a, b = np.meshgrid(np.arange(p), np.arange(p), indexing="ij")
    assert np.array_equal(cl, (a + b + 60) % p)
    assert not np.array_equal(cl, C.label_table(p, "add"))
    assert np.array_equal(C.code_labels(p, "add", 0), C.label_table(p, "add"))


@pytest.mark.parametrize("p", [5, 7, 11, 13, 97])
def test_class_sizes_closed_forms(p):
    assert np.all(C.class_sizes(p, "add") == p) and np.all(C.class_sizes(p, "sub") == p)
    mul = C.class_sizes(p, "mul")
    assert mul[0] == 2 * p - 1 and np.all(mul[1:] == p - 1)
    eps = 1 if p % 4 == 1 else -1
    sq = C.class_sizes(p, "sq_sum")
    assert sq[0] == p + (p - 1) * eps and np.all(sq[1:] == p - eps)
    for op in OPS:
        assert C.class_sizes(p, op).sum() == p * p


def test_equivalence_classes_structure():
    p = 7
    cls = C.equivalence_classes(p, "mul")
    lab = C.label_table(p, "mul")
    assert len(cls) == p
    for r, pts in enumerate(cls):
        assert pts.shape[1] == 2
        assert np.all(lab[pts[:, 0], pts[:, 1]] == r)
        keys = [tuple(x) for x in pts]
        assert keys == sorted(keys)
    assert sum(len(c) for c in cls) == p * p
    # a non-surjective user function: empty classes
    cls0 = C.equivalence_classes(5, lambda a, b: 0 * a + 0 * b)
    assert cls0[0].shape == (25, 2) and all(c.shape == (0, 2) for c in cls0[1:])


def test_task_domain_errors():
    with pytest.raises(DomainError, match="prime"):
        C.label_table(9)
    with pytest.raises(DomainError):
        C.label_table(1)
    with pytest.raises(DomainError, match="op"):
        C.label_table(7, "div")
    with pytest.raises(DomainError):
        C.label_table(7, lambda a, b: np.zeros((3, 3)))
    with pytest.raises(DomainError, match="integer"):
        C.label_table(7, lambda a, b: a + b + 0.5)


# ============================================================================ §2, §3 norm lemmas


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.integers(1, 30), st.integers(0, 10_000))
def test_operator_norm_sandwich(m, k, seed):
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1e3, 1e3, (m, k)) * (rng.random((m, k)) < 0.7)
    if not np.any(A):
        A[0, 0] = 1.0
    op, fro, rank, up = C.operator_norm_bounds(A)
    slack = -1e-12 * fro
    assert fro - op >= slack and up - fro >= slack
    assert rank == np.linalg.matrix_rank(A)


def test_operator_norm_equality_cases():
    rng = np.random.default_rng(0)
    u, v = rng.normal(size=6), rng.normal(size=4)
    op, fro, rank, up = C.operator_norm_bounds(np.outer(u, v))
    assert rank == 1 and abs(op - fro) <= 1e-12 * fro
    Q, _ = np.linalg.qr(rng.normal(size=(8, 3)))
    op, fro, rank, up = C.operator_norm_bounds(2.5 * Q)
    assert rank == 3 and abs(up - fro) <= 1e-12 * fro
    with pytest.raises(DomainError):
        C.operator_norm_bounds(np.ones(3))
    with pytest.raises(DomainError):
        C.operator_norm_bounds([[np.nan]])


def test_lemma_b1_construction():
    rng = np.random.default_rng(1)
    c, u = rng.normal(size=3), rng.normal(size=5)
    L = C.rank1_min_norm_map(c, u)
    assert np.allclose(L @ (2 * u), c, atol=1e-12, rtol=0)
    R = np.linalg.norm(u)
    assert abs(np.linalg.norm(L, 2) - np.linalg.norm(c) / (2 * R)) < 1e-12
    assert C.min_opnorm_single_class(np.linalg.norm(c), R) == pytest.approx(np.linalg.norm(c) / (2 * R), rel=1e-15)


def test_lemma_b1_lower_bound_random_embeddings():
    """Least-Frobenius solutions l = C X^+ of the class constraints never beat |c|/(2R)."""
    rng = np.random.default_rng(2)
    p, dU, dV, R, r = 7, 5, 3, 1.7, 3
    c = rng.normal(size=dV)
    bound = np.linalg.norm(c) / (2 * R)
    n_feasible = 0
    for _ in range(200):
        phi = rng.normal(size=(p, dU))
        phi *= (R * rng.random(p) ** (1 / dU) / np.linalg.norm(phi, axis=1))[:, None]
        X = np.stack([phi[i] + phi[(r - i) % p] for i in range(p)], axis=1)
        Cm = np.repeat(c[:, None], p, axis=1)
        L = Cm @ np.linalg.pinv(X)
        if np.allclose(L @ X, Cm, atol=1e-9):
            n_feasible += 1
            assert np.linalg.norm(L, 2) >= bound - 1e-12
    assert n_feasible > 100  # p = 7 sums span at most 4 dims of R^5: generically feasible


def test_lemma_b1_errors():
    with pytest.raises(DomainError):
        C.rank1_min_norm_map([0.0, 0.0], [1.0])
    with pytest.raises(DomainError):
        C.rank1_min_norm_map([1.0], [0.0, 0.0])
    with pytest.raises(DomainError):
        C.min_opnorm_single_class(1.0, 0.0)
    with pytest.raises(DomainError):
        C.min_opnorm_single_class(-1.0, 1.0)


def test_class_target_residuals():
    out = np.array([[3.0, 0, 0], [2.0, 0, 0], [0, 5.0, 0], [0, 4.0, 1.0]])
    classes, eps, cone = C.class_target_residuals(out, np.array([0, 0, 1, 1]))
    assert list(classes) == [0, 1]
    assert eps[0] == pytest.approx(0.5) and eps[1] == pytest.approx(math.sqrt(0.5))
    assert np.allclose(cone, [1.0, 1.0])


# ============================================================================ §5 distances and ceilings


def test_manhattan_distance():
    x = np.array([[0, 0], [1, 9]])
    y = np.array([[9, 9], [1, 1]])
    assert list(C.manhattan_distance(x, y, 10, "torus")) == [2, 2]
    assert list(C.manhattan_distance(x, y, metric="grid")) == [18, 8]
    assert C.manhattan_distance([0, 0], [3, 4], metric="grid") == 7
    with pytest.raises(DomainError, match="p must be given"):
        C.manhattan_distance(x, y)
    with pytest.raises(DomainError, match="metric"):
        C.manhattan_distance(x, y, 10, "chebyshev")


@pytest.mark.parametrize("metric", ["torus", "grid"])
def test_distance_to_set_vs_brute_force(metric):
    rng = np.random.default_rng(3)
    for p in (2, 3, 5, 8, 12):
        for frac in (0.05, 0.2, 0.6):
            m = _random_mask(rng, p, frac)
            assert np.array_equal(C.distance_to_set(m, metric), _brute_dist_to_set(m, metric))
    assert np.all(np.isinf(C.distance_to_set(np.zeros((4, 4), bool), metric)))  # cdt would give -1


@pytest.mark.parametrize("metric", ["torus", "grid"])
@pytest.mark.parametrize("op", OPS)
def test_same_label_distance_vs_brute_force(op, metric):
    rng = np.random.default_rng(hash((op, metric)) % 2**32)
    for p in (3, 5, 7, 11):
        lab = C.label_table(p, op)
        for frac in (0.1, 0.4):
            m = _random_mask(rng, p, frac)
            assert np.array_equal(C.same_label_distance(m, lab, metric), _brute_delta(m, lab, metric))


def test_ceiling_vs_brute_force_and_curve():
    rng = np.random.default_rng(4)
    for p in (5, 7, 11):
        lab = C.label_table(p, "add")
        for metric in ("torus", "grid"):
            m = _random_mask(rng, p, 0.3)
            delta = _brute_delta(m, lab, metric)[~m]
            curve = C.accuracy_ceiling_curve(m, lab, 2 * p, metric)
            for n in range(1, 2 * p + 1):
                ref = np.count_nonzero(delta < n) / delta.size
                assert C.accuracy_ceiling(m, lab, n, metric) == ref == curve[n - 1]


def test_parity_torus_only_and_spec_counterexample():
    """add: Delta even on the torus; on the grid odd distances >= p occur (spec correction)."""
    lab = C.label_table(3, "add")
    m = np.zeros((3, 3), bool)
    m[0, 0] = m[1, 1] = True
    assert C.same_label_distance(m, lab, "grid")[1, 2] == 3
    assert C.same_label_distance(m, lab, "torus")[1, 2] == 2
    rng = np.random.default_rng(5)
    odd_grid = 0
    for _ in range(60):
        p = int(rng.choice([3, 5, 7, 11]))
        for op in ("add", "sub"):
            lab = C.label_table(p, op)
            mk = _random_mask(rng, p, rng.uniform(0.05, 0.5))
            dt = C.same_label_distance(mk, lab, "torus")
            assert np.all(dt[np.isfinite(dt)] % 2 == 0)
            dg = C.same_label_distance(mk, lab, "grid")
            fin = dg[np.isfinite(dg)]
            odd_grid += np.count_nonzero(fin % 2 == 1)
            assert np.all(fin[fin % 2 == 1] >= p)
            cur = C.accuracy_ceiling_curve(mk, lab, 2 * p, "torus", test_mask=np.ones((p, p), bool))
            assert np.array_equal(cur[1::2], cur[0::2])  # Ceil(2m) = Ceil(2m - 1)
    assert odd_grid > 0


@st.composite
def _split(draw):
    p = draw(st.sampled_from([2, 3, 5, 7, 11, 13]))
    seed = draw(st.integers(0, 2**31))
    frac = draw(st.floats(0.0, 0.9))
    rng = np.random.default_rng(seed)
    m = rng.random((p, p)) < frac
    if m.all():
        m[0, 0] = False
    op = draw(st.sampled_from(OPS))
    return p, m, op


@settings(max_examples=60, deadline=None)
@given(_split())
def test_ceiling_properties(split):
    p, m, op = split
    lab = C.label_table(p, op)
    tor = C.accuracy_ceiling_curve(m, lab, 2 * p + 2, "torus")
    grd = C.accuracy_ceiling_curve(m, lab, 2 * p + 2, "grid")
    assert np.all(np.diff(tor) >= 0) and np.all(np.diff(grd) >= 0)  # non-decreasing in n
    assert np.all(tor >= grd)  # torus >= grid pointwise
    assert tor[0] == 0.0  # Ceil(1) = 0 when S and T are disjoint
    occ = np.isin(lab[~m], lab[m]).mean() if m.any() else 0.0
    assert C.accuracy_ceiling(m, lab, math.inf, "torus") == occ == C.accuracy_ceiling(m, lab, math.inf, "grid")
    assert tor[-1] == occ and grd[-1] == occ  # every finite distance is < 2p
    for acc in (0.0, 0.3, occ, min(1.0, occ + 0.01)):
        n = C.implied_radius(m, lab, acc, "torus")
        if acc > occ:
            assert n is None
        else:
            assert C.accuracy_ceiling(m, lab, n, "torus") >= acc
            assert n == 1 or C.accuracy_ceiling(m, lab, n - 1, "torus") < acc


def test_coverage_fraction_vs_brute():
    rng = np.random.default_rng(6)
    p = 9
    m = _random_mask(rng, p, 0.1)
    for metric in ("torus", "grid"):
        d = _brute_dist_to_set(m, metric)
        for n in (1, 2, 4, 20):
            assert C.coverage_fraction(m, n, metric) == np.count_nonzero(d < n) / p**2
            assert C.coverage_fraction(m, n, metric, over="test") == np.count_nonzero(d[~m] < n) / np.count_nonzero(~m)
    assert C.coverage_fraction(np.zeros((4, 4), bool), 3) == 0.0


def test_empty_train_set_allowed():
    lab = C.label_table(5)
    m = np.zeros((5, 5), bool)
    assert C.accuracy_ceiling(m, lab, math.inf) == 0.0
    assert np.all(np.isinf(C.same_label_distance(m, lab)))
    assert C.implied_radius(m, lab, 0.1) is None


def test_token_factor_strip():
    p = 97
    tr, te = C.strip_design(p, 40)
    lab = C.label_table(p)
    sa, sb = C.token_seen(tr, 60)
    assert not sa[:41].any() and sa[41:].all() and sb.all()
    sa0, sb0 = C.token_seen(tr, 0)
    assert sa0.all() and sb0.all()
    non_strip_share = np.count_nonzero(te[41:]) / te.sum()
    assert C.accuracy_ceiling(tr, lab, math.inf, b_offset=60) == pytest.approx(non_strip_share, abs=0)
    assert round(100 * non_strip_share, 1) == 39.6  # spec §5
    assert C.accuracy_ceiling(tr, lab, math.inf, b_offset=0) == 1.0
    # shared ids: with b_offset = d the ids d..p-1 serve both operands
    m = np.zeros((5, 5), bool)
    m[0, 0] = True  # ids 0 (first) and 0 + 2 (second)
    sa, sb = C.token_seen(m, 2)
    assert list(sa) == [1, 0, 1, 0, 0] and list(sb) == [1, 0, 0, 0, 0]


def test_ceiling_domain_errors():
    lab = C.label_table(5)
    m = np.zeros((5, 5), bool)
    m[0, 0] = True
    # one mask convention (grokclocks.task.as_mask): 0/1 ints, flat (p*p,) and pair indices are the same set
    for same in (m.astype(int), m.reshape(-1), np.flatnonzero(m), np.argwhere(m)):
        assert C.accuracy_ceiling(same, lab, 2) == C.accuracy_ceiling(m, lab, 2)
    with pytest.raises(DomainError, match="boolean mask or integer pair indices"):
        C.accuracy_ceiling(m * 0.5, lab, 2)
    with pytest.raises(DomainError, match="outside"):
        C.accuracy_ceiling([0, 25], lab, 2)
    with pytest.raises(DomainError, match="shape"):
        C.accuracy_ceiling(np.zeros((5, 4), bool), lab, 2)
    with pytest.raises(DomainError, match="labels"):
        C.accuracy_ceiling(m, lab[:4], 2)
    for bad_n in (0, -1, 1.5, "3", -math.inf):
        with pytest.raises(DomainError, match="n must"):
            C.accuracy_ceiling(m, lab, bad_n)
    with pytest.raises(DomainError, match="metric"):
        C.accuracy_ceiling(m, lab, 2, metric="euclid")
    with pytest.raises(DomainError, match="no test points"):
        C.accuracy_ceiling(np.ones((5, 5), bool), lab, 2)
    with pytest.raises(DomainError, match="no test points"):
        C.accuracy_ceiling(m, lab, 2, test_mask=np.zeros((5, 5), bool))
    with pytest.raises(DomainError, match="accuracy"):
        C.implied_radius(m, lab, 1.5)
    with pytest.raises(DomainError):
        C.accuracy_ceiling_curve(m, lab, 0)
    with pytest.raises(DomainError, match="over"):
        C.coverage_fraction(m, 2, over="train")
    # a test_mask with over="all" was ignored, even a (6, 7) one beside p = 7 (0.2449 returned)
    with pytest.raises(DomainError, match="test_mask is read only with over='test'"):
        C.coverage_fraction(m, 2, over="all", test_mask=np.zeros((6, 7), bool))


def test_table1_ceilings_spec_values():
    """Spec §8 table: torus ceilings at n = 5/11/21/31/49 (percent, to 0.05 points) and the implied radii (exact)."""
    spec = {("square", 30): ([69.8, 88.6, 95.8, 99.0, 100.0], 33), ("square", 50): ([56.4, 71.0, 82.9, 91.5, 99.5], 17),
            ("strip", 67): ([5.9, 14.7, 29.4, 44.1, 70.6], 7), ("strip", 40): ([41.2, 51.4, 66.1, 80.9, 100.0], 39)}
    for row in C.table1_ceilings():
        key = (row["design"], row["k"])
        if key in spec:
            assert np.allclose(100 * np.asarray(row["ceilings"]), spec[key][0], atol=0.05 + 1e-9)
            assert row["implied_radius"] == spec[key][1]


# ============================================================================ §10 Theorem 3.12


def test_ball_sizes():
    for n in range(1, 8):
        ref = sum(1 for z1 in range(-n, n + 1) for z2 in range(-n, n + 1) if abs(z1) + abs(z2) < n)
        assert C.ball_size(n) == ref
    for p in (2, 3, 5, 7, 10):
        for n in range(1, p + 3):
            ref = sum(1 for a in range(p) for b in range(p) if _dist(0, 0, a, b, p, "torus") < n)
            assert C.ball_size_torus(p, n) == ref
            if n <= (p + 1) / 2:
                assert ref == C.ball_size(n)
    for p in (4, 7):
        for n in (1, 2, 3, 6):
            s = C.coverer_counts(p, n, "grid")
            for a in range(p):
                for b in range(p):
                    assert s[a, b] == sum(1 for x in range(p) for y in range(p) if _dist(a, b, x, y, p, "grid") < n)
            if n <= p:
                assert s[0, 0] == n * (n + 1) // 2


@pytest.mark.parametrize("metric", ["torus", "grid"])
def test_expected_uncovered_vs_enumeration(metric):
    """All C(9, m) training sets of p = 3, m <= 4: exact to 1e-12."""
    p = 3
    cells = [(a, b) for a in range(p) for b in range(p)]
    for n in (1, 2, 3):
        for m in range(0, 5):
            tot, cnt = 0, 0
            for S in itertools.combinations(cells, m):
                mk = np.zeros((p, p), bool)
                for c in S:
                    mk[c] = True
                tot += np.count_nonzero(~(_brute_dist_to_set(mk, metric) < n))
                cnt += 1
            assert abs(C.expected_uncovered(p, n, m, metric) - tot / cnt) < 1e-12


def test_expected_uncovered_spec_table():
    """Spec §10 table: r_paper, exact minimal r and E[U] at r_paper, torus and grid (4 significant digits / 3 decimals)."""
    rows = [(31, 3, 13, 0.5283, 0.4079, 0.050, 0.4516, 0.232), (31, 5, 41, 0.1675, 0.1519, 0.437, 0.1946, 2.346),
            (97, 4, 25, 0.3660, 0.3062, 0.104, 0.3368, 0.443), (97, 5, 41, 0.2232, 0.1996, 0.292, 0.2298, 1.264),
            (97, 8, 113, 0.0810, 0.0774, 0.635, 0.0991, 3.818)]
    for p, n, Cn, rp, rt, ut, rg, ug in rows:
        assert C.ball_size(n) == Cn
        r = C.required_train_fraction(p, n)
        assert round(r, 4) == rp
        m = math.ceil(r * p * p)
        assert round(C.required_train_fraction(p, n, "torus_exact"), 4) == rt
        assert round(C.required_train_fraction(p, n, "grid_exact"), 4) == rg
        assert round(C.expected_uncovered(p, n, m, "torus"), 3) == ut
        assert round(C.expected_uncovered(p, n, m, "grid"), 3) == ug
        # the paper's r is sufficient on the torus (E[U] < 1) and an upper bound holds there
        assert C.expected_uncovered(p, n, m, "torus") <= C.expected_uncovered_paper(p, n, m) < 1
    assert C.expected_uncovered(97, 5, 2100, "grid") > 1  # erratum uniformity-2
    assert round(C.expected_uncovered_paper(97, 5, 2100), 3) == 0.979
    assert C.required_train_fraction(97, 2) > 1  # vacuous for n <= 2
    # no-log form: the exact threshold of the with-replacement expression, below ln(p^2)/C (-ln(1-x) > x)
    r_nl = C.required_train_fraction(97, 5, "paper_nolog")
    assert r_nl < C.required_train_fraction(97, 5)
    assert C.expected_uncovered_paper(97, 5, math.ceil(r_nl * 97**2)) < 1 <= C.expected_uncovered_paper(97, 5, math.floor(r_nl * 97**2))
    assert C.full_coverage_probability_lower_bound(97, 5, 2100) == pytest.approx(1 - 0.2917, abs=5e-4)


def test_thm312_domain_errors():
    with pytest.raises(DomainError):
        C.expected_uncovered(5, 0, 3)
    with pytest.raises(DomainError):
        C.expected_uncovered(5, 2, 26)
    with pytest.raises(DomainError):
        C.expected_uncovered(1, 2, 0)
    with pytest.raises(DomainError, match="method"):
        C.required_train_fraction(5, 2, "exact")
    with pytest.raises(DomainError, match="metric"):
        C.expected_uncovered(5, 2, 3, "hex")


# ============================================================================ §7 designs


def _code_split(p, k, design, frac=0.3, seed=0, d=0):
    """Transcription of gen_train_test (transformer/rec.py, str.py)."""
    d_vocab = p + 1 + d
    pairs = [(i, j + d, d_vocab - 1) for i in range(p) for j in range(p)]
    if design == "square":
        test_pairs = [(i, j + d, d_vocab - 1) for i in range(k + 1) for j in range(k + 1)]
    else:
        test_pairs = [(i, j + d, d_vocab - 1) for i in range(k + 1) for j in range(p)]
    held = set(test_pairs)
    remaining = [x for x in pairs if x not in held]
    random.seed(seed)
    random.shuffle(remaining)
    train_size = int(frac * len(pairs))
    train = remaining[:train_size]
    test_pairs.extend(remaining[train_size:])
    return train, test_pairs


@pytest.mark.parametrize("design,k", [("square", 30), ("square", 55), ("strip", 40), ("strip", 67)])
def test_designs_match_code_transcription(design, k):
    p = 97
    train, test = _code_split(p, k, design, d=60 if design == "strip" else 0)
    d = 60 if design == "strip" else 0
    ref_tr = np.zeros((p, p), bool)
    for i, j, _ in train:
        ref_tr[i, j - d] = True
    with pytest.warns(UserWarning) if (design, k) == ("strip", 67) else _nullctx():
        tr, te = C.designed_split(p, design, k)
    assert np.array_equal(tr, ref_tr)
    assert np.array_equal(te, ~tr) and te.sum() == len(test)


class _nullctx:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_design_sizes():
    p = 97
    for k in (30, 45, 60):
        tr, te = C.square_design(p, k)
        assert tr.sum() == 2822 and te.sum() == 6587 and not tr[:k + 1, :k + 1].any()
    for k in (40, 50, 60):
        tr, te = C.strip_design(p, k)
        assert tr.sum() == 2822 and te.sum() == 6587 and not tr[:k + 1].any()
    with pytest.warns(UserWarning, match="smaller"):
        tr, te = C.strip_design(p, 67)
    assert tr.sum() == 2813 and te.sum() == 6596 and np.array_equal(te, np.arange(p)[:, None] <= 67 | np.zeros((p, p), bool))


def test_random_design_and_numpy_shuffle():
    p = 97
    tr, te = C.random_design(p, 0.3)
    pairs = [(i, j) for i in range(p) for j in range(p)]
    random.seed(0)
    random.shuffle(pairs)
    ref = np.zeros((p, p), bool)
    for i, j in pairs[:int(0.3 * p * p)]:
        ref[i, j] = True
    assert np.array_equal(tr, ref)
    trn, _ = C.square_design(p, 30, shuffle="numpy", seed=3)
    assert trn.sum() == 2822 and not trn[:31, :31].any()
    assert not np.array_equal(trn, C.square_design(p, 30)[0])


def test_design_errors():
    with pytest.raises(DomainError, match="k must"):
        C.square_design(7, 7)
    with pytest.raises(DomainError, match="frac"):
        C.strip_design(7, 2, frac=0.0)
    with pytest.raises(DomainError, match="frac"):
        C.random_design(7, 1.5)
    with pytest.raises(DomainError):
        C.square_design(1, 0)
    with pytest.raises(DomainError, match="shuffle"):
        C.square_design(7, 2, shuffle="torch")
    with pytest.raises(DomainError, match="k must be given"):
        C.designed_split(7, "square")
    with pytest.raises(DomainError, match="design"):
        C.designed_split(7, "circle", 2)


# ============================================================================ §6 progress measures and MED


def _pm_brute(v, y):
    u = np.unique(v)
    taus = [-np.inf] + list((u[:-1] + u[1:]) / 2) + [np.inf]
    best = None
    for tau in taus:
        for di, d in enumerate((">=", "<=")):
            h = v >= tau if d == ">=" else v <= tau
            a = np.mean(h == y)
            key = (-a, tau, di)
            if best is None or key < best[0]:
                best = (key, (float(tau), d, float(a)))
    return best[1]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=2, max_size=30), st.integers(0, 2**31))
def test_progress_measure_fit_vs_brute(vals, seed):
    v = np.array(vals, dtype=float)
    y = np.random.default_rng(seed).random(v.size) < 0.5
    assert C.progress_measure_fit(v, y) == _pm_brute(v, y.astype(bool))


def test_progress_measure_fit_exact_cases():
    v = np.array([3.0, 2.0, 1.0, 0.5, 0.2])
    assert C.progress_measure_fit(v, [0, 0, 0, 1, 1]) == (0.75, "<=", 1.0)
    assert C.progress_measure_fit(v, [1, 1, 0, 0, 0]) == (1.5, ">=", 1.0)
    with pytest.raises(DomainError):
        C.progress_measure_fit([1.0], [1])
    with pytest.raises(DomainError):
        C.progress_measure_fit([1.0, 2.0], [1, 2])
    with pytest.raises(DomainError):
        C.progress_measure_fit([1.0, np.nan], [1, 0])
    with pytest.raises(DomainError):
        C.progress_measure_fit([1.0, 2.0, 3.0], [1, 0])


def _code_emb_diff(W, a, b, c, d, script):
    """Transcription of calculate_embedding_diff (numpy in place of torch)."""
    diffs1 = np.linalg.norm(W[:, a + 1:b] - W[:, a:b - 1], axis=0)
    diffs2 = np.linalg.norm(W[:, c + 1:d] - W[:, c:d - 1], axis=0)
    if script == "base":
        return (diffs1.mean() + diffs2.mean()) / 2
    if script == "rec":
        return (b - a) * diffs1.mean() + (d - c) * diffs2.mean()
    return diffs1.mean() + diffs2.mean()


@pytest.mark.parametrize("d", [0, 60])
def test_med_variants_code_formulas(d):
    p = 97
    rng = np.random.default_rng(7)
    W = rng.normal(size=(128, p + d + 1)) / math.sqrt(128)
    for script in ("base", "rec", "str"):
        ref = _code_emb_diff(W, 0, p - 1, d, d + p - 1, script)
        got = C.main_embedding_diff(W, p, d, f"code_{script}")
        assert abs(got - ref) <= 1e-15 * max(1.0, abs(ref)) * 10
    paper = C.main_embedding_diff(W, p, d, "paper")
    blocks = [W[:, :p]] if d == 0 else [W[:, :p], W[:, d:d + p]]
    ref_paper = np.mean([np.linalg.norm(np.diff(B, axis=1), axis=0).sum() / (p - 1) for B in blocks])
    assert paper == pytest.approx(ref_paper, rel=1e-14)
    assert paper != C.main_embedding_diff(W, p, d, "code_base")
    cyc = C.main_embedding_diff(W, p, d, "cyclic")
    ref_cyc = np.mean([(np.linalg.norm(np.diff(B, axis=1), axis=0).sum() + np.linalg.norm(B[:, 0] - B[:, -1])) / p
                       for B in blocks])
    assert cyc == pytest.approx(ref_cyc, rel=1e-14)
    # row-token layout
    assert C.main_embedding_diff(W.T, p, d, "paper", token_axis=0) == paper


def test_med_variant_scalings():
    p = 11
    W = np.random.default_rng(8).normal(size=(16, p + 1))
    base = C.main_embedding_diff(W, p, 0, "code_base")
    assert C.main_embedding_diff(W, p, 0, "code_rec") == pytest.approx(2 * (p - 1) * base, rel=1e-14)
    assert C.main_embedding_diff(W, p, 0, "code_str") == pytest.approx(2 * base, rel=1e-14)
    # equally spaced embeddings: every variant sees the same step (cyclic excepted)
    E = np.outer(np.ones(4), np.arange(p + 1)) * 0.5
    assert C.main_embedding_diff(E, p, 0, "paper") == pytest.approx(1.0)
    assert C.main_embedding_diff(E, p, 0, "code_base") == pytest.approx(1.0)
    diffs = C.consecutive_embedding_diffs(E, p)
    assert diffs.shape == (1, p - 1) and np.allclose(diffs, 1.0)
    assert C.consecutive_embedding_diffs(E, p, cyclic=True).shape == (1, p)
    assert C.consecutive_embedding_diffs(E, p, b_offset=1, L=np.eye(4)[:2]).shape == (2, p - 1)


def test_med_trajectory_and_mlp_variant():
    p = 7
    rng = np.random.default_rng(9)
    Et = rng.normal(size=(5, 8, p + 3))
    for variant in C.MED_VARIANTS:
        traj = C.med_trajectory(Et, p, 2, variant)
        assert np.allclose(traj, [C.main_embedding_diff(E, p, 2, variant) for E in Et], rtol=1e-14, atol=0)
    med, fro = C.med_code_mlp(Et[0], p, 2)
    assert med == pytest.approx(C.main_embedding_diff(Et[0], p, 2, "code_base"))
    assert fro == pytest.approx(np.linalg.norm(Et[0][:, 0:p - 1] - Et[0][:, 2:2 + p - 1]))


def test_med_domain_errors():
    W = np.zeros((4, 10))
    with pytest.raises(DomainError, match="p must"):
        C.main_embedding_diff(W, 2)
    with pytest.raises(DomainError, match="tokens"):
        C.main_embedding_diff(W, 7, b_offset=4)
    with pytest.raises(DomainError, match="variant"):
        C.main_embedding_diff(W, 7, variant="torch")
    with pytest.raises(DomainError):
        C.main_embedding_diff(np.zeros(10), 7)
    with pytest.raises(DomainError):
        C.main_embedding_diff(np.full((4, 10), np.inf), 7)
    with pytest.raises(DomainError):
        C.med_trajectory(W, 7)


# ============================================================================ run analysis, setup


def test_run_analysis_helpers():
    acc = np.array([0.0, 0.1, 0.3, 0.6, 0.9, 0.8, 0.85])
    tr = np.array([0.2, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    ep = np.arange(7) * 10.0
    assert C.go_epoch(acc, ep) == 30.0 and C.go_epoch(acc, ep, 0.95) is None
    assert C.u_acc_l_acc(acc, tr) == (0.9, 0.8, 4)
    loss = np.array([5.0, 5.0, 4.0, 3.0, 1.0, 1.5, 1.2])
    med = loss * 2 + 1
    assert C.med_loss_spearman(med, loss, [(0, 7), (0, 2)]) == [pytest.approx(1.0), None]
    p = 5
    lab = C.label_table(p)
    m = np.zeros((p, p), bool)
    m[:2] = True
    res = C.analyse_run(acc, m, lab, train_acc=tr, epochs=ep, test_loss=loss, med=med)
    assert res["ceiling"] == 1.0 and res["within_ceiling"] and res["u_acc"] == 0.9 and res["go_epoch"] == 30.0
    assert res["memorised_epoch"] == 10.0 and res["grok_start_epoch"] == 20.0
    assert res["spearman_grokking"] == pytest.approx(1.0)
    res2 = C.analyse_run(acc, m, lab, b_offset=3)  # tokens 0..1 of operand 2 shifted: some pairs unseen
    assert res2["ceiling"] < 1.0 and res2["excess"] == pytest.approx(0.9 - res2["ceiling"])


def test_experimental_setup_discrepancy():
    rec, st_, base = C.experimental_setup("rec"), C.experimental_setup("str"), C.experimental_setup("base")
    assert rec["num_layers"] == 1 and rec["frac_train"] == 0.3 and rec["seed"] == 0 and rec["d"] == 0
    assert st_["d"] == 60 and st_["d_vocab"] == 170
    assert base["num_layers"] == 2 and base["frac_train"] == 0.5 and base["seed"] == 11
    a, b, eq, dv = C.token_ids(97, 60, 170)
    assert eq == 169 and b[0] == 60 and a[-1] == 96
    assert C.token_ids(97)[2:] == (97, 98)


def test_modulus_cap_is_a_domain_error_not_a_hang():
    # _is_prime(10**18 + 9) is 5e8 trial divisions; the p x p builders reject p > MAX_MODULUS first
    for f in (lambda p: C.label_table(p), lambda p: C.coverer_counts(p, 3), lambda p: C.expected_uncovered(p, 3, 10),
              lambda p: C.random_design(p, 0.3)):
        with pytest.raises(DomainError, match="MAX_MODULUS"):
            f(10 ** 18 + 9)
    assert C.coverer_counts(5, 10 ** 18, "grid")[0, 0] == 25  # a radius beyond the grid: every point (exact)


def test_required_train_fraction_exact_at_the_boundary():
    # p = 2, n = 1: E[U](m) = 4 - m, so E[U] < 1 first at m = 4 (the log-gamma form gave 0.99999... at m = 3)
    assert C.required_train_fraction(2, 1, "torus_exact") == 1.0


_PTS = np.array([[0, 0], [1, 5], [6, 2], [3, 3]])


@pytest.mark.parametrize("func, a, b, first, other, rest", [
    (C.min_opnorm_single_class, "c_norm", "R", np.array([0.5, 2.0, 7.0]), np.array([0.1, 1.0, 3.0, 1e3]), ()),
    (C.manhattan_distance, "x", "y", _PTS[:3], _PTS, (7, "torus")),
    (C.manhattan_distance, "x", "y", _PTS[:3], _PTS, (None, "grid")),
], ids=["min_opnorm_single_class", "manhattan_distance-torus", "manhattan_distance-grid"])
def test_shapes_that_do_not_broadcast_raise_domain_error(func, a, b, first, other, rest):
    # (3,) against (4,) (points: (3, 2) against (4, 2)) reached NumPy's bare "operands could not be
    # broadcast" ValueError
    tail = ", 2" if first.ndim == 2 else ","
    with pytest.raises(DomainError, match=rf"{a}, {b} must broadcast against each other "
                                          rf"\(got shapes {a} \(3{tail}\), {b} \(4{tail}\)\)"):
        func(first, other, *rest)
    # (3, 1) against (1, 4) still broadcasts, element by element equal to the scalar calls
    got = func(first[:, None], other[None, :], *rest)
    assert got.shape == (3, 4)
    np.testing.assert_array_equal(got, [[func(x, y, *rest) for y in other] for x in first])


def test_sweeps_over_p_n_and_radii_equal_the_scalar_calls():
    """The array forms (issue 31: ceilings and fractions over p and n) give each point the scalar call's value,
    bit for bit; the integer counts stay exact int64."""
    rng = np.random.default_rng(11)
    ps, ns = rng.integers(2, 40, 30), rng.integers(1, 9, 30)
    for method in ("paper", "torus_exact", "grid_exact"):
        got = C.required_train_fraction(ps, ns, method)
        assert got.shape == (30,) and got.dtype == np.float64
        assert [float(v) for v in got] == [C.required_train_fraction(int(p), int(n), method) for p, n in zip(ps, ns)]
    ok = 2 * ns * ns - 2 * ns + 1 < ps * ps
    got = C.required_train_fraction(ps[ok], ns[ok], "paper_nolog")
    assert [float(v) for v in got] == [C.required_train_fraction(int(p), int(n), "paper_nolog")
                                       for p, n in zip(ps[ok], ns[ok])]
    # beyond 2^26 the paper's quotient takes the exact rational, as the scalar call
    big = [2**26, 2**26 + 1, 10**12]
    assert list(C.required_train_fraction(97, big)) == [C.required_train_fraction(97, n) for n in big]
    grid = C.ball_size_torus(np.arange(2, 30)[:, None], np.arange(1, 70)[None, :])
    assert grid.dtype == np.int64
    assert all(int(grid[i, j]) == C.ball_size_torus(i + 2, j + 1) for i in range(28) for j in range(69))
    assert C.ball_size_torus(16384, 10**18) == 16384**2  # O(1): no p x p table
    assert C.ball_size([1, 5, 2**31 - 1]).tolist() == [C.ball_size(1), C.ball_size(5), C.ball_size(2**31 - 1)]
    with pytest.raises(DomainError, match="n must be <= 2147483647"):
        C.ball_size([2**31])
    with pytest.raises(DomainError, match="p, n must broadcast"):
        C.required_train_fraction([5, 7], [1, 2, 3])
    p = 19
    lab = C.label_table(p, "add")
    mask = rng.random((p, p)) < 0.3
    radii = np.array([1, 2, 3, 5, 40, np.inf])
    for kw in ({}, {"metric": "grid"}, {"b_offset": 0}):
        got = C.accuracy_ceiling(mask, lab, radii, **kw)
        assert list(got) == [C.accuracy_ceiling(mask, lab, r if np.isinf(r) else int(r), **kw) for r in radii]
    got = C.coverage_fraction(mask, radii.reshape(2, 3), over="test")
    assert got.shape == (2, 3)
    assert list(got.ravel()) == [C.coverage_fraction(mask, r if np.isinf(r) else int(r), over="test") for r in radii]
    with pytest.raises(DomainError, match="n must be integers >= 1 or inf"):
        C.accuracy_ceiling(mask, lab, [1, 2.5])


def test_expected_uncovered_over_moduli_equals_the_scalar_calls():
    """E[U] (exact and the paper's forms) and the Markov bound broadcast over p too: each point the value of its
    own scalar call, bit for bit; m beyond a point's own p^2 is refused with that p^2."""
    rng = np.random.default_rng(12)
    ps, ns = rng.integers(2, 40, 120), rng.integers(1, 9, 120)
    ms = (rng.random(120) * (ps * ps + 1)).astype(np.int64)
    for fn, options in ((C.expected_uncovered, ("torus", "grid")), (C.expected_uncovered_paper, ("binomial", "exp")),
                        (C.full_coverage_probability_lower_bound, ("torus", "grid"))):
        for o in options:
            got = fn(ps, ns, ms, o)
            assert got.shape == (120,)
            assert list(got) == [fn(int(p), int(n), int(m), o) for p, n, m in zip(ps, ns, ms)], (fn.__name__, o)
    got = C.expected_uncovered_paper([[97], [89]], 5, [0, 2100, 7000])
    assert got.shape == (2, 3) and got[0, 1] == C.expected_uncovered_paper(97, 5, 2100)
    with pytest.raises(DomainError, match=r"m must be in \[0, p\^2\] = \[0, 9\]"):
        C.expected_uncovered([3, 97], 5, [10, 10])
    with pytest.raises(DomainError, match="p, n, m must broadcast"):
        C.expected_uncovered_paper([97, 89], [1, 2, 3], 5)
