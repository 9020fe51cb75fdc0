"""The records of a comparison: the run's data (RunData), one quantity (Entry), one theory's verdict (Verdict),
the quantity IDs and the verdict rules."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .. import task as _task

__all__ = ["Entry", "QUANTITY_IDS", "RunData", "USER_KEYS", "VERDICT_RULES", "Verdict"]


THEORIES: tuple[str, ...] = ("levi", "clocks", "kramers", "coverage", "repulsion")

USER_KEYS: tuple[str, ...] = ("steps", "train_acc", "test_acc", "train_loss", "test_loss", "weight_norm",
                              "embeddings", "embedding_steps", "weights", "weights_steps", "gap", "train_mask", "p",
                              "operation", "b_offset", "lam", "n_train")

#: Stable short IDs of the quantities (``Comparison.value(id)``, the JSON's ``id``, the table's ID column).
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

#: The verdict rule of each theory (also in the table's ``verdicts`` section and docs/byor.md).
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

_SERIES = ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm")

_ENGINE_METRICS = {"acc_train": "train_acc", "acc_test": "test_acc", "loss_train": "train_loss",
                   "loss_test": "test_loss", "param_norm": "weight_norm", "E": "embeddings", "W_E": "embeddings",
                   "embeddings": "embeddings", "weights": "weights", "gap": "gap"}

_STAT_IDS = {"Fourier energy outside": "fourier", "stable rank of embedding": "srank", "weight norm": "weight_norm"}

_MIN_SEEDS_CV = 2

_MIN_SEEDS_KS = 5

_LEVI_RTOL = 0.15  # spec levi:grok-def recipe: Delta t seed-mean tolerance 0.08-0.15 at d = 500 (widest taken)

_APPG_RESIDUAL = 0.15  # spec levi:appG GPU recipe: inverse-square fit residual <= 15 %

_KS_ALPHA = 0.05


@dataclasses.dataclass(frozen=True, eq=False)
class RunData:
    """A training run in the normal form :func:`compare_run` works on (runs = seeds, on axis 0).

    Attributes
    ----------
    steps : ndarray (n_records,)
        Strictly increasing record steps: the union of the steps at which any series was logged.
    train_acc, test_acc, train_loss, test_loss, weight_norm : ndarray (n_runs, n_records) or None
        ``NaN`` where the series was not logged at that record.
    embeddings : ndarray (n_runs, n_snapshots, n_tokens, d) or None
    embedding_steps : ndarray (n_snapshots,) or None
        Steps of the embedding snapshots.
    weights : ndarray (n_runs, n_snapshots, P) or None
    weights_steps : ndarray (n_snapshots,) or None
    gap : ndarray (n_runs, n_epochs) or None
    train_mask : bool ndarray (n_runs, p, p) or None
    p : int or None
    operation : str
    b_offset : int
    lam : float or None
        Linear-estimator aspect ratio given by the user (overrides the one from ``n_train``).
    n_train : ndarray (n_runs,) or None
    lam_sweep : (lams, delays) or None
        Grokking delays at several aspect ratios (a ``train_frac`` grid), for the ``levi:appG`` fit.
    train_level, test_level : float
        Accuracy levels of the train / test clocks.
    source : str
        Where the run came from (shown in the table's header).
    run_names : tuple of str
        One name per run (the file of each seed, or ``run 0``, ``run 1``, ...).
    input_notes : tuple of str
        How the input was read and aligned (shown under the header).
    """

    steps: np.ndarray
    train_acc: np.ndarray | None = None
    test_acc: np.ndarray | None = None
    train_loss: np.ndarray | None = None
    test_loss: np.ndarray | None = None
    weight_norm: np.ndarray | None = None
    embeddings: np.ndarray | None = None
    weights: np.ndarray | None = None
    gap: np.ndarray | None = None
    train_mask: np.ndarray | None = None
    p: int | None = None
    operation: str = "add"
    b_offset: int = 0
    lam: float | None = None
    n_train: np.ndarray | None = None
    lam_sweep: tuple[np.ndarray, np.ndarray] | None = None
    train_level: float = _task.TRAIN_LEVEL
    test_level: float = _task.TEST_LEVEL
    source: str = "arrays"
    embedding_steps: np.ndarray | None = None
    weights_steps: np.ndarray | None = None
    run_names: tuple[str, ...] = ()
    input_notes: tuple[str, ...] = ()

    @property
    def n_runs(self) -> int:
        """Number of runs (seeds) on the leading axis."""
        for name in _SERIES:
            a = getattr(self, name)
            if a is not None:
                return int(a.shape[0])
        return 1

    def logged(self, name: str, run: int) -> tuple[np.ndarray, np.ndarray]:
        """(steps, values) of one series of one run at the records where it was logged."""
        a = getattr(self, name)[run]
        ok = ~np.isnan(a)
        return self.steps[ok], a[ok]


@dataclasses.dataclass(frozen=True)
class Entry:
    """One quantity of one theory.

    Attributes
    ----------
    theory : str
        ``"levi"``, ``"clocks"``, ``"kramers"``, ``"coverage"`` or ``"repulsion"``.
    quantity : str
        What it is, e.g. ``"t_test (test acc >= 0.99)"``.
    value : float, bool or None
        Median over the runs where it is finite (``inf`` = never reached by any run, ``nan`` = undefined);
        for a yes/no quantity the answer (one run) or the fraction of runs answering yes; ``None`` if n/a.
    status : str
        ``"measured"``, ``"predicted"`` or ``"n/a: <reason>"``.
    spec_id : str
        The spec result behind it.
    note : str
        Caveat or definition.
    per_run : tuple
        The value of every run (seed), ``inf`` = never, ``nan`` = not defined for that run.
    id : str
        Stable short ID (:data:`QUANTITY_IDS`), e.g. ``"t_test"``.
    """

    theory: str
    quantity: str
    value: Any
    status: str
    spec_id: str = ""
    note: str = ""
    per_run: tuple = ()
    id: str = ""

    @property
    def available(self) -> bool:
        """False for ``n/a`` entries."""
        return not self.status.startswith("n/a")

    @property
    def state(self) -> str:
        """``"measured"``, ``"predicted"``, ``"never"`` (inf: no run reached it), ``"undefined"`` (nan) or ``"n/a"``."""
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
    """Whether the run is consistent with one theory.

    Attributes
    ----------
    theory : str
    verdict : str
        ``"consistent"``, ``"inconsistent"`` or ``"cannot tell"``.
    quantity : str
        ID of the deciding quantity (:data:`QUANTITY_IDS`), or ``""`` when nothing decided.
    value : float or None
        The deciding number (``None`` for "cannot tell" without one).
    band : str
        What the theory allows for that number.
    spec_id : str
        The spec result the band comes from.
    reason : str
        One sentence: why this verdict.
    """

    theory: str
    verdict: str
    quantity: str
    value: float | None
    band: str
    spec_id: str
    reason: str

    def line(self) -> str:
        """One line for the table."""
        num = "" if self.value is None else f"{self.quantity} = {_fmt_num(self.value)}; "
        band = f"band {self.band}; " if self.band and self.value is not None else ""
        return f"{self.verdict}: {num}{band}{self.reason} [{self.spec_id}]"


def _fmt_num(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, str):
        return x
    x = float(x)
    if math.isinf(x):
        return "never" if x > 0 else "-inf"
    if math.isnan(x):
        return "nan"
    if x == int(x) and abs(x) < 1e7:
        return str(int(x))
    return f"{x:.4g}"


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


def _json_number(x: Any) -> Any:
    """A JSON value: bools stay bools, finite numbers are numbers, inf / nan / None are null."""
    if x is None:
        return None
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, float, np.integer, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    return x


def _json_state(x: Any) -> str:
    if isinstance(x, (float, np.floating)) and not isinstance(x, bool):
        if math.isinf(x):
            return "never" if x > 0 else "-inf"
        if math.isnan(x):
            return "undefined"
    return "ok"
