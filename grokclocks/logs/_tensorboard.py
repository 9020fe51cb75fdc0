"""TensorBoard event files and run directories (scalars; needs the `tensorboard` package)."""

from __future__ import annotations

import math
import os
from pathlib import Path

from ._safe import _over, find_files, not_regular
from ._table import LogError, _Col, _short, _Table


def _tb_event_dirs(path: Path, max_bytes: int) -> list[Path]:
    """The event file itself, or every directory under `path` holding an `events.out.tfevents.*` file.

    Every file TensorBoard would read there (a name holding `tfevents`) must be a regular file, and together
    they may hold at most `max_bytes` bytes."""
    files = [path] if not path.is_dir() else find_files(path, lambda n: "tfevents" in n)
    total = 0
    for f in files:
        kind = not_regular(f)
        if kind is not None:
            raise LogError(f"{path.name}: {_short(str(f.relative_to(path)) if f != path else f.name)} is {kind}, "
                           "not a regular file; only files are read")
        total += f.stat().st_size
    if total > max_bytes:
        raise _over(path.name, f"the event files ({len(files)}) hold", total, max_bytes)
    if not path.is_dir():
        return [path]
    return sorted({f.parent for f in files if f.name.startswith("events.out.tfevents.")})


def _scalar_of(make_ndarray, proto) -> float | str:
    """The value of a one-element tensor, or a description of a bigger one (never materialised: its shape
    alone can ask for any amount of memory)."""
    shape = tuple(int(d.size) for d in proto.tensor_shape.dim)
    if math.prod(shape) != 1:
        return f"tensor of shape {_short(shape, 40)}"
    return make_ndarray(proto).item()


def _read_tensorboard(path: Path, max_bytes: int) -> _Table:
    """The scalars (and one-element tensors) of every event file, a sub-directory's tags prefixed by its path."""
    where = _tb_event_dirs(path, max_bytes)
    if not where:
        raise LogError(f"{path.name}: no events.out.tfevents.* file in the directory")
    try:
        from tensorboard.backend.event_processing import event_accumulator as ea
        from tensorboard.util.tensor_util import make_ndarray
    except ImportError:
        raise LogError(f"{path.name}: reading TensorBoard event files needs the tensorboard package: "
                       "pip install \"grokclocks[logs]\"") from None
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
            vals = [_scalar_of(make_ndarray, e.tensor_proto) for e in ev]
            cols[prefix + tag] = _Col(prefix + tag, vals, [e.step for e in ev], [f"event {i}" for i in range(len(ev))])
    if not cols:
        raise LogError(f"{path.name}: the event file(s) hold no scalars")
    return _Table(path.name, "tensorboard", cols, text=False)
