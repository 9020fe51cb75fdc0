"""Clocks: energy gaps and cross-entropy bounds."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import _floats as FL
from .. import _validate as V
from ..citations import cites
from ._args import _flag, _labels, _LN2, _logits, _n_classes


@cites("clocks:eq3.1", "clocks:appF4-min-gap")
def logit_gaps(logits, labels):
    r"""Logit gaps :math:`\gamma_{ik}=z_{i,y_i}-z_{ik}` for :math:`k\ne y_i`.

    Parameters
    ----------
    logits : array (n, K), K >= 2
    labels : int array (n,) in ``[0, K)``

    Returns
    -------
    ndarray, shape (n, K-1)
        Incorrect classes in increasing class order.

    References
    ----------
    Spec ``clocks:eq3.1`` (paper eq. 3.1).
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
    r"""Minimum gap :math:`\hat\gamma_{\min}=\min_i\big(z_{i,y_i}-\max_{k\ne y_i}z_{ik}\big)`.

    Positive iff every sample is classified correctly (strict margin).

    References
    ----------
    Spec ``clocks:eq3.1``, ``clocks:appF4-min-gap``.
    """
    return float(np.min(logit_gaps(logits, labels)))


@cites("clocks:eq3.2")
def cross_entropy_from_gaps(gaps):
    r"""Per-sample cross-entropy from the gaps, in the cancellation-free form.

    .. math::

        \ell_i=\log\Big(1+\sum_{k\ne y_i}e^{-\gamma_{ik}}\Big)
        =\operatorname{softplus}\Big(\operatorname{logsumexp}_k(-\gamma_{ik})\Big).

    Exact to relative :math:`10^{-16}` for losses down to :math:`10^{-300}`; the textbook
    ``logsumexp(z) - z[y]`` returns exactly 0 once :math:`\min\gamma\gtrsim37` (float64).

    Parameters
    ----------
    gaps : array (n, K-1) (a 1-D array is one sample)

    Returns
    -------
    ndarray (n,) (float for one sample)

    References
    ----------
    Spec ``clocks:eq3.2`` (paper eq. 3.2).
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
    r"""Softmax cross-entropy :math:`\mathcal L=\frac1n\sum_i\ell_i`, evaluated in gap form.

    Parameters
    ----------
    logits : array (n, K)
    labels : int array (n,)
    reduction : {"mean", "sum", "none"}

    References
    ----------
    Spec ``clocks:eq3.2``; the loss whose first passage below ``eps`` is the classifier clock
    (``clocks:eq2.1``).
    """
    red = V.choice(reduction, "reduction", ("mean", "sum", "none"))
    per = np.atleast_1d(cross_entropy_from_gaps(logit_gaps(logits, labels)))
    if red == "none":
        return per
    return float(np.mean(per) if red == "mean" else np.sum(per))


@cites("clocks:lem3.1")
def ce_tail_bound(gamma, n_classes):
    r"""Cross-entropy bound under a uniform gap :math:`\gamma_{ik}\ge\gamma`.

    .. math:: \mathcal L\le\log\big(1+(K-1)e^{-\gamma}\big)

    evaluated as ``logaddexp(0, log(K-1) - gamma)`` (any real :math:`\gamma`, no overflow).

    Parameters
    ----------
    gamma : real (array)
    n_classes : int >= 2

    References
    ----------
    Spec ``clocks:lem3.1`` (paper Lemma 3.1).
    """
    return V.scalar_or_array(_tail(V.finite(gamma, "gamma"), _n_classes(n_classes)))


def _tail(g: np.ndarray, k: int) -> np.ndarray:
    """log(1 + (K-1) e^{-g}) for g in [-inf, inf] (g = +inf gives 0).

    log1p of the accurate product x = (K-1) e^{-g} (:func:`_tail_linear`) where x is finite; where it
    overflows, logaddexp(0, log(K-1) - g) (then the value is > 709 and the log form is exact to 1 ulp).
    ``logaddexp`` alone rounds log(K-1) - g first and loses eps |g| relative for large g (5e-14 at g = 617).
    """
    x = _tail_linear(g, k)
    with np.errstate(over="ignore"):
        return np.where(np.isfinite(x), np.log1p(x), np.logaddexp(0.0, math.log(k - 1) - g))


@cites("clocks:lem3.1")
def ce_tail_bound_linear(gamma, n_classes):
    r"""The linear tail bound :math:`(K-1)e^{-\gamma}\ \ (\ge\log(1+(K-1)e^{-\gamma}))`.

    References
    ----------
    Spec ``clocks:lem3.1``.
    """
    return V.scalar_or_array(_tail_linear(V.finite(gamma, "gamma"), _n_classes(n_classes)))


def _tail_linear(g: np.ndarray, k: int) -> np.ndarray:
    """(K-1) e^{-g} for g in (-inf, inf] (g = +inf gives 0)."""
    km1 = float(k - 1)
    # ((K-1) e^{-gamma/2}) e^{-gamma/2} (gamma/2 exact, each exp correctly rounded: measured <= 2.0e-16)
    # where the half power and the partial products are normal doubles -- this reaches results down to
    # 2.2e-308 for gamma up to 1416; elsewhere exp(log(K-1) - gamma), relative error ~ eps |gamma|, the
    # condition number in gamma (5.7e-14 measured; (K-1) e^{-gamma} alone lost 1.5e-14 at gamma = 712)
    with np.errstate(over="ignore", under="ignore"):
        h = np.exp(-0.5 * g)
        part = km1 * h
        direct = part * h
        logspace = np.exp(math.log(km1) - g)
    # (a subnormal or zero direct result is the single correct rounding of an accurate product: kept)
    ok = (h >= FL.TINY) & np.isfinite(h) & (part >= FL.TINY) & np.isfinite(part) & np.isfinite(direct)
    return np.where(ok, direct, logspace)


@cites("clocks:lem3.1")
def gap_for_loss_level(eps, n_classes, *, sharp=False):
    r"""Gap that guarantees :math:`\mathcal L\le\varepsilon`.

    .. math::

        \gamma\ge\log\frac{K-1}{\varepsilon}\quad(\text{from }(K-1)e^{-\gamma}\le\varepsilon),\qquad
        \text{sharp: }\gamma\ge\log\frac{K-1}{e^{\varepsilon}-1}.

    Parameters
    ----------
    eps : float > 0
    n_classes : int >= 2
    sharp : bool
        Invert the log1p form exactly (``expm1``).

    Examples
    --------
    ``gap_for_loss_level(1e-3, 4)`` = 8.00637, sharp 8.00587.

    References
    ----------
    Spec ``clocks:lem3.1``.
    """
    e = V.positive(eps, "eps")
    k = _n_classes(n_classes)
    sharp = _flag(sharp, "sharp")
    le = FL.log_expm1(e) if sharp else np.log(e)  # log(e^eps - 1) without overflow for eps > 709
    return V.scalar_or_array(math.log(k - 1) - le)


@cites("clocks:lem3.2")
def ce_smoothness_constant(B):
    r"""Global smoothness constant of the mean cross-entropy in :math:`W` (Frobenius geometry).

    .. math:: \beta=\frac{B^2}{2},\qquad \max_i\lVert x_i\rVert_2\le B .

    From :math:`v^\top(\operatorname{diag}\pi-\pi\pi^\top)v=\operatorname{Var}_\pi(v)\le\frac14(\max v-\min v)^2
    \le\frac12\lVert v\rVert^2`; attained for :math:`K=2`, :math:`\pi=(\frac12,\frac12)`, one sample.
    (Not :math:`B^2/4`, not :math:`B^2`.)

    References
    ----------
    Spec ``clocks:lem3.2`` (paper Lemma 3.2).
    """
    b = V.nonnegative(B, "B")
    with np.errstate(over="ignore", under="ignore"):  # inf for B > 1.9e154: the true value exceeds 1.8e308
        return V.scalar_or_array((0.5 * b) * b)  # not 0.5 * (b * b): b * b overflows for b in (1.3e154, 1.9e154)


@cites("clocks:lem3.2")
def softmax_logit_hessian(probs):
    r"""Hessian of the cross-entropy in the logits, :math:`H=\operatorname{diag}(\pi)-\pi\pi^\top`.

    Parameters
    ----------
    probs : array (..., K)
        Probability vectors (nonnegative, summing to 1 within :math:`8K\varepsilon` of the input
        dtype: float32 or float16 softmax outputs are accepted at their own precision).

    Returns
    -------
    ndarray (..., K, K)

    References
    ----------
    Spec ``clocks:lem3.2``.
    """
    pi = V.probabilities(probs, "probs")
    eye = np.eye(pi.shape[-1])
    return pi[..., :, None] * eye - pi[..., :, None] * pi[..., None, :]


@cites("clocks:lem3.3")
def log_binary_pl_ratio(margin):
    r"""Logarithm of the Polyak–Łojasiewicz ratio of the binary logistic loss at margin :math:`m`.

    .. math::

        r(m)=\frac{\ell'(m)^2}{\ell(m)},\quad \ell(m)=\log(1+e^{-m}),\quad \ell'(m)=-\frac1{1+e^{m}},
        \qquad r(m)\sim e^{-m}\ (m\to\infty),

    so no :math:`c_{\rm PL}>0` works for all margins above a fixed one (Lemma 3.3).  Evaluated as
    :math:`\log r=-2\,\mathrm{softplus}(m)-\log\mathrm{softplus}(-m)`, and for :math:`m>36` as
    :math:`-m-2\log1p(e^{-m})+\frac12e^{-m}` (``log1p(exp(-m))`` underflows past :math:`m\approx745`).

    Parameters
    ----------
    margin : real (array)

    References
    ----------
    Spec ``clocks:lem3.3`` (paper Lemma 3.3).
    """
    m = V.finite(margin, "margin")
    big = m > 36.0
    mm = np.where(big, 0.0, m)
    small = -2.0 * np.logaddexp(0.0, mm) - np.log(np.logaddexp(0.0, -mm))
    mb = np.where(big, m, 37.0)
    em = np.exp(-mb)
    large = -mb - 2.0 * np.log1p(em) + 0.5 * em
    return V.scalar_or_array(np.where(big, large, small))


@cites("clocks:lem3.3")
def binary_pl_ratio(margin):
    r"""The PL ratio :math:`\ell'(m)^2/\ell(m)` (``exp`` of :func:`log_binary_pl_ratio`).

    Underflows to 0 only where the true value is below :math:`10^{-308}`.

    References
    ----------
    Spec ``clocks:lem3.3``.
    """
    return V.scalar_or_array(np.exp(log_binary_pl_ratio(margin)))


@cites("clocks:appF1-acc-order")
def zero_one_loss_threshold(n):
    r"""Loss level below which every training point is correctly classified: :math:`\ln 2/n`.

    If :math:`\mathcal L\le\varepsilon<\ln2/n` then every :math:`\ell_i<\ln2`, so :math:`\pi_{y_i}>\frac12`:
    the zero-one clock precedes the loss clock, :math:`t_{01}\le t_{\rm cls}(\varepsilon)`.

    Parameters
    ----------
    n : int >= 1
        Number of training samples.

    References
    ----------
    Spec ``clocks:appF1-acc-order``.
    """
    return _LN2 / V.count(n, "n", 1)
