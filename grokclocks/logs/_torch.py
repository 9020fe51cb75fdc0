"""`torch.save` dicts of lists or tensors (loaded with `weights_only=True`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ._safe import open_regular, zip_members
from ._table import LogError, _mapping_table, _short, _Table


def _read_torch(path: Path, max_bytes: int, named: Path) -> _Table:
    """A dict of lists or tensors; a zip-format file's members must unpack to at most `max_bytes` in all."""
    with open_regular(path, max_bytes, named=named) as f:
        if f.read(4) == b"PK\x03\x04":  # the zip format of torch >= 1.6: sizes from the directory first
            f.seek(0)
            zip_members(f, path.name, max_bytes)[0].close()
        f.seek(0)
        try:
            import torch
        except ImportError:
            raise LogError(f"{path.name}: reading a torch.save file needs torch (pip install torch)") from None
        try:
            obj = torch.load(f, map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 - torch raises many types; the message is what matters
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise LogError(f"{path.name}: torch.load(weights_only=True) refused the file: "
                           f"{_short(first, 200)}") from None
    if not isinstance(obj, Mapping):
        raise LogError(f"{path.name}: a torch.save log must be a dict of lists or tensors (got {type(obj).__name__})")
    if not obj:
        raise LogError(f"{path.name}: the dict is empty")
    return _mapping_table(obj, path.name, "torch")
