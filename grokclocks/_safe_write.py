"""Writing a file for a user: the one door out of grokclocks.

Every file the package writes on a user's path -- figures, run files and their `.json`, certificates and
their Markdown, the documentation pages made from certificates, lock files -- is written here, by these
rules:

* an existing file is refused unless the caller says `overwrite` (`OutputExistsError`, or the caller's
  own class), and the check is made before any work starts (`Writer.check`) and again as the file is
  put in place: a file that appears meanwhile is not replaced either;
* no symbolic link is followed: a link at the path (dangling or not) is refused, also with `overwrite`,
  and nothing is opened with a path a link could redirect (temporary files and lock files are created
  with `O_CREAT | O_EXCL | O_NOFOLLOW`); a FIFO, a device, a socket or a directory at the path is refused;
* the content goes to a temporary file in the same directory, is flushed and fsynced, and is then put in
  place in one step: a hard link (which refuses an existing name) without `overwrite`, `os.replace` with
  it; an error or an interrupt at any point removes the temporary file and leaves the previous file
  whole;
* the suffix is checked where the format depends on it (`suffixes`), and the directory must exist (or is
  created where the caller says so, `make_parents`);
* the path returned is the path written, and every message names it.

A temporary file is named `.NAME.HOST-PID.HEX.tmp` (HOST: 8 hex digits of the host name's sha256): the
next write of NAME on the same host removes those of processes that no longer run (`remove_stale_temps`),
killed before their handler ran.  A process counts as running unless it is gone, is a zombie, or its pid
now belongs to a process that started at another time (`alive`).

Lock files (`open_lock_file`, `remove_lock_file`) follow the same rules: created with `O_EXCL |
O_NOFOLLOW`, an existing one opened without following a link and used only when it is a regular file
with one name (a hard link to a user's file would have that file truncated); who holds it is the caller's
business (`grokclocks.runfile`'s flock and pid record).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import os
import re
import socket
import stat
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from . import _validate as V
from ._escape import terminal_text
from ._safe_io import kind

HOST = socket.gethostname()
"""This machine's host name, as lock records and temporary files name it."""
HOST_TAG = hashlib.sha256(HOST.encode()).hexdigest()[:8]
"""8 hex digits of the sha256 of `HOST`: the host part of a temporary file's name."""
_TMP = re.compile(r"(?:(?P<host>[0-9a-f]{8})-)?(?P<pid>[0-9]+)\.[0-9a-f]{8}\.tmp")
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_DISK_FULL = {errno.EFBIG: "the file would exceed this process's file-size limit (ulimit -f)",
              errno.ENOSPC: "no space left on the device"}
if hasattr(errno, "EDQUOT"):
    _DISK_FULL[errno.EDQUOT] = "the disk quota is exceeded"


def os_reason(exc: OSError) -> str:
    """What an `OSError` means, in words, with its errno name (e.g. "no space left on the device (ENOSPC)")."""
    code = errno.errorcode.get(exc.errno, "") if exc.errno is not None else ""
    text = _DISK_FULL.get(exc.errno) or exc.strerror or str(exc)
    return f"{text} ({code})" if code else text


# ------------------------------------------------------------------------------------------ processes


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of `/proc/PID/stat` after the command name (state first), or `None` where unreadable.

    A file of the kernel's, read with `os.open`/`os.read`: not a user's file."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        text = os.read(fd, 4096).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    return text.rsplit(")", 1)[-1].split()


def proc_start(pid: int) -> str | None:
    """Start time of process `pid` in clock ticks since boot (Linux), to tell a reused pid from its first owner."""
    stat_ = _proc_stat(pid)
    return stat_[19] if stat_ is not None and len(stat_) > 19 else None


def alive(pid: Any, start: str | None = None) -> bool:
    """Is process `pid` of this host running (and, if `start` is given, the same process that started then)?

    A zombie (ended, its exit status not yet collected) is not running; a pid that is not a positive int,
    or beyond any pid, names no process."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # OverflowError: beyond a C int, no process has that pid
        return False
    except PermissionError:  # another user's process: it exists
        pass
    except OSError:  # pragma: no cover - cannot tell: assume it runs
        return True
    fields = _proc_stat(pid)
    if fields is not None:
        if fields[0] in ("Z", "X"):  # a zombie has ended; only its exit status waits to be read
            return False
        if start is not None and len(fields) > 19 and fields[19] != start:  # the pid now names another process
            return False
    return True


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove the temporary files of `path` left by processes of this host that no longer run; the removed ones.

    A temporary file of another host, of this process, or of a process that still runs is left alone."""
    prefix = f".{path.name}."
    removed: list[Path] = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        m = _TMP.fullmatch(entry.name[len(prefix):])
        if m is None or m["host"] not in (None, HOST_TAG):  # None: named before the host tag (same host)
            continue
        pid = int(m["pid"])
        if pid == os.getpid() or alive(pid):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - platforms without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _link_text(path: Path) -> str:
    try:
        return f" (to {terminal_text(os.readlink(path))[:200]!r})"
    except OSError:  # pragma: no cover - removed meanwhile
        return ""


