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
    "free_device_memory",
    "working_memory_estimate",
    "choose_run_chunk",
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


def _record_scan(step: StepFn, metrics: MetricsFn, record_every: int, n_records: int) -> Callable:
    """One run's ``n_records`` records: ``lax.scan`` over records of a ``lax.scan`` of ``record_every`` steps."""

    def run(state: Any, inputs: Any) -> tuple[Any, Any]:
        def one_step(s: Any, _: Any) -> tuple[Any, None]:
            return step(s, inputs), None

        def one_record(s: Any, _: Any) -> tuple[Any, Any]:
            s, _ = jax.lax.scan(one_step, s, None, length=record_every)
            return s, metrics(s, inputs)

        return jax.lax.scan(one_record, state, None, length=n_records)

    return run


def _batched_input_flags(axes: Any, inputs: Any) -> list[bool]:
    """For each leaf of ``inputs``: does it carry the batch axis described by ``axes`` (a prefix of in_axes)?"""
    flags = jax.tree_util.tree_map(lambda a, sub: jax.tree_util.tree_map(lambda _: a == 0, sub),
                                   axes, inputs, is_leaf=lambda x: x is None)
    return jax.tree_util.tree_leaves(flags)


def _over_run_chunks(fn: Callable, batch_axes: Sequence[Any], run_chunk: int) -> Callable:
    """``fn(state, inputs)`` (vmapped; every output has the outermost batch axis in front) evaluated
    ``run_chunk`` runs at a time, one chunk after the other (``lax.map``), in one program.

    The ``n`` runs are split into ``k = ceil(n / run_chunk)`` chunks of ``c = ceil(n / k)`` runs;
    chunk ``j`` holds the runs ``j, j + k, j + 2k, ...`` (strided, so a run axis sharded over devices
    stays sharded inside every chunk).  When ``k c > n`` the first ``k c - n`` runs are computed twice
    and the copies dropped.  Each run's arithmetic is the same as without chunking.
    """

    def chunked(state: Any, inputs: Any) -> Any:
        n = jax.tree_util.tree_leaves(state)[0].shape[0]
        k = -(-n // run_chunk)
        c = -(-n // k)
        pad = k * c - n

        def split(x: jax.Array) -> jax.Array:  # (n, ...) -> (k, c, ...)
            if pad:
                x = jnp.concatenate([x, x[:pad]])
            return jnp.swapaxes(x.reshape((c, k) + x.shape[1:]), 0, 1)

        def join(x: jax.Array) -> jax.Array:  # (k, c, ...) -> (n, ...)
            return jnp.swapaxes(x, 0, 1).reshape((k * c,) + x.shape[2:])[:n]

        leaves, treedef = jax.tree_util.tree_flatten(inputs)
        flags = _batched_input_flags(batch_axes[0], inputs)

        def body(args: Any) -> Any:
            st, per_chunk = args
            it = iter(per_chunk)
            inp = jax.tree_util.tree_unflatten(treedef, [next(it) if f else x for x, f in zip(leaves, flags)])
            return fn(st, inp)

        xs = (jax.tree_util.tree_map(split, state), [split(x) for x, f in zip(leaves, flags) if f])
        return jax.tree_util.tree_map(join, jax.lax.map(body, xs))

    return chunked


def _compiled_chunk(step: StepFn, metrics: MetricsFn, record_every: int, n_records: int,
                    batch_axes: Sequence[Any], run_chunk: int | None = None) -> Callable:
    key = ("chunk", step, metrics, record_every, n_records, _axes_key(batch_axes), run_chunk)
    if key not in _COMPILED:
        fn = batched(_record_scan(step, metrics, record_every, n_records), batch_axes)
        _COMPILED[key] = jax.jit(fn if run_chunk is None else _over_run_chunks(fn, batch_axes, run_chunk))
    return _COMPILED[key]


def _compiled_metrics(metrics: MetricsFn, batch_axes: Sequence[Any], run_chunk: int | None = None) -> Callable:
    key = ("metrics", metrics, _axes_key(batch_axes), run_chunk)
    if key not in _COMPILED:
        fn = batched(metrics, batch_axes)
        _COMPILED[key] = jax.jit(fn if run_chunk is None else _over_run_chunks(fn, batch_axes, run_chunk))
    return _COMPILED[key]


# --------------------------------------------------------------------------------------------
# Memory: how many runs one program step may hold
# --------------------------------------------------------------------------------------------

#: Fraction of the free device memory that the run-chunk estimate lets one program use.
MEMORY_FRACTION = 0.8


def _aval_bytes(aval: Any) -> int:
    shape, dtype = getattr(aval, "shape", None), getattr(aval, "dtype", None)
    if shape is None or dtype is None:
        return 0
    itemsize = getattr(dtype, "itemsize", None)  # typed PRNG keys have no numpy dtype
    return math.prod(shape) * int(itemsize if itemsize is not None else 8)


def _jaxpr_bytes(jaxpr: Any) -> int:
    """Sum of the sizes of every value created by ``jaxpr`` and its sub-jaxprs (a loop body once)."""
    total = 0
    for eqn in jaxpr.eqns:
        total += sum(_aval_bytes(v.aval) for v in eqn.outvars)
        for param in eqn.params.values():
            for sub in (param if isinstance(param, (tuple, list)) else (param,)):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    total += _jaxpr_bytes(inner)
    return total


def _n_runs(state: Any, batch_axes: Sequence[Any]) -> int:
    """Size of the outermost batch axis (1 without batch axes)."""
    leaves = jax.tree_util.tree_leaves(state)
    return int(np.shape(leaves[0])[0]) if (leaves and batch_axes) else 1


def _tree_bytes(tree: Any) -> int:
    return sum(_aval_bytes(x) for x in jax.tree_util.tree_leaves(tree))


def free_device_memory(device: Any = None) -> int | None:
    """Free memory of ``device`` in bytes (default: the first local device), or None if unknown.

    Accelerators: ``bytes_limit - bytes_in_use`` of ``device.memory_stats()``; the CPU backend:
    ``MemAvailable`` of ``/proc/meminfo`` (host memory is the CPU device's memory).
    """
    device = jax.local_devices()[0] if device is None else device
    stats = device.memory_stats() if hasattr(device, "memory_stats") else None
    if stats and "bytes_limit" in stats:
        return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


_WORKING_BYTES: dict[tuple, int] = {}


def working_memory_estimate(step: StepFn, metrics: MetricsFn, state: Any, inputs: Any, *, record_every: int,
                            n_records: int, batch_axes: Sequence[Any] = ()) -> dict[str, int]:
    """Memory estimate of one :func:`simulate` program (``n_records`` records of ``record_every`` steps).

    Returns ``{"resident": bytes, "working": bytes, "n_runs": int}``: ``resident`` = the state and
    inputs held for the whole call, counted three and two times (the arguments, their run-chunked
    copies, the returned state); ``working`` = an
    upper bound on everything the vmapped program creates, the sum of the sizes of every
    intermediate value of its jaxpr (each loop body counted once, the stacked records included).
    XLA reuses buffers, so the true peak is lower (typically 2-4x for the modular models).  The
    working memory grows linearly with the number of runs ``n_runs`` (the outermost batch axis).
    """
    n_runs = _n_runs(state, batch_axes)
    sig = tuple((tuple(np.shape(x)), str(jnp.result_type(x))) for x in jax.tree_util.tree_leaves((state, inputs)))
    key = (step, metrics, record_every, n_records, _axes_key(batch_axes),
           jax.tree_util.tree_structure((state, inputs)), sig)
    if key not in _WORKING_BYTES:
        fn = batched(_record_scan(step, metrics, record_every, n_records), batch_axes)
        _WORKING_BYTES[key] = _jaxpr_bytes(jax.make_jaxpr(fn)(state, inputs).jaxpr)
    resident = 3 * _tree_bytes(state) + 2 * _tree_bytes(inputs)
    return {"resident": resident, "working": _WORKING_BYTES[key], "n_runs": n_runs}


def choose_run_chunk(estimate: Mapping[str, int], free_bytes: int | None, n_devices: int = 1) -> int | None:
    """Runs per chunk so that the :func:`working_memory_estimate` fits ``MEMORY_FRACTION * free_bytes``.

    ``None`` = everything fits in one program (or the free memory is unknown).  Otherwise the largest
    chunk (a multiple of ``n_devices``, at least ``n_devices``) with ``resident + working * chunk /
    n_runs <= MEMORY_FRACTION * free_bytes`` per device.
    """
    if free_bytes is None:
        return None
    n = estimate["n_runs"]
    budget = MEMORY_FRACTION * free_bytes * n_devices - estimate["resident"]
    if estimate["working"] <= budget:
        return None
    per_run = estimate["working"] / n
    chunk = int(max(budget, 0.0) // per_run) // n_devices * n_devices
    return max(chunk, n_devices) if chunk < n else None


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
             divergence_hint: str = "", devices: Any = 1, run_chunk: int | str | None = None) -> Trajectory:
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
    run_chunk : int, "auto" or None
        Evaluate at most this many runs (entries of the outermost batch axis) at a time, one chunk
        after the other inside the same compiled program (``lax.map``), so that a sweep larger than
        the device memory still runs in one call; every run's arithmetic is unchanged.  ``None``
        (default): all runs at once.  ``"auto"``: chunk only when :func:`working_memory_estimate`
        exceeds ``MEMORY_FRACTION`` of :func:`free_device_memory` (:func:`choose_run_chunk`).  The
        chunk used is ``extras["run_chunk"]``.

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
    chunk = _resolve_run_chunk(run_chunk, step, metrics, state, inputs, record_every, -(-n_records // n_chunks),
                               batch_axes, n_devices)
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
        m0 = jax.device_get(_compiled_metrics(metrics, batch_axes, chunk)(state, inputs))
        records = [{k: np.asarray(v)[..., None] for k, v in m0.items()}]

    def assemble(final_state: Any = None) -> Trajectory:
        cat = {k: np.concatenate([r[k] for r in records], axis=-1) for k in records[0]}
        n = next(iter(cat.values())).shape[-1]
        return Trajectory(times=times[:n], metrics=cat, config=config, final_state=final_state,
                          extras={"n_devices": np.asarray(n_devices), "run_chunk": np.asarray(chunk or _n_runs(state0, batch_axes))})

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
            run = _compiled_chunk(step, metrics, record_every, size, batch_axes, chunk)
            state, ms = run(state, inputs)
            records.append({k: _record_axis_last(v, len(batch_axes)) for k, v in jax.device_get(ms).items()})
            check(assemble(), state)
            if bar is not None:
                bar.update(size * record_every)
    finally:
        if bar is not None:
            bar.close()
    return assemble(jax.device_get(state))


def _resolve_run_chunk(run_chunk: int | str | None, step: StepFn, metrics: MetricsFn, state: Any, inputs: Any,
                       record_every: int, n_records: int, batch_axes: Sequence[Any], n_devices: int) -> int | None:
    """The run chunk of :func:`simulate`: None (all runs in one program) or a number of runs < n_runs."""
    if run_chunk is None or not batch_axes:
        return None
    n_runs = _n_runs(state, batch_axes)
    if run_chunk == "auto":
        est = working_memory_estimate(step, metrics, state, inputs, record_every=record_every,
                                      n_records=n_records, batch_axes=batch_axes)
        return choose_run_chunk(est, free_device_memory(), n_devices)
    if isinstance(run_chunk, str):
        raise DomainError(f"run_chunk must be a positive int, 'auto' or None (got {run_chunk!r})")
    run_chunk = integer_at_least(run_chunk, "run_chunk", 1)
    if n_devices > 1 and run_chunk % n_devices:
        raise DomainError(f"run_chunk must be a multiple of the {n_devices} devices used (got {run_chunk})")
    return run_chunk if run_chunk < n_runs else None


def _record_axis_last(v: Any, n_batch: int) -> np.ndarray:
    """Scan stacks records on axis 0 of each run, i.e. right after the batch axes; move it last."""
    v = np.asarray(v)
    return np.moveaxis(v, n_batch, -1)
