"""JAX simulation layer (importing it imports JAX).

* :mod:`grokclocks.sim.train` -- the one engine (jit + ``lax.scan`` over steps, ``vmap`` over runs);
* :mod:`grokclocks.sim.data` -- teacher-student draws, modular-arithmetic tables;
* :mod:`grokclocks.sim.models` -- the papers' models as pure init/apply pairs;
* :mod:`grokclocks.sim.linear` -- teacher-student front-ends of spec ``levi`` (float64);
* :mod:`grokclocks.sim.modular` -- modular addition with the mean-field quadratic MLP (``levi:appG``).

Randomness only through explicit ``jax.random`` keys: the same seed gives the same numbers on the
same device.  :func:`enable_x64` switches JAX to float64 (the ``levi`` front-ends call it).
"""

from __future__ import annotations

from ._runtime import DivergenceWarning, SimulationDiverged, enable_x64, x64_enabled
from . import data, models, train  # noqa: E402
from . import linear, modular  # noqa: E402
from .train import RunExistsError, RunFileError, RunFileWarning, Trajectory, load_trajectory, simulate  # noqa: E402

__all__ = [
    "SimulationDiverged",
    "DivergenceWarning",
    "RunFileError",
    "RunExistsError",
    "RunFileWarning",
    "enable_x64",
    "x64_enabled",
    "Trajectory",
    "load_trajectory",
    "simulate",
    "data",
    "models",
    "train",
    "linear",
    "modular",
]

del annotations  # left by `from __future__ import annotations`; not part of the API
