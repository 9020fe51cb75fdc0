"""The delay-scaling summary table and the paper's headline record."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _pointwise as PW
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._conventions import HEADLINE, _gamma
from ._separation import _SEP_MEASURES, implicit_bias_time_estimate, separation_exponent
from ._escape import eyring_kramers_time, log_eyring_kramers_time
from ._temperatures import spectral_delay_ratio

__all__ = ["delay_scaling", "delay_scaling_estimate", "headline_record"]


_DELAY_PARAMS = {  # mechanism -> (required, optional) keyword arguments
    "separation": (("N", "alpha", "measure"), ("a_init",)),
    "implicit_bias": (("init_scale", "lam"), ("penalty",)),
    "ridge": (("mu_min", "lam"), ("penalty",)),
    "kramers": (("hess_min", "hess_saddle", "delta_F", "T"), ("log",)),
    "spectral": (("eigs",), ("eta",)),
}


@cites("kramers:table", "kramers:eq8", "kramers:barrier", "kramers:eq16")
def delay_scaling_estimate(mechanism: str, **params: Any) -> float | np.ndarray:
    r"""Estimate of the delay by one of the paper's mechanisms (§5.1 table, corrected where wrong).

    | mechanism | params | returns |
    |---|---|---|
    | "separation" | `N`, `alpha`, `measure` (required), `a_init` | N^e with e = `separation_exponent` |
    | "implicit_bias" | `init_scale`, `lam`, `penalty` | ln s/γ (`implicit_bias_time_estimate`) |
    | "ridge" | `mu_min` (= λ⁺_min(ΦᵀΦ)/n), `lam`, `penalty` | μ⁺_min/γ (erratum kramers-5) |
    | "kramers" | `hess_min`, `hess_saddle`, `delta_F`, `T`, `log` | τ_EK (`eyring_kramers_time`; its log with `log=True`) |
    | "spectral" | `eigs`, `eta` | κ or the GD step ratio (`spectral_delay_ratio`) |

    `measure` has no default, so that nobody gets the erratum ("paper_claim", N^(2α)) by accident. The paper's
    exp(Ω(P/T_eff)) barrier (eq. 16, `kramers:barrier`) is asserted, not derived: pass an explicit ΔF. Also
    available as `delay_scaling`.

    Parameters
    ----------
    mechanism : {"separation", "implicit_bias", "ridge", "kramers", "spectral"}
        The mechanism, one row of the table above.
    **params : any
        The mechanism's arguments by name, as in the table; each is validated by the function named in the
        last column, whose documentation gives its meaning and domain. Missing or unknown names raise
        `DomainError`. The numbers of a mechanism broadcast like a `numpy` ufunc's arguments (a sweep):
        `N` (integers) and `alpha`; `init_scale` and `lam`; `mu_min` and `lam`; `delta_F` and `T` (the
        Hessians are one pair of matrices); `eta` (`eigs` is one spectrum).

    Returns
    -------
    float or ndarray
        The estimate: dimensionless for "separation", "ridge" and "spectral", gradient-flow time for
        "implicit_bias" and "kramers"; a float for numbers, else an array of the broadcast shape of the
        mechanism's numbers.

    References
    ----------
    Spec `kramers:table`, `kramers:eq8`, `kramers:eq16`, `kramers:barrier`.
    """
    mechanism = V.choice(mechanism, "mechanism", ("separation", "implicit_bias", "ridge", "kramers", "spectral"))
    p = dict(params)
    required, optional = _DELAY_PARAMS[mechanism]
    missing = [k for k in required if k not in p]
    unknown = sorted(set(p) - set(required) - set(optional))
    if missing or unknown:
        what = ", ".join(f"{k}=" for k in required) + (" (optional: " + ", ".join(optional) + ")" if optional else "")
        extra = ("; measure is one of " + ", ".join(_SEP_MEASURES)) if "measure" in missing else ""
        raise DomainError(f"mechanism {mechanism!r} takes {what}{extra} (missing: {missing or 'none'}, "
                          f"unknown: {unknown or 'none'})")
    if mechanism == "separation":
        return _separation_delay(p["N"], p["alpha"], p["measure"], p.get("a_init", "paper"))
    if mechanism == "implicit_bias":
        return implicit_bias_time_estimate(p["init_scale"], p["lam"], p.get("penalty", "eq2"))
    if mechanism == "ridge":
        return _ridge_delay(p["mu_min"], p["lam"], p.get("penalty", "eq2"))
    if mechanism == "kramers":
        args = (p["hess_min"], p["hess_saddle"], p["delta_F"], p["T"])
        return log_eyring_kramers_time(*args) if V.flag(p.get("log", False), "log") else eyring_kramers_time(*args)
    return spectral_delay_ratio(p["eigs"], p.get("eta"))


@V.broadcasting("N", "alpha")
def _separation_delay(N: Any, alpha: Any, measure: str, a_init: str) -> float | np.ndarray:
    """N^e, e = `separation_exponent(alpha, measure, a_init)`, broadcast over N and alpha."""
    N = V.counts(N, "N", 1)  # a float for a number (N's nearest double), else a float64 array
    e = separation_exponent(alpha, measure, a_init)
    with np.errstate(over="ignore"):  # N**e raised OverflowError past 1.8e308; inf is the value's range
        return PW.result(np.power(N, e))


@V.broadcasting("mu_min", "lam")
def _ridge_delay(mu_min: Any, lam: Any, penalty: str) -> float | np.ndarray:
    """μ⁺_min/γ, broadcast over mu_min and lam (erratum kramers-5)."""
    mu, mu_ext = V.positive(mu_min, "mu_min", scalar=PW.scalars(mu_min), extrema=True)
    g, g_ext = _gamma(lam, penalty, scalar=PW.scalars(lam))
    return PW.result(PW.product([mu, g], [1, -1], [mu_ext, g_ext]))


delay_scaling = delay_scaling_estimate
"""A second name of `delay_scaling_estimate` (the same function): the delay by one of the paper's mechanisms."""


@cites("kramers:headline")
def headline_record() -> dict[str, float]:
    r"""A copy of `HEADLINE`, the paper's reported run (empirical; reproduced with AdamW, erratum kramers-10).

    Returns
    -------
    dict
        The keys of `HEADLINE`: `alpha`, `lam`, `N`, `p`, `eta`, `rho`, `t_mem`, `t_grok`, `ratio`,
        `train_acc`, `test_acc`.

    References
    ----------
    Spec `kramers:headline`.
    """
    return dict(HEADLINE)
