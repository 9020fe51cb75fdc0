"""Which column holds which series: names, roles and metrics, and the validated steps and values of a series."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._validate import DomainError
from ._table import LogError, _at, _Col, _missing, _number, _short, _Table

SERIES: tuple[str, ...] = ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm")
"""The series a log can hold: train and test accuracy (in [0, 1]), train and test loss (≥ 0), the weight norm."""

# W&B's `_step` counts wandb.log calls; Lightning's WandbLogger logs the training step beside it as
# `trainer/global_step` and the Hugging Face WandbCallback as `train/global_step` (each log call, train or
# eval, advances `_step`), so those two come first when present.
STEP_NAMES: tuple[str, ...] = ("steps", "step", "global_step", "trainer/global_step", "train/global_step", "_step",
                               "iteration", "iter", "epoch", "epochs")
"""Names of a step column (case and surrounding spaces ignored), in order of preference: the first present
is the log's step column (W&B's `_step` counts `wandb.log` calls, so the training step that Lightning's and
Hugging Face's W&B loggers write beside it comes first)."""

ROLE_WORDS: dict[str, str] = {"train": "train", "training": "train", "val": "test", "valid": "test",
                              "validation": "test", "eval": "test", "evaluation": "test", "test": "test",
                              "dev": "test", "holdout": "test"}
"""A word of a column name -> the split it means, `"train"` or `"test"` (a name without one is `"train"`)."""

METRIC_WORDS: dict[str, str] = {"acc": "acc", "accuracy": "acc", "top1": "acc", "loss": "loss", "nll": "loss",
                                "xent": "loss"}
"""A word of a column name -> the metric it means, `"acc"` (accuracy) or `"loss"`."""

_NORM_WORDS = {"weight", "weights", "param", "params", "parameter", "parameters"}
_QUALIFIERS = {"step", "epoch"}


_SEPARATORS = re.compile(r"[/_\-.\s:]+")


def _words(name: str) -> list[str]:
    return [w for w in _SEPARATORS.split(name.strip().lower()) if w]


def canonical_name(column: str) -> str | None:
    """The series a column name reads as (`"val/acc"` -> `"test_acc"`), `"steps"` for a step column, or `None`.

    The name is split into words at `/ _ - . :` and spaces (case ignored); a role word (`ROLE_WORDS`, default
    train) and one metric word (`METRIC_WORDS`) make the series, and `step` / `epoch` inside a metric name are
    ignored.  The weight norm needs a weight or parameter word (`weight_norm`, `param_norm`, ...): a bare
    `global_norm`, `total_norm` or `l2_norm` is what gradient clipping reports.

    Parameters
    ----------
    column : str
        A column name as the log writes it, e.g. `"val/acc"`, `"trainer/global_step"`.

    Returns
    -------
    str or None
        One of `SERIES`, `"steps"` (one of `STEP_NAMES`), or `None` (no series: the column is ignored).

    Raises
    ------
    DomainError
        `column` is not a str.

    Examples
    --------
    >>> [canonical_name(c) for c in ("val/acc", "eval_accuracy", "loss", "_step", "lr")]
    ['test_acc', 'test_acc', 'train_loss', 'steps', None]
    """
    if not isinstance(column, str):
        raise DomainError(f"column must be a column name, a str (got {_short(column)})")
    low = column.strip().lower()
    if low in STEP_NAMES:
        return "steps"
    every = _words(column)
    words = [w for w in every if w not in _QUALIFIERS] or every
    roles = [ROLE_WORDS[w] for w in words if w in ROLE_WORDS]
    rest = [w for w in words if w not in ROLE_WORDS]
    if len(roles) > 1:
        return None
    role = roles[0] if roles else "train"
    if len(rest) == 1 and rest[0] in METRIC_WORDS:
        return f"{role}_{METRIC_WORDS[rest[0]]}"
    # a weight or parameter word is required: a bare `global_norm` / `total_norm` / `l2_norm` is what
    # optax.global_norm(grads) and torch.nn.utils.clip_grad_norm_ return, a gradient norm
    if not roles and "norm" in rest and set(rest) - {"norm", "l2", "global", "total"} <= _NORM_WORDS \
            and set(rest) & _NORM_WORDS:
        return "weight_norm"
    return None


def _role_steps(column: str) -> str | None:
    """`val_step` -> `"test"`: a step column of one role; None otherwise."""
    words = _words(column)
    if len(words) == 2 and words[1] in ("step", "steps") and words[0] in ROLE_WORDS:
        return ROLE_WORDS[words[0]]
    return None


