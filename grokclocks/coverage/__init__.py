r"""Training-set coverage, exact test-accuracy ceilings, split designs and MED (spec `uniformity`).

Gu, Chen, Zhang, Hu, Cao, Beyond Progress Measures: Theoretical Insights into the Mechanism of
Grokking (arXiv:2504.03162).  The task is (a, b) ↦ f(a, b) mod p on D = ℤ_p × ℤ_p; a training set
is a boolean (p, p) mask indexed [a, b]; every function taking a training set also accepts the
flat (p·p,) and the index forms of `grokclocks.task.as_mask`.

Contents
--------
* task and labels: `label_table`, `code_labels`, `equivalence_classes`, `class_sizes`;
* norm lemmas: `operator_norm_bounds` (Lemma 3.4), `min_opnorm_single_class`,
  `rank1_min_norm_map` (Lemma B.1);
* qualitative theorems, measured: `class_target_residuals` (Lemma 3.2, Theorem 3.5),
  `consecutive_embedding_diffs` (Theorem 3.8);
* Theorem 3.10 as an exact ceiling: `manhattan_distance`, `distance_to_set`,
  `same_label_distance`, `token_seen`, `token_coverage_mask`, `accuracy_ceiling`,
  `accuracy_ceiling_curve`, `implied_radius`, `coverage_fraction`;
* Theorem 3.12: `ball_size`, `ball_size_torus`, `coverer_counts`, `expected_uncovered`,
  `expected_uncovered_paper`, `required_train_fraction`, `full_coverage_probability_lower_bound`;
* the designs of Table 1: `square_design`, `strip_design`, `random_design`, `designed_split`
  (defined in `grokclocks.task`, with `label_table`, `code_labels`, `token_ids` and `MAX_MODULUS`;
  importable from here as before);
* progress measures: `progress_measure_fit` (Definition 4.1), `main_embedding_diff`,
  `med_trajectory`, `med_code_mlp` (Definition 4.2);
* Table 1 and run analysis: `table1`, `table1_ceilings`, `go_epoch`, `u_acc_l_acc`,
  `med_loss_spearman`, `analyse_run`; setup: `experimental_setup`, `token_ids`.

Functions that build p × p tables from an integer p (labels, classes, coverer counts, E[U],
designs) accept p ≤ `MAX_MODULUS` (2¹⁴) and raise `DomainError` beyond it: their cost is O(p²) in
memory and time.

Pure numpy and scipy; never imports JAX.  One concept per file, all re-exported here: `_results`
(named results), `_common` (argument checks), `_classes` (label classes), `_norms` (norm lemmas),
`_lemmas` (Lemma 3.2, Theorem 3.8), `_ceiling` (Theorem 3.10), `_coverage_bound` (Theorem 3.12),
`_progress` (progress measures), `_table1` (Table 1) and `_setup` (the authors' setup).
"""

from __future__ import annotations

from ._results import AccuracyExtremes, ClassResiduals, CodeMED, OperatorNormBounds, ThresholdRule, TokensSeen
from ._common import METRICS, OPS
from ._classes import class_sizes, equivalence_classes
from ._norms import min_opnorm_single_class, operator_norm_bounds, rank1_min_norm_map
from ._lemmas import class_target_residuals, consecutive_embedding_diffs
from ._ceiling import (accuracy_ceiling, accuracy_ceiling_curve, coverage_fraction, distance_to_set, implied_radius,
                       manhattan_distance, same_label_distance, token_coverage_mask, token_seen)
from ._coverage_bound import (ball_size, ball_size_torus, coverer_counts, expected_uncovered, expected_uncovered_paper,
                              full_coverage_probability_lower_bound, required_train_fraction)
from ._progress import MED_VARIANTS, main_embedding_diff, med_code_mlp, med_trajectory, progress_measure_fit
from ._table1 import analyse_run, go_epoch, med_loss_spearman, table1, table1_ceilings, u_acc_l_acc
from ._setup import experimental_setup
from ..task import _is_prime  # noqa: F401  (tests read it here)
from ..task import (MAX_MODULUS, code_labels, designed_split, label_table, random_design, square_design, strip_design,
                    token_ids)
from .._facade import set_home

__all__ = [
    "OperatorNormBounds",
    "ClassResiduals",
    "TokensSeen",
    "ThresholdRule",
    "CodeMED",
    "AccuracyExtremes",
    "OPS",
    "METRICS",
    "MAX_MODULUS",
    "label_table",
    "code_labels",
    "equivalence_classes",
    "class_sizes",
    "operator_norm_bounds",
    "min_opnorm_single_class",
    "rank1_min_norm_map",
    "class_target_residuals",
    "consecutive_embedding_diffs",
    "manhattan_distance",
    "distance_to_set",
    "same_label_distance",
    "token_seen",
    "token_coverage_mask",
    "accuracy_ceiling",
    "accuracy_ceiling_curve",
    "implied_radius",
    "coverage_fraction",
    "ball_size",
    "ball_size_torus",
    "coverer_counts",
    "expected_uncovered",
    "expected_uncovered_paper",
    "required_train_fraction",
    "full_coverage_probability_lower_bound",
    "square_design",
    "strip_design",
    "random_design",
    "designed_split",
    "progress_measure_fit",
    "MED_VARIANTS",
    "main_embedding_diff",
    "med_trajectory",
    "med_code_mlp",
    "table1",
    "table1_ceilings",
    "go_epoch",
    "u_acc_l_acc",
    "med_loss_spearman",
    "analyse_run",
    "experimental_setup",
    "token_ids",
]

set_home(__name__, globals(), __all__)
del annotations, set_home  # not part of the API
