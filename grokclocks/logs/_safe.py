"""The door in (`grokclocks._safe_io`) bound to `LogError` and the log readers' advice.

Every reader of `grokclocks.logs` opens, lists and decodes its files here; the rules themselves (regular files
only, no link followed below the path the user named, `max_bytes`, UTF-8, bounded JSON, bounded folder walks,
zip archives checked before anything is decompressed, SQLite read from bytes) are `grokclocks._safe_io`'s.
Every refusal is a `LogError` naming the file.

`named` is the path the user gave (`read_log`'s `source`, one of `read_logs`' `sources`): a link is followed
only when the path read is that path.  The functions whose `named` may be left out (`open_regular`,
`read_text`, `read_npy`) treat the path itself as named: they serve a file the user names directly (the CLI's
`--train-mask`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from .. import _safe_io
from .._safe_io import (
    DEFAULT_MAX_BYTES,
    MAX_DIR_ENTRIES,
    MAX_JSON_DEPTH,
    SQLITE_MAGIC,
    check_max_bytes,
    csv_field_limit,
    excerpt,
    json_depth,
)
from ._table import LogError

# the names the readers and grokclocks.runs import from here (those of the shared layer raise LogError)
__all__ = ["DEFAULT_MAX_BYTES", "MAX_DIR_ENTRIES", "MAX_JSON_DEPTH", "SQLITE_MAGIC", "check_max_bytes",
           "copy_file", "csv_field_limit", "decode_text", "excerpt", "json_depth", "json_loads", "npy_header", "open_regular",
           "open_sqlite", "read_bytes", "read_json", "read_npy", "read_npz", "read_text", "snapshot",
           "sqlite_tables", "subdirs", "walk", "zip_limits", "zip_members", "zip_names"]

READER = _safe_io.Reader(
    LogError,
    limit_hint="raise it with read_log(..., max_bytes=N) or load_run(..., max_bytes=N) (CLI: --max-bytes N) if the "
               "file is what you meant to read",
    stream_hint="save the log to a file first",
    content="a log nests 3 or 4: a list of records of values")
"""The door bound to `LogError`."""

_over = READER.over
read_bytes = READER.read_bytes
read_json = READER.read_json
json_loads = READER.json_loads
decode_text = READER.decode
walk = READER.walk
subdirs = READER.subdirs
snapshot = READER.snapshot
copy_file = READER.copy_file
zip_members = READER.zip_members
zip_limits = READER.zip_limits
zip_names = READER.zip_names
npy_header = READER.npy_header
read_npz = READER.read_npz
open_sqlite = READER.open_sqlite
sqlite_tables = READER.sqlite_tables


def open_regular(path: Path, max_bytes: int, *, name: str | None = None,
                 named: str | os.PathLike | None = None) -> Any:
    """`grokclocks._safe_io.Reader.open_regular`; `named` None: `path` is the path the user named."""
    return READER.open_regular(path, max_bytes, named=path if named is None else named, name=name)


def read_text(path: Path, max_bytes: int, *, name: str | None = None, named: str | os.PathLike | None = None) -> str:
    """`grokclocks._safe_io.Reader.read_text`; `named` None: `path` is the path the user named."""
    return READER.read_text(path, max_bytes, named=path if named is None else named, name=name)


def read_npy(f: IO[bytes], name: str, available: int, max_bytes: int) -> Any:
    """`grokclocks._safe_io.Reader.read_npy`: the array of the `.npy` stream `f`, its header checked first."""
    return READER.read_npy(f, name, available, max_bytes)
