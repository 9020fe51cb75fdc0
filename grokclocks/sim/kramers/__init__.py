"""Simulations of spec `kramers`: the α-parameterised two-layer ReLU net, ridge GD, diagonal linear nets, SGD.

* `alpha_two_layer_init` / `alpha_two_layer_apply` — eq. (1) with the init of `kramers:init`
  (features w_j ~ N(0, I/d), readout N(0, σ_a²), σ_a = N^(−1/2) by default);
* `empirical_ntk` — readout / feature split of the NTK by `jax.jacobian` (cross-check of the core's
  explicit formulas);
* `train_gd` — full-batch GD with weight decay on the summed squared loss (GD ≈ GF, `kramers:eq3`);
* `measure_separation` — width scaling of the readout / feature timescales (`kramers:sep`);
* `ridge_gd_run` — explicit GD on the ridge objective (float64; compared with the exact iterate);
* `diagonal_net_gd` (JAX, small init scales) and `diagonal_net_gf` (stiff Radau reference) — the
  Lyu et al. check on β = u⊙u − v⊙v;
* `sgd_excess_loss` — stationary excess loss of SGD on least squares (`kramers:teff-sgd`);
* `modadd_adamw_run` — the headline AdamW recipe (`kramers:headline`).

Modular-addition data: `grokclocks.sim.data.modular_addition_table` is not used for the split; the
spec's split (numpy `default_rng(seed).permutation`) is `grokclocks.kramers.modadd_split`, so core and
simulation agree.  float64 for the NTK / ridge / separation checks (`enable_x64`).

One concept per private file: `_net` (the net of eq. (1), its NTK), `_target` (the modular-addition
target), `_gd` (full-batch GD), `_separation`, `_ridge`, `_diagonal` (the diagonal linear net), `_sgd`,
`_headline` (AdamW), and `_arguments` (the checks they share).
"""

from __future__ import annotations

from ..._facade import set_home
from ._arguments import _params_net, _seed_list, _targets
from ._diagonal import _diag_scan, _diag_setup, _MAX_ODE_RATE, diagonal_net_gd, diagonal_net_gf
from ._gd import _gd_final, _gd_final_batched, _gd_scan, _sq_loss, train_gd
from ._headline import _adamw_program, modadd_adamw_run
from ._net import alpha_two_layer_apply, alpha_two_layer_init, empirical_ntk
from ._ridge import _ridge_scan, ridge_gd_run
from ._separation import _slope, measure_separation
from ._sgd import _sgd_scan, sgd_excess_loss
from ._target import modadd_target

__all__ = [
    "alpha_two_layer_init",
    "alpha_two_layer_apply",
    "empirical_ntk",
    "modadd_target",
    "train_gd",
    "measure_separation",
    "ridge_gd_run",
    "diagonal_net_gd",
    "diagonal_net_gf",
    "sgd_excess_loss",
    "modadd_adamw_run",
]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


set_home(__name__, globals(), __all__)  # shown, pickled, cited and documented as grokclocks.sim.kramers.<name>
del annotations, set_home  # not part of the API
