"""The papers' models as pure `init`/`apply` pairs, plus the losses they are trained with.

Parameters are plain pytrees (dicts of arrays); `apply(params, X)` maps a batch of inputs `X` of
shape (N, d_in) to outputs (N, d_out).  A `Model` bundles one pair so that the training engine can
treat every model alike.

One concept per private file: `_model` (the `Model` record, the checks of every init, `param_norm`),
`_activations`, `_regression` (linear, two-layer, mean-field quadratic), `_losses`, `_dense` (the CPU-fast
product), `_embedding_mlp`, `_tian` (Tian's net), `_transformer`.
"""

from __future__ import annotations

from ..._facade import set_home
from ._activations import activation, ACTIVATIONS
from ._dense import _dense_jvp, _weight_tangent_cpu, dense
from ._embedding_mlp import EMBEDDING_MLP, embedding_mlp_apply, embedding_mlp_init
from ._losses import _mse_mean, _mse_sum, _weighted_mean, centred_mse, cross_entropy, LOSSES, mse
from ._model import _init_args, Model, param_norm
from ._regression import (
    LINEAR,
    linear_apply,
    linear_init,
    MEAN_FIELD_QUADRATIC,
    mean_field_quadratic_apply,
    mean_field_quadratic_init,
    TWO_LAYER,
    two_layer_apply,
    two_layer_init,
)
from ._tian import (
    _pair_preactivation,
    _TIAN_APPLY,
    _tian_apply_quadratic,
    _tian_apply_relu,
    _tian_features,
    _tian_hidden,
    _tian_hidden_bwd,
    _tian_hidden_fwd,
    _tian_train_apply,
    tian_features,
    tian_mlp,
    tian_mlp_apply,
    tian_mlp_init,
)
from ._transformer import TRANSFORMER, transformer_apply, transformer_init

__all__ = [
    "Model",
    "ACTIVATIONS",
    "activation",
    "linear_init",
    "linear_apply",
    "two_layer_init",
    "two_layer_apply",
    "mean_field_quadratic_init",
    "mean_field_quadratic_apply",
    "LINEAR",
    "TWO_LAYER",
    "MEAN_FIELD_QUADRATIC",
    "mse",
    "cross_entropy",
    "centred_mse",
    "LOSSES",
    "embedding_mlp_init",
    "embedding_mlp_apply",
    "tian_mlp_init",
    "tian_mlp_apply",
    "tian_mlp",
    "transformer_init",
    "transformer_apply",
    "param_norm",
    "dense",
    "tian_features",
    "EMBEDDING_MLP",
    "TRANSFORMER",
]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


set_home(__name__, globals(), __all__)  # shown, pickled and documented as grokclocks.sim.models.<name>
dense.__module__ = __name__  # a jax.custom_jvp, not a function, which set_home leaves: its home too
del annotations, set_home  # not part of the API
