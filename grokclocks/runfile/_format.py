"""The run-file format: `Trajectory`, and saving and loading it as `<path>.npz` + `<path>.json`.

Loading a run reads arrays and nothing else: the archive through the safe-reading layer `grokclocks._safe_io`
(regular files only, a byte limit checked from the zip directory and each `.npy` header before anything is
decompressed or allocated, no pickles, bounded JSON), a checksum, and a config rebuilt only from the fixed
registry of the engine's config classes (`grokclocks.runfile._configs`).  Writing goes through the run lock and
atomic replacement (`grokclocks.runfile._files`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .. import _safe_io
from .._safe_io import DEFAULT_MAX_BYTES, check_max_bytes
from .._validate import INT64_MAX, DomainError, file_path, flag, show
from ._configs import _canonical_class, _config_from_obj, _config_obj, _trusted_classes
from ._errors import RunExistsError, RunFileError, RunFileNotFoundError, RunFileWarning
from ._files import _WRITER, _atomic_write, _RunLock

RUN_FORMAT = "grokclocks.trajectory"
"""The `format` tag of a run file's meta record: files without it are not grokclocks run files."""
RUN_FORMAT_VERSION = 3
"""Run-file format written by `save_trajectory`.

Version 3 names the config class by its registry name (`modular.TrainConfig`); version 2 wrote the
class's `module:qualname` (still read: the engine's own classes are mapped to the registry, any other
class is refused unless the reader passes it); version 1 = the unversioned files of grokclocks 0.1
before run-file versions (no `meta`, no checksum), still read with a `RunFileWarning`.
"""


@dataclasses.dataclass(frozen=True, eq=False)
class Trajectory:
    """Recorded metrics of a (batch of) simulation(s), as `grokclocks.sim.train.simulate` returns them.

    `traj[name]` is the metric or the extra called `name`.  Every metric has the batch axes (seeds, a
    hyperparameter grid; `batch_shape`) in front and the record axis last.  `save` writes the run to a
    run file, `load` (or `load_trajectory`) reads it back.
    """

    times: np.ndarray
    """GD step index of each record, shape (n_records,) (`0, k, 2k, ...`; real-valued for closed-form results)."""
    metrics: Mapping[str, np.ndarray]
    """The recorded metrics, each of shape `(*batch_shape, n_records)`."""
    config: Any = None
    """The configuration that produced the run (a frozen dataclass), or `None`."""
    extras: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)
    """Derived per-run quantities (e.g. crossing steps), each of shape `batch_shape` or a scalar.

    Every result of `grokclocks.sim.train.simulate` has `diverged` (bool, shape `batch_shape`), `diverged_step`
    (int, the first recorded step with a non-finite metric, −1 = none) and `n_devices`."""
    final_state: Any = None
    """The state after the last step (a pytree of arrays; not saved by `save`), or `None`."""

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
        """Write the run as `<path>.npz` (times, metrics, extras, config) and `<path>.json` (its config).

        Parameters
        ----------
        path : str or os.PathLike
            Where to save; `.npz` is appended unless the name ends with it.  A missing directory is created.
        overwrite : bool
            Replace an existing run at `path`.  Default `False`: an existing run is a `RunExistsError`.

        Returns
        -------
        pathlib.Path
            The `.npz` file written.

        Raises
        ------
        RunExistsError
            The run exists and `overwrite` is false, or another process is writing it.
        RunFileError
            The write failed (a full disk, a file-size limit); the previous run is intact.

        Notes
        -----
        The same as `save_trajectory(self, path, overwrite=overwrite)`.
        """
        return save_trajectory(self, path, overwrite=overwrite)

    @classmethod
    def load(cls, path: str | os.PathLike, *, config_classes: Iterable[type] = (),
             max_bytes: int = DEFAULT_MAX_BYTES) -> Trajectory:
        """Read a run written by `save` or by the engine (format version and checksum checked).

        Parameters
        ----------
        path : str or os.PathLike
            The run's `.npz` file, or its path without the suffix.
        config_classes : iterable of dataclass types, optional
            Config classes of the caller's own to rebuild besides the engine's registered ones.
            Default: none.
        max_bytes : int
            The most bytes the run file may hold on disk and its arrays unpack to, checked before
            anything is decompressed or allocated; an integer ≥ 1, default 268,435,456 (256 MiB).

        Returns
        -------
        Trajectory
            The run, without `final_state`.

        Notes
        -----
        The same as `load_trajectory(path, config_classes=config_classes, max_bytes=max_bytes)`.
        """
        return load_trajectory(path, config_classes=config_classes, max_bytes=max_bytes)


