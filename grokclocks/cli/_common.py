"""Shared pieces of the `grokclocks` command: its output, the one-line error, warnings on stderr, number
arguments, output files."""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from .. import _validate as V
from .._escape import terminal_text
from .._safe_io import excerpt
from .._safe_write import Writer, os_reason
from .._validate import DomainError

FORMATTER = argparse.RawDescriptionHelpFormatter


class CLIError(Exception):
    """An error of the command line, reported as one line (`grokclocks: error: ...`) with exit status 2."""


CLOSED_STDOUT = ("standard output is closed (started with >&-): nothing can be printed; redirect it to a file or "
                 "to /dev/null instead")


def emit(text: str = "", *, err: bool = False, flush: bool = False) -> None:
    """Print `text` and a newline on stdout (on stderr with `err`): the command's one door to the terminal.

    Every line the command prints goes through here.  The text's control characters (ESC and the rest of C0
    and C1, DEL) and the Unicode characters that reorder or hide text are shown as visible escapes
    (`grokclocks._escape.terminal_text`); newlines are kept: the renderers escape the newlines of the names
    they put in a line.  A character the stream's encoding cannot write (a run named `séed` on a terminal
    of `LANG=C`) is shown as its escape (`\\xe9`), never an encoding error.  A stdout closed by the caller
    (`>&-`) is a `CLIError`; a full device is one too.
    """
    stream = sys.stderr if err else sys.stdout
    if stream is None:  # the interpreter started with that descriptor closed
        if err:
            return  # nowhere to report anything
        raise CLIError(CLOSED_STDOUT)
    line = terminal_text(text, newlines=True) + "\n"
    try:
        try:
            stream.write(line)
        except UnicodeEncodeError:  # a terminal that cannot show a name's letters (LANG=C, PYTHONIOENCODING=ascii)
            encoding = getattr(stream, "encoding", None) or "ascii"
            stream.write(line.encode(encoding, "backslashreplace").decode(encoding))
        if flush:
            stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        if err:
            return
        raise CLIError(f"cannot write to standard output: {os_reason(exc)}") from None


def error_line(message: Any) -> str:
    """`message` on one line: newlines and control characters shown as escapes (`terminal_text`)."""
    return terminal_text(str(message))


def _one_line_error(parser: argparse.ArgumentParser) -> Callable[[str], None]:
    """An `error` method for `parser` that prints one line and exits with status 2 (no usage block)."""

    def error(message: str) -> None:
        emit(f"grokclocks {parser.prog.split()[-1]}: error: {error_line(message)}", err=True)
        raise SystemExit(2)

    return error


def _print_warnings(caught: Sequence[warnings.WarningMessage]) -> None:
    """Print each distinct warning once on stderr as `grokclocks: warning: ...` (one line each)."""
    seen = []
    for w in caught:
        msg = str(w.message)
        if msg not in seen:
            seen.append(msg)
            emit(f"grokclocks: warning: {error_line(msg)}", err=True)


def _positive_float(name: str) -> Callable[[str], float]:
    """An argparse `type` for option `name`: a number > 0, checked by the library's own validation."""

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number (got {excerpt(text)})") from None
        try:
            return float(V.positive(x, name))  # the library's own validation and message
        except DomainError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _level(name: str) -> Callable[[str], float]:
    """An argparse `type` for an accuracy level option `name` (`--train-level`, `--test-level`): a number in (0, 1].

    Checked here, where the option is read: a NaN level reached the forecast as a "non-finite value" and was
    reported as a diverged run."""

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an accuracy level in (0, 1] (got {excerpt(text)})") from None
        if not 0.0 < x <= 1.0:  # NaN fails too
            raise argparse.ArgumentTypeError(f"{name} must be an accuracy level in (0, 1] (got {excerpt(text)})")
        return x

    return parse


WRITER = Writer(CLIError, CLIError, "pass --overwrite to replace it")
"""The command's writer (`grokclocks._safe_write`): every refusal a `CLIError` naming the option."""


def _output_file(option: str, text: str, *, overwrite: bool, suffixes: Iterable[str] = (),
                 inputs: Iterable[str] = ()) -> Path:
    """An output file named on the command line, checked before any work starts (by the one writer's rules).

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
        A symbolic link (dangling or not, also with `overwrite`), a directory, a FIFO or a device, no
        accepted suffix, a missing or unwritable directory, an existing file without `overwrite`, or one
        of the inputs.
    """
    p = Path(text).expanduser()
    if os.path.exists(p) and any(p.resolve() == Path(i).expanduser().resolve() for i in inputs):
        raise CLIError(f"{option} {error_line(text)!r} is one of the files being read; choose another file")
    try:
        return WRITER.check(p, name=option, overwrite=overwrite, suffixes=suffixes)
    except DomainError as exc:  # a path naming no file ("", ".")
        raise CLIError(str(exc)) from None


def _figure_files(option: str, text: str, *, overwrite: bool, inputs: Iterable[str], n: int | None = None) -> list[Path]:
    """The figure files an option such as `--plot PATH` names, checked before they are drawn (`_output_file`).

    `n` None or 1: PATH alone; `n` > 1 (one figure per run): PATH's stem with -run0, -run1, ... and its suffix.
    The suffix must be a format matplotlib writes; without matplotlib, a `CLIError` says how to install it."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise CLIError(f'{option} needs matplotlib, which is not installed: pip install "grokclocks[plots]"') from None
    formats = FigureCanvasBase.get_supported_filetypes()
    target = Path(text).expanduser()
    names = [target] if n in (None, 1) else [target.with_name(f"{target.stem}-run{k}{target.suffix}")
                                             for k in range(n)]
    return [_output_file(option, str(p), overwrite=overwrite, suffixes=formats, inputs=inputs) for p in names]


def _save_figure(option: str, fig: Any, path: Path, *, overwrite: bool) -> Path:
    """Save the matplotlib figure `fig` as `path` through the one writer; the path written.

    The format is the suffix's; the file is written to a temporary file beside `path` and put in place in
    one step, never through a link, and without `overwrite` never over a file (one created while the figure
    was drawn included).  A failure (a full disk, no permission) is a `CLIError` naming the file; the
    previous file is left as it was and no temporary file remains.
    """
    return WRITER.save_figure(fig, path, name=option, overwrite=overwrite)


def _index_text(inner: str) -> str:
    """`(0, 1)`'s inside, `0, 1` or `0,`, as the user types it for `--index`: `0,1`."""
    return ",".join(x.strip() for x in inner.split(",") if x.strip())


def _as_option(message: str) -> str:
    """A library message about the `index` argument, reworded for the `--index` option the user typed."""
    message = re.sub(r"index=\(\.\.\.\) \(e\.g\. index=\(([^)]*)\)\)",
                     lambda m: f"--index I[,J...] (e.g. --index {_index_text(m.group(1))})", message)
    message = re.sub(r"index must be None \(got \(([^)]*)\)\)",
                     lambda m: f"leave out --index (got --index {_index_text(m.group(1))})", message)
    message = re.sub(r"(?<![-\w])index must be (.*) \(got \(([^)]*)\)\)",
                     lambda m: f"--index must be {m.group(1)} (got --index {_index_text(m.group(2))})", message)
    return message


def _parse_index(text: str | None) -> tuple[int, ...] | None:
    """`--index I[,J...]` as a tuple of ints (`None` when not given)."""
    if text is None:
        return None
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise CLIError(f"--index must be comma-separated integers, e.g. 0,1 (got {text!r})") from exc
