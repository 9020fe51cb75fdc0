"""pytest verify: theorem vs simulation, one table at the end.

Options:

* ``--scale cpu|gpu`` (or env ``GROKCLOCKS_SCALE``) picks the configuration size;
* ``--report-dir`` (default ``.verify/``, env ``GROKCLOCKS_REPORT_DIR``) is where ``verify-<scale>.json`` /
  ``.md`` are written; it is checked (created, writable) before any test runs;
* ``--shard K/N`` (env ``GROKCLOCKS_SHARD``) runs slice K of N: test modules (with the modules that
  share a cached training, ``SHARD_GROUPS`` / a module's ``SHARD_GROUP``) are spread over N slices,
  balanced by the estimated H100 seconds of ``docs/verification/gpu-budget/*.json`` at GPU scale (else by
  the number of tests).  Each slice writes ``verify-<scale>-shard-K-of-N.json`` / ``.md`` with the tests
  it ran; ``grokclocks verify --merge DIR...`` combines the slices into one certificate.

Per test the certificate records the outcome, wall time (setup included), the XLA compile time
(``jax.monitoring`` backend-compile events: sum and longest; counted from JAX's import, which the verify
modules do at collection) and the peak memory: the device's
``peak_bytes_in_use`` where JAX reports it (GPU), else the host's maximum RSS (``resource.getrusage``);
both are process peaks so far, and a test that raised the peak is marked.  At GPU scale a test over
180 s or a compile over 60 s is listed under "Budget warnings".

One process per GPU: at ``--scale gpu`` the tier sets ``XLA_PYTHON_CLIENT_PREALLOCATE=false`` (unless
set) so that JAX allocates on demand instead of taking 75 % of the device at start, and refuses
pytest-xdist workers (several processes on one GPU exhausted cuSolver handles on 2026-11-24: use
``--shard`` for slices, run one after another).
"""

from __future__ import annotations

import hashlib
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grokclocks.verification import Report, format_table, parse_shard, shard_plan, write_report

_STATE: dict = {}
_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
# test modules that share a cached training: kept in one slice so the training is not repeated
SHARD_GROUPS = {
    "modular/test_canonical_grokking.py": "canonical-grokking",
    "compare/test_compare_runs.py": "canonical-grokking",
}
_BUDGET_DIR = _ROOT / "docs" / "verification" / "gpu-budget"


def pytest_addoption(parser):
    g = parser.getgroup("grokclocks verify")
    g.addoption("--scale", choices=("cpu", "gpu"), default=os.environ.get("GROKCLOCKS_SCALE", "cpu"),
                help="configuration size: cpu (CI, default) or gpu (large configs)")
    g.addoption("--report-dir", default=os.environ.get("GROKCLOCKS_REPORT_DIR", ".verify"),
                help="where verify-<scale>.json and .md are written (default .verify/)")
    g.addoption("--shard", default=os.environ.get("GROKCLOCKS_SHARD"), metavar="K/N",
                help="run slice K of N of the verify tests (whole modules, balanced by the GPU budget table) "
                     "and write verify-<scale>-shard-K-of-N.json/.md; merge with 'grokclocks verify --merge'")


