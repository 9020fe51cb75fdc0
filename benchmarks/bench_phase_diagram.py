"""Benchmark: the Fig. 7(b)-style phase diagram of exact grokking times (spec levi:fig7).

Builds the 100 x 100 grid Delta t(lambda, gamma) = t*_gen - t*_tr of the exact weight-decay losses
(levi:eq14, levi:tstar, levi:grok-def; eps = 1e-3, eta0 = 0.01, d_out = 1, level 0.95) twice:

* fast   -- ``grokclocks.linear.grok_time_grid`` on the whole grid in one vectorised call;
* naive  -- ``naive_reference.grok_time`` one point at a time (scipy QAWS quadrature of eq. 14 for
            every loss value, doubling bracket + brentq for every crossing), timed on a random
            subsample of grid points and EXTRAPOLATED to the full grid (the full naive grid would
            take minutes; the extrapolation is linear in the number of points and is labelled so).

Timings are best-of-``--repeats`` wall-clock (time.perf_counter) after one warm-up.  The two
implementations must agree on the subsample (max relative difference printed and stored).  Writes
``benchmarks/results/phase_diagram.json`` and ``docs/figures/phase_diagram_levi.png``.

Run from the repository root:  ``python benchmarks/bench_phase_diagram.py``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import naive_reference  # noqa: E402

from grokclocks._mpgrid import loss_threshold_grid, wd_asymptote_grid  # noqa: E402
from grokclocks.linear import grok_time_grid  # noqa: E402

EPS, ETA0, D_OUT, LEVEL = 1e-3, 0.01, 1, 0.95
LAM = np.linspace(0.05, 1.2, 100)
GAMMA = np.linspace(0.0, 0.03, 100)


def machine() -> dict:
    """CPU model (from /proc/cpuinfo), core count and library versions."""
    from grokclocks.verification import _cpu_model

    info = {"cpu_model": _cpu_model(), "logical_cores": os.cpu_count()}
    info.update(python=platform.python_version(), numpy=np.__version__, scipy=scipy.__version__,
                platform=platform.platform())
    return info


def best_of(fn, repeats: int) -> tuple[float, object]:
    fn()  # warm-up
    best, out = math.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def fast_grid():
    return grok_time_grid(LAM[None, :], GAMMA[:, None], EPS, ETA0, d_out=D_OUT, level=LEVEL)


def naive_points(idx):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # QAWS round-off warnings near lambda = 1 (reported, not hidden: see README)
        return [naive_reference.grok_time(LAM[j], GAMMA[i], EPS, ETA0, D_OUT, LEVEL) for i, j in idx]


def rel_diff(a: np.ndarray, b: np.ndarray) -> tuple[float, int]:
    """Max relative difference over entries finite and non-zero in both; count of convention mismatches."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    same_pattern = (np.isnan(a) == np.isnan(b)) & (np.isposinf(a) == np.isposinf(b)) & ((a == 0) == (b == 0))
    both = np.isfinite(a) & np.isfinite(b) & (a != 0) & (b != 0)
    return (float(np.max(np.abs(a[both] / b[both] - 1))) if both.any() else 0.0), int((~same_pattern).sum())


def gamma_max_curve(lam: np.ndarray) -> np.ndarray:
    """Largest gamma with L_gen(inf) < L* (levi:eq15), by vectorised bisection; nan where none (lam >= 1)."""
    lstar = loss_threshold_grid(EPS, level=LEVEL)
    lo, hi = np.zeros_like(lam), np.full_like(lam, 1.0)
    ok = lam < 1
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        above = np.asarray(wd_asymptote_grid(lam, mid)) >= lstar
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    return np.where(ok, 0.5 * (lo + hi), np.nan)


