"""The training engine: compiled record scans, memory-sized run chunks, and `simulate` itself."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..._validate import choice, DomainError, integer_at_least
from ...runfile import (
    RUN_FORMAT_VERSION,
    RunFileError,
    RunFileWarning,
    Trajectory,
    _canonical_class,
    _check_absent,
    _check_options,
    _config_from_obj,
    _config_obj,
    _read_run,
    _RunFile,
    _RunLock,
    _trusted_classes,
    _write_run,
)
from .._runtime import DivergenceWarning, SimulationDiverged
from ._batching import _axes_key, batched, MetricsFn, record_times, StepFn
from ._options import check_devices, check_record_every, ON_DIVERGENCE


class ShardedRuns(NamedTuple):
    """Result of `shard_runs`: the state and inputs placed on the devices, and how many were used."""

    state: Any
    """The state, its leaves split over the devices along the outermost batch axis."""
    inputs: Any
    """The inputs: leaves batched on the outermost axis split like the state, shared leaves replicated on
    every device."""
    n_devices: int
    """Number of devices used, ≥ 1 (1 when nothing was moved)."""


def shard_runs(state: Any, inputs: Any, batch_axes: Sequence[Any], devices: Any = None) -> ShardedRuns:
    """Shard the outermost batch axis of a sweep over local devices (`jax.sharding`, no scheduler).

    The `state` leaves (batch axes in front) and the `inputs` leaves batched on the first batch
    axis are placed with `NamedSharding(Mesh(devices, ("runs",)), PartitionSpec("runs"))`; shared
    inputs are replicated.  `jax.jit` then partitions the vmapped scan over the devices (GSPMD),
    each device running its share of the runs; no code changes for one device or many.  Only the
    local devices are used: under `jax.distributed` each process runs its own share of the sweep
    (`grokclocks.sim.distributed.process_share`) and the shards are joined afterwards
    (`grokclocks.sim.distributed.merge_seed_shards`); runs never need cross-host traffic.

    Parameters
    ----------
    state : pytree
        The runs' state, every batch axis in front of each leaf.
    inputs : pytree or None
        The runs' inputs, batched as `batch_axes` says; `None` places only the state.
    batch_axes : sequence of pytrees
        One `in_axes` pytree of `inputs` per batch axis, outermost first (`0` = batched, `None` =
        shared); only the outermost axis is sharded.  `()` means one run: nothing is moved.
    devices : None, int or sequence of jax devices
        `None` (default) means all local devices, an int `n` the first `n` of them, a sequence the
        devices themselves (see `check_devices`).  With `None`, an outermost batch size that is not
        a multiple of the number of devices moves nothing (one device is used); an explicit number
        of devices that does not divide it is a `DomainError`.

    Returns
    -------
    ShardedRuns
        The named tuple (`state`, `inputs`, `n_devices`); it unpacks like a plain tuple.  With one
        device or no batch axis, `state` and `inputs` are returned unmoved and `n_devices` is 1.

    Raises
    ------
    DomainError
        If `devices` is invalid (see `check_devices`).
    """
    leaves = jax.tree_util.tree_leaves(state)
    n_runs = np.shape(leaves[0])[0] if leaves and batch_axes else None
    devs = check_devices(devices, n_runs)
    if len(devs) <= 1 or not batch_axes or not leaves:
        return ShardedRuns(state, inputs, 1)
    if n_runs % len(devs):
        return ShardedRuns(state, inputs, 1)
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(devs), ("runs",))
    split = NamedSharding(mesh, PartitionSpec("runs"))
    repl = NamedSharding(mesh, PartitionSpec())
    state = jax.tree_util.tree_map(lambda x: jax.device_put(x, split), state)

    def place(axis: Any, sub: Any) -> Any:
        return jax.tree_util.tree_map(lambda x: jax.device_put(x, split if axis == 0 else repl), sub)

    if inputs is not None:
        inputs = jax.tree_util.tree_map(place, batch_axes[0], inputs, is_leaf=lambda x: x is None)
    return ShardedRuns(state, inputs, len(devs))


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

MEMORY_FRACTION = 0.8
"""Fraction of the free device memory that `choose_run_chunk` lets one program use (0.8)."""


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
    """Free memory of a JAX device in bytes, or `None` if it cannot be told.

    On accelerators it is `bytes_limit - bytes_in_use` of `device.memory_stats()`; on the CPU
    backend, `MemAvailable` of `/proc/meminfo` (host memory is the CPU device's memory), or the
    available physical pages where that file is missing.

    Parameters
    ----------
    device : jax device or None
        A device of this process (one of `jax.devices()`); `None` (default) means the first local
        device.

    Returns
    -------
    int or None
        Free bytes, or `None` when neither the device nor the operating system reports it.

    Raises
    ------
    DomainError
        If `device` is not `None` and not a device of this process.
    """
    if device is not None and device not in jax.devices():
        raise DomainError(f"device must be None or a jax device of this process, one of {jax.devices()} "
                          f"(got {device!r})")
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
    """Memory estimate of one `simulate` program of `n_records` records of `record_every` steps.

    The estimate traces the vmapped program (`jax.make_jaxpr`, nothing runs) and sums the sizes of
    every intermediate value of its jaxpr; the result is cached per step, metrics, shapes and
    dtypes.  XLA reuses buffers, so the true peak is lower (typically 2–4× for the modular models).

    Parameters
    ----------
    step : callable
        The step `step(state, inputs) -> state` of one run, as given to `simulate`.
    metrics : callable
        The metrics `metrics(state, inputs) -> dict[str, scalar]` of one run, as given to `simulate`.
    state : pytree
        The runs' initial state, every batch axis in front of each leaf (only shapes and dtypes
        are used).
    inputs : pytree
        The runs' inputs, batched as `batch_axes` says (only shapes and dtypes are used).
    record_every : int
        Steps between two records, an integer ≥ 1.
    n_records : int
        Records made by one program (one chunk of `simulate`), an integer ≥ 1.
    batch_axes : sequence of pytrees
        One `in_axes` pytree of `inputs` per batch axis, outermost first; `()` (default) is one run.

    Returns
    -------
    dict of str to int
        `{"resident": bytes, "working": bytes, "n_runs": int}`: `resident` is the state and inputs
        held for the whole call, counted three and two times (the arguments, their run-chunked
        copies, the returned state); `working` is an upper bound on everything the vmapped program
        creates (each loop body counted once, the stacked records included), which grows linearly
        with `n_runs`, the size of the outermost batch axis (1 without batch axes).

    Raises
    ------
    DomainError
        If `step` or `metrics` is not callable, or a count is not an integer ≥ 1.
    """
    for f, name in ((step, "step"), (metrics, "metrics")):
        if not callable(f):
            raise DomainError(f"{name} must be callable (got {f!r})")
    record_every = integer_at_least(record_every, "record_every", 1)
    n_records = integer_at_least(n_records, "n_records", 1)
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
    """Runs per chunk so that the `working_memory_estimate` fits in `MEMORY_FRACTION` of the free memory.

    Parameters
    ----------
    estimate : mapping of str to int
        The result of `working_memory_estimate`: `"resident"` and `"working"` in bytes (integers
        ≥ 0) and `"n_runs"` (integer ≥ 1).
    free_bytes : int or None
        Free memory per device in bytes, an integer ≥ 0 (e.g. `free_device_memory()`); `None`
        means unknown.
    n_devices : int
        Number of devices the runs are shared over, an integer ≥ 1; default 1.

    Returns
    -------
    int or None
        `None` when everything fits in one program, when the working memory does not depend on the
        runs (0), or when `free_bytes` is `None`.  Otherwise the largest chunk, a multiple of
        `n_devices` and at least `n_devices`, with resident + working·chunk/n_runs ≤
        `MEMORY_FRACTION` · free_bytes · n_devices; `None` again if that chunk holds every run.

    Raises
    ------
    DomainError
        If `estimate` is not such a mapping, or a count is out of its domain.
    """
    if not isinstance(estimate, Mapping) or not {"resident", "working", "n_runs"} <= set(estimate):
        raise DomainError("estimate must be the mapping of working_memory_estimate (resident, working, n_runs) "
                          f"(got {estimate!r})")
    for key in ("resident", "working"):
        integer_at_least(estimate[key], f"estimate[{key!r}]", 0)
    integer_at_least(estimate["n_runs"], "estimate['n_runs']", 1)
    n_devices = integer_at_least(n_devices, "n_devices", 1)
    if free_bytes is None:
        return None
    free_bytes = integer_at_least(free_bytes, "free_bytes", 0)
    n = estimate["n_runs"]
    budget = MEMORY_FRACTION * free_bytes * n_devices - estimate["resident"]
    if estimate["working"] <= budget or estimate["working"] == 0:  # fits, or nothing shrinks with the chunk
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
        if not np.issubdtype(v.dtype, np.inexact):
            continue
        bad = ~np.isfinite(v)
        if bad.any():
            j = int(np.argmax(bad.reshape(-1, v.shape[-1]).any(axis=0)))
            if first is None or j < first[0]:
                first = (j, name)
    return first


def _first_bad_record(metrics: Mapping[str, np.ndarray], n_batch: int) -> np.ndarray:
    """Per run (the ``n_batch`` leading axes): index of the first record with a non-finite float metric, -1 if none."""
    first = None
    for v in metrics.values():
        v = np.asarray(v)
        if first is None:
            first = np.full(v.shape[:n_batch], -1, dtype=np.int64)
        if not np.issubdtype(v.dtype, np.inexact):
            continue
        bad = (~np.isfinite(v)).reshape(v.shape[:n_batch] + (-1, v.shape[-1])).any(axis=-2)
        j = np.where(bad.any(axis=-1), np.argmax(bad, axis=-1), -1)
        first = np.where((j >= 0) & ((first < 0) | (j < first)), j, first)
    return first


def _nan_from(metrics: dict[str, np.ndarray], first_bad: np.ndarray) -> dict[str, np.ndarray]:
    """Float metrics of each diverged run set to NaN from its first non-finite record on (others untouched)."""
    if not (first_bad >= 0).any():
        return metrics
    out = {}
    for k, v in metrics.items():
        if np.issubdtype(v.dtype, np.inexact):
            n = v.shape[-1]
            after = (first_bad[..., None] >= 0) & (np.arange(n) >= first_bad[..., None])
            mask = after.reshape(first_bad.shape + (1,) * (v.ndim - first_bad.ndim - 1) + (n,))
            v = v.copy()
            v[np.broadcast_to(mask, v.shape)] = np.nan
        out[k] = v
    return out


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Batch axes of the engine (the state's leading axes) and of the result (a C-order reshape of them)."""

    engine: tuple[int, ...]
    out: tuple[int, ...]

    @classmethod
    def of(cls, state0: Any, n_batch: int, batch_shape: Any) -> _Layout:
        leaves = jax.tree_util.tree_leaves(state0)
        engine = tuple(int(n) for n in np.shape(leaves[0])[:n_batch]) if leaves else ()
        if batch_shape is None:
            return cls(engine, engine)
        out = tuple(integer_at_least(n, "batch_shape", 1) for n in batch_shape)
        if math.prod(out) != math.prod(engine):
            raise DomainError(f"batch_shape must reshape the engine's batch axes {engine} (got {out})")
        return cls(engine, out)

    def to_out(self, v: np.ndarray) -> np.ndarray:
        return v.reshape(self.out + v.shape[len(self.engine):])

    def to_engine(self, v: np.ndarray) -> np.ndarray:
        return v.reshape(self.engine + v.shape[len(self.out):])


