"""JAX simulation layer (importing it imports JAX).

* `grokclocks.sim.train` -- the one engine (jit + `lax.scan` over steps, `vmap` over runs);
* `grokclocks.sim.data` -- teacher-student draws, modular-arithmetic tables;
* `grokclocks.sim.models` -- the papers' models as pure init/apply pairs;
* `grokclocks.sim.linear` -- teacher-student front-ends of spec `levi` (float64);
* `grokclocks.sim.modular` -- every paper's modular-arithmetic model through one front-end
  (`train_modular`; Levi et al.'s appendix G, `levi:appG`, is one configuration of it);
* `grokclocks.sim.trackers` -- per-step state of `train_modular` (update Gram, snapshots);
* imported when used: `grokclocks.sim.repulsion` (the spec `repulsion` instruments),
  `grokclocks.sim.distributed` (multi-host sweeps), `grokclocks.sim.langevin` and
  `grokclocks.sim.kramers` (spec `kramers`), `grokclocks.sim.deep_linear` and
  `grokclocks.sim.landscapes` (spec `clocks`).

Randomness only through explicit `jax.random` keys: the same seed gives the same numbers on the
same device.  `enable_x64` switches JAX to float64 (the `levi` front-ends call it).
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