def _check_report_dir(text: str) -> Path:
    p = Path(text).expanduser()
    if p.exists() and not p.is_dir():
        raise pytest.UsageError(f"--report-dir {text!r} exists and is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise pytest.UsageError(f"--report-dir {text!r} cannot be created ({exc.strerror or exc})") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise pytest.UsageError(f"--report-dir {text!r} is not writable")
    return p


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(_ROOT), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _on_compile(name: str, duration: float, **kw) -> None:
    if name != "/jax/core/compile/backend_compile_duration":
        return
    c = _STATE["compile"]
    c["total"] += duration
    if duration > c["max"]:
        c["max"], c["max_fun"] = duration, str(kw.get("fun_name", "?"))


def pytest_configure(config):
    scale = config.getoption("--scale")
    _STATE["report"] = Report(scale=scale)
    _STATE["report_dir"] = _check_report_dir(config.getoption("--report-dir"))
    shard = config.getoption("--shard")
    try:
        _STATE["shard"] = parse_shard(shard) if shard else None
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    if scale == "gpu":
        if getattr(config.option, "numprocesses", None) or os.environ.get("PYTEST_XDIST_WORKER"):
            raise pytest.UsageError("--scale gpu runs in one process per GPU (several processes exhausted cuSolver "
                                    "handles): drop -n/xdist, use --shard K/N for slices")
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    _STATE["tests"] = []
    _STATE["compile"] = {"total": 0.0, "max": 0.0, "max_fun": ""}
    _STATE["peak"] = 0
    _STATE["listening"] = False
    _listen()
    _STATE["t0"] = time.perf_counter()


def _listen() -> None:
    """Count XLA compile time from the moment JAX is imported (the verify modules import it at collection;
    the listener is not a reason to import JAX where nothing uses it)."""
    if not _STATE["listening"] and "jax" in sys.modules:
        import jax.monitoring

        jax.monitoring.register_event_duration_secs_listener(_on_compile)
        _STATE["listening"] = True


def _rel(item) -> str:
    try:
        return Path(str(item.path)).resolve().relative_to(_HERE).as_posix()
    except ValueError:
        return ""


def _budget_seconds() -> dict[str, float]:
    """Estimated H100 seconds per test node ('suite/test_x.py::test_y') from the committed budget table."""
    import json

    out: dict[str, float] = {}
    for f in sorted(_BUDGET_DIR.glob("*.json")):
        try:
            data = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        for mname, m in data.get("modules", {}).items():
            for r in m.get("items", []):
                node = f"{mname}::{r['test']}"
                out[node] = out.get(node, 0.0) + float(r.get("h100_s", 0.0))
    return out


def pytest_collection_modifyitems(session, config, items):
    shard = _STATE.get("shard")
    if shard is None:
        return
    k, n = shard
    mine = [it for it in items if _rel(it)]
    budget = _budget_seconds() if config.getoption("--scale") == "gpu" else {}
    default = (sum(budget.values()) / len(budget)) if budget else 1.0
    groups: dict[str, float] = {}
    group_of = {}
    for it in mine:
        mod = _rel(it)
        g = getattr(getattr(it, "module", None), "SHARD_GROUP", None) or SHARD_GROUPS.get(mod, mod)
        group_of[it.nodeid] = g
        node = f"{mod}::{it.originalname if hasattr(it, 'originalname') else it.name}"
        groups[g] = groups.get(g, 0.0) + budget.get(node, default)
    plan = shard_plan(groups, n)
    keep = [it for it in items if not _rel(it) or plan[group_of[it.nodeid]] == k]
    drop = [it for it in items if _rel(it) and plan[group_of[it.nodeid]] != k]
    _STATE["plan"] = {g: plan[g] for g in sorted(plan)}
    _STATE["plan_weights"] = {g: round(groups[g], 1) for g in sorted(groups)}
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


def _memory() -> tuple[int | None, str]:
    if "jax" in sys.modules and _STATE["compile"]["total"] > 0:
        try:
            stats = sys.modules["jax"].local_devices()[0].memory_stats()
        except Exception:  # pragma: no cover
            stats = None
        if stats and "peak_bytes_in_use" in stats:
            return int(stats["peak_bytes_in_use"]), "device peak_bytes_in_use (jax memory_stats)"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss) * (1 if sys.platform == "darwin" else 1024), "host max RSS (resource.getrusage; no device memory stats)"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _rel(item):
        yield
        return
    _listen()
    listening = _STATE["listening"]
    c = _STATE["compile"]
    c0, m0 = c["total"], c["max"]
    c["max"], c["max_fun"] = 0.0, ""
    _STATE["outcome"] = "passed"
    t0 = time.perf_counter()
    yield
    wall = time.perf_counter() - t0
    peak, kind = _memory()
    rec = {"test": item.nodeid, "outcome": _STATE["outcome"], "wall_s": wall,
           "compile_s": c["total"] - c0 if listening else None, "compile_max_s": c["max"] if listening else None,
           "compile_max_fun": c["max_fun"], "peak_bytes": peak, "memory_kind": kind,
           "raised_peak": bool(peak and peak > _STATE["peak"])}
    if _STATE.get("shard"):
        rec["shard"] = f"{_STATE['shard'][0]}/{_STATE['shard'][1]}"
    _STATE["peak"] = max(_STATE["peak"], peak or 0)
    c["max"] = max(c["max"], m0)
    _STATE["tests"].append(rec)


