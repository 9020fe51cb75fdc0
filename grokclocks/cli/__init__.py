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
arguments, unreadable inputs, and output files that cannot be written (the message names the file).
Output closed early by the reader (`grokclocks cite ... | head`) ends the command quietly with status
141, as a program stopped by SIGPIPE; Ctrl-C ends it with status 130.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence

from .._validate import DomainError
from . import _cite, _compare, _forecast, _list, _time, _verify
from ._common import FORMATTER, CLIError
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
    return p


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of a closed pipe fails no more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # a stdout without a file descriptor (captured in tests)
        pass


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "command", None) == "time" and args.level is None:
        from ..linear import ERF_SQRT2

        args.level = ERF_SQRT2
    try:
        status = int(args.func(args))
        sys.stdout.flush()  # here, not at exit: a closed pipe is reported by the handler in main
        return status
    except (CLIError, DomainError) as exc:
        print(f"grokclocks: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, KeyError) as exc:  # remaining argument errors from the library
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"grokclocks: error: {msg}", file=sys.stderr)
        return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `grokclocks` command.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name.  Default `None`: `sys.argv[1:]`.

    Returns
    -------
    int
        The exit status: 0 on success, 2 for an error (printed as one line on stderr), 141 when the
        reader of stdout closed it early, 130 on Ctrl-C; `verify` returns pytest's status.
    """
    from ..runfile._files import _os_reason

    try:
        return _run(argv)
    except BrokenPipeError:  # `grokclocks cite ... | head`: the reader has all it wanted
        _stdout_to_devnull()
        return 128 + int(getattr(signal, "SIGPIPE", 13))
    except KeyboardInterrupt:
        print("grokclocks: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # an output (or input) file the system refused: one line naming it
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"grokclocks: error: {where}{_os_reason(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
