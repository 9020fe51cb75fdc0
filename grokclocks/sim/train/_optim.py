"""The training engine: optimisers (optax steps, weight decay conventions, the optimiser factory)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import optax

from ..._validate import choice, integer_at_least
from ._batching import _axes_key, batched, StepFn


def weight_decay_coefficient(gamma: Any, d_out: int, convention: str = "paper") -> Any:
    r"""Coefficient c of the decay term c·S that weight decay adds to the gradient of the loss.

    In the paper convention the weight decay γ enters the loss as γ/(2 d_out)·‖S‖², so its gradient
    adds (γ/d_out)·S; PyTorch's `SGD(weight_decay=γ)` adds γ·S itself:

    .. math::
        c = \begin{cases} \gamma / d_{\rm out} & \text{paper: gradient of } \mathcal L_{\rm tr}
        + \tfrac{\gamma}{2 d_{\rm out}}\|S\|_F^2 \\
        \gamma & \text{torch: } \texttt{SGD(weight\_decay=}\gamma\texttt{)} \end{cases}

    The two agree for d_out = 1.

    Parameters
    ----------
    gamma : float or array_like
        Weight decay γ ≥ 0 in the convention `convention` (not checked here; the run front-ends
        check it).
    d_out : int
        Output dimension d_out ≥ 1 of the linear model.
    convention : {"paper", "torch"}
        How `gamma` is meant: `"paper"` (default) is the paper's eq. 3 convention, the gradient of
        L_tr + γ/(2 d_out)·‖S‖²; `"torch"` is PyTorch's `SGD(weight_decay=gamma)` on a mean
        squared error, which adds γ·S.

    Returns
    -------
    float or array_like
        The coefficient c, of the same type as `gamma`: γ/d_out (paper) or γ (torch).

    Raises
    ------
    DomainError
        If `convention` is not `"paper"` or `"torch"` (the message names it `wd_convention`, the
        parameter of the front-ends that pass it on).

    References
    ----------
    Spec `levi:conv-wd` (paper eq. 3).
    """
    convention = choice(convention, "wd_convention", ("paper", "torch"))
    return gamma / d_out if convention == "paper" else gamma


def sgd_weight_decay(inputs: Mapping[str, Any]) -> optax.GradientTransformation:
    """Optimiser factory of full-batch GD with L2 decay on the gradient: p ← p − η (∇L + c·p).

    An optimiser factory for `optax_step`: the decay is added to the gradient, not to the loss, so
    the update is p ← p − η·(grad + c·p) with η = `inputs["eta"]` and c = `inputs["decay"]`.

    Parameters
    ----------
    inputs : mapping of str to scalar
        The run's inputs; must hold `"eta"`, the learning rate η > 0, and `"decay"`, the decay
        coefficient c ≥ 0 (already converted from the weight decay, see `weight_decay_coefficient`).
        Both may be traced or vmapped JAX scalars.

    Returns
    -------
    optax.GradientTransformation
        `optax.chain(optax.add_decayed_weights(decay), optax.sgd(eta))`.
    """
    return optax.chain(optax.add_decayed_weights(inputs["decay"]), optax.sgd(inputs["eta"]))


OPTIMIZERS: tuple[str, ...] = ("sgd", "adam", "adamw")
"""Names that `optimizer_factory` accepts (and `grokclocks.sim.modular.train_modular`'s `optimizer`)."""


@functools.lru_cache(maxsize=None)
def optimizer_factory(name: str, warmup_steps: int = 0) -> Callable[[Mapping[str, Any]], optax.GradientTransformation]:
    """An optimiser factory `inputs -> optax.GradientTransformation` for `optax_step`.

    The hyperparameters are read from the run's `inputs` when the step runs, so they may be traced
    and vmapped over a grid: `lr` (learning rate), `wd` (weight decay) and, for the Adam family,
    `b1`, `b2` and `eps` (Adam's moment decays and denominator offset).

    `"sgd"`
        GD with coupled L2: p ← p − lr·(grad + wd·p).
    `"adam"`
        Adam with coupled L2 (PyTorch `Adam(weight_decay=wd)`): g ← grad + wd·p, then Adam;
        `optax.chain(optax.add_decayed_weights(wd), optax.adam(lr, b1, b2, eps))`.
    `"adamw"`
        Decoupled decay (PyTorch `AdamW`): p ← p·(1 − lr·wd) − lr·adam(g); `optax.adamw`.

    Cached, so equal arguments give the same factory object (and reuse compiled code).

    Parameters
    ----------
    name : {"sgd", "adam", "adamw"}
        The optimiser (one of `OPTIMIZERS`), as described above.
    warmup_steps : int
        Linear learning-rate warm-up length in steps, an integer ≥ 0.  A value w > 0 multiplies the
        learning rate by min(step/w, 1), as PyTorch's `LambdaLR(lambda s: min(s / w, 1))` does, so
        the first update has learning rate 0; 0 (default) means no warm-up.  It applies to every
        optimiser.

    Returns
    -------
    callable
        `factory(inputs) -> optax.GradientTransformation`, reading `inputs["lr"]`, `inputs["wd"]`
        and, for `"adam"` and `"adamw"`, `inputs["b1"]`, `inputs["b2"]`, `inputs["eps"]`.

    Raises
    ------
    DomainError
        If `name` is not one of `OPTIMIZERS` (the message names it `optimizer`) or `warmup_steps`
        is not an integer ≥ 0.
    """
    name = choice(name, "optimizer", OPTIMIZERS)
    warmup_steps = integer_at_least(warmup_steps, "warmup_steps", 0)

    def factory(inputs: Mapping[str, Any]) -> optax.GradientTransformation:
        lr = inputs["lr"]
        if warmup_steps:
            base = lr

            def lr(count: Any) -> Any:
                return base * jnp.minimum(jnp.asarray(count, jnp.result_type(base)) / warmup_steps, 1.0)

        if name == "sgd":
            return optax.chain(optax.add_decayed_weights(inputs["wd"]), optax.sgd(lr))
        if name == "adam":
            return optax.chain(optax.add_decayed_weights(inputs["wd"]),
                               optax.adam(lr, b1=inputs["b1"], b2=inputs["b2"], eps=inputs["eps"]))
        return optax.adamw(lr, b1=inputs["b1"], b2=inputs["b2"], eps=inputs["eps"], weight_decay=inputs["wd"])

    return factory


@functools.lru_cache(maxsize=None)
def optax_step(grad_fn: Callable[[Any, Any], Any],
               optimizer_fn: Callable[[Any], optax.GradientTransformation]) -> StepFn:
    """A step `((params, opt_state), inputs) -> (params, opt_state)` from a gradient and an optax optimiser.

    Cached: the same pair of arguments always gives the same step object (so `simulate` reuses
    the compiled code).

    Parameters
    ----------
    grad_fn : callable
        `grad_fn(params, inputs)` returns the gradient pytree of the loss with respect to
        `params` (typically a module-level `jax.grad(loss)`, or an explicit formula where that is
        cheaper).  Must be hashable (module-level functions are).
    optimizer_fn : callable
        An optimiser factory `optimizer_fn(inputs) -> optax.GradientTransformation` (e.g. from
        `optimizer_factory`, or `sgd_weight_decay`); it is called inside the step, so the
        hyperparameters it reads from `inputs` may be traced and vmapped.

    Returns
    -------
    callable
        The step `step((params, opt_state), inputs) -> (params, opt_state)`, one optimiser update.
    """

    def step(state: Any, inputs: Any) -> Any:
        params, opt_state = state
        grads = grad_fn(params, inputs)
        updates, opt_state = optimizer_fn(inputs).update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    return step


def optax_init(optimizer_fn: Callable[[Any], optax.GradientTransformation], params: Any, inputs: Any,
               batch_axes: Sequence[Any] = ()) -> Any:
    """Initial state `(params, opt_state)` for `optax_step`, batched like `simulate`.

    Parameters
    ----------
    optimizer_fn : callable
        The optimiser factory `optimizer_fn(inputs) -> optax.GradientTransformation` that the step
        will use (the same object as passed to `optax_step`).
    params : pytree
        Initial parameters, with every batch axis of `batch_axes` in front of each leaf.
    inputs : pytree
        The run's inputs (hyperparameters the factory reads), batched as `batch_axes` says.
    batch_axes : sequence of pytrees
        One `in_axes` pytree of `inputs` per batch axis, outermost first, as in the call to
        `simulate` (`0` = batched along that axis, `None` = shared); `()` (default) is one run.

    Returns
    -------
    tuple
        `(params, opt_state)`, the optimiser state initialised per run, with the batch axes in front.
    """

    key = (optimizer_fn, _axes_key(batch_axes))
    if key not in _OPTAX_INIT:

        def init(p: Any, inp: Any) -> Any:
            return p, optimizer_fn(inp).init(p)

        # compiled once per factory and batch layout: run op by op under vmap, optax's init costs ~20 ms a call
        _OPTAX_INIT[key] = jax.jit(batched(init, batch_axes))
    return _OPTAX_INIT[key](params, inputs)


_OPTAX_INIT: dict[tuple, Callable] = {}
