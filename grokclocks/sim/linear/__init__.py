"""Teacher-student simulations of spec `levi` (Levi, Beck, Bar-Sinai): explicit GD and its exact spectral form.

* `run_gd` -- explicit full-batch GD (optax SGD + weight decay through the one engine,
  `grokclocks.sim.train.simulate`), vmapped over seeds and, optionally, over a grid of
  learning rates / weight decays;
* `run_gd_spectral` -- the same GD iterates in closed form from `eigh` of the training
  Gram matrix (no approximation; matches `run_gd` to about 10⁻¹⁴ relative); real-valued `t`;
* `crossing_times` -- first time the loss falls to L∗, by bisection on continuous `t`;
* `run_two_layer` -- explicit GD of the two-layer network (linear or tanh hidden layer);
* `run_gd_fresh_noise` -- GD with label noise redrawn at every step (eigenbasis simulation).

Time unit = one GD step with learning rate η (spec `levi:conv-time`); formulas of the
gradient-flow theory are compared at η₀ = η.  Weight decay γ is in the paper convention unless
`wd_convention="torch"` (spec `levi:conv-wd`).  Everything runs in float64.

The package keeps one concept per private file (`_helpers`, `_configs`, `_draws`, `_gd`,
`_spectral`, `_two_layer`, `_fresh_noise`); every public name is imported here and documented
as `grokclocks.sim.linear.<name>`.
"""

from __future__ import annotations

from ..._facade import set_home
from ._configs import CrossingTimes, FreshNoiseConfig, LinearGDConfig, SpectralConfig, SpectralDraws, TwoLayerConfig
from ._draws import draw_teacher_student, draw_two_layer
from ._fresh_noise import _fresh_metrics, _fresh_prep_fn, _fresh_step, run_gd_fresh_noise
from ._gd import _linear_metrics, _LINEAR_STEP, run_gd
from ._helpers import _batch_axes, _gram
from ._spectral import (
    _crossing_fn,
    crossing_times,
    _project_fn,
    _projected_fn,
    run_gd_spectral,
    spectral_draws,
    _spectral_fns,
)
from ._two_layer import _TWO_LAYER, run_two_layer
from ..data import make_teacher_student, make_two_layer_teacher_student, teacher_student_keys


__all__ = [
    "make_teacher_student",
    "make_two_layer_teacher_student",
    "teacher_student_keys",
    "draw_teacher_student",
    "draw_two_layer",
    "LinearGDConfig",
    "SpectralConfig",
    "CrossingTimes",
    "TwoLayerConfig",
    "FreshNoiseConfig",
    "run_gd",
    "run_gd_spectral",
    "crossing_times",
    "run_two_layer",
    "run_gd_fresh_noise",
    "SpectralDraws",
    "spectral_draws",
]

set_home(__name__, globals(), __all__)
del annotations, set_home  # not part of the API
