"""Every paper's modular-arithmetic model through one front-end, `train_modular`.

`train_modular` trains any model of `MODULAR_MODELS` on op(a, b) mod p: all p² pairs are kept with a
0/1 training mask (the task's data come from `grokclocks.task`), so splits of different fractions
share shapes and are vmapped together with the seeds and a hyperparameter grid through the one
engine (`grokclocks.sim.train.simulate`).

Levi et al.'s appendix G (spec `levi:appG`) is one configuration of it, `run_modular_addition`: the
mean-field quadratic MLP (paper eq. 43) h = W1·x/√d_in, z = h², f = W2·z/d_h with W1, W2 ~ N(0, 1),
trained by full-batch GD (optax SGD) on an MSE to the one-hot labels of (n + m) mod p; inputs are
the concatenated one-hots of (n, m) (d_in = 2p).

Because the inputs are one-hot, W1·x = W1[:, n] + W1[:, p + m]: the first layer is evaluated as a
gather (identical to the matrix product, far cheaper).

Loss normalisation (spec erratum 20): `loss="sum"` (default) sums the squared error over the p
classes and averages over samples; `loss="mean"` also averages over classes (PyTorch's
`MSELoss()`), which divides the gradient by p.

One concept per private file: `_train` (`train_modular`), `_model_table` (the model table), `_config`
(`TrainConfig`), `_programs` (the cached compiled step and metrics), `_arguments` (the checks of
`train_modular`), `_levi` (Levi et al.'s configuration, `run_modular_addition`).
"""

from __future__ import annotations

from ..._facade import set_home
from ..train import first_crossing_step
from ._arguments import (
    _betas,
    _describe,
    _grid_values,
    _hook_items,
    _level,
    _model_kwargs,
    _no_tracker_collision,
    _split_size,
    BUILTIN_METRICS,
    N_TRAIN_RULES,
)
from ._config import TrainConfig
from ._levi import ModularConfig, run_modular_addition
from ._model_table import (
    _alpha_two_layer,
    _mean_field_quadratic_init,
    _mean_field_quadratic_tokens,
    _registry,
    modular_model,
    MODULAR_MODELS,
    ModularModel,
    quadratic_mlp_onehot_apply,
)
from ._programs import _classifier_fns
from ._train import _forecast_line, train_modular

__all__ = [
    "ModularConfig",
    "run_modular_addition",
    "first_crossing_step",
    "quadratic_mlp_onehot_apply",
    "ModularModel",
    "MODULAR_MODELS",
    "modular_model",
    "TrainConfig",
    "train_modular",
    "BUILTIN_METRICS",
]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


set_home(__name__, globals(), __all__)  # help, pickles, citations, API page, run files: grokclocks.sim.modular.<name>
del annotations, set_home  # not part of the API
