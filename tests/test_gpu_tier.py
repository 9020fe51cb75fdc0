"""The GPU tier piece by piece: per-suite certificates, their fingerprint and staleness, the planner of a GPU
window (`grokclocks verify --budget`), and the plugin options it relies on (--suite-certificates, --deadline,
--progress-every), with fake timings on small throw-away checkouts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grokclocks import verification as Vf
from grokclocks.verification import Report, SuiteStatus, plan_run, suite_certificate, suite_status, write_certificate

ROOT = Path(__file__).resolve().parents[1]
CONFTEST = (ROOT / "verify" / "conftest.py").read_text()


@pytest.fixture(autouse=True)
def _checkout_first_on_path(monkeypatch):
    """Subprocesses import grokclocks from this checkout (not another install of the package)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    monkeypatch.delenv("GROKCLOCKS_SCALE", raising=False)


def _checkout(tmp: Path, suites: dict[str, str], *, helpers: dict[str, str] | None = None) -> Path:
    """A throw-away checkout: verify/conftest.py (the real one), verify/<suite>/test_<suite>.py, and files of a
    small package `grokclocks`-like tree given in `helpers` (path -> text)."""
    (tmp / "verify").mkdir(parents=True)
    (tmp / "verify" / "conftest.py").write_text(CONFTEST)
    for s, text in suites.items():
        (tmp / "verify" / s).mkdir()
        (tmp / "verify" / s / "__init__.py").write_text("")
        (tmp / "verify" / s / f"test_{s}.py").write_text(text)
    for path, text in (helpers or {}).items():
        (tmp / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp / path).write_text(text)
    return tmp


def _git(root: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


_PASS = """
def test_one(report):
    report.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.01, source="demo", what="one")
"""


# ---------------------------------------------------------------- fingerprint and state


def test_suite_files_follow_imports_into_the_package_and_other_suites(tmp_path):
    root = _checkout(tmp_path, {
        "sa": "from grokclocks.sub import f\nfrom sb import _shared\n\ndef test_x():\n    import grokclocks.lazy\n",
        "sb": _PASS}, helpers={
        "grokclocks/__init__.py": "from . import core\n",
        "grokclocks/core.py": "X = 1\n",
        "grokclocks/sub/__init__.py": "from ._impl import f\n",
        "grokclocks/sub/_impl.py": "def f():\n    from .. import deep\n    return deep\n",
        "grokclocks/deep.py": "",
        "grokclocks/lazy.py": "",
        "grokclocks/unused.py": "",
        "verify/sb/_shared.py": "import numpy\n"})
    files = Vf.suite_files("sa", root)
    assert files == ["grokclocks/__init__.py", "grokclocks/core.py", "grokclocks/deep.py", "grokclocks/lazy.py",
                     "grokclocks/sub/__init__.py", "grokclocks/sub/_impl.py", "verify/conftest.py",
                     "verify/sa/__init__.py", "verify/sa/test_sa.py", "verify/sb/__init__.py", "verify/sb/_shared.py"]
    assert "grokclocks/unused.py" not in Vf.suite_files("sb", root)
    assert Vf.suites(root) == ["sa", "sb"]
    with pytest.raises(ValueError, match="suite"):
        Vf.suite_files("nope", root)
    with pytest.raises(ValueError, match="suite"):
        Vf.suite_files("../sa", root)


def test_the_real_suites_depend_on_their_theory_modules():
    files = Vf.suite_files("kramers")
    assert "verify/kramers/test_kramers.py" in files and "grokclocks/kramers/_mfpt.py" in files
    assert "grokclocks/sim/langevin.py" in files and "verify/conftest.py" in files
    assert not any(f.startswith("verify/levi/") for f in files)


def _cert(root: Path, suite: str, *, fail: bool = False, commit: str | None = None, complete: bool = True,
          tests=None) -> dict:
    rep = Report("gpu")
    rep.current_test = f"verify/{suite}/test_{suite}.py::test_one"
    try:
        rep.check("levi:eq8", predicted=1.0, measured=2.0 if fail else 1.0, rtol=0.01, source="demo")
    except AssertionError:
        pass
    meta = {"commit": commit, "complete": complete, "not_run": [] if complete else [rep.current_test]}
    return suite_certificate(rep.rows, suite, "gpu", 12.0, tests=tests, meta=meta, root=root)


def test_suite_status_passed_failed_incomplete_never_and_stale_since_the_commit(tmp_path):
    root = _checkout(tmp_path, {"sa": "from grokclocks import core\n" + _PASS},
                     helpers={"grokclocks/__init__.py": "", "grokclocks/core.py": "X = 1\n"})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "first")
    c0 = _git(root, "rev-parse", "HEAD")
    cert = _cert(root, "sa", commit=c0)
    assert cert["meta"]["fingerprint"]["files"].keys() >= {"grokclocks/core.py", "verify/sa/test_sa.py"}
    assert suite_certificate([], "sa", "gpu", 500.0, root=root)["budget_warnings"] == ["suite sa: wall time 500 s > 420 s"]
    assert suite_certificate([], "sa", "gpu", 400.0, root=root)["budget_warnings"] == []
    assert suite_status(None, "sa", root).state == "never run"
    st = suite_status(cert, "sa", root)
    assert (st.state, st.verdict, st.n_rows, st.n_failed, st.wall_s) == ("passed", "passed", 1, 0, 12.0)
    assert suite_status(_cert(root, "sa", fail=True), "sa", root).state == "failed"
    failed_test = _cert(root, "sa", tests=[{"test": "verify/sa/test_sa.py::test_one", "outcome": "failed"}])
    assert suite_status(failed_test, "sa", root).state == "failed"  # a test that failed outside the rows
    inc = suite_status(_cert(root, "sa", complete=False), "sa", root)
    assert inc.state == "incomplete" and inc.not_run == ("verify/sa/test_sa.py::test_one",)
    # an edit of an imported module makes it stale: first uncommitted, then since the commit that made it
    (root / "grokclocks" / "core.py").write_text("X = 2\n")
    st = suite_status(cert, "sa", root)
    assert st.state == "stale" and st.changed == ("grokclocks/core.py",) and st.stale_since == "uncommitted changes"
    assert st.verdict == "passed"  # the certificate is kept and says what it was
    _git(root, "commit", "-qam", "second")
    c1 = _git(root, "rev-parse", "--short", "HEAD")
    (root / "verify" / "sa" / "NOTES.txt").write_text("not python: not a dependency")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "third")
    st = suite_status(cert, "sa", root)
    assert st.stale_since == c1 and suite_status(cert, "sa", root, git=False).stale_since is None
    # back to the certified content: fresh again, whatever the commit
    (root / "grokclocks" / "core.py").write_text("X = 1\n")
    assert suite_status(cert, "sa", root).state == "passed"
    with pytest.raises(ValueError, match="suite"):
        suite_status(_cert(root, "sa"), "sb", root)


