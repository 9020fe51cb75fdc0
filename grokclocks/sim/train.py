"""The one training engine: a jit-compiled step, ``lax.scan`` over steps, ``vmap`` over runs.

Every simulation of grokclocks is a pair of pure functions handed to :func:`simulate`:

``step(state, inputs) -> state``
    one optimisation step (full-batch GD, Adam, a Langevin step, ...);
``metrics(state, inputs) -> dict[str, scalar]``
    what to record.

``state`` is any pytree (e.g. ``(params, opt_state)``), ``inputs`` any pytree of per-run constants
(data, targets, hyperparameters such as the learning rate or the weight decay).  The engine

* records ``metrics`` at step 0 and after every ``record_every`` steps; the recording happens
  *inside* the scan (an outer ``lax.scan`` over records whose body is an inner ``lax.scan`` of
  ``record_every`` steps), so nothing returns to Python between records;
* ``vmap``-s the whole scan over any number of batch axes (seeds, a learning-rate or weight-decay
  grid, ...): ``batch_axes`` lists, outermost first, the ``in_axes`` of ``inputs`` for each batch
  axis; the state always carries all batch axes in front;
* splits the records into chunks (one jitted call each) to show a progress bar, check for
  divergence (:class:`~grokclocks.sim.SimulationDiverged` on NaN/inf) and save incrementally
  (``.npz`` + JSON config), so that a crash loses nothing already computed and ``resume=True``
  continues from the last saved chunk.

Optimisers come from optax: :func:`optax_step` turns a gradient and an optimiser factory into a step;
the factory is called *inside* the step with the (possibly vmapped) ``inputs``, so hyperparameters
such as ``eta`` or the weight decay can be batched like any other input.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .._validate import DomainError, choice, integer_at_least
from ._runtime import SimulationDiverged

__all__ = [
    "Trajectory",
    "simulate",
    "optax_step",
    "optax_init",
    "sgd_weight_decay",
    "optimizer_factory",
    "OPTIMIZERS",
    "shard_runs",
    "weight_decay_coefficient",
    "batched",
    "broadcast_batch",
    "record_times",
    "first_crossing_step",
    "config_to_json",
    "config_from_json",
    "save_trajectory",
    "load_trajectory",
]

StepFn = Callable[[Any, Any], Any]
MetricsFn = Callable[[Any, Any], Mapping[str, jax.Array]]


# --------------------------------------------------------------------------------------------
# Results and their persistence
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class Trajectory:
    """Recorded metrics of a (batch of) simulation(s).

    Attributes
    ----------
    times : ndarray, shape (n_records,)
        GD step index of each record (``0, k, 2k, ...``; real-valued for closed-form results).
    metrics : dict of str -> ndarray, each of shape ``(*batch_shape, n_records)``
        The recorded metrics.
    config : frozen dataclass or None
        The configuration that produced the run.
    extras : dict of str -> ndarray
        Derived per-run quantities (e.g. crossing steps), shape ``batch_shape`` or scalar.
    final_state : pytree of ndarray or None
        The state after the last step (not saved by :meth:`save`).
    """

    times: np.ndarray
    metrics: Mapping[str, np.ndarray]
    config: Any = None
    extras: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)
    final_state: Any = None

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self.metrics:
            return self.metrics[name]
        if name in self.extras:
            return self.extras[name]
        raise KeyError(f"{name!r} is neither a metric ({sorted(self.metrics)}) nor an extra ({sorted(self.extras)})")

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Shape of the batch axes (seeds, hyperparameter grid) in front of the record axis."""
        first = next(iter(self.metrics.values()))
        return tuple(first.shape[:-1])

    def save(self, path: str | os.PathLike) -> Path:
        """Write ``path`` (``.npz``: times, metrics, extras) and ``path`` with ``.json`` (config)."""
        return save_trajectory(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Trajectory:
        """Read a trajectory written by :meth:`save`."""
        return load_trajectory(path)


def _jsonable(x: Any) -> Any:
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _jsonable(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.ndarray, jax.Array)):
        return _jsonable(np.asarray(x).tolist())
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return x


