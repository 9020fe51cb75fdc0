# Root conftest: makes the in-tree package importable when pytest runs from a checkout, and
# registers the hypothesis profiles.
#
#   ci        (default) bounded example counts, so `pytest` stays within the CI time budget, and
#             derandomized: the same examples on every run, so CI is reproducible (a failure found once
#             is found again)
#   thorough  a long, randomized run for nightly-style checks: `pytest tests --hypothesis-profile=thorough`
#
# Tests that need a fixed count keep their own @settings(max_examples=...); new property tests
# leave it out and take the count from the profile.
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=60, deadline=None, print_blob=True, derandomize=True,
                          suppress_health_check=(HealthCheck.too_slow,))
settings.register_profile("thorough", max_examples=2000, deadline=None, print_blob=True,
                          suppress_health_check=(HealthCheck.too_slow,))
settings.load_profile("ci")


# ---------------------------------------------------------------------------------------- two processes by default
#
# `pytest` (tests/ and verify/) is mostly single-threaded Python and small XLA programs: one process uses about
# one core. When pytest-xdist is installed (the `test` extra) and the command line does not say `-n`, the session
# runs in min(2, cores) worker processes, one test file per worker at a time (`--dist loadfile`: a file's
# module-scoped fixtures are built once). verify/conftest.py gathers the workers' rows into the one table.
# Measured on a 2-core AMD EPYC (2026-11-27): tests/ 989 s in one process, 643 s in two; the whole `pytest`
# 1566 s in one process, 1107 s in two. Handing the files out longest first was slower (1165 s: the long JAX
# files then run side by side), and so was compiling tests/ at XLA's optimisation level 0 in one single-threaded
# worker (verify's trainings run longer), so the files go in pytest-xdist's own loadfile order.
#
# It stays one process where that is required or asked for:
#   * `--scale gpu` (one process per GPU: several exhausted cuSolver handles), `--suite-certificates`, `--shard`,
#     `--deadline` (per-suite certificates and shard plans are written by the process that ran the tests);
#   * a pytest started by a test of a parallel session (PYTEST_XDIST_WORKER is inherited);
#   * `-n 0`, `-p no:xdist`, `--pdb`, or GROKCLOCKS_WORKERS=1 (GROKCLOCKS_WORKERS=N asks for N).
_SERIAL_OPTIONS = ("suite_certificates", "shard", "deadline")


@pytest.hookimpl(tryfirst=True)  # before xdist's own (registered earlier, so called later among tryfirst hooks)
def pytest_cmdline_main(config):
    opt = config.option
    if getattr(opt, "numprocesses", "absent") is not None:  # -n given, or xdist absent / blocked
        return None
    text = os.environ.get("GROKCLOCKS_WORKERS", "2")
    if not text.isdigit() or int(text) < 1:
        raise pytest.UsageError(f"GROKCLOCKS_WORKERS must be a whole number of processes >= 1 (got {text!r})")
    scale = getattr(opt, "scale", None) or os.environ.get("GROKCLOCKS_SCALE", "cpu")
    serial = (scale == "gpu" or os.environ.get("PYTEST_XDIST_WORKER") or getattr(opt, "usepdb", False)
              or getattr(opt, "collectonly", False) or any(getattr(opt, name, None) for name in _SERIAL_OPTIONS))
    n = 0 if serial else min(int(text), os.cpu_count() or 1)
    if n >= 2:
        opt.numprocesses = n
        if getattr(opt, "dist", "no") == "no":
            opt.dist = "loadfile"
    return None
