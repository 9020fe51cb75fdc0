"""The door in: every byte grokclocks reads from a user's path goes through this module.

A log, a run file and its `.json` sidecar, a forecast's sidecar, a certificate, a budget table, an Aim or
TensorBoard folder, an MLflow sqlite store, a `--train-mask` file: each is opened, listed, decoded and
parsed here, under one set of rules, so that the next reader gets them without asking
(`tests/test_door_in.py` fails on any `open`, `read_text`, `json.loads`, `sqlite3.connect`, `zipfile`,
`np.load`, `os.scandir`, ... outside this module, with a reasoned allow-list for the package's own files).

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
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import errno
import json
import math
import os
import re
import stat
import struct
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from . import _validate as V

if TYPE_CHECKING:  # sqlite3 is imported when a database is read
    import sqlite3

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
    """The entries the folder walks of one read may still list (shared through `_BUDGET`)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.left = limit, limit
        self.subdirs: dict[tuple[str, str], list[Path]] = {}  # listings already made in this read


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("grokclocks_listing_budget", default=None)


@contextlib.contextmanager
def listing_budget(max_entries: int | None = None) -> Iterator[None]:
    """Inside, every folder walk (`Reader.walk`, `subdirs`, `snapshot`) draws on one budget of `max_entries`
    listed entries, so that a read that looks at a folder several times (the format, the runs in it, their
    files) lists at most `max_entries` entries in all.  Nested uses keep the outer budget."""
    if _BUDGET.get() is not None:
        yield
        return
    token = _BUDGET.set(_Budget(MAX_DIR_ENTRIES if max_entries is None else max_entries))
    try:
        yield
    finally:
        _BUDGET.reset(token)


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


def _parse_int(text: str) -> int:
    if len(text) - text.startswith("-") > MAX_JSON_INT_DIGITS:
        raise _LongInt(len(text) - text.startswith("-"))
    return int(text)


class _LongInt(ValueError):
    pass


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return d


# one decoder each (json.loads(..., object_pairs_hook=) builds one a call); both use the C scanner
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)
_DECODER_INTS = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_int=_parse_int)
# a run of more than MAX_JSON_INT_DIGITS digits (the lookbehind starts a match only where a run starts: linear)
_LONG_DIGITS = re.compile(r"(?<![0-9])[0-9]{%d}" % (MAX_JSON_INT_DIGITS + 1))


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


def _same(path: Path, named: Path) -> bool:
    return os.path.abspath(path) == os.path.abspath(named)


def _anchor(path: Path, named: Path) -> tuple[str, list[str]] | None:
    """(the folder the user named, or the folder of the file they named; the components of `path` below it), or
    None when `path` is not below it."""
    top = os.path.abspath(named)
    if not os.path.isdir(top):
        top = os.path.dirname(top)
    rel = os.path.relpath(os.path.abspath(path), top)
    parts = Path(rel).parts
    if not parts or parts[0] in (os.curdir, os.pardir):
        return None
    return top, list(parts)


