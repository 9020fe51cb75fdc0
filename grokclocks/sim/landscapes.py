"""Landscapes of spec `clocks` for the verification layer (JAX, float64).

* KL landscapes with a known exponent (`clocks:appF2-kl-examples`), trained by gradient descent
  with a small step (an approximation of gradient flow; the discretisation error is measured in
  verify/ by doubling the step):

  - `power_landscape_gd`: f(x) = ‖x‖^q in ℝ^d, KL exponent θ = 1 − 1/q;
  - `deep_linear_gd`: a depth-L factorized linear network on the whitened squared loss
    ½‖W_L···W_1 − Y‖²_F + (μ/2)·Σ_l ‖W_l‖²_F from an aligned (diagonal, balanced) start: depth
    without decay (θ = 1 − 1/(2L)) and critical decay at depth 2 (θ = 3/4).

* Separable softmax regression (`clocks:thm3.5`, `clocks:asm3.4`, `clocks:prop3.6`):
  `softmax_regression` trains W ∈ ℝ^(K×d) on `separable_softmax_data` by plain GD, normalized GD
  (W ← W − η∇L/‖∇L‖_F), Adam (optax) or GD with weight decay; the loss is logged in gap form
  (`clocks:eq3.2`) so that classifier clocks down to 10⁻²⁰ are measurable.

* Factorized softmax network with weight decay (`clocks:appF2-wd-rate`):
  `factorized_softmax_gd` records the normalized spectral tail of the end-to-end map.

Time is accumulated optimiser time t = kη (`clocks:appF4-opt-time`).  Every front-end switches JAX
to float64 (`grokclocks.sim.enable_x64`) and runs through the one engine
`grokclocks.sim.train.simulate`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .. import _validate as V
from .._fielddocs import document_records
from .._validate import DomainError, choice, integer_at_least
from ..citations import cites
from ._runtime import enable_x64
from .train import Trajectory, simulate

__all__ = [
    "PowerLandscapeConfig",
    "power_landscape_gd",
    "DeepLinearConfig",
    "deep_linear_gd",
    "deep_linear_energy_floor",
    "separable_softmax_data",
    "SoftmaxRegressionConfig",
    "softmax_regression",
    "gap_form_cross_entropy",
    "FactorizedSoftmaxConfig",
    "factorized_softmax_gd",
    "end_to_end",
]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


def _pos(x: Any, name: str) -> float:
    return V.positive(x, name, scalar=True)


def _nonneg(x: Any, name: str) -> float:
    return V.nonnegative(x, name, scalar=True)


# Each layer is unrolled in the jitted step: a depth beyond this is a mistake (1e18 used to hang).
_MAX_DEPTH = 1000


def _config(config: Any, cls: type) -> Any:
    if not isinstance(config, cls):
        raise DomainError(f"config must be a {cls.__name__} (got {V.show(config)})")
    integer_at_least(config.steps, "steps", 1)
    integer_at_least(config.record_every, "record_every", 1)
    return config


# --------------------------------------------------------------------------------------------
# Power landscape |x|^q
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PowerLandscapeConfig:
    """Configuration of `power_landscape_gd`: GD on f(x) = ‖x‖^q, one run per entry of `qs` (vmapped)."""

    qs: tuple[float, ...] = (3.0, 4.0, 6.0)
    """The exponents q ≥ 2 (q = 2 is the PL control), one run each."""
    x0: tuple[float, ...] = (0.6, -0.3, 0.2)
    """The start x₀ ∈ ℝ^d, shared by the runs."""
    eta: float = 0.01
    """Step η > 0 (optimiser time per step)."""
    steps: int = 1_000_000
    """Number of steps ≥ 1, a multiple of `record_every`."""
    record_every: int = 100
    """Steps between two records ≥ 1."""


def _power_step(x: jax.Array, inp: dict) -> jax.Array:
    r2 = jnp.sum(x * x)
    return x - inp["eta"] * inp["q"] * r2 ** ((inp["q"] - 2.0) / 2.0) * x


def _power_metrics(x: jax.Array, inp: dict) -> dict:
    r2 = jnp.sum(x * x)
    q = inp["q"]
    return {"f": r2 ** (q / 2.0), "grad_sq": q * q * r2 ** (q - 1.0)}


@cites("clocks:appF2-kl-examples", "clocks:thm4.9")
def power_landscape_gd(config: PowerLandscapeConfig = PowerLandscapeConfig(), *, progress: bool = False,
                       on_divergence: str = "raise_if_all") -> Trajectory:
    r"""Gradient descent on f(x) = ‖x‖^q (a small-step approximation of gradient flow).

    q = 2 is allowed as the PL control (θ = 1/2, exponential decay, no power law).  The flow obeys
    ḟ = −q²·f^(2(1−1/q)) exactly (KL exponent θ = 1 − 1/q, `grokclocks.clocks.kl_exponent_power`),
    so f(t) follows `grokclocks.clocks.kl_gap_solution` with a = q², Δ₀ = f(x₀).

    Parameters
    ----------
    config : PowerLandscapeConfig
        The exponents, start, step and step counts; default `PowerLandscapeConfig()`.
    progress : bool
        Show a tqdm progress bar; default `False`.
    on_divergence : {"raise_if_all", "flag", "raise"}
        What a run whose metrics become NaN or inf does: `"raise_if_all"` (default) flags it in
        `extras["diverged"]` and raises `SimulationDiverged` only when every run diverged; `"flag"`
        never raises; `"raise"` raises at the first diverged run.

    Returns
    -------
    Trajectory
        Metrics `f` and `grad_sq` (‖∇f‖²) of shape `(len(qs), n_records)`; `extras["t"]` = the
        times kη; `extras["diverged"]` / `extras["diverged_step"]` per q.

    Raises
    ------
    DomainError
        If a field of `config` is outside its domain (q < 2, η ≤ 0, ...).
    SimulationDiverged
        As `on_divergence` says.

    References
    ----------
    Spec `clocks:appF2-kl-examples` (example 1), verification recipe of `clocks:thm4.9`.
    """
    enable_x64()
    config = _config(config, PowerLandscapeConfig)
    progress = V.flag(progress, "progress")
    qs_a, x0_a = V.as_float_array(config.qs, "qs"), V.as_float_array(config.x0, "x0")
    if qs_a.ndim != 1 or x0_a.ndim != 1:
        raise DomainError(f"qs and x0 must be 1-D sequences (got shapes {qs_a.shape}, {x0_a.shape})")
    for q in qs_a:
        if not q >= 2:
            raise DomainError(f"q must be >= 2 (q = 2 is the PL/exponential control) (got {q!r})")
    _pos(config.eta, "eta")
    qs = jnp.asarray(config.qs, dtype=jnp.float64)
    x0 = jnp.broadcast_to(jnp.asarray(config.x0, dtype=jnp.float64), (qs.size, len(config.x0)))
    inputs = {"q": qs, "eta": jnp.float64(config.eta)}
    traj = simulate(_power_step, _power_metrics, x0, inputs, steps=config.steps, record_every=config.record_every,
                    batch_axes=[{"q": 0, "eta": None}], config=config, progress=progress, on_divergence=on_divergence)
    return dataclasses.replace(traj, extras={**traj.extras, "t": traj.times * config.eta})


# --------------------------------------------------------------------------------------------
# Deep linear network, squared loss, aligned start
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DeepLinearConfig:
    """Configuration of `deep_linear_gd`: a factorized linear net on ½‖W_L···W_1 − Y‖²_F + (μ/2)·Σ‖W_l‖²_F.

    The start is balanced and aligned: every layer is `diag(init ** (1/depth))`.
    """

    target: tuple[float, ...] = (3.0, 1.0, 0.0, 0.0)
    """The diagonal of the (square) target Y: one singular value per direction."""
    init: tuple[float, ...] = (0.5, 0.5, 0.5, 0.5)
    """The initial singular values ≥ 0 of the end-to-end map, one per direction (the length of `target`)."""
    depth: int = 2
    """Depth L ≥ 1 (at most 1000)."""
    mu: float = 1.0
    """Layerwise weight decay μ ≥ 0."""
    eta: float = 0.01
    """Step η > 0 (optimiser time per step)."""
    steps: int = 100_000
    """Number of steps ≥ 1, a multiple of `record_every`."""
    record_every: int = 100
    """Steps between two records ≥ 1."""


def end_to_end(factors: Any) -> jax.Array:
    """The end-to-end map W = W_L···W_1 of a factorized linear network.

    Parameters
    ----------
    factors : sequence of jax.Array
        The factors (W_1, ..., W_L), `factors[0]` = W_1 applied first; shapes that chain.

    Returns
    -------
    jax.Array
        The product W_L···W_1.
    """
    W = factors[0]
    for F in factors[1:]:
        W = F @ W
    return W


def _dl_energy(factors: Any, inp: dict) -> jax.Array:
    R = end_to_end(factors) - inp["Y"]
    return 0.5 * jnp.sum(R * R) + 0.5 * inp["mu"] * sum(jnp.sum(F * F) for F in factors)


_dl_grad = jax.grad(_dl_energy)


def _dl_step(factors: Any, inp: dict) -> Any:
    g = _dl_grad(factors, inp)
    return [F - inp["eta"] * G for F, G in zip(factors, g)]


def _dl_metrics(factors: Any, inp: dict) -> dict:
    g = _dl_grad(factors, inp)
    return {"energy": _dl_energy(factors, inp), "grad_sq": sum(jnp.sum(G * G) for G in g)}


def deep_linear_energy_floor(target: Any, depth: int, mu: float) -> float:
    r"""Minimum of the aligned energy of `deep_linear_gd`, direction by direction (balanced factors, σ ≥ 0).

    Per direction with target s the minimum over σ ≥ 0 of ½(s − σ)² + (μL/2)·σ^(2/L) (a scalar
    minimisation; for L = 2 the soft threshold σ = max(s − μ, 0)), summed over the directions.

    Parameters
    ----------
    target : array_like
        The target singular values s (their absolute values are used).
    depth : int
        Depth L ≥ 1.
    mu : float
        Layerwise weight decay μ ≥ 0 (0 gives 0).

    Returns
    -------
    float
        The minimal energy.

    Raises
    ------
    DomainError
        If an argument is outside its domain.
    """
    from scipy import optimize

    depth = integer_at_least(depth, "depth", 1)
    mu = _nonneg(mu, "mu")
    tot = 0.0
    for s in np.abs(np.atleast_1d(V.as_float_array(target, "target"))).ravel():
        if mu == 0.0:
            continue  # sigma = s, zero energy
        if depth == 2:
            sig = max(s - mu, 0.0)  # soft threshold
            tot += 0.5 * (s - sig) ** 2 + mu * sig
            continue
        # (L / 2) (mu sigma^{2/L}), not (mu L / 2) sigma^{2/L}: mu L overflows for mu ~ 1e308 and inf * 0 is
        # NaN at sigma = 0; an overflowing penalty at sigma > 0 is inf there (never the minimum)
        f = lambda sig, s=s: 0.5 * (s - sig) ** 2 + 0.5 * depth * (mu * abs(sig) ** (2.0 / depth))  # noqa: E731
        with np.errstate(over="ignore", invalid="ignore"):
            best = min(f(0.0), f(s))  # sigma = s: the minimum to O(mu^2) for small mu (the optimiser's xatol is 1e-14)
            if s > 0:
                r = optimize.minimize_scalar(f, bounds=(0.0, float(s)), method="bounded",
                                             options={"xatol": 1e-14})
                if math.isfinite(float(r.fun)):
                    best = min(best, float(r.fun))
        tot += best
    return tot


@cites("clocks:appF2-kl-examples", "clocks:lem4.6")
def deep_linear_gd(config: DeepLinearConfig = DeepLinearConfig(), *, progress: bool = False,
                   on_divergence: str = "raise_if_all") -> Trajectory:
    r"""GD on a factorized linear network from an aligned balanced start (squared loss, optional decay).

    In layer coordinates the factorized flow is a gradient flow, so the KL inequality and
    Ė = −‖∇E‖² hold there.  Zero-target directions without decay decay like σ̇ = −L·σ^(3−2/L); a
    direction with target s = μ at depth 2 like σ̇ = −2σ².

    Parameters
    ----------
    config : DeepLinearConfig
        Target, start, depth, decay, step and step counts; default `DeepLinearConfig()`.
    progress : bool
        Show a tqdm progress bar; default `False`.
    on_divergence : {"raise_if_all", "flag", "raise"}
        What a run whose metrics become NaN or inf does: `"raise_if_all"` (default) flags it in
        `extras["diverged"]` and raises `SimulationDiverged` only when every run diverged; `"flag"`
        never raises; `"raise"` raises at the first diverged run.

    Returns
    -------
    Trajectory
        Metrics `energy` and `grad_sq` (squared gradient norm in layer coordinates);
        `extras["t"]` = the times kη, `extras["floor"]` = `deep_linear_energy_floor`.

    Raises
    ------
    DomainError
        If a field of `config` is outside its domain.
    SimulationDiverged
        As `on_divergence` says.

    References
    ----------
    Spec `clocks:appF2-kl-examples` (examples 2 and 3), `clocks:lem4.6`.
    """
    enable_x64()
    config = _config(config, DeepLinearConfig)
    progress = V.flag(progress, "progress")
    L = integer_at_least(config.depth, "depth", 1, maximum=_MAX_DEPTH)
    _pos(config.eta, "eta")
    _nonneg(config.mu, "mu")
    target_a, init_a = V.as_float_array(config.target, "target"), V.as_float_array(config.init, "init")
    if target_a.ndim != 1 or init_a.shape != target_a.shape:
        raise DomainError(f"init and target must be 1-D of the same length (got shapes {init_a.shape}, {target_a.shape})")
    d0 = np.asarray(config.init, dtype=np.float64)
    if np.any(d0 < 0):
        raise DomainError("init must be >= 0 (singular values)")
    factors = [jnp.diag(jnp.asarray(d0 ** (1.0 / L))) for _ in range(L)]
    inputs = {"Y": jnp.diag(jnp.asarray(config.target, dtype=jnp.float64)), "mu": jnp.float64(config.mu),
              "eta": jnp.float64(config.eta)}
    traj = simulate(_dl_step, _dl_metrics, factors, inputs, steps=config.steps, record_every=config.record_every,
                    config=config, progress=progress, on_divergence=on_divergence)
    return dataclasses.replace(traj, extras={**traj.extras, "t": traj.times * config.eta,
                                             "floor": np.float64(deep_linear_energy_floor(config.target, L, config.mu))})


# --------------------------------------------------------------------------------------------
# Separable softmax regression
# --------------------------------------------------------------------------------------------


@cites("clocks:thm3.5")
def separable_softmax_data(seed: int = 0, n_classes: int = 4, dim: int = 10, n: int = 40, radius: float = 2.0,
                           noise: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    r"""Separable classification data: K classes on a circle, x_i = μ_{y_i} + `noise`·ξ_i.

    Class means μ_c = r·(cos(2πc/K), sin(2πc/K), 0, ...); balanced labels `arange(n) % K`; Gaussian
    noise ξ from `jax.random.PRNGKey(seed)`.

    Parameters
    ----------
    seed : int
        Seed ≥ 0 of the noise; default 0.
    n_classes : int
        Number of classes K ≥ 2; default 4.
    dim : int
        Input dimension ≥ 2; default 10.
    n : int
        Number of samples ≥ 1; default 40.
    radius : float
        Radius r > 0 of the circle of means; default 2.
    noise : float
        Standard deviation ≥ 0 of the noise; default 0.3.

    Returns
    -------
    tuple of numpy.ndarray
        `(x, labels)`: float64 (n, dim) and int (n,).

    Raises
    ------
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `clocks:thm3.5` verification recipe (section 7).
    """
    enable_x64()
    K = integer_at_least(n_classes, "n_classes", 2)
    dim = integer_at_least(dim, "dim", 2)
    n = integer_at_least(n, "n", 1)
    seed = integer_at_least(seed, "seed", 0)
    radius = _pos(radius, "radius")
    noise = _nonneg(noise, "noise")
    V.max_size(float(n) * dim, "n", n)
    y = np.arange(n) % K
    ang = 2 * np.pi * y / K
    mu = np.zeros((n, dim))
    mu[:, 0], mu[:, 1] = radius * np.cos(ang), radius * np.sin(ang)
    xi = np.asarray(jax.random.normal(jax.random.PRNGKey(seed), (n, dim), dtype=jnp.float64))
    return mu + noise * xi, y


def gap_form_cross_entropy(logits: jax.Array, labels: jax.Array) -> tuple[jax.Array, jax.Array]:
    r"""Mean cross-entropy in gap form and the minimum logit gap (JAX; `clocks:eq3.2`, `clocks:eq3.1`).

    With the gaps γ_ik = z_{i,y_i} − z_ik, each sample's loss is ℓ_i = softplus(logsumexp_{k≠y_i}(−γ_ik)):
    no cancellation, and its autodiff gradient forms the residual as g_k = π_k, g_y = −Σ_{k≠y} π_k.

    Parameters
    ----------
    logits : jax.Array
        Logits z, shape (n, K).
    labels : jax.Array
        Integer labels in [0, K), shape (n,).

    Returns
    -------
    tuple of jax.Array
        `(loss, min_gap)`: the mean cross-entropy and the smallest gap over samples and wrong
        classes, scalars.
    """
    K = logits.shape[-1]
    onehot = jax.nn.one_hot(labels, K, dtype=bool)
    zy = jnp.sum(jnp.where(onehot, logits, 0.0), axis=-1)
    gaps = zy[:, None] - logits
    s = jax.scipy.special.logsumexp(jnp.where(onehot, -jnp.inf, -gaps), axis=-1)
    loss = jnp.mean(jnp.logaddexp(0.0, s))
    gmin = jnp.min(jnp.where(onehot, jnp.inf, gaps))
    return loss, gmin


@dataclasses.dataclass(frozen=True)
class SoftmaxRegressionConfig:
    """Configuration of `softmax_regression`: logits z = Wx, trained from W = 0."""

    optimizer: str = "normalized_gd"
    """`"gd"` (plain GD), `"normalized_gd"` (W ← W − η∇L/‖∇L‖_F), `"adam"` (optax) or `"gd_wd"`
    (GD on L + (μ/2)‖W‖²_F)."""
    eta: float = 0.01
    """Step η > 0 (optimiser time per step)."""
    steps: int = 6000
    """Number of steps ≥ 1, a multiple of `record_every`."""
    record_every: int = 5
    """Steps between two records ≥ 1."""
    mu: float = 0.0
    """Weight decay μ ≥ 0; must be 0 unless `optimizer="gd_wd"`."""
    adam_eps: float = 1e-40
    """Adam's denominator offset > 0, small so that the update stays sign-like when gradients are tiny."""
    seed: int = 0
    """Seed ≥ 0 of the data (`separable_softmax_data`)."""
    n_classes: int = 4
    """Number of classes K ≥ 2."""
    dim: int = 10
    """Input dimension ≥ 2."""
    n: int = 40
    """Number of samples ≥ 1."""


