"""Clocks: estimators of the clocks from a training record."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _pointwise as P
from .. import _validate as V
from ..citations import cites
from ._args import _flag, _int_p
from ._characters import _fourier_rows
from ._fast_clock import _records


def _window(window: Any) -> int:
    return V.integer_at_least(window, "window", 1)


@cites("clocks:appF4-cls-estimator", "clocks:appF4-persist", "clocks:eq2.1", "clocks:eq2.2")
def first_hitting_time(times, values, threshold, *, window=1, direction="below"):
    r"""First record time at which a threshold is met and stays met for `window` consecutive records.

    .. math::

        \hat t^{(w)}=\min\{t_j:\ v_i\le\vartheta\ \ \forall i\in\{j,\dots,j+w-1\}\}
        \quad(\ge\text{ for }\texttt{direction="above"}).

    In words: the first t_j such that v_i ≤ ϑ (or v_i ≥ ϑ with `direction="above"`) for the w records
    j, …, j + w − 1.  Thresholds are inclusive; NaN values count as not met; a window running past the
    last record is not accepted (conservative).

    Parameters
    ----------
    times : array_like
        Record times, a finite, strictly increasing 1-D array (gradient-flow time, or accumulated
        optimiser time, see `accumulated_time`).
    values : array_like
        Recorded values, a 1-D array of the length of `times`; NaN marks a record not taken.
    threshold : float
        Threshold ϑ, a finite real.
    window : int, optional
        Persistence window w in records, an integer ≥ 1 (default 1: the plain first passage).
    direction : {"below", "above"}, optional
        `"below"` (default): the threshold is met when v ≤ ϑ; `"above"`: when v ≥ ϑ.

    Returns
    -------
    float
        The first qualifying record time; `math.inf` if the threshold is never met for `window`
        records.

    Raises
    ------
    DomainError
        If `times` is not finite and strictly increasing, `values` is not of its length, `threshold`
        is not a finite scalar, `window` is not an integer ≥ 1, or `direction` is not one of the two
        options.

    Examples
    --------
    >>> first_hitting_time([0, 1, 2, 3, 4, 5], [1, .5, .05, .2, .04, .03], 0.1, window=2)
    4.0

    References
    ----------
    Spec IDs `clocks:appF4-cls-estimator` and `clocks:appF4-persist` (paper App. F.4), `clocks:eq2.1`
    and `clocks:eq2.2` (eqs. 2.1, 2.2, the two clocks).
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
    r"""Classifier-clock estimator t̂_cls^(w)(ε): first (or sustained) passage of the training loss below ε.

    Record the loss in gap form (`cross_entropy`) so that levels far below machine epsilon are
    resolved.

    Parameters
    ----------
    times : array_like
        Record times, a finite, strictly increasing 1-D array.
    losses : array_like
        Mean training cross-entropy at each record, in nats; a 1-D array of the length of `times`
        (NaN marks a record not taken).
    eps : float
        Loss level ε, finite and > 0.
    window : int, optional
        Persistence window in records, an integer ≥ 1 (default 1: the plain first passage).

    Returns
    -------
    float
        The estimated t_cls(ε), a record time; `math.inf` if never reached (e.g. below the loss floor
        that weight decay creates).

    Raises
    ------
    DomainError
        If `times` or `losses` is invalid (see `first_hitting_time`), `eps` is not finite and > 0, or
        `window` is not an integer ≥ 1.

    References
    ----------
    Spec IDs `clocks:appF4-cls-estimator` (paper App. F.4) and `clocks:eq2.1` (eq. 2.1).
    """
    e = V.positive(eps, "eps", scalar=True)
    return first_hitting_time(times, losses, e, window=window, direction="below")


