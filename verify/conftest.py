"""pytest verify: theorem vs simulation, one table at the end.

Options:

* `--scale cpu|gpu` (or env `GROKCLOCKS_SCALE`) picks the configuration size;
* `--report-dir` (default `.verify/`, env `GROKCLOCKS_REPORT_DIR`) is where `verify-<scale>.json` / `.md` are
  written; it is checked (created, writable) before any test runs. Each run replaces the pair there and keeps
  the previous one beside it as `verify-<scale>.prev.json` / `.md`;
* `--shard K/N` (env `GROKCLOCKS_SHARD`) runs slice K of N: test modules (with the modules that share a cached
  training, `SHARD_GROUPS` / a module's `SHARD_GROUP`) are spread over N slices, balanced by the estimated H100
  seconds of `docs/verification/gpu-budget/*.json` at GPU scale (else by the number of tests). Each slice
  writes `verify-<scale>-shard-K-of-N.json` / `.md` with the tests it ran; `grokclocks verify --merge DIR...`
  combines the slices into one certificate;
* `--suite-certificates DIR` (env `GROKCLOCKS_SUITE_DIR`) also writes one certificate per suite
  (`verify/<suite>/`), `DIR/<suite>.json` / `.md`, as soon as the suite's last test has finished, stamped with
  the fingerprint of the files the suite depends on (`grokclocks.verification.suite_certificate`). A suite
  that did not run whole (tests deselected, a file not collected, tests not started for the deadline) is
  written as incomplete; a session interrupted inside a suite (Ctrl-C, SIGINT) writes nothing for that suite,
  and each file is written atomically, so no half-written certificate is left;
* `--deadline EPOCH` (env `GROKCLOCKS_DEADLINE`, seconds since the epoch): a test is not started when its
  expected time (the latest measurement in the suite certificates, else verify/budget.py's estimate) would
  end past the deadline; it is reported as skipped ("budget") and its suite as incomplete;
* env `GROKCLOCKS_COMMIT`: in a copy of the checkout without `.git`, the 40-hex commit the copy was made from,
  stamped on the certificates as such (`commit_source`; `dirty` stays unknown);
* `--progress-every SECONDS` (env `GROKCLOCKS_PROGRESS_S`, default 20; 0 = off): a test running longer prints
  a line every that many seconds (elapsed time, expected time), so a long test is never silent (under
  pytest-xdist too: the controller sees the workers' tests start);
* `--verify-table`: print the full table (every row, its tolerance and the tolerance's source) at the end, as
  well as the summary. By default the terminal shows, for a session of verify tests at pytest's default
  verbosity, a line per finished test (`[k/N m:ss] node ID  outcome  seconds  spec IDs with their verdicts`)
  instead of pytest's dots, and at the end of any session with verify rows a summary per paper that fits one
  screen (rows passed / rejected / reported / failed, each failed row with its spec ID and numbers, the failed
  tests that recorded no failed row) and the certificate's paths; the table is in the certificate. `-v` and
  `-q` keep pytest's own lines and dots. `grokclocks verify` runs this plugin: `grokclocks verify -- --verify-table`.

Per test the certificate records the outcome, wall time (setup included), the XLA compile time
(`jax.monitoring` backend-compile events: sum and longest; counted from JAX's import, which the verify modules
do at collection) and the peak memory: the device's `peak_bytes_in_use` where JAX reports it (GPU), else the
host's maximum RSS (`resource.getrusage`); both are process peaks so far, and a test that raised the peak is
marked. At GPU scale a test over 240 s or a compile over 60 s is listed under "Budget warnings".

One process per GPU: at `--scale gpu` the tier sets `XLA_PYTHON_CLIENT_PREALLOCATE=false` (unless set) so that
JAX allocates on demand instead of taking 75 % of the device at start, and refuses pytest-xdist workers
(several processes on one GPU exhausted cuSolver handles on 2026-11-24: use `--shard` for slices, or the
per-suite planner `grokclocks verify --scale gpu --budget SECONDS`, run one after another).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import resource
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from grokclocks.verification import (
    Report,
    Row,
    budget_estimates,
    format_table,
    function_of_node,
    parse_shard,
    read_suite_certificate,
    shard_plan,
    suite_certificate,
    time_estimates,
    write_certificate,
    write_report,
)

_STATE: dict = {}
_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
# test modules that share a cached training: kept in one slice so the training is not repeated
SHARD_GROUPS = {
    "modular/test_canonical_grokking.py": "canonical-grokking",
    "compare/test_compare_runs.py": "canonical-grokking",
}
_BUDGET_DIR = _ROOT / "docs" / "verification" / "gpu-budget"
_COMMITTED_SUITE_DIR = _ROOT / "docs" / "verification"  # + /<scale>: the committed per-suite certificates


def pytest_addoption(parser):
    g = parser.getgroup("grokclocks verify")
    g.addoption("--scale", choices=("cpu", "gpu"), default=os.environ.get("GROKCLOCKS_SCALE", "cpu"),
                help="configuration size: cpu (CI, default) or gpu (large configs)")
    g.addoption("--report-dir", default=os.environ.get("GROKCLOCKS_REPORT_DIR", ".verify"),
                help="where verify-<scale>.json and .md are written (default .verify/; the previous pair is kept "
                     "as verify-<scale>.prev.*)")
    g.addoption("--shard", default=os.environ.get("GROKCLOCKS_SHARD"), metavar="K/N",
                help="run slice K of N of the verify tests (whole modules, balanced by the GPU budget table) "
                     "and write verify-<scale>-shard-K-of-N.json/.md; merge with 'grokclocks verify --merge'")
    g.addoption("--suite-certificates", default=os.environ.get("GROKCLOCKS_SUITE_DIR"), metavar="DIR",
                help="also write one certificate per suite, DIR/<suite>.json/.md, as each suite finishes")
    g.addoption("--deadline", default=os.environ.get("GROKCLOCKS_DEADLINE"), metavar="EPOCH",
                help="do not start a test whose expected time would end after this time (seconds since the epoch)")
    g.addoption("--progress-every", default=os.environ.get("GROKCLOCKS_PROGRESS_S", "20"), metavar="SECONDS",
                help="print a line every SECONDS while a test runs longer (default 20; 0: off)")
    g.addoption("--verify-table", action="store_true", default=False,
                help="print the full verification table (every row) at the end, as well as the summary per paper; "
                     "by default the table is only in the certificate (.verify/verify-<scale>.md)")


def _check_report_dir(text: str, option: str = "--report-dir") -> Path:
    p = Path(text).expanduser()
    if p.exists() and not p.is_dir():
        raise pytest.UsageError(f"{option} {text!r} exists and is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise pytest.UsageError(f"{option} {text!r} cannot be created ({exc.strerror or exc})") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise pytest.UsageError(f"{option} {text!r} is not writable")
    return p


def _number(text, option: str, minimum: float) -> float | None:
    if text in (None, ""):
        return None
    try:
        x = float(text)
    except ValueError:
        x = math.nan
    if not (math.isfinite(x) and x >= minimum):
        raise pytest.UsageError(f"{option} must be a number >= {minimum:g} (got {text!r})")
    return x


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
    suite_dir = config.getoption("--suite-certificates")
    _STATE["suite_dir"] = _check_report_dir(suite_dir, "--suite-certificates") if suite_dir else None
    _STATE["deadline"] = _number(config.getoption("--deadline"), "--deadline", 0.0)
    _STATE["progress_every"] = _number(config.getoption("--progress-every"), "--progress-every", 0.0) or 0.0
    shard = config.getoption("--shard")
    try:
        _STATE["shard"] = parse_shard(shard) if shard else None
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    parallel = bool(getattr(config.option, "numprocesses", None)) or hasattr(config, "workerinput")
    if scale == "gpu":
        if parallel:
            raise pytest.UsageError("--scale gpu runs in one process per GPU (several processes exhausted cuSolver "
                                    "handles): drop -n/xdist, use --shard K/N for slices")
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    if parallel:
        for opt, name in (("suite_certificates", "--suite-certificates"), ("shard", "--shard"),
                          ("deadline", "--deadline")):
            if getattr(config.option, opt, None):
                raise pytest.UsageError(f"{name} runs in one process (the process that ran a suite writes its "
                                        "certificate): drop -n, or use -n 0")
    if getattr(config.option, "numprocesses", None) and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_WorkerRows(), "grokclocks-verify-worker-rows")
    _STATE.update(tests=[], compile={"total": 0.0, "max": 0.0, "max_fun": ""}, peak=0, listening=False,
                  deselected=[], budget_skipped={}, interrupted=set(), suite_span={}, written=set(),
                  estimates={}, config=config, started={}, speak=False, done=0, setup_s={})
    _listen()
    _STATE["t0"] = time.perf_counter()
    if _STATE["progress_every"] > 0 and not hasattr(config, "workerinput"):  # a worker has no terminal
        threading.Thread(target=_progress_loop, name="grokclocks-verify-progress", daemon=True).start()


def _listen() -> None:
    """Count XLA compile time from the moment JAX is imported (the verify modules import it at collection;
    the listener is not a reason to import JAX where nothing uses it)."""
    if not _STATE["listening"] and "jax" in sys.modules:
        import jax.monitoring

        jax.monitoring.register_event_duration_secs_listener(_on_compile)
        _STATE["listening"] = True


def _rel(item) -> str:
    return _rel_path(item.path)


def _rel_path(path) -> str:
    """A test file's path relative to verify/, "" outside it."""
    try:
        return Path(str(path)).resolve().relative_to(_HERE).as_posix()
    except ValueError:
        return ""


