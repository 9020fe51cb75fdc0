r"""Escape-rate theory and timescale separation of the grokking delay (spec `kramers`).

The source paper ("Analytical Proof of Grokking Delay: Timescale Separation and Kramers Barrier Analysis for
Two-Layer Networks on Modular Arithmetic") is an argument, not a set of theorems. This package implements what
is exact in it, the corrected forms of what is wrong, and labels the scaling heuristics as estimates:

* the α-parameterised two-layer ReLU net (`two_layer_forward`, `param_count`), its explicit Jacobian and NTK
  split into readout and feature parts (`two_layer_jacobian`, `ntk_decomposition`), the infinite-width kernels
  on one-hot pairs of ℤ_p² and their closed-form spectrum (`relu_nngp_modadd`, `modadd_nngp_spectrum`), the
  law-of-large-numbers kernel norms (`readout_kernel_norm`) and the readout residual with weight decay
  (`readout_residual`, corrected: it tends to the ridge residual, not to 0);
* timescales (`readout_timescale`, `initial_timescales`) and the measured separation exponents
  (`separation_exponent`; the paper's N^(2α) is an erratum);
* Lyu et al.'s implicit-bias time (`implicit_bias_time_estimate`);
* the ridge-regression solvable model (`ridge_gf`, `ridge_gd`, `ridge_losses`, `ridge_timescales`,
  `ridge_delay`);
* Kramers escape: the Eyring–Kramers time in any dimension (`eyring_kramers_time` and its log), the 1-d law,
  the exact 1-d mean first-passage time by quadrature (`mfpt_1d_exact`) and an exact 2-d reference by a
  finite-volume solve of the backward equation (`mfpt_2d_exact`), the Arrhenius inversion, SGD and
  full-batch temperatures (corrected / flagged), the spectral asymmetry;
* the two convention switches of spec §0: `decay_rate` (`penalty`) and `kernel_rate_factor` (`loss_norm`).

Conventions (spec §0): time is gradient-flow time unless `eta` is given (then a step count);
`penalty="eq2"` means the objective L + λ‖θ‖² (decay rate γ = 2λ), "half" means L + (λ/2)‖θ‖² (γ = λ);
`loss_norm="sum"` is ½Σᵢrᵢ², "mean" divides every kernel rate by n; `alpha` is the width exponent (in
[0, 1/2]) and `init_scale` Lyu et al.'s initialisation scale.

This package never imports JAX; simulations live in `grokclocks.sim.langevin` and `grokclocks.sim.kramers`.
One concept per file, all re-exported here: `_conventions`, `_model`, `_ntk`, `_readout`, `_separation`,
`_ridge`, `_escape`, `_mfpt`, `_temperatures`, `_headline`.
"""

from __future__ import annotations

from ._conventions import HEADLINE, LOSS_NORMS, PENALTIES, decay_rate, kernel_rate_factor
from ._model import Milestones, _alpha, _net_arrays, milestones, n_train, param_count, two_layer_forward
from ._ntk import (NTKParts, OneHotKernel, TwoLayerJacobian, modadd_nngp_spectrum, nngp_kernel_matrix,
                   ntk_decomposition, relu_feature_kernel_modadd, relu_nngp_modadd, two_layer_jacobian)
from ._readout import feature_kernel_norm, readout_kernel_norm, readout_residual, readout_timescale
from ._separation import (feature_timescale_estimate, implicit_bias_time, implicit_bias_time_estimate,
                          initial_timescales, separation_exponent)
from ._ridge import (RidgeTimescales, _ridge_setup, rf_interpolant_norm, ridge_delay, ridge_gd, ridge_gf,
                     ridge_grok_time_asymptotic, ridge_losses, ridge_timescales)
from ._escape import (eyring_kramers_rate, eyring_kramers_time, kramers_ratio_first_order_estimate, kramers_time_1d,
                      log_eyring_kramers_time, log_kramers_time_1d)
from ._mfpt import (arrhenius_barrier, continuity_correction_shift, log_mfpt_1d_exact, mfpt_1d_exact, mfpt_2d_exact,
                    test_potential)
from ._temperatures import (sgd_stationary_temperature_1d, spectral_delay_ratio, t_eff_fullbatch_heuristic, t_eff_sgd,
                            t_eff_sgd_direction)
from ._headline import delay_scaling, delay_scaling_estimate, headline_record
from ..task import modadd_inputs, modadd_split
from .._facade import set_home

__all__ = [
    "Milestones",
    "TwoLayerJacobian",
    "NTKParts",
    "OneHotKernel",
    "RidgeTimescales",
    "HEADLINE",
    "PENALTIES",
    "LOSS_NORMS",
    "decay_rate",
    "kernel_rate_factor",
    "two_layer_forward",
    "param_count",
    "n_train",
    "modadd_inputs",
    "modadd_split",
    "milestones",
    "two_layer_jacobian",
    "ntk_decomposition",
    "relu_nngp_modadd",
    "relu_feature_kernel_modadd",
    "nngp_kernel_matrix",
    "modadd_nngp_spectrum",
    "readout_residual",
    "readout_kernel_norm",
    "feature_kernel_norm",
    "readout_timescale",
    "initial_timescales",
    "feature_timescale_estimate",
    "separation_exponent",
    "implicit_bias_time_estimate",
    "implicit_bias_time",
    "ridge_gf",
    "ridge_gd",
    "ridge_losses",
    "ridge_timescales",
    "ridge_delay",
    "ridge_grok_time_asymptotic",
    "rf_interpolant_norm",
    "eyring_kramers_time",
    "log_eyring_kramers_time",
    "eyring_kramers_rate",
    "kramers_time_1d",
    "log_kramers_time_1d",
    "kramers_ratio_first_order_estimate",
    "mfpt_1d_exact",
    "log_mfpt_1d_exact",
    "mfpt_2d_exact",
    "test_potential",
    "continuity_correction_shift",
    "arrhenius_barrier",
    "t_eff_sgd",
    "t_eff_sgd_direction",
    "sgd_stationary_temperature_1d",
    "t_eff_fullbatch_heuristic",
    "spectral_delay_ratio",
    "delay_scaling_estimate",
    "delay_scaling",
    "headline_record",
]

set_home(__name__, globals(), __all__)
del annotations, set_home  # not part of the API
