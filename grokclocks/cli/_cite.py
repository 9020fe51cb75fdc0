"""`grokclocks cite`: BibTeX or one-line citations of functions, spec IDs or paper keys; with `--latex`, the
equations too (from `grokclocks.symbolic`, numbered as in the papers)."""

from __future__ import annotations

import argparse
import warnings

from ._common import FORMATTER, CLIError, _print_warnings


def _equations(targets: list[str]) -> str:
    """The LaTeX of every formula of `targets`, each once, in the order asked (sympy is imported here only)."""
    from ..symbolic import formula_records, latex

    keys: list[str] = []
    for target in targets:
        try:
            records = formula_records(target)
        except KeyError as exc:
            raise CLIError(f"--latex: {exc.args[0] if exc.args else exc}; cite it without --latex") from exc
        keys += [f.key for f in records if f.key not in keys]
    return "\n\n".join(latex(k) for k in keys)


def _cmd_cite(args: argparse.Namespace) -> int:
    from ..citations import cite_many

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            citation = cite_many(args.targets, format=args.format)
        except KeyError as exc:
            raise CLIError(str(exc.args[0]) if exc.args else str(exc)) from exc
        if args.latex:
            print(_equations(args.targets) + "\n")
        print(citation)
    _print_warnings(caught)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add the `cite` subcommand to `sub`, the subparsers of the `grokclocks` parser."""
    fmt = FORMATTER
    c = sub.add_parser(
        "cite", formatter_class=fmt, help="citation of functions or spec IDs",
        description="Print the BibTeX (or one text line per paper) of the papers behind grokclocks functions, "
                    "spec IDs or paper keys; each paper once, however many targets cite it. An entry whose "
                    "source states no author says so and prints a warning on stderr. With --latex, the "
                    "equations first: each a LaTeX equation environment numbered as in the paper (\\tag), "
                    "generated from grokclocks.symbolic (the form the library implements, errata applied).",
        epilog="examples:\n"
               "  grokclocks cite grokclocks.linear.grok_time\n"
               "  grokclocks cite linear.grok_time --format text\n"
               "  grokclocks cite mp_edges grok_time levi:eq11   # bare names and IDs, several at once\n"
               "  grokclocks cite grokclocks.compare.compare_run  # every result compare uses\n"
               "  grokclocks cite kramers            # a paper key\n"
               "  grokclocks cite grok_time_asymptotic --latex   # eq. (11) in LaTeX, then the BibTeX\n")
    c.add_argument("targets", nargs="+", metavar="target",
                   help="function (grokclocks.linear.grok_time, linear.grok_time or grok_time), spec ID "
                        "(levi:eq11) or paper key")
    c.add_argument("--format", choices=("bibtex", "text"), default="bibtex", help="output format (default bibtex)")
    c.add_argument("--latex", action="store_true",
                   help="print the equations of the targets in LaTeX (amsmath) before the citation; a target "
                        "with no closed form (one computed by root finding or simulation) is an error")
    c.set_defaults(func=_cmd_cite)
