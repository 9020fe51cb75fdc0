r"""The modular task's conventions, in one place: pair indexing, training masks, accuracy levels.

Every function of grokclocks that takes a training set, and the `grokclocks compare` command, reads
it through `as_mask`, so the same spellings work everywhere:

| form              | meaning                                                             |
|-------------------|---------------------------------------------------------------------|
| bool (p, p)       | entry [a, b] is `True` when the pair (a, b) is trained              |
| bool (p·p,)       | the same, flattened row-major: entry a·p + b                        |
| integer (n,)      | flat indices a·p + b of the training pairs (needs p)                |
| integer (n, 2)    | rows (a, b) of the training pairs (needs p)                         |

0/1 integer arrays of shape (p, p) or (p·p,) are read as masks (an index array of length p² with
values in {0, 1} would repeat an index, so these two readings cannot be confused).  The one
ambiguous spelling is p = 2 with two pairs given as rows (a, b): a square 0/1 array, read as a mask.
The canonical form is the bool (p, p) array; `flat_mask` and `mask_indices` convert back.

Accuracy levels: the memorisation and generalisation clocks use one pair of default levels
everywhere, `TRAIN_LEVEL` and `TEST_LEVEL`:

* t_train (= t_mem): the first record with train accuracy ≥ 1.0, the zero-one clock t_01 of spec ID
  `clocks:appF4-acc-clock` (every training pair classified correctly);
* t_test (= t_grok): the first record with test accuracy ≥ 0.99 (`kramers:milestones`, the test
  level of the spec's tables).

`grokclocks.compare.compare_run` and `grokclocks.kramers.milestones` use these defaults; the spec
text of `kramers:milestones` gives 0.99 for both, which the library overrides for the train level so
that t_mem and the zero-one clock are one number (pass `q_train=0.99` for the spec's reading).

Contents
--------
* masks: `as_mask`, `as_mask_stack`, `flat_mask`, `mask_indices`, `mask_from_indices`;
* operations and labels: `OPERATIONS`, `label_table`, `code_labels`, `modular_table`;
* encodings: `token_inputs`, `onehot_inputs`, `modadd_inputs`, `token_ids`;
* random splits: `random_split_mask`, `modadd_split`;
* designed splits (Table 1 of spec `uniformity`): `square_design`, `strip_design`, `random_design`,
  `designed_split`, `designed_split_mask`.

Functions that build p × p tables from an integer p (labels, designs) accept p ≤ `MAX_MODULUS` (2¹⁴)
and raise `DomainError` beyond it.

This package is pure numpy: the one home of the modular task's data conventions.  The older paths
(`grokclocks.coverage.label_table`, `grokclocks.kramers.modadd_inputs`,
`grokclocks.sim.data.token_inputs`, …) re-export these functions.

One concept per private file: `_levels` (the accuracy levels), `_masks` (one training set in any spelling,
and back), `_records` (the named results), `_modulus` (the size limit and primality of p), `_labels` (the
operations and label tables), `_encodings` (token, one-hot and vocabulary layouts), `_random_splits`
(permutation splits), `_designs` (the designed splits of Table 1).
"""

from __future__ import annotations

from .._facade import set_home
from ._designs import (
    _design,
    _design_args,
    _k,
    _split_from_order,
    designed_split,
    designed_split_mask,
    random_design,
    square_design,
    strip_design,
)
from ._encodings import modadd_inputs, onehot_inputs, token_ids, token_inputs
from ._labels import OPERATIONS, code_labels, label_table, modular_table
from ._levels import TEST_LEVEL, TRAIN_LEVEL
from ._masks import (
    _integral,
    _p,
    _short,
    _side,
    _stack,
    as_mask,
    as_mask_stack,
    flat_mask,
    mask_from_indices,
    mask_indices,
)
from ._modulus import _grid_size, _is_prime, _prime, MAX_MODULUS
from ._random_splits import _n_train, _permutation, modadd_split, random_split_mask
from ._records import OneHotTable, PairTable, Split, TokenLayout

__all__ = ["TRAIN_LEVEL", "TEST_LEVEL", "as_mask", "as_mask_stack", "flat_mask", "mask_indices",
           "mask_from_indices", "Split", "TokenLayout", "PairTable", "OneHotTable", "OPERATIONS", "MAX_MODULUS",
           "label_table", "code_labels", "modular_table", "token_inputs", "onehot_inputs", "modadd_inputs",
           "token_ids", "random_split_mask", "modadd_split", "square_design", "strip_design", "random_design",
           "designed_split", "designed_split_mask"]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


set_home(__name__, globals(), __all__)  # shown, pickled, cited and documented as grokclocks.task.<name>
del annotations, set_home  # not part of the API
