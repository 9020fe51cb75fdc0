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
"""The accepted values of `penalty` (spec convention C1): "eq2" (L + λ‖θ‖², γ = 2λ) and "half" (L + (λ/2)‖θ‖², γ = λ)."""

LOSS_NORMS = ("sum", "mean")
"""The accepted values of `loss_norm` (spec convention C2): "sum" (½Σᵢrᵢ²) and "mean" (the sum divided by n)."""

HEADLINE: dict[str, float] = dict(alpha=0.0, lam=1.0, N=512, p=97, eta=1e-3, rho=0.3, t_mem=200, t_grok=14600,
                                  ratio=73.0, train_acc=1.0, test_acc=1.0)
"""The paper's headline experiment (§4.1) as reported (spec `kramers:headline`).

Width exponent `alpha`, weight decay `lam`, width `N`, modulus `p`, learning rate `eta`, training fraction `rho`,
the memorisation and grokking steps `t_mem`, `t_grok`, their `ratio` and the final accuracies. Erratum kramers-10: it
cannot have been plain GD on eq. (2); the numbers match AdamW (learning rate 10⁻³, decoupled weight decay 1.0).
"""

_SQ3 = math.sqrt(3.0)

# sqrt(3)/2 + pi/3 - 1 and 1 + pi/3 - sqrt(3), correctly rounded (mpmath, 40 digits): the float expression
# for the second cancels 2.05 down to 0.315 and lost 4 ulp
_S1 = 0.9132229549810363

_S0 = 0.31514674362772044


@cites("kramers:eq2", "kramers:eq3")
def decay_rate(lam: Any, penalty: str = "eq2", *, allow_zero: bool = False) -> float | np.ndarray:
    r"""Decay rate γ of a parameter component untouched by the data (spec convention C1).

    .. math::
        \gamma = 2\lambda\ (\texttt{penalty="eq2"}:\ \mathcal L+\lambda\|\theta\|^2),\qquad
        \gamma = \lambda\ (\texttt{penalty="half"}:\ \mathcal L+\tfrac\lambda2\|\theta\|^2).

    In words: γ = 2λ for the paper's eq. (2) penalty λ‖θ‖², γ = λ for the penalty (λ/2)‖θ‖²; pure decay is
    θ(t) = θ(0)e^(−γt).

    Parameters
    ----------
    lam : float or array_like
        λ, the weight-decay coefficient; λ > 0 (λ ≥ 0 with `allow_zero`).
    penalty : {"eq2", "half"}
        The penalty convention (spec convention C1). "eq2" (default): the objective L + λ‖θ‖² of the
        paper's eq. (2), decay rate γ = 2λ. "half": L + (λ/2)‖θ‖² (§2.5–2.6 of the paper, Lyu et al.), γ =
        λ.
    allow_zero : bool
        Whether λ = 0 (no weight decay, γ = 0) is accepted; default False.

    Returns
    -------
    float or ndarray
        γ, the shape of `lam`, in inverse gradient-flow time.

    References
    ----------
    Spec `kramers:eq2`, `kramers:eq3`; erratum kramers-6 (the paper switches conventions).
    """
    return V.scalar_or_array(_gamma(lam, penalty, allow_zero=allow_zero)[0])


def _gamma(lam: Any, penalty: str = "eq2", *, allow_zero: bool = False, scalar: bool = False) -> tuple[Any, tuple]:
    """`decay_rate`'s work: ``(γ, (min γ, max γ))``, λ and `penalty` validated here (a Python float with `scalar`,
    else an array, 0-d for a number); the extremes are λ's from its validation times c (2λ is exact, or inf)."""
    if penalty not in PENALTIES:
        raise DomainError(f"penalty must be 'eq2' or 'half' (got {penalty!r})")
    check = V.nonnegative if V.flag(allow_zero, "allow_zero") else V.positive
    lam, (lo, hi) = check(lam, "lam", scalar=scalar, extrema=True)
    c = 2.0 if penalty == "eq2" else 1.0
    return lam * c, (lo * c, hi * c)


def _decay_parts(lam: Any, penalty: str = "eq2", *, allow_zero: bool = False) -> tuple[float, float]:
    r"""``(lam, c)`` with :math:`\gamma=c\lambda` (``c`` = 2 for ``"eq2"``, 1 for ``"half"``), lam a scalar:
    for products :math:`\gamma t` formed as ``c * (lam * t)``, finite (0 at t = 0) where ``2 lam``
    overflows (lam > 9e307)."""
    with np.errstate(over="ignore"):
        g = V.scalar(decay_rate(lam, penalty, allow_zero=allow_zero), "lam")  # validates lam and penalty
    c = 2.0 if penalty == "eq2" else 1.0
    return (g / c if math.isfinite(g) else float(V.scalar(np.asarray(lam, dtype=np.float64), "lam"))), c


@cites("kramers:eq4", "kramers:eq5")
def kernel_rate_factor(n: Any, loss_norm: str = "sum") -> float | np.ndarray:
    r"""Factor multiplying every kernel rate for the loss normalisation (spec convention C2).

    "sum": L = ½Σᵢrᵢ², ṙ = −Kr, factor 1; "mean": L = (1/(2n))Σᵢrᵢ², factor 1/n.

    Parameters
    ----------
    n : int or array_like
        The number n of training points, an integer ≥ 1 (an array: one factor per n, a sweep in n).
    loss_norm : {"sum", "mean"}
        The loss normalisation (spec convention C2). "sum" (default): L = ½Σᵢrᵢ², kernel rates as they
        are; "mean": L = (1/(2n))Σᵢrᵢ², every kernel rate divided by n.

    Returns
    -------
    float or ndarray
        1 or 1/n: a float for a number n, else an array of the shape of `n`.

    References
    ----------
    Spec `kramers:eq4`, `kramers:eq5` (convention C2).
    """
    if loss_norm not in LOSS_NORMS:
        raise DomainError(f"loss_norm must be 'sum' or 'mean' (got {loss_norm!r})")
    n = V.counts(n, "n", 1)  # a Python float for a number (its nearest double), else a float64 array
    if type(n) is float:
        return 1.0 if loss_norm == "sum" else 1.0 / n
    # 1/n into the conversion's own array where it made one (integers), else a new one
    return np.ones(n.shape) if loss_norm == "sum" else np.divide(1.0, n, out=n if n.flags.writeable else None)
