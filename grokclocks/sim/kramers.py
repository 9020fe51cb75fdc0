"""Simulations of spec `kramers`: the α-parameterised two-layer ReLU net, ridge GD, diagonal linear nets, SGD.

* `alpha_two_layer_init` / `alpha_two_layer_apply` — eq. (1) with the init of `kramers:init`
  (features w_j ~ N(0, I/d), readout N(0, σ_a²), σ_a = N^(−1/2) by default);
* `empirical_ntk` — readout / feature split of the NTK by `jax.jacobian` (cross-check of the core's
  explicit formulas);
* `train_gd` — full-batch GD with weight decay on the summed squared loss (GD ≈ GF, `kramers:eq3`);
* `measure_separation` — width scaling of the readout / feature timescales (`kramers:sep`);
* `ridge_gd_run` — explicit GD on the ridge objective (float64; compared with the exact iterate);
* `diagonal_net_gd` (JAX, small init scales) and `diagonal_net_gf` (stiff Radau reference) — the
  Lyu et al. check on β = u⊙u − v⊙v;
* `sgd_excess_loss` — stationary excess loss of SGD on least squares (`kramers:teff-sgd`);
* `modadd_adamw_run` — the headline AdamW recipe (`kramers:headline`).

Modular-addition data: `grokclocks.sim.data.modular_addition_table` is not used for the split; the
spec's split (numpy `default_rng(seed).permutation`) is `grokclocks.kramers.modadd_split`, so core and
simulation agree.  float64 for the NTK / ridge / separation checks (`enable_x64`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .. import kramers as K
from .. import _validate as V
from .._validate import DomainError, integer_at_least, positive
from ..citations import cites
from ._runtime import SimulationDiverged, enable_x64
from .train import seed_tuple

__all__ = [
    "alpha_two_layer_init",
    "alpha_two_layer_apply",
    "empirical_ntk",
    "modadd_target",
    "train_gd",
    "measure_separation",
    "ridge_gd_run",
    "diagonal_net_gd",
    "diagonal_net_gf",
    "sgd_excess_loss",
    "modadd_adamw_run",
]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})



def _params_net(params: Any, X: Any) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """`params = {"W": (N, d), "a": (N,) or (N, C)}` and inputs `X` (n, d), finite (eq. 1)."""
    if not isinstance(params, dict) or set(params) != {"W", "a"}:
        raise DomainError(f'params must be a dict {{"W": (N, d), "a": (N,) or (N, C)}} (got {V.show(params)})')
    Xa, W, a = K._net_arrays(X, params["W"], params["a"])
    return {"W": W, "a": a}, Xa


def _targets(y: Any, n: int) -> np.ndarray:
    ya = V.as_float_array(y, "y")
    if ya.shape != (n,):
        raise DomainError(f"y must have shape ({n},) (one target per row of X) (got {ya.shape})")
    return ya


def _seed_list(seeds: Any) -> list[int]:
    V.sequence(seeds, "seeds", what="a non-empty sequence of integer seeds >= 0")
    return list(seed_tuple(seeds))  # distinct: a repeated seed would count one run twice

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


@cites("kramers:task")
def modadd_target(p: int, rho: float, split_seed: int = 0, k: int = 1) -> dict[str, np.ndarray]:
    r"""Training data of the NTK checks: the spec's split and the target √2·cos(2πk(a + b)/p).

    Parameters
    ----------
    p : int
        The modulus p ≥ 2; inputs are the concatenated one-hots of (a, b), of length 2p.
    rho : float
        Training fraction ρ in (0, 1): the first ⌊ρp²⌋ pairs of `default_rng(split_seed).permutation(p²)`.
    split_seed : int
        Seed ≥ 0 of the split; default 0.
    k : int
        Frequency k ≥ 0 of the target; default 1.

    Returns
    -------
    dict of str to numpy.ndarray
        `X_train`, `y_train`, `X_test`, `y_test` (float64), and `a`, `b`, the training pairs' tokens.

    Raises
    ------
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `kramers:task`.
    """
    k = integer_at_least(k, "k", 0)
    split_seed = integer_at_least(split_seed, "split_seed", 0)
    X, a, b, yc = K.modadd_inputs(p)
    tr, te = K.modadd_split(p, rho, split_seed)
    y = math.sqrt(2.0) * np.cos(2 * np.pi * k * yc / p)
    return dict(X_train=X[tr], y_train=y[tr], X_test=X[te], y_test=y[te], a=a[tr], b=b[tr])


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
    gamma = float(K.decay_rate(lam, penalty, allow_zero=True))
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


def _slope(N: np.ndarray, v: np.ndarray) -> float:
    return float(np.polyfit(np.log(N), np.log(v), 1)[0])


@cites("kramers:sep", "kramers:feature-speed", "kramers:eq6")
def measure_separation(p: int, rho: float, alpha: float, widths: Sequence[int], seeds: Sequence[int],
                       t_mult: float = 20.0, a_std: float | None = None, split_seed: int = 0,
                       integrated: bool = True, step_factor: float = 0.1) -> dict[str, Any]:
    r"""Width scaling of the readout and feature timescales (λ = 0, summed squared loss, scalar output).

    For each width N and init seed: τ_r, τ_W, τ_K at t = 0 (`grokclocks.kramers.initial_timescales`)
    and, with `integrated`, GD with step `step_factor`/λ_max(K₀) (K₀ the full NTK) up to
    t = `t_mult`·τ_r, giving Δ_K = ‖K⁽ᵃ⁾_t − K⁽ᵃ⁾_0‖_F/‖K⁽ᵃ⁾_0‖_F and
    Δ_W = ‖W_t − W_0‖_F/‖W_0‖_F.
    Target √2·cos(2π(a + b)/p) on the spec's split; init key `PRNGKey(seed)`.

    Parameters
    ----------
    p : int
        The modulus p ≥ 2 of the modular-addition data.
    rho : float
        Training fraction ρ in (0, 1).
    alpha : float
        Width exponent α in [0, 0.5].
    widths : sequence of int
        The widths N ≥ 1 (at least two, for the slopes).
    seeds : sequence of int
        Distinct init seeds ≥ 0.
    t_mult : float
        Integration time in units of τ_r, > 0; default 20.
    a_std : float or None
        Readout standard deviation σ_a > 0; `None` (default) means N^(−1/2).
    split_seed : int
        Seed ≥ 0 of the split; default 0.
    integrated : bool
        Whether to run GD and measure Δ_K, Δ_W (default `True`); `False` gives the t = 0
        timescales only.
    step_factor : float
        GD step in units of 1/λ_max(K₀), > 0; default 0.1.

    Returns
    -------
    dict
        `widths`, `per_seed` (each quantity per width and seed), per-width geometric means over the
        seeds `tau_r`, `tau_W`, `tau_K`, `speed` (and `delta_K`, `delta_W` when integrated), the
        fitted log-log slopes `slope_tau_r`, `slope_W_over_r`, `slope_K_over_r`, `slope_speed` (and
        `slope_inv_delta_K`, `slope_inv_delta_W`), and `paper_claim` = 2α.

    Raises
    ------
    SimulationDiverged
        If the integrated features become non-finite.
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `kramers:sep`, `kramers:feature-speed`, `kramers:eq6`.
    """
    enable_x64()
    alpha = K._alpha(alpha)
    widths = [integer_at_least(N, "widths", 1) for N in V.sequence(widths, "widths", what="a sequence of widths N >= 1")]
    seeds = _seed_list(seeds)
    t_mult = positive(t_mult, "t_mult", scalar=True)
    step_factor = positive(step_factor, "step_factor", scalar=True)
    integrated = V.flag(integrated, "integrated")
    if a_std is not None:
        positive(a_std, "a_std", scalar=True)
    data = modadd_target(p, rho, split_seed)
    X, y = data["X_train"], data["y_train"]
    d = X.shape[1]
    keys = ("tau_r", "tau_W", "tau_K", "delta_K", "delta_W", "speed")
    per = {k: np.zeros((len(widths), len(seeds))) for k in keys}
    Xj, yj = jnp.asarray(X, jnp.float64), jnp.asarray(y, jnp.float64)
    for i, N in enumerate(widths):
        # every seed of this width at once: init, then (integrated) GD of all seeds in one vmapped program,
        # each seed with its own step eta_s = step_factor / lambda_max(K_0) for its own ceil(t_mult tau_r / eta_s) steps
        prm = jax.vmap(lambda k: alpha_two_layer_init(k, N, d, a_std=a_std, dtype=jnp.float64))(
            jnp.stack([jax.random.PRNGKey(s) for s in seeds]))
        W0s, a0s = np.asarray(prm["W"]), np.asarray(prm["a"])
        etas, n_steps, Ka0s = [], [], []
        for j in range(len(seeds)):
            ts = K.initial_timescales(X, y, W0s[j], a0s[j], alpha)
            per["tau_r"][i, j], per["tau_W"][i, j], per["tau_K"][i, j] = ts["tau_r"], ts["tau_W"], ts["tau_K"]
            per["speed"][i, j] = ts["feature_speed_median"]
            if integrated:
                Ka0, Kw0 = K.ntk_decomposition(X, W0s[j], a0s[j], alpha)
                eta = step_factor / float(np.linalg.eigvalsh(Ka0 + Kw0)[-1])
                etas.append(eta)
                n_steps.append(int(math.ceil(t_mult * ts["tau_r"] / eta)))
                Ka0s.append(Ka0)
        if integrated:
            out = _gd_final_batched(prm, Xj, yj, float(alpha), jnp.asarray(etas), jnp.asarray(n_steps), max(n_steps))
            Wts, ats = np.asarray(out["W"]), np.asarray(out["a"])
            if not np.all(np.isfinite(Wts)):
                raise SimulationDiverged(max(n_steps), "W", dict(N=N, alpha=alpha, step_factor=step_factor))
            for j in range(len(seeds)):
                Kat, _ = K.ntk_decomposition(X, Wts[j], ats[j], alpha)
                per["delta_K"][i, j] = np.linalg.norm(Kat - Ka0s[j]) / np.linalg.norm(Ka0s[j])
                per["delta_W"][i, j] = np.linalg.norm(Wts[j] - W0s[j]) / np.linalg.norm(W0s[j])
    if not integrated:  # not measured: no placeholder zeros (their geometric mean was a NaN)
        for key in ("delta_K", "delta_W"):
            per.pop(key)
    gm = {k: np.exp(np.mean(np.log(np.where(v > 0, v, np.nan)), axis=1)) for k, v in per.items()}
    Ns = np.asarray(widths, dtype=np.float64)
    res: dict[str, Any] = dict(widths=Ns, per_seed=per, paper_claim=2 * alpha, **gm)
    res["slope_tau_r"] = _slope(Ns, gm["tau_r"])
    res["slope_W_over_r"] = _slope(Ns, gm["tau_W"] / gm["tau_r"])
    res["slope_K_over_r"] = _slope(Ns, gm["tau_K"] / gm["tau_r"])
    res["slope_speed"] = _slope(Ns, gm["speed"])
    if integrated:
        res["slope_inv_delta_K"] = -_slope(Ns, gm["delta_K"])
        res["slope_inv_delta_W"] = -_slope(Ns, gm["delta_W"])
    return res


# ----------------------------------------------------------------------------------- ridge


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


# ----------------------------------------------------------------------------------- diagonal linear net


def _diag_setup(X, y, lam, penalty, Sigma_test=None, beta_star=None, rel_level=0.05):
    X = V.as_float_array(X, "X")
    if X.ndim != 2:
        raise DomainError(f"X must be (n, D) (got shape {X.shape})")
    y = _targets(y, X.shape[0])
    n, D = X.shape
    S = V.as_float_array(Sigma_test, "Sigma_test")
    if S.shape != (D, D):
        raise DomainError(f"Sigma_test must be ({D}, {D}) (got {S.shape})")
    bs = V.as_float_array(beta_star, "beta_star")
    if bs.shape != (D,):
        raise DomainError(f"beta_star must have shape ({D},) (got {bs.shape})")
    V.in_open_interval(rel_level, "rel_level", 0.0, 1.0, scalar=True)
    with np.errstate(over="ignore"):  # gamma = 2 lam is inf for lam > 9e307 (rejected by the callers' rate checks)
        return X.T @ X / n, X.T @ y / n, V.scalar(K.decay_rate(lam, penalty), "lam")


_MAX_ODE_RATE = 1e300  # largest rate (Jacobian entry) given to the float64 Radau solve


@cites("kramers:lyu")
def diagonal_net_gf(X: Any, y: Any, Sigma_test: Any, beta_star: Any, init_scale: float, lam: float,
                    penalty: str = "eq2", rel_level: float = 0.05, t_max: float = 2000.0,
                    rtol: float = 1e-8, atol: float = 1e-10) -> dict[str, float]:
    r"""Gradient flow of the diagonal linear net β = u⊙u − v⊙v (stiff; the scipy Radau reference).

    The loss is ‖Xβ − y‖²/(2n) + (γ/2)(‖u‖² + ‖v‖²) with γ the decay rate of `lam` (`"eq2"`:
    λ(‖u‖² + ‖v‖²)), from u = v = s·1 (β = 0); the test loss is ½(β − β∗)ᵀΣ_te(β − β∗).

    Parameters
    ----------
    X : array_like
        Inputs, shape (n, D).
    y : array_like
        Targets, shape (n,).
    Sigma_test : array_like
        Test covariance Σ_te, shape (D, D).
    beta_star : array_like
        The teacher β∗, shape (D,).
    init_scale : float
        Initial scale s > 0 (u = v = s·1).
    lam : float
        Weight-decay coefficient λ > 0.
    penalty : {"eq2", "half"}
        Convention of the weight decay: `"eq2"` (default; paper eq. 2) adds λ‖θ‖² to the loss, so
        the decay rate is γ = 2λ; `"half"` adds (λ/2)‖θ‖², γ = λ (Lyu et al.).
    rel_level : float
        Grokking level in (0, 1): t_grok is the first time the test loss is below `rel_level` ×
        its initial value; default 0.05.
    t_max : float
        End of the integration > 0, in gradient-flow time; default 2000.
    rtol : float
        Relative tolerance of the solver, in (0, 1); default 10⁻⁸.
    atol : float
        Absolute tolerance of the solver, > 0; default 10⁻¹⁰.

    Returns
    -------
    dict of str to float
        `t_grok` (first time the test loss < `rel_level` × initial) and `t_mem` (first time the
        train loss < 10⁻³ × initial), in gradient-flow time; inf if not reached by `t_max`.

    Raises
    ------
    DomainError
        If an argument is outside its domain, or a rate of the ODE leaves the range of a float64
        solve: 4s²·max|A| or γ above 10³⁰⁰ (`init_scale` ~ 10¹⁵⁰ and beyond, `lam` ~ 10³⁰⁰ and
        beyond; at 10³⁰⁸ the first right-hand side was inf − inf).

    References
    ----------
    Spec `kramers:lyu`.
    """
    from scipy.integrate import solve_ivp

    A, bvec, g = _diag_setup(X, y, lam, penalty, Sigma_test, beta_star, rel_level)
    t_max = positive(t_max, "t_max", scalar=True)
    rtol = V.in_open_interval(rtol, "rtol", 0.0, 1.0, scalar=True)
    atol = positive(atol, "atol", scalar=True)
    D = A.shape[0]
    S = np.asarray(Sigma_test, np.float64)
    bs = np.asarray(beta_star, np.float64)
    s = positive(init_scale, "init_scale", scalar=True)
    yy = float(np.mean(np.asarray(y, np.float64) ** 2))
    a_max = max(float(np.max(np.abs(A))), float(np.max(np.abs(bvec))), 1e-300)
    with np.errstate(over="ignore"):
        jac_scale = 4.0 * s * s * a_max  # the Jacobian's u u^T A entries at the start
    if not jac_scale <= _MAX_ODE_RATE:
        raise DomainError(f"init_scale must be <= {math.sqrt(_MAX_ODE_RATE / (4.0 * a_max)):.3g} for the float64 Radau "
                          f"solve (got {s!r}: the Jacobian's entries 4 s^2 |A| exceed {_MAX_ODE_RATE:g})")
    if not g <= _MAX_ODE_RATE:
        raise DomainError(f"lam must give a decay rate gamma <= {_MAX_ODE_RATE:g} for the float64 Radau solve "
                          f"(got lam = {float(lam)!r}, gamma = {g!r})")

    def rhs(t, z):
        u, v = z[:D], z[D:]
        gb = A @ (u * u - v * v) - bvec
        return np.concatenate([-2 * u * gb - g * u, 2 * v * gb - g * v])

    def jac(t, z):
        u, v = z[:D], z[D:]
        gb = A @ (u * u - v * v) - bvec
        Juu = -2 * np.diag(gb) - 4 * u[:, None] * A * u[None, :] - g * np.eye(D)
        Juv = 4 * u[:, None] * A * v[None, :]
        Jvu = 4 * v[:, None] * A * u[None, :]
        Jvv = 2 * np.diag(gb) - 4 * v[:, None] * A * v[None, :] - g * np.eye(D)
        return np.block([[Juu, Juv], [Jvu, Jvv]])

    def test_loss(z):
        bb = z[:D] ** 2 - z[D:] ** 2 - bs
        return 0.5 * bb @ S @ bb

    def train_loss(z):
        b = z[:D] ** 2 - z[D:] ** 2
        return 0.5 * (b @ A @ b - 2 * b @ bvec + yy)

    z0 = np.concatenate([s * np.ones(D), s * np.ones(D)])
    L0te, L0tr = test_loss(z0), train_loss(z0)
    ev_te = lambda t, z: test_loss(z) - rel_level * L0te  # noqa: E731
    ev_te.terminal, ev_te.direction = True, -1
    ev_tr = lambda t, z: train_loss(z) - 1e-3 * L0tr  # noqa: E731
    ev_tr.terminal, ev_tr.direction = False, -1
    sol = solve_ivp(rhs, (0, t_max), z0, method="Radau", jac=jac, rtol=rtol, atol=atol, events=[ev_te, ev_tr])
    tg = float(sol.t_events[0][0]) if sol.t_events[0].size else math.inf
    tm = float(sol.t_events[1][0]) if sol.t_events[1].size else math.inf
    return dict(t_grok=tg, t_mem=tm)


@functools.partial(jax.jit, static_argnames=("steps", "record_every"))
def _diag_scan(A, bvec, S, bs, z0, g, eta, steps, record_every):
    D = A.shape[0]

    def one(z, _):
        u, v = z[:D], z[D:]
        gb = A @ (u * u - v * v) - bvec
        return jnp.concatenate([u - eta * (2 * u * gb + g * u), v - eta * (-2 * v * gb + g * v)]), None

    def rec(z, _):
        z, _ = jax.lax.scan(one, z, None, length=record_every)
        bb = z[:D] ** 2 - z[D:] ** 2 - bs
        return z, 0.5 * bb @ S @ bb

    return jax.lax.scan(rec, z0, None, length=steps // record_every)[1]


@cites("kramers:lyu")
def diagonal_net_gd(X: Any, y: Any, Sigma_test: Any, beta_star: Any, init_scale: float, lam: float, eta: float,
                    steps: int, penalty: str = "eq2", rel_level: float = 0.05, record_every: int = 10) -> float:
    r"""Explicit GD (JAX, float64) of the diagonal linear net β = u⊙u − v⊙v: its grokking time.

    The model, loss and initialisation of `diagonal_net_gf`.  CPU-sized only for small
    `init_scale` (the stiffness grows as s²).

    Parameters
    ----------
    X : array_like
        Inputs, shape (n, D).
    y : array_like
        Targets, shape (n,).
    Sigma_test : array_like
        Test covariance Σ_te, shape (D, D).
    beta_star : array_like
        The teacher β∗, shape (D,).
    init_scale : float
        Initial scale s > 0 (u = v = s·1).
    lam : float
        Weight-decay coefficient λ > 0.
    eta : float
        Learning rate η > 0.
    steps : int
        Number of GD steps ≥ 1.
    penalty : {"eq2", "half"}
        Convention of the weight decay: `"eq2"` (default; paper eq. 2) adds λ‖θ‖² to the loss, so
        the decay rate is γ = 2λ; `"half"` adds (λ/2)‖θ‖², γ = λ (Lyu et al.).
    rel_level : float
        Grokking level in (0, 1); default 0.05.
    record_every : int
        Steps between two test-loss records, an integer in [1, `steps`]; default 10.

    Returns
    -------
    float
        t_grok = kη at the first record where the test loss is below `rel_level` × its initial
        value (gradient-flow time, resolution `record_every`·η); inf if never.

    Raises
    ------
    SimulationDiverged
        If the test loss becomes non-finite.
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `kramers:lyu`.
    """
    enable_x64()
    A, bvec, g = _diag_setup(X, y, lam, penalty, Sigma_test, beta_star, rel_level)
    eta = positive(eta, "eta", scalar=True)
    steps = integer_at_least(steps, "steps", 1)
    record_every = integer_at_least(record_every, "record_every", 1, maximum=steps)
    D = A.shape[0]
    s = positive(init_scale, "init_scale", scalar=True)
    z0 = jnp.full(2 * D, s, jnp.float64)
    bs = jnp.asarray(beta_star, jnp.float64)
    S = jnp.asarray(Sigma_test, jnp.float64)
    L0 = 0.5 * float(bs @ S @ bs)
    te = np.asarray(_diag_scan(jnp.asarray(A), jnp.asarray(bvec), S, bs, z0, g, float(eta),
                               integer_at_least(steps, "steps", 1), int(record_every)))
    if not np.all(np.isfinite(te)):
        raise SimulationDiverged(int(np.argmin(np.isfinite(te))) * record_every, "test loss", dict(eta=eta, s=s))
    hit = np.nonzero(te < rel_level * L0)[0]
    return float((hit[0] + 1) * record_every * eta) if hit.size else math.inf


# ----------------------------------------------------------------------------------- SGD temperature


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


# ----------------------------------------------------------------------------------- headline (AdamW)


def _adamw_program(p, N, seeds, *, alpha, lr, wd, steps, eval_every, rho, b1, b2):
    """The vmapped AdamW program of `modadd_adamw_run` and its inputs (seeds, split permutations)."""
    X, _, _, yall = K.modadd_inputs(p)
    n = K.n_train(p, rho)
    perms = np.stack([np.random.default_rng(s).permutation(p * p) for s in seeds])
    Xj = jnp.asarray(X, jnp.float32)
    yj = jnp.asarray(yall)
    opt = optax.adamw(lr, b1=b1, b2=b2, weight_decay=wd)

    def init(seed):
        prm = alpha_two_layer_init(jax.random.PRNGKey(seed), N, 2 * p, n_out=p, dtype=jnp.float32)
        return prm, opt.init(prm)

    def loss_fn(prm, idx):
        logits = alpha_two_layer_apply(prm, Xj[idx], alpha)
        return optax.softmax_cross_entropy_with_integer_labels(logits, yj[idx]).mean()

    def acc(prm, idx):
        return jnp.mean(jnp.argmax(alpha_two_layer_apply(prm, Xj[idx], alpha), -1) == yj[idx])

    def run_one(seed, perm):
        tr, te = perm[:n], perm[n:]
        st = init(seed)

        def step(st, _):
            prm, os = st
            g = jax.grad(loss_fn)(prm, tr)
            upd, os = opt.update(g, os, prm)
            return (optax.apply_updates(prm, upd), os), None

        def rec(st, _):
            st, _ = jax.lax.scan(step, st, None, length=eval_every)
            return st, (acc(st[0], tr), acc(st[0], te))

        _, (a_tr, a_te) = jax.lax.scan(rec, st, None, length=steps // eval_every)
        return a_tr, a_te

    return jax.vmap(run_one), (jnp.asarray(seeds), jnp.asarray(perms))


@cites("kramers:headline", "kramers:milestones")
def modadd_adamw_run(p: int, N: int, seeds: Sequence[int], *, alpha: float = 0.0, lr: float = 1e-3, wd: float = 1.0,
                     steps: int = 30000, eval_every: int = 100, rho: float = 0.3,
                     b1: float = 0.9, b2: float = 0.98) -> dict[str, Any]:
    r"""The headline recipe of spec `kramers`: AdamW on modular addition, seeds vmapped (float32).

    A two-layer ReLU net (p-way readout, no biases), mean cross-entropy, full batch,
    `optax.adamw(lr, b1, b2, weight_decay=wd)`; the split seed is the init seed.

    Parameters
    ----------
    p : int
        The modulus p ≥ 2.
    N : int
        Width N ≥ 1.
    seeds : sequence of int
        Distinct seeds ≥ 0 (split and initialisation).
    alpha : float
        Width exponent α in [0, 0.5]; default 0.
    lr : float
        AdamW learning rate > 0; default 10⁻³.
    wd : float
        AdamW (decoupled) weight decay ≥ 0; default 1.
    steps : int
        Number of steps ≥ 1, a multiple of `eval_every`; default 30000.
    eval_every : int
        Steps between two accuracy records ≥ 1; default 100.
    rho : float
        Training fraction ρ in (0, 1); default 0.3.
    b1 : float
        Adam's first-moment decay in [0, 1); default 0.9.
    b2 : float
        Adam's second-moment decay in [0, 1); default 0.98.

    Returns
    -------
    dict
        `steps` (the record grid), `train_acc`, `test_acc` (seeds × records), `seeds`, and per seed
        the milestones `t_mem99`, `t_mem100`, `t_grok99`, `t_grok100` (grid steps, `None` = not
        reached) and `ratio99` = t_grok99/t_mem99, as in `grokclocks.kramers.milestones`.

    Raises
    ------
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `kramers:headline`, `kramers:milestones`.
    """
    p = integer_at_least(p, "p", 2)
    N = integer_at_least(N, "N", 1)
    seeds = _seed_list(seeds)
    alpha = K._alpha(alpha)
    lr = positive(lr, "lr", scalar=True)
    wd = V.nonnegative(wd, "wd", scalar=True)
    for name, b in (("b1", b1), ("b2", b2)):
        if not 0.0 <= V.finite(b, name, scalar=True) < 1.0:
            raise DomainError(f"{name} must be in [0, 1) (got {b!r})")
    steps = integer_at_least(steps, "steps", 1)
    eval_every = integer_at_least(eval_every, "eval_every", 1)
    if steps % eval_every:
        raise DomainError(f"steps must be a multiple of eval_every (got {steps}, {eval_every})")
    program, inputs = _adamw_program(p, N, seeds, alpha=alpha, lr=lr, wd=wd, steps=steps, eval_every=eval_every,
                                     rho=rho, b1=b1, b2=b2)
    a_tr, a_te = jax.jit(program)(*inputs)
    a_tr, a_te = np.asarray(a_tr), np.asarray(a_te)
    grid = np.arange(1, steps // eval_every + 1) * eval_every
    out: dict[str, Any] = dict(steps=grid, train_acc=a_tr, test_acc=a_te, seeds=seeds)
    for q, tag in ((0.99, "99"), (1.0, "100")):
        ms = [K.milestones(grid, a_tr[i], a_te[i], q, q) for i in range(len(seeds))]
        out["t_mem" + tag] = [m[0] for m in ms]
        out["t_grok" + tag] = [m[1] for m in ms]
    out["ratio99"] = [(g / m if (g is not None and m) else None) for m, g in zip(out["t_mem99"], out["t_grok99"])]
    return out
