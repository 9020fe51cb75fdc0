"""``grokclocks verify``: run ``pytest verify`` in the source checkout and write the certificate."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import _validate as V
from ._common import FORMATTER, CLIError, _one_line_error

# verify/ subdirectories run by default: the five papers, the engine's canonical grokking, compare
VERIFY_SUITES: tuple[str, ...] = ("levi", "clocks", "kramers", "uniformity", "repulsion", "modular", "compare")
_SUITE_ALIASES = {"coverage": "uniformity", "engine": "modular", "linear": "levi", "tian": "repulsion"}



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
    """The certificate files a verify run (or a merge) writes: ``--report-dir``, else the plugin's default in the
    checkout; a slice of ``--shard K/N`` writes ``verify-<scale>-shard-K-of-N.*``."""
    from ..verification import parse_shard

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



def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``verify`` subcommand."""
    fmt = FORMATTER
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
