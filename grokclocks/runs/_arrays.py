"""`run_data`: a run's arrays and settings validated into a `RunData` (the keys of `USER_KEYS`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import _validate as V
from .. import logs as _logs
from .. import task as _task
from .._validate import DomainError
from ._records import RunData, _fmt_num

__all__ = ["run_data"]


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
