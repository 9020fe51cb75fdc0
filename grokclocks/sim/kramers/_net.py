"""The α-parameterised two-layer ReLU net of eq. (1): its init (`kramers:init`), forward pass and empirical NTK.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ... import _validate as V, kramers as K
from ..._validate import DomainError, integer_at_least, positive
from ...citations import cites
from ._arguments import _params_net


@cites("kramers:init")
def alpha_two_layer_init(key: jax.Array, N: int, d: int, n_out: int = 1, a_std: float | None = None,
                         dtype: Any = None) -> dict[str, jax.Array]:
    r"""Initial parameters of the α-parameterised two-layer net of eq. (1).

    Features W of shape (N, d) with rows w_j ~ N(0, I_d/d); readout a of shape (N,) (`n_out` = 1) or
    (N, n_out) with entries N(0, σ_a²).

    Parameters
    ----------
    key : jax.Array
        One PRNG key (`jax.random.PRNGKey`).
    N : int
        Width N ≥ 1 (number of hidden ReLU units).
    d : int
        Input dimension d ≥ 1.
    n_out : int
        Number of outputs ≥ 1; default 1 (then `a` is a vector).
    a_std : float or None
        Readout standard deviation σ_a > 0; `None` (default) means N^(−1/2).
    dtype : dtype or None
        float32 or float64; `None` (default) means float64 when JAX runs in x64, else float32.

    Returns
    -------
    dict of str to jax.Array
        `{"W": W, "a": a}`.

    Raises
    ------
    DomainError
        If an argument is outside its domain or the parameters would exceed 2³⁰ entries.

    References
    ----------
    Spec `kramers:init`.
    """
    N = integer_at_least(N, "N", 1)
    d = integer_at_least(d, "d", 1)
    n_out = integer_at_least(n_out, "n_out", 1)
    V.max_size(float(N) * (d + n_out), "N", N)
    s = N ** -0.5 if a_std is None else positive(a_std, "a_std", scalar=True)
    if dtype is not None and np.dtype(dtype) not in (np.float32, np.float64):
        raise DomainError(f"dtype must be float32, float64 or None (got {V.show(dtype)})")
    dtype = dtype or (jnp.float64 if jax.config.jax_enable_x64 else jnp.float32)
    kw, ka = jax.random.split(key)
    W = jax.random.normal(kw, (N, d), dtype) / math.sqrt(d)
    shape = (N,) if n_out == 1 else (N, n_out)
    return {"W": W, "a": s * jax.random.normal(ka, shape, dtype)}


@cites("kramers:eq1")
def alpha_two_layer_apply(params: dict[str, jax.Array], X: jax.Array, alpha: float) -> jax.Array:
    r"""Outputs f(X) = N^(−α)·σ(X·Wᵀ)·a of the α-parameterised two-layer ReLU net (eq. 1).

    Parameters
    ----------
    params : dict of str to jax.Array
        `{"W": (N, d), "a": (N,) or (N, C)}`, e.g. from `alpha_two_layer_init`.
    X : jax.Array
        Inputs, shape (n, d).
    alpha : float
        Width exponent α of the output scale N^(−α), in [0, 1/2] (not checked here).

    Returns
    -------
    jax.Array
        Outputs, shape (n,) for a vector readout or (n, C).

    References
    ----------
    Spec `kramers:eq1`.
    """
    W = params["W"]
    return W.shape[0] ** (-alpha) * (jax.nn.relu(X @ W.T) @ params["a"])


@cites("kramers:eq4", "kramers:jacobian")
def empirical_ntk(params: dict[str, jax.Array], X: jax.Array, alpha: float) -> K.NTKParts:
    r"""Readout and feature parts of the empirical NTK by autodiff: J_a·J_aᵀ and J_W·J_Wᵀ (scalar output).

    J_a and J_W are the Jacobians of the outputs on `X` with respect to the readout a and the
    features W (`jax.jacobian`); the result matches `grokclocks.kramers.ntk_decomposition`.

    Parameters
    ----------
    params : dict of str to array_like
        `{"W": (N, d), "a": (N,)}` (scalar output), finite.
    X : array_like
        Inputs, shape (n, d).
    alpha : float
        Width exponent α in [0, 0.5].

    Returns
    -------
    grokclocks.kramers.NTKParts
        `(K_a, K_w)`, numpy arrays of shape (n, n).

    Raises
    ------
    DomainError
        If the shapes do not match, `a` is not a vector, or `alpha` is outside [0, 0.5].

    References
    ----------
    Spec `kramers:eq4`, `kramers:jacobian`.
    """
    prm, Xa = _params_net(params, X)
    if prm["a"].ndim != 1:
        raise DomainError(f"params['a'] must be (N,) (scalar output) for the empirical NTK (got {prm['a'].shape})")
    alpha = K._alpha(alpha)
    X = jnp.asarray(Xa, prm["W"].dtype if jax.config.jax_enable_x64 else jnp.float32)
    params = {k: jnp.asarray(v, X.dtype) for k, v in prm.items()}
    J = jax.jacobian(lambda p: alpha_two_layer_apply(p, X, alpha))(params)
    Ja = J["a"].reshape(X.shape[0], -1)
    JW = J["W"].reshape(X.shape[0], -1)
    return K.NTKParts(np.asarray(Ja @ Ja.T), np.asarray(JW @ JW.T))
