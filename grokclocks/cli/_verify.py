"""`grokclocks verify`: run `pytest verify` in the source checkout and write the certificate.

Three ways to run it:

* the whole tier (or `--only` some suites) in one pytest process, one certificate (`verify-<scale>.*`);
* a slice of it (`--shard K/N`), whose partial certificates `--merge` combines;
* a GPU window (`--budget SECONDS`): the planner runs the suites that are missing or stale, oldest first, as
  many as fit the budget, one pytest process per suite, and writes each suite's certificate as soon as the
  suite finishes (`grokclocks.verification.plan_run`).
"""

from __future__ import annotations

import argparse
import datetime
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from ._common import WRITER, FORMATTER, CLIError, _one_line_error, emit, error_line

VERIFY_SUITES: tuple[str, ...] = ("levi", "clocks", "kramers", "kramers_barrier8", "kramers_widths", "uniformity",
                                  "repulsion", "modular", "compare")
"""The suites `grokclocks verify` runs by default, in this order: directories under verify/ of the checkout.

The checks of the five papers, one suite each by the paper's key ("levi", "clocks", "kramers", "uniformity",
"repulsion"; the Kramers paper's walkers at ΔF/T = 8 and its width-scaling slopes up to N = 262,144 are the
suites "kramers_barrier8" and "kramers_widths" of their own, so that each fits one GPU window), the engine's
canonical grokking ("modular") and the comparison of runs ("compare").  A suite of the checkout not listed
here runs after these.
"""
_SUITE_ALIASES = {"coverage": "uniformity", "engine": "modular", "linear": "levi", "tian": "repulsion"}
#: Seconds a suite's pytest process gets after its deadline to write its certificate and exit, then SIGINT
#: (its suite certificate is then not written) and, KILL_GRACE_S later, SIGKILL.
FINISH_S = 5.0
KILL_GRACE_S = 3.0
#: Start-up of one suite's pytest process at CPU scale (GPU scale: `grokclocks.verification.SUITE_START_S`):
#: 3-4 s measured for a suite that does not import JAX on the 2-core AMD EPYC; the CPU planner serves tests.
_CPU_SUITE_START_S = 5.0


def _repo_root() -> Path:
    """The source checkout holding verify/ next to the package, or a `CLIError`."""
    import grokclocks

    root = Path(grokclocks.__file__).resolve().parent.parent
    if not (root / "verify" / "conftest.py").is_file():
        raise CLIError(f"'grokclocks verify' needs a source checkout: no verify/conftest.py under {root} "
                       "(clone the repository and install it with 'pip install -e .[test]')")
    return root


def _suites(only: str | None, root: Path) -> list[str]:
    """The suites to run: `--only`'s comma-separated names (aliases resolved, checked against verify/), or
    every suite of the checkout (those of `VERIFY_SUITES` in its order first)."""
    available = sorted(d.name for d in (root / "verify").iterdir()
                       if d.is_dir() and any(d.glob("test_*.py")))
    if only is None:  # the tier's order, then any suite not listed there (a new one is never left out)
        return [s for s in VERIFY_SUITES if s in available] + [s for s in available if s not in VERIFY_SUITES]
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
    """`--report-dir`: created if missing; a one-line error if it is a file or cannot be written."""
    p = Path(text).expanduser()
    if p.exists() and not p.is_dir():
        raise CLIError(f"--report-dir {error_line(text)!r} exists and is not a directory")
    WRITER.make_folder(p, name="--report-dir")
    if not os.access(p, os.W_OK | os.X_OK):
        raise CLIError(f"--report-dir {error_line(text)!r} is not writable")
    return p.resolve()