def _suite(item) -> str | None:
    """The suite (verify/<suite>/) of a test item; None outside a suite directory."""
    rel = _rel(item)
    return rel.split("/", 1)[0] if "/" in rel else None


def _budget_seconds() -> dict[str, float]:
    """Estimated H100 seconds per test node ('suite/test_x.py::test_y') from the committed budget table."""
    return budget_estimates(_BUDGET_DIR)


def pytest_deselected(items):
    _STATE.setdefault("deselected", []).extend(items)


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


def pytest_collection_finish(session):
    """Per suite: its collected tests, which of its test files were not collected or had tests deselected (an
    incomplete suite), and the expected seconds of each test (for --deadline and the progress lines)."""
    scale = session.config.getoption("--scale")
    by_suite: dict[str, list] = {}
    for it in session.items:
        s = _suite(it)
        if s:
            by_suite.setdefault(s, []).append(it)
    _STATE["suite_last"] = {s: its[-1].nodeid for s, its in by_suite.items()}
    desel = {}
    for it in _STATE.get("deselected", []):
        s = _suite(it)
        if s:
            desel.setdefault(s, []).append(it.nodeid)
    _STATE["suite_missing"] = {}
    for s, its in by_suite.items():
        files = {_rel(it).split("/", 1)[1].split("::")[0] for it in its}
        absent = sorted(f.name for f in (_HERE / s).glob("test_*.py") if f.name not in files)
        missing = [f"{len(desel.get(s, []))} tests deselected"] if desel.get(s) else []
        missing += [f"{f} not collected" for f in absent]
        _STATE["suite_missing"][s] = missing
    _STATE["estimates"].update(_estimates(scale, {s: [(it.nodeid, f"{_rel(it)}::{it.name}") for it in its]
                                                  for s, its in by_suite.items()}))
    _speak_or_not(session.config, [_rel(it) for it in session.items])