def _paths(path: str | os.PathLike) -> tuple[Path, Path]:
    """`(<path>.npz, <path>.json)`: the suffix `.npz` is added unless present."""
    p = file_path(path, "save_path")
    if p.suffix != ".npz":
        p = p.with_name(p.name + ".npz")
    return p, p.with_suffix(".json")


class RunPaths(NamedTuple):
    """Result of `check_run_path`: the two files of a run."""

    npz: Path
    """the `.npz` archive."""
    json: Path
    """the `.json` config file."""


def _check_options(save_path: str | os.PathLike | None, resume: bool, overwrite: bool) -> RunPaths | None:
    """`check_run_path` without the test for an existing run (made once the run's lock is held)."""
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
    for f in (npz, js):  # no link, directory, FIFO or device at either; the directory can be made
        _WRITER.check(f, name="save_path", overwrite=True, make_parents=True)
    return RunPaths(npz, js)


def _check_absent(paths: RunPaths) -> None:
    for f in paths:
        if os.path.lexists(f):
            raise RunExistsError(f"{f} already exists: pass resume=True to continue the run saved there "
                                 "(same config), overwrite=True to replace it, or another save_path")


def check_run_path(save_path: str | os.PathLike | None, *, resume: bool = False,
                   overwrite: bool = False) -> RunPaths | None:
    """Check `save_path`, `resume` and `overwrite` before any work; the run's two paths, or `None`.

    Parameters
    ----------
    save_path : str, os.PathLike or None
        Where the run is saved (`.npz` is appended unless present; the `.json` lies beside it).
        `None`: the run is not saved, and `resume` and `overwrite` must be false.
    resume : bool
        Continue the run saved at `save_path` (or start it if there is none).  Default `False`.
    overwrite : bool
        Replace the run saved at `save_path`.  Default `False`; exclusive with `resume`.

    Returns
    -------
    RunPaths or None
        A `RunPaths` named tuple (`npz`, `json`; it unpacks like a plain tuple), `None` without `save_path`.

    Raises
    ------
    RunExistsError
        A run exists at `save_path` and neither `resume` nor `overwrite` is set: a run is never
        replaced by accident.
    DomainError
        `resume` and `overwrite` together, either without `save_path`, or a `save_path` whose `.npz` or
        `.json` is a directory, a symbolic link (never written through), a FIFO or a device, or that lies
        in a directory that cannot be created.

    Notes
    -----
    This checks the path only; `grokclocks.sim.train.simulate` and `save_trajectory` also hold the
    run's lock file while they write, so that a second writer of the same path is refused.
    """
    paths = _check_options(save_path, resume, overwrite)
    if paths is not None and not (resume or overwrite):
        _check_absent(paths)
    return paths


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


def _write_run(result: Trajectory, paths: RunPaths, *, state: Any = None, planned_steps: int | None = None) -> Path:
    """Write a run's `.npz` then its `.json` (the caller holds the run's lock); the `.npz`.

    A failed write (a full disk, a file-size limit, no permission) is a `RunFileError` naming the file;
    the file being written keeps its previous content and no temporary file is left.
    """
    npz, js = paths
    arrays = _run_arrays(result, state)
    from .. import __version__

    meta = {"format": RUN_FORMAT, "version": RUN_FORMAT_VERSION, "grokclocks": __version__,
            "config": _config_obj(result.config), "planned_steps": planned_steps}
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    digest = _checksum(arrays)
    # meta and checksum first in the archive: a damaged zip directory that loses entries loses data
    # entries (caught by the checksum), never silently the meta that makes the check possible
    arrays = {"sha256": np.array(digest), "meta": arrays.pop("meta"), **arrays}
    _RunLock.check_held(npz)  # its lock still in place: no save into a deleted directory, no second writer
    _atomic_write(npz, lambda fh: np.savez(fh, allow_pickle=False, **arrays))  # a failure: RunFileError, old run intact
    side = {"format": RUN_FORMAT, "version": RUN_FORMAT_VERSION, "sha256": digest, **meta["config"]}
    try:
        _atomic_write(js, lambda fh: fh.write(json.dumps(side, indent=1).encode()))
    except RunFileError as exc:
        raise RunFileError(f"{npz} was written, but its config file {js} could not be ({exc}); the run and its "
                           f"config are whole in {npz.name}, which is what loading reads ({js.name} is stale until "
                           "the next save)") from exc
    return npz