def verify_command(scale: str = "cpu", only: str | None = None, report_dir: str | None = None,
                   extra: Sequence[str] = (), shard: str | None = None) -> tuple[list[str], Path]:
    """The pytest command line of `grokclocks verify` and the directory to run it in.

    Parameters
    ----------
    scale : {"cpu", "gpu"}, optional
        The configuration size; default "cpu".
    only : str, optional
        Comma-separated suites (aliases: coverage = uniformity, engine = modular, linear = levi, tian =
        repulsion); default every suite of `VERIFY_SUITES`.
    report_dir : str, optional
        Where the certificate is written (created if missing); default the plugin's .verify/ in the checkout.
    extra : sequence of str, optional
        Further pytest arguments; default none.
    shard : str, optional
        "K/N": run slice K of N; default the whole selection.

    Returns
    -------
    tuple
        (the command as a list of str, the checkout to run it in).

    Raises
    ------
    CLIError
        If there is no source checkout, a suite is unknown, `report_dir` cannot be written or `shard` is
        not K/N.
    """
    from ..verification import parse_shard

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
    """The certificate files a verify run (or a merge) writes: `--report-dir`, else the plugin's default in the
    checkout; a slice of `--shard K/N` writes verify-<scale>-shard-K-of-N.*."""
    from ..verification import parse_shard

    d = Path(report_dir) if report_dir is not None else root / os.environ.get("GROKCLOCKS_REPORT_DIR", ".verify")
    stem = f"verify-{scale}"
    if shard is not None:
        k, n = parse_shard(shard)
        stem += f"-shard-{k}-of-{n}"
    return d / f"{stem}.json", d / f"{stem}.md"


def _check_certificate_files(files: Sequence[Path], overwrite: bool) -> None:
    """A certificate in a directory the user named is replaced only with `--overwrite` (checked before any work)."""
    for f in files:
        WRITER.check(f, name="--report-dir", overwrite=overwrite, make_parents=True)


def _cmd_merge(args: argparse.Namespace) -> int:
    from ..verification import CertificateError, merge_certificates, write_certificate

    try:
        cert = merge_certificates(args.merge)
    except CertificateError as exc:
        raise CLIError(str(exc)) from None
    out = _report_dir(args.report_dir or ".verify")
    scale = cert["meta"]["scale"]
    _check_certificate_files(_certificate_files(str(out), scale, Path.cwd()), args.overwrite)
    js, md = write_certificate(cert, out, overwrite=args.overwrite)  # checked before the merge above
    m = cert["meta"]
    emit(f"merged {len(m['merged_from'])} slices: {m['n_rows']} rows, {m['n_failed']} failed, "
          f"{len(cert['tests'])} tests, {m['duration_s']:.0f} s; certificate written to {md} and {js}")
    return 0


# ------------------------------------------------------------------------------------------ the planner (--budget)


def _suite_dirs(args: argparse.Namespace, root: Path) -> tuple[Path, list[Path]]:
    """Where the planner writes the suite certificates (`--report-dir`, default docs/verification/<scale> of
    the checkout at GPU scale, .verify/suites-<scale> at CPU scale) and every directory it reads their state from
    (that one and the checkout's committed docs/verification/<scale>)."""
    committed = root / "docs" / "verification" / args.scale
    default = committed if args.scale == "gpu" else root / ".verify" / f"suites-{args.scale}"
    out = _report_dir(args.report_dir) if args.report_dir is not None else default
    dirs = [out] + ([committed] if committed.resolve() != out.resolve() else [])
    return out, dirs


def _plan(args: argparse.Namespace, root: Path):
    """The plan of a `--budget` run: (items, the output directory)."""
    from ..verification import (
        SUITE_START_S,
        budget_estimates,
        plan_run,
        suite_statuses,
        time_estimates,
    )

    names = _suites(args.only, root)
    out, dirs = _suite_dirs(args, root)
    try:
        statuses = suite_statuses([d for d in dirs if d.is_dir()] or [out], names, root)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    budget = budget_estimates(root / "docs" / "verification" / "gpu-budget")
    estimates = {s.suite: time_estimates(s.suite, args.scale, certificate=s.certificate, budget=budget, root=root)
                 for s in statuses}
    start = SUITE_START_S if args.scale == "gpu" else _CPU_SUITE_START_S
    return plan_run(statuses, estimates, args.budget, start_s=start), out


