r"""Overdamped Langevin walkers and first-passage times (spec `kramers`, §9).

The dynamics dθ = −∇F(θ) dt + √(2T) dB_t (`kramers:eq17`) are discretised by Euler–Maruyama,

.. math::
    \theta_{k+1}=\theta_k-\nabla F(\theta_k)\Delta t+\sqrt{2T\Delta t}\,\xi_k,

with ξ_k standard normal.  Walkers are `vmap`-free: the state is an (M, d) array and every step is
a vectorised update inside one `lax.scan` per chunk of steps (jit-compiled once per
configuration), so millions of walkers run on a GPU and tens of thousands on a CPU.

First-passage criterion (`kramers:fpt-criterion`): the Eyring–Kramers time is the time to reach the
other minimum (`target = {"coord": 0, "threshold": 1.0}` for the test potentials); crossing the
saddle takes about half as long and, monitored at discrete times, is biased by O(√Δt).  The
reference values are exact: `grokclocks.kramers.mfpt_1d_exact` (quadrature) and
`grokclocks.kramers.mfpt_2d_exact` (finite-volume solve of the backward equation); the simulation is
compared with those, never with the asymptotic law.

Randomness: `jax.random.key(seed)` folded with the step index; same seed → same numbers on the same
device.  float32 is the default (increments ≈ 0.035 at Δt = 0.0025, T = 1/6 are well resolved); the
step counter is an int32.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import kramers as K
from .. import _validate as V
from .._fielddocs import document_records
from .._validate import DomainError, choice, integer_at_least, positive
from ..citations import cites
from ._runtime import SimulationDiverged

__all__ = [
    "POTENTIALS",
    "potential_fns",
    "double_well_1d",
    "saddle_2d",
    "euler_maruyama",
    "FPTConfig",
    "FPTResult",
    "mean_first_passage_time",
    "richardson_extrapolate",
    "first_passage_times",
]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


# ----------------------------------------------------------------------------------- potentials


@cites("kramers:test-potentials")
def double_well_1d(h: float = 1.0) -> tuple[Callable, Callable]:
    r"""JAX twin of the 1-D double well of `grokclocks.kramers.test_potential`: F(x) = h·(x² − 1)².

    Minima at x = ±1, saddle at x = 0, barrier height h.

    Parameters
    ----------
    h : float
        Barrier height h > 0 (in the units of the temperature T); default 1.

    Returns
    -------
    tuple of callable
        `(F, grad)` acting on a batch of positions: `F` maps (M, d) to the energies (M,), `grad`
        (by `jax.grad`) maps (M, d) to the gradients (M, d).

    Raises
    ------
    DomainError
        If `h` is not > 0.

    References
    ----------
    Spec `kramers:test-potentials`.
    """
    h = positive(h, "h", scalar=True)

    def F1(z):
        return h * (z[0] ** 2 - 1.0) ** 2

    return jax.vmap(F1), jax.vmap(jax.grad(F1))


@cites("kramers:test-potentials")
def saddle_2d(h: float = 1.0, k: float = 1.0, c: float = 3.0) -> tuple[Callable, Callable]:
    r"""JAX twin of the 2-D saddle of `grokclocks.kramers.test_potential`.

    F(x, y) = h·(x² − 1)² + ½·(k + c·x²)·y².
    A double well in x with a transverse harmonic valley in y whose stiffness k + c·x² differs at
    the minima (k + c) and at the saddle (k), so that the prefactor of the escape rate is tested.

    Parameters
    ----------
    h : float
        Barrier height h > 0; default 1.
    k : float
        Transverse stiffness at the saddle, k > 0; default 1.
    c : float
        Growth c ≥ 0 of the transverse stiffness with x² (stiffness k + c at the minima); default 3.

    Returns
    -------
    tuple of callable
        `(F, grad)` acting on a batch of positions: `F` maps (M, d) to the energies (M,), `grad`
        (by `jax.grad`) maps (M, d) to the gradients (M, d).

    Raises
    ------
    DomainError
        If a parameter is outside its domain.

    References
    ----------
    Spec `kramers:test-potentials`.
    """
    h = positive(h, "h", scalar=True)
    k = positive(k, "k", scalar=True)
    c = V.nonnegative(c, "c", scalar=True)

    def F1(z):
        return h * (z[0] ** 2 - 1.0) ** 2 + 0.5 * (k + c * z[0] ** 2) * z[1] ** 2

    return jax.vmap(F1), jax.vmap(jax.grad(F1))


POTENTIALS: dict[str, Callable[..., tuple[Callable, Callable]]] = {"double_well_1d": double_well_1d,
                                                                   "saddle_2d": saddle_2d}
"""The named test potentials: name -> factory `(**params) -> (F, grad)` (`double_well_1d`, `saddle_2d`)."""


def potential_fns(potential: str | Callable, params: dict | None = None) -> tuple[Callable | None, Callable]:
    """The energy and gradient functions of a potential.

    `(F, grad)` for a named potential, `(None, potential)` for a batched gradient callable.

    Parameters
    ----------
    potential : str or callable
        A name of `POTENTIALS` (`"double_well_1d"`, `"saddle_2d"`), or a batched gradient function
        `(M, d) -> (M, d)`, returned as is.
    params : dict or None
        The named potential's parameters (`h`; `h`, `k`, `c` for the saddle); `None` (default)
        keeps its defaults.  Ignored for a callable.

    Returns
    -------
    tuple
        `(F, grad)` as `double_well_1d` returns them, or `(None, potential)` for a callable.

    Raises
    ------
    DomainError
        If the name is unknown, `params` is not a dict, or it names a parameter the potential does
        not take.
    """
    if callable(potential):
        return None, potential
    name = choice(potential, "potential", tuple(POTENTIALS))
    if params is not None and not isinstance(params, dict):
        raise DomainError(f"params must be a dict of the potential's parameters or None (got {V.show(params)})")
    allowed = tuple(inspect.signature(POTENTIALS[name]).parameters)
    unknown = sorted(set(params or {}) - set(allowed))
    if unknown:
        raise DomainError(f"params of {name!r} must be among {', '.join(allowed)} (got {unknown})")
    return POTENTIALS[name](**(params or {}))


# ----------------------------------------------------------------------------------- Euler-Maruyama


def _check(T: float, dt: float) -> tuple[float, float]:
    return positive(T, "T", scalar=True), positive(dt, "dt", scalar=True)


_MAX_STEPS = 2**31 - 1  # the step counter and the escape steps are int32


def _float_dtype(dtype: Any) -> Any:
    """float32 or float64 (the latter switches JAX to x64, else it would silently compute in float32)."""
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise DomainError(f"dtype must be float32 or float64 (got {V.show(dtype)})") from exc
    if dt not in (np.float32, np.float64):
        raise DomainError(f"dtype must be float32 or float64 (got {dt})")
    if dt == np.float64:
        from ._runtime import enable_x64

        enable_x64()
    return jnp.float64 if dt == np.float64 else jnp.float32


def _start(x0: Any, ndim: tuple[int, ...] = (1,)) -> np.ndarray:
    x = np.atleast_1d(V.as_float_array(x0, "x0"))
    if x.ndim not in ndim:
        raise DomainError(f"x0 must be a {' or '.join(f'{d}-D' for d in ndim)} array of positions (got shape {x.shape})")
    return x


@cites("kramers:eq17")
def euler_maruyama(grad_F: Callable, x0: Any, T: float, dt: float, n_steps: int, key: jax.Array,
                   dtype: Any = jnp.float32) -> jax.Array:
    r"""Final state of Euler–Maruyama walkers of the Langevin equation dθ = −∇F dt + √(2T) dB (eq. 17).

    Each step is θ ← θ − Δt·∇F(θ) + √(2TΔt)·ξ with ξ standard normal, drawn from `key` folded with
    the step index.

    Parameters
    ----------
    grad_F : callable
        Batched gradient ∇F, `(M, d) -> (M, d)` (e.g. the `grad` of `double_well_1d`).
    x0 : array_like
        Initial positions, shape (M, d), or (d,) for one walker.
    T : float
        Temperature T > 0 (the noise amplitude is √(2T)).
    dt : float
        Time step Δt > 0, in gradient-flow time.
    n_steps : int
        Number of steps, an integer in [0, 2³¹ − 1].
    key : jax.Array
        A `jax.random` key.
    dtype : dtype
        float32 (default) or float64 (which switches JAX to x64).

    Returns
    -------
    jax.Array
        Final positions, shape (M, d) (or (d,) for one walker).

    Raises
    ------
    SimulationDiverged
        If the final state is not finite.
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `kramers:eq17`.
    """
    V.callable_(grad_F, "grad_F")
    T, dt = _check(T, dt)
    n_steps = integer_at_least(n_steps, "n_steps", 0, maximum=_MAX_STEPS)
    dtype = _float_dtype(dtype)
    x = jnp.asarray(_start(x0, (1, 2)), dtype=dtype)
    single = x.ndim == 1
    x = x[None] if single else x
    amp = math.sqrt(2.0 * T * dt)

    def body(x, k):
        xi = jax.random.normal(jax.random.fold_in(key, k), x.shape, dtype)
        return x - dt * grad_F(x) + amp * xi, None

    x, _ = jax.jit(lambda x: jax.lax.scan(body, x, jnp.arange(n_steps, dtype=jnp.int32)))(x)
    if not bool(jnp.all(jnp.isfinite(x))):
        raise SimulationDiverged(n_steps, "walker position", dict(T=T, dt=dt, n_steps=n_steps))
    return x[0] if single else x


@functools.lru_cache(maxsize=32)
def _chunk_fn(grad_F: Callable, coord: int, threshold: float, amp: float, dt: float, chunk: int, dtype: Any):
    def body(carry, k):
        x, esc, key = carry
        xi = jax.random.normal(jax.random.fold_in(key, k), x.shape, dtype)
        x = x - dt * grad_F(x) + amp * xi
        hit = (x[:, coord] >= threshold) & (esc < 0)
        esc = jnp.where(hit, k + 1, esc)
        return (x, esc, key), None

    @jax.jit
    def run(x, esc, key, k0):
        (x, esc, _), _ = jax.lax.scan(body, (x, esc, key), k0 + jnp.arange(chunk, dtype=jnp.int32))
        return x, esc

    return run


@cites("kramers:eq17", "kramers:fpt-criterion")
def first_passage_times(grad_F: Callable, x0: Any, n_walkers: int, coord: int, threshold: float, T: float, dt: float,
                        n_steps: int, seed: int = 0, chunk: int = 1000, dtype: Any = jnp.float32) -> np.ndarray:
    r"""First-passage steps of `n_walkers` Euler–Maruyama walkers started at `x0`.

    A walker escapes at the first step k (1-based) with x[`coord`] ≥ `threshold`; walkers not
    escaped by `n_steps` (rounded up to whole chunks) get −1.  The run stops early once every walker
    has escaped.

    Parameters
    ----------
    grad_F : callable
        Batched gradient ∇F, `(M, d) -> (M, d)`.
    x0 : array_like
        The common start position, shape (d,) (a scalar for d = 1).
    n_walkers : int
        Number of walkers M ≥ 1.
    coord : int
        Index in [0, d) of the coordinate that is monitored.
    threshold : float
        The level the monitored coordinate must reach (finite).
    T : float
        Temperature T > 0.
    dt : float
        Time step Δt > 0, in gradient-flow time.
    n_steps : int
        Maximal number of steps, an integer in [1, 2³¹ − 1].
    seed : int
        Seed ≥ 0 of `jax.random.key`; default 0.
    chunk : int
        Steps per compiled call (the escape check runs after each), an integer ≥ 1; default 1000.
    dtype : dtype
        float32 (default) or float64.

    Returns
    -------
    numpy.ndarray
        int32 of shape (n_walkers,): each walker's escape step, −1 if it did not escape.

    Raises
    ------
    SimulationDiverged
        If a position becomes non-finite.
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `kramers:eq17`, `kramers:fpt-criterion`.
    """
    V.callable_(grad_F, "grad_F")
    T, dt = _check(T, dt)
    M = integer_at_least(n_walkers, "n_walkers", 1)
    n_steps = integer_at_least(n_steps, "n_steps", 1, maximum=_MAX_STEPS)
    chunk = integer_at_least(chunk, "chunk", 1, maximum=_MAX_STEPS)
    x0 = _start(x0)
    coord = integer_at_least(coord, "coord", 0, maximum=x0.size - 1)
    threshold = V.finite(threshold, "threshold", scalar=True)
    seed = integer_at_least(seed, "seed", 0)
    dtype = _float_dtype(dtype)
    V.max_size(float(M) * x0.size, "n_walkers", M)
    x = jnp.broadcast_to(jnp.asarray(x0, dtype=dtype), (M, x0.size))
    esc = -jnp.ones(M, dtype=jnp.int32)
    key = jax.random.key(int(seed))
    run = _chunk_fn(grad_F, int(coord), float(threshold), math.sqrt(2.0 * T * dt), dt, chunk, dtype)
    n_chunks = -(-n_steps // chunk)
    for c in range(n_chunks):
        x, esc = run(x, esc, key, jnp.int32(c * chunk))
        if not bool(jnp.all(jnp.isfinite(x))):
            raise SimulationDiverged((c + 1) * chunk, "walker position", dict(T=T, dt=dt, x0=tuple(x0)))
        if bool(jnp.all(esc >= 0)):
            break
    return np.asarray(esc)


@dataclasses.dataclass(frozen=True)
class FPTConfig:
    """Configuration of a `mean_first_passage_time` run, stored in its `FPTResult`."""

    potential: str
    """The potential's name, or the gradient function's `__name__` (`"callable"` without one)."""
    potential_params: tuple
    """The potential's parameters as sorted (name, value) pairs."""
    x0: tuple
    """The start position, a tuple of d floats."""
    coord: int
    """Index of the monitored coordinate."""
    threshold: float
    """The level the monitored coordinate must reach."""
    T: float
    """Temperature T > 0."""
    dt: float
    """Time step Δt > 0, in gradient-flow time."""
    n_walkers: int
    """Number of walkers ≥ 1."""
    seed: int
    """Seed ≥ 0 of the walkers' noise."""
    horizon: float
    """Gradient-flow time t_h each walker was run for."""
    dtype: str
    """`"float32"` or `"float64"`."""


