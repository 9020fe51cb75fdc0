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
    r"""Level metric :math:`\rho_{\rm tian}`: distance of the feature kernel from the two-level ideal.

    ``variant="code"`` (what the paper's and Tian's code compute) on the raw :math:`G=FF^\top`:

    .. math::

        \bar d=\tfrac1n\operatorname{tr}G,\quad \bar o=\frac{\mathbf 1^\top G\mathbf 1-\operatorname{tr}G}{n(n-1)},\quad
        \rho=\frac{\|G-[(\bar d-\bar o)I+\bar o\mathbf 1\mathbf 1^\top]\|_F}{\|G\|_F}
        =\sqrt{1-\frac{n\bar d^2+n(n-1)\bar o^2}{\|G\|_F^2}},

    the closed form (``method="closed"``, default) needing only :math:`\|F\|_F^2`, :math:`\|F^\top\mathbf 1\|^2`
    and :math:`\|G\|_F=\|F^\top F\|_F` (smaller side); ``method="direct"`` forms the :math:`n\times n` matrix.

    ``variant="paper_eq7"``: eq. 7 as printed, :math:`G'=P_1^\perp FF^\top` (column-centred, as the code's
    ``fft``), :math:`\bar d,\bar o` from :math:`G'`, denominator :math:`\|FF^\top\|_F` -- for comparison only
    (erratum ``repulsion-3``). Fire rule: :func:`first_crossing` at 0.075 (tuned to M=71, K=2048).

    Raises
    ------
    DomainError
        ``F`` not 2-D, fewer than 2 rows, all zero, non-finite.

    References
    ----------
    Spec ``repulsion:rho-tian`` (eq. 7; code ``tian_metrics`` ``fft_dist_from_ideal``, Tian's ``fit_diag_11``).
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
    r"""First epoch :math:`t` with ``series[t] >= threshold`` (NaN never crosses); ``None`` if never.

    Used for the grokking epoch (test accuracy >= 0.5, absolute threshold as in
    ``analyze_eta_sweep.py``) and the :math:`\rho_{\rm tian}` fire epoch (>= 0.075). A 2-D input
    (runs x epochs) gives a list, one entry per run.

    References
    ----------
    Spec ``repulsion:rho-tian``, ``repulsion:headline`` (§7-9).
    """
    s = _series(series, "series", ndim=(1, 2))
    th = V.finite(threshold, "threshold", scalar=True)
    if s.ndim == 2:
        return [first_crossing(r, th) for r in s]
    with np.errstate(invalid="ignore"):
        hit = np.nonzero(s >= th)[0]
    return int(hit[0]) if hit.size else None