def _estimates(scale: str, by_suite: dict[str, list[tuple[str, str]]]) -> dict[str, float]:
    """The expected seconds of each test node ID, from (node ID, 'suite/test_x.py::test_y[...]') per suite: the
    latest measurement in the suite certificates, else verify/budget.py's estimate (--deadline, progress lines)."""
    out: dict[str, float] = {}
    budget = _budget_seconds() if scale == "gpu" else {}
    for s, nodes in by_suite.items():
        cert = None
        for d in (_STATE.get("suite_dir"), _COMMITTED_SUITE_DIR / scale):
            try:
                cert = cert or (read_suite_certificate(d / f"{s}.json") if d else None)
            except ValueError:
                pass
        if cert is None:  # the committed whole-tier certificate of this scale (its per-test wall times)
            try:
                cert = json.loads((_COMMITTED_SUITE_DIR / f"verify-{scale}.json").read_text())
            except (OSError, ValueError):
                cert = None
        try:
            per_fn = time_estimates(s, scale, certificate=cert, budget=budget, root=_ROOT)
        except (ValueError, TypeError, KeyError, AttributeError):  # a certificate not of the expected form
            per_fn = {}
        keys = {nodeid: function_of_node(rel) for nodeid, rel in nodes}
        n_items: dict[str, int] = {}
        for key in keys.values():
            n_items[key] = n_items.get(key, 0) + 1
        for nodeid, key in keys.items():
            if key in per_fn:
                out[nodeid] = per_fn[key][0] / n_items[key]
    return out


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


