r"""Read a training run from the files it was logged in.

:func:`read_log` takes a path (or an in-memory table) and returns a :class:`RunLog`: the run's series
(``train_acc``, ``test_acc``, ``train_loss``, ``test_loss``, ``weight_norm``) on one step grid, each with
``NaN`` where it was not logged, ready for :func:`grokclocks.compare.run_data`.  Nothing is interpolated:
a series logged every 50 steps keeps its 50-step records, and each clock is read on the records where
its series was logged.

Formats (chosen by content, then extension; ``format=`` forces one):

=====================  ===========================================================================
format                 what is read
=====================  ===========================================================================
``csv``, ``tsv``       a header row and one row per record; empty cells = not logged at that step
                       (PyTorch Lightning's ``CSVLogger`` ``metrics.csv`` is this, with train and
                       validation metrics on separate rows)
``jsonl``              one JSON object per line (a W&B history export: ``_step``, ``train/acc``,
                       ``val/acc``, ...); a missing key or ``null`` = not logged
``json``               a list of records, a dict of lists, or Hugging Face ``trainer_state.json``
                       (its ``log_history``; the closing ``train_runtime`` summary is skipped)
``tensorboard``        an ``events.out.tfevents.*`` file or a run directory (scalars; needs the
                       ``tensorboard`` package: ``pip install "grokclocks[logs]"``)
``torch``              a ``torch.save`` dict of lists or tensors (loaded with ``weights_only=True``;
                       needs torch)
``npz``                ``numpy.savez`` arrays (keys as in :data:`grokclocks.compare.USER_KEYS`)
``npy``                ``numpy.save`` of a structured array with named fields
(object)               a pandas ``DataFrame``, any mapping of arrays or lists, or a list of records
=====================  ===========================================================================

Column names
------------
A column is matched to a series by its words (split at ``/ _ - . :`` and spaces, case ignored):

* **steps**: ``steps``, ``step``, ``global_step``, ``trainer/global_step``, ``train/global_step``, ``_step``,
  ``iteration``, ``iter``, ``epoch`` (the first present in this order: W&B's ``_step`` counts log calls, so
  the training step that Lightning's and Hugging Face's W&B loggers write beside it is preferred;
  ``val_step``, ``train_steps``, ... give the steps of one role, ``<column>_steps`` those of one column);
* **role**: ``train`` / ``training`` (also the default without a role word); ``val``, ``valid``,
  ``validation``, ``eval``, ``evaluation``, ``test``, ``dev``, ``holdout`` -> test;
* **metric**: ``acc``, ``accuracy``, ``top1`` -> accuracy; ``loss``, ``nll``, ``xent`` -> loss;
  ``weight_norm``, ``param_norm``, ``parameter_norm``, ``weights_norm`` -> weight norm;
* the words ``step`` and ``epoch`` inside a metric name (Lightning's ``train_loss_step`` /
  ``train_loss_epoch``, Keras' ``epoch_accuracy``) are ignored; two columns that read as the same series are an error that names both.

So ``val/acc``, ``eval_accuracy``, ``validation/epoch_accuracy`` and ``test_acc`` are all ``test_acc``, and
``loss`` alone is ``train_loss``.  ``columns={"test_acc": "val/accuracy_top1", ...}`` (CLI ``--columns
test_acc=val/accuracy_top1,...``) overrides the matching.  Columns that match nothing are ignored with one
:class:`LogWarning` listing them.

Errors name the file, the column, the first bad row and its step, and show a bad value cut to one line.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
import re
import warnings
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._validate import DomainError

__all__ = ["FORMATS", "SERIES", "STEP_NAMES", "ROLE_WORDS", "METRIC_WORDS", "LogError", "LogWarning", "RunLog",
           "canonical_name", "read_log", "merge_seeds", "parse_columns"]

FORMATS: tuple[str, ...] = ("csv", "tsv", "jsonl", "json", "tensorboard", "torch", "npz", "npy")
SERIES: tuple[str, ...] = ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm")
# W&B's ``_step`` counts wandb.log calls; Lightning's WandbLogger logs the training step beside it as
# ``trainer/global_step`` and the Hugging Face WandbCallback as ``train/global_step`` (each log call, train or
# eval, advances ``_step``), so those two come first when present.
STEP_NAMES: tuple[str, ...] = ("steps", "step", "global_step", "trainer/global_step", "train/global_step", "_step",
                               "iteration", "iter", "epoch", "epochs")
ROLE_WORDS: dict[str, str] = {"train": "train", "training": "train", "val": "test", "valid": "test",
                              "validation": "test", "eval": "test", "evaluation": "test", "test": "test",
                              "dev": "test", "holdout": "test"}
METRIC_WORDS: dict[str, str] = {"acc": "acc", "accuracy": "acc", "top1": "acc", "loss": "loss", "nll": "loss",
                                "xent": "loss"}
_NORM_WORDS = {"weight", "weights", "param", "params", "parameter", "parameters"}
_QUALIFIERS = {"step", "epoch"}
# keys of a run mapping that are not series (see grokclocks.compare.USER_KEYS)
_OTHER_KEYS = ("embeddings", "weights", "gap", "train_mask", "p", "operation", "b_offset", "lam", "n_train",
               "embedding_steps", "weights_steps")
_HF_SUMMARY_KEYS = {"train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos"}


class LogError(DomainError):
    """A log that cannot be read; the message names the file, the column, the row and its step."""


class LogWarning(UserWarning):
    """Something in a log was ignored (unknown columns, a summary record); the message lists it."""


# ============================================================================================ names


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[/_\-.\s:]+", name.strip().lower()) if w]


def canonical_name(column: str) -> str | None:
    """The series a column name reads as (``"val/acc"`` -> ``"test_acc"``), ``"steps"``, or None.

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
    words = [w for w in _words(column) if w not in _QUALIFIERS] or _words(column)
    roles = [ROLE_WORDS[w] for w in words if w in ROLE_WORDS]
    rest = [w for w in words if w not in ROLE_WORDS]
    if len(roles) > 1:
        return None
    role = roles[0] if roles else "train"
    if len(rest) == 1 and rest[0] in METRIC_WORDS:
        return f"{role}_{METRIC_WORDS[rest[0]]}"
    # a weight or parameter word is required: a bare ``global_norm`` / ``total_norm`` / ``l2_norm`` is what
    # optax.global_norm(grads) and torch.nn.utils.clip_grad_norm_ return, a gradient norm
    if not roles and "norm" in rest and set(rest) - {"norm", "l2", "global", "total"} <= _NORM_WORDS \
            and set(rest) & _NORM_WORDS:
        return "weight_norm"
    return None


