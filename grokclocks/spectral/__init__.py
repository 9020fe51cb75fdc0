r"""Matrix spectra of the two-clocks theory: stable rank, Schatten quasi-norms, layerwise decay, drift, bounds.

Spec `clocks` (Deciphering Two Training Clocks in Grokking via Deep Linear Network Theory with
Conditional ReLU Reduction; authors not stated in the source text), sections 1, 4 and 5:

* the stable rank srank W = ‖W‖_F²/‖W‖₂² (spec ID `clocks:eq2.3`);
* Schatten-p quasi-norms and penalties ‖W‖_{S_p}^p = Σ_i σ_i^p (`clocks:eq2.6`);
* the layerwise-weight-decay identity (Shang et al. 2020, `clocks:eq2.7`, the formula below): the
  least Σ_l ‖W_l‖_F² over factorizations W = W_L⋯W_1 is L·‖W‖_{S_{2/L}}^{2/L}, so layerwise decay
  μ acts as an end-to-end penalty with λ = μ·L/2; its balanced minimiser, and the conservation or
  decay of the layer imbalance (`clocks:appF2-balance`);
* the gradient of the Schatten penalty on a fixed-rank stratum (`clocks:thmD.1`) and the
  singular-value drift of the end-to-end flow (`clocks:eq4.3`) and of the factorized
  (layer-trained) flow (`clocks:appF2-balanced-drift`), which differ by the per-direction time
  rescaling L·σ_i^(2−2/L);
* spectral tails, the Eckart–Young rank choice, covering numbers of balls and the Xu–Mannor
  robustness bounds (`clocks:appF4-tail`, `clocks:thm5.2`, `clocks:prop5.1`, `clocks:thm2.2`,
  `clocks:thm5.5`).

The identity of `clocks:eq2.7`:

.. math:: \min_{W_L\cdots W_1=W}\sum_l\lVert W_l\rVert_F^2=L\lVert W\rVert_{S_{2/L}}^{2/L},
   \qquad \lambda=\mu L/2.

All functions compute in float64; singular values come from `numpy.linalg.svd`.  Matrix arguments
accept a stack (..., m, n) where stated.  For p < 1 the round-off singular values of a low-rank
matrix matter ((10⁻¹⁶)^0.1 = 0.025): singular values ≤ rtol·σ_1 count as zero, by default
rtol = max(m, n)·ε (the convention of `numpy.linalg.matrix_rank`); `rtol=0` disables the
threshold.

The package keeps one concept per private file (`_helpers`, `_stable_rank`, `_schatten`,
`_layerwise`, `_energy`, `_drift`, `_tails`, `_bounds`); every public name is imported here and
documented as `grokclocks.spectral.<name>`.
"""

from __future__ import annotations

from .._facade import set_home
from ._bounds import (
    covering_number_ball_bounds,
    log_covering_number_ball_bounds,
    robust_generalization_bound,
    stable_rank_generalization_bound,
)
from ._drift import (
    balanced_singular_value_drift,
    free_direction_collapse_time,
    schatten_penalty_grad,
    singular_value_drift,
    singular_value_drift_terms,
)
from ._energy import end_to_end_energy, end_to_end_energy_from_weight_decay
from ._helpers import SingularValueDrift, SpectralStratumWarning
from ._layerwise import (
    balanced_factorization,
    end_to_end_map,
    imbalance_decay,
    layer_imbalance,
    layerwise_decay_penalty,
    weight_decay_to_penalty_coefficient,
)
from .._results import Bounds
from ._schatten import schatten_penalty, schatten_quasi_norm
from ._stable_rank import stable_rank, stable_rank_from_singular_values
from ._tails import best_rank_k, eckart_young_rank, principal_projection_error, spectral_tail


__all__ = [
    "SpectralStratumWarning",
    "SingularValueDrift",
    "stable_rank",
    "stable_rank_from_singular_values",
    "schatten_quasi_norm",
    "schatten_penalty",
    "layerwise_decay_penalty",
    "balanced_factorization",
    "weight_decay_to_penalty_coefficient",
    "end_to_end_map",
    "layer_imbalance",
    "imbalance_decay",
    "end_to_end_energy",
    "end_to_end_energy_from_weight_decay",
    "schatten_penalty_grad",
    "singular_value_drift",
    "singular_value_drift_terms",
    "balanced_singular_value_drift",
    "free_direction_collapse_time",
    "spectral_tail",
    "eckart_young_rank",
    "best_rank_k",
    "principal_projection_error",
    "covering_number_ball_bounds",
    "Bounds",
    "log_covering_number_ball_bounds",
    "robust_generalization_bound",
    "stable_rank_generalization_bound",
]

set_home(__name__, globals(), __all__)
del annotations, set_home  # not part of the API
