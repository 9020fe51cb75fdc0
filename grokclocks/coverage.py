r"""Training-set coverage, exact test-accuracy ceilings, split designs and MED (spec ``uniformity``).

Gu, Chen, Zhang, Hu, Cao, *Beyond Progress Measures: Theoretical Insights into the Mechanism of
Grokking* (arXiv:2504.03162).  The task is :math:`(a,b)\mapsto f(a,b)\bmod p` on
:math:`D=\mathbb Z_p\times\mathbb Z_p`; a training set is a boolean ``(p, p)`` mask indexed ``[a, b]``; every function taking a
training set also accepts the flat ``(p*p,)`` and the index forms of :func:`grokclocks.task.as_mask`.

Contents
--------
* task and labels: :func:`label_table`, :func:`code_labels`, :func:`equivalence_classes`, :func:`class_sizes`;
* norm lemmas: :func:`operator_norm_bounds` (Lemma 3.4), :func:`min_opnorm_single_class`,
  :func:`rank1_min_norm_map` (Lemma B.1);
* qualitative theorems, measured: :func:`class_target_residuals` (Lemma 3.2 / Thm 3.5),
  :func:`consecutive_embedding_diffs` (Thm 3.8);
* Theorem 3.10 as an exact ceiling: :func:`manhattan_distance`, :func:`distance_to_set`,
  :func:`same_label_distance`, :func:`token_seen`, :func:`token_coverage_mask`, :func:`accuracy_ceiling`,
  :func:`accuracy_ceiling_curve`, :func:`implied_radius`, :func:`coverage_fraction`;
* Theorem 3.12: :func:`ball_size`, :func:`ball_size_torus`, :func:`coverer_counts`, :func:`expected_uncovered`,
  :func:`expected_uncovered_paper`, :func:`required_train_fraction`, :func:`full_coverage_probability_lower_bound`;
* designs of Table 1: :func:`square_design`, :func:`strip_design`, :func:`random_design`, :func:`designed_split`
  (defined in :mod:`grokclocks.task`, with :func:`label_table`, :func:`code_labels`, :func:`token_ids` and
  :data:`MAX_MODULUS`; importable from here as before);
* progress measures: :func:`progress_measure_fit` (Def 4.1), :func:`main_embedding_diff`, :func:`med_trajectory`,
  :func:`med_code_mlp` (Def 4.2);
* Table 1 and run analysis: :func:`table1`, :func:`table1_ceilings`, :func:`go_epoch`, :func:`u_acc_l_acc`,
  :func:`med_loss_spearman`, :func:`analyse_run`; setup: :func:`experimental_setup`, :func:`token_ids`.

Functions that build :math:`p\times p` tables from an integer ``p`` (labels, classes, coverer counts,
:math:`\mathbb E[U]`, designs) accept ``p <=`` :data:`MAX_MODULUS` (:math:`2^{14}`) and raise
``DomainError`` beyond it: their cost is :math:`O(p^2)` memory and time.

Pure numpy/scipy; never imports JAX.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy import ndimage, special, stats

from . import _floats as FL
from . import _validate as V
from . import task as _task
from ._validate import DomainError
from .citations import cites
# the modular task's data conventions live in grokclocks.task; their old paths here keep working
from .task import (MAX_MODULUS, OPERATIONS, _grid_size, _is_prime, _prime, code_labels, designed_split, label_table,  # noqa: F401
                   random_design, square_design, strip_design, token_ids)

#: The operations of :func:`label_table` by name (:data:`grokclocks.task.OPERATIONS`).
OPS = OPERATIONS


# ------------------------------------------------------------------------------------------ named results


class OperatorNormBounds(NamedTuple):
    r"""Lemma 3.4's sandwich :math:`\|A\|_2\le\|A\|_F\le\sqrt{\operatorname{rank}A}\,\|A\|_2` (:func:`operator_norm_bounds`)."""

    op_norm: float
    fro_norm: float
    rank: int
    sqrt_rank_op_norm: float


class ClassResiduals(NamedTuple):
    r"""Per-class residuals :math:`\varepsilon_r` of Lemma 3.2 (:func:`class_target_residuals`)."""

    classes: np.ndarray
    eps: np.ndarray
    in_cone: np.ndarray


class TokensSeen(NamedTuple):
    """Whether each operand token occurs in a training pair (:func:`token_seen`)."""

    seen_a: np.ndarray
    seen_b: np.ndarray


class ThresholdRule(NamedTuple):
    r"""Best rule :math:`h(v)=\mathbb 1[v\ \mathrm{direction}\ \tau]` of Def. 4.1 and its agreement (:func:`progress_measure_fit`)."""

    tau: float
    direction: str
    agreement: float


class CodeMED(NamedTuple):
    """MED of the authors' MLP code and the Frobenius norm beside it (:func:`med_code_mlp`)."""

    med: float
    fro: float


class AccuracyExtremes(NamedTuple):
    """Table 1's U-Acc, L-Acc and the record index of U-Acc (:func:`u_acc_l_acc`)."""

    u_acc: float
    l_acc: float
    u_acc_index: int

__all__ = [
    "OperatorNormBounds",
    "ClassResiduals",
    "TokensSeen",
    "ThresholdRule",
    "CodeMED",
    "AccuracyExtremes",
    "OPS",
    "MAX_MODULUS",
    "label_table",
    "code_labels",
    "equivalence_classes",
    "class_sizes",
    "operator_norm_bounds",
    "min_opnorm_single_class",
    "rank1_min_norm_map",
    "class_target_residuals",
    "consecutive_embedding_diffs",
    "manhattan_distance",
    "distance_to_set",
    "same_label_distance",
    "token_seen",
    "token_coverage_mask",
    "accuracy_ceiling",
    "accuracy_ceiling_curve",
    "implied_radius",
    "coverage_fraction",
    "ball_size",
    "ball_size_torus",
    "coverer_counts",
    "expected_uncovered",
    "expected_uncovered_paper",
    "required_train_fraction",
    "full_coverage_probability_lower_bound",
    "square_design",
    "strip_design",
    "random_design",
    "designed_split",
    "progress_measure_fit",
    "main_embedding_diff",
    "med_trajectory",
    "med_code_mlp",
    "table1",
    "table1_ceilings",
    "go_epoch",
    "u_acc_l_acc",
    "med_loss_spearman",
    "analyse_run",
    "experimental_setup",
    "token_ids",
]