def _budget_skip(item) -> None:
    """Do not start the test if its expected time would end past --deadline."""
    deadline = _STATE.get("deadline")
    if deadline is None:
        return
    est = _STATE["estimates"].get(item.nodeid, 0.0)
    left = deadline - time.time()
    if est > left:
        reason = f"budget: expected {est:.0f} s, {max(left, 0.0):.0f} s left before the deadline"
        _STATE["budget_skipped"][item.nodeid] = reason
        item.add_marker(pytest.mark.skip(reason=reason))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _rel(item):
        yield
        return
    _listen()
    _budget_skip(item)
    listening = _STATE["listening"]
    c = _STATE["compile"]
    c0, m0 = c["total"], c["max"]
    c["max"], c["max_fun"] = 0.0, ""
    _STATE["outcome"] = "passed"
    t0 = time.perf_counter()
    suite = _suite(item)
    if suite:
        _STATE["suite_span"].setdefault(suite, [t0, t0])
    outcome = yield
    t1 = time.perf_counter()
    if getattr(outcome, "excinfo", None) is not None:  # interrupted (KeyboardInterrupt, SIGINT): its suite gets no certificate
        if suite:
            _STATE["interrupted"].add(suite)
        return
    peak, kind = _memory()
    out = _STATE["outcome"]
    if item.nodeid in _STATE["budget_skipped"]:
        out = "not run (budget)"
    rec = {"test": item.nodeid, "outcome": out, "wall_s": t1 - t0,
           "compile_s": c["total"] - c0 if listening else None, "compile_max_s": c["max"] if listening else None,
           "compile_max_fun": c["max_fun"], "peak_bytes": peak, "memory_kind": kind,
           "raised_peak": bool(peak and peak > _STATE["peak"])}
    if suite:
        rec["suite"] = suite
    if _STATE.get("shard"):
        rec["shard"] = f"{_STATE['shard'][0]}/{_STATE['shard'][1]}"
    _STATE["peak"] = max(_STATE["peak"], peak or 0)
    c["max"] = max(c["max"], m0)
    _STATE["tests"].append(rec)
    if suite:
        _STATE["suite_span"][suite][1] = t1
        if _STATE.get("suite_last", {}).get(suite) == item.nodeid:
            _write_suite(suite, item.session)


def pytest_runtest_logreport(report):
    if _STATE.get("speak"):
        _speak(report)
    if report.failed:
        _STATE["outcome"] = "failed" if report.when == "call" else "error"
    elif report.skipped and _STATE.get("outcome") == "passed":
        _STATE["outcome"] = "skipped"


# ------------------------------------------------------------------------------------------ per-suite certificates


def _meta(config) -> dict:
    commit = _git("rev-parse", "HEAD")
    if commit:
        return {"commit": commit, "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
                "pytest_args": list(config.invocation_params.args)}
    # A copy of the tree without its .git (a GPU machine the checkout was sent to): the commit it was copied
    # from, if the caller states it; whether the copy was clean is not known here (dirty None). The suite
    # fingerprint (the hash of every file the suite depends on) is what decides whether a certificate holds.
    stated = os.environ.get("GROKCLOCKS_COMMIT", "")
    ok = len(stated) == 40 and all(c in "0123456789abcdef" for c in stated)
    return {"commit": stated if ok else None, "dirty": None,
            **({"commit_source": "GROKCLOCKS_COMMIT (no git checkout where it ran)"} if ok else {}),
            "pytest_args": list(config.invocation_params.args)}


def _write_suite(suite: str, session) -> None:
    """Write DIR/<suite>.json/.md (--suite-certificates) once the suite's last test has finished."""
    d = _STATE.get("suite_dir")
    if d is None or suite in _STATE["written"] or suite in _STATE["interrupted"]:
        return
    if session.shouldstop or session.shouldfail:  # -x / --maxfail: the suite did not run to its end
        return
    _STATE["written"].add(suite)
    rep: Report = _STATE["report"]
    mine = [t for t in _STATE["tests"] if t.get("suite") == suite]
    nodes = {t["test"] for t in mine}
    rows = [r for r in rep.rows if r.test in nodes]
    not_run = [t["test"] for t in mine if t["outcome"] == "not run (budget)"]
    reasons = list(_STATE["suite_missing"].get(suite, []))
    if not_run:
        reasons.append(f"{len(not_run)} tests not started (--deadline)")
    t0, t1 = _STATE["suite_span"].get(suite, (0.0, 0.0))
    meta = _meta(session.config) | {
        "complete": not reasons, "not_run": not_run, "not_run_reason": reasons,
        "startup_s": _STATE.get("first_test_t", t0) - _STATE["t0"]}
    cert = suite_certificate(rows, suite, rep.scale, t1 - t0, tests=mine, meta=meta, root=_ROOT)
    js, _ = write_certificate(cert, d, suite, overwrite=True)
    tr = session.config.pluginmanager.getplugin("terminalreporter")
    if tr is not None:
        tr.write_line(f"suite certificate {js} ({'complete' if not reasons else 'incomplete: ' + '; '.join(reasons)})")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _STATE.setdefault("first_test_t", time.perf_counter())