def _config_diff(saved: Mapping[str, Any], config: Any) -> list[str]:
    """The fields in which a saved config (JSON object) and ``config`` differ, as ``name: saved X, now Y``."""
    new = json.loads(json.dumps(_config_obj(config)))
    if _canonical_class(saved.get("class")) != new["class"]:
        return [f"config class: saved {saved.get('class')}, now {new['class']}"]
    try:  # rebuilt (this call's class trusted), so fields added since with a default compare equal
        trusted = _trusted_classes([type(config)]) if dataclasses.is_dataclass(config) else {}
        old = json.loads(json.dumps(_config_obj(_config_from_obj(saved, trusted))))["fields"]
    except Exception:
        old = saved.get("fields")
    new_fields = new["fields"]
    if not isinstance(old, dict) or not isinstance(new_fields, dict):
        return [] if old == new_fields else [f"fields: saved {old!r}, now {new_fields!r}"]
    absent = "<absent>"
    return [f"{k}: saved {old.get(k, absent)!r}, now {new_fields.get(k, absent)!r}"
            for k in sorted(set(old) | set(new_fields)) if old.get(k, absent) != new_fields.get(k, absent)]


def _resume_point(run: _RunFile, config: Any, metrics: MetricsFn, state0: Any, inputs: Any,
                  batch_axes: Sequence[Any], layout: _Layout, times: np.ndarray) -> tuple[Any, dict, int]:
    """``(state, records in engine layout, records done)`` of a saved run, after checking it is this run."""
    where = f"cannot resume {run.npz}"
    diff = _config_diff(run.config, config)
    if diff:
        raise RunFileError(f"{where}: its config differs from this call's ({'; '.join(diff)}); pass "
                           "overwrite=True to replace the saved run, or another save_path")
    leaves0, treedef = jax.tree_util.tree_flatten(state0)
    saved = [run.arrays[k] for k in sorted(k for k in run.arrays if k.startswith("state:"))]
    if not saved:
        raise RunFileError(f"{where}: it holds no state to continue from (written by Trajectory.save, not by "
                           "an incremental run); pass overwrite=True to rerun from step 0")
    want = [(tuple(np.shape(x)), np.dtype(x.dtype)) for x in leaves0]
    have = [(a.shape, a.dtype) for a in saved]
    if have != want:
        raise RunFileError(f"{where}: its saved state (shapes/dtypes {have}) does not match this run's {want}")
    n = run.arrays["times"].size
    if n > times.size or not np.array_equal(run.arrays["times"], times[:n]):
        raise RunFileError(f"{where}: its record times {run.arrays['times'][:4].tolist()}... ({n} records) are "
                           f"not a prefix of this run's {times[:4].tolist()}... ({times.size} records)")
    spec = jax.eval_shape(batched(metrics, batch_axes), state0, inputs)
    saved_metrics = run.named("metric")
    if set(saved_metrics) != set(spec):
        raise RunFileError(f"{where}: it records the metrics {sorted(saved_metrics)}, this run records "
                           f"{sorted(spec)} (other hooks or trackers?)")
    first = {}
    for k, s in spec.items():
        v = saved_metrics[k]
        rest = tuple(s.shape[len(layout.engine):])
        if v.dtype != s.dtype:
            raise RunFileError(f"{where}: metric {k!r} is saved as {v.dtype}, this run records {s.dtype}")
        if v.shape == layout.out + rest + (n,):
            first[k] = layout.to_engine(v)
        elif v.shape == layout.engine + rest + (n,):  # an interrupted format-1 run: engine layout
            first[k] = v
        else:
            raise RunFileError(f"{where}: metric {k!r} has shape {v.shape}, this run's is {layout.out + rest + (n,)}")
    state = jax.tree_util.tree_unflatten(treedef, [jnp.asarray(a) for a in saved])
    return state, first, n - 1


