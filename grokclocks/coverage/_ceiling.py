"""Theorem 3.10 as an exact test-accuracy ceiling: distances, token coverage, ceilings (spec ``uniformity`` §5)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import ndimage

from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._results import TokensSeen
from ._common import _labels, _mask, _metric, _p_of, _radius, _test_mask

__all__ = ["accuracy_ceiling", "accuracy_ceiling_curve", "coverage_fraction", "distance_to_set", "implied_radius",
           "manhattan_distance", "same_label_distance", "token_coverage_mask", "token_seen"]


@cites("uniformity:thm3.10")
@V.broadcasting("x", "y")
def manhattan_distance(x: Any, y: Any, p: int | None = None, metric: str = "torus") -> Any:
    r"""Manhattan distance between points of :math:`\mathbb Z_p^2` (last axis = ``(a, b)``; broadcasting).

    .. math:: d_{\rm grid}=|a-a'|+|b-b'|,\qquad d_{\rm torus}=\sum_{c}\min(|c-c'|,\,p-|c-c'|)

    ``p`` is required for ``metric="torus"`` (integer >= 2).  Scalars out for single pairs (int).

    References
    ----------
    Spec ``uniformity:thm3.10`` (§5).
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
    r"""Exact L1 distance transform: :math:`d(x,T)=\min_{t\in T}d(x,t)` for every :math:`x\in D`.

    Two-pass taxicab chamfer transform (``scipy.ndimage.distance_transform_cdt``), exact for the L1
    metric on the 4-neighbour lattice; on the torus it is applied to the 3x3 tiling and the centre block
    is kept (the nearest periodic image of every point lies in the tiling).  ``inf`` everywhere if the
    mask is empty.

    Parameters
    ----------
    mask : the set :math:`T` in any form of :func:`grokclocks.task.as_mask` (bool or 0/1 ``(p, p)``, flat
        ``(p*p,)``, or integer pair indices, which need ``p``).
    metric : ``"torus"`` (default) or ``"grid"``.
    p : int >= 2, optional; the modulus, needed only for a mask given as pair indices.

    Returns
    -------
    float64 array ``(p, p)``.

    References
    ----------
    Spec ``uniformity:thm3.10`` (§5).
    """
    m = _mask(mask, "mask", p)
    return _cdt(m, _metric(metric))