# ------------------------------------------------------------------------------------------ progress of long tests


def _terminal_write(text: str) -> None:
    """Write a line to the terminal while a test runs, past pytest's output capture (best effort)."""
    config = _STATE.get("config")
    capman = config.pluginmanager.getplugin("capturemanager") if config else None
    out = getattr(getattr(capman, "_global_capturing", None), "out", None)
    data = (text + "\n").encode()
    try:
        fd = getattr(out, "targetfd_save", None)
        if fd is not None:
            os.write(fd, data)
            return
        old = getattr(out, "_old", None)
        stream = old if old is not None else sys.__stdout__
        stream.write(text + "\n")
        stream.flush()
    except (OSError, ValueError, AttributeError):
        pass


def _progress_loop() -> None:
    """Every `--progress-every` seconds, a line for each test still running (in one process the test this process
    runs; under pytest-xdist the workers' tests, whose starts the controller sees)."""
    every = _STATE["progress_every"]
    shown: dict[str, float] = {}
    while True:
        time.sleep(min(1.0, every / 4))
        due = []  # one line for every test that is due (two workers: both tests on one line)
        for node, t0 in list(_STATE["started"].items()):
            elapsed = time.perf_counter() - t0
            if elapsed >= shown.get(node, 0.0) + every:
                shown[node] = elapsed - elapsed % every
                est = _STATE["estimates"].get(node) or 0.0
                due.append(f"{node} still running: {elapsed:.0f} s" + (f" (expected {est:.0f} s)" if est >= 1 else ""))
        if due:
            _terminal_write(("\n" if not _STATE.get("speak") else "") + "    ... " + "; ".join(due))


# ------------------------------------------------------------------------------------------ what the terminal shows
#
# A session of verify tests only (`pytest verify`, `grokclocks verify`, a suite or a file of verify/), at pytest's
# default verbosity, speaks: one line per finished test instead of pytest's dots -- a count, the test, its outcome
# and wall time, and the spec IDs its rows checked with their verdicts -- in one process and under pytest-xdist
# alike (the rows travel from a worker to the controller in the report's user_properties). -v gives pytest's own
# lines, -q its dots. The end of every session with verify rows is a summary per paper that fits one screen
# (pytest_terminal_summary below); the full table is in the certificate, and in the terminal with --verify-table.

_ROWS_PROPERTY = "grokclocks_rows"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """The spec IDs and verdicts of the rows a test recorded, on its call report (pytest-xdist sends a report's
    user_properties from the worker to the controller)."""
    rep = yield
    if call.when == "call" and _rel(item) and _STATE.get("report") is not None:
        rows = [[r.spec_id, r.verdict] for r in _STATE["report"].rows if r.test == item.nodeid]
        rep.user_properties = [*rep.user_properties, (_ROWS_PROPERTY, rows)]
    return rep


def _speak_or_not(config, rels: list[str]) -> None:
    """Speak (one line per test) when every collected test is a verify test, pytest's verbosity is the default and
    this process has the terminal."""
    if _STATE.get("speak") or hasattr(config, "workerinput") or config.option.verbose != 0:
        return
    if not rels or not all(rels):
        return
    tr = config.pluginmanager.getplugin("terminalreporter")
    if tr is None:
        return
    _STATE.update(speak=True, total=len(rels))
    tr.showfspath = False  # no "verify/levi/test_x.py " prefix for pytest's letters (blanked below)
    if hasattr(tr, "_show_progress_info"):  # pytest's [ NN%] after its letters: the lines below carry the count
        tr._show_progress_info = False
    suites = sorted({r.split("/", 1)[0] for r in rels if "/" in r})
    tr.write_line(f"grokclocks verify, {config.getoption('--scale')} scale: {len(rels)} tests"
                  + (f" in {len(suites)} suites ({', '.join(suites)})" if suites else "")
                  + "; a line per finished test with the spec IDs it checked")


def _node_rel(config, nodeid: str) -> str:
    return _rel_path(Path(str(config.rootpath)) / nodeid.split("::", 1)[0])