METRICS = ("torus", "grid")


# ------------------------------------------------------------------------------------------ helpers


def _metric(metric: Any) -> str:
    return V.choice(metric, "metric", METRICS)


def _mask(mask: Any, name: str = "train_mask", p: int | None = None) -> np.ndarray:
    """A training set in any form of :func:`grokclocks.task.as_mask`, as bool ``(p, p)``."""
    return _task.as_mask(mask, p, name=name)


def _p_of(labels: Any) -> int | None:
    """``p`` of a square label table (to read a mask given as pair indices), else None."""
    shape = np.shape(labels)
    return int(shape[0]) if len(shape) == 2 and shape[0] == shape[1] and shape[0] >= 2 else None


def _labels(labels: Any, shape: tuple[int, int]) -> np.ndarray:
    lab = np.asarray(labels)
    if lab.shape != shape:
        raise DomainError(f"labels must have the mask's shape {shape} (got {lab.shape})")
    if not np.issubdtype(lab.dtype, np.integer):
        if np.issubdtype(lab.dtype, np.floating) and np.all(np.isfinite(lab)) and np.all(lab == np.round(lab)):
            lab = lab.astype(np.int64)
        else:
            raise DomainError(f"labels must be integers (got dtype {lab.dtype})")
    return lab.astype(np.int64)


def _radius(n: Any, name: str = "n") -> float:
    """An integer >= 1 or math.inf (returned as float)."""
    if isinstance(n, (float, np.floating)) and math.isinf(n) and n > 0:
        return math.inf
    return float(V.integer_at_least(n, name, 1))


def _test_mask(train: np.ndarray, test_mask: Any) -> np.ndarray:
    if test_mask is None:
        s = ~train
    else:
        s = _mask(test_mask, "test_mask", train.shape[0])
        if s.shape != train.shape:
            raise DomainError(f"test_mask must have the train mask's shape {train.shape} (got {s.shape})")
    if not s.any():
        raise DomainError("test set must not be empty (no test points)")
    return s


# ------------------------------------------------------------------------------------------ §0, §1


@cites("uniformity:def3.1")
def equivalence_classes(p: int, op: str | Callable[[Any, Any], Any] = "add") -> list[np.ndarray]:
    r"""Label classes of :math:`x\sim x'\iff f(x)\equiv f(x')\pmod p` (Definition 3.1).

    .. math:: [r] = \{x\in\mathbb Z_p^2 : f(x)\equiv r\}

    Returns
    -------
    list of ``p`` int64 arrays; element ``r`` has shape ``(|[r]|, 2)`` (rows ``(a, b)``, lexicographic);
    empty ``(0, 2)`` for labels not attained.

    References
    ----------
    Spec ``uniformity:def3.1`` (§1).
    """
    lab = label_table(p, op)
    p = lab.shape[0]
    order = np.argsort(lab, axis=None, kind="stable")  # stable: lexicographic within a class
    flat = lab.ravel()[order]
    bounds = np.searchsorted(flat, np.arange(p + 1))
    ab = np.stack(np.unravel_index(order, lab.shape), axis=1).astype(np.int64)
    return [ab[bounds[r]:bounds[r + 1]] for r in range(p)]


@cites("uniformity:def3.1")
def class_sizes(p: int, op: str | Callable[[Any, Any], Any] = "add") -> np.ndarray:
    r"""Sizes :math:`|[r]|` of the label classes, shape ``(p,)`` int64 (sum :math:`p^2`).

    Closed forms: add/sub :math:`p`; mul :math:`|[0]|=2p-1`, else :math:`p-1`; sq_sum with
    :math:`\epsilon=(\frac{-1}{p})`: :math:`|[0]|=p+(p-1)\epsilon`, else :math:`p-\epsilon`.

    References
    ----------
    Spec ``uniformity:def3.1`` (§1).
    """
    lab = label_table(p, op)
    return np.bincount(lab.ravel(), minlength=lab.shape[0]).astype(np.int64)


# ------------------------------------------------------------------------------------------ §2, §3


@cites("uniformity:lemma3.4")
def operator_norm_bounds(A: Any, rtol: float | None = None) -> OperatorNormBounds:
    r"""Lemma 3.4: the operator-norm / Frobenius-norm sandwich.

    .. math:: \|A\|_2\le\|A\|_F\le\sqrt{\operatorname{rank}A}\,\|A\|_2

    Parameters
    ----------
    A : array_like, 2-D, finite, non-empty.
    rtol : float or None
        Relative singular-value tolerance for the rank (``None``: numpy's default
        ``S.max() * max(M, N) * eps``).

    Returns
    -------
    OperatorNormBounds
        ``(op_norm, fro_norm, rank, sqrt_rank_op_norm)`` = :math:`(\|A\|_2, \|A\|_F, \operatorname{rank}A,
        \sqrt{\operatorname{rank}A}\,\|A\|_2)`.

    References
    ----------
    Spec ``uniformity:lemma3.4`` (§2).
    """
    a = V.as_float_array(A, "A")
    if a.ndim != 2:
        raise DomainError(f"A must be a 2-D matrix (got ndim {a.ndim})")
    s = np.linalg.svd(a, compute_uv=False)
    op = float(s[0]) if s.size else 0.0
    fro = float(FL.scaled_norm(s))  # sqrt(sum s^2) overflowed past 1.3e154 and underflowed below 1.5e-154
    if rtol is None:
        tol = op * max(a.shape) * np.finfo(np.float64).eps
    else:
        tol = V.nonnegative(rtol, "rtol", scalar=True) * op
    rank = int(np.sum(s > tol))
    return OperatorNormBounds(op, fro, rank, math.sqrt(rank) * op)


