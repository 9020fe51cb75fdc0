"""The records every reader builds: a table of raw columns, the run read from it, and the errors."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._validate import DomainError

# keys of a run mapping that are not series (see grokclocks.compare.USER_KEYS)
_OTHER_KEYS = ("embeddings", "weights", "gap", "train_mask", "p", "operation", "b_offset", "lam", "n_train",
               "embedding_steps", "weights_steps")


MAX_MESSAGE = 1_000
"""The longest message of a `LogError`, in characters: a longer one (a list of 100,000 columns) is cut in the
middle, saying how much was left out."""


class LogError(DomainError):
    """A log that cannot be read: a one-line message naming the file and, where there is one, the column, the row
    and its step (a `DomainError`, so a `ValueError`).  At most `MAX_MESSAGE` characters: whatever a message
    lists from a file, it stays one readable line.

    Parameters
    ----------
    message : object
        The message; a longer one than `MAX_MESSAGE` characters is cut in the middle, saying how much.
    *args : object
        Further exception arguments, kept as given.
    """

    def __init__(self, message: object = "", *args: object) -> None:
        text = str(message)
        if len(text) > MAX_MESSAGE:
            cut = len(text) - MAX_MESSAGE + 40
            text = f"{text[: MAX_MESSAGE * 2 // 3]} ...[{cut} characters left out]... {text[-(MAX_MESSAGE // 3 - 40):]}"
        super().__init__(text, *args)


class LogWarning(UserWarning):
    """Something in a log was ignored (columns that match no series, a closing summary record); the message
    lists it."""


def _short(x: Any, limit: int = 60) -> str:
    """One-line repr of `x` cut to `limit` characters, in time bounded by `limit` for a long str, bytes,
    list, tuple or dict (only their first items are shown); an object whose repr fails is named by type."""
    if isinstance(x, (str, bytes)) and len(x) > 2 * limit:
        x = x[: 2 * limit]
    elif isinstance(x, (list, tuple)) and len(x) > limit:
        x = type(x)(x[:limit])
    elif isinstance(x, dict) and len(x) > limit:
        x = dict(zip(list(x)[:limit], list(x.values())[:limit]))
    try:
        text = repr(x)
    except Exception:  # noqa: BLE001 - an int of more than 4,300 digits, a broken __repr__: the type will do
        text = f"<{type(x).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _cut(text: str, limit: int = 120) -> str:
    """`text` cut to `limit` characters (an ellipsis marks the cut), without the quotes of `_short`."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def natural_key(name: str) -> tuple:
    """A sort key that orders the numbers inside names by value: `seed2` < `seed10`, `run-9` < `run-10`.

    A number is compared by its digits without leading zeros (first their count, then the digits), never
    converted with `int`: a run name of 5,000 digits (an MLflow store's) sorts in linear time instead of
    raising Python's int-conversion limit."""
    return tuple((0, len(t.lstrip("0")), t.lstrip("0"), t) if t.isdigit() else (1, 0, t, t)
                 for t in re.findall(r"[0-9]+|[^0-9]+", name))


def _tensor_hint(x: Any) -> str:
    if isinstance(x, str) and x.startswith("tensor("):
        return " (a torch tensor written with str(); log float(x) or x.item())"
    return ""


class _Col:
    """One column as read: raw values, their steps (or None = the table's step column) and row labels.

    A column of records (`_records_table`) is kept sparse, `(n_records, indices, values)`, until its
    `values` are asked for (`None` where a record lacks the key): a log of many records with a different key
    each would otherwise be a table of records × keys."""

    __slots__ = ("name", "_values", "steps", "rows", "_sparse")

    def __init__(self, name: str, values: list[Any] | np.ndarray | None, steps: list[Any] | np.ndarray | None = None,
                 rows: Sequence[str] | None = None, *,
                 sparse: tuple[int, list[int], list[Any]] | None = None) -> None:
        self.name, self._values, self.steps, self.rows, self._sparse = name, values, steps, rows, sparse

    @property
    def values(self) -> list[Any] | np.ndarray:
        if self._values is None:
            n, index, vals = self._sparse
            dense: list[Any] = [None] * n
            for i, v in zip(index, vals):
                dense[i] = v
            self._values, self._sparse = dense, None
        return self._values


