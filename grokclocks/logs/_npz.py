"""`numpy.savez` archives of named arrays."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from ._table import LogError, _mapping_table, _Table


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