@cites("uniformity:lemmaB.1")
def min_opnorm_single_class(c_norm: Any, R: Any) -> float | np.ndarray:
    r"""Lemma B.1: the least operator norm of a linear map sending every class sum to :math:`c`.

    .. math:: \min\|l\|_2=\frac{\|c\|}{2R}\quad\text{s.t. } l(\varphi(i)+\varphi(j))=c\ (i+j\equiv r),\ \|\varphi(i)\|\le R

    Parameters: ``c_norm >= 0``, ``R > 0`` (broadcasting).  References: spec ``uniformity:lemmaB.1`` (§3).
    """
    c = V.nonnegative(c_norm, "c_norm")
    r = V.positive(R, "R")
    with np.errstate(over="ignore", under="ignore"):  # inf / 0 only beyond the double range
        # one rounding: c / (2R) (2R is exact below 9e307; (c / R) / 2 past it)
        return V.scalar_or_array(np.where(r < 8e307, c / (2.0 * r), (c / r) / 2.0))


@cites("uniformity:lemmaB.1")
def rank1_min_norm_map(c: Any, u: Any) -> np.ndarray:
    r"""Lemma B.1: the rank-1 minimiser :math:`l^\star = c\,u^\top/(2\|u\|^2)` (all embeddings :math:`=u`).

    It satisfies :math:`l^\star(2u)=c` and :math:`\|l^\star\|_2=\|c\|/(2\|u\|)`.

    Parameters
    ----------
    c : array_like, 1-D, non-zero (the class target; the lemma needs :math:`c\ne0`).
    u : array_like, 1-D, non-zero (the common embedding, :math:`R=\|u\|`).

    Returns
    -------
    ndarray ``(len(c), len(u))``.

    References
    ----------
    Spec ``uniformity:lemmaB.1`` (§3).
    """
    cv = V.as_float_array(c, "c")
    uv = V.as_float_array(u, "u")
    if cv.ndim != 1 or uv.ndim != 1:
        raise DomainError(f"c and u must be 1-D vectors (got shapes {cv.shape}, {uv.shape})")
    if not np.any(cv):
        raise DomainError("c must be a non-zero vector (Lemma B.1 needs c != 0)")
    R = float(FL.scaled_norm(uv))
    if R == 0.0:
        raise DomainError("u must be a non-zero vector (R = |u| > 0)")
    # c (u/R)^T / (2R): |u|^2 = u @ u overflows past 1.3e154 (the map became 0) and underflows below 1e-154
    with np.errstate(over="ignore", under="ignore"):
        return np.outer(cv, uv / R) / (2.0 * R)


# ------------------------------------------------------------------------------------------ §4


@cites("uniformity:lemma3.2", "uniformity:thm3.5")
def class_target_residuals(outputs: Any, labels: Any, targets: Any = None) -> ClassResiduals:
    r"""Measurable form of Lemma 3.2 / Theorem 3.5: how tightly each class's outputs sit at a class vector.

    .. math:: \varepsilon_r=\max_{x\in[r]}\|\mathrm{out}(x)-c_r\|,\qquad c_r=\text{class mean (default)}

    Lemma 3.2 says correctly classified outputs of class :math:`r` lie in its softmax cone near some
    :math:`c_r`; Remark 3.3 uses :math:`\varepsilon_r` as the measure of how complete the optimisation is.

    Parameters
    ----------
    outputs : array ``(N, d)`` of model outputs (logits or residual stream), finite.
    labels : int array ``(N,)``.
    targets : optional ``(n_classes, d)`` class vectors ordered like ``np.unique(labels)``.

    Returns
    -------
    ClassResiduals
        ``(classes, eps, in_cone)``: the distinct labels, :math:`\varepsilon_r` per class, and the fraction of
    each class whose output's argmax is its label (only meaningful when ``outputs`` are logits).

    References
    ----------
    Spec ``uniformity:lemma3.2``, ``uniformity:thm3.5`` (§4; informational).
    """
    out = V.as_float_array(outputs, "outputs")
    if out.ndim != 2:
        raise DomainError(f"outputs must be 2-D (N, d) (got shape {out.shape})")
    lab = np.asarray(labels)
    if lab.shape != (out.shape[0],) or not np.issubdtype(lab.dtype, np.integer):
        raise DomainError(f"labels must be an integer array of shape ({out.shape[0]},) (got {lab.shape}, {lab.dtype})")
    classes, inv = np.unique(lab, return_inverse=True)
    k = classes.size
    if targets is None:
        sums = np.zeros((k, out.shape[1]))
        np.add.at(sums, inv, out)
        c = sums / np.bincount(inv, minlength=k)[:, None]
    else:
        c = V.as_float_array(targets, "targets")
        if c.shape != (k, out.shape[1]):
            raise DomainError(f"targets must have shape ({k}, {out.shape[1]}) (got {c.shape})")
    dist = FL.scaled_norm(out - c[inv], axis=1)
    eps = np.zeros(k)
    np.maximum.at(eps, inv, dist)
    if out.shape[1] > int(classes.max(initial=-1)) >= 0 and classes.min() >= 0:
        hit = (np.argmax(out, axis=1) == lab).astype(np.float64)
        in_cone = np.bincount(inv, weights=hit, minlength=k) / np.bincount(inv, minlength=k)
    else:
        in_cone = np.zeros(k)
    return ClassResiduals(classes, eps, in_cone)


def _token_block(E: Any, p: int, b_offset: int, token_axis: int) -> tuple[np.ndarray, np.ndarray]:
    e = V.as_float_array(E, "E")
    if e.ndim != 2:
        raise DomainError(f"E must be a 2-D embedding matrix (got ndim {e.ndim})")
    token_axis = V.integer_at_least(token_axis, "token_axis", 0, maximum=1)
    p = V.integer_at_least(p, "p", 3)
    b_offset = V.integer_at_least(b_offset, "b_offset", 0)
    n_tok = e.shape[token_axis]
    if n_tok < b_offset + p:
        raise DomainError(f"E must have at least b_offset + p = {b_offset + p} tokens along axis {token_axis} "
                          f"(got {n_tok})")
    t = e.T if token_axis == 1 else e  # rows = tokens
    return t[:p], t[b_offset:b_offset + p]