# ------------------------------------------------------------------------------------------ the writer


@dataclasses.dataclass(frozen=True)
class Writer:
    """How one caller reports a refusal; the methods check and write a file by the rules of this module.

    Attributes
    ----------
    error : type
        The exception raised for a path that cannot be written (a link, a directory, a missing directory,
        a wrong suffix, a failed write); a `DomainError` subclass, called with the one-line message.
    exists_error : type
        The exception raised for an existing file without `overwrite`.
    overwrite_hint : str
        How to replace an existing file, the end of that message ("pass overwrite=True to replace it").
    """

    error: type[Exception] = V.DomainError
    """The exception class of every refusal but an existing file."""
    exists_error: type[Exception] = V.OutputExistsError
    """The exception class for an existing file without overwrite."""
    overwrite_hint: str = "pass overwrite=True to replace it"
    """The end of the message for an existing file."""

    def check(self, path: Any, *, name: str = "path", overwrite: bool = False, suffixes: Iterable[str] = (),
              make_parents: bool = False) -> Path:
        """The output file `path`, checked before any work; creates nothing.

        Refused: a path naming no file, a suffix not among `suffixes` (lower case, without the dot; empty:
        any), a symbolic link (also with `overwrite`), a directory, a FIFO, device or socket, an existing
        regular file without `overwrite`, a missing directory (unless `make_parents`, then the nearest
        existing ancestor must be a writable directory) or one that cannot be written.  `name` (the
        option or parameter) begins every message."""
        p = V.file_path(path, name)
        try:
            st = _lstat(p)
        except OSError as exc:  # ENOTDIR (a file as a directory), EACCES, ELOOP
            raise self.error(f"{name}: cannot write {_show(p)}: {os_reason(exc)}") from None
        if st is not None:
            if stat.S_ISLNK(st.st_mode):
                raise self.error(f"{name}: {_show(p)} is a symbolic link{_link_text(p)}; grokclocks writes no "
                                 "file through a link: remove the link, or name the file itself")
            if stat.S_ISDIR(st.st_mode):
                raise self.error(f"{name}: {_show(p)} is a directory; give a file name")
            if not stat.S_ISREG(st.st_mode):
                raise self.error(f"{name}: {_show(p)} is {kind(st.st_mode)}, not a regular file; grokclocks writes "
                                 "only regular files")
        allowed = sorted({s.lower().lstrip(".") for s in suffixes})
        if allowed and p.suffix.lower().lstrip(".") not in allowed:
            example = "png" if "png" in allowed else allowed[0]
            raise self.error(f"{name} {_show(p)!r}: the file name must end with its format, one of "
                             f"{', '.join('.' + s for s in allowed)} (e.g. {_show(p.name)}.{example})")
        if st is not None and not overwrite:
            raise self.exists_error(f"{name}: {_show(p)} already exists; {self.overwrite_hint}, or choose another "
                                    "file")
        self._folder(p, name, make_parents)
        return p

    def _folder(self, p: Path, name: str, make_parents: bool) -> None:
        parent = p.absolute().parent
        if not parent.exists():
            if not make_parents:
                raise self.error(f"{name}: the directory {_show(parent)} does not exist")
            while not parent.exists():
                parent = parent.parent
        if not parent.is_dir():
            raise self.error(f"{name}: cannot write {_show(p)}: {_show(parent)} is not a directory")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise self.error(f"{name}: cannot write {_show(p)}: the directory {_show(parent)} is not writable")

    def write(self, path: Any, write: Callable[[IO[bytes]], Any], *, name: str = "path", overwrite: bool = False,
              suffixes: Iterable[str] = (), make_parents: bool = False) -> Path:
        """Write `path` with `write(fh)` through a temporary file beside it; the path written.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write, checked as by `check`.
        write : callable
            Called once with the temporary file opened for binary writing; writes the whole content.
        name : str
            The option or parameter that named the file, first in every message.
        overwrite : bool
            Whether an existing regular file may be replaced.  Without it, a file that appears while the
            content is written is not replaced either.
        suffixes : iterable of str
            The accepted suffixes (lower case, without the dot); empty: any.
        make_parents : bool
            Create a missing directory (and its parents).

        Returns
        -------
        pathlib.Path
            The file written.

        Raises
        ------
        exists_error
            The file exists (or appeared meanwhile) and `overwrite` is false.
        error
            Any other refusal of `check`, or the write failed (a full disk, a file-size limit, no
            permission): the previous file is as it was and no temporary file is left.
        """
        p = self.check(path, name=name, overwrite=overwrite, suffixes=suffixes, make_parents=make_parents)
        if make_parents:
            self.make_folder(p.parent, name=name)
        remove_stale_temps(p)
        tmp = p.with_name(f".{p.name}.{HOST_TAG}-{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            fd = os.open(tmp, _NEW_FILE, 0o666)
            with os.fdopen(fd, "wb") as fh:
                write(fh)
                fh.flush()
                os.fsync(fh.fileno())
            self._put(tmp, p, name, overwrite)
        except OSError as exc:
            if isinstance(exc, V.DomainError):  # an OutputExistsError is a FileExistsError too
                raise
            raise self.error(f"{name}: cannot write {_show(p)}: {os_reason(exc)}; {terminal_text(p.name)} is as it was "
                             "before this write (the previous file, if any, is intact) and no temporary file is "
                             "left") from exc
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        _fsync_dir(p.parent)
        return p

    def _put(self, tmp: Path, p: Path, name: str, overwrite: bool) -> None:
        """Give the written temporary file the name `p`: never through a link, never over a file without overwrite."""
        st = _lstat(p)
        if st is not None and not stat.S_ISREG(st.st_mode):
            what = ("a symbolic link" + _link_text(p)) if stat.S_ISLNK(st.st_mode) else kind(st.st_mode)
            raise self.error(f"{name}: {_show(p)} became {what} while it was written; nothing was written there")
        if overwrite:
            os.replace(tmp, p)  # a rename replaces the name, never writes through it
            return
        try:
            os.link(tmp, p)  # refuses an existing name: never replaces a file created since the check
        except FileExistsError:
            raise self.exists_error(f"{name}: {_show(p)} was created by another program while it was written; "
                                    f"{self.overwrite_hint}") from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK):
                raise
            if _lstat(p) is not None:  # no hard links here: check, then rename (a narrow window)
                raise self.exists_error(f"{name}: {_show(p)} was created by another program while it was "
                                        f"written; {self.overwrite_hint}") from None
            os.replace(tmp, p)

    def write_bytes(self, path: Any, data: bytes, **options: Any) -> Path:
        """Write `data` to `path` (the options of `write`); the path written."""
        return self.write(path, lambda fh: fh.write(data), **options)

    def write_text(self, path: Any, text: str, **options: Any) -> Path:
        """Write `text` to `path` as UTF-8 (the options of `write`); the path written."""
        return self.write_bytes(path, text.encode("utf-8"), **options)

    def save_figure(self, fig: Any, path: Any, *, dpi: float = 120, **options: Any) -> Path:
        """Save the matplotlib figure `fig` to `path` in the format its suffix names (the options of `write`).

        The suffix must be one of the formats the figure's canvas can write (`png`, `pdf`, `svg`, ...).  Every
        text of the figure but the axes' tick labels is shown as the text it is (`plain_figure_texts`): a run
        name or column name from a file holding `$...$` is not typeset as a formula (an unknown command in it
        made matplotlib raise and the figure was not written) and its control characters are shown as
        escapes."""
        formats = fig.canvas.get_supported_filetypes()
        options.setdefault("suffixes", formats)
        p = V.file_path(path, options.get("name", "path"))
        fmt = p.suffix.lower().lstrip(".")
        plain_figure_texts(fig)
        return self.write(p, lambda fh: fig.savefig(fh, format=fmt, dpi=dpi), **options)

    def make_folder(self, path: Any, *, name: str = "path") -> Path:
        """Create the directory `path` and its parents where missing; an existing directory is kept."""
        p = Path(path)
        try:
            p.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise self.error(f"{name}: {_show(p)} exists and is not a directory") from None
        except OSError as exc:
            raise self.error(f"{name}: the directory {_show(p)} cannot be created: {os_reason(exc)}") from None
        return p

    def move_aside(self, path: Path, to: Path) -> bool:
        """Rename the regular file `path` to `to` (replacing `to`); False where there is no file at `path`.

        A link or another non-regular file at `path` is refused; a link at `to` is replaced, not followed."""
        st = _lstat(path)
        if st is None:
            return False
        if not stat.S_ISREG(st.st_mode):
            raise self.error(f"{_show(path)} is {kind(st.st_mode) if not stat.S_ISLNK(st.st_mode) else 'a link'}, "
                             "not a regular file: it is not moved")
        try:
            os.replace(path, to)
        except OSError as exc:
            raise self.error(f"cannot rename {_show(path)} to {_show(to)}: {os_reason(exc)}") from None
        return True


