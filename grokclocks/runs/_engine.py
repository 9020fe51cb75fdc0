"""An engine run (a `Trajectory`, or a run file read through `grokclocks.runfile`) as the arguments of `run_data`.

Every config value used is checked where it is used (a run file's config is read from a file): a `DomainError`
naming the source, the key, its value and what it must be.  A run file is read through the door
(`grokclocks._safe_io`): its archive's limits are checked with the log readers' `LogError` first, then the
run-file reader reads and checks it (format, version, checksum, structure).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validate as V
from .. import clocks as _clocks
from .. import linear as _linear
from .. import logs as _logs
from .. import runfile as _runfile
from .. import task as _task
from .._safe_io import mib
from .._validate import DomainError
from ..logs import _safe
from ._arrays import run_data
from ._records import _ENGINE_METRICS, RunData


def _config_dict(config: Any) -> dict[str, Any]:
    if config is None:
        return {}
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    if isinstance(config, Mapping):
        return dict(config)
    return {}


def _cfg_bad(source: str, key: str, value: Any, domain: str) -> DomainError:
    return DomainError(f"{source}: config {key} must be {domain} (got {_logs._short(value)})")


def _cfg_int(cfg: Mapping[str, Any], key: str, source: str, minimum: int) -> int | None:
    """An integer setting of an engine config (None when absent), as `V.integer_at_least` checks it."""
    v = cfg.get(key)
    if v is None:
        return None
    try:
        return V.integer_at_least(v, f"config {key}", minimum)
    except DomainError as exc:
        raise DomainError(f"{source}: {exc}") from None


def _cfg_real(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _cfg_fraction(v: Any) -> bool:
    return _cfg_real(v) and 0.0 < float(v) <= 1.0


def _cfg_axes(cfg: Mapping[str, Any], source: str) -> tuple[str, ...]:
    axes = cfg.get("grid_axes")
    if axes is None:
        return ()
    if not isinstance(axes, (list, tuple)) or not all(isinstance(a, str) for a in axes):
        raise _cfg_bad(source, "grid_axes", axes, "a list of axis names (str)")
    return tuple(axes)


def _cfg_split(cfg: Mapping[str, Any], source: str, axes: tuple[str, ...], index: tuple[int, ...],
               n_grid: int) -> tuple[float, list[int]]:
    """(training fraction, split seeds) of an engine run's random split, each config value checked."""
    fracs = cfg["train_frac"]
    if not isinstance(fracs, (list, tuple)) or not all(_cfg_fraction(f) for f in fracs):
        raise _cfg_bad(source, "train_frac", fracs, "a list of fractions in (0, 1]")
    if "train_frac" in axes:
        pos = axes.index("train_frac")
        if pos >= n_grid or index[pos] >= len(fracs):
            raise DomainError(f"{source}: config grid_axes {_logs._short(list(axes))} and train_frac "
                              f"{_logs._short(list(fracs))} do not match the grid of the metrics ({n_grid} axes, "
                              f"point {index})")
        f = fracs[index[pos]]
    else:
        f = fracs[0]
    seeds = cfg.get("seeds") or (0,)
    if not isinstance(seeds, (list, tuple)):
        raise _cfg_bad(source, "seeds", seeds, "a list of integers >= 0")
    for s in seeds:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)) or s < 0:
            raise _cfg_bad(source, "seeds", seeds, "a list of integers >= 0")
    split_seed = _cfg_int(cfg, "split_seed", source, 0)
    return float(f), [int(s) if split_seed is None else split_seed for s in seeds]


def _select(metric: np.ndarray, n_grid: int, index: tuple[int, ...]) -> np.ndarray:
    """Grid point `index` of an engine metric `(*grid, n_seeds, *value, n_rec)` -> `(n_seeds, n_rec, *value)`."""
    a = np.asarray(metric)
    if n_grid:
        a = a[index]
    return np.moveaxis(a, -1, 1) if a.ndim > 2 else a


