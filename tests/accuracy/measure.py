"""Measure the accuracy cases of some cases_<module>.py files over many points (a developer tool).

    PYTHONPATH=$PWD python tests/accuracy/measure.py cases_clocks [N] [name-substring]

Prints, per case, the worst relative error, where it occurs, and the failures (first 3).
"""

from __future__ import annotations

import importlib
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from harness import run_case, sample_points  # noqa: E402

mod = importlib.import_module(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 500
sub = sys.argv[3] if len(sys.argv) > 3 else ""
skip = sys.argv[4] if len(sys.argv) > 4 else None
for case in mod.CASES:
    if sub not in case.name or (skip and skip in case.name):
        continue
    t0 = time.perf_counter()
    r = run_case(case, sample_points(case, n, seed=1))
    dt = time.perf_counter() - t0
    flag = "FAIL" if r["bad"] else "ok  "
    contract = f"rtol {case.rtol:g}" if not callable(case.rtol) else f"{r['worst_ratio']:.3g} of the contract"
    print(f"{flag} {case.name:70s} worst {r['worst']:.3g} ({contract}) raised {r['raised']} "
          f"{dt:.2f}s at {r['worst_at']}", flush=True)
    for pt, s in r["bad"][:3]:
        print("      ", pt, s[:300], flush=True)
