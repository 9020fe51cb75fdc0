"""The configuration of a `train_modular` run, stored in its `Trajectory` (`TrainConfig`).
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Configuration of a `train_modular` run, stored in its `Trajectory` (grid values as tuples; JSON-serialisable)."""

    model: str
    """The model's name (a key of `MODULAR_MODELS` or `"alpha_two_layer"`)."""
    model_kwargs: tuple[tuple[str, Any], ...]
    """The keyword arguments given to the model's `init`, sorted by name."""
    p: int
    """The modulus p ≥ 2."""
    operation: str
    """The operation's name (`"add"`, ...), or a user function's `__name__` (`"user"` without one)."""
    train_frac: tuple[float, ...] | None
    """The training fractions of the random splits (a grid axis if more than one); `None` for an explicit
    `train_mask`."""
    split: str
    """`"random"` or `"mask"`: whether the splits were drawn from `train_frac` or given as `train_mask`."""
    split_seed: int | None
    """The one split seed shared by every run, or `None` (each run's seed is its split seed)."""
    seeds: tuple[int, ...]
    """The seeds of the runs, ≥ 0."""
    optimizer: str
    """`"sgd"` or `"adam"` or `"adamw"`: the optimiser."""
    lr: tuple[float, ...]
    """Learning rates > 0 (a grid axis if more than one)."""
    weight_decay: tuple[float, ...]
    """Weight decays ≥ 0 (a grid axis if more than one)."""
    betas: tuple[float, float]
    """Adam's (b1, b2), each in [0, 1)."""
    eps: float
    """Adam's denominator offset > 0."""
    warmup_steps: int
    """Linear learning-rate warm-up in steps, ≥ 0."""
    loss: str
    """`"ce"` or `"mse_sum"` or `"mse_mean"` or `"centred_mse"`: the training loss (a key of
    `grokclocks.sim.models.LOSSES`)."""
    batch_size: int | None
    """Mini-batch size, or `None` for full-batch training."""
    steps: int
    """Number of optimisation steps, ≥ 1."""
    record_every: int
    """Steps between two records, ≥ 1 and dividing `steps`."""
    grid_axes: tuple[str, ...]
    """The grid axes of the result, in order, among `"train_frac"`, `"weight_decay"`, `"lr"`."""
    dtype: str
    """`"float32"` or `"float64"`: the parameters' dtype."""
    trackers: tuple[tuple[str, str], ...] = ()
    """Each tracker's name and a stable text of it; default `()`."""
    hooks: tuple[tuple[str, str], ...] = ()
    """Each hook's name and its `module:qualname`; default `()`."""
    compute_dtype: str | None = None
    """The mixed-precision compute dtype (`"bfloat16"`), or `None` (default) for none."""
    n_train_rule: str = "floor"
    """`"floor"` or `"round"`: how a random split's size follows from its fraction: int(frac·p²) or
    round(frac·p²); default `"floor"`."""