@cites("uniformity:thm3.8", "uniformity:def4.2")
def consecutive_embedding_diffs(E: Any, p: int, b_offset: int = 0, token_axis: int = 1, *, cyclic: bool = False,
                                L: Any = None) -> np.ndarray:
    r"""Theorem 3.8's quantity: norms of consecutive token-embedding differences, optionally through a map ``L``.

    .. math:: \delta_i=\big\|L\big(\varphi(i+1)-\varphi(i)\big)\big\|_2,\quad i=0,\dots,p-2\ (\text{and } (p-1,0) \text{ if cyclic})

    Parameters
    ----------
    E : 2-D embedding matrix, tokens along ``token_axis`` (1 = columns, the code's ``W_E`` layout).
    p : int >= 3; ``b_offset`` : first token id of the second operand block (0 = shared vocabulary).
    L : optional ``(k, d_model)`` readout map.

    Returns
    -------
    ndarray ``(n_blocks, p-1 or p)``: one row for the first-operand block, a second row when ``b_offset > 0``.

    References
    ----------
    Spec ``uniformity:thm3.8`` (§4), ``uniformity:def4.2`` (§6.2).
    """
    blocks = _token_block(E, p, b_offset, token_axis)
    cyclic = V.flag(cyclic, "cyclic")
    if b_offset == 0:
        blocks = blocks[:1]
    lm = None if L is None else V.as_float_array(L, "L")
    out = []
    for t in blocks:
        d = np.diff(t, axis=0)
        if cyclic:
            d = np.concatenate([d, (t[0] - t[-1])[None]], axis=0)
        if lm is not None:
            if lm.ndim != 2 or lm.shape[1] != d.shape[1]:
                raise DomainError(f"L must have shape (k, {d.shape[1]}) (got {lm.shape})")
            d = d @ lm.T
        out.append(FL.scaled_norm(d, axis=1))  # no overflow of the squares past 1.3e154
    return np.array(out)


# ------------------------------------------------------------------------------------------ §5 distances


@cites("uniformity:thm3.10")
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
        return float(np.count_nonzero(d < n)) / d.size
    s = _test_mask(t, test_mask)
    return float(np.count_nonzero(d[s] < n)) / int(s.sum())


# ------------------------------------------------------------------------------------------ §10 Thm 3.12


@cites("uniformity:thm3.12")
def ball_size(n: int) -> int:
    r"""Coverers of a point on the unbounded lattice: :math:`C(n)=|\{z\in\mathbb Z^2:|z_1|+|z_2|<n\}|=2n^2-2n+1`.

    ``n`` integer >= 1.  References: spec ``uniformity:thm3.12`` (§10).
    """
    n = V.count(n, "n", 1)
    return 2 * n * n - 2 * n + 1


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


@cites("uniformity:thm3.12")
def coverer_counts(p: int, n: int, metric: str = "torus") -> np.ndarray:
    r"""Number :math:`s_x` of grid points within distance :math:`<n` of each :math:`x` (its possible coverers).

    .. math:: s_x=|\{y\in D: d(x,y)<n\}|

    On the torus :math:`s_x=C_T(p,n)` for all :math:`x` (:math:`=C(n)` iff :math:`n\le(p+1)/2`); on the
    bounded grid it shrinks at the border (a corner has :math:`n(n+1)/2` for :math:`n\le p`).

    Returns int64 ``(p, p)``.  ``p >= 2``, ``n >= 1`` integers.  References: spec ``uniformity:thm3.12`` (§10).
    """
    p = _grid_size(p)
    n = V.integer_at_least(n, "n", 1)
    metric = _metric(metric)
    n = min(n, 2 * p - 1)  # every distance is <= 2(p - 1): radii beyond give the same counts (exact)
    h = _coord_counts(p, n, metric)
    cum = np.cumsum(h, axis=1)  # H[b, c] = #{b': dist <= c}
    # s[a, b] = sum_{j=0}^{n-1} h[a, j] * H[b, n-1-j]
    return h @ cum[:, ::-1].T


@cites("uniformity:thm3.12")
def ball_size_torus(p: int, n: int) -> int:
    r"""Exact number of points of :math:`\mathbb Z_p^2` at torus distance :math:`<n` from a point, :math:`C_T(p,n)`.

    Equals :math:`C(n)=2n^2-2n+1` iff :math:`n\le(p+1)/2`; :math:`p^2` for large ``n``.
    References: spec ``uniformity:thm3.12`` (§10).
    """
    return int(coverer_counts(p, n, "torus")[0, 0])


def _log_binom(N: np.ndarray, k: float) -> np.ndarray:
    return special.gammaln(N + 1.0) - special.gammaln(k + 1.0) - special.gammaln(N - k + 1.0)


@cites("uniformity:thm3.12")
def expected_uncovered(p: int, n: int, m: int, metric: str = "torus") -> float:
    r"""Exact expected number of uncovered points for :math:`m` training points drawn without replacement.

    .. math:: \mathbb E[U]=\sum_{x\in D}\binom{p^2-s_x}{m}\Big/\binom{p^2}{m}

    (:math:`s_x` from :func:`coverer_counts`; log-binomials via ``scipy.special.gammaln``).

    Parameters: ``p >= 2``, ``n >= 1``, ``m`` integer in ``[0, p^2]``, ``metric`` ``"torus"`` | ``"grid"``.

    References
    ----------
    Spec ``uniformity:thm3.12`` (§10, exact version; erratum uniformity-2).
    """
    p = _grid_size(p)
    N = p * p
    m = V.integer_at_least(m, "m", 0)
    if m > N:
        raise DomainError(f"m must be in [0, p^2] = [0, {N}] (got {m})")
    vals, mult = np.unique(coverer_counts(p, n, metric), return_counts=True)
    return float(np.sum(mult * np.exp(_log_binom_ratio(N, vals, m))))


#: Work limit of the product form in :func:`_log_binom_ratio` (number of log1p terms).
_PRODUCT_TERMS = 2 * 10 ** 7


def _log_binom_ratio(N: int, s: np.ndarray, m: int) -> np.ndarray:
    r"""log C(N - s, m) / C(N, m) for integers s (array) and m, -inf where N - s < m.

    By the product :math:`\prod_{j<r}(1-o/(N-j))`, r = min(s, m), o = max(s, m) (symmetric in s and m),
    summed as ``log1p`` terms: relative error of the ratio ~ eps |log ratio| (measured <= 3e-15 against
    exact rationals for p <= 31).  Beyond _PRODUCT_TERMS terms in all, the log-gamma form, whose
    absolute error in the log is ~ eps N log N (1.3e-12 at p = 29, 1e-6 at p = 2^14).
    """
    s = np.asarray(s, dtype=np.int64)
    r = np.minimum(s, m)
    o = np.maximum(s, m)
    out = np.full(s.shape, -np.inf)
    ok = N - s >= m
    if int(np.sum(r[ok])) <= _PRODUCT_TERMS:
        for i in np.nonzero(ok)[0]:
            j = np.arange(int(r[i]), dtype=np.float64)
            out[i] = float(np.sum(np.log1p(-float(o[i]) / (N - j))))
        return out
    rem = (N - s[ok]).astype(np.float64)
    out[ok] = _log_binom(rem, m) - _log_binom(np.float64(N), m)
    return out