def _sr_loss(W: jax.Array, inp: dict) -> jax.Array:
    return gap_form_cross_entropy(inp["x"] @ W.T, inp["y"])[0]


_sr_grad = jax.grad(_sr_loss)


def _sr_metrics(state: Any, inp: dict) -> dict:
    W = state[0]
    z = inp["x"] @ W.T
    loss, gmin = gap_form_cross_entropy(z, inp["y"])
    acc = jnp.mean(jnp.argmax(z, axis=-1) == inp["y"])
    return {"loss": loss, "min_gap": gmin, "train_acc": acc, "w_norm": jnp.sqrt(jnp.sum(W * W)),
            "grad_norm": jnp.sqrt(jnp.sum(_sr_grad(W, inp) ** 2))}


def _sr_step_gd(state: Any, inp: dict) -> Any:
    W, o = state
    return W - inp["eta"] * (_sr_grad(W, inp) + inp["mu"] * W), o


def _sr_step_ngd(state: Any, inp: dict) -> Any:
    W, o = state
    g = _sr_grad(W, inp)
    return W - inp["eta"] * g / jnp.sqrt(jnp.sum(g * g)), o


@functools.lru_cache(maxsize=None)
def _sr_step_adam(eta: float, eps: float):
    opt = optax.adam(eta, eps=eps)

    def step(state: Any, inp: dict) -> Any:
        W, o = state
        upd, o = opt.update(_sr_grad(W, inp), o, W)
        return optax.apply_updates(W, upd), o

    return step, opt


