"""The `grokclocks` command: verify the theories, cite them, predict a grokking time, compare a run.

Subcommands (`grokclocks <command> --help` for each):

`verify`
    run `pytest verify` (theorem vs simulation) in a source checkout and write the certificate;
`cite`
    BibTeX or one-line citations of functions, bare function names or spec IDs (several at once);
`time`
    grokking time of the linear estimator (Levi et al.), `grokclocks.linear.grok_time`;
`compare`
    a logged run (CSV, JSON lines, TensorBoard, Lightning, Hugging Face, torch.save, .npz; several files =
    seeds) against every theory, with a verdict per theory, `grokclocks.compare.compare_run`;
`list`
    spec IDs with their status and the functions implementing them.

Errors print one line (`grokclocks: error: ...`) and exit with status 2, never a traceback: invalid
arguments, unreadable inputs, output files that cannot be written (the message names the file), and an
input that needs more memory than the process may use.  Every warning raised while a command runs is one
line too (`grokclocks: warning: ...`), its control characters shown as escapes, never Python's two-line
`file:line: Category: message` form.
Output closed early by the reader (`grokclocks cite ... | head`) ends the command quietly with status
141, as a program stopped by SIGPIPE; Ctrl-C ends it with status 130.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings
from collections.abc import Sequence

from .._safe_write import os_reason as _os_reason
from .._validate import DomainError
from . import _cite, _compare, _forecast, _list, _time, _verify
from ._common import CLOSED_STDOUT, FORMATTER, CLIError, _one_line_error, emit, error_line
from ._verify import VERIFY_SUITES, verify_command

__all__ = ["main", "build_parser", "VERIFY_SUITES", "verify_command"]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


_EPILOG_MAIN = """\
examples:
  grokclocks verify --only levi,clocks          # theorem-vs-simulation checks of two papers (CPU scale)
  grokclocks verify --scale gpu --report-dir out # every paper at GPU scale, certificate in out/
  grokclocks cite grokclocks.linear.grok_time    # BibTeX of the paper behind a function
  grokclocks cite levi:eq11 --format text        # one-line citation of a spec result
  grokclocks time --lam 0.5 --eps 1e-3           # linear-estimator grokking time (GD steps)
  grokclocks compare metrics.csv --plot run.png  # a logged run against all five theories
  grokclocks compare runs/seed*/metrics.csv     # one seed per file, a verdict per theory
  grokclocks list clocks                         # spec IDs of one paper and their functions

Every command accepts --help.  Errors print one line and exit with status 2.
"""



def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `grokclocks` command, with every subcommand.

    Returns
    -------
    argparse.ArgumentParser
        The parser; each subcommand sets `func`, the function that runs it.
    """
    p = argparse.ArgumentParser(
        prog="grokclocks", formatter_class=FORMATTER,
        description="Executable grokking theory: closed-form predictions of when a network groks, from five "
                    "papers, each checked against training runs.",
        epilog=_EPILOG_MAIN)
    from .. import __version__

    p.add_argument("--version", action="version", version=f"grokclocks {__version__}")
    sub = p.add_subparsers(dest="command", metavar="command")
    sub.required = True
    for command in (_verify, _cite, _time, _compare, _forecast, _list):
        command.add_parser(sub)
    for command_parser in sub.choices.values():  # a bad argument of a command is one line, not the usage block
        command_parser.error = _one_line_error(command_parser)  # type: ignore[method-assign]
    return p


def _quiet_stdout() -> None:
    """Make the interpreter's last flush of a closed pipe fail no more: point the stdout descriptor at
    /dev/null (`os.dup2`), where what is still buffered goes; no file is created."""
    out = sys.stdout
    if out is None:
        return
    try:
        fd = out.fileno()
    except (OSError, ValueError, AttributeError):  # a stdout without a file descriptor (captured in tests)
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except OSError:  # pragma: no cover
        pass


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    if sys.stdout is None:  # before any work: a plot is not written for a table that cannot be printed
        emit(f"grokclocks: error: {CLOSED_STDOUT}", err=True)
        return 2
    args = parser.parse_args(argv)
    if getattr(args, "command", None) == "time" and args.level is None:
        from ..linear import ERF_SQRT2

        args.level = ERF_SQRT2
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning  # every warning of the command through the door to the terminal
            status = int(args.func(args))
        try:
            sys.stdout.flush()  # here, not at exit: a closed pipe is reported by the handler in main
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise CLIError(f"cannot write to standard output: {_os_reason(exc)}") from None
        return status
    except (CLIError, DomainError) as exc:
        emit(f"grokclocks: error: {error_line(exc)}", err=True)
        return 2
    except (ValueError, KeyError) as exc:  # remaining argument errors from the library
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        emit(f"grokclocks: error: {error_line(msg)}", err=True)
        return 2


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: object = None, line: str | None = None) -> None:
    """`warnings.showwarning` while a command runs: one line on stderr through `emit`, the message escaped."""
    emit(f"grokclocks: warning: {error_line(message)}", err=True)


_OUT_OF_MEMORY = ("out of memory: the input needs more memory than this process may use (a text log takes up to "
                  "about 20 times its size while it is parsed, a table of numbers about 3 times); lower --max-bytes "
                  "to refuse such files at once, or read the run on a machine with more memory")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `grokclocks` command.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name.  Default `None`: `sys.argv[1:]`.

    Returns
    -------
    int
        The exit status: 0 on success, 2 for an error (printed as one line on stderr; an input too large
        for the memory is one too), 141 when the reader of stdout closed it early, 130 on Ctrl-C; `verify`
        returns pytest's status.
    """
    try:
        return _run(argv)
    except BrokenPipeError:  # `grokclocks cite ... | head`: the reader has all it wanted
        _quiet_stdout()
        return 128 + int(getattr(signal, "SIGPIPE", 13))
    except KeyboardInterrupt:
        emit("grokclocks: interrupted", err=True)
        return 130
    except MemoryError:  # the stack is unwound, what it held is freed: one line, not a traceback
        emit(f"grokclocks: error: {_OUT_OF_MEMORY}", err=True)
        return 2
    except OSError as exc:  # an output (or input) file the system refused: one line naming it
        where = f"{exc.filename}: " if exc.filename else ""
        emit(f"grokclocks: error: {error_line(where)}{_os_reason(exc)}", err=True)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
