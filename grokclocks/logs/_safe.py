"""Reading a file that may be hostile: regular files only, a byte limit, strict text decoding, bounded JSON.

Every reader of `grokclocks.logs` opens its file here.  A file is opened without blocking and checked to be a
regular file before a byte is read (a FIFO, a device such as `/dev/zero` or a socket is refused); its size, or
for an archive the uncompressed size its directory and array headers announce, must not exceed `max_bytes`
(default `DEFAULT_MAX_BYTES` = 256 MiB) before anything is decompressed or allocated; text must be UTF-8 (a
byte that is not is reported with its offset); JSON may nest at most `MAX_JSON_DEPTH` levels; an integer
beyond the double range (more than 308 digits) is refused where it is read as a number, and one too long for
Python to parse as an int (4,300 digits by default) is read as an infinite float, refused where it is used.
A run directory is searched through at most `MAX_DIR_ENTRIES` entries.  Every refusal is a `LogError` naming
the file.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import stat
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from .. import _validate as V
from ._table import LogError, _short

DEFAULT_MAX_BYTES = 256 * 2**20
"""The default `max_bytes` of `read_log` and `grokclocks.compare.load_run`: 256 MiB = 268,435,456 bytes, the most
a log file may hold, or a zip archive (`.npz`, `torch.save`) unpack to, or a TensorBoard directory's event files
hold together.  A text log takes up to about 20 times its size in memory while it is parsed."""

MAX_JSON_DEPTH = 64
"""The deepest JSON nesting read (levels of lists and objects; a log nests 3 or 4); deeper is a `LogError`."""

MAX_DIR_ENTRIES = 100_000
"""The most directory entries searched for a run directory's log files; more is a `LogError` (pass the file)."""
def check_max_bytes(max_bytes: Any) -> int:
    """`max_bytes` validated: an integer ≥ 1 (a `DomainError` naming it otherwise)."""
    return V.integer_at_least(max_bytes, "max_bytes", 1)


def _mib(n: int) -> str:
    return f"{n / 2**20:.4g} MiB" if n >= 2**20 else f"{n} bytes"


def _over(name: str, what: str, n: int, max_bytes: int) -> LogError:
    return LogError(f"{name}: {what} {n} bytes ({_mib(n)}), over the limit max_bytes = {max_bytes} "
                    f"({_mib(max_bytes)}); raise it with read_log(..., max_bytes=N) or load_run(..., max_bytes=N) "
                    "(CLI: --max-bytes N) if the file is what you meant to read")


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((text for test, text in _KINDS if test(mode)), "not a regular file")


def not_regular(path: Path) -> str | None:
    """What `path` is when it is not a regular file (`"a FIFO (named pipe)"`, ...), None for a regular file.

    Symbolic links are followed; a path that cannot be examined is an `OSError` for the caller."""
    mode = os.stat(path).st_mode
    return None if stat.S_ISREG(mode) else _kind(mode)