def parse_columns(text: str | None) -> dict[str, str]:
    """The mapping of series to column names that the CLI option `--columns` spells as text.

    `"test_acc=val/accuracy,steps=_step"` becomes `{"test_acc": "val/accuracy", "steps": "_step"}`; spaces
    around names and empty parts are dropped.  The series names are checked by `read_log`.

    Parameters
    ----------
    text : str or None
        `NAME=COLUMN` pairs separated by commas; `None` (the option not given) gives `{}`.

    Returns
    -------
    dict
        Series name -> column name, in the order given.

    Raises
    ------
    DomainError
        `text` is not a str, or a part lacks its `=`, its name or its column.

    Examples
    --------
    >>> parse_columns("test_acc=val/accuracy, steps=_step")
    {'test_acc': 'val/accuracy', 'steps': '_step'}
    """
    if text is None:
        return {}
    if not isinstance(text, str):
        raise DomainError(f"columns must be a str of NAME=COLUMN pairs separated by commas, e.g. "
                          f"test_acc=val/accuracy (got {_short(text)})")
    out: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, sep, col = part.partition("=")
        key, col = key.strip(), col.strip()
        if not sep or not key or not col:
            raise DomainError(f"columns must be NAME=COLUMN pairs separated by commas, e.g. test_acc=val/accuracy "
                              f"(got {part.strip()!r})")
        if key in out:
            raise DomainError(f"columns names {key} twice ({key}={out[key]} and {key}={col}); a series is read "
                              "from one column: keep one")
        out[key] = col
    return out


def _check_columns(columns: Mapping[str, str] | None) -> dict[str, str]:
    if columns is not None and not isinstance(columns, Mapping):
        raise DomainError(f"columns must be a mapping series -> column name, e.g. {{'test_acc': 'val/accuracy'}} "
                          f"(got {_short(columns)})")
    cols = dict(columns or {})
    bad = sorted(set(cols) - set(SERIES) - {"steps"})
    if bad:
        raise DomainError(f"columns: unknown series {bad}; map any of {['steps', *SERIES]} to a column name")
    return cols



def _resolve(tab: _Table, columns: Mapping[str, str]) -> tuple[dict[str, str], str | None, dict[str, str], list[str]]:
    """(series -> column, step column, role -> role-step column, ignored columns)."""
    names = list(tab.cols)
    for key, col in columns.items():
        if col not in tab.cols:
            raise LogError(f"{tab.source}: columns maps {key} to {col!r}, which is not a column "
                           f"(columns: {_short(names, 200)})")
    canon = tab.canon = {n: canonical_name(n) for n in names}  # once per column: read_log asks again
    chosen = {k: v for k, v in columns.items() if k != "steps"}
    used = set(columns.values())
    step_col = columns.get("steps")
    if step_col is None:
        lows = {n.strip().lower(): n for n in names}
        step_col = next((lows[s] for s in STEP_NAMES if s in lows), None)
    per_col_steps = {n[: -len("_steps")] for n in names if n.endswith("_steps") and n[: -len("_steps")] in tab.cols}
    role_steps: dict[str, str] = {}
    for n in names:
        r = _role_steps(n)
        if r is not None and n not in used:
            role_steps[r] = n
    role_cols = set(role_steps.values())
    claims: dict[str, list[str]] = {}
    for n in names:
        if n in used or n == step_col or n in role_cols or n.endswith("_steps") and \
                n[: -len("_steps")] in per_col_steps:
            continue
        c = canon[n]
        if c is None or c == "steps" or c in chosen:
            continue
        claims.setdefault(c, []).append(n)
    for c, cols in claims.items():
        if len(cols) > 1:
            raise LogError(f"{tab.source}: {len(cols)} columns read as {c} ({_short(cols, 200)}); choose one with "
                           f"columns={{{c!r}: {_short(cols[0], 80)}}} (CLI: --columns {c}=COLUMN)")
        chosen[c] = cols[0]
    if tab.path_roles:
        _check_path_roles(tab, chosen, set(columns.values()))
    accounted = set(chosen.values()) | {step_col} | set(role_steps.values()) | {
        f"{s}_steps" for s in per_col_steps}
    ignored = [n for n in names if n not in accounted and canon[n] != "steps"]
    return chosen, step_col, role_steps, ignored


