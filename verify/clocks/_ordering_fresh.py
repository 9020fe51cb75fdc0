"""Out-of-sample runs of the clock-ordering rule of ``test_modular_clocks.test_clock_ordering`` (not a test).

    python -m verify.clocks._ordering_fresh --seeds 8:24 --out verify/clocks/data/ordering_cpu_seeds8-23.json

Trains the CPU configuration (``_modular_runs.CPU``) at wd in {1, 3} on the given seeds -- none of them the
seeds 0-7 of the spec's H100 run of this configuration, nor the CPU tier's 0-2 -- and writes per run the
clocks the rule reads: t01, t_cls(1e-3), t_test(0.99), grokked, the CE floor and t_rep of the Fourier statistic.
"""

from __future__ import annotations

import argparse
import json

from . import _modular_runs as M

KEYS = ("frac", "wd", "seed", "t01", "t_cls(0.001)", "t_test", "grokked", "ce_floor")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", required=True, help="start:stop")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    lo, hi = (int(x) for x in a.seeds.split(":"))
    cfg = dict(M.CPU, wds=(1.0, 3.0), seeds=tuple(range(lo, hi)))
    rows = M.analyse(M.run(cfg), cfg)
    out = [{k: r[k] for k in KEYS} | {"t_rep_fourier": r["stats"]["fourier_out"]["t_rep"]} for r in rows]
    with open(a.out, "x") as fh:
        json.dump(out, fh, indent=0)


if __name__ == "__main__":
    main()
