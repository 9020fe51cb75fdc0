"""Raw data of the slope detector's false positives on eta = 0 controls at the full size (not a test).

    python -m verify.repulsion._control_fires --seeds 15:31 --out verify/repulsion/data/control_fires_cpu_2026-12-07.jsonl

Trains eta = 0 controls of spec R3 (M = 71, K = 2048, n = 2016, 400 epochs; the engine's
:func:`grokclocks.sim.repulsion.train_tian`, float32, tracker window 30, no rho hook, W only) exactly as
``test_tian_training._extra_controls`` does, a few seeds per program (resumable: seeds already in the output
file are skipped), and writes one JSON line per seed: the detector's fire epoch at windows 5, 10, 20, 30
(null = never), the largest slope s(t), t >= 100, at each window, and the gap series g = sigma_2/sigma_3 at
W = 20 and 30 (4 significant digits), so the detector can be re-applied to them.

    python -m verify.repulsion._control_fires --power

prints the size and power of the check's exact two-sample test (``test_tian_training.exact_bound``: one-sided
Boschloo at level 0.01, 112 hold-out against 31 reference controls), summed exactly over both binomial counts.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from grokclocks import repulsion as R
from grokclocks.sim.repulsion import train_tian

WINDOWS = (5, 10, 20, 30)


def power(n_ref=31, n_hold=112, k_ref_max=12):
    """Size and power of the exact test of `test_tian_training` (reference counts above `k_ref_max` are counted as
    never failing: their probability is below 1e-4 at reference rates <= 0.1)."""
    from scipy import stats

    from .test_tian_training import exact_bound

    k_max = [exact_bound(k, n_ref, n_hold) for k in range(k_ref_max + 1)]
    print("largest hold-out count accepted for reference counts 0..", k_ref_max, ":", k_max)

    def fail(p_ref, p_hold):
        return sum(stats.binom.pmf(k, n_ref, p_ref) * stats.binom.sf(k_max[k], n_hold, p_hold)
                   for k in range(k_ref_max + 1))

    for p in (0.02, 0.065, 0.1):
        print(f"P(fail | both rates {p}) = {fail(p, p):.2e}")
    for q in (0.1, 0.15, 0.2, 0.3):
        print(f"P(fail | reference rate 0.065, hold-out rate {q}) = {fail(0.065, q):.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", help="start:stop")
    ap.add_argument("--out")
    ap.add_argument("--chunk", type=int, default=2)
    ap.add_argument("--power", action="store_true")
    a = ap.parse_args()
    if a.power:
        return power()
    lo, hi = (int(x) for x in a.seeds.split(":"))
    done = set()
    if os.path.exists(a.out):
        with open(a.out) as fh:
            done = {json.loads(line)["seed"] for line in fh if line.strip()}
    todo = [s for s in range(lo, hi) if s not in done]
    for i in range(0, len(todo), a.chunk):
        part = tuple(todo[i:i + a.chunk])
        t0 = time.time()
        run = train_tian(71, 2048, 2016, seeds=part, etas=(0.0,), steps=400, window=20, max_window=30, k=5,
                         track_V=False, rho=False)
        gaps = {w: run.gaps(w)[0] for w in WINDOWS}
        lines = []
        for j, s in enumerate(part):
            rec = {"seed": s, "device": "cpu", "fire_epoch": {}, "max_slope_t100": {}}
            for w in WINDOWS:
                fire, slope = R.slope_detector(gaps[w][j])
                rec["fire_epoch"][str(w)] = None if fire is None else int(fire)
                rec["max_slope_t100"][str(w)] = round(float(np.nanmax(slope[100:])), 5)
            for w in (20, 30):
                rec[f"gap_w{w}"] = [float(f"{x:.4g}") for x in np.asarray(gaps[w][j], dtype=float)]
            lines.append(json.dumps(rec))
        with open(a.out, "a") as fh:
            fh.write("\n".join(lines) + "\n")
        print(f"seeds {part}: {time.time() - t0:.0f} s, fires at W=20: "
              f"{[json.loads(x)['fire_epoch']['20'] for x in lines]}", flush=True)


if __name__ == "__main__":
    main()
