"""Benchmark: the Fig. 7(b)-style phase diagram of exact grokking times (spec levi:fig7).

Builds the grid Delta t(lambda, gamma) = t*_gen - t*_tr of the exact weight-decay losses (levi:eq14,
levi:tstar, levi:grok-def; eps = 1e-3, eta0 = 0.01, d_out = 1, level 0.95), 100 x 100 three ways:

* fast   -- ``grokclocks.linear.grok_time_grid`` on the whole grid in one vectorised call;
* plain  -- a plain vectorised numpy version written here: eq. 14 by a fixed 200-node Gauss-Chebyshev
            rule in nu on [lam_-, lam_+] (the square-root edges as its weight, nothing else done about
            the 1/nu near-pole or the Laplace peak) and 60 bisections in log t for each crossing;
* naive  -- ``naive_reference.grok_time`` one point at a time (scipy QAWS quadrature of eq. 14 for
            every loss value, doubling bracket + brentq for every crossing), timed on a random
            subsample of grid points and EXTRAPOLATED to the full grid (the full naive grid would
            take minutes; the extrapolation is linear in the number of points and is labelled so),

and then 1000 x 1000 with the fast one alone: its wall and CPU time (median of ``--repeats``) and its peak
memory (the maximum resident set of a child process that builds only that grid), and its agreement with
``grokclocks.linear.grok_time`` called point by point on 200 random grid points.

Timings: medians of ``--repeats`` interleaved runs (fast, plain alternating) after one warm-up,
wall-clock (time.perf_counter); the load average of the shared machine before and after.  Writes
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


def fast_grid(lam=LAM, gamma=GAMMA):
    return grok_time_grid(lam[None, :], gamma[:, None], EPS, ETA0, d_out=D_OUT, level=LEVEL)


PLAIN_NODES = 200


def plain_loss(t, lam, gamma, which):
    """Eq. 14 (alpha = 1, d_out = 1) by a fixed Gauss-Chebyshev rule of the second kind in nu (plain numpy)."""
    r = np.sqrt(lam)[:, None]
    lm, lp = (1 - r) ** 2, (1 + r) ** 2
    th = np.arange(1, PLAIN_NODES + 1) * np.pi / (PLAIN_NODES + 1)
    nu = 0.5 * (lm + lp) + 0.5 * (lp - lm) * np.cos(th)
    w = np.pi / (PLAIN_NODES + 1) * (0.5 * (lp - lm)) ** 2 * np.sin(th) ** 2 / (2 * np.pi * lam[:, None] * nu)
    g = (gamma / 2)[:, None]
    s = (4 * ETA0 * t)[:, None]
    q = nu if which == "train" else 1.0
    with np.errstate(all="ignore"):
        f = 0.5 * q * (np.exp(-s * (nu + g)) + ((np.exp(-s * (nu + g) / 2) * nu + g) / (nu + g)) ** 2)
        val = (w * f).sum(axis=1)
        if which == "gen":
            atom = np.maximum(0.0, 1 - 1 / lam)
            val = val + atom * 0.5 * (np.exp(-s[:, 0] * g[:, 0]) + 1.0)  # nu = 0: alpha^2 e^{-sg} + R(0)^2, R(0) = 1
    return val


def plain_t_star(lam, gamma, which):
    """60 vectorised bisections in log t on [1e-2, 1e9]; inf where L(1e12) is still above L*."""
    lstar = EPS / (2 * scipy.special.gammaincinv(0.5, LEVEL))
    never = plain_loss(np.full(lam.shape, 1e12), lam, gamma, which) >= lstar
    lo, hi = np.full(lam.shape, math.log(1e-2)), np.full(lam.shape, math.log(1e9))
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        above = plain_loss(np.exp(mid), lam, gamma, which) > lstar
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return np.where(never, np.inf, np.exp(0.5 * (lo + hi)))


def plain_grid():
    lam, gam = np.meshgrid(LAM, GAMMA)
    lam, gam = lam.ravel(), gam.ravel()
    ttr, tgen = plain_t_star(lam, gam, "train"), plain_t_star(lam, gam, "gen")
    with np.errstate(invalid="ignore"):
        dt = np.where(np.isinf(ttr) & np.isinf(tgen), np.nan, tgen - ttr)
    return [x.reshape(GAMMA.size, LAM.size) for x in (ttr, tgen, dt)]


def median_of(fn, repeats: int):
    """(median, [min, max]) of wall-clock seconds of fn() over `repeats` runs, and its last output."""
    ts, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), [min(ts), max(ts)], out


BIG_CHILD = """
import resource, sys, time, os
import numpy as np
sys.path.insert(0, {root!r})
from grokclocks.linear import grok_time_grid
lam = np.linspace(0.05, 1.2, {n}); gam = np.linspace(0.0, 0.03, {n})
c0 = time.process_time(); t0 = time.perf_counter()
r = grok_time_grid(lam[None, :], gam[:, None], {eps}, {eta0}, d_out={d}, level={level})
print(time.perf_counter() - t0, time.process_time() - c0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def big_grid(n: int, repeats: int) -> dict:
    """n x n: wall, CPU time and peak RSS, each run in a fresh child process (median of `repeats`)."""
    import subprocess

    runs = []
    for _ in range(repeats):
        code = BIG_CHILD.format(root=str(ROOT), n=n, eps=EPS, eta0=ETA0, d=D_OUT, level=LEVEL)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
        runs.append((float(out[0]), float(out[1]), float(out[2]) / 1024.0))
    wall, cpu, rss = (sorted(v) for v in zip(*runs))
    return {"points": n * n, "wall_s_median": float(np.median(wall)), "wall_s_range": [wall[0], wall[-1]],
            "cpu_s_median": float(np.median(cpu)), "peak_rss_mb_max": rss[-1],
            "targets": {"wall_le_5s": float(np.median(wall)) <= 5.0, "rss_le_500mb": rss[-1] <= 500.0}}


def big_agreement(n: int, k: int, seed: int) -> dict:
    """grok_time_grid on the n x n grid against grok_time point by point on k random grid points."""
    from grokclocks.linear import grok_time

    lam = np.linspace(0.05, 1.2, n)
    gam = np.linspace(0.0, 0.03, n)
    _, _, dt = fast_grid(lam, gam)
    rng = np.random.default_rng(seed)
    worst, mism = 0.0, 0
    for i, j in zip(rng.integers(0, n, k), rng.integers(0, n, k)):
        ref = grok_time(lam[j], EPS, ETA0, gamma=gam[i], d_out=D_OUT, level=LEVEL)
        got = dt[i, j]
        if np.isfinite(ref) and np.isfinite(got) and ref != 0:
            worst = max(worst, abs(got / ref - 1))
        elif not ((np.isnan(ref) and np.isnan(got)) or ref == got):
            mism += 1
    return {"points": k, "max_rel_diff": worst, "convention_mismatches": mism}


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
    ap.add_argument("--repeats", type=int, default=5, help="interleaved runs, median (default 5)")
    ap.add_argument("--big", type=int, default=1000, help="side of the large grid (0: skip; default 1000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "phase_diagram.json")
    ap.add_argument("--figure", type=Path, default=ROOT / "docs" / "figures" / "phase_diagram_levi.png")
    args = ap.parse_args(argv)

    mach = machine()
    print(f"machine: {mach['cpu_model']} ({mach.get('cpu_family_model', '')}), {mach['logical_cores']} logical cores; "
          f"python {mach['python']}, numpy {mach['numpy']}, scipy {mach['scipy']}")

    load_before = [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    fast_grid(), plain_grid()  # warm-up
    tf, tp = [], []
    for k in range(args.repeats):  # interleaved
        for name, fn, acc in ((("fast", fast_grid, tf), ("plain", plain_grid, tp)) if k % 2 == 0 else
                              (("plain", plain_grid, tp), ("fast", fast_grid, tf))):
            t0 = time.perf_counter()
            res = fn()
            acc.append(time.perf_counter() - t0)
            if name == "fast":
                t_tr, t_gen, dt = res
            else:
                p_tr, p_gen, p_dt = res
    t_fast, t_plain = float(np.median(tf)), float(np.median(tp))
    n_grid = dt.size
    print(f"fast  grok_time_grid, {LAM.size} x {GAMMA.size} = {n_grid} points: {t_fast:.3f} s (median of {args.repeats})")
    print(f"plain vectorised numpy ({PLAIN_NODES}-node rule, 60 bisections): {t_plain:.3f} s; fast is "
          f"{t_plain / t_fast:.1f}x faster")
    plain_agree = {}
    for k, name in enumerate(("t_tr", "t_gen", "dt")):
        r, mism = rel_diff((t_tr, t_gen, dt)[k], (p_tr, p_gen, p_dt)[k])
        plain_agree[name] = {"max_rel_diff": r, "convention_mismatches": mism}
    print("plain vs fast (max rel diff, mismatches): " + ", ".join(f"{k} {v['max_rel_diff']:.1e} / "
                                                                   f"{v['convention_mismatches']}" for k, v in plain_agree.items()))

    rng = np.random.default_rng(args.seed)
    flat = rng.choice(n_grid, size=min(args.n_naive, n_grid), replace=False)
    idx = [divmod(int(k), LAM.size) for k in flat]  # (gamma index, lambda index)
    t_naive_sub, _, naive = median_of(lambda: naive_points(idx), 1)
    naive = np.array(naive)
    t_naive_full = t_naive_sub * n_grid / len(idx)
    print(f"naive quad+brentq on a random subsample of {len(idx)} points: {t_naive_sub:.2f} s; "
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

    big = big_grid(args.big, args.repeats) if args.big else None
    if big:
        big["agreement_with_grok_time"] = big_agreement(args.big, 200, args.seed)
        print(f"{args.big} x {args.big}: wall {big['wall_s_median']:.2f} s (median, range {big['wall_s_range']}), "
              f"CPU {big['cpu_s_median']:.2f} s, peak RSS {big['peak_rss_mb_max']:.0f} MB; vs grok_time on 200 points: "
              f"{big['agreement_with_grok_time']['max_rel_diff']:.1e}")
    load_after = [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]

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
        "load_before": load_before,
        "load_after": load_after,
        "timing": {
            "method": f"wall clock, time.perf_counter, median of {args.repeats} interleaved runs after one warm-up",
            "fast_grid_s": t_fast,
            "fast_range_s": [min(tf), max(tf)],
            "plain_vectorised_s": t_plain,
            "plain_vectorised_range_s": [min(tp), max(tp)],
            "plain_vectorised_over_fast": t_plain / t_fast,
            "fast_per_point_us": per_point_fast * 1e6,
            "naive_subsample_points": len(idx),
            "naive_subsample_s": t_naive_sub,
            "naive_per_point_ms": per_point_naive * 1e3,
            "naive_full_grid_s_extrapolated": t_naive_full,
            "speedup": speedup,
            "targets": {"grid_le_1s": t_fast <= 1.0, "speedup_ge_100": speedup >= 100,
                        "faster_than_plain_vectorised": t_plain > t_fast},
        },
        "agreement_on_subsample": agree,
        "plain_vectorised_vs_fast": plain_agree,
        "big_grid": big,
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
