"""Cost of `grokclocks.forecast.Monitor.update`: 10^6 updates of a synthetic run, time per update.

A training loop reports its train metrics every step and its evaluation metrics every `--eval-every` steps
(default 100); the monitor keeps log-time bins (O(1) per update) and recomputes the forecast when an
evaluation metric changes (O(log n) each).  The time per update is reported for each decade of steps, so that
a cost growing with the number of records would show.

    python benchmarks/forecast_monitor.py                 # 10^6 updates
    python benchmarks/forecast_monitor.py --updates 100000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def run(n: int, eval_every: int) -> dict:
    from grokclocks.forecast import Monitor

    mon = Monitor(horizon=float(n), every=10**9)
    decades, t_dec, start = {}, time.perf_counter(), 1
    t0 = time.perf_counter()
    t_fit, t_grok = 0.002 * n, 0.6 * n
    forecasts = 0
    last = None
    for step in range(1, n + 1):
        train_acc = min(1.0, 0.05 + step / t_fit)
        train_loss = 3.0 * math.exp(-3.0 * step / t_fit) + 1e-4
        if step % eval_every == 0:
            test_acc = 0.03 + 0.97 / (1.0 + math.exp(-(step - t_grok) / (0.05 * n)))
            f = mon.update(step, train_acc=train_acc, train_loss=train_loss, test_acc=test_acc,
                           test_loss=3.0 - 2.9 * test_acc, weight_norm=40.0 * math.exp(-step / n) + 5.0)
        else:
            f = mon.update(step, train_acc=train_acc, train_loss=train_loss)
        if f is not last:
            forecasts += 1
            last = f
        if step == start * 10 or step == n:
            now = time.perf_counter()
            decades[f"{start}-{step}"] = (now - t_dec) / (step - start + (start == 1))
            t_dec, start = now, step
    total = time.perf_counter() - t0
    return {"updates": n, "eval_every": eval_every, "forecasts": forecasts, "total_s": total,
            "us_per_update": 1e6 * total / n, "us_per_update_by_decade": {k: 1e6 * v for k, v in decades.items()},
            "bins_kept": {k: int(v[0].size) for k, v in mon.bins().items()}, "final_status": mon.latest.status}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--updates", type=int, default=10**6)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "forecast_monitor.json")
    args = ap.parse_args(argv)
    res = run(args.updates, args.eval_every)
    res.update(machine=f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical cores",
               loadavg_after=open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else None,
               python=platform.python_version())
    print(json.dumps(res, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
