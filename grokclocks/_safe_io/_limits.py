"""The door's limits and the small helpers every part of it uses."""

from __future__ import annotations

import contextlib
import contextvars
import os
import stat
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import _validate as V

DEFAULT_MAX_BYTES = 256 * 2**20
"""The default `max_bytes` of `grokclocks.logs.read_log`, `grokclocks.compare.load_run` and
`grokclocks.runfile.load_trajectory`: 256 MiB = 268,435,456 bytes, the most a log or run file may hold, or a
zip archive (`.npz`, `torch.save`) unpack to, or a TensorBoard directory's event files hold together.  A text
log takes up to about 20 times its size in memory while it is parsed; an archive takes its unpacked size."""

MAX_JSON_DEPTH = 64
"""The deepest JSON nesting read (levels of lists and objects; a log nests 3 or 4, a run file's config 3);
deeper is refused."""

MAX_JSON_INT_DIGITS = 300
"""The most digits of a JSON integer literal: longer is refused, so every integer read converts to a finite
float64 (the double range ends near 1.8e308)."""

MAX_DIR_ENTRIES = 100_000
"""The most directory entries one folder walk lists (a run folder holds a few files); more is refused."""

MAX_DIR_DEPTH = 32
"""The deepest a folder walk descends (a run folder nests 3 to 6 levels); deeper is refused."""

MAX_ZIP_MEMBERS = 10_000
"""The most members of a zip archive (an engine run file holds about 20, a `torch.save` file a few per
tensor); more is refused before the archive's directory is parsed."""

MAX_SQL_SECONDS = 30.0
"""The longest one SQLite statement may run on a database read from a file; longer is stopped and refused."""

EXCERPT_CHARS = 40
"""The most characters of a file's content that a message quotes (`excerpt`)."""

SQLITE_MAGIC = b"SQLite format 3\x00"
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError, ValueError)
_ZIP_DIRECTORY_BYTES = 4 * 2**20  # the most bytes of a zip directory parsed (10,000 members of long names fit)
_RD = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_AT = os.open in os.supports_dir_fd and os.scandir in os.supports_fd


class _Budget:
    """The entries the folder walks of one read may still list (shared through `_BUDGET`), and the links to
    folders they passed without entering (`linked`)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.left = limit, limit
        self.subdirs: dict[tuple[str, str], list[Path]] = {}  # listings already made in this read
        self.linked: list[str] = []  # "folder/rel/path" of each link to a folder a walk did not enter

    def note_link(self, name: str, rel: tuple[str, ...]) -> None:
        """Record that the walk of the folder `name` passed the link to a folder `rel` without entering it."""
        where = "/".join((name, *rel))
        if where not in self.linked:
            self.linked.append(where)


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("grokclocks_listing_budget", default=None)


@contextlib.contextmanager
def listing_budget(max_entries: int | None = None) -> Iterator[_Budget]:
    """Inside, every folder walk (`Reader.walk`, `subdirs`, `snapshot`) draws on one budget of `max_entries`
    listed entries, so that a read that looks at a folder several times (the format, the runs in it, their
    files) lists at most `max_entries` entries in all.  Nested uses keep the outer budget.

    Yields the budget: its `linked` lists every link to a folder that the walks passed without entering it
    (a link found inside a folder is not followed), as "FOLDER/rel/path", so that the reader can say which
    folders it did not read (a linked seed of a folder of runs, a linked `validation/` of a TensorBoard run)
    instead of leaving them out without a word."""
    outer = _BUDGET.get()
    if outer is not None:
        yield outer
        return
    budget = _Budget(MAX_DIR_ENTRIES if max_entries is None else max_entries)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def linked_folder(entry: os.DirEntry) -> bool:
    """Whether the folder entry `entry` is a symbolic link to a folder (which a walk does not enter)."""
    try:
        return entry.is_symlink() and entry.is_dir()
    except OSError:
        return False


def check_max_bytes(max_bytes: Any) -> int:
    """`max_bytes` validated: an integer ≥ 1 (a `DomainError` naming it otherwise)."""
    return V.integer_at_least(max_bytes, "max_bytes", 1)


def mib(n: int) -> str:
    """A byte count in words: "12.5 MiB" from 1 MiB on, "1000 bytes" below."""
    return f"{n / 2**20:.4g} MiB" if n >= 2**20 else f"{n} bytes"


def excerpt(text: str | bytes, limit: int = EXCERPT_CHARS) -> str:
    """A short escaped excerpt of a file's content for a message: `repr` of at most `limit` characters (control
    characters, escape sequences and other unprintable characters shown as escapes), `...` marking a cut."""
    cut = len(text) > limit
    return repr(text[:limit]) + ("..." if cut else "")


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


def kind(mode: int) -> str:
    """What a file of `st_mode` `mode` is, in words ("a FIFO (named pipe)", "a character device", ...)."""
    return next((text for test, text in _KINDS if test(mode)), "not a regular file")



@contextlib.contextmanager
def csv_field_limit(max_bytes: int) -> Iterator[None]:
    """The `csv` module's field size limit (131,072 characters by default) raised to `max_bytes` while reading:
    a field can be as long as the file.  The limit is process-wide; it is put back afterwards."""
    import csv

    old = csv.field_size_limit()
    csv.field_size_limit(max(old, min(max_bytes, 2**31 - 1)))
    try:
        yield
    finally:
        csv.field_size_limit(old)
