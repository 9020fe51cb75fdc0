"""Tian-setup training through the one engine: grokking, spectral lock-in, rho_tian, Theorem 6 (spec ``repulsion``).

ONE vmapped training (:func:`grokclocks.sim.repulsion.train_tian`: eta = 2e-4 "grok" and the
matched-seed eta = 0 control, every epoch recorded, rolling Gram of the W updates in the scan, rho_tian
hook, parameter snapshots) serves every row of this file (spec §10 recipes R2 and R3).

* CPU (recipe R2): M = 41, K = 512, n = 840 (p = 0.5), 2 seeds x {2e-4, 0}, 500 epochs, float32.
  Asserts: grok test accuracy >= 0.99 by epoch 450; control <= 0.3 at 500; late separation of
  g = sigma_2/sigma_3 over epochs 400-500 >= 100x; Theorem-6 sign-match (exact and full projector)
  on the top-200 pairs of F~ (float64, epoch 200) = 1.0; rho hook = float64 numpy.  Reported, not
  asserted (constants tuned to the full size, erratum repulsion-7): slope-detector fire epochs, rho at
  initialisation, the legacy sign-match statistic.  Negative control: eta = 0 fails the grokking criterion.
* GPU (recipe R3, headline): M = 71, K = 2048, n = 2016, 15 seeds x {2e-4, 0}, 400 epochs, tracker
  window 30 (windows 5/10/20/30 from one run), W and V tracked, snapshots at epochs 50/100/175/250/300.
  The detector's control false-positive rate is a binomial proportion: 128 further eta = 0 control seeds
  (15-142, one vmapped program without the rho hook) join the 15 of the main run; the rate is reported
  with its Clopper-Pearson 95 % interval, and the 112 controls not used to measure it before (seeds 31-142)
  are checked against the rate measured on seeds 0-30 (2/31 at W = 20: the 2026-11-24 H100 run had seed 6
  fire at epoch 397 of 400, a CPU run seed 28 at 278; 0/31 at W = 30) with an exact two-sample test, see
  `exact_bound` (raw fire data in verify/repulsion/data/).
  Extensions (``-m "gpu and slow"``): ReLU 800 epochs; eta sweep 5 x 5 seeds x 600 epochs; eta = 1e-5
  for 2000 epochs.  Every row carries the paper's number in its ``source``.

Epoch convention (spec §3): row t = after t updates (row 0 = initialisation), which is how the engine
records (step 0, then after every update); sigma_k(t) uses the updates max(1, t-19)..t.

``test_canonical_grokking_tian`` moved here from ``verify/modular/test_canonical_grokking.py`` (same
name, row texts, IDs and tolerances), so that one training run serves all Tian rows.
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np
import pytest
from scipy import stats

from grokclocks import repulsion as R
from grokclocks.sim.repulsion import train_tian

CONFIG = {
    # spec R2 CPU recipe.  Measured on 2 shared cores: the run 21-25 s incl. JIT (10-14 s without the
    # per-epoch rho hook), the whole file 32 s (58 s when the cores were shared with a load of ~3)
    "cpu": dict(M=41, K=512, n_train=840, seeds=(0, 1), steps=500, snapshot_epochs=(0, 200), max_window=20,
                track_V=False),
    # spec R3 headline.  Memory: ring buffers 30 runs x 30 x (290 816 + 145 408) float32 = 1.6 GB
    "gpu": dict(M=71, K=2048, n_train=2016, seeds=tuple(range(15)), steps=400,
                snapshot_epochs=(0, 50, 100, 175, 250, 300), max_window=30, track_V=True,
                extra_control_seeds=tuple(range(15, 143))),
}
ETA = 2e-4
# same wording as the rows had in verify/modular/test_canonical_grokking.py (docs/figures/make_gallery.py reads them)
WHERE = {s: "M={M}, K={K}, n={n_train}, {ns} seeds, {steps} epochs".format(ns=len(c["seeds"]), **c)
         for s, c in CONFIG.items()}
HEAD = R.headline_table()


@functools.lru_cache(maxsize=None)
def _main(scale: str):
    """The one training run of this file (cached for the session) and its wall time."""
    c = CONFIG[scale]
    t0 = time.perf_counter()
    run = train_tian(c["M"], c["K"], c["n_train"], seeds=c["seeds"], etas=(ETA, 0.0), steps=c["steps"], window=20,
                     max_window=c["max_window"], k=5, track_V=c["track_V"], rho=True,
                     snapshot_epochs=c["snapshot_epochs"], progress=scale == "gpu")
    return run, time.perf_counter() - t0


@functools.lru_cache(maxsize=None)
def _extra_controls(scale: str):
    """eta = 0 control seeds beyond the main run's (GPU scale), for the detector's false-positive rate.

    No rho hook and no snapshots (the detector reads only the W-update gaps); tracker window 30, so the
    window sweep 5/10/20/30 comes from the same run.  Memory: ring buffer 128 x 30 x 290 816 float32 = 4.5 GB.
    """
    c = CONFIG[scale]
    return train_tian(c["M"], c["K"], c["n_train"], seeds=c["extra_control_seeds"], etas=(0.0,), steps=c["steps"],
                      window=20, max_window=c["max_window"], k=5, track_V=False, rho=False, progress=True)


# The detector's control false-positive rate measured before the GPU tier ran it (spec R3 setup, M = 71, K = 2048,
# n = 2016, 400 epochs; erratum repulsion-8): at W = 20, 2 of 31 controls fire (H100 2026-11-24, seeds 0-14: seed 6
# at epoch 397; CPU 2026-11-25, seeds 15-30: seed 28 at epoch 278); at W = 30, 0 of 31.  The raw fire data:
# verify/repulsion/data/ (control_fires_h100_2026-11-24.json: every control's fire epoch at W = 5/10/20/30 in both
# H100 runs of that day -- run 1 had seed 9 fire at epoch 200 instead of seed 6; control_fires_cpu_2026-12-07.jsonl:
# seeds 15, 16 and 28 re-run on the CPU with today's code, with their gap series -- none fires at W = 20, seed 28
# included (it fired at epoch 278 on 2026-11-25; max slope now 0.019 against the threshold 0.04): a fire is a
# threshold event that moves with rounding (b09cd05, 2026-11-26, changed the backward pass of Tian's first layer), so
# the reference is a sample of the rate, not a property of its seeds; the other CPU seeds were not re-run, ~7 min
# of CPU each under the load of that day).  The paper's 0/15 is a sample too (its Clopper-Pearson 95 % interval
# [0, 0.218] is kept in the details).
PAPER_CONTROLS = (0, 15)
REFERENCE_FIRES = {20: (2, 31), 30: (0, 31)}
REFERENCE_SEEDS = range(31)  # the seeds that set the reference: the check counts the other controls only
FALSE_FAIL = 1e-2  # the exact test's level: at most this probability of failing when both samples share a rate
# Power of that test (one-sided Boschloo, level 0.01) for the 112 hold-out controls against 31 reference controls,
# computed exactly (sum over both binomial counts; verify/repulsion/_control_fires.py --power): the largest hold-out
# count accepted for a reference count of 0, 1, 2, 3 is 15, 22, 28, 33; the probability of failing when both rates
# are equal is <= 3.6e-3 at rates up to 0.1 (3.1e-4 at 0.065); with a true reference rate of 0.065 (2/31) the test
# fails w.p. 0.012 / 0.097 / 0.27 / 0.74 at hold-out rates 0.10 / 0.15 / 0.20 / 0.30.  Weak against a rate twice the
# reference's because the reference is 31 controls; the former one-sample bound (at most 20 of 112 at W = 20) failed
# a correct detector w.p. ~5-7 % once the reference's own uncertainty is counted (beta-binomial; 5e-4 only if 2/31
# were the exact rate).
POWER = {"n_ref": 31, "n_hold": 112, "alpha": FALSE_FAIL, "max_hold_count_for_ref_count_0_1_2_3": [15, 22, 28, 33],
         "P(fail | equal rates <= 0.1)": 3.6e-3, "P(fail | equal rates 0.065)": 3.1e-4,
         "P(fail | ref 0.065, hold-out 0.10 / 0.15 / 0.20 / 0.30)": [0.012, 0.097, 0.27, 0.74]}


def _rate_ci(k: int, n: int) -> tuple[float, float]:
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    return float(ci.low), float(ci.high)


def _boschloo_p(k: int, n: int, k_ref: int, n_ref: int) -> float:
    """One-sided p-value of Boschloo's exact test that the rate of k of n exceeds that of k_ref of n_ref."""
    return float(stats.boschloo_exact([[k, k_ref], [n - k, n_ref - k_ref]], alternative="greater", n=32).pvalue)


