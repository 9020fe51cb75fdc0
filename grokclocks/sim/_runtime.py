"""Runtime switches and errors shared by the simulation layer."""

from __future__ import annotations

from typing import Any

import jax

__all__ = ["enable_x64", "x64_enabled", "SimulationDiverged", "DivergenceWarning"]


def enable_x64() -> None:
    """Switch JAX to float64 (`jax_enable_x64`); idempotent.

    The teacher-student checks of spec `levi` need float64 (spec section 7.1: float32 flushes
    losses below about 10⁻³⁸ to zero and agrees with float64 only to about 2.6×10⁻³ relative), so
    every `levi` front-end calls this before it creates arrays.  The switch is global for the
    process.
    """
    if not x64_enabled():
        jax.config.update("jax_enable_x64", True)


def x64_enabled() -> bool:
    """Whether JAX creates float64 arrays by default (`jax_enable_x64` is on).

    Returns
    -------
    bool
        `True` after `enable_x64` (or with the flag set otherwise).
    """
    return bool(jax.config.jax_enable_x64)


class SimulationDiverged(RuntimeError):
    """A simulation produced a non-finite (NaN or inf) metric.

    A `RuntimeError`; the message names the metric, the step and the configuration.

    Parameters
    ----------
    step : int
        The first recorded step at which a metric was non-finite (the divergence happened after the
        previous record and at or before this step).
    metric : str
        The name of that metric.
    config : object
        The configuration of the run (usually a frozen dataclass), for reproduction; `None`
        (default) if there is none.
    hint : str
        A likely cause added to the message (e.g. the stability bound on the learning rate);
        default empty.
    trajectory : Trajectory or None
        The records up to the chunk that diverged, with the per-run flags `extras["diverged"]` and
        `extras["diverged_step"]` (set by `grokclocks.sim.train.simulate`); `None` (default)
        elsewhere.
    """

    def __init__(self, step: int, metric: str, config: Any = None, hint: str = "", trajectory: Any = None) -> None:
        self.step = int(step)
        """The first recorded step at which a metric was non-finite."""
        self.metric = metric
        """The name of that metric."""
        self.config = config
        """The run's configuration, or `None`."""
        self.trajectory = trajectory
        """The records up to the chunk that diverged (from `simulate`), or `None`."""
        msg = f"simulation diverged: {metric} is not finite at step {self.step}"
        if hint:
            msg += f" ({hint})"
        if config is not None:
            msg += f"; config: {config!r}"
        super().__init__(msg)


class DivergenceWarning(RuntimeWarning):
    """Some runs of a sweep diverged and were flagged (`extras["diverged"]`) instead of raising.

    A `RuntimeWarning`, issued by `grokclocks.sim.train.simulate` with `on_divergence` `"flag"` or
    `"raise_if_all"` when some but not all runs diverged.
    """