def save_trajectory(result: Trajectory, path: str | os.PathLike, *, state: Any = None, overwrite: bool = False,
                    planned_steps: int | None = None) -> Path:
    """Save a run as `<path>.npz` (arrays, format version, checksum) and `<path>.json`; returns the `.npz`.

    Parameters
    ----------
    result : Trajectory
        The run to save: its times, metrics, extras (numeric arrays only) and config.
    path : str or os.PathLike
        Where to save; `.npz` is appended unless the name ends with it, and the `.json` lies beside
        it.  A missing directory is created.
    state : pytree of arrays, optional
        The engine state after the last step, stored as `state:<i>` so that a run can be resumed
        (`grokclocks.sim.train.simulate` passes it; flattening it imports JAX).  Default `None`: no state.
    overwrite : bool
        Replace an existing run at `path`.  Default `False`: an existing run is a `RunExistsError`.
    planned_steps : int, optional
        The number of steps of a run in progress; loading a file with fewer records warns that it is
        partial.  Default `None`: a finished run.

    Returns
    -------
    pathlib.Path
        The `.npz` file written.

    Raises
    ------
    RunExistsError
        The run exists and `overwrite` is false, or another process holds the run's lock (the
        message names it).
    RunFileError
        The write failed (a full disk, a file-size limit, no permission); the message names the
        file, and the previous run is intact.  Also: the lock file `<path>.lock` is a symbolic link, a
        FIFO, a device or a file with other hard links (never opened through a link, never truncated).
    DomainError
        A non-numeric array, or a `path` that is a directory, a symbolic link (never written through), a
        FIFO or a device, or cannot be created.

    Notes
    -----
    The `.npz` is self-contained (format `RUN_FORMAT_VERSION`): the arrays `times`, `metric:<name>`,
    `extra:<name>` (and `state:<i>`), `meta` (JSON text: format, version, config, planned steps) and
    `sha256` (the checksum of all the others, which `load_trajectory` checks).  The `.json` repeats
    the config (`class`, `fields`) and the checksum for people and tools that read JSON; it is derived
    from the `.npz`, and loading warns when the two disagree.

    Each file is written by grokclocks's one writer (a temporary file in the same directory, fsync,
    `os.replace`): a crash leaves the previous file or the new one, never a mixture.  The run's lock file
    `<path>.lock` is held for the duration of the save: two processes never write one run at once.
    """
    if path is None:
        raise DomainError("path must be a file path, a str or os.PathLike (got None)")
    overwrite = flag(overwrite, "overwrite")
    paths = _check_options(path, False, overwrite)
    with _RunLock.acquire(paths.npz, what="save_trajectory"):
        if not overwrite:
            _check_absent(paths)
        return _write_run(result, paths, state=state, planned_steps=planned_steps)


@dataclasses.dataclass(frozen=True)
class _RunFile:
    """A run file as read from disk: its arrays (without `meta`/`sha256`), config record, format version."""

    npz: Path
    arrays: dict[str, np.ndarray]
    config: dict[str, Any]
    version: int
    planned_steps: int | None = None

    def named(self, prefix: str) -> dict[str, np.ndarray]:
        return {k.split(":", 1)[1]: v for k, v in self.arrays.items() if k.startswith(prefix + ":")}


_LIMIT_HINT = ("raise it with load_trajectory(..., max_bytes=N) or Trajectory.load(..., max_bytes=N) if the file is "
               "what you meant to read")