@pytest.hookimpl(wrapper=True)
def pytest_report_teststatus(report, config):
    """While speaking, pytest's letter for a test ('.', 'F', 's') is left out: the test's line says it."""
    res = yield
    if _STATE.get("speak") and res and len(res) == 3 and res[1]:
        return (res[0], "", res[2])
    return res


def pytest_runtest_logstart(nodeid, location):
    """A verify test started (here, or in a pytest-xdist worker): the progress lines watch it."""
    config = _STATE.get("config")
    if config is not None and _node_rel(config, nodeid):  # a whole `pytest` under xdist: tests/ items too
        _STATE["started"][nodeid] = time.perf_counter()


def pytest_runtest_logfinish(nodeid, location):
    _STATE["started"].pop(nodeid, None)


def _rows_said(rows: list) -> str:
    """'levi:eq11 (pass x2, rejected), levi:eq9 FAIL': each spec ID once, in order, with its verdicts."""
    by_id: dict[str, dict[str, int]] = {}
    for spec_id, verdict in rows:
        v = by_id.setdefault(spec_id, {})
        v[verdict] = v.get(verdict, 0) + 1
    said = []
    for i, vs in by_id.items():
        words = [v if n == 1 else f"{v} x{n}" for v, n in vs.items()]
        said.append(f"{i} {words[0]}" if len(words) == 1 else f"{i} ({', '.join(words)})")
    return ", ".join(said)


def _speak(report) -> None:
    """The line of a finished test (called for each report of a verify test while speaking)."""
    config = _STATE.get("config")
    tr = config.pluginmanager.getplugin("terminalreporter") if config else None
    if tr is None:
        return
    if report.when == "setup":
        _STATE["setup_s"][report.nodeid] = report.duration
        if report.passed:
            return
    if report.when == "teardown" and not report.failed:
        return
    if report.when != "teardown":
        _STATE["done"] += 1
    if report.when == "teardown":
        word = "ERROR in teardown"
    elif report.skipped:
        word = "skipped"
    elif report.failed:
        word = "FAILED" if report.when == "call" else "ERROR"
    else:
        word = "passed"
    rows = next((v for k, v in report.user_properties if k == _ROWS_PROPERTY), [])
    seconds = report.duration + (_STATE["setup_s"].pop(report.nodeid, 0.0) if report.when == "call" else 0.0)
    total = _STATE.get("total", 0)
    elapsed = int(time.perf_counter() - _STATE["t0"])
    count = f"[{_STATE['done']:{len(str(total))}d}/{total} {elapsed // 60}:{elapsed % 60:02d}]"
    line = f"{count} {report.nodeid}  {word}  {seconds:.1f} s"
    said = _rows_said(rows)
    if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        said = str(report.longrepr[2]).removeprefix("Skipped: ")
    elif report.failed and not said:  # no row: the exception's first line
        said = str(getattr(getattr(report.longrepr, "reprcrash", None), "message", "") or "").split("\n", 1)[0]
    if said:
        room = max(40, tr._tw.fullwidth - len(line) - 3) if hasattr(tr, "_tw") else 100
        line += "  " + (said if len(said) <= room else said[: room - 1].rstrip(", ") + "…")
    markup = {"red": True} if report.failed else {"yellow": True} if report.skipped else {}
    tr.write_line(line, **markup)


# ------------------------------------------------------------------------------------------ fixtures and the table


@pytest.fixture(scope="session")
def scale(pytestconfig) -> str:
    """'cpu' or 'gpu'."""
    return pytestconfig.getoption("--scale")


@pytest.fixture
def report(request) -> Report:
    """The session's verification report; `report.check(...)` / `report.reject(...)` / `report.observe(...)`."""
    rep: Report = _STATE["report"]
    rep.current_test = request.node.nodeid
    return rep


def pytest_sessionfinish(session, exitstatus):
    _STATE["stopped_early"] = (bool(session.shouldstop or session.shouldfail)  # -x / --maxfail
                               or bool(_STATE.get("stopped_early")))  # a worker's, in a parallel session
    _STATE["exitstatus"] = exitstatus
    out = getattr(session.config, "workeroutput", None)
    if out is not None and _STATE.get("report") is not None:  # an xdist worker: hand the rows to the controller
        rows = [dataclasses.asdict(r) for r in _STATE["report"].rows]
        out["grokclocks_verify"] = json.dumps({"rows": rows, "tests": _STATE.get("tests", []),
                                               "stopped_early": _STATE["stopped_early"]}, default=_jsonable)


def _jsonable(x):
    """JSON for the numpy scalars and arrays a row's details may hold."""
    return x.tolist() if hasattr(x, "tolist") else str(x)


