"""`numpy.savez` archives of named arrays."""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

from ._safe import open_regular, read_npy, zip_members
from ._table import LogError, _mapping_table, _short, _Table


def _read_npz(path: Path, max_bytes: int) -> _Table:
    """Every member of the archive as a column or setting, each `.npy` header checked before it is read."""
    arrays = {}
    with open_regular(path, max_bytes) as f:
        z, infos = zip_members(f, path.name, max_bytes)
        with z:
            for info in infos:
                member = info.filename
                if not member.endswith(".npy"):
                    raise LogError(f"{path.name}: member {_short(member)} is not a .npy array (numpy.savez writes "
                                   "only .npy members)")
                key = member[: -len(".npy")]
                if key in arrays:
                    raise LogError(f"{path.name}: the archive holds the member {_short(member)} twice")
                try:
                    with z.open(info) as m:
                        arrays[key] = read_npy(m, f"{path.name}: member {_short(member)}", info.file_size, max_bytes)
                except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError) as exc:
                    raise LogError(f"{path.name}: member {_short(member)} cannot be read (damaged or encrypted: "
                                   f"{_short(str(exc), 120)})") from None
    if not arrays:
        raise LogError(f"{path.name}: the archive is empty")
    arrays = {k: (v.item() if v.ndim == 0 else v) for k, v in arrays.items()}
    return _mapping_table(arrays, path.name, "npz")
