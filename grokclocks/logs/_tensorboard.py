"""TensorBoard event files and run directories (scalars; needs the `tensorboard` package)."""

from __future__ import annotations

import os
from pathlib import Path

from ._table import LogError, _Col, _Table


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


