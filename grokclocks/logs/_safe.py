"""Reading a log that may be hostile: the shared safe-reading layer bound to `LogError`, strict text decoding,
a bounded directory search.

Every reader of `grokclocks.logs` opens its file here.  The checks themselves live in `grokclocks._safe_io`
(shared with the run-file reader): a file is opened without blocking and checked to be a regular file before a
byte is read (a FIFO, a device such as `/dev/zero` or a socket is refused); its size, or for an archive the
uncompressed size its directory and array headers announce, must not exceed `max_bytes` (default
`DEFAULT_MAX_BYTES` = 256 MiB) before anything is decompressed or allocated; JSON may nest at most
`MAX_JSON_DEPTH` levels; an integer beyond the double range (more than 308 digits) is refused where it is read
as a number, and one too long for Python to parse as an int (4,300 digits by default) is read as an infinite
float, refused where it is used.  Here: text must be UTF-8 (a byte that is not is reported with its offset),
and a run directory is searched through at most `MAX_DIR_ENTRIES` entries.  Every refusal is a `LogError`
naming the file.
"""

from __future__ import annotations

import contextlib
import csv
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from .. import _safe_io
from .._safe_io import (
    DEFAULT_MAX_BYTES,
    MAX_JSON_DEPTH,
    check_max_bytes,
    json_depth,
    not_regular,
)
from ._table import LogError

# the names the readers and grokclocks.compare import from here (those of the shared layer raise LogError)
__all__ = ["DEFAULT_MAX_BYTES", "MAX_DIR_ENTRIES", "MAX_JSON_DEPTH", "check_max_bytes", "csv_field_limit",
           "decode_text", "find_files", "json_depth", "json_loads", "not_regular", "npy_header", "open_regular",
           "read_bytes", "read_npy", "read_npz", "read_text", "zip_limits", "zip_members"]

MAX_DIR_ENTRIES = 100_000
"""The most directory entries searched for a run directory's log files; more is a `LogError` (pass the file)."""

_READER = _safe_io.Reader(
    LogError,
    limit_hint="raise it with read_log(..., max_bytes=N) or load_run(..., max_bytes=N) (CLI: --max-bytes N) if the "
               "file is what you meant to read",
    stream_hint="save the log to a file first",
    content="a log nests 3 or 4: a list of records of values")

_over = _READER.over
open_regular = _READER.open_regular
read_bytes = _READER.read_bytes
json_loads = _READER.json_loads
zip_members = _READER.zip_members
zip_limits = _READER.zip_limits
npy_header = _READER.npy_header
read_npy = _READER.read_npy
read_npz = _READER.read_npz


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