@contextlib.contextmanager
def open_regular(path: Path, max_bytes: int, *, name: str | None = None) -> Iterator[IO[bytes]]:
    """A binary file object of `path`, refused unless it is a regular file of at most `max_bytes` bytes.

    The file is opened with `O_NONBLOCK` (opening a FIFO does not wait for a writer) and examined with
    `fstat` on the open descriptor, so what is checked is what is read."""
    name = name or path.name
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise LogError(f"{name}: cannot be opened ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise LogError(f"{name}: {_kind(st.st_mode)}, not a regular file; only files are read (a stream "
                           "or device never ends: save the log to a file first)")
        if st.st_size > max_bytes:
            raise _over(name, "the file holds", st.st_size, max_bytes)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f


def read_bytes(path: Path, max_bytes: int, *, name: str | None = None) -> bytes:
    """The bytes of a regular file of at most `max_bytes` bytes (a file that grows past it while read is refused)."""
    name = name or path.name
    with open_regular(path, max_bytes, name=name) as f:
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
                raise _over(name, "the file holds more than", max_bytes, max_bytes)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 text (a leading byte-order mark dropped); a byte that is not UTF-8 is a `LogError` with its offset.

    Other encodings are refused, not guessed: a Latin-1 or cp1252 file decodes to *some* text under either
    guess, and nothing in the bytes says which was meant."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise LogError(f"{name}: UTF-16 text (it starts with a UTF-16 byte-order mark); save the log as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        off = exc.start
        line = data.count(b"\n", 0, off) + 1
        binary = b"\x00" in data[:4096]
        hint = ("a binary file? give its format with format= (CLI: --format) if it is an archive" if binary else
                "a Latin-1 / cp1252 file? convert it to UTF-8, e.g. iconv -f cp1252 -t utf-8 FILE > FILE.utf8")
        raise LogError(f"{name}: not UTF-8 text: byte 0x{data[off]:02x} at offset {off} (line {line}) "
                       f"cannot be decoded ({hint})") from None


def read_text(path: Path, max_bytes: int, *, name: str | None = None) -> str:
    """`read_bytes` then `decode_text`."""
    name = name or path.name
    return decode_text(read_bytes(path, max_bytes, name=name), name)


@contextlib.contextmanager
def csv_field_limit(max_bytes: int) -> Iterator[None]:
    """The `csv` module's field size limit (131,072 characters by default) raised to `max_bytes` while reading:
    a field can be as long as the file.  The limit is process-wide; it is put back afterwards."""
    old = csv.field_size_limit()
    csv.field_size_limit(max(old, min(max_bytes, 2**31 - 1)))
    try:
        yield
    finally:
        csv.field_size_limit(old)


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


def json_loads(text: str, name: str, where: str = "") -> Any:
    """`json.loads` with a nesting limit, and integers of more than 4,300 digits (which Python's int refuses to
    parse) read as float; `json.JSONDecodeError` is left to the caller (which knows the line), every other
    failure is a `LogError` naming `name` and `where`."""
    deep = (f"{name}: {where}JSON nested deeper than {MAX_JSON_DEPTH} levels (a log nests 3 or 4: a list of "
            "records of values)")
    try:
        try:
            obj = json.loads(text)  # the C parser; parse_int= would call Python for every integer
        except json.JSONDecodeError:
            raise
        except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion"
            obj = _DECODER.decode(text)
    except RecursionError:
        raise LogError(deep) from None
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and json_depth(obj) > MAX_JSON_DEPTH:
        raise LogError(deep)
    return obj


# ============================================================================================ archives

_NPY_MAGIC = b"\x93NUMPY"


def zip_members(f: IO[bytes], name: str, max_bytes: int) -> tuple[zipfile.ZipFile, list[zipfile.ZipInfo]]:
    """The zip archive in `f` and its members, refused when their uncompressed sizes (from the archive's
    directory, before anything is decompressed) add up to more than `max_bytes`, or when a member uses a
    compression other than stored or deflate (what numpy and torch write)."""
    try:
        z = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise LogError(f"{name}: not a readable zip archive ({_short(str(exc), 120)})") from None
    infos = z.infolist()
    total = sum(i.file_size for i in infos)
    if total > max_bytes:
        z.close()
        raise _over(name, "the archive's members unpack to", total, max_bytes)
    for i in infos:
        if i.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            z.close()
            raise LogError(f"{name}: member {_short(i.filename)} is compressed with method {i.compress_type} "
                           "(numpy and torch write stored or deflate members only)")
    return z, infos


def npy_header(f: IO[bytes], name: str, available: int, max_bytes: int) -> tuple[tuple[int, ...], bool, np.dtype]:
    """`(shape, fortran_order, dtype)` of the `.npy` data that follows in `f`, checked before it is read.

    `available` is the number of bytes the file (or zip member) holds in all.  Refused: no `.npy` magic, a
    header numpy cannot parse, Python objects (which would need pickle), and a shape × itemsize beyond
    `max_bytes` or beyond the bytes that follow the header (a truncated file)."""
    magic = f.read(len(_NPY_MAGIC))
    if magic != _NPY_MAGIC:
        raise LogError(f"{name}: not a .npy array (no numpy header)")
    f.seek(0)
    try:
        version = np.lib.format.read_magic(f)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read(f)
    except (ValueError, SyntaxError, EOFError, OSError, TypeError) as exc:
        raise LogError(f"{name}: a damaged .npy header ({_short(str(exc), 120)})") from None
    if dtype.hasobject:
        raise LogError(f"{name}: the .npy holds Python objects (dtype {_short(str(dtype), 80)}), which are not "
                       "loaded (they need pickle, which can run code); save plain numbers and strings")
    nbytes = math.prod(int(s) for s in shape) * dtype.itemsize
    if nbytes > max_bytes:
        raise _over(name, f"the .npy header announces shape {_short(shape, 80)} of {dtype} =", nbytes, max_bytes)
    left = available - f.tell()
    if nbytes > left:
        raise LogError(f"{name}: truncated: the .npy header announces shape {_short(shape, 80)} of {dtype} = "
                       f"{nbytes} bytes, but {max(left, 0)} follow it")
    return shape, fortran, dtype


def read_npy(f: IO[bytes], name: str, available: int, max_bytes: int) -> np.ndarray:
    """The array of a `.npy` stream, its header checked by `npy_header` first."""
    npy_header(f, name, available, max_bytes)
    f.seek(0)
    try:
        return np.lib.format.read_array(f, allow_pickle=False)
    except (ValueError, EOFError, OSError, zipfile.BadZipFile) as exc:
        raise LogError(f"{name}: a damaged .npy ({_short(str(exc), 120)})") from None


# ============================================================================================ directories


def find_files(root: Path, match: Callable[[str], bool], *, name: str | None = None,
               max_entries: int | None = None) -> list[Path]:
    """Every path under the directory `root` whose file name `match`es, in sorted order, searching at most
    `max_entries` directory entries (default `MAX_DIR_ENTRIES`; more is a `LogError`: not a run directory).

    Symbolic links to directories are not followed.  The paths found are not checked to be regular files."""
    name = name or root.name or str(root)
    limit = MAX_DIR_ENTRIES if max_entries is None else max_entries
    seen, found, todo = 0, [], [root]
    while todo:
        d = todo.pop()
        try:
            with os.scandir(d) as it:
                for entry in it:
                    seen += 1
                    if seen > limit:
                        raise LogError(f"{name}: a directory of more than {limit} entries was searched without "
                                       "finding the log's end (a run directory holds a few files); pass the log "
                                       "file itself")
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    if is_dir:
                        todo.append(Path(entry.path))
                    elif match(entry.name):
                        found.append(Path(entry.path))
        except PermissionError:
            continue
        except OSError as exc:
            raise LogError(f"{name}: the directory cannot be listed ({exc.strerror or exc})") from None
    return sorted(found)
