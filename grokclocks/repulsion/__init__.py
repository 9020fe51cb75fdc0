r"""Feature repulsion, the Theorem-6 sign rule and spectral lock-in detectors (spec `repulsion`).

The paper (arXiv 2605.08119) tests Tian (2025, Theorem 6) on the two-layer model Ŷ = σ(X·W)·V trained on
modular addition.  With centred features F̃ = P₁^⊥·σ(X·W) and weight decay η, the matrix

.. math::

    B=(\widetilde F^\top\widetilde F+\eta I_K)^{-1}

(the inverse of the regularised feature Gram matrix) has off-diagonal entries whose sign is fixed
by the leave-two-out residual similarity c = f̃_jᵀ·P_{η,−jℓ}·f̃_ℓ.  By the Schur complement
B_jℓ = −c/(α·β − c²) with α·β − c² > 0: the sign rule is an exact algebraic identity, and with the
full projector f̃_jᵀ·P_η·f̃_ℓ = −η²·B_jℓ exactly.  The paper's tabulated sub-1 "sign-match" comes
from the mis-scaled Woodbury form of its eq. 4 (errata repulsion-1 and repulsion-2);
`sign_match_fraction` reproduces it with `residual="legacy"`.

The spectral side: the rolling-window Gram eigenvalues σ_k(t) of the last w weight updates ΔW
(eq. 5), the slope detector on log(σ₂/σ₃) (eq. 6), the late-stage separation, and the level metric
ρ_tian (eq. 7, as the code computes it).

Conventions: M the modulus, K the hidden width, n the number of training pairs, η the weight decay
(not the learning rate).  Everything is float64 numpy; the JAX training of the Tian setup lives in
`grokclocks.sim`.  This module never imports JAX.

The package keeps one concept per private file (`_args`, `_model`, `_features`, `_sign_rule`,
`_detector`, `_rho`, `_logged`, `_tables`); every public name is imported here and documented as
`grokclocks.repulsion.<name>`.
"""

from __future__ import annotations

from .._facade import set_home
from ._detector import (
    eigengap,
    lagged_inner_products,
    late_median_gap,
    late_stage_separation,
    rolling_gram_eigenvalues,
    rolling_gram_from_lagged,
    slope_detector,
    SlopeDetection,
    window_gram_eigenvalues,
)
from ._features import center_features, feature_gram_inverse, feature_gram_inverse_paper_eq4
from ._logged import backprop_gradient_norm, ftf_offdiag_ratio, independence_proxy
from ._model import (
    adam_l2_update,
    AdamState,
    one_hot_pairs,
    tian_forward,
    tian_init_bounds,
    tian_loss_grad,
    tian_mse_loss,
    tian_setup,
    TianInitBounds,
    TianLossGrad,
    TianOutputs,
)
from ._rho import first_crossing, rho_tian
from ._sign_rule import (
    full_projector_residual,
    leave_two_out_residual,
    repulsion_fraction,
    sign_match_fraction,
    sign_rule_terms,
    SignRuleTerms,
    SimilarPairs,
    top_similar_pairs,
)
from ._tables import (
    eta_sweep_table,
    fit_power_law,
    headline_table,
    PowerLawFit,
    reduced_replication_table,
    scaling_sweep_table,
)


__all__ = [
    "one_hot_pairs",
    "tian_forward",
    "TianOutputs",
    "tian_mse_loss",
    "tian_loss_grad",
    "TianLossGrad",
    "adam_l2_update",
    "AdamState",
    "tian_setup",
    "tian_init_bounds",
    "TianInitBounds",
    "center_features",
    "feature_gram_inverse",
    "feature_gram_inverse_paper_eq4",
    "top_similar_pairs",
    "SimilarPairs",
    "leave_two_out_residual",
    "full_projector_residual",
    "sign_rule_terms",
    "SignRuleTerms",
    "sign_match_fraction",
    "repulsion_fraction",
    "lagged_inner_products",
    "rolling_gram_from_lagged",
    "rolling_gram_eigenvalues",
    "window_gram_eigenvalues",
    "eigengap",
    "slope_detector",
    "SlopeDetection",
    "late_median_gap",
    "late_stage_separation",
    "rho_tian",
    "first_crossing",
    "ftf_offdiag_ratio",
    "backprop_gradient_norm",
    "independence_proxy",
    "fit_power_law",
    "PowerLawFit",
    "headline_table",
    "eta_sweep_table",
    "scaling_sweep_table",
    "reduced_replication_table",
]

set_home(__name__, globals(), __all__)
del annotations, set_home  # not part of the API