def pytest_runtest_logreport(report):
    if report.failed:
        _STATE["outcome"] = "failed" if report.when == "call" else "error"
    elif report.skipped and _STATE.get("outcome") == "passed":
        _STATE["outcome"] = "skipped"


@pytest.fixture(scope="session")
def scale(pytestconfig) -> str:
    """'cpu' or 'gpu'."""
    return pytestconfig.getoption("--scale")


@pytest.fixture
def report(request) -> Report:
    """The session's verification report; ``report.check(...)`` / ``report.reject(...)``."""
    rep: Report = _STATE["report"]
    rep.current_test = request.node.nodeid
    return rep


def pytest_sessionfinish(session, exitstatus):
    _STATE["stopped_early"] = bool(session.shouldstop or session.shouldfail)  # -x / --maxfail


def _partial_run(config, terminalreporter) -> str | None:
    """Why this session ran less than the whole tier (tests deselected by -k / -m / --deselect / --lf, a
    file, test or suite named instead of verify/, a stop after a failure), or None: a partial
    certificate must not replace the committed one (``docs/gen_pages.py`` reads this)."""
    reasons = []
    n_desel = len(terminalreporter.stats.get("deselected", ()))
    if n_desel and not _STATE.get("shard"):
        reasons.append(f"{n_desel} tests deselected")
    here = Path(__file__).resolve().parent
    for arg in config.args:
        path = Path(arg.split("::", 1)[0]).resolve()
        if "::" in arg or here in path.parents:
            reasons.append(f"ran {arg}")
    if _STATE.get("stopped_early"):
        reasons.append("stopped early")
    return "; ".join(reasons) or None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    rep: Report | None = _STATE.get("report")
    tests = _STATE.get("tests", [])
    if rep is None or not (rep.rows or (tests and _STATE.get("shard"))):
        return
    dt = time.perf_counter() - _STATE["t0"]
    tr = terminalreporter
    shard = _STATE.get("shard")
    tr.section(f"grokclocks verification table ({rep.scale} scale"
               + (f", slice {shard[0]} of {shard[1]})" if shard else ")"))
    tr.write_line(format_table(rep.rows))
    commit = _git("rev-parse", "HEAD")
    meta = {"commit": commit, "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")) if commit else None,
            "pytest_args": list(config.invocation_params.args), "partial": _partial_run(config, terminalreporter)}
    stem = None
    if shard:
        meta.update(shard=list(shard), plan=_STATE.get("plan", {}), plan_weights=_STATE.get("plan_weights", {}),
                    plan_digest=hashlib.sha1(repr(sorted(_STATE.get("plan", {}).items())).encode()).hexdigest()[:12])
        stem = f"verify-{rep.scale}-shard-{shard[0]}-of-{shard[1]}"
    # each `pytest verify` run replaces the report directory's verify-<scale>.* (README); `grokclocks verify`
    # asks for --overwrite before it starts the run
    js, md = write_report(rep.rows, _STATE["report_dir"], rep.scale, dt, tests=tests, meta=meta, stem=stem,
                          overwrite=True)
    from grokclocks.verification import budget_warnings

    for w in budget_warnings(tests, rep.scale):
        tr.write_line(f"BUDGET WARNING: {w}", red=True)
    n_bad = sum(not r.passed for r in rep.rows)
    tr.write_line(f"\n{len(rep.rows)} rows, {n_bad} failed; certificate written to {md} and {js}")