@cites("clocks:thm3.5", "clocks:asm3.4", "clocks:prop3.6", "clocks:eq3.2")
def softmax_regression(config: SoftmaxRegressionConfig = SoftmaxRegressionConfig(), *,
                       progress: bool = False, on_divergence: str = "raise_if_all") -> Trajectory:
    r"""Train softmax regression on separable data; record the gap-form loss and the minimum gap.

    Plain GD violates Assumption 3.4 (gaps grow like log t, L ~ 1/t, erratum `clocks-1`); normalized
    GD and Adam make the weights grow linearly and satisfy it; GD with weight decay has a loss floor.

    Parameters
    ----------
    config : SoftmaxRegressionConfig
        Optimiser, step, step counts and data; default `SoftmaxRegressionConfig()`.
    progress : bool
        Show a tqdm progress bar; default `False`.
    on_divergence : {"raise_if_all", "flag", "raise"}
        What a run whose metrics become NaN or inf does: `"raise_if_all"` (default) flags it in
        `extras["diverged"]` and raises `SimulationDiverged` only when every run diverged; `"flag"`
        never raises; `"raise"` raises at the first diverged run.

    Returns
    -------
    Trajectory
        Metrics `loss` (gap form), `min_gap`, `train_acc`, `w_norm`, `grad_norm`; `extras["t"]` =
        the accumulated time kη, `extras["x"]`, `extras["labels"]` = the data.

    Raises
    ------
    DomainError
        If a field of `config` is outside its domain (e.g. μ ≠ 0 without `"gd_wd"`).
    SimulationDiverged
        As `on_divergence` says.

    References
    ----------
    Spec `clocks:thm3.5`, `clocks:asm3.4`, `clocks:prop3.6` (verification recipes, section 7).
    """
    enable_x64()
    config = _config(config, SoftmaxRegressionConfig)
    progress = V.flag(progress, "progress")
    opt = choice(config.optimizer, "optimizer", ("gd", "normalized_gd", "adam", "gd_wd"))
    _pos(config.adam_eps, "adam_eps")
    eta = _pos(config.eta, "eta")
    mu = _nonneg(config.mu, "mu")
    if opt != "gd_wd" and mu != 0:
        raise DomainError(f"mu must be 0 unless optimizer='gd_wd' (got {mu!r})")
    x, y = separable_softmax_data(config.seed, config.n_classes, config.dim, config.n)
    inputs = {"x": jnp.asarray(x), "y": jnp.asarray(y), "eta": jnp.float64(eta), "mu": jnp.float64(mu)}
    W0 = jnp.zeros((config.n_classes, config.dim), dtype=jnp.float64)
    if opt == "adam":
        step, o = _sr_step_adam(eta, float(config.adam_eps))
        state0 = (W0, o.init(W0))
    else:
        step = _sr_step_ngd if opt == "normalized_gd" else _sr_step_gd
        state0 = (W0, jnp.zeros(()))
    traj = simulate(step, _sr_metrics, state0, inputs, steps=config.steps, record_every=config.record_every,
                    config=config, progress=progress, on_divergence=on_divergence)
    return dataclasses.replace(traj, extras={**traj.extras, "t": traj.times * eta, "x": x, "labels": y})


