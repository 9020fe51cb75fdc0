r"""Linear teacher–student theory of grokking (spec `levi`: Levi, Beck, Bar-Sinai, ICLR 2024).

A linear student S learns a linear teacher T from N_tr Gaussian inputs in d_in dimensions by full-batch
gradient descent on the mean squared error. With λ = d_in/N_tr the spectrum of the training Gram matrix
follows the Marchenko–Pastur law (`grokclocks.rmt`), and the train and generalisation losses are Laplace
transforms of it. A sample counts as correct when its squared error is below ε; the train accuracy reaches a
level (default erf(√2) ≈ 95.4 %, `ERF_SQRT2`) before the generalisation accuracy does, and the difference of
the two crossing times is the grokking time.

Conventions (spec §0): `t` counts GD steps, `eta0` is the learning rate η₀, the spectral variable is
s = 4η₀t/d_out; the weight decay `gamma` is in the paper's convention unless `wd_convention="torch"`
(γ_paper = d_out·γ_torch). Every function takes its accuracy `level` with the default `ERF_SQRT2`, except the
figure reproductions `fig2_table` and `fig7_tables`, which default to the 0.95 of the paper's Figs. 2 and 7.

Contents
--------
* losses: `loss_train`, `loss_gen` and their `log_` variants (exact Marchenko–Pastur forms, weight decay,
  discrete GD, initialisation scale), finite-spectrum forms, late-time expansions;
* accuracy and thresholds: `accuracy_from_loss`, `loss_threshold`;
* times: `t_star`, `grok_time` (exact, by root finding), `grok_time_grid` (a whole grid at once) and the
  paper's approximations (Lambert W, eq. 25, eq. 11, λ → 1);
* weight decay, initialisation scale, label noise, two-layer networks, modular addition;
* figure reproductions `fig1_table`, `fig2_table`, `fig3_table`, `fig5_table`, `fig7_tables` (pure maths).

Functions never import JAX; simulations live in `grokclocks.sim.linear`.

The package keeps one concept per private file (`_conventions`: constants, argument checks, the weight-decay
convention; `_losses`; `_finite`; `_crossing`: accuracy, L*, crossing times; `_late`; `_approx`: the paper's
approximate times; `_weight_decay`; `_init_scale`; `_label_noise`; `_two_layer`; `_modular`; `_tables`: figure
tables and `grok_time_grid`); every public name is imported here and documented as `grokclocks.linear.<name>`.
"""

from __future__ import annotations

from .._constants import ERF_SQRT2
from .._facade import set_home
from ._approx import (
    DoutMax,
    dout_max,
    grok_time_asymptotic,
    grok_time_eq25,
    grok_time_lambertw,
    grok_time_near_one,
    t_star_gen_critical,
    t_star_gen_lambertw,
    t_star_train_lambertw,
)
from ._conventions import gamma_paper_convention
from ._crossing import (
    accuracy_from_loss,
    _grok_delay_small_lam,
    grok_time,
    _grok_time_scalar,
    loss_threshold,
    _lstar,
    _SMALL_LAM,
    t_star,
    _t_star_scalar,
)
from ._finite import loss_gen_equal_proj, loss_gen_finite, loss_train_equal_proj, loss_train_finite
from ._init_scale import effective_eps, init_scale_factor
from ._label_noise import loss_gen_label_noise, loss_train_label_noise
from ._late import loss_gen_late, loss_gen_late_simple, loss_train_late
from ._losses import log_loss_gen, log_loss_train, loss_gen, loss_train
from ._modular import fit_inverse_square, modular_lambda, InverseSquareFit
from ._tables import fig1_table, fig2_table, fig3_table, fig5_table, fig7_tables, grok_time_grid, GrokTimes
from ._two_layer import loss_two_layer
from ._weight_decay import grok_time_wd_paper, wd_asymptotes, wd_asymptotes_small_gamma, wd_gamma_max, WDAsymptotes


__all__ = [
    "ERF_SQRT2",
    "gamma_paper_convention",
    "loss_train",
    "loss_gen",
    "log_loss_train",
    "log_loss_gen",
    "loss_train_finite",
    "loss_gen_finite",
    "loss_train_equal_proj",
    "loss_gen_equal_proj",
    "accuracy_from_loss",
    "loss_threshold",
    "t_star",
    "grok_time",
    "grok_time_grid",
    "GrokTimes",
    "loss_train_late",
    "loss_gen_late",
    "loss_gen_late_simple",
    "t_star_train_lambertw",
    "t_star_gen_lambertw",
    "grok_time_lambertw",
    "grok_time_eq25",
    "grok_time_asymptotic",
    "grok_time_near_one",
    "t_star_gen_critical",
    "dout_max",
    "DoutMax",
    "wd_asymptotes",
    "wd_asymptotes_small_gamma",
    "WDAsymptotes",
    "wd_gamma_max",
    "grok_time_wd_paper",
    "init_scale_factor",
    "effective_eps",
    "loss_train_label_noise",
    "loss_gen_label_noise",
    "loss_two_layer",
    "modular_lambda",
    "fit_inverse_square",
    "InverseSquareFit",
    "fig1_table",
    "fig2_table",
    "fig3_table",
    "fig5_table",
    "fig7_tables",
]

set_home(__name__, globals(), __all__)
del annotations, set_home  # not part of the API
