"""The records of a comparison: the run's data (RunData), one quantity (Entry), one theory's verdict (Verdict),
the quantity IDs and the verdict rules."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ..runs._records import USER_KEYS, RunData, _fmt_num, _json_number, _json_state

__all__ = ["Entry", "QUANTITY_IDS", "RunData", "THEORIES", "USER_KEYS", "VERDICT_RULES", "Verdict"]


THEORIES: tuple[str, ...] = ("levi", "clocks", "kramers", "coverage", "repulsion")
"""The names of the theories `compare_run` gives a verdict for, in the order of its report (`Verdict.theory`,
the key of `Comparison.verdict`): Levi et al.'s linear estimator (`"levi"`), the two training clocks
(`"clocks"`), Kramers escape (`"kramers"`), coverage and uniformity of Gu et al. (`"coverage"`, spec
paper key `uniformity`) and Tian's feature repulsion (`"repulsion"`)."""

QUANTITY_IDS: dict[str, str] = {
    "lambda": "lambda = d_in / N_train",
    "delta_t": "Delta t = t_test - t_train (grokking delay)",
    "delta_t_linear": "Delta t predicted by the linear estimator",
    "lambda_star": "lambda* of the fit Delta t = C (lambda* - lambda)^-2",
    "delta_t_fit": "Delta t from the lambda* fit",
    "t_train": "t_train: first record with train acc >= the train level",
    "t_test": "t_test: first record with test acc >= the test level",
    "t_cls": "t_cls(eps): first record with training loss <= eps",
    "t_cls_sustained": "t_cls(eps) sustained for `window` records",
    "t_rep_fourier": "t_rep of the embedding's Fourier energy outside its key frequencies",
    "t_rep_srank": "t_rep of the embedding's stable rank",
    "t_rep_weight_norm": "t_rep of the weight norm",
    "lag_fourier": "t_rep(Fourier) - t_rep(test acc)",
    "lag_srank": "t_rep(stable rank) - t_rep(test acc)",
    "lag_weight_norm": "t_rep(weight norm) - t_rep(test acc)",
    "t_rep": "representation clock (n/a row when no structural statistic is logged)",
    "cls_before_rep": "t_cls < t_rep",
    "separation_ratio": "t_rep / t_cls",
    "clock_order": "t_train <= t_cls < t_test",
    "delay_ratio": "t_grok / t_mem = t_test / t_train",
    "barrier": "Arrhenius barrier ln(t_grok / t_mem)",
    "cv_delta_t": "coefficient of variation of Delta t over seeds",
    "ks_pvalue": "KS p-value of Delta t against an exponential law",
    "escape_like": "KS p >= 0.05",
    "ceiling": "exact test-accuracy ceiling Ceil(inf) of the split",
    "max_test_acc": "max test accuracy",
    "below_ceiling": "max test accuracy <= ceiling + chance allowance",
    "implied_radius": "implied radius n of U-Acc",
    "med_start": "MED at the first snapshot",
    "med_end": "MED at the last snapshot",
    "spearman_med": "Spearman(MED, test loss) while grokking",
    "med": "MED (n/a row when no embeddings are logged)",
    "lock_in": "lock-in epoch of the slope detector",
    "t_test_half": "first record with test acc >= 0.5",
}
"""Stable short ID of each quantity -> what it is (the keys of `Comparison.value`, the JSON's `id`, the table's
ID column)."""

VERDICT_RULES: dict[str, str] = {
    "levi": "with levi_params: consistent if |Delta t / Delta t_linear - 1| <= 0.15 (levi:grok-def, the spec's "
            "CPU tolerance at d = 500); with a lambda sweep: consistent if the inverse-square fit's largest relative "
            "residual <= 0.15 (levi:appG); otherwise cannot tell",
    "clocks": "consistent if t_test / t_cls > 1 in every run where both fired (the ordering t_cls < t_test of "
              "clocks:appB); inconsistent if <= 1 in any; cannot tell if no run has both",
    "kramers": "with >= 5 seeds that grok: consistent if the KS p-value of Delta t against an exponential law "
               "(an activated escape, kramers:eq15) is >= 0.05, inconsistent if < 0.05; cannot tell with fewer",
    "coverage": "consistent if every run's max test accuracy <= Ceil(inf) + chance allowance (uniformity:thm3.10); "
                "inconsistent if above; cannot tell without the split, or when Ceil(inf) = 1 (every accuracy allowed)",
    "repulsion": "consistent if the slope detector fires in exactly the runs that reach test acc 0.5 "
                 "(repulsion:headline: 15/15 grokking runs, 0/15 controls); inconsistent otherwise; cannot tell "
                 "without an eigengap series or per-step weights",
}
"""The verdict rule of each theory, in words (also in the table's verdicts section and the Bring your own run
page)."""

