"""`grokclocks compare`: a logged run against every theory."""

from __future__ import annotations

import argparse
import os
import re
import warnings
from pathlib import Path

from .._escape import json_text
from .._safe_io import excerpt
from .._validate import DomainError
from ..logs import FORMATS
from ._common import (
    FORMATTER,
    CLIError,
    _figure_files,
    _parse_index,
    _positive_float,
    _print_warnings,
    _as_option,
    _level,
    _save_figure,
    emit,
)



_BYTE_UNITS = {"": 1, "B": 1, "K": 2**10, "KB": 2**10, "KIB": 2**10, "M": 2**20, "MB": 2**20, "MIB": 2**20,
               "G": 2**30, "GB": 2**30, "GIB": 2**30}
_BYTE_COUNT = re.compile(r"([0-9]{1,15})([A-Z]*)")  # ASCII digits (no '²', no 5,000-digit int() to refuse)


def _byte_count(text: str) -> int:
    """--max-bytes: a number of bytes, plain or with a binary unit (512M = 512 MiB, 2G = 2 GiB).

    Every malformed value is an `argparse.ArgumentTypeError` with this message, never argparse's own "invalid
    _byte_count value" (which a ValueError from inside, such as int() of '²', gave)."""
    m = _BYTE_COUNT.fullmatch(text.strip().upper())
    if m is None or m.group(2) not in _BYTE_UNITS or int(m.group(1)) < 1:
        raise argparse.ArgumentTypeError(f"--max-bytes must be a positive number of bytes, optionally with a unit "
                                         f"K, M or G (KiB, MiB, GiB), e.g. 512M (got {excerpt(text)})")
    return int(m.group(1)) * _BYTE_UNITS[m.group(2)]


def _read_mask(path: str, max_bytes: int | None = None) -> object:
    """A training mask file for `--train-mask`: `.npy` (bool (p, p) or (p*p,), or integer pair indices) or a
    text file of integer indices (one or two per line, `_mask_indices`).

    Read through the log readers' safe layer: a regular file only (a FIFO or a device is refused without
    waiting), at most `max_bytes` bytes (`--max-bytes`; default that of the log readers), a `.npy` header's
    shape checked before the array is allocated, no pickles."""
    from ..logs import _safe

    limit = _safe.DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    if path.endswith(".npz"):
        raise CLIError("--train-mask must be a .npy array or a text file of indices, not an .npz archive")
    p = Path(path)
    try:
        if path.endswith(".npy"):
            with _safe.open_regular(p, limit, name=path) as f:
                return _safe.read_npy(f, path, os.fstat(f.fileno()).st_size, limit)
        text = _safe.read_text(p, limit, name=path)
    except DomainError as exc:
        raise CLIError(f"--train-mask: {exc}") from None
    return _mask_indices(text, path)


_INDEX = re.compile(r"[0-9]{1,18}")


def _mask_indices(text: str, path: str) -> object:
    """The integer indices of a `--train-mask` text file: one (a*p+b) or two (a b) per line, separated by spaces,
    tabs or commas; `#` starts a comment.  A token that is not a non-negative integer is refused with its line
    and a short escaped excerpt of it (never the file's line in full)."""
    import numpy as np

    rows: list[list[int]] = []
    for n, line in enumerate(text.splitlines(), 1):
        tokens = line.split("#", 1)[0].replace(",", " ").split()
        if not tokens:
            continue
        bad = next((t for t in tokens if not _INDEX.fullmatch(t)), None)
        if bad is not None:
            raise CLIError(f"--train-mask: {path!r} line {n}: {excerpt(bad)} is not an index (a non-negative "
                           "integer; one or two per line)")
        rows.append([int(t) for t in tokens])
    widths = {len(r) for r in rows}
    if not rows or len(widths) > 1 or widths - {1, 2}:
        raise CLIError(f"--train-mask: {path!r} holds {'no index' if not rows else 'lines of ' + ' and '.join(map(str, sorted(widths))) + ' indices'}; "
                       "give one index a*p+b per line, or two (a b)")
    a = np.asarray(rows, dtype=np.int64)
    return a[:, 0] if a.shape[1] == 1 else a





def _per_seed(masks: list, paths: list[str]) -> list:
    """One training mask per seed, from one `--train-mask` file each: each a single split."""
    import numpy as np

    out = []
    for m, path in zip(masks, paths):
        a = np.asarray(m)
        if a.ndim == 3 or (a.ndim == 2 and a.shape[0] != a.shape[1] and a.dtype == np.bool_):
            raise CLIError(f"--train-mask: {path!r} holds a stack of {a.shape[0]} masks; with one file per seed, "
                           "each file holds one seed's split (or give one stacked file alone)")
        out.append(a)
    return out


def _plot_path(args: argparse.Namespace) -> Path | None:
    """`--plot`, checked before any work: matplotlib installed, a known figure suffix, a writable new file."""
    if args.plot is None:
        return None
    return _figure_files("--plot", args.plot, overwrite=args.overwrite, inputs=args.run)[0]