def _has_role(name: str) -> bool:
    """Whether a column name holds a role word (train, val, test, ...)."""
    return any(w in ROLE_WORDS for w in _words(name))


def _check_path_roles(tab: _Table, chosen: Mapping[str, str], given: set[str]) -> None:
    """A series named by a file's path (DVCLive's `plots/metrics/<key>.tsv`, MLflow's `metrics/<key>`) whose
    key holds no role word is a training series only beside the test series of its kind (`loss` and
    `val_loss`, Keras' names); alone, it could be either, and is refused rather than guessed."""
    for series, name in chosen.items():
        if name in given or series == "weight_norm" or _has_role(name):
            continue
        kind = series.split("_", 1)[1]
        if f"test_{kind}" in chosen:
            continue
        where = tab.origin.get(name, name)
        raise LogError(f"{tab.source}: cannot tell whether {name!r} ({where}) is a training or a test series: "
                       "neither its name nor its folder says train, val or test, and no test series of its kind "
                       f"is beside it; say which with columns={{'train_{kind}': {name!r}}} or "
                       f"{{'test_{kind}': {name!r}}} (CLI: --columns train_{kind}={name} or test_{kind}={name})")


def _series_steps(tab: _Table, col: _Col, series: str, step_col: str | None,
                  role_steps: Mapping[str, str]) -> tuple[Any, str]:
    """The raw step values of a column and the name of where they came from."""
    if col.steps is not None:
        return col.steps, OWN_STEPS
    own = tab.cols.get(f"{col.name}_steps")
    if own is not None:
        return own.values, own.name
    n = _n_records(col)  # a 2-D column (n_runs, n_records) is matched on its records, not its runs
    role = series.split("_")[0] if series != "weight_norm" else "train"
    rs = role_steps.get(role)
    if rs is not None and len(tab.cols[rs].values) == n:
        return tab.cols[rs].values, rs
    if step_col is not None and len(tab.cols[step_col].values) == n:
        return tab.cols[step_col].values, step_col
    if step_col is None:
        raise LogError(f"{tab.source}: no step column for {col.name!r} (looked for {', '.join(STEP_NAMES)}); name "
                       f"it with columns={{'steps': ...}} (CLI: --columns steps=COLUMN)")
    n_step = len(tab.cols[step_col].values) if step_col else None
    raise LogError(f"{tab.source}: column {col.name!r} ({series}) has {n} entries but the steps "
                   f"{step_col!r} have {n_step}; give its steps as {col.name}_steps or a "
                   f"{'val' if role == 'test' else 'train'}_step list")


def _n_records(col: _Col) -> int:
    v = col.values
    return int(v.shape[-1]) if isinstance(v, np.ndarray) and v.ndim == 2 else len(v)


OWN_STEPS = "its own steps"
"""Where a column's steps came from when it carries its own (a metric file, a TensorBoard tag, Sacred)."""


def _steps_of(where: str, col: _Col) -> str:
    """Where a column's steps came from, for a message: "the steps of column 'x'" or "'step'"."""
    return f"the steps of column {_short(col.name)}" if where == OWN_STEPS else _short(where)


def _wide_steps(tab: _Table, col: _Col, raw: Any, where: str) -> np.ndarray:
    """Validated steps of a 2-D column (n_runs, n_records): 1-D, finite, strictly increasing, one per record."""
    try:
        t = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise LogError(f"{tab.source}: the steps {_steps_of(where, col)} of column {col.name!r} are not numbers "
                       f"({_short(raw)})") from None
    if t.ndim != 1 or t.size != _n_records(col):
        raise LogError(f"{tab.source}: the steps {_steps_of(where, col)} of column {col.name!r} must be 1-D with one step per "
                       f"record ({_n_records(col)}) (got shape {t.shape})")
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise LogError(f"{tab.source}: {_steps_of(where, col)} entry {bad[0]} is {t[bad[0]]} (steps must be finite)")
    back = np.flatnonzero(np.diff(t) <= 0)
    if back.size:
        i = int(back[0]) + 1
        what = "repeats" if t[i] == t[i - 1] else "goes back from"
        raise LogError(f"{tab.source}: {_steps_of(where, col)} entry {i}: step {t[i]:g} {what} step {t[i - 1]:g} of entry {i - 1} "
                       "(steps must increase: a resumed or concatenated run? keep one segment)")
    return t