_RESUME_HINT = ("resume=True reads at most the larger of 256 MiB and the run file's own size: grokclocks writes run "
                "files uncompressed, so that they unpack to about their size, and this one does not (compressed or "
                "altered); load_trajectory(..., max_bytes=N) reads it")
_SIDECAR_HINT = "a run's .json holds its config, a few KiB; one of 64 MiB or more is not read"
_CONTENT = "a run file's meta and config nest 4 or 5 levels"


def _reader(limit_hint: str) -> _safe_io.Reader:
    """The safe-reading layer reporting its refusals as `RunFileError`, ending an over-the-limit message with
    `limit_hint`."""
    return _safe_io.Reader(RunFileError, limit_hint=limit_hint, stream_hint="copy the run to a file first",
                           content=_CONTENT)


_LOAD, _RESUME, _SIDECAR = _reader(_LIMIT_HINT), _reader(_RESUME_HINT), _reader(_SIDECAR_HINT)


def _read_npz(npz: Path, max_bytes: int | None) -> dict[str, np.ndarray]:
    """Every array of the run archive `npz`, read through the safe-reading layer.

    `max_bytes` bounds the file's size and what its members unpack to (from the zip directory and each
    `.npy` header, before anything is decompressed or allocated); `None` (resume) bounds what the members
    unpack to by the larger of `DEFAULT_MAX_BYTES` and the file's own size."""
    if not npz.exists():
        raise RunFileNotFoundError(f"{npz} does not exist (no run saved there)")
    reader = _LOAD if max_bytes is not None else _RESUME
    # the .npz is the run the caller named (a link to it is followed)
    with reader.open_regular(npz, sys.maxsize if max_bytes is None else max_bytes, named=npz, name=str(npz)) as fh:
        size = os.fstat(fh.fileno()).st_size
        limit = max(DEFAULT_MAX_BYTES, size) if max_bytes is None else max_bytes
        head = fh.read(8)
        if size == 0:
            raise RunFileError(f"{npz} is empty (0 bytes): not a run file (an interrupted copy?)")
        if head.startswith(b"\x93NUMPY"):
            raise RunFileError(f"{npz} is a single .npy array, not an .npz run archive")
        if not head.startswith(b"PK"):
            raise RunFileError(f"{npz} is not an .npz run archive ({size} bytes starting with "
                               f"{_safe_io.excerpt(head, 8)})")
        fh.seek(0)
        z = reader.open_zip(fh, str(npz), damaged=f"cannot be read as a run file ({size} bytes): damaged or "
                                                   "truncated zip archive")
        infos = reader.zip_limits(z, str(npz), limit)
        with z:
            return reader.npz_arrays(z, infos, str(npz), limit)


_SIDECAR_MAX_BYTES = 1 << 26  # 64 MiB: a .json sidecar of this size or more is not read


def _read_json(js: Path, max_bytes: int, npz: Path) -> Any:
    """The JSON data of the `.json` config file `js` beside the run archive `npz`, read through the door
    (`grokclocks._safe_io`): a regular file, not a link (it is found beside the run the caller named, not named
    itself), of at most `max_bytes` bytes and of less than `_SIDECAR_MAX_BYTES`, UTF-8, nested at most
    `MAX_JSON_DEPTH` levels, integers of at most 300 digits, no key twice.  Every refusal is a `RunFileError`
    naming `js`; text that is not JSON is a `json.JSONDecodeError`."""
    limit = min(max_bytes, _SIDECAR_MAX_BYTES - 1)
    reader = _LOAD if limit == max_bytes else _SIDECAR
    text = reader.read_text(js, limit, named=npz, name=str(js))
    return reader.json_loads(text, str(js))


def _check_sidecar(npz: Path, js: Path, digest: str, config: Any, max_bytes: int) -> None:
    """Warn when the `.json` beside a checksummed `.npz` is not the one written with it (the `.npz` counts)."""
    if not js.is_file():
        return
    try:  # a sidecar holds a config record: a file too large, too deep or not a file is no sidecar of a run
        side = _read_json(js, max_bytes, npz)
    except (RunFileError, ValueError):
        side = None
    same = (isinstance(side, dict) and side.get("sha256") == digest and isinstance(config, dict)
            and _canonical_class(side.get("class")) == _canonical_class(config.get("class"))
            and side.get("fields") == config.get("fields"))
    if not same:
        warnings.warn(f"{js} does not match {npz.name} (it was written with another save: an interrupted save, "
                      f"a save in progress, or a file copied from elsewhere); {npz.name} holds the run and its "
                      "config and is what was read; the next save rewrites the .json", RunFileWarning, stacklevel=4)


