"""Repulsion: Tian's rho and first crossings."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _validate as V
from ..citations import cites
from ._args import DomainError, _matrix, _series


@cites("repulsion:rho-tian")
def rho_tian(F: Any, variant: str = "code", method: str = "closed") -> float:
    r"""Level metric ρ_tian: relative distance of the feature kernel from the two-level ideal.

    With `variant="code"` (what the paper's and Tian's code compute), on the raw kernel G = F·Fᵀ:

    .. math::

        \bar d=\tfrac1n\operatorname{tr}G,\quad \bar o=\frac{\mathbf 1^\top G\mathbf 1-\operatorname{tr}G}{n(n-1)},\quad
        \rho=\frac{\|G-[(\bar d-\bar o)I+\bar o\mathbf 1\mathbf 1^\top]\|_F}{\|G\|_F}
        =\sqrt{1-\frac{n\bar d^2+n(n-1)\bar o^2}{\|G\|_F^2}},

    In words: d̄ is the mean diagonal and ō the mean off-diagonal entry of G; ρ is the Frobenius
    distance of G from the matrix with d̄ on the diagonal and ō elsewhere, relative to ‖G‖_F.  The
    closed form (`method="closed"`, default) needs only ‖F‖_F², ‖Fᵀ·𝟏‖² and ‖G‖_F = ‖Fᵀ·F‖_F (the
    smaller side); `method="direct"` forms the n × n matrix.

    With `variant="paper_eq7"`: eq. 7 as printed, G′ = P₁^⊥·F·Fᵀ (column-centred, as the code's
    `fft`), d̄ and ō from G′, denominator ‖F·Fᵀ‖_F; for comparison only (erratum repulsion-3).  The fire
    rule is `first_crossing` at 0.075 (tuned to M = 71, K = 2048).

    Parameters
    ----------
    F : array_like
        Hidden features, a finite 2-D array of shape (n, K) with n ≥ 2 and not all zero.
    variant : {"code", "paper_eq7"}, optional
        `"code"` (default): the metric as the code computes it; `"paper_eq7"` (or `"paper"`): eq. 7 as
        printed.
    method : {"closed", "direct"}, optional
        For `"code"`: `"closed"` (default, the closed form above) or `"direct"` (the n × n kernel);
        `"paper_eq7"` is always evaluated directly.

    Returns
    -------
    float
        ρ_tian ≥ 0 (in [0, 1] for `"code"`).

    Raises
    ------
    DomainError
        If `F` is not a finite 2-D array with at least 2 rows, is all zero, or `variant` or `method` is
        unknown.

    References
    ----------
    Spec ID `repulsion:rho-tian` (paper eq. 7; the authors' code `tian_metrics.fft_dist_from_ideal`,
    Tian's `fit_diag_11`).
    """
    F = _matrix(F, "F", min_rows=2)
    variant = V.choice(variant, "variant", {"code": "code", "paper_eq7": "paper_eq7", "paper": "paper_eq7"})
    method = V.choice(method, "method", ("closed", "direct"))
    if not np.any(F != 0):
        raise DomainError("F must not be all zero (rho_tian is 0/0)")
    n = F.shape[0]
    if variant == "code" and method == "closed":
        tr = float(np.sum(F * F))
        s1 = F.sum(axis=0)
        tot = float(s1 @ s1)
        Gs = F.T @ F if F.shape[1] <= n else F @ F.T
        g2 = float(np.sum(Gs * Gs))
        dbar = tr / n
        obar = (tot - tr) / (n * (n - 1))
        return math.sqrt(max(0.0, 1.0 - (n * dbar**2 + n * (n - 1) * obar**2) / g2))
    G0 = F @ F.T
    G = G0 if variant == "code" else G0 - G0.mean(axis=0, keepdims=True)
    tr = float(np.trace(G))
    dbar = tr / n
    obar = (float(G.sum()) - tr) / (n * (n - 1))
    ideal = np.full((n, n), obar)
    ideal[np.diag_indices(n)] = dbar
    return float(np.linalg.norm(G - ideal) / np.linalg.norm(G0))


@cites("repulsion:rho-tian", "repulsion:slope-detector", "repulsion:headline")
def first_crossing(series: Any, threshold: float) -> int | None | list:
    r"""First epoch t with `series[t] ≥ threshold` (NaN never crosses); `None` if never.

    Used for the grokking epoch (test accuracy ≥ 0.5, an absolute threshold as in the authors'
    `analyze_eta_sweep.py`) and the ρ_tian fire epoch (≥ 0.075).

    Parameters
    ----------
    series : array_like
        Values per epoch: a 1-D array (one run) or a 2-D array (runs × epochs); NaN allowed, no
        infinities.
    threshold : float
        The level, a finite real.

    Returns
    -------
    int or None or list
        For 1-D input the first epoch index reaching the level, or `None`; for 2-D input a list with one
        such entry per run.

    Raises
    ------
    DomainError
        If `series` is not 1-D or 2-D or holds an infinity, or `threshold` is not a finite scalar.

    References
    ----------
    Spec IDs `repulsion:rho-tian` (paper eq. 7), `repulsion:slope-detector` (eq. 6) and
    `repulsion:headline` (the headline numbers).
    """
    s = _series(series, "series", ndim=(1, 2))
    th = V.finite(threshold, "threshold", scalar=True)
    if s.ndim == 2:
        return [first_crossing(r, th) for r in s]
    with np.errstate(invalid="ignore"):
        hit = np.nonzero(s >= th)[0]
    return int(hit[0]) if hit.size else None