def _quick_float(x: Any) -> float | None:
    """float(x) of a str, float or int that converts cleanly; None: `_number` decides (and words the error)."""
    kind = type(x)
    if kind is float:
        return x
    if kind is str or kind is int:
        try:
            return float(x)  # float() ignores surrounding whitespace, as float(x.strip()) in _number
        except (ValueError, OverflowError):
            return None
    return None


def _clean_arrays(tab: _Table, vals: Any, steps_raw: Any, series: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(steps, values) of numeric array columns in one vectorised pass, or None when any row needs the row-by-row
    reading of `_one_series` (which then gives the same answer, or the error naming the row)."""
    if not (isinstance(vals, np.ndarray) and isinstance(steps_raw, np.ndarray) and vals.ndim == steps_raw.ndim == 1
            and vals.dtype.kind in "fiu" and steps_raw.dtype.kind in "fiu"):
        return None
    v, t = vals.astype(np.float64), steps_raw.astype(np.float64)
    keep = ~np.isnan(v)
    if np.isnan(t).any() or (tab.text and not keep.all()):
        return None
    t, v = t[keep], v[keep]
    if not (np.isfinite(t).all() and np.isfinite(v).all() and (np.diff(t) > 0).all()):
        return None
    if series.endswith("acc") and not ((v >= 0.0) & (v <= 1.0)).all() or series.endswith("loss") and (v < 0).any():
        return None
    return t, v


def _one_series(tab: _Table, col: _Col, series: str, steps_raw: Any, step_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Validated (steps, values) of one 1-D column: rows where it was logged, in order."""
    vals = col.values
    n = len(vals)
    if len(steps_raw) != n:
        raise LogError(f"{tab.source}: column {col.name!r} has {n} entries, {_steps_of(step_name, col)} {len(steps_raw)}")
    fast = _clean_arrays(tab, vals, steps_raw, series)
    if fast is not None:
        return fast
    t_out, v_out = [], []
    prev_t, prev_i = None, None
    step_col = _Col(col.name if step_name == OWN_STEPS else step_name, steps_raw, None, col.rows)
    for i in range(n):
        x = vals[i]
        if _missing(x):
            continue
        s = steps_raw[i]
        if _missing(s) or (isinstance(s, float) and math.isnan(s)):
            raise LogError(f"{tab.source}: column {col.name!r} {tab.row(col, i)} has a value but no step "
                           f"({_steps_of(step_name, col)} is empty there)")
        t = _quick_float(s)
        if t is None:
            t = _number(tab, step_col, i, None, "step")
        v = _quick_float(x)
        if v is None:
            v = _number(tab, col, i, t, "number")
        if math.isnan(v):
            if tab.text:
                raise LogError(f"{tab.source}: column {col.name!r} {tab.row(col, i)}{_at(t)} is NaN (did the run "
                               "diverge? leave the cell empty where nothing was logged)")
            continue  # arrays have no empty cell: NaN marks a record where the series was not logged
        if not math.isfinite(t):
            raise LogError(f"{tab.source}: {_steps_of(step_name, col)} {tab.row(col, i)} is {t} (steps must be finite)")
        if not math.isfinite(v):
            raise LogError(f"{tab.source}: column {col.name!r} {tab.row(col, i)}{_at(t)} is {v} (must be finite)")
        if series.endswith("acc") and not 0.0 <= v <= 1.0:
            hint = " (a percentage? divide by 100)" if 1.0 < v <= 100.0 else ""
            raise LogError(f"{tab.source}: column {col.name!r} ({series}) {tab.row(col, i)}{_at(t)} = {v:g} is "
                           f"outside [0, 1]{hint}")
        if series.endswith("loss") and v < 0:
            raise LogError(f"{tab.source}: column {col.name!r} ({series}) {tab.row(col, i)}{_at(t)} = {v:g} is "
                           "negative (a loss is >= 0)")
        if prev_t is not None and t <= prev_t:
            what = "repeats" if t == prev_t else "goes back from"
            raise LogError(f"{tab.source}: column {col.name!r} {tab.row(col, i)}: step {t:g} {what} step "
                           f"{prev_t:g} of {tab.row(col, prev_i)} (steps must increase: a resumed or "
                           "concatenated run? keep one segment)")
        prev_t, prev_i = t, i
        t_out.append(t)
        v_out.append(v)
    return np.asarray(t_out, dtype=np.float64), np.asarray(v_out, dtype=np.float64)


