"""The records every reader builds: a table of raw columns, the run read from it, and the errors."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._validate import DomainError

# keys of a run mapping that are not series (see grokclocks.compare.USER_KEYS)
_OTHER_KEYS = ("embeddings", "weights", "gap", "train_mask", "p", "operation", "b_offset", "lam", "n_train",
               "embedding_steps", "weights_steps")


class LogError(DomainError):
    """A log that cannot be read; the message names the file, the column, the row and its step."""


class LogWarning(UserWarning):
    """Something in a log was ignored (unknown columns, a summary record); the message lists it."""


def _short(x: Any, limit: int = 60) -> str:
    text = " ".join(repr(x).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _tensor_hint(x: Any) -> str:
    if isinstance(x, str) and x.startswith("tensor("):
        return " (a torch tensor written with str(); log float(x) or x.item())"
    return ""


@dataclasses.dataclass
class _Col:
    """One column as read: raw values, their steps (or None = the table's step column) and row labels."""

    name: str
    values: list[Any] | np.ndarray
    steps: list[Any] | np.ndarray | None = None
    rows: Sequence[str] | None = None


@dataclasses.dataclass
class _Table:
    source: str
    fmt: str
    cols: dict[str, _Col]
    other: dict[str, Any] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)
    text: bool = True  # text formats: an explicit NaN is an error (an empty cell is the gap)

    def row(self, col: _Col, i: int) -> str:
        return col.rows[i] if col.rows is not None else f"row {i}"


def _number(tab: _Table, col: _Col, i: int, step: Any, what: str) -> float:
    x = col.values[i]
    if isinstance(x, (bool, np.bool_)):
        raise LogError(f"{tab.source}: column {col.name!r} {tab.row(col, i)}{_at(step)}: {_short(x)} is a boolean, "
                       f"not a {what}")
    if hasattr(x, "item") and getattr(x, "ndim", 0) == 0:
        x = x.item()
    if isinstance(x, str):
        try:
            v = float(x.strip())
        except ValueError:
            raise LogError(f"{tab.source}: column {col.name!r} {tab.row(col, i)}{_at(step)}: {_short(x)} is not a "
                           f"number{_tensor_hint(x)}") from None
    else:
        try:
            v = float(x)
        except (TypeError, ValueError):
            raise LogError(f"{tab.source}: column {col.name!r} {tab.row(col, i)}{_at(step)}: {_short(x)} is not a "
                           f"number") from None
    return v


def _at(step: Any) -> str:
    if step is None:
        return ""
    try:
        s = float(step)
    except (TypeError, ValueError):
        return f" (step {_short(step)})"
    return f" (step {int(s) if s == int(s) else s:g})" if math.isfinite(s) else f" (step {s})"


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, str) and x.strip() == "")



def _records_table(records: Sequence[Any], source: str, fmt: str, label: Callable[[int], str]) -> _Table:
    names: list[str] = []
    for i, r in enumerate(records):
        if not isinstance(r, Mapping):
            raise LogError(f"{source}: {label(i)} is not a JSON object ({_short(r)})")
        for k in r:
            if k not in names:
                names.append(k)
    labels = [label(i) for i in range(len(records))]
    cols = {k: _Col(k, [r.get(k) for r in records], None, labels) for k in names}
    return _Table(source, fmt, cols)



def _mapping_table(obj: Mapping[str, Any], source: str, fmt: str, *, text: bool = False) -> _Table:
    cols: dict[str, _Col] = {}
    other: dict[str, Any] = {}
    for k, v in obj.items():
        k = str(k)
        if k in _OTHER_KEYS:
            other[k] = v
            continue
        if hasattr(v, "detach"):  # a torch tensor
            v = v.detach().cpu().numpy()
        if isinstance(v, (str, bytes)) or np.ndim(v) == 0:
            other[k] = v
            continue
        arr = v if isinstance(v, np.ndarray) else None
        if arr is not None and arr.ndim == 2 and k not in _OTHER_KEYS:  # (n_runs, n_records): several seeds
            cols[k] = _Col(k, arr)
            continue
        if arr is not None and arr.ndim > 2:
            other[k] = v
            continue
        cols[k] = _Col(k, list(v) if not isinstance(v, np.ndarray) else v)
    tab = _Table(source, fmt, cols, other, text=text)
    return tab



@dataclasses.dataclass(frozen=True)
class RunLog:
    """A run read from a log: arrays for :func:`grokclocks.compare.run_data` and how they were found.

    Attributes
    ----------
    source : str
        File name (or ``"DataFrame"``, ``"mapping"``).
    format : str
        The reader used (``"csv"``, ``"jsonl"``, ``"hf"``, ``"tensorboard"``, ...).
    arrays : dict
        ``steps`` (the union of every series' steps) and each series as ``([n_runs,] n_records)`` float64
        with ``NaN`` where it was not logged, plus the other keys of the log (``train_mask``, ``p``, ...).
    columns : dict
        Series -> the column it was read from.
    ignored : tuple of str
        Columns that matched nothing.
    notes : tuple of str
        What the reader recognised or skipped.
    step_column : str or None
        The column the series' steps came from, None where every series had its own steps (or, after
        :func:`merge_seeds`, where the seeds used different columns).
    """

    source: str
    format: str
    arrays: dict[str, Any]
    columns: dict[str, str]
    ignored: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    step_column: str | None = None

