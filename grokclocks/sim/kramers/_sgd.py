"""Stationary excess loss of SGD on least squares (`kramers:teff-sgd`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ... import _validate as V
from ..._validate import DomainError, integer_at_least, positive
from ...citations import cites
from .._runtime import enable_x64, SimulationDiverged
from ._arguments import _targets


@functools.partial(jax.jit, static_argnames=("B", "steps", "burn_in", "n_rep"))
def _sgd_scan(X, y, H, theta_star, key, eta, B, steps, burn_in, n_rep):
    n, D = X.shape
    th0 = jnp.broadcast_to(theta_star, (n_rep, D))

    def one(carry, k):
        th, acc = carry
        idx = jax.random.randint(jax.random.fold_in(key, k), (n_rep, B), 0, n)
        Xb = X[idx]  # (R, B, D)
        r = jnp.einsum("rbd,rd->rb", Xb, th) - y[idx]
        g = jnp.einsum("rbd,rb->rd", Xb, r) / B
        th = th - eta * g
        dv = th - theta_star
        exc = jnp.einsum("rd,de,re->r", dv, H, dv)
        acc = acc + jnp.where(k >= burn_in, exc, 0.0)
        return (th, acc), None

    (th, acc), _ = jax.lax.scan(one, (th0, jnp.zeros(n_rep)), jnp.arange(steps))
    return acc / (steps - burn_in)


@cites("kramers:teff-sgd")
def sgd_excess_loss(X: Any, y: Any, eta: float, batch_size: int, n_replicas: int, steps: int, burn_in: int,
                    seed: int = 0) -> dict[str, float]:
    r"""Stationary excess loss tr(HC) = E[(θ − θ∗)ᵀH(θ − θ∗)] of minibatch SGD on least squares.

    SGD (batches drawn with replacement) on ‖Xθ − y‖²/(2n), run as `n_replicas` independent chains
    from θ∗; also returns tr Σ of the per-sample gradients at θ∗ (`kramers:teff-sgd`).

    Parameters
    ----------
    X : array_like
        Inputs, shape (n, D), with XᵀX invertible.
    y : array_like
        Targets, shape (n,).
    eta : float
        Learning rate η > 0.
    batch_size : int
        Batch size B, an integer in [1, n].
    n_replicas : int
        Number of independent SGD chains ≥ 2 (for the standard error).
    steps : int
        Number of SGD steps ≥ 1.
    burn_in : int
        Steps discarded before averaging, an integer in [0, `steps` − 1].
    seed : int
        Seed ≥ 0 of the batch draws; default 0.

    Returns
    -------
    dict
        `trHC` (mean over replicas), `trHC_sem` (its standard error), `trace_sigma` (tr Σ), `P`
        (the dimension D) and `Sigma` (the gradient covariance, (D, D)).

    Raises
    ------
    SimulationDiverged
        If the excess loss becomes non-finite.
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `kramers:teff-sgd`.
    """
    enable_x64()
    X = V.as_float_array(X, "X")
    if X.ndim != 2:
        raise DomainError(f"X must be (n, D) (got shape {X.shape})")
    y = _targets(y, X.shape[0])
    eta = positive(eta, "eta", scalar=True)
    batch_size = integer_at_least(batch_size, "batch_size", 1, maximum=X.shape[0])
    n_replicas = integer_at_least(n_replicas, "n_replicas", 2)
    steps = integer_at_least(steps, "steps", 1)
    burn_in = integer_at_least(burn_in, "burn_in", 0, maximum=steps - 1)
    seed = integer_at_least(seed, "seed", 0)
    V.max_size(float(n_replicas) * X.shape[1], "n_replicas", n_replicas)
    n, D = X.shape
    H = X.T @ X / n
    th_star = np.linalg.solve(H, X.T @ y / n)
    G = X * (X @ th_star - y)[:, None]
    Sigma = G.T @ G / n - np.outer(G.mean(0), G.mean(0))
    per = np.asarray(_sgd_scan(jnp.asarray(X), jnp.asarray(y), jnp.asarray(H), jnp.asarray(th_star),
                               jax.random.key(int(seed)), float(eta), int(batch_size), int(steps), int(burn_in),
                               int(n_replicas)))
    if not np.all(np.isfinite(per)):
        raise SimulationDiverged(steps, "excess loss", dict(eta=eta, batch_size=batch_size))
    return dict(trHC=float(per.mean()), trHC_sem=float(per.std(ddof=1) / math.sqrt(per.size)),
                trace_sigma=float(np.trace(Sigma)), P=D, Sigma=Sigma)
