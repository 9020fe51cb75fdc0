"""``grokclocks forecast``: when will a logged run grok?"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

from .._escape import json_text
from .._validate import DomainError
from ._common import (
    FORMATTER,
    CLIError,
    _as_option,
    _figure_files,
    _level,
    _parse_index,
    _positive_float,
    _print_warnings,
    _save_figure,
    emit,
)

def _plot_paths(args: argparse.Namespace, n_runs: int | None) -> list[Path]:
    """The figure files of `--plot`: PATH for one run, PATH's stem with -run0, -run1, ... for several (`n_runs`
    None: PATH alone, checked before any work)."""
    if args.plot is None:
        return []
    return _figure_files("--plot", args.plot, overwrite=args.overwrite, inputs=args.run, n=n_runs)


def _forecasts_json(fcs: tuple) -> dict:
    """The forecasts as `--json` prints them: `run_names` (the run, i.e. seed, of each forecast, in order: its
    file, folder or run name, or "run 0", "run 1", ... as `grokclocks compare --json` names them) and
    `forecasts`, each `Forecast.as_json()` with its `run_name` first."""
    names = [f.run_name or f"run {i}" for i, f in enumerate(fcs)]
    return {"run_names": names, "forecasts": [{"run_name": n, **f.as_json()} for n, f in zip(names, fcs)]}


def _cmd_forecast(args: argparse.Namespace) -> int:
    from ..compare import load_run
    from ..forecast import forecast_runs
    from ..logs import parse_columns

    _plot_paths(args, None)  # before any work: a wrong --plot is told before the run is read

    over = {k: getattr(args, k) for k in ("train_level", "test_level") if getattr(args, k) is not None}
    paths = list(args.run)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        src = paths if len(paths) > 1 else paths[0]
        columns = parse_columns(args.columns)
        if args.format is not None:  # a forced reader: read here (the planned length is then unknown)
            try:
                src = load_run(src, index=_parse_index(args.index), columns=columns, format=args.format)
            except ValueError as exc:
                from ..forecast._api import _DIVERGED_MESSAGES

                if not any(k in str(exc) for k in _DIVERGED_MESSAGES):  # a non-finite value is "diverged"
                    raise
        try:
            fcs = forecast_runs(src, args.at, args.horizon, index=_parse_index(args.index), columns=columns,
                                lr=args.lr, weight_decay=args.weight_decay, optimizer=args.optimizer, **over)
        except DomainError as exc:  # the library's index=(...) in the words of the --index option typed
            raise CLIError(_as_option(str(exc))) from exc
        bib = None
        if args.cite:
            ids = list(dict.fromkeys(i for f in fcs for i in f.spec_ids))
            if ids:
                from ..citations import cite_many

                bib = cite_many(ids, format=args.cite)
    plots = _plot_paths(args, len(fcs))  # every figure file checked before anything is printed
    _print_warnings(caught)
    if args.json:
        out = _forecasts_json(fcs)
        if bib is not None:
            out["citations"] = bib
        emit(json_text(out))
    else:
        emit("\n\n".join(f.table(markdown=args.markdown) for f in fcs))
        if bib is not None:
            emit("\ncitations of the results used:\n")
            emit(bib)
    for f, path in zip(fcs, plots):
        written = _save_figure("--plot", f.plot(), path, overwrite=args.overwrite)
        emit(f"figure written to {written}", err=True)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``forecast`` subcommand."""
    m = sub.add_parser(
        "forecast", formatter_class=FORMATTER, help="forecast when a logged run will grok",
        description="Read a training run that fits its training set and is below the test level, and forecast "
                    "t_test, the step at which its test accuracy reaches the level: a point forecast, nominal "
                    "50 % and 90 % intervals, the probability of grokking by the horizon, the signals read off "
                    "the run (each with its spec ID and its share of the forecast) and the model that turned "
                    "them into the forecast (calibrated on runs of two training codes, the engine and PyTorch; see "
                    "docs/forecast.md for its measured coverage). Only records up to --at are read (an --at past "
                    "the end of the log is an error). The horizon is --horizon, else the planned length a run "
                    "file's or <log>.json sidecar states, else 10x the step (a fallback). A run that has not reached its train level, "
                    "has grokked already or has diverged gets its status and the reason instead.\n\n"
                    "Formats as for 'grokclocks compare' (CSV, JSON lines, TensorBoard, Lightning, Hugging Face "
                    "trainer_state.json, torch.save, .npz; several files = one seed each, one forecast each).",
        epilog="examples:\n"
               "  grokclocks forecast metrics.csv\n"
               "  grokclocks forecast metrics.csv --at 1200 --horizon 20000 --plot forecast.png\n"
               "  grokclocks forecast runs/seed*/metrics.csv --json\n"
               "  grokclocks forecast run.csv --lr 1e-3 --weight-decay 1 --optimizer adamw\n")
    m.add_argument("run", nargs="+", help="the run: a log file or run directory (several = one per seed)")
    m.add_argument("--at", type=float, metavar="STEP", help="issue step: read only the records up to it "
                                                            "(default: the last record)")
    m.add_argument("--horizon", type=_positive_float("--horizon"), metavar="N",
                   help="step by which P(grok) is given (default: the planned length if the file states it, "
                        "else 10x the issue step)")
    m.add_argument("--plot", metavar="PATH",
                   help="also save a figure: the curves with the forecast band; the suffix is the format (.png, .pdf, "
                        ".svg, ...); several runs: PATH's name with -run0, -run1, ... (needs matplotlib)")
    m.add_argument("--overwrite", action="store_true", help="replace existing --plot files")
    m.add_argument("--json", action="store_true", help="print the forecasts as JSON (inf/nan = null with a state), "
                                                     "each with its run_name")
    m.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    m.add_argument("--cite", nargs="?", const="bibtex", choices=("bibtex", "text"),
                   help="also print the citations of the results the forecasts lean on (default bibtex)")
    m.add_argument("--columns", metavar="NAME=COL[,...]",
                   help="which column holds a series, e.g. test_acc=val/accuracy,steps=_step")
    m.add_argument("--format", choices=("csv", "tsv", "jsonl", "json", "tensorboard", "torch", "npz", "npy"),
                   help="force a reader (default: from the content and the extension)")
    m.add_argument("--index", metavar="I[,J...]", help="grid point of an engine sweep (e.g. 0 or 0,1)")
    m.add_argument("--train-level", type=_level("--train-level"), help="train-accuracy level of t_train, in (0, 1] "
                                                                         "(default 1.0)")
    m.add_argument("--test-level", type=_level("--test-level"), help="test-accuracy level of t_test, in (0, 1] "
                                                                      "(default 0.99)")
    m.add_argument("--lr", type=_positive_float("--lr"), help="learning rate (with --weight-decay and --optimizer: "
                                                             "decoupled weight decay's rate lr x wd)")
    m.add_argument("--weight-decay", type=float, help="weight decay, in the optimizer's convention")
    m.add_argument("--optimizer", choices=("adamw", "sgd", "adam", "other"),
                   help="optimizer (adamw and plain sgd shrink the weights at lr x wd per step; for SGD with momentum "
                        "or Adam with coupled L2 the rate is unknown: give adam or other)")
    m.set_defaults(func=_cmd_forecast)