def _cmd_compare(args: argparse.Namespace) -> int:
    from .._report import with_forecast
    from ..compare import compare_run, load_run
    from ..logs import parse_columns

    plot = _plot_path(args)  # before any work: no table is printed and then an error
    index = _parse_index(args.index)
    columns = parse_columns(args.columns)
    over: dict = {}
    if args.train_mask:
        masks = [_read_mask(m, args.max_bytes) for m in args.train_mask]
        over["train_mask"] = masks[0] if len(masks) == 1 else _per_seed(masks, args.train_mask)
    if args.p is not None:
        over["p"] = args.p
    if args.train_level is not None:
        over["train_level"] = args.train_level
    if args.test_level is not None:
        over["test_level"] = args.test_level
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        paths = list(args.run)
        limit = {} if args.max_bytes is None else {"max_bytes": args.max_bytes}
        limit.update(delimiter=args.delimiter, decimal=args.decimal)
        try:
            run = load_run(paths if len(paths) > 1 else paths[0], index=index, columns=columns, format=args.format,
                           **limit)
        except DomainError as exc:
            raise CLIError(_as_option(str(exc))) from exc
        cmp = with_forecast(compare_run(run, eps_cls=args.eps_cls, **over))  # compare's table and the forecast
        bib = cmp.cite(format=args.cite) if args.cite else None
    _print_warnings(caught)
    if args.json:
        out = cmp.as_json()
        if bib is not None:
            out["citations"] = bib
        emit(json_text(out))
    else:
        emit(cmp.table(markdown=args.markdown, width=0 if args.wide else None))
        if bib is not None:
            emit("\ncitations of the results used:\n")
            emit(bib)
    if plot is not None:
        written = _save_figure("--plot", cmp.plot(), plot, overwrite=args.overwrite)
        emit(f"figure written to {written}", err=True)
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
                    "arrays, MLflow (mlruns/ folders, mlflow.db), DVCLive, Sacred metrics.json, Aim, Keras "
                    "CSVLogger, W&B chart exports, key-value text logs. Several files are several seeds (files "
                    "holding one metric of a run are joined by run); a folder of run folders is one seed per "
                    "folder. Column names are matched by their words "
                    "(step/_step/global_step/epoch; train, val/eval/valid/test; acc/accuracy, loss); "
                    "--columns overrides. See docs/byor.md.",
        epilog="examples:\n"
               "  grokclocks compare metrics.csv\n"
               "  grokclocks compare runs/seed*/metrics.csv --plot run.png   # one seed per file\n"
               "  grokclocks compare wandb_history.jsonl --columns test_acc=val/accuracy\n"
               "  grokclocks compare lightning_logs/version_0/metrics.csv --json\n"
               "  grokclocks compare tb_logs/ --cite                          # TensorBoard run directory\n"
               "  grokclocks compare sweep.npz --index 0,1        # one point of an engine grid\n"
               "  grokclocks compare run.csv --train-mask mask.npy  # the split: bool (p, p), (p*p,) or indices\n"
               "  grokclocks compare s0.csv s1.csv --train-mask m0.npy m1.npy   # one split per seed\n"
               "  grokclocks compare mlruns/1234/                 # an MLflow experiment: one seed per run\n"
               "  grokclocks compare train.log                    # step 500 | train_acc 1.000 | val_acc 0.031\n"
               "  grokclocks compare export.csv --delimiter ';' --decimal ,\n")
    m.add_argument("run", nargs="+", help="the run: a log file or run directory (several = one per seed)")
    m.add_argument("--columns", metavar="NAME=COL[,...]",
                   help="which column holds a series, e.g. test_acc=val/accuracy,steps=_step")
    m.add_argument("--format", choices=FORMATS,
                   help="force a reader (default: from the content and the extension)")
    m.add_argument("--delimiter", choices=(",", ";", "tab", "|"),
                   help="the delimiter of a CSV file (default: detected from its first lines)")
    m.add_argument("--decimal", choices=(".", ","),
                   help="the decimal mark of a CSV file (default: detected; ',' only with another delimiter)")
    m.add_argument("--max-bytes", type=_byte_count, metavar="N",
                   help="the most bytes a log file may hold, or an archive's members unpack to (default 256M; "
                        "units K, M, G are binary)")
    m.add_argument("--plot", metavar="PATH",
                   help="also save a figure (accuracy and loss vs step, clocks marked); the suffix is the format "
                        "(.png, .pdf, .svg, ...); needs matplotlib (pip install \"grokclocks[plots]\")")
    m.add_argument("--overwrite", action="store_true", help="replace an existing --plot file")
    m.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    m.add_argument("--wide", action="store_true",
                   help="one line per table row, however long (default: long cells, notes and verdicts wrapped to "
                        "the terminal's width, COLUMNS first, 80 when printing to a file or a pipe)")
    m.add_argument("--json", action="store_true", help="print entries and verdicts as JSON (inf = null, state 'never')")
    m.add_argument("--cite", nargs="?", const="bibtex", choices=("bibtex", "text"),
                   help="also print the citations of every result the comparison used (default bibtex)")
    m.add_argument("--index", metavar="I[,J...]", help="grid point of an engine sweep (e.g. 0 or 0,1)")
    m.add_argument("--train-mask", metavar="FILE", nargs="+", action="extend",
                   help="training split: .npy bool (p, p) or (p*p,), or integer pair indices a*p+b (.npy or text); "
                        "one file per seed, in the order of the seeds, or one stacked .npy (n_seeds, p, p); put it "
                        "after the run files")
    m.add_argument("--p", type=int, help="the modulus p (needed to read a --train-mask given as indices)")
    m.add_argument("--train-level", type=_level("--train-level"),
                   help="train-accuracy level of t_train, in (0, 1] (default 1.0, grokclocks.task)")
    m.add_argument("--test-level", type=_level("--test-level"),
                   help="test-accuracy level of t_test, in (0, 1] (default 0.99, grokclocks.task)")
    m.add_argument("--eps-cls", type=_positive_float("--eps-cls"), default=1e-3,
                   help="training-loss level of the classifier clock (default 1e-3)")
    m.set_defaults(func=_cmd_compare)
