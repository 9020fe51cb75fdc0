"""Table 1 and run analysis: ceilings of the designed splits, U-Acc / L-Acc, GO-epoch, MED vs loss (§8)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ..task import designed_split, label_table
from ._results import AccuracyExtremes
from ._common import _mask, _p_of, _radius
from ._ceiling import _delta_on_test, accuracy_ceiling, implied_radius

__all__ = ["analyse_run", "go_epoch", "med_loss_spearman", "table1", "table1_ceilings", "u_acc_l_acc"]


# ------------------------------------------------------------------------------------------ §8 Table 1, run analysis

_TABLE1 = (
    ("square", 30, 0.9904, 0.9127, 1500, 100),
    ("square", 35, 0.9107, 0.8073, 1500, 100),
    ("square", 40, 0.8450, 0.8168, 1700, 100),
    ("square", 45, 0.7903, 0.7607, 1900, 100),
    ("square", 50, 0.7739, 0.6602, 3400, 200),
    ("square", 55, 0.6209, 0.5769, 2600, 100),
    ("square", 60, 0.5731, 0.5518, 2200, 100),
    ("strip", 67, 0.0756, 0.0358, None, None),
    ("strip", 60, 0.3325, 0.1705, 900, 100),
    ("strip", 50, 0.8010, 0.7361, 1600, 100),
    ("strip", 40, 0.8989, 0.8480, 1300, 100),
)


@cites("uniformity:table1")
def table1() -> list[dict[str, Any]]:
    r"""The paper's Table 1 (p = 97, 1-layer transformer, training fraction 0.3, weight decay 1, AdamW), as data.

    Returns
    -------
    list of dict
        One new dict per row, in the paper's order, with keys `design` (`"square"` or `"strip"`), `k`
        (the held-out size parameter), `u_acc` and `l_acc` (fractions in [0, 1], the unit of every accuracy in grokclocks; the paper
        prints percent: U-Acc 99.04 % is 0.9904), `go_epoch` and `go_pm` (the GO-Epoch and its ± margin;
        `None` for STRIP 67, where grokking "disappears").

    References
    ----------
    Spec ID `uniformity:table1` (paper Table 1).
    """
    return [dict(design=d, k=k, u_acc=u, l_acc=l_, go_epoch=g, go_pm=pm) for d, k, u, l_, g, pm in _TABLE1]


@cites("uniformity:table1", "uniformity:thm3.10")
def table1_ceilings(ns: Sequence[Any] = (5, 11, 21, 31, 49), metric: str = "torus", b_offset: int | None = None,
                    p: int = 97, frac: float = 0.3, seed: int = 0, shuffle: str = "python") -> list[dict[str, Any]]:
    r"""Exact test-accuracy ceilings of the authors' Table 1 splits, next to the paper's U-Acc.

    Each row of `table1` is rebuilt with `designed_split` (the authors' construction) and its ceilings
    computed with `accuracy_ceiling` (labels: addition mod p).

    Parameters
    ----------
    ns : sequence of int or float, optional
        The radii at which to report the ceiling, each an integer ≥ 1 or `math.inf`; default
        (5, 11, 21, 31, 49).
    metric : {"torus", "grid"}, optional
        `"torus"` (default) or `"grid"`.
    b_offset : int, optional
        Vocabulary layout of the token factor, an integer ≥ 0.  Default `None`: no token factor.
    p : int, optional
        The modulus, a prime (default 97, the paper's).
    frac : float, optional
        Training fraction of the full grid, in (0, 1] (default 0.3, the paper's).
    seed : int, optional
        Seed of the shuffle, an integer ≥ 0 (default 0, the authors').
    shuffle : {"python", "numpy"}, optional
        Shuffle of the remaining pairs: `"python"` (default; `random.seed(seed); random.shuffle`, as the
        authors' code) or `"numpy"` (`numpy.random.default_rng(seed).permutation`).

    Returns
    -------
    list of dict
        One dict per Table 1 row: the paper's fields (see `table1`) plus `ceilings` (fractions in [0, 1],
        as `accuracy_ceiling` returns them; one per radius of `ns`), `ns`, `metric`, `ceiling_inf` (the
        fraction at n = ∞), `implied_radius` (the smallest
        n whose ceiling reaches U-Acc, or `None`), `n_train` and `n_test`.

    Raises
    ------
    DomainError
        If a radius, `metric`, `b_offset`, `p`, `frac`, `seed` or `shuffle` is outside its domain.

    References
    ----------
    Spec IDs `uniformity:table1` (paper Table 1) and `uniformity:thm3.10` (Theorem 3.10).
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
        ceil = [float(np.count_nonzero(d < _radius(n))) / ns_ for n in ns]
        out.append(dict(row, ceilings=ceil, ns=tuple(ns), metric=metric,
                        ceiling_inf=float(np.count_nonzero(np.isfinite(d))) / ns_,
                        implied_radius=implied_radius(tr, lab, row["u_acc"], metric, te, b_offset),
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
    r"""Grokking epoch: the first logged epoch at which the test accuracy reaches `threshold`.

    The convention of the verification runs ("test ≥ 0.5 at epoch …"); Table 1 does not define its
    GO-Epoch.

    Parameters
    ----------
    test_acc : array_like
        Test accuracy at each logged record, as fractions; a finite 1-D array.
    epochs : array_like, optional
        The epoch of each record, a finite 1-D array of the length of `test_acc`.  Default `None`:
        0, 1, 2, ….
    threshold : float, optional
        The accuracy level, a finite real (default 0.5).

    Returns
    -------
    float or None
        The first epoch with test accuracy ≥ `threshold`; `None` if never reached.

    Raises
    ------
    DomainError
        If `test_acc` or `epochs` is not a finite 1-D array of one length, or `threshold` is not a
        finite scalar.

    References
    ----------
    Spec ID `uniformity:table1` (paper Table 1).
    """
    acc = _series(test_acc, "test_acc")
    ep = _epochs(epochs, acc.size)
    thr = V.as_float_array(threshold, "threshold", scalar=True)
    hit = np.nonzero(acc >= thr)[0]
    return None if hit.size == 0 else float(ep[hit[0]])


@cites("uniformity:table1")
def u_acc_l_acc(test_acc: Any, train_acc: Any = None) -> AccuracyExtremes:
    r"""Table 1's U-Acc and L-Acc of one run.

    U-Acc is the highest test accuracy after the train accuracy first reaches 1 (over the whole run if
    `train_acc` is `None` or never reaches 1); L-Acc is the lowest test accuracy from the record where
    U-Acc is reached on.

    Parameters
    ----------
    test_acc : array_like
        Test accuracy at each record, a finite 1-D array.
    train_acc : array_like, optional
        Train accuracy at each record, as fractions; a finite 1-D array of the length of `test_acc`.
        Default `None`: U-Acc over the whole run.

    Returns
    -------
    AccuracyExtremes
        The named tuple (u_acc, l_acc, u_acc_index), accuracies in the unit of `test_acc`.

    Raises
    ------
    DomainError
        If `test_acc` or `train_acc` is not a finite 1-D array, or their lengths differ.

    References
    ----------
    Spec ID `uniformity:table1` (paper Table 1).
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
    r"""Spearman rank correlation of MED with the test loss in index windows [start, stop).

    Parameters
    ----------
    med : array_like
        MED at each record (see `med_trajectory`), a finite 1-D array.
    test_loss : array_like
        Test loss at each record, a finite 1-D array of the length of `med`.
    windows : sequence of tuple of int
        Index windows (start, stop), integers ≥ 0 with slice semantics (a window past the end is cut
        short); may be empty.

    Returns
    -------
    list of float or None
        One correlation in [−1, 1] per window; `None` for a window with fewer than 3 points or a
        constant series.

    Raises
    ------
    DomainError
        If `med` or `test_loss` is not a finite 1-D array, their lengths differ, or a window is not a
        pair of integers ≥ 0.

    References
    ----------
    Spec ID `uniformity:def4.2` (paper Definition 4.2, Remark 4.3).
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
    r"""Everything a training verification needs from one run, in pure numpy.

    The dict returned holds

    * `ceiling`: the combined ceiling at n = ∞ (`accuracy_ceiling` with the token factor of
      `b_offset`); `max_test_acc`; `excess` = max_test_acc − ceiling and `within_ceiling`.  The theorem
      says excess ≤ 0 for a model that only imitates same-label training points; an actual network can
      still hit uncovered points at chance level, about (1 − ceiling)/p, so judge `excess` against that
      chance term; `implied_radius` of U-Acc;
    * `u_acc`, `l_acc` (`u_acc_l_acc`), `u_acc_epoch`, `go_epoch` (`go_epoch`), `memorised_epoch`
      (train accuracy first 1, or `None`);
    * if `med` and `test_loss` are given: Spearman(MED, test loss) (`med_loss_spearman`) over the
      post-memorisation window (`spearman_post_memorisation`), before grokking (memorised until the
      test accuracy first exceeds `grok_start_threshold`, `spearman_before_grokking`) and during
      grokking (from then to the end, `spearman_grokking`), with `grok_start_epoch`.

    Parameters
    ----------
    test_acc : array_like
        Test accuracy at each record, as fractions in [0, 1]; a finite 1-D array.
    train_mask : array_like
        The training set, in any form of `grokclocks.task.as_mask` (p is read from `labels`).
    labels : array_like of int
        The label table f, an integer array of shape (p, p) indexed [a, b].
    train_acc : array_like, optional
        Train accuracy at each record, as fractions; a finite 1-D array of the length of `test_acc`.
        Default `None`: no memorisation epoch, U-Acc over the whole run.
    epochs : array_like, optional
        The epoch of each record, a finite 1-D array of the length of `test_acc`.  Default `None`:
        0, 1, 2, ….
    test_loss : array_like, optional
        Test loss at each record, for the Spearman correlations.  Default `None`: no correlations.
    med : array_like, optional
        MED at each record, for the Spearman correlations.  Default `None`: no correlations.
    test_mask : array_like, optional
        The test set, in the same forms as `train_mask`.  Default `None`: the complement of
        `train_mask`.
    b_offset : int, optional
        Vocabulary layout of the token factor, an integer ≥ 0 (default 0: shared vocabulary); `None`
        skips the token factor.
    metric : {"torus", "grid"}, optional
        `"torus"` (default) or `"grid"`.
    go_threshold : float, optional
        Test-accuracy level of the grokking epoch, in [0, 1] (default 0.5).
    grok_start_threshold : float, optional
        Test-accuracy level that marks the start of grokking for the correlation windows, in [0, 1]
        (default 0.2).

    Returns
    -------
    dict of str to object
        The entries listed above (floats, ints, bools or `None`).

    Raises
    ------
    DomainError
        If an argument is outside its domain above (see `accuracy_ceiling`, `u_acc_l_acc`, `go_epoch`
        and `med_loss_spearman` for the array checks).

    References
    ----------
    Spec IDs `uniformity:thm3.10` (paper Theorem 3.10), `uniformity:table1` (Table 1) and
    `uniformity:def4.2` (Definition 4.2).
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
