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
  divergence per run (``on_divergence``: flag the run, or :class:`~grokclocks.sim.SimulationDiverged`)
  and save incrementally (:func:`save_trajectory`: atomic, versioned, checksummed ``.npz`` + JSON
  config), so that a crash loses nothing already computed and ``resume=True`` continues from the
  last saved chunk (and returns a finished run unchanged).

Optimisers come from optax: :func:`optax_step` turns a gradient and an optimiser factory into a step;
the factory is called *inside* the step with the (possibly vmapped) ``inputs``, so hyperparameters
such as ``eta`` or the weight decay can be batched like any other input.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import json
import math
import os
import uuid
import warnings
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .._validate import DomainError, OutputExistsError, choice, file_path, integer_at_least, writable_file
from ._runtime import DivergenceWarning, SimulationDiverged

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
    "check_run_path",
    "check_record_every",
    "check_devices",
    "seed_tuple",
    "ON_DIVERGENCE",
    "RUN_FORMAT",
    "RUN_FORMAT_VERSION",
    "RunFileError",
    "RunExistsError",
    "RunFileNotFoundError",
    "RunFileWarning",
]

StepFn = Callable[[Any, Any], Any]
MetricsFn = Callable[[Any, Any], Mapping[str, jax.Array]]


# --------------------------------------------------------------------------------------------
# Results and their persistence
# --------------------------------------------------------------------------------------------

RUN_FORMAT = "grokclocks.trajectory"
RUN_FORMAT_VERSION = 2
"""Run-file format written by :func:`save_trajectory`.  Version 1 = the unversioned files of
grokclocks 0.1 before it (no ``meta``, no checksum): still read, with a :class:`RunFileWarning`."""


class RunFileError(DomainError):
    """A run file cannot be used: missing, empty, truncated, damaged, foreign, of an unknown format
    version, or not the run being resumed.  The message names the file and what is wrong."""


class RunExistsError(RunFileError, OutputExistsError):
    """A run file exists where a new run would be written (``resume=True`` or ``overwrite=True`` decide)."""


class RunFileNotFoundError(RunFileError, FileNotFoundError):
    """No run file at the given path."""


