"""`grokclocks compare`: a logged run against every theory."""

from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from pathlib import Path

from .._validate import DomainError
from ._common import (
    FORMATTER,
    CLIError,
    _output_file,
    _positive_float,
    _print_warnings,
    _write_output,
)

_PLOTS_EXTRA = 'pip install "grokclocks[plots]"'


def _parse_index(text: str | None) -> tuple[int, ...] | None:
    """`--index I[,J...]` as a tuple of ints (`None` when not given)."""
    if text is None:
        return None
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise CLIError(f"--index must be comma-separated integers, e.g. 0,1 (got {text!r})") from exc


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


def _read_mask(path: str) -> object:
    """A training mask file for `--train-mask`: `.npy` (bool (p, p) or (p*p,), or integer pair indices) or a
    text file of integer indices (one or two per line)."""
    import numpy as np

    try:
        if path.endswith(".npy"):
            m = np.load(path, allow_pickle=False)
        elif path.endswith(".npz"):
            raise CLIError("--train-mask must be a .npy array or a text file of indices, not an .npz archive")
        else:
            m = np.loadtxt(path, dtype=np.int64, ndmin=1, delimiter=None)
    except (OSError, ValueError) as exc:
        raise CLIError(f"--train-mask: cannot read {path!r} ({' '.join(str(exc).split())[:160]})") from exc
    return m


def _plot_path(args: argparse.Namespace) -> Path | None:
    """`--plot`, checked before any work: matplotlib installed, a known figure suffix, a writable new file."""
    if args.plot is None:
        return None
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise CLIError(f"--plot needs matplotlib, which is not installed: {_PLOTS_EXTRA}") from None
    formats = FigureCanvasBase.get_supported_filetypes()
    return _output_file("--plot", args.plot, overwrite=args.overwrite, suffixes=formats, inputs=args.run)


def _cmd_compare(args: argparse.Namespace) -> int:
    from ..compare import compare_run, load_run
    from ..logs import parse_columns

    plot = _plot_path(args)  # before any work: no table is printed and then an error
    index = _parse_index(args.index)
    columns = parse_columns(args.columns)
    over: dict = {}
    if args.train_mask is not None:
        over["train_mask"] = _read_mask(args.train_mask)
    if args.p is not None:
        over["p"] = args.p
    if args.train_level is not None:
        over["train_level"] = args.train_level
    if args.test_level is not None:
        over["test_level"] = args.test_level
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        paths = list(args.run)
        try:
            run = load_run(paths if len(paths) > 1 else paths[0], index=index, columns=columns, format=args.format)
        except DomainError as exc:
            raise CLIError(_as_option(str(exc))) from exc
        cmp = compare_run(run, eps_cls=args.eps_cls, **over)
        bib = cmp.cite(format=args.cite) if args.cite else None
    _print_warnings(caught)
    if args.json:
        out = cmp.as_json()
        if bib is not None:
            out["citations"] = bib
        print(json.dumps(out, indent=1))
    else:
        print(cmp.table(markdown=args.markdown))
        if bib is not None:
            print("\ncitations of the results used:\n")
            print(bib)
    if plot is not None:
        _write_output("--plot", plot, cmp.plot, overwrite=args.overwrite)
        print(f"figure written to {plot}", file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add the `compare` subcommand to `sub`, the subparsers of the `grokclocks` parser."""
    fmt = FORMATTER
    m = sub.add_parser(
        "compare", formatter_class=fmt, help="compare a logged training run with every theory",
        description="Read a training run and print what each theory predicts or measures for it: the "
                    "linear estimator's lambda and delay, the classifier and representation clocks, the "
                    "Arrhenius barrier and the seed spread, the exact accuracy ceiling of the split, the "
                    "lock-in detector; then one verdict per theory (consistent / inconsistent / cannot tell, "
                    "with the deciding number, its band and spec ID). Quantities a theory does not cover are "
                    "'n/a' with the reason.\n\n"
                    "Formats (by content and extension): CSV / TSV (Lightning's metrics.csv too), JSON lines "
                    "(W&B history), trainer_state.json (Hugging Face), TensorBoard event files or run "
                    "directories, torch.save dicts, .npz (a user file or an engine run), .npy structured "
                    "arrays. Several files are several seeds. Column names are matched by their words "
                    "(step/_step/global_step/epoch; train, val/eval/valid/test; acc/accuracy, loss); "
                    "--columns overrides. See docs/byor.md.",
        epilog="examples:\n"
               "  grokclocks compare metrics.csv\n"
               "  grokclocks compare runs/seed*/metrics.csv --plot run.png   # one seed per file\n"
               "  grokclocks compare wandb_history.jsonl --columns test_acc=val/accuracy\n"
               "  grokclocks compare lightning_logs/version_0/metrics.csv --json\n"
               "  grokclocks compare tb_logs/ --cite                          # TensorBoard run directory\n"
               "  grokclocks compare sweep.npz --index 0,1        # one point of an engine grid\n"
               "  grokclocks compare run.csv --train-mask mask.npy  # the split: bool (p, p), (p*p,) or indices\n")
    m.add_argument("run", nargs="+", help="the run: a log file or run directory (several = one per seed)")
    m.add_argument("--columns", metavar="NAME=COL[,...]",
                   help="which column holds a series, e.g. test_acc=val/accuracy,steps=_step")
    m.add_argument("--format", choices=("csv", "tsv", "jsonl", "json", "tensorboard", "torch", "npz", "npy"),
                   help="force a reader (default: from the content and the extension)")
    m.add_argument("--plot", metavar="PATH",
                   help="also save a figure (accuracy and loss vs step, clocks marked); the suffix is the format "
                        "(.png, .pdf, .svg, ...); needs matplotlib (pip install \"grokclocks[plots]\")")
    m.add_argument("--overwrite", action="store_true", help="replace an existing --plot file")
    m.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    m.add_argument("--json", action="store_true", help="print entries and verdicts as JSON (inf = null, state 'never')")
    m.add_argument("--cite", nargs="?", const="bibtex", choices=("bibtex", "text"),
                   help="also print the citations of every result the comparison used (default bibtex)")
    m.add_argument("--index", metavar="I[,J...]", help="grid point of an engine sweep (e.g. 0 or 0,1)")
    m.add_argument("--train-mask", metavar="FILE",
                   help="training split: .npy bool (p, p) or (p*p,), or integer pair indices a*p+b (.npy or text)")
    m.add_argument("--p", type=int, help="the modulus p (needed to read a --train-mask given as indices)")
    m.add_argument("--train-level", type=float, help="train-accuracy level of t_train (default 1.0, grokclocks.task)")
    m.add_argument("--test-level", type=float, help="test-accuracy level of t_test (default 0.99, grokclocks.task)")
    m.add_argument("--eps-cls", type=_positive_float("--eps-cls"), default=1e-3,
                   help="training-loss level of the classifier clock (default 1e-3)")
    m.set_defaults(func=_cmd_compare)
