"""`numpy.save` files of a structured array with named fields."""

from __future__ import annotations

import os
from pathlib import Path

from ._safe import open_regular, read_npy
from ._table import LogError, _mapping_table, _Table


def _read_npy(path: Path, max_bytes: int, named: Path) -> _Table:
    """The fields of a structured array as columns; its header is checked before the data is read."""
    with open_regular(path, max_bytes, named=named) as f:
        a = read_npy(f, path.name, os.fstat(f.fileno()).st_size, max_bytes)
    if a.dtype.names is None:
        raise LogError(f"{path.name}: an .npy holds one unnamed array of shape {a.shape}, so nothing says which "
                       "column is which; save a structured array with named fields, or named arrays with numpy.savez")
    return _mapping_table({n: a[n] for n in a.dtype.names}, path.name, "npy")