@functools.lru_cache(maxsize=None)
def exact_bound(k_ref: int, n_ref: int, n: int, alpha: float = FALSE_FAIL) -> int:
    """Largest fire count among `n` new controls that the one-sided exact two-sample test (Boschloo) accepts
    against `k_ref` fires among `n_ref` reference controls at level `alpha`.

    The test counts the reference's own uncertainty: whatever rate the two samples share, it fails with
    probability <= alpha.  Its p-value falls as the new count grows, so the bound is found by bisection."""
    if _boschloo_p(n, n, k_ref, n_ref) >= alpha:
        return n
    lo, hi = 0, n  # p(lo) >= alpha > p(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _boschloo_p(mid, n, k_ref, n_ref) >= alpha else (lo, mid)
    return lo


def control_fire_rows(report, gaps: np.ndarray, seeds, what: str, where: str, window: int):
    """Report the control fire rate k/N with its Clopper-Pearson interval; check the controls not used to set the
    reference against it with an exact two-sample test (`exact_bound`).

    `gaps`: (n_controls, epochs) eigengap series of the eta = 0 runs at this window; `seeds`: their seeds.  Check:
    the fire count of the hold-out controls (seeds not in `REFERENCE_SEEDS`) is at most the largest count the
    one-sided Boschloo test at level 0.01 accepts against the reference count `REFERENCE_FIRES[window]`.  Details:
    the fire epochs, the largest slope s(t), t >= 100, of every control (the threshold is 0.04: how close the
    non-firing controls come), the test's p-value and power (`POWER`), the probability of the paper's 0/15 at the
    measured rate and the two-sided Fisher exact p-value of k/N vs 0/15.  Returns (reference rate, tolerance of the
    check, hold-out indices).
    """
    fires = _fires(gaps)
    slopes = [float(np.nanmax(R.slope_detector(g)[1][100:])) for g in gaps]
    k, n = sum(f is not None for f in fires), len(fires)
    lo, hi = _rate_ci(k, n)
    k0, n0 = PAPER_CONTROLS
    hold = [i for i, s in enumerate(seeds) if s not in REFERENCE_SEEDS]
    k_h, n_h = sum(fires[i] is not None for i in hold), len(hold)
    k_ref, n_ref = REFERENCE_FIRES[window]
    p_ref = k_ref / n_ref
    k_max = exact_bound(k_ref, n_ref, n_h)
    det = {"fires": k, "controls": n, "rate": k / n, "clopper_pearson_95": [lo, hi],
           "fire epochs": [f for f in fires if f is not None], "fire seeds": [s for s, f in zip(seeds, fires) if f is not None],
           "max slope (t >= 100) per control": [round(x, 4) for x in slopes],
           "controls with max slope > 0.03": int(np.sum(np.asarray(slopes) > 0.03)),
           "hold-out fires": k_h, "hold-out controls": n_h, "reference": f"{k_ref}/{n_ref} (seeds 0-30)",
           "largest hold-out count accepted (Boschloo, one-sided, level 0.01)": k_max,
           "Boschloo p-value of the hold-out count": _boschloo_p(k_h, n_h, k_ref, n_ref),
           "power": POWER if (n_ref, n_h) == (POWER["n_ref"], POWER["n_hold"]) else "not computed for these sizes",
           "P(0 of 15 fire | rate k/N)": (1 - k / n) ** n0,
           "fisher_exact_p_vs_paper_0_of_15": float(stats.fisher_exact([[k, n - k], [k0, n0 - k0]]).pvalue),
           "paper_0_of_15_clopper_pearson_95": [0.0, _rate_ci(k0, n0)[1]]}
    report.observe("repulsion:slope-detector", measured=k / n, details=det,
                   source="the control false-positive rate has no prediction in the paper beyond its sample (0/15); "
                          f"Clopper-Pearson 95 % interval [{lo:.3f}, {hi:.3f}] over {n} controls",
                   what=f"control fire rate (false positives), w={window}, {n} eta=0 seeds, {where}")
    bound = k_max / n_h
    tol = bound - p_ref
    assert tol >= p_ref, "the bound must be one-sided: a rate of 0 passes"
    report.check("repulsion:slope-detector", predicted=p_ref, measured=k_h / n_h, atol=tol, details=det,
                 source=f"measured before: {k_ref}/{n_ref} fires (seeds 0-30); one-sided exact two-sample test "
                        f"(Boschloo, level 0.01, the reference's own uncertainty included): at most {k_max} of {n_h} "
                        f"hold-out controls may fire; fails w.p. <= 0.01 whatever rate the two share, and (reference "
                        f"rate 0.065) w.p. 0.10 / 0.27 / 0.74 at hold-out rates 0.15 / 0.20 / 0.30 (31 reference "
                        "controls: weak against a doubled rate)",
                 what=f"{what} (w={window}), {n_h} hold-out eta=0 seeds (31-142), vs the rate measured on seeds 0-30, "
                      f"{where}")
    return p_ref, tol, hold


