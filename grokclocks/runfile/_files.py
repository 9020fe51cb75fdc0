"""The write and lock side of run files: saving through the one writer, the run lock, disk errors in words.

`_atomic_write` writes a run's file through `grokclocks._safe_write` (a temporary file in the same
directory, fsync, rename; no link followed; the directory must exist).  A temporary file is named
`.NAME.HOST-PID.HEX.tmp`, so that the next write of `NAME` on the same host removes those of processes
that no longer run (killed with SIGKILL, or their machine crashed: no exception handler ran).

`_RunLock` holds `<run>.lock` for as long as a run path is written: an exclusive `flock` on the file
(released by the kernel when its process ends, however it ends) and, inside it, who holds it (pid,
host, start time).  The lock file is opened by `grokclocks._safe_write.open_lock_file`: created with
`O_CREAT | O_EXCL | O_NOFOLLOW`, an existing one used only when it is a regular file with one name (a link,
a FIFO or a device there is a `RunFileError` naming it).  A lock file whose lock is free but whose record
names a writer is the trace of a writer that was killed: it is taken over with a `RunFileWarning` saying
so.  Every save of a run checks that its lock file is still the one it holds (`_RunLock.check_held`): a
run whose directory was deleted, or whose lock file was removed, mid-run is refused rather than written
again without a lock.
"""

from __future__ import annotations

import errno
import json
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from .. import _safe_write
from .._escape import terminal_text
from .._safe_write import HOST as _HOST
from .._safe_write import HOST_TAG as _HOST_TAG  # noqa: F401 - the tests name temporary files with it
from .._safe_write import alive as _alive
from .._safe_write import names_file as _same_file
from .._safe_write import os_reason as _os_reason
from .._safe_write import proc_start as _proc_start
from .._safe_write import remove_stale_temps as _remove_stale_temps
from .._validate import show
from ._errors import RunExistsError, RunFileError, RunFileWarning

try:
    import fcntl
except ImportError:  # pragma: no cover - platforms without flock (Windows): the pid record alone decides
    fcntl = None  # type: ignore[assignment]

_WRITER = _safe_write.Writer(RunFileError, RunExistsError, "pass overwrite=True to replace it")


def _atomic_write(path: Path, write: Callable[[Any], None]) -> None:
    """Write the run file `path` through the one writer: a temporary file in its directory, fsync, rename.

    Parameters
    ----------
    path : pathlib.Path
        The file to write; its directory must exist (the run's lock file lies there, created with it).
    write : callable
        Called with the temporary file opened for binary writing; writes the whole content.

    Notes
    -----
    An error or an interrupt at any point (a full disk, a file-size limit, Ctrl-C) leaves the previous
    `path` (if any) untouched and removes the temporary file; a failed write is a `RunFileError` naming
    `path`.  A link, a FIFO or a device at `path` is refused, never written through.  A process killed
    outright leaves its temporary file, which the next write of `path` on this host removes.
    """
    _WRITER.write(path, write, name="save_path", overwrite=True)


def _holder_text(record: Any) -> str:
    """Who a lock record names, in words: "pid 123 on host h (since 2026-01-01 12:00:00)"."""
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int):
        return "an unknown process (the lock file holds no readable record)"
    since = f", since {_cut(record['since'], 40)}" if isinstance(record.get("since"), str) else ""
    me = " (this process)" if record["pid"] == os.getpid() and record.get("host") == _HOST else ""
    host = record.get("host", "?")
    return f"pid {show(record['pid'], 24)}{me} on host {_cut(host, 80) if isinstance(host, str) else show(host)}{since}"