def test_reporting_code_does_not_stale_a_certificate_and_a_failure_counts_once(tmp_path):
    """The modules that only write, read and render certificates (grokclocks/verification/ except _report.py)
    are kept apart in the fingerprint: editing one leaves the certificate fresh; editing _report.py (it
    computes the verdicts) or a theory module stales it.  A test stopped by its failed row counts once."""
    root = _checkout(tmp_path, {"sa": "from grokclocks.verification import _suites, _report\n" + _PASS},
                     helpers={"grokclocks/__init__.py": "", "grokclocks/verification/__init__.py": "",
                              "grokclocks/verification/_suites.py": "A = 1\n",
                              "grokclocks/verification/_report.py": "B = 1\n"})
    cert = _cert(root, "sa")
    fp = cert["meta"]["fingerprint"]
    assert "grokclocks/verification/_suites.py" in fp["reporting"] and "grokclocks/verification/_suites.py" not in fp["files"]
    assert "grokclocks/verification/_report.py" in fp["files"]
    (root / "grokclocks" / "verification" / "_suites.py").write_text("A = 2\n")
    assert suite_status(cert, "sa", root, git=False).state == "passed"
    # a certificate written before the split listed every file under "files": judged the same way
    legacy = json.loads(json.dumps(cert))
    legacy["meta"]["fingerprint"]["files"].update(legacy["meta"]["fingerprint"].pop("reporting"))
    assert suite_status(legacy, "sa", root, git=False).state == "passed"
    (root / "grokclocks" / "verification" / "_report.py").write_text("B = 2\n")
    st = suite_status(cert, "sa", root, git=False)
    assert st.state == "stale" and st.changed == ("grokclocks/verification/_report.py",)
    (root / "grokclocks" / "verification" / "_report.py").write_text("B = 1\n")
    one = "verify/sa/test_sa.py::test_one"
    both = _cert(root, "sa", fail=True, tests=[{"test": one, "outcome": "failed"}])
    st = suite_status(both, "sa", root, git=False)
    assert (st.state, st.n_failed, st.n_failed_tests) == ("failed", 1, 0)
    assert "| 1 (1) |" in Vf.status_markdown([st])
    other = _cert(root, "sa", tests=[{"test": one, "outcome": "passed"},
                                     {"test": "verify/sa/test_sa.py::test_two", "outcome": "error"}])
    st = suite_status(other, "sa", root, git=False)
    assert (st.state, st.n_failed, st.n_failed_tests) == ("failed", 0, 1)
    assert "| 1 (0 + 1 test outside the table) |" in Vf.status_markdown([st])