@dataclasses.dataclass(frozen=True)
class Reader:
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

    def over(self, name: str, what: str, n: int, max_bytes: int) -> Exception:
        """The error for `n` bytes (`what` says of what) over the limit `max_bytes`, naming `name`."""
        return self.error(f"{name}: {what} {n} bytes ({mib(n)}), over the limit max_bytes = {max_bytes} "
                          f"({mib(max_bytes)}); {self.limit_hint}")

    # ------------------------------------------------------------------------------------ opening

    def _link_error(self, name: str, top: str, parts: Sequence[str]) -> Exception:
        where = top
        for k, part in enumerate(parts):
            where = os.path.join(where, part)
            try:
                if stat.S_ISLNK(os.lstat(where).st_mode):
                    rel = "/".join(parts[: k + 1])
                    return self.error(f"{name}: {V.show(rel, 120)} is a symbolic link inside the folder "
                                      f"{V.show(os.path.basename(top) or top, 80)}; links found inside a folder are "
                                      "not followed (name the file itself to read it)")
            except OSError:
                break
        return self.error(f"{name}: a symbolic link on the way from {V.show(os.path.basename(top) or top, 80)}; "
                          "links found inside a folder are not followed (name the file itself to read it)")

    def _open_fd(self, path: Path, named: str | os.PathLike, name: str, flags: int) -> int:
        """A descriptor of `path` opened with `flags`, following a link only where `path` is `named`."""
        path, named = Path(path), Path(named)
        if _same(path, named):
            try:
                return os.open(path, flags)
            except OSError as exc:
                raise self.error(f"{name}: cannot be opened ({exc.strerror or exc})") from None
        found = _anchor(path, named)
        if found is None:
            raise self.error(f"{name}: not inside {V.show(str(named), 120)}, the path it was found from")
        top, parts = found
        if not _AT:  # pragma: no cover - no openat (Windows): each component examined, then opened
            where = top
            for part in parts:
                where = os.path.join(where, part)
                try:
                    if stat.S_ISLNK(os.lstat(where).st_mode):
                        raise self._link_error(name, top, parts)
                except OSError as exc:
                    raise self.error(f"{name}: cannot be opened ({exc.strerror or exc})") from None
            try:
                return os.open(where, flags | _NOFOLLOW)
            except OSError as exc:
                raise self.error(f"{name}: cannot be opened ({exc.strerror or exc})") from None
        try:
            fd = os.open(top, _DIR)
        except OSError as exc:
            raise self.error(f"{name}: its folder cannot be opened ({exc.strerror or exc})") from None
        try:
            for part in parts[:-1]:
                nxt = os.open(part, _DIR | _NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = nxt
            return os.open(parts[-1], flags | _NOFOLLOW, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR) and any(
                    stat.S_ISLNK(_lmode(os.path.join(top, *parts[: k + 1]))) for k in range(len(parts))):
                raise self._link_error(name, top, parts) from None
            raise self.error(f"{name}: cannot be opened ({exc.strerror or exc})") from None
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def open_regular(self, path: str | os.PathLike, max_bytes: int, *, named: str | os.PathLike,
                     name: str | None = None) -> Iterator[IO[bytes]]:
        """A binary file object of `path`, refused unless it is a regular file of at most `max_bytes` bytes.

        The file is opened with `O_NONBLOCK` (opening a FIFO does not wait for a writer), a link followed only
        where `path` is `named`, and examined with `fstat` on the open descriptor, so what is checked is what
        is read."""
        path = Path(path)
        name = name or path.name or str(path)
        fd = self._open_fd(path, named, name, _RD)
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

    def read_bytes(self, path: str | os.PathLike, max_bytes: int, *, named: str | os.PathLike,
                   name: str | None = None) -> bytes:
        """The bytes of a regular file of at most `max_bytes` bytes (a file that grows past it while read is
        refused, never cut)."""
        path = Path(path)
        name = name or path.name or str(path)
        with self.open_regular(path, max_bytes, named=named, name=name) as f:
            return self.read_open(f, name, max_bytes)

    def read_open(self, f: IO[bytes], name: str, max_bytes: int) -> bytes:
        """The rest of the open regular file `f`, at most `max_bytes` bytes (more is refused, never cut).

        At most `max_bytes + 1` bytes are read, whatever `fstat` said: a file that grows while it is read, or
        reports a size of 0 (a `/proc` file), is refused once it holds more than `max_bytes`."""
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

    # ------------------------------------------------------------------------------------ text, JSON

    def decode(self, data: bytes, name: str) -> str:
        """UTF-8 text (a leading byte-order mark dropped); UTF-16 and a byte that is not UTF-8 are refused with
        its offset and line.

        Other encodings are refused, not guessed: a Latin-1 or cp1252 file decodes to *some* text under either
        guess, and nothing in the bytes says which was meant."""
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise self.error(f"{name}: UTF-16 text (it starts with a UTF-16 byte-order mark); save it as UTF-8")
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            off = exc.start
            line = data.count(b"\n", 0, off) + 1
            binary = b"\x00" in data[:4096]
            hint = ("a binary file? give its format with format= (CLI: --format) if it is an archive" if binary else
                    "a Latin-1 / cp1252 file? convert it to UTF-8, e.g. iconv -f cp1252 -t utf-8 FILE > FILE.utf8")
            raise self.error(f"{name}: not UTF-8 text: byte 0x{data[off]:02x} at offset {off} (line {line}) "
                             f"cannot be decoded ({hint})") from None

    def read_text(self, path: str | os.PathLike, max_bytes: int, *, named: str | os.PathLike,
                  name: str | None = None) -> str:
        """`read_bytes` then `decode`: the UTF-8 text of a regular file of at most `max_bytes` bytes."""
        path = Path(path)
        name = name or path.name or str(path)
        return self.decode(self.read_bytes(path, max_bytes, named=named, name=name), name)

    def json_loads(self, text: str, name: str, where: str = "") -> Any:
        """JSON text parsed under the door's rules: nested at most `MAX_JSON_DEPTH` levels, integers of at most
        `MAX_JSON_INT_DIGITS` digits, no key twice in one object.

        `json.JSONDecodeError` (text that is not JSON) is left to the caller, which knows the line; every
        other refusal is an error naming `name` and `where` (e.g. "line 3: ")."""
        deep = f"{name}: {where}JSON nested deeper than {MAX_JSON_DEPTH} levels ({self.content})"
        try:
            decoder = _DECODER_INTS if _LONG_DIGITS.search(text) else _DECODER
            obj = decoder.decode(text)
        except RecursionError:
            raise self.error(deep) from None
        except _LongInt as exc:
            raise self.error(f"{name}: {where}an integer of {exc.args[0]} digits (more than "
                             f"{MAX_JSON_INT_DIGITS}, beyond the double range)") from None
        except _DuplicateKey as exc:
            raise self.error(f"{name}: {where}the key {excerpt(exc.args[0])} appears twice in one JSON object "
                             "(which one counts is undefined); keep one") from None
        if text.count("[") + text.count("{") > MAX_JSON_DEPTH and json_depth(obj) > MAX_JSON_DEPTH:
            raise self.error(deep)
        return obj

    def read_json(self, path: str | os.PathLike, max_bytes: int, *, named: str | os.PathLike,
                  name: str | None = None) -> Any:
        """The JSON value of a regular file of at most `max_bytes` bytes (`read_text`, then `json_loads`); text
        that is not JSON is an error naming the file and the line."""
        path = Path(path)
        name = name or path.name or str(path)
        text = self.read_text(path, max_bytes, named=named, name=name)
        try:
            return self.json_loads(text, name)
        except json.JSONDecodeError as exc:
            raise self.error(f"{name}: not JSON ({exc.msg} at line {exc.lineno})") from None

    # ------------------------------------------------------------------------------------ folders

    def walk(self, root: str | os.PathLike, match: Callable[[str], bool], *, named: str | os.PathLike,
             name: str | None = None, max_entries: int | None = None,
             skip: Callable[[tuple[str, ...]], bool] | None = None) -> list[Path]:
        """Every path under the folder `root` whose file name `match`es, sorted: files, links and other
        non-folders alike (a link found is refused when it is opened, not followed here).

        The walk follows no link to a folder, lists at most `max_entries` entries in all (more is an error:
        not a run folder) and descends at most `MAX_DIR_DEPTH` levels; `skip(parts)` leaves out the folder of
        relative `parts`.  `root` is opened as `open_regular` opens a file (a link followed only where it is
        `named`)."""
        root = Path(root)
        name = name or root.name or str(root)
        found: list[tuple[str, ...]] = []

        def visit(rel: tuple[str, ...], entry: os.DirEntry) -> None:
            if not entry.is_dir(follow_symlinks=False) and match(entry.name):
                found.append(rel)

        self._walk(root, named, name, max_entries, visit, skip)
        return _paths(root, found)

    def subdirs(self, path: str | os.PathLike, *, named: str | os.PathLike, name: str | None = None,
                max_entries: int | None = None) -> list[Path]:
        """The folders directly inside `path` (not links to folders), sorted; at most `max_entries` entries are
        listed (more is an error)."""
        path = Path(path)
        name = name or path.name or str(path)
        budget = _BUDGET.get()
        key = (os.path.abspath(path), os.path.abspath(named))
        if budget is not None and key in budget.subdirs:  # listed once per read, however often it is asked
            return list(budget.subdirs[key])
        found: list[tuple[str, ...]] = []

        def visit(rel: tuple[str, ...], entry: os.DirEntry) -> None:
            if entry.is_dir(follow_symlinks=False):
                found.append(rel)

        self._walk(path, named, name, max_entries, visit, lambda parts: True)
        out = _paths(path, found)
        if budget is not None:
            budget.subdirs[key] = out
        return list(out)

    def _walk(self, root: Path, named: str | os.PathLike, name: str, max_entries: int | None,
              visit: Callable[[tuple[str, ...], os.DirEntry], None],
              skip: Callable[[tuple[str, ...]], bool] | None) -> None:
        max_entries = MAX_DIR_ENTRIES if max_entries is None else max_entries
        budget = _BUDGET.get() or _Budget(max_entries)
        limit = min(max_entries, budget.limit)
        seen = 0

        def count() -> None:
            nonlocal seen
            seen += 1
            budget.left -= 1
            if seen > max_entries or budget.left < 0:
                raise self._too_many(name, limit)

        if not _AT:  # pragma: no cover - no fd-relative listing (Windows): by path, links not followed
            todo: list[tuple[str, ...]] = [()]
            while todo:
                rel = todo.pop()
                if len(rel) > MAX_DIR_DEPTH:
                    raise self.error(f"{name}: folders nested deeper than {MAX_DIR_DEPTH} levels; not a run folder")
                try:
                    with os.scandir(root.joinpath(*rel)) as it:
                        for entry in it:
                            count()
                            sub = (*rel, entry.name)
                            visit(sub, entry)
                            if entry.is_dir(follow_symlinks=False) and not (skip and skip(sub)):
                                todo.append(sub)
                except OSError as exc:
                    raise self.error(f"{name}: the folder cannot be listed ({exc.strerror or exc})") from None
            return
        fd = self._open_fd(root, named, name, _DIR)

        def scan(fd: int, rel: tuple[str, ...]) -> None:
            if len(rel) > MAX_DIR_DEPTH:
                raise self.error(f"{name}: folders nested deeper than {MAX_DIR_DEPTH} levels; not a run folder")
            dirs = []
            try:
                with os.scandir(fd) as it:
                    for entry in it:
                        count()
                        sub = (*rel, entry.name)
                        visit(sub, entry)
                        if entry.is_dir(follow_symlinks=False) and not (skip and skip(sub)):
                            dirs.append(entry.name)
            except OSError as exc:
                raise self.error(f"{name}: the folder cannot be listed ({exc.strerror or exc})") from None
            for d in sorted(dirs):
                try:
                    child = os.open(d, _DIR | _NOFOLLOW, dir_fd=fd)
                except OSError:
                    continue  # replaced by a link or removed since it was listed: not followed
                try:
                    scan(child, (*rel, d))
                finally:
                    os.close(child)

        try:
            st = os.fstat(fd)
            if not stat.S_ISDIR(st.st_mode):
                raise self.error(f"{name}: {kind(st.st_mode)}, not a folder")
            scan(fd, ())
        finally:
            os.close(fd)

    def _too_many(self, name: str, limit: int) -> Exception:
        return self.error(f"{name}: more than {limit} folder entries (files and sub-folders, in all the folders "
                          "looked at) were listed without finding the end (a run folder holds a few files); pass "
                          "the log file or the run folder itself")

    def snapshot(self, src: str | os.PathLike, dst: str | os.PathLike, *, named: str | os.PathLike, max_bytes: int,
                 name: str | None = None, files: Callable[[str], bool] = lambda n: True,
                 skip: Callable[[tuple[str, ...]], bool] = lambda parts: False) -> list[tuple[str, ...]]:
        """Copy the folder `src` into the new folder `dst` (a private temporary folder of the caller), so that a
        library that reads by path (Aim, TensorBoard) reads a copy made through the door; the files copied
        (relative parts).

        The files whose name `files` accepts are copied, each opened as `open_regular` opens a file: a link,
        FIFO or device among them is an error; other entries are neither read nor copied.  The folders that
        `skip(parts)` accepts are left out unlisted; links to folders are not followed.  At most `max_bytes`
        bytes in all (a file that grows while copied counts what it grew) and `MAX_DIR_ENTRIES` entries."""
        src, dst = Path(src), Path(dst)
        name = name or src.name or str(src)
        found: list[tuple[str, ...]] = []
        dirs: list[tuple[str, ...]] = []
        listed = 0

        def visit(rel: tuple[str, ...], entry: os.DirEntry) -> None:
            nonlocal listed
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                if not skip(rel):
                    dirs.append(rel)
            elif files(entry.name):
                if not stat.S_ISREG(st.st_mode):
                    raise self.error(f"{name}: {V.show('/'.join(rel), 120)} is {kind(st.st_mode)}; only regular "
                                     "files are read (links found inside a folder are not followed)")
                listed += st.st_size
                if listed > max_bytes:
                    raise self.over(name, "the folder's files hold at least", listed, max_bytes)
                found.append(rel)

        self._walk(src, named, name, None, visit, skip)
        dst.mkdir()
        for d in sorted(dirs, key=len):
            dst.joinpath(*d).mkdir()
        total = 0
        for rel in found:
            if total >= max_bytes:
                raise self.over(name, "the folder's files hold more than", max_bytes, max_bytes)
            total += self.copy_file(src.joinpath(*rel), dst.joinpath(*rel), named=named, max_bytes=max_bytes - total,
                                    name=f"{name}/{'/'.join(rel)}")
        return found

    def copy_file(self, src: str | os.PathLike, dst: str | os.PathLike, *, named: str | os.PathLike, max_bytes: int,
                  name: str | None = None) -> int:
        """Copy the regular file `src` (opened as `open_regular` opens it) to the new file `dst` in a private
        temporary folder of the caller, at most `max_bytes` bytes (a file that grows past them is refused);
        the bytes copied."""
        src = Path(src)
        name = name or src.name or str(src)
        total = 0
        with self.open_regular(src, max_bytes, named=named, name=name) as f, open(dst, "xb") as out:
            while part := f.read(min(2**20, max_bytes + 1 - total)):
                total += len(part)
                if total > max_bytes:
                    raise self.over(name, "the file holds more than", max_bytes, max_bytes)
                out.write(part)
        return total

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
        if n_members > MAX_ZIP_MEMBERS:
            raise self.error(f"{name}: a zip archive of {n_members} members, more than {MAX_ZIP_MEMBERS} (a run "
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
        if len(z.infolist()) > MAX_ZIP_MEMBERS:
            n = len(z.infolist())
            z.close()
            raise self.error(f"{name}: a zip archive of {n} members, more than {MAX_ZIP_MEMBERS}; not read")
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

    # ------------------------------------------------------------------------------------ SQLite

    def open_sqlite(self, path: str | os.PathLike, max_bytes: int, *, named: str | os.PathLike,
                    name: str | None = None) -> sqlite3.Connection:
        """An in-memory SQLite connection holding the database file `path`, read through `read_bytes`.

        `sqlite3` never opens the path (no link, journal, WAL or lock file is touched); the connection is
        `query_only` with `trusted_schema = OFF` (no function of the file's schema runs where SQLite can
        refuse it) and stops any statement after `MAX_SQL_SECONDS`.  A database in WAL mode whose `-wal` file
        beside it is not empty is refused (its last writes are not in the file; let the writer finish or
        checkpoint it).  Close it when done."""
        path = Path(path)
        name = name or path.name or str(path)
        import sqlite3

        data = self.read_bytes(path, max_bytes, named=named, name=name)
        if not data.startswith(SQLITE_MAGIC):
            raise self.error(f"{name}: not an SQLite database")
        if len(data) >= 20 and 2 in (data[18], data[19]):  # WAL mode: writes may still be in NAME-wal
            wal = path.with_name(path.name + "-wal")
            try:
                pending = os.lstat(wal).st_size > 0
            except OSError:
                pending = False
            if pending:
                raise self.error(f"{name}: an SQLite database in WAL mode whose write-ahead log {wal.name} is not "
                                 "empty (its last writes are not in the file yet: is a writer still running?); "
                                 "read it after the writer has finished, or checkpoint it (sqlite3 FILE "
                                 "'PRAGMA wal_checkpoint')")
            data = data[:18] + b"\x01\x01" + data[20:]  # read as a rollback-journal database
        con = sqlite3.connect(":memory:")
        try:
            con.deserialize(data)
            deadline = time.monotonic() + MAX_SQL_SECONDS
            con.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
            con.execute("PRAGMA trusted_schema = OFF")
            con.execute("PRAGMA query_only = ON")
        except sqlite3.Error as exc:
            con.close()
            raise self.error(f"{name}: the SQLite database cannot be opened ({V.show(str(exc), 120)})") from None
        return con

    def sqlite_tables(self, con: sqlite3.Connection, tables: Sequence[str], name: str) -> dict[str, set[str]]:
        """The columns of each of `tables` of the database `con`, refused unless each is a plain table: not a
        view, not a virtual table, without generated or hidden columns (whose expressions would run on every
        read) and without triggers.  A missing table maps to an empty set."""
        out: dict[str, set[str]] = {}
        for table in tables:
            rows = con.execute("SELECT type, sql FROM sqlite_master WHERE name = ?", (table,)).fetchall()
            if not rows:
                out[table] = set()
                continue
            kinds = {str(r[0]) for r in rows}
            sql = " ".join(str(r[1] or "") for r in rows if r[0] == "table").lstrip().upper()
            if kinds != {"table"} or sql.startswith("CREATE VIRTUAL"):
                what = "a virtual table" if sql.startswith("CREATE VIRTUAL") else f"a {'/'.join(sorted(kinds))}"
                raise self.error(f"{name}: {V.show(table)} is {what}, not a plain table; not read")
            cols = con.execute("SELECT name, hidden FROM pragma_table_xinfo(?)", (table,)).fetchall()
            odd = [str(c[0]) for c in cols if c[1]]
            if odd:
                raise self.error(f"{name}: table {V.show(table)} has generated or hidden column(s) "
                                 f"{V.show(odd[:8], 120)}, whose expressions would run on every read; not read")
            trig = con.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?",
                               (table,)).fetchall()
            if trig:
                raise self.error(f"{name}: table {V.show(table)} has trigger(s) {V.show([t[0] for t in trig][:8], 120)}; "
                                 "not read")
            out[table] = {str(c[0]) for c in cols}
        return out


def _paths(root: Path, rels: list[tuple[str, ...]]) -> list[Path]:
    """`root / rel` for each relative path, in the order of the parts (sorting tuples of str, not `Path`s, which
    compare ten times slower)."""
    base = os.fspath(root)
    return [Path(os.path.join(base, *rel)) for rel in sorted(rels)]


def _lmode(path: str) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


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