def _text_entry(a: Any) -> str | None:
    """The text of a 0-d string array (how `meta` and `sha256` are stored), `None` for anything else."""
    return str(a[()]) if isinstance(a, np.ndarray) and a.ndim == 0 and a.dtype.kind == "U" else None


def _read_meta(npz: Path, arrays: dict[str, np.ndarray]) -> tuple[str, dict[str, Any]]:
    """`(stored sha256, meta record)` of a run archive of format 2 or later (`sha256` removed from `arrays`)."""
    stored, text = _text_entry(arrays.pop("sha256", None)), _text_entry(arrays.get("meta"))
    try:
        meta = None if stored is None or text is None else _LOAD.json_loads(text, str(npz), "its meta entry: ")
    except json.JSONDecodeError:
        meta = None
    if meta is None:
        raise RunFileError(f"{npz} is damaged: its meta or sha256 entry is missing or unreadable")
    if not isinstance(meta, dict) or meta.get("format") != RUN_FORMAT:
        raise RunFileError(f"{npz} is not a grokclocks run file (meta format "
                           f"{show(meta.get('format') if isinstance(meta, dict) else meta)})")
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 2:
        raise RunFileError(f"{npz} has an unknown run-file format version {show(version)}")
    if version > RUN_FORMAT_VERSION:
        raise RunFileError(f"{npz} has run-file format version {show(version)}; this grokclocks reads versions "
                           f"<= {RUN_FORMAT_VERSION} (upgrade grokclocks to read it)")
    return stored, meta


def _read_run(path: str | os.PathLike, max_bytes: int | None = DEFAULT_MAX_BYTES) -> _RunFile:
    """Read and check a run file: format, version, checksum, structure.  Every failure is a `RunFileError`.

    `max_bytes` is the limit of `load_trajectory` (an integer ≥ 1); `None`, what a resume reads: the members may
    unpack to the larger of `DEFAULT_MAX_BYTES` and the file's own size (the engine writes them uncompressed)."""
    npz, js = _paths(path)
    arrays = _read_npz(npz, max_bytes)
    json_limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    planned = None
    if "meta" in arrays or "sha256" in arrays:
        stored, meta = _read_meta(npz, arrays)
        version = meta["version"]
        computed = _checksum(arrays)
        if computed != stored:
            raise RunFileError(f"{npz} is damaged: its sha256 checksum does not match its contents "
                               f"(stored {stored[:16]}..., computed {computed[:16]}...)")
        del arrays["meta"]
        config = meta.get("config")
        planned = meta.get("planned_steps")
        _check_sidecar(npz, js, stored, config, json_limit)
    else:
        if "times" not in arrays or not any(k.startswith("metric:") for k in arrays):
            raise RunFileError(f"{npz} is not a grokclocks run file: no 'times' and 'metric:*' arrays "
                               f"(keys: {show(sorted(arrays)[:8], 200)})")
        version = 1
        unknown = sorted(k for k in arrays if k != "times" and k.split(":", 1)[0] not in ("metric", "extra", "state"))
        if unknown:
            raise RunFileError(f"{npz} is damaged or foreign: no meta entry, and keys {show(unknown[:4], 200)} that "
                               "no grokclocks run file has")
        if not js.exists():
            raise RunFileError(f"{npz} has no meta entry (format 1, or damaged), and its config file {js} is missing")
        try:
            config = _read_json(js, json_limit, npz)
        except json.JSONDecodeError as exc:
            raise RunFileError(f"{js} (the config of format-1 run file {npz.name}) is unreadable: {exc}") from None
        if isinstance(config, dict) and "version" in config:
            raise RunFileError(f"{npz} is damaged: {js.name} says run-file format {show(config['version'])}, but "
                               "the archive lacks its meta and sha256 entries")
    if not isinstance(config, dict) or not {"class", "fields"} <= set(config):
        raise RunFileError(f"{npz}: its config record is malformed (needs 'class' and 'fields')")
    if planned is not None and (not isinstance(planned, int) or isinstance(planned, bool)
                                or not 0 <= planned <= INT64_MAX):
        raise RunFileError(f"{npz} is damaged: its planned number of steps is {show(planned)}, not an integer in "
                           f"[0, {INT64_MAX}]")
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


