"""Linear teacher-student simulations: label noise redrawn every step (eigenbasis simulation)."""

from __future__ import annotations

import functools
import os
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..._validate import choice, integer_at_least, nonnegative, positive
from ...citations import cites
from .._runtime import enable_x64
from ..data import TeacherStudentData
from ..train import check_record_every, check_run_path, ON_DIVERGENCE, simulate, Trajectory, weight_decay_coefficient
from ._configs import FreshNoiseConfig
from ._helpers import _check_data, _stability_hint, _vmap_n


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
    r"""GD with training-label noise redrawn at every step, simulated exactly in the eigenbasis of Σ_tr.

    At step t the labels are y_i = Tᵀx_i + δ_i⁽ᵗ⁾ with fresh noise δ⁽ᵗ⁾ ~ N(0, σ²I); in the
    eigenbasis of Σ_tr each mode of the error D̄ = VᵀD contracts by ρ and receives a Gaussian kick:

    .. math::
        y_i^{(t)} = T^\top x_i + \delta_i^{(t)},\ \delta^{(t)} \stackrel{iid}{\sim}\mathcal N(0,\sigma^2 I),\qquad
        \bar D_{t+1} = \rho\,\bar D_t + \frac{2\eta}{d_{\rm out}}\,\sigma\sqrt{\nu/N}\,\xi_t - \eta c\,\bar T,\quad
        \rho = 1 - \eta\Big(\frac{2\nu}{d_{\rm out}} + c\Big)

    using VᵀXᵀδ_t/N = σ·√(ν/N)·ξ_t with ξ_t = Uᵀδ_t/σ iid N(0, 1) on the r modes with ν > 0
    (X = U·diag(√(N ν))·Vᵀ), which is exact in distribution.  Records `loss_gen` = ‖D‖²/d_out,
    `loss_train_clean` = Tr(DᵀΣD)/d_out and `loss_train`, the loss on the current noisy labels,
    ‖X D_t − δ⁽ᵗ⁾‖²/(N d_out) (with the chi-square of the (N − r)·d_out noise components outside
    the column space of X).  The fixed noise `data.delta` is not used.  Runs in float64.

    Parameters
    ----------
    data : TeacherStudentData
        The draws, from `make_teacher_student` or `draw_teacher_student`.
    eta : float
        Learning rate η > 0 (stable iff η < d_out/(ν_max + γ/2)).
    steps : int
        Number of GD steps, an integer ≥ 1 and a multiple of `record_every`.
    sigma2 : float
        Variance σ² ≥ 0 of the label noise redrawn at every step.
    gamma : float
        Weight decay γ ≥ 0 in the convention `wd_convention`; default 0.
    wd_convention : {"paper", "torch"}
        How `gamma` is meant: `"paper"` (default), the decay γ/d_out of paper eq. 3, or `"torch"`,
        PyTorch's `SGD(weight_decay=gamma)` (decay γ).
    record_every : int
        Steps between two records, an integer ≥ 1 dividing `steps`; default 1.
    noise_seed : int
        Selects the noise sequence, an integer ≥ 0 (the per-step keys derive from each draw's key
        and this seed); default 0.
    progress : bool
        Show a tqdm progress bar over the compiled chunks; default `False`.
    save_path : str or os.PathLike or None
        Save the run after every chunk to this `.npz` (+ `.json`) file, atomically, so that a crash
        loses nothing already computed; `None` (default) saves nothing.  An existing file is an
        error unless `resume` or `overwrite` is set.
    resume : bool
        With `save_path`: continue the run saved there (a missing file starts it; a finished run is
        returned as saved); default `False`.  The saved run must have this configuration.
    overwrite : bool
        With `save_path`: replace an existing run; default `False`.  Exclusive with `resume`.
    on_divergence : {"raise_if_all", "flag", "raise"}
        What a run whose losses become NaN or inf does: `"raise_if_all"` (default) flags it in
        `extras["diverged"]` and raises `SimulationDiverged` only when every run diverged;
        `"flag"` never raises; `"raise"` raises at the first diverged run (the options of
        `grokclocks.sim.train.simulate`).

    Returns
    -------
    Trajectory
        Metrics `loss_train`, `loss_train_clean`, `loss_gen` of shape
        `(*data.batch_shape, n_records)`; `config` a `FreshNoiseConfig`.

    Raises
    ------
    SimulationDiverged
        If a loss becomes NaN or inf, as `on_divergence` says.
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `levi:noise-fresh` (fresh-per-step noise; the regime of paper Fig. 6, `levi:fig6`).
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
