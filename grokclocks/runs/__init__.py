"""A training run from any source, in one normal form: the one door for runs, below `compare` and `forecast`.

`load_run` reads a run from a file or folder -- an engine run file (`Trajectory.save`, read through
`grokclocks.runfile`) or any log of `grokclocks.logs` (CSV, JSON lines, TensorBoard, MLflow, DVCLive, Sacred,
Aim, ...), or several files, one per seed -- and `run_data` validates arrays given directly; both return a
`RunData` (series on one step grid, `NaN` where not logged; runs, i.e. seeds, on axis 0).  `grokclocks.compare`
and `grokclocks.forecast` sit side by side above this package and turn their `run` argument into `RunData`
through its one dispatcher (private: `_load.as_run_data`), so every source is read the same way by both; the
public names are re-exported, and documented, by `grokclocks.compare`.

Every byte read from a file goes through the door in, `grokclocks._safe_io`.

One concept per file: `_records` (RunData, USER_KEYS, number formatting), `_arrays` (run_data), `_engine`
(engine trajectories and run files), `_load` (load_run, the dispatcher, sidecars).
"""

from __future__ import annotations

from ._arrays import run_data
from ._load import load_run
from ._records import USER_KEYS, RunData

__all__ = ["RunData", "USER_KEYS", "load_run", "run_data"]

del annotations  # not part of the API