def _role_steps(column: str) -> str | None:
    """``val_step`` -> ``"test"``: a step column of one role; None otherwise."""
    words = _words(column)
    if len(words) == 2 and words[1] in ("step", "steps") and words[0] in ROLE_WORDS:
        return ROLE_WORDS[words[0]]
    return None


def parse_columns(text: str | None) -> dict[str, str]:
    """``"test_acc=val/accuracy,steps=_step"`` -> ``{"test_acc": "val/accuracy", "steps": "_step"}`` (the CLI's ``--columns``)."""
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


# ============================================================================================ values


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


# ============================================================================================ readers


def _read_delimited(path: Path, delimiter: str | None) -> _Table:
    text = path.read_text(encoding="utf-8-sig")
    if not text.strip():
        raise LogError(f"{path.name}: the file is empty")
    if delimiter is None:
        head = text.splitlines()[0]
        delimiter = "\t" if head.count("\t") > head.count(",") else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    rows = [r for r in reader]
    header = [h.strip() for h in rows[0]]
    data = [r for r in rows[1:] if any(c.strip() for c in r)]
    if not data:
        raise LogError(f"{path.name}: a header ({', '.join(header)}) but no data rows")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise LogError(f"{path.name}: the header repeats the column(s) {dup}")
    line_of = [i + 2 for i, r in enumerate(rows[1:]) if any(c.strip() for c in r)]
    for r, ln in zip(data, line_of):
        if len(r) != len(header):
            raise LogError(f"{path.name}: line {ln} has {len(r)} fields, the header {len(header)} "
                           f"({_short(delimiter.join(r))})")
    labels = [f"line {ln}" for ln in line_of]
    cols = {h: _Col(h, [r[j] for r in data], None, labels) for j, h in enumerate(header)}
    fmt = "tsv" if delimiter == "\t" else "csv"
    tab = _Table(path.name, fmt, cols)
    if (path.parent / "hparams.yaml").exists() or {"epoch", "step"} <= set(header):
        tab.notes.append("PyTorch Lightning CSVLogger layout (train and validation rows merged by step)")
    return tab


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


