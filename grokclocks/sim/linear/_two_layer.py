"""Linear teacher-student simulations: the two-layer network."""

from __future__ import annotations

import os
from typing import Any

import jax
import jax.numpy as jnp

from ..._validate import choice, integer_at_least
from ...citations import cites
from .._runtime import enable_x64
from ..data import TwoLayerData
from ..models import activation as _activation
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
from ._configs import TwoLayerConfig
from ._gd import _broadcast_front, _gen_inputs
from ._helpers import _batch_axes, _check_data, _gram, _grid, _hyper, _stability_hint


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
    r"""Explicit full-batch GD on (S0, S1) of the two-layer net f(x) = S1ᵀ σ(S0ᵀ x).

    The student (S0, S1) follows GD on the mean squared error to the teacher (T0, T1) with the
    same activation σ, plus the weight-decay term c·(S0, S1):

    .. math::
        \mathcal L_{\rm tr} = \frac{1}{N d_{\rm out}}\sum_i\|S_1^\top\sigma(S_0^\top x_i) - T_1^\top\sigma(T_0^\top x_i)\|^2,\quad
        (S_0, S_1) \leftarrow (S_0, S_1) - \eta\,\nabla\mathcal L_{\rm tr}\ (+\ c\,(S_0,S_1))

    Linear σ: L_tr = Tr(DᵀΣD)/d_out and L_gen = ‖D‖²/d_out with D = S0·S1 − T0·T1 (exact).  tanh:
    L_gen is sampled on `n_gen` fresh inputs (no closed form).  Also records `norm_D_sq` =
    ‖S0·S1 − T0·T1‖²_F and `h` = (‖S0‖² + ‖S1‖²)/2.  Runs in float64.

    Parameters
    ----------
    data : TwoLayerData
        The draws, from `make_two_layer_teacher_student` or `draw_two_layer`.
    eta : float or array_like
        Learning rate η > 0, or a 1-D grid of them (the outermost batch axis of the result).
    steps : int
        Number of GD steps, an integer ≥ 1 and a multiple of `record_every`.
    activation : {"linear", "tanh"}
        The hidden activation σ of teacher and student; default `"linear"`.
    gamma : float or array_like
        Weight decay γ ≥ 0 in the convention `wd_convention`, or a 1-D grid of the length of
        `eta`'s; default 0.
    record_every : int
        Steps between two records, an integer ≥ 1 dividing `steps`; default 1.
    wd_convention : {"paper", "torch"}
        How `gamma` is meant: `"paper"` (default), the decay γ/d_out of paper eq. 3, or `"torch"`,
        PyTorch's `SGD(weight_decay=gamma)` (decay γ).
    n_gen : int
        Number of fresh test inputs for the tanh generalisation loss, an integer ≥ 1 (unused for
        `"linear"`); default 4096.
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
        Metrics `loss_train`, `loss_gen`, `norm_D_sq`, `h` of shape
        `(*grid, *data.batch_shape, n_records)`; `config` a `TwoLayerConfig`.

    Raises
    ------
    SimulationDiverged
        If a metric becomes NaN or inf, as `on_divergence` says.
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `levi:eq16`, `levi:eq40` (paper eqs. 16, 39-40), `levi:tanh`, `levi:fig4`.
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
