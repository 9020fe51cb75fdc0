"""The shortcuts of the Eyring–Kramers and coverage engines give the numbers of their general paths.

* `eyring_kramers_time` and its log / rate read the spectrum of a scalar or diagonal Hessian without
  `eigvalsh`: the same values (to rounding) as the same Hessians rotated, which take the linear-algebra path;
  the checks (degenerate, not positive definite, not one negative direction) hold on both paths.
* `expected_uncovered` reads log C(N − s, m)/C(N, m) from a prefix table kept between calls and lengthened on
  demand: a value does not depend on the calls made before it (nor on a cache too small to keep anything).
* `expected_uncovered_paper(form="exp")` keeps its accuracy where e^(−mC/p²) is subnormal but p²·e^(−mC/p²) is
  a normal double (it lost up to 9.4e-13 there).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import grokclocks.coverage as CO
import grokclocks.kramers as KR
from grokclocks._validate import DomainError
from grokclocks.coverage import _coverage_bound as CB


def _rotation(d: int, seed: int) -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, d)))
    return q


@pytest.mark.parametrize("f", [KR.log_eyring_kramers_time, KR.eyring_kramers_time, KR.eyring_kramers_rate])
@pytest.mark.parametrize("em, es", [([2.0, 3.0], [-1.0, 2.0]), ([0.5, 7.0, 1e3], [4.0, -0.25, 9.0]),
                                    ([1e-8, 1.0], [-3e-9, 2.0]), ([5.0], [-5.0])])
def test_diagonal_hessians_match_the_rotated_matrices(f, em, es):
    dF, T = np.array([0.3, 2.0, 7.5]), np.array([0.5, 1.0, 2.0])
    diag = f(np.diag(em), np.diag(es), dF, T)
    Q = _rotation(len(em), 1)
    general = f(Q @ np.diag(em) @ Q.T, Q @ np.diag(es) @ Q.T, dF, T)
    # eigvalsh is backward stable: each eigenvalue off by ~eps max|e|, relatively eps cond on the smallest
    cond = max(map(abs, em + es)) / min(map(abs, em + es))
    np.testing.assert_allclose(diag, general, rtol=20 * np.finfo(float).eps * max(cond, 1.0))
    # the order of the diagonal is immaterial; a 1x1 matrix, a 1-element list and a scalar are one Hessian
    np.testing.assert_array_equal(diag, f(np.diag(em[::-1]), np.diag(es[::-1]), dF, T))
    if len(em) == 1:
        for hm, hs in ((em[0], es[0]), ([[em[0]]], [[es[0]]])):
            np.testing.assert_array_equal(diag, f(hm, hs, dF, T))


def test_scalar_hessians_are_the_one_dimensional_law():
    for dF, T in ((1.0, 0.25), (3.0, 1.0)):
        assert KR.log_eyring_kramers_time(8.0, -4.0, dF, T) == pytest.approx(KR.log_kramers_time_1d(8.0, -4.0, dF, T),
                                                                             rel=1e-15)


@pytest.mark.parametrize("rotate", [False, True])
def test_hessian_checks_on_both_paths(rotate):
    Q = _rotation(2, 3) if rotate else np.eye(2)

    def call(em, es):
        return KR.eyring_kramers_time(Q @ np.diag(em) @ Q.T, Q @ np.diag(es) @ Q.T, 1.0, 1.0)

    with pytest.raises(DomainError, match="degenerate"):
        call([2.0, 1e-14], [-1.0, 2.0])
    with pytest.raises(DomainError, match="positive definite"):
        call([-2.0, 3.0], [-1.0, 2.0])
    with pytest.raises(DomainError, match="exactly one negative eigenvalue"):
        call([2.0, 3.0], [-1.0, -2.0])
    with pytest.raises(DomainError, match="exactly one negative eigenvalue"):
        call([2.0, 3.0], [1.0, 2.0])


def test_non_symmetric_hessian_still_rejected():
    with pytest.raises(DomainError, match="symmetric"):
        KR.eyring_kramers_time([[2.0, 1.0], [0.0, 3.0]], np.diag([-1.0, 2.0]), 1.0, 1.0)


def _fresh_tables():
    CB._prefix_cache.clear()
    CB._coverer_values.cache_clear()


@pytest.mark.parametrize("p, n, metric", [(31, 3, "torus"), (31, 3, "grid"), (97, 5, "torus"), (13, 7, "grid")])
def test_expected_uncovered_does_not_depend_on_earlier_calls(p, n, metric):
    N = p * p
    ms = np.random.default_rng(p).integers(0, N + 1, 40)
    _fresh_tables()
    batch = CO.expected_uncovered(p, n, ms, metric)
    for order in (ms, np.sort(ms), np.sort(ms)[::-1]):
        _fresh_tables()
        one_by_one = {int(m): CO.expected_uncovered(p, n, int(m), metric) for m in order}
        assert [one_by_one[int(m)] for m in ms] == batch.tolist()


def test_expected_uncovered_without_a_cache(monkeypatch):
    p, n = 31, 4
    ms = np.arange(0, p * p + 1, 7)
    _fresh_tables()
    kept = CO.expected_uncovered(p, n, ms, "grid")
    _fresh_tables()
    monkeypatch.setattr(CB, "_PREFIX_CACHE_BYTES", 0)  # nothing kept: every table built for its call
    assert CO.expected_uncovered(p, n, ms, "grid").tolist() == kept.tolist()
    assert not CB._prefix_cache
    _fresh_tables()


def test_expected_uncovered_exact_against_rationals_after_a_long_table():
    """A table built long by an earlier call (m = p^2) serves a small m with the exact value's digits."""
    p, n = 7, 2
    N = p * p
    _fresh_tables()
    CO.expected_uncovered(p, n, N)
    s = CB._coverer_values(p, n, "torus")[0][0]
    for m in (0, 1, 5, N - s, N - s + 1):
        exact = N * math.comb(N - s, m) / math.comb(N, m) if m <= N - s else 0.0
        assert CO.expected_uncovered(p, n, m) == pytest.approx(exact, rel=1e-14, abs=0.0)


def test_expected_uncovered_paper_exp_form_where_the_exponential_is_subnormal():
    mpmath.mp.dps = 40
    p = 97
    N = p * p
    worst = 0.0
    for n in (20, 25, 30):
        C = 2 * n * n - 2 * n + 1
        for m in range(1, N + 1):
            y = mpmath.mpf(m) * C / N
            if not 705 < y < 717.5:
                continue
            ref = N * mpmath.exp(-y)
            if ref > mpmath.mpf(2.3e-308):
                worst = max(worst, float(abs(CO.expected_uncovered_paper(p, n, m, form="exp") - ref) / ref))
    assert 0.0 < worst < 2e-13  # the documented bound (9.4e-13 before the half-exponent form)