def _fires(gaps: np.ndarray, **kw) -> list:
    return [R.slope_detector(g, **kw)[0] for g in gaps]


def _median_or_nan(xs) -> float:
    v = [x for x in xs if x is not None]
    return float(np.median(v)) if v else float("nan")


# ------------------------------------------------------------------------------- grokking


def test_canonical_grokking_tian(report, scale):
    """repulsion:setup -- eta = 2e-4 groks, the matched eta = 0 control does not (and the criterion can fail).

    Name and first rows kept from ``verify/modular/test_canonical_grokking.py`` (certificate readers
    look rows up by test name and row text)."""
    run, wall = _main(scale)
    c, where = CONFIG[scale], WHERE[scale]
    acc = run.acc_test  # (eta, seed, epoch)
    t50 = np.array([[np.nan if x is None else x for x in R.first_crossing(a, 0.5)] for a in acc], float)
    t99 = np.array([[np.nan if x is None else x for x in R.first_crossing(a, 0.99)] for a in acc], float)
    details = {"t_train(acc=1)": [R.first_crossing(a, 1.0) for a in run.acc_train],
               "t_test(0.5)": t50.tolist(), "t_test(0.99)": t99.tolist(),
               "final test acc": acc[..., -1].round(3).tolist(), "training wall time (s, incl. JIT)": round(wall, 1)}
    # rows moved from verify/modular/test_canonical_grokking.py
    report.check("repulsion:setup", predicted=1.0, measured=np.isfinite(t99[0]).mean(), atol=0.1,
                 details=details, source="spec repulsion R2/headline: every eta=2e-4 seed groks",
                 what=f"fraction of eta=2e-4 seeds reaching test acc 0.99, {where}")
    report.check("repulsion:setup", predicted=0.0, measured=np.mean([R.first_crossing(a, 0.3) is not None for a in acc[1]]),
                 atol=0.1, source="spec repulsion R2: controls end at test acc 0.12-0.17 (assert <= 0.3)",
                 what=f"fraction of eta=0 control seeds ever above test acc 0.3, {where}")
    if scale == "cpu":
        # spec R2 (its own seeds): test 0.5 at 199-230, 0.99 at 356-388.  Tolerance: the spec's
        # seed range is +-7 % (log half-width 0.073); 3x that for different seeds/RNG.
        report.check("repulsion:setup", predicted=np.sqrt(199 * 230), measured=t50[0], logtol=0.22,
                     source="spec R2 range 199-230 (log half-width 0.073); 3x for other seeds",
                     what=f"epoch of test acc 0.5, eta=2e-4, {where}")
        report.check("repulsion:setup", predicted=np.sqrt(356 * 388), measured=t99[0], logtol=0.13,
                     source="spec R2 range 356-388 (log half-width 0.043); 3x for other seeds",
                     what=f"epoch of test acc 0.99, eta=2e-4, {where}")
        # spec R2 asserts
        best = acc[:, :, :451].max(axis=-1)  # best test accuracy up to epoch 450
        report.check("repulsion:setup", predicted=1.0, measured=best[0].min(), atol=0.01,
                     source="spec R2 assert: grok test >= 0.99 by epoch 450 (spec: 0.99 at 356-388)",
                     what=f"min over grok seeds of the best test acc by epoch 450, {where}",
                     details={"best test acc by 450": best.round(3).tolist()})
        report.check("repulsion:setup", predicted=0.15, measured=acc[1, :, 500], atol=0.15,
                     source="spec R2 assert: control test <= 0.3 at epoch 500 (spec: controls end at 0.12-0.17)",
                     what=f"control test acc at epoch 500 in [0, 0.3], {where}")
        report.reject("repulsion:setup", wrong=1.0, measured=best[1].min(), atol=0.01,
                      source="negative control (spec R2): the grokking criterion applied to eta=0 must fail",
                      what=f"eta=0 passes 'test >= 0.99 by epoch 450'? (min over control seeds), {where}")
    else:
        med = float(np.nanmedian(t50[0])) if np.isfinite(t50[0]).any() else float("nan")
        report.check("repulsion:headline", predicted=101.5, measured=med, logtol=float(np.log(108 / 101.5)),
                     details={"t_test(0.5) per seed": t50[0].tolist(), "paper_iqr": HEAD["grok_epoch_0.5"]["paper_iqr"]},
                     source="paper: median 102, IQR [99, 102]; spec R3 window [95, 108] (replication 99-102)",
                     what=f"median epoch of test acc 0.5, eta=2e-4, {where}")
        report.reject("repulsion:setup", wrong=1.0, measured=np.max(acc[1, :, -1]), atol=0.5,
                      source="negative control: paper 'never at eta=0 (~0.03)'; spec control final 0.024-0.038",
                      what=f"eta=0 reaches test acc > 0.5 by epoch 400? (max final control acc), {where}")


