"""The ``grokclocks`` command: verify the theories, cite them, predict a grokking time, compare a run.

Subcommands (``grokclocks <command> --help`` for each):

``verify``
    run ``pytest verify`` (theorem vs simulation) in a source checkout and write the certificate;
``cite``
    BibTeX or one-line citations of functions, bare function names or spec IDs (several at once);
``time``
    grokking time of the linear estimator (Levi et al.), :func:`grokclocks.linear.grok_time`;
``compare``
    a logged run (CSV, JSON lines, TensorBoard, Lightning, Hugging Face, torch.save, .npz; several files =
    seeds) against every theory, with a verdict per theory, :func:`grokclocks.compare.compare_run`;
``list``
    spec IDs with their status and the functions implementing them.

Errors print one line (``grokclocks: error: ...``) and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from . import _validate as V
from ._validate import DomainError

__all__ = ["main", "build_parser", "VERIFY_SUITES", "verify_command"]

# verify/ subdirectories run by default: the five papers, the engine's canonical grokking, compare
VERIFY_SUITES: tuple[str, ...] = ("levi", "clocks", "kramers", "uniformity", "repulsion", "modular", "compare")
_SUITE_ALIASES = {"coverage": "uniformity", "engine": "modular", "linear": "levi", "tian": "repulsion"}


class CLIError(Exception):
    """An error reported as one line with exit status 2."""


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


def _repo_root() -> Path:
    """The source checkout holding ``verify/`` next to the package, or a :class:`CLIError`."""
    import grokclocks

    root = Path(grokclocks.__file__).resolve().parent.parent
    if not (root / "verify" / "conftest.py").is_file():
        raise CLIError(f"'grokclocks verify' needs a source checkout: no verify/conftest.py under {root} "
                       "(clone the repository and install it with 'pip install -e .[test]')")
    return root


def _suites(only: str | None, root: Path) -> list[str]:
    available = sorted(d.name for d in (root / "verify").iterdir()
                       if d.is_dir() and any(d.glob("test_*.py")))
    if only is None:
        return [s for s in VERIFY_SUITES if s in available]
    chosen: list[str] = []
    for raw in only.split(","):
        name = raw.strip()
        if not name:
            continue
        name = _SUITE_ALIASES.get(name, name)
        if name not in available:
            raise CLIError(f"--only: unknown suite {raw.strip()!r} (available: {', '.join(available)})")
        if name not in chosen:
            chosen.append(name)
    if not chosen:
        raise CLIError("--only needs at least one suite name")
    return chosen


def _report_dir(text: str) -> Path:
    """``--report-dir``: created if missing; one-line error if it is a file or cannot be written."""
    p = Path(text).expanduser()
    if p.exists() and not p.is_dir():
        raise CLIError(f"--report-dir {text!r} exists and is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CLIError(f"--report-dir {text!r} cannot be created ({exc.strerror or exc})") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise CLIError(f"--report-dir {text!r} is not writable")
    return p.resolve()


def verify_command(scale: str = "cpu", only: str | None = None, report_dir: str | None = None,
                   extra: Sequence[str] = (), shard: str | None = None) -> tuple[list[str], Path]:
    """The pytest command line of ``grokclocks verify`` and the directory to run it in."""
    from .verification import parse_shard

    root = _repo_root()
    paths = [f"verify/{s}" for s in _suites(only, root)]
    cmd = [sys.executable, "-m", "pytest", *paths, "--scale", scale]
    if report_dir is not None:
        cmd += ["--report-dir", str(_report_dir(report_dir))]
    if shard is not None:
        try:
            k, n = parse_shard(shard)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        cmd += ["--shard", f"{k}/{n}"]
    cmd += list(extra)
    return cmd, root


def _certificate_files(report_dir: str | None, scale: str, root: Path, shard: str | None = None) -> tuple[Path, Path]:
    """The certificate files a verify run (or a merge) writes: ``--report-dir``, else the plugin's default in the
    checkout; a slice of ``--shard K/N`` writes ``verify-<scale>-shard-K-of-N.*``."""
    from .verification import parse_shard

    d = Path(report_dir) if report_dir is not None else root / os.environ.get("GROKCLOCKS_REPORT_DIR", ".verify")
    stem = f"verify-{scale}"
    if shard is not None:
        k, n = parse_shard(shard)
        stem += f"-shard-{k}-of-{n}"
    return d / f"{stem}.json", d / f"{stem}.md"


def _check_certificate_files(files: Sequence[Path], overwrite: bool) -> None:
    """An existing certificate is replaced only with ``--overwrite`` (checked before any work starts)."""
    for f in files:
        try:
            V.writable_file(f, "--report-dir", overwrite=overwrite)
        except V.OutputExistsError:
            raise CLIError(f"--report-dir: {f} already exists; pass --overwrite to replace the certificate, "
                           "or choose another --report-dir") from None


def _cmd_merge(args: argparse.Namespace) -> int:
    from .verification import CertificateError, merge_certificates, write_certificate

    try:
        cert = merge_certificates(args.merge)
    except CertificateError as exc:
        raise CLIError(str(exc)) from None
    out = _report_dir(args.report_dir or ".verify")
    scale = cert["meta"]["scale"]
    _check_certificate_files(_certificate_files(str(out), scale, Path.cwd()), args.overwrite)
    js, md = write_certificate(cert, out, overwrite=args.overwrite)  # checked before the merge above
    m = cert["meta"]
    print(f"merged {len(m['merged_from'])} slices: {m['n_rows']} rows, {m['n_failed']} failed, "
          f"{len(cert['tests'])} tests, {m['duration_s']:.0f} s; certificate written to {md} and {js}")
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    if args.merge:
        if args.shard or args.only or args.pytest_args or args.dry_run:
            raise CLIError("--merge combines certificates and runs nothing: it takes only --report-dir and --overwrite")
        return _cmd_merge(args)
    cmd, root = verify_command(args.scale, args.only, args.report_dir, args.pytest_args, args.shard)
    if args.dry_run:
        print(f"cd {root} && " + " ".join(cmd))
        return 0
    _check_certificate_files(_certificate_files(args.report_dir, args.scale, root, args.shard), args.overwrite)
    env = dict(os.environ)
    if args.scale == "gpu":
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # one process per GPU, allocate on demand
    return subprocess.call(cmd, cwd=root, env=env)


def _one_line_error(parser: argparse.ArgumentParser):
    def error(message: str):
        print(f"grokclocks {parser.prog.split()[-1]}: error: {message}", file=sys.stderr)
        raise SystemExit(2)

    return error


def _print_warnings(caught: Sequence[warnings.WarningMessage]) -> None:
    seen = []
    for w in caught:
        msg = str(w.message)
        if msg not in seen:
            seen.append(msg)
            print(f"grokclocks: warning: {msg}", file=sys.stderr)


def _cmd_cite(args: argparse.Namespace) -> int:
    from .citations import cite_many

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            print(cite_many(args.targets, format=args.format))
        except KeyError as exc:
            raise CLIError(str(exc.args[0]) if exc.args else str(exc)) from exc
    _print_warnings(caught)
    return 0


def _cmd_time(args: argparse.Namespace) -> int:
    from .linear import grok_time, t_star

    kw = dict(d_out=args.d_out, gamma=args.gamma, level=args.level)
    t_tr = float(t_star("train", args.lam, args.eps, args.eta, **kw))
    t_gen = float(t_star("gen", args.lam, args.eps, args.eta, **kw))
    dt = float(grok_time(args.lam, args.eps, args.eta, **kw))
    if args.json:
        js = lambda x: x if math.isfinite(x) else repr(x)  # noqa: E731
        print(json.dumps(dict(lam=args.lam, eps=args.eps, eta0=args.eta, d_out=args.d_out, gamma=args.gamma,
                              level=args.level, t_train=js(t_tr), t_gen=js(t_gen), grok_time=js(dt))))
        return 0
    def fmt(x: float) -> str:
        if math.isnan(x):
            return "undefined (neither accuracy reaches the level)"
        if math.isinf(x):
            return "never (the accuracy stays below the level)"
        return f"{x:.6g} GD steps"

    print(f"linear estimator (Levi et al.): lambda={args.lam:g}, eps={args.eps:g}, eta0={args.eta:g}, "
          f"d_out={args.d_out}, gamma={args.gamma:g}, accuracy level={args.level:.6g}")
    print(f"  train accuracy reaches the level at t = {fmt(t_tr)}")
    print(f"  test accuracy reaches the level at  t = {fmt(t_gen)}")
    print(f"  grokking time Delta t = {fmt(dt)}   [grokclocks.linear.grok_time, spec levi:grok-def]")
    return 0


def _parse_index(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise CLIError(f"--index must be comma-separated integers, e.g. 0,1 (got {text!r})") from exc


def _read_mask(path: str) -> object:
    """A training mask file for --train-mask: .npy (bool (p, p) / (p*p,) or integer pair indices) or a text
    file of integer indices (one or two per line)."""
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


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import compare_run, load_run
    from .logs import parse_columns

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
        run = load_run(paths if len(paths) > 1 else paths[0], index=_parse_index(args.index),
                       columns=parse_columns(args.columns), format=args.format)
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
    if args.plot:
        try:
            cmp.plot(args.plot)
        except ImportError as exc:
            raise CLIError(str(exc)) from exc
        print(f"figure written to {args.plot}", file=sys.stderr)
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from .citations import PAPERS, SPEC, coverage

    if args.paper is not None and args.paper not in PAPERS:
        raise CLIError(f"unknown paper {args.paper!r} (papers: {', '.join(PAPERS)})")
    cov = coverage(args.paper)
    missing = 0
    for sid, funcs in cov.items():
        e = SPEC[sid]
        print(f"{sid}  [{e.status}]  {e.title}")
        if funcs:
            for f in funcs:
                print(f"    {f}")
        else:
            missing += 1
            print("    (no implementing function)")
    print(f"\n{len(cov)} spec IDs, {len(cov) - missing} implemented")
    return 0


def _positive_float(name: str):
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``grokclocks`` command."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = argparse.ArgumentParser(
        prog="grokclocks", formatter_class=fmt,
        description="Executable grokking theory: closed-form predictions of when a network groks, from five "
                    "papers, each checked against training runs.",
        epilog=_EPILOG_MAIN)
    from . import __version__

    p.add_argument("--version", action="version", version=f"grokclocks {__version__}")
    sub = p.add_subparsers(dest="command", metavar="command")
    sub.required = True

    v = sub.add_parser(
        "verify", formatter_class=fmt, help="run the theorem-vs-simulation checks (pytest verify)",
        description="Run 'pytest verify' in the grokclocks source checkout: every check compares a theory's "
                    "prediction with a simulation and the run ends with one table, written as a verification "
                    "certificate (verify-<scale>.json and .md).",
        epilog="suites: " + ", ".join(VERIFY_SUITES) + " (coverage = uniformity, engine = modular)\n\n"
               "examples:\n"
               "  grokclocks verify                        # every suite, CPU scale (minutes on a laptop)\n"
               "  grokclocks verify --only levi,kramers     # two papers only\n"
               "  grokclocks verify --scale gpu --report-dir certificates\n"
               "  grokclocks verify --scale gpu --shard 2/3 --report-dir s2   # one slice (one GPU process)\n"
               "  grokclocks verify --merge s1 s2 s3 --report-dir certificates  # the slices as one certificate\n"
               "  grokclocks verify --only clocks --dry-run # print the pytest command, do not run it\n"
               "  grokclocks verify --only levi -- -x -k eq11   # extra pytest arguments after --\n")
    v.add_argument("--scale", choices=("cpu", "gpu"), default="cpu",
                   help="configuration size: cpu (CI, default) or gpu (large configs, needs an accelerator)")
    v.add_argument("--only", metavar="SUITES", help="comma-separated suites to run, e.g. levi,clocks (default: all)")
    v.add_argument("--report-dir", metavar="DIR",
                   help="where the certificate verify-<scale>.json/.md is written (default: .verify/ in the checkout)")
    v.add_argument("--overwrite", action="store_true",
                   help="replace an existing certificate (verify-<scale>.json/.md, or the slice's file with --shard; "
                        "with --merge the merged one) in the report directory")
    v.add_argument("--shard", metavar="K/N",
                   help="run slice K of N (whole test modules, balanced by the GPU budget table); writes "
                        "verify-<scale>-shard-K-of-N.json/.md")
    v.add_argument("--merge", nargs="+", metavar="DIR",
                   help="combine the partial certificates (verify-<scale>-shard-K-of-N.json) found in DIR... into "
                        "verify-<scale>.json/.md in --report-dir; checks scale, commit, missing and repeated slices")
    v.add_argument("--dry-run", action="store_true", help="print the pytest command instead of running it")
    v.add_argument("pytest_args", nargs="*", metavar="-- PYTEST_ARGS", help="further arguments passed to pytest")
    v.set_defaults(func=_cmd_verify)
    v.error = _one_line_error(v)  # type: ignore[method-assign]

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

    t = sub.add_parser(
        "time", formatter_class=fmt, help="grokking time of the linear estimator (Levi et al.)",
        description="Exact grokking time Delta t = t_gen - t_train of the linear teacher-student model of Levi, "
                    "Beck and Bar-Sinai (grokclocks.linear.grok_time): full-batch GD on an MSE loss, a sample "
                    "counts as correct when its squared error is below eps, and each clock is the first time "
                    "the accuracy reaches the level. Times are in GD steps of learning rate eta.",
        epilog="examples:\n"
               "  grokclocks time --lam 0.5 --eps 1e-3              # Delta t = 431 steps (eta 0.01)\n"
               "  grokclocks time --lam 0.9 --eps 1e-3 --d-out 100  # wider output\n"
               "  grokclocks time --lam 0.5 --eps 1e-3 --gamma 0.01 # with weight decay (paper convention)\n")
    t.add_argument("--lam", type=_positive_float("--lam"), required=True,
                   help="lambda = d_in / N_train, input dimension over training-set size (> 0)")
    t.add_argument("--eps", type=_positive_float("--eps"), required=True,
                   help="accuracy threshold on a sample's squared error (> 0)")
    t.add_argument("--eta", type=_positive_float("--eta"), default=0.01,
                   help="GD learning rate eta0 (> 0; default 0.01, as in the paper's Fig. 1)")
    t.add_argument("--gamma", type=float, default=0.0, help="weight decay in the paper's convention (>= 0; default 0)")
    t.add_argument("--d-out", type=int, default=1, help="output dimension (integer >= 1; default 1)")
    t.add_argument("--level", type=float, default=None,
                   help="accuracy level of both clocks in (0, 1) (default erf(sqrt 2) = 0.9545, the paper's)")
    t.add_argument("--json", action="store_true", help="print the result as JSON")
    t.set_defaults(func=_cmd_time)

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
    m.add_argument("--plot", metavar="PATH", help="also save a figure (accuracy and loss vs step, clocks marked)")
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
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``grokclocks`` command; returns the exit status."""

    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "command", None) == "time" and args.level is None:
        from .linear import ERF_SQRT2

        args.level = ERF_SQRT2
    try:
        return int(args.func(args))
    except (CLIError, DomainError) as exc:
        print(f"grokclocks: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, KeyError) as exc:  # remaining argument errors from the library
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"grokclocks: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