def plain_figure_texts(fig: Any) -> None:
    """Show every text of the matplotlib figure `fig` as the text it is: the door to the terminal for figures.

    The texts of a figure of grokclocks hold names from files (a title with the run's source, a legend with
    its run names).  Matplotlib reads `$...$` in a text as a formula (mathtext) and draws control characters
    as missing glyphs with a warning per character; so each text but the axes' tick labels and offset texts
    (which matplotlib's formatters write as formulas themselves, and no file) gets `set_parse_math(False)` and
    its control characters shown as escapes (`grokclocks._escape.terminal_text`, newlines kept).  Applying it
    twice changes nothing more."""
    from matplotlib.text import Text

    ticks: set[int] = set()
    for ax in fig.get_axes():
        for axis in (ax.xaxis, ax.yaxis):
            ticks.update(id(t) for t in axis.get_ticklabels(which="both"))
            ticks.add(id(axis.get_offset_text()))
    for text in fig.findobj(Text):
        if id(text) in ticks:
            continue
        text.set_parse_math(False)
        raw = text.get_text()
        shown = terminal_text(raw, newlines=True)
        if shown != raw:
            text.set_text(shown)


def figure_suffixes() -> list[str]:
    """The file suffixes matplotlib saves figures in (png, pdf, svg, ...); needs matplotlib."""
    from matplotlib.backend_bases import FigureCanvasBase

    return list(FigureCanvasBase.get_supported_filetypes())


