"""Run files: the saved trajectories of the training engine, read and written without JAX.

A run is saved as ``<path>.npz`` (arrays, format version, sha256 checksum) and ``<path>.json`` (its
config, for people and tools that read JSON); see :func:`save_trajectory`.  This module is part of the
pure core (numpy only; JAX is imported only to flatten a state pytree that the engine passes when it
saves a run to resume), so that :mod:`grokclocks.compare` and other readers can load engine runs
without JAX.  :mod:`grokclocks.sim.train` re-exports every public name.

Every failure to read a run (missing, empty, truncated, damaged, foreign, of a newer format) is a
:class:`RunFileError` (a :class:`~grokclocks.DomainError`) whose message names the file and what is wrong.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import math
import os
import uuid
import warnings
import zipfile
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ._validate import DomainError, OutputExistsError, file_path, flag, writable_file

__all__ = [
    "Trajectory",
    "config_to_json",
    "config_from_json",
    "save_trajectory",
    "load_trajectory",
    "check_run_path",
    "RunPaths",
    "RUN_FORMAT",
    "RUN_FORMAT_VERSION",
    "RunFileError",
    "RunExistsError",
    "RunFileNotFoundError",
    "RunFileWarning",
]

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
        result of :func:`grokclocks.sim.train.simulate` has ``diverged`` (bool, ``batch_shape``),
        ``diverged_step`` (int,
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
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray) or (hasattr(x, "__array__") and hasattr(x, "shape")):  # numpy or JAX array
        return _jsonable(np.asarray(x).tolist())
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


class RunPaths(NamedTuple):
    """Result of :func:`check_run_path`: the two files of a run."""

    npz: Path
    """the ``.npz`` archive."""
    json: Path
    """the ``.json`` config file."""


def check_run_path(save_path: str | os.PathLike | None, *, resume: bool = False,
                   overwrite: bool = False) -> RunPaths | None:
    """Check ``save_path`` / ``resume`` / ``overwrite`` before any work; the ``(.npz, .json)`` paths or None.

    Rules: ``resume=True`` continues the run saved at ``save_path`` (or starts it if there is none);
    ``overwrite=True`` replaces it; without either an existing file is an error
    (:class:`RunExistsError`), so a run is never replaced by accident.  The two are exclusive.

    Returns
    -------
    RunPaths
        A :class:`RunPaths` named tuple (``npz``, ``json``); it unpacks like a plain tuple.
    """
    resume = flag(resume, "resume")
    overwrite = flag(overwrite, "overwrite")
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
    return RunPaths(npz, js)


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
        import jax  # only a state pytree (passed by the JAX engine, to resume a run) needs JAX to flatten

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
    :func:`grokclocks.sim.train.simulate` stores to resume a run), ``meta`` (JSON text: format, version, config, the
    planned number of steps of a run in progress) and ``sha256`` (the checksum of all the others,
    :func:`load_trajectory` checks it).  The ``.json`` repeats the config (``class``, ``fields``)
    and the checksum for people and tools that read JSON.

    Each file is written atomically (a temporary file in the same directory, fsync, ``os.replace``):
    a crash leaves the previous file or the new one, never a mixture.  An existing file is
    replaced only with ``overwrite=True``; otherwise :class:`RunExistsError`.
    """
    npz, js = _paths(path)
    if not flag(overwrite, "overwrite"):
        check_run_path(path)
    arrays = _run_arrays(result, state)
    from . import __version__

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
    """Load a trajectory written by :func:`save_trajectory` (or incrementally by :func:`grokclocks.sim.train.simulate`).

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
