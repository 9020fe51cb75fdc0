"""`numpy.savez` archives of named arrays."""

from __future__ import annotations

from pathlib import Path

from ._safe import open_regular, read_npz
from ._table import LogError, _mapping_table, _Table


def _read_npz(path: Path, max_bytes: int, named: Path) -> _Table:
    """Every member of the archive as a column or setting, each `.npy` header checked before it is read."""
    with open_regular(path, max_bytes, named=named) as f:
        arrays = read_npz(f, path.name, max_bytes)
    if not arrays:
        raise LogError(f"{path.name}: the archive is empty")
    arrays = {k: (v.item() if v.ndim == 0 else v) for k, v in arrays.items()}
    return _mapping_table(arrays, path.name, "npz")