def simulate(step: StepFn, metrics: MetricsFn, state0: Any, inputs: Any = None, *, steps: int,
             record_every: int, batch_axes: Sequence[Any] = (), config: Any = None,
             progress: bool = False, n_chunks: int | None = None,
             save_path: str | os.PathLike | None = None, resume: bool = False, overwrite: bool = False,
             divergence_hint: str = "", devices: Any = 1, on_divergence: str = "raise_if_all",
             batch_shape: Sequence[int] | None = None,
             extras_fn: Callable[[Trajectory], Mapping[str, np.ndarray]] | None = None,
             run_chunk: int | str | None = None,
             progress_info: Callable[[Trajectory], str] | None = None) -> Trajectory:
    """Run `steps` steps of `step` and record `metrics` every `record_every` steps.

    The step is jit-compiled; the time loop is a `lax.scan` over records whose body scans
    `record_every` steps, vmapped over the batch axes, so nothing returns to Python between
    records.  The records are split into `n_chunks` compiled calls, after each of which divergence
    is checked, the progress bar advances and the run is saved (with `save_path`).

    Parameters
    ----------
    step : callable
        `step(state, inputs) -> state`, one step of one run (pure; jit-compatible).  Use a
        module-level function or a cached factory (e.g. `optax_step`) so that repeated calls
        reuse the compiled code.
    metrics : callable
        `metrics(state, inputs) -> dict[str, scalar]`, what one run records (pure; jit-compatible).
    state0 : pytree
        Initial state, with every batch axis in front of each leaf.
    inputs : pytree or None
        Per-run constants (data, hyperparameters), batched as `batch_axes` says; `None` (default)
        for steps that need none.
    steps : int
        Number of steps, an integer ≥ 1 and a multiple of `record_every`.
    record_every : int
        Record after every `record_every` steps (and at step 0), an integer in [1, `steps`].
    batch_axes : sequence of pytrees
        One entry per batch axis, outermost first: the `in_axes` of `inputs` for that axis (`0` =
        batched along that axis, `None` = shared).  `()` (default) is a single run.
    config : frozen dataclass or None
        The run's configuration, stored with the result, shown in error messages and written to
        saved files; `None` (default) for none.
    progress : bool
        Show a tqdm progress bar over the compiled chunks; default `False`.
    n_chunks : int or None
        Number of compiled calls the records are split into, an integer ≥ 1 (capped at the number
        of records).  `None` (default) means 1, or 20 with a progress bar or incremental saving.
        Divergence is checked after each chunk.
    save_path : str or os.PathLike or None
        Save the result (and the state, for `resume`) after every chunk with `save_trajectory`
        (`.npz` + `.json`, atomic, versioned, checksummed).  An existing file is an error
        (`RunExistsError`) unless `resume` or `overwrite` is set; this is checked before anything
        runs.  The run's lock file `<save_path>.lock` is held from then until the call returns (or
        raises): another call on the same path, in this process or another, is a `RunExistsError`
        naming the holder, with `overwrite=True` too.  `None` (default) saves nothing.
    resume : bool
        With `save_path`: continue the run saved there (a missing file starts it); default
        `False`.  The saved config, record times, state and metric names must be this run's (else
        `RunFileError` naming the differences).  A finished run is returned as saved
        (bit-identical, the file untouched); a partial one continues from its last chunk and ends
        equal to an uninterrupted run.  The file is read as `grokclocks.runfile.load_trajectory`
        reads it, its arrays unpacking to at most the larger of 256 MiB and the file's own size
        (the engine writes them uncompressed): a file that is not a regular file, that unpacks to
        more, or that is otherwise hostile is a `RunFileError` naming it.
    overwrite : bool
        With `save_path`: replace an existing run (its file is replaced at the first save, after
        the first chunk, so a run that diverges in its first chunk leaves it intact); default
        `False`.  Exclusive with `resume`.
    divergence_hint : str
        Text added to the `SimulationDiverged` message and the divergence warning (e.g. the
        stability bound on the learning rate); default empty.
    devices : None, int or sequence of jax devices
        Shard the outermost batch axis over devices (see `shard_runs`, `check_devices`): `None`
        means all local devices, an int `n` the first `n`, a sequence the devices themselves; `1`
        (default) is one device.  The number used is `extras["n_devices"]`.
    on_divergence : {"raise_if_all", "flag", "raise"}
        What a diverged run does.  A run diverges at the first record where one of its float
        metrics is NaN or inf.  Each diverged run is flagged in `extras["diverged"]` (bool, batch
        shape) and `extras["diverged_step"]` (that record's step; -1 for runs that did not
        diverge); its float metrics are NaN from that record on (integer metrics are left as
        computed), the other runs are untouched.  `"raise_if_all"` (default) keeps a sweep in which
        some runs diverged (with a `grokclocks.sim.DivergenceWarning`) and raises
        `SimulationDiverged` once every run has diverged (so a single run raises); `"flag"`
        never raises (warning only); `"raise"` raises as soon as any run diverges.  A chunk that
        raises is not saved: the file keeps the last chunk before it (the exception's `trajectory`
        has the records up to it).
    batch_shape : sequence of int or None
        Shape of the result's batch axes, a C-order reshape of the engine's (e.g. a flattened run
        axis shown as `(*grid, n_seeds)`); saved files hold the result's shape.  `None` (default)
        keeps the engine's batch shape.
    extras_fn : callable or None
        `extras_fn(trajectory) -> dict[str, numpy.ndarray]`, derived per-run extras (e.g. crossing
        times) added to the result and to every saved file; `None` (default) adds none.
    run_chunk : int, "auto" or None
        Evaluate at most this many runs (entries of the outermost batch axis, an integer ≥ 1 and a
        multiple of the number of devices) at a time, one chunk after the other inside the same
        compiled program (`lax.map`), so that a sweep larger than the device memory still runs in
        one call; every run's arithmetic is unchanged.  `None` (default): all runs at once.
        `"auto"`: chunk only when `working_memory_estimate` exceeds `MEMORY_FRACTION` of
        `free_device_memory` (see `choose_run_chunk`).  The chunk used is `extras["run_chunk"]`.
    progress_info : callable or None
        With `progress`: a function `Trajectory -> str` called after every chunk with the result so
        far (the records up to that chunk); the progress bar shows the text it returns (e.g. the
        forecast of `grokclocks.forecast.progress_line`).  `None` (default) shows nothing extra.

    Returns
    -------
    Trajectory
        `times` = 0, `record_every`, ..., `steps`; metrics of shape `(*batch_shape, n_records)`;
        extras `diverged`, `diverged_step`, `n_devices`, `run_chunk` (and those of `extras_fn`);
        `final_state` = the state after the last step (numpy, engine layout).

    Raises
    ------
    SimulationDiverged
        As `on_divergence` says.
    DomainError
        For invalid options (before anything is compiled).
    RunFileError
        `save_path` exists without `resume`/`overwrite`, or another process is writing it
        (`RunExistsError`); the run to resume is damaged or is not this run; a save failed (a full
        disk, a file-size limit: the file keeps its last complete save).
    """
    steps, record_every = check_record_every(steps, record_every)
    n_records = steps // record_every
    times = record_times(steps, record_every)
    if n_chunks is None:
        n_chunks = 20 if (progress or save_path is not None) else 1
    n_chunks = integer_at_least(n_chunks, "n_chunks", 1)
    on_divergence = choice(on_divergence, "on_divergence", ON_DIVERGENCE)
    layout = _Layout.of(state0, len(batch_axes), batch_shape)
    check_devices(devices, layout.engine[0] if layout.engine else None)
    paths = _check_options(save_path, resume, overwrite)
    lock = None if paths is None else _RunLock.acquire(paths.npz, what="simulate")  # held until the run ends
    try:
        if paths is not None and not (resume or overwrite):
            _check_absent(paths)
        return _simulate_locked(step, metrics, state0, inputs, steps=steps, record_every=record_every,
                                batch_axes=batch_axes, config=config, progress=progress, n_chunks=n_chunks,
                                paths=paths, resume=resume, divergence_hint=divergence_hint, devices=devices,
                                on_divergence=on_divergence, layout=layout, extras_fn=extras_fn,
                                run_chunk=run_chunk, n_records=n_records, times=times,
                                progress_info=progress_info)
    finally:
        if lock is not None:
            lock.release()