@cites("uniformity:thm3.12")
def expected_uncovered_paper(p: int, n: int, m: int, form: str = "binomial") -> float:
    r"""The proof's expressions for :math:`\mathbb E[U]` (with replacement, unbounded-lattice :math:`C(n)`).

    .. math:: \texttt{"binomial"}:\ p^2\Big(1-\frac{C(n)}{p^2}\Big)^m,\qquad \texttt{"exp"}:\ p^2e^{-mC(n)/p^2}

    An upper bound of the exact torus value (:func:`expected_uncovered`) when :math:`C(n)\le p^2`, and a
    loose one (p=97, n=5, m=2100: 0.979 vs 0.292); *not* an upper bound on the bounded grid (1.264).
    ``C(n) > p^2`` gives 0 for the binomial form.

    References
    ----------
    Spec ``uniformity:thm3.12`` (§10).
    """
    p = _grid_size(p)
    N = p * p
    m = V.integer_at_least(m, "m", 0)
    if m > N:
        raise DomainError(f"m must be in [0, p^2] = [0, {N}] (got {m})")
    C = ball_size(n)
    form = V.choice(form, "form", ("binomial", "exp"))
    if form == "exp":
        if m * C > 800 * N:  # exact int comparison: e^{-800} p^2 < 1e-340 (m C / N overflowed for n > 1e154)
            return 0.0
        return float(N * math.exp(-m * C / N))
    if C >= N:
        return 0.0 if m > 0 else float(N)
    return float(N * math.exp(m * math.log1p(-C / N)))


@cites("uniformity:thm3.12")
def required_train_fraction(p: int, n: int, method: str = "paper") -> float:
    r"""Training fraction :math:`r` needed for :math:`\mathbb E[U]<1` (Theorem 3.12).

    .. math:: \texttt{"paper"}: r=\frac{\ln p^2}{C(n)},\qquad \texttt{"paper\_nolog"}: r=-\frac{\ln p^2}{p^2\ln(1-C/p^2)}

    ``"torus_exact"`` / ``"grid_exact"``: the smallest :math:`m/p^2` with :math:`\mathbb E[U]<1` from
    :func:`expected_uncovered` (bisection on integer :math:`m`).  The paper's value may exceed 1 (then the
    criterion cannot be met); it is returned unclipped.  The paper's :math:`r` is sufficient on the torus,
    not on the grid (erratum uniformity-2).

    Parameters: ``p >= 2``, ``n >= 1`` integers; ``method`` as above.

    References
    ----------
    Spec ``uniformity:thm3.12`` (§10).
    """
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
        return -math.log(N) / (N * math.log1p(-C / N))
    metric = "torus" if method == "torus_exact" else "grid"
    lo, hi = 0, N  # E[U](N) = 0 < 1 <= E[U](0) = N
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _expected_uncovered_below_one(p, n, mid, metric):
            hi = mid
        else:
            lo = mid
    return hi / N


def _expected_uncovered_below_one(p: int, n: int, m: int, metric: str) -> bool:
    """E[U] < 1, decided exactly: the float value where it is clear of 1 by 1e-8 (its error is <= 1e-12
    below the product-form limit), else integer arithmetic sum_x C(N - s_x, m) < C(N, m) (p = 2, n = 1:
    E[U](3) = 4 C(3,3)/C(4,3) = 1 exactly, which the log-gamma form gave as 0.9999999999999998)."""
    e = expected_uncovered(p, n, m, metric)
    if abs(e - 1.0) > 1e-8:
        return e < 1.0
    N = p * p
    vals, mult = np.unique(coverer_counts(p, n, metric), return_counts=True)
    return sum(int(k) * math.comb(N - int(v), m) for v, k in zip(vals, mult)) < math.comb(N, m)


@cites("uniformity:thm3.12")
def full_coverage_probability_lower_bound(p: int, n: int, m: int, metric: str = "torus") -> float:
    r"""Markov bound :math:`\Pr[U=0]\ge\max(0,1-\mathbb E[U])`.  References: spec ``uniformity:thm3.12`` (§10)."""
    return max(0.0, 1.0 - expected_uncovered(p, n, m, metric))


# ------------------------------------------------------------------------------------------ §7 designs


# ------------------------------------------------------------------------------------------ §6 progress measures


@cites("uniformity:def4.1")
def progress_measure_fit(values: Any, indicator: Any) -> ThresholdRule:
    r"""Best threshold rule :math:`h(v)=\mathbb 1[v\ge\tau]` or :math:`\mathbb 1[v\le\tau]` for an indicator (Def. 4.1).

    .. math:: \mathrm{agreement}=\frac1T\sum_t\mathbb 1\big[h(g(\theta_t))=\mathbb 1[\Phi_t]\big]

    Exhaustive over :math:`\tau\in\{-\infty,+\infty\}\cup\{\text{midpoints of sorted distinct values}\}` and
    both directions; ties broken by smaller :math:`\tau`, then ``">="``.  ``g`` is a progress measure of
    :math:`\Phi` on that run iff ``agreement == 1.0``.

    Parameters
    ----------
    values : finite 1-D array (length >= 2), the measure :math:`g(\theta_t)`.
    indicator : 0/1 (or bool) array of the same length.

    Returns
    -------
    ThresholdRule
        ``(tau, direction, agreement)``: :math:`\tau`, ``">="`` or ``"<="``, and the agreement in [0, 1].

    References
    ----------
    Spec ``uniformity:def4.1`` (§6.1).
    """
    v = V.as_float_array(values, "values")
    y = np.asarray(indicator)
    if v.ndim != 1 or v.size < 2:
        raise DomainError(f"values must be 1-D with at least 2 points (got shape {v.shape})")
    if y.shape != v.shape:
        raise DomainError(f"indicator must have the shape of values {v.shape} (got {y.shape})")
    yv = y.astype(np.float64) if y.dtype != np.bool_ else y.astype(np.float64)
    if not np.all((yv == 0) | (yv == 1)):
        raise DomainError("indicator must contain only 0/1 values")
    y1 = yv == 1
    T = v.size
    u, inv = np.unique(v, return_inverse=True)
    K = u.size
    c1 = np.concatenate([[0], np.cumsum(np.bincount(inv, weights=y1, minlength=K))])  # y=1 among values <= u_j
    c0 = np.concatenate([[0], np.cumsum(np.bincount(inv, weights=~y1, minlength=K))])
    N1, N0 = c1[-1], c0[-1]
    taus = np.concatenate([[-np.inf], (u[:-1] + u[1:]) / 2.0, [np.inf]])  # tau_j: j values-groups below
    ge = (N1 - c1) + c0  # h = 1 for v >= tau_j
    le = c1 + (N0 - c0)  # h = 1 for v <= tau_j
    best = max(ge.max(), le.max())
    cands = [(taus[j], 0) for j in np.nonzero(ge == best)[0]] + [(taus[j], 1) for j in np.nonzero(le == best)[0]]
    tau, d = min(cands)
    return ThresholdRule(float(tau), (">=" if d == 0 else "<="), float(best) / T)


