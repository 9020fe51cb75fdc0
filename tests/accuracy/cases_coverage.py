"""Accuracy cases for grokclocks.coverage (coverage of Z_p^2, accuracy ceilings, lemma maps, MED).

References: exact integer / rational arithmetic (``math.comb``, ``fractions``) over brute-force counts
of the grid (every pair of points, O(p^4), small primes), and mpmath at 40 digits for the closed forms.
Embedding functions are checked on families with a known answer over the whole double range.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
from fractions import Fraction

import mpmath
import numpy as np

from cases_clocks import in_double
from harness import TINY, AccuracyCase, Arg, Branch

# the module itself: the package attribute grokclocks.coverage is the re-exported citations.coverage()
Cv = importlib.import_module("grokclocks.coverage")

mpf = mpmath.mpf
BIG = 1e300
PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31)


def _dist1(a, b, p, metric):
    d = abs(a - b)
    return min(d, p - d) if metric == "torus" else d


@functools.lru_cache(maxsize=None)
def _coverers(p, n, metric):
    """s_x for every x of the p x p grid by brute force over all pairs (independent of the library)."""
    p, n = int(p), int(n)
    d = np.array([[_dist1(a, b, p, metric) for b in range(p)] for a in range(p)])
    D = d[:, None, :, None] + d[None, :, None, :]  # D[a, b, a', b']
    return tuple(int(v) for v in (D < n).sum(axis=(2, 3)).ravel())


def _expected_exact(p, n, m, metric):
    N = int(p) ** 2
    tot = sum(Fraction(math.comb(N - s, int(m)), math.comb(N, int(m))) for s in _coverers(p, n, metric))
    return tot


def _as_mpf(fr):
    return mpf(fr.numerator) / fr.denominator


def _m(p, f):
    return int(round(f * int(p) ** 2))


def _n(p, g):
    return max(1, int(round(g * 2 * int(p))))


def _required_exact(p, n, metric):
    N = int(p) ** 2
    lo, hi = 0, N
    while hi - lo > 1:  # E[U] decreases in m
        mid = (lo + hi) // 2
        if _expected_exact(p, n, mid, metric) < 1:
            hi = mid
        else:
            lo = mid
    return mpf(hi) / N


def _ball(n):
    return 2 * int(n) ** 2 - 2 * int(n) + 1


def _paper_ref(p, n, f):
    """p^2 (1 - C/p^2)^m in exact rationals, then mpmath (the power of an exact quotient)."""
    N, C, m = int(p) ** 2, _ball(n), _m(p, f)
    return mpf(N) * (mpf(max(N - C, 0)) / N) ** m


def _n_near_p2(p, k):
    """The k-th largest n with C(n) = 2n^2 - 2n + 1 < p^2 (k = 1: the largest), at least 1."""
    N = int(p) ** 2
    n = (1 + math.isqrt(2 * N - 1)) // 2 + 1
    while _ball(n) >= N:
        n -= 1
    return max(1, n + 1 - int(k))


def _n_for_ratio(q, p, **_):
    """n with C(n) / p^2 = q: the root of 2n^2 - 2n + 1 = q p^2 (for the stratified draws)."""
    return (1 + math.sqrt(max(2 * q * int(p) ** 2 - 1, 0.0))) / 2


def _f_for_exponent(q, p, n, **_):
    """m / p^2 with m log(1 - C/p^2) = -q (for the stratified draws; 1 where C >= p^2)."""
    N, C = int(p) ** 2, _ball(n)
    return 1.0 if C >= N else q / -math.log1p(-C / N) / N


# expected_uncovered_paper's switches: log1p(-C/p^2) for C <= p^2/2, log((p^2 - C)/p^2) above, 0 for
# C >= p^2; the product p^2 e^y in two halves below y = -700
_PAPER_BRANCHES = (Branch("n", (0.5, 1.0), lo=1e-9, hi=1e4, solve=_n_for_ratio, what="C(n)/p^2"),
                   Branch("f", (700.0,), lo=1e-3, hi=1e4, solve=_f_for_exponent, what="-m log(1 - C/p^2)"))


def _f_for_fill(q, p, g, **_):
    """f = m/p^2 at which m = q (p^2 - s), s the torus coverers of a point (for the stratified draws)."""
    N = int(p) ** 2
    return q * (N - _coverers(p, _n(p, g), "torus")[0]) / N


# _log_binom_ratio: log(1 - o/(N - j)) from the exact N - j - o where o > (N - j)/2; E[U] = 0 once m > p^2 - s
_FILL_BRANCH = Branch("f", (0.5, 1.0), lo=1e-3, hi=2.0, scale="lin", solve=_f_for_fill, what="m/(p^2 - s)")


def _one_point_torus_distance(p, a, b):
    return min(a, p - a) + min(b, p - b)


def _coverage_ref(p, n):
    """coverage_fraction of the single training point (0, 0) on the torus: #{x: d(x, 0) < n} / p^2."""
    p = int(p)
    return mpf(sum(1 for a in range(p) for b in range(p) if _one_point_torus_distance(p, a, b) < int(n))) / p ** 2


