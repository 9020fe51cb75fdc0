"""Conventions of spec ``kramers`` §0: penalty and loss normalisation, the paper's headline numbers."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _validate as V
from .._validate import DomainError
from ..citations import cites

__all__ = ["HEADLINE", "LOSS_NORMS", "PENALTIES", "decay_rate", "kernel_rate_factor"]


PENALTIES = ("eq2", "half")

LOSS_NORMS = ("sum", "mean")

#: The paper's headline experiment (§4.1), as reported (spec ``kramers:headline``).  Erratum E10: it
#: cannot have been plain GD on eq. (2); the numbers match AdamW (lr 1e-3, decoupled weight decay 1.0).
HEADLINE: dict[str, float] = dict(alpha=0.0, lam=1.0, N=512, p=97, eta=1e-3, rho=0.3, t_mem=200, t_grok=14600,
                                  ratio=73.0, train_acc=1.0, test_acc=1.0)

_SQ3 = math.sqrt(3.0)

# sqrt(3)/2 + pi/3 - 1 and 1 + pi/3 - sqrt(3), correctly rounded (mpmath, 40 digits): the float expression
# for the second cancels 2.05 down to 0.315 and lost 4 ulp
_S1 = 0.9132229549810363

_S0 = 0.31514674362772044


@cites("kramers:eq2", "kramers:eq3")
def decay_rate(lam: Any, penalty: str = "eq2", *, allow_zero: bool = False) -> float | np.ndarray:
    r"""Decay rate :math:`\gamma` of a parameter component untouched by the data (spec C1).

    .. math::
        \gamma = 2\lambda\ (\texttt{penalty="eq2"}:\ \mathcal L+\lambda\|\theta\|^2),\qquad
        \gamma = \lambda\ (\texttt{penalty="half"}:\ \mathcal L+\tfrac\lambda2\|\theta\|^2).

    Parameters
    ----------
    lam : float or array, > 0 (>= 0 with ``allow_zero``)
        Weight-decay coefficient.
    penalty : {"eq2", "half"}
        Convention of the penalty (eq. (2) of the paper, or Lyu et al. / §2.5-2.6).

    Returns
    -------
    float or ndarray

    References
    ----------
    ``kramers:eq2``, ``kramers:eq3``; erratum E6 (the paper switches conventions).
    """
    if penalty not in PENALTIES:
        raise DomainError(f"penalty must be 'eq2' or 'half' (got {penalty!r})")
    lam = V.nonnegative(lam, "lam") if V.flag(allow_zero, "allow_zero") else V.positive(lam, "lam")
    return V.scalar_or_array(lam * (2.0 if penalty == "eq2" else 1.0))


def _decay_parts(lam: Any, penalty: str = "eq2", *, allow_zero: bool = False) -> tuple[float, float]:
    r"""``(lam, c)`` with :math:`\gamma=c\lambda` (``c`` = 2 for ``"eq2"``, 1 for ``"half"``), lam a scalar:
    for products :math:`\gamma t` formed as ``c * (lam * t)``, finite (0 at t = 0) where ``2 lam``
    overflows (lam > 9e307)."""
    with np.errstate(over="ignore"):
        g = V.scalar(decay_rate(lam, penalty, allow_zero=allow_zero), "lam")  # validates lam and penalty
    c = 2.0 if penalty == "eq2" else 1.0
    return (g / c if math.isfinite(g) else float(V.scalar(np.asarray(lam, dtype=np.float64), "lam"))), c


@cites("kramers:eq4", "kramers:eq5")
def kernel_rate_factor(n: int, loss_norm: str = "sum") -> float:
    r"""Factor multiplying every kernel rate for the loss normalisation (spec C2).

    ``"sum"``: :math:`\mathcal L=\tfrac12\sum_i r_i^2`, :math:`\dot r=-Kr` → factor 1;
    ``"mean"``: :math:`\mathcal L=\tfrac1{2n}\sum_i r_i^2` → factor :math:`1/n`.

    Parameters
    ----------
    n : int >= 1
        Number of training points.
    loss_norm : {"sum", "mean"}

    Returns
    -------
    float

    References
    ----------
    ``kramers:eq4`` (convention C2).
    """
    if loss_norm not in LOSS_NORMS:
        raise DomainError(f"loss_norm must be 'sum' or 'mean' (got {loss_norm!r})")
    n = V.count(n, "n", 1)
    return 1.0 if loss_norm == "sum" else 1.0 / n
