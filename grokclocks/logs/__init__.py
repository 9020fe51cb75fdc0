r"""Read a training run from the files it was logged in.

`read_log` takes a path (or an in-memory table) and returns a `RunLog`: the run's series (`train_acc`,
`test_acc`, `train_loss`, `test_loss`, `weight_norm`) on one step grid, each `NaN` where it was not logged,
ready for `grokclocks.compare.run_data`.  Nothing is interpolated: a series logged every 50 steps keeps its
50-step records, and each clock is read on the records where its series was logged.  `merge_seeds` puts
several logs of one configuration (one per seed) on the leading axis.

Formats (chosen by content, then extension; `format=` forces one):

| format | what is read |
|---|---|
| `csv`, `tsv` | a header row and one row per record; an empty cell = not logged at that step (PyTorch Lightning's `CSVLogger` `metrics.csv` is this, with train and validation metrics on separate rows) |
| `jsonl` | one JSON object per line (a W&B history export: `_step`, `train/acc`, `val/acc`, ...); a missing key or `null` = not logged |
| `json` | a list of records, a dict of lists, or a Hugging Face `trainer_state.json` (its `log_history`; the closing `train_runtime` summary is skipped) |
| `tensorboard` | an `events.out.tfevents.*` file or a run directory (scalars and one-element tensors; needs the `tensorboard` package: `pip install "grokclocks[logs]"`) |
| `torch` | a `torch.save` dict of lists or tensors (loaded with `weights_only=True`; needs torch) |
| `npz` | `numpy.savez` arrays (keys as in `grokclocks.compare.USER_KEYS`) |
| `npy` | `numpy.save` of a structured array with named fields |
| `text` | a training script's log lines with a step (or epoch) and `name value`, `name: value` or `name=value` pairs (`step 500 \| train_acc 1.000 \| val_acc 0.031`); the values carry only the printed precision |
| `mlflow` | MLflow's file store: `mlruns/`, an experiment folder (one seed per run, in the order they started), a run folder, its `metrics/` folder, or one metric file (`timestamp value step` lines; the key is the file's path under `metrics/`) |
| `mlflow-db` | MLflow's sqlite store (`mlflow.db`), read from its bytes in memory with `sqlite3`: the runs of its one experiment, in the order they started |
| `dvclive` | a DVCLive folder or one of its `plots/metrics/<key>.tsv` files (the role is in the folder) |
| `sacred` | a Sacred run folder or its `metrics.json` (each metric with its own steps) |
| `aim` | an Aim repository (the folder holding `.aim`, or `.aim`), through Aim's API (`pip install "grokclocks[aim]"`; tested with Aim 3.17.5 and 3.29.1): every run, indexed by Aim or not, from a copy of the repository (never written); a series is `<context values>/<metric>` |
| (object) | a pandas DataFrame, any mapping of arrays or lists, or a list of records |

A CSV's delimiter (`,` `;` tab `|`) and decimal mark are detected (`delimiter=`, `decimal=` force them);
a `.log` / `.txt` file that reads as a table (Keras' `CSVLogger` writes `training.log`) is a CSV;
`NA` cells (Keras' `CSVLogger`) are not logged; a W&B chart export (`Step`, `<run> - <key>`, `__MIN`,
`__MAX`) is one seed per run.  A folder whose sub-folders are runs of one format is one seed per
sub-folder, in the natural order of their names (`seed2` before `seed10`).  `read_logs` reads several files as
one run: one seed per file, except files that each hold
part of a run (one metric file, one chart), which are joined by run.  A series named by a file's path
(`plots/metrics/val/acc.tsv`, `metrics/val_acc`) takes its role from the path; a key without a role word is
the training series only beside its test twin, and refused alone.

Column names: a column is matched to a series by its words (split at `/ _ - . :` and spaces, case
ignored), `canonical_name`:

* steps: `steps`, `step`, `global_step`, `trainer/global_step`, `train/global_step`, `_step`, `iteration`,
  `iter`, `epoch` (the first present in this order, `STEP_NAMES`: W&B's `_step` counts log calls, so the
  training step that Lightning's and Hugging Face's W&B loggers write beside it is preferred); `val_step`,
  `train_steps`, ... give the steps of one role, `<column>_steps` those of one column;
* role (`ROLE_WORDS`): `train` / `training` (also the default without a role word); `val`, `valid`,
  `validation`, `eval`, `evaluation`, `test`, `dev`, `holdout` mean the test split;
* metric (`METRIC_WORDS`): `acc`, `accuracy`, `top1` are the accuracy; `loss`, `nll`, `xent` the loss;
  `weight_norm`, `param_norm`, `parameter_norm`, `weights_norm` the weight norm;
* the words `step` and `epoch` inside a metric name (Lightning's `train_loss_step` / `train_loss_epoch`,
  Keras' `epoch_accuracy`) are ignored; two columns that read as the same series are an error naming both.

So `val/acc`, `eval_accuracy`, `validation/epoch_accuracy` and `test_acc` are all `test_acc`, and `loss`
alone is `train_loss`.  `columns={"test_acc": "val/accuracy_top1", ...}` (CLI `--columns
test_acc=val/accuracy_top1,...`, parsed by `parse_columns`) overrides the matching.  Columns that match
nothing are ignored with one `LogWarning` listing them.

Every file is read as data that may be hostile, through the door in (`grokclocks._safe_io`): only regular
files (a FIFO or a device such as `/dev/zero` is refused before a byte is read), a symbolic link followed
only where the user named it (one found inside a named folder, or a sidecar, is refused and not read), at
most `max_bytes` (default `DEFAULT_MAX_BYTES`, 256 MiB) on disk or, for a zip archive, unpacked (from the
zip directory and each `.npy` header, before anything is decompressed), UTF-8 text only (a Latin-1 or cp1252
file is refused with the offset of the first byte that is not UTF-8, not guessed), JSON nested at most
`MAX_JSON_DEPTH` levels with no key twice and no integer of more than 300 digits, the folders of one read
listed through at most `MAX_DIR_ENTRIES` entries in all, an SQLite store read from its bytes; pickle files
are never loaded.  Time and memory are linear in the file (no pattern with nested quantifiers runs on it;
the MLflow sqlite store adds one sort); a text log takes up to about 20 times its size in memory while it
is parsed.

Errors are one line, a `LogError`, naming the file, the column, the first bad row and its step, with a bad
value cut to a short escaped excerpt; a message is at most 1,000 characters.
"""

from __future__ import annotations

from .._facade import set_home
from ._columns import METRIC_WORDS, ROLE_WORDS, SERIES, STEP_NAMES, canonical_name, parse_columns
from ._merge import merge_seeds
from ._read import FORMATS, read_log, read_logs
from ._safe import DEFAULT_MAX_BYTES, MAX_DIR_ENTRIES, MAX_JSON_DEPTH
from ._table import LogError, LogWarning, RunLog
from ._table import _short as _short  # for grokclocks.compare's messages

__all__ = ["DEFAULT_MAX_BYTES", "MAX_JSON_DEPTH", "MAX_DIR_ENTRIES", "FORMATS", "SERIES", "STEP_NAMES",
           "ROLE_WORDS", "METRIC_WORDS", "LogError", "LogWarning", "RunLog", "canonical_name", "read_log",
           "read_logs", "merge_seeds", "parse_columns"]

set_home(__name__, globals(), __all__)  # shown, pickled and documented as grokclocks.logs.<name>
del annotations, set_home  # not part of the API
