"""Theorem 3.12: coverers, the expected uncovered count and the required training fraction (§10)."""

from __future__ import annotations

import collections
import functools
import math
import threading
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import special

from .. import _floats as FL
from .. import _pointwise as P
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ..task import _grid_size, MAX_MODULUS
from ._common import _metric

__all__ = ["ball_size", "ball_size_torus", "coverer_counts", "expected_uncovered", "expected_uncovered_paper",
           "full_coverage_probability_lower_bound", "required_train_fraction"]


@cites("uniformity:thm3.12")
def ball_size(n: int) -> int:
    r"""Coverers of a point on the unbounded lattice: C(n) = |{z ∈ ℤ² : |z₁| + |z₂| < n}| = 2n² − 2n + 1.

    Parameters
    ----------
    n : int or array_like of int
        The radius n, an integer ≥ 1 (a scalar of any size: the result is an exact Python int); an array of
        radii ≤ 2³¹ − 1 for a sweep (the counts then exact in int64).

    Returns
    -------
    int or numpy.ndarray
        C(n) = 2n² − 2n + 1, the number of lattice points at L1 distance < n from a point: a Python int for a
        scalar `n`, an int64 array of the shape of `n` for an array.

    Raises
    ------
    DomainError
        If an entry of `n` is not an integer ≥ 1, or, in an array, exceeds 2³¹ − 1.

    Examples
    --------
    >>> ball_size(5), ball_size([1, 2, 5])
    (41, array([ 1,  5, 41]))

    References
    ----------
    Spec ID `uniformity:thm3.12` (paper Theorem 3.12).
    """
    if type(n) is int or np.ndim(n) == 0:
        n = V.count(n, "n", 1)
    else:
        n = _int64_radii(n)
    return 2 * n * n - 2 * n + 1  # the same integer operations on a Python int and on int64 (exact: n < 2^31)


_INT64_RADIUS_MAX = 2**31 - 1  # 2 n^2 < 2^63: C(n) exact in int64


def _int64_radii(n: Any) -> np.ndarray:
    """An array of radii n >= 1 as int64, each <= 2^31 - 1 (C(n) = 2n^2 - 2n + 1 exact in int64)."""
    a = _count_arg(n, "n", 1, None)
    if a.size and int(a.max()) > _INT64_RADIUS_MAX:
        raise DomainError(f"n must be <= {_INT64_RADIUS_MAX} in an array, where C(n) is an exact int64 (got "
                          f"{int(a.max())}; a scalar n of any size gives an exact Python int)")
    return a


def _coord_counts(p: int, n: int, metric: str) -> np.ndarray:
    """h[a, j] = #{a' in Z_p: dist(a, a') = j}, j = 0..n-1 (shape (p, n))."""
    n = min(n, 2 * p)  # no 1-D distance reaches p: larger n only add zero columns (n = 1e15 used to be allocated)
    a = np.arange(p)
    diff = np.abs(a[:, None] - a[None, :])
    if metric == "torus":
        diff = np.minimum(diff, p - diff)
    h = np.zeros((p, n), dtype=np.int64)
    rows = np.repeat(a, p)
    dd = diff.ravel()
    keep = dd < n
    np.add.at(h, (rows[keep], dd[keep]), 1)
    return h


