"""`numpy.save` files of a structured array with named fields."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._table import LogError, _mapping_table, _Table


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


