"""TensorBoard event files and run directories (scalars; needs the `tensorboard` package).

TensorBoard's `EventAccumulator` reads by path; it is given a copy of the event files made through the door
(`grokclocks._safe_io`'s `snapshot`: regular files only, no link followed, at most `max_bytes` bytes in all),
so that what it reads is what the door checked."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

from ._safe import copy_file, snapshot
from ._table import LogError, _Col, _short, _Table


def _is_events(name: str) -> bool:
    return "tfevents" in name


def _copy_events(path: Path, tmp: Path, max_bytes: int, named: Path) -> list[Path]:
    """Copy the event file `path`, or every file under the directory `path` whose name holds `tfevents`, into
    `tmp` (through the door); the copied directories holding an `events.out.tfevents.*` file."""
    if not path.is_dir():
        dst = tmp / "run"
        dst.mkdir()
        copy_file(path, dst / path.name, named=named, max_bytes=max_bytes)
        return [dst]
    copied = snapshot(path, tmp / "run", named=named, max_bytes=max_bytes, name=path.name or str(path),
                      files=_is_events)
    return sorted({(tmp / "run").joinpath(*rel[:-1]) for rel in copied if rel[-1].startswith("events.out.tfevents.")})


def _scalar_of(make_ndarray, proto) -> float | str:
    """The value of a one-element tensor, or a description of a bigger one (never materialised: its shape
    alone can ask for any amount of memory)."""
    shape = tuple(int(d.size) for d in proto.tensor_shape.dim)
    if math.prod(shape) != 1:
        return f"tensor of shape {_short(shape, 40)}"
    return make_ndarray(proto).item()


def _read_tensorboard(path: Path, max_bytes: int, named: Path) -> _Table:
    """The scalars (and one-element tensors) of every event file, a sub-directory's tags prefixed by its path."""
    try:
        from tensorboard.backend.event_processing import event_accumulator as ea
        from tensorboard.util.tensor_util import make_ndarray
    except ImportError:
        ea = make_ndarray = None
    with tempfile.TemporaryDirectory(prefix="grokclocks-tb-") as tmp:
        where = _copy_events(path, Path(tmp), max_bytes, named)
        if not where:
            raise LogError(f"{path.name}: no events.out.tfevents.* file in the directory")
        if ea is None:
            raise LogError(f"{path.name}: reading TensorBoard event files needs the tensorboard package: "
                           "pip install \"grokclocks[logs]\"")
        cols: dict[str, _Col] = {}
        base = Path(tmp) / "run"
        for d in where:
            acc = ea.EventAccumulator(str(d), size_guidance={ea.SCALARS: 0, ea.TENSORS: 0})
            acc.Reload()
            prefix = "" if d == base else str(d.relative_to(base)).replace(os.sep, "/") + "/"
            tags = acc.Tags()
            for tag in tags.get("scalars", []):
                ev = acc.Scalars(tag)
                cols[prefix + tag] = _Col(prefix + tag, [e.value for e in ev], [e.step for e in ev],
                                          [f"event {i}" for i in range(len(ev))])
            for tag in tags.get("tensors", []):  # TF2 tf.summary.scalar writes tensors
                ev = acc.Tensors(tag)
                vals = [_scalar_of(make_ndarray, e.tensor_proto) for e in ev]
                cols[prefix + tag] = _Col(prefix + tag, vals, [e.step for e in ev],
                                          [f"event {i}" for i in range(len(ev))])
    if not cols:
        raise LogError(f"{path.name}: the event file(s) hold no scalars")
    return _Table(path.name, "tensorboard", cols, text=False)
