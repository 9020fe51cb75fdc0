"""`train_modular`: any model of `MODULAR_MODELS` on op(a, b) mod p, seeds, splits and a hyperparameter grid
vmapped through the one engine.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import models
from ..._validate import choice, DomainError, integer_at_least, nonnegative, positive
from ...citations import cites
from ...task import modular_table, random_split_mask, token_inputs
from .._runtime import enable_x64
from ..trackers import check_trackers
from ..train import (
    check_devices,
    check_record_every,
    check_run_path,
    first_crossing_step,
    ON_DIVERGENCE,
    optax_init,
    optimizer_factory,
    OPTIMIZERS,
    seed_tuple,
    simulate,
    Trajectory,
)
from ..train._batching import _seed_keys
from ._arguments import (
    _betas,
    _describe,
    _grid_values,
    _hook_items,
    _level,
    _model_kwargs,
    _no_tracker_collision,
    _split_size,
    BUILTIN_METRICS,
    N_TRAIN_RULES,
)
from ._config import TrainConfig
from ._model_table import modular_model
from ._programs import _classifier_fns


@cites("clocks:appB", "repulsion:setup", "uniformity:setup", "levi:appG")
def train_modular(model: str = "embedding_mlp", p: int = 97, *, operation: Any = "add",
                  train_frac: float | Sequence[float] | None = 0.3, train_mask: Any = None,
                  seeds: Sequence[int] = (0,), split_seed: int | None = None, model_kwargs: dict | None = None,
                  optimizer: str = "adamw", lr: float | Sequence[float] = 1e-3,
                  weight_decay: float | Sequence[float] = 1.0, betas: tuple[float, float] = (0.9, 0.98),
                  eps: float = 1e-8, warmup_steps: int = 0, loss: str = "ce", batch_size: int | None = None,
                  steps: int = 1000, record_every: int = 10, hooks: dict[str, Any] | None = None,
                  trackers: dict[str, Any] | None = None, train_level: float = 1.0, test_level: float = 0.99,
                  dtype: str = "float32", progress: bool = False, n_chunks: int | None = None,
                  save_path: str | os.PathLike | None = None, resume: bool = False, overwrite: bool = False,
                  devices: Any = None, on_divergence: str = "raise_if_all", compute_dtype: str | None = None,
                  run_chunk: int | str | None = "auto", n_train_rule: str = "floor") -> Trajectory:
    """Train any paper's model on a modular-arithmetic task: many seeds and a hyperparameter grid at once.

    One compiled program runs every combination of `seeds` × `train_frac` × `weight_decay` × `lr`
    (each a scalar or a sequence): the runs are flattened into one batch axis that is `vmap`-ped
    (and sharded over `devices`), with `lax.scan` over steps and metrics recorded inside the scan
    every `record_every` steps (`grokclocks.sim.train.simulate`).

    All p² pairs are kept with a 0/1 training mask (fixed shapes, so splits of any size batch
    together); the test set is the complement.

    Parameters
    ----------
    model : str
        The model, a key of `MODULAR_MODELS` or `"alpha_two_layer"`: `"embedding_mlp"` (default;
        spec `clocks:appB`, `model_kwargs` `d_embed`, `d_hidden`), `"transformer"`
        (`uniformity:setup`: `d_model`, `n_heads`, `d_head`, `d_mlp`), `"tian_quadratic"` /
        `"tian_relu"` (`repulsion:model`: `K`), `"mean_field_quadratic"` (`levi:appG`: `d_h`),
        `"alpha_two_layer"` (spec `kramers`).
    p : int
        The modulus p ≥ 2; default 97.
    operation : str or callable
        The label op(a, b) mod p: a name of `grokclocks.task.OPERATIONS` (`"add"` (default),
        `"sub"`, `"mul"`, `"sq_sum"`, `"xy"`, `"sq_of_sum"`) or a function `f(a, b)` on int64
        arrays (`grokclocks.task.modular_table`).
    train_frac : float or sequence of float or None
        Fraction(s) of the p² pairs in the training set, each in (0, 1): the random split is
        `default_rng(seed).permutation(p²)[:n]` with n = int(frac·p²) (or round, see
        `n_train_rule`; `grokclocks.task.random_split_mask`); a sequence is a grid axis.  Ignored
        when `train_mask` is given; `None` needs `train_mask`.  Default 0.3.
    train_mask : array_like or None
        An explicit split instead of `train_frac`: bool of shape (p²,) (one split for every seed)
        or (n_seeds, p²) (one per seed, e.g. from `grokclocks.task.designed_split_mask`), `True` on
        the training pairs; each split needs a training and a test pair.  `None` (default) draws
        random splits.
    seeds : sequence of int
        Seeds ≥ 0: each run's initialisation key is `PRNGKey(seed)`, and the seed is its split
        seed unless `split_seed` is given.  Distinct, except with a per-seed `train_mask` (then
        each (seed, mask) pair must be).  Default `(0,)`.
    split_seed : int or None
        One split seed ≥ 0 shared by every run (spec `clocks:appB` uses 0); `None` (default) uses
        each run's seed.  Not allowed with `train_mask`.
    model_kwargs : dict or None
        Keyword arguments of the model's `init` (the widths listed under `model`; not `dtype`);
        names it does not take are an error.  `None` (default) keeps the model's defaults.
    optimizer : {"sgd", "adam", "adamw"}
        The optimiser (`grokclocks.sim.train.optimizer_factory`): GD with coupled L2, Adam with
        coupled L2 (PyTorch `Adam(weight_decay=...)`), or AdamW with decoupled decay (default).
    lr : float or sequence of float
        Learning rate(s) > 0; a sequence is a grid axis.  Default 10⁻³.
    weight_decay : float or sequence of float
        Weight decay(s) ≥ 0 in PyTorch's convention for `optimizer`; a sequence is a grid axis.
        Default 1.
    betas : tuple of float
        Adam's moment decays (b1, b2), each in [0, 1); unused by `"sgd"`.  Default (0.9, 0.98).
    eps : float
        Adam's denominator offset > 0; default 10⁻⁸.
    warmup_steps : int
        Linear learning-rate warm-up length in steps, an integer ≥ 0 (the rate is multiplied by
        min(step/w, 1)); default 0, none.
    loss : {"ce", "mse_sum", "mse_mean", "centred_mse"}
        The training loss, a key of `grokclocks.sim.models.LOSSES`: softmax cross-entropy
        (default), MSE to the one-hot label summed or averaged over classes, or Tian's zero-meaned
        MSE.
    batch_size : int or None
        Mini-batch GD: each step samples `batch_size` distinct training pairs (key
        `fold_in(PRNGKey(seed + 1), step)`), an integer in [1, smallest training set].  `None`
        (default) is full-batch GD.
    steps : int
        Number of optimisation steps, an integer ≥ 1 and a multiple of `record_every`; default 1000.
    record_every : int
        Steps between two records, an integer ≥ 1 dividing `steps`; default 10.
    hooks : dict or None
        Extra metrics recorded with the others, name -> `fn(params, inputs) -> array` (`inputs` has
        `tokens`, `labels`, `mask`, and `train_idx`, `train_w`: the indices of the run's training
        pairs, padded to the largest training set with weight 0); use module-level functions so
        that compiled code is reused.  Names must differ from the built-in metrics
        (`BUILTIN_METRICS`) and from the trackers' (`name` or `name.key`).  Recorded in the config as
        `module:qualname`.  `None` (default) adds none.
    trackers : dict or None
        Per-step state in the scan, name -> tracker (`grokclocks.sim.trackers`):
        `tracker.update(carry, old_params, new_params, step)` after every optimiser update (`step`
        = 1 for the first), `tracker.read(carry)` recorded with the metrics as `name` (or
        `name.key` for a dict readout).  The record at step t has seen the updates 1..t.  Empty or
        `None` (default): exactly the program without trackers.
    train_level : float
        Training-accuracy level in (0, 1] of the extra `t_train`; default 1.
    test_level : float
        Test-accuracy level in (0, 1] of the extra `t_test`; default 0.99.
    dtype : {"float32", "float64"}
        The parameters' dtype (float64 switches JAX to x64); default `"float32"`.
    progress : bool
        Show a tqdm progress bar over the compiled chunks, with the current forecast of t_test after
        every chunk (`grokclocks.forecast.progress_line`); default `False`.
    n_chunks : int or None
        Number of compiled calls the records are split into, an integer ≥ 1 (divergence is checked
        and the run saved after each); `None` (default) means 1, or 20 with a progress bar or
        `save_path`.
    save_path : str or os.PathLike or None
        Save the run after every chunk to this `.npz` (+ `.json`) file, atomically; it holds the
        result below (grid shape, extras) with the state.  `None` (default) saves nothing.  An
        existing file is an error unless `resume` or `overwrite` (checked before anything is built
        or compiled).
    resume : bool
        With `save_path`: continue the run saved there; a finished run is returned unchanged.
        Default `False`.
    overwrite : bool
        With `save_path`: replace an existing run; default `False`.  Exclusive with `resume`.
    devices : None, int or sequence of jax devices
        Shard the runs over local devices: `None` (default) means all local devices (one device
        when their number does not divide the runs), an int `n` the first `n`, a sequence the
        devices themselves.
    on_divergence : {"raise_if_all", "flag", "raise"}
        What a run whose metrics become NaN or inf does: `"raise_if_all"` (default) flags it in
        `extras["diverged"]` and raises `SimulationDiverged` only when every run diverged;
        `"flag"` never raises; `"raise"` raises at the first diverged run.
    compute_dtype : {"bfloat16"} or None
        Mixed precision: the training forward and backward pass run in this dtype (a cast copy of
        the parameters; the outputs are cast back before the loss), while the parameters, their
        gradients, the optimiser state and the recorded metrics stay in `dtype`.  `None` (default):
        everything in `dtype`.
    run_chunk : int, "auto" or None
        At most this many runs at a time inside the one program (an integer ≥ 1); `"auto"`
        (default) chunks only when the program's memory estimate exceeds the free device memory;
        `None` runs all at once.  The chunk used is `extras["run_chunk"]`.
    n_train_rule : {"floor", "round"}
        Size of a random split: int(frac·p²) (default; the papers' code) or round(frac·p²) (Levi
        et al. App. G, `run_modular_addition`).

    Returns
    -------
    Trajectory
        Metrics `loss_train`, `loss_test`, `acc_train`, `acc_test`, `param_norm` (and the hooks')
        of shape `(*grid_shape, n_seeds, [hook value shape,] n_records)`, where `grid_shape` lists
        the sequence-valued arguments among (`train_frac`, `weight_decay`, `lr`) in that order
        (`config.grid_axes`).  Extras: `t_train`, `t_test` (first recorded step with accuracy ≥ the
        level; NaN = never; for a diverged run only its records before the divergence count),
        `n_train`, `n_devices`, `run_chunk`, `diverged`, `diverged_step`.  `final_state` =
        `(params, opt_state, step)` without trackers and `(params, opt_state, step, carries)` with
        them (`carries`: dict name -> final carry), every leaf with the flattened run axis in front
        (runs in C order over the grid axes and the seeds; `grokclocks.sim.trackers.tracker_carry`
        reshapes a carry to the batch shape).  `config` is a `TrainConfig`.

    Raises
    ------
    DomainError
        If an argument is outside its domain (checked before anything is built or compiled).
    SimulationDiverged
        As `on_divergence` says.

    References
    ----------
    Specs `clocks:appB`, `repulsion:setup`, `uniformity:setup`, `levi:appG`.
    """
    spec = modular_model(model)
    p = integer_at_least(p, "p", 2)
    dtype = choice(dtype, "dtype", ("float64", "float32"))
    optimizer = choice(optimizer, "optimizer", OPTIMIZERS)
    loss = choice(loss, "loss", tuple(models.LOSSES))
    steps, record_every = check_record_every(steps, record_every)
    if n_chunks is not None:
        n_chunks = integer_at_least(n_chunks, "n_chunks", 1)
    warmup_steps = integer_at_least(warmup_steps, "warmup_steps", 0)
    eps = float(positive(eps, "eps"))
    b1, b2 = _betas(betas)
    train_level = _level(train_level, "train_level")
    test_level = _level(test_level, "test_level")
    on_divergence = choice(on_divergence, "on_divergence", ON_DIVERGENCE)
    if compute_dtype is not None:
        compute_dtype = choice(compute_dtype, "compute_dtype", ("bfloat16",))
    n_train_rule = choice(n_train_rule, "n_train_rule", N_TRAIN_RULES)
    check_run_path(save_path, resume=resume, overwrite=overwrite)
    per_run_masks = train_mask is not None and np.ndim(train_mask) == 2
    seeds = seed_tuple(seeds, distinct=not per_run_masks)
    kwargs = _model_kwargs(spec, model, model_kwargs)
    hook_items = _hook_items(hooks)
    tracker_items = check_trackers(trackers, reserved=BUILTIN_METRICS + tuple(n for n, _ in hook_items))
    _no_tracker_collision(hook_items, tracker_items)
    if dtype == "float64":
        enable_x64()
    fdt = jnp.float64 if dtype == "float64" else jnp.float32
    lrs = _grid_values(lr, "lr", positive)
    wds = _grid_values(weight_decay, "weight_decay", nonnegative)
    a, b, labels = modular_table(p, operation)
    tokens = token_inputs(a, b, p, equals=spec.equals)

    if train_mask is not None:
        if split_seed is not None:
            raise DomainError(f"split_seed has no effect with train_mask (got split_seed={split_seed!r})")
        masks = np.asarray(train_mask)
        if masks.dtype != bool or masks.shape[-1] != p * p or masks.ndim not in (1, 2):
            raise DomainError(f"train_mask must be boolean of shape (p^2,) or (n_seeds, p^2) with p^2={p * p} "
                              f"(got {masks.dtype} {masks.shape})")
        if masks.ndim == 2 and masks.shape[0] != len(seeds):
            raise DomainError(f"train_mask of shape (n_runs, p^2) needs one mask per seed "
                              f"(got {masks.shape[0]} masks for {len(seeds)} seeds)")
        if masks.ndim == 2 and len(set(seeds)) != len(seeds):
            pairs = [(s, m.tobytes()) for s, m in zip(seeds, masks)]
            if len(set(pairs)) != len(pairs):
                raise DomainError("each run (seed, train_mask row) must be distinct: a repeated pair repeats "
                                  f"the same run (seeds {seeds})")
        masks = np.broadcast_to(masks, (len(seeds), p * p))[None]  # (1 frac, n_seeds, p^2)
        fracs: tuple[float, ...] | None = None
        split = "mask"
    else:
        if train_frac is None:
            raise DomainError("give train_frac or train_mask")
        fracs = _grid_values(train_frac, "train_frac", positive)
        split_seeds = [s if split_seed is None else integer_at_least(split_seed, "split_seed", 0) for s in seeds]
        masks = np.stack([random_split_mask(p, split_seeds, **_split_size(p, f, n_train_rule))
                          for f in fracs])  # (n_frac, n_seeds, p^2)
        split = "random"
    if (~masks).all(axis=-1).any() or masks.all(axis=-1).any():
        raise DomainError("every split needs at least one training and one test pair")
    if batch_size is not None:
        batch_size = integer_at_least(batch_size, "batch_size", 1)
        if batch_size > masks.sum(-1).min():
            raise DomainError(f"batch_size must be <= the smallest training set ({masks.sum(-1).min()}), got {batch_size}")

    grid_axes = tuple(n for n, v in (("train_frac", train_frac if train_mask is None else 0.0),
                                     ("weight_decay", weight_decay), ("lr", lr)) if np.ndim(v) > 0)
    n_f, n_w, n_l, n_s = masks.shape[0], len(wds), len(lrs), len(seeds)
    # runs in C order over (frac, wd, lr, seed)
    F, W, L, S = np.meshgrid(np.arange(n_f), np.arange(n_w), np.arange(n_l), np.arange(n_s), indexing="ij")
    F, W, L, S = (x.ravel() for x in (F, W, L, S))
    run_seeds = np.asarray(seeds)[S]
    check_devices(devices, len(run_seeds))
    # What is the same for every run enters the program once, unbatched (in_axes None): one split
    # shared by all runs (split_seed, a 1-D train_mask), a learning rate or weight decay that is not
    # a grid axis.  Only what differs between runs carries the run axis.
    run_masks = masks[F, S]
    shared_split = bool((run_masks == run_masks[:1]).all())
    split_masks = run_masks[:1] if shared_split else run_masks
    # indices of each run's training pairs, padded to the largest training set with weight 0
    n_max = int(split_masks.sum(-1).max())
    padded = n_max != int(split_masks.sum(-1).min())
    order = np.argsort(~split_masks, axis=-1, kind="stable")[:, :n_max]

    def per_run(values: np.ndarray, batched: bool, dt: Any) -> jax.Array:
        return jnp.asarray(values if batched else values[0], dt)

    inputs = {
        "tokens": jnp.asarray(tokens, jnp.int32),
        "labels": jnp.asarray(labels, jnp.int32),
        "mask": per_run(split_masks, not shared_split, fdt),
        "lr": per_run(np.asarray(lrs)[L], n_l > 1, fdt),
        "wd": per_run(np.asarray(wds)[W], n_w > 1, fdt),
        "b1": jnp.asarray(b1, fdt), "b2": jnp.asarray(b2, fdt), "eps": jnp.asarray(eps, fdt),
        "key": _seed_keys([int(s) + 1 for s in run_seeds]),
        "train_idx": per_run(order, not shared_split, jnp.int32),
        "train_w": per_run(np.take_along_axis(split_masks, order, axis=-1), not shared_split, fdt),
    }
    batched_keys = {"key"} | ({"lr"} if n_l > 1 else set()) | ({"wd"} if n_w > 1 else set())
    if not shared_split:
        batched_keys |= {"mask", "train_idx", "train_w"}
    axes = [{k: (0 if k in batched_keys else None) for k in inputs}]
    # the initialisation stays op by op (compiled, XLA turns its divisions by constants into products: E would
    # differ in the last bit); the keys and the optimiser state are one compiled call each (cached)
    params = jax.vmap(lambda k: spec.init(k, p, dtype=fdt, **kwargs))(_seed_keys([int(s) for s in run_seeds]))
    step, metrics = _classifier_fns(spec.apply, loss, optimizer, warmup_steps, batch_size, hook_items, tracker_items,
                                    padded, compute_dtype)
    opt = optimizer_factory(optimizer, warmup_steps)
    params, opt_state = optax_init(opt, params, inputs, axes)
    state0 = (params, opt_state, jnp.zeros(len(run_seeds), jnp.int32))
    if tracker_items:
        state0 = state0 + ({name: jax.vmap(tr.init)(params) for name, tr in tracker_items},)
    config = TrainConfig(model=model, model_kwargs=tuple(sorted(kwargs.items())), p=p,
                         operation=operation if isinstance(operation, str) else getattr(operation, "__name__", "user"),
                         train_frac=fracs, split=split, split_seed=split_seed, seeds=seeds, optimizer=optimizer,
                         lr=lrs, weight_decay=wds, betas=(b1, b2), eps=eps, warmup_steps=warmup_steps, loss=loss,
                         batch_size=batch_size, steps=steps, record_every=record_every, grid_axes=grid_axes,
                         dtype=dtype, trackers=tuple((n, _describe(tr)) for n, tr in tracker_items),
                         hooks=tuple((n, _describe(fn)) for n, fn in hook_items), compute_dtype=compute_dtype,
                         n_train_rule=n_train_rule)
    shape = tuple(len(x) for x, name in ((fracs or (0,), "train_frac"), (wds, "weight_decay"), (lrs, "lr"))
                  if name in grid_axes) + (n_s,)
    n_train = masks[F, S].sum(-1).reshape(shape)

    def derived(traj: Trajectory) -> dict[str, np.ndarray]:
        return {"t_train": first_crossing_step(traj.times, traj.metrics["acc_train"], train_level),
                "t_test": first_crossing_step(traj.times, traj.metrics["acc_test"], test_level),
                "n_train": n_train}

    return simulate(step, metrics, state0, inputs, steps=steps, record_every=record_every, batch_axes=axes,
                    config=config, progress=progress, n_chunks=n_chunks, save_path=save_path, resume=resume,
                    overwrite=overwrite, devices=devices, on_divergence=on_divergence, batch_shape=shape,
                    extras_fn=derived, divergence_hint=f"lr={lrs} may be too large for {model} with {optimizer}",
                    run_chunk=run_chunk, progress_info=_forecast_line if progress else None)


def _forecast_line(traj: Trajectory) -> str:
    """The progress bar's text after a chunk: the current forecast of the run(s) (`grokclocks.forecast`)."""
    from ...forecast import progress_line  # numpy/scipy only; the one import of the tool layer by the engine

    return "forecast: " + progress_line(dataclasses.replace(traj, extras={}))