@cites("uniformity:thm3.10")
def same_label_distance(train_mask: Any, labels: Any, metric: str = "torus") -> np.ndarray:
    r"""Distance to the nearest *same-label* training point, on the whole grid.

    .. math:: \Delta_f(x)=\min\{d(x,t): t\in T,\ f(t)=f(x)\}\qquad(\min\emptyset=+\infty)

    One exact distance transform per label class present in :math:`T`.

    Parameters
    ----------
    train_mask : any form of :func:`grokclocks.task.as_mask`; labels : integer ``(p, p)`` (e.g. :func:`label_table`);
    metric : ``"torus"`` | ``"grid"``.

    Returns
    -------
    float64 ``(p, p)`` (integers or ``inf``).

    References
    ----------
    Spec ``uniformity:thm3.10`` (§5).
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

    Token ids are :math:`a` (first operand) and :math:`b+d` (second operand, ``d = b_offset``); an id
    is *seen* if it occurs in any training pair in either position.  ``b_offset = 0`` is the shared
    vocabulary of ``base.py``/``rec.py``; ``b_offset = 60`` is ``str.py``.

    ``train_mask`` takes any form of :func:`grokclocks.task.as_mask` (pair indices need ``p``).

    Returns
    -------
    TokensSeen
        ``(seen_a, seen_b)``: boolean arrays ``(p,)``, whether the token of first-operand value ``a`` /
        second-operand value ``b`` is trained.

    References
    ----------
    Spec ``uniformity:thm3.10`` (§5, token-coverage factor), ``uniformity:setup`` (§7 layout).
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
    r"""Pairs whose two operand tokens are both trained: :math:`\mathrm{seen}_a[a]\wedge\mathrm{seen}_b[b]`.

    ``train_mask`` takes any form of :func:`grokclocks.task.as_mask` (pair indices need ``p``).

    References: spec ``uniformity:thm3.10`` (§5, token-coverage factor).
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
                     b_offset: int | None = None) -> float:
    r"""Theorem 3.10 as an exact ceiling on the test accuracy of a split.

    .. math:: \mathrm{Ceil}_f(n)=\frac{|\{x\in S:\ \Delta_f(x)<n\ [\wedge\ \text{both tokens of } x \text{ trained}]\}|}{|S|}

    Parameters
    ----------
    train_mask : the training set in any form of :func:`grokclocks.task.as_mask`: bool or 0/1 ``(p, p)``,
        flat ``(p*p,)``, or integer pair indices ``a*p + b`` / rows ``(a, b)``; labels : integer ``(p, p)``.
    n : int >= 1 or ``math.inf`` (the radius; ``inf`` = the label occurs in :math:`T`).
    metric : ``"torus"`` (default; the reading Table 1 supports) or ``"grid"`` (the literal reading).
    test_mask : same forms as ``train_mask``, default the complement of ``train_mask``; must be non-empty.
    b_offset : ``None`` skips the token factor; an int >= 0 applies it for that vocabulary layout.

    Returns
    -------
    float in [0, 1].

    References
    ----------
    Spec ``uniformity:thm3.10`` (§5; torus reading, erratum uniformity-1; token factor, uniformity-4).
    """
    n = _radius(n)
    d, ns = _delta_on_test(train_mask, labels, metric, test_mask, b_offset)
    return float(np.count_nonzero(d < n)) / ns


@cites("uniformity:thm3.10")
def accuracy_ceiling_curve(train_mask: Any, labels: Any, n_max: int, metric: str = "torus", test_mask: Any = None,
                           b_offset: int | None = None) -> np.ndarray:
    r""":math:`\mathrm{Ceil}_f(n)` for :math:`n=1,\dots,n_{\max}` in one pass (one transform, cumulative histogram).

    Returns float64 ``(n_max,)``; entry ``n-1`` is :func:`accuracy_ceiling` at radius ``n``.

    References
    ----------
    Spec ``uniformity:thm3.10`` (§5).
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
    r"""Smallest radius :math:`n` with :math:`\mathrm{Ceil}_f(n)\ge` ``accuracy``; ``None`` if even :math:`n=\infty` is below.

    ``accuracy`` in [0, 1].  (``accuracy = 0`` gives 1.)

    References
    ----------
    Spec ``uniformity:thm3.10`` (§5), ``uniformity:table1`` (§8, "implied radius").
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
                      p: int | None = None) -> float:
    r"""The paper's *prop*: fraction of points within distance :math:`<n` of *some* training point.

    .. math:: \mathrm{prop}(n)=\frac{|\{x\in A: d(x,T)<n\}|}{|A|},\quad A=D\ (\texttt{over="all"})\ \text{or}\ S\ (\texttt{"test"})

    Labels are ignored; training points are covered for every ``n >= 1``.  Empty training set: 0.
    ``train_mask`` and ``test_mask`` take any form of :func:`grokclocks.task.as_mask` (pair indices need ``p``
    for ``train_mask``; ``test_mask`` takes ``p`` from it).

    References
    ----------
    Spec ``uniformity:thm3.10`` (§5), ``uniformity:thm3.12`` (§10).
    """
    t = _mask(train_mask, p=p)
    n = _radius(n)
    over = V.choice(over, "over", ("all", "test"))
    d = _cdt(t, _metric(metric))
    if over == "all":
        if test_mask is not None:  # it was ignored, whatever its shape
            raise DomainError("test_mask is read only with over='test' (got over='all' and a test_mask)")
        return float(np.count_nonzero(d < n)) / d.size
    s = _test_mask(t, test_mask)
    return float(np.count_nonzero(d[s] < n)) / int(s.sum())