# --------------------------------------------------------------------------------------------
# Factorized softmax network with weight decay (spectral tail rate)
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FactorizedSoftmaxConfig:
    """Configuration of `factorized_softmax_gd`: a deep linear softmax network with layerwise weight decay.

    The logits z = W_L···W_1·x on the circle data (`separable_softmax_data`) are trained by GD on
    L + (μ/2)·Σ_l ‖W_l‖²_F.
    """

    depth: int = 3
    """Depth L ≥ 2 (at most 1000)."""
    mu: float = 0.01
    """Layerwise weight decay μ ≥ 0."""
    eta: float = 0.05
    """Step η > 0 (optimiser time per step)."""
    hidden: int = 10
    """Hidden width ≥ 1."""
    steps: int = 400_000
    """Number of steps ≥ 1, a multiple of `record_every`."""
    record_every: int = 200
    """Steps between two records ≥ 1."""
    k: int = 2
    """Rank k ≥ 0 of the recorded tail: the fraction of ‖W‖²_F beyond the top k singular values."""
    seed: int = 0
    """Seed ≥ 0 of the data (initial factors from `PRNGKey(1000 + seed)`)."""
    init_scale: float = 0.3
    """Scale of the initial factors (entries N(0, init_scale²/d_{l−1}))."""


def _fs_energy(factors: Any, inp: dict) -> jax.Array:
    W = end_to_end(factors)
    return _sr_loss(W, inp) + 0.5 * inp["mu"] * sum(jnp.sum(F * F) for F in factors)