# ------------------------------------------------------------------------ lock-in detector


def test_tian_spectral_lockin(report, scale):
    """repulsion:late-separation and :slope-detector -- g = sigma_2/sigma_3 of the rolling W-update Gram."""
    run, _ = _main(scale)
    where = WHERE[scale]
    g = run.gap  # (eta, seed, epoch), window 20
    fires_g, fires_c = _fires(g[0]), _fires(g[1])
    slope_max = [float(np.nanmax(R.slope_detector(x)[1][100:])) for x in g[0]]
    late = {f"{a}-{b}": (R.late_median_gap(g[0], (a, b)).tolist(), R.late_median_gap(g[1], (a, b)).tolist())
            for a, b in ((200, 400), (400, 500)) if b <= run.epochs[-1]}
    details = {"slope fire epochs grok": fires_g, "slope fire epochs control": fires_c,
               "max slope (t >= 100) grok": [round(s, 4) for s in slope_max], "late median gaps (grok, control)": late}
    if scale == "cpu":
        sep = R.late_stage_separation(g[0], g[1], (400, 500))
        details["separation 200-400"] = R.late_stage_separation(g[0], g[1], (200, 400))
        report.check("repulsion:late-separation", predicted=1139.0, measured=sep, logtol=float(np.log(1139 / 100)),
                     details=details,
                     source="spec R2: separation over 400-500 >= 100x (spec measured 1872/1.64 = 1139x; 200-400: 559x). "
                            "Detector NOT asserted at this size (spec: never fires in grok seeds, max slope ~0.03; "
                            "fires in 2/3 controls near 400) -- see details",
                     what=f"late separation median g (400-500) grok / control, window 20, {where}")
        why = "spec R2: report, do not assert -- the eq. 6 thresholds are tuned to M=71 (spec: grok 0/3, control 2/3)"
        report.observe("repulsion:slope-detector", measured=np.mean([f is not None for f in fires_g]), source=why,
                       what=f"fraction of grok seeds where the slope detector fires, {where}",
                       details={"fire epochs": fires_g, "max slope (t >= 100)": [round(x, 4) for x in slope_max]})
        report.observe("repulsion:slope-detector", measured=np.mean([f is not None for f in fires_c]), source=why,
                       what=f"fraction of control seeds where the slope detector fires (false positives), {where}",
                       details={"fire epochs": fires_c})
        return
    n = len(CONFIG[scale]["seeds"])
    if run.gap_V is not None:  # the V updates are logged but not used by the detector (spec §6.1)
        details["late median V gap 200-400 (grok, control)"] = (R.late_median_gap(run.gap_V[0], (200, 400)).tolist(),
                                                                 R.late_median_gap(run.gap_V[1], (200, 400)).tolist())
    sep = R.late_stage_separation(g[0], g[1], (200, 400))
    report.check("repulsion:late-separation", predicted=math.sqrt(100 * 500), measured=sep, logtol=math.log(5) / 2,
                 details=details, source="spec R3 window [100, 500]x; paper 229x (grok ~300 [168, 320], control 1.31 "
                                         "[1.25, 1.37]); spec replication 228.6x",
                 what=f"late separation median g (200-400) grok / control, window 20, {where}")
    hit = [f for f in fires_g if f is not None]
    report.check("repulsion:slope-detector", predicted=1.0, measured=len(hit) / n, atol=1.01 / n, details=details,
                 source="spec R3: >= 14/15 grok seeds fire (paper 15/15 at 174 [173, 174]; spec 5/5 at 172-174)",
                 what=f"fraction of grok seeds where the slope detector fires, {where}")
    report.check("repulsion:slope-detector", predicted=math.sqrt(168 * 180), measured=_median_or_nan(fires_g),
                 logtol=math.log(180 / math.sqrt(168 * 180)),
                 source="spec R3 window [168, 180]; paper median 174 [173, 174]; spec 172-174",
                 what=f"median slope-detector fire epoch, grok, {where}")
    extra = _extra_controls(scale)
    c = CONFIG[scale]
    control_fire_rows(report, np.concatenate([g[1], extra.gap[0]]), c["seeds"] + c["extra_control_seeds"],
                      "fraction of control seeds where the detector fires",
                      f"M={c['M']}, K={c['K']}, {c['steps']} epochs", 20)