@cites("clocks:appF4-persist", "clocks:eq2.2")
def representation_clock(times, gaps, delta, *, window=1):
    r"""Sustained representation-clock estimator t̂_rep^(w)(δ): first passage of a structural gap below δ.

    Parameters
    ----------
    times : array_like
        Record times, a finite, strictly increasing 1-D array.
    gaps : array_like
        Structural gap G(t_j) at each record (an energy gap, a spectral tail, `stable_rank_gap`, a
        class-separation or Fourier energy ratio), a 1-D array of the length of `times`; NaN marks a
        record not taken.
    delta : float
        Level δ of the gap, finite and > 0.
    window : int, optional
        Persistence window in records, an integer ≥ 1 (default 1); a window > 1 guards against a
        non-monotone gap.

    Returns
    -------
    float
        The estimated t_rep(δ), a record time; `math.inf` if never reached.

    Raises
    ------
    DomainError
        If `times` or `gaps` is invalid (see `first_hitting_time`), `delta` is not finite and > 0, or
        `window` is not an integer ≥ 1.

    References
    ----------
    Spec IDs `clocks:appF4-persist` (paper App. F.4) and `clocks:eq2.2` (eq. 2.2).
    """
    d = V.positive(delta, "delta", scalar=True)
    return first_hitting_time(times, gaps, d, window=window, direction="below")


