"""Clocks: energy gaps and cross-entropy bounds."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from .. import _floats as FL
from .. import _validate as V
from ..citations import cites
from .. import _pointwise as P
from ._args import _flag, _labels, _LN2, _logits, _n_classes


@cites("clocks:eq3.1", "clocks:appF4-min-gap")
def logit_gaps(logits, labels):
    r"""Logit gaps γ_ik = z_{i,y_i} − z_ik of every sample i against every incorrect class k ≠ y_i.

    Parameters
    ----------
    logits : array_like
        Logits z, a finite 2-D array of shape (n, K): one row per sample, K ≥ 2 classes.
    labels : array_like of int
        True class y_i of each sample, a 1-D integer array of length n with entries in [0, K)
        (0-based labels).

    Returns
    -------
    numpy.ndarray
        float64 array of shape (n, K − 1); row i holds γ_ik for the incorrect classes k in increasing
        class order.  A gap is positive when the true class beats that class.

    Raises
    ------
    DomainError
        If `logits` is not a finite 2-D array with at least 2 columns, or `labels` is not a 1-D integer
        array of length n with entries in [0, K).

    References
    ----------
    Spec IDs `clocks:eq3.1` (paper eq. 3.1) and `clocks:appF4-min-gap` (App. F.4).
    """
    z = _logits(logits)
    n, k = z.shape
    y = _labels(labels, n, k)
    zy = z[np.arange(n), y]
    keep = np.ones_like(z, dtype=bool)
    keep[np.arange(n), y] = False
    return (zy[:, None] - z)[keep].reshape(n, k - 1)


@cites("clocks:eq3.1", "clocks:appF4-min-gap")
def min_logit_gap(logits, labels):
    r"""Minimum logit gap γ̂_min = min_i (z_{i,y_i} − max_{k≠y_i} z_ik) over the samples.

    It is positive if and only if every sample is classified correctly with a strict margin.

    Parameters
    ----------
    logits : array_like
        Logits z, a finite 2-D array of shape (n, K): one row per sample, K ≥ 2 classes.
    labels : array_like of int
        True class y_i of each sample, a 1-D integer array of length n with entries in [0, K).

    Returns
    -------
    float
        The smallest gap over all samples and incorrect classes (negative when some sample is
        misclassified).

    Raises
    ------
    DomainError
        If `logits` is not a finite 2-D array with at least 2 columns, or `labels` is not a 1-D integer
        array of length n with entries in [0, K).

    References
    ----------
    Spec IDs `clocks:eq3.1` (paper eq. 3.1) and `clocks:appF4-min-gap` (App. F.4, the empirical
    minimum gap).
    """
    return float(np.min(logit_gaps(logits, labels)))


@cites("clocks:eq3.2")
def cross_entropy_from_gaps(gaps):
    r"""Per-sample cross-entropy from the logit gaps, in the cancellation-free form.

    .. math::

        \ell_i=\log\Big(1+\sum_{k\ne y_i}e^{-\gamma_{ik}}\Big)
        =\operatorname{softplus}\Big(\operatorname{logsumexp}_k(-\gamma_{ik})\Big).

    In words: ℓ_i = log(1 + Σ_{k≠y_i} exp(−γ_ik)), computed as log1p of the sum where the sum is
    finite and positive, else as softplus(logsumexp(−γ_i)).  Exact to relative 10⁻¹⁶ for losses down
    to 10⁻³⁰⁰; the textbook `logsumexp(z) - z[y]` returns exactly 0 once min γ ≳ 37 in float64.

    Parameters
    ----------
    gaps : array_like
        Finite logit gaps γ_ik (see `logit_gaps`): a 2-D array of shape (n, K − 1), one row per sample,
        or a 1-D array of length K − 1 for one sample.

    Returns
    -------
    float or numpy.ndarray
        The loss ℓ_i ≥ 0 of each sample, in nats: float64 array of shape (n,) for 2-D input, a float
        for one sample.

    Raises
    ------
    DomainError
        If `gaps` is empty, not finite, or neither 1-D nor 2-D.

    References
    ----------
    Spec ID `clocks:eq3.2` (paper eq. 3.2, the cross-entropy in gap form).
    """
    g = V.as_float_array(gaps, "gaps")
    if g.ndim not in (1, 2):
        raise V.DomainError(f"gaps must be 1-D (one sample) or 2-D (n, K-1) (got shape {g.shape})")
    s = special.logsumexp(-g, axis=-1)
    # log1p(sum_k e^{-gamma_k}) with every term correctly rounded wherever the sum is finite and > 0, also
    # subnormal (each term then carries an absolute error <= 2.5e-324): the softplus of the rounded
    # logsumexp loses eps |s| relative for large gaps (5.4e-14 at gamma = 617, 3.4e-14 at 709.6, where
    # the sum is just below the normal range); it is left for an overflowing sum and a sum that underflows to 0
    with np.errstate(over="ignore", under="ignore"):
        x = np.sum(np.exp(-g), axis=-1)
        out = np.where(np.isfinite(x) & (x > 0.0), np.log1p(x), np.logaddexp(0.0, s))
    return V.scalar_or_array(out)


@cites("clocks:eq3.2", "clocks:eq2.1")
def cross_entropy(logits, labels, *, reduction="mean"):
    r"""Softmax cross-entropy L = (1/n)·Σ_i ℓ_i of a batch of logits, evaluated in gap form.

    Each ℓ_i is computed from the logit gaps (`cross_entropy_from_gaps`), so losses far below
    machine epsilon keep their relative accuracy.

    Parameters
    ----------
    logits : array_like
        Logits z, a finite 2-D array of shape (n, K): one row per sample, K ≥ 2 classes.
    labels : array_like of int
        True class y_i of each sample, a 1-D integer array of length n with entries in [0, K).
    reduction : {"mean", "sum", "none"}, optional
        How the per-sample losses are combined: `"mean"` (default) the mean L, `"sum"` the sum,
        `"none"` the per-sample losses.

    Returns
    -------
    float or numpy.ndarray
        The loss in nats: a float for `"mean"` and `"sum"`, a float64 array of shape (n,) for
        `"none"`.

    Raises
    ------
    DomainError
        If `logits` or `labels` is invalid (see `logit_gaps`) or `reduction` is not one of the three
        options.

    References
    ----------
    Spec IDs `clocks:eq3.2` (paper eq. 3.2) and `clocks:eq2.1` (eq. 2.1: the classifier clock is the
    first time this loss falls below ε).
    """
    red = V.choice(reduction, "reduction", ("mean", "sum", "none"))
    per = np.atleast_1d(cross_entropy_from_gaps(logit_gaps(logits, labels)))
    if red == "none":
        return per
    return float(np.mean(per) if red == "mean" else np.sum(per))


@cites("clocks:lem3.1")
def ce_tail_bound(gamma, n_classes):
    r"""Cross-entropy bound under a uniform logit gap γ_ik ≥ γ (Lemma 3.1).

    .. math:: \mathcal L\le\log\big(1+(K-1)e^{-\gamma}\big)

    In words: if every gap is at least γ, the mean loss is at most log(1 + (K − 1)·e^(−γ)).  The value
    is log1p of an accurately rounded (K − 1)·e^(−γ) where that product is finite, else
    logaddexp(0, log(K − 1) − γ): valid for any real γ, without overflow.

    Parameters
    ----------
    gamma : float or array_like
        Uniform lower bound γ on the logit gaps, any finite real (negative gaps are allowed).
    n_classes : int
        Number of classes K, an integer ≥ 2.

    Returns
    -------
    float or numpy.ndarray
        The bound in nats, ≥ 0, of the shape of `gamma` (a float for a scalar).

    Raises
    ------
    DomainError
        If `gamma` is empty or not finite, or `n_classes` is not an integer ≥ 2.

    References
    ----------
    Spec ID `clocks:lem3.1` (paper Lemma 3.1).
    """
    return V.scalar_or_array(_tail(V.finite(gamma, "gamma"), _n_classes(n_classes)))


def _tail(g: np.ndarray, k: int) -> np.ndarray:
    """log(1 + (K-1) e^{-g}) for g in [-inf, inf] (g = +inf gives 0).

    log1p of the accurate product x = (K-1) e^{-g} (`_tail_linear`) where x is finite; where it
    overflows, logaddexp(0, log(K-1) - g) (then the value is > 709 and the log form is exact to 1 ulp).
    `logaddexp` alone rounds log(K-1) - g first and loses eps |g| relative for large g (5e-14 at g = 617).
    """
    x = _tail_linear(g, k)
    with np.errstate(over="ignore"):
        out = np.log1p(x, out=P.into(x))
        if P.extrema(out)[1] < math.inf:  # one reduction: every x finite, the log1p form alone
            return out
        return P.patch(out, out == math.inf, lambda g: np.logaddexp(0.0, math.log(k - 1) - g), g)


@cites("clocks:lem3.1")
def ce_tail_bound_linear(gamma, n_classes):
    r"""The linear tail bound (K − 1)·e^(−γ), which is ≥ log(1 + (K − 1)·e^(−γ)) (Lemma 3.1).

    The product is formed as ((K − 1)·e^(−γ/2))·e^(−γ/2) where its factors are normal doubles, else
    as exp(log(K − 1) − γ); the relative error is at most a few units of ε·|γ|.

    Parameters
    ----------
    gamma : float or array_like
        Uniform lower bound γ on the logit gaps, any finite real.
    n_classes : int
        Number of classes K, an integer ≥ 2.

    Returns
    -------
    float or numpy.ndarray
        (K − 1)·e^(−γ) in nats, of the shape of `gamma` (a float for a scalar); `inf` only where the
        true value exceeds the largest double.

    Raises
    ------
    DomainError
        If `gamma` is empty or not finite, or `n_classes` is not an integer ≥ 2.

    References
    ----------
    Spec ID `clocks:lem3.1` (paper Lemma 3.1).
    """
    return V.scalar_or_array(_tail_linear(V.finite(gamma, "gamma"), _n_classes(n_classes)))


def _tail_linear(g: Any, k: int) -> Any:
    """(K-1) e^{-g} for g in (-inf, inf] (g = +inf gives 0): an array or a number (the same operations)."""
    km1 = float(k - 1)
    # ((K-1) e^{-gamma/2}) e^{-gamma/2} (gamma/2 exact, each exp correctly rounded: measured <= 2.0e-16)
    # where the half power and the partial products are normal doubles -- this reaches results down to
    # 2.2e-308 for gamma up to 1416; elsewhere exp(log(K-1) - gamma), relative error ~ eps |gamma|, the
    # condition number in gamma (5.7e-14 measured; (K-1) e^{-gamma} alone lost 1.5e-14 at gamma = 712).
    # For gamma in [log(K-1) - 709, log(K-1) + 708] every factor and product is a normal double (the direct
    # form); the bulk is computed on gamma clipped to that range (no subnormal arithmetic, which costs ~100x
    # a normal operation) and the points outside it get the careful choice on their own (`_tail_outside`)
    lo, hi = math.log(km1) - 709.0, math.log(km1) + 708.0
    g_lo, g_hi = P.extrema(g)
    inside = lo <= g_lo and g_hi <= hi
    with np.errstate(over="ignore", under="ignore"):
        # in place (on the caller's own g where no point needs g again): a fresh 1e5-point temporary costs more
        # than the exp
        h = np.multiply(g, -0.5, out=P.into(g)) if inside else np.multiply(np.clip(g, lo, hi), -0.5)
        h = np.exp(h, out=P.into(h))
        direct = km1 * h
        direct = np.multiply(direct, h, out=P.into(direct))
        if inside:
            return direct
        return P.patch(direct, (g < lo) | (g > hi), lambda g: _tail_outside(g, km1), g)


def _tail_outside(g: Any, km1: float) -> Any:
    """(K-1) e^{-g} where g may leave [log(K-1) - 709, log(K-1) + 708] (see `_tail_linear`)."""
    h = np.exp(-0.5 * g)
    part = km1 * h
    direct = part * h
    logspace = np.exp(math.log(km1) - g)
    # (a subnormal or zero direct result is the single correct rounding of an accurate product: kept)
    ok = (h >= FL.TINY) & np.isfinite(h) & (part >= FL.TINY) & np.isfinite(part) & np.isfinite(direct)
    return np.where(ok, direct, logspace)


@cites("clocks:lem3.1")
def gap_for_loss_level(eps, n_classes, *, sharp=False):
    r"""Uniform logit gap that guarantees a mean cross-entropy L ≤ ε (Lemma 3.1 inverted).

    .. math::

        \gamma\ge\log\frac{K-1}{\varepsilon}\quad(\text{from }(K-1)e^{-\gamma}\le\varepsilon),\qquad
        \text{sharp: }\gamma\ge\log\frac{K-1}{e^{\varepsilon}-1}.

    In words: the default inverts the linear bound, γ = log((K − 1)/ε); `sharp=True` inverts the log1p
    bound exactly, γ = log((K − 1)/(e^ε − 1)), a slightly smaller gap.

    Parameters
    ----------
    eps : float or array_like
        Target loss level ε in nats, finite and > 0.
    n_classes : int
        Number of classes K, an integer ≥ 2.
    sharp : bool, optional
        `False` (default): invert (K − 1)·e^(−γ) ≤ ε; `True`: invert log(1 + (K − 1)·e^(−γ)) ≤ ε
        exactly (through expm1, without overflow for ε > 709).

    Returns
    -------
    float or numpy.ndarray
        The required gap γ (any real; negative where ε is large), of the shape of `eps`.

    Raises
    ------
    DomainError
        If `eps` is not finite and > 0, `n_classes` is not an integer ≥ 2, or `sharp` is not a bool.

    Examples
    --------
    >>> round(gap_for_loss_level(1e-3, 4), 5), round(gap_for_loss_level(1e-3, 4, sharp=True), 5)
    (8.00637, 8.00587)

    References
    ----------
    Spec ID `clocks:lem3.1` (paper Lemma 3.1).
    """
    e = V.positive(eps, "eps")
    k = _n_classes(n_classes)
    sharp = _flag(sharp, "sharp")
    le = FL.log_expm1(e) if sharp else np.log(e)  # log(e^eps - 1) without overflow for eps > 709
    return V.scalar_or_array(math.log(k - 1) - le)


@cites("clocks:lem3.2")
def ce_smoothness_constant(B):
    r"""Global smoothness constant β = B²/2 of the mean cross-entropy in W (Frobenius geometry).

    .. math:: \beta=\frac{B^2}{2},\qquad \max_i\lVert x_i\rVert_2\le B .

    The bound comes from vᵀ(diag π − ππᵀ)v = Var_π(v) ≤ (max v − min v)²/4 ≤ ‖v‖²/2; it is attained
    for K = 2, π = (1/2, 1/2) and one sample.  (Not B²/4, not B².)

    Parameters
    ----------
    B : float or array_like
        Bound B on the Euclidean norm of every input, max_i ‖x_i‖₂ ≤ B; finite and ≥ 0.

    Returns
    -------
    float or numpy.ndarray
        β = B²/2, of the shape of `B`; `inf` for B > 1.9·10¹⁵⁴, where the true value exceeds the
        largest double.

    Raises
    ------
    DomainError
        If `B` is empty, not finite or negative.

    References
    ----------
    Spec ID `clocks:lem3.2` (paper Lemma 3.2).
    """
    b = V.nonnegative(B, "B")
    with np.errstate(over="ignore", under="ignore"):  # inf for B > 1.9e154: the true value exceeds 1.8e308
        return V.scalar_or_array((0.5 * b) * b)  # not 0.5 * (b * b): b * b overflows for b in (1.3e154, 1.9e154)


@cites("clocks:lem3.2")
def softmax_logit_hessian(probs):
    r"""Hessian of the cross-entropy in the logits, H = diag(π) − ππᵀ.

    Parameters
    ----------
    probs : array_like
        Softmax probability vectors π along the last axis, shape (..., K): entries ≥ 0 summing to 1
        within 8·K·ε of the input dtype (float32 or float16 softmax outputs are accepted at their own
        precision).

    Returns
    -------
    numpy.ndarray
        float64 array of shape (..., K, K): one symmetric positive semi-definite K × K matrix per
        probability vector.

    Raises
    ------
    DomainError
        If `probs` is empty, not finite, has a negative entry, or a vector that does not sum to 1.

    References
    ----------
    Spec ID `clocks:lem3.2` (paper Lemma 3.2).
    """
    pi = V.probabilities(probs, "probs")
    eye = np.eye(pi.shape[-1])
    return pi[..., :, None] * eye - pi[..., :, None] * pi[..., None, :]


@cites("clocks:lem3.3")
def log_binary_pl_ratio(margin):
    r"""Logarithm of the Polyak–Łojasiewicz ratio of the binary logistic loss at margin m.

    .. math::

        r(m)=\frac{\ell'(m)^2}{\ell(m)},\quad \ell(m)=\log(1+e^{-m}),\quad \ell'(m)=-\frac1{1+e^{m}},
        \qquad r(m)\sim e^{-m}\ (m\to\infty),

    In words: r(m) = ℓ′(m)²/ℓ(m) with ℓ(m) = log(1 + e^(−m)), which decays like e^(−m), so no
    c_PL > 0 works for all margins above a fixed one (Lemma 3.3).  Evaluated as
    log r = −2·softplus(m) − log(softplus(−m)), and for m > 36 as −m − 2·log1p(e^(−m)) + e^(−m)/2
    (`log1p(exp(-m))` underflows past m ≈ 745).

    Parameters
    ----------
    margin : float or array_like
        Margin m of the binary logistic loss, any finite real.

    Returns
    -------
    float or numpy.ndarray
        log r(m), of the shape of `margin` (a float for a scalar).

    Raises
    ------
    DomainError
        If `margin` is empty or not finite.

    References
    ----------
    Spec ID `clocks:lem3.3` (paper Lemma 3.3).
    """
    m = V.finite(margin, "margin")
    big = m > 36.0
    mm = np.where(big, 0.0, m)
    # softplus(+-m) = max(+-m, 0) + log1p(e^-|m|) (logaddexp(0, +-m)'s form, within an ulp of it; one exp and log1p)
    t = np.log1p(np.exp(-np.abs(mm)))
    small = -2.0 * (np.maximum(mm, 0.0) + t) - np.log(np.maximum(-mm, 0.0) + t)
    if not np.any(big):
        return V.scalar_or_array(small)
    mb = np.where(big, m, 37.0)
    em = np.exp(-mb)
    large = -mb - 2.0 * np.log1p(em) + 0.5 * em
    return V.scalar_or_array(np.where(big, large, small))


@cites("clocks:lem3.3")
def binary_pl_ratio(margin):
    r"""The Polyak–Łojasiewicz ratio r(m) = ℓ′(m)²/ℓ(m) of the binary logistic loss at margin m.

    It is the exponential of `log_binary_pl_ratio` and underflows to 0 only where the true value is
    below 10⁻³⁰⁸.

    Parameters
    ----------
    margin : float or array_like
        Margin m of the binary logistic loss, any finite real.

    Returns
    -------
    float or numpy.ndarray
        r(m) > 0 (0 only after underflow), of the shape of `margin`.

    Raises
    ------
    DomainError
        If `margin` is empty or not finite.

    References
    ----------
    Spec ID `clocks:lem3.3` (paper Lemma 3.3).
    """
    return V.scalar_or_array(np.exp(log_binary_pl_ratio(margin)))


@cites("clocks:appF1-acc-order")
def zero_one_loss_threshold(n):
    r"""Loss level ln 2/n below which every training point is classified correctly.

    If L ≤ ε < ln 2/n then every ℓ_i < ln 2, so π_{y_i} > 1/2: the zero-one clock precedes the loss
    clock, t_01 ≤ t_cls(ε).

    Parameters
    ----------
    n : int or array_like of int
        Number of training samples, an integer ≥ 1 (an array of them for a sweep).

    Returns
    -------
    float or ndarray
        ln 2/n, in nats; the shape of `n`.

    Raises
    ------
    DomainError
        If an entry of `n` is not an integer ≥ 1.

    References
    ----------
    Spec ID `clocks:appF1-acc-order` (paper App. F.1).
    """
    return P.result(np.divide(_LN2, V.counts(n, "n", 1)))