@dataclasses.dataclass(frozen=True)
class FPTResult:
    """Estimated mean first-passage time of `mean_first_passage_time`, in gradient-flow time."""

    mean: float
    """τ̂ = mean of min(τ_i, t_h) + Ŝ(t_h)/k̂: the censored mean plus the tail of the survivors at rate k̂."""
    stderr: float
    """τ̂/√n_escaped (escape times are about exponential, coefficient of variation ≈ 1)."""
    n_escaped: int
    """Number of walkers escaped by the horizon."""
    survival_at_horizon: float
    """Ŝ(t_h), the fraction of walkers not escaped by the horizon."""
    horizon: float
    """t_h, the gradient-flow time each walker was run for."""
    times: np.ndarray
    """Each walker's escape time in gradient-flow time (`inf` for survivors), shape (n_walkers,)."""
    config: FPTConfig
    """The run's configuration."""

    @property
    def cv_escaped(self) -> float:
        """Coefficient of variation (std/mean) of the escaped walkers' times (censored: ≤ the true CV)."""
        t = self.times[np.isfinite(self.times)]
        return float(np.std(t) / np.mean(t))


def tail_corrected_mean(times: np.ndarray, horizon: float) -> tuple[float, float, int]:
    r"""Tail-corrected MFPT estimator from censored escape times (a memoryless tail fitted on [t_h/2, t_h]).

    The estimate is the mean of min(τ_i, t_h) plus Ŝ(t_h)/k̂, with Ŝ the surviving fraction and k̂
    the escapes in [t_h/2, t_h] divided by the exposure (time at risk) there.

    Parameters
    ----------
    times : array_like
        Escape times in gradient-flow time; `inf` (or anything above `horizon`) for survivors.
    horizon : float
        The horizon t_h > 0 the walkers were run for.

    Returns
    -------
    tuple
        `(mean, survival_at_horizon, n_escaped)`: float, float, int.

    Raises
    ------
    DomainError
        If walkers survived but none escaped in [t_h/2, t_h] (the tail rate cannot be estimated).
    """
    t = np.asarray(times, dtype=np.float64)
    M = t.size
    esc = np.isfinite(t) & (t <= horizon)
    tc = np.minimum(np.where(esc, t, horizon), horizon)
    S = 1.0 - esc.mean()
    mean = float(tc.mean())
    if S > 0:
        half = 0.5 * horizon
        n_win = int(np.sum(esc & (t > half)))
        exposure = float(np.sum(np.maximum(tc - half, 0.0)))
        if n_win == 0:
            raise DomainError("no escapes in [horizon/2, horizon]: increase the horizon or the number of walkers")
        mean += S / (n_win / exposure)
    return mean, float(S), int(esc.sum())


