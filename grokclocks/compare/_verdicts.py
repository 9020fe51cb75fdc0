"""One verdict per theory: consistent, inconsistent or cannot tell, by the rules of VERDICT_RULES."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ._records import Entry, RunData, Verdict, _APPG_RESIDUAL, _KS_ALPHA, _LEVI_RTOL, _MIN_SEEDS_KS, _fmt_num

def _levi_verdict(r: RunData, res: Mapping[str, np.ndarray], entries: Sequence[Entry]) -> Verdict:
    by_id = {e.id: e for e in entries}
    pred = by_id.get("delta_t_linear")
    band = f"|Delta t / Delta t_linear - 1| <= {_LEVI_RTOL:g}"
    if pred is not None and pred.available and "delta_t" in res:
        dt = res["delta_t"]
        fin = dt[np.isfinite(dt)]
        if fin.size:
            ratio = float(np.median(fin)) / pred.value
            ok = abs(ratio - 1.0) <= _LEVI_RTOL
            return Verdict("levi", "consistent" if ok else "inconsistent", "delta_t / delta_t_linear", ratio, band,
                           "levi:grok-def", f"median measured Delta t {_fmt_num(float(np.median(fin)))} vs the linear "
                           f"estimator's {_fmt_num(pred.value)} (tolerance of the spec's d = 500 check)")
        end = float(r.steps[-1]) - float(np.nanmin(res["t_train"])) if np.isfinite(res["t_train"]).any() else 0.0
        if end > pred.value * (1 + _LEVI_RTOL):
            return Verdict("levi", "inconsistent", "delta_t", math.inf, band, "levi:grok-def",
                           f"the test clock never fired although the run lasted {_fmt_num(end)} steps after t_train, "
                           f"beyond the predicted Delta t {_fmt_num(pred.value)}")
        return Verdict("levi", "cannot tell", "", None, band, "levi:grok-def",
                       "the run ended before the predicted Delta t had passed")
    if "appg_residual" in res:
        resid = float(res["appg_residual"][0])
        ok = resid <= _APPG_RESIDUAL
        return Verdict("levi", "consistent" if ok else "inconsistent", "appg_residual", resid,
                       f"largest relative residual <= {_APPG_RESIDUAL:g}", "levi:appG",
                       f"Delta t = C (lambda* - lambda)^-2 fitted over {r.lam_sweep[0].size} training fractions")
    return Verdict("levi", "cannot tell", "", None, "", "levi:grok-def",
                   "the closed form is for GD on a linear MSE teacher-student (pass levi_params= if the run is one); "
                   "its App. G law needs Delta t at >= 3 training fractions (lam_sweep= or an engine train_frac sweep)")


def _clocks_verdict(r: RunData, res: Mapping[str, np.ndarray]) -> Verdict:
    band = "t_test / t_cls > 1 in every run"
    if "t_cls" not in res or "t_test" not in res:
        missing = "the training loss" if "t_cls" not in res else "the test accuracy"
        return Verdict("clocks", "cannot tell", "", None, band, "clocks:appB", f"{missing} is not logged")
    tc, te = res["t_cls"], res["t_test"]
    both = np.isfinite(tc) & np.isfinite(te) & (tc > 0)
    if not both.any():
        if not np.isfinite(te).any():
            why = "the test clock never fired"
        elif not np.isfinite(tc).any():
            why = "the training loss never fell to eps (a loss floor? try another eps_cls)"
        else:
            why = "no run where both clocks fired"
        return Verdict("clocks", "cannot tell", "", None, band, "clocks:appB", why)
    ratio = te[both] / tc[both]
    worst = float(ratio.min())
    ok = worst > 1.0
    return Verdict("clocks", "consistent" if ok else "inconsistent", "t_test / t_cls (min over runs)", worst, band,
                   "clocks:appB", f"the classifier clock fired {'before' if ok else 'at or after'} generalisation "
                   f"in {'all' if ok else 'not all'} {int(both.sum())} run(s) where both fired "
                   "(the theorem, clocks:thm5.6, puts t_rep >> t_cls)")


def _kramers_verdict(r: RunData, res: Mapping[str, np.ndarray]) -> Verdict:
    band = f"KS p >= {_KS_ALPHA:g} (exponential waiting times, CV ~ 1)"
    if "waits" not in res:
        return Verdict("kramers", "cannot tell", "", None, band, "kramers:eq15", "needs train and test accuracy")
    n = int(res["waits"].size)
    if "ks_pvalue" not in res:
        return Verdict("kramers", "cannot tell", "", None, band, "kramers:eq15",
                       f"the escape statistics need >= {_MIN_SEEDS_KS} seeds that grok (have {n}); a delay ratio "
                       "alone inverts to a barrier only under tau_0 = t_mem (heuristic)")
    pv = float(res["ks_pvalue"][0])
    ok = pv >= _KS_ALPHA
    return Verdict("kramers", "consistent" if ok else "inconsistent", "ks_pvalue", pv, band, "kramers:eq15",
                   f"Delta t over {n} seeds " + ("is compatible with" if ok else "rejects") +
                   " the exponential law of an activated escape" + ("" if ok else " (too regular; erratum kramers-13)"))


def _coverage_verdict(r: RunData, res: Mapping[str, np.ndarray]) -> Verdict:
    band = "max test acc <= Ceil(inf) + chance allowance"
    if "ceiling" not in res:
        return Verdict("coverage", "cannot tell", "", None, band, "uniformity:thm3.10",
                       "needs the training split (train_mask=, p=) and the test accuracy")
    ceil, allow, mx = res["ceiling"], res["allowance"], res["max_test_acc"]
    testable = ceil < 1.0
    if not testable.any():
        return Verdict("coverage", "cannot tell", "", None, band, "uniformity:thm3.10",
                       "Ceil(inf) = 1: the split covers every label and token, so every accuracy is allowed")
    excess = (mx - ceil - allow)[testable]
    worst = int(np.argmax(excess))
    ok = bool(excess.max() <= 0)
    i = np.flatnonzero(testable)[worst]
    return Verdict("coverage", "consistent" if ok else "inconsistent", "max_test_acc", float(mx[i]),
                   f"<= {_fmt_num(float(ceil[i]))} + {_fmt_num(float(allow[i]))}", "uniformity:thm3.10",
                   f"worst of {int(testable.sum())} run(s) with Ceil(inf) < 1; "
                   + ("below the ceiling" if ok else "above the ceiling: the split cannot teach those pairs"))


def _repulsion_verdict(r: RunData, res: Mapping[str, np.ndarray], t_min: int, lag: int) -> Verdict:
    band = "fires exactly in the runs that reach test acc 0.5"
    if "lock_in" not in res:
        return Verdict("repulsion", "cannot tell", "", None, band, "repulsion:headline",
                       "needs an eigengap series (gap=) or per-step weight snapshots (weights=)")
    if "t_test_half" not in res:
        return Verdict("repulsion", "cannot tell", "", None, band, "repulsion:headline", "no test accuracy logged")
    if float(res["gap_end"][0]) < t_min:
        return Verdict("repulsion", "cannot tell", "", None, band, "repulsion:headline",
                       f"the gap series ends before t_min = {t_min}, where the detector may first fire")
    fired = np.isfinite(res["lock_in"])
    grokked = np.isfinite(res["t_test_half"])
    disagree = int(np.sum(fired != grokked))
    ok = disagree == 0
    return Verdict("repulsion", "consistent" if ok else "inconsistent", "runs where fire != grok", float(disagree),
                   "0", "repulsion:headline",
                   f"fired in {int(fired.sum())}/{fired.size}, reached test acc 0.5 in {int(grokked.sum())}/"
                   f"{grokked.size}; the detector constants are calibrated at M = 71, K = 2048 "
                   "(repulsion:reduced-replication: early or missing fires at smaller sizes)")
