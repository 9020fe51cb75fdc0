"""Accuracy sweep of grokclocks._mpgrid against mpmath (30 digits) -- the long form of tests/test_mpgrid.py.

1. log D(s) (decaying part of the eq. 14 losses) on lambda x gamma x s x {train, gen}, including the two
   grid lambdas nearest to 1 (0.99091, 1.00253) and 0.99, 0.999, 1, 1.001, 1.01, and s up to 1e8;
2. crossing times: implied relative error |G_mp(s*)| / |dlogD/dlogs| (one Newton step of the exact
   equation evaluated with mpmath at the engine's root) on a random sample of Fig. 7(b) grid points plus
   lambda in {0.99, 0.999, 1, 1.001} x gamma in {0, 1e-3, 2e-2} at both levels.

Writes benchmarks/results/mpgrid_accuracy.json.  Runtime ~1-2 min on 2 cores.
Run from the repository root:  python benchmarks/accuracy_mpgrid.py
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import mpmath as mp
import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_mpgrid import mp_asymptote, mp_log_decay  # noqa: E402  (the test-suite's mpmath references)

from grokclocks._mpgrid import _decay, loss_threshold_grid, mp_decay_grid  # noqa: E402
from grokclocks.linear import ERF_SQRT2, grok_time_grid  # noqa: E402  (the public grid front-end)

LAM_GRID = np.linspace(0.05, 1.2, 100)
GAM_GRID = np.linspace(0.0, 0.03, 100)


def sweep_losses():
    near = LAM_GRID[np.argsort(np.abs(LAM_GRID - 1))[:2]]
    lams = sorted({0.05, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999, 1.0, 1.001, 1.01, 1.2, *near.tolist()})
    gams = [0.0, 1e-4, 1e-3, 1e-2, 3e-2]
    ss = np.logspace(-3, 8, 12)
    worst, worst_near1, n = 0.0, 0.0, 0
    for lam in lams:
        for gamma in gams:
            for gen in (False, True):
                lD, _ = _decay(ss, np.full(ss.size, lam), np.full(ss.size, gamma / 2), gen)
                for s, got in zip(ss, lD):
                    ref = float(mp_log_decay(s, lam, gamma / 2, gen))
                    err = float(abs(got - ref) / (abs(ref) if abs(ref) > 700 else 1.0))
                    n += 1
                    if abs(lam - 1) < 0.02:
                        worst_near1 = max(worst_near1, err)
                    if err >= worst:
                        worst, where = err, dict(lam=lam, gamma=gamma, s=float(s), which="gen" if gen else "train")
    return {"points": n, "max_error": worst, "worst_case": where, "max_error_lambda_within_0.02_of_1": worst_near1,
            "metric": "|log D - log D_mp| (relative error of D); divided by |log D| where log D < -700"}


def sweep_crossings(n_random=60, seed=1):
    rng = np.random.default_rng(seed)
    cases = [(float(LAM_GRID[j]), float(GAM_GRID[i]), 0.95)
             for i, j in (divmod(int(k), 100) for k in rng.choice(10000, n_random, replace=False))]
    cases += [(lam, g, lev) for lam in (0.99, 0.999, 1.0, 1.001) for g in (0.0, 1e-3, 2e-2) for lev in (0.95, ERF_SQRT2)]
    worst, n, where = 0.0, 0, None
    for lam, gamma, level in cases:
        t_tr, t_gen, _ = grok_time_grid(lam, gamma, 1e-3, 0.01, level=level)
        lstar = loss_threshold_grid(1e-3, level=level)
        for t, gen in ((t_tr, False), (t_gen, True)):
            if not (math.isfinite(t) and t > 0):
                continue
            linf = mp_asymptote(lam, gamma / 2, gen) if gamma > 0 else mp.mpf((1 - 1 / lam) if (gen and lam > 1) else 0)
            s = 0.04 * t
            G = mp_log_decay(s, lam, gamma / 2, gen) - mp.log(mp.mpf(lstar) - linf)
            _, slope = mp_decay_grid(s, lam, gamma, which="gen" if gen else "train")
            err = float(abs(float(G) / slope))
            n += 1
            if err >= worst:
                worst, where = err, dict(lam=lam, gamma=gamma, level=level, which="gen" if gen else "train", t=t)
    return {"crossings": n, "max_implied_rel_error": worst, "worst_case": where}


def main():
    t0 = time.perf_counter()
    losses = sweep_losses()
    print("losses:", losses)
    cross = sweep_crossings()
    print("crossings:", cross)
    out = {"losses_vs_mpmath_30_digits": losses, "crossing_times_vs_mpmath": cross,
           "runtime_s": time.perf_counter() - t0}
    path = HERE / "results" / "mpgrid_accuracy.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path.relative_to(ROOT)} in {out['runtime_s']:.0f} s")


if __name__ == "__main__":
    main()