MED_VARIANTS = ("paper", "cyclic", "code_base", "code_rec", "code_str")


def _med_core(t1: np.ndarray, t2: np.ndarray, p: int, b_offset: int, variant: str) -> np.ndarray:
    """t1, t2: (..., p, d) token blocks; returns (...) MED values."""
    if variant in ("paper", "cyclic"):
        def blk(t):
            d = FL.scaled_norm(np.diff(t, axis=-2), axis=-1)
            if variant == "cyclic":
                d = np.concatenate([d, FL.scaled_norm(t[..., :1, :] - t[..., -1:, :], axis=-1)], axis=-1)
            return d.mean(axis=-1)
        m1 = blk(t1)
        return m1 if b_offset == 0 else 0.5 * (m1 + blk(t2))
    # the code: embed[:, a+1:b] - embed[:, a:b-1] with b = a + p - 1 -> p-2 diffs of tokens a..a+p-2
    def code_mean(t):
        return FL.scaled_norm(t[..., 1:p - 1, :] - t[..., 0:p - 2, :], axis=-1).mean(axis=-1)
    m1, m2 = code_mean(t1), code_mean(t2)
    if variant == "code_base":
        return 0.5 * (m1 + m2)
    if variant == "code_rec":
        return (p - 1) * m1 + (p - 1) * m2
    return m1 + m2


@cites("uniformity:def4.2", "uniformity:thm3.8")
def main_embedding_diff(E: Any, p: int, b_offset: int = 0, variant: str = "paper", token_axis: int = 1) -> float:
    r"""Main embedding diff (MED, Definition 4.2) of a token-embedding matrix.

    .. math:: \mathrm{MED}=\frac1{p-1}\sum_{i=0}^{p-2}\|\varphi(i+1)-\varphi(i)\|_2\quad(\texttt{"paper"})

    With ``b_offset = d > 0`` the two operand blocks (ids ``0..p-1`` and ``d..d+p-1``) are averaged.
    ``"cyclic"`` adds the pair :math:`(p-1,0)` and divides by :math:`p`.  The code variants reproduce
    ``calculate_embedding_diff(W_E, 0, p-1, d, d+p-1)`` bit for bit, including the off-by-one (the
    :math:`p-2` differences of tokens :math:`0..p-2`; :math:`\bar m` = their mean, erratum uniformity-6):
    ``"code_base"`` :math:`\tfrac12(\bar m_1+\bar m_2)`, ``"code_rec"`` :math:`(p-1)(\bar m_1+\bar m_2)`,
    ``"code_str"`` :math:`\bar m_1+\bar m_2`.  (README's frozen one-hot variant: pass the first hidden
    layer's activations of the inputs ``[i, d+i, =]`` as ``E`` with ``token_axis=0``.)

    Parameters
    ----------
    E : 2-D finite array, tokens along ``token_axis`` (1 = columns, the code's ``W_E`` of shape
        ``(d_model, d_vocab)``), at least ``b_offset + p`` tokens.
    p : int >= 3.
    b_offset : int >= 0.
    variant : one of ``"paper"``, ``"cyclic"``, ``"code_base"``, ``"code_rec"``, ``"code_str"``.

    Returns
    -------
    float.

    References
    ----------
    Spec ``uniformity:def4.2`` (§6.2), ``uniformity:thm3.8`` (§4).
    """
    variant = V.choice(variant, "variant", MED_VARIANTS)
    t1, t2 = _token_block(E, p, b_offset, token_axis)
    return float(_med_core(t1, t2, int(p), int(b_offset), variant))


@cites("uniformity:def4.2")
def med_trajectory(E_t: Any, p: int, b_offset: int = 0, variant: str = "paper", token_axis: int = 1) -> np.ndarray:
    r"""MED of a stack of embedding snapshots ``E_t`` of shape ``(T, ...)`` (``token_axis`` refers to one snapshot).

    Returns float64 ``(T,)``.  References: spec ``uniformity:def4.2`` (§6.2).
    """
    variant = V.choice(variant, "variant", MED_VARIANTS)
    e = V.as_float_array(E_t, "E_t")
    if e.ndim != 3:
        raise DomainError(f"E_t must be a 3-D stack (T, ...) of 2-D embeddings (got ndim {e.ndim})")
    token_axis = V.integer_at_least(token_axis, "token_axis", 0, maximum=1)
    p = V.integer_at_least(p, "p", 3)
    b_offset = V.integer_at_least(b_offset, "b_offset", 0)
    t = np.swapaxes(e, 1, 2) if token_axis == 1 else e  # (T, tokens, d)
    if t.shape[1] < b_offset + p:
        raise DomainError(f"E_t must have at least b_offset + p = {b_offset + p} tokens (got {t.shape[1]})")
    return np.asarray(_med_core(t[:, :p], t[:, b_offset:b_offset + p], p, b_offset, variant), dtype=np.float64)