def test_suite_certificates_are_read_back_checked_and_the_newest_is_used(tmp_path):
    root = _checkout(tmp_path / "co", {"sa": _PASS, "sb": _PASS})
    old, new = _cert(root, "sa"), _cert(root, "sa", fail=True)
    old["meta"]["date"], new["meta"]["date"] = "2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00"
    write_certificate(old, tmp_path / "committed", "sa")
    write_certificate(new, tmp_path / "window", "sa")
    st = Vf.suite_statuses([tmp_path / "window", tmp_path / "committed", tmp_path / "missing"], root=root)
    assert [(s.suite, s.state) for s in st] == [("sa", "failed"), ("sb", "never run")]
    table = Vf.status_markdown(st, link_dir="gpu")
    assert "| [`sa`](gpu/sa.md) | **failed** | 1 (1) | 2026-02-01 00:00 |" in table and "| `sb` | never run |" in table
    # a file that is not a suite certificate is refused with its name, not trusted
    (tmp_path / "window" / "sb.json").write_text(json.dumps({"meta": {"suite": "../x", "scale": "gpu"}, "rows": []}))
    with pytest.raises(Vf.CertificateError, match="sb.json: not a suite certificate"):
        Vf.suite_statuses([tmp_path / "window"], root=root)
    (tmp_path / "window" / "sb.json").write_text("{")
    with pytest.raises(Vf.CertificateError, match="not a readable certificate"):
        Vf.read_suite_certificate(tmp_path / "window" / "sb.json")


# ---------------------------------------------------------------- the planner, with fake timings


def _st(suite: str, state: str, date: str | None = None) -> SuiteStatus:
    return SuiteStatus(suite, state, date=date, stale_since="abc1234" if state == "stale" else None)


def test_plan_runs_missing_and_stale_suites_oldest_first_within_the_budget():
    statuses = [_st("a", "passed", "2026-01-01"), _st("b", "stale", "2026-03-01"), _st("c", "never run"),
                _st("d", "stale", "2026-02-01"), _st("e", "incomplete", "2026-01-15"), _st("f", "failed", "2025-12-01"),
                _st("g", "never run")]
    times = {"a": 10, "b": 50, "c": 100, "d": 300, "e": 40, "f": 5, "g": 30}
    est = {s: {f"{s}/test_{s}.py::test_x": (float(t), "fake")} for s, t in times.items()}
    items = plan_run(statuses, est, 260.0, start_s=10.0)
    planned = [p.suite for p in items if p.run]
    # never run first (in the given order), then oldest certificate first; d (310 s) does not fit and is passed
    # over for the later ones that do; fresh certificates (passed or failed) are not rerun
    assert planned == ["c", "g", "e", "b"]
    assert sum(p.estimate_s for p in items if p.run) == 110 + 40 + 50 + 60 <= 260
    why = {p.suite: p.why_not for p in items if not p.run}
    assert why == {"d": "does not fit: needs 310 s, 60 s left", "a": "fresh (passed)", "f": "fresh (failed)"}
    assert [p.reason for p in items if p.run] == ["never run", "never run", "incomplete (0 tests not run)",
                                                   "stale since abc1234"]
    assert plan_run(statuses, est, 0.0) == [p for p in plan_run(statuses, est, 0.0) if not p.run]
    with pytest.raises(ValueError, match="budget_s"):
        plan_run(statuses, est, -1.0)
    with pytest.raises(ValueError, match="statuses"):
        plan_run(["a"], est, 10.0)