def _show(p: Any) -> str:
    """A path for a message: on one line, its control characters visible."""
    return terminal_text(str(p))


WRITER = Writer()
"""The writer of the library's functions: `DomainError`, `OutputExistsError`, "pass overwrite=True"."""


# ------------------------------------------------------------------------------------------ lock files


def open_lock_file(path: Path, error: type[Exception], owner: str) -> tuple[int, bool]:
    """Open (or create) the lock file `path` for reading and writing, never through a link: (fd, created).

    A new file is created with `O_CREAT | O_EXCL | O_NOFOLLOW`; an existing one is opened with `O_NOFOLLOW
    | O_NONBLOCK` and used only when it is a regular file with one name.  Refused with `error` (one line
    naming `path` and `owner`, what the lock protects): a symbolic link (which an open would follow to
    whatever it names), a FIFO, a device, a socket, a directory, a file with other hard links, or a lock
    that cannot be opened."""
    flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(20):
        try:
            return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644), True
        except FileExistsError:
            pass
        except OSError as exc:
            raise error(f"cannot create the lock file {_show(path)} of {owner}: {os_reason(exc)}") from exc
        try:
            fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:  # released meanwhile: create it
            continue
        except OSError as exc:
            st = _lstat(path)
            if st is not None and stat.S_ISLNK(st.st_mode):
                raise error(f"the lock file {_show(path)} of {owner} is a symbolic link{_link_text(path)}; a lock "
                            "file is never opened through a link (it would write to what the link names): remove "
                            "the link") from None
            raise error(f"cannot open the lock file {_show(path)} of {owner}: {os_reason(exc)}") from exc
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise error(f"the lock file {_show(path)} of {owner} is {kind(st.st_mode)}, not a regular file; "
                            "remove it (a lock file is a small regular file that grokclocks creates)")
            if st.st_nlink != 1:
                raise error(f"the lock file {_show(path)} of {owner} has {st.st_nlink} names (hard links): it may be "
                            "another file of yours, which locking would overwrite; remove it")
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd, False
    raise error(f"cannot open the lock file {_show(path)} of {owner}: it kept being replaced")  # pragma: no cover


def write_lock_record(fd: int, data: bytes) -> None:
    """Replace the content of the lock file open as `fd` (from `open_lock_file`, held by its caller) with `data`."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)


def names_file(fd: int, path: Path) -> bool:
    """Does `path` (not followed if a link) name the file open as `fd`?"""
    try:
        a, b = os.fstat(fd), os.lstat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def remove_lock_file(fd: int, path: Path) -> None:
    """Remove the lock file `path` if it still names the file open as `fd` (never another file put there)."""
    if names_file(fd, path):
        with contextlib.suppress(OSError):
            os.unlink(path)