@cites("uniformity:def4.2")
def med_code_mlp(E: Any, p: int, b_offset: int = 0, token_axis: int = 1) -> CodeMED:
    r"""MED as ``MLP/base.py`` / ``MLP/rec.py`` compute it: the pair
    :math:`\big(\tfrac12(\bar m_1+\bar m_2),\ \|W_E[:,0{:}p-1]-W_E[:,d{:}d+p-1]\|_F\big)`.

    Returns :class:`CodeMED` ``(med, fro)``.

    References: spec ``uniformity:def4.2`` (§6.2).
    """
    t1, t2 = _token_block(E, p, b_offset, token_axis)
    med = float(_med_core(t1, t2, int(p), int(b_offset), "code_base"))
    fro = float(FL.scaled_norm(t1[:p - 1] - t2[:p - 1]))
    return CodeMED(med, fro)


# ------------------------------------------------------------------------------------------ §8 Table 1, run analysis

_TABLE1 = (
    ("square", 30, 99.04, 91.27, 1500, 100),
    ("square", 35, 91.07, 80.73, 1500, 100),
    ("square", 40, 84.50, 81.68, 1700, 100),
    ("square", 45, 79.03, 76.07, 1900, 100),
    ("square", 50, 77.39, 66.02, 3400, 200),
    ("square", 55, 62.09, 57.69, 2600, 100),
    ("square", 60, 57.31, 55.18, 2200, 100),
    ("strip", 67, 7.56, 3.58, None, None),
    ("strip", 60, 33.25, 17.05, 900, 100),
    ("strip", 50, 80.10, 73.61, 1600, 100),
    ("strip", 40, 89.89, 84.80, 1300, 100),
)


@cites("uniformity:table1")
def table1() -> list[dict[str, Any]]:
    r"""The paper's Table 1 (p = 97, 1-layer transformer, frac 0.3, weight decay 1, AdamW), as data.

    Rows: ``design`` (``"square"``/``"strip"``), ``k``, ``u_acc`` and ``l_acc`` (percent), ``go_epoch`` and
    ``go_pm`` (``None`` for STRIP 67: "disappear").

    References: spec ``uniformity:table1`` (§8).
    """
    return [dict(design=d, k=k, u_acc=u, l_acc=l_, go_epoch=g, go_pm=pm) for d, k, u, l_, g, pm in _TABLE1]


@cites("uniformity:table1", "uniformity:thm3.10")
def table1_ceilings(ns: Sequence[Any] = (5, 11, 21, 31, 49), metric: str = "torus", b_offset: int | None = None,
                    p: int = 97, frac: float = 0.3, seed: int = 0, shuffle: str = "python") -> list[dict[str, Any]]:
    r"""Ceilings of the authors' exact Table 1 splits next to the paper's U-Acc.

    For each row: ``ceilings`` (percent, :func:`accuracy_ceiling` at each ``n`` of ``ns``), ``ceiling_inf``,
    ``implied_radius`` (smallest ``n`` with ceiling >= U-Acc, or ``None``), ``n_train``, ``n_test`` and the
    paper's numbers.  Labels: ``add`` of the operands.

    References: spec ``uniformity:table1`` (§8), ``uniformity:thm3.10``.
    """
    ns = V.sequence(ns, "ns", what="a non-empty sequence of radii (integers >= 1 or inf)")
    for n in ns:
        _radius(n, "ns")
    lab = label_table(p, "add")
    out = []
    for row in table1():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tr, te = designed_split(p, row["design"], row["k"], frac, seed, shuffle)
        d, ns_ = _delta_on_test(tr, lab, metric, te, b_offset)
        ceil = [100.0 * float(np.count_nonzero(d < _radius(n))) / ns_ for n in ns]
        out.append(dict(row, ceilings=ceil, ns=tuple(ns), metric=metric,
                        ceiling_inf=100.0 * float(np.count_nonzero(np.isfinite(d))) / ns_,
                        implied_radius=implied_radius(tr, lab, row["u_acc"] / 100.0, metric, te, b_offset),
                        n_train=int(tr.sum()), n_test=int(te.sum())))
    return out


def _series(x: Any, name: str) -> np.ndarray:
    a = V.as_float_array(x, name)
    if a.ndim != 1:
        raise DomainError(f"{name} must be 1-D (got shape {a.shape})")
    return a


def _epochs(epochs: Any, n: int) -> np.ndarray:
    if epochs is None:
        return np.arange(n, dtype=np.float64)
    e = _series(epochs, "epochs")
    if e.size != n:
        raise DomainError(f"epochs must have length {n} (got {e.size})")
    return e


@cites("uniformity:table1")
def go_epoch(test_acc: Any, epochs: Any = None, threshold: float = 0.5) -> float | None:
    r"""Grokking epoch: the first logged epoch at which test accuracy reaches ``threshold`` (default 0.5).

    (Convention of the spec's runs, "test >= 0.5 at epoch ..."; Table 1 does not define GO-Epoch.)
    Returns ``None`` if never reached.  References: spec ``uniformity:table1`` (§8).
    """
    acc = _series(test_acc, "test_acc")
    ep = _epochs(epochs, acc.size)
    thr = V.as_float_array(threshold, "threshold", scalar=True)
    hit = np.nonzero(acc >= thr)[0]
    return None if hit.size == 0 else float(ep[hit[0]])


@cites("uniformity:table1")
def u_acc_l_acc(test_acc: Any, train_acc: Any = None) -> AccuracyExtremes:
    r"""Table 1's U-Acc and L-Acc of one run.

    U-Acc = highest test accuracy after train accuracy first reaches 1 (whole run if ``train_acc`` is
    ``None`` or never reaches 1); L-Acc = lowest test accuracy after the epoch where U-Acc is reached.

    Returns :class:`AccuracyExtremes` ``(u_acc, l_acc, u_acc_index)``.  References: spec ``uniformity:table1`` (§8).
    """
    acc = _series(test_acc, "test_acc")
    start = 0
    if train_acc is not None:
        tr = _series(train_acc, "train_acc")
        if tr.size != acc.size:
            raise DomainError(f"train_acc must have length {acc.size} (got {tr.size})")
        hit = np.nonzero(tr >= 1.0)[0]
        if hit.size:
            start = int(hit[0])
    i = start + int(np.argmax(acc[start:]))
    return AccuracyExtremes(float(acc[i]), float(acc[i:].min()), i)


