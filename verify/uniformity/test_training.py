"""Training runs on designed splits vs the exact ceilings of spec ``uniformity`` (V2, V3).

One-layer transformer (spec ``uniformity:setup``) and the embedding MLP trained by AdamW (wd 1, warm-up 10,
full batch, CE) on SQUARE / STRIP / random splits (``uniformity:designs``), all (design, seed) runs of a
model vmapped in one program (``_runs.py``).  Checks:

* ``uniformity:thm3.10`` -- no run ever gets more *uncovered* test points right (no same-label training
  point, or an untrained token: outside the combined ceiling at ``n = inf``) than a chance-level predictor
  would, at level 1e-3 per run (Bonferroni over records); the raw excess ``max acc - ceiling`` is reported
  without tolerance in ``details``.  Uncovered points exist in the disjoint-vocabulary runs (token factor)
  and in a random split with three label classes held out of training;
* token-factor control (V2 c): strip-only accuracy of the disjoint layout stays at chance at every record;
  negative control: the shared-vocabulary run of the same split exceeds the disjoint layout's ceiling;
* ``uniformity:def4.2`` -- the paper and code_base MED variants are affinely related (corr > 0.99);
  Spearman(MED, test loss) before/during grokking is reported (not asserted, spec §6.2);
* ``uniformity:table1`` (GPU scale) -- the full grid p = 97, SQUARE/STRIP at every k of Table 1,
  5 seeds, 6000 epochs, side by side with the paper and the ceilings; other operations of appendix D.

CPU deviations (stated in the rows): p = 23, frac 0.5, d_model 64 / d_mlp 256, lr 3e-3 (grokking within
1500 steps on 2 cores; lr 1e-3 did not grok the random split of p = 31 in 2000 steps).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import stats

from . import _runs as R

ALPHA = 1e-3  # per-run level of the chance allowance (Bonferroni over the records inside)


def _cpu_batches() -> dict[str, R.Batch]:
    p, frac, steps, lr = 23, 0.5, 1500, 3e-3
    tr_kw = dict(d_model=64, n_heads=4, d_head=16, d_mlp=256)
    designs = [("SQUARE k=6", "square", 6), ("SQUARE k=10", "square", 10), ("STRIP k=4", "strip", 4),
               ("STRIP k=8", "strip", 8), ("random", "random", None), ("random, labels 0-2 held", "heldlabel", None)]
    return {
        "transformer": R.Batch("transformer", p, designs, (0, 1), frac, steps, 10, tr_kw, lr=lr, held_labels=(0, 1, 2)),
        "disjoint": R.Batch("transformer_disjoint", p, [("STRIP k=4", "strip", 4), ("STRIP k=8", "strip", 8)], (0, 1),
                            frac, steps, 10, tr_kw, lr=lr),
        "mlp": R.Batch("embedding_mlp", p, designs, (0, 1), frac, steps, 10, dict(d_embed=64, d_hidden=256), lr=lr,
                       held_labels=(0, 1, 2)),
    }


def _gpu_batches() -> dict[str, R.Batch]:
    from grokclocks.coverage import table1

    p, frac, steps = 97, 0.3, 6000
    kw = dict(d_model=128, n_heads=4, d_head=32, d_mlp=512)
    rows = table1()
    sq = [(f"SQUARE k={r['k']}", "square", r["k"]) for r in rows if r["design"] == "square"]
    st = [(f"STRIP k={r['k']}", "strip", r["k"]) for r in rows if r["design"] == "strip"]
    seeds = (0, 1, 2, 3, 4)
    return {
        "transformer": R.Batch("transformer", p, sq + st + [("random", "random", None),
                                                             ("random, labels 0-2 held", "heldlabel", None)],
                               seeds, frac, steps, 10, kw, held_labels=(0, 1, 2)),
        "disjoint": R.Batch("transformer_disjoint", p, [("STRIP k=40", "strip", 40)], seeds, frac, steps, 10, kw),
        "mlp": R.Batch("embedding_mlp", p, sq + st, seeds, frac, steps, 10, dict(d_embed=128, d_hidden=512),
                       held_labels=(0, 1, 2)),
        "sub": R.Batch("transformer", p, [("random", "random", None)], seeds, frac, steps, 10, kw, operation="sub"),
        "mul": R.Batch("transformer", p, [("random", "random", None)], seeds, frac, steps, 10, kw, operation="mul"),
        "sq_sum": R.Batch("transformer", p, [("random", "random", None)], seeds, frac, steps, 10, kw,
                          operation="sq_sum"),
    }


@functools.lru_cache(maxsize=2)
def _results(scale: str) -> dict[str, dict]:
    batches = _cpu_batches() if scale == "cpu" else _gpu_batches()
    return {name: R.run_batch(b) for name, b in batches.items()}


def _where(scale: str) -> str:
    return ("p=23, frac 0.5, d_model 64, lr 3e-3, 1500 steps, 2 seeds" if scale == "cpu"
            else "p=97, frac 0.3, d_model 128, lr 1e-3, 6000 epochs, 5 seeds")


def _summary(r: dict) -> dict:
    return dict(run=f"{r['model']} {r['label']} seed {r['seed']}", ceiling=round(r["ceiling"], 4),
                max_test_acc=round(r["max_test_acc"], 4), excess=round(r["excess"], 4),
                best_over_ceiling=round(r["max_test_acc"] / r["ceiling"], 4) if r["ceiling"] > 0 else None,
                u_acc=round(r["u_acc"], 4), l_acc=round(r["l_acc"], 4), go_epoch=r["go_epoch"],
                memorised_epoch=r["memorised_epoch"], implied_radius=r["implied_radius"],
                n_uncovered=r["n_uncovered"], max_uncovered_hits=int(r["uncovered_hits"].max()))


def _all_runs(res: dict) -> list[dict]:
    return [r for b in res.values() for r in b["runs"]]


def test_thm310_no_run_exceeds_ceiling(report, scale):
    """Theorem 3.10 (combined torus ceiling at n = inf): uncovered test points are right at most by chance."""
    res = _results(scale)
    runs = _all_runs(res)
    worst, rows = -np.inf, []
    for r in runs:
        T = r["uncovered_hits"].size
        h, allow = R.chance_allowance(r["n_test"], r["ceiling"], 23 if scale == "cpu" else 97, ALPHA / T)
        over = int(r["uncovered_hits"].max()) - h
        worst = max(worst, over)
        rows.append(dict(_summary(r), chance_allowance_points=h, allowance_acc=round(allow, 4)))
    n_nontrivial = sum(r["n_uncovered"] > 0 for r in runs)
    assert n_nontrivial >= 4, "the check needs runs with uncovered test points (disjoint layout, held labels)"
    report.check("uniformity:thm3.10", predicted=0.0, measured=max(worst, 0), atol=0.5, details=dict(
        runs=rows, seconds={k: round(v["seconds"], 1) for k, v in res.items()}, alpha_per_run=ALPHA,
        worst_hits_minus_allowance=int(worst), runs_with_uncovered_points=n_nontrivial),
        source="theorem (no tolerance); chance hits on the N_u uncovered points bounded by the 1-1e-3/T quantile "
               "of Bin(N_u, 1/p) (argmax independent of the label; per-column sharing only lowers the variance)",
        what=f"max over runs/records of uncovered test points right minus the chance allowance, {_where(scale)}")
    # the pure theorem (a network that never guesses): excess of max test acc over the ceiling, reported only
    held = [r for r in runs if r["label"].startswith("random, labels")]
    report.check("uniformity:thm3.10", predicted=0.0, measured=max(max(r["uncovered_hits"].max() for r in held), 0),
                 atol=max(R.chance_allowance(r["n_test"], r["ceiling"], 23 if scale == "cpu" else 97,
                                             ALPHA / r["uncovered_hits"].size)[0] for r in held) + 0.5,
                 details=dict(runs=[_summary(r) for r in held]),
                 source="chance allowance Bin(N_u, 1/p) at 1e-3/T per run; measured: hits on held-out label classes",
                 what="test points of label classes absent from training that are ever predicted right")


def test_token_factor_control(report, scale):
    """V2 (c): unseen first-operand tokens (disjoint layout, STRIP) stay at chance; shared layout exceeds that ceiling."""
    res = _results(scale)
    p = 23 if scale == "cpu" else 97
    dis = res["disjoint"]["runs"]
    strip_max = max(float(np.max(r["strip_acc"])) for r in dis)
    report.check("uniformity:thm3.10", predicted=1.0 / p, measured=strip_max, atol=0.02,
                 details=dict(runs=[dict(_summary(r), strip_acc_max=round(float(np.max(r["strip_acc"])), 4))
                                    for r in dis]),
                 source="spec V2 (c): strip-only accuracy <= 1/p + 0.02 at every logged epoch",
                 what=f"max strip-only test accuracy, disjoint vocabulary (b_offset=p), STRIP, {_where(scale)}")
    shared = {(r["label"], r["seed"]): r for r in res["transformer"]["runs"]}
    pairs = [(shared[(r["label"], r["seed"])], r) for r in dis if (r["label"], r["seed"]) in shared]
    best = max(pairs, key=lambda sr: sr[0]["max_test_acc"] - sr[1]["ceiling"])
    s, d = best
    h, allow = R.chance_allowance(d["n_test"], d["ceiling"], p, ALPHA / d["uncovered_hits"].size)
    assert s["max_test_acc"] > d["ceiling"]
    report.reject("uniformity:thm3.10", wrong=d["ceiling"] + allow, measured=s["max_test_acc"], atol=allow or 0.5 / d["n_test"],
                  details=dict(shared=_summary(s), disjoint=_summary(d)),
                  source="same chance allowance as the ceiling check",
                  what=f"disjoint-layout ceiling (+ allowance) as a bound on the shared-layout run, {s['label']}")


def test_med_variants_and_spearman(report, scale):
    """Def. 4.2: paper vs code MED affinely related; Spearman(MED, test loss) before/during grokking reported."""
    res = _results(scale)
    runs = [r for r in _all_runs(res) if r["model"] != "transformer_disjoint"]
    corr = [float(np.corrcoef(r["med"], r["med_code"])[0, 1]) for r in runs]
    sp = [dict(run=f"{r['model']} {r['label']} seed {r['seed']}",
               before_grokking=r.get("spearman_before_grokking"), grokking=r.get("spearman_grokking"),
               post_memorisation=r.get("spearman_post_memorisation"), grok_start_epoch=r.get("grok_start_epoch"),
               go_epoch=r["go_epoch"]) for r in runs]
    g = [x["grokking"] for x in sp if x["grokking"] is not None]
    b = [x["before_grokking"] for x in sp if x["before_grokking"] is not None]
    report.check("uniformity:def4.2", predicted=1.0, measured=min(corr), atol=0.01,
                 details=dict(pearson_paper_vs_code_base=[round(c, 5) for c in corr], spearman=sp,
                              median_spearman_grokking=float(np.median(g)) if g else None,
                              median_spearman_before=float(np.median(b)) if b else None,
                              frac_grokking_above_0_5=float(np.mean(np.asarray(g) > 0.5)) if g else None),
                 source="spec V3: the variants differ by one token and a scale (correlation > 0.99)",
                 what=f"min Pearson corr of MED 'paper' vs 'code_base' over the run, {_where(scale)}")


@pytest.mark.skipif("config.getoption('--scale') != 'gpu'", reason="Table 1 grid needs the GPU scale")
def test_table1_side_by_side(report, scale):
    """Table 1 grid (p = 97): median U-Acc per design next to the paper and the ceilings; monotone in k."""
    from grokclocks.coverage import table1, table1_ceilings

    res = _results(scale)
    ceil = {(c["design"], c["k"]): c for c in table1_ceilings(b_offset=0)}
    rows, meds = [], {}
    for t in table1():
        rs = [r for r in res["transformer"]["runs"] if r["design"] == t["design"] and r["k"] == t["k"]]
        u = float(np.median([r["u_acc"] for r in rs])) * 100
        meds.setdefault(t["design"], []).append((t["k"], u))
        gos = [r["go_epoch"] for r in rs if r["go_epoch"] is not None]
        rows.append(dict(design=t["design"], k=t["k"], paper_u=t["u_acc"], paper_l=t["l_acc"], paper_go=t["go_epoch"],
                         u_acc_median=round(u, 2), l_acc_median=round(float(np.median([r["l_acc"] for r in rs])) * 100, 2),
                         go_median=float(np.median(gos)) if gos else None, ceilings=ceil[(t["design"], t["k"])]["ceilings"],
                         implied_radius=[r["implied_radius"] for r in rs]))
    inversions = []
    for d, v in meds.items():
        v = sorted(v)
        inversions += [(d, k2, u2 - u1) for (k1, u1), (k2, u2) in zip(v, v[1:]) if u2 > u1]
    big = [x for x in inversions if x[2] > 3.0]
    report.check("uniformity:table1", predicted=0.0, measured=float(len(big) + max(len(inversions) - 1, 0)), atol=0.5,
                 details=dict(rows=rows, inversions=inversions),
                 source="spec V2 (b): median U-Acc non-increasing in k per family, one inversion of <= 3 points allowed",
                 what="inversions of median U-Acc in k (SQUARE, STRIP), p=97, 5 seeds")
    for name in ("sub", "mul", "sq_sum"):
        rs = res[name]["runs"]
        report.check("uniformity:thm3.10", predicted=1.0, measured=max(r["u_acc"] for r in rs) / min(r["ceiling"] for r in rs),
                     atol=0.5, details=dict(runs=[_summary(r) for r in rs]),
                     source="reported for appendix D (operations); ceiling at n=inf of a random 30 % split",
                     what=f"best U-Acc / ceiling, operation {name}, random 30 %")
