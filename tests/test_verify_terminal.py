"""What `pytest verify` shows in the terminal: a line per finished test naming the spec IDs it checked and a count,
in one process and under pytest-xdist's two; at the end a summary per paper that fits one screen, the failed rows
with their numbers and the certificate's path; the full table only with --verify-table (it is in the certificate).

Each case runs the real verify/conftest.py in a throw-away checkout (a pytest inside this one)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

from grokclocks.verification import Report

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
CONFTEST = ROOT / "verify" / "conftest.py"

_SA = """
import time

def test_one(report):
    report.check("levi:eq8", predicted=1.0, measured=1.01, rtol=0.05, source="demo", what="good")
    report.reject("levi:eq8", wrong=2.0, measured=1.0, rtol=0.05, source="demo", what="a factor 2")

def test_bad(report):
    time.sleep(1.3)
    report.check("levi:tstar", predicted=1.0, measured=2.0, rtol=0.05, source="demo", what="bad")
"""
_SB = """
def test_err(report):
    raise RuntimeError("boom")

def test_obs(report):
    report.observe("clocks:thm5.6", measured=3.0, source="no prediction")

def test_skip(report):
    import pytest
    pytest.skip("needs a GPU")
"""
_LINE = r"\[\s*{k}/5 \d+:\d\d\] verify/{node}  {word}  \d+\.\d s"


@pytest.fixture
def checkout(pytester, monkeypatch):
    """verify/conftest.py (the real one) and two suites; the checkout's grokclocks first on the path."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("GROKCLOCKS_SCALE", raising=False)
    verify = pytester.mkdir("verify")
    (verify / "conftest.py").write_text(CONFTEST.read_text())
    for suite, text in (("sa", _SA), ("sb", _SB)):
        (verify / suite).mkdir()
        (verify / suite / "__init__.py").write_text("")
        (verify / suite / f"test_{suite}.py").write_text(text)
    return pytester


def _run(pytester, *args):
    out = pytester.path / "rep"
    result = pytester.runpytest_subprocess("verify", f"--report-dir={out}", "-p", "no:cacheprovider",
                                           "--progress-every", "0.5", *args)
    return result, result.stdout.str(), json.loads((out / "verify-cpu.json").read_text())


def _summary(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if "grokclocks verification table (cpu scale): summary" in ln)
    end = next(i for i, ln in enumerate(lines) if "certificate written to" in ln)
    return lines[start:end + 1]


def _check_speaks(text: str) -> None:
    assert "grokclocks verify, cpu scale: 5 tests in 2 suites (sa, sb)" in text
    lines = {re.sub(r"^\[\s*\d/5", "[k/5", ln) for ln in text.splitlines()}
    expected = {"sa/test_sa.py::test_one": ("passed", "levi:eq8 (pass, rejected)"),
                "sa/test_sa.py::test_bad": ("FAILED", "levi:tstar FAIL"),
                "sb/test_sb.py::test_err": ("ERROR|FAILED", "RuntimeError: boom"),
                "sb/test_sb.py::test_obs": ("passed", "clocks:thm5.6 reported"),
                "sb/test_sb.py::test_skip": ("skipped", "needs a GPU")}
    for node, (word, said) in expected.items():
        pattern = _LINE.format(k="k", node=re.escape(node), word=f"(?:{word})") + "  " + re.escape(said) + "$"
        assert any(re.fullmatch(pattern, ln) for ln in lines), f"no line for {node}:\n{text}"
    counts = sorted(int(m.group(1)) for m in re.finditer(r"^\[\s*(\d)/5 ", text, re.MULTILINE))
    assert counts == [1, 2, 3, 4, 5]  # one line per test, counted in order
    assert not re.search(r"^[.FEs]+\s*(\[\s*\d+%\])?\s*$", text, re.MULTILINE), "pytest's dots are still shown"
    assert "verify/sa/test_sa.py::test_bad still running" in text  # 1.3 s with --progress-every 0.5
    summary = _summary(text)
    assert len(summary) <= 25, "\n".join(summary)  # one screen
    assert re.fullmatch(r"5 tests \(2 failed, 2 passed, 1 skipped\) in \d+ s; 4 rows:", summary[1]), summary[1]
    table = {ln.split()[0]: [int(x) for x in ln.split()[1:]] for ln in summary
             if re.match(r"^  (levi|clocks|all) +\d", ln)}
    assert table == {"levi": [3, 1, 1, 0, 1], "clocks": [1, 0, 0, 1, 0], "all": [4, 1, 1, 1, 1]}
    joined = "\n".join(summary)
    assert "levi:tstar  FAIL: predicted 1, measured 2, error 1 (rel) > tolerance 0.05" in joined
    assert "verify/sa/test_sa.py::test_bad: bad" in joined
    assert "verify/sb/test_sb.py::test_err (failed)" in joined  # a failed test that recorded no row
    assert "4 rows, 1 failed; certificate written to" in summary[-1] and "verify-cpu.md" in summary[-1]


def test_one_process_speaks_and_ends_on_one_screen(checkout):
    result, text, cert = _run(checkout, "-p", "no:xdist")
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    _check_speaks(text)
    assert "Legend --" not in text and "tolerance source" not in text  # the full table is in the file only
    assert [r["verdict"] for r in cert["rows"]] == ["pass", "rejected", "FAIL", "reported"]


def test_two_processes_speak_the_same_and_the_table_is_there_when_asked(checkout):
    pytest.importorskip("xdist")
    result, text, cert = _run(checkout, "-n", "2", "--verify-table")
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    _check_speaks(text)
    assert "Legend --" in text and "tolerance source" in text  # --verify-table: every row in the terminal
    assert cert["meta"]["workers"] == 2
    assert sorted(r["verdict"] for r in cert["rows"]) == ["FAIL", "pass", "rejected", "reported"]


def test_verbose_keeps_pytests_own_lines(checkout):
    result, text, _ = _run(checkout, "-p", "no:xdist", "-v", "-k", "test_one or test_obs")
    assert "verify/sa/test_sa.py::test_one PASSED" in text and "grokclocks verify, cpu scale" not in text
    assert "3 rows, 0 failed; certificate written to" in text


def _plugin():
    spec = importlib.util.spec_from_file_location("verify_conftest_for_test", CONFTEST)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_summary_fits_one_screen_however_many_rows_fail():
    rep = Report("cpu")
    for i in range(60):
        try:
            rep.current_test = f"verify/levi/test_x.py::test_{i}"
            rep.check(f"levi:eq{i}", predicted=1.0, measured=3.0, rtol=0.1, source="demo", what="x" * 300)
        except AssertionError:
            pass
    tests = [{"test": f"verify/levi/test_x.py::test_{i}", "outcome": "failed"} for i in range(60)]
    tests += [{"test": f"verify/clocks/test_y.py::test_{i}", "outcome": "error"} for i in range(30)]
    lines = [ln for ln, _ in _plugin().summary_lines(rep.rows, tests, 12.0, width=100)]
    assert len(lines) <= 45 and all(len(ln) <= 100 for ln in lines), "\n".join(lines)
    assert "  ... and 50 more failed rows in the certificate" in lines and "  ... and 20 more" in lines
    assert lines[0] == "90 tests (60 failed, 30 error) in 12 s; 60 rows:"
