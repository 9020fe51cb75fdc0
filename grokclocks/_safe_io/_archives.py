"""Zip archives and `.npy` arrays: every size checked before anything is decompressed or allocated."""

from __future__ import annotations

import math
import os
import struct
import zipfile
from typing import IO

import numpy as np

from .. import _validate as V
from . import _limits
from ._limits import _NPY_MAGIC, _ZIP_DIRECTORY_BYTES, _ZIP_ERRORS, mib


class _Archives:
    """The methods of `Reader` that read zip archives and `.npy` arrays."""

    # ------------------------------------------------------------------------------------ archives

    def _zip_directory(self, f: IO[bytes], name: str) -> None:
        """Refuse an archive whose end record announces more than `MAX_ZIP_MEMBERS` members or a directory of
        more than `_ZIP_DIRECTORY_BYTES` bytes, before `zipfile` parses the directory (a damaged end record is
        left to `zipfile`, which refuses it)."""
        try:
            size = f.seek(0, os.SEEK_END)
        except (OSError, ValueError):
            return
        start = max(0, size - (22 + 65535))
        f.seek(start)
        tail = f.read(size - start)
        pos = tail.rfind(b"PK\x05\x06")
        if pos < 0 or pos + 22 > len(tail):
            f.seek(0)
            return
        n_members, dir_bytes = struct.unpack("<H", tail[pos + 10: pos + 12])[0], struct.unpack(
            "<I", tail[pos + 12: pos + 16])[0]
        if (n_members == 0xFFFF or dir_bytes == 0xFFFFFFFF) and pos >= 20 and tail[pos - 20: pos - 16] == b"PK\x06\x07":
            at = struct.unpack("<Q", tail[pos - 12: pos - 4])[0]
            f.seek(min(at, size))
            rec = f.read(56)
            if len(rec) == 56 and rec[:4] == b"PK\x06\x06":
                n_members, dir_bytes = struct.unpack("<QQ", rec[32:48])
        f.seek(0)
        if n_members > _limits.MAX_ZIP_MEMBERS:
            raise self.error(f"{name}: a zip archive of {n_members} members, more than {_limits.MAX_ZIP_MEMBERS} (a run "
                             "file or a saved log holds a few dozen); not read")
        if dir_bytes > _ZIP_DIRECTORY_BYTES:
            raise self.error(f"{name}: a zip archive whose directory holds {dir_bytes} bytes ({mib(dir_bytes)}), "
                             f"more than {mib(_ZIP_DIRECTORY_BYTES)} (a run file's holds a few KiB); not read")

    def open_zip(self, f: IO[bytes], name: str, *, damaged: str = "not a readable zip archive") -> zipfile.ZipFile:
        """The zip archive in `f` (its directory read, nothing decompressed); an unreadable one is refused
        ("NAME: DAMAGED (why)"), as is one of more than `MAX_ZIP_MEMBERS` members (counted before its directory
        is parsed)."""
        self._zip_directory(f, name)
        try:
            z = zipfile.ZipFile(f)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, struct.error) as exc:
            raise self.error(f"{name}: {damaged} ({V.show(str(exc), 120)})") from None
        if len(z.infolist()) > _limits.MAX_ZIP_MEMBERS:
            n = len(z.infolist())
            z.close()
            raise self.error(f"{name}: a zip archive of {n} members, more than {_limits.MAX_ZIP_MEMBERS}; not read")
        return z

    def zip_names(self, f: IO[bytes], name: str) -> list[str] | None:
        """The member names of the zip archive in `f`, None when it is not a readable zip (or is refused)."""
        try:
            with self.open_zip(f, name) as z:
                return z.namelist()
        except self.error:
            return None

    def zip_limits(self, z: zipfile.ZipFile, name: str, max_bytes: int) -> list[zipfile.ZipInfo]:
        """The members of the open archive `z`, refused (and `z` closed) when their uncompressed sizes (from
        the archive's directory, before anything is decompressed) add up to more than `max_bytes`, or when a
        member uses a compression other than stored or deflate (what numpy and torch write)."""
        infos = z.infolist()
        total = sum(i.file_size for i in infos)
        if total > max_bytes:
            z.close()
            raise self.over(name, "the archive's members unpack to", total, max_bytes)
        for i in infos:
            if i.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                z.close()
                raise self.error(f"{name}: member {V.show(i.filename)} is compressed with method {i.compress_type} "
                                 "(numpy and torch write stored or deflate members only)")
        return infos

    def zip_members(self, f: IO[bytes], name: str, max_bytes: int) -> tuple[zipfile.ZipFile, list[zipfile.ZipInfo]]:
        """The zip archive in `f` and its members, checked by `zip_limits` before anything is decompressed."""
        z = self.open_zip(f, name)
        return z, self.zip_limits(z, name, max_bytes)

    def npy_header(self, f: IO[bytes], name: str, available: int,
                   max_bytes: int) -> tuple[tuple[int, ...], bool, np.dtype]:
        """`(shape, fortran_order, dtype)` of the `.npy` data that follows in `f`, checked before it is read.

        `available` is the number of bytes the file (or zip member) holds in all.  Refused: no `.npy` magic, a
        header numpy cannot parse, Python objects (which would need pickle), and a shape × itemsize beyond
        `max_bytes` or beyond the bytes that follow the header (a truncated file)."""
        magic = f.read(len(_NPY_MAGIC))
        if magic != _NPY_MAGIC:
            raise self.error(f"{name}: not a .npy array (no numpy header)")
        f.seek(0)
        try:
            version = np.lib.format.read_magic(f)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read(f)
        except (ValueError, SyntaxError, EOFError, OSError, TypeError) as exc:
            raise self.error(f"{name}: a damaged .npy header ({V.show(str(exc), 120)})") from None
        if dtype.hasobject:
            raise self.error(f"{name}: the .npy holds pickled Python objects (dtype {V.show(str(dtype), 80)}), which "
                             "are not loaded (unpickling can run code); save plain numbers and strings")
        nbytes = math.prod(int(s) for s in shape) * dtype.itemsize
        if nbytes > max_bytes:
            raise self.over(name, f"the .npy header announces shape {V.show(shape, 80)} of {dtype} =", nbytes,
                            max_bytes)
        left = available - f.tell()
        if nbytes > left:
            raise self.error(f"{name}: truncated: the .npy header announces shape {V.show(shape, 80)} of {dtype} = "
                             f"{nbytes} bytes, but {max(left, 0)} follow it")
        return shape, fortran, dtype

    def read_npy(self, f: IO[bytes], name: str, available: int, max_bytes: int) -> np.ndarray:
        """The array of a `.npy` stream, its header checked by `npy_header` first."""
        self.npy_header(f, name, available, max_bytes)
        f.seek(0)
        try:
            return np.lib.format.read_array(f, allow_pickle=False)
        except (ValueError, EOFError, OSError, zipfile.BadZipFile) as exc:
            raise self.error(f"{name}: a damaged .npy ({V.show(str(exc), 120)})") from None

    def read_npz(self, f: IO[bytes], name: str, max_bytes: int) -> dict[str, np.ndarray]:
        """Every array of the `numpy.savez` archive in `f`, by key (its member name without `.npy`).

        The directory is checked by `zip_limits`, then the members are read by `npz_arrays`."""
        z, infos = self.zip_members(f, name, max_bytes)
        with z:
            return self.npz_arrays(z, infos, name, max_bytes)

    def npz_arrays(self, z: zipfile.ZipFile, infos: list[zipfile.ZipInfo], name: str,
                   max_bytes: int) -> dict[str, np.ndarray]:
        """The arrays of the members `infos` (as `zip_limits` returned them) of the open archive `z`, by key.

        Each member's `.npy` header is checked by `npy_header` before its data is decompressed or allocated.
        Refused besides: a member that is not a `.npy` array (what `numpy.savez` never writes), a key held
        twice, and a member that cannot be decompressed (damaged, truncated or encrypted data, a CRC that does
        not match)."""
        arrays: dict[str, np.ndarray] = {}
        for info in infos:
            member = info.filename
            where = f"{name}: member {V.show(member)}"
            if not member.endswith(".npy"):
                raise self.error(f"{where} is not a .npy array (numpy.savez writes only .npy members)")
            key = member[: -len(".npy")]
            if key in arrays:
                raise self.error(f"{name}: the archive holds the member {V.show(member)} twice")
            try:
                with z.open(info) as m:
                    arrays[key] = self.read_npy(m, where, info.file_size, max_bytes)
            except self.error:
                raise
            except _ZIP_ERRORS as exc:
                raise self.error(f"{where} cannot be read (damaged, truncated or encrypted: "
                                 f"{V.show(str(exc), 120)})") from None
        return arrays

    def npy_headers(self, z: zipfile.ZipFile, infos: list[zipfile.ZipInfo], name: str, max_bytes: int) -> bool:
        """Check the `.npy` header of each `.npy` member of `z` (as `npy_header`) without reading its data; False
        when a member cannot be decompressed (damaged: the caller's full read says how)."""
        for info in infos:
            if not info.filename.endswith(".npy"):
                continue
            try:
                with z.open(info) as m:
                    self.npy_header(m, f"{name}: member {V.show(info.filename)}", info.file_size, max_bytes)
            except self.error:
                raise
            except _ZIP_ERRORS:
                return False
        return True