@dataclasses.dataclass
class _Table:
    source: str
    fmt: str
    cols: dict[str, _Col]
    other: dict[str, Any] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)
    text: bool = True  # text formats: an explicit NaN is an error (an empty cell is the gap)
    canon: dict[str, str | None] = dataclasses.field(default_factory=dict)  # column -> canonical_name, once
    # where the column names come from file paths (DVCLive's plots/metrics/<key>.tsv, MLflow's metrics/<key>),
    # a name without a role word is not taken for a training series unless the test series of its kind is there
    path_roles: bool = False
    origin: dict[str, str] = dataclasses.field(default_factory=dict)  # column -> the file it was read from
    # the run the table belongs to, when it holds only part of it (one metric file of a run, one W&B chart):
    # the files given together are joined by this key; None for a whole run
    part_of: str | None = None
    run: str | None = None  # the run's name, when a file or folder holds several runs (seeds)
    # text logs: column -> (fewest decimals printed, a value printed so)
    decimals: dict[str, tuple[int, str]] = dataclasses.field(default_factory=dict)

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
                           f"{what}{_tensor_hint(x)}") from None
    else:
        try:
            v = float(x)
        except (TypeError, ValueError):
            raise LogError(f"{tab.source}: column {col.name!r} {tab.row(col, i)}{_at(step)}: {_short(x)} is not a "
                           f"number") from None
        except OverflowError:  # an int beyond the double range: a JSON integer of over 308 digits
            raise LogError(f"{tab.source}: column {col.name!r} {tab.row(col, i)}{_at(step)}: an integer of "
                           f"{x.bit_length()} bits is beyond the double range (must be finite)") from None
    return v


def _at(step: Any) -> str:
    if step is None:
        return ""
    try:
        s = float(step)
    except (TypeError, ValueError, OverflowError):
        return f" (step {_short(step)})"
    return f" (step {int(s) if s == int(s) else s:g})" if math.isfinite(s) else f" (step {s})"


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, str) and x.strip() == "")


def _records_table(records: Sequence[Any], source: str, fmt: str, label: Callable[[int], str]) -> _Table:
    """A table of records (dicts), one column per key in the order keys first appear; linear in the number of
    key-value pairs (columns stay sparse until read)."""
    found: dict[Any, tuple[list[int], list[Any]]] = {}
    for i, r in enumerate(records):
        if not isinstance(r, Mapping):
            raise LogError(f"{source}: {label(i)} is not a JSON object ({_short(r)})")
        for k, v in r.items():
            slot = found.get(k)
            if slot is None:
                slot = found[k] = ([], [])
            slot[0].append(i)
            slot[1].append(v)
    labels = [label(i) for i in range(len(records))]
    cols = {k: _Col(k, None, None, labels, sparse=(len(records), idx, vals)) for k, (idx, vals) in found.items()}
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
        try:
            ndim = np.ndim(v)
        except (ValueError, TypeError, RecursionError):  # ragged nested lists: a column of non-numbers
            ndim = 1
        if isinstance(v, (str, bytes)) or ndim == 0:
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
    """A run read from a log by `read_log`: its arrays, ready for `grokclocks.compare.run_data`, and how they were
    found (the columns used, those ignored, what the reader recognised).

    Built by `read_log` and `merge_seeds`."""

    source: str
    """Where the run was read from: the file name, `"DataFrame"`, `"mapping"` or `"records"`, or after
    `merge_seeds` the number of seeds and their files."""
    format: str
    """The reader used: one of `FORMATS`, `"hf"` (a Hugging Face `trainer_state.json`), `"dataframe"`,
    `"mapping"` or `"records"`."""
    arrays: dict[str, Any]
    """`"steps"` (the union of every series' steps, float64, strictly increasing) and each series of `SERIES`
    that was found, float64 of shape `([n_runs,] n_records)` with `NaN` where it was not logged, plus the other
    keys of the log (`train_mask`, `p`, `embeddings`, ...; see `grokclocks.compare.USER_KEYS`)."""
    columns: dict[str, str]
    """Series -> the column it was read from."""
    ignored: tuple[str, ...] = ()
    """Columns that matched no series (listed once in a `LogWarning`)."""
    notes: tuple[str, ...] = ()
    """What the reader recognised or skipped, one sentence each (the layout, the step column, skipped records)."""
    step_column: str | None = None
    """The column the series' steps came from; `None` where every series had its own steps (TensorBoard), or,
    after `merge_seeds`, where the seeds used different columns."""
    run_names: tuple[str, ...] = ()
    """One name per run where the log held several (a folder of runs, an MLflow experiment, a W&B chart
    export: the sub-folder, run or `<run> - ` prefix), empty otherwise."""
