r"""Training-set coverage, exact test-accuracy ceilings, split designs and MED (spec ``uniformity``).

Gu, Chen, Zhang, Hu, Cao, *Beyond Progress Measures: Theoretical Insights into the Mechanism of
Grokking* (arXiv:2504.03162).  The task is :math:`(a,b)\mapsto f(a,b)\bmod p` on
:math:`D=\mathbb Z_p\times\mathbb Z_p`; a training set is a boolean ``(p, p)`` mask
indexed ``[a, b]``; every function taking a training set also accepts the flat ``(p*p,)`` and the index forms of
:func:`grokclocks.task.as_mask`.

Contents
--------
* task and labels: :func:`label_table`, :func:`code_labels`, :func:`equivalence_classes`, :func:`class_sizes`;
* norm lemmas: :func:`operator_norm_bounds` (Lemma 3.4), :func:`min_opnorm_single_class`,
  :func:`rank1_min_norm_map` (Lemma B.1);
* qualitative theorems, measured: :func:`class_target_residuals` (Lemma 3.2 / Thm 3.5),
  :func:`consecutive_embedding_diffs` (Thm 3.8);
* Theorem 3.10 as an exact ceiling: :func:`manhattan_distance`, :func:`distance_to_set`,
  :func:`same_label_distance`, :func:`token_seen`, :func:`token_coverage_mask`, :func:`accuracy_ceiling`,
  :func:`accuracy_ceiling_curve`, :func:`implied_radius`, :func:`coverage_fraction`;
* Theorem 3.12: :func:`ball_size`, :func:`ball_size_torus`, :func:`coverer_counts`, :func:`expected_uncovered`,
  :func:`expected_uncovered_paper`, :func:`required_train_fraction`, :func:`full_coverage_probability_lower_bound`;
* designs of Table 1: :func:`square_design`, :func:`strip_design`, :func:`random_design`, :func:`designed_split`
  (defined in :mod:`grokclocks.task`, with :func:`label_table`, :func:`code_labels`, :func:`token_ids` and
  :data:`MAX_MODULUS`; importable from here as before);
* progress measures: :func:`progress_measure_fit` (Def 4.1), :func:`main_embedding_diff`, :func:`med_trajectory`,
  :func:`med_code_mlp` (Def 4.2);
* Table 1 and run analysis: :func:`table1`, :func:`table1_ceilings`, :func:`go_epoch`, :func:`u_acc_l_acc`,
  :func:`med_loss_spearman`, :func:`analyse_run`; setup: :func:`experimental_setup`, :func:`token_ids`.

Functions that build :math:`p\times p` tables from an integer ``p`` (labels, classes, coverer counts,
:math:`\mathbb E[U]`, designs) accept ``p <=`` :data:`MAX_MODULUS` (:math:`2^{14}`) and raise
``DomainError`` beyond it: their cost is :math:`O(p^2)` memory and time.

Pure numpy/scipy; never imports JAX.  One concept per file, all re-exported here: ``_results`` (named
results), ``_common`` (argument checks), ``_classes`` (§0-1), ``_norms`` (§2-3), ``_lemmas`` (§4), ``_ceiling``
(§5, Thm 3.10), ``_coverage_bound`` (§10, Thm 3.12), ``_progress`` (§6), ``_table1`` (§8), ``_setup`` (§9).
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
