"""Teacher-student simulations of spec ``levi`` (Levi, Beck, Bar-Sinai): explicit GD and its exact spectral form.

* :func:`run_gd` -- explicit full-batch GD (optax SGD + weight decay through the one engine,
  :func:`grokclocks.sim.train.simulate`), vmapped over seeds and, optionally, over a grid of
  learning rates / weight decays;
* :func:`run_gd_spectral` -- the *same* GD iterates in closed form from ``eigh`` of the training
  Gram matrix (no approximation; matches :func:`run_gd` to ~1e-14 relative); real-valued ``t``;
* :func:`crossing_times` -- first time the loss falls to ``L*``, by bisection on continuous ``t``;
* :func:`run_two_layer` -- explicit GD of the two-layer network (linear or tanh hidden layer);
* :func:`run_gd_fresh_noise` -- GD with label noise redrawn at every step (eigenbasis simulation).

Time unit = one GD step with learning rate ``eta`` (spec ``levi:conv-time``); formulas of the
gradient-flow theory are compared at ``eta0 = eta``.  Weight decay ``gamma`` is in the paper
convention unless ``wd_convention="torch"`` (spec ``levi:conv-wd``).  Everything runs in float64.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._validate import DomainError, choice, integer_at_least, nonnegative, positive
from ..citations import cites
from ._runtime import SimulationDiverged, enable_x64
from .data import (
    TeacherStudentData,
    TwoLayerData,
    make_teacher_student,
    make_two_layer_teacher_student,
    teacher_student_keys,
)
from .models import activation as _activation
from .train import (ON_DIVERGENCE, Trajectory, check_record_every, check_run_path, optax_init, optax_step,
                    sgd_weight_decay, simulate, weight_decay_coefficient)

__all__ = [
    "make_teacher_student",
    "make_two_layer_teacher_student",
    "teacher_student_keys",
    "draw_teacher_student",
    "draw_two_layer",
    "LinearGDConfig",
    "SpectralConfig",
    "CrossingTimes",
    "TwoLayerConfig",
    "FreshNoiseConfig",
    "run_gd",
    "run_gd_spectral",
    "crossing_times",
    "run_two_layer",
    "run_gd_fresh_noise",
    "SpectralDraws",
    "spectral_draws",
]


# --------------------------------------------------------------------------------------------
# Convenience constructors
# --------------------------------------------------------------------------------------------


@cites("levi:conv-data")
def draw_teacher_student(d_in: int, lam: float, d_out: int = 1, *, seeds: int | Sequence[int] = (0,),
                         init_scale: float = 1.0, sigma2: float = 0.0) -> TeacherStudentData:
    """Teacher-student draws for the given seeds, keys ``PRNGKey(1000 d_in + seed)`` (spec section 7.1).

    .. math::
        x_i \\sim \\mathcal N(0, I),\\quad T, S_0/\\alpha \\sim \\mathcal N\\big(0, 1/(2 d_{\\rm in} d_{\\rm out})\\big),
        \\quad N_{\\rm tr} = \\mathrm{round}(d_{\\rm in}/\\lambda)

    Parameters
    ----------
    d_in : int >= 1; lam : float > 0; d_out : int >= 1
    seeds : int or sequence of int >= 0
        A sequence gives a leading seed axis (even of length 1); an int gives one unbatched draw.
    init_scale : float (alpha); sigma2 : float >= 0 (fixed label-noise variance)

    Returns
    -------
    TeacherStudentData

    References
    ----------
    Spec ``levi:conv-data``, section 7.1.
    """
    keys = teacher_student_keys(d_in, seeds)
    seed_tuple = (int(seeds),) if np.ndim(seeds) == 0 else tuple(int(s) for s in seeds)
    return make_teacher_student(keys, d_in, lam, d_out, init_scale=init_scale, sigma2=sigma2, seeds=seed_tuple)


@cites("levi:eq16")
def draw_two_layer(d_in: int, lam: float, d_h: int, d_out: int = 1, *,
                   seeds: int | Sequence[int] = (0,)) -> TwoLayerData:
    """Two-layer teacher-student draws for the given seeds (keys ``PRNGKey(1000 d_in + seed)``).

    .. math::
        S_0, T_0 \\sim \\mathcal N\\big(0, 1/(2 d_{\\rm in} d_h)\\big),\\quad S_1, T_1 \\sim \\mathcal N\\big(0, 1/(2 d_{\\rm out} d_h)\\big)

    Parameters
    ----------
    d_in, d_h, d_out : int >= 1; lam : float > 0; seeds : int or sequence of int >= 0

    Returns
    -------
    TwoLayerData

    References
    ----------
    Spec ``levi:eq16`` (paper eq. 16).
    """
    keys = teacher_student_keys(d_in, seeds)
    seed_tuple = (int(seeds),) if np.ndim(seeds) == 0 else tuple(int(s) for s in seeds)
    return make_two_layer_teacher_student(keys, d_in, lam, d_h, d_out, seeds=seed_tuple)


# --------------------------------------------------------------------------------------------
# Configs and results
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LinearGDConfig:
    """Configuration of :func:`run_gd` (JSON-serialisable; ``eta``/``gamma`` are tuples for a grid)."""

    d_in: int
    d_out: int
    n_train: int
    lam: float
    init_scale: float
    sigma2: float
    seeds: tuple[int, ...] | None
    eta: float | tuple[float, ...]
    gamma: float | tuple[float, ...]
    wd_convention: str
    steps: int
    record_every: int
    eps: float | None = None
    n_gen: int = 0


@dataclasses.dataclass(frozen=True)
class SpectralConfig:
    """Configuration of :func:`run_gd_spectral` / :func:`crossing_times`."""

    d_in: int
    d_out: int
    n_train: int
    lam: float
    init_scale: float
    sigma2: float
    seeds: tuple[int, ...] | None
    eta: float
    gamma: float
    wd_convention: str
    loss_star: float | None = None


@dataclasses.dataclass(frozen=True, eq=False)
class CrossingTimes:
    """Loss-crossing times of :func:`crossing_times` (arrays of the data's batch shape).

    ``t_train``/``t_gen``: first (continuous) step at which L_tr / L_gen <= ``loss_star``; ``0`` if
    already at t = 0, ``inf`` if the late-time limit is not below ``loss_star`` (spec
    ``levi:grok-def``); ``grok_time = t_gen - t_train`` (NaN if both are infinite).
    """

    t_train: np.ndarray
    t_gen: np.ndarray
    grok_time: np.ndarray
    config: SpectralConfig


@dataclasses.dataclass(frozen=True, eq=False)
class SpectralDraws:
    r"""Teacher-student draws in the eigenbasis of their training covariance: one ``eigh`` serves many runs.

    With :math:`\Sigma_{\rm tr} = X^\top X/N = V{\rm diag}(\nu)V^\top` (eigenvalues below
    ``nu_max * max(N, d_in) * machine eps`` set to 0, as in :func:`run_gd_spectral`):
    ``nu`` (*batch, d_in); ``Tb = V^T T`` and ``Sb = V^T S0`` of the draw with ``init_scale = 1``;
    ``Zb = V^T X^T z / N`` and ``zz = |z|^2 / N`` of its label noise ``z`` at ``sigma2 = 1``.  The fields
    ``init_scale`` / ``sigma2`` select the variant ``S0 = init_scale * S0(1)``, ``delta = sqrt(sigma2) z`` --
    exactly the draws of :func:`make_teacher_student` with those arguments and the same keys (up to
    float64 rounding of the scaling) -- so :func:`run_gd_spectral` and :func:`crossing_times` accept it in
    place of the data and skip the eigendecomposition.  Build with :func:`spectral_draws`; change the
    variant with :meth:`variant`.
    """

    nu: jax.Array
    Tb: jax.Array
    Sb: jax.Array
    Zb: jax.Array
    zz: jax.Array
    d_in: int
    d_out: int
    n_train: int
    lam: float
    seeds: tuple[int, ...] | None = None
    init_scale: float = 1.0
    sigma2: float = 0.0

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading (seed) axes of the array fields."""
        return tuple(self.nu.shape[:-1])

    def variant(self, *, init_scale: float | None = None, sigma2: float | None = None) -> "SpectralDraws":
        """The same draws with another student scale ``init_scale`` and/or label-noise variance ``sigma2``."""
        kw: dict[str, float] = {}
        if init_scale is not None:
            kw["init_scale"] = float(np.asarray(init_scale, dtype=np.float64))
            if not np.isfinite(kw["init_scale"]):
                raise DomainError(f"init_scale must be finite (got {init_scale!r})")
        if sigma2 is not None:
            kw["sigma2"] = float(nonnegative(sigma2, "sigma2"))
        return dataclasses.replace(self, **kw)

    def take(self, n: int) -> "SpectralDraws":
        """The first ``n`` draws of a 1-D seed batch."""
        n = integer_at_least(n, "n", 1)
        if len(self.batch_shape) != 1 or n > self.batch_shape[0]:
            raise DomainError(f"n must be <= the number of draws {self.batch_shape} of a 1-D batch (got {n})")
        return dataclasses.replace(self, nu=self.nu[:n], Tb=self.Tb[:n], Sb=self.Sb[:n], Zb=self.Zb[:n],
                                   zz=self.zz[:n], seeds=None if self.seeds is None else self.seeds[:n])

    @staticmethod
    def concatenate(parts: "Sequence[SpectralDraws]") -> "SpectralDraws":
        """Join 1-D seed batches of the same configuration along the seed axis."""
        first = parts[0]
        cat = {k: jnp.concatenate([getattr(p, k) for p in parts]) for k in ("nu", "Tb", "Sb", "Zb", "zz")}
        seeds = None if any(p.seeds is None for p in parts) else tuple(s for p in parts for s in p.seeds)
        return dataclasses.replace(first, seeds=seeds, **cat)


@dataclasses.dataclass(frozen=True)
class TwoLayerConfig:
    """Configuration of :func:`run_two_layer`."""

    d_in: int
    d_h: int
    d_out: int
    n_train: int
    lam: float
    seeds: tuple[int, ...] | None
    activation: str
    eta: float | tuple[float, ...]
    gamma: float | tuple[float, ...]
    wd_convention: str
    steps: int
    record_every: int
    n_gen: int


@dataclasses.dataclass(frozen=True)
class FreshNoiseConfig:
    """Configuration of :func:`run_gd_fresh_noise`."""

    d_in: int
    d_out: int
    n_train: int
    lam: float
    init_scale: float
    seeds: tuple[int, ...] | None
    eta: float
    gamma: float
    wd_convention: str
    sigma2: float
    steps: int
    record_every: int
    noise_seed: int


# --------------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------------


def _check_data(data: Any, cls: type | tuple[type, ...]) -> None:
    if not isinstance(data, cls):
        if cls is TwoLayerData:
            want = "a TwoLayerData (from make_two_layer_teacher_student)"
        elif isinstance(cls, tuple):
            want = "a TeacherStudentData (from make_teacher_student) or SpectralDraws (from spectral_draws)"
        else:
            want = f"a {cls.__name__} (from make_teacher_student)"
        raise DomainError(f"data must be {want} (got {type(data).__name__})")


def _hyper(value: Any, name: str, kind: str) -> tuple[np.ndarray, float | tuple[float, ...]]:
    """Validate a scalar or 1-D hyperparameter grid; returns (array, config value)."""
    a = positive(value, name) if kind == "positive" else nonnegative(value, name)
    if a.ndim > 1:
        raise DomainError(f"{name} must be a scalar or a 1-D grid (got shape {a.shape})")
    return a, (float(a) if a.ndim == 0 else tuple(float(x) for x in a))


def _grid(eta: np.ndarray, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """Broadcast eta and gamma to one grid axis (or none if both are scalars)."""
    if eta.ndim == 0 and gamma.ndim == 0:
        return eta, gamma, ()
    try:
        e, g = np.broadcast_arrays(np.atleast_1d(eta), np.atleast_1d(gamma))
    except ValueError:
        raise DomainError(f"eta and gamma grids must have the same length (got {eta.shape} and {gamma.shape})") from None
    return e.copy(), g.copy(), (e.shape[0],)


def _batch_axes(inputs: dict, per_grid: Sequence[str], n_grid: int, n_data: int,
                shared: Sequence[str] = ()) -> list[dict]:
    """in_axes for a grid axis (outermost; keys ``per_grid`` batched) then ``n_data`` data (seed) axes
    (every other key batched, except the ``shared`` ones)."""
    axes = []
    if n_grid:
        axes.append({k: (0 if k in per_grid else None) for k in inputs})
    axes.extend({k: (None if k in per_grid or k in shared else 0) for k in inputs} for _ in range(n_data))
    return axes


def _vmap_n(fn: Any, n: int) -> Any:
    for _ in range(n):
        fn = jax.vmap(fn)
    return fn


def _stability_hint(d_out: int) -> str:
    return (f"full-batch GD on this model is stable iff eta < d_out / (nu_max + gamma/2) with nu_max ~ (1 + sqrt(lam))^2 "
            f"the largest eigenvalue of X^T X / N and d_out = {d_out} (spec levi:eq3)")


@functools.partial(jax.jit, static_argnames=("n_batch",))
def _gram(X: jax.Array, delta: jax.Array, n_batch: int) -> dict[str, jax.Array]:
    def one(x: jax.Array, d: jax.Array) -> dict[str, jax.Array]:
        n = x.shape[0]
        sigma = x.T @ x / n
        sigma = 0.5 * (sigma + sigma.T)
        return {"Sigma": sigma, "F": x.T @ d / n, "noise": jnp.sum(d * d) / n}

    return _vmap_n(one, n_batch)(X, delta)


# --------------------------------------------------------------------------------------------
# Explicit GD (the engine)
# --------------------------------------------------------------------------------------------


def _linear_grad(S: jax.Array, inp: dict[str, jax.Array]) -> jax.Array:
    """Gradient of L_tr = (1/(N d_out)) ||X S - Y||^2 in S: (2/d_out) (Sigma D - F)."""
    D = S - inp["T"]
    return (2.0 / D.shape[-1]) * (inp["Sigma"] @ D - inp["F"])


def _linear_metrics(state: Any, inp: dict[str, jax.Array]) -> dict[str, jax.Array]:
    S = state[0]
    D = S - inp["T"]
    d_out = D.shape[-1]
    out = {
        "loss_train": (jnp.vdot(D, inp["Sigma"] @ D) - 2.0 * jnp.vdot(D, inp["F"]) + inp["noise"]) / d_out,
        "loss_gen": jnp.vdot(D, D) / d_out,
    }
    if "eps" in inp:
        r_tr = inp["X"] @ D - inp["delta"]
        out["acc_train"] = jnp.mean(jnp.mean(r_tr * r_tr, axis=-1) < inp["eps"])
        if "X_gen" in inp:
            r_gen = inp["X_gen"] @ D
            out["acc_gen"] = jnp.mean(jnp.mean(r_gen * r_gen, axis=-1) < inp["eps"])
    return out


_LINEAR_STEP = optax_step(_linear_grad, sgd_weight_decay)


def _gen_inputs(key: jax.Array, n_gen: int, d_in: int, n_batch: int) -> jax.Array:
    """Fresh test inputs, N(0, I), from a key derived from the draw's key (fold_in 1)."""
    def one(k: jax.Array) -> jax.Array:
        return jax.random.normal(jax.random.fold_in(k, 1), (n_gen, d_in), dtype=jnp.float64)

    return _vmap_n(one, n_batch)(key)


@cites("levi:eq3", "levi:eq13", "levi:conv-wd", "levi:conv-acc", "levi:eq1", "levi:eq2")
def run_gd(data: TeacherStudentData, eta: Any, steps: int, *, gamma: Any = 0.0, record_every: int = 1,
           wd_convention: str = "paper", eps: float | None = None, n_gen: int = 0, progress: bool = False,
           save_path: str | os.PathLike | None = None, resume: bool = False, overwrite: bool = False,
           on_divergence: str = "raise_if_all") -> Trajectory:
    """Explicit full-batch GD of the linear student, recording the losses every ``record_every`` steps.

    .. math::
        S_{t+1} = S_t - \\eta\\Big[\\frac{2}{d_{\\rm out}}(\\Sigma_{\\rm tr} D_t - F) + c\\, S_t\\Big],\\quad
        D = S - T,\\ F = X^\\top\\delta/N_{\\rm tr},\\ c = \\gamma/d_{\\rm out}\\ (\\text{paper}) \\text{ or } \\gamma\\ (\\text{torch})

        \\mathcal L_{\\rm tr} = \\frac{1}{N_{\\rm tr} d_{\\rm out}}\\|X S - (X T + \\delta)\\|^2
        = \\frac{{\\rm Tr}(D^\\top\\Sigma D) - 2{\\rm Tr}(D^\\top F) + \\|\\delta\\|^2/N_{\\rm tr}}{d_{\\rm out}},\\qquad
        \\mathcal L_{\\rm gen} = \\frac{\\|D\\|_F^2}{d_{\\rm out}}

    Implemented with optax (``add_decayed_weights(c)`` then ``sgd(eta)``) in the jit + scan +
    vmap engine; batched over the data's seed axes and, if ``eta`` or ``gamma`` is a 1-D array,
    over that grid (outermost axis).

    Parameters
    ----------
    data : TeacherStudentData
        From :func:`make_teacher_student` / :func:`draw_teacher_student` (float64).
    eta : float > 0 or 1-D array of them
        Learning rate (GD stable iff ``eta < d_out / (nu_max + gamma/2)``).
    steps : int >= 1, a multiple of ``record_every``
    gamma : float >= 0 or 1-D array of them
        Weight decay in ``wd_convention``.
    record_every : int >= 1
    wd_convention : {"paper", "torch"}
    eps : float > 0, optional
        If given, also record the empirical accuracies ``acc_train`` (on the training set, residual
        to the training labels) and, if ``n_gen > 0``, ``acc_gen`` on ``n_gen`` fresh inputs: a
        sample is correct iff its mean squared error over outputs is ``< eps`` (spec ``levi:conv-acc``).
    n_gen : int >= 0
        Number of fresh test inputs (drawn from the data's key; memory ``n_gen * d_in`` per run).
    progress, save_path, resume, overwrite, on_divergence
        See :func:`grokclocks.sim.train.simulate`.

    Returns
    -------
    Trajectory
        ``times`` = steps; metrics ``loss_train``, ``loss_gen`` (and ``acc_train``, ``acc_gen``) of
        shape ``(*grid, *data.batch_shape, n_records)``; ``config`` a :class:`LinearGDConfig`.

    Raises
    ------
    SimulationDiverged
        If a loss becomes NaN/inf (learning rate too large).

    References
    ----------
    Spec ``levi:eq3`` / ``levi:eq13`` (paper eqs. 3, 13), ``levi:conv-wd``, ``levi:conv-acc``, losses ``levi:eq1``/``levi:eq2``.
    """
    enable_x64()
    _check_data(data, TeacherStudentData)
    eta_a, eta_c = _hyper(eta, "eta", "positive")
    gamma_a, gamma_c = _hyper(gamma, "gamma", "nonnegative")
    wd_convention = choice(wd_convention, "wd_convention", ("paper", "torch"))
    steps, record_every = check_record_every(steps, record_every)
    on_divergence = choice(on_divergence, "on_divergence", ON_DIVERGENCE)
    check_run_path(save_path, resume=resume, overwrite=overwrite)
    n_gen = integer_at_least(n_gen, "n_gen", 0)
    if eps is not None:
        eps = positive(eps, "eps", scalar=True)
    elif n_gen:
        raise DomainError("n_gen > 0 needs eps (the accuracy threshold) (got eps=None)")
    eta_a, gamma_a, grid = _grid(eta_a, gamma_a)
    batch = data.batch_shape
    nb = len(batch)

    inputs: dict[str, Any] = dict(_gram(data.X, data.delta, nb))
    inputs["T"] = data.T
    inputs["eta"] = jnp.asarray(eta_a, jnp.float64)
    inputs["decay"] = jnp.asarray(weight_decay_coefficient(gamma_a, data.d_out, wd_convention), jnp.float64)
    if eps is not None:
        inputs["X"] = data.X
        inputs["delta"] = data.delta
        if n_gen:
            inputs["X_gen"] = _gen_inputs(data.key, n_gen, data.d_in, nb)
        inputs["eps"] = jnp.asarray(eps, jnp.float64)
    axes = _batch_axes(inputs, ("eta", "decay"), len(grid), nb, shared=("eps",))
    state0 = optax_init(sgd_weight_decay, _broadcast_front(data.S0, grid), inputs, axes)
    config = LinearGDConfig(d_in=data.d_in, d_out=data.d_out, n_train=data.n_train, lam=data.lam,
                            init_scale=data.init_scale, sigma2=data.sigma2, seeds=data.seeds, eta=eta_c,
                            gamma=gamma_c, wd_convention=wd_convention, steps=steps, record_every=record_every,
                            eps=eps, n_gen=n_gen)
    return simulate(_LINEAR_STEP, _linear_metrics, state0, inputs, steps=steps, record_every=record_every,
                    batch_axes=axes, config=config, progress=progress, save_path=save_path, resume=resume,
                    overwrite=overwrite, on_divergence=on_divergence, divergence_hint=_stability_hint(data.d_out))


def _broadcast_front(x: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    return jnp.broadcast_to(x, shape + x.shape)


# --------------------------------------------------------------------------------------------
# Exact GD in the eigenbasis
# --------------------------------------------------------------------------------------------


def _eig(X: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Eigenpairs of Sigma_tr = X^T X / N of one draw; eigenvalues below the round-off level set to 0."""
    n, d_in = X.shape
    sigma = X.T @ X / n
    nu, V = jnp.linalg.eigh(0.5 * (sigma + sigma.T))
    tol = jnp.max(jnp.abs(nu)) * max(n, d_in) * jnp.finfo(nu.dtype).eps
    return jnp.where(nu > tol, nu, 0.0), V


def _coefficients(nu: jax.Array, Tb: jax.Array, D0b: jax.Array, Fb: jax.Array, noise: jax.Array, eta: jax.Array,
                  decay: jax.Array) -> dict[str, jax.Array]:
    """Per-mode coefficients of the exact GD iterates from the projections on the eigenbasis."""
    d_out = Tb.shape[-1]
    Fb = jnp.where((nu > 0)[:, None], Fb, 0.0)  # exactly zero on the null space of X
    rate = 2.0 * nu / d_out + decay  # rho = 1 - eta * rate
    safe = jnp.where(rate > 0, rate, 1.0)
    Dinf = jnp.where((rate > 0)[:, None], ((2.0 / d_out) * Fb - decay * Tb) / safe[:, None], 0.0)
    A = D0b - Dinf
    return {
        "nu": nu,
        "rho": 1.0 - eta * rate,
        "a": jnp.sum(A * A, axis=1),
        "c": jnp.sum(A * Dinf, axis=1),
        "b": jnp.sum(Dinf * Dinf, axis=1),
        "fa": jnp.sum(A * Fb, axis=1),
        "fb": jnp.sum(Dinf * Fb, axis=1),
        "noise": noise,
        "d_out": jnp.asarray(d_out, nu.dtype),
    }


def _spectral_one(X: jax.Array, T: jax.Array, S0: jax.Array, delta: jax.Array, eta: jax.Array,
                  decay: jax.Array) -> dict[str, jax.Array]:
    """Eigen-decomposition of one draw and the per-mode coefficients of the exact GD iterates."""
    n = X.shape[0]
    nu, V = _eig(X)
    return _coefficients(nu, V.T @ T, V.T @ (S0 - T), V.T @ (X.T @ delta / n), jnp.sum(delta * delta) / n, eta,
                         decay)


def _projected_one(nu: jax.Array, Tb: jax.Array, Sb: jax.Array, Zb: jax.Array, zz: jax.Array, scale: jax.Array,
                   sigma2: jax.Array, eta: jax.Array, decay: jax.Array) -> dict[str, jax.Array]:
    """The coefficients of :func:`_spectral_one` from :class:`SpectralDraws` projections (no eigh)."""
    return _coefficients(nu, Tb, scale * Sb - Tb, jnp.sqrt(sigma2) * Zb, sigma2 * zz, eta, decay)


def _project_one(X: jax.Array, T: jax.Array, S0: jax.Array, delta: jax.Array) -> dict[str, jax.Array]:
    """Eigenvalues of one draw and V^T T, V^T S0, V^T X^T delta / N, |delta|^2 / N."""
    n = X.shape[0]
    nu, V = _eig(X)
    return {"nu": nu, "Tb": V.T @ T, "Sb": V.T @ S0, "Zb": V.T @ (X.T @ delta / n), "zz": jnp.sum(delta * delta) / n}


@functools.lru_cache(maxsize=None)
def _project_fn(n_douts: int) -> Any:
    def fn(X: jax.Array, Ts: tuple, S0s: tuple, deltas: tuple) -> tuple:
        n = X.shape[0]
        nu, V = _eig(X)
        out = []
        for T, S0, delta in zip(Ts, S0s, deltas):
            out.append({"Tb": V.T @ T, "Sb": V.T @ S0, "Zb": V.T @ (X.T @ delta / n), "zz": jnp.sum(delta * delta) / n})
        return nu, tuple(out)

    return jax.jit(jax.vmap(fn))


@cites("levi:conv-data", "levi:gd-exact")
def spectral_draws(d_in: int, lam: float, d_outs: int | Sequence[int] = (1,), *,
                   seeds: Sequence[int] = (0,)) -> dict[int, SpectralDraws]:
    r"""Teacher-student draws of :func:`draw_teacher_student` decomposed once for several ``d_out``.

    The inputs ``X`` of a seed do not depend on ``d_out`` (spec section 7.1 splits the key into X, T,
    S0, noise), so one ``eigh`` of :math:`\Sigma_{\rm tr}` per seed serves every output dimension,
    student scale and label-noise variance: the result holds, per ``d_out``, the projections of the
    draw (``init_scale = 1``, unit noise) on the eigenbasis; select a variant with
    :meth:`SpectralDraws.variant` and pass it to :func:`run_gd_spectral` / :func:`crossing_times`.

    Parameters
    ----------
    d_in : int >= 1; lam : float > 0
    d_outs : int or sequence of int >= 1
    seeds : sequence of int >= 0 (a leading batch axis)

    Returns
    -------
    dict d_out -> SpectralDraws (``sigma2 = 0``, ``init_scale = 1``)

    References
    ----------
    Spec ``levi:conv-data`` (keys ``PRNGKey(1000 d_in + seed)``), ``levi:gd-exact`` (section 7.1).
    """
    enable_x64()
    outs = tuple(integer_at_least(k, "d_out", 1) for k in np.atleast_1d(d_outs).tolist())
    if not outs:
        raise DomainError("d_outs must not be empty")
    seed_tuple = tuple(integer_at_least(s, "seed", 0) for s in np.atleast_1d(seeds).tolist())
    keys = teacher_student_keys(d_in, list(seed_tuple))
    draws = [make_teacher_student(keys, d_in, lam, k, init_scale=1.0, sigma2=1.0, seeds=seed_tuple) for k in outs]
    nu, proj = _project_fn(len(outs))(draws[0].X, tuple(d.T for d in draws), tuple(d.S0 for d in draws),
                                      tuple(d.delta for d in draws))
    first = draws[0]
    return {k: SpectralDraws(nu=nu, d_in=first.d_in, d_out=k, n_train=first.n_train, lam=first.lam, seeds=seed_tuple,
                             **pr)
            for k, pr in zip(outs, proj)}


def _power(rho: jax.Array, t: jax.Array) -> jax.Array:
    """rho**t for real t >= 0 (rho < 0 only for integer t; 0**0 = 1)."""
    mag = jnp.power(jnp.abs(rho), t)
    odd = jnp.mod(t, 2.0) == 1.0
    return jnp.where((rho < 0) & odd, -mag, mag)


def _spectral_losses(dec: dict[str, jax.Array], t: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(L_tr(t), L_gen(t)) of one draw at times t (any shape)."""
    P = _power(dec["rho"], t[..., None])
    mode = P * P * dec["a"] + 2.0 * P * dec["c"] + dec["b"]
    l_gen = jnp.sum(mode, axis=-1) / dec["d_out"]
    l_tr = (jnp.sum(dec["nu"] * mode, axis=-1) - 2.0 * jnp.sum(P * dec["fa"] + dec["fb"], axis=-1)
            + dec["noise"]) / dec["d_out"]
    return l_tr, l_gen


@functools.lru_cache(maxsize=None)
def _spectral_fns(n_batch: int) -> tuple[Any, Any]:
    dec = jax.jit(_vmap_n(_spectral_one, n_batch), static_argnums=())
    losses = jax.jit(_vmap_n(_spectral_losses, n_batch))
    return dec, losses


@functools.lru_cache(maxsize=None)
def _projected_fn(n_batch: int) -> Any:
    return jax.jit(_vmap_n(_projected_one, n_batch))


def _decompose(data: TeacherStudentData | SpectralDraws, eta: float, gamma: float,
               wd_convention: str) -> dict[str, jax.Array]:
    nb = len(data.batch_shape)
    decay = weight_decay_coefficient(gamma, data.d_out, wd_convention)
    e = jnp.broadcast_to(jnp.asarray(eta, jnp.float64), data.batch_shape)
    c = jnp.broadcast_to(jnp.asarray(decay, jnp.float64), data.batch_shape)
    if isinstance(data, SpectralDraws):
        a = jnp.broadcast_to(jnp.asarray(data.init_scale, jnp.float64), data.batch_shape)
        s2 = jnp.broadcast_to(jnp.asarray(data.sigma2, jnp.float64), data.batch_shape)
        return _projected_fn(nb)(data.nu, data.Tb, data.Sb, data.Zb, data.zz, a, s2, e, c)
    dec_fn, _ = _spectral_fns(nb)
    return dec_fn(data.X, data.T, data.S0, data.delta, e, c)


def _check_rho(dec: dict[str, jax.Array], config: Any, *, continuous: bool, t_nonint: bool) -> None:
    rho = np.asarray(dec["rho"])
    if np.any(rho < -1.0):
        raise SimulationDiverged(1, "mode growth factor |1 - eta (2 nu/d_out + c)|", config,
                                 f"GD diverges from the first step: min rho = {rho.min():.4g} < -1; "
                                 + _stability_hint(config.d_out))
    if np.any(rho < 0) and (continuous or t_nonint):
        raise DomainError(f"eta must be < d_out / (2 nu_max + c) = {float(config.eta) / (1 - rho.min()):.6g} for "
                          f"continuous (non-integer) t: some modes oscillate (rho = {rho.min():.4g} < 0) "
                          f"(got eta={config.eta!r})")


@cites("levi:eq5", "levi:eq33", "levi:gd-exact", "levi:eq3")
def run_gd_spectral(data: TeacherStudentData, eta: float, ts: Any, *, gamma: float = 0.0,
                    wd_convention: str = "paper") -> Trajectory:
    """The exact GD iterates of :func:`run_gd` in closed form, from ``eigh`` of the training Gram matrix.

    .. math::
        \\Sigma_{\\rm tr} = V{\\rm diag}(\\nu)V^\\top,\\quad \\bar D_t = V^\\top D_t
        = \\rho^t(\\bar D_0 - \\bar D_\\infty) + \\bar D_\\infty,\\quad
        \\rho = 1 - \\eta\\Big(\\frac{2\\nu}{d_{\\rm out}} + c\\Big),\\quad
        \\bar D_\\infty = \\frac{\\frac{2}{d_{\\rm out}}\\bar F - c\\bar T}{\\frac{2\\nu}{d_{\\rm out}} + c}

    (``c = gamma/d_out`` paper convention; modes with ``2 nu/d_out + c = 0`` do not move, and
    eigenvalues below ``nu_max * max(N, d_in) * machine eps`` are the null space, set to 0), and
    the losses of :func:`run_gd` evaluated on it.  This *is* GD, not an approximation; ``t`` may
    be real (continuous interpolation ``rho**t``) when every ``rho > 0``.

    Parameters
    ----------
    data : TeacherStudentData or SpectralDraws
        The draws, or their eigen-projections from :func:`spectral_draws` (no ``eigh`` then).
    eta : float > 0
    ts : array of float >= 0 (1-D)
        Times (GD steps) at which to evaluate.
    gamma : float >= 0; wd_convention : {"paper", "torch"}

    Returns
    -------
    Trajectory
        ``times = ts``; ``loss_train``, ``loss_gen`` of shape ``(*data.batch_shape, len(ts))``;
        ``config`` a :class:`SpectralConfig`.

    Raises
    ------
    SimulationDiverged
        If some mode has ``rho < -1`` (GD diverges).
    DomainError
        For non-integer ``ts`` while some ``rho < 0``, and invalid arguments.

    References
    ----------
    Spec ``levi:eq5``, ``levi:gd-exact`` (section 7.1), per-mode solution ``levi:eq33`` in GD form, update ``levi:eq3``.
    """
    enable_x64()
    _check_data(data, (TeacherStudentData, SpectralDraws))
    eta = positive(eta, "eta", scalar=True)
    gamma = nonnegative(gamma, "gamma", scalar=True)
    wd_convention = choice(wd_convention, "wd_convention", ("paper", "torch"))
    t = nonnegative(ts, "ts")
    if t.ndim != 1:
        raise DomainError(f"ts must be a 1-D array of times (got shape {t.shape})")
    config = SpectralConfig(d_in=data.d_in, d_out=data.d_out, n_train=data.n_train, lam=data.lam,
                            init_scale=data.init_scale, sigma2=data.sigma2, seeds=data.seeds, eta=eta, gamma=gamma,
                            wd_convention=wd_convention)
    dec = _decompose(data, eta, gamma, wd_convention)
    _check_rho(dec, config, continuous=False, t_nonint=bool(np.any(t != np.round(t))))
    nb = len(data.batch_shape)
    _, loss_fn = _spectral_fns(nb)
    tt = jnp.broadcast_to(jnp.asarray(t, jnp.float64), data.batch_shape + t.shape)
    l_tr, l_gen = jax.device_get(loss_fn(dec, tt))
    return Trajectory(times=t, metrics={"loss_train": np.asarray(l_tr), "loss_gen": np.asarray(l_gen)}, config=config)


_N_DOUBLINGS = 64  # bracket search on t = 0, 1, 2, 4, ..., 2**63
_N_BISECTIONS = 80  # halves the bracket 2**80 times: far below float64 resolution of t


def _crossing_one(dec: dict[str, jax.Array], loss_star: jax.Array) -> tuple[jax.Array, jax.Array]:
    """First t with L(t) <= loss_star for train and gen (0 if at t=0, inf if never), by bisection."""
    grid = jnp.concatenate([jnp.zeros(1), 2.0 ** jnp.arange(_N_DOUBLINGS - 1, dtype=jnp.float64)])
    l_tr, l_gen = _spectral_losses(dec, grid)

    def one(curve: jax.Array, which: int) -> jax.Array:
        below = curve <= loss_star
        k = jnp.argmax(below)
        lo = grid[jnp.maximum(k - 1, 0)]
        hi = grid[k]

        def body(_: Any, bracket: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
            a, b = bracket
            mid = 0.5 * (a + b)
            ok = _spectral_losses(dec, mid)[which] <= loss_star
            return jnp.where(ok, a, mid), jnp.where(ok, mid, b)

        _, hi = jax.lax.fori_loop(0, _N_BISECTIONS, body, (lo, hi))
        return jnp.where(below[0], 0.0, jnp.where(jnp.any(below), hi, jnp.inf))

    return one(l_tr, 0), one(l_gen, 1)


@functools.lru_cache(maxsize=None)
def _crossing_fn(n_batch: int) -> Any:
    return jax.jit(_vmap_n(_crossing_one, n_batch))


@cites("levi:tstar", "levi:grok-def", "levi:gd-exact")
def crossing_times(data: TeacherStudentData, eta: float, loss_star: float, *, gamma: float = 0.0,
                   wd_convention: str = "paper") -> CrossingTimes:
    """First (continuous) GD time at which the train / gen loss reaches ``loss_star``, per seed.

    .. math::
        t^*_{\\rm tr/gen} = \\min\\{t \\ge 0 : \\mathcal L_{\\rm tr/gen}(t) \\le \\mathcal L^*\\},\\qquad
        \\Delta t = t^*_{\\rm gen} - t^*_{\\rm tr}

    with the exact GD losses of :func:`run_gd_spectral` on continuous ``t``: a bracket from the
    doubling grid ``t = 0, 1, 2, 4, ...`` (first grid point with ``L <= L*``), then 80 bisections.
    For losses that decrease monotonically (no weight decay, no label noise, ``rho > 0``) this is the
    first crossing; otherwise it is a crossing inside the first bracket.  ``t* = 0`` if
    ``L(0) <= L*``; ``t* = inf`` if no grid point up to ``2**62`` steps is below ``L*`` (e.g. when the
    ``t -> inf`` limit is not below ``L*``, spec ``levi:grok-def``).

    Parameters
    ----------
    data : TeacherStudentData or SpectralDraws
        The draws, or their eigen-projections from :func:`spectral_draws` (no ``eigh`` then).
    eta : float > 0
        Must satisfy ``eta < d_out / (2 nu_max / 2 + ...)`` so that every ``rho > 0`` (continuous t).
    loss_star : float > 0
        The loss threshold ``L*`` (e.g. ``grokclocks.linear.loss_threshold(eps, d_out, level)``).
    gamma : float >= 0; wd_convention : {"paper", "torch"}

    Returns
    -------
    CrossingTimes
        ``t_train``, ``t_gen``, ``grok_time`` of shape ``data.batch_shape``.

    References
    ----------
    Spec ``levi:tstar``, ``levi:grok-def``, section 7.1 (bisection with the exact GD iterates).
    """
    enable_x64()
    _check_data(data, (TeacherStudentData, SpectralDraws))
    eta = positive(eta, "eta", scalar=True)
    gamma = nonnegative(gamma, "gamma", scalar=True)
    loss_star = positive(loss_star, "loss_star", scalar=True)
    wd_convention = choice(wd_convention, "wd_convention", ("paper", "torch"))
    config = SpectralConfig(d_in=data.d_in, d_out=data.d_out, n_train=data.n_train, lam=data.lam,
                            init_scale=data.init_scale, sigma2=data.sigma2, seeds=data.seeds, eta=eta, gamma=gamma,
                            wd_convention=wd_convention, loss_star=loss_star)
    dec = _decompose(data, eta, gamma, wd_convention)
    _check_rho(dec, config, continuous=True, t_nonint=True)
    nb = len(data.batch_shape)
    ls = jnp.broadcast_to(jnp.asarray(loss_star, jnp.float64), data.batch_shape)
    t_tr, t_gen = (np.asarray(x) for x in jax.device_get(_crossing_fn(nb)(dec, ls)))
    with np.errstate(invalid="ignore"):
        dt = t_gen - t_tr
    return CrossingTimes(t_train=t_tr, t_gen=t_gen, grok_time=dt, config=config)


# --------------------------------------------------------------------------------------------
# Two-layer network
# --------------------------------------------------------------------------------------------


def _two_layer_loss_linear(params: dict[str, jax.Array], inp: dict[str, jax.Array]) -> jax.Array:
    """L_tr = Tr(D^T Sigma D)/d_out with D = S0 S1 - T0 T1 (exact for a linear hidden layer)."""
    D = params["S0"] @ params["S1"] - inp["T"]
    return jnp.vdot(D, inp["Sigma"] @ D) / D.shape[-1]


def _two_layer_loss_tanh(params: dict[str, jax.Array], inp: dict[str, jax.Array]) -> jax.Array:
    """L_tr = (1/(N d_out)) sum_i ||S1^T tanh(S0^T x_i) - y_i||^2."""
    pred = jnp.tanh(inp["X"] @ params["S0"]) @ params["S1"]
    return jnp.mean(jnp.square(pred - inp["Y"]))


def _two_layer_metrics_common(params: dict[str, jax.Array], inp: dict[str, jax.Array]) -> dict[str, jax.Array]:
    D = params["S0"] @ params["S1"] - inp["T"]
    return {"norm_D_sq": jnp.vdot(D, D),
            "h": 0.5 * (jnp.vdot(params["S0"], params["S0"]) + jnp.vdot(params["S1"], params["S1"]))}


def _two_layer_metrics_linear(state: Any, inp: dict[str, jax.Array]) -> dict[str, jax.Array]:
    params = state[0]
    out = _two_layer_metrics_common(params, inp)
    d_out = params["S1"].shape[-1]
    out["loss_train"] = _two_layer_loss_linear(params, inp)
    out["loss_gen"] = out["norm_D_sq"] / d_out
    return out


def _two_layer_metrics_tanh(state: Any, inp: dict[str, jax.Array]) -> dict[str, jax.Array]:
    params = state[0]
    out = _two_layer_metrics_common(params, inp)
    out["loss_train"] = _two_layer_loss_tanh(params, inp)
    pred = jnp.tanh(inp["X_gen"] @ params["S0"]) @ params["S1"]
    out["loss_gen"] = jnp.mean(jnp.square(pred - inp["Y_gen"]))
    return out


_TWO_LAYER = {
    "linear": (optax_step(jax.grad(_two_layer_loss_linear), sgd_weight_decay), _two_layer_metrics_linear),
    "tanh": (optax_step(jax.grad(_two_layer_loss_tanh), sgd_weight_decay), _two_layer_metrics_tanh),
}


@cites("levi:eq16", "levi:eq40", "levi:tanh", "levi:fig4")
def run_two_layer(data: TwoLayerData, eta: Any, steps: int, *, activation: str = "linear", gamma: Any = 0.0,
                  record_every: int = 1, wd_convention: str = "paper", n_gen: int = 4096, progress: bool = False,
                  save_path: str | os.PathLike | None = None, resume: bool = False, overwrite: bool = False,
                  on_divergence: str = "raise_if_all") -> Trajectory:
    """Explicit full-batch GD on (S0, S1) of the two-layer net f(x) = S1^T sigma(S0^T x).

    .. math::
        \\mathcal L_{\\rm tr} = \\frac{1}{N d_{\\rm out}}\\sum_i\\|S_1^\\top\\sigma(S_0^\\top x_i) - T_1^\\top\\sigma(T_0^\\top x_i)\\|^2,\\quad
        (S_0, S_1) \\leftarrow (S_0, S_1) - \\eta\\,\\nabla\\mathcal L_{\\rm tr}\\ (+\\ c\\,(S_0,S_1))

    Linear sigma: ``L_tr = Tr(D^T Sigma D)/d_out``, ``L_gen = ||D||^2/d_out`` with
    ``D = S0 S1 - T0 T1`` (exact).  tanh: ``L_gen`` is sampled on ``n_gen`` fresh inputs (no closed
    form).  Also records ``norm_D_sq = ||S0 S1 - T0 T1||_F^2`` and ``h = (||S0||^2 + ||S1||^2)/2``.

    Parameters
    ----------
    data : TwoLayerData
        From :func:`make_two_layer_teacher_student` / :func:`draw_two_layer`.
    eta : float > 0 or 1-D grid
    steps : int >= 1 (multiple of ``record_every``)
    activation : {"linear", "tanh"}  (teacher and student)
    gamma : float >= 0 or 1-D grid; wd_convention : {"paper", "torch"}
    record_every : int >= 1
    n_gen : int >= 1
        Fresh inputs for the tanh generalisation loss (unused for linear).
    progress, save_path, resume, overwrite, on_divergence
        As in :func:`grokclocks.sim.train.simulate`.

    Returns
    -------
    Trajectory
        Metrics ``loss_train``, ``loss_gen``, ``norm_D_sq``, ``h``; config :class:`TwoLayerConfig`.

    References
    ----------
    Spec ``levi:eq16``, ``levi:eq40`` (paper eqs. 16, 39-40), ``levi:tanh``, ``levi:fig4``.
    """
    enable_x64()
    _check_data(data, TwoLayerData)
    act = choice(activation, "activation", ("linear", "tanh"))
    eta_a, eta_c = _hyper(eta, "eta", "positive")
    gamma_a, gamma_c = _hyper(gamma, "gamma", "nonnegative")
    wd_convention = choice(wd_convention, "wd_convention", ("paper", "torch"))
    steps, record_every = check_record_every(steps, record_every)
    on_divergence = choice(on_divergence, "on_divergence", ON_DIVERGENCE)
    check_run_path(save_path, resume=resume, overwrite=overwrite)
    n_gen = integer_at_least(n_gen, "n_gen", 1)
    eta_a, gamma_a, grid = _grid(eta_a, gamma_a)
    nb = len(data.batch_shape)
    sig = _activation(act)
    inputs: dict[str, Any] = {"T": data.T0 @ data.T1}
    if act == "linear":
        inputs["Sigma"] = _gram(data.X, jnp.zeros(data.X.shape[:-1] + (1,)), nb)["Sigma"]
    else:
        inputs["X"] = data.X
        inputs["Y"] = sig(data.X @ data.T0) @ data.T1
        xg = _gen_inputs(data.key, n_gen, data.d_in, nb)
        inputs["X_gen"] = xg
        inputs["Y_gen"] = sig(xg @ data.T0) @ data.T1
    inputs["eta"] = jnp.asarray(eta_a, jnp.float64)
    inputs["decay"] = jnp.asarray(weight_decay_coefficient(gamma_a, data.d_out, wd_convention), jnp.float64)
    axes = _batch_axes(inputs, ("eta", "decay"), len(grid), nb)
    params0 = {"S0": _broadcast_front(data.S0, grid), "S1": _broadcast_front(data.S1, grid)}
    state0 = optax_init(sgd_weight_decay, params0, inputs, axes)
    config = TwoLayerConfig(d_in=data.d_in, d_h=data.d_h, d_out=data.d_out, n_train=data.n_train, lam=data.lam,
                            seeds=data.seeds, activation=act, eta=eta_c, gamma=gamma_c, wd_convention=wd_convention,
                            steps=steps, record_every=record_every, n_gen=n_gen if act == "tanh" else 0)
    step, metrics = _TWO_LAYER[act]
    return simulate(step, metrics, state0, inputs, steps=steps, record_every=record_every, batch_axes=axes,
                    config=config, progress=progress, save_path=save_path, resume=resume,
                    overwrite=overwrite, on_divergence=on_divergence, divergence_hint=_stability_hint(data.d_out))


# --------------------------------------------------------------------------------------------
# Label noise redrawn every step (eigenbasis simulation)
# --------------------------------------------------------------------------------------------


def _fresh_prep(X: jax.Array, T: jax.Array, S0: jax.Array, key: jax.Array, eta: jax.Array, decay: jax.Array,
                sigma: jax.Array, noise_seed: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
    n, d_in = X.shape
    d_out = T.shape[-1]
    s = X.T @ X / n
    nu, V = jnp.linalg.eigh(0.5 * (s + s.T))
    tol = jnp.max(jnp.abs(nu)) * max(n, d_in) * jnp.finfo(nu.dtype).eps
    pos = nu > tol
    nu = jnp.where(pos, nu, 0.0)
    inp = {
        "nu": nu,
        "rho": 1.0 - eta * (2.0 * nu / d_out + decay),
        "kick": (2.0 * eta / d_out) * sigma * jnp.sqrt(nu / n),  # per-mode noise amplitude of eta*(2/d_out) F_t
        "wd_shift": eta * decay * (V.T @ T),
        "mask": pos.astype(nu.dtype),
        "sqrt_nu_n": jnp.sqrt(nu / n),
        "sigma": sigma,
        "n": jnp.asarray(n, nu.dtype),
        "key": jax.random.fold_in(jax.random.fold_in(key, 2), noise_seed),
    }
    return V.T @ (S0 - T), inp


def _fresh_xi(inp: dict[str, jax.Array], t: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    """U^T delta_t / sigma on the r modes with nu > 0 (iid N(0,1)); zero on the null space."""
    k = jax.random.fold_in(inp["key"], t)
    return jax.random.normal(k, shape, dtype=inp["nu"].dtype) * inp["mask"][:, None]


def _fresh_step(state: tuple[jax.Array, jax.Array], inp: dict[str, jax.Array]) -> tuple[jax.Array, jax.Array]:
    Db, t = state
    xi = _fresh_xi(inp, t, Db.shape)
    Db = inp["rho"][:, None] * Db + inp["kick"][:, None] * xi - inp["wd_shift"]
    return Db, t + 1


@functools.lru_cache(maxsize=None)
def _fresh_metrics(n_rest: int) -> Any:
    """Metrics of the fresh-noise run; ``n_rest = (N - rank) d_out`` noise components lie outside the
    column space of X (rank = min(N, d_in) for Gaussian X, almost surely)."""

    def metrics(state: tuple[jax.Array, jax.Array], inp: dict[str, jax.Array]) -> dict[str, jax.Array]:
        Db, t = state
        d_out = Db.shape[-1]
        xi = _fresh_xi(inp, t, Db.shape)
        rest = jax.random.normal(jax.random.fold_in(jax.random.fold_in(inp["key"], t), 1), (n_rest,), dtype=Db.dtype)
        clean = jnp.sum(inp["nu"][:, None] * Db * Db)
        cross = jnp.sum(inp["sqrt_nu_n"][:, None] * Db * xi)
        noise = (jnp.sum(xi * xi) + jnp.sum(rest * rest)) / inp["n"]
        s = inp["sigma"]
        return {
            "loss_train": (clean - 2.0 * s * cross + s * s * noise) / d_out,
            "loss_train_clean": clean / d_out,
            "loss_gen": jnp.sum(Db * Db) / d_out,
        }

    return metrics


@functools.lru_cache(maxsize=None)
def _fresh_prep_fn(n_batch: int) -> Any:
    return jax.jit(_vmap_n(_fresh_prep, n_batch))


@cites("levi:noise-fresh", "levi:fig6")
def run_gd_fresh_noise(data: TeacherStudentData, eta: float, steps: int, *, sigma2: float, gamma: float = 0.0,
                       wd_convention: str = "paper", record_every: int = 1, noise_seed: int = 0,
                       progress: bool = False, save_path: str | os.PathLike | None = None,
                       resume: bool = False, overwrite: bool = False, on_divergence: str = "raise_if_all") -> Trajectory:
    """GD with training-label noise redrawn at every step, simulated exactly in the eigenbasis of Sigma_tr.

    .. math::
        y_i^{(t)} = T^\\top x_i + \\delta_i^{(t)},\\ \\delta^{(t)} \\stackrel{iid}{\\sim}\\mathcal N(0,\\sigma^2 I),\\qquad
        \\bar D_{t+1} = \\rho\\,\\bar D_t + \\frac{2\\eta}{d_{\\rm out}}\\,\\sigma\\sqrt{\\nu/N}\\,\\xi_t - \\eta c\\,\\bar T,\\quad
        \\rho = 1 - \\eta\\Big(\\frac{2\\nu}{d_{\\rm out}} + c\\Big)

    using ``V^T X^T delta_t / N = sigma sqrt(nu/N) xi_t`` with ``xi_t = U^T delta_t / sigma`` iid
    N(0, 1) on the ``r`` modes with ``nu > 0`` (X = U diag(sqrt(N nu)) V^T), which is exact in
    distribution.  Records ``loss_gen = ||D||^2/d_out``, ``loss_train_clean = Tr(D^T Sigma D)/d_out``
    and ``loss_train`` = the loss on the current noisy labels,
    ``(1/(N d_out)) ||X D_t - delta^(t)||^2`` (with the chi-square of the ``(N - r) d_out`` noise
    components outside the column space of X).  The fixed noise ``data.delta`` is not used.

    Parameters
    ----------
    data : TeacherStudentData
    eta : float > 0; steps : int >= 1; sigma2 : float >= 0 (per-step label-noise variance)
    gamma : float >= 0; wd_convention : {"paper", "torch"}; record_every : int >= 1
    noise_seed : int >= 0
        Selects the noise sequence (derived from the draw's key).
    progress, save_path, resume, overwrite, on_divergence
        As in :func:`grokclocks.sim.train.simulate`.

    Returns
    -------
    Trajectory
        Metrics of shape ``(*data.batch_shape, n_records)``; config :class:`FreshNoiseConfig`.

    References
    ----------
    Spec ``levi:noise-fresh`` (fresh-per-step noise; the regime of paper Fig. 6, ``levi:fig6``).
    """
    enable_x64()
    _check_data(data, TeacherStudentData)
    eta = positive(eta, "eta", scalar=True)
    gamma = nonnegative(gamma, "gamma", scalar=True)
    sigma2 = nonnegative(sigma2, "sigma2", scalar=True)
    wd_convention = choice(wd_convention, "wd_convention", ("paper", "torch"))
    steps, record_every = check_record_every(steps, record_every)
    on_divergence = choice(on_divergence, "on_divergence", ON_DIVERGENCE)
    check_run_path(save_path, resume=resume, overwrite=overwrite)
    noise_seed = integer_at_least(noise_seed, "noise_seed", 0)
    batch = data.batch_shape
    nb = len(batch)

    def full(x: float) -> jax.Array:
        return jnp.broadcast_to(jnp.asarray(x, jnp.float64), batch)

    decay = weight_decay_coefficient(gamma, data.d_out, wd_convention)
    D0b, inputs = _fresh_prep_fn(nb)(data.X, data.T, data.S0, data.key, full(eta), full(decay),
                                     full(np.sqrt(sigma2)), jnp.broadcast_to(jnp.uint32(noise_seed), batch))
    state0 = (D0b, jnp.zeros(batch, jnp.int32))
    config = FreshNoiseConfig(d_in=data.d_in, d_out=data.d_out, n_train=data.n_train, lam=data.lam,
                              init_scale=data.init_scale, seeds=data.seeds, eta=eta, gamma=gamma,
                              wd_convention=wd_convention, sigma2=sigma2, steps=steps, record_every=record_every,
                              noise_seed=noise_seed)
    n_rest = max(data.n_train - data.d_in, 0) * data.d_out
    return simulate(_fresh_step, _fresh_metrics(n_rest), state0, inputs, steps=steps, record_every=record_every,
                    batch_axes=[0] * nb, config=config, progress=progress, save_path=save_path, resume=resume,
                    overwrite=overwrite, on_divergence=on_divergence, divergence_hint=_stability_hint(data.d_out))