@pytest.mark.gpu
@pytest.mark.skipif("config.getoption('--scale') != 'gpu'", reason="detector negative controls need the full size")
def test_tian_detector_negative_controls(report, scale):
    """repulsion:slope-detector -- its specificity comes from w = 20 and theta = 0.04: w = 5 and theta = 0.01
    must give control false positives; the window sweep (5/10/20/30) from the same runs (tracker window 30),
    controls = the main run's 15 and the 128 extra seeds."""
    run, _ = _main(scale)
    extra = _extra_controls(scale)
    where = WHERE[scale]
    n = len(CONFIG[scale]["seeds"])
    sweep, ctrl_gaps = {}, {}
    for w in (5, 10, 20, 30):
        ctrl_gaps[w] = np.concatenate([run.gaps(w)[1], extra.gaps(w)[0]])
        sweep[w] = (_fires(run.gaps(w)[0]), _fires(ctrl_gaps[w]))
    det = {f"w={w} fires (grok, control)": v for w, v in sweep.items()}
    grok = {w: sum(f is not None for f in v[0]) / n for w, v in sweep.items()}
    c = CONFIG[scale]
    ctrl_seeds = c["seeds"] + c["extra_control_seeds"]
    short = f"M={c['M']}, K={c['K']}, {c['steps']} epochs"
    # the w = 20 rate is reported and checked by test_tian_spectral_lockin (same fires); here w = 30, and the w = 20
    # bound (reference 2/31) for the two wrong variants below
    control_fire_rows(report, ctrl_gaps[30], ctrl_seeds, "control fire fraction", short, 30)
    hold = [i for i, s in enumerate(ctrl_seeds) if s not in REFERENCE_SEEDS]
    k20 = exact_bound(*REFERENCE_FIRES[20], len(hold))
    p20 = REFERENCE_FIRES[20][0] / REFERENCE_FIRES[20][1]
    tol20 = k20 / len(hold) - p20
    for w in (20, 30):
        report.check("repulsion:slope-detector", predicted=1.0, measured=grok[w], atol=1.01 / n, details=det,
                     source="paper window sweep: w = 20, 30 perfect (3 seeds); spec R3 >= 14/15 at w=20",
                     what=f"grok fire fraction at w={w}, {where}")
    rate = {w: float(np.mean([sweep[w][1][i] is not None for i in hold])) for w in sweep}
    src = (f"the w=20 rate check's bound: reference {p20:.3f} (2/31 measured), at most {k20} of {len(hold)} hold-out "
           f"controls firing (rate {p20 + tol20:.3f}; exact two-sample test at level 0.01)")
    report.reject("repulsion:slope-detector", wrong=p20, measured=rate[5], atol=tol20, details=det,
                  source="spec R3 negative control: w=5 gives control false positives (paper: w=5, 10 false "
                         f"positives in 3/3 seeds); {src}",
                  what=f"w=5 as specific as w=20 (its hold-out control rate within the w=20 bound)? {len(hold)} "
                       f"controls, {short}")
    low = _fires(ctrl_gaps[20], threshold=0.01)
    report.reject("repulsion:slope-detector", wrong=p20, measured=np.mean([low[i] is not None for i in hold]),
                  atol=tol20, details={"control fires at theta=0.01": low,
                                       "control fires at theta=0.02": _fires(ctrl_gaps[20], threshold=0.02)},
                  source="spec R3 negative control: theta=0.01 fires on controls (spec measured 5/5 at 197-226; "
                         f"5/5 at 0.02); {src}",
                  what=f"theta=0.01 as specific as 0.04 (its hold-out control rate within the w=20 bound)? "
                       f"{len(hold)} controls, {short}")


# ------------------------------------------------------------------------------ rho_tian


