r"""Read a training run from the files it was logged in.

:func:`read_log` takes a path (or an in-memory table) and returns a :class:`RunLog`: the run's series
(``train_acc``, ``test_acc``, ``train_loss``, ``test_loss``, ``weight_norm``) on one step grid, each with
``NaN`` where it was not logged, ready for :func:`grokclocks.compare.run_data`.  Nothing is interpolated:
a series logged every 50 steps keeps its 50-step records, and each clock is read on the records where
its series was logged.

Formats (chosen by content, then extension; ``format=`` forces one):

=====================  ===========================================================================
format                 what is read
=====================  ===========================================================================
``csv``, ``tsv``       a header row and one row per record; empty cells = not logged at that step
                       (PyTorch Lightning's ``CSVLogger`` ``metrics.csv`` is this, with train and
                       validation metrics on separate rows)
``jsonl``              one JSON object per line (a W&B history export: ``_step``, ``train/acc``,
                       ``val/acc``, ...); a missing key or ``null`` = not logged
``json``               a list of records, a dict of lists, or Hugging Face ``trainer_state.json``
                       (its ``log_history``; the closing ``train_runtime`` summary is skipped)
``tensorboard``        an ``events.out.tfevents.*`` file or a run directory (scalars; needs the
                       ``tensorboard`` package: ``pip install "grokclocks[logs]"``)
``torch``              a ``torch.save`` dict of lists or tensors (loaded with ``weights_only=True``;
                       needs torch)
``npz``                ``numpy.savez`` arrays (keys as in :data:`grokclocks.compare.USER_KEYS`)
``npy``                ``numpy.save`` of a structured array with named fields
(object)               a pandas ``DataFrame``, any mapping of arrays or lists, or a list of records
=====================  ===========================================================================

Column names
------------
A column is matched to a series by its words (split at ``/ _ - . :`` and spaces, case ignored):

* **steps**: ``steps``, ``step``, ``global_step``, ``trainer/global_step``, ``train/global_step``, ``_step``,
  ``iteration``, ``iter``, ``epoch`` (the first present in this order: W&B's ``_step`` counts log calls, so
  the training step that Lightning's and Hugging Face's W&B loggers write beside it is preferred;
  ``val_step``, ``train_steps``, ... give the steps of one role, ``<column>_steps`` those of one column);
* **role**: ``train`` / ``training`` (also the default without a role word); ``val``, ``valid``,
  ``validation``, ``eval``, ``evaluation``, ``test``, ``dev``, ``holdout`` -> test;
* **metric**: ``acc``, ``accuracy``, ``top1`` -> accuracy; ``loss``, ``nll``, ``xent`` -> loss;
  ``weight_norm``, ``param_norm``, ``parameter_norm``, ``weights_norm`` -> weight norm;
* the words ``step`` and ``epoch`` inside a metric name (Lightning's ``train_loss_step`` /
  ``train_loss_epoch``, Keras' ``epoch_accuracy``) are ignored; two columns that read as the same series are an error that names both.

So ``val/acc``, ``eval_accuracy``, ``validation/epoch_accuracy`` and ``test_acc`` are all ``test_acc``, and
``loss`` alone is ``train_loss``.  ``columns={"test_acc": "val/accuracy_top1", ...}`` (CLI ``--columns
test_acc=val/accuracy_top1,...``) overrides the matching.  Columns that match nothing are ignored with one
:class:`LogWarning` listing them.

Errors name the file, the column, the first bad row and its step, and show a bad value cut to one line.
"""

from __future__ import annotations

from ._columns import METRIC_WORDS, ROLE_WORDS, SERIES, STEP_NAMES, canonical_name, parse_columns
from ._merge import merge_seeds
from ._read import FORMATS, read_log
from ._table import LogError, LogWarning, RunLog
from ._table import _short as _short  # for grokclocks.compare's messages

__all__ = ["FORMATS", "SERIES", "STEP_NAMES", "ROLE_WORDS", "METRIC_WORDS", "LogError", "LogWarning", "RunLog",
           "canonical_name", "read_log", "merge_seeds", "parse_columns"]

for _obj in (LogError, LogWarning, RunLog, canonical_name, parse_columns, read_log, merge_seeds):
    _obj.__module__ = __name__  # documented, pickled and shown as grokclocks.logs.<name>
del _obj