class _WorkerRows:
    """The controller of a parallel session (pytest-xdist): each worker's rows and test records, gathered when
    the worker goes down, in the order of the test files (each file ran whole in one worker: --dist loadfile,
    so a file's rows keep their order)."""

    def pytest_xdist_node_collection_finished(self, node, ids):
        """The estimates of each test (progress lines) and whether to speak, from the first worker's collection."""
        if _STATE.get("collected_ids"):
            return
        _STATE["collected_ids"] = True
        config = _STATE["config"]
        rels = {nodeid: _node_rel(config, nodeid) for nodeid in ids}
        by_suite: dict[str, list[tuple[str, str]]] = {}
        for nodeid, rel in rels.items():
            if "/" in rel:
                by_suite.setdefault(rel.split("/", 1)[0], []).append((nodeid, f"{rel}::{nodeid.rsplit('::', 1)[-1]}"))
        _STATE["estimates"].update(_estimates(config.getoption("--scale"), by_suite))
        _speak_or_not(config, list(rels.values()))

    def pytest_testnodedown(self, node, error):
        data = getattr(node, "workeroutput", {}).get("grokclocks_verify")
        if not data:
            return
        got = json.loads(data)
        rep: Report = _STATE["report"]
        rep.rows.extend(Row(**r) for r in got["rows"])
        rep.rows.sort(key=lambda r: r.test.split("::", 1)[0])  # stable: a file's rows stay in their order
        _STATE["tests"].extend(got["tests"])
        _STATE["tests"].sort(key=lambda t: t["test"].split("::", 1)[0])
        _STATE["stopped_early"] = _STATE.get("stopped_early") or got["stopped_early"]


def _partial_run(config, terminalreporter) -> str | None:
    """Why this session ran less than the whole tier (tests deselected by -k / -m / --deselect / --lf, a
    file, test or suite named instead of verify/, a stop after a failure, an interruption, tests not started
    for the deadline), or None: a partial certificate must not replace the committed one (docs/gen_pages.py
    reads this)."""
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
    if _STATE.get("exitstatus") == pytest.ExitCode.INTERRUPTED:
        reasons.append("interrupted")
    if _STATE.get("budget_skipped"):
        reasons.append(f"{len(_STATE['budget_skipped'])} tests not started (--deadline)")
    return "; ".join(reasons) or None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if hasattr(config, "workerinput"):  # an xdist worker: the controller writes the table
        return
    rep: Report | None = _STATE.get("report")
    tests = _STATE.get("tests", [])
    if rep is None or not (rep.rows or (tests and _STATE.get("shard"))):
        return
    dt = time.perf_counter() - _STATE["t0"]
    tr = terminalreporter
    shard = _STATE.get("shard")
    title = (f"grokclocks verification table ({rep.scale} scale"
             + (f", slice {shard[0]} of {shard[1]})" if shard else ")"))
    if config.getoption("--verify-table"):
        tr.section(title)
        tr.write_line(format_table(rep.rows, width=max(tr._tw.fullwidth, 140)))
    meta = _meta(config) | {"partial": _partial_run(config, terminalreporter),
                            "workers": int(getattr(config.option, "numprocesses", 0) or 1)}
    stem = None
    if shard:
        meta.update(shard=list(shard), plan=_STATE.get("plan", {}), plan_weights=_STATE.get("plan_weights", {}),
                    plan_digest=hashlib.sha1(repr(sorted(_STATE.get("plan", {}).items())).encode()).hexdigest()[:12])
        stem = f"verify-{rep.scale}-shard-{shard[0]}-of-{shard[1]}"
    # each `pytest verify` run replaces the report directory's verify-<scale>.* and keeps the previous pair as
    # verify-<scale>.prev.* (README); `grokclocks verify` asks for --overwrite only for a --report-dir it was given
    js, md = write_report(rep.rows, _STATE["report_dir"], rep.scale, dt, tests=tests, meta=meta, stem=stem,
                          keep_previous=True)
    from grokclocks.verification import budget_warnings

    tr.section(title + ": summary")
    for line, markup in summary_lines(rep.rows, tests, dt, width=tr._tw.fullwidth):
        tr.write_line(line, **markup)
    for w in budget_warnings(tests, rep.scale):
        tr.write_line(f"BUDGET WARNING: {w}", red=True)
    n_bad = sum(not r.passed for r in rep.rows)
    tr.write_line(f"{len(rep.rows)} rows, {n_bad} failed; certificate written to {md} and {js}"
                  + ("" if config.getoption("--verify-table") else
                     " (every row with its tolerance and the tolerance's source; in the terminal: --verify-table)"))


