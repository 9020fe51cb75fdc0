"""One logged training run against the five theories: what each predicts or measures, and a verdict.

`compare_run` takes a training run -- a `grokclocks.sim.train.Trajectory` from
`grokclocks.sim.modular.train_modular`, a log file in any format of `grokclocks.logs` (CSV, JSON lines /
W&B, TensorBoard, Lightning, Hugging Face `trainer_state.json`, `torch.save`, `.npz`), a pandas DataFrame, a
mapping of arrays, or several files (one per seed) -- and returns a `Comparison`: one `Entry` per quantity,
each with a stable short ID (`t_test`, `t_cls`, `delay_ratio`, ...; `QUANTITY_IDS`), the theory, the spec
ID, the value and a status:

* `measured`: read off the run with the theory's estimator (a clock, a delay, a barrier inverted from a
  delay);
* `predicted`: what the theory says the run should do (the exact accuracy ceiling of the split, the linear
  estimator's grokking delay);
* `n/a: <reason>`: the theory does not apply, or the run lacks what it needs.  No number is made up.

Under the entries, one `Verdict` per theory: `consistent`, `inconsistent` or `cannot tell`, with the one
number that decides it, the band the theory allows and its spec ID (the rules are in `VERDICT_RULES` and
`compare_run`).

Every number comes from the library's own functions (`grokclocks.linear`, `grokclocks.clocks`,
`grokclocks.spectral`, `grokclocks.kramers`, `grokclocks.coverage`, `grokclocks.repulsion`); this module
only routes the run's arrays to them.  Pure numpy/scipy: JAX is imported only to rebuild the engine's random
split of a `grokclocks.sim.modular.train_modular` run, matplotlib only by `Comparison.plot`, pandas only by
`Comparison.to_dataframe`.  Files are read by `load_run` with the limits of `grokclocks.logs` (regular files
only, at most `max_bytes`, 256 MiB by default, checked before anything is decompressed; an engine run's
config values are checked where they are used).

Series may be logged at different steps (train metrics every step, evaluation every 100, embedding
snapshots every 1000): the run's step grid is the union, a series is `NaN` where it was not logged, and
each clock is read on the records of its own series.  Nothing is interpolated; the table's header says
which series was logged where.

The keys of a run (`USER_KEYS`; one run, or several seeds along a leading axis; a log's column names are
matched to them by `grokclocks.logs.canonical_name`):

| key | what it holds |
|---|---|
| `steps` | `(n_records,)` strictly increasing step (or epoch) of each record; required |
| `train_acc`, `test_acc` | `([n_runs,] n_records)` accuracies in [0, 1], `NaN` = not logged at that record; at least one of the two is required |
| `train_loss`, `test_loss` | `([n_runs,] n_records)` losses (≥ 0, `NaN` = not logged) |
| `weight_norm` | `([n_runs,] n_records)` global parameter norm |
| `embeddings`, `embedding_steps` | `([n_runs,] n_snapshots, n_tokens, d)` token-embedding snapshots, token `t` = row `t` (the first `p` rows are the operand tokens 0..p-1), taken at `embedding_steps` (default: `steps`) |
| `weights`, `weights_steps` | `([n_runs,] n_snapshots, ...)` parameter snapshots (flattened per record); the update Gram of `repulsion:rolling-gram` needs them at consecutive steps |
| `gap` | `([n_runs,] n_epochs)` eigengap series σ₂/σ₃ indexed by epoch, row 0 = init (`repulsion:rolling-gram`) |
| `train_mask` | the training set in any form of `grokclocks.task.as_mask` (bool `(p, p)`, flat `(p*p,)`, pair indices), one per run or shared |
| `p`, `operation`, `b_offset` | modulus, task (`"add"`, `"sub"`, `"mul"`, `"sq_sum"`, ...; `grokclocks.coverage.label_table`) and vocabulary offset of the second operand (0 = shared tokens) |
| `lam`, `n_train` | the linear estimator's aspect ratio λ = d_in/N_tr, or the training-set size N_tr (then λ = 2p/N_tr, one-hot pair inputs) |

Examples
--------
>>> import numpy as np
>>> from grokclocks.compare import compare_run
>>> steps = np.arange(0, 5001, 50)
>>> train = 1 / (1 + np.exp(-(steps - 300) / 30))
>>> test = 1 / (1 + np.exp(-(steps - 2500) / 150))
>>> c = compare_run(steps=steps, train_acc=train, test_acc=test, train_level=0.99, test_level=0.99)
>>> c.value("t_train"), c.value("t_test"), c.value("delay_ratio")
(450.0, 3200.0, 7.111111111111111)

One concept per file, all re-exported here: `_records` (Entry, Verdict, quantity IDs, verdict rules),
`_result` (Comparison), `_theories` (each theory's entries), `_verdicts`, `_api` (compare_run).  `RunData`,
`run_data` and `load_run` come from `grokclocks.runs`, the one door for runs below `compare` and `forecast`.
"""

from __future__ import annotations

from ._records import Entry, QUANTITY_IDS, RunData, THEORIES, USER_KEYS, VERDICT_RULES, Verdict
from ._result import Comparison
from ..runs import load_run, run_data
from ._api import compare_run
from .._facade import set_home

__all__ = [
    "Entry",
    "Verdict",
    "RunData",
    "Comparison",
    "THEORIES",
    "USER_KEYS",
    "QUANTITY_IDS",
    "VERDICT_RULES",
    "compare_run",
    "load_run",
    "run_data",
]

set_home(__name__, globals(), __all__, also=("grokclocks.runs",))  # load_run, run_data, RunData: documented here
del annotations, set_home  # not part of the API