def test_tian_rho(report, scale):
    """repulsion:rho-tian -- the in-scan hook (float32, HIGHEST) = float64 numpy; the level metric's timing."""
    run, _ = _main(scale)
    where = WHERE[scale]
    eps = sorted(e for e in run.snapshots if e in (0, 200, 100))
    pred, meas = [], []
    for e in eps:
        for i in range(len(run.etas)):
            for s in range(min(2, len(run.seeds))):
                pred.append(R.rho_tian(run.features(e, i, s, centred=False)))
                meas.append(run.rho[i, s, e])
    rho0 = run.rho[:, :, 0]
    fire = [[R.first_crossing(x, 0.075) for x in r] for r in run.rho]
    details = {"rho at init": rho0.round(4).tolist(), "rho fire epochs (>= 0.075)": fire,
               "max rho control": run.rho[1].max(axis=-1).round(4).tolist(), "epochs compared": eps}
    report.check("repulsion:rho-tian", predicted=np.array(pred), measured=np.array(meas), rtol=2e-6, details=details,
                 source="float32 mean-centred closed form (precision HIGHEST) vs float64 numpy rho_tian; measured max "
                        "2.1e-7 (48 trained F, M=41) and 1.8e-7 (8, M=71) on CPU; the uncentred form: 2.3e-5",
                 what=f"rho_tian hook vs numpy on the snapshots (train features), {where}")
    if scale == "cpu":
        report.observe("repulsion:rho-tian", measured=float(np.median(rho0)), details=details,
                       source="spec R2: rho report only (~0.10 at init at this size; the 0.075 threshold is tuned to M=71)",
                       what=f"median rho_tian at initialisation (all runs), {where}")
        return
    report.check("repulsion:rho-tian", predicted=math.sqrt(14 * 21), measured=_median_or_nan(fire[0]),
                 logtol=math.log(21 / math.sqrt(14 * 21)), details=details,
                 source="spec R3 window [14, 21]; paper median 17 [17, 18]; spec replication 16-19",
                 what=f"median epoch of rho >= 0.075, grok, {where}")
    report.check("repulsion:rho-tian", predicted=0.0375, measured=float(run.rho[1].max()), atol=0.0375,
                 source="spec R3: control max rho < 0.075 (paper 0.0645; spec 0.062-0.065)",
                 what=f"max over control seeds and epochs of rho, in [0, 0.075), {where}")


# ------------------------------------------------------------------------------ Theorem 6


def sign_rule_cases(scale: str, n_seeds: int) -> dict[str, list[tuple[int, int]]]:
    """(epoch, seed index) pairs per statistic.

    CPU: every seed at epoch 200 for every statistic.  GPU (M=71, K=2048: each statistic is a float64
    solve with an n x n = 2016^2 Cholesky and three 2048-sided products on the host, ~3-10 s per call on
    2 shared cores): the identities (exact, full; 1.0 whatever the features) on seed 0 at the five
    snapshot epochs and on seeds 1-4 at epoch 175; the legacy statistic and the repulsion fraction on
    seeds 0-4 at the paper's epochs 50/175/300 (the 5-seed medians the paper reports) -- 48 evaluations
    instead of 100.
    """
    if scale == "cpu":
        every = [(200, s) for s in range(n_seeds)]
        return {k: every for k in ("exact", "full", "legacy", "repulsion")}
    ident = [(e, 0) for e in (50, 100, 175, 250, 300)] + [(175, s) for s in range(1, 5)]
    paper = [(e, s) for e in HEAD["legacy_sign_match"]["paper_epochs"] for s in range(5)]
    return {"exact": ident, "full": ident, "legacy": paper, "repulsion": paper}


def test_tian_sign_rule(report, scale):
    """repulsion:sign-rule / :full-projector on F~ of the trained runs (float64 on the host): exactly 1.0;
    the legacy statistic (mis-scaled eq. 4) reported / compared with the paper."""
    run, _ = _main(scale)
    where = WHERE[scale]
    cases = sign_rule_cases(scale, len(run.seeds))
    feats: dict[tuple[int, int], np.ndarray] = {}

    def F(e, s):
        if (e, s) not in feats:
            feats[(e, s)] = run.features(e, 0, s)
        return feats[(e, s)]

    stats = {k: {c: (R.repulsion_fraction(F(*c), ETA, 200) if k == "repulsion" else R.sign_match_fraction(F(*c), ETA, 200, k))
                 for c in cs} for k, cs in cases.items()}
    det = {f"{k} (epoch, seed, value)": [[e, s, round(v, 4)] for (e, s), v in d.items()] for k, d in stats.items()}
    ep = sorted({e for e, _ in cases["exact"]})
    ident = "exact identity (spec §5): B_jl = -c/(alpha beta - c^2); below 1 = numerical error. atol < 1/200"
    report.check("repulsion:sign-rule", predicted=1.0, measured=list(stats["exact"].values()), atol=0.004, details=det,
                 source=ident, what=f"exact leave-two-out sign-match, top-200 pairs of F~, epochs {ep}, eta=2e-4, {where}")
    report.check("repulsion:full-projector", predicted=1.0, measured=list(stats["full"].values()), atol=0.004,
                 source=ident, what=f"full-projector (P_eta) sign-match, top-200 pairs, epochs {ep}, eta=2e-4, {where}")
    if scale == "gpu":
        med = [float(np.median([v for (e, _), v in stats["legacy"].items() if e == pe]))
               for pe in HEAD["legacy_sign_match"]["paper_epochs"]]
        report.check("repulsion:sign-rule", predicted=np.array(HEAD["legacy_sign_match"]["paper"]), measured=med,
                     atol=0.05, details=det,
                     source="paper 5-seed medians 0.865 / 0.955 / 0.985 at epochs 50/175/300 (legacy statistic, "
                            "erratum repulsion-2); spec seed 0: 0.890/0.950/0.960; spec R3: within +-0.05",
                     what=f"median legacy sign-match (seeds 0-4) vs paper, {where}")