class RunFileWarning(UserWarning):
    """A run file was read with a caveat: an old format without checksum, or a partial run."""


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
        Derived per-run quantities (e.g. crossing steps), shape ``batch_shape`` or scalar.  Every
        result of :func:`simulate` has ``diverged`` (bool, ``batch_shape``), ``diverged_step`` (int,
        the first recorded step with a non-finite metric, -1 = none) and ``n_devices``.
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

    def save(self, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
        """Write ``path`` (``.npz``: times, metrics, extras) and ``path`` with ``.json`` (config).

        An existing file is replaced only with ``overwrite=True`` (else :class:`RunExistsError`).
        See :func:`save_trajectory`.
        """
        return save_trajectory(self, path, overwrite=overwrite)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Trajectory:
        """Read a trajectory written by :meth:`save` (checks format version and checksum)."""
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


def _config_obj(config: Any) -> dict[str, Any]:
    if config is None:
        return {"class": None, "fields": None}
    cls = type(config)
    return {"class": f"{cls.__module__}:{cls.__qualname__}", "fields": _jsonable(config)}


def config_to_json(config: Any) -> str:
    """JSON text of a config dataclass, tagged with its class so :func:`config_from_json` can rebuild it."""
    if config is None:
        return json.dumps(_config_obj(None))
    return json.dumps(_config_obj(config), indent=1)


def _config_from_obj(obj: Mapping[str, Any]) -> Any:
    if obj["class"] is None:
        return None
    module, qualname = obj["class"].split(":")
    cls: Any = importlib.import_module(module)
    for part in qualname.split("."):
        cls = getattr(cls, part)
    return cls(**_tuplify(obj["fields"]))


def config_from_json(text: str) -> Any:
    """Rebuild a config written by :func:`config_to_json` (lists become tuples)."""
    return _config_from_obj(json.loads(text))


def _paths(path: str | os.PathLike) -> tuple[Path, Path]:
    """``(<path>.npz, <path>.json)``: the suffix ``.npz`` is added unless present."""
    p = file_path(path, "save_path")
    if p.suffix != ".npz":
        p = p.with_name(p.name + ".npz")
    return p, p.with_suffix(".json")


def _flag(x: Any, name: str) -> bool:
    if not isinstance(x, (bool, np.bool_)):
        raise DomainError(f"{name} must be True or False (got {x!r})")
    return bool(x)


def check_run_path(save_path: str | os.PathLike | None, *, resume: bool = False,
                   overwrite: bool = False) -> tuple[Path, Path] | None:
    """Check ``save_path`` / ``resume`` / ``overwrite`` before any work; the ``(.npz, .json)`` paths or None.

    Rules: ``resume=True`` continues the run saved at ``save_path`` (or starts it if there is none);
    ``overwrite=True`` replaces it; without either an existing file is an error
    (:class:`RunExistsError`), so a run is never replaced by accident.  The two are exclusive.
    """
    resume = _flag(resume, "resume")
    overwrite = _flag(overwrite, "overwrite")
    if save_path is None:
        if resume or overwrite:
            raise DomainError(f"resume={resume} and overwrite={overwrite} need a save_path (got save_path=None)")
        return None
    if resume and overwrite:
        raise DomainError("resume and overwrite are exclusive: resume=True continues the saved run, "
                          "overwrite=True replaces it")
    npz, js = _paths(save_path)
    for f in (npz, js):
        writable_file(f, "save_path", overwrite=True)
    if not (resume or overwrite):
        for f in (npz, js):
            if f.exists():
                raise RunExistsError(f"{f} already exists: pass resume=True to continue the run saved there "
                                     "(same config), overwrite=True to replace it, or another save_path")
    return npz, js


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _atomic_write(path: Path, write: Callable[[Any], None]) -> None:
    """Write ``path`` via a temporary file in its directory: write, fsync, ``os.replace``, fsync the directory.

    A crash or an error at any point leaves the previous ``path`` (if any) untouched and no temporary file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "xb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _checksum(arrays: Mapping[str, np.ndarray]) -> str:
    """sha256 over every array in key order: its key, dtype and shape (as JSON), then its bytes (C order)."""
    h = hashlib.sha256()
    for k in sorted(arrays):
        a = np.ascontiguousarray(arrays[k])
        h.update(json.dumps([k, a.dtype.str, list(a.shape)]).encode())
        h.update(a.reshape(-1).view(np.uint8))
    return h.hexdigest()


def _run_arrays(result: Trajectory, state: Any) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {"times": np.asarray(result.times)}
    arrays.update({f"metric:{k}": np.asarray(v) for k, v in result.metrics.items()})
    arrays.update({f"extra:{k}": np.asarray(v) for k, v in result.extras.items()})
    if state is not None:
        for i, leaf in enumerate(jax.tree_util.tree_leaves(state)):
            arrays[f"state:{i:04d}"] = np.asarray(leaf)
    for k, a in arrays.items():
        if a.dtype.kind not in "biufc":
            raise DomainError(f"{k} must be a numeric array to be saved (got dtype {a.dtype})")
    return arrays


def save_trajectory(result: Trajectory, path: str | os.PathLike, *, state: Any = None, overwrite: bool = False,
                    planned_steps: int | None = None) -> Path:
    """Save a trajectory as ``<path>.npz`` (arrays, format version, checksum) + ``<path>.json``; returns the ``.npz``.

    The ``.npz`` is self-contained (format :data:`RUN_FORMAT_VERSION`): the arrays ``times``,
    ``metric:<name>``, ``extra:<name>`` (and ``state:<i>``, the leaves of ``state``, which
    :func:`simulate` stores to resume a run), ``meta`` (JSON text: format, version, config, the
    planned number of steps of a run in progress) and ``sha256`` (the checksum of all the others,
    :func:`load_trajectory` checks it).  The ``.json`` repeats the config (``class``, ``fields``)
    and the checksum for people and tools that read JSON.

    Each file is written atomically (a temporary file in the same directory, fsync, ``os.replace``):
    a crash leaves the previous file or the new one, never a mixture.  An existing file is
    replaced only with ``overwrite=True``; otherwise :class:`RunExistsError`.
    """
    npz, js = _paths(path)
    if not _flag(overwrite, "overwrite"):
        check_run_path(path)
    arrays = _run_arrays(result, state)
    from .. import __version__

    meta = {"format": RUN_FORMAT, "version": RUN_FORMAT_VERSION, "grokclocks": __version__,
            "config": _config_obj(result.config), "planned_steps": planned_steps}
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    digest = _checksum(arrays)
    # meta and checksum first in the archive: a damaged zip directory that loses entries loses data
    # entries (caught by the checksum), never silently the meta that makes the check possible
    arrays = {"sha256": np.array(digest), "meta": arrays.pop("meta"), **arrays}
    _atomic_write(npz, lambda fh: np.savez(fh, allow_pickle=False, **arrays))
    side = {"format": RUN_FORMAT, "version": RUN_FORMAT_VERSION, "sha256": digest, **meta["config"]}
    _atomic_write(js, lambda fh: fh.write(json.dumps(side, indent=1).encode()))
    return npz


@dataclasses.dataclass(frozen=True)
class _RunFile:
    """A run file as read from disk: its arrays (without ``meta``/``sha256``), config object, format version."""

    npz: Path
    arrays: dict[str, np.ndarray]
    config: dict[str, Any]
    version: int
    planned_steps: int | None = None

    def named(self, prefix: str) -> dict[str, np.ndarray]:
        return {k.split(":", 1)[1]: v for k, v in self.arrays.items() if k.startswith(prefix + ":")}


def _unreadable(exc: BaseException) -> str:
    text = str(exc)
    if "pickle" in text.lower():
        return "it holds pickled Python objects, which a run file never contains (refused, not loaded)"
    if isinstance(exc, zipfile.BadZipFile):
        return f"damaged or truncated zip archive ({text})"
    if isinstance(exc, EOFError):
        return "truncated: the data ends early"
    if isinstance(exc, zlib.error):
        return f"damaged compressed data ({text})"
    return f"damaged or truncated ({type(exc).__name__}: {text})"


def _read_npz(npz: Path) -> dict[str, np.ndarray]:
    if not npz.is_file():
        raise RunFileNotFoundError(f"{npz} does not exist (no run saved there)" if not npz.exists()
                                   else f"{npz} is not a file")
    size = npz.stat().st_size
    with open(npz, "rb") as fh:
        head = fh.read(8)
    if size == 0:
        raise RunFileError(f"{npz} is empty (0 bytes): not a run file (an interrupted copy?)")
    if head.startswith(b"\x93NUMPY"):
        raise RunFileError(f"{npz} is a single .npy array, not an .npz run archive")
    if not head.startswith(b"PK"):
        raise RunFileError(f"{npz} is not an .npz run archive ({size} bytes starting with {head!r})")
    try:
        with np.load(npz, allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    except Exception as exc:  # zip, numpy-header and decompression errors alike: the file is damaged
        reason = _unreadable(exc)
    raise RunFileError(f"{npz} cannot be read as a run file ({size} bytes): {reason}")


def _read_run(path: str | os.PathLike) -> _RunFile:
    """Read and check a run file: format, version, checksum, structure.  Every failure is a :class:`RunFileError`."""
    npz, js = _paths(path)
    arrays = _read_npz(npz)
    planned = None
    if "meta" in arrays or "sha256" in arrays:
        try:
            stored = str(arrays.pop("sha256")[()])
            meta = json.loads(str(arrays["meta"][()]))
        except (KeyError, ValueError, TypeError, IndexError):
            raise RunFileError(f"{npz} is damaged: its meta or sha256 entry is missing or unreadable") from None
        if not isinstance(meta, dict) or meta.get("format") != RUN_FORMAT:
            raise RunFileError(f"{npz} is not a grokclocks run file (meta format "
                               f"{meta.get('format') if isinstance(meta, dict) else meta!r})")
        version = meta.get("version")
        if not isinstance(version, int) or version < 2:
            raise RunFileError(f"{npz} has an unknown run-file format version {version!r}")
        if version > RUN_FORMAT_VERSION:
            raise RunFileError(f"{npz} has run-file format version {version}; this grokclocks reads versions "
                               f"<= {RUN_FORMAT_VERSION} (upgrade grokclocks to read it)")
        computed = _checksum(arrays)
        if computed != stored:
            raise RunFileError(f"{npz} is damaged: its sha256 checksum does not match its contents "
                               f"(stored {stored[:16]}..., computed {computed[:16]}...)")
        del arrays["meta"]
        config = meta.get("config")
        planned = meta.get("planned_steps")
    else:
        if "times" not in arrays or not any(k.startswith("metric:") for k in arrays):
            raise RunFileError(f"{npz} is not a grokclocks run file: no 'times' and 'metric:*' arrays "
                               f"(keys: {sorted(arrays)[:8]})")
        version = 1
        unknown = sorted(k for k in arrays if k != "times" and k.split(":", 1)[0] not in ("metric", "extra", "state"))
        if unknown:
            raise RunFileError(f"{npz} is damaged or foreign: no meta entry, and keys {unknown[:4]} that no "
                               "grokclocks run file has")
        if not js.is_file():
            raise RunFileError(f"{npz} has no meta entry (format 1, or damaged), and its config file {js} is missing")
        try:
            config = json.loads(js.read_text())
        except (OSError, ValueError) as exc:
            raise RunFileError(f"{js} (the config of format-1 run file {npz.name}) is unreadable: {exc}") from None
        if isinstance(config, dict) and "version" in config:
            raise RunFileError(f"{npz} is damaged: {js.name} says run-file format {config['version']!r}, but the "
                               "archive lacks its meta and sha256 entries")
    if not isinstance(config, dict) or not {"class", "fields"} <= set(config):
        raise RunFileError(f"{npz}: its config record is malformed (needs 'class' and 'fields')")
    run = _RunFile(npz, arrays, config, version, planned)
    _check_structure(run)
    return run


def _check_structure(run: _RunFile) -> None:
    times = run.arrays.get("times")
    if times is None or times.ndim != 1 or times.size == 0:
        raise RunFileError(f"{run.npz} is damaged: 'times' must be a non-empty 1-D array")
    for name, v in run.named("metric").items():
        if v.ndim == 0 or v.shape[-1] != times.size:
            raise RunFileError(f"{run.npz} is damaged: metric {name!r} has shape {v.shape}, "
                               f"its last axis must be the {times.size} records")
    keys = sorted(k for k in run.arrays if k.startswith("state:"))
    if keys != [f"state:{i:04d}" for i in range(len(keys))]:
        raise RunFileError(f"{run.npz} is damaged: its state arrays are not numbered 0..{len(keys) - 1}")


def _rebuild_config(run: _RunFile) -> Any:
    try:
        return _config_from_obj(run.config)
    except Exception as exc:
        raise RunFileError(f"{run.npz}: its config ({run.config.get('class')}) cannot be rebuilt: "
                           f"{type(exc).__name__}: {exc}") from None


def load_trajectory(path: str | os.PathLike) -> Trajectory:
    """Load a trajectory written by :func:`save_trajectory` (or incrementally by :func:`simulate`).

    Checks the format version and the sha256 checksum.  A format-1 file (grokclocks before run-file
    versions: no checksum) is read with a :class:`RunFileWarning`; ``Trajectory.save(path,
    overwrite=True)`` rewrites it in the current format.  A run still in progress (or interrupted)
    is read with a :class:`RunFileWarning` naming the steps it holds.

    Raises
    ------
    RunFileError
        The file is missing (:class:`RunFileNotFoundError`), empty, truncated, damaged (checksum),
        foreign, or of a newer format.
    """
    run = _read_run(path)
    if run.version < RUN_FORMAT_VERSION:
        warnings.warn(f"{run.npz} is a run file of format 1 (written by grokclocks before run-file versions): "
                      "read without an integrity check; Trajectory.save(path, overwrite=True) rewrites it "
                      f"in format {RUN_FORMAT_VERSION} with a checksum", RunFileWarning, stacklevel=2)
    times = run.arrays["times"]
    if run.planned_steps is not None and times[-1] < run.planned_steps:
        warnings.warn(f"{run.npz} holds a partial run: steps 0..{int(times[-1])} of {run.planned_steps} "
                      "(continue it with resume=True)", RunFileWarning, stacklevel=2)
    return Trajectory(times=times, metrics=run.named("metric"), config=_rebuild_config(run),
                      extras=run.named("extra"))


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
# Options of a run, checked before anything is compiled
# --------------------------------------------------------------------------------------------


ON_DIVERGENCE: tuple[str, ...] = ("raise_if_all", "flag", "raise")
"""Values of ``on_divergence`` (:func:`simulate`); the first is the default."""


def check_record_every(steps: Any, record_every: Any) -> tuple[int, int]:
    """``(steps, record_every)`` as ints: both >= 1, ``record_every <= steps`` and dividing it."""
    steps = integer_at_least(steps, "steps", 1)
    record_every = integer_at_least(record_every, "record_every", 1)
    if record_every > steps:
        raise DomainError(f"record_every must be <= steps={steps} (got {record_every})")
    if steps % record_every:
        raise DomainError(f"steps must be a multiple of record_every={record_every} (got {steps})")
    return steps, record_every


def seed_tuple(seeds: Any, name: str = "seeds", *, distinct: bool = True) -> tuple[int, ...]:
    """Integer seeds >= 0 as a tuple (a scalar is one seed); each seed is one run.

    A repeated seed would repeat the same run (identical numbers counted twice in every statistic
    over seeds), so it is a :class:`DomainError`, as is an empty sequence. ``distinct=False`` is for
    callers whose runs differ in something besides the seed (a per-run train mask) and which check
    that the runs are distinct themselves.
    """
    if not isinstance(name, str):
        raise DomainError(f"name must be the parameter's name, a str (got {name!r})")
    distinct = _flag(distinct, "distinct")
    items = [seeds] if np.ndim(seeds) == 0 else list(np.asarray(list(seeds), dtype=object).reshape(-1))
    out = tuple(integer_at_least(s, f"every entry of {name}", 0) for s in items)
    if not out:
        raise DomainError(f"{name} must not be empty")
    if distinct and len(set(out)) != len(out):
        twice = sorted({s for s in out if out.count(s) > 1})
        raise DomainError(f"{name} must be distinct: each seed is one run (got {out}; repeated: {twice})")
    return out


def check_devices(devices: Any, n_runs: int | None = None) -> list[Any]:
    """The local devices asked for: ``None`` = all, an int ``n`` = the first ``n``, or a list of devices.

    Raises :class:`DomainError` for a bad type, more devices than exist locally, an empty, repeated
    or non-local device list, and (when ``n_runs`` is given) an explicit number of devices > 1 that
    does not divide the ``n_runs`` runs.
    """
    if n_runs is not None:
        n_runs = integer_at_least(n_runs, "n_runs", 1)
    local = jax.local_devices()
    if devices is None:
        return local
    if isinstance(devices, (bool, np.bool_, str, bytes, float, np.floating)):
        raise DomainError(f"devices must be None, an integer >= 1 or a list of jax devices (got {devices!r})")
    if isinstance(devices, (int, np.integer)):
        n = integer_at_least(devices, "devices", 1)
        if n > len(local):
            raise DomainError(f"devices must be at most the {len(local)} local device(s) {local} (got {n})")
        devs = local[:n]
    else:
        try:
            devs = list(devices)
        except TypeError:
            raise DomainError(f"devices must be None, an integer >= 1 or a list of jax devices "
                              f"(got {devices!r})") from None
        if not devs or len(set(devs)) != len(devs) or any(d not in local for d in devs):
            raise DomainError(f"devices must be a non-empty list of distinct local devices {local} (got {devs!r})")
    if n_runs is not None and len(devs) > 1 and n_runs % len(devs):
        raise DomainError(f"devices={len(devs)} must divide the number of runs ({n_runs}); "
                          "use devices=None (all devices when they divide it, else one) or another count")
    return devs


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
    devices (:func:`check_devices`).  With ``devices=None``, if the outermost batch size is not a
    multiple of the number of devices, nothing is moved (one device); an explicit number of devices
    that does not divide it is a :class:`DomainError`.  With one device or no batch axis nothing is
    moved.  Returns ``(state, inputs, n_devices_used)``.
    """
    leaves = jax.tree_util.tree_leaves(state)
    n_runs = np.shape(leaves[0])[0] if leaves and batch_axes else None
    devs = check_devices(devices, n_runs)
    if len(devs) <= 1 or not batch_axes or not leaves:
        return state, inputs, 1
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
    """Memory estimate of one :func:`simulate` program (``n_records`` records of ``record_every`` steps).

    Returns ``{"resident": bytes, "working": bytes, "n_runs": int}``: ``resident`` = the state and
    inputs held for the whole call, counted three and two times (the arguments, their run-chunked
    copies, the returned state); ``working`` = an
    upper bound on everything the vmapped program creates, the sum of the sizes of every
    intermediate value of its jaxpr (each loop body counted once, the stacked records included).
    XLA reuses buffers, so the true peak is lower (typically 2-4x for the modular models).  The
    working memory grows linearly with the number of runs ``n_runs`` (the outermost batch axis).
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
    """Runs per chunk so that the :func:`working_memory_estimate` fits ``MEMORY_FRACTION * free_bytes``.

    ``None`` = everything fits in one program (or the free memory is unknown).  Otherwise the largest
    chunk (a multiple of ``n_devices``, at least ``n_devices``) with ``resident + working * chunk /
    n_runs <= MEMORY_FRACTION * free_bytes`` per device.
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
    if saved.get("class") != new["class"]:
        return [f"config class: saved {saved.get('class')}, now {new['class']}"]
    try:  # rebuilt, so fields added since with a default compare equal
        old = json.loads(json.dumps(_config_obj(_config_from_obj(saved))))["fields"]
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
             run_chunk: int | str | None = None) -> Trajectory:
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
    record_every : int in [1, steps]
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
        Save the result (and the state, for ``resume``) after every chunk (:func:`save_trajectory`:
        ``.npz`` + ``.json``, atomic, versioned, checksummed).  An existing file is an error
        (:class:`RunExistsError`) unless ``resume`` or ``overwrite`` is set; this is checked before
        anything runs.
    resume : bool
        With ``save_path``: continue the run saved there (a missing file starts it).  The saved config,
        record times, state and metric names must be this run's (else :class:`RunFileError` naming the
        differences).  A finished run is returned as saved (bit-identical, the file untouched); a
        partial one continues from its last chunk and ends equal to an uninterrupted run.
    overwrite : bool
        With ``save_path``: replace an existing run (its file is replaced at the first save, after the
        first chunk, so a run that diverges in its first chunk leaves it intact).  Exclusive with ``resume``.
    divergence_hint : str
        Added to the :class:`SimulationDiverged` message (e.g. the stability bound on ``eta``).
    devices : int, list of devices or None
        Shard the outermost batch axis over devices (:func:`shard_runs`, :func:`check_devices`):
        ``None`` = all local devices, ``1`` (default) = one device.  The number used is ``extras["n_devices"]``.
    on_divergence : {"raise_if_all", "flag", "raise"}
        A run *diverges* at the first record where one of its float metrics is NaN or inf.  Each
        diverged run is flagged in ``extras["diverged"]`` (bool, batch shape) and
        ``extras["diverged_step"]`` (that record's step; -1 for runs that did not diverge); its float
        metrics are NaN from that record on (integer metrics are left as computed), the other runs
        are untouched.  ``"raise_if_all"`` (default) keeps a sweep in which some runs diverged (with a
        :class:`~grokclocks.sim.DivergenceWarning`) and raises :class:`SimulationDiverged` once *every*
        run has diverged (so a single run raises, as before); ``"flag"`` never raises (warning only);
        ``"raise"`` raises as soon as any run diverges.  A chunk that raises is not saved: the file
        keeps the last chunk before it (the exception's ``trajectory`` has the records up to it).
    batch_shape : tuple of int, optional
        Shape of the result's batch axes, a C-order reshape of the engine's (e.g. a flattened run
        axis shown as ``(*grid, n_seeds)``); saved files hold the result's shape.
    extras_fn : callable ``Trajectory -> dict``, optional
        Derived per-run extras (e.g. crossing times) added to the result and to every saved file.
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
        extras ``diverged``, ``diverged_step``, ``n_devices`` (and those of ``extras_fn``);
        ``final_state`` = the state after the last step (numpy, engine layout).

    Raises
    ------
    SimulationDiverged
        As ``on_divergence`` says.
    DomainError
        For invalid options (before anything is compiled).
    RunFileError
        ``save_path`` exists without ``resume``/``overwrite`` (:class:`RunExistsError`), or the run
        to resume is damaged or is not this run.
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
    saved = None
    if check_run_path(save_path, resume=resume, overwrite=overwrite) is not None and resume \
            and _paths(save_path)[0].exists():
        saved = _read_run(save_path)
        if saved.version < RUN_FORMAT_VERSION:
            warnings.warn(f"resuming {saved.npz}, a run file of format 1 (no checksum); it is rewritten in format "
                          f"{RUN_FORMAT_VERSION} at the next save", RunFileWarning, stacklevel=2)

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
            if save_path is not None:
                save_trajectory(result, save_path, state=state, overwrite=True, planned_steps=steps)
            if bar is not None:
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
                      "extras['diverged_step'] on", DivergenceWarning, stacklevel=2)
    return dataclasses.replace(result, final_state=jax.device_get(state))


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