@cites("kramers:eq17", "kramers:fpt-criterion", "kramers:eyring")
def mean_first_passage_time(potential: str | Callable, potential_params: dict | None, x0: Any, target: dict,
                            T: float, dt: float, n_walkers: int, seed: int = 0, horizon: float | None = None,
                            chunk: int = 1000, dtype: Any = jnp.float32) -> FPTResult:
    r"""Mean first-passage time of Euler–Maruyama walkers (the simulation side of `kramers:eyring`).

    The walkers start at `x0` and run for the horizon t_h; the estimate is
    τ̂ = mean of min(τ_i, t_h) + Ŝ(t_h)/k̂, with Ŝ(t_h) the surviving fraction and k̂ the escapes in
    [t_h/2, t_h] divided by the exposure there (`tail_corrected_mean`).

    Parameters
    ----------
    potential : str or callable
        `"double_well_1d"`, `"saddle_2d"` (see `POTENTIALS`) or a batched gradient function
        `(M, d) -> (M, d)`.
    potential_params : dict or None
        The named potential's parameters (`h`, `k`, `c`); `None` keeps its defaults.
    x0 : array_like
        The start position, shape (d,) (e.g. the minimum (−1,) or (−1, 0)).
    target : dict
        `{"coord": int, "threshold": float}` (`threshold` required, `coord` default 0): a walker
        escapes the first time x[coord] ≥ threshold.  Use the other minimum (this is what the
        Eyring–Kramers time means; the saddle gives about half, with an O(√Δt) discrete-monitoring
        bias, `grokclocks.kramers.continuity_correction_shift`).
    T : float
        Temperature T > 0.
    dt : float
        Time step Δt > 0, in gradient-flow time.
    n_walkers : int
        Number of walkers ≥ 1.
    seed : int
        Seed ≥ 0 of the walkers' noise; default 0.
    horizon : float or None
        Gradient-flow time t_h > 0 each walker is run for (at most 2³¹ − 1 steps); `None` (default)
        means 2.5·τ_EK (the Eyring–Kramers time) for the named potentials; a callable potential
        needs it.
    chunk : int
        Steps per compiled call, an integer ≥ 1; default 1000.
    dtype : dtype
        float32 (default) or float64.

    Returns
    -------
    FPTResult
        The estimate, its standard error, the escape times and the configuration.

    Raises
    ------
    DomainError
        If an argument is outside its domain, or no walker escaped in [t_h/2, t_h] while some
        survived.
    SimulationDiverged
        If a position becomes non-finite.

    Notes
    -----
    The Euler–Maruyama bias is O(Δt) and negative (about −1 % at Δt = 0.01 on the test
    potentials); remove it with `richardson_extrapolate`.

    References
    ----------
    Spec `kramers:eq17`, `kramers:fpt-criterion`, `kramers:eyring`.
    """
    T, dt = _check(T, dt)
    M = integer_at_least(n_walkers, "n_walkers", 1)
    if potential_params is not None and not isinstance(potential_params, dict):
        raise DomainError(f"potential_params must be a dict or None (got {V.show(potential_params)})")
    params = dict(potential_params or {})
    _, grad = potential_fns(potential, params)
    if horizon is None:
        if callable(potential):
            raise DomainError("horizon must be given for a callable potential")
        tp = K.test_potential(potential, **params)
        horizon = 2.5 * K.eyring_kramers_time(tp["hess_min"], tp["hess_saddle"], tp["delta_F"], T)
    horizon = positive(horizon, "horizon", scalar=True)
    if not isinstance(target, dict) or "threshold" not in target or set(target) - {"coord", "threshold"}:
        raise DomainError(f'target must be a dict {{"coord": int, "threshold": float}} (threshold required) '
                          f"(got {V.show(target)})")
    coord = integer_at_least(target.get("coord", 0), "target['coord']", 0,
                             maximum=np.atleast_1d(V.as_float_array(x0, "x0")).size - 1)
    thr = V.finite(target["threshold"], "target['threshold']", scalar=True)
    if not horizon / dt <= _MAX_STEPS:
        raise DomainError(f"horizon / dt must be <= 2**31 - 1 steps (got horizon={horizon!r}, dt={dt!r})")
    n_steps = int(math.ceil(horizon / dt))
    steps = first_passage_times(grad, x0, M, coord, thr, T, dt, n_steps, seed, chunk, dtype)
    times = np.where(steps >= 0, steps * dt, np.inf)
    times = np.where(times <= horizon, times, np.inf)
    mean, S, n_esc = tail_corrected_mean(times, horizon)
    cfg = FPTConfig(potential if isinstance(potential, str) else getattr(potential, "__name__", "callable"),
                    tuple(sorted(params.items())), tuple(np.atleast_1d(np.asarray(x0, float)).tolist()), coord, thr,
                    T, dt, M, int(seed), horizon, str(np.dtype(dtype)))
    return FPTResult(mean, mean / math.sqrt(max(n_esc, 1)), n_esc, S, horizon, times, cfg)