def _ceiling_ref(p, n):
    """accuracy_ceiling with one training point (0, 0) and a constant label table (every test point has
    the label of the training point): #{x != 0: d(x, 0) < n} / (p^2 - 1)."""
    p = int(p)
    c = sum(1 for a in range(p) for b in range(p) if (a, b) != (0, 0) and _one_point_torus_distance(p, a, b) < int(n))
    return mpf(c) / (p * p - 1)


def _one_point_mask(p):
    m = np.zeros((int(p), int(p)), dtype=bool)
    m[0, 0] = True
    return m


CASES = [
    AccuracyCase("grokclocks.coverage.expected_uncovered [torus]",
                 lambda p, g, f: Cv.expected_uncovered(int(p), _n(p, g), _m(p, f), "torus"),
                 lambda p, g, f: _as_mpf(_expected_exact(p, _n(p, g), _m(p, f), "torus")),
                 {"p": Arg(values=PRIMES), "g": Arg(0.0, 1.0, "lin"), "f": Arg(0.0, 1.0, "lin")},
                 # product form of the binomial ratio: ~ eps |log E[U]| (<= 745 eps; measured 2.2e-14, the
                 # log-gamma form gave 1.3e-12 at p = 29; 1.96e-13 at p = 31, n = 15, m = 538 while log1p(-o/(N - j))
                 # took the rounded quotient near 1, now 3.2e-14)
                 rtol=2e-13, atol=1e-300, branches=(_FILL_BRANCH,),
                 points=({"p": 31, "g": 15 / 62, "f": 538 / 961},)),
    AccuracyCase("grokclocks.coverage.expected_uncovered [grid]",
                 lambda p, g, f: Cv.expected_uncovered(int(p), _n(p, g), _m(p, f), "grid"),
                 lambda p, g, f: _as_mpf(_expected_exact(p, _n(p, g), _m(p, f), "grid")),
                 {"p": Arg(values=PRIMES), "g": Arg(0.0, 1.0, "lin"), "f": Arg(0.0, 1.0, "lin")},
                 rtol=2e-13, atol=1e-300, branches=(_FILL_BRANCH,)),
    AccuracyCase("grokclocks.coverage.full_coverage_probability_lower_bound [torus]",
                 lambda p, g, f: Cv.full_coverage_probability_lower_bound(int(p), _n(p, g), _m(p, f)),
                 lambda p, g, f: _as_mpf(max(Fraction(0), 1 - _expected_exact(p, _n(p, g), _m(p, f), "torus"))),
                 {"p": Arg(values=PRIMES), "g": Arg(0.0, 1.0, "lin"), "f": Arg(0.0, 1.0, "lin")},
                 rtol=1e-12, atol=1e-13),
    AccuracyCase("grokclocks.coverage.expected_uncovered_paper [binomial]",
                 lambda p, n, f: Cv.expected_uncovered_paper(int(p), int(n), _m(p, f)), _paper_ref,
                 {"p": Arg(2, 2 ** 14, integer=True), "n": Arg(1, BIG, integer=True), "f": Arg(0.0, 1.0, "lin")},
                 # p^2 exp(m log(1 - C/p^2)), the logarithm to ~1 ulp: condition number |m log(1 - C/p^2)|
                 # (<= 727 where the value is normal)
                 rtol=2e-13, atol=2e-13 * TINY, branches=_PAPER_BRANCHES,
                 # 1 - C/p^2 as a rounded quotient lost 2.3e-8 here (p^2 - C = 3)
                 points=({"p": 9104, "n": 6438, "f": 20 / 9104 ** 2},)),
    AccuracyCase("grokclocks.coverage.expected_uncovered_paper [binomial, C(n) just below p^2]",
                 lambda p, k, f: Cv.expected_uncovered_paper(int(p), _n_near_p2(p, k), _m(p, f)),
                 lambda p, k, f: _paper_ref(p, _n_near_p2(p, k), f),
                 {"p": Arg(2, 2 ** 14, integer=True), "k": Arg(1, 1e4, integer=True), "f": Arg(1e-9, 1.0)},
                 rtol=2e-13, atol=2e-13 * TINY),
    AccuracyCase("grokclocks.coverage.expected_uncovered_paper [exp]",
                 lambda p, n, f: Cv.expected_uncovered_paper(int(p), int(n), _m(p, f), form="exp"),
                 lambda p, n, f: mpf(int(p) ** 2) * mpmath.exp(-mpf(_m(p, f)) * (2 * int(n) ** 2 - 2 * int(n) + 1)
                                                                / int(p) ** 2),
                 {"p": Arg(2, 2 ** 14, integer=True), "n": Arg(1, BIG, integer=True), "f": Arg(0.0, 1.0, "lin")},
                 rtol=2e-13, atol=2e-13 * TINY),
    AccuracyCase("grokclocks.coverage.required_train_fraction [paper]",
                 lambda p, n: Cv.required_train_fraction(int(p), int(n)),
                 lambda p, n: mpmath.log(int(p) ** 2) / (2 * int(n) ** 2 - 2 * int(n) + 1),
                 {"p": Arg(values=PRIMES + (97, 16381)), "n": Arg(1, BIG, integer=True)}, rtol=4.5e-16),
    AccuracyCase("grokclocks.coverage.required_train_fraction [paper_nolog]",
                 lambda p, g: Cv.required_train_fraction(16381, max(1, int(g * 11582)), "paper_nolog"),
                 lambda p, g: (-mpmath.log(mpf(16381) ** 2)
                               / (mpf(16381) ** 2 * mpmath.log1p(-mpf(2 * max(1, int(g * 11582)) ** 2
                                                                     - 2 * max(1, int(g * 11582)) + 1) / 16381 ** 2))),
                 {"p": Arg(values=(16381,)), "g": Arg(1e-4, 1.0)},
                 # log(1 - C/N) from the exact integer N - C above C = N/2 (log1p(-C/N) of the rounded quotient
                 # had condition number C/(N - C): 1.03e-14 at g = 1, under a contract of 1e-9); measured 3.4e-16
                 rtol=6.7e-16),
    AccuracyCase("grokclocks.coverage.required_train_fraction [torus_exact]",
                 lambda p, g: Cv.required_train_fraction(int(p), _n(p, g), "torus_exact"),
                 lambda p, g: _required_exact(p, _n(p, g), "torus"),
                 {"p": Arg(values=(2, 3, 5, 7, 11, 13)), "g": Arg(0.0, 1.0, "lin")}, rtol=1.2e-16),
    AccuracyCase("grokclocks.coverage.ball_size", lambda n: Cv.ball_size(int(n)),
                 lambda n: 2 * mpf(int(n)) ** 2 - 2 * int(n) + 1, {"n": Arg(1, 1e150, integer=True)}, rtol=1.2e-16),
    AccuracyCase("grokclocks.coverage.ball_size_torus", lambda p, g: Cv.ball_size_torus(int(p), _n(p, g)),
                 lambda p, g: mpf(_coverers(p, _n(p, g), "torus")[0]),
                 {"p": Arg(values=PRIMES), "g": Arg(0.0, 1.0, "lin")}, rtol=0.0),
    AccuracyCase("grokclocks.coverage.coverer_counts [grid, corner]",
                 lambda p, g: Cv.coverer_counts(int(p), _n(p, g), "grid")[0, 0],
                 lambda p, g: mpf(_coverers(p, _n(p, g), "grid")[0]),
                 {"p": Arg(values=PRIMES), "g": Arg(0.0, 1.0, "lin")}, rtol=0.0),
    AccuracyCase("grokclocks.coverage.class_sizes [mul, class 0]", lambda p: Cv.class_sizes(int(p), "mul")[0],
                 lambda p: mpf(2 * int(p) - 1), {"p": Arg(values=PRIMES + (97,))}, rtol=0.0),
    AccuracyCase("grokclocks.coverage.min_opnorm_single_class", Cv.min_opnorm_single_class,
                 lambda c_norm, R: mpf(c_norm) / (2 * mpf(R)), {"c_norm": Arg(TINY, BIG), "R": Arg(TINY, BIG)},
                 rtol=1.2e-16, atol=1.2e-16 * TINY),
    AccuracyCase("grokclocks.coverage.rank1_min_norm_map [entry (0, 0)]",
                 lambda c, x, y: Cv.rank1_min_norm_map([c], [x, y])[0, 0],
                 lambda c, x, y: mpf(c) * mpf(x) / (2 * (mpf(x) ** 2 + mpf(y) ** 2)),
                 {"c": Arg(1e-100, 1e100), "x": Arg(1e-100, 1e100), "y": Arg(1e-100, 1e100)},
                 rtol=1.2e-15, atol=1.2e-15 * TINY),
    AccuracyCase("grokclocks.coverage.operator_norm_bounds [fro, diag(x, y)]",
                 lambda x, y: Cv.operator_norm_bounds(np.diag([x, y]))[1],
                 lambda x, y: mpmath.sqrt(mpf(x) ** 2 + mpf(y) ** 2),
                 {"x": Arg(1e-150, 1e150), "y": Arg(1e-150, 1e150)}, rtol=4.5e-16),
    AccuracyCase("grokclocks.coverage.consecutive_embedding_diffs [d=2]",
                 lambda x, y: Cv.consecutive_embedding_diffs(np.array([[0.0, x, x], [0.0, y, 0.0]]), 3)[0, 0],
                 lambda x, y: mpmath.sqrt(mpf(x) ** 2 + mpf(y) ** 2), {"x": Arg(TINY, BIG), "y": Arg(TINY, BIG)},
                 rtol=4.5e-16),
    AccuracyCase("grokclocks.coverage.main_embedding_diff [paper, d=2]",
                 lambda x, y: Cv.main_embedding_diff(np.array([[0.0, x, x], [0.0, y, 0.0]]), 3),
                 lambda x, y: (mpmath.sqrt(mpf(x) ** 2 + mpf(y) ** 2) + mpf(y)) / 2,
                 {"x": Arg(TINY, BIG), "y": Arg(TINY, BIG)}, rtol=6.7e-16),
    AccuracyCase("grokclocks.coverage.coverage_fraction [one point, torus]",
                 lambda p, g: Cv.coverage_fraction(_one_point_mask(p), _n(p, g)),
                 lambda p, g: _coverage_ref(p, _n(p, g)), {"p": Arg(values=PRIMES), "g": Arg(0.0, 1.0, "lin")},
                 rtol=1.2e-16),
    AccuracyCase("grokclocks.coverage.accuracy_ceiling [one point, torus]",
                 lambda p, g: Cv.accuracy_ceiling(_one_point_mask(p), np.zeros((int(p), int(p)), dtype=np.int64), _n(p, g)),
                 lambda p, g: _ceiling_ref(p, _n(p, g)), {"p": Arg(values=PRIMES[1:]), "g": Arg(0.0, 1.0, "lin")},
                 rtol=1.2e-16),
]

CASES = [dataclasses.replace(c, reference=in_double(c.reference)) for c in CASES]