def _tuplify(x: Any) -> Any:
    if isinstance(x, list):
        return tuple(_tuplify(v) for v in x)
    if isinstance(x, dict):
        return {k: _tuplify(v) for k, v in x.items()}
    if x in ("inf", "-inf", "nan"):
        return float(x)
    return x


def config_to_json(config: Any) -> str:
    """JSON text of a config dataclass, tagged with its class so :func:`config_from_json` can rebuild it."""
    if config is None:
        return json.dumps({"class": None, "fields": None})
    cls = type(config)
    return json.dumps({"class": f"{cls.__module__}:{cls.__qualname__}", "fields": _jsonable(config)}, indent=1)


def config_from_json(text: str) -> Any:
    """Rebuild a config written by :func:`config_to_json` (lists become tuples)."""
    obj = json.loads(text)
    if obj["class"] is None:
        return None
    module, qualname = obj["class"].split(":")
    cls: Any = importlib.import_module(module)
    for part in qualname.split("."):
        cls = getattr(cls, part)
    return cls(**_tuplify(obj["fields"]))


def _paths(path: str | os.PathLike) -> tuple[Path, Path]:
    p = Path(path)
    if p.suffix != ".npz":
        p = p.with_name(p.name + ".npz")
    return p, p.with_suffix(".json")