# ------------------------------------------------------------------------ GPU extensions


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif("config.getoption('--scale') != 'gpu'", reason="full-size ReLU run")
def test_tian_relu(report, scale):
    """repulsion:slope-detector with sigma = ReLU (800 epochs): no lock-in (paper 0/15, separation 1.4x)."""
    c = CONFIG["gpu"]
    run = train_tian(c["M"], c["K"], c["n_train"], seeds=c["seeds"], etas=(ETA, 0.0), steps=800, activation="relu",
                     rho=True, progress=True)
    where = f"ReLU, M={c['M']}, K={c['K']}, n={c['n_train']}, {len(c['seeds'])} seeds x eta {{2e-4, 0}}, 800 epochs"
    n = len(c["seeds"])
    fires = _fires(run.gap[0])
    t99 = R.first_crossing(run.acc_test[0], 0.99)
    det = {"fires grok": fires, "fires control": _fires(run.gap[1]), "t_test(0.99)": t99,
           "rho fire epochs": [R.first_crossing(x, 0.075) for x in run.rho[0]],
           "paper": "detector 0/15, separation 1.4x, test 0.99 at median 530, rho fires at 0"}
    report.check("repulsion:slope-detector", predicted=0.0, measured=sum(f is not None for f in fires) / n,
                 atol=0.5 / n, details=det, source="spec R3 extension: ReLU 0/15 fires (paper 0/15)",
                 what=f"fraction of grok seeds where the detector fires, {where}")
    sep = R.late_stage_separation(run.gap[0], run.gap[1], (200, 400))
    report.check("repulsion:late-separation", predicted=1.4, measured=sep, logtol=math.log(5 / 1.4),
                 source="spec R3 extension: ReLU separation < 5x (paper 1.4x)",
                 what=f"late separation (200-400) grok / control, {where}")


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif("config.getoption('--scale') != 'gpu'", reason="full-size eta sweep")
def test_tian_eta_sweep(report, scale):
    """repulsion:eta-scaling -- t(test 0.5) ~ eta^-gamma over the grokking etas of the slow regime (<= 2e-4)."""
    c = CONFIG["gpu"]
    etas = (1e-5, 5e-5, 1e-4, 2e-4, 5e-4)
    run = train_tian(c["M"], c["K"], c["n_train"], seeds=tuple(range(5)), etas=etas, steps=600, rho=True,
                     progress=True)
    table = R.eta_sweep_table()
    t50 = [R.first_crossing(a, 0.5) for a in run.acc_test]
    lock = [_fires(g) for g in run.gap]
    rho = [[R.first_crossing(x, 0.075) for x in r] for r in run.rho]
    med = {e: _median_or_nan(t) if sum(x is not None for x in t) >= 3 else None for e, t in zip(etas, t50)}
    det = {"t_test(0.5)": dict(zip(map(str, etas), t50)), "lock-in": dict(zip(map(str, etas), lock)),
           "rho fire": dict(zip(map(str, etas), rho)), "paper medians": {str(k): v for k, v in table.items()}}
    slow = [e for e in etas if e <= 2e-4 and med[e] is not None]
    report.check("repulsion:eta-scaling", predicted=3.0, measured=len(slow), atol=1.5, details=det,
                 source="paper: 5e-5, 1e-4, 2e-4 grok within 600 epochs (medians 312/174/101); the fit needs >= 2",
                 what="grokking etas <= 2e-4 (>= 3 of 5 seeds reach test 0.5 by epoch 600), of {1e-5, ..., 2e-4}")
    gamma, _ = R.fit_power_law(slow, [med[e] for e in slow])
    if med[5e-4] is not None and med[2e-4] is not None:
        det["gamma 2e-4 -> 5e-4 (saturation)"] = math.log(med[2e-4] / med[5e-4]) / math.log(5e-4 / 2e-4)
    every = [e for e in etas if med[e] is not None]
    if len(every) >= 2:
        det["gamma over every grokking eta"] = R.fit_power_law(every, [med[e] for e in every])[0]
    report.check("repulsion:eta-scaling", predicted=0.9, measured=gamma, atol=0.3, details=det,
                 source="spec R3 extension: gamma in [0.6, 1.2] (paper medians 312/174/101 at 5e-5/1e-4/2e-4: "
                        "gamma 0.81; saturates at 5e-4: 102) -- fitted on the grokking etas <= 2e-4 (the paper's "
                        "own medians give 0.50 when 5e-4 is included)",
                 what=f"gamma of t(test 0.5) ~ eta^-gamma, etas {slow}, 5 seeds, 600 epochs")
    report.check("repulsion:eta-scaling", predicted=0.0, measured=sum(x is not None for x in t50[0]) / 5, atol=0.1,
                 source="paper: eta = 1e-5 groks in 0/5 seeds within 600 epochs",
                 what="fraction of eta=1e-5 seeds reaching test 0.5 by epoch 600")


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif("config.getoption('--scale') != 'gpu'", reason="full-size 2000-epoch run")
def test_tian_small_eta_long_run(report, scale):
    """repulsion:eta-scaling -- eta = 1e-5 for 2000 epochs: groks, and rho crosses 0.075 before test 0.5."""
    c = CONFIG["gpu"]
    run = train_tian(c["M"], c["K"], c["n_train"], seeds=tuple(range(5)), etas=(1e-5,), steps=2000, rho=True,
                     progress=True)
    t50 = [R.first_crossing(a, 0.5) for a in run.acc_test[0]]
    rho = [R.first_crossing(x, 0.075) for x in run.rho[0]]
    det = {"t_test(0.5)": t50, "t_test(0.99)": [R.first_crossing(a, 0.99) for a in run.acc_test[0]],
           "rho fire": rho, "paper": "test 0.5 at 1094, 0.99 at 1527, rho at 527 (lead 567)"}
    report.check("repulsion:eta-scaling", predicted=1.0, measured=sum(t is not None for t in t50) / 5, atol=0.1,
                 details=det, source="spec R3 extension: eta=1e-5 groks by epoch 2000 (paper: test 0.5 at 1094)",
                 what="fraction of eta=1e-5 seeds reaching test 0.5 by epoch 2000, M=71, 5 seeds")
    lead = [t - r for t, r in zip(t50, rho) if t is not None and r is not None]
    report.check("repulsion:rho-tian", predicted=1.0, measured=np.mean([x > 0 for x in lead]) if lead else 0.0,
                 atol=0.1, details=det, source="spec R3 extension: rho crosses 0.075 before test 0.5 (paper lead 567)",
                 what="fraction of grokked eta=1e-5 seeds with rho crossing before test 0.5")