def figure(t_tr, t_gen, dt, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    fig, ax = plt.subplots(figsize=(6.4, 4.6), dpi=150)
    shown = np.where(np.isfinite(dt) & (dt > 0), dt, np.nan)
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    # dt = inf: only the gen crossing is missing; dt = nan: neither loss crosses L*
    status = np.where(np.isposinf(dt), 0.0, np.where(np.isnan(dt), 1.0, np.nan))
    grey = ListedColormap(["#d0d0d0", "#8c8c8c"])
    ax.pcolormesh(LAM, GAMMA, status, cmap=grey, vmin=0, vmax=1, shading="nearest")
    pcm = ax.pcolormesh(LAM, GAMMA, shown, norm=LogNorm(vmin=np.nanmin(shown), vmax=np.nanmax(shown)),
                        cmap="viridis", shading="nearest")
    cs = ax.contour(LAM, GAMMA, shown, levels=[30, 100, 300, 1000, 3000, 10000], colors="w", linewidths=0.6)
    ax.clabel(cs, fmt="%d", fontsize=6)
    lam_f = np.linspace(LAM[0], 0.999, 400)
    ax.plot(lam_f, gamma_max_curve(lam_f), "r--", lw=1,
            label=r"$\gamma_{\max}(\lambda)$: $\mathcal{L}_{\rm gen}(\infty)=\mathcal{L}^*$")
    ax.set_xlabel(r"$\lambda = d_{\rm in}/N_{\rm tr}$")
    ax.set_ylabel(r"weight decay $\gamma$")
    ax.set_ylim(GAMMA[0], GAMMA[-1])
    ax.set_title(r"exact $\Delta t_{\rm grok}$ (eq. 14), $\epsilon=10^{-3}$, $\eta_0=0.01$, $d_{\rm out}=1$, level 0.95",
                 fontsize=8)
    fig.colorbar(pcm, ax=ax, label=r"$\Delta t = t^*_{\rm gen}-t^*_{\rm tr}$ (GD steps)")
    handles, _ = ax.get_legend_handles_labels()
    handles += [Patch(color="#d0d0d0", label=r"$\Delta t=\infty$: gen accuracy never reaches 0.95"),
                Patch(color="#8c8c8c", label="neither train nor gen reaches 0.95")]
    ax.legend(handles=handles, loc="center right", fontsize=6.5, framealpha=0.9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-naive", type=int, default=100, help="naive subsample size (default 100)")
    ap.add_argument("--repeats", type=int, default=3, help="best-of repeats (default 3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "phase_diagram.json")
    ap.add_argument("--figure", type=Path, default=ROOT / "docs" / "figures" / "phase_diagram_levi.png")
    args = ap.parse_args(argv)

    mach = machine()
    print(f"machine: {mach['cpu_model']} ({mach.get('cpu_family_model', '')}), {mach['logical_cores']} logical cores; "
          f"python {mach['python']}, numpy {mach['numpy']}, scipy {mach['scipy']}")

    t_fast, (t_tr, t_gen, dt) = best_of(fast_grid, args.repeats)
    n_grid = dt.size
    print(f"fast  grok_time_grid, {LAM.size} x {GAMMA.size} = {n_grid} points: {t_fast:.3f} s (best of {args.repeats})")

    rng = np.random.default_rng(args.seed)
    flat = rng.choice(n_grid, size=min(args.n_naive, n_grid), replace=False)
    idx = [divmod(int(k), LAM.size) for k in flat]  # (gamma index, lambda index)
    t_naive_sub, naive = best_of(lambda: naive_points(idx), args.repeats)
    naive = np.array(naive)
    t_naive_full = t_naive_sub * n_grid / len(idx)
    print(f"naive quad+brentq on a random subsample of {len(idx)} points: {t_naive_sub:.2f} s (best of {args.repeats}); "
          f"EXTRAPOLATED to {n_grid} points: {t_naive_full:.0f} s")

    per_point_fast = t_fast / n_grid
    per_point_naive = t_naive_sub / len(idx)
    speedup = t_naive_full / t_fast
    print(f"per point: fast {per_point_fast * 1e6:.1f} us, naive {per_point_naive * 1e3:.1f} ms; speed-up {speedup:.0f}x")

    sub = np.array([[t_tr[i, j], t_gen[i, j], dt[i, j]] for i, j in idx])
    agree = {}
    for k, name in enumerate(("t_tr", "t_gen", "dt")):
        r, mism = rel_diff(sub[:, k], naive[:, k])
        agree[name] = {"max_rel_diff": r, "convention_mismatches": mism}
    print("agreement on the subsample (max rel diff, convention mismatches): "
          + ", ".join(f"{k} {v['max_rel_diff']:.1e} / {v['convention_mismatches']}" for k, v in agree.items()))

    counts = {
        "finite_dt": int(np.isfinite(dt).sum()),
        "gen_never_crosses_dt_inf": int(np.isposinf(dt).sum()),
        "neither_crosses_dt_nan": int(np.isnan(dt).sum()),
    }
    fin = np.isfinite(dt)
    print(f"grid: {counts}; finite dt range {dt[fin].min():.1f} .. {dt[fin].max():.1f} steps")

    figure(t_tr, t_gen, dt, args.figure)
    print(f"figure: {args.figure.relative_to(ROOT) if args.figure.is_relative_to(ROOT) else args.figure}")

    def enc(a):
        return [[(float(f"{v:.10g}") if math.isfinite(v) else ("inf" if v > 0 else "nan")) for v in row] for row in a]

    result = {
        "benchmark": "levi:fig7 (b) phase diagram, exact Delta t over (lambda, gamma)",
        "parameters": {"eps": EPS, "eta0": ETA0, "d_out": D_OUT, "level": LEVEL,
                       "lambda": "linspace(0.05, 1.2, 100)", "gamma": "linspace(0, 0.03, 100)"},
        "machine": mach,
        "timing": {
            "method": f"wall clock, time.perf_counter, best of {args.repeats} after one warm-up",
            "fast_grid_s": t_fast,
            "fast_per_point_us": per_point_fast * 1e6,
            "naive_subsample_points": len(idx),
            "naive_subsample_s": t_naive_sub,
            "naive_per_point_ms": per_point_naive * 1e3,
            "naive_full_grid_s_extrapolated": t_naive_full,
            "speedup": speedup,
            "targets": {"grid_le_1s": t_fast <= 1.0, "speedup_ge_100": speedup >= 100},
        },
        "agreement_on_subsample": agree,
        "grid_counts": counts,
        "dt_finite_range": [float(dt[fin].min()), float(dt[fin].max())],
        "lambda": LAM.tolist(),
        "gamma": GAMMA.tolist(),
        "dt": enc(dt),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"results: {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return result


if __name__ == "__main__":
    main()
