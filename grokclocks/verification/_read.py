"""Reading a certificate or budget-table file that may be hostile, and `CertificateError`.

Every JSON file the verification package reads -- a partial certificate of `merge_certificates`, a suite
certificate of `read_suite_certificate`, a budget table of `budget_estimates` -- goes through the shared
door in (`grokclocks._safe_io`): a regular file only (a FIFO, a device or a socket is refused before a byte is
read, so a read never waits forever), at most `_MAX_BYTES` (64 MiB; the certificate of the whole CPU tier
holds 0.33 MB), UTF-8 text, JSON nested at most 64 levels (a certificate nests 7), integers of at most 300
digits, no key twice in one object; a link is followed only when it is the path the user named (a file found
in a folder, `found_in`, must not be one).  The folders searched for them are listed through the door too
(`list_files`).  Each refusal is a one-line `CertificateError` that names the file.
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

from .. import _safe_io
from .. import _validate as V


class CertificateError(V.DomainError):
    """A certificate that cannot be read or used: a file refused, or partial certificates that cannot be merged.

    Raised for a file that is not a regular file, holds more than 64 MiB, is not UTF-8 JSON, nests deeper than
    64 levels or is not a certificate of the expected kind (its message names the file), and for slices that
    cannot be merged (mixed scales or commits, missing or repeated slices).  A `grokclocks.DomainError`, so a
    `ValueError`.
    """


_MAX_BYTES = 1 << 26
"""The largest certificate or budget table read, in bytes: 64 MiB = 67,108,864, about 200 times the
certificate of the whole CPU tier (0.33 MB)."""

_READER = _safe_io.Reader(
    CertificateError,
    limit_hint="a certificate of the whole CPU tier holds about 0.3 MiB; a file over 64 MiB is not read",
    stream_hint="copy the certificate to a file first",
    content="a certificate nests 7 levels: meta, rows and tests of values")


def read_json(path: Path, found_in: Path | None = None) -> Any:
    """The JSON value of the certificate or budget-table file `path`, read through the door in.

    Parameters
    ----------
    path : pathlib.Path
        The file to read; the messages name it as given.
    found_in : pathlib.Path, optional
        The folder the user named in which `path` was found (by a listing); then `path` must not be a link
        (nor any folder between them).  Default `None`: `path` is the file the user named (a link is
        followed).

    Returns
    -------
    object
        The decoded JSON value (its shape is the caller's to check).

    Raises
    ------
    CertificateError
        If the file cannot be opened, is a link found in a folder, is not a regular file (a FIFO, a device),
        holds more than `_MAX_BYTES` bytes, is not UTF-8, is not JSON, nests deeper than 64 levels, holds an
        integer of more than 300 digits or a key twice in one object; one line naming the file.
    """
    name = str(path)
    data = _READER.read_bytes(path, _MAX_BYTES, named=path if found_in is None else found_in, name=name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CertificateError(f"{name}: not a readable certificate: byte 0x{data[exc.start]:02x} at offset "
                               f"{exc.start} is not UTF-8 (certificates are written as UTF-8 JSON)") from None
    try:
        return _READER.json_loads(text, name)
    except json.JSONDecodeError as exc:
        raise CertificateError(f"{name}: not a readable certificate ({exc.msg} at line {exc.lineno})") from None


def list_files(folder: Path, pattern: str) -> list[Path]:
    """The entries of the folder `folder` (the user named it) whose names match the glob `pattern`, sorted by name;
    listed through the door (at most `grokclocks._safe_io.MAX_DIR_ENTRIES` entries, no sub-folder entered).

    A link among them is listed, not followed: `read_json(f, found_in=folder)` refuses it by name.

    Raises
    ------
    CertificateError
        If `folder` cannot be listed (not a folder, too many entries); one line naming it.
    """
    return _READER.walk(folder, lambda n: fnmatch.fnmatchcase(n, pattern), named=folder, name=str(folder),
                        skip=lambda parts: True)