_STAT_IDS = {"Fourier energy outside": "fourier", "stable rank of embedding": "srank", "weight norm": "weight_norm"}

_MIN_SEEDS_CV = 2

_MIN_SEEDS_KS = 5

_LEVI_RTOL = 0.15  # spec levi:grok-def recipe: Delta t seed-mean tolerance 0.08-0.15 at d = 500 (widest taken)

_APPG_RESIDUAL = 0.15  # spec levi:appG GPU recipe: inverse-square fit residual <= 15 %

_KS_ALPHA = 0.05


@dataclasses.dataclass(frozen=True)
class Entry:
    """One quantity of one theory, as `compare_run` measured or predicted it."""

    theory: str
    """The theory: `"levi"`, `"clocks"`, `"kramers"`, `"coverage"` or `"repulsion"`."""
    quantity: str
    """What it is, in words, e.g. `"t_test (test acc >= 0.99)"`."""
    value: Any
    """The median over the runs where it is finite (`inf` = never reached by any run, `nan` = undefined); for a
    yes/no quantity the answer (one run) or the fraction of runs answering yes; `None` if n/a."""
    status: str
    """`"measured"`, `"predicted"` or `"n/a: <reason>"`."""
    spec_id: str = ""
    """The spec result behind it, e.g. `"clocks:appB"`."""
    note: str = ""
    """A caveat or definition (shown under the table)."""
    per_run: tuple = ()
    """The value of every run (seed): `inf` = never, `nan` = not defined for that run."""
    id: str = ""
    """Its stable short ID, a key of `QUANTITY_IDS`, e.g. `"t_test"`."""

    @property
    def available(self) -> bool:
        """Whether the entry has a value: `False` for `n/a` entries."""
        return not self.status.startswith("n/a")

    @property
    def state(self) -> str:
        """What the value is: `"measured"`, `"predicted"`, `"never"` (inf: no run reached it), `"undefined"`
        (nan) or `"n/a"`."""
        if not self.available:
            return "n/a"
        v = self.value
        if isinstance(v, (float, np.floating)) and not isinstance(v, bool):
            if math.isinf(v) and v > 0:
                return "never"
            if math.isnan(v):
                return "undefined"
        return self.status

    def formatted(self) -> str:
        """The value as the table shows it (median, range and count over runs where several)."""
        if not self.available:
            return "n/a"
        return _format_value(self.value, self.per_run)


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Whether the run is consistent with one theory, decided by one number and the band the theory allows (the
    rules are in `VERDICT_RULES`)."""

    theory: str
    """The theory: `"levi"`, `"clocks"`, `"kramers"`, `"coverage"` or `"repulsion"`."""
    verdict: str
    """`"consistent"`, `"inconsistent"` or `"cannot tell"`."""
    quantity: str
    """ID of the deciding quantity (a key of `QUANTITY_IDS`), or `""` when nothing decided."""
    value: float | None
    """The deciding number (`None` for "cannot tell" without one)."""
    band: str
    """What the theory allows for that number, in words."""
    spec_id: str
    """The spec result the band comes from."""
    reason: str
    """One sentence: why this verdict."""

    def line(self) -> str:
        """One line for the table."""
        num = "" if self.value is None else f"{self.quantity} = {_fmt_num(self.value)}; "
        band = f"band {self.band}; " if self.band and self.value is not None else ""
        return f"{self.verdict}: {num}{band}{self.reason} [{self.spec_id}]"


def _format_value(value: Any, per_run: tuple) -> str:
    if value is None:
        return "n/a"
    if len(per_run) <= 1 or isinstance(value, str):
        return _fmt_num(value)
    vals = [v for v in per_run if v is not None]
    if all(isinstance(v, (bool, np.bool_)) for v in vals):
        return f"{sum(bool(v) for v in vals)}/{len(vals)} yes"
    arr = np.asarray([float(v) for v in vals], dtype=float)
    fin = arr[np.isfinite(arr)]
    count = f"{fin.size}/{arr.size}"
    if fin.size == 0:
        return f"{_fmt_num(value)} ({count})"
    if fin.min() == fin.max():
        return f"{_fmt_num(value)} ({count})"
    return f"{_fmt_num(value)} [{_fmt_num(fin.min())}, {_fmt_num(fin.max())}] ({count})"
