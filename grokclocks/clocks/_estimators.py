"""Clocks: estimators of the clocks from a training record."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _validate as V
from ..citations import cites
from ._args import _flag, _int_p
from ._characters import _fourier_rows
from ._fast_clock import _records


def _window(window: Any) -> int:
    return V.integer_at_least(window, "window", 1)


@cites("clocks:appF4-cls-estimator", "clocks:appF4-persist", "clocks:eq2.1", "clocks:eq2.2")
def first_hitting_time(times, values, threshold, *, window=1, direction="below"):
    r"""First record time at which a threshold is met and stays met for ``window`` records.

    .. math::

        \hat t^{(w)}=\min\{t_j:\ v_i\le\vartheta\ \ \forall i\in\{j,\dots,j+w-1\}\}
        \quad(\ge\text{ for }\texttt{direction="above"}).

    Inclusive thresholds; NaN values count as "not met"; a window running past the last record is not
    accepted (conservative); ``math.inf`` if never reached.

    Parameters
    ----------
    times : 1-D strictly increasing finite array
    values : array like ``times``
    threshold : real
    window : int >= 1
        Persistence window in records (1 = plain first passage).
    direction : {"below", "above"}

    Examples
    --------
    ``first_hitting_time([0,1,2,3,4,5], [1,.5,.05,.2,.04,.03], 0.1, window=2)`` = 4.

    References
    ----------
    Spec ``clocks:appF4-cls-estimator``, ``clocks:appF4-persist`` (paper App. F.4).
    """
    t, v = _records(times, values)
    thr = V.finite(threshold, "threshold", scalar=True)
    w = _window(window)
    d = V.choice(direction, "direction", ("below", "above"))
    with np.errstate(invalid="ignore"):
        met = (v <= thr) if d == "below" else (v >= thr)
    if w > met.size:
        return math.inf
    runs = np.convolve(met.astype(np.int64), np.ones(w, dtype=np.int64), mode="valid")
    hit = np.nonzero(runs == w)[0]
    return float(t[hit[0]]) if hit.size else math.inf


@cites("clocks:appF4-cls-estimator", "clocks:eq2.1")
def classifier_clock(times, losses, eps, *, window=1):
    r"""Classifier-clock estimator :math:`\hat t^{(w)}_{\rm cls}(\varepsilon)` (first / sustained passage of the loss).

    Log the loss in gap form (:func:`cross_entropy`); ``math.inf`` if never reached (e.g. below the
    loss floor that weight decay creates).

    References
    ----------
    Spec ``clocks:appF4-cls-estimator``, ``clocks:eq2.1``.
    """
    e = V.positive(eps, "eps", scalar=True)
    return first_hitting_time(times, losses, e, window=window, direction="below")


@cites("clocks:appF4-persist", "clocks:eq2.2")
def representation_clock(times, gaps, delta, *, window=1):
    r"""Sustained representation-clock estimator :math:`\hat t^{(w)}_{\rm rep}(\delta)` of a structural gap.

    References
    ----------
    Spec ``clocks:appF4-persist``, ``clocks:eq2.2``.
    """
    d = V.positive(delta, "delta", scalar=True)
    return first_hitting_time(times, gaps, d, window=window, direction="below")


@cites("clocks:appF4-acc-clock")
def accuracy_clock(times, train_acc, *, target=1.0, window=1):
    r"""Zero-one clock :math:`t_{01}=\inf\{t:\text{train accuracy}\ge\text{target}\}` (default target 1).

    Equivalently the first time :math:`\hat\gamma_{\min}>0`; coarser than :math:`t_{\rm cls}` and, for
    :math:`\varepsilon<\ln2/n`, not later (``clocks:appF1-acc-order``).

    References
    ----------
    Spec ``clocks:appF4-acc-clock``.
    """
    tg = V.as_float_array(target, "target", scalar=True)
    if not 0.0 < tg <= 1.0:
        raise V.DomainError(f"target must be in (0, 1] (got {tg!r})")
    acc = V.as_float_array(train_acc, "train_acc", allow_nan=True)
    out_of_range = (acc < 0.0) | (acc > 1.0)
    if np.any(out_of_range):
        raise V.DomainError(f"train_acc must be accuracies in [0, 1] (fractions, not percent; NaN = not "
                            f"recorded) (got {float(acc[out_of_range].flat[0])!r})")
    return first_hitting_time(times, acc, tg, window=window, direction="above")


@cites("clocks:appF4-opt-time")
def accumulated_time(lrs):
    r"""Accumulated optimiser time :math:`\tau_k=\sum_{j<k}\eta_j`, :math:`\tau_0=0`.

    Float64 ``cumsum`` (adequate for up to ~1e7 steps).

    Parameters
    ----------
    lrs : 1-D array of learning rates (finite, >= 0)

    Returns
    -------
    ndarray of length ``len(lrs) + 1``

    References
    ----------
    Spec ``clocks:appF4-opt-time``.
    """
    lr = V.nonnegative(lrs, "lrs")
    if lr.ndim != 1:
        raise V.DomainError(f"lrs must be 1-D (got shape {lr.shape})")
    return np.concatenate([[0.0], np.cumsum(lr)])


@cites("clocks:appF4-sep-ratio")
@V.broadcasting()
def separation_ratio(t_rep, t_cls):
    r"""Separation ratio :math:`R_{\rm sep}=\hat t_{\rm rep}(\delta)/\hat t_{\rm cls}(\varepsilon)` (descriptive).

    ``t_rep = inf`` gives ``inf``.

    Raises
    ------
    DomainError
        ``t_cls`` not finite and > 0 (use accumulated time, > 0 after the first step).

    References
    ----------
    Spec ``clocks:appF4-sep-ratio``.
    """
    tc = V.positive(t_cls, "t_cls")
    tr = V.as_float_array(t_rep, "t_rep", allow_inf=True)
    if np.any(tr < 0):
        raise V.DomainError(f"t_rep must be >= 0 or inf (got {float(tr[tr < 0].flat[0])!r})")
    with np.errstate(over="ignore", under="ignore"):  # inf / 0 only beyond the double range
        return V.scalar_or_array(tr / tc)


@cites("clocks:appF4-srank-stat")
def stable_rank_gap(sranks, *, target=None):
    r"""Structural gap built from a stable-rank time series :math:`S(t_j)`.

    .. math::

        \mathcal G_j=[S_j-r^\star]_+\ \ (\texttt{target}=r^\star),\qquad\text{else}\quad
        \mathcal G_j=\frac{|S_j-S_{\rm end}|}{|S_0-S_{\rm end}|} .

    The stable rank need not be monotone (measured in the modular MLP); combine with the persistence
    window of :func:`representation_clock`.

    Raises
    ------
    DomainError
        ``sranks`` < 1 or non-finite; ``S_0 == S_end`` without a target.

    References
    ----------
    Spec ``clocks:appF4-srank-stat``.
    """
    s = V.as_float_array(sranks, "sranks")
    if s.ndim != 1:
        raise V.DomainError(f"sranks must be 1-D (got shape {s.shape})")
    if np.any(s < 1.0 - V.roundoff_tol(sranks, floor=1e-12)):
        raise V.DomainError(f"sranks must be >= 1 (got {float(np.min(s))!r})")
    if target is not None:
        r = V.as_float_array(target, "target", scalar=True)
        return np.maximum(s - r, 0.0)
    den = abs(s[0] - s[-1])
    if den == 0:
        raise V.DomainError("sranks must change between the first and last record to normalise (S_0 == S_end)")
    return np.abs(s - s[-1]) / den


@cites("clocks:appF4-class-sep")
def class_separation_ratio(features, labels, *, between="mean"):
    r"""Within-class over between-class spread of representations.

    .. math::

        \mathrm{CS}=\frac{\frac1n\sum_i\lVert h_i-\bar h_{y_i}\rVert^2}{\frac1{|\mathcal C|}\sum_c\lVert\bar h_c-\bar h\rVert^2}
        \ \ (\texttt{"mean"}),\qquad\text{or denominator }\min_{c\ne c'}\lVert\bar h_c-\bar h_{c'}\rVert^2\ \ (\texttt{"min\_pair"}),

    with :math:`\bar h` the unweighted mean of the centres of the classes present.

    Example: features ``[[0,0],[0,2],[4,0],[4,2]]``, labels ``[0,0,1,1]``: 0.25 (mean), 0.0625 (min_pair).

    References
    ----------
    Spec ``clocks:appF4-class-sep``.
    """
    H = V.as_float_array(features, "features")
    if H.ndim == 1:
        H = H[:, None]
    if H.ndim != 2:
        raise V.DomainError(f"features must be (n, d) (got shape {H.shape})")
    mode = V.choice(between, "between", ("mean", "min_pair"))
    lab = V.integer_array(labels, "labels", what="integer class labels")
    if lab.shape != (H.shape[0],):
        raise V.DomainError(f"labels must have shape {(H.shape[0],)} (got {lab.shape})")
    classes, inv = np.unique(lab, return_inverse=True)
    if classes.size < 2:
        raise V.DomainError(f"at least 2 classes must be present (got {classes.size})")
    centres = np.zeros((classes.size, H.shape[1]))
    np.add.at(centres, inv, H)
    centres /= np.bincount(inv)[:, None]
    # each mean of squared norms as s^2 * mean((norm / s)^2), s the largest norm (scaled_norm per row), and
    # the quotient as one scaled product: squares of features past 1e154 overflowed (inf / inf = nan) and
    # below 1e-154 vanished (a DomainError "centres coincide" for centres 1e-200 apart)
    w_norms = FL.scaled_norm(H - centres[inv], axis=1)
    if mode == "mean":
        b_norms = FL.scaled_norm(centres - centres.mean(axis=0), axis=1)
    else:
        pair = FL.scaled_norm(centres[:, None, :] - centres[None, :, :], axis=-1)
        b_norms = np.array([np.min(pair[~np.eye(classes.size, dtype=bool)])])
    s_b = float(np.max(b_norms))
    if s_b == 0.0:
        raise V.DomainError("class centres coincide: the between-class spread is 0")
    s_w = float(np.max(w_norms))
    if s_w == 0.0:
        return 0.0
    w_mean = float(np.mean((w_norms / s_w) ** 2))
    b_mean = float(np.mean((b_norms / s_b) ** 2))
    return float(FL.power_product([s_w, s_b, w_mean, b_mean], [2, -2, 1, -1]))


def _embedding(E: Any, p: Any, token_axis: Any, center: Any) -> tuple[np.ndarray, int]:
    M = V.as_float_array(E, "E")
    if M.ndim == 1:
        M = M[:, None]
    if M.ndim != 2:
        raise V.DomainError(f"E must be 1-D or 2-D (got shape {M.shape})")
    ax = V.integer_at_least(token_axis, "token_axis", 0)
    if ax > 1:
        raise V.DomainError(f"token_axis must be 0 or 1 (got {ax})")
    if ax == 1:
        M = M.T
    pp = M.shape[0] if p is None else _int_p(p)
    if pp != M.shape[0]:
        raise V.DomainError(f"p must equal the size of the token axis {M.shape[0]} (got {pp})")
    if pp < 2:
        raise V.DomainError(f"the token axis must have length p >= 2 (got {pp})")
    if _flag(center, "center"):
        M = M - M.mean(axis=0, keepdims=True)
    return M, pp


@cites("clocks:appF4-fourier")
def fourier_energies(E, p=None, *, center=True, token_axis=0):
    r"""Energy of each frequency of an embedding over the tokens of :math:`\mathbb Z_p`.

    .. math:: e_k=\lVert c_k^\top E\rVert^2+\lVert s_k^\top E\rVert^2,\quad k=0,\dots,\lfloor p/2\rfloor

    (:math:`e_0` = DC, 0 after centring; even :math:`p`: the Nyquist row alone).  Parseval:
    :math:`\sum_ke_k=\lVert E\rVert_F^2`.

    Returns
    -------
    ndarray of length ``p // 2 + 1``, indexed by frequency.

    References
    ----------
    Spec ``clocks:appF4-fourier``.
    """
    M, pp = _embedding(E, p, token_axis, center)
    rows, freq = _fourier_rows(pp)
    proj = np.sum((rows @ M) ** 2, axis=1)
    return np.bincount(freq, weights=proj, minlength=pp // 2 + 1)


@cites("clocks:appF4-fourier")
def fourier_energy_outside(E, p=None, *, freqs=None, n_top=None, center=True, token_axis=0):
    r"""Fraction of embedding energy outside a set of frequencies.

    .. math:: \mathrm{FE}_{\mathcal F}(E)=1-\frac{\sum_{k\in\mathcal F}e_k}{\sum_ke_k}=\frac{\lVert E-\Pi_{\mathcal F}E\rVert_F^2}{\lVert E\rVert_F^2}

    Parameters
    ----------
    E : array with ``p`` token rows (axis ``token_axis``)
    p : int, optional (checked against the token axis)
    freqs : iterable of int, optional
        Frequency set; taken mod ``p`` and folded (:math:`k\equiv p-k`).
    n_top : int >= 1, optional
        Use the ``n_top`` highest-energy nonzero frequencies of *this* ``E`` (data-dependent).
        Exactly one of ``freqs`` / ``n_top``.
    center : bool
        Subtract the token mean first (removes the DC frequency).

    Examples
    --------
    :math:`p=7`, :math:`E[a]=(\cos\frac{2\pi a}7,\ 0.5\sin\frac{6\pi a}7)`, ``freqs=[1]``: 0.2.

    Notes
    -----
    Accuracy: the outside energy is summed directly (not 1 - inside/total), so a small fraction keeps
    its digits: relative error ≤ 1e-14 + 2e-15 √(inside/outside), the floor set by the float DFT rows,
    which leak ~1e-16 of the inside amplitude into each outside coefficient (fraction 1e-12: ~1e-10).

    References
    ----------
    Spec ``clocks:appF4-fourier``.
    """
    if (freqs is None) == (n_top is None):
        raise V.DomainError("exactly one of freqs / n_top must be given")
    Ea = V.as_float_array(E, "E")
    scale = float(np.max(np.abs(Ea)))
    # a ratio of energies: scale E first (energies of entries past 1e154 overflowed, below 1e-154 vanished)
    e = fourier_energies(Ea / scale if scale > 0 else Ea, p, center=center, token_axis=token_axis)
    _, pp = _embedding(E, p, token_axis, False)
    counted = np.ones(e.size, dtype=bool)
    # after centring the DC energy is 0: its rounding residue (~1e-32 of the total) is not counted
    counted[0] = not _flag(center, "center")
    total = float(np.sum(e[counted]))
    if total <= 0.0:
        raise V.DomainError("E has zero energy (after centring)")
    if freqs is not None:
        f = np.atleast_1d(V.integer_array(freqs, "freqs", what="a non-empty 1-D set of integers"))
        if f.size == 0 or f.ndim != 1:
            raise V.DomainError(f"freqs must be a non-empty 1-D set of integers (got {V.show(freqs)})")
        f = np.mod(f, pp)
        sel = np.unique(np.minimum(f, pp - f))
    else:
        nt = V.integer_at_least(n_top, "n_top", 1)
        if nt > e.size - 1:
            raise V.DomainError(f"n_top must be <= {e.size - 1} nonzero frequencies (got {nt})")
        sel = 1 + np.argsort(-e[1:], kind="stable")[:nt]
    # the outside energy summed directly: 1 - inside/total cancelled (relative error 2e-5 at a fraction of
    # 1e-12, 0 at 1e-20)
    counted[sel] = False
    return float(np.sum(e[counted])) / total
