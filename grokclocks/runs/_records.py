"""The normal form of a run (`RunData`), its keys, and how its numbers are written."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .. import task as _task

__all__ = ["RunData", "USER_KEYS"]


USER_KEYS: tuple[str, ...] = ("steps", "train_acc", "test_acc", "train_loss", "test_loss", "weight_norm",
                              "embeddings", "embedding_steps", "weights", "weights_steps", "gap", "train_mask", "p",
                              "operation", "b_offset", "lam", "n_train")
"""The keys of a run given as arrays or read from a log (`run_data`'s keywords; shapes and meanings in the
`grokclocks.compare` module text)."""

_SERIES = ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm")

_ENGINE_METRICS = {"acc_train": "train_acc", "acc_test": "test_acc", "loss_train": "train_loss",
                   "loss_test": "test_loss", "param_norm": "weight_norm", "E": "embeddings", "W_E": "embeddings",
                   "embeddings": "embeddings", "weights": "weights", "gap": "gap"}

@dataclasses.dataclass(frozen=True, eq=False)
class RunData:
    """A training run in the normal form `compare_run` works on (runs = seeds, on axis 0), built and checked by
    `run_data` and `load_run`."""

    steps: np.ndarray
    """`(n_records,)` strictly increasing record steps: the union of the steps at which any series was logged."""
    train_acc: np.ndarray | None = None
    """`(n_runs, n_records)` train accuracy in [0, 1], `NaN` where it was not logged at that record; `None` if
    not logged at all."""
    test_acc: np.ndarray | None = None
    """`(n_runs, n_records)` test accuracy in [0, 1], `NaN` where not logged; `None` if not logged at all."""
    train_loss: np.ndarray | None = None
    """`(n_runs, n_records)` training loss ≥ 0, `NaN` where not logged; `None` if not logged at all."""
    test_loss: np.ndarray | None = None
    """`(n_runs, n_records)` test loss ≥ 0, `NaN` where not logged; `None` if not logged at all."""
    weight_norm: np.ndarray | None = None
    """`(n_runs, n_records)` global parameter norm ≥ 0, `NaN` where not logged; `None` if not logged at all."""
    embeddings: np.ndarray | None = None
    """`(n_runs, n_snapshots, n_tokens, d)` token-embedding snapshots (token `t` = row `t`), or `None`."""
    weights: np.ndarray | None = None
    """`(n_runs, n_snapshots, P)` parameter snapshots flattened per record, or `None`."""
    gap: np.ndarray | None = None
    """`(n_runs, n_epochs)` eigengap series σ₂/σ₃ by epoch, row 0 = init (`NaN` = undefined row), or `None`."""
    train_mask: np.ndarray | None = None
    """`(n_runs, p, p)` bool training set (`True` = the pair (a, b) was trained on), or `None`."""
    p: int | None = None
    """The modulus p ≥ 2 of the task, or `None` if unknown."""
    operation: str = "add"
    """The task, as `grokclocks.coverage.label_table` names it (`"add"`, `"sub"`, `"mul"`, ...)."""
    b_offset: int = 0
    """Vocabulary offset ≥ 0 of the second operand (0 = the operands share their tokens)."""
    lam: float | None = None
    """Linear-estimator aspect ratio λ = d_in/N_tr > 0 given by the user (it overrides the one from `n_train`),
    or `None`."""
    n_train: np.ndarray | None = None
    """`(n_runs,)` training-set size N_tr of each run (integers ≥ 1), or `None`."""
    lam_sweep: tuple[np.ndarray, np.ndarray] | None = None
    """`(lams, delays)`: grokking delays measured at several aspect ratios (a `train_frac` grid), 1-D of equal
    length, for the `levi:appG` fit; or `None`."""
    train_level: float = _task.TRAIN_LEVEL
    """Train-accuracy level in (0, 1] of the clock `t_train` (default `grokclocks.task.TRAIN_LEVEL` = 1.0)."""
    test_level: float = _task.TEST_LEVEL
    """Test-accuracy level in (0, 1] of the clock `t_test` (default `grokclocks.task.TEST_LEVEL` = 0.99)."""
    source: str = "arrays"
    """Where the run came from (shown in the table's header)."""
    embedding_steps: np.ndarray | None = None
    """`(n_snapshots,)` steps of the embedding snapshots (`steps` when they were taken at every record)."""
    weights_steps: np.ndarray | None = None
    """`(n_snapshots,)` steps of the weight snapshots."""
    run_names: tuple[str, ...] = ()
    """One name per run (the file of each seed), or empty (the runs are then called `run 0`, `run 1`, ...)."""
    input_notes: tuple[str, ...] = ()
    """How the input was read and aligned, one sentence each (shown under the header)."""

    @property
    def n_runs(self) -> int:
        """Number of runs (seeds) on the leading axis."""
        for name in _SERIES:
            a = getattr(self, name)
            if a is not None:
                return int(a.shape[0])
        return 1

    def logged(self, name: str, run: int) -> tuple[np.ndarray, np.ndarray]:
        """`(steps, values)` of one series of one run at the records where it was logged.

        Parameters
        ----------
        name : str
            The series, one of `"train_acc"`, `"test_acc"`, `"train_loss"`, `"test_loss"`, `"weight_norm"`;
            it must not be `None` in this run data.
        run : int
            Index of the run (seed) on the leading axis, 0 ≤ run < `n_runs`.

        Returns
        -------
        tuple of ndarray
            The steps and the values at the records where the series is not `NaN`, both 1-D float64.
        """
        a = getattr(self, name)[run]
        ok = ~np.isnan(a)
        return self.steps[ok], a[ok]


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
