r"""Two training clocks of grokking (spec `clocks`; authors not stated in the source text).

The classifier clock t_cls(ε) = inf{t : L(W(t)) ≤ ε} runs fast: once every logit gap grows
linearly (Assumption 3.4) the cross-entropy tail is exponential and t_cls = O(log 1/ε)
(Theorem 3.5).  The representation clock t_rep(δ) = inf{t : G(t) ≤ δ} runs slow: under a sharp
Kurdyka–Łojasiewicz inequality with exponent θ ∈ (1/2, 1) the energy gap decays like
t^(−1/(2θ − 1)) and t_rep ≍ δ^(−(2θ − 1)) (Theorem 4.9).  Their mismatch is the grokking plateau
(Theorem 5.6).

Contents
--------
* gaps and cross-entropy: `logit_gaps`, `min_logit_gap`, `cross_entropy` (gap form), the tail
  bounds `ce_tail_bound` and `gap_for_loss_level`, smoothness, the PL witness;
* fast clock: `fit_gap_growth`, `fast_clock_bound`, `fast_clock_loss_bound`,
  `contraction_clock_bound`;
* conditional ReLU reduction: `relu_active_affine_map`, `head_embedding_gradient_norms`, gate
  margins;
* KL clock: `kl_gap_solution` (stable in log space as θ → 1/2), `kl_gap_bounds`, `kl_clock_time`,
  `representation_clock_bounds`, the exponents of the example landscapes,
  `weight_decay_tail_rate`;
* mismatch: `clock_mismatch_lower_bound`, `crossover_eps`;
* estimators on recorded training curves: `first_hitting_time`, `classifier_clock`,
  `representation_clock`, `accuracy_clock`, `accumulated_time`, `separation_ratio`,
  `class_separation_ratio`, `fourier_energy_outside`;
* modular characters and the real Fourier basis of ℤ_p.

Spectral tools (stable rank, Schatten quasi-norms, drift, Eckart–Young, covers) live in
`grokclocks.spectral`.  Conventions: 0-based labels, `n_classes` = K, time is
gradient-flow time (accumulated optimiser time for discrete optimisers); a threshold that is never
reached gives `math.inf`, not an error.  No JAX here.

The package keeps one concept per private file (`_args`, `_characters`, `_gaps`, `_fast_clock`,
`_relu`, `_kl_clock`, `_mismatch`, `_estimators`); every public name is imported here and
documented as `grokclocks.clocks.<name>`.
"""

from __future__ import annotations

from .._facade import set_home
from ._characters import fourier_basis, _fourier_rows, modular_characters
from ._estimators import (
    accumulated_time,
    accuracy_clock,
    class_separation_ratio,
    classifier_clock,
    first_hitting_time,
    fourier_energies,
    fourier_energy_outside,
    representation_clock,
    separation_ratio,
    stable_rank_gap,
)
from ._fast_clock import contraction_clock_bound, fast_clock_bound, fast_clock_loss_bound, fit_gap_growth, GapGrowthFit
from ._gaps import (
    binary_pl_ratio,
    ce_smoothness_constant,
    ce_tail_bound,
    ce_tail_bound_linear,
    cross_entropy,
    cross_entropy_from_gaps,
    gap_for_loss_level,
    log_binary_pl_ratio,
    logit_gaps,
    min_logit_gap,
    softmax_logit_hessian,
    zero_one_loss_threshold,
)
from ._kl_clock import (
    energy_dissipation_residual,
    kl_clock_time,
    kl_constants_critical_weight_decay,
    kl_decay_exponent,
    kl_differential_bounds,
    kl_exponent_depth,
    kl_exponent_power,
    kl_gap_bounds,
    kl_gap_solution,
    kl_gap_solution_pl,
    kl_rate_depth,
    kl_rate_power,
    KLConstants,
    log_kl_gap_solution,
    representation_clock_bounds,
    representation_clock_exponent,
    weight_decay_tail_rate,
)
from ._mismatch import clock_mismatch_lower_bound, coupled_mismatch_lower_bound, crossover_eps
from ._relu import (
    ActiveAffineMap,
    first_layer_preact_change_bound,
    gate_margin,
    gate_pattern_changes,
    gates_certified_stable,
    head_embedding_gradient_norms,
    relu_active_affine_map,
)
from .._results import Bounds


__all__ = [
    # characters
    "modular_characters",
    "fourier_basis",
    # gaps and cross-entropy
    "logit_gaps",
    "min_logit_gap",
    "cross_entropy_from_gaps",
    "cross_entropy",
    "ce_tail_bound",
    "ce_tail_bound_linear",
    "gap_for_loss_level",
    "ce_smoothness_constant",
    "softmax_logit_hessian",
    "binary_pl_ratio",
    "log_binary_pl_ratio",
    "zero_one_loss_threshold",
    # fast clock
    "fit_gap_growth",
    "GapGrowthFit",
    "fast_clock_bound",
    "fast_clock_loss_bound",
    "contraction_clock_bound",
    # ReLU reduction
    "relu_active_affine_map",
    "ActiveAffineMap",
    "head_embedding_gradient_norms",
    "gate_margin",
    "gates_certified_stable",
    "gate_pattern_changes",
    "first_layer_preact_change_bound",
    # KL clock
    "kl_decay_exponent",
    "representation_clock_exponent",
    "kl_differential_bounds",
    "Bounds",
    "kl_gap_solution",
    "log_kl_gap_solution",
    "kl_gap_solution_pl",
    "kl_gap_bounds",
    "kl_clock_time",
    "representation_clock_bounds",
    "energy_dissipation_residual",
    "kl_exponent_power",
    "kl_rate_power",
    "kl_exponent_depth",
    "kl_rate_depth",
    "kl_constants_critical_weight_decay",
    "KLConstants",
    "weight_decay_tail_rate",
    # mismatch
    "clock_mismatch_lower_bound",
    "coupled_mismatch_lower_bound",
    "crossover_eps",
    # estimators
    "first_hitting_time",
    "classifier_clock",
    "representation_clock",
    "accuracy_clock",
    "accumulated_time",
    "separation_ratio",
    "stable_rank_gap",
    "class_separation_ratio",
    "fourier_energies",
    "fourier_energy_outside",
]

set_home(__name__, globals(), __all__)
del annotations, set_home  # not part of the API
