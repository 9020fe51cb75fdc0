"""Runtime switches and errors shared by the simulation layer."""

from __future__ import annotations

from typing import Any

import jax

__all__ = ["enable_x64", "x64_enabled", "SimulationDiverged", "DivergenceWarning"]


def enable_x64() -> None:
    """Switch JAX to float64 (``jax_enable_x64``); idempotent.

    The teacher-student checks of spec ``levi`` need float64 (spec section 7.1: float32 flushes losses
    below ~1e-38 to zero and agrees with float64 only to ~2.6e-3 relative), so every ``levi``
    front-end calls this before it creates arrays.  The switch is global for the process.
    """
    if not x64_enabled():
        jax.config.update("jax_enable_x64", True)


def x64_enabled() -> bool:
    """Whether JAX creates float64 arrays by default."""
    return bool(jax.config.jax_enable_x64)


class SimulationDiverged(RuntimeError):
    """A simulation produced a non-finite (NaN or inf) metric.

    Attributes
    ----------
    step : int
        The first recorded GD step at which a metric was non-finite (the divergence happened after
        the previous record and at or before this step).
    metric : str
        The name of that metric.
    config : object
        The configuration of the run (a frozen dataclass), for reproduction.
    trajectory : Trajectory or None
        The records up to the chunk that diverged, with the per-run flags ``extras["diverged"]`` and
        ``extras["diverged_step"]`` (set by :func:`grokclocks.sim.train.simulate`); ``None`` elsewhere.
    """

    def __init__(self, step: int, metric: str, config: Any = None, hint: str = "", trajectory: Any = None) -> None:
        self.step = int(step)
        self.metric = metric
        self.config = config
        self.trajectory = trajectory
        msg = f"simulation diverged: {metric} is not finite at step {self.step}"
        if hint:
            msg += f" ({hint})"
        if config is not None:
            msg += f"; config: {config!r}"
        super().__init__(msg)


class DivergenceWarning(RuntimeWarning):
    """Some runs of a sweep diverged and were flagged (``extras["diverged"]``) instead of raising."""