def test_time_estimates_prefer_the_latest_measurement_over_the_budget_table(tmp_path):
    root = _checkout(tmp_path, {"sa": _PASS + "\ndef test_two():\n    pass\n\ndef helper():\n    pass\n"})
    assert Vf.suite_tests("sa", root) == ["sa/test_sa.py::test_one", "sa/test_sa.py::test_two"]
    cert = _cert(root, "sa", tests=[
        {"test": "verify/sa/test_sa.py::test_one[1]", "outcome": "passed", "wall_s": 3.0},
        {"test": "verify/sa/test_sa.py::test_one[2]", "outcome": "failed", "wall_s": 4.0},
        {"test": "verify/sa/test_sa.py::test_two", "outcome": "not run (budget)", "wall_s": 0.0}])
    budget = {"sa/test_sa.py::test_one": 100.0, "sa/test_sa.py::test_two": 50.0}
    est = Vf.time_estimates("sa", "gpu", certificate=cert, budget=budget, root=root)
    assert est["sa/test_sa.py::test_one"][0] == 7.0 and est["sa/test_sa.py::test_one"][1].startswith("measured")
    assert est["sa/test_sa.py::test_two"] == (50.0, "estimate (verify/budget.py)")
    assert Vf.time_estimates("sa", "gpu", root=root)["sa/test_sa.py::test_two"][0] == Vf.DEFAULT_TEST_S
    assert Vf.time_estimates("sa", "cpu", certificate=cert, budget=budget, root=root)[
        "sa/test_sa.py::test_two"][0] == 1.0  # a gpu measurement does not time a cpu run
    assert Vf.function_of_node("verify/levi/test_levi.py::test_x[0.5-a]") == "levi/test_levi.py::test_x"
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "sa.json").write_text(json.dumps({"modules": {"sa/test_sa.py": {"items": [
        {"test": "test_one", "h100_s": 2.0}, {"test": "test_one", "h100_s": 3.0}, {"test": "test_two"}]}}}))
    (tmp_path / "b" / "broken.json").write_text("{")
    assert Vf.budget_estimates(tmp_path / "b") == {"sa/test_sa.py::test_one": 5.0}


def test_the_committed_budget_fits_the_gpu_windows():
    """Item 3 of the GPU-tier issue, on the committed budget table: no test over 240 s, no suite over 420 s with
    its start-up, every test of every suite registered (a test with no estimate would be timed at 60 s)."""
    budget = Vf.budget_estimates(ROOT / "docs" / "verification" / "gpu-budget")
    for suite in Vf.suites():
        est = Vf.time_estimates(suite, "gpu", budget=budget)
        unregistered = [t for t, (_, src) in est.items() if src.startswith("no estimate")]
        assert not unregistered, f"tests without a GPU budget estimate: {unregistered}"
        over = {t: s for t, (s, _) in est.items() if s > Vf.GPU_TEST_LIMIT_S}
        assert not over, f"tests estimated over {Vf.GPU_TEST_LIMIT_S:.0f} s: {over}"
        total = Vf.SUITE_START_S + sum(s for s, _ in est.values())
        assert total <= Vf.GPU_SUITE_LIMIT_S, f"suite {suite} estimated at {total:.0f} s"


# ---------------------------------------------------------------- the pytest plugin: suite certificates, deadline


def _pytest(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "verify", "-p", "no:cacheprovider", "--report-dir",
                           str(root / "rep"), *args], cwd=root, capture_output=True, text=True, timeout=timeout)


_FAIL = """
def test_good(report):
    report.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.01, source="demo", what="good")

def test_bad(report):
    report.check("levi:eq8", predicted=1.0, measured=2.0, rtol=0.01, source="demo", what="bad")
"""


_SLOW = """
import time

def test_one(report):
    time.sleep(1.6)
    report.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.01, source="demo", what="one")

def test_two(report):
    report.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.01, source="demo", what="two")
"""
_PARTLY = _PASS + """
def test_deselected(report):
    report.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.01, source="demo", what="deselected")
"""
_INTERRUPT = """
def test_first(report):
    report.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.01, source="demo", what="first")

def test_interrupted(report):
    raise KeyboardInterrupt
"""


