"""Linear teacher-student simulations: explicit full-batch GD through the training engine."""

from __future__ import annotations

import os
from typing import Any

import jax
import jax.numpy as jnp

from ..._validate import choice, DomainError, integer_at_least, positive
from ...citations import cites
from .._runtime import enable_x64
from ..data import TeacherStudentData
from ..train import (
    check_record_every,
    check_run_path,
    ON_DIVERGENCE,
    optax_init,
    optax_step,
    sgd_weight_decay,
    simulate,
    Trajectory,
    weight_decay_coefficient,
)
from ._configs import LinearGDConfig
from ._helpers import _batch_axes, _check_data, _gram, _grid, _hyper, _stability_hint, _vmap_n


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
    r"""Explicit full-batch GD of the linear student, recording the losses every `record_every` steps.

    Each step moves the student S by η times the gradient of the training loss plus the decay c·S,
    where D = S − T is the error matrix, F = Xᵀδ/N_tr the label-noise cross term, and c = γ/d_out
    (paper convention) or γ (torch):

    .. math::
        S_{t+1} = S_t - \eta\Big[\frac{2}{d_{\rm out}}(\Sigma_{\rm tr} D_t - F) + c\, S_t\Big],\quad
        D = S - T,\ F = X^\top\delta/N_{\rm tr},\ c = \gamma/d_{\rm out}\ (\text{paper}) \text{ or } \gamma\ (\text{torch})

    The recorded losses are the training loss (mean squared error on the noisy training labels)
    and the generalisation loss ‖D‖²/d_out:

    .. math::
        \mathcal L_{\rm tr} = \frac{1}{N_{\rm tr} d_{\rm out}}\|X S - (X T + \delta)\|^2
        = \frac{{\rm Tr}(D^\top\Sigma D) - 2{\rm Tr}(D^\top F) + \|\delta\|^2/N_{\rm tr}}{d_{\rm out}},\qquad
        \mathcal L_{\rm gen} = \frac{\|D\|_F^2}{d_{\rm out}}

    Implemented with optax (`add_decayed_weights(c)` then `sgd(eta)`) in the jit + scan + vmap
    engine; batched over the data's seed axes and, if `eta` or `gamma` is a 1-D array, over that
    grid (outermost axis).  Runs in float64.

    Parameters
    ----------
    data : TeacherStudentData
        The draws, from `make_teacher_student` or `draw_teacher_student` (float64).
    eta : float or array_like
        Learning rate η > 0, or a 1-D grid of them (the outermost batch axis of the result).  GD
        is stable iff η < d_out/(ν_max + γ/2), ν_max ≈ (1 + √λ)² the largest eigenvalue of XᵀX/N.
    steps : int
        Number of GD steps, an integer ≥ 1 and a multiple of `record_every`.
    gamma : float or array_like
        Weight decay γ ≥ 0 in the convention `wd_convention`, or a 1-D grid of the length of
        `eta`'s; default 0 (no weight decay).
    record_every : int
        Steps between two records, an integer ≥ 1 dividing `steps`; default 1.
    wd_convention : {"paper", "torch"}
        How `gamma` is meant: `"paper"` (default), the decay γ/d_out of paper eq. 3, or `"torch"`,
        PyTorch's `SGD(weight_decay=gamma)` (decay γ).
    eps : float or None
        Accuracy threshold ε > 0 on the per-sample mean squared error.  If given, also record the
        empirical accuracies `acc_train` (on the training set, residual to the training labels)
        and, if `n_gen` > 0, `acc_gen` on `n_gen` fresh inputs: a sample is correct iff its mean
        squared error over the outputs is < ε (spec `levi:conv-acc`).  `None` (default) records
        no accuracy.
    n_gen : int
        Number of fresh test inputs for `acc_gen`, an integer ≥ 0, drawn from the data's key
        (memory `n_gen`·d_in per run); needs `eps`.  Default 0.
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
        `times` in GD steps; metrics `loss_train`, `loss_gen` (and `acc_train`, `acc_gen`) of
        shape `(*grid, *data.batch_shape, n_records)`; `config` a `LinearGDConfig`.

    Raises
    ------
    SimulationDiverged
        If a loss becomes NaN or inf (learning rate too large), as `on_divergence` says.
    DomainError
        If an argument is outside its domain (e.g. `n_gen` > 0 without `eps`).

    References
    ----------
    Spec `levi:eq3` / `levi:eq13` (paper eqs. 3, 13), `levi:conv-wd`, `levi:conv-acc`, losses
    `levi:eq1` / `levi:eq2`.
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
