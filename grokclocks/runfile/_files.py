"""Writing files safely: atomic replacement, stale temporary files, the run lock, disk errors in words.

`_atomic_write` writes a file through a temporary file in the same directory (write, fsync, rename);
a temporary file is named `.NAME.HOST-PID.HEX.tmp` (`HOST`: 8 hex digits of the host name's hash), so
that the next write of `NAME` on the same host removes those of processes that no longer run (killed
with SIGKILL, or their machine crashed: no exception handler ran).

`_RunLock` holds `<run>.lock` for as long as a run path is written: an exclusive `flock` on the file
(released by the kernel when its process ends, however it ends) and, inside it, who holds it (pid,
host, start time).  A lock file whose lock is free but whose record names a writer is the trace of a
writer that was killed: it is taken over with a `RunFileWarning` saying so.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import socket
import time
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._validate import show
from ._errors import RunExistsError, RunFileError, RunFileWarning

try:
    import fcntl
except ImportError:  # pragma: no cover - platforms without flock (Windows): the pid record alone decides
    fcntl = None  # type: ignore[assignment]

_HOST = socket.gethostname()
_HOST_TAG = hashlib.sha256(_HOST.encode()).hexdigest()[:8]
_TMP = re.compile(r"(?:(?P<host>[0-9a-f]{8})-)?(?P<pid>[0-9]+)\.[0-9a-f]{8}\.tmp")
_DISK_FULL = {errno.EFBIG: "the file would exceed this process's file-size limit (ulimit -f)",
              errno.ENOSPC: "no space left on the device"}
if hasattr(errno, "EDQUOT"):
    _DISK_FULL[errno.EDQUOT] = "the disk quota is exceeded"


def _os_reason(exc: OSError) -> str:
    """What an `OSError` means, in words, with its errno name (e.g. "no space left on the device (ENOSPC)")."""
    code = errno.errorcode.get(exc.errno, "") if exc.errno is not None else ""
    text = _DISK_FULL.get(exc.errno) or exc.strerror or str(exc)
    return f"{text} ({code})" if code else text


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of `/proc/PID/stat` after the command name (state first), or `None` where unreadable."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split()


def _proc_start(pid: int) -> str | None:
    """Start time of process `pid` in clock ticks since boot (Linux), to tell a reused pid from its first owner."""
    stat = _proc_stat(pid)
    return stat[19] if stat is not None and len(stat) > 19 else None


def _alive(pid: int, start: str | None = None) -> bool:
    """Is process `pid` of this host running (and, if `start` is given, the same process that started then)?"""
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
    stat = _proc_stat(pid)
    if stat is not None:
        if stat[0] == "Z":  # a zombie has ended; only its exit status waits to be read
            return False
        if start is not None and len(stat) > 19 and stat[19] != start:  # the pid now belongs to another process
            return False
    return True


def _remove_stale_temps(path: Path) -> list[Path]:
    """Remove the temporary files of `path` left by processes of this host that no longer run; the removed ones.

    A temporary file of another host, or of a process that still runs, is left alone.
    """
    prefix = f".{path.name}."
    removed = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        m = _TMP.fullmatch(entry.name[len(prefix):])
        if m is None or m["host"] not in (None, _HOST_TAG):  # None: named before the host tag (same host)
            continue
        pid = int(m["pid"])
        if pid == os.getpid() or _alive(pid):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _atomic_write(path: Path, write: Callable[[Any], None]) -> None:
    """Write `path` through a temporary file in its directory: write, fsync, `os.replace`, fsync the directory.

    Parameters
    ----------
    path : pathlib.Path
        The file to write; its directory is created if missing.
    write : callable
        Called with the temporary file opened for binary writing; writes the whole content.

    Notes
    -----
    An error or an interrupt at any point (a full disk, a file-size limit, Ctrl-C) leaves the previous
    `path` (if any) untouched and removes the temporary file; the `OSError` is raised as it came.  A
    process killed outright leaves its temporary file, which the next write of `path` on this host removes
    (`_remove_stale_temps`).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(path)
    tmp = path.with_name(f".{path.name}.{_HOST_TAG}-{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "xb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _holder_text(record: Any) -> str:
    """Who a lock record names, in words: "pid 123 on host h (since 2026-01-01 12:00:00)"."""
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int):
        return "an unknown process (the lock file holds no readable record)"
    since = f", since {_cut(record['since'], 40)}" if isinstance(record.get("since"), str) else ""
    me = " (this process)" if record["pid"] == os.getpid() and record.get("host") == _HOST else ""
    host = record.get("host", "?")
    return f"pid {show(record['pid'], 24)}{me} on host {_cut(host, 80) if isinstance(host, str) else show(host)}{since}"


def _cut(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters (a lock file is written by whoever can write the directory)."""
    text = " ".join(text[: 2 * limit].split())
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
    One writer per run path: a second writer gets `RunExistsError` naming the holder.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, npz: Path, *, what: str = "run") -> _RunLock:
        """Lock the run `npz` (`<stem>.lock` beside it) or raise `RunExistsError` naming who holds it.

        A lock left by a writer that no longer runs is taken over with a `RunFileWarning`; the
        temporary files such a writer left are removed.
        """
        lock = npz.with_suffix(".lock")
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunFileError(f"cannot create the directory of {npz}: {_os_reason(exc)}") from exc
        for _ in range(20):
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
            except OSError as exc:
                raise RunFileError(f"cannot create the lock file {lock} of {npz}: {_os_reason(exc)}") from exc
            try:
                held = _flock(fd)
                record = _read_record(fd)
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
            return cls(lock, fd)
        raise RunFileError(f"cannot lock {npz}: its lock file {lock} kept being replaced")  # pragma: no cover

    def release(self) -> None:
        """Remove the lock file and release the lock (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if _same_file(fd, self.path):
                os.unlink(self.path)
        except OSError:  # pragma: no cover - removed by hand meanwhile
            pass
        finally:
            os.close(fd)

    def __enter__(self) -> _RunLock:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def _record_alive(record: Any) -> bool:
    """Without `flock`: does the lock record name a writer that may still run (this host: its pid runs)?"""
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int):
        return False
    if record.get("host") != _HOST:
        return True  # cannot be checked from here
    return _alive(record["pid"], record.get("start"))


def _same_file(fd: int, path: Path) -> bool:
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _write_record(fd: int, what: str) -> None:
    record = {"pid": os.getpid(), "host": _HOST, "start": _proc_start(os.getpid()),
              "since": time.strftime("%Y-%m-%d %H:%M:%S"), "what": what}
    data = json.dumps(record).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