def test_plugin_suite_certificates_deadline_progress_and_interruption(tmp_path):
    """One pytest session over five suites: a complete one (sa); one with a failed test, recorded as failed (sb);
    one whose second test would end past --deadline by its measured time and is not started, and whose first
    prints progress lines (sc: incomplete); one with a test deselected (sd: incomplete); and one interrupted by
    Ctrl-C / SIGINT (sz), which gets no certificate at all. The session's own report keeps the previous pair."""
    root = _checkout(tmp_path, {"sa": _PASS, "sb": _FAIL, "sc": _SLOW, "sd": _PARTLY, "sz": _INTERRUPT})
    out = root / "out"
    prior = _cert(root, "sc", tests=[{"test": "verify/sc/test_sc.py::test_one", "outcome": "passed", "wall_s": 1.0},
                                     {"test": "verify/sc/test_sc.py::test_two", "outcome": "passed", "wall_s": 900.0}])
    prior["meta"]["scale"] = "cpu"
    write_certificate(prior, out, "sc")
    Vf.write_report(_cert_rows(), root / "rep", "cpu")
    r = _pytest(root, "--suite-certificates", str(out), "--deadline", f"{time.time() + 60:.0f}",
                "--progress-every", "0.5", "-k", "not test_deselected")
    assert r.returncode == 2, r.stdout  # interrupted
    assert "verify/sc/test_sc.py::test_one still running" in r.stdout
    cert = {s: Vf.read_suite_certificate(out / f"{s}.json") for s in ("sa", "sb", "sc", "sd")}
    assert cert["sa"]["meta"]["complete"] and cert["sa"]["meta"]["suite"] == "sa" and len(cert["sa"]["rows"]) == 1
    assert [t["outcome"] for t in cert["sb"]["tests"]] == ["passed", "failed"] and cert["sb"]["meta"]["n_failed"] == 1
    sc = cert["sc"]["meta"]
    assert sc["complete"] is False and sc["not_run"] == ["verify/sc/test_sc.py::test_two"]
    assert [t["outcome"] for t in cert["sc"]["tests"]] == ["passed", "not run (budget)"]
    assert sc["not_run_reason"] == ["1 tests not started (--deadline)"]
    assert cert["sd"]["meta"]["not_run_reason"] == ["1 tests deselected"]
    states = {s.suite: s.state for s in Vf.suite_statuses(out, root=root)}
    assert states == {"sa": "passed", "sb": "failed", "sc": "incomplete", "sd": "incomplete", "sz": "never run"}
    assert not (out / "sz.json").exists() and not (out / "sz.md").exists()
    assert len(list(out.iterdir())) == 8  # four pairs, no temporary file left
    assert "# Verification certificate: suite sb (cpu scale)" in (out / "sb.md").read_text()
    rep = json.loads((root / "rep" / "verify-cpu.json").read_text())["meta"]
    assert "interrupted" in rep["partial"] and (root / "rep" / "verify-cpu.prev.json").is_file()
    r = _pytest(root, "--deadline", "soon")
    assert r.returncode == pytest.ExitCode.USAGE_ERROR and "--deadline must be a number" in r.stderr


def _cert_rows():
    rep = Report("cpu")
    rep.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.01, source="demo")
    return rep.rows


def test_write_report_keeps_the_previous_pair(tmp_path):
    js, md = Vf.write_report(_cert_rows(), tmp_path, "cpu")
    first = js.read_text()
    rep = Report("cpu")
    rep.observe("levi:eq9", measured=1.0, source="none")
    Vf.write_report(rep.rows, tmp_path, "cpu", keep_previous=True)
    assert (tmp_path / "verify-cpu.prev.json").read_text() == first and "levi:eq9" in js.read_text()
    assert (tmp_path / "verify-cpu.prev.md").is_file() and len(list(tmp_path.iterdir())) == 4


# ---------------------------------------------------------------- grokclocks verify --budget (the planner)


def _prior(root: Path, directory: Path, suite: str, seconds: dict[str, float], date: str) -> None:
    """A stale certificate of `suite` (its fingerprint altered) with measured test times: fake timings."""
    cert = _cert(root, suite, tests=[{"test": f"verify/{suite}/test_{suite}.py::{t}", "outcome": "passed",
                                      "wall_s": s} for t, s in seconds.items()])
    cert["meta"].update(scale="cpu", date=date)
    cert["meta"]["fingerprint"]["digest"] = "0" * 64
    write_certificate(cert, directory, suite, overwrite=True)


def _verify_cli(monkeypatch, root: Path, *args: str) -> int:
    from grokclocks.cli import _verify, main

    monkeypatch.setattr(_verify, "_repo_root", lambda: root)
    return main(["verify", "--scale", "cpu", *args])


