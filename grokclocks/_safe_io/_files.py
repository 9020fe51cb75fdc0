"""Opening one file: regular files only, links followed only where the user named them, `max_bytes` however
the file grows, UTF-8, JSON."""

from __future__ import annotations

import errno
import json
import os
import stat
import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from .. import _validate as V
from . import _json
from ._limits import _AT, _DIR, _NOFOLLOW, _RD, MAX_JSON_DEPTH, MAX_JSON_INT_DIGITS, excerpt, kind, mib


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


def _lmode(path: str) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0



class _Files:
    """The methods of `Reader` that open and read one file."""

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
            decoder = _json._DECODER_INTS if _json._LONG_DIGITS.search(text) else _json._DECODER
            obj = decoder.decode(text)
        except RecursionError:
            raise self.error(deep) from None
        except _json._LongInt as exc:
            raise self.error(f"{name}: {where}an integer of {exc.args[0]} digits (more than "
                             f"{MAX_JSON_INT_DIGITS}, beyond the double range)") from None
        except _json._DuplicateKey as exc:
            raise self.error(f"{name}: {where}the key {excerpt(exc.args[0])} appears twice in one JSON object "
                             "(which one counts is undefined); keep one") from None
        if text.count("[") + text.count("{") > MAX_JSON_DEPTH and _json.json_depth(obj) > MAX_JSON_DEPTH:
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

