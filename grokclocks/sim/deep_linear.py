r"""Deep linear networks with layerwise weight decay, and the end-to-end Schatten flow (spec `clocks`, float64).

* `run_deep_linear` -- a depth-L linear network W = W_L···W_1 trained on
  L(W_L···W_1) + (μ/2)·Σ_l ‖W_l‖²_F (squared loss or softmax cross-entropy) by full-batch GD
  (explicit Euler, a small step approximates gradient flow) or by classical RK4 on the same
  gradient flow, through the one engine (`grokclocks.sim.train.simulate`), vmapped over seeds;
* `run_end_to_end_flow` -- RK4 on the end-to-end gradient flow Ẇ = −∇L(W) − λp·UΣ^(p−1)Vᵀ of
  E = L + λ‖W‖ᵖ with the Schatten-p quasi-norm (spec `clocks:eq4.3`), the other parametrization, whose singular values
  follow a differently clocked drift;
* data: `make_regression_data` (rank-r teacher plus noise) and `make_circle_data` (K Gaussian
  classes with means on a circle); initial factors: `init_factors` (random or balanced).

Recorded at every record: the loss, the end-to-end map `W` and the loss gradient `grad_W` (∇L(W),
for the drift formulas), its singular values `sigma`, the layer norms `layer_sq_norms`
(‖Wₗ‖²_F), the imbalance norms `imbalance` (‖Wₗ₊₁ᵀWₗ₊₁ − Wₗ·Wₗᵀ‖_F) and the objective
`objective`.  Time: the trajectory's `times` are steps; gradient-flow time is `times * eta`
(`flow_time`).  Seeds: data key `PRNGKey(seed)`, initial factors from `fold_in(PRNGKey(seed), 1)`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validate as V
from .._fielddocs import document_records
from .._validate import DomainError, choice, integer_at_least, nonnegative, positive
from ..citations import cites
from ._runtime import enable_x64
from .train import ON_DIVERGENCE, Trajectory, seed_tuple, simulate

__all__ = [
    "DeepLinearData",
    "DeepLinearConfig",
    "EndToEndFlowConfig",
    "make_regression_data",
    "make_circle_data",
    "init_factors",
    "run_deep_linear",
    "run_end_to_end_flow",
    "flow_time",
    "loss_and_grad_W",
]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DeepLinearData:
    """Training data for the deep linear networks (arrays with a leading seed axis S).

    Build it with `make_regression_data` or `make_circle_data`.
    """

    X: jax.Array
    """Inputs, shape (S, n, d_in), float64."""
    Y: jax.Array
    """Regression targets (`loss="squared"`) or one-hot labels (`loss="ce"`), shape (S, n, d_out)."""
    loss: str
    """`"squared"` or `"ce"`: the loss the data are meant for (half mean squared error or softmax cross-entropy)."""
    seeds: tuple[int, ...]
    """The seeds, one per entry of the leading axis."""

    @property
    def d_in(self) -> int:
        """Input dimension d_in (last axis of `X`)."""
        return int(self.X.shape[-1])

    @property
    def d_out(self) -> int:
        """Output dimension d_out (last axis of `Y`; the number of classes for `"ce"`)."""
        return int(self.Y.shape[-1])

    @property
    def n(self) -> int:
        """Number of samples n per seed."""
        return int(self.X.shape[-2])


def _keys(seeds: tuple[int, ...]) -> jax.Array:
    return jnp.stack([jax.random.PRNGKey(s) for s in seeds])


@cites("clocks:eq2.7", "clocks:appF2-balance")
def make_regression_data(seeds: int | Sequence[int], d_in: int, d_out: int, n: int, *, rank: int = 2,
                         noise: float = 0.3) -> DeepLinearData:
    r"""Squared-loss data: inputs x_i ~ N(0, I_{d_in}) and targets y_i = W∗·x_i + ξ_i from a low-rank teacher.

    The teacher W∗ = A·B/√(r·d_in) has rank r (A, B standard normal); the noise is
    ξ_i ~ N(0, `noise`²·I) (spec section 7, first recipe row).

    Parameters
    ----------
    seeds : int or sequence of int
        Distinct seeds ≥ 0, each giving one data set (key `PRNGKey(seed)`).
    d_in : int
        Input dimension ≥ 1.
    d_out : int
        Output dimension ≥ 1.
    n : int
        Number of samples ≥ 1 per seed.
    rank : int
        Rank r ≥ 1 of the teacher; default 2.
    noise : float
        Standard deviation ≥ 0 of the label noise; default 0.3.

    Returns
    -------
    DeepLinearData
        With `loss="squared"`.

    Raises
    ------
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `clocks:eq2.7`, `clocks:appF2-balance`.
    """
    enable_x64()
    s = seed_tuple(seeds)
    d_in, d_out, n = (integer_at_least(v, k, 1) for v, k in ((d_in, "d_in"), (d_out, "d_out"), (n, "n")))
    rank = integer_at_least(rank, "rank", 1)
    noise = nonnegative(noise, "noise", scalar=True)

    def one(key):
        kx, ka, kb, kn = jax.random.split(key, 4)
        X = jax.random.normal(kx, (n, d_in), jnp.float64)
        T = jax.random.normal(ka, (d_out, rank), jnp.float64) @ jax.random.normal(kb, (rank, d_in), jnp.float64)
        T = T / jnp.sqrt(rank * d_in)
        return X, X @ T.T + noise * jax.random.normal(kn, (n, d_out), jnp.float64)

    X, Y = jax.vmap(one)(_keys(s))
    return DeepLinearData(X, Y, "squared", s)


@cites("clocks:appF2-balanced-drift")
def make_circle_data(seeds: int | Sequence[int], d_in: int, n_classes: int, n: int, *, radius: float = 2.0,
                     noise: float = 0.3) -> DeepLinearData:
    r"""Classification data: K Gaussian classes with means on a circle; sample i has class c = i mod K.

    x_i = μ_c + `noise`·N(0, I) with class means μ_c = `radius`·(cos(2πc/K), sin(2πc/K), 0, ..., 0)
    (spec section 7, softmax-regression recipe); `Y` is one-hot.

    Parameters
    ----------
    seeds : int or sequence of int
        Distinct seeds ≥ 0, each giving one data set (key `PRNGKey(seed)`).
    d_in : int
        Input dimension ≥ 2.
    n_classes : int
        Number of classes K ≥ 2.
    n : int
        Number of samples ≥ 1 per seed.
    radius : float
        Radius > 0 of the circle of class means; default 2.
    noise : float
        Standard deviation ≥ 0 of the inputs around their class mean; default 0.3.

    Returns
    -------
    DeepLinearData
        With `loss="ce"`.

    Raises
    ------
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `clocks:appF2-balanced-drift`.
    """
    enable_x64()
    s = seed_tuple(seeds)
    d_in = integer_at_least(d_in, "d_in", 2)
    K = integer_at_least(n_classes, "n_classes", 2)
    n = integer_at_least(n, "n", 1)
    radius = positive(radius, "radius", scalar=True)
    noise = nonnegative(noise, "noise", scalar=True)
    labels = np.arange(n) % K
    ang = 2 * np.pi * labels / K
    means = np.zeros((n, d_in))
    means[:, 0], means[:, 1] = radius * np.cos(ang), radius * np.sin(ang)
    onehot = jnp.asarray(np.eye(K)[labels])

    def one(key):
        return jnp.asarray(means) + noise * jax.random.normal(key, (n, d_in), jnp.float64)

    X = jax.vmap(one)(_keys(s))
    return DeepLinearData(X, jnp.broadcast_to(onehot, (len(s), n, K)), "ce", s)


@cites("clocks:eq2.7", "clocks:appF2-balance")
def init_factors(seeds: int | Sequence[int], dims: Sequence[int], *, init: str = "random",
                 init_scale: float = 1.0) -> tuple[jax.Array, ...]:
    r"""Initial factors (W_1, ..., W_L) of a deep linear network, W_l of shape (S, dims[l], dims[l−1]).

    `init="random"`: entries N(0, `init_scale`²/d_{l−1}) (imbalanced); `init="balanced"`: the
    balanced factorization (`grokclocks.spectral.balanced_factorization`) of a random end-to-end
    map W₀ with entries N(0, `init_scale`²/d₀) (needs equal hidden widths ≥ rank W₀); its
    imbalance is zero.

    Parameters
    ----------
    seeds : int or sequence of int
        Distinct seeds ≥ 0 (keys `fold_in(PRNGKey(seed), 1)`), the leading axis S.
    dims : sequence of int
        The layer widths (d_in, h_1, ..., d_out), each ≥ 1, length L + 1 with 1 ≤ L ≤ 1000.
    init : {"random", "balanced"}
        The initialisation described above; default `"random"`.
    init_scale : float
        Scale > 0 of the entries; default 1.

    Returns
    -------
    tuple of jax.Array
        The L factors, float64.

    Raises
    ------
    DomainError
        If an argument is outside its domain, or `"balanced"` with unequal hidden widths.

    References
    ----------
    Spec `clocks:eq2.7`, `clocks:appF2-balance`.
    """
    from .. import spectral

    enable_x64()
    s = seed_tuple(seeds)
    dims = tuple(integer_at_least(d, "dims[i]", 1) for d in V.sequence(dims, "dims", min_len=2,
                                                                      what="a sequence (d_in, ..., d_out)"))
    if len(dims) - 1 > 1000:
        raise DomainError(f"dims must describe at most 1000 layers (each is unrolled in the jitted step) (got {len(dims) - 1})")
    V.max_size(float(len(s)) * sum(a * b for a, b in zip(dims[1:], dims[:-1])), "dims", dims)
    if len(dims) < 2:
        raise DomainError(f"dims must have length >= 2 (d_in, ..., d_out) (got {dims})")
    init = choice(init, "init", ("random", "balanced"))
    scale = positive(init_scale, "init_scale", scalar=True)
    keys = [jax.random.fold_in(jax.random.PRNGKey(x), 1) for x in s]
    L = len(dims) - 1
    if init == "random":
        out = []
        for l in range(L):
            ks = jnp.stack([jax.random.fold_in(k, l) for k in keys])
            out.append(jax.vmap(lambda k, a=dims[l + 1], b=dims[l]: jax.random.normal(k, (a, b), jnp.float64))(ks)
                       * (scale / np.sqrt(dims[l])))
        return tuple(out)
    hidden = dims[1:-1]
    if len(set(hidden)) > 1:
        raise DomainError(f"init='balanced' needs equal hidden widths (got {hidden})")
    per_seed = []
    for k in keys:
        W0 = np.asarray(jax.random.normal(k, (dims[-1], dims[0]), jnp.float64)) * (scale / np.sqrt(dims[0]))
        per_seed.append(spectral.balanced_factorization(W0, L, width=hidden[0] if hidden else None))
    return tuple(jnp.asarray(np.stack([f[l] for f in per_seed])) for l in range(L))


# --------------------------------------------------------------------------------------------
# Losses and metrics
# --------------------------------------------------------------------------------------------


def _product(params: Sequence[jax.Array]) -> jax.Array:
    W = params[0]
    for f in params[1:]:
        W = f @ W
    return W


def _loss_squared(W: jax.Array, inp: dict) -> jax.Array:
    R = inp["X"] @ W.T - inp["Y"]
    return 0.5 * jnp.sum(R * R) / R.shape[0]


def _loss_ce(W: jax.Array, inp: dict) -> jax.Array:
    Z = inp["X"] @ W.T
    return jnp.mean(jax.nn.logsumexp(Z, axis=-1) - jnp.sum(Z * inp["Y"], axis=-1))


_LOSSES = {"squared": _loss_squared, "ce": _loss_ce}


@cites("clocks:eq4.1", "clocks:eq4.2")
def loss_and_grad_W(W: Any, X: Any, Y: Any, loss: str) -> tuple[float, np.ndarray]:
    r"""Loss L(W) of the end-to-end map and its gradient ∇L(W) (numpy in, numpy out, float64).

    `loss="squared"`: Σ_i ‖W·x_i − y_i‖²/(2n); `loss="ce"`: mean softmax cross-entropy of the
    logits W·x_i against one-hot `Y`.

    Parameters
    ----------
    W : array_like
        End-to-end map, shape (d_out, d_in).
    X : array_like
        Inputs, shape (n, d_in).
    Y : array_like
        Targets or one-hot labels, shape (n, d_out).
    loss : {"squared", "ce"}
        The loss.

    Returns
    -------
    tuple
        `(loss, grad)`: a float and a numpy array of the shape of `W`.

    Raises
    ------
    DomainError
        If the shapes do not match or `loss` is unknown.

    References
    ----------
    Spec `clocks:eq4.1`, `clocks:eq4.2`.
    """
    enable_x64()
    kind = choice(loss, "loss", tuple(_LOSSES))
    f = _LOSSES[kind]
    Wa, Xa, Ya = V.array_ndim(W, "W", 2), V.array_ndim(X, "X", 2), V.array_ndim(Y, "Y", 2)
    if Xa.shape[1] != Wa.shape[1] or Ya.shape != (Xa.shape[0], Wa.shape[0]):
        raise DomainError(f"shapes must be W (d_out, d_in), X (n, d_in), Y (n, d_out) (got {Wa.shape}, {Xa.shape}, "
                          f"{Ya.shape})")
    inp = {"X": jnp.asarray(Xa, jnp.float64), "Y": jnp.asarray(Ya, jnp.float64)}
    val, g = jax.value_and_grad(f)(jnp.asarray(Wa, jnp.float64), inp)
    return float(val), np.asarray(g)


@functools.lru_cache(maxsize=None)
def _metrics_fn(kind: str, factorized: bool):
    lossf = _LOSSES[kind]

    def metrics(state: Any, inp: dict) -> dict[str, jax.Array]:
        params = state
        W = _product(params) if factorized else params
        val, g = jax.value_and_grad(lossf)(W, inp)
        out = {"loss": val, "W": W, "grad_W": g, "sigma": jnp.linalg.svd(W, compute_uv=False)}
        if factorized:
            sq = jnp.stack([jnp.sum(f * f) for f in params])
            out["layer_sq_norms"] = sq
            out["objective"] = val + 0.5 * inp["mu"] * jnp.sum(sq)
            if len(params) > 1:
                out["imbalance"] = jnp.stack([
                    jnp.sqrt(jnp.sum((hi.T @ hi - lo @ lo.T) ** 2)) for lo, hi in zip(params[:-1], params[1:])])
        else:
            s = out["sigma"]
            out["objective"] = val + inp["lam"] * jnp.sum(s ** inp["p"])
        return out

    return metrics


# --------------------------------------------------------------------------------------------
# Steps: GD (explicit Euler) and RK4 on the layer flow; RK4 on the end-to-end flow
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _layer_velocity(kind: str):
    lossf = _LOSSES[kind]

    def obj(params, inp):
        return lossf(_product(params), inp)

    g = jax.grad(obj)

    def vel(params, inp):
        grads = g(params, inp)
        return tuple(-(gl + inp["mu"] * p) for gl, p in zip(grads, params))

    return vel


@functools.lru_cache(maxsize=None)
def _e2e_velocity(kind: str):
    lossf = _LOSSES[kind]
    g = jax.grad(lossf)

    def vel(W, inp):
        U, s, Vt = jnp.linalg.svd(W, full_matrices=False)
        pen = inp["p"] * (U * s ** (inp["p"] - 1.0)) @ Vt
        return -(g(W, inp) + inp["lam"] * pen)

    return vel


def _axpy(a, x, y):
    return jax.tree_util.tree_map(lambda xi, yi: yi + a * xi, x, y)


@functools.lru_cache(maxsize=None)
def _step_fn(kind: str, integrator: str, factorized: bool):
    vel = _layer_velocity(kind) if factorized else _e2e_velocity(kind)

    if integrator == "gd":
        def step(state, inp):
            return _axpy(inp["eta"], vel(state, inp), state)
    else:
        def step(state, inp):
            h = inp["eta"]
            k1 = vel(state, inp)
            k2 = vel(_axpy(h / 2, k1, state), inp)
            k3 = vel(_axpy(h / 2, k2, state), inp)
            k4 = vel(_axpy(h, k3, state), inp)
            incr = jax.tree_util.tree_map(lambda a, b, c, d: (a + 2 * b + 2 * c + d) / 6, k1, k2, k3, k4)
            return _axpy(h, incr, state)

    return step


# --------------------------------------------------------------------------------------------
# Front-ends
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DeepLinearConfig:
    """Configuration of a `run_deep_linear` run, stored in its `Trajectory` (JSON-serialisable)."""

    dims: tuple[int, ...]
    """The layer widths (d_in, h_1, ..., d_out)."""
    loss: str
    """`"squared"` or `"ce"`."""
    n: int
    """Number of samples per seed."""
    seeds: tuple[int, ...]
    """The seeds of the data."""
    mu: float | tuple[float, ...]
    """Layerwise weight decay μ ≥ 0, or a tuple (the grid axis in front of the seeds)."""
    eta: float
    """Step η > 0, in gradient-flow time per step."""
    steps: int
    """Number of steps ≥ 1."""
    record_every: int
    """Steps between two records ≥ 1."""
    integrator: str
    """`"gd"` (explicit Euler) or `"rk4"`."""


@dataclasses.dataclass(frozen=True)
class EndToEndFlowConfig:
    """Configuration of a `run_end_to_end_flow` run, stored in its `Trajectory`."""

    d_in: int
    """Input dimension."""
    d_out: int
    """Output dimension."""
    loss: str
    """`"squared"` or `"ce"`."""
    n: int
    """Number of samples per seed."""
    seeds: tuple[int, ...]
    """The seeds of the data."""
    lam: float
    """Penalty weight λ ≥ 0 of the Schatten term."""
    p: float
    """Schatten exponent p > 0."""
    dt: float
    """Step Δt > 0, in gradient-flow time."""
    steps: int
    """Number of steps ≥ 1."""
    record_every: int
    """Steps between two records ≥ 1."""


def _check_factors(data: DeepLinearData, factors: Sequence[Any]) -> tuple[jax.Array, ...]:
    items = V.sequence(factors, "factors", what="a non-empty sequence of (S, d_l, d_(l-1)) arrays")
    fs = tuple(jnp.asarray(V.array_ndim(f, f"factors[{i}]", 3), jnp.float64) for i, f in enumerate(items))
    S = len(data.seeds)
    if not fs:
        raise DomainError("factors must not be empty")
    if fs[0].shape[0] != S or fs[0].shape[-1] != data.d_in or fs[-1].shape[-2] != data.d_out:
        raise DomainError(f"factors must have shapes (S={S}, d_l, d_(l-1)) from d_in={data.d_in} to d_out={data.d_out} "
                          f"(got {[f.shape for f in fs]})")
    for lo, hi in zip(fs[:-1], fs[1:]):
        if hi.shape[-1] != lo.shape[-2] or hi.shape[0] != S:
            raise DomainError(f"factors do not chain (got {[f.shape for f in fs]})")
    return fs


@cites("clocks:eq2.7", "clocks:appF2-balance", "clocks:appF2-balanced-drift", "clocks:eq4.1")
def run_deep_linear(data: DeepLinearData, factors: Sequence[Any], *, mu: float | Sequence[float], eta: float,
                    steps: int, record_every: int = 1, integrator: str = "gd", progress: bool = False,
                    on_divergence: str = "raise_if_all") -> Trajectory:
    r"""Train a deep linear network with layerwise weight decay; record the end-to-end spectrum.

    The objective is L(W_L···W_1) + (μ/2)·Σₗ ‖Wₗ‖²_F; its flow dWₗ/dt = −∂L/∂Wₗ − μWₗ is
    integrated by

    * `integrator="gd"`: full-batch GD Wₗ ← Wₗ − η(∂L/∂Wₗ + μWₗ) (= `optax.chain(
      add_decayed_weights(mu), sgd(eta))`; approximates gradient flow to O(η));
    * `integrator="rk4"`: classical RK4 with step η (error O(η⁴)).

    Under GD the imbalance Dₗ = Wₗ₊₁ᵀWₗ₊₁ − Wₗ·Wₗᵀ obeys, with Gₗ = ∂L/∂Wₗ,

    .. math::
        D^+=(1-\eta\mu)^2D+\eta^2(G_{l+1}^\top G_{l+1}-G_lG_l^\top)

    A sequence of weight decays is a grid axis in front of the seed axis: every (μ, seed) pair is
    one run of the same vmapped program (one compilation, one sequential scan for the whole grid).

    Parameters
    ----------
    data : DeepLinearData
        The data, from `make_regression_data` or `make_circle_data`.
    factors : sequence of array_like
        The initial factors W_1, ..., W_L, each of shape (S, d_l, d_{l−1}) chaining from d_in to
        d_out (from `init_factors`).
    mu : float or sequence of float
        Layerwise weight decay μ ≥ 0, or a non-empty 1-D sequence of them (a grid axis).
    eta : float
        Step η > 0: the gradient-flow time per step.
    steps : int
        Number of steps ≥ 1, a multiple of `record_every`.
    record_every : int
        Steps between two records ≥ 1; default 1.
    integrator : {"gd", "rk4"}
        Explicit Euler (GD, default) or classical RK4.
    progress : bool
        Show a tqdm progress bar; default `False`.
    on_divergence : {"raise_if_all", "flag", "raise"}
        What a run whose metrics become NaN or inf does: `"raise_if_all"` (default) flags it and
        raises `SimulationDiverged` only when every run diverged; `"flag"` never raises; `"raise"`
        raises at the first diverged run.

    Returns
    -------
    Trajectory
        Metrics (seed axis first, records last): `loss` (S, R), `W` and `grad_W` (S, d_out, d_in,
        R), `sigma` (S, min(d_out, d_in), R), `layer_sq_norms` (S, L, R), `imbalance` (S, L−1, R)
        for L ≥ 2, `objective` (S, R); with a sequence `mu` every metric has the grid axis
        `len(mu)` in front.  `final_state` = the factors (with the same leading axes); `config` a
        `DeepLinearConfig`.

    Raises
    ------
    DomainError
        If an argument is outside its domain or the factors do not chain.
    SimulationDiverged
        As `on_divergence` says.

    References
    ----------
    Spec `clocks:eq2.7`, `clocks:appF2-balance`, `clocks:appF2-balanced-drift` (section 7 recipes).
    """
    enable_x64()
    if not isinstance(data, DeepLinearData):
        raise DomainError(f"data must be a DeepLinearData (got {type(data).__name__})")
    fs = _check_factors(data, factors)
    grid = np.ndim(mu) > 0
    if grid:
        mus = V.as_float_array(mu, "mu")  # complex / strings are a DomainError, not cast
        if mus.ndim != 1 or mus.size == 0:
            raise DomainError(f"mu must be a number or a non-empty 1-D sequence (got shape {mus.shape})")
        mu_val: float | tuple[float, ...] = tuple(nonnegative(m, "mu", scalar=True) for m in mus)
    else:
        mu_val = nonnegative(mu, "mu", scalar=True)
    eta = positive(eta, "eta", scalar=True)
    integrator = choice(integrator, "integrator", ("gd", "rk4"))
    steps = integer_at_least(steps, "steps", 1)
    record_every = integer_at_least(record_every, "record_every", 1)
    inputs = {"X": data.X, "Y": data.Y, "mu": jnp.asarray(mu_val, jnp.float64), "eta": jnp.float64(eta)}
    axes = [{"X": 0, "Y": 0, "mu": None, "eta": None}]
    if grid:
        axes = [{"X": None, "Y": None, "mu": 0, "eta": None}] + axes
        fs = tuple(jnp.broadcast_to(f, (len(mu_val),) + f.shape) for f in fs)
    dims = (data.d_in,) + tuple(int(f.shape[-2]) for f in fs)
    config = DeepLinearConfig(dims=dims, loss=data.loss, n=data.n, seeds=data.seeds, mu=mu_val, eta=eta, steps=steps,
                              record_every=record_every, integrator=integrator)
    hint = f"GD/RK4 step eta={eta} too large for this loss and initial scale"
    return simulate(_step_fn(data.loss, integrator, True), _metrics_fn(data.loss, True), fs, inputs, steps=steps,
                    record_every=record_every, batch_axes=axes, config=config, progress=progress,
                    divergence_hint=hint, on_divergence=choice(on_divergence, "on_divergence", ON_DIVERGENCE))


@cites("clocks:eq4.3", "clocks:prop4.3", "clocks:thmD.1", "clocks:eq4.2")
def run_end_to_end_flow(data: DeepLinearData, W0: Any, *, lam: float, p: float, dt: float, steps: int,
                        record_every: int = 1, integrator: str = "rk4", progress: bool = False,
                        on_divergence: str = "raise_if_all") -> Trajectory:
    r"""Integrate the end-to-end gradient flow of E(W) = L(W) + λ‖W‖ᵖ (Schatten-p quasi-norm penalty).

    With the thin SVD W = UΣVᵀ the flow is

    .. math:: \dot W=-\nabla\mathcal L(W)-\lambda p\,U\Sigma^{p-1}V^\top

    (spec `clocks:thmD.1`), valid while every singular value stays positive (a full-rank stratum;
    for p < 1 a singular value reaching 0 is a stratum exit and the integration becomes
    meaningless).

    Parameters
    ----------
    data : DeepLinearData
        The data, from `make_regression_data` or `make_circle_data`.
    W0 : array_like
        Initial end-to-end maps, shape (S, d_out, d_in), full rank.
    lam : float
        Penalty weight λ ≥ 0.
    p : float
        Schatten exponent p > 0.
    dt : float
        Step Δt > 0 of the integrator, in gradient-flow time.
    steps : int
        Number of steps ≥ 1, a multiple of `record_every`.
    record_every : int
        Steps between two records ≥ 1; default 1.
    integrator : {"rk4", "gd"}
        Classical RK4 (default) or explicit Euler.
    progress : bool
        Show a tqdm progress bar; default `False`.
    on_divergence : {"raise_if_all", "flag", "raise"}
        What a run whose metrics become NaN or inf (a stratum exit shows so) does: `"raise_if_all"`
        (default) flags it and raises `SimulationDiverged` only when every run diverged; `"flag"`
        never raises; `"raise"` raises at the first diverged run.

    Returns
    -------
    Trajectory
        Metrics `loss`, `W`, `grad_W`, `sigma`, `objective` (seed axis first, records last);
        `config` an `EndToEndFlowConfig`.

    Raises
    ------
    DomainError
        If an argument is outside its domain or `W0` has the wrong shape.
    SimulationDiverged
        As `on_divergence` says.

    References
    ----------
    Spec `clocks:eq4.3` / `clocks:prop4.3` (section 7 recipe), `clocks:thmD.1`.
    """
    enable_x64()
    if not isinstance(data, DeepLinearData):
        raise DomainError(f"data must be a DeepLinearData (got {type(data).__name__})")
    W = jnp.asarray(V.as_float_array(W0, "W0"), jnp.float64)
    if W.shape != (len(data.seeds), data.d_out, data.d_in):
        raise DomainError(f"W0 must have shape {(len(data.seeds), data.d_out, data.d_in)} (got {W.shape})")
    lam = nonnegative(lam, "lam", scalar=True)
    p = positive(p, "p", scalar=True)
    dt = positive(dt, "dt", scalar=True)
    integrator = choice(integrator, "integrator", ("gd", "rk4"))
    steps = integer_at_least(steps, "steps", 1)
    record_every = integer_at_least(record_every, "record_every", 1)
    inputs = {"X": data.X, "Y": data.Y, "lam": jnp.float64(lam), "p": jnp.float64(p), "eta": jnp.float64(dt)}
    axes = [{"X": 0, "Y": 0, "lam": None, "p": None, "eta": None}]
    config = EndToEndFlowConfig(d_in=data.d_in, d_out=data.d_out, loss=data.loss, n=data.n, seeds=data.seeds,
                                lam=lam, p=p, dt=dt, steps=steps, record_every=record_every)
    return simulate(_step_fn(data.loss, integrator, False), _metrics_fn(data.loss, False), W, inputs, steps=steps,
                    record_every=record_every, batch_axes=axes, config=config, progress=progress,
                    divergence_hint="a singular value reached 0 (stratum exit) or dt is too large",
                    on_divergence=choice(on_divergence, "on_divergence", ON_DIVERGENCE))


def flow_time(traj: Trajectory) -> np.ndarray:
    """Gradient-flow time of each record: the step index times the step size (`eta` or `dt`).

    Parameters
    ----------
    traj : Trajectory
        A result of `run_deep_linear` or `run_end_to_end_flow`.

    Returns
    -------
    numpy.ndarray
        float64 times, one per record.

    Raises
    ------
    DomainError
        If `traj` is not such a result.
    """
    cfg = getattr(traj, "config", None)
    if not isinstance(cfg, (DeepLinearConfig, EndToEndFlowConfig)):
        raise DomainError(f"traj must be a Trajectory of run_deep_linear or run_end_to_end_flow (got {V.show(traj)})")
    h = cfg.eta if isinstance(cfg, DeepLinearConfig) else cfg.dt
    return np.asarray(traj.times, dtype=np.float64) * h


document_records(globals(), __all__)  # help() of each record class lists its fields
