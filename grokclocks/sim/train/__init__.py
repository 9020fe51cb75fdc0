"""The one training engine: a jit-compiled step, `lax.scan` over steps, `vmap` over runs.

Every simulation of grokclocks is a pair of pure functions handed to `simulate`:

`step(state, inputs) -> state`
    one optimisation step (full-batch GD, Adam, a Langevin step, ...);
`metrics(state, inputs) -> dict[str, scalar]`
    what to record.

`state` is any pytree (e.g. `(params, opt_state)`), `inputs` any pytree of per-run constants
(data, targets, hyperparameters such as the learning rate or the weight decay).  The engine

* records `metrics` at step 0 and after every `record_every` steps; the recording happens
  inside the scan (an outer `lax.scan` over records whose body is an inner `lax.scan` of
  `record_every` steps), so nothing returns to Python between records;
* `vmap`-s the whole scan over any number of batch axes (seeds, a learning-rate or weight-decay
  grid, ...): `batch_axes` lists, outermost first, the `in_axes` of `inputs` for each batch
  axis; the state always carries all batch axes in front;
* splits the records into chunks (one jitted call each) to show a progress bar, check for
  divergence per run (`on_divergence`: flag the run, or raise `grokclocks.sim.SimulationDiverged`)
  and save incrementally (`save_trajectory`: atomic, versioned, checksummed `.npz` + JSON
  config), so that a crash loses nothing already computed and `resume=True` continues from the
  last saved chunk (and returns a finished run unchanged).

Optimisers come from optax: `optax_step` turns a gradient and an optimiser factory into a step;
the factory is called inside the step with the (possibly vmapped) `inputs`, so hyperparameters
such as `eta` or the weight decay can be batched like any other input.

The package keeps one concept per private file (`_batching`, `_optim`, `_options`, `_engine`); the
run-file format lives in the JAX-free `grokclocks.runfile`; every public name of both is imported
here and documented as `grokclocks.sim.train.<name>`.
"""

from __future__ import annotations

from ..._facade import set_home
from ...runfile import (
    check_run_path,
    config_from_json,
    config_to_json,
    load_trajectory,
    RUN_FORMAT,
    RUN_FORMAT_VERSION,
    RunExistsError,
    RunFileError,
    RunFileNotFoundError,
    RunFileWarning,
    RunPaths,
    save_trajectory,
    Trajectory,
)
from .._runtime import DivergenceWarning, SimulationDiverged
from ._batching import MetricsFn, StepFn, batched, broadcast_batch, first_crossing_step, record_times
from ._engine import (
    MEMORY_FRACTION,
    choose_run_chunk,
    _compiled_chunk,
    free_device_memory,
    shard_runs,
    ShardedRuns,
    simulate,
    working_memory_estimate,
)
from ._optim import optax_init, optax_step, optimizer_factory, OPTIMIZERS, sgd_weight_decay, weight_decay_coefficient
from ._options import check_devices, check_record_every, ON_DIVERGENCE, RecordPlan, seed_tuple


__all__ = [
    "Trajectory",
    "simulate",
    "optax_step",
    "optax_init",
    "sgd_weight_decay",
    "optimizer_factory",
    "OPTIMIZERS",
    "shard_runs",
    "ShardedRuns",
    "free_device_memory",
    "working_memory_estimate",
    "choose_run_chunk",
    "weight_decay_coefficient",
    "batched",
    "broadcast_batch",
    "record_times",
    "first_crossing_step",
    "config_to_json",
    "config_from_json",
    "save_trajectory",
    "load_trajectory",
    "check_run_path",
    "check_record_every",
    "RecordPlan",
    "check_devices",
    "seed_tuple",
    "ON_DIVERGENCE",
    "RUN_FORMAT",
    "RUN_FORMAT_VERSION",
    "RunFileError",
    "RunExistsError",
    "RunFileNotFoundError",
    "RunFileWarning",
    "RunPaths",
    "SimulationDiverged",
    "DivergenceWarning",
    "StepFn",
    "MetricsFn",
    "MEMORY_FRACTION",
]

set_home(__name__, globals(), __all__)
del annotations, set_home  # not part of the API