_fs_grad = jax.grad(_fs_energy)


def _fs_step(factors: Any, inp: dict) -> Any:
    g = _fs_grad(factors, inp)
    return [F - inp["eta"] * G for F, G in zip(factors, g)]


@functools.lru_cache(maxsize=None)
def _fs_metrics(k: int):
    def metrics(factors: Any, inp: dict) -> dict:
        W = end_to_end(factors)
        s2 = jnp.linalg.svd(W, compute_uv=False) ** 2
        return {"tail": jnp.sum(s2[k:]) / jnp.sum(s2), "energy": _fs_energy(factors, inp),
                "loss": _sr_loss(W, inp)}

    return metrics


@cites("clocks:appF2-wd-rate")
def factorized_softmax_gd(config: FactorizedSoftmaxConfig = FactorizedSoftmaxConfig(), *,
                          progress: bool = False, on_divergence: str = "raise_if_all") -> Trajectory:
    r"""GD on a factorized softmax network with layerwise weight decay; records the normalized tail τ_k(W(t)).

    Weight decay alone gives τ_k ∝ e^(−rt) with the rate of `grokclocks.clocks.weight_decay_tail_rate`
    (erratum `clocks-2`).

    Parameters
    ----------
    config : FactorizedSoftmaxConfig
        Depth, decay, step, widths and data; default `FactorizedSoftmaxConfig()`.
    progress : bool
        Show a tqdm progress bar; default `False`.
    on_divergence : {"raise_if_all", "flag", "raise"}
        What a run whose metrics become NaN or inf does: `"raise_if_all"` (default) flags it in
        `extras["diverged"]` and raises `SimulationDiverged` only when every run diverged; `"flag"`
        never raises; `"raise"` raises at the first diverged run.

    Returns
    -------
    Trajectory
        Metrics `tail` (normalized rank-k tail), `energy`, `loss`; `extras["t"]` = the times kη,
        `extras["x"]`, `extras["labels"]`; `final_state` = the factors.

    Raises
    ------
    DomainError
        If a field of `config` is outside its domain.
    SimulationDiverged
        As `on_divergence` says.

    References
    ----------
    Spec `clocks:appF2-wd-rate`.
    """
    enable_x64()
    config = _config(config, FactorizedSoftmaxConfig)
    progress = V.flag(progress, "progress")
    L = integer_at_least(config.depth, "depth", 2, maximum=_MAX_DEPTH)
    eta = _pos(config.eta, "eta")
    _nonneg(config.mu, "mu")
    V.finite(config.init_scale, "init_scale", scalar=True)
    integer_at_least(config.k, "k", 0)
    x, y = separable_softmax_data(config.seed)
    K, d, h = 4, x.shape[1], integer_at_least(config.hidden, "hidden", 1)
    dims = [d] + [h] * (L - 1) + [K]
    keys = jax.random.split(jax.random.PRNGKey(1000 + config.seed), L)
    factors = [config.init_scale * jax.random.normal(keys[l], (dims[l + 1], dims[l]), dtype=jnp.float64)
               / math.sqrt(dims[l]) for l in range(L)]
    inputs = {"x": jnp.asarray(x), "y": jnp.asarray(y), "eta": jnp.float64(eta), "mu": jnp.float64(config.mu)}
    traj = simulate(_fs_step, _fs_metrics(int(config.k)), factors, inputs, steps=config.steps,
                    record_every=config.record_every, config=config, progress=progress,
                    on_divergence=on_divergence)
    return dataclasses.replace(traj, extras={**traj.extras, "t": traj.times * eta, "x": x, "labels": y})


document_records(globals(), __all__)  # help() of each record class lists its fields