@cites("uniformity:def4.2")
def med_loss_spearman(med: Any, test_loss: Any, windows: Sequence[tuple[int, int]]) -> list[float | None]:
    r"""Spearman rank correlation of MED with test loss in index windows ``[start, stop)``.

    ``None`` for windows with fewer than 3 points or a constant series.  References: spec ``uniformity:def4.2``
    (§6.2, Remark 4.3).
    """
    m = _series(med, "med")
    tl = _series(test_loss, "test_loss")
    if m.size != tl.size:
        raise DomainError(f"test_loss must have the length of med {m.size} (got {tl.size})")
    spans = []
    for w in V.sequence(windows, "windows", min_len=0, what="a sequence of (start, stop) index pairs"):
        if isinstance(w, (str, bytes)) or not np.iterable(w) or len(w) != 2:
            raise DomainError(f"windows must hold (start, stop) index pairs (got {V.show(w)})")
        # integers >= 0 with slice semantics: an empty or short window gives None (analyse_run relies on it)
        spans.append((V.integer_at_least(w[0], "windows start", 0), V.integer_at_least(w[1], "windows stop", 0)))
    out: list[float | None] = []
    for a, b in spans:
        x, y = m[a:b], tl[a:b]
        if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
            out.append(None)
        else:
            out.append(float(stats.spearmanr(x, y).statistic))
    return out


@cites("uniformity:thm3.10", "uniformity:table1", "uniformity:def4.2")
def analyse_run(test_acc: Any, train_mask: Any, labels: Any, *, train_acc: Any = None, epochs: Any = None,
                test_loss: Any = None, med: Any = None, test_mask: Any = None, b_offset: int | None = 0,
                metric: str = "torus", go_threshold: float = 0.5, grok_start_threshold: float = 0.2) -> dict[str, Any]:
    r"""Everything a training verify needs from one run, in pure numpy.

    * ``ceiling`` = combined ceiling at :math:`n=\infty` (:func:`accuracy_ceiling` with the token factor of
      ``b_offset``; ``None`` skips it); ``max_test_acc``, ``excess = max_test_acc - ceiling`` (the theorem
      says ``<= 0`` for a model that only imitates same-label training points; an actual network can still
      hit uncovered points at chance level, about ``(1 - ceiling)/p``, so report ``excess`` and judge it
      against that chance term); ``implied_radius`` of U-Acc;
    * ``u_acc``, ``l_acc`` (:func:`u_acc_l_acc`), ``go_epoch`` (:func:`go_epoch`), ``memorised_epoch``
      (train accuracy first 1);
    * if ``med`` and ``test_loss`` are given: Spearman(MED, test loss) over the post-memorisation window,
      before grokking (memorised .. test acc first > ``grok_start_threshold``) and during grokking (from then
      to the end) (:func:`med_loss_spearman`).

    References: spec ``uniformity:thm3.10``, ``uniformity:table1``, ``uniformity:def4.2`` (verification V2/V3).
    """
    go_threshold = V.in_closed_interval(go_threshold, "go_threshold", 0.0, 1.0, scalar=True)
    grok_start_threshold = V.in_closed_interval(grok_start_threshold, "grok_start_threshold", 0.0, 1.0, scalar=True)
    acc = _series(test_acc, "test_acc")
    ep = _epochs(epochs, acc.size)
    t = _mask(train_mask, p=_p_of(labels))
    ceil = accuracy_ceiling(t, labels, math.inf, metric, test_mask, b_offset)
    u, l_, iu = u_acc_l_acc(acc, train_acc)
    mem = None
    start = 0
    if train_acc is not None:
        hit = np.nonzero(_series(train_acc, "train_acc") >= 1.0)[0]
        if hit.size:
            start = int(hit[0])
            mem = float(ep[start])
    res: dict[str, Any] = dict(ceiling=ceil, max_test_acc=float(acc.max()), excess=float(acc.max()) - ceil,
                               within_ceiling=bool(acc.max() <= ceil), u_acc=u, l_acc=l_, u_acc_epoch=float(ep[iu]),
                               go_epoch=go_epoch(acc, ep, go_threshold), memorised_epoch=mem,
                               implied_radius=implied_radius(t, labels, min(u, 1.0), metric, test_mask, b_offset))
    if med is not None and test_loss is not None:
        g = np.nonzero(acc > grok_start_threshold)[0]
        gs = int(g[0]) if g.size else acc.size
        gs = max(gs, start)
        rho = med_loss_spearman(med, test_loss, [(start, acc.size), (start, gs), (gs, acc.size)])
        res.update(spearman_post_memorisation=rho[0], spearman_before_grokking=rho[1], spearman_grokking=rho[2],
                   grok_start_epoch=float(ep[gs]) if gs < acc.size else None)
    return res


# ------------------------------------------------------------------------------------------ §9 setup


@cites("uniformity:setup")
def experimental_setup(script: str = "rec") -> dict[str, Any]:
    r"""Configuration of the authors' scripts (paper §6.1; ``transformer/{rec,str,base}.py``).

    ``"rec"`` / ``"str"`` are the paper's setup (1 layer, frac 0.3, seed 0; ``str`` has ``d = 60``,
    ``d_vocab = 170``); ``"base"`` carries the discrepant defaults (2 layers, frac 0.5, seed 11; erratum
    uniformity-7).  References: spec ``uniformity:setup`` (§9).
    """
    script = V.choice(script, "script", ("rec", "str", "base"))
    cfg: dict[str, Any] = dict(
        p=97, d=0, d_vocab=98, n_ctx=3, d_model=128, num_heads=4, d_head=32, d_mlp=512, num_layers=1,
        act="ReLU", use_ln=False, pos_embed=True, init_std="1/sqrt(d_model) for every matrix", bias_init=0.0,
        optimizer="AdamW", lr=1e-3, weight_decay=1.0, betas=(0.9, 0.98), eps=1e-8, warmup_steps=10,
        batch="full", frac_train=0.3, seed=0, num_epochs=300, readout_position=2, fn_name="add")
    if script == "str":
        cfg.update(d=60, d_vocab=170, num_epochs=30000)
    elif script == "base":
        cfg.update(num_layers=2, frac_train=0.5, seed=11)
    return cfg