def test_budget_runs_what_fits_oldest_first_and_writes_each_suite(tmp_path, monkeypatch, capsys):
    root = _checkout(tmp_path, {"sa": _PASS, "sb": _PASS, "sc": _FAIL})
    committed = root / "docs" / "verification" / "cpu"
    _prior(root, committed, "sa", {"test_one": 1.0}, "2026-01-02T00:00:00+00:00")
    _prior(root, committed, "sb", {"test_one": 500.0}, "2026-01-01T00:00:00+00:00")
    out = root / "window"
    assert _verify_cli(monkeypatch, root, "--only", "sa,sb,sc", "--budget", "60", "--dry-run",
                       "--report-dir", str(out)) == 0
    plan = capsys.readouterr().out.splitlines()
    assert plan[0].startswith("plan (cpu scale, budget 60 s): 2 suites") and "sc (never run" in plan[0]
    assert [line.split()[:2] for line in plan[1:]] == [["run", "sc"], ["run", "sa"], ["skip", "sb"]]
    assert "does not fit: needs 515 s" in plan[3] and not out.exists() or not any(out.iterdir())
    t0 = time.monotonic()
    rc = _verify_cli(monkeypatch, root, "--only", "sa,sb,sc", "--budget", "60", "--report-dir", str(out))
    assert time.monotonic() - t0 < 60
    text = capsys.readouterr().out
    assert rc == 1  # sc has a failing test
    assert sorted(p.name for p in out.iterdir()) == ["sa.json", "sa.md", "sc.json", "sc.md"]
    assert "sc                 failed" in text and "sa                 passed" in text
    st = {s.suite: s.state for s in Vf.suite_statuses([out, committed], root=root)}
    assert st == {"sa": "passed", "sb": "stale", "sc": "failed"}
    # a --report-dir the user named is not overwritten without --overwrite (checked before anything runs)
    _prior(root, committed, "sa", {"test_one": 1.0}, "2027-01-01T00:00:00+00:00")  # newer and stale again
    assert _verify_cli(monkeypatch, root, "--only", "sa", "--budget", "60", "--report-dir", str(out)) == 2
    assert "already exists; pass --overwrite" in capsys.readouterr().err


_SLEEPY = """
import time

def test_one(report):
    report.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.01, source="demo", what="one")

def test_long(report):
    time.sleep(60)
"""


def test_budget_stops_a_suite_at_the_end_of_the_budget_and_leaves_no_certificate(tmp_path, monkeypatch, capsys):
    """A test that runs far longer than its measured time is stopped at the budget's end: no certificate for its
    suite (not a half-written one), no temporary file, the previous certificate untouched."""
    root = _checkout(tmp_path, {"sa": _SLEEPY})
    out = root / "window"
    _prior(root, out, "sa", {"test_one": 0.1, "test_long": 0.1}, "2026-01-01T00:00:00+00:00")
    before = (out / "sa.json").read_bytes()
    t0 = time.monotonic()
    rc = _verify_cli(monkeypatch, root, "--budget", "14", "--report-dir", str(out), "--overwrite")
    wall = time.monotonic() - t0
    text = capsys.readouterr().out
    assert rc == 1 and "stopped at the budget's end" in text and "no new certificate" in text
    assert wall <= 14 + 1.0  # never past the budget (the Python start-up of this call aside)
    assert (out / "sa.json").read_bytes() == before and sorted(p.name for p in out.iterdir()) == ["sa.json", "sa.md"]


def test_verify_replaces_its_own_certificate_and_keeps_the_previous_one(tmp_path, monkeypatch, capsys):
    """A second `grokclocks verify` replaces .verify/verify-cpu.* (the tool's own folder) and keeps the first as
    verify-cpu.prev.*; a --report-dir the user named still needs --overwrite (refused before anything runs)."""
    root = _checkout(tmp_path, {"sa": _PASS})
    for _ in range(2):
        assert _verify_cli(monkeypatch, root, "--", "-q", "-p", "no:cacheprovider") == 0
    assert sorted(p.name for p in (root / ".verify").iterdir()) == [
        "verify-cpu.json", "verify-cpu.md", "verify-cpu.prev.json", "verify-cpu.prev.md"]
    named = tmp_path / "named"
    named.mkdir()
    (named / "verify-cpu.json").write_text("{}")
    capsys.readouterr()
    assert _verify_cli(monkeypatch, root, "--report-dir", str(named)) == 2
    assert "already exists; pass --overwrite" in capsys.readouterr().err