def _read_jsonl(path: Path) -> _Table:
    records, lines = [], []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise LogError(f"{path.name}: line {n} is not JSON ({exc.msg}): {_short(line)}") from None
            lines.append(n)
    if not records:
        raise LogError(f"{path.name}: the file is empty")
    tab = _records_table(records, path.name, "jsonl", lambda i: f"line {lines[i]}")
    if "_step" in tab.cols:
        tab.notes.append("W&B history layout")
    return tab


def _read_json(path: Path) -> _Table:
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        raise LogError(f"{path.name}: the file is empty")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LogError(f"{path.name}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if isinstance(obj, Mapping) and "log_history" in obj:
        return _hf_table(obj, path.name)
    if isinstance(obj, list):
        return _records_table(obj, path.name, "json", lambda i: f"record {i}")
    if isinstance(obj, Mapping):
        return _mapping_table(obj, path.name, "json", text=True)
    raise LogError(f"{path.name}: a JSON log must be a list of records, a dict of lists or a trainer_state.json "
                   f"(got {type(obj).__name__})")


def _hf_table(state: Mapping[str, Any], source: str) -> _Table:
    hist = state["log_history"]
    if not isinstance(hist, list) or not hist:
        raise LogError(f"{source}: log_history is empty")
    keep = [(i, r) for i, r in enumerate(hist) if not (isinstance(r, Mapping) and _HF_SUMMARY_KEYS & set(r))]
    dropped = len(hist) - len(keep)
    tab = _records_table([r for _, r in keep], source, "hf", lambda j: f"log_history[{keep[j][0]}]")
    tab.notes.append("Hugging Face trainer_state.json (log_history; 'loss' is the training loss averaged over "
                     f"each logging interval of {state.get('logging_steps', '?')} steps)")
    if dropped:
        tab.notes.append(f"skipped {dropped} closing summary record(s) (train_runtime, mean train_loss)")
    return tab


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


def _read_npz(path: Path) -> _Table:
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
    except ValueError as exc:
        raise LogError(f"{path.name}: an .npz member holds Python objects, which are not loaded (save plain "
                       f"numeric arrays and strings): {exc}") from None
    except (OSError, zipfile.BadZipFile) as exc:
        raise LogError(f"{path.name}: not a readable .npz ({exc})") from None
    if not arrays:
        raise LogError(f"{path.name}: the archive is empty")
    arrays = {k: (v.item() if v.ndim == 0 else v) for k, v in arrays.items()}
    return _mapping_table(arrays, path.name, "npz")


def _read_npy(path: Path) -> _Table:
    try:
        a = np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise LogError(f"{path.name}: the .npy holds Python objects (a pickled dict?), which are not loaded; save "
                       f"named arrays with numpy.savez instead ({exc})") from None
    if a.dtype.names is None:
        raise LogError(f"{path.name}: an .npy holds one unnamed array of shape {a.shape}, so nothing says which "
                       "column is which; save a structured array with named fields, or named arrays with numpy.savez")
    return _mapping_table({n: a[n] for n in a.dtype.names}, path.name, "npy")


def _read_torch(path: Path) -> _Table:
    try:
        import torch
    except ImportError:
        raise LogError(f"{path.name}: reading a torch.save file needs torch (pip install torch)") from None
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many types; the message is what matters
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LogError(f"{path.name}: torch.load(weights_only=True) refused the file: {_short(first, 200)}") from None
    if not isinstance(obj, Mapping):
        raise LogError(f"{path.name}: a torch.save log must be a dict of lists or tensors (got {type(obj).__name__})")
    if not obj:
        raise LogError(f"{path.name}: the dict is empty")
    return _mapping_table(obj, path.name, "torch")


def _tb_event_dirs(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted({f.parent for f in path.rglob("events.out.tfevents.*")})


def _read_tensorboard(path: Path) -> _Table:
    try:
        from tensorboard.backend.event_processing import event_accumulator as ea
    except ImportError:
        raise LogError(f"{path.name}: reading TensorBoard event files needs the tensorboard package: "
                       "pip install \"grokclocks[logs]\"") from None
    where = _tb_event_dirs(path)
    if not where:
        raise LogError(f"{path.name}: no events.out.tfevents.* file in the directory")
    cols: dict[str, _Col] = {}
    base = path if path.is_dir() else path.parent
    for d in where:
        acc = ea.EventAccumulator(str(d), size_guidance={ea.SCALARS: 0, ea.TENSORS: 0})
        acc.Reload()
        prefix = "" if d == base or d.is_file() else str(d.relative_to(base)).replace(os.sep, "/") + "/"
        tags = acc.Tags()
        for tag in tags.get("scalars", []):
            ev = acc.Scalars(tag)
            cols[prefix + tag] = _Col(prefix + tag, [e.value for e in ev], [e.step for e in ev],
                                      [f"event {i}" for i in range(len(ev))])
        for tag in tags.get("tensors", []):  # TF2 tf.summary.scalar writes tensors
            ev = acc.Tensors(tag)
            vals = []
            for e in ev:
                arr = ea.tensor_util.make_ndarray(e.tensor_proto)
                vals.append(arr.item() if arr.size == 1 else f"tensor of shape {arr.shape}")
            cols[prefix + tag] = _Col(prefix + tag, vals, [e.step for e in ev], [f"event {i}" for i in range(len(ev))])
    if not cols:
        raise LogError(f"{path.name}: the event file(s) hold no scalars")
    return _Table(path.name, "tensorboard", cols, text=False)


def _one_in_dir(path: Path, name: str) -> Path | None:
    """The one file called ``name`` under the directory ``path``, None if there is none; several are an error."""
    found = sorted(path.rglob(name))
    if len(found) > 1:
        raise LogError(f"{path.name}: the directory holds several {name} files "
                       f"({', '.join(str(f.relative_to(path)) for f in found[:4])}); pass one of them")
    return found[0] if found else None


def _sniff(path: Path) -> str:
    """The format of a file or directory, from its content first and its name second."""
    if path.is_dir():
        if any(path.rglob("events.out.tfevents.*")):
            return "tensorboard"
        for name, fmt in (("trainer_state.json", "json"), ("metrics.csv", "csv")):
            if _one_in_dir(path, name) is not None:
                return fmt
        raise LogError(f"{path.name}: a directory without a TensorBoard event file, trainer_state.json or metrics.csv")
    name = path.name.lower()
    if name.startswith("events.out.tfevents"):
        return "tensorboard"
    with open(path, "rb") as f:
        head = f.read(512)
    if head.startswith(b"PK"):
        try:
            with zipfile.ZipFile(path) as z:
                members = z.namelist()
        except zipfile.BadZipFile:
            members = []
        if any(m.endswith("data.pkl") for m in members):
            return "torch"
        return "npz"
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if name.endswith((".pkl", ".pickle")):
        raise LogError(f"{path.name}: pickle files are not read (loading one can run code); save the log as CSV, "
                       "JSON lines, numpy.savez or torch.save")
    if name.endswith((".pt", ".pth", ".ckpt")) or head[:1] == b"\x80":
        return "torch"
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff").lstrip()
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if name.endswith(".json"):
        return "json"
    if text.startswith("{"):
        first = text.splitlines()[0].strip()
        return "jsonl" if first.endswith("}") and len(text.splitlines()) > 1 else "json"
    if text.startswith("["):
        return "json"
    if name.endswith(".tsv"):
        return "tsv"
    return "csv"


def _read_table(source: Any, fmt: str | None) -> _Table:
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise LogError(f"{str(source)!r}: no such file or directory")
        if path.is_file() and path.stat().st_size == 0:
            raise LogError(f"{path.name}: the file is empty")
        if fmt is None:
            fmt = _sniff(path)
        if fmt not in FORMATS:
            raise DomainError(f"format must be one of {', '.join(FORMATS)} (got {fmt!r})")
        if path.is_dir() and fmt != "tensorboard":
            target = "trainer_state.json" if fmt == "json" else "metrics.csv"
            found = _one_in_dir(path, target)
            if found is None:
                raise LogError(f"{path.name}: a directory without a {target} (format={fmt!r} reads one file; pass it)")
            path = found
        readers: dict[str, Callable[[Path], _Table]] = {
            "csv": lambda p: _read_delimited(p, None), "tsv": lambda p: _read_delimited(p, "\t"),
            "jsonl": _read_jsonl, "json": _read_json, "tensorboard": _read_tensorboard, "torch": _read_torch,
            "npz": _read_npz, "npy": _read_npy}
        return readers[fmt](path)
    if hasattr(source, "to_dict") and hasattr(source, "columns"):  # a pandas DataFrame
        df = source
        index_name = getattr(df.index, "name", None)
        if index_name is not None and index_name not in df.columns:
            df = df.reset_index()
        names = [str(c) for c in df.columns]
        dup = sorted({c for c in names if names.count(c) > 1})
        if dup:  # df[c] would be a 2-D block, read as several runs
            raise LogError(f"DataFrame: the columns repeat the name(s) {dup}")
        labels = [f"row {i} (index {_short(ix, 20)})" for i, ix in enumerate(source.index)]
        cols = {str(c): _Col(str(c), df[c].to_numpy(), None, labels) for c in df.columns}
        return _Table("DataFrame", "dataframe", cols, text=False)
    if isinstance(source, Mapping):
        return _mapping_table(source, "mapping", "mapping")
    if isinstance(source, (list, tuple)) and source and all(isinstance(r, Mapping) for r in source):
        return _records_table(source, "records", "records", lambda i: f"record {i}")
    raise DomainError(f"a log must be a path, a pandas DataFrame, a mapping or a list of records "
                      f"(got {type(source).__name__})")


# ============================================================================================ columns -> series


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


def _resolve(tab: _Table, columns: Mapping[str, str]) -> tuple[dict[str, str], str | None, dict[str, str], list[str]]:
    """(series -> column, step column, role -> role-step column, ignored columns)."""
    names = list(tab.cols)
    for key, col in columns.items():
        if col not in tab.cols:
            raise LogError(f"{tab.source}: columns maps {key} to {col!r}, which is not a column "
                           f"(columns: {_short(names, 200)})")
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
    claims: dict[str, list[str]] = {}
    for n in names:
        if n in used or n == step_col or n in role_steps.values() or n.endswith("_steps") and \
                n[: -len("_steps")] in per_col_steps:
            continue
        c = canonical_name(n)
        if c is None or c == "steps" or c in chosen:
            continue
        claims.setdefault(c, []).append(n)
    for c, cols in claims.items():
        if len(cols) > 1:
            raise LogError(f"{tab.source}: columns {cols} all read as {c}; choose one with columns={{{c!r}: "
                           f"{cols[0]!r}}} (CLI: --columns {c}={cols[0]})")
        chosen[c] = cols[0]
    accounted = set(chosen.values()) | {step_col} | set(role_steps.values()) | {
        f"{s}_steps" for s in per_col_steps}
    ignored = [n for n in names if n not in accounted and canonical_name(n) != "steps"]
    return chosen, step_col, role_steps, ignored


def _series_steps(tab: _Table, col: _Col, series: str, step_col: str | None,
                  role_steps: Mapping[str, str]) -> tuple[Any, str]:
    """The raw step values of a column and the name of where they came from."""
    if col.steps is not None:
        return col.steps, "its own steps"
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


def _wide_steps(tab: _Table, col: _Col, raw: Any, where: str) -> np.ndarray:
    """Validated steps of a 2-D column (n_runs, n_records): 1-D, finite, strictly increasing, one per record."""
    try:
        t = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise LogError(f"{tab.source}: the steps {where!r} of column {col.name!r} are not numbers "
                       f"({_short(raw)})") from None
    if t.ndim != 1 or t.size != _n_records(col):
        raise LogError(f"{tab.source}: the steps {where!r} of column {col.name!r} must be 1-D with one step per "
                       f"record ({_n_records(col)}) (got shape {t.shape})")
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise LogError(f"{tab.source}: {where!r} entry {bad[0]} is {t[bad[0]]} (steps must be finite)")
    back = np.flatnonzero(np.diff(t) <= 0)
    if back.size:
        i = int(back[0]) + 1
        what = "repeats" if t[i] == t[i - 1] else "goes back from"
        raise LogError(f"{tab.source}: {where!r} entry {i}: step {t[i]:g} {what} step {t[i - 1]:g} of entry {i - 1} "
                       "(steps must increase: a resumed or concatenated run? keep one segment)")
    return t


def _one_series(tab: _Table, col: _Col, series: str, steps_raw: Any, step_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Validated (steps, values) of one 1-D column: rows where it was logged, in order."""
    vals = col.values
    n = len(vals)
    if len(steps_raw) != n:
        raise LogError(f"{tab.source}: column {col.name!r} has {n} entries, its steps {step_name!r} {len(steps_raw)}")
    t_out, v_out = [], []
    prev_t, prev_i = None, None
    for i in range(n):
        x = vals[i]
        if _missing(x):
            continue
        s = steps_raw[i]
        step_col = _Col(step_name, steps_raw, None, col.rows)
        if _missing(s) or (isinstance(s, float) and math.isnan(s)):
            raise LogError(f"{tab.source}: column {col.name!r} {tab.row(col, i)} has a value but no step "
                           f"({step_name!r} is empty there)")
        t = _number(tab, step_col, i, None, "step")
        v = _number(tab, col, i, t, "number")
        if math.isnan(v):
            if tab.text:
                raise LogError(f"{tab.source}: column {col.name!r} {tab.row(col, i)}{_at(t)} is NaN (did the run "
                               "diverge? leave the cell empty where nothing was logged)")
            continue  # arrays have no empty cell: NaN marks a record where the series was not logged
        if not math.isfinite(t):
            raise LogError(f"{tab.source}: {step_name!r} {tab.row(col, i)} is {t} (steps must be finite)")
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


def read_log(source: Any, *, columns: Mapping[str, str] | None = None, format: str | None = None) -> RunLog:  # noqa: A002
    """Read a run from a log file, a run directory or an in-memory table.

    Parameters
    ----------
    source : path, pandas DataFrame, mapping or list of records
        See the module docstring for the formats.
    columns : mapping, optional
        ``{"test_acc": "val/accuracy", "steps": "_step", ...}``: which column holds a series (overrides the
        name matching).
    format : str, optional
        One of :data:`FORMATS` (default: from the content and the extension).

    Returns
    -------
    RunLog

    Raises
    ------
    LogError
        A file that cannot be read, a value that is not a number, a step that does not increase, an
        accuracy outside [0, 1], ...: the message names the file, the column, the row and its step.
    DomainError
        Invalid ``columns`` or ``format``.

    Warns
    -----
    LogWarning
        Columns that match no series (listed once) and skipped records.
    """
    cols_map = _check_columns(columns)
    if format is not None and (not isinstance(format, str) or format not in FORMATS):
        raise DomainError(f"format must be None or one of {', '.join(FORMATS)} (got {_short(format)})")
    tab = _read_table(source, format)
    chosen, step_col, role_steps, ignored = _resolve(tab, cols_map)
    if not chosen:
        raise LogError(f"{tab.source}: no column reads as a series ({', '.join(SERIES)}); columns: "
                       f"{_short(list(tab.cols), 200)}. Map them with columns= (CLI: --columns "
                       "test_acc=COLUMN,...)")
    per: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    wide: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    step_from: dict[str, str] = {}
    for series, name in chosen.items():
        col = tab.cols[name]
        raw, where = _series_steps(tab, col, series, step_col, role_steps)
        step_from[series] = where
        if isinstance(col.values, np.ndarray) and col.values.ndim == 2:
            try:
                vals = np.asarray(col.values, dtype=np.float64)
            except (TypeError, ValueError):
                raise LogError(f"{tab.source}: column {name!r} ({series}) is not an array of numbers "
                               f"(dtype {col.values.dtype})") from None
            wide[series] = (_wide_steps(tab, col, raw, where), vals)
            continue
        t, v = _one_series(tab, col, series, raw, where)
        if t.size == 0:
            raise LogError(f"{tab.source}: column {name!r} ({series}) holds no value")
        per[series] = (t, v)
    notes = list(tab.notes)
    if step_col in step_from.values():  # not when every series has its own steps (TensorBoard's 'epoch' tag)
        others = [n for n in tab.cols if n != step_col and canonical_name(n) == "steps"]
        notes.append(f"steps from {step_col!r}" + (f" (also present: {', '.join(map(repr, others))})" if others else ""))
    notes += [f"{series} steps from {where!r}" for series, where in step_from.items()
              if where not in (step_col, "its own steps")]
    arrays: dict[str, Any] = {}
    if wide:
        if per:
            raise LogError(f"{tab.source}: mixes 2-D series (several runs: {sorted(wide)}) with 1-D ones ({sorted(per)})")
        # each 2-D series on its own steps (a <column>_steps or val_step array), placed on their union, NaN between
        grid = np.unique(np.concatenate([t for t, _ in wide.values()]))
        arrays["steps"] = grid
        for series, (t, v) in wide.items():
            full = np.full(v.shape[:1] + grid.shape, np.nan)
            full[:, np.searchsorted(grid, t)] = v
            arrays[series] = full
    else:
        grid = np.unique(np.concatenate([t for t, _ in per.values()]))
        arrays["steps"] = grid
        for series, (t, v) in per.items():
            full = np.full(grid.size, np.nan)
            full[np.searchsorted(grid, t)] = v
            arrays[series] = full
    for k, v in tab.other.items():
        if k in _OTHER_KEYS:
            arrays[k] = v
        else:
            ignored.append(k)
    for k, k_steps in (("embeddings", "embedding_steps"), ("weights", "weights_steps")):
        # snapshots without their own steps are at the log's step array (USER_KEYS); when the series' union
        # grid differs from it (records where no series was logged are dropped), say so, or run_data would
        # put the snapshots on the grid's first records
        if k in arrays and k_steps not in arrays and step_col is not None:
            t_file = tab.cols[step_col].values
            if np.shape(t_file) != arrays["steps"].shape or np.any(np.asarray(t_file) != arrays["steps"]):
                n_snap = np.shape(arrays[k])[-3] if k == "embeddings" and np.ndim(arrays[k]) >= 3 else None
                if n_snap is not None and n_snap != np.size(t_file):
                    raise LogError(f"{tab.source}: {k} holds {n_snap} snapshots but {step_col!r} {np.size(t_file)} "
                                   f"steps, and the series were logged at {arrays['steps'].size} of them; give the "
                                   f"snapshots' steps as {k_steps}")
                arrays[k_steps] = t_file
                notes.append(f"{k} on the steps of {step_col!r} ({np.size(t_file)} records; the series' "
                             f"union grid has {arrays['steps'].size})")
    if ignored:
        warnings.warn(f"{tab.source}: ignored columns that match no series: {_short(ignored, 300)} (map one with "
                      "columns={'test_acc': ...}, CLI --columns)", LogWarning, stacklevel=2)
    return RunLog(tab.source, tab.fmt, arrays, {s: chosen[s] for s in chosen}, tuple(ignored), tuple(notes),
                  step_col if step_col in step_from.values() else None)


def merge_seeds(logs: Sequence[RunLog]) -> RunLog:
    """Several logs of the same configuration as one run with seeds on the leading axis.

    The step grid is the union of the logs' grids; a seed's series is ``NaN`` at the steps it did not log.
    Every log must hold the same series; seeds whose steps come from an ``epoch`` column in one and a ``step``
    column in another are merged with a :class:`LogWarning` and a note (one unit only for full-batch
    training); settings (``p``, ``operation``, ...) must agree; training masks
    are stacked; snapshots (``embeddings``, ``weights``) must have the same shape.
    """
    if not isinstance(logs, (list, tuple)) or not all(isinstance(lg, RunLog) for lg in logs):
        raise DomainError(f"logs must be a list of RunLog (from read_log) (got {_short(logs)})")
    if not logs:
        raise DomainError("logs must hold at least one RunLog (got an empty list)")
    if len(logs) == 1:
        return logs[0]
    keys = [tuple(sorted(k for k in lg.arrays if k in SERIES)) for lg in logs]
    if len(set(keys)) > 1:
        detail = "; ".join(f"{lg.source}: {', '.join(k)}" for lg, k in zip(logs, keys))
        raise LogError(f"the logs hold different series ({detail}); every seed needs the same ones")
    cols = [lg.step_column for lg in logs]
    unit_note = None
    if len({"epoch" in c.lower() for c in cols if c is not None}) > 1:  # epochs in one seed, steps in another
        detail = "; ".join(f"{lg.source}: {c!r}" for lg, c in zip(logs, cols) if c is not None)
        # the same unit in a full-batch run (an epoch is a step); not with minibatches: said, not refused
        unit_note = (f"seeds count steps in different columns ({detail}); merged as one unit, which holds for "
                     "full-batch training only")
        warnings.warn(unit_note, LogWarning, stacklevel=2)
    grid = np.unique(np.concatenate([np.asarray(lg.arrays["steps"], dtype=float) for lg in logs]))
    arrays: dict[str, Any] = {"steps": grid}
    for s in keys[0]:
        rows = []
        for lg in logs:
            a = np.asarray(lg.arrays[s], dtype=float)
            a = a[None] if a.ndim == 1 else a
            full = np.full((a.shape[0], grid.size), np.nan)
            full[:, np.searchsorted(grid, np.asarray(lg.arrays["steps"], dtype=float))] = a
            rows.append(full)
        arrays[s] = np.concatenate(rows)
    for k in _OTHER_KEYS:
        vals = [lg.arrays.get(k) for lg in logs]
        given = [v for v in vals if v is not None]
        if not given:
            continue
        if len(given) != len(logs):
            raise LogError(f"{k} is given in some logs and not in others")
        if k == "train_mask":
            arrays[k] = [np.asarray(v) for v in vals]
        elif k in ("embeddings", "weights", "gap", "n_train"):
            shapes = [np.shape(v) for v in vals]
            if len(set(shapes)) > 1:
                detail = "; ".join(f"{lg.source}: {sh}" for lg, sh in zip(logs, shapes))
                raise LogError(f"the logs hold {k} of different shapes ({detail}); every seed needs the same")
            arrays[k] = np.stack([np.asarray(v) for v in vals])
        else:
            if any(np.asarray(v).tolist() != np.asarray(given[0]).tolist() for v in given):
                raise LogError(f"the logs disagree on {k}: {[_short(v, 20) for v in given]}")
            arrays[k] = given[0]
    src = ", ".join(lg.source for lg in logs)
    notes = tuple(dict.fromkeys([n for lg in logs for n in lg.notes] + ([unit_note] if unit_note else [])))
    ignored = tuple(dict.fromkeys(n for lg in logs for n in lg.ignored))
    return RunLog(f"{len(logs)} seeds ({_short(src, 120)})", logs[0].format, arrays, dict(logs[0].columns), ignored,
                  notes, cols[0] if len(set(cols)) == 1 else None)
