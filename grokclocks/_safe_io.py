"""Reading a file that may be hostile: regular files only, a byte limit, bounded JSON, checked zip archives.

The one safe-reading layer of grokclocks, used by the log readers (`grokclocks.logs`, through its private
`_safe` module), the run-file reader (`grokclocks.runfile`) and the engine-run check of `grokclocks.compare`.
A file is opened without blocking and checked to be a regular file before a byte is read (a FIFO, a device
such as `/dev/zero` or a socket is refused); its size, or for a zip archive the uncompressed size its
directory and `.npy` headers announce, must not exceed `max_bytes` (default `DEFAULT_MAX_BYTES` = 256 MiB)
before anything is decompressed or allocated; a zip member compressed otherwise than stored or deflate
(bzip2, lzma: what numpy and torch never write) is refused before it is decompressed; a `.npy` header
holding Python objects is refused (loading them needs pickle); JSON may nest at most `MAX_JSON_DEPTH`
levels, and an integer too long for Python to parse as an int (4,300 digits by default) is read as an
infinite float, refused where it is used.

Each caller reports a refusal in its own error class with its own advice: a `Reader` holds both (`LogError`
and "raise it with read_log(..., max_bytes=N)" for the logs, `RunFileError` and "load_trajectory(...,
max_bytes=N)" for run files), and its methods are the reading functions.  Every message names the file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import stat
import sys
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from . import _validate as V

DEFAULT_MAX_BYTES = 256 * 2**20
"""The default `max_bytes` of `grokclocks.logs.read_log`, `grokclocks.compare.load_run` and
`grokclocks.runfile.load_trajectory`: 256 MiB = 268,435,456 bytes, the most a log or run file may hold, or a
zip archive (`.npz`, `torch.save`) unpack to, or a TensorBoard directory's event files hold together.  A text
log takes up to about 20 times its size in memory while it is parsed; an archive takes its unpacked size."""

MAX_JSON_DEPTH = 64
"""The deepest JSON nesting read (levels of lists and objects; a log nests 3 or 4, a run file's config 3);
deeper is refused."""

_NPY_MAGIC = b"\x93NUMPY"
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError, ValueError)


def check_max_bytes(max_bytes: Any) -> int:
    """`max_bytes` validated: an integer ≥ 1 (a `DomainError` naming it otherwise)."""
    return V.integer_at_least(max_bytes, "max_bytes", 1)


def mib(n: int) -> str:
    """A byte count in words: "12.5 MiB" from 1 MiB on, "1000 bytes" below."""
    return f"{n / 2**20:.4g} MiB" if n >= 2**20 else f"{n} bytes"


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def kind(mode: int) -> str:
    """What a file of `st_mode` `mode` is, in words ("a FIFO (named pipe)", "a character device", ...)."""
    return next((text for test, text in _KINDS if test(mode)), "not a regular file")


def not_regular(path: Path) -> str | None:
    """What `path` is when it is not a regular file (`"a FIFO (named pipe)"`, ...), `None` for a regular file.

    Symbolic links are followed; a path that cannot be examined is an `OSError` for the caller."""
    mode = os.stat(path).st_mode
    return None if stat.S_ISREG(mode) else kind(mode)


def _parse_int(text: str) -> int | float:
    # int() of more digits than sys.get_int_max_str_digits() (4,300 by default; 0 = no limit) is a ValueError;
    # float(text) is the number for any length (inf beyond the double range, refused as not finite)
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    return int(text) if limit == 0 or len(text.lstrip("-")) <= limit else float(text)


_DECODER = json.JSONDecoder(parse_int=_parse_int)  # one decoder: json.loads(..., parse_int=) builds one a call


def json_depth(obj: Any) -> int:
    """How deeply lists and dicts nest in `obj` (0 for a scalar), without recursion."""
    if isinstance(obj, dict) and not any(isinstance(v, (dict, list)) for v in obj.values()):
        return 1  # a flat record, the common case: no walk
    deepest, stack = 0, [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, dict):
            children = o.values()
        elif isinstance(o, list):
            children = o
        else:
            continue
        deepest = max(deepest, d)
        if d > MAX_JSON_DEPTH:
            return d
        stack.extend((c, d + 1) for c in children if isinstance(c, (dict, list)))
    return deepest


@dataclasses.dataclass(frozen=True)
class Reader:
    """How one caller reports a refusal: its error class and its advice; the methods read a file safely.

    Attributes
    ----------
    error : type
        The exception class raised for every refusal (called with the one-line message).
    limit_hint : str
        What the message of a file over `max_bytes` ends with: how to raise the limit, e.g. "raise it with
        read_log(..., max_bytes=N) ... if the file is what you meant to read".
    stream_hint : str
        What the message of a FIFO or device ends with, e.g. "save the log to a file first".
    content : str
        What the file should hold, in words, for the deep-JSON message ("a log nests 3 or 4: a list of
        records of values").
    """

    error: type[Exception]
    """The exception class raised for every refusal."""
    limit_hint: str
    """How to raise the limit, the end of an over-the-limit message."""
    stream_hint: str = "save it to a file first"
    """The end of the message that refuses a FIFO or a device."""
    content: str = "a log nests 3 or 4: a list of records of values"
    """How deeply the expected JSON nests, in words (the end of the deep-JSON message)."""

    def over(self, name: str, what: str, n: int, max_bytes: int) -> Exception:
        """The error for `n` bytes (`what` says of what) over the limit `max_bytes`, naming `name`."""
        return self.error(f"{name}: {what} {n} bytes ({mib(n)}), over the limit max_bytes = {max_bytes} "
                          f"({mib(max_bytes)}); {self.limit_hint}")

    @contextlib.contextmanager
    def open_regular(self, path: Path, max_bytes: int, *, name: str | None = None) -> Iterator[IO[bytes]]:
        """A binary file object of `path`, refused unless it is a regular file of at most `max_bytes` bytes.

        The file is opened with `O_NONBLOCK` (opening a FIFO does not wait for a writer) and examined with
        `fstat` on the open descriptor, so what is checked is what is read."""
        name = name or path.name
        flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                 | getattr(os, "O_CLOEXEC", 0))
        try:
            fd = os.open(path, flags)
        except OSError as exc:
            raise self.error(f"{name}: cannot be opened ({exc.strerror or exc})") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise self.error(f"{name}: {kind(st.st_mode)}, not a regular file; only files are read (a stream "
                                 f"or device never ends: {self.stream_hint})")
            if st.st_size > max_bytes:
                raise self.over(name, "the file holds", st.st_size, max_bytes)
            f = os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
        with f:
            yield f

    def read_bytes(self, path: Path, max_bytes: int, *, name: str | None = None) -> bytes:
        """The bytes of a regular file of at most `max_bytes` bytes (a file that grows past it while read is
        refused)."""
        name = name or path.name
        with self.open_regular(path, max_bytes, name=name) as f:
            return self.read_open(f, name, max_bytes)

    def read_open(self, f: IO[bytes], name: str, max_bytes: int) -> bytes:
        """The rest of the open regular file `f`, at most `max_bytes` bytes (more is refused)."""
        # read(n) allocates n bytes first: ask for the size fstat gave, then for what a growing file added
        size = os.fstat(f.fileno()).st_size
        parts, total = [], 0
        while True:
            part = f.read(min(max_bytes + 1 - total, max(size + 1 - total, 2**20)))
            if not part:
                break
            parts.append(part)
            total += len(part)
            if total > max_bytes:
                raise self.over(name, "the file holds more than", max_bytes, max_bytes)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def json_loads(self, text: str, name: str, where: str = "") -> Any:
        """`json.loads` with a nesting limit, and integers of more than 4,300 digits (which Python's int refuses
        to parse) read as float; `json.JSONDecodeError` is left to the caller (which knows the line), every
        other failure is an error naming `name` and `where`."""
        deep = f"{name}: {where}JSON nested deeper than {MAX_JSON_DEPTH} levels ({self.content})"
        try:
            try:
                obj = json.loads(text)  # the C parser; parse_int= would call Python for every integer
            except json.JSONDecodeError:
                raise
            except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion"
                obj = _DECODER.decode(text)
        except RecursionError:
            raise self.error(deep) from None
        if text.count("[") + text.count("{") > MAX_JSON_DEPTH and json_depth(obj) > MAX_JSON_DEPTH:
            raise self.error(deep)
        return obj

    # ---------------------------------------------------------------------------------------- archives

    def open_zip(self, f: IO[bytes], name: str) -> zipfile.ZipFile:
        """The zip archive in `f` (its directory read, nothing decompressed); an unreadable one is refused."""
        try:
            return zipfile.ZipFile(f)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise self.error(f"{name}: not a readable zip archive ({V.show(str(exc), 120)})") from None

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
