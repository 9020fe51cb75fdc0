"""`grokclocks cite`: BibTeX or one-line citations of functions, spec IDs or paper keys."""

from __future__ import annotations

import argparse
import warnings

from ._common import FORMATTER, CLIError, _print_warnings


def _cmd_cite(args: argparse.Namespace) -> int:
    from ..citations import cite_many

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            print(cite_many(args.targets, format=args.format))
        except KeyError as exc:
            raise CLIError(str(exc.args[0]) if exc.args else str(exc)) from exc
    _print_warnings(caught)
    return 0



def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add the `cite` subcommand to `sub`, the subparsers of the `grokclocks` parser."""
    fmt = FORMATTER
    c = sub.add_parser(
        "cite", formatter_class=fmt, help="citation of functions or spec IDs",
        description="Print the BibTeX (or one text line per paper) of the papers behind grokclocks functions, "
                    "spec IDs or paper keys; each paper once, however many targets cite it. An entry whose "
                    "source states no author says so and prints a warning on stderr.",
        epilog="examples:\n"
               "  grokclocks cite grokclocks.linear.grok_time\n"
               "  grokclocks cite linear.grok_time --format text\n"
               "  grokclocks cite mp_edges grok_time levi:eq11   # bare names and IDs, several at once\n"
               "  grokclocks cite grokclocks.compare.compare_run  # every result compare uses\n"
               "  grokclocks cite kramers            # a paper key\n")
    c.add_argument("targets", nargs="+", metavar="target",
                   help="function (grokclocks.linear.grok_time, linear.grok_time or grok_time), spec ID "
                        "(levi:eq11) or paper key")
    c.add_argument("--format", choices=("bibtex", "text"), default="bibtex", help="output format (default bibtex)")
    c.set_defaults(func=_cmd_cite)
