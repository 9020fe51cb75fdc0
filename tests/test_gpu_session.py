"""benchmarks/gpu_session.sh, the one command of a GPU window: its first line (the estimate of each part), its
layout, and its own clock (no part started past its limit, never past the hard limit), without a GPU."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_session.sh"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None,
                                reason="the script needs bash and coreutils timeout")


def _run(out: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 240):
    e = dict(os.environ, PYTHON=sys.executable, **(env or {}))
    t0 = time.monotonic()
    r = subprocess.run(["bash", str(SCRIPT), str(out), *args], capture_output=True, text=True, env=e,
                       timeout=timeout)
    return r, time.monotonic() - t0


def test_a_part_that_overruns_is_stopped_and_nothing_starts_past_the_limit(tmp_path):
    """Fake mode (tiny limits, a benchmark stand-in that sleeps past its cap): the benchmark is stopped at its cap,
    the planner is not started when too little is left, the summary says so, and the script ends within its limit."""
    out = tmp_path / "out"
    env = {"GPU_SESSION_LIMIT_S": "40", "GPU_SESSION_HARD_S": "50", "GPU_SESSION_BENCH_S": "15",
           "GPU_SESSION_SCALE": "cpu", "GPU_SESSION_FAKE_BENCH": "1", "GPU_SESSION_ONLY": "modular"}
    r, wall = _run(out, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert wall <= 50, wall
    summary = json.loads((out / "gpu_session.json").read_text())
    assert summary["bench"]["wall_s"] <= 15 + 5 and summary["bench"]["exit"] != 0  # stopped by its cap
    assert summary["total_s"] <= 40
    if summary["verify"]["exit"] == -1:  # too little left after the benchmark: not started
        assert "(a) verify: not started" in r.stdout
    first = r.stdout.splitlines()[0]
    assert first.startswith("gpu_session: estimated: (b) benchmark 105 s (stopped at 15 s); (a) verify, if (b) takes "
                            "all 15 s: (cpu scale, budget ") and first.endswith("limit 40 s, never past 50 s")
    assert "modular (" in first  # the plan names its suites with their reason and estimate
    assert (out / "gpu_session.log").read_text().startswith(first)
    assert (out / "docs" / "verification" / "cpu").is_dir() and (out / "benchmarks" / "results").is_dir()
    assert not any((out / "docs" / "verification" / "cpu").iterdir())  # no suite ran: no certificate
    # --dry-run prints the same first line and the two commands, and runs nothing
    r, _ = _run(tmp_path / "dry", "--dry-run", env=env)
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and lines[0].startswith("gpu_session: estimated:") and len(lines) == 3
    assert "bench_modular_engine.py --scale cpu-quick --max-seconds 5" in lines[1]
    assert "grokclocks verify --scale cpu --budget" in lines[2] and "--only modular" in lines[2]
