r"""Overdamped Langevin walkers and first-passage times (spec ``kramers``, §9).

:math:`d\theta=-\nabla F(\theta)\,dt+\sqrt{2T}\,dB_t` (``kramers:eq17``), discretised by Euler–Maruyama,
:math:`\theta_{k+1}=\theta_k-\nabla F(\theta_k)\Delta t+\sqrt{2T\Delta t}\,\xi_k`.  Walkers are ``vmap``-free:
the state is an ``(M, d)`` array and every step is a vectorised update inside one ``lax.scan`` per
chunk of steps (jit-compiled once per configuration), so millions of walkers run on a GPU and tens of
thousands on a CPU.

First-passage criterion (``kramers:fpt-criterion``): the Eyring–Kramers time is the time to reach the
*other minimum* (``target = {"coord": 0, "threshold": 1.0}`` for the test potentials); crossing the
saddle takes about half as long and, monitored at discrete times, is biased by :math:`O(\sqrt{\Delta t})`.
The reference values are exact: :func:`grokclocks.kramers.mfpt_1d_exact` (quadrature) and
:func:`grokclocks.kramers.mfpt_2d_exact` (finite-volume solve of the backward equation); the simulation
is compared with those, never with the asymptotic law.

Randomness: ``jax.random.key(seed)`` folded with the step index; same seed → same numbers on the same
device.  float32 is the default (increments ≈ 0.035 at Δt = 0.0025, T = 1/6 are well resolved); the step
counter is an int32.
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
    r"""JAX twin of :func:`grokclocks.kramers.test_potential` ``"double_well_1d"``: :math:`F=h(x^2-1)^2`.

    Returns ``(F, grad)`` acting on a batch ``(M, 1)`` (``F`` → ``(M,)``, ``grad`` → ``(M, 1)``, by ``jax.grad``).
    """
    h = positive(h, "h", scalar=True)

    def F1(z):
        return h * (z[0] ** 2 - 1.0) ** 2

    return jax.vmap(F1), jax.vmap(jax.grad(F1))


@cites("kramers:test-potentials")
def saddle_2d(h: float = 1.0, k: float = 1.0, c: float = 3.0) -> tuple[Callable, Callable]:
    r"""JAX twin of ``"saddle_2d"``: :math:`F=h(x^2-1)^2+\tfrac12(k+cx^2)y^2` (batch ``(M, 2)``, ``jax.grad``)."""
    h = positive(h, "h", scalar=True)
    k = positive(k, "k", scalar=True)
    c = V.nonnegative(c, "c", scalar=True)

    def F1(z):
        return h * (z[0] ** 2 - 1.0) ** 2 + 0.5 * (k + c * z[0] ** 2) * z[1] ** 2

    return jax.vmap(F1), jax.vmap(jax.grad(F1))


POTENTIALS: dict[str, Callable[..., tuple[Callable, Callable]]] = {"double_well_1d": double_well_1d,
                                                                   "saddle_2d": saddle_2d}


def potential_fns(potential: str | Callable, params: dict | None = None) -> tuple[Callable | None, Callable]:
    """``(F, grad)`` for a named potential, or ``(None, potential)`` for a batched gradient callable."""
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
    r"""Final state of Euler–Maruyama walkers for :math:`d\theta=-\nabla F\,dt+\sqrt{2T}\,dB` (eq. 17).

    Parameters
    ----------
    grad_F : batched gradient, ``(M, d) -> (M, d)`` (e.g. from :func:`double_well_1d`)
    x0 : (M, d) initial positions (or (d,) for one walker)
    T, dt : > 0;  n_steps : int >= 0;  key : ``jax.random`` key

    Returns
    -------
    jax.Array (M, d) (or (d,))

    Raises
    ------
    SimulationDiverged
        If the final state is not finite.
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
    r"""First-passage steps of ``n_walkers`` Euler–Maruyama walkers started at ``x0``.

    A walker escapes at the first step k (1-based) with :math:`x_{\rm coord}\ge` ``threshold``; walkers not
    escaped by ``n_steps`` (rounded up to whole chunks) get −1.  Returns an int array (n_walkers,).
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
    """Configuration of a mean-first-passage-time run."""

    potential: str
    potential_params: tuple
    x0: tuple
    coord: int
    threshold: float
    T: float
    dt: float
    n_walkers: int
    seed: int
    horizon: float
    dtype: str


@dataclasses.dataclass(frozen=True)
class FPTResult:
    r"""Estimated mean first-passage time.

    Attributes
    ----------
    mean : :math:`\hat\tau=\overline{\min(\tau_i,t_h)}+\hat S(t_h)/\hat k`
    stderr : :math:`\hat\tau/\sqrt{n_{\rm escaped}}` (escape times are ≈ exponential, CV ≈ 1)
    n_escaped : walkers escaped by the horizon
    survival_at_horizon : :math:`\hat S(t_h)`
    horizon : :math:`t_h` (GF time)
    times : escape times (GF time; ``inf`` for survivors)
    config : FPTConfig
    """

    mean: float
    stderr: float
    n_escaped: int
    survival_at_horizon: float
    horizon: float
    times: np.ndarray
    config: FPTConfig

    @property
    def cv_escaped(self) -> float:
        """Coefficient of variation of the escape times of the escaped walkers (censored: ≤ the true CV)."""
        t = self.times[np.isfinite(self.times)]
        return float(np.std(t) / np.mean(t))


def tail_corrected_mean(times: np.ndarray, horizon: float) -> tuple[float, float, int]:
    r"""Tail-corrected MFPT estimator from censored escape times (memoryless tail on :math:`[t_h/2,t_h]`).

    Returns ``(mean, survival_at_horizon, n_escaped)``.
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
    r"""Mean first-passage time of Euler–Maruyama walkers (the simulation side of ``kramers:eyring``).

    Parameters
    ----------
    potential : ``"double_well_1d"`` / ``"saddle_2d"`` or a batched gradient callable ``(M, d) -> (M, d)``
    potential_params : dict of the potential's parameters (h, k, c)
    x0 : start (d,)
    target : ``{"coord": 0, "threshold": 1.0}`` — first time :math:`x_{\rm coord}\ge` threshold; use the other
        minimum (this is what the Eyring–Kramers time means; the saddle gives about half, with an
        :math:`O(\sqrt{\Delta t})` discrete-monitoring bias — :func:`grokclocks.kramers.continuity_correction_shift`)
    T, dt : > 0;  n_walkers : >= 1
    horizon : GF time each walker is run for; default :math:`2.5\,\tau_{\rm EK}` for the named potentials
    chunk : steps per jitted call

    Returns
    -------
    FPTResult

    Notes
    -----
    Estimator: :math:`\hat\tau=\overline{\min(\tau_i,t_h)}+\hat S(t_h)/\hat k`, :math:`\hat k` = escapes in
    :math:`[t_h/2,t_h]` ÷ exposure there.  Euler–Maruyama bias is :math:`O(\Delta t)` and negative (≈ −1 % at
    Δt = 0.01 on the test potentials); remove it with :func:`richardson_extrapolate`.
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
    r"""Step-size extrapolation of a first-order-biased estimate: :math:`\tau_2+(\tau_2-\tau_1)\Delta t_2/(\Delta t_1-\Delta t_2)`.

    Returns ``(tau_extrapolated, stderr)`` with independent errors propagated.
    """
    tau1, tau2 = V.finite(tau1, "tau1", scalar=True), V.finite(tau2, "tau2", scalar=True)
    err1, err2 = V.nonnegative(err1, "err1", scalar=True), V.nonnegative(err2, "err2", scalar=True)
    dt1, dt2 = V.positive(dt1, "dt1", scalar=True), V.positive(dt2, "dt2", scalar=True)
    if not dt1 > dt2 > 0:
        raise DomainError(f"need dt1 > dt2 > 0 (got dt1={dt1!r}, dt2={dt2!r})")
    w = dt2 / (dt1 - dt2)
    return tau2 + (tau2 - tau1) * w, math.hypot((1 + w) * err2, w * err1)