# ------------------------------------------------------------------------------------------ GPU budget

from grokclocks.verification import BudgetItem  # noqa: E402

from _budget_engine import engine_build, host_item  # noqa: E402  (verify/ is on sys.path)


def _budget_tian(etas, **kw):
    c = CONFIG["gpu"]

    def front(n_seeds, n_steps):
        snaps = tuple(e for e in kw.get("snapshot_epochs", ()) if e <= n_steps)  # the reduced run is short
        return train_tian(c["M"], c["K"], c["n_train"], seeds=tuple(range(n_seeds)), etas=etas, steps=n_steps,
                          **(kw | {"snapshot_epochs": snaps}))

    return engine_build(front)


_G = "M=71, K=2048, n=2016, sigma=x^2"
_CACHED = "reads the runs trained by earlier tests of this module (cached for the session)"
GPU_BUDGET = [
    BudgetItem("test_canonical_grokking_tian",
               _budget_tian((ETA, 0.0), window=20, max_window=30, k=5, track_V=True, rho=True,
                            snapshot_epochs=(0, 50, 100, 175, 250, 300)),
               seeds=15, steps=400, cpu_seeds=1, cpu_steps=4,
               config=f"{_G}, 15 seeds x eta {{2e-4, 0}}, 400 epochs, rho hook, W and V Gram trackers (w 30), snapshots"),
    BudgetItem("test_tian_spectral_lockin", _budget_tian((0.0,), window=20, max_window=30, k=5, rho=False),
               seeds=128, steps=400, cpu_seeds=1, cpu_steps=4,
               config=f"{_G}, 128 extra eta=0 control seeds (15-142), 400 epochs, W Gram tracker (w 30), no rho"),
    host_item("test_tian_detector_negative_controls", 1.0, _CACHED),
    host_item("test_tian_rho", 3.0, _CACHED + "; 8 float64 rho_tian of 2016 x 2048 features on the host"),
    host_item("test_tian_sign_rule", 60.0, _CACHED + "; host: 48 float64 statistics of 2016 x 2048 features "
              "(sign_rule_cases; each ~70 GFLOP of 2016/2048-sided products, a Cholesky and a sort of 2.1e6 pairs), "
              "measured 10-18 s each on 2 shared cores at load ~12, assumed ~1.25 s each on the 16 idle host "
              "cores of the H100 (the 2026-11-24 run did not finish 100 of them in 9 min with 14 processes)"),
    BudgetItem("test_tian_relu", _budget_tian((ETA, 0.0), activation="relu", rho=True), seeds=15, steps=800,
               cpu_seeds=1, cpu_steps=4, config=f"M=71, K=2048, n=2016, sigma=ReLU, 15 seeds x eta {{2e-4, 0}}, 800 epochs, rho"),
    BudgetItem("test_tian_eta_sweep", _budget_tian((1e-5, 5e-5, 1e-4, 2e-4, 5e-4), rho=True), seeds=5, steps=600,
               cpu_seeds=1, cpu_steps=4, config=f"{_G}, 5 etas x 5 seeds, 600 epochs, rho"),
    BudgetItem("test_tian_small_eta_long_run", _budget_tian((1e-5,), rho=True), seeds=5, steps=2000,
               cpu_seeds=1, cpu_steps=4, config=f"{_G}, eta 1e-5 x 5 seeds, 2000 epochs, rho"),
]
