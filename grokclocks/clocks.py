r"""Two training clocks of grokking (spec ``clocks``: Tan, Gai, Zhang 2026, arXiv:2606.05863).

The *classifier clock* :math:`t_{\rm cls}(\varepsilon)=\inf\{t:\mathcal L(W(t))\le\varepsilon\}` runs
fast: once every logit gap grows linearly (Assumption 3.4) the cross-entropy tail is exponential and
:math:`t_{\rm cls}=O(\log 1/\varepsilon)` (Theorem 3.5).  The *representation clock*
:math:`t_{\rm rep}(\delta)=\inf\{t:\mathcal G(t)\le\delta\}` runs slow: under a sharp Kurdyka–Łojasiewicz
inequality with exponent :math:`\theta\in(\frac12,1)` the energy gap decays like
:math:`t^{-1/(2\theta-1)}` and :math:`t_{\rm rep}\asymp\delta^{-(2\theta-1)}` (Theorem 4.9).  Their
mismatch is the grokking plateau (Theorem 5.6).

Contents
--------
* gaps and cross-entropy: :func:`logit_gaps`, :func:`min_logit_gap`, :func:`cross_entropy` (gap form),
  tail bounds :func:`ce_tail_bound`, :func:`gap_for_loss_level`, smoothness, the PL witness;
* fast clock: :func:`fit_gap_growth`, :func:`fast_clock_bound`, :func:`fast_clock_loss_bound`,
  :func:`contraction_clock_bound`;
* conditional ReLU reduction: :func:`relu_active_affine_map`, :func:`head_embedding_gradient_norms`,
  gate margins;
* KL clock: :func:`kl_gap_solution` (stable in log space as :math:`\theta\to\frac12`),
  :func:`kl_gap_bounds`, :func:`kl_clock_time`, :func:`representation_clock_bounds`, exponents of the
  example landscapes, :func:`weight_decay_tail_rate`;
* mismatch: :func:`clock_mismatch_lower_bound`, :func:`crossover_eps`;
* estimators on recorded training curves: :func:`first_hitting_time`, :func:`classifier_clock`,
  :func:`representation_clock`, :func:`accuracy_clock`, :func:`accumulated_time`,
  :func:`separation_ratio`, :func:`class_separation_ratio`, :func:`fourier_energy_outside`;
* modular characters and the real Fourier basis of :math:`\mathbb Z_p`.

Spectral tools (stable rank, Schatten quasi-norms, drift, Eckart–Young, covers) live in
:mod:`grokclocks.spectral`.  Conventions (spec §0): 0-based labels, ``n_classes`` = K, time is
gradient-flow time (accumulated optimiser time for discrete optimisers); a threshold that is never
reached gives ``math.inf``, not an error.  No JAX here.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from scipy import integrate, optimize, special

from . import _floats as FL
from . import _validate as V
from ._results import Bounds
from .citations import cites

__all__ = [
    # characters
    "modular_characters",
    "fourier_basis",
    # gaps and cross-entropy
    "logit_gaps",
    "min_logit_gap",
    "cross_entropy_from_gaps",
    "cross_entropy",
    "ce_tail_bound",
    "ce_tail_bound_linear",
    "gap_for_loss_level",
    "ce_smoothness_constant",
    "softmax_logit_hessian",
    "binary_pl_ratio",
    "log_binary_pl_ratio",
    "zero_one_loss_threshold",
    # fast clock
    "fit_gap_growth",
    "GapGrowthFit",
    "fast_clock_bound",
    "fast_clock_loss_bound",
    "contraction_clock_bound",
    # ReLU reduction
    "relu_active_affine_map",
    "ActiveAffineMap",
    "head_embedding_gradient_norms",
    "gate_margin",
    "gates_certified_stable",
    "gate_pattern_changes",
    "first_layer_preact_change_bound",
    # KL clock
    "kl_decay_exponent",
    "representation_clock_exponent",
    "kl_differential_bounds",
    "Bounds",
    "kl_gap_solution",
    "log_kl_gap_solution",
    "kl_gap_solution_pl",
    "kl_gap_bounds",
    "kl_clock_time",
    "representation_clock_bounds",
    "energy_dissipation_residual",
    "kl_exponent_power",
    "kl_rate_power",
    "kl_exponent_depth",
    "kl_rate_depth",
    "kl_constants_critical_weight_decay",
    "KLConstants",
    "weight_decay_tail_rate",
    # mismatch
    "clock_mismatch_lower_bound",
    "coupled_mismatch_lower_bound",
    "crossover_eps",
    # estimators
    "first_hitting_time",
    "classifier_clock",
    "representation_clock",
    "accuracy_clock",
    "accumulated_time",
    "separation_ratio",
    "stable_rank_gap",
    "class_separation_ratio",
    "fourier_energies",
    "fourier_energy_outside",
]

_LN2 = math.log(2.0)
# Snap a real to the nearest integer before ceil() when this close (floating noise must not add a step).
_SNAP_ABS = 1e-9


# ============================================================================ argument checks


def _n_classes(k: Any) -> int:
    return V.count(k, "n_classes", 2)


def _theta(theta: Any) -> np.ndarray:
    a = V.as_float_array(theta, "theta")
    bad = (a <= 0.5) | (a >= 1.0)
    if np.any(bad):
        raise V.DomainError(
            f"theta must be in (1/2, 1) for the polynomial clock (got {float(a[bad].flat[0]) if a.ndim else float(a)!r})")
    return a


_flag = V.flag


def _labels(labels: Any, n: int, k: int) -> np.ndarray:
    lab = V.index_array(labels, "labels", k)
    if lab.ndim != 1 or lab.shape[0] != n:
        raise V.DomainError(f"labels must be a 1-D array of length {n} (got shape {lab.shape})")
    return lab


def _logits(logits: Any) -> np.ndarray:
    z = V.as_float_array(logits, "logits")
    if z.ndim != 2:
        raise V.DomainError(f"logits must be a 2-D array (n, n_classes) (got shape {z.shape})")
    if z.shape[1] < 2:
        raise V.DomainError(f"logits must have n_classes >= 2 columns (got {z.shape[1]})")
    return z


def _int_p(p: Any) -> int:
    return V.integer_at_least(p, "p", 2)


# ============================================================================ characters of Z_p


@cites("clocks:eq2.5", "clocks:eq2.4")
def modular_characters(p, k=None, real=False):
    r"""Characters of :math:`\mathbb Z_p`, the Fourier modes of modular addition.

    .. math::

        \chi_k(a)=e^{2\pi i\,ka/p}\;\widehat=\;\Big(\cos\frac{2\pi ka}{p},\ \sin\frac{2\pi ka}{p}\Big),
        \qquad \chi_k(a+b)=\chi_k(a)\,\chi_k(b),

    so each character turns the task :math:`(a,b)\mapsto(a+b)\bmod p` (eq. 2.4) into a product.

    Parameters
    ----------
    p : int >= 2
        Modulus (any modulus; primality is not needed).
    k : int or array of int in ``[0, p)``, optional
        Frequencies (default ``arange(p)``).
    real : bool
        ``False``: complex array ``(len(k), p)``; ``True``: float array ``(2, len(k), p)`` (cos, sin).

    Returns
    -------
    ndarray
        ``chi[j, a] = exp(2 pi i k_j a / p)``.

    References
    ----------
    Spec ``clocks:eq2.5`` (paper eq. 2.5), ``clocks:eq2.4``.
    """
    p = _int_p(p)
    real = _flag(real, "real")
    V.max_size(2.0 * (p if k is None else np.size(k)) * p, "p", p)
    kk = np.arange(p) if k is None else np.atleast_1d(V.index_array(k, "k", p))
    if kk.ndim != 1 or kk.size == 0:
        raise V.DomainError(f"k must be a non-empty 1-D array of integers (got {V.show(k)})")
    a = np.arange(p)
    ang = 2.0 * np.pi * (np.outer(kk, a) % p) / p  # reduce k a mod p first: exact phases
    if real:
        return np.stack([np.cos(ang), np.sin(ang)])
    return np.exp(1j * ang)


def _fourier_rows(p: int) -> tuple[np.ndarray, np.ndarray]:
    """Real orthonormal basis rows and the frequency of each row."""
    a = np.arange(p)
    rows = [np.full(p, 1.0 / math.sqrt(p))]
    freq = [0]
    for k in range(1, (p - 1) // 2 + 1):
        ang = 2.0 * np.pi * ((k * a) % p) / p
        rows += [math.sqrt(2.0 / p) * np.cos(ang), math.sqrt(2.0 / p) * np.sin(ang)]
        freq += [k, k]
    if p % 2 == 0:
        rows.append(np.where(a % 2 == 0, 1.0, -1.0) / math.sqrt(p))
        freq.append(p // 2)
    return np.array(rows), np.array(freq)


@cites("clocks:eq2.5", "clocks:appF4-fourier")
def fourier_basis(p):
    r"""Real orthonormal Fourier basis of :math:`\mathbb R^p` (rows).

    Rows in order :math:`f_0=p^{-1/2}\mathbf 1`, then for :math:`k=1,\dots,\lfloor(p-1)/2\rfloor`
    :math:`c_k(a)=\sqrt{2/p}\cos(2\pi ka/p)`, :math:`s_k(a)=\sqrt{2/p}\sin(2\pi ka/p)`, and for even
    :math:`p` the Nyquist row :math:`(-1)^a/\sqrt p`.  The matrix is orthogonal.

    Parameters
    ----------
    p : int >= 2

    Returns
    -------
    ndarray, shape (p, p)

    References
    ----------
    Spec ``clocks:eq2.5``, ``clocks:appF4-fourier``.
    """
    p = _int_p(p)
    V.max_size(float(p) * p, "p", p)
    return _fourier_rows(p)[0]


# ============================================================================ gaps and cross-entropy


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
    # log1p(sum_k e^{-gamma_k}) with every term correctly rounded where the sum is a normal double: the
    # softplus of the rounded logsumexp loses eps |s| relative for large gaps (5.4e-14 at gamma = 617)
    with np.errstate(over="ignore", under="ignore"):
        x = np.sum(np.exp(-g), axis=-1)
        out = np.where(np.isfinite(x) & (x >= FL.TINY), np.log1p(x), np.logaddexp(0.0, s))
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


# ============================================================================ fast clock


def _records(times: Any, values: Any, vname: str = "values") -> tuple[np.ndarray, np.ndarray]:
    """Strictly increasing finite 1-D times; values of the same length (NaN allowed)."""
    t = V.as_float_array(times, "times")
    if t.ndim != 1:
        raise V.DomainError(f"times must be 1-D (got shape {t.shape})")
    if t.size > 1 and np.any(np.diff(t) <= 0):
        j = int(np.argmax(np.diff(t) <= 0))
        raise V.DomainError(f"times must be strictly increasing (got {t[j]!r} then {t[j + 1]!r})")
    v = V.as_float_array(values, vname, allow_nan=True)
    if v.shape != t.shape:
        raise V.DomainError(f"{vname} must have the shape of times {t.shape} (got {v.shape})")
    return t, v


class GapGrowthFit(NamedTuple):
    """Result of :func:`fit_gap_growth` (Assumption 3.4)."""

    gamma0: float
    r""":math:`\gamma_0`."""
    c: float
    """the largest admissible rate :math:`c`."""


@cites("clocks:asm3.4")
def fit_gap_growth(times, min_gaps, t0):
    r"""Diagnose Assumption 3.4 on a record: :math:`\gamma_0` and the largest admissible rate.

    .. math::

        \gamma_0=\hat\gamma_{\min}(t_0),\qquad
        c=\inf_{t_j>t_0}\frac{\hat\gamma_{\min}(t_j)-\gamma_0}{t_j-t_0},

    so that :math:`\hat\gamma_{\min}(t)\ge\gamma_0+c(t-t_0)` holds on every record after :math:`t_0`.
    ``c <= 0`` means the assumption fails on this record (returned, not raised).

    Parameters
    ----------
    times : 1-D strictly increasing array
    min_gaps : array like ``times`` (finite)
    t0 : float, one of the record times (not the last)

    Returns
    -------
    (gamma0, c) : tuple of float
        A :class:`GapGrowthFit` named tuple (``gamma0``, ``c``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``clocks:asm3.4`` (paper eq. 3.4).
    """
    t, g = _records(times, min_gaps, "min_gaps")
    V.finite(g, "min_gaps")
    t0 = V.finite(t0, "t0", scalar=True)
    j = int(np.searchsorted(t, t0))
    if j >= t.size or abs(t[j] - t0) > 1e-12 * max(1.0, abs(t0)):
        raise V.DomainError(f"t0 must be one of the record times (got {t0!r})")
    if j == t.size - 1:
        raise V.DomainError(f"t0 must precede the last record time {t[-1]!r} (got {t0!r})")
    gamma0 = float(g[j])
    c = float(np.min((g[j + 1:] - gamma0) / (t[j + 1:] - t[j])))
    return GapGrowthFit(gamma0, c)


@cites("clocks:thm3.5", "clocks:eq2.1")
def fast_clock_bound(eps, n_classes, rate, t0=0.0, gamma0=0.0, *, sharp=False):
    r"""Upper bound on the classifier clock under linear gap growth (Theorem 3.5).

    .. math::

        t_{\rm cls}(\varepsilon)\le t_0+\frac1c\Big[\log\frac{K-1}{\varepsilon}-\gamma_0\Big]_+
        =O(\log 1/\varepsilon)

    (``sharp=True``: :math:`\varepsilon\to e^{\varepsilon}-1`, the exact inversion of the log1p bound).

    Parameters
    ----------
    eps : float > 0
    n_classes : int >= 2
    rate : float > 0
        Gap growth rate :math:`c` of (3.4).
    t0 : float >= 0
    gamma0 : real

    Examples
    --------
    ``fast_clock_bound(1e-4, 3, 0.5, t0=10, gamma0=1)`` = 27.807.

    References
    ----------
    Spec ``clocks:thm3.5`` (paper Theorem 3.5).  Only valid where (3.4) holds: plain GD on separable
    data violates it (erratum ``clocks-1``).
    """
    need = gap_for_loss_level(eps, n_classes, sharp=sharp)
    c = V.positive(rate, "rate")
    t0 = V.nonnegative(t0, "t0")
    g0 = V.finite(gamma0, "gamma0")
    with np.errstate(over="ignore"):  # inf only where the bound exceeds 1.8e308 (rate ~ 1e-306)
        return V.scalar_or_array(t0 + np.maximum(np.asarray(need) - g0, 0.0) / c)


@cites("clocks:thm3.5")
def fast_clock_loss_bound(t, n_classes, rate, t0=0.0, gamma0=0.0, *, linear=True):
    r"""Loss bound for :math:`t\ge t_0` under (3.4).

    .. math::

        \mathcal L(W(t))\le\log\big(1+(K-1)e^{-\gamma_0-c(t-t_0)}\big)\le(K-1)e^{-\gamma_0-c(t-t_0)}

    (``linear=True`` returns the right-hand form).

    Raises
    ------
    DomainError
        For ``t < t0``.

    References
    ----------
    Spec ``clocks:thm3.5``.
    """
    tt = V.finite(t, "t")
    c = V.positive(rate, "rate")
    t0a = V.nonnegative(t0, "t0")
    g0 = V.finite(gamma0, "gamma0")
    if np.any(tt < t0a):
        raise V.DomainError(f"t must be >= t0 = {float(np.min(t0a))!r} (got {float(np.min(tt))!r})")
    with np.errstate(over="ignore"):
        gam = g0 + c * (tt - t0a)  # +inf only where the true gap exceeds 1.8e308 (the bound is then 0)
    k = _n_classes(n_classes)
    return V.scalar_or_array(_tail_linear(gam, k) if _flag(linear, "linear") else _tail(gam, k))


@cites("clocks:prop3.6")
def contraction_clock_bound(eps, loss0, rho, k0=0, *, exact=False):
    r"""Step bound on the classifier clock from a one-step tail contraction (Proposition 3.6).

    If :math:`\mathcal L_{k+1}\le(1-\rho)\mathcal L_k` for :math:`k\ge k_0`:

    .. math::

        t_{\rm cls}(\varepsilon)\le k_0+\Big\lceil\frac1\rho\log\frac{\mathcal L_{k_0}}{\varepsilon}\Big\rceil,
        \qquad\text{exact: }k_0+\Big\lceil\log\frac{\mathcal L_{k_0}}{\varepsilon}\Big/\log\frac1{1-\rho}\Big\rceil,

    and :math:`k_0` when :math:`\varepsilon\ge\mathcal L_{k_0}`.  The quotient is snapped to an integer
    when within 1e-9 of one before the ceiling.

    Parameters
    ----------
    eps : float > 0
    loss0 : float >= 0
    rho : float in (0, 1)
    k0 : int >= 0
    exact : bool

    Returns
    -------
    int
        A step index; ``math.inf`` where it exceeds the largest double (:math:`\rho\lesssim10^{-306}`).

    Examples: ``contraction_clock_bound(1e-6, 1.0, 0.1, k0=5)`` = 144; exact: 137.

    References
    ----------
    Spec ``clocks:prop3.6`` (paper Proposition 3.6).
    """
    e = V.positive(eps, "eps", scalar=True)
    l0 = V.nonnegative(loss0, "loss0", scalar=True)
    r = V.in_open_interval(rho, "rho", 0.0, 1.0, scalar=True)
    k0 = V.integer_at_least(k0, "k0", 0)
    exact = _flag(exact, "exact")
    if e >= l0:
        return k0
    rate = -math.log1p(-r) if exact else r
    # log(loss0 / eps) > 0: log1p of the exact difference when eps < loss0 <= 2 eps (Sterbenz), else the
    # log of the quotient, or log(l0) - log(e) where the quotient overflows (then the log is >= 709)
    q = l0 / e
    if l0 <= 2.0 * e:
        lq = math.log1p((l0 - e) / e)
    else:
        lq = math.log(q) if math.isfinite(q) else math.log(l0) - math.log(e)
    x = lq / rate
    if not math.isfinite(x):
        return math.inf  # the bound exceeds the largest double (rate <~ 1e-306)
    if abs(x - round(x)) <= _SNAP_ABS:
        x = float(round(x))
    return k0 + int(math.ceil(x))


# ============================================================================ conditional ReLU reduction


def _mat(x: Any, name: str) -> np.ndarray:
    a = V.as_float_array(x, name)
    if a.ndim != 2:
        raise V.DomainError(f"{name} must be a 2-D matrix (got shape {a.shape})")
    return a


class ActiveAffineMap(NamedTuple):
    r"""Result of :func:`relu_active_affine_map`: :math:`x\mapsto Ax+c` on the active subsystem."""

    A: np.ndarray
    """linear part, ``(K, d0)`` or ``(n, K, d0)``."""
    c: np.ndarray
    """offset, ``(K,)`` or ``(n, K)``."""
    masks: list
    """boolean gate masks, one per hidden layer."""


@cites("clocks:prop4.1", "clocks:cor5.7")
def relu_active_affine_map(weights, biases, x):
    r"""The affine map of a ReLU network on its active subsystem (frozen gates).

    For :math:`f(x)=W_L\phi(W_{L-1}\cdots\phi(W_1x+b_1)\cdots+b_{L-1})+b_L`, masks
    :math:`D_l(x)=\operatorname{diag}(\mathbb 1[h_l(x)>0])` (strict: a pre-activation exactly 0 is
    inactive):

    .. math::

        f(x_i)=A_ix_i+c_i,\quad A_i=W_LD_{L-1,i}W_{L-1}\cdots D_{1,i}W_1,\quad
        c_i=\sum_{l=1}^{L}W_LD_{L-1,i}\cdots W_{l+1}D_{l,i}\,b_l .

    While no mask changes, training the network is training these affine maps (Proposition 4.1).

    Parameters
    ----------
    weights : sequence of 2-D arrays, ``weights[l]`` of shape ``(d_{l+1}, d_l)``
    biases : sequence of 1-D arrays of length ``d_{l+1}``, same length as ``weights``
    x : array ``(d0,)`` or ``(n, d0)``

    Returns
    -------
    (A, c, masks)
        A :class:`ActiveAffineMap` named tuple (``A``, ``c``, ``masks``); it unpacks like a plain tuple.
        ``A`` of shape ``(K, d0)`` or ``(n, K, d0)``; ``c`` of shape ``(K,)`` or ``(n, K)``;
        ``masks`` = list of boolean arrays (one per hidden layer), ``(d_l,)`` or ``(n, d_l)``.

    References
    ----------
    Spec ``clocks:prop4.1`` (paper Proposition 4.1); ``clocks:cor5.7``.
    """
    weights = V.sequence(weights, "weights", what="a non-empty sequence of 2-D arrays")
    biases = V.sequence(biases, "biases", what="a sequence of 1-D arrays")
    if len(weights) != len(biases):
        raise V.DomainError(f"weights and biases must have the same length (got {len(weights)} and {len(biases)})")
    if len(weights) == 0:
        raise V.DomainError("weights must not be empty")
    xs = V.as_float_array(x, "x")
    single = xs.ndim == 1
    if xs.ndim not in (1, 2):
        raise V.DomainError(f"x must be (d0,) or (n, d0) (got shape {xs.shape})")
    X = xs[None, :] if single else xs
    n, d0 = X.shape
    A = np.broadcast_to(np.eye(d0), (n, d0, d0)).copy()
    c = np.zeros((n, d0))
    h = X
    masks = []
    for l, (W, b) in enumerate(zip(weights, biases)):
        W = _mat(W, f"weights[{l}]")
        b = V.as_float_array(b, f"biases[{l}]")
        if W.shape[1] != h.shape[1] or b.shape != (W.shape[0],):
            raise V.DomainError(f"weights[{l}] of shape {W.shape} and biases[{l}] of shape {b.shape} do not fit "
                                f"an input of width {h.shape[1]}")
        pre = h @ W.T + b
        A = np.einsum("ij,njk->nik", W, A)
        c = c @ W.T + b
        if l < len(weights) - 1:
            m = pre > 0
            masks.append(m[0] if single else m)
            A = A * m[:, :, None]
            c = c * m
            h = np.where(m, pre, 0.0)
        else:
            h = pre
    if single:
        return ActiveAffineMap(A[0], c[0], masks)
    return ActiveAffineMap(A, c, masks)


@cites("clocks:prop4.2")
def head_embedding_gradient_norms(E, W1, W2, a, b, y, b1=None, b2=None):
    r"""Per-sample gradient norms of the modular-addition model: head, hidden layer, embedding.

    Selector :math:`s=e_a+e_b`, :math:`h=Es`, :math:`u=W_1h(+b_1)`, :math:`D=\operatorname{diag}(\mathbb 1[u>0])`,
    :math:`\varphi=Du`, :math:`z=W_2\varphi(+b_2)`, :math:`g=\pi(z)-e_y` (formed without cancellation).

    .. math::

        \lVert\nabla_{W_2}\ell\rVert_F=\lVert g\rVert\lVert\varphi\rVert,\quad
        \lVert\nabla_{W_1}\ell\rVert_F=\lVert DW_2^\top g\rVert\lVert h\rVert\le\lVert W_2\rVert_2\lVert g\rVert\lVert h\rVert,

    .. math::

        \lVert\nabla_E\ell\rVert_F=\lVert W_1^\top DW_2^\top g\rVert\lVert s\rVert
        \le\lVert W_1\rVert_2\lVert W_2\rVert_2\lVert g\rVert\lVert s\rVert .

    Parameters
    ----------
    E : (d_e, p) ; W1 : (d_h, d_e) ; W2 : (K, d_h) ; b1 : (d_h,) ; b2 : (K,)
    a, b : int tokens in ``[0, p)``; y : int label in ``[0, K)``

    Returns
    -------
    dict
        ``head``, ``hidden``, ``embedding`` (actual Frobenius norms), ``hidden_bound``, ``embedding_bound``.

    References
    ----------
    Spec ``clocks:prop4.2`` (paper Proposition 4.2).
    """
    E = _mat(E, "E")
    W1 = _mat(W1, "W1")
    W2 = _mat(W2, "W2")
    de, p = E.shape
    if W1.shape[1] != de or W2.shape[1] != W1.shape[0]:
        raise V.DomainError(f"shapes do not chain: E {E.shape}, W1 {W1.shape}, W2 {W2.shape}")
    K = W2.shape[0]
    b1v = np.zeros(W1.shape[0]) if b1 is None else V.as_float_array(b1, "b1")
    b2v = np.zeros(K) if b2 is None else V.as_float_array(b2, "b2")
    if b1v.shape != (W1.shape[0],) or b2v.shape != (K,):
        raise V.DomainError(f"b1 must have shape {(W1.shape[0],)} and b2 {(K,)} (got {b1v.shape}, {b2v.shape})")
    a = V.integer_at_least(a, "a", 0)
    b = V.integer_at_least(b, "b", 0)
    y = V.integer_at_least(y, "y", 0)
    if a >= p or b >= p:
        raise V.DomainError(f"tokens a, b must be in [0, {p - 1}] (got {a}, {b})")
    if y >= K:
        raise V.DomainError(f"y must be in [0, {K - 1}] (got {y})")
    s = np.zeros(p)
    s[a] += 1.0
    s[b] += 1.0
    h = E @ s
    u = W1 @ h + b1v
    D = (u > 0).astype(np.float64)
    phi = D * u
    z = W2 @ phi + b2v
    pi = np.exp(z - special.logsumexp(z))
    g = pi.copy()
    g[y] = -(np.sum(pi) - pi[y])
    back_h = D * (W2.T @ g)
    back_e = W1.T @ back_h
    nrm = FL.scaled_norm  # vector norms without overflow / underflow of the squares
    ng = nrm(g)
    n2 = np.linalg.norm(W2, 2)
    with np.errstate(over="ignore", under="ignore"):  # products of norms: inf / 0 only beyond the range
        return {
            "head": float(ng * nrm(phi)),
            "hidden": float(nrm(back_h) * nrm(h)),
            "embedding": float(nrm(back_e) * nrm(s)),
            "hidden_bound": float(n2 * ng * nrm(h)),
            "embedding_bound": float(np.linalg.norm(W1, 2) * n2 * ng * nrm(s)),
        }


def _preacts(preacts: Any, name: str) -> list[np.ndarray]:
    if isinstance(preacts, np.ndarray):
        preacts = [preacts]
    items = V.sequence(preacts, name, what="a non-empty list of pre-activation arrays")
    return [V.as_float_array(h, f"{name}[{i}]") for i, h in enumerate(items)]


@cites("clocks:appF3-gate-margin")
def gate_margin(preacts):
    r"""Gate margin :math:`m=\min_{i,l,j}|h_{l,j}(x_i)|` over a list of pre-activation arrays.

    References
    ----------
    Spec ``clocks:appF3-gate-margin``.
    """
    return float(min(np.min(np.abs(h)) for h in _preacts(preacts, "preacts")))


@cites("clocks:appF3-gate-margin")
def gates_certified_stable(preacts_t1, preacts_path):
    r"""Sufficient condition for frozen gates on a recorded path.

    .. math:: \sup_t\max_{i,l,j}|h_{l,j}(x_i;t)-h_{l,j}(x_i;t_1)|<m=\min_{i,l,j}|h_{l,j}(x_i;t_1)|

    Parameters
    ----------
    preacts_t1 : list of arrays (one per hidden layer)
    preacts_path : sequence over times of lists shaped like ``preacts_t1``

    Returns
    -------
    bool
        ``True`` if the certificate holds (then no gate changed); ``False`` is inconclusive.

    References
    ----------
    Spec ``clocks:appF3-gate-margin`` (paper App. F.3).
    """
    h1 = _preacts(preacts_t1, "preacts_t1")
    m = gate_margin(h1)
    worst = 0.0
    for t, ht in enumerate(V.sequence(preacts_path, "preacts_path", what="a non-empty sequence of pre-activation lists")):
        ht = _preacts(ht, f"preacts_path[{t}]")
        if len(ht) != len(h1) or any(a.shape != b.shape for a, b in zip(ht, h1)):
            raise V.DomainError(f"preacts_path[{t}] must match the shapes of preacts_t1")
        worst = max(worst, max(float(np.max(np.abs(a - b))) for a, b in zip(ht, h1)))
    return bool(worst < m)


@cites("clocks:appF3-gate-margin")
def gate_pattern_changes(preacts_t1, preacts_t):
    r"""Number of gates (over samples, layers, units) whose state ``h > 0`` differs between two times.

    The exact check that the certificate :func:`gates_certified_stable` bounds.

    References
    ----------
    Spec ``clocks:appF3-gate-margin``.
    """
    h1 = _preacts(preacts_t1, "preacts_t1")
    ht = _preacts(preacts_t, "preacts_t")
    if len(ht) != len(h1) or any(a.shape != b.shape for a, b in zip(ht, h1)):
        raise V.DomainError("preacts_t must match the shapes of preacts_t1")
    return int(sum(int(np.sum((a > 0) != (b > 0))) for a, b in zip(h1, ht)))


@cites("clocks:appF3-gate-margin")
def first_layer_preact_change_bound(delta_W1, delta_b1, x_norm):
    r"""Parameter-space bound on a first-layer pre-activation change.

    .. math:: |\Delta h_{1,j}(x)|\le\lVert\Delta W_1\rVert_2\lVert x\rVert+\lVert\Delta b_1\rVert_\infty

    References
    ----------
    Spec ``clocks:appF3-gate-margin``.
    """
    dW = _mat(delta_W1, "delta_W1")
    db = V.as_float_array(delta_b1, "delta_b1")
    xn = V.nonnegative(x_norm, "x_norm")
    return V.scalar_or_array(np.linalg.norm(dW, 2) * xn + float(np.max(np.abs(db))))


# ============================================================================ KL (representation) clock


@cites("clocks:thm4.9")
def kl_decay_exponent(theta):
    r"""Decay exponent of the energy gap, :math:`\Delta(t)\asymp t^{-1/(2\theta-1)}`.

    Parameters
    ----------
    theta : float in (1/2, 1)

    References
    ----------
    Spec ``clocks:thm4.9``.
    """
    th = _theta(theta)
    return V.scalar_or_array(1.0 / (2.0 * th - 1.0))


@cites("clocks:thm4.9")
def representation_clock_exponent(theta):
    r"""Exponent of the representation clock, :math:`t_{\rm rep}(\delta)\asymp\delta^{-(2\theta-1)}`.

    References
    ----------
    Spec ``clocks:thm4.9``.
    """
    th = _theta(theta)
    return V.scalar_or_array(2.0 * th - 1.0)


@cites("clocks:thm4.8", "clocks:asm4.5")
def kl_differential_bounds(gap, c_kl, C_kl, theta):
    r"""Two-sided bound on the dissipation rate of the energy gap (Theorem 4.8).

    .. math:: c_{\rm KL}^2\Delta^{2\theta}\le-\dot\Delta\le C_{\rm KL}^2\Delta^{2\theta}

    Returns
    -------
    (lower, upper) : bounds on :math:`-\dot\Delta`.
        A :class:`Bounds` named tuple (``lower``, ``upper``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``clocks:thm4.8`` (paper Theorem 4.8), under ``clocks:asm4.5``.
    """
    d = V.nonnegative(gap, "gap")
    c, C = _kl_consts(c_kl, C_kl)
    th = _theta(theta)
    # c^2 Delta^(2 theta) as one product: no inf * 0 when c^2 overflows and Delta^(2 theta) underflows
    return Bounds(V.scalar_or_array(FL.power_product([c, d], [2, 2.0 * th])),
            V.scalar_or_array(FL.power_product([C, d], [2, 2.0 * th])))


def _kl_consts(c_kl: Any, C_kl: Any) -> tuple[np.ndarray, np.ndarray]:
    c = V.positive(c_kl, "c_kl")
    C = V.positive(C_kl, "C_kl")
    if np.any(C < c):
        raise V.DomainError(f"C_kl must be >= c_kl (got C_kl={float(np.min(C))!r} < c_kl={float(np.max(c))!r})")
    return c, C


def _elapsed(t: Any, t0: Any) -> np.ndarray:
    tt = V.finite(t, "t")
    t0a = V.finite(t0, "t0")
    if np.any(tt < t0a):
        raise V.DomainError(f"t must be >= t0 = {float(np.max(t0a))!r} (got {float(np.min(tt))!r})")
    return tt - t0a


@cites("clocks:thm4.9", "clocks:thm4.8")
def log_kl_gap_solution(t, gap0, a, theta, t0=0.0):
    r"""Log of the solution of :math:`\dot\Delta=-a\Delta^{2\theta}`, stable as :math:`\theta\downarrow\frac12`.

    .. math::

        \log\Delta(t)=-\frac1{2\theta-1}\,\mathrm{log1p}\Big(\mathrm{expm1}\big((1-2\theta)\log\Delta_0\big)
        +a(2\theta-1)(t-t_0)\Big).

    Parameters
    ----------
    t : float >= t0 ; gap0 : float > 0 ; a : float > 0 ; theta : float in (1/2, 1) ; t0 : real

    References
    ----------
    Spec ``clocks:thm4.9`` (exact solution of the equality case of Theorem 4.8).
    """
    tau = _elapsed(t, t0)
    d0 = V.positive(gap0, "gap0")
    aa = V.positive(a, "a")
    th = _theta(theta)
    return V.scalar_or_array(_log_kl_gap(tau, d0, [(aa, 1)], 2.0 * th - 1.0))


def _log_kl_gap(tau: np.ndarray, d0: np.ndarray, a_factors: list, e: np.ndarray) -> np.ndarray:
    r"""log Delta = -log(Delta0^{-e} + a e tau) / e, with ``a = prod(base**power for base, power in a_factors)``.

    With x = -e log Delta0 and y = a e tau (a scaled product: finite unless the true y exceeds 1.8e308):
    ``log1p(expm1(x) + y)`` where |x| <= 1 and y <= 1 (the bracket is near 1 and its log is small: this
    form keeps the relative accuracy as e -> 0), ``logaddexp(x, log y)`` elsewhere (no overflow, no loss
    of e^x when x < -1; ``log y`` from logs of the factors when y overflows).  Relative error of
    Delta = exp(log Delta) against mpmath (2e4 points, t, Delta0, a log-uniform in [1e-300, 1e300],
    theta - 1/2 in [2^-53, 1/2)): near branch <= 2.3e-13, far branch <= 1.5e-13 (the condition
    number |log Delta| <= 745 of exp); the naive [.]^(-1/e) gave relative error 0.76 at theta = 0.6.
    """
    x = -e * np.log(d0)
    bases = [b for b, _ in a_factors] + [e, tau]
    powers = [p for _, p in a_factors] + [1, 1]
    y = FL.power_product(bases, powers)
    with np.errstate(divide="ignore"):
        ly_far = sum(p * np.log(b) for b, p in a_factors) + np.log(e) + np.log(tau)
        ly = np.where(np.isfinite(y), np.log(y), ly_far)
    near = (np.abs(x) <= 1.0) & (y <= 1.0)
    L = np.where(near, np.log1p(np.expm1(np.clip(x, -1.0, 1.0)) + np.minimum(y, 1.0)), np.logaddexp(x, ly))
    return -L / e


@cites("clocks:thm4.9", "clocks:thm4.8")
def kl_gap_solution(t, gap0, a, theta, t0=0.0):
    r"""Solution of the KL equality :math:`\dot\Delta=-a\Delta^{2\theta}`.

    .. math:: \Delta(t)=\Big[\Delta_0^{1-2\theta}+a(2\theta-1)(t-t_0)\Big]^{-\frac1{2\theta-1}}

    Example: ``kl_gap_solution(10.0, 1.0, 16.0, 0.75)`` = 81^{-2} = 1.52416e-4.  For
    :math:`\theta=\frac12` (PL, exponential) use :func:`kl_gap_solution_pl`.

    References
    ----------
    Spec ``clocks:thm4.9``.
    """
    with np.errstate(under="ignore"):
        return V.scalar_or_array(np.exp(log_kl_gap_solution(t, gap0, a, theta, t0)))


@cites("clocks:thm4.9")
def kl_gap_solution_pl(t, gap0, a, t0=0.0):
    r"""The PL (:math:`\theta=\frac12`) limit: :math:`\Delta(t)=\Delta_0e^{-a(t-t_0)}` (exponential clock).

    References
    ----------
    Spec ``clocks:thm4.9`` (excluded endpoint; provided separately rather than as a silent limit).
    """
    tau = _elapsed(t, t0)
    d0 = V.positive(gap0, "gap0")
    aa = V.positive(a, "a")
    # d0 e^{-a tau}: the product where e^{-a tau} is normal, else exp(log d0 - a tau) (no 1e300 * 0)
    with np.errstate(over="ignore", under="ignore"):
        x = aa * tau
        e = np.exp(-x)
        out = np.where(e >= FL.TINY, d0 * e, np.exp(np.log(d0) - x))
    return V.scalar_or_array(out)


@cites("clocks:thm4.9", "clocks:thm4.8")
def kl_gap_bounds(t, gap0, c_kl, C_kl, theta, t0=0.0):
    r"""Two-sided bounds on the energy gap under the sharp KL inequality.

    .. math::

        \Big[\Delta_0^{1-2\theta}+C_{\rm KL}^2(2\theta-1)\tau\Big]^{-\frac1{2\theta-1}}\le\Delta(t)\le
        \Big[\Delta_0^{1-2\theta}+c_{\rm KL}^2(2\theta-1)\tau\Big]^{-\frac1{2\theta-1}},\quad\tau=t-t_0.

    Returns
    -------
    (lower, upper)
        A :class:`Bounds` named tuple (``lower``, ``upper``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``clocks:thm4.9`` (paper Theorem 4.9).
    """
    c, C = _kl_consts(c_kl, C_kl)
    tau = _elapsed(t, t0)
    d0 = V.positive(gap0, "gap0")
    e = 2.0 * _theta(theta) - 1.0
    with np.errstate(under="ignore"):  # C^2 is never formed: C = 1e300 is a valid constant
        lower = np.exp(_log_kl_gap(tau, d0, [(C, 2)], e))
        upper = np.exp(_log_kl_gap(tau, d0, [(c, 2)], e))
    return Bounds(V.scalar_or_array(lower), V.scalar_or_array(upper))


def _kl_time(delta: np.ndarray, d0: np.ndarray, a_factors: list, th: np.ndarray,
             scale: Any = 1.0) -> np.ndarray:
    r"""(delta_s^{-e} - d0^{-e}) / (a e), clipped at 0, for delta_s = delta / scale, a = prod(b**p).

    Evaluated as delta_s^{-e} (-expm1(-e z)) / (a e) with z = log(d0 / delta_s) > 0: no difference of
    two large powers, no overflow of expm1, and z from ``log1p`` of the exact difference d0 - delta when
    d0 <= 2 delta (scale 1).  The product is a scaled power product (exact binary exponents) unless
    delta_s^{-e} itself leaves the double range (then log space).  Relative error (measured,
    tests/accuracy): <= 3e-14 where e |log delta| <= 709.
    """
    e = 2.0 * th - 1.0
    sc = np.asarray(scale, dtype=np.float64)
    ratio = FL.power_product([d0, sc, delta], [1, 1, -1])  # d0 / delta_s
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        log_delta = np.log(delta) - np.log(sc)
        z = np.where(np.isfinite(ratio), np.log(ratio), np.log(d0) - log_delta)
        if np.all(sc == 1.0):
            z = np.where(d0 <= 2.0 * delta, np.log1p((d0 - delta) / delta), z)
        m = -np.expm1(-e * np.maximum(z, 0.0))  # in [0, 1)
        p = np.exp(-e * log_delta)  # delta_s^{-e}
        bases = [p, m] + [b for b, _ in a_factors] + [e]
        powers = [1, 1] + [-q for _, q in a_factors] + [-1]
        direct = FL.power_product(bases, powers)
        far = np.exp(-e * log_delta + np.log(m) - sum(q * np.log(b) for b, q in a_factors) - np.log(e))
        t = np.where(np.isfinite(p) & (p >= FL.TINY), direct, far)
    return np.where(z > 0, t, 0.0)


@cites("clocks:thm4.9", "clocks:eq2.2")
def kl_clock_time(delta, gap0, a, theta, t0=0.0):
    r"""First time the KL solution reaches :math:`\delta`.

    .. math:: t(\delta)=t_0+\frac{\delta^{1-2\theta}-\Delta_0^{1-2\theta}}{a(2\theta-1)}\quad(\delta<\Delta_0),

    and :math:`t_0` when :math:`\delta\ge\Delta_0`.  Example: ``kl_clock_time(1e-4, 1.0, 16.0, 0.75)`` = 12.375.

    References
    ----------
    Spec ``clocks:thm4.9``; the representation clock ``clocks:eq2.2`` with :math:`\mathcal G=\Delta`.
    """
    dl = V.positive(delta, "delta")
    d0 = V.positive(gap0, "gap0")
    aa = V.positive(a, "a")
    th = _theta(theta)
    t0a = V.finite(t0, "t0")
    return V.scalar_or_array(t0a + _kl_time(dl, d0, [(aa, 1)], th))


@cites("clocks:thm4.9", "clocks:eq2.2")
def representation_clock_bounds(delta, gap0, c_kl, C_kl, theta, T=0.0, m_G=1.0, M_G=1.0):
    r"""Two-sided bounds on the representation clock (Theorem 4.9).

    With :math:`m_G\Delta\le\mathcal G\le M_G\Delta` on the late region and :math:`\Delta_T=` ``gap0``:

    .. math::

        T+\frac{(\delta/m_G)^{1-2\theta}-\Delta_T^{1-2\theta}}{C_{\rm KL}^2(2\theta-1)}\le t_{\rm rep}(\delta)\le
        T+\frac{(\delta/M_G)^{1-2\theta}-\Delta_T^{1-2\theta}}{c_{\rm KL}^2(2\theta-1)},

    each bound clipped below at :math:`T` (the threshold is already met at :math:`T`).

    Returns
    -------
    (lower, upper)
        A :class:`Bounds` named tuple (``lower``, ``upper``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``clocks:thm4.9`` (paper Theorem 4.9; the display is reconstructed [R-med]).
    """
    dl = V.positive(delta, "delta")
    d0 = V.positive(gap0, "gap0")
    c, C = _kl_consts(c_kl, C_kl)
    th = _theta(theta)
    Ta = V.finite(T, "T")
    mg = V.positive(m_G, "m_G")
    Mg = V.positive(M_G, "M_G")
    if np.any(Mg < mg):
        raise V.DomainError(f"M_G must be >= m_G (got M_G={float(np.min(Mg))!r} < m_G={float(np.max(mg))!r})")
    lo = Ta + _kl_time(dl, d0, [(C, 2)], th, mg)
    hi = Ta + _kl_time(dl, d0, [(c, 2)], th, Mg)
    return Bounds(V.scalar_or_array(lo), V.scalar_or_array(hi))


@cites("clocks:lem4.6")
def energy_dissipation_residual(times, energy, grad_sq_norm):
    r"""Residual of the integrated energy identity along a recorded gradient-flow path.

    .. math:: r_j=\mathcal E(t_j)+\int_{t_0}^{t_j}\lVert\partial^\circ\mathcal E\rVert_F^2\,dt-\mathcal E(t_0)

    (trapezoid rule; zero for an exact gradient flow, :math:`O(\Delta t^2)` from the quadrature).

    Parameters
    ----------
    times : 1-D strictly increasing ; energy, grad_sq_norm : arrays like ``times`` (finite, grad >= 0)

    Returns
    -------
    ndarray (len(times),), ``r[0] = 0``.

    References
    ----------
    Spec ``clocks:lem4.6`` (paper Lemma 4.6).
    """
    t, E = _records(times, energy, "energy")
    V.finite(E, "energy")
    _, g = _records(times, grad_sq_norm, "grad_sq_norm")
    V.nonnegative(g, "grad_sq_norm")
    return E + integrate.cumulative_trapezoid(g, t, initial=0.0) - E[0]


@cites("clocks:appF2-kl-examples")
def kl_exponent_power(q):
    r"""KL exponent of the power bottom :math:`f(x)=\lVert x\rVert^q`, :math:`q>2`: :math:`\theta=1-1/q`.

    :math:`\lVert\nabla f\rVert=qf^{1-1/q}`, so the flow obeys :math:`\dot f=-q^2f^{2\theta}`
    (:func:`kl_rate_power`) and :math:`f\sim t^{-q/(q-2)}`.

    References
    ----------
    Spec ``clocks:appF2-kl-examples`` (example 1).
    """
    qq = V.as_float_array(q, "q")
    if np.any(qq <= 2):
        raise V.DomainError(f"q must be > 2 for a polynomial (theta > 1/2) bottom (got {float(np.min(qq))!r})")
    return V.scalar_or_array(1.0 - 1.0 / qq)


@cites("clocks:appF2-kl-examples")
def kl_rate_power(q):
    r"""Constant :math:`a=q^2` of :math:`\dot f=-af^{2\theta}` for :math:`f=\lVert x\rVert^q` (:math:`q>2`).

    References
    ----------
    Spec ``clocks:appF2-kl-examples`` (example 1).
    """
    kl_exponent_power(q)
    qq = V.as_float_array(q, "q")
    with np.errstate(over="ignore"):  # inf for q > 1.3e154 (true value beyond the double range)
        return V.scalar_or_array(qq * qq)


@cites("clocks:appF2-kl-examples")
def kl_exponent_depth(depth):
    r"""KL exponent of depth-induced flatness (balanced depth-:math:`L` net, no decay): :math:`\theta=1-\frac1{2L}`.

    A zero-target direction obeys :math:`\dot\sigma=-L\sigma^{3-2/L}`, so :math:`\Delta\sim t^{-L/(L-1)}`.

    Parameters
    ----------
    depth : int >= 2

    References
    ----------
    Spec ``clocks:appF2-kl-examples`` (example 2).
    """
    L = V.count(depth, "depth", 2)
    return 1.0 - 1.0 / (2.0 * L)


@cites("clocks:appF2-kl-examples")
def kl_rate_depth(depth, n_directions=1):
    r"""Constant of :math:`\dot\Delta=-a\Delta^{2\theta}` for :math:`m` zero-target directions at depth :math:`L`.

    .. math:: a=mL\,(2/m)^{2-1/L},\qquad \Delta=\tfrac m2\sigma^2 .

    References
    ----------
    Spec ``clocks:appF2-kl-examples`` (example 2; count the directions).
    """
    L = V.integer_at_least(depth, "depth", 2)
    m = V.integer_at_least(n_directions, "n_directions", 1)
    # = 4 (L/m) (m/2)^(1/L): the exponent 1/L <= 1/2 does not amplify the rounding of m/2 (<= 3 ulp)
    return 4.0 * L / m * (m / 2.0) ** (1.0 / L)


class KLConstants(NamedTuple):
    r"""KL constants of a Kurdyka–Łojasiewicz inequality :math:`|\nabla f|\ge a\,\Delta^{\theta}`."""

    theta: float
    r"""KL exponent :math:`\theta`."""
    a: float
    """KL constant :math:`a`."""


@cites("clocks:appF2-kl-examples")
def kl_constants_critical_weight_decay():
    r"""KL constants of critical weight decay at depth 2 (target :math:`s`, :math:`\mu=s`).

    :math:`\dot\sigma=-2\sigma^2`, :math:`\Delta=\frac12\sigma^2`, hence :math:`\theta=\frac34`,
    :math:`a=4\sqrt2` and :math:`\Delta\sim t^{-2}`.

    Returns
    -------
    (theta, a) = (0.75, 4 sqrt 2)
        A :class:`KLConstants` named tuple (``theta``, ``a``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``clocks:appF2-kl-examples`` (example 3).
    """
    return KLConstants(0.75, 4.0 * math.sqrt(2.0))


@cites("clocks:appF2-wd-rate")
def weight_decay_tail_rate(mu, depth, f_perp_norm=0.0):
    r"""Exponential rate of the normalized spectral tail under weight decay in a factorized network.

    Linearising :math:`\dot\sigma=L\sigma^{2-2/L}F-\mu L\sigma` around a low-rank limit:

    .. math::

        \tau_k(t)\propto e^{-rt},\qquad r=\begin{cases}4(\mu-\lVert F_\perp\rVert_2),&L=2,\\2\mu L,&L\ge3.\end{cases}

    Weight decay alone therefore gives an *exponential* representation clock (erratum ``clocks-2``);
    ``f_perp_norm`` is ignored for :math:`L\ge3`.  An estimate from the linearisation (status asymptotic).

    Parameters
    ----------
    mu : float > 0
    depth : int >= 2
    f_perp_norm : float in [0, mu] (the L = 2 optimality condition)

    References
    ----------
    Spec ``clocks:appF2-wd-rate``.
    """
    m = V.positive(mu, "mu")
    L = V.integer_at_least(depth, "depth", 2)
    f = V.nonnegative(f_perp_norm, "f_perp_norm")
    if L == 2:
        if np.any(f > m):
            raise V.DomainError(f"f_perp_norm must be <= mu at a depth-2 stationary point (got {float(np.max(f))!r})")
        return V.scalar_or_array(4.0 * (m - f) + 0.0 * f)
    return V.scalar_or_array(2.0 * m * L + 0.0 * f)


# ============================================================================ temporal mismatch


@cites("clocks:thm5.6")
def clock_mismatch_lower_bound(eps, delta, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T):
    r"""Lower bound on the plateau :math:`t_{\rm rep}(\delta)-t_{\rm cls}(\varepsilon)` (Theorem 5.6).

    .. math::

        t_{\rm rep}-t_{\rm cls}\ge
        T+\frac{\big[\delta^{1-2\theta}-\Delta_T^{1-2\theta}\big]_+}{C_{\rm KL}^2(2\theta-1)}
        -t_0-\frac1c\Big[\log\frac{K-1}{\varepsilon}-\gamma_0\Big]_+ .

    Not clipped: a negative value means the bound is inconclusive at these tolerances.

    Example: ``clock_mismatch_lower_bound(1e-5, 1e-5, 4, 0.5, 0, 0, 1.0, 0.75, 1.0, 0)`` = 605.233.

    References
    ----------
    Spec ``clocks:thm5.6`` (paper Theorem 5.6, App. F.5).
    """
    tc = fast_clock_bound(eps, n_classes, rate, t0, gamma0)
    C = V.positive(C_kl, "C_kl")
    lo, _ = representation_clock_bounds(delta, gap0, C, C, theta, T)
    return V.scalar_or_array(np.asarray(lo) - np.asarray(tc))


@cites("clocks:thm5.6")
def coupled_mismatch_lower_bound(eps, kappa, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T):
    r"""The mismatch bound with coupled tolerances :math:`\delta=\varepsilon^\kappa`, :math:`\kappa>0`.

    Grows like :math:`\varepsilon^{-\kappa(2\theta-1)}` while the classifier clock grows like
    :math:`\log(1/\varepsilon)`.

    References
    ----------
    Spec ``clocks:thm5.6``.
    """
    k = V.positive(kappa, "kappa")
    e = V.positive(eps, "eps")
    delta = np.exp(k * np.log(e))
    if np.any(delta <= 0):
        raise V.DomainError(f"eps**kappa underflows to 0 (eps={float(np.min(e))!r}, kappa={float(np.max(k))!r})")
    return clock_mismatch_lower_bound(e, delta, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T)


@cites("clocks:thm5.6")
def crossover_eps(kappa, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T):
    r"""Largest :math:`\varepsilon` below which the coupled mismatch bound is positive.

    Scans :math:`\log\varepsilon\in[\log10^{-300},0)` for the last sign change from positive to
    non-positive and refines it with ``brentq``.

    Raises
    ------
    DomainError
        If the bound has no sign change in :math:`[10^{-300},1)`.

    References
    ----------
    Spec ``clocks:thm5.6``.
    """
    k = V.positive(kappa, "kappa", scalar=True)
    for name, value in (("rate", rate), ("t0", t0), ("gamma0", gamma0), ("C_kl", C_kl), ("theta", theta),
                        ("gap0", gap0), ("T", T)):
        V.finite(value, name, scalar=True)  # scalars only; their domains are checked by the bound itself

    def f(u: float) -> float:
        return float(coupled_mismatch_lower_bound(math.exp(u), k, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T))

    lo_u = max(math.log(1e-300), math.log(1e-300) / k if k > 1 else math.log(1e-300))
    us = np.linspace(lo_u, -1e-12, 3001)
    vals = np.asarray(coupled_mismatch_lower_bound(np.exp(us), k, n_classes, rate, t0, gamma0, C_kl, theta, gap0, T),
                      dtype=np.float64)  # one vectorised call for the scan (was 3001 scalar calls: 30x slower)
    pos = vals > 0
    idx = np.nonzero(pos[:-1] & ~pos[1:])[0]
    if idx.size == 0:
        raise V.DomainError("the coupled mismatch bound has no sign change for eps in [1e-300, 1) "
                            f"(values {vals[0]:.3g} at the low end, {vals[-1]:.3g} near 1)")
    j = int(idx[-1])
    if vals[j + 1] == 0.0:
        return math.exp(float(us[j + 1]))
    return math.exp(optimize.brentq(f, float(us[j]), float(us[j + 1]), xtol=1e-15, rtol=4 * np.finfo(float).eps))


# ============================================================================ estimators


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
    total = float(np.sum(e))
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
    return float(max(0.0, 1.0 - float(np.sum(e[sel])) / total))