def _engine_run(times: Any, metrics: Mapping[str, Any], extras: Mapping[str, Any], config: Any,
                index: Any, source: str, max_bytes: int = _safe.DEFAULT_MAX_BYTES) -> tuple[dict[str, Any], dict[str, Any]]:
    """Arguments of `run_data` (and defaults) from an engine trajectory's parts.

    Every config value used is checked (a run file's config is read from the file): a `DomainError` naming
    `source`, the key, its value and what it must be.  What the config makes this function compute is bounded
    by `max_bytes` too: the random split's training masks it rebuilds (one permutation of the p² pairs per
    seed) must fit in `max_bytes`, and their number must be the number of seeds the metrics hold (a config of a
    few bytes asking for p = 32,768 allocated 8 GiB; 200 seeds at p = 4,096 ran for minutes)."""
    cfg = _config_dict(config)
    config_axes = _cfg_axes(cfg, source)
    if "acc_test" not in metrics and "acc_train" not in metrics:
        raise DomainError(f"{source}: the trajectory records no accuracy (metrics: {sorted(metrics)})")
    ref = np.asarray(metrics.get("acc_test", metrics.get("acc_train")))
    if ref.ndim == 0:
        raise DomainError(f"{source}: the accuracy metric is a single number, not a series of records")
    if ref.ndim == 1:  # a single unbatched run
        metrics = {k: np.asarray(v)[None] for k, v in metrics.items()}
        ref = ref[None]
    n_grid = ref.ndim - 2
    grid_shape = ref.shape[:n_grid]
    for name in _ENGINE_METRICS:
        if name in metrics and np.shape(metrics[name])[: n_grid + 1] != ref.shape[: n_grid + 1]:
            raise DomainError(f"{source}: metric {name!r} has shape {np.shape(metrics[name])}, which does not start "
                              f"with the grid and seeds {ref.shape[: n_grid + 1]} of the accuracy")
    if n_grid:
        if index is None:
            if int(np.prod(grid_shape)) != 1:
                axes = config_axes or ("alpha",)
                raise DomainError(f"the run holds a grid of shape {grid_shape} over {tuple(axes)}; pick one point with "
                                  f"index=(...) (e.g. index={(0,) * n_grid})")
            index = (0,) * n_grid
        index = tuple(int(i) for i in np.atleast_1d(index))
        if len(index) != n_grid or any(not 0 <= i < s for i, s in zip(index, grid_shape)):
            raise DomainError(f"index must be {n_grid} integer(s) within the grid shape {grid_shape} (got {index})")
    elif index not in (None, (), 0):
        raise DomainError(f"the run holds no grid; index must be None (got {index!r})")
    else:
        index = ()
    kw: dict[str, Any] = {"steps": times, "source": source}
    for name, key in _ENGINE_METRICS.items():
        if name in metrics and key not in kw:
            kw[key] = _select(metrics[name], n_grid, index)
    if "embeddings" in kw and kw["embeddings"].ndim != 4:
        del kw["embeddings"]
    p = _cfg_int(cfg, "p", source, 2)
    if p is not None:
        kw["p"] = p
    op = cfg.get("operation")
    if isinstance(op, str) and op != "user":
        kw["operation"] = op
    defaults: dict[str, Any] = {}
    if "threshold" in cfg:  # run_modular_addition: one accuracy level for both clocks
        level = cfg["threshold"]
        if not _cfg_fraction(level):
            raise _cfg_bad(source, "threshold", level, "an accuracy level in (0, 1]")
        defaults.update(train_level=float(level), test_level=float(level))
    n_train = extras.get("n_train")
    if n_train is not None:
        try:
            nt = np.asarray(n_train, dtype=float)
        except (TypeError, ValueError):
            raise DomainError(f"{source}: extra n_train must be numbers (got {_logs._short(n_train)})") from None
        if n_grid and nt.ndim and nt.shape[:n_grid] != grid_shape:
            raise DomainError(f"{source}: extra n_train has shape {nt.shape}, which does not start with the grid "
                              f"{grid_shape}")
        n_train = nt
        if nt.ndim == 0:
            nt = np.full(ref.shape[n_grid], float(nt))
        elif n_grid and nt.ndim > 1:
            nt = nt[index]
        elif n_grid and nt.ndim == 1 and nt.shape[0] == grid_shape[0] and len(grid_shape) == 1 and "alpha" in cfg:
            nt = np.full(ref.shape[n_grid], nt[index[0]])
        kw["n_train"] = nt
    # the engine's random split (train_modular, split="random") can be rebuilt exactly
    if cfg.get("split") == "random" and p is not None and cfg.get("train_frac") is not None:
        f, split_seeds = _cfg_split(cfg, source, config_axes, index, n_grid)
        n_seeds = int(ref.shape[n_grid])
        if len(split_seeds) not in (1, n_seeds):
            raise DomainError(f"{source}: config seeds lists {len(split_seeds)} seeds, but the metrics hold "
                              f"{n_seeds}; the training masks cannot be matched to the runs")
        need = (len(split_seeds) + 8) * p * p  # the masks, and one int64 permutation of the p² pairs at a time
        if need > max_bytes:
            raise DomainError(f"{source}: config p = {p} with {len(split_seeds)} seed(s): rebuilding the random "
                              f"split's training masks needs {need} bytes ({mib(need)}), over the limit "
                              f"max_bytes = {max_bytes}; raise max_bytes (CLI: --max-bytes) if the run is what you meant "
                              "to read")
        # the split's size: int(frac p^2), or round(frac p^2) for n_train_rule "round" (run_modular_addition)
        size = {"n_train": int(round(f * p**2))} if cfg.get("n_train_rule") == "round" else {"frac": f}
        kw["train_mask"] = _task.random_split_mask(p, split_seeds, **size).reshape(len(split_seeds), -1)
    # a sweep over the training fraction gives the levi:appG fit of Delta t vs lambda
    axes = config_axes
    if p is not None and n_grid == 1 and (axes == ("train_frac",) or ("alpha" in cfg and not axes)):
        defaults["_sweep"] = (metrics, n_train)
    return kw, defaults


