"""Full-batch GD with weight decay on the summed squared loss (`kramers:eq3`), and its jitted programs.
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
from ._arguments import _params_net, _targets
from ._net import alpha_two_layer_apply


def _sq_loss(params, X, y, alpha):
    r = alpha_two_layer_apply(params, X, alpha) - y
    return 0.5 * jnp.sum(r * r)


@functools.partial(jax.jit, static_argnames=("steps", "train_W", "record_every"))
def _gd_scan(params, X, y, alpha, gamma, eta, steps, train_W, record_every):
    g = jax.grad(_sq_loss)

    def one(p, _):
        gr = g(p, X, y, alpha)
        new = {"a": p["a"] - eta * (gr["a"] + gamma * p["a"])}
        new["W"] = p["W"] - eta * (gr["W"] + gamma * p["W"]) if train_W else p["W"]
        return new, None

    def rec(p, _):
        p, _ = jax.lax.scan(one, p, None, length=record_every)
        return p, (_sq_loss(p, X, y, alpha), p["W"])

    return jax.lax.scan(rec, params, None, length=steps // record_every)


@functools.partial(jax.jit, static_argnames=("train_W",))
def _gd_final(params, X, y, alpha, gamma, eta, steps, train_W):
    g = jax.grad(_sq_loss)

    def one(_, p):
        gr = g(p, X, y, alpha)
        new = {"a": p["a"] - eta * (gr["a"] + gamma * p["a"])}
        new["W"] = p["W"] - eta * (gr["W"] + gamma * p["W"]) if train_W else p["W"]
        return new

    p = jax.lax.fori_loop(0, steps, one, params)
    return p, _sq_loss(p, X, y, alpha)


@functools.partial(jax.jit, static_argnames=("max_steps",))
def _gd_final_batched(params, X, y, alpha, etas, steps, max_steps):
    """GD of a batch of seeds (leading axis of `params`), seed s with step `etas[s]` for `steps[s]` steps
    (the same update as `_gd_final` with gamma = 0; a seed's parameters stay fixed after its last step)."""
    g = jax.grad(_sq_loss)

    def run(p, eta, n):
        def one(k, p):
            gr = g(p, X, y, alpha)
            new = {"a": p["a"] - eta * (gr["a"] + 0.0 * p["a"]), "W": p["W"] - eta * (gr["W"] + 0.0 * p["W"])}
            return jax.tree_util.tree_map(lambda u, v: jnp.where(k < n, u, v), new, p)

        return jax.lax.fori_loop(0, max_steps, one, p)

    return jax.vmap(run)(params, etas, steps)


@cites("kramers:eq3")
def train_gd(params: dict[str, Any], X: Any, y: Any, alpha: float, eta: float, steps: int, *, lam: float = 0.0,
             penalty: str = "eq2", train_W: bool = True, record_every: int | None = None) -> dict[str, Any]:
    r"""Full-batch GD θ_{k+1} = θ_k − η(∇L + γθ_k) of the two-layer net on the summed squared loss (float64).

    L = ½·Σ_i (f(x_i) − y_i)² with f of eq. (1), and γ the decay rate of `lam` in the convention
    `penalty`.  GD approximates gradient flow with an O(η) error (C3); time is t = kη.

    Parameters
    ----------
    params : dict of str to array_like
        Initial `{"W": (N, d), "a": (N,)}` (scalar output), finite.
    X : array_like
        Inputs, shape (n, d).
    y : array_like
        Targets, shape (n,).
    alpha : float
        Width exponent α in [0, 0.5].
    eta : float
        Learning rate η > 0.
    steps : int
        Number of GD steps ≥ 1, a multiple of `record_every` when given.
    lam : float
        Weight-decay coefficient λ ≥ 0; default 0.
    penalty : {"eq2", "half"}
        Convention of the weight decay: `"eq2"` (default; paper eq. 2) adds λ‖θ‖² to the loss, so
        the decay rate is γ = 2λ; `"half"` adds (λ/2)‖θ‖², γ = λ (Lyu et al.).
    train_W : bool
        Whether the features W are trained (default `True`); `False` trains the readout only.
    record_every : int or None
        Record the loss and W every `record_every` steps (an integer ≥ 1 dividing `steps`); `None`
        (default) returns the final state only.

    Returns
    -------
    dict
        `params` (final, numpy), `loss` (the loss at each record, or at the end), `t` (the records'
        times kη) and, with `record_every`, `W` (the features at each record).

    Raises
    ------
    SimulationDiverged
        If the loss becomes non-finite.
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `kramers:eq3`.
    """
    enable_x64()
    prm, X = _params_net(params, X)
    y = _targets(y, X.shape[0])
    if prm["a"].ndim != 1:
        raise DomainError(f"params['a'] must be (N,) (scalar output, squared loss) (got {prm['a'].shape})")
    alpha = K._alpha(alpha)
    eta = positive(eta, "eta", scalar=True)
    train_W = V.flag(train_W, "train_W")
    params = prm
    steps = integer_at_least(steps, "steps", 1)
    re = steps if record_every is None else integer_at_least(record_every, "record_every", 1)
    if steps % re:
        raise DomainError(f"steps must be a multiple of record_every (got {steps}, {re})")
    gamma = V.scalar(K.decay_rate(lam, penalty, allow_zero=True), "lam")  # a DomainError for an array lam
    p = {k: jnp.asarray(v, jnp.float64) for k, v in params.items()}
    if record_every is None:  # final state only: dynamic trip count, one compilation per shape
        out, loss = _gd_final(p, jnp.asarray(X, jnp.float64), jnp.asarray(y, jnp.float64), float(alpha), gamma,
                              float(eta), jnp.int64(steps), bool(train_W))
        loss = np.atleast_1d(np.asarray(loss))
        if not np.all(np.isfinite(loss)):
            raise SimulationDiverged(steps, "loss", dict(eta=eta, steps=steps))
        return dict(params={k: np.asarray(v) for k, v in out.items()}, loss=loss, t=np.array([steps * eta]))
    out, (loss, Ws) = _gd_scan(p, jnp.asarray(X, jnp.float64), jnp.asarray(y, jnp.float64), float(alpha), gamma,
                               float(eta), steps, bool(train_W), re)
    loss = np.asarray(loss)
    if not np.all(np.isfinite(loss)):
        raise SimulationDiverged(int(np.argmin(np.isfinite(loss))) * re, "loss", dict(eta=eta, steps=steps))
    res = dict(params={k: np.asarray(v) for k, v in out.items()}, loss=loss, t=np.arange(1, steps // re + 1) * re * eta)
    if record_every is not None:
        res["W"] = np.asarray(Ws)
    return res
