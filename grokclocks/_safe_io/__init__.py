"""The door in: every byte grokclocks reads from a user's path goes through this package.

A log, a run file and its `.json` sidecar, a forecast's sidecar, a certificate, a budget table, an Aim or
TensorBoard folder, an MLflow sqlite store, a `--train-mask` file: each is opened, listed, decoded and
parsed here, under one set of rules, so that the next reader gets them without asking
(`tests/test_door_in.py` fails on any `open`, `read_text`, `json.loads`, `sqlite3.connect`, `zipfile`,
`np.load`, `os.scandir`, ... outside it, with a reasoned allow-list for the package's own files).

The rules:

* **Regular files only.**  A file is opened without blocking and examined with `fstat` on the open
  descriptor before a byte is read: a FIFO, a device (`/dev/zero`) or a socket is refused, so a read never
  waits forever; what is checked is what is read.
* **Links.**  A symbolic link is followed only where the user named it.  "Named" means the path the user
  gave -- the argument of `read_log`, `load_run`, `load_trajectory`, `forecast`, a `--train-mask` file, the
  command line's path -- which every call here receives as `named`: when the path read *is* `named`, a link
  is followed (the user chose it).  Below it -- a file found inside a folder the user named (an MLflow run's
  `metrics/*`, a DVCLive `.tsv`, an Aim or TensorBoard folder's files, a `metrics.csv` found in a run
  directory), or a sidecar beside a file the user named (`run.json` beside `run.npz`, `X.csv.json` beside
  `X.csv`) -- every component is opened with `O_NOFOLLOW` from the named folder down, so a link anywhere
  there is refused, never followed: its target is not read and not quoted.  Folder walks do not descend
  into linked folders.
* **Size.**  At most `max_bytes` bytes (default `DEFAULT_MAX_BYTES`, 256 MiB) are read: the size `fstat`
  gives is checked first, and a file that grows after it (or reports a size of 0, as `/proc` files do) is
  read to at most `max_bytes + 1` bytes and then refused, never silently cut.  A zip archive's members may
  unpack to at most `max_bytes` (from its directory and each `.npy` header, before anything is
  decompressed or allocated), its directory may hold at most `MAX_ZIP_MEMBERS` members (counted from its
  end record before it is parsed), and only stored or deflated members are read.
* **Text.**  UTF-8 only (a leading byte-order mark dropped; UTF-16 and bytes that are not UTF-8 are refused
  with their offset, never guessed).
* **JSON.**  Nested at most `MAX_JSON_DEPTH` levels; an integer literal of more than `MAX_JSON_INT_DIGITS`
  digits is refused (every integer read converts to a finite float64); a key given twice in one object is
  refused (JSON leaves which one counts undefined; Python keeps the last silently).
* **Folders.**  A walk lists at most `MAX_DIR_ENTRIES` entries in all and descends at most `MAX_DIR_DEPTH`
  levels, without following links: its time is linear in what it lists, and bounded.
* **SQLite.**  The database file is read as bytes (the rules above) and opened in memory from them
  (`sqlite3` never sees the path: no link, journal or lock file is touched), with `query_only` and
  `trusted_schema = OFF`, and every statement is stopped after `MAX_SQL_SECONDS`; the tables a reader
  uses are refused when they are views, virtual tables, have generated or hidden columns or triggers.
* **Messages.**  Every refusal is one line naming the file; text from a file appears in a message only as
  a short escaped excerpt (`excerpt`: at most `EXCERPT_CHARS` characters, control characters shown as
  escapes).

Each caller reports a refusal in its own error class with its own advice: a `Reader` holds both (`LogError`
and "raise it with read_log(..., max_bytes=N)" for the logs, `RunFileError` and "load_trajectory(...,
max_bytes=N)" for run files, `CertificateError` for certificates), and its methods are the reading
functions.

One concept per private file: `_limits` (the limits, the listing budget, excerpts), `_json`, `_files` (opening
one file, links, size, text, JSON), `_folders` (walks and copies), `_archives` (zip and `.npy`), `_sqlite`.
The limits are read from `_limits` when a method runs (a test may lower one there).
"""

from __future__ import annotations

import dataclasses

from ._archives import _Archives
from ._files import _Files
from ._folders import _Folders
from ._json import json_depth
from ._limits import (DEFAULT_MAX_BYTES, EXCERPT_CHARS, MAX_DIR_DEPTH, MAX_DIR_ENTRIES, MAX_JSON_DEPTH,
                      MAX_JSON_INT_DIGITS, MAX_SQL_SECONDS, MAX_ZIP_MEMBERS, SQLITE_MAGIC, check_max_bytes,
                      csv_field_limit, excerpt, kind, listing_budget, mib)
from ._sqlite import _SQLite

__all__ = ["DEFAULT_MAX_BYTES", "EXCERPT_CHARS", "MAX_DIR_DEPTH", "MAX_DIR_ENTRIES", "MAX_JSON_DEPTH",
           "MAX_JSON_INT_DIGITS", "MAX_SQL_SECONDS", "MAX_ZIP_MEMBERS", "SQLITE_MAGIC", "Reader", "check_max_bytes",
           "csv_field_limit", "excerpt", "json_depth", "kind", "listing_budget", "mib"]


@dataclasses.dataclass(frozen=True)
class Reader(_Files, _Folders, _Archives, _SQLite):
    """How one caller reports a refusal: its error class and its advice; the methods read a file safely.

    Every method that takes a path takes `named` too: the path the user named that led to this one (the path
    itself when the user named it).  A symbolic link is followed only when the path *is* `named`; a path
    below it (inside the folder the user named, or beside the file they named) is opened component by
    component with `O_NOFOLLOW`, so a link there is refused.
    """

    error: type[Exception]
    """The exception class raised for every refusal (called with the one-line message)."""
    limit_hint: str
    """How to raise the limit, the end of an over-the-limit message, e.g. "raise it with read_log(...,
    max_bytes=N) ... if the file is what you meant to read"."""
    stream_hint: str = "save it to a file first"
    """The end of the message that refuses a FIFO or a device."""
    content: str = "a log nests 3 or 4: a list of records of values"
    """How deeply the expected JSON nests, in words (the end of the deep-JSON message)."""

