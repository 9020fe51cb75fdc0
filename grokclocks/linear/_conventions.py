"""Levi et al.: numerical constants, argument checks and the weight-decay convention."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _validate as V
from ..citations import cites


_LOG_SQRT_PI = 0.5 * math.log(math.pi)
# Crossing times are searched up to the largest double (and to where 4 eta0 t/d_out is still one);
# beyond it t_star raises DomainError rather than return a wrong number.
_FLOAT_MAX = float(np.finfo(np.float64).max)
_T_MAX = 0.9 * _FLOAT_MAX
# Relative tolerance of the crossing-time root (spec levi:tstar asks 1e-12; Brent reaches 1e-15 in a few
# more steps, and below that the root is set by the accuracy of log L itself).
_ROOT_RTOL = 1e-15
# Relative tolerance of the MP quadratures used by the weight-decay / discrete / noise paths.
_QUAD_RTOL = 1e-12


def _flow_time(eta0: Any, t: Any, d: float) -> Any:
    r""":math:`s=4\eta_0t/d_{\rm out}`, the gradient-flow time (spec ``levi:conv-time``), without the
    spurious overflow of :math:`4\eta_0` (``inf`` for :math:`\eta_0>4.5\cdot10^{307}` where :math:`s`
    itself is finite): ``inf`` only where :math:`s` exceeds 1.8e308.  Same rounding as ``4 eta0 t / d``
    wherever that is finite."""
    if type(t) is float and type(eta0) is float:  # Python floats: an overflow gives inf without a warning
        s = 4.0 * eta0 * t / d
        return s if math.isfinite(s) else 4.0 * ((eta0 / d) * t)
    with np.errstate(over="ignore"):
        s = 4.0 * eta0 * t / d
        if not np.ndim(s):
            return s if math.isfinite(s) else 4.0 * ((eta0 / d) * t)
        if not s.size or float(s.max()) < math.inf:  # eta0 > 0, t >= 0: s >= 0, inf the only non-finite value
            return s
        return np.where(np.isfinite(s), s, 4.0 * ((eta0 / d) * t))


def _gd_time(s: Any, eta0: Any, d: float) -> Any:
    r""":math:`t=s\,d_{\rm out}/(4\eta_0)`, the inverse of :func:`_flow_time`, without the spurious
    overflow of :math:`s\,d_{\rm out}` or :math:`4\eta_0`."""
    with np.errstate(over="ignore"):
        t = s * d / (4.0 * eta0)
        ok = np.isfinite(t) & (t > 0) | (s == 0)
        alt = 0.25 * s * (d / eta0)
        return np.where(ok, t, alt) if np.ndim(t) else (t if bool(ok) else float(alt))


# ============================================================================ argument checks


# a scalar call: every numeric argument one of these; its checks return Python floats and the engine runs on
# them (FL.SCALAR), the same code as on arrays
_SCALAR_TYPES = (float, np.float64, int)


def _scalar_call(*values: Any) -> bool:
    """Whether every value is a Python/NumPy float or a Python int (bool is not: its type is bool)."""
    for v in values:
        if type(v) not in _SCALAR_TYPES:
            return False
    return True


def _lam(lam: Any, scalar: bool = False) -> Any:
    return V.positive(lam, "lam", scalar=scalar)


def _lam_below_one(lam: Any, what: str, scalar: bool = False) -> Any:
    return V.in_open_interval(lam, "lam", 0.0, 1.0, context=f"({what} requires 0 < lam < 1)", scalar=scalar)


def _lam_not_one(lam: Any, what: str, scalar: bool = False) -> Any:
    a = _lam(lam, scalar)
    if scalar and a != 1.0:
        return a
    V.not_equal(np.asarray(a), "lam", 1.0, context=f"({what} diverges at lam = 1)")
    return a


def _eta0(eta0: Any, scalar: bool = False) -> Any:
    return V.positive(eta0, "eta0", scalar=scalar)


def _eps(eps: Any, scalar: bool = False) -> Any:
    return V.positive(eps, "eps", scalar=scalar)


def _t(t: Any) -> np.ndarray:
    return V.nonnegative(t, "t")


def _t_late(t: Any, scalar: bool = False) -> Any:
    return V.positive(t, "t", context="for a late-time expansion", scalar=scalar)


def _d_out(d_out: Any) -> int:
    return V.integer_at_least(d_out, "d_out", 1)


def _level(level: Any, scalar: bool = False) -> Any:
    return V.in_open_interval(level, "level", 0.0, 1.0, scalar=scalar)


def _which(which: Any) -> str:
    return V.choice(which, "which", {"train": "train", "tr": "train", "gen": "gen"})


_flag = V.flag


def _init_scale(alpha: Any) -> np.ndarray:
    return V.finite(alpha, "init_scale")


def _gamma_paper(gamma: Any, d_out: float, wd_convention: Any, scalar: bool = False) -> Any:
    """THE conversion of a weight decay to the paper convention (spec ``levi:conv-wd``); a Python float with
    `scalar`."""
    conv = V.choice(wd_convention, "wd_convention", ("paper", "torch"))
    g = V.nonnegative(gamma, "gamma", scalar=scalar)
    return g * float(d_out) if conv == "torch" else g


# ============================================================================ conventions


@cites("levi:conv-wd")
def gamma_paper_convention(gamma, *, d_out=1, wd_convention="paper"):
    r"""Weight decay converted to the paper's convention (the one every function of `grokclocks.linear` uses).

    .. math:: \gamma_{\rm paper}=\begin{cases}\gamma & \text{wd\_convention="paper"}\\
        d_{\rm out}\,\gamma & \text{wd\_convention="torch"}\end{cases}

    In words: a PyTorch weight decay is multiplied by the output dimension. Paper eq. (3) adds η₀γS/d_out per
    step (the gradient of L_tr + γ‖S‖²_F/(2d_out)); PyTorch `SGD(weight_decay=γ_t)` on a mean-reduced MSE adds
    η₀γ_tS. The two agree at d_out = 1.

    Parameters
    ----------
    gamma : float or array_like
        Weight decay γ ≥ 0 in the convention named by `wd_convention`.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    wd_convention : {"paper", "torch"}
        Convention of `gamma`. "paper" (default): the paper's γ of eq. (3), whose GD step adds η₀γS/d_out.
        "torch": the `weight_decay` of PyTorch's `SGD` on a mean-reduced MSE, whose step adds η₀γS;
        converted as γ_paper = d_out·γ (spec `levi:conv-wd`).

    Returns
    -------
    float or ndarray
        γ in the paper convention, the shape of `gamma`.

    References
    ----------
    Levi et al., eq. (3); spec `levi:conv-wd`.
    """
    d = _d_out(d_out)
    return V.scalar_or_array(_gamma_paper(gamma, d, wd_convention))
