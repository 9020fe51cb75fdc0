"""Explicit GD on the ridge objective in float64 (`kramers:ridge-gd`), compared with the exact iterate.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ... import _validate as V, kramers as K
from ..._validate import DomainError, integer_at_least, positive
from ...citations import cites
from .._runtime import enable_x64, SimulationDiverged
from ._arguments import _targets


@functools.partial(jax.jit, static_argnames=("steps", "record_every"))
def _ridge_scan(Phi, y, theta0, gamma, eta, steps, record_every=1):
    n = Phi.shape[0]

    def one(th, _):
        g = Phi.T @ (Phi @ th - y) / n + gamma * th
        return th - eta * g, None

    def rec(th, _):
        th, _ = jax.lax.scan(one, th, None, length=record_every)
        return th, th

    _, ths = jax.lax.scan(rec, theta0, None, length=steps // record_every)
    return jnp.concatenate([theta0[None], ths])


@cites("kramers:ridge-gd", "kramers:ridge-gf")
def ridge_gd_run(Phi: Any, y: Any, lam: float, theta0: Any, eta: float, steps: int,
                 penalty: str = "eq2", record_every: int = 1) -> np.ndarray:
    r"""Explicit GD on the ridge objective ‖Φθ − y‖²/(2n) + (γ/2)‖θ‖² (float64, `lax.scan`).

    Parameters
    ----------
    Phi : array_like
        Feature matrix Φ, shape (n, D).
    y : array_like
        Targets, shape (n,).
    lam : float
        Weight-decay coefficient λ > 0.
    theta0 : array_like
        Initial parameters θ₀, shape (D,).
    eta : float
        Learning rate η > 0.
    steps : int
        Number of steps ≥ 1, a multiple of `record_every`.
    penalty : {"eq2", "half"}
        Convention of the weight decay: `"eq2"` (default; paper eq. 2) adds λ‖θ‖² to the loss, so
        the decay rate is γ = 2λ; `"half"` adds (λ/2)‖θ‖², γ = λ (Lyu et al.).
    record_every : int
        Steps r ≥ 1 between two returned iterates; default 1.

    Returns
    -------
    numpy.ndarray
        The iterates θ₀, θ_r, θ_2r, ..., θ_steps, shape (steps/r + 1, D).

    Raises
    ------
    SimulationDiverged
        If an iterate becomes non-finite.
    DomainError
        If an argument is outside its domain or the iterates would exceed 2³⁰ entries.

    References
    ----------
    Spec `kramers:ridge-gd`, `kramers:ridge-gf`.
    """
    enable_x64()
    Phi, gamma, _, _ = K._ridge_setup(Phi, lam, penalty)
    y = _targets(y, Phi.shape[0])
    theta0 = V.as_float_array(theta0, "theta0")
    if theta0.shape != (Phi.shape[1],):
        raise DomainError(f"theta0 must have shape ({Phi.shape[1]},) (got {theta0.shape})")
    steps = integer_at_least(steps, "steps", 1)
    record_every = integer_at_least(record_every, "record_every", 1)
    if steps % record_every:
        raise DomainError(f"steps must be a multiple of record_every (got {steps}, {record_every})")
    V.max_size(float(steps // record_every) * Phi.shape[1], "steps", steps)  # all recorded iterates are returned
    out = np.asarray(_ridge_scan(jnp.asarray(Phi, jnp.float64), jnp.asarray(y, jnp.float64),
                                 jnp.asarray(theta0, jnp.float64), gamma, positive(eta, "eta", scalar=True),
                                 steps, record_every))
    if not np.all(np.isfinite(out)):
        raise SimulationDiverged(int(np.argmin(np.all(np.isfinite(out), axis=1))), "theta", dict(eta=eta))
    return out