def _atomic_savez(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def save_trajectory(result: Trajectory, path: str | os.PathLike, *, state: Any = None) -> Path:
    """Save a trajectory as ``<path>.npz`` (arrays) + ``<path>.json`` (config); returns the ``.npz`` path.

    ``state`` (a pytree) is stored too when given; :func:`simulate` uses it to resume a run.
    Writes are atomic (temporary file + rename), so a crash never leaves a truncated file.
    """
    npz, js = _paths(path)
    npz.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {"times": np.asarray(result.times)}
    arrays.update({f"metric:{k}": np.asarray(v) for k, v in result.metrics.items()})
    arrays.update({f"extra:{k}": np.asarray(v) for k, v in result.extras.items()})
    if state is not None:
        for i, leaf in enumerate(jax.tree_util.tree_leaves(state)):
            arrays[f"state:{i:04d}"] = np.asarray(leaf)
    _atomic_savez(npz, arrays)
    _atomic_write_text(js, config_to_json(result.config))
    return npz


def _load_arrays(path: str | os.PathLike) -> tuple[dict[str, np.ndarray], Any, str]:
    npz, js = _paths(path)
    with np.load(npz) as f:
        arrays = {k: f[k] for k in f.files}
    text = js.read_text()
    return arrays, config_from_json(text), text


def load_trajectory(path: str | os.PathLike) -> Trajectory:
    """Load a trajectory written by :func:`save_trajectory` (or incrementally by :func:`simulate`)."""
    arrays, config, _ = _load_arrays(path)
    metrics = {k.split(":", 1)[1]: v for k, v in arrays.items() if k.startswith("metric:")}
    extras = {k.split(":", 1)[1]: v for k, v in arrays.items() if k.startswith("extra:")}
    return Trajectory(times=arrays["times"], metrics=metrics, config=config, extras=extras)


# --------------------------------------------------------------------------------------------
# Batching helpers
# --------------------------------------------------------------------------------------------


def batched(fn: Callable, batch_axes: Sequence[Any], *, state_axis: int | None = 0) -> Callable:
    """``vmap`` ``fn(state, inputs)`` over the batch axes, outermost first.

    ``batch_axes[i]`` is the ``in_axes`` (a pytree prefix of ``inputs``: 0 or None per leaf) of the
    i-th batch axis; ``state`` carries every batch axis in front (``state_axis=None``: no state
    batching, for functions of ``inputs`` only, called as ``fn(None, inputs)``).
    """
    f = fn
    for axes in reversed(tuple(batch_axes)):
        f = jax.vmap(f, in_axes=(state_axis, axes))
    return f


def broadcast_batch(tree: Any, batch_shape: tuple[int, ...], n_existing: int = 0) -> Any:
    """Insert leading batch axes so every leaf has ``batch_shape`` in front.

    ``n_existing`` trailing axes of ``batch_shape`` are already present on every leaf (e.g. the
    seed axis), the others are broadcast (e.g. a hyperparameter grid axis in front of it).
    """
    new = batch_shape[: len(batch_shape) - n_existing]

    def one(x: Any) -> jax.Array:
        x = jnp.asarray(x)
        return jnp.broadcast_to(x, new + x.shape)

    return jax.tree_util.tree_map(one, tree)


def record_times(steps: int, record_every: int) -> np.ndarray:
    """Steps at which :func:`simulate` records: ``0, record_every, ..., steps``."""
    return np.arange(0, steps + 1, record_every, dtype=np.int64)


def first_crossing_step(times: np.ndarray, values: np.ndarray, level: float) -> np.ndarray:
    """First recorded time at which ``values >= level`` along the last axis; NaN where never reached.

    Parameters
    ----------
    times : (n_records,) recorded steps
    values : (..., n_records), e.g. accuracies
    level : float

    Returns
    -------
    ndarray of shape ``values.shape[:-1]`` (float; NaN = not reached within the run; resolution =
    the recording interval).
    """
    values = np.asarray(values)
    hit = values >= level
    t = np.asarray(times, dtype=float)[np.argmax(hit, axis=-1)]
    return np.where(hit.any(axis=-1), t, np.nan)


# --------------------------------------------------------------------------------------------
# Optimisers (optax)
# --------------------------------------------------------------------------------------------


def weight_decay_coefficient(gamma: Any, d_out: int, convention: str = "paper") -> Any:
    """Coefficient ``c`` of the decay term ``c * S`` added to the gradient.

    .. math::
        c = \\gamma / d_{\\rm out} \\ \\text{(paper: gradient of } \\mathcal L + \\tfrac{\\gamma}{2 d_{\\rm out}}\\|S\\|^2),
        \\qquad c = \\gamma \\ \\text{(torch: SGD(weight\\_decay=}\\gamma))

    Parameters
    ----------
    gamma : float or array, >= 0
        Weight decay in the chosen convention.
    d_out : int >= 1
        Output dimension.
    convention : {"paper", "torch"}

    Returns
    -------
    The coefficient (same type as ``gamma``).

    References
    ----------
    Spec ``levi:conv-wd`` (paper eq. 3).
    """
    convention = choice(convention, "wd_convention", ("paper", "torch"))
    return gamma / d_out if convention == "paper" else gamma


def sgd_weight_decay(inputs: Mapping[str, Any]) -> optax.GradientTransformation:
    """Full-batch GD with decoupled-from-loss L2 decay: ``p <- p - eta * (grad + decay * p)``.

    An optimiser factory for :func:`optax_step`: reads ``inputs["eta"]`` and ``inputs["decay"]``
    (scalars, possibly traced / vmapped) and returns
    ``optax.chain(optax.add_decayed_weights(decay), optax.sgd(eta))``.
    """
    return optax.chain(optax.add_decayed_weights(inputs["decay"]), optax.sgd(inputs["eta"]))


OPTIMIZERS: tuple[str, ...] = ("sgd", "adam", "adamw")


@functools.lru_cache(maxsize=None)
def optimizer_factory(name: str, warmup_steps: int = 0) -> Callable[[Mapping[str, Any]], optax.GradientTransformation]:
    """An optimiser factory ``inputs -> optax.GradientTransformation`` for :func:`optax_step`.

    Hyperparameters are read from ``inputs`` (so they may be traced and vmapped over a grid):
    ``lr``, ``wd`` and, for the Adam family, ``b1``, ``b2``, ``eps``.

    ``"sgd"``
        GD with coupled L2: ``p <- p - lr (grad + wd p)``.
    ``"adam"``
        Adam with *coupled* L2 (PyTorch ``Adam(weight_decay=wd)``): ``g <- grad + wd p``, then Adam;
        ``optax.chain(optax.add_decayed_weights(wd), optax.adam(lr, b1, b2, eps))``.
    ``"adamw"``
        Decoupled decay (PyTorch ``AdamW``): ``p <- p (1 - lr wd) - lr adam(g)``; ``optax.adamw``.

    ``warmup_steps > 0`` multiplies the learning rate by ``min(step / warmup_steps, 1)`` (PyTorch
    ``LambdaLR(lambda s: min(s / w, 1))``: the first update has learning rate 0), for every
    optimiser.  Cached, so equal arguments give the same factory (and reuse compiled code).
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
    """A step ``((params, opt_state), inputs) -> (params, opt_state)`` from a gradient and an optax optimiser.

    ``grad_fn(params, inputs)`` returns the gradient pytree (typically a module-level
    ``jax.grad(loss)``, or an explicit formula where it is cheaper); ``optimizer_fn(inputs)``
    builds the optax transformation inside the step, so its hyperparameters may be traced and
    vmapped.  Cached: the same pair always gives the same step object (and reuses compiled code).
    """

    def step(state: Any, inputs: Any) -> Any:
        params, opt_state = state
        grads = grad_fn(params, inputs)
        updates, opt_state = optimizer_fn(inputs).update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    return step


def optax_init(optimizer_fn: Callable[[Any], optax.GradientTransformation], params: Any, inputs: Any,
               batch_axes: Sequence[Any] = ()) -> Any:
    """Initial state ``(params, opt_state)`` for :func:`optax_step`, batched like :func:`simulate`."""

    def init(p: Any, inp: Any) -> Any:
        return p, optimizer_fn(inp).init(p)

    return batched(init, batch_axes)(params, inputs)


# --------------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------------


def shard_runs(state: Any, inputs: Any, batch_axes: Sequence[Any], devices: Any = None) -> tuple[Any, Any, int]:
    """Shard the outermost batch axis of a sweep over local devices (``jax.sharding``, no scheduler).

    ``state`` leaves (batch axes in front) and the ``inputs`` leaves batched on the first batch axis
    are placed with ``NamedSharding(Mesh(devices, ("runs",)), PartitionSpec("runs"))``; shared
    inputs are replicated.  ``jax.jit`` then partitions the vmapped scan over the devices (GSPMD),
    each device running its share of the runs; no code changes for one device or many.  Only the
    *local* devices are used: under ``jax.distributed`` each process runs its own share of the sweep
    (:func:`grokclocks.sim.distributed.process_share`) and the shards are joined afterwards
    (:func:`~grokclocks.sim.distributed.merge_seed_shards`); runs never need cross-host traffic.

    ``devices``: ``None`` = all local devices, an int = the first ``n`` of them, or a list of
    devices.  If the outermost batch size is not a multiple of the number of devices, or there is
    one device or no batch axis, nothing is moved.  Returns ``(state, inputs, n_devices_used)``.
    """
    if devices is None:
        devs = jax.local_devices()
    elif isinstance(devices, int):
        devs = jax.local_devices()[: integer_at_least(devices, "devices", 1)]
    else:
        devs = list(devices)
    if len(devs) <= 1 or not batch_axes:
        return state, inputs, 1
    leaves = jax.tree_util.tree_leaves(state)
    if not leaves:
        return state, inputs, 1
    n_runs = np.shape(leaves[0])[0]
    if n_runs % len(devs):
        return state, inputs, 1
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(devs), ("runs",))
    split = NamedSharding(mesh, PartitionSpec("runs"))
    repl = NamedSharding(mesh, PartitionSpec())
    state = jax.tree_util.tree_map(lambda x: jax.device_put(x, split), state)

    def place(axis: Any, sub: Any) -> Any:
        return jax.tree_util.tree_map(lambda x: jax.device_put(x, split if axis == 0 else repl), sub)

    if inputs is not None:
        inputs = jax.tree_util.tree_map(place, batch_axes[0], inputs, is_leaf=lambda x: x is None)
    return state, inputs, len(devs)


def _axes_key(batch_axes: Sequence[Any]) -> tuple:
    out = []
    for a in batch_axes:
        leaves, treedef = jax.tree_util.tree_flatten(a)
        out.append((tuple(leaves), treedef))
    return tuple(out)


_COMPILED: dict[tuple, Callable] = {}


def _compiled_chunk(step: StepFn, metrics: MetricsFn, record_every: int, n_records: int,
                    batch_axes: Sequence[Any]) -> Callable:
    key = ("chunk", step, metrics, record_every, n_records, _axes_key(batch_axes))
    if key not in _COMPILED:

        def run(state: Any, inputs: Any) -> tuple[Any, Any]:
            def one_step(s: Any, _: Any) -> tuple[Any, None]:
                return step(s, inputs), None

            def one_record(s: Any, _: Any) -> tuple[Any, Any]:
                s, _ = jax.lax.scan(one_step, s, None, length=record_every)
                return s, metrics(s, inputs)

            return jax.lax.scan(one_record, state, None, length=n_records)

        _COMPILED[key] = jax.jit(batched(run, batch_axes))
    return _COMPILED[key]


def _compiled_metrics(metrics: MetricsFn, batch_axes: Sequence[Any]) -> Callable:
    key = ("metrics", metrics, _axes_key(batch_axes))
    if key not in _COMPILED:
        _COMPILED[key] = jax.jit(batched(metrics, batch_axes))
    return _COMPILED[key]


def _chunk_sizes(n_records: int, n_chunks: int) -> list[int]:
    n_chunks = max(1, min(n_chunks, n_records))
    size = -(-n_records // n_chunks)
    sizes = [size] * (n_records // size)
    if n_records % size:
        sizes.append(n_records % size)
    return sizes


def _first_nonfinite(metrics: Mapping[str, np.ndarray]) -> tuple[int, str] | None:
    first: tuple[int, str] | None = None
    for name, v in metrics.items():
        v = np.asarray(v)
        if not np.issubdtype(v.dtype, np.floating):
            continue
        bad = ~np.isfinite(v)
        if bad.any():
            j = int(np.argmax(bad.reshape(-1, v.shape[-1]).any(axis=0)))
            if first is None or j < first[0]:
                first = (j, name)
    return first


def simulate(step: StepFn, metrics: MetricsFn, state0: Any, inputs: Any = None, *, steps: int,
             record_every: int, batch_axes: Sequence[Any] = (), config: Any = None,
             progress: bool = False, n_chunks: int | None = None,
             save_path: str | os.PathLike | None = None, resume: bool = False,
             divergence_hint: str = "", devices: Any = 1) -> Trajectory:
    """Run ``steps`` steps of ``step`` and record ``metrics`` every ``record_every`` steps.

    Parameters
    ----------
    step : callable ``(state, inputs) -> state``
        One step of one run (pure; jit-compatible).  Use a module-level function or a cached
        factory (e.g. :func:`optax_step`) so repeated calls reuse the compiled code.
    metrics : callable ``(state, inputs) -> dict[str, scalar]``
        What to record (pure; jit-compatible).
    state0 : pytree
        Initial state, with every batch axis in front of each leaf.
    inputs : pytree
        Per-run constants (data, hyperparameters); batched as ``batch_axes`` says.
    steps : int >= 1
        Number of steps; must be a multiple of ``record_every``.
    record_every : int >= 1
        Record after every ``record_every`` steps (and at step 0).
    batch_axes : sequence of in_axes pytrees
        One entry per batch axis, outermost first: the ``in_axes`` of ``inputs`` for that axis
        (``0`` = batched along that axis, ``None`` = shared).  ``()`` = a single run.
    config : frozen dataclass, optional
        Stored with the result, in error messages and in saved files.
    progress : bool
        Show a tqdm progress bar over scan chunks.
    n_chunks : int, optional
        Number of jitted calls the records are split into (default: 1, or 20 with a progress bar
        or incremental saving).  Divergence is checked after each chunk.
    save_path : path, optional
        Save the records (and the state, for ``resume``) after every chunk (``.npz`` + ``.json``).
    resume : bool
        With ``save_path``: if a file with the same config exists, continue from its last chunk.
    divergence_hint : str
        Added to the :class:`SimulationDiverged` message (e.g. the stability bound on ``eta``).
    devices : int, list of devices or None
        Shard the outermost batch axis over devices (:func:`shard_runs`): ``None`` = all local
        devices, ``1`` (default) = one device.  The number used is ``extras["n_devices"]``.

    Returns
    -------
    Trajectory
        ``times`` = ``0, record_every, ..., steps``; metrics of shape ``(*batch_shape, n_records)``;
        ``final_state`` = the state after the last step (numpy).

    Raises
    ------
    SimulationDiverged
        If a recorded metric is NaN or inf (the records up to that chunk are saved first).
    DomainError
        For invalid ``steps`` / ``record_every``.
    """
    steps = integer_at_least(steps, "steps", 1)
    record_every = integer_at_least(record_every, "record_every", 1)
    if steps % record_every:
        raise DomainError(f"steps must be a multiple of record_every={record_every} (got {steps})")
    n_records = steps // record_every
    times = record_times(steps, record_every)
    if n_chunks is None:
        n_chunks = 20 if (progress or save_path is not None) else 1
    n_chunks = integer_at_least(n_chunks, "n_chunks", 1)

    records: list[dict[str, np.ndarray]] = []
    state, inputs, n_devices = shard_runs(state0, inputs, batch_axes, devices)
    done = 0  # records already computed (excluding the one at step 0)
    if resume and save_path is not None and _paths(save_path)[0].exists():
        arrays, _, saved_text = _load_arrays(save_path)
        if saved_text != config_to_json(config):
            raise DomainError(f"cannot resume from {save_path}: its config differs from {config!r}")
        leaves = [arrays[k] for k in sorted(a for a in arrays if a.startswith("state:"))]
        treedef = jax.tree_util.tree_structure(state0)
        if leaves and len(leaves) == treedef.num_leaves:
            state = jax.tree_util.tree_unflatten(treedef, [jnp.asarray(x) for x in leaves])
            state, _, _ = shard_runs(state, None, batch_axes, devices if n_devices > 1 else 1)
            records = [{k.split(":", 1)[1]: v for k, v in arrays.items() if k.startswith("metric:")}]
            done = records[0][next(iter(records[0]))].shape[-1] - 1
    if not records:
        m0 = jax.device_get(_compiled_metrics(metrics, batch_axes)(state, inputs))
        records = [{k: np.asarray(v)[..., None] for k, v in m0.items()}]

    def assemble(final_state: Any = None) -> Trajectory:
        cat = {k: np.concatenate([r[k] for r in records], axis=-1) for k in records[0]}
        n = next(iter(cat.values())).shape[-1]
        return Trajectory(times=times[:n], metrics=cat, config=config, final_state=final_state,
                          extras={"n_devices": np.asarray(n_devices)})

    def check(result: Trajectory, st: Any) -> None:
        bad = _first_nonfinite(result.metrics)
        if bad is not None:
            if save_path is not None:
                save_trajectory(result, save_path)
            raise SimulationDiverged(int(result.times[bad[0]]), bad[1], config, divergence_hint)
        if save_path is not None:
            save_trajectory(result, save_path, state=st)

    check(assemble(), state)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=steps, initial=done * record_every, unit="step", desc="simulate")
    try:
        for size in _chunk_sizes(n_records - done, n_chunks) if done < n_records else []:
            run = _compiled_chunk(step, metrics, record_every, size, batch_axes)
            state, ms = run(state, inputs)
            records.append({k: _record_axis_last(v, len(batch_axes)) for k, v in jax.device_get(ms).items()})
            check(assemble(), state)
            if bar is not None:
                bar.update(size * record_every)
    finally:
        if bar is not None:
            bar.close()
    return assemble(jax.device_get(state))


def _record_axis_last(v: Any, n_batch: int) -> np.ndarray:
    """Scan stacks records on axis 0 of each run, i.e. right after the batch axes; move it last."""
    v = np.asarray(v)
    return np.moveaxis(v, n_batch, -1)