def _cut(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters, its control characters shown as escapes (a lock file is
    written by whoever can write the directory: an escape sequence in its record reached the terminal through
    the `RunExistsError` and the take-over warning)."""
    text = terminal_text(" ".join(text[: 2 * limit].split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _read_record(fd: int) -> Any:
    """The JSON record of an open lock file, `None` when it is empty, `"unreadable"` when it is not JSON."""
    try:
        data = os.pread(fd, 4096, 0)
    except OSError:
        return "unreadable"
    if not data.strip():
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: a "record" of 2,000 nested lists
        return "unreadable"


def _flock(fd: int) -> bool | None:
    """Try an exclusive `flock` of `fd` without waiting: True (held now), False (another holds it), None (no flock)."""
    if fcntl is None:  # pragma: no cover - Windows
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        return None  # a file system without locks (ENOLCK, EOPNOTSUPP): the pid record alone decides
    return True


class _RunLock:
    """The lock of one run path, `<run>.lock`, held while the run is written.

    Acquire with `_RunLock.acquire(npz)`; `release()` (or leaving a `with` block) removes the file.
    One writer per run path: a second writer gets `RunExistsError` naming the holder.  A save checks
    with `_RunLock.check_held(npz)` that this process holds the lock and that it is still in place.
    """

    _held: ClassVar[dict[str, _RunLock]] = {}  # the locks this process holds, by the absolute path of the run

    def __init__(self, path: Path, fd: int, npz: Path) -> None:
        self.path = path
        self.npz = npz
        self._fd: int | None = fd
        self._pid = os.getpid()

    @classmethod
    def acquire(cls, npz: Path, *, what: str = "run") -> _RunLock:
        """Lock the run `npz` (`<stem>.lock` beside it) or raise `RunExistsError` naming who holds it.

        A missing directory is created.  A lock left by a writer that no longer runs is taken over with a
        `RunFileWarning`; the temporary files such a writer left are removed.  A lock file that is a link,
        not a regular file, or a file with other names is a `RunFileError` naming it.
        """
        lock = npz.with_suffix(".lock")
        _WRITER.make_folder(lock.parent, name=f"save_path {npz}")
        for _ in range(20):
            fd, created = _safe_write.open_lock_file(lock, RunFileError, str(npz))
            try:
                held = _flock(fd)
                record = None if created else _read_record(fd)
                for _ in range(50):  # the holder may have the lock but not yet its record written: wait for it
                    if held is not False or isinstance(record, dict):
                        break
                    time.sleep(0.002)
                    record = _read_record(fd)
                if held is False or (held is None and _record_alive(record)):
                    hint = "" if held is False else (  # without flock, a record is all there is to go by
                        f"; this file system has no flock: if that process is gone, delete {lock}")
                    raise RunExistsError(
                        f"{npz} is being written by {_holder_text(record)} (lock file {lock}): one writer per run "
                        f"path; wait for it to finish, or use another save_path{hint}")
                if held and not _same_file(fd, lock):  # the holder released (removed) it as we opened it
                    os.close(fd)
                    continue
                if record is not None:
                    warnings.warn(f"{npz}: taking over the lock file {lock.name} left by {_holder_text(record)}, "
                                  "which ended without releasing it (killed, or its machine stopped); a partial "
                                  "run saved there continues with resume=True", RunFileWarning, stacklevel=4)
                _write_record(fd, what)
            except BaseException:
                os.close(fd)
                raise
            for f in (npz, npz.with_suffix(".json")):
                _remove_stale_temps(f)
            self = cls(lock, fd, npz)
            cls._held[_key(npz)] = self
            return self
        raise RunFileError(f"cannot lock {npz}: its lock file {lock} kept being replaced")  # pragma: no cover

    @classmethod
    def check_held(cls, npz: Path) -> None:
        """Raise `RunFileError` unless this process holds the lock of `npz` and its lock file is still in place.

        A lock file that is gone (the run's directory deleted or moved, the file removed by hand) or that
        is another file now means another writer may be writing the path: the save is refused rather than
        made without a lock (the directory is not created again)."""
        lock = cls._held.get(_key(npz))
        if lock is None or lock._fd is None or lock._pid != os.getpid():
            raise RunFileError(f"{npz}: a run is saved only while its lock file {npz.with_suffix('.lock')} is held "
                               "(save_trajectory and simulate take it)")
        if not _same_file(lock._fd, lock.path):
            gone = "its directory is gone" if not lock.path.parent.is_dir() else "the lock file was removed or replaced"
            raise RunFileError(f"{npz}: the run's lock file {lock.path} is no longer the one this process holds "
                               f"({gone} while the run was written): the save is refused, so that no second "
                               "writer can write the same path unnoticed; the records of this run since its last "
                               "save are not written")

    def release(self) -> None:
        """Remove the lock file and release the lock (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        if self._held.get(_key(self.npz)) is self:
            del self._held[_key(self.npz)]
        try:
            _safe_write.remove_lock_file(fd, self.path)
        finally:
            os.close(fd)

    def __enter__(self) -> _RunLock:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def _key(npz: Path) -> str:
    return os.path.abspath(npz)


def _record_alive(record: Any) -> bool:
    """Without `flock`: does the lock record name a writer that may still run (this host: its pid runs)?"""
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int):
        return False
    if record.get("host") != _HOST:
        return True  # cannot be checked from here
    return _alive(record["pid"], record.get("start"))


def _write_record(fd: int, what: str) -> None:
    record = {"pid": os.getpid(), "host": _HOST, "start": _proc_start(os.getpid()),
              "since": time.strftime("%Y-%m-%d %H:%M:%S"), "what": what}
    _safe_write.write_lock_record(fd, json.dumps(record).encode())