def _torus_count(p: Any, n: Any) -> Any:
    r"""C_T(p, n) in closed form, for 1 <= n <= 2p - 1 (Python ints, or int64 arrays that broadcast; exact).

    With the 1-D torus distance D(a) = min(a, p - a) and H(k) = #{a : D(a) <= k} = min(2k + 1, p) (k >= 0),
    C_T = sum_a H(n - 1 - D(a)) = H(K) + 2 sum_{j=1}^{M} H(K - j) + [p even] H(K - p/2), K = n - 1,
    M = (p - 1) // 2 (D takes 0 once, each 1..M twice, p/2 once for even p).  The prefix sums of H are
    S(k) = (k + 1)^2 for k <= M and (M + 1)^2 + (k - M) p beyond (S(-1) = 0), so the middle sum is
    S(K - 1) - S(K - M - 1).  Every intermediate is <= 2 p^2 (n <= 2p - 1): exact in int64.
    """
    xp = FL.SCALAR if type(p) is int and type(n) is int else FL.ARRAY  # the same operations on ints and arrays
    K = n - 1
    M = (p - 1) // 2

    def h(k):  # H(k), 0 for k < 0
        return xp.where(k < 0, 0, xp.minimum(2 * k + 1, p))

    def prefix(k):  # S(k), k >= -1 after the clip
        k = xp.maximum(k, -1)
        return xp.where(k <= M, (k + 1) * (k + 1), (M + 1) * (M + 1) + (k - M) * p)

    return h(K) + 2 * (prefix(K - 1) - prefix(K - M - 1)) + (1 - p % 2) * h(K - p // 2)


@cites("uniformity:thm3.12")
def coverer_counts(p: int, n: int, metric: str = "torus") -> np.ndarray:
    r"""Number s_x of points of ℤ_p² within distance < n of each point x (its possible coverers).

    .. math:: s_x=|\{y\in D: d(x,y)<n\}|

    In words: s_x counts the points y of D = ℤ_p² with d(x, y) < n.  On the torus s_x = C_T(p, n) for
    every x (equal to C(n) if and only if n ≤ (p + 1)/2); on the bounded grid it shrinks at the border
    (a corner has n(n + 1)/2 for n ≤ p).

    Parameters
    ----------
    p : int
        The modulus p, an integer in [2, `MAX_MODULUS`] (primality is not needed).
    n : int
        The radius n, an integer ≥ 1.
    metric : {"torus", "grid"}, optional
        `"torus"` (default, wrap-around distances) or `"grid"` (the bounded grid).

    Returns
    -------
    numpy.ndarray
        int64 array of shape (p, p): entry [a, b] is s_x for x = (a, b).

    Raises
    ------
    DomainError
        If `p` is not an integer in [2, `MAX_MODULUS`], `n` is not an integer ≥ 1, or `metric` is
        unknown.

    References
    ----------
    Spec ID `uniformity:thm3.12` (paper Theorem 3.12).
    """
    p = _grid_size(p)
    n = V.integer_at_least(n, "n", 1)
    metric = _metric(metric)
    n = min(n, 2 * p - 1)  # every distance is <= 2(p - 1): radii beyond give the same counts (exact)
    if metric == "torus":  # translation invariant: one count for every point
        return np.full((p, p), int(_torus_count(p, n)), dtype=np.int64)
    h = _coord_counts(p, n, metric)
    cum = np.cumsum(h, axis=1)  # H[b, c] = #{b': dist <= c}
    # s[a, b] = sum_{j=0}^{n-1} h[a, j] * H[b, n-1-j]
    return h @ cum[:, ::-1].T


@cites("uniformity:thm3.12")
def ball_size_torus(p: int, n: int) -> int:
    r"""Exact number C_T(p, n) of points of ℤ_p² at torus distance < n from a point.

    It equals C(n) = 2n² − 2n + 1 (see `ball_size`) if and only if n ≤ (p + 1)/2, and p² for large n.

    Computed in closed form from the 1-D distance counts (min(2k + 1, p) points of ℤ_p within distance k),
    in O(1) per point.

    Parameters
    ----------
    p : int or array_like of int
        The modulus p, an integer in [2, `MAX_MODULUS`] (an array of moduli broadcasts against `n`).
    n : int or array_like of int
        The radius n, an integer ≥ 1 (an array of radii broadcasts against `p`).

    Returns
    -------
    int or numpy.ndarray
        C_T(p, n), between 1 and p²: a Python int for scalar `p` and `n`, else an int64 array of their
        broadcast shape (exact).

    Raises
    ------
    DomainError
        If an entry of `p` is not an integer in [2, `MAX_MODULUS`] or one of `n` not an integer ≥ 1, or the
        arrays do not broadcast.

    Examples
    --------
    >>> ball_size_torus(97, 5), ball_size_torus(7, 5), ball_size_torus(7, [1, 2, 5, 7])
    (41, 37, array([ 1,  5, 37, 49]))

    References
    ----------
    Spec ID `uniformity:thm3.12` (paper Theorem 3.12).
    """
    if (type(p) is int and type(n) is int) or (np.ndim(p) == 0 and np.ndim(n) == 0):
        p = _grid_size(p)
        n = V.integer_at_least(n, "n", 1)
        return int(_torus_count(p, min(n, 2 * p - 1)))  # every distance is <= 2 (p // 2): larger radii add nothing
    pa = _count_arg(p, "p", 2, None)
    _grid_size(int(pa.max()))  # the largest modulus checked <= MAX_MODULUS (its message)
    na = _count_arg(n, "n", 1, 2 * MAX_MODULUS)  # radii beyond 2p - 1 give p^2: capped (any Python int checked)
    try:
        pb, nb = np.broadcast_arrays(pa, na)
    except ValueError:
        raise DomainError(f"p, n must broadcast against each other (got shapes p {pa.shape}, n {na.shape})") from None
    return _torus_count(pb, np.minimum(nb, 2 * pb - 1)).astype(np.int64)


def _log_binom(N: np.ndarray, k: float) -> np.ndarray:
    return special.gammaln(N + 1.0) - special.gammaln(k + 1.0) - special.gammaln(N - k + 1.0)


@cites("uniformity:thm3.12")
def expected_uncovered(p: int, n: Any, m: Any, metric: str = "torus") -> float | np.ndarray:
    r"""Exact expected number E[U] of uncovered points for m training points drawn without replacement.

    .. math:: \mathbb E[U]=\sum_{x\in D}\binom{p^2-s_x}{m}\Big/\binom{p^2}{m}

    In words: each point x is uncovered when none of the m training points falls among its s_x
    coverers (`coverer_counts`), with probability C(p² − s_x, m)/C(p², m).  The ratio is a product of
    log1p terms (relative error about ε·|log ratio|), or log-gamma functions beyond 2·10⁷ terms.

    Parameters
    ----------
    p : int or array_like of int
        The modulus p, an integer in [2, `MAX_MODULUS`] (an array of moduli broadcasts against `n` and `m`;
        each distinct modulus is evaluated once, on its own points).
    n : int or array_like
        The radius n, an integer ≥ 1 (an array of radii broadcasts against `m`): a point is covered by a training point at distance < n.
    m : int or array_like
        The number of training points, an integer in [0, p²] (an array broadcasts against `n`).
    metric : {"torus", "grid"}, optional
        `"torus"` (default, wrap-around distances) or `"grid"` (the bounded grid).

    Returns
    -------
    float or ndarray
        E[U], in [0, p²], the broadcast shape of `p`, `n` and `m`.

    Raises
    ------
    DomainError
        If `p`, `n` or `m` is outside its range or `metric` is unknown.

    Examples
    --------
    >>> round(expected_uncovered(97, 5, 2100), 3), round(expected_uncovered(97, 5, 2100, "grid"), 3)
    (0.292, 1.264)

    References
    ----------
    Spec ID `uniformity:thm3.12` (paper Theorem 3.12, exact version; erratum uniformity-2).
    """
    if type(p) is not int and np.ndim(p):
        return _per_modulus(expected_uncovered, p, n, m, metric)
    p = _grid_size(p)
    N = p * p
    shape, (nf, mf) = _n_m_args(n, m, N, cap=2 * p - 1)  # radii beyond 2p - 1 cover the same points
    metric = _metric(metric)
    if nf.size == 1 or int(nf.min()) == int(nf.max()):  # one radius (every scalar call): no grouping
        return V.scalar_or_array(_uncovered(p, int(nf[0]), mf, metric).reshape(shape))
    out = np.empty(nf.shape)
    for nv in np.unique(nf):  # one coverer table per distinct radius, every m of that radius at once
        sel = nf == nv
        out[sel] = _uncovered(p, int(nv), mf[sel], metric)
    return V.scalar_or_array(out.reshape(shape))


def _uncovered(p: int, n: int, m: np.ndarray, metric: str) -> np.ndarray:
    """E[U] = Σ_s k_s C(N − s, m)/C(N, m) over the distinct coverer counts s (multiplicities k_s) of radius n,
    for integers m (1-d int64); the terms summed in one order for any number of points (scalar == array)."""
    N = p * p
    vals, mult = _coverer_values(p, n, metric)
    # many points share few values of m (<= N + 1): each term once per value where there are more points
    mu, inv = np.unique(m, return_inverse=True) if len(vals) > 1 and m.size > N + 1 else (m, None)
    acc = None
    for s, k in zip(vals, mult):
        term = np.exp(_log_binom_ratio(N, s, mu))
        term *= k
        acc = term if acc is None else np.add(acc, term, out=acc)
    return acc if inv is None else acc[inv]


@functools.lru_cache(maxsize=64)
def _coverer_values(p: int, n: int, metric: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The distinct coverer counts s of radius n and their multiplicities (Python ints; one on the torus)."""
    if metric == "torus":
        return (int(_torus_count(p, min(n, 2 * p - 1))),), (p * p,)
    vals, mult = np.unique(coverer_counts(p, n, metric), return_counts=True)
    return tuple(vals.tolist()), tuple(mult.tolist())


def _count_arg(x, name: str, minimum: int, cap: int | None) -> np.ndarray:
    """An integer argument >= `minimum` as an int64 array (a scalar: any Python int, first capped at `cap`,
    beyond which the result does not change)."""
    if np.ndim(x) == 0:
        v = V.count(x, name, minimum)  # any Python int (ball_size's n up to 1e300)
        return np.asarray(v if cap is None else min(v, cap), dtype=np.int64)
    raw = np.asarray(x) if not isinstance(x, (str, bytes)) else None
    if cap is not None and raw is not None and raw.dtype.kind in "Of" and raw.size:
        # huge integers (Python ints, or floats beyond 2^62): each checked, then capped where nothing changes
        a = np.array([min(V.count(v, name, minimum), cap) for v in raw.reshape(-1)], dtype=np.int64).reshape(raw.shape)
        return a
    a = V.integer_array(x, name, what=f"integers >= {minimum}", allow_empty=False)
    if np.any(a < minimum):
        raise DomainError(f"{name} must be integers >= {minimum} (got {int(a[a < minimum].flat[0])})")
    return a if cap is None else np.minimum(a, cap)


def _n_m_numbers(n, m, N: int, cap: int | None) -> tuple[int, int]:
    """(n, m) as Python ints for a scalar radius n >= 1 (capped at `cap`) and a scalar count m in [0, N]."""
    nv, mv = V.count(n, "n", 1), V.count(m, "m", 0)
    if mv > N:
        raise DomainError(f"m must be in [0, p^2] = [0, {N}] (got {mv})")
    return (nv if cap is None else min(nv, cap)), mv


def _n_m_args(n, m, N: int, cap: int | None):
    """(shape, (n, m) flat int64) for a radius n >= 1 and a training count m in [0, N] that broadcast."""
    if np.ndim(n) == 0 and np.ndim(m) == 0:  # two scalars: no broadcasting
        nv, mv = _n_m_numbers(n, m, N, cap)
        return (), [np.array([nv], dtype=np.int64), np.array([mv], dtype=np.int64)]
    nn = _count_arg(n, "n", 1, cap)
    mm = _count_arg(m, "m", 0, None)
    if np.any(mm > N):
        raise DomainError(f"m must be in [0, p^2] = [0, {N}] (got {int(mm[mm > N].flat[0])})")
    try:
        b = np.broadcast_arrays(nn, mm)
    except ValueError:
        raise DomainError(f"n, m must broadcast against each other (got shapes n {nn.shape}, m {mm.shape})") from None
    return b[0].shape, [np.ascontiguousarray(x).reshape(-1) for x in b]


#: Largest m summed as a prefix (`_log_binom_ratio`): every p <= 1024 (N = p^2 <= 2^20) stays on it.
_PREFIX_MAX = 2 ** 20
#: Largest coverer count s summed as a product of s terms for m beyond `_PREFIX_MAX`.
_PRODUCT_MAX = 4096


def _log1m_ratio(o: Any, rest: np.ndarray) -> np.ndarray:
    """log(1 - o/rest) for integers o < rest: log1p of the rounded quotient while o <= rest/2, the log of the
    exact (rest - o)/rest above (log1p(-x) has condition number x/((1-x)|log(1-x)|): 1.96e-13 of E[U] at
    p = 31, n = 15, m = 538, the last m with E[U] > 0)."""
    near = 2.0 * o > rest
    with np.errstate(divide="ignore"):
        return np.where(near, np.log(np.where(near, rest - o, 1.0) / rest), np.log1p(-o / rest))


def _compensated_cumsum(t: np.ndarray) -> np.ndarray:
    """[0, t0, t0 + t1, ...] with each addition's rounding error restored (TwoSum, summed again): as if summed
    in twice the precision, then rounded.  Sequential, so entry k depends on t[:k] only."""
    if t.size == 0:
        return np.zeros(1)
    S = np.cumsum(t)
    prev = np.concatenate(([0.0], S[:-1]))
    bb = S - prev
    err = (prev - (S - bb)) + (t - bb)
    return np.concatenate(([0.0], S + np.cumsum(err)))


def _log_binom_ratio(N: int, s: int, m: np.ndarray) -> np.ndarray:
    r"""log C(N - s, m) / C(N, m) for an integer s and integers m (1-d int64 array): a new array, -inf where
    N - s < m.

    By the product ∏_{j<m} (1 − s/(N − j)), summed as `log1p` terms (`_log1m_ratio`), one prefix sum for
    every m of a coverer count s (`_prefix_table`, up to the largest m; the terms all have one sign,
    so the relative error of the ratio is ~ eps |log ratio|); beyond m = `_PREFIX_MAX` (p > 1024), the
    symmetric product of s terms ∏_{j<s} (1 − m/(N − j)) while s <= `_PRODUCT_MAX`, else the log-gamma form,
    whose absolute error in the log is ~ eps N log N (1e-6 at p = 2^14).  The form of each (s, m) depends
    on s and m alone, so an array call gives the scalar calls' numbers bit for bit (the earlier
    product-or-log-gamma switch on the total work moved arrays of 3000 points at p = 97 to log-gamma:
    4.9e-11 from the scalar calls).  Measured against exact rationals for p <= 31 (tests/accuracy).
    """
    top = N - s
    m_max = int(m.max()) if m.size else 0
    if m_max <= min(N, _PREFIX_MAX):  # every point on the prefix table (every p <= 1024): one gather
        return _prefix_table(N, s, m_max)[m]
    out = np.full(m.shape, -np.inf)
    ok = m <= top
    pre = ok & (m <= _PREFIX_MAX)
    if pre.any():
        out[pre] = _prefix_table(N, s, int(m[pre].max()))[m[pre]]
    prod = ok & ~pre & (s <= _PRODUCT_MAX)
    if prod.any():
        kc = np.flatnonzero(prod)
        rest = N - np.arange(s, dtype=np.float64)[None, :]
        step = max(1, 4_000_000 // max(s, 1))
        for c in range(0, kc.size, step):
            o = m[kc[c:c + step]][:, None].astype(np.float64)
            out[kc[c:c + step]] = _log1m_ratio(o, rest).sum(axis=1)
    big = ok & ~pre & ~prod
    if big.any():
        mm = m[big].astype(np.float64)
        out[big] = _log_binom(N - float(s), mm) - _log_binom(np.float64(N), mm)
    return out


#: Bytes of prefix tables (`_prefix_table`) kept between calls: a sweep over m at one (p, n) reads a table
#: instead of summing up to m terms per call (p = 97: 9,409 entries, 75 kB a coverer count).
_PREFIX_CACHE_BYTES = 64 * 2 ** 20
_prefix_cache: collections.OrderedDict[tuple[int, int], np.ndarray] = collections.OrderedDict()
_prefix_lock = threading.Lock()


def _prefix_table(N: int, s: int, K: int) -> np.ndarray:
    """log C(N - s, m)/C(N, m) for m = 0..L, some L >= K (K <= min(N, `_PREFIX_MAX`)): the compensated prefix
    sums of the `_log1m_ratio` terms up to m = N - s, -inf beyond (C(N - s, m) = 0); read-only.

    Kept for later calls (least recently used out past `_PREFIX_CACHE_BYTES`) and lengthened by doubling.
    Entry m depends on the first m terms alone (`_compensated_cumsum` is sequential), so a longer table holds
    the same numbers: the value of a point does not depend on the calls before it.
    """
    key = (N, s)
    with _prefix_lock:
        t = _prefix_cache.get(key)
        if t is not None and t.size > K:
            _prefix_cache.move_to_end(key)
            return t
    L = min(N, _PREFIX_MAX, max(K, 256, 2 * (t.size - 1) if t is not None else 0))
    terms = min(L, N - s)
    t = _compensated_cumsum(_log1m_ratio(float(s), N - np.arange(terms, dtype=np.float64)))  # exact N - j
    if L > terms:
        t = np.concatenate((t, np.full(L - terms, -np.inf)))
    t.flags.writeable = False
    if t.nbytes <= _PREFIX_CACHE_BYTES // 4:
        with _prefix_lock:
            _prefix_cache.pop(key, None)
            _prefix_cache[key] = t
            total = sum(v.nbytes for v in _prefix_cache.values())
            while total > _PREFIX_CACHE_BYTES:
                total -= _prefix_cache.popitem(last=False)[1].nbytes
    return t


@cites("uniformity:thm3.12")
def expected_uncovered_paper(p: int, n: Any, m: Any, form: str = "binomial") -> float | np.ndarray:
    r"""The proof's expressions for E[U]: sampling with replacement, unbounded-lattice ball C(n).

    .. math:: \texttt{"binomial"}:\ p^2\Big(1-\frac{C(n)}{p^2}\Big)^m,\qquad \texttt{"exp"}:\ p^2e^{-mC(n)/p^2}

    In words: `"binomial"` gives p²·(1 − C(n)/p²)^m and `"exp"` p²·exp(−m·C(n)/p²), with C(n) from
    `ball_size`.  An upper bound of the exact torus value (`expected_uncovered`) when C(n) ≤ p², and a
    loose one (p = 97, n = 5, m = 2100: 0.979 against 0.292); not an upper bound on the bounded grid
    (1.264).  C(n) > p² gives 0 for the binomial form (p² when m = 0).

    Parameters
    ----------
    p : int or array_like of int
        The modulus p, an integer in [2, `MAX_MODULUS`] (an array of moduli broadcasts against `n` and `m`;
        each distinct modulus is evaluated once, on its own points).
    n : int or array_like
        The radius n, an integer ≥ 1 (an array of radii broadcasts against `m`).
    m : int or array_like
        The number of training points, an integer in [0, p²] (an array broadcasts against `n`).
    form : {"binomial", "exp"}, optional
        Which expression of the proof: `"binomial"` (default) or its exponential bound `"exp"`.

    Returns
    -------
    float or ndarray
        The paper's E[U], in [0, p²].

    Raises
    ------
    DomainError
        If `p`, `n` or `m` is outside its range or `form` is unknown.

    Notes
    -----
    Accuracy: relative error ≤ 2e-13 where the value is a normal double (the binomial form takes
    log(1 - C/p²) from the exact integer p² - C, to ~1 ulp; the rest is the condition number
    |m log(1 - C/p²)| ≤ 727 of the exponential).

    References
    ----------
    Spec ID `uniformity:thm3.12` (paper Theorem 3.12).
    """
    form = V.choice(form, "form", ("binomial", "exp"))
    if type(p) is not int and np.ndim(p):  # moduli swept: p^2 an array in the same engine
        shape, _, nf, mf, N = _p_n_m_arrays(p, n, m)
        if nf.size > 1 and int(nf.min()) == int(nf.max()):
            nf = nf[:1]  # one radius: C(n) once
        return _paper_uncovered(N, nf, mf, form).reshape(shape)
    p = _grid_size(p)
    N = p * p
    # n beyond 2^26 (C(n) > 2^53 > 800 p^2): the same value as at 2^26 in either form (0, or N at m = 0)
    if (type(n) is int and type(m) is int) or (np.ndim(n) == 0 and np.ndim(m) == 0):  # two numbers: the same
        # engine on Python ints (no 1-point arrays)
        return float(_paper_uncovered(N, *_n_m_numbers(n, m, N, cap=2 ** 26), form))
    shape, (nf, mf) = _n_m_args(n, m, N, cap=2 ** 26)
    if nf.size > 1 and int(nf.min()) == int(nf.max()):
        nf = nf[:1]  # one radius: C(n) and log(1 - C/p^2) once, broadcast over m
    return V.scalar_or_array(_paper_uncovered(N, nf, mf, form).reshape(shape))


def _paper_uncovered(N: Any, n: Any, m: Any, form: str) -> Any:
    """The engine of `expected_uncovered_paper` on Python ints N = p^2, n, m (a number back) or flat int64 arrays
    (n <= 2^26; N a number or an array of the points' p^2): the same operations on either."""
    C = 2 * n * n - 2 * n + 1  # exact (int64: n <= 2^26)
    y = _float64(m)
    if form == "exp":  # y = -m C / p^2 (m C exact in float64 up to 2^53; e^{-800} p^2 < 1e-340 is 0)
        y *= _float64(C)
        y /= N
        y *= -1.0  # the sign flipped (exact), in place on an array
        return _times_exp(N, y)
    full = C >= N
    any_full = P.any_of(full)
    y *= _log_one_minus_ratio(P.pick(full, 0, C) if any_full else C, N)  # (no select where no point is full)
    out = _times_exp(N, y)
    if any_full:
        out = P.pick(full, P.pick(m > 0, 0.0, _float64(N)), out)
    return out


def _float64(x: Any) -> Any:
    """An int as a Python float, an integer array as a new float64 array (both exact below 2^53)."""
    return float(x) if type(x) is int else x.astype(np.float64)


def _log_one_minus_ratio(C, N: int) -> Any:
    """log(1 - C/N) for integers 0 <= C < N (a Python int, or arrays), to ~1 ulp: log1p(-C/N) for C <= N/2, else
    log((N - C)/N) with N - C exact (log1p(-C/N) carried the rounding of C/N with condition number C/(N - C):
    2.3e-8 of the result at N - C = 3, N = 9104^2).  int / int is correctly rounded for N < 2^53 (Python's and
    int64's alike); the logs are numpy's on a float and on an array."""
    if type(C) is int and type(N) is int:
        return FL.SCALAR.log1p(-(C / N)) if 2 * C <= N else FL.SCALAR.log((N - C) / N)
    C = np.asarray(C, dtype=np.int64)
    out = np.log1p(np.negative(C / N))
    far = 2 * C > N  # the second form on those points only
    return P.patch(out, far, lambda C, N: np.log((N - C) / N), C, N) if far.any() else out


def _times_exp(N: int, y: Any) -> Any:
    """N e^y for y <= 0 (a float, or a 1-d float64 array, overwritten) without the subnormal e^y of y < -708
    (N e^y normal up to y = -727 at p = 2^14): (N e^(y/2)) e^(y/2), y/2 exact, at the points below -700."""
    Nf = _float64(N)  # p^2 exact as a float (a number, or an array of moduli's)
    if not P.low(y) < -700.0:  # e^y >= e^-700: a normal double (nothing underflows)
        out = np.exp(y, out=P.into(y))
        out *= Nf
        return out
    with np.errstate(under="ignore"):
        out = np.exp(y)
        out *= Nf
        return P.patch(out, y < -700.0, _times_exp_low, Nf, y)


def _times_exp_low(N: float, y: Any) -> Any:
    half = np.exp(0.5 * y)
    return N * half * half


@cites("uniformity:thm3.12")
def required_train_fraction(p: int, n: int, method: str = "paper") -> float:
    r"""Training fraction r needed for E[U] < 1 (Theorem 3.12).

    .. math:: \texttt{"paper"}: r=\frac{\ln p^2}{C(n)},\qquad \texttt{"paper\_nolog"}: r=-\frac{\ln p^2}{p^2\ln(1-C/p^2)}

    In words: the paper's r = ln(p²)/C(n), or its form before the logarithm was bounded,
    r = −ln(p²)/(p²·ln(1 − C/p²)); `"torus_exact"` and `"grid_exact"` give the smallest m/p² with
    E[U] < 1 from `expected_uncovered` (bisection on the integer m, decided in exact integer arithmetic
    near 1).  The paper's value may exceed 1 (then the criterion cannot be met); it is returned
    unclipped.  The paper's r is sufficient on the torus, not on the grid (erratum uniformity-2).

    Parameters
    ----------
    p : int or array_like of int
        The modulus p, an integer in [2, `MAX_MODULUS`] (an array of moduli broadcasts against `n`).
    n : int or array_like of int
        The radius n, an integer ≥ 1 (an array of radii broadcasts against `p`).
    method : {"paper", "paper_nolog", "torus_exact", "grid_exact"}, optional
        Which fraction: `"paper"` (default), `"paper_nolog"` (needs C(n) < p²), `"torus_exact"` or
        `"grid_exact"`.

    Returns
    -------
    float or numpy.ndarray
        The fraction r > 0 (in (0, 1] for the exact methods): a float for scalar `p` and `n`, else a float64
        array of their broadcast shape, each point the value of the scalar call (the exact methods bisect
        all points of one modulus in lockstep).

    Raises
    ------
    DomainError
        If `p` or `n` is outside its range, `method` is unknown, the arrays do not broadcast, or C(n) ≥ p²
        with `"paper_nolog"`.

    Examples
    --------
    >>> round(required_train_fraction(97, 5), 4), round(required_train_fraction(97, 5, "torus_exact"), 4)
    (0.2232, 0.1996)

    References
    ----------
    Spec ID `uniformity:thm3.12` (paper Theorem 3.12).
    """
    if not (type(p) is int and type(n) is int) and (np.ndim(p) or np.ndim(n)):
        return _required_train_fractions(p, n, method)
    p = _grid_size(p)
    n = V.count(n, "n", 1)
    method = V.choice(method, "method", ("paper", "paper_nolog", "torus_exact", "grid_exact"))
    N = p * p
    C = ball_size(n)
    if method == "paper":
        return float(Fraction(math.log(N)) / C)  # C is an exact int: no OverflowError for n > 1e154
    if method == "paper_nolog":
        if C >= N:
            raise DomainError(f"n must satisfy C(n) = 2n^2-2n+1 < p^2 for the 'paper_nolog' form (got n={n}, p={p})")
        return -math.log(N) / (N * _log_one_minus_ratio(C, N))
    metric = "torus" if method == "torus_exact" else "grid"
    lo, hi = 0, N  # E[U](N) = 0 < 1 <= E[U](0) = N
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _expected_uncovered_below_one(p, n, mid, metric):
            hi = mid
        else:
            lo = mid
    return hi / N


def _required_train_fractions(p: Any, n: Any, method: Any) -> np.ndarray:
    """`required_train_fraction` over arrays of p and n (broadcast): each point the scalar call's operations --
    ln(p^2) by `math.log` (one per modulus), the paper's quotient correctly rounded, the exact methods' bisection
    on the integer m -- run on all the points of one modulus at once."""
    pa = _count_arg(p, "p", 2, None)
    _grid_size(int(pa.max()))  # the largest modulus checked <= MAX_MODULUS (its message)
    na = _count_arg(n, "n", 1, None)
    method = V.choice(method, "method", ("paper", "paper_nolog", "torus_exact", "grid_exact"))
    try:
        pb, nb = np.broadcast_arrays(pa, na)
    except ValueError:
        raise DomainError(f"p, n must broadcast against each other (got shapes p {pa.shape}, n {na.shape})") from None
    shape, pf, nf = pb.shape, pb.reshape(-1), nb.reshape(-1)
    log_n = _log_p_squared()[pf]  # the scalar call's math.log(p^2), looked up
    if method == "paper":
        # ln(N) / C correctly rounded: C = 2 n (n - 1) + 1 < 2^53 is formed exactly in float64 for n <= 2^26
        # (every step an integer below 2^53), and the IEEE division is then the Fraction's rounding; a larger
        # radius (C beyond 2^53) by the exact rational, on those points only
        C = nf.astype(np.float64)
        C *= C - 1.0
        C *= 2.0
        C += 1.0
        out = np.divide(log_n, C, out=C)
        if int(nf.max()) > 2**26:
            for i in np.flatnonzero(nf > 2**26):  # radii beyond 2^26 only (C(n) > 2^53, past 800 p^2)
                out[i] = float(Fraction(float(log_n[i])) / ball_size(int(nf[i])))
        return out.reshape(shape)
    if method == "paper_nolog":
        N = pf * pf  # exact int64 (p <= 2^14)
        big = nf > 11586  # C(11586) > 2^28 >= p^2: such a radius fails the check below (C in int64 for the rest)
        C = np.where(big, 2**28, 2 * nf * nf - 2 * nf + 1)
        bad = C >= N
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DomainError(f"n must satisfy C(n) = 2n^2-2n+1 < p^2 for the 'paper_nolog' form (got n={int(nf[i])}, "
                              f"p={int(pf[i])})")
        return (-log_n / (N * _log_one_minus_ratio(C, N))).reshape(shape)
    metric = "torus" if method == "torus_exact" else "grid"
    out = np.empty(pf.shape)
    ps, inv = np.unique(pf, return_inverse=True)
    inv = inv.reshape(-1)
    for k, q in enumerate(ps):  # one modulus at a time (expected_uncovered takes one p), each radius once
        at = np.flatnonzero(inv == k)
        radii, back = np.unique(nf[at], return_inverse=True)
        r = np.empty(radii.shape)
        for j in range(0, radii.size, _LOCKSTEP_RADII):  # within the coverer-value cache (64 radii)
            r[j:j + _LOCKSTEP_RADII] = _lockstep_fraction(int(q), radii[j:j + _LOCKSTEP_RADII], metric)
        out[at] = r[back.reshape(-1)]
    return out.reshape(shape)


_LOCKSTEP_RADII = 32  # radii bisected together: their coverer values stay cached across the ~2 log2(p) steps


@functools.lru_cache(maxsize=1)
def _log_p_squared() -> np.ndarray:
    """math.log(p^2) for p = 0..MAX_MODULUS (float64; entries 0 and 1 unused): the scalar call's logarithm for
    an array of moduli, by one gather (16,385 logs once, ~2 ms)."""
    return np.array([0.0, 0.0] + [math.log(q * q) for q in range(2, MAX_MODULUS + 1)])


def _lockstep_fraction(p: int, n: np.ndarray, metric: str) -> np.ndarray:
    """The smallest m/p^2 with E[U] < 1 for each radius of `n` (one modulus): the scalar call's bisection on
    the integer m, every point on its own interval (lo, hi], advanced together while any is open."""
    N = p * p
    lo, hi = np.zeros(n.shape, dtype=np.int64), np.full(n.shape, N, dtype=np.int64)
    active = hi - lo > 1
    while active.any():
        at = np.flatnonzero(active)
        mid = (lo[at] + hi[at]) // 2
        below = _expected_uncovered_below_one(p, n[at], mid, metric)
        hi[at[below]] = mid[below]
        lo[at[~below]] = mid[~below]
        active = hi - lo > 1
    return hi / N


def _expected_uncovered_below_one(p: int, n: Any, m: Any, metric: str) -> Any:
    """E[U] < 1, decided exactly: the float value where it is clear of 1 by 1e-8 (its error is <= 1e-12
    below the product-form limit), else integer arithmetic sum_x C(N - s_x, m) < C(N, m) (p = 2, n = 1:
    E[U](3) = 4 C(3,3)/C(4,3) = 1 exactly, which the log-gamma form gave as 0.9999999999999998)."""
    e = expected_uncovered(p, n, m, metric)
    if np.ndim(e):  # arrays of radii and counts: the exact test on the points near 1 only
        out = e < 1.0
        for i in np.flatnonzero(np.abs(e - 1.0) <= 1e-8):
            out[i] = _expected_uncovered_below_one(p, int(n[i]), int(m[i]), metric)
        return out
    if abs(e - 1.0) > 1e-8:
        return e < 1.0
    N = p * p
    vals, mult = _coverer_values(p, min(n, 2 * p - 1), metric)
    return sum(k * math.comb(N - v, m) for v, k in zip(vals, mult)) < math.comb(N, m)


@cites("uniformity:thm3.12")
def full_coverage_probability_lower_bound(p: int, n: Any, m: Any, metric: str = "torus") -> float | np.ndarray:
    r"""Markov bound Pr[U = 0] ≥ max(0, 1 − E[U]) on the probability that every point is covered.

    E[U] is the exact `expected_uncovered` (m training points drawn without replacement).

    Parameters
    ----------
    p : int or array_like of int
        The modulus p, an integer in [2, `MAX_MODULUS`] (an array of moduli broadcasts against `n` and `m`;
        each distinct modulus is evaluated once, on its own points).
    n : int or array_like
        The radius n, an integer ≥ 1 (an array of radii broadcasts against `m`).
    m : int or array_like
        The number of training points, an integer in [0, p²] (an array broadcasts against `n`).
    metric : {"torus", "grid"}, optional
        `"torus"` (default, wrap-around distances) or `"grid"` (the bounded grid).

    Returns
    -------
    float or ndarray
        The lower bound, in [0, 1].

    Raises
    ------
    DomainError
        If `p`, `n` or `m` is outside its range or `metric` is unknown.

    References
    ----------
    Spec ID `uniformity:thm3.12` (paper Theorem 3.12).
    """
    return V.scalar_or_array(np.maximum(0.0, 1.0 - np.asarray(expected_uncovered(p, n, m, metric))))


def _p_n_m_arrays(p: Any, n: Any, m: Any) -> tuple:
    """(shape, p, n, m, N = p^2) as flat int64 arrays for moduli in [2, MAX_MODULUS], radii >= 1 (capped at 2^26,
    beyond which no value changes) and counts m in [0, p^2] at each point, broadcast together."""
    pa = _count_arg(p, "p", 2, None)
    _grid_size(int(pa.max()))  # the largest modulus checked <= MAX_MODULUS (its message)
    nn, mm = _count_arg(n, "n", 1, 2**26), _count_arg(m, "m", 0, None)
    try:
        pb, nb, mb = np.broadcast_arrays(pa, nn, mm)
    except ValueError:
        raise DomainError(f"p, n, m must broadcast against each other (got shapes p {pa.shape}, n {nn.shape}, "
                          f"m {mm.shape})") from None
    pf, nf, mf = (np.ascontiguousarray(x).reshape(-1) for x in (pb, nb, mb))
    N = pf * pf  # exact (p <= 2^14)
    over = mf > N
    if over.any():
        i = int(np.flatnonzero(over)[0])
        raise DomainError(f"m must be in [0, p^2] = [0, {int(N[i])}] (got {int(mf[i])})")
    return pb.shape, pf, nf, mf, N


def _per_modulus(fn: Any, p: Any, n: Any, m: Any, option: Any) -> np.ndarray:
    """``fn(p, n, m, option)`` for an array of moduli p broadcast against n and m: the scalar-p engine once per
    distinct modulus, on that modulus's points (each point gets the values of its own scalar-p call)."""
    shape, pf, nf, mf, _ = _p_n_m_arrays(p, n, m)
    out = np.empty(pf.shape)
    order = np.argsort(pf, kind="stable")  # the points of each modulus together: one sort, no mask per modulus
    ps, starts = np.unique(pf[order], return_index=True)
    for q, lo, hi in zip(ps, starts, [*starts[1:], pf.size]):
        at = order[lo:hi]
        out[at] = fn(int(q), nf[at], mf[at], option)
    return out.reshape(shape)