@cites("kramers:eyring")
def richardson_extrapolate(tau1: float, dt1: float, tau2: float, dt2: float,
                           err1: float = 0.0, err2: float = 0.0) -> tuple[float, float]:
    r"""Step-size extrapolation of an estimate with an O(Δt) bias: τ₂ + (τ₂ − τ₁)·Δt₂/(Δt₁ − Δt₂).

    If τ(Δt) = τ + b·Δt + O(Δt²), the linear extrapolation through (Δt₁, τ₁) and (Δt₂, τ₂) to Δt = 0
    removes the O(Δt) term:

    .. math::
        \tau_0 = \tau_2 + (\tau_2 - \tau_1)\,\frac{\Delta t_2}{\Delta t_1 - \Delta t_2}

    Parameters
    ----------
    tau1 : float
        The estimate at the larger step `dt1` (finite).
    dt1 : float
        The larger step Δt₁ > Δt₂.
    tau2 : float
        The estimate at the smaller step `dt2` (finite).
    dt2 : float
        The smaller step Δt₂ > 0.
    err1 : float
        Standard error ≥ 0 of `tau1`; default 0.
    err2 : float
        Standard error ≥ 0 of `tau2`; default 0.

    Returns
    -------
    tuple of float
        `(tau_extrapolated, stderr)`, the standard error propagated from independent `err1`, `err2`.

    Raises
    ------
    DomainError
        If an argument is outside its domain or not dt1 > dt2 > 0.

    References
    ----------
    Spec `kramers:eyring`.
    """
    tau1, tau2 = V.finite(tau1, "tau1", scalar=True), V.finite(tau2, "tau2", scalar=True)
    err1, err2 = V.nonnegative(err1, "err1", scalar=True), V.nonnegative(err2, "err2", scalar=True)
    dt1, dt2 = V.positive(dt1, "dt1", scalar=True), V.positive(dt2, "dt2", scalar=True)
    if not dt1 > dt2 > 0:
        raise DomainError(f"need dt1 > dt2 > 0 (got dt1={dt1!r}, dt2={dt2!r})")
    w = dt2 / (dt1 - dt2)
    return tau2 + (tau2 - tau1) * w, math.hypot((1 + w) * err2, w * err1)


document_records(globals(), __all__)  # help() of each record class lists its fields
