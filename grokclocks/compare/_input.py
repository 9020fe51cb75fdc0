"""A run's data from arrays (`run_data`) or from a file of the engine or a logger (`load_run`)."""

from __future__ import annotations

import dataclasses
import math
import os
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validate as V
from .. import clocks as _clocks
from .. import linear as _linear
from .. import logs as _logs
from .. import runfile as _runfile
from .. import task as _task
from .._validate import DomainError
from ..logs import _safe
from ._records import _ENGINE_METRICS, RunData, _fmt_num

__all__ = ["load_run", "run_data"]


def _series2d(x: Any, name: str, n_rec: int) -> np.ndarray:
    """([n_runs,] n_records) float64; NaN = not logged, inf rejected, every run logged at least once."""
    if isinstance(x, (str, bytes)):
        raise DomainError(f"{name} must be an array of numbers (got {_logs._short(x)})")
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise DomainError(f"{name} must be an array of numbers (got {_logs._short(x)})") from None
    if a.ndim == 1:
        a = a[None]
    if a.ndim != 2 or a.shape[1] != n_rec:
        raise DomainError(f"{name} must have shape (n_records,) or (n_runs, n_records) with n_records={n_rec} "
                          f"(got {np.shape(x)})")
    if np.isinf(a).any():
        run, rec = np.argwhere(np.isinf(a))[0]
        raise DomainError(f"{name} must be finite (got {a[run, rec]} at record {rec}"
                          + (f" of run {run}" if a.shape[0] > 1 else "") + "; NaN marks a record where it was not logged)")
    empty = np.isnan(a).all(axis=1)
    if empty.any():
        raise DomainError(f"{name} holds no value" + (f" in run {int(np.argmax(empty))}" if a.shape[0] > 1 else "")
                          + " (every record NaN)")
    return a


def _snapshot_steps(x: Any, name: str, n_snap: int, steps: np.ndarray, what: str) -> np.ndarray:
    if x is None:
        if n_snap != steps.size:
            raise DomainError(f"{what} has {n_snap} snapshots but steps has {steps.size} records; give their "
                              f"steps as {name}=")
        return steps
    t = V.as_float_array(x, name)
    if t.ndim != 1 or t.size != n_snap:
        raise DomainError(f"{name} must be 1-D with one step per snapshot ({n_snap}) (got shape {t.shape})")
    if np.any(np.diff(t) <= 0):
        i = int(np.argmax(np.diff(t) <= 0)) + 1
        raise DomainError(f"{name} must be strictly increasing (entry {i} = {t[i]:g} after {t[i - 1]:g})")
    return t


def _cadence(t: np.ndarray) -> str:
    if t.size < 2:
        return f"1 record (step {_fmt_num(t[0])})"
    d = np.diff(t)
    every = f"every {_fmt_num(d[0])}" if np.all(d == d[0]) else f"spacing {_fmt_num(d.min())}..{_fmt_num(d.max())}"
    return f"{t.size} records, {every}, steps {_fmt_num(t[0])}..{_fmt_num(t[-1])}"


def _alignment_notes(t: np.ndarray, ser: Mapping[str, np.ndarray | None], emb_steps: np.ndarray | None) -> list[str]:
    given = {k: a for k, a in ser.items() if a is not None}
    full = [k for k, a in given.items() if not np.isnan(a).any()]
    notes = []
    if len(full) == len(given) and (emb_steps is None or emb_steps is t):
        return notes
    notes.append(f"aligned on the union of the series' steps ({t.size} records); each clock is read on its own "
                 "series' records, nothing is interpolated:")
    for k, a in given.items():
        per = [_cadence(t[~np.isnan(row)]) for row in a]
        desc = per[0] if len(set(per)) == 1 else f"{per[0]} (run 0; runs differ)"
        notes.append(f"  {k}: {desc}")
    if emb_steps is not None and emb_steps is not t:
        notes.append(f"  embeddings: {_cadence(emb_steps)}")
    return notes


