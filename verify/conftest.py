"""pytest verify: theorem vs simulation, one table at the end.

Options: ``--scale cpu|gpu`` (or env ``GROKCLOCKS_SCALE``) picks the configuration size;
``--report-dir`` (default ``.verify/``) is where ``verify-<scale>.json`` / ``.md`` are written.
"""

from __future__ import annotations

import os
import time

import pytest

from grokclocks.verification import Report, format_table, write_report

_STATE: dict = {}


def pytest_addoption(parser):
    g = parser.getgroup("grokclocks verify")
    g.addoption("--scale", choices=("cpu", "gpu"), default=os.environ.get("GROKCLOCKS_SCALE", "cpu"),
                help="configuration size: cpu (CI, default) or gpu (large configs)")
    g.addoption("--report-dir", default=os.environ.get("GROKCLOCKS_REPORT_DIR", ".verify"),
                help="where verify-<scale>.json and .md are written (default .verify/)")


def pytest_configure(config):
    _STATE["report"] = Report(scale=config.getoption("--scale"))
    _STATE["t0"] = time.perf_counter()


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


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    rep: Report | None = _STATE.get("report")
    if rep is None or not rep.rows:
        return
    dt = time.perf_counter() - _STATE["t0"]
    tr = terminalreporter
    tr.section(f"grokclocks verification table ({rep.scale} scale)")
    tr.write_line(format_table(rep.rows))
    js, md = write_report(rep.rows, config.getoption("--report-dir"), rep.scale, dt)
    n_bad = sum(not r.passed for r in rep.rows)
    tr.write_line(f"\n{len(rep.rows)} rows, {n_bad} failed; certificate written to {md} and {js}")
