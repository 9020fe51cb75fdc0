"""Shared pieces of the `grokclocks` command: the one-line error, warnings on stderr, number arguments, output files."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
import uuid
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from .. import _validate as V
from .._validate import DomainError

FORMATTER = argparse.RawDescriptionHelpFormatter


class CLIError(Exception):
    """An error of the command line, reported as one line (`grokclocks: error: ...`) with exit status 2."""


def _one_line_error(parser: argparse.ArgumentParser) -> Callable[[str], None]:
    """An `error` method for `parser` that prints one line and exits with status 2 (no usage block)."""

    def error(message: str) -> None:
        print(f"grokclocks {parser.prog.split()[-1]}: error: {message}", file=sys.stderr)
        raise SystemExit(2)

    return error


def _print_warnings(caught: Sequence[warnings.WarningMessage]) -> None:
    """Print each distinct warning once on stderr as `grokclocks: warning: ...`."""
    seen = []
    for w in caught:
        msg = str(w.message)
        if msg not in seen:
            seen.append(msg)
            print(f"grokclocks: warning: {msg}", file=sys.stderr)


def _positive_float(name: str) -> Callable[[str], float]:
    """An argparse `type` for option `name`: a number > 0, checked by the library's own validation."""

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number (got {text!r})") from None
        try:
            return float(V.positive(x, name))  # the library's own validation and message
        except DomainError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _output_file(option: str, text: str, *, overwrite: bool, suffixes: Iterable[str] = (),
                 inputs: Iterable[str] = ()) -> Path:
    """An output file named on the command line, checked before any work starts.

    Parameters
    ----------
    option : str
        The option as the user typed it (`--plot`), named in every message.
    text : str
        The path given to it.
    overwrite : bool
        Whether an existing file may be replaced (the command's `--overwrite`).
    suffixes : iterable of str
        The accepted file suffixes without the dot, lower case (e.g. `png`, `pdf`); the path must end
        with one of them, so that the file written is the file named.  Empty: any name.
    inputs : iterable of str
        The files the command reads; the output may not be one of them.

    Returns
    -------
    pathlib.Path
        The output path.

    Raises
    ------
    CLIError
        No accepted suffix, a directory, a missing or unwritable parent directory, an existing
        file without `overwrite`, or one of the inputs.
    """
    p = Path(text).expanduser()
    if p.is_dir():
        raise CLIError(f"{option} {text!r} is a directory; give a file name")
    if p.exists() and any(p.resolve() == Path(i).expanduser().resolve() for i in inputs):
        raise CLIError(f"{option} {text!r} is one of the files being read; choose another file")
    allowed = sorted(set(suffixes))
    if allowed and p.suffix.lower().lstrip(".") not in allowed:
        example = "png" if "png" in allowed else allowed[0]
        raise CLIError(f"{option} {text!r}: the file name must end with its format, one of "
                       f"{', '.join('.' + s for s in allowed)} (e.g. {p.name or 'out'}.{example})")
    parent = p.absolute().parent
    if not parent.exists():
        raise CLIError(f"{option} {text!r}: the directory {parent} does not exist")
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise CLIError(f"{option} {text!r}: {parent} is not a writable directory")
    if p.exists() and not overwrite:
        raise CLIError(f"{option}: {p} already exists; pass --overwrite to replace it, or choose another file")
    return p


def _link_no_clobber(tmp: Path, path: Path) -> None:
    """Give `tmp` the name `path` unless `path` exists (`FileExistsError`): a hard link where the file system has them."""
    try:
        os.link(tmp, path)  # fails if path exists: never replaces a file created since the check
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK):
            raise
        if path.exists():  # no hard links here: check, then rename (a narrow window, as without the link)
            raise FileExistsError(path) from None
        os.replace(tmp, path)


def _write_output(option: str, path: Path, write: Callable[[Path], None], *, overwrite: bool) -> None:
    """Write an output file through a temporary file beside it, so a failure leaves no half-written `path`.

    Parameters
    ----------
    option : str
        The option that named the file, for the message.
    path : pathlib.Path
        The file to write, checked by `_output_file`.
    write : callable
        Called with a temporary path (same directory, same suffix) and writes the whole file there.
    overwrite : bool
        Whether `path` may be replaced; without it, a file created at `path` meanwhile is not replaced.

    Raises
    ------
    CLIError
        The write failed (a full disk, no permission) or `path` appeared meanwhile; the temporary file
        is removed and a previous `path` is left as it was.
    """
    from ..runfile._files import _os_reason

    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp{path.suffix}")
    try:
        write(tmp)
        if overwrite:
            os.replace(tmp, path)
        else:
            _link_no_clobber(tmp, path)
    except FileExistsError:
        raise CLIError(f"{option}: {path} appeared while the command ran; pass --overwrite to replace it") from None
    except OSError as exc:
        raise CLIError(f"{option}: cannot write {path}: {_os_reason(exc)}") from exc
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _parse_index(text: str | None) -> tuple[int, ...] | None:
    """`--index I[,J...]` as a tuple of ints (`None` when not given)."""
    if text is None:
        return None
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise CLIError(f"--index must be comma-separated integers, e.g. 0,1 (got {text!r})") from exc