def run_data(*, steps: Any, train_acc: Any = None, test_acc: Any = None, train_loss: Any = None,
             test_loss: Any = None, weight_norm: Any = None, embeddings: Any = None, weights: Any = None,
             gap: Any = None, train_mask: Any = None, p: Any = None, operation: str = "add", b_offset: Any = 0,
             lam: Any = None, n_train: Any = None, lam_sweep: Any = None, train_level: float = _task.TRAIN_LEVEL,
             test_level: float = _task.TEST_LEVEL, source: str = "arrays", embedding_steps: Any = None,
             weights_steps: Any = None, run_names: Sequence[str] = (), input_notes: Sequence[str] = ()) -> RunData:
    """Validate a run's arrays and settings into a `RunData` (the keys of `USER_KEYS`).

    Series are stacked to `(n_runs, n_records)` (a 1-D series is one run); `NaN` marks a record where a
    series was not logged; nothing is interpolated.  The alignment of the series is added to the notes.

    Parameters
    ----------
    steps : array_like
        `(n_records,)` step of each record: 1-D, at least 2 records, finite, strictly increasing.
    train_acc : array_like, optional
        `([n_runs,] n_records)` train accuracy in [0, 1], `NaN` = not logged at that record; at least one of
        `train_acc` and `test_acc` is required.
    test_acc : array_like, optional
        `([n_runs,] n_records)` test accuracy in [0, 1], `NaN` = not logged.
    train_loss : array_like, optional
        `([n_runs,] n_records)` training loss ≥ 0, `NaN` = not logged.
    test_loss : array_like, optional
        `([n_runs,] n_records)` test loss ≥ 0, `NaN` = not logged.
    weight_norm : array_like, optional
        `([n_runs,] n_records)` global parameter norm ≥ 0, `NaN` = not logged.
    embeddings : array_like, optional
        `([n_runs,] n_snapshots, n_tokens, d)` token-embedding snapshots, row `t` = token `t`.
    weights : array_like, optional
        `([n_runs,] n_snapshots, ...)` parameter snapshots, flattened per record.
    gap : array_like, optional
        `([n_runs,] n_epochs)` eigengap series σ₂/σ₃ by epoch, n_epochs ≥ 2, row 0 = init (`NaN` allowed:
        undefined rows; inf refused).
    train_mask : array_like, optional
        The training set in any form of `grokclocks.task.as_mask_stack` (bool `(p, p)`, flat `(p*p,)`, pair
        indices), one per run or one shared; each needs at least one training and one test pair.
    p : int, optional
        The modulus p ≥ 2; taken from `train_mask` when absent.
    operation : str
        The task as `grokclocks.coverage.label_table` names it (`"add"`, `"sub"`, `"mul"`, ...); default
        `"add"`.
    b_offset : int
        Vocabulary offset ≥ 0 of the second operand; default 0 (the operands share their tokens).
    lam : float, optional
        The linear estimator's aspect ratio λ = d_in/N_tr > 0, a scalar.
    n_train : int or array_like, optional
        Training-set size N_tr, integers ≥ 1: one, or one per run; default `None`: counted from `train_mask`.
    lam_sweep : tuple of two array_like, optional
        `(lams, delays)`: grokking delays (> 0) measured at aspect ratios λ > 0, 1-D of equal length (≥ 3
        for the `levi:appG` fit).
    train_level : float
        Train-accuracy level in (0, 1] of the clock `t_train`; default `grokclocks.task.TRAIN_LEVEL` = 1.0.
    test_level : float
        Test-accuracy level in (0, 1] of the clock `t_test`; default `grokclocks.task.TEST_LEVEL` = 0.99.
    source : str
        Where the run came from, shown in the table's header; default `"arrays"`.
    embedding_steps : array_like, optional
        `(n_snapshots,)` strictly increasing steps of the embedding snapshots; default `None`: `steps` (then
        there must be one snapshot per record).
    weights_steps : array_like, optional
        `(n_snapshots,)` strictly increasing steps of the weight snapshots; default `None`: `steps`.
    run_names : sequence of str
        One name per run (e.g. each seed's file); default empty.
    input_notes : sequence of str
        How the input was read, one sentence each; the alignment notes are added after them.

    Returns
    -------
    RunData

    Raises
    ------
    DomainError
        Wrong shapes, inf values, a series with no value, accuracies outside [0, 1], negative losses,
        inconsistent `p` or run counts; the message names the argument.
    """
    p, b_offset, lam, operation = (x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x
                                   for x in (p, b_offset, lam, operation))
    t = V.as_float_array(steps, "steps")
    if t.ndim != 1 or t.size < 2:
        raise DomainError(f"steps must be 1-D with at least 2 records (got shape {t.shape})")
    if np.any(np.diff(t) <= 0):
        i = int(np.argmax(np.diff(t) <= 0)) + 1
        raise DomainError(f"steps must be strictly increasing (record {i} = {t[i]:g} after {t[i - 1]:g})")
    n = t.size
    if train_acc is None and test_acc is None:
        raise DomainError("give at least one of train_acc, test_acc")
    ser: dict[str, np.ndarray | None] = {}
    for name, val in (("train_acc", train_acc), ("test_acc", test_acc), ("train_loss", train_loss),
                      ("test_loss", test_loss), ("weight_norm", weight_norm)):
        if val is None:
            ser[name] = None
            continue
        a = _series2d(val, name, n)
        lo, hi = float(np.nanmin(a)), float(np.nanmax(a))
        if name.endswith("acc") and (lo < 0 or hi > 1):
            raise DomainError(f"{name} must lie in [0, 1] (got range [{lo:g}, {hi:g}])")
        if lo < 0:
            raise DomainError(f"{name} must be >= 0 (got {lo:g})")
        ser[name] = a
    n_runs = {a.shape[0] for a in ser.values() if a is not None}
    if len(n_runs) > 1:
        raise DomainError(f"the series disagree on the number of runs: {sorted(n_runs)}")
    nr = n_runs.pop()
    if p is not None:
        p = V.integer_at_least(p, "p", 2)
    mask = None
    if train_mask is not None:
        mask = _task.as_mask_stack(train_mask, p, name="train_mask")
        p = int(mask.shape[1])
        if mask.shape[0] == 1 and nr > 1:
            mask = np.broadcast_to(mask, (nr,) + mask.shape[1:])
        if mask.shape[0] != nr:
            raise DomainError(f"train_mask has {mask.shape[0]} runs, the series {nr}")
        if (~mask).all(axis=(1, 2)).any() or mask.all(axis=(1, 2)).any():
            raise DomainError("every train_mask needs at least one training and one test pair")
    emb = emb_t = None
    if embeddings is not None:
        emb = V.as_float_array(embeddings, "embeddings")
        if emb.ndim == 3:
            emb = emb[None]
        if emb.ndim != 4 or emb.shape[0] != nr:
            raise DomainError(f"embeddings must have shape ([n_runs,] n_snapshots, n_tokens, d) with n_runs={nr} "
                              f"(got {np.shape(embeddings)})")
        emb_t = _snapshot_steps(embedding_steps, "embedding_steps", emb.shape[1], t, "embeddings")
    wts = wts_t = None
    if weights is not None:
        wts = V.as_float_array(weights, "weights")
        n_snap = n if weights_steps is None else np.size(weights_steps)
        if nr == 1 and wts.shape[0] == n_snap:
            wts = wts[None]
        if wts.ndim < 2 or wts.shape[0] != nr:
            raise DomainError(f"weights must have shape ([n_runs,] n_snapshots, ...) with n_runs={nr} "
                              f"(got {np.shape(weights)})")
        wts_t = _snapshot_steps(weights_steps, "weights_steps", wts.shape[1], t, "weights")
        wts = wts.reshape(nr, wts.shape[1], -1)
    g = None
    if gap is not None:
        g = np.asarray(gap, dtype=np.float64)
        if g.ndim == 1:
            g = g[None]
        if g.ndim != 2 or g.shape[0] != nr or g.shape[1] < 2:
            raise DomainError(f"gap must have shape ([n_runs,] n_epochs) with n_runs={nr} (got {np.shape(gap)})")
        if np.isinf(g).any():
            raise DomainError("gap must not contain inf (NaN marks undefined rows)")
    b_offset = V.integer_at_least(b_offset, "b_offset", 0)
    if lam is not None:
        lam = float(V.positive(lam, "lam", scalar=True))  # an array: DomainError naming lam, not TypeError
    ntr = None
    if n_train is not None:
        ntr = np.atleast_1d(V.as_float_array(n_train, "n_train"))
        if np.any(ntr < 1) or np.any(ntr != np.round(ntr)):
            raise DomainError(f"n_train must be integers >= 1 (got {n_train!r})")
        ntr = np.broadcast_to(ntr, (nr,)).copy() if ntr.size in (1, nr) else None
        if ntr is None:
            raise DomainError(f"n_train must have one entry or one per run ({nr})")
    elif mask is not None:
        ntr = mask.sum(axis=(1, 2)).astype(float)
    sweep = None
    if lam_sweep is not None:
        try:
            lams, dts = lam_sweep
        except (TypeError, ValueError) as exc:
            raise DomainError("lam_sweep must be a pair (lams, delays)") from exc
        lams, dts = V.positive(lams, "lam_sweep lams"), V.positive(dts, "lam_sweep delays")
        if lams.shape != dts.shape or lams.ndim != 1:
            raise DomainError("lam_sweep lams and delays must be 1-D of equal length")
        sweep = (lams, dts)
    train_level = _level(train_level, "train_level")
    test_level = _level(test_level, "test_level")
    if not isinstance(operation, str):
        raise DomainError(f"operation must be a string (got {operation!r})")
    names = tuple(str(x) for x in run_names)
    if names and len(names) != nr:
        raise DomainError(f"run_names must have one name per run ({nr}) (got {len(names)})")
    notes = tuple(input_notes) + tuple(_alignment_notes(t, ser, emb_t))
    return RunData(steps=t, embeddings=emb, weights=wts, gap=g, train_mask=mask, p=p, operation=operation,
                   b_offset=b_offset, lam=lam, n_train=ntr, lam_sweep=sweep, train_level=train_level,
                   test_level=test_level, source=source, embedding_steps=emb_t, weights_steps=wts_t,
                   run_names=names, input_notes=notes, **ser)