@cites("clocks:appF4-acc-clock")
def accuracy_clock(times, train_acc, *, target=1.0, window=1):
    r"""Zero-one clock t_01 = inf{t : train accuracy ≥ target}, by default the first record with every sample correct.

    With the default target 1 it is the first time γ̂_min > 0; coarser than t_cls and, for
    ε < ln 2/n, not later (spec ID `clocks:appF1-acc-order`, see `zero_one_loss_threshold`).

    Parameters
    ----------
    times : array_like
        Record times, a finite, strictly increasing 1-D array.
    train_acc : array_like
        Training accuracy at each record, as fractions in [0, 1] (not percent); a 1-D array of the
        length of `times`, NaN marks a record not taken.
    target : float, optional
        Accuracy level, in (0, 1] (default 1: all training samples correct).
    window : int, optional
        Persistence window in records, an integer ≥ 1 (default 1).

    Returns
    -------
    float
        The first qualifying record time; `math.inf` if the target is never reached.

    Raises
    ------
    DomainError
        If `target` is outside (0, 1], an accuracy is outside [0, 1], or `times`, `window` are invalid
        (see `first_hitting_time`).

    References
    ----------
    Spec ID `clocks:appF4-acc-clock` (paper App. F.4).
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
    r"""Accumulated optimiser time τ_k = Σ_{j<k} η_j, with τ₀ = 0, the time axis of a discrete optimiser.

    A float64 cumulative sum (adequate for up to about 10⁷ steps).

    Parameters
    ----------
    lrs : array_like
        Learning rate η_j of each step, a finite 1-D array of entries ≥ 0.

    Returns
    -------
    numpy.ndarray
        float64 array of length len(lrs) + 1: τ₀ = 0, τ₁ = η₀, …; τ_k is the time after k steps.

    Raises
    ------
    DomainError
        If `lrs` is empty, not finite, negative, or not 1-D.

    References
    ----------
    Spec ID `clocks:appF4-opt-time` (paper App. F.4).
    """
    lr = V.nonnegative(lrs, "lrs")
    if lr.ndim != 1:
        raise V.DomainError(f"lrs must be 1-D (got shape {lr.shape})")
    return np.concatenate([[0.0], np.cumsum(lr)])


@cites("clocks:appF4-sep-ratio")
@V.broadcasting()
def separation_ratio(t_rep, t_cls):
    r"""Separation ratio R_sep = t̂_rep(δ)/t̂_cls(ε) of the two clock estimates (descriptive).

    The arguments broadcast together.

    Parameters
    ----------
    t_rep : float or array_like
        Representation-clock estimate t̂_rep(δ), ≥ 0, or `inf` when the level was never reached.
    t_cls : float or array_like
        Classifier-clock estimate t̂_cls(ε), finite and > 0 (use accumulated time, > 0 after the first
        step).

    Returns
    -------
    float or numpy.ndarray
        t_rep/t_cls, of the broadcast shape; `inf` where t_rep is `inf`.

    Raises
    ------
    DomainError
        If `t_cls` is not finite and > 0, `t_rep` is negative or NaN, or the arrays do not broadcast.

    References
    ----------
    Spec ID `clocks:appF4-sep-ratio` (paper App. F.4).
    """
    sc = P.scalars(t_rep, t_cls)
    tc = V.positive(t_cls, "t_cls", scalar=sc)
    # +inf allowed: the minimum alone decides (NaN propagates into it), one pass over t_rep
    tr = V.nonnegative(t_rep, "t_rep", context="or inf", scalar=sc, allow_inf=True)
    if sc:  # two floats: the same IEEE division (Python's float division gives inf and 0 silently too)
        return tr / tc
    with np.errstate(over="ignore", under="ignore"):  # inf / 0 only beyond the double range
        return P.result(np.divide(tr, tc))


@cites("clocks:appF4-srank-stat")
def stable_rank_gap(sranks, *, target=None):
    r"""Structural gap G_j built from a stable-rank time series S(t_j), for `representation_clock`.

    .. math::

        \mathcal G_j=[S_j-r^\star]_+\ \ (\texttt{target}=r^\star),\qquad\text{else}\quad
        \mathcal G_j=\frac{|S_j-S_{\rm end}|}{|S_0-S_{\rm end}|} .

    In words: with a target rank r*, G_j = max(S_j − r*, 0); without one, the distance to the final
    value normalised by its initial value, |S_j − S_end|/|S_0 − S_end|.  The stable rank need not be
    monotone (measured in the modular MLP); combine with the persistence window of
    `representation_clock`.

    Parameters
    ----------
    sranks : array_like
        Stable ranks S(t_j) of the records, a finite 1-D array of entries ≥ 1 (to round-off).
    target : float, optional
        Target stable rank r*, a finite real.  Default `None`: normalise by the first and last records
        instead.

    Returns
    -------
    numpy.ndarray
        float64 array of the length of `sranks`, the gap G_j ≥ 0 at each record.

    Raises
    ------
    DomainError
        If `sranks` is empty, not finite, not 1-D or has an entry below 1, `target` is not a finite
        scalar, or S_0 = S_end without a target.

    References
    ----------
    Spec ID `clocks:appF4-srank-stat` (paper App. F.4).
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
    r"""Class-separation ratio: within-class over between-class spread of representations.

    .. math::

        \mathrm{CS}=\frac{\frac1n\sum_i\lVert h_i-\bar h_{y_i}\rVert^2}{\frac1{|\mathcal C|}\sum_c\lVert\bar h_c-\bar h\rVert^2}
        \ \ (\texttt{"mean"}),\qquad\text{or denominator }\min_{c\ne c'}\lVert\bar h_c-\bar h_{c'}\rVert^2\ \ (\texttt{"min\_pair"}),

    In words: the mean squared distance of each representation h_i to its class centre h̄_{y_i},
    divided by the mean squared distance of the class centres to their unweighted mean h̄
    (`"mean"`), or by the smallest squared distance between two centres (`"min_pair"`).  Formed with
    scaled norms, so features beyond 10¹⁵⁴ or below 10⁻¹⁵⁴ do not overflow or vanish.

    Parameters
    ----------
    features : array_like
        Representations h_i, a finite array of shape (n, d), or (n,) for one feature.
    labels : array_like of int
        Class label of each representation, a 1-D integer array of length n; at least 2 distinct
        classes.
    between : {"mean", "min_pair"}, optional
        Denominator: `"mean"` (default) the mean spread of the centres, `"min_pair"` the closest pair
        of centres.

    Returns
    -------
    float
        The ratio CS ≥ 0 (0 when every representation sits at its class centre).

    Raises
    ------
    DomainError
        If `features` is not finite of shape (n, d), `labels` is not integer of shape (n,), fewer than
        2 classes are present, `between` is not one of the two options, or the class centres coincide.

    Examples
    --------
    >>> X = [[0, 0], [0, 2], [4, 0], [4, 2]]
    >>> class_separation_ratio(X, [0, 0, 1, 1]), class_separation_ratio(X, [0, 0, 1, 1], between="min_pair")
    (0.25, 0.0625)

    References
    ----------
    Spec ID `clocks:appF4-class-sep` (paper App. F.4).
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
    r"""Energy e_k of each frequency k of an embedding over the tokens of ℤ_p.

    .. math:: e_k=\lVert c_k^\top E\rVert^2+\lVert s_k^\top E\rVert^2,\quad k=0,\dots,\lfloor p/2\rfloor

    In words: e_k is the squared norm of the projection of the token axis of E on the cosine and sine
    rows of frequency k of `fourier_basis` (e_0 is the DC part, 0 after centring; for even p the Nyquist
    frequency p/2 has its one row).  Parseval: Σ_k e_k = ‖E‖_F².

    Parameters
    ----------
    E : array_like
        Embedding, a finite 1-D or 2-D array with one entry (1-D) or one row of features per token
        along `token_axis`.
    p : int, optional
        Modulus p, an integer ≥ 2 that must equal the length of the token axis.  Default `None`: the
        length of the token axis.
    center : bool, optional
        `True` (default): subtract the token mean first (removes the DC frequency); `False`: use E as
        given.
    token_axis : int, optional
        Axis of E that runs over the p tokens, 0 (default) or 1.

    Returns
    -------
    numpy.ndarray
        float64 array of length p // 2 + 1: entry k is the energy e_k ≥ 0 of frequency k.

    Raises
    ------
    DomainError
        If `E` is not a finite 1-D or 2-D array, `token_axis` is not 0 or 1, `p` does not match the
        token axis, or the token axis is shorter than 2.

    References
    ----------
    Spec ID `clocks:appF4-fourier` (paper App. F.4).
    """
    M, pp = _embedding(E, p, token_axis, center)
    rows, freq = _fourier_rows(pp)
    proj = np.sum((rows @ M) ** 2, axis=1)
    return np.bincount(freq, weights=proj, minlength=pp // 2 + 1)


@cites("clocks:appF4-fourier")
def fourier_energy_outside(E, p=None, *, freqs=None, n_top=None, center=True, token_axis=0):
    r"""Fraction of embedding energy outside a set of frequencies.

    .. math:: \mathrm{FE}_{\mathcal F}(E)=1-\frac{\sum_{k\in\mathcal F}e_k}{\sum_ke_k}=\frac{\lVert E-\Pi_{\mathcal F}E\rVert_F^2}{\lVert E\rVert_F^2}

    In words: one minus the share of the energies e_k (see `fourier_energies`) that falls on the
    frequency set F; equivalently the relative squared distance of E from its projection on those
    frequencies.  E is rescaled by its largest entry first, so the ratio neither overflows nor
    vanishes.

    Parameters
    ----------
    E : array_like
        Embedding, a finite 1-D or 2-D array with one entry or row of features per token along
        `token_axis`.
    p : int, optional
        Modulus p, an integer ≥ 2 that must equal the length of the token axis.  Default `None`: the
        length of the token axis.
    freqs : array_like of int, optional
        The frequency set F, a non-empty 1-D set of integers; taken mod p and folded (k ≡ p − k).
        Exactly one of `freqs` and `n_top` must be given.
    n_top : int, optional
        Use the `n_top` highest-energy nonzero frequencies of this E as F (data-dependent), an integer
        in [1, p // 2].  Exactly one of `freqs` and `n_top` must be given.
    center : bool, optional
        `True` (default): subtract the token mean first (removes the DC frequency); `False`: use E as
        given.
    token_axis : int, optional
        Axis of E that runs over the p tokens, 0 (default) or 1.

    Returns
    -------
    float
        FE_F(E) in [0, 1].

    Raises
    ------
    DomainError
        If both or neither of `freqs` and `n_top` are given, `freqs` is empty or not integer, `n_top`
        is out of range, E has zero energy after centring, or `E`, `p`, `token_axis` are invalid (see
        `fourier_energies`).

    Examples
    --------
    >>> import numpy as np
    >>> a = np.arange(7)
    >>> E = np.stack([np.cos(2 * np.pi * a / 7), 0.5 * np.sin(6 * np.pi * a / 7)], axis=1)
    >>> round(fourier_energy_outside(E, freqs=[1]), 12)
    0.2

    Notes
    -----
    Accuracy: the outside energy is summed directly (not 1 - inside/total), so a small fraction keeps
    its digits: relative error ≤ 1e-14 + 2e-15 √(inside/outside), the floor set by the float DFT rows,
    which leak ~1e-16 of the inside amplitude into each outside coefficient (fraction 1e-12: ~1e-10).

    References
    ----------
    Spec ID `clocks:appF4-fourier` (paper App. F.4).
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