def _rebuild_config(run: _RunFile, trusted: Mapping[str, type] | None = None) -> Any:
    """The config object of a run read from disk (registry classes, or the caller's `trusted` ones)."""
    try:
        return _config_from_obj(run.config, trusted)
    except DomainError as exc:
        raise RunFileError(f"{run.npz}: {exc}") from None


def load_trajectory(path: str | os.PathLike, *, config_classes: Iterable[type] = (),
                    max_bytes: int = DEFAULT_MAX_BYTES) -> Trajectory:
    """Load a run written by `save_trajectory`, `Trajectory.save` or `grokclocks.sim.train.simulate`.

    Parameters
    ----------
    path : str or os.PathLike
        The run's `.npz` file, or its path without the suffix.
    config_classes : iterable of dataclass types, optional
        Config classes of the caller's own to rebuild besides the engine's registered ones, matched
        by the `module:qualname` the file records.  Default: none, so a file whose config class is
        not one of the engine's is refused.
    max_bytes : int
        The most bytes the `.npz` may hold on disk and its arrays unpack to (checked from the zip
        directory and each array's `.npy` header before anything is decompressed or allocated), and the
        most its `.json` config file may hold (which is read below 64 MiB in any case); an integer ≥ 1.
        Default 268,435,456 (256 MiB, the `DEFAULT_MAX_BYTES` of `grokclocks.logs`); a run that holds
        more needs a larger value.

    Returns
    -------
    Trajectory
        The run (times, metrics, extras and the rebuilt config; no `final_state`).

    Raises
    ------
    RunFileError
        The file is missing (`RunFileNotFoundError`), empty, truncated, damaged (checksum), foreign,
        of a newer format, or names a config class outside the registry and `config_classes`, or
        holds config fields that are not plain data of the declared types; or it is refused unread:
        not a regular file (a FIFO, a device), over `max_bytes` (on disk, or unpacked as its zip
        directory or a `.npy` header announces), a member compressed otherwise than stored or deflate,
        a member that is not a `.npy` array, pickled objects, or JSON nested deeper than 64 levels.
        The message names the file.
    DomainError
        `max_bytes` is not an integer ≥ 1.

    Warns
    -----
    RunFileWarning
        A format-1 file (no checksum to check), a run still in progress or interrupted (the
        warning names the steps it holds), or a `.json` that disagrees with its `.npz`.

    Notes
    -----
    Loading reads arrays and nothing else: numpy arrays without pickles, the sha256 checksum, and the
    config rebuilt from plain JSON data with a class of a registry fixed in code.  The file is read as
    data from a stranger: regular files only, every size checked before it is allocated, so a
    hostile file costs at most about `max_bytes` of memory.  The checksum detects damage (a truncated
    copy, a flipped bit), not tampering: whoever can edit a file can recompute it.
    `Trajectory.save(path, overwrite=True)` rewrites an old file in the current format.
    """
    max_bytes = check_max_bytes(max_bytes)
    trusted = _trusted_classes(config_classes)
    run = _read_run(path, max_bytes)
    if run.version < 2:
        warnings.warn(f"{run.npz} is a run file of format 1 (written by grokclocks before run-file versions): "
                      "read without an integrity check; Trajectory.save(path, overwrite=True) rewrites it "
                      f"in format {RUN_FORMAT_VERSION} with a checksum", RunFileWarning, stacklevel=2)
    times = run.arrays["times"]
    if run.planned_steps is not None and times[-1] < run.planned_steps:
        warnings.warn(f"{run.npz} holds a partial run: steps 0..{int(times[-1])} of {run.planned_steps} "
                      "(continue it with resume=True)", RunFileWarning, stacklevel=2)
    return Trajectory(times=times, metrics=run.named("metric"), config=_rebuild_config(run, trusted),
                      extras=run.named("extra"))