def _level(x: Any, name: str) -> float:
    v = float(V.as_float_array(x, name))
    if not 0.0 < v <= 1.0:
        raise DomainError(f"{name} must be in (0, 1] (got {v!r})")
    return v


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
                index: Any, source: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Arguments of `run_data` (and defaults) from an engine trajectory's parts.

    Every config value used is checked (a run file's config is read from the file): a `DomainError` naming
    `source`, the key, its value and what it must be."""
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


def _zip_keys(path: Path, max_bytes: int) -> list[str] | None:
    """The array names of the zip archive at `path` (None if it is not a readable zip); a file over
    `max_bytes` or not a regular file is a `LogError`."""
    with _safe.open_regular(path, max_bytes) as f:
        if f.read(4) != b"PK\x03\x04":
            return None
        f.seek(0)
        try:
            with zipfile.ZipFile(f) as z:
                return [n[: -len(".npy")] if n.endswith(".npy") else n for n in z.namelist()]
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            return None


def _is_engine_npz(path: Path, max_bytes: int = _safe.DEFAULT_MAX_BYTES) -> bool:
    """An engine run file (`Trajectory.save`): its keys, or, when the archive cannot be read, the run
    file's config beside it (a truncated engine file is a damaged run file, not a foreign log)."""
    if not path.is_file():
        return False
    files = _zip_keys(path, max_bytes)
    if files is None:  # unreadable: a run file only if its config says so
        js = path.with_suffix(".json")
        try:
            obj = _safe.json_loads(_safe.read_text(js, max_bytes), js.name) if js.is_file() else None
        except (_logs.LogError, ValueError):
            return False
        return isinstance(obj, dict) and {"class", "fields"} <= set(obj)
    return "meta" in files or ("times" in files and any(k.startswith("metric:") for k in files))


def _check_engine_archive(p: Path, max_bytes: int) -> None:
    """Before the run file is read, the limits of the log readers with their `LogError`: its members unpack to at
    most `max_bytes` and are stored or deflated (`_safe.zip_limits`), and no `.npy` header announces more data
    than `max_bytes` or than its member holds.  A zip directory that cannot be read is left to the run-file
    reader, which says how the file is damaged (and reads it through the same layer)."""
    with _safe.open_regular(p, max_bytes) as f:
        try:
            z = zipfile.ZipFile(f)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            return
        infos = _safe.zip_limits(z, p.name, max_bytes)
        with z:
            for info in infos:
                if not info.filename.endswith(".npy"):
                    continue
                try:
                    with z.open(info) as m:
                        _safe.npy_header(m, f"{p.name}: member {_logs._short(info.filename)}", info.file_size,
                                         max_bytes)
                except _logs.LogError as exc:
                    if "over the limit" in str(exc):
                        raise
                    raise _runfile.RunFileError(f"{p} is damaged: {exc}") from None
                except Exception:  # noqa: BLE001 - a damaged member: the run-file reader says how
                    return


def _engine_file(p: Path, index: Any, max_bytes: int = _safe.DEFAULT_MAX_BYTES) -> RunData:
    _check_engine_archive(p, max_bytes)
    run = _runfile._read_run(p, max_bytes)  # format, version, sha256, structure: RunFileError otherwise
    config = run.config.get("fields")
    try:
        kw, defaults = _engine_run(run.arrays["times"], run.named("metric"), run.named("extra"), config, index,
                                   f"engine run {p.name}")
        return _finish(kw, defaults, {})
    except DomainError as exc:  # run_data's checks name the array, not the file it came from
        if p.name not in str(exc):
            exc.args = (f"engine run {p.name}: {exc}",)
        raise


def _log_kwargs(log: _logs.RunLog) -> dict[str, Any]:
    kw = dict(log.arrays)
    for k in ("operation",):
        if k in kw:
            kw[k] = str(kw[k])
    for k in ("p", "b_offset", "lam"):  # run_data checks them: int() would read p = 31.5 as 31, float() True as 1
        if k in kw:
            v = np.asarray(kw[k])
            v = v.reshape(()).item() if v.size == 1 else kw[k]
            if isinstance(v, str):  # a text log's setting
                try:
                    v = int(v) if v.strip().isdigit() else float(v)
                except ValueError:
                    pass
            kw[k] = v
    used = ", ".join(f"{s} <- {c!r}" for s, c in log.columns.items())
    notes = [f"read as {log.format}: {used}"] + list(log.notes)
    if log.ignored:
        notes.append(f"ignored columns: {_logs._short(list(log.ignored), 160)}")
    kw["source"] = log.source
    kw["input_notes"] = notes
    return kw


def _resolve_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    if not p.exists() and p.name and p.with_name(p.name + ".npz").exists():
        p = p.with_name(p.name + ".npz")
    if not p.exists():
        raise DomainError(f"path must be an existing log file or run directory (got {str(path)!r})")
    return p


def load_run(path: Any, *, index: Any = None, columns: Mapping[str, str] | None = None,
             format: str | None = None, max_bytes: int = _safe.DEFAULT_MAX_BYTES,  # noqa: A002
             delimiter: str | None = None, decimal: str | None = None) -> RunData:
    """Read a run: an engine `.npz` (`Trajectory.save`), any log of `grokclocks.logs`, or several (one per seed).

    An engine file has the keys `times`, `metric:<name>` and `extra:<name>` and its config (in the archive's
    `meta` entry, or the `.json` beside it), read as plain JSON: no JAX is needed except to rebuild a random
    split's training mask; the config values used (`p`, `threshold`, `train_frac`, `seeds`, `split_seed`,
    `grid_axes`) are checked.  Every other file or directory goes to `grokclocks.logs.read_log` (CSV, TSV, JSON
    lines / W&B, TensorBoard, Lightning `metrics.csv`, Hugging Face `trainer_state.json`, `torch.save`,
    `.npz`, `.npy`, MLflow, DVCLive, Sacred, Aim, Keras `CSVLogger`, W&B chart exports, key-value text logs).
    A list or tuple of paths is one run with one seed per file, except files that each hold part of a run
    (DVCLive or MLflow metric files, W&B chart exports), which are joined by run (`grokclocks.logs.read_logs`).

    Parameters
    ----------
    path : str or os.PathLike, or a list or tuple of them
        The run's file or run directory (`.npz` may be left off an engine run's name), or one log file per
        seed of the same configuration (an engine run holds its seeds already and is refused in a list).
    index : tuple of int, optional
        The grid point of an engine sweep, one index per axis of its `config.grid_axes`; required when the
        file holds a grid of more than one point, `None` (default) otherwise.
    columns : mapping of str to str, optional
        Series -> column name of a log, overriding the name matching of `grokclocks.logs.canonical_name`;
        default `None`.
    format : str, optional
        Force a log reader, one of `grokclocks.logs.FORMATS` (an engine file is then read as a plain `.npz`
        log); default `None`: from the content and the extension.
    max_bytes : int
        The most bytes a file may hold, or a zip archive's members unpack to (checked from its directory and
        `.npy` headers before anything is decompressed); an integer ≥ 1, default
        `grokclocks.logs.DEFAULT_MAX_BYTES` (256 MiB).  The CLI's `--max-bytes`.
    delimiter : str, optional
        The delimiter of a CSV log, `","`, `";"`, `"tab"` (or a tab character) or `"|"`; default `None`: detected from
        its first lines.  The CLI's `--delimiter`.
    decimal : str, optional
        The decimal mark of a CSV log, `"."` or `","`; default `None`: detected (a comma only with another
        delimiter).  The CLI's `--decimal`.

    Returns
    -------
    RunData
        The run's arrays, validated by `run_data`, with notes on how the input was read and aligned.

    Raises
    ------
    DomainError
        A missing file, a log that cannot be read (`grokclocks.logs.LogError`: the file, the column, the row
        and its step), a damaged engine file (`grokclocks.runfile.RunFileError`), an engine config value of
        the wrong kind (naming the file and the key), invalid arrays, or an invalid `max_bytes`.
    """
    max_bytes = _safe.check_max_bytes(max_bytes)
    opts = {"columns": columns, "format": format, "max_bytes": max_bytes, "delimiter": delimiter,
            "decimal": decimal}
    if isinstance(path, (list, tuple)):
        if not path:
            raise DomainError("give at least one path")
        if len(path) == 1:
            return load_run(path[0], index=index, **opts)
        seen: dict[Path, Any] = {}
        resolved = []
        for q in path:
            p = _resolve_path(q)
            if p.resolve() in seen:
                raise DomainError(f"path lists the same file twice ({str(seen[p.resolve()])!r} and {str(q)!r}): "
                                  "each file is one seed")
            seen[p.resolve()] = q
            if _is_engine_npz(p, max_bytes):
                raise DomainError(f"{p.name} is an engine run (it holds its seeds already); pass it alone")
            resolved.append(p)
        log = _logs.read_logs(resolved, **opts)
        kw = _log_kwargs(log)
        if log.run_names:
            kw["run_names"] = list(log.run_names)
            names = ", ".join(log.run_names)
            kw["source"] = f"{len(log.run_names)} seeds: {names if len(names) <= 120 else names[:117] + '...'}"
        return run_data(**kw)
    p = _resolve_path(path)
    if format is None and _is_engine_npz(p, max_bytes):
        return _engine_file(p, index, max_bytes)
    log = _logs.read_log(p, **opts)
    kw = _log_kwargs(log)
    if log.run_names:
        kw["run_names"] = list(log.run_names)
    return run_data(**kw)


def _finish(kw: dict[str, Any], defaults: dict[str, Any], overrides: dict[str, Any]) -> RunData:
    sweep_src = defaults.pop("_sweep", None)
    args = {**defaults, **kw, **{k: v for k, v in overrides.items() if v is not None}}
    rd = run_data(**args)
    if sweep_src is not None and rd.lam_sweep is None and rd.p is not None:
        sw = _sweep_from_engine(sweep_src[0], sweep_src[1], rd.p, rd.steps, rd.train_level, rd.test_level)
        if sw is not None:
            rd = dataclasses.replace(rd, lam_sweep=sw)
    return rd