def _plan_lines(items, budget: float, scale: str) -> list[str]:
    run = [p for p in items if p.run]
    first = (f"plan ({scale} scale, budget {budget:.0f} s): {len(run)} suite{'' if len(run) == 1 else 's'}, "
             f"{sum(p.estimate_s for p in run):.0f} s"
             + (": " + ", ".join(f"{p.suite} ({p.reason}, {p.estimate_s:.0f} s)" for p in run) if run else ""))
    lines = [first]
    for p in items:
        if p.run:
            measured = sum(1 for v in p.tests.values() if v[1].startswith("measured"))
            lines.append(f"  run   {p.suite:<18} {p.reason:<28} {p.estimate_s:6.0f} s  ({len(p.tests)} tests: "
                         f"{measured} measured, {len(p.tests) - measured} estimated; start-up {p.start_s:.0f} s)")
    for p in items:
        if not p.run:
            lines.append(f"  skip  {p.suite:<18} {p.reason:<28} {p.estimate_s:6.0f} s  {p.why_not}")
    return lines


def _run_suite(suite: str, args: argparse.Namespace, root: Path, out: Path, t_end: float) -> tuple[str, float]:
    """One suite in its own pytest process, stopped at `t_end` (time.monotonic()): (how it ended, wall s)."""
    deadline = time.time() + (t_end - time.monotonic()) - FINISH_S - KILL_GRACE_S
    env = dict(os.environ)
    if args.scale == "gpu":
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="grokclocks-verify-") as tmp:
        cmd = [sys.executable, "-m", "pytest", f"verify/{suite}", "--scale", args.scale, "--suite-certificates",
               str(out), "--deadline", f"{deadline:.3f}", "--report-dir", tmp, "-p", "no:cacheprovider",
               *args.pytest_args]
        proc = subprocess.Popen(cmd, cwd=root, env=env)
        try:
            rc = proc.wait(timeout=max(0.0, t_end - KILL_GRACE_S - time.monotonic()))
            how = "finished" if rc in (0, 1) else f"pytest exit status {rc}"
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)  # pytest stops; the interrupted suite writes no certificate
            try:
                proc.wait(timeout=KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            how = "stopped at the budget's end (no certificate written for it)"
    return how, time.monotonic() - t0


def _cmd_budget(args: argparse.Namespace) -> int:
    from ..verification import read_suite_certificate, suite_status

    if args.shard or args.merge:
        raise CLIError("--budget plans whole suites: it cannot be combined with --shard or --merge")
    t_start = time.monotonic()
    root = _repo_root()
    items, out = _plan(args, root)
    run = [p for p in items if p.run]
    if args.report_dir is not None:
        _check_certificate_files([out / f"{p.suite}.{ext}" for p in run for ext in ("json", "md")], args.overwrite)
    for line in _plan_lines(items, args.budget, args.scale):
        emit(line, flush=True)
    if args.dry_run:
        return 0
    t_end = t_start + args.budget
    summary, bad = [], False
    for p in run:
        left = t_end - time.monotonic()
        if p.estimate_s > left:
            summary.append(f"  {p.suite:<18} not started: expected {p.estimate_s:.0f} s, {left:.0f} s left")
            continue
        emit(f"\n=== {p.suite} ({p.reason}): expected {p.estimate_s:.0f} s, {left:.0f} s left", flush=True)
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        how, wall = _run_suite(p.suite, args, root, out, t_end)
        try:
            st = suite_status(read_suite_certificate(out / f"{p.suite}.json"), p.suite, root, git=False)
            new = st.certificate is not None and str(st.date or "") >= started
        except ValueError as exc:
            st, new = None, False
            how += f" (certificate unreadable: {exc})"
        state = st.state if (st is not None and new) else "no new certificate"
        bad |= state not in ("passed",)
        summary.append(f"  {p.suite:<18} {state:<18} wall {wall:6.0f} s, expected {p.estimate_s:6.0f} s ({how})")
    emit(f"\nGPU window summary ({time.monotonic() - t_start:.0f} s of {args.budget:.0f} s; certificates in {out}):")
    for line in summary or ["  nothing to run"]:
        emit(line)
    return 1 if bad else 0


def _cmd_verify(args: argparse.Namespace) -> int:
    if args.budget is not None:
        return _cmd_budget(args)
    if args.merge:
        if args.shard or args.only or args.pytest_args or args.dry_run:
            raise CLIError("--merge combines certificates and runs nothing: it takes only --report-dir and --overwrite")
        return _cmd_merge(args)
    cmd, root = verify_command(args.scale, args.only, args.report_dir, args.pytest_args, args.shard)
    if args.dry_run:
        emit(f"cd {root} && " + " ".join(cmd))
        return 0
    if args.report_dir is not None:  # the tool's own .verify/ keeps the previous pair as verify-<scale>.prev.*
        _check_certificate_files(_certificate_files(args.report_dir, args.scale, root, args.shard), args.overwrite)
    env = dict(os.environ)
    if args.scale == "gpu":
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # one process per GPU, allocate on demand
    return subprocess.call(cmd, cwd=root, env=env)


def _seconds(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--budget must be a number of seconds (got {text!r})") from None
    if not (x > 0 and x < 1e7):
        raise argparse.ArgumentTypeError(f"--budget must be a number of seconds in (0, 1e7) (got {text!r})")
    return x


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the `verify` subcommand.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the `grokclocks` command.
    """
    fmt = FORMATTER
    v = sub.add_parser(
        "verify", formatter_class=fmt, help="run the theorem-vs-simulation checks (pytest verify)",
        description="Run 'pytest verify' in the grokclocks source checkout: every check compares a theory's "
                    "prediction with a simulation and the run ends with one table, written as a verification "
                    "certificate (verify-<scale>.json and .md). With --budget, run the suites whose certificate "
                    "is missing or stale, oldest first, as many as fit the budget, one certificate per suite.",
        epilog="suites: " + ", ".join(VERIFY_SUITES) + " (coverage = uniformity, engine = modular)\n\n"
               "examples:\n"
               "  grokclocks verify                        # every suite, CPU scale (minutes on a laptop)\n"
               "  grokclocks verify --only levi,kramers     # two papers only\n"
               "  grokclocks verify --scale gpu --budget 400   # a GPU window: missing/stale suites that fit 400 s\n"
               "  grokclocks verify --scale gpu --budget 400 --dry-run   # the plan only\n"
               "  grokclocks verify --scale gpu --report-dir certificates\n"
               "  grokclocks verify --scale gpu --shard 2/3 --report-dir s2   # one slice (one GPU process)\n"
               "  grokclocks verify --merge s1 s2 s3 --report-dir certificates  # the slices as one certificate\n"
               "  grokclocks verify --only clocks --dry-run # print the pytest command, do not run it\n"
               "  grokclocks verify --only levi -- -x -k eq11   # extra pytest arguments after --\n")
    v.add_argument("--scale", choices=("cpu", "gpu"), default="cpu",
                   help="configuration size: cpu (CI, default) or gpu (large configs, needs an accelerator)")
    v.add_argument("--only", metavar="SUITES", help="comma-separated suites to run, e.g. levi,clocks (default: all)")
    v.add_argument("--report-dir", metavar="DIR",
                   help="where the certificate verify-<scale>.json/.md is written (default: .verify/ in the checkout, "
                        "where the previous pair is kept as verify-<scale>.prev.*); with --budget, where the suite "
                        "certificates <suite>.json/.md go (default: docs/verification/gpu/ in the checkout)")
    v.add_argument("--overwrite", action="store_true",
                   help="replace an existing certificate in a --report-dir you named (verify-<scale>.json/.md, the "
                        "slice's file with --shard, the merged one with --merge, the suites' with --budget)")
    v.add_argument("--shard", metavar="K/N",
                   help="run slice K of N (whole test modules, balanced by the GPU budget table); writes "
                        "verify-<scale>-shard-K-of-N.json/.md")
    v.add_argument("--merge", nargs="+", metavar="DIR",
                   help="combine the partial certificates (verify-<scale>-shard-K-of-N.json) found in DIR... into "
                        "verify-<scale>.json/.md in --report-dir; checks scale, commit, missing and repeated slices")
    v.add_argument("--budget", type=_seconds, metavar="SECONDS",
                   help="run the suites whose certificate is missing, stale or incomplete, oldest first, as many as "
                        "fit SECONDS (latest measured test times, else verify/budget.py's estimates); no test starts "
                        "that would end past the budget, and a suite still running at its end is stopped")
    v.add_argument("--dry-run", action="store_true", help="print the pytest command (with --budget: the plan) instead "
                                                          "of running it")
    v.add_argument("pytest_args", nargs="*", metavar="-- PYTEST_ARGS", help="further arguments passed to pytest")
    v.set_defaults(func=_cmd_verify)
    v.error = _one_line_error(v)  # type: ignore[method-assign]
