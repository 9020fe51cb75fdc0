"""Theorem 3.10 as an exact test-accuracy ceiling: distances, token coverage, ceilings (spec `uniformity` §5)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import ndimage

from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._results import TokensSeen
from ._common import _labels, _mask, _metric, _p_of, _radius, _share_below, _test_mask

__all__ = ["accuracy_ceiling", "accuracy_ceiling_curve", "coverage_fraction", "distance_to_set", "implied_radius",
           "manhattan_distance", "same_label_distance", "token_coverage_mask", "token_seen"]


@cites("uniformity:thm3.10")
@V.broadcasting("x", "y")
def manhattan_distance(x: Any, y: Any, p: int | None = None, metric: str = "torus") -> Any:
    r"""Manhattan (L1) distance between points of ℤ_p², on the torus or on the grid; broadcasting.

    .. math:: d_{\rm grid}=|a-a'|+|b-b'|,\qquad d_{\rm torus}=\sum_{c}\min(|c-c'|,\,p-|c-c'|)

    In words: on the grid, |a − a′| + |b − b′|; on the torus each coordinate difference is taken the
    short way round, min(|c − c′|, p − |c − c′|).

    Parameters
    ----------
    x : array_like of int
        First point(s), an integer array whose last axis is (a, b), shape (2,) or (..., 2).
    y : array_like of int
        Second point(s), an integer array of shape (2,) or (..., 2), broadcasting against `x`.
    p : int, optional
        The modulus p, an integer ≥ 2; required for `metric="torus"`, ignored for `"grid"`.  Default
        `None`.
    metric : {"torus", "grid"}, optional
        `"torus"` (default; the reading Table 1 supports, erratum uniformity-1) or `"grid"` (the
        literal reading of Theorem 3.10).

    Returns
    -------
    int or numpy.ndarray
        The distance, an int for a single pair, else an int64 array of the broadcast shape without
        the last axis.

    Raises
    ------
    DomainError
        If `x` or `y` is not an integer array with a last axis of length 2, the shapes do not
        broadcast, `metric` is unknown, or `p` is missing or < 2 for the torus.

    References
    ----------
    Spec ID `uniformity:thm3.10` (paper Theorem 3.10).
    """
    metric = _metric(metric)
    xa = np.asarray(x)
    ya = np.asarray(y)
    for nm, v in (("x", xa), ("y", ya)):
        if v.shape[-1:] != (2,) or not np.issubdtype(v.dtype, np.integer):
            raise DomainError(f"{nm} must be integer points with last axis of length 2 (got shape {v.shape}, {v.dtype})")
    d = np.abs(xa.astype(np.int64) - ya.astype(np.int64))
    if metric == "torus":
        if p is None:
            raise DomainError("p must be given for metric 'torus' (got None)")
        p = V.integer_at_least(p, "p", 2)
        d = np.mod(d, p)
        d = np.minimum(d, p - d)
    s = d.sum(axis=-1)
    return int(s) if s.ndim == 0 else s


def _cdt(mask: np.ndarray, metric: str) -> np.ndarray:
    """Exact L1 distance from every cell to the nearest True cell (float; inf if none)."""
    p0, p1 = mask.shape
    if not mask.any():
        return np.full(mask.shape, np.inf)
    if metric == "torus":
        big = np.tile(mask, (3, 3))
        d = ndimage.distance_transform_cdt(~big, metric="taxicab")[p0:2 * p0, p1:2 * p1]
    else:
        d = ndimage.distance_transform_cdt(~mask, metric="taxicab")
    return d.astype(np.float64)


@cites("uniformity:thm3.10")
def distance_to_set(mask: Any, metric: str = "torus", *, p: int | None = None) -> np.ndarray:
    r"""Exact L1 distance d(x, T) = min over t ∈ T of d(x, t) from every point x of ℤ_p² to a set T.

    A two-pass taxicab chamfer transform (`scipy.ndimage.distance_transform_cdt`), exact for the L1
    metric on the 4-neighbour lattice; on the torus it is applied to the 3 × 3 tiling of the mask and the
    centre block is kept (the nearest periodic image of every point lies in the tiling).  `inf`
    everywhere if the set is empty.

    Parameters
    ----------
    mask : array_like
        The set T, in any form of `grokclocks.task.as_mask`: a bool or 0/1 array of shape (p, p) or
        (p·p,) indexed [a, b], or integer pair indices (flat a·p + b, shape (n,), or rows (a, b),
        shape (n, 2)), which need `p`.
    metric : {"torus", "grid"}, optional
        `"torus"` (default, wrap-around distances) or `"grid"` (no wrap-around).
    p : int, optional
        The modulus p, an integer ≥ 2; needed only for a mask given as pair indices.  Default `None`.

    Returns
    -------
    numpy.ndarray
        float64 array of shape (p, p): entry [a, b] is d((a, b), T), an integer value or `inf`.

    Raises
    ------
    DomainError
        If `mask` is not a valid mask or index set (see `grokclocks.task.as_mask`), or `metric` is
        unknown.

    References
    ----------
    Spec ID `uniformity:thm3.10` (paper Theorem 3.10).
    """
    m = _mask(mask, "mask", p)
    return _cdt(m, _metric(metric))


@cites("uniformity:thm3.10")
def same_label_distance(train_mask: Any, labels: Any, metric: str = "torus") -> np.ndarray:
    r"""Distance Δ_f(x) from every point x to the nearest training point with the same label.

    .. math:: \Delta_f(x)=\min\{d(x,t): t\in T,\ f(t)=f(x)\}\qquad(\min\emptyset=+\infty)

    In words: the L1 distance from x to the closest t in T with f(t) = f(x), `inf` when no training
    point has that label; one exact distance transform per label class present in T.

    Parameters
    ----------
    train_mask : array_like
        The training set T, in any form of `grokclocks.task.as_mask` (a bool or 0/1 (p, p) or (p·p,)
        mask, or integer pair indices; p is read from `labels`).
    labels : array_like of int
        The label table f, an integer array of shape (p, p) indexed [a, b] (e.g. from `label_table`).
    metric : {"torus", "grid"}, optional
        `"torus"` (default, wrap-around distances) or `"grid"` (no wrap-around).

    Returns
    -------
    numpy.ndarray
        float64 array of shape (p, p): integer distances or `inf`.

    Raises
    ------
    DomainError
        If `train_mask` is not a valid mask, `labels` is not an integer (p, p) array matching it, or
        `metric` is unknown.

    References
    ----------
    Spec ID `uniformity:thm3.10` (paper Theorem 3.10).
    """
    t = _mask(train_mask, p=_p_of(labels))
    lab = _labels(labels, t.shape)
    metric = _metric(metric)
    out = np.full(t.shape, np.inf)
    for r in np.unique(lab[t]):
        cls = lab == r
        out[cls] = _cdt(t & cls, metric)[cls]
    return out


@cites("uniformity:thm3.10", "uniformity:setup")
def token_seen(train_mask: Any, b_offset: int = 0, *, p: int | None = None) -> TokensSeen:
    r"""Which operand tokens occur in some training pair, for a vocabulary layout.

    Token ids are a (first operand) and b + d (second operand, d = `b_offset`); an id is seen if it
    occurs in any training pair in either position.  `b_offset = 0` is the shared vocabulary of the
    authors' base.py and rec.py; `b_offset = 60` is str.py.

    Parameters
    ----------
    train_mask : array_like
        The training set, in any form of `grokclocks.task.as_mask` (a bool or 0/1 (p, p) or (p·p,)
        mask, or integer pair indices, which need `p`).
    b_offset : int, optional
        Offset d of the second operand's token ids, an integer ≥ 0 (default 0: shared vocabulary).
    p : int, optional
        The modulus p, an integer ≥ 2; needed only for a training set given as pair indices.  Default
        `None`.

    Returns
    -------
    TokensSeen
        The named tuple (seen_a, seen_b) of boolean arrays of shape (p,): whether the token of
        first-operand value a, or of second-operand value b, is trained.

    Raises
    ------
    DomainError
        If `train_mask` is not a valid mask or index set, or `b_offset` is not an integer ≥ 0.

    References
    ----------
    Spec IDs `uniformity:thm3.10` (paper Theorem 3.10, the token-coverage factor) and
    `uniformity:setup` (§6.1, the vocabulary layout).
    """
    t = _mask(train_mask, p=p)
    d = V.integer_at_least(b_offset, "b_offset", 0)
    p = t.shape[0]
    seen = np.zeros(p + d, dtype=bool)
    seen[:p] |= t.any(axis=1)
    seen[d:d + p] |= t.any(axis=0)
    return TokensSeen(seen[:p].copy(), seen[d:d + p].copy())


@cites("uniformity:thm3.10")
def token_coverage_mask(train_mask: Any, b_offset: int = 0, *, p: int | None = None) -> np.ndarray:
    r"""Pairs whose two operand tokens are both trained: seen_a[a] ∧ seen_b[b] (see `token_seen`).

    Parameters
    ----------
    train_mask : array_like
        The training set, in any form of `grokclocks.task.as_mask` (a bool or 0/1 (p, p) or (p·p,)
        mask, or integer pair indices, which need `p`).
    b_offset : int, optional
        Offset d of the second operand's token ids, an integer ≥ 0 (default 0: shared vocabulary).
    p : int, optional
        The modulus p, an integer ≥ 2; needed only for a training set given as pair indices.  Default
        `None`.

    Returns
    -------
    numpy.ndarray
        Boolean array of shape (p, p): entry [a, b] is `True` if both tokens of (a, b) occur in
        training pairs.

    Raises
    ------
    DomainError
        If `train_mask` is not a valid mask or index set, or `b_offset` is not an integer ≥ 0.

    References
    ----------
    Spec ID `uniformity:thm3.10` (paper Theorem 3.10, the token-coverage factor).
    """
    sa, sb = token_seen(train_mask, b_offset, p=p)
    return sa[:, None] & sb[None, :]


def _delta_on_test(train_mask, labels, metric, test_mask, b_offset):
    # the one mask convention of grokclocks.task: bool or 0/1 (p, p), flat (p*p,), or pair indices;
    # p comes from the label table
    t = _mask(train_mask, p=_p_of(labels))
    lab = _labels(labels, t.shape)
    metric = _metric(metric)
    s = _test_mask(t, test_mask)
    delta = same_label_distance(t, lab, metric)
    if b_offset is not None:
        delta = np.where(token_coverage_mask(t, b_offset), delta, np.inf)
    return delta[s], int(s.sum())


@cites("uniformity:thm3.10")
def accuracy_ceiling(train_mask: Any, labels: Any, n: Any, metric: str = "torus", test_mask: Any = None,
                     b_offset: int | None = None) -> Any:
    r"""Theorem 3.10 as an exact ceiling on the test accuracy of a split.

    .. math:: \mathrm{Ceil}_f(n)=\frac{|\{x\in S:\ \Delta_f(x)<n\ [\wedge\ \text{both tokens of } x \text{ trained}]\}|}{|S|}

    In words: the fraction of test points x whose nearest same-label training point is closer than n
    (`same_label_distance`), optionally also requiring both tokens of x to be trained (the token
    factor).  A model that only imitates same-label training points within radius n cannot exceed it.

    Parameters
    ----------
    train_mask : array_like
        The training set T, in any form of `grokclocks.task.as_mask`: a bool or 0/1 (p, p) or (p·p,)
        mask indexed [a, b], or integer pair indices a·p + b (shape (n,)) or rows (a, b) (shape
        (n, 2)); p is read from `labels`.
    labels : array_like of int
        The label table f, an integer array of shape (p, p) indexed [a, b] (e.g. from `label_table`).
    n : int or float or array_like
        The radius n, an integer ≥ 1, or `math.inf` (then: the label occurs in T); an array of radii gives the
        ceiling at each (the split's distances computed once).
    metric : {"torus", "grid"}, optional
        `"torus"` (default; the reading Table 1 supports, erratum uniformity-1) or `"grid"` (the
        literal reading).
    test_mask : array_like, optional
        The test set S, in the same forms as `train_mask`; must be non-empty.  Default `None`: the
        complement of `train_mask`.
    b_offset : int, optional
        Vocabulary layout of the token factor: an integer ≥ 0 applies it for that offset of the second
        operand's token ids (see `token_seen`).  Default `None`: no token factor.

    Returns
    -------
    float or numpy.ndarray
        The ceiling, in [0, 1]: a float for one radius, a float64 array of the shape of `n` for an array.

    Raises
    ------
    DomainError
        If a mask or `labels` is invalid or they disagree in p, the test set is empty, `n` is not an
        integer ≥ 1 or `inf`, `metric` is unknown, or `b_offset` is negative.

    References
    ----------
    Spec ID `uniformity:thm3.10` (paper Theorem 3.10; torus reading, erratum uniformity-1; token factor,
    erratum uniformity-4).
    """
    n = _radius(n)
    d, ns = _delta_on_test(train_mask, labels, metric, test_mask, b_offset)
    return _share_below(d, n, ns)


@cites("uniformity:thm3.10")
def accuracy_ceiling_curve(train_mask: Any, labels: Any, n_max: int, metric: str = "torus", test_mask: Any = None,
                           b_offset: int | None = None) -> np.ndarray:
    r"""The ceilings Ceil_f(n) of `accuracy_ceiling` for n = 1, …, n_max, in one pass.

    One distance transform and a cumulative histogram of the distances serve every radius.

    Parameters
    ----------
    train_mask : array_like
        The training set T, in any form of `grokclocks.task.as_mask` (p is read from `labels`).
    labels : array_like of int
        The label table f, an integer array of shape (p, p) indexed [a, b].
    n_max : int
        The largest radius, an integer ≥ 1 (one ceiling per radius is returned; at most 2³⁰).
    metric : {"torus", "grid"}, optional
        `"torus"` (default) or `"grid"`.
    test_mask : array_like, optional
        The test set S, in the same forms as `train_mask`; must be non-empty.  Default `None`: the
        complement of `train_mask`.
    b_offset : int, optional
        Vocabulary layout of the token factor, an integer ≥ 0.  Default `None`: no token factor.

    Returns
    -------
    numpy.ndarray
        float64 array of shape (n_max,): entry n − 1 is `accuracy_ceiling` at radius n, non-decreasing
        in n.

    Raises
    ------
    DomainError
        If a mask or `labels` is invalid, the test set is empty, `n_max` is not an integer in
        [1, 2³⁰], `metric` is unknown, or `b_offset` is negative.

    References
    ----------
    Spec ID `uniformity:thm3.10` (paper Theorem 3.10).
    """
    n_max = V.integer_at_least(n_max, "n_max", 1)
    V.max_size(float(n_max), "n_max", n_max)  # one ceiling per radius is returned
    d, ns = _delta_on_test(train_mask, labels, metric, test_mask, b_offset)
    fin = d[np.isfinite(d)].astype(np.int64)
    counts = np.bincount(np.minimum(fin, n_max), minlength=n_max + 1)[:n_max]
    return np.cumsum(counts).astype(np.float64) / ns


@cites("uniformity:thm3.10", "uniformity:table1")
def implied_radius(train_mask: Any, labels: Any, accuracy: float, metric: str = "torus", test_mask: Any = None,
                   b_offset: int | None = None) -> int | None:
    r"""Smallest radius n with Ceil_f(n) ≥ `accuracy`: the radius a measured accuracy implies.

    Parameters
    ----------
    train_mask : array_like
        The training set T, in any form of `grokclocks.task.as_mask` (p is read from `labels`).
    labels : array_like of int
        The label table f, an integer array of shape (p, p) indexed [a, b].
    accuracy : float
        A test accuracy, as a fraction in [0, 1] (0 gives radius 1).
    metric : {"torus", "grid"}, optional
        `"torus"` (default) or `"grid"`.
    test_mask : array_like, optional
        The test set S, in the same forms as `train_mask`; must be non-empty.  Default `None`: the
        complement of `train_mask`.
    b_offset : int, optional
        Vocabulary layout of the token factor, an integer ≥ 0.  Default `None`: no token factor.

    Returns
    -------
    int or None
        The radius n ≥ 1; `None` if even the ceiling at n = ∞ is below `accuracy`.

    Raises
    ------
    DomainError
        If `accuracy` is outside [0, 1], a mask or `labels` is invalid, the test set is empty, `metric`
        is unknown, or `b_offset` is negative.

    References
    ----------
    Spec IDs `uniformity:thm3.10` (paper Theorem 3.10) and `uniformity:table1` (Table 1, the implied
    radius).
    """
    acc = V.as_float_array(accuracy, "accuracy", scalar=True)
    if not 0.0 <= acc <= 1.0:
        raise DomainError(f"accuracy must be in [0, 1] (got {acc!r})")
    d, ns = _delta_on_test(train_mask, labels, metric, test_mask, b_offset)
    fin = np.sort(d[np.isfinite(d)])
    # smallest count k of covered test points with k / |S| >= accuracy
    ok = np.nonzero(np.arange(fin.size + 1) / ns >= acc)[0]
    if ok.size == 0:
        return None
    k = int(ok[0])
    return 1 if k == 0 else int(fin[k - 1]) + 1


@cites("uniformity:thm3.10", "uniformity:thm3.12")
def coverage_fraction(train_mask: Any, n: Any, metric: str = "torus", over: str = "all", test_mask: Any = None, *,
                      p: int | None = None) -> Any:
    r"""The paper's prop(n): fraction of points within distance < n of some training point.

    .. math:: \mathrm{prop}(n)=\frac{|\{x\in A: d(x,T)<n\}|}{|A|},\quad A=D\ (\texttt{over="all"})\ \text{or}\ S\ (\texttt{"test"})

    In words: the share of the points of A, all of ℤ_p² or the test set, whose L1 distance to the
    training set T is less than n.  Labels are ignored; training points are covered for every n ≥ 1;
    an empty training set gives 0.

    Parameters
    ----------
    train_mask : array_like
        The training set T, in any form of `grokclocks.task.as_mask` (pair indices need `p`).
    n : int or float or array_like
        The radius n, an integer ≥ 1, or `math.inf`; an array of radii gives prop(n) at each (the distances
        computed once).
    metric : {"torus", "grid"}, optional
        `"torus"` (default) or `"grid"`.
    over : {"all", "test"}, optional
        The reference set A: `"all"` (default) every point of ℤ_p², `"test"` the test set.
    test_mask : array_like, optional
        The test set S, in any form of `grokclocks.task.as_mask` (p from `train_mask`); read only with
        `over="test"`, where `None` (default) means the complement of `train_mask`.
    p : int, optional
        The modulus p, an integer ≥ 2; needed only for a training set given as pair indices.  Default
        `None`.

    Returns
    -------
    float or numpy.ndarray
        prop(n), in [0, 1]: a float for one radius, a float64 array of the shape of `n` for an array.

    Raises
    ------
    DomainError
        If a mask is invalid, `n` is not an integer ≥ 1 or `inf`, `metric` or `over` is unknown, a
        `test_mask` is given with `over="all"`, or the test set is empty.

    References
    ----------
    Spec IDs `uniformity:thm3.10` (paper Theorem 3.10) and `uniformity:thm3.12` (Theorem 3.12).
    """
    t = _mask(train_mask, p=p)
    n = _radius(n)
    over = V.choice(over, "over", ("all", "test"))
    d = _cdt(t, _metric(metric))
    if over == "all":
        if test_mask is not None:  # it was ignored, whatever its shape
            raise DomainError("test_mask is read only with over='test' (got over='all' and a test_mask)")
        return _share_below(d, n, d.size)
    s = _test_mask(t, test_mask)
    return _share_below(d[s], n, int(s.sum()))
