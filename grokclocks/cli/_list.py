"""`grokclocks list`: spec IDs with their status and the functions implementing them."""

from __future__ import annotations

import argparse

from ._common import FORMATTER, CLIError, emit


def _cmd_list(args: argparse.Namespace) -> int:
    from ..citations import PAPERS, SPEC, coverage

    if args.paper is not None and args.paper not in PAPERS:
        raise CLIError(f"unknown paper {args.paper!r} (papers: {', '.join(PAPERS)})")
    cov = coverage(args.paper)
    missing = 0
    for sid, funcs in cov.items():
        e = SPEC[sid]
        emit(f"{sid}  [{e.status}]  {e.title}")
        if funcs:
            for f in funcs:
                emit(f"    {f}")
        else:
            missing += 1
            emit("    (no implementing function)")
    emit(f"\n{len(cov)} spec IDs, {len(cov) - missing} implemented")
    return 0



def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add the `list` subcommand to `sub`, the subparsers of the `grokclocks` parser."""
    fmt = FORMATTER
    ls = sub.add_parser(
        "list", formatter_class=fmt, help="spec IDs and the functions implementing them",
        description="List the spec IDs (one paper's, or all) with their status and the grokclocks functions "
                    "implementing each.",
        epilog="papers: levi, clocks, kramers, uniformity, repulsion\n\n"
               "examples:\n"
               "  grokclocks list\n"
               "  grokclocks list kramers\n")
    ls.add_argument("paper", nargs="?", help="paper key (default: all papers)")
    ls.set_defaults(func=_cmd_list)