def _sweep_from_engine(metrics: Mapping[str, Any], n_train: Any, p: int, steps: np.ndarray, train_level: float,
                       test_level: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(lambda, median grokking delay) per training fraction of an engine grid (grid axis 0)."""
    if n_train is None or "acc_train" not in metrics or "acc_test" not in metrics:
        return None
    acc_tr, acc_te = np.asarray(metrics["acc_train"]), np.asarray(metrics["acc_test"])
    nt = np.asarray(n_train, dtype=float)
    lams, dts = [], []
    for g in range(acc_te.shape[0]):
        d = []
        for s in range(acc_te.shape[1]):
            t_tr = _clocks.accuracy_clock(steps, acc_tr[g, s], target=train_level)
            t_te = _clocks.first_hitting_time(steps, acc_te[g, s], test_level, direction="above")
            if math.isfinite(t_te) and math.isfinite(t_tr) and t_te > t_tr:
                d.append(t_te - t_tr)
        ntr = float(np.median(nt[g])) if nt.ndim else float(nt)
        if d and ntr <= p * p:
            lams.append(float(_linear.modular_lambda(ntr / (p * p), p)))
            dts.append(float(np.median(d)))
    return (np.asarray(lams), np.asarray(dts)) if len(lams) else None


def _is_engine_npz(path: Path, max_bytes: int = _safe.DEFAULT_MAX_BYTES) -> bool:
    """An engine run file (`Trajectory.save`), `path` being the file the user named: its keys, or, when the
    archive cannot be read, the run file's config beside it (a truncated engine file is a damaged run file, not a
    foreign log)."""
    if not path.is_file():
        return False
    with _safe.open_regular(path, max_bytes, named=path) as f:
        names = None
        if f.read(4) == b"PK\x03\x04":
            f.seek(0)
            names = _safe.zip_names(f, path.name)
    if names is None:  # unreadable: a run file only if its config says so
        js = path.with_suffix(".json")
        try:
            obj = _safe.read_json(js, max_bytes, named=path) if js.is_file() else None
        except DomainError:
            return False
        return isinstance(obj, dict) and {"class", "fields"} <= set(obj)
    files = [n[: -len(".npy")] if n.endswith(".npy") else n for n in names]
    return "meta" in files or ("times" in files and any(k.startswith("metric:") for k in files))


def _check_engine_archive(p: Path, max_bytes: int) -> None:
    """Before the run file is read, the limits of the log readers with their `LogError`: its members unpack to at
    most `max_bytes` and are stored or deflated, and no `.npy` header announces more data than `max_bytes` or than
    its member holds.  An archive the door refuses to open (a damaged directory, too many members) is left to the
    run-file reader, which says why (and reads it through the same door)."""
    with _safe.open_regular(p, max_bytes, named=p) as f:
        try:
            z = _safe.READER.open_zip(f, p.name)
        except _logs.LogError:
            return
        infos = _safe.zip_limits(z, p.name, max_bytes)
        with z:
            try:
                _safe.READER.npy_headers(z, infos, p.name, max_bytes)
            except _logs.LogError as exc:
                if "over the limit" in str(exc):
                    raise
                raise _runfile.RunFileError(f"{p} is damaged: {exc}") from None


def _engine_file(p: Path, index: Any, max_bytes: int = _safe.DEFAULT_MAX_BYTES) -> RunData:
    """The run file `p` (named by the user) as `RunData`."""
    _check_engine_archive(p, max_bytes)
    run = _runfile._read_run(p, max_bytes)  # format, version, sha256, structure: RunFileError otherwise
    config = run.config.get("fields")
    try:
        kw, defaults = _engine_run(run.arrays["times"], run.named("metric"), run.named("extra"), config, index,
                                   f"engine run {p.name}", max_bytes)
        return _finish(kw, defaults, {})
    except DomainError as exc:  # run_data's checks name the array, not the file it came from
        if p.name not in str(exc):
            exc.args = (f"engine run {p.name}: {exc}",)
        raise


def _finish(kw: dict[str, Any], defaults: dict[str, Any], overrides: dict[str, Any]) -> RunData:
    sweep_src = defaults.pop("_sweep", None)
    args = {**defaults, **kw, **{k: v for k, v in overrides.items() if v is not None}}
    rd = run_data(**args)
    if sweep_src is not None and rd.lam_sweep is None and rd.p is not None:
        sw = _sweep_from_engine(sweep_src[0], sweep_src[1], rd.p, rd.steps, rd.train_level, rd.test_level)
        if sw is not None:
            rd = dataclasses.replace(rd, lam_sweep=sw)
    return rd