_PAPER_ORDER = ("levi", "clocks", "kramers", "uniformity", "repulsion")
_SHOWN = 10  # failed rows (two lines each) and failed tests named in the summary; the rest are in the certificate


def _g(x) -> str:
    return "0" if x == 0 else f"{x:.4g}"


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: max(n - 1, 0)].rstrip() + "…"


def summary_lines(rows: list, tests: list[dict], seconds: float, width: int = 100) -> list[tuple[str, dict]]:
    """The end of a verify session, to fit one screen: the tests' outcomes, the rows per paper (the spec ID's
    prefix) as passed / rejected / reported / failed, every failed row with its spec ID and numbers, and every
    failed test that recorded no failed row. (line, terminal markup) pairs."""
    width = max(int(width or 100), 80)
    out: list[tuple[str, dict]] = []
    outcomes: dict[str, int] = {}
    for t in tests:
        outcomes[t["outcome"]] = outcomes.get(t["outcome"], 0) + 1
    said = ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items(), key=lambda kv: (-kv[1], kv[0])))
    out.append((f"{len(tests)} tests ({said}) in {seconds:.0f} s; {len(rows)} rows:" if tests
                else f"{len(rows)} rows in {seconds:.0f} s:", {}))
    counts: dict[str, dict[str, int]] = {}
    for r in rows:
        c = counts.setdefault(r.spec_id.split(":", 1)[0], dict.fromkeys(("rows", "passed", "rejected", "reported",
                                                                          "failed"), 0))
        c["rows"] += 1
        c["failed" if not r.passed else {"agree": "passed", "reject": "rejected"}.get(r.kind, "reported")] += 1
    papers = [p for p in _PAPER_ORDER if p in counts] + sorted(p for p in counts if p not in _PAPER_ORDER)
    cols = ("rows", "passed", "rejected", "reported", "failed")
    out.append(("  " + f"{'paper':<12}" + "".join(f"{c:>10}" for c in cols), {"bold": True}))
    total = dict.fromkeys(cols, 0)
    for p in papers:
        for c in cols:
            total[c] += counts[p][c]
        out.append(("  " + f"{p:<12}" + "".join(f"{counts[p][c]:>10}" for c in cols),
                    {"red": True} if counts[p]["failed"] else {}))
    if len(papers) > 1:
        out.append(("  " + f"{'all':<12}" + "".join(f"{total[c]:>10}" for c in cols), {"bold": True}))
    out += [(line, {}) for line in textwrap.wrap(
        "passed: the prediction within its tolerance; rejected: a plausible wrong variant rejected, which shows "
        "the check can fail; reported: a measurement with no prediction to test.", width - 2,
        initial_indent="  ", subsequent_indent="  ")]
    bad = [r for r in rows if not r.passed]
    if bad:
        out.append((f"Failed rows ({len(bad)}):", {"red": True, "bold": True}))
        for r in bad[:_SHOWN]:
            if r.kind == "reject":
                numbers = (f"NOT REJECTED: wrong variant {_g(r.predicted)}, measured {_g(r.measured)}, error "
                           f"{_g(r.error)} ({r.metric}) <= tolerance {_g(r.tolerance)}")
            else:
                numbers = (f"FAIL: predicted {_g(r.predicted)}, measured {_g(r.measured)}, error {_g(r.error)} "
                           f"({r.metric}) > tolerance {_g(r.tolerance)}")
            head = f"  {r.spec_id}  {numbers}"
            out.append((head, {"red": True}))
            out.append(("      " + _short(f"{r.test}: {r.what}" if r.what else r.test, width - 6), {}))
        if len(bad) > _SHOWN:
            out.append((f"  ... and {len(bad) - _SHOWN} more failed rows in the certificate", {"red": True}))
    failed_nodes = {r.test for r in bad}
    lost = [t for t in tests if t["outcome"] in ("failed", "error") and t["test"] not in failed_nodes]
    if lost:
        out.append((f"Tests that failed without a failed row ({len(lost)}; the traceback is above):",
                    {"red": True, "bold": True}))
        out += [(f"  {t['test']} ({t['outcome']})", {"red": True}) for t in lost[:_SHOWN]]
        if len(lost) > _SHOWN:
            out.append((f"  ... and {len(lost) - _SHOWN} more", {"red": True}))
    return out