def _simulate_locked(step: StepFn, metrics: MetricsFn, state0: Any, inputs: Any, *, steps: int, record_every: int,
                     batch_axes: Sequence[Any], config: Any, progress: bool, n_chunks: int, paths: Any,
                     resume: bool, divergence_hint: str, devices: Any, on_divergence: str, layout: _Layout,
                     extras_fn: Callable[[Trajectory], Mapping[str, np.ndarray]] | None,
                     run_chunk: int | str | None, n_records: int, times: np.ndarray,
                     progress_info: Callable[[Trajectory], str] | None = None) -> Trajectory:
    """The body of `simulate` once its options are checked and the run's lock (if it saves) is held."""
    saved = None
    if paths is not None and resume and paths.npz.exists():
        saved = _read_run(paths.npz, max_bytes=None)  # its arrays may unpack to max(256 MiB, its size)
        if saved.version < 2:
            warnings.warn(f"resuming {saved.npz}, a run file of format 1 (no checksum); it is rewritten in format "
                          f"{RUN_FORMAT_VERSION} at the next save", RunFileWarning, stacklevel=3)

    records: list[dict[str, np.ndarray]] = []
    state, inputs, n_devices = shard_runs(state0, inputs, batch_axes, devices)
    chunk = _resolve_run_chunk(run_chunk, step, metrics, state, inputs, record_every, -(-n_records // n_chunks),
                               batch_axes, n_devices)
    done = 0  # records already computed (excluding the one at step 0)
    if saved is not None:
        state, first, done = _resume_point(saved, config, metrics, state0, inputs, batch_axes, layout, times)
        state, _, _ = shard_runs(state, None, batch_axes, devices if n_devices > 1 else 1)
        records = [first]
    if not records:
        m0 = jax.device_get(_compiled_metrics(metrics, batch_axes, chunk)(state, inputs))
        records = [{k: np.asarray(v)[..., None] for k, v in m0.items()}]

    def assemble() -> tuple[Trajectory, tuple[int, str] | None]:
        raw = {k: np.concatenate([r[k] for r in records], axis=-1) for k in records[0]}
        n = next(iter(raw.values())).shape[-1]
        first_bad = _first_bad_record(raw, len(layout.engine))
        diverged = first_bad >= 0
        extras = {"n_devices": np.asarray(n_devices), "run_chunk": np.asarray(chunk or _n_runs(state0, batch_axes)),
                  "diverged": layout.to_out(diverged),
                  "diverged_step": layout.to_out(np.where(diverged, times[np.maximum(first_bad, 0)], -1))}
        masked = _nan_from(raw, first_bad)
        result = Trajectory(times=times[:n], metrics={k: layout.to_out(v) for k, v in masked.items()},
                            config=config, extras=extras)
        if extras_fn is not None:
            result = dataclasses.replace(result, extras={**extras_fn(result), **extras})
        return result, _first_nonfinite(raw)

    def check(result: Trajectory, bad: tuple[int, str] | None) -> None:
        diverged = np.asarray(result.extras["diverged"])
        n_div = int(diverged.sum())
        if n_div and (on_divergence == "raise" or (on_divergence == "raise_if_all" and n_div == diverged.size)):
            hint = "; ".join(x for x in (divergence_hint, f"{n_div} of {diverged.size} runs diverged"
                                         if diverged.size > 1 else "") if x)
            raise SimulationDiverged(int(result.times[bad[0]]), bad[1], config, hint, trajectory=result)

    result, bad = assemble()
    if saved is not None and done == n_records:  # a finished run: returned as saved
        result = dataclasses.replace(result, extras={**result.extras, **saved.named("extra")})
    check(result, bad)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=steps, initial=done * record_every, unit="step", desc="simulate")
    try:
        for size in _chunk_sizes(n_records - done, n_chunks) if done < n_records else []:
            run = _compiled_chunk(step, metrics, record_every, size, batch_axes, chunk)
            state, ms = run(state, inputs)
            records.append({k: _record_axis_last(v, len(batch_axes)) for k, v in jax.device_get(ms).items()})
            result, bad = assemble()
            check(result, bad)
            if paths is not None:
                _write_run(result, paths, state=state, planned_steps=steps)
            if bar is not None:
                if progress_info is not None:
                    bar.set_postfix_str(progress_info(result), refresh=False)
                bar.update(size * record_every)
    finally:
        if bar is not None:
            bar.close()
    diverged = np.asarray(result.extras["diverged"])
    if diverged.any():
        steps_div = np.asarray(result.extras["diverged_step"])[diverged]
        warnings.warn(f"{int(diverged.sum())} of {diverged.size} runs diverged (first at step {int(steps_div.min())}"
                      f"{'; ' + divergence_hint if divergence_hint else ''}); on_divergence={on_divergence!r} kept "
                      "the others: extras['diverged'] flags them, their float metrics are NaN from "
                      "extras['diverged_step'] on", DivergenceWarning, stacklevel=3)
    return dataclasses.replace(result, final_state=jax.device_get(state))


def _resolve_run_chunk(run_chunk: int | str | None, step: StepFn, metrics: MetricsFn, state: Any, inputs: Any,
                       record_every: int, n_records: int, batch_axes: Sequence[Any], n_devices: int) -> int | None:
    """The run chunk of :func:`simulate`: none (all runs in one program) or a number of runs < n_runs."""
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
