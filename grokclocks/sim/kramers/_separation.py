"""Width scaling of the readout and feature timescales (`kramers:sep`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ... import _validate as V, kramers as K
from ..._validate import integer_at_least, positive
from ...citations import cites
from .._runtime import enable_x64, SimulationDiverged
from ._arguments import _seed_list
from ._gd import _gd_final_batched
from ._net import alpha_two_layer_init
from ._target import modadd_target


def _slope(N: np.ndarray, v: np.ndarray) -> float:
    return float(np.polyfit(np.log(N), np.log(v), 1)[0])


@cites("kramers:sep", "kramers:feature-speed", "kramers:eq6")
def measure_separation(p: int, rho: float, alpha: float, widths: Sequence[int], seeds: Sequence[int],
                       t_mult: float = 20.0, a_std: float | None = None, split_seed: int = 0,
                       integrated: bool = True, step_factor: float = 0.1) -> dict[str, Any]:
    r"""Width scaling of the readout and feature timescales (λ = 0, summed squared loss, scalar output).

    For each width N and init seed: τ_r, τ_W, τ_K at t = 0 (`grokclocks.kramers.initial_timescales`)
    and, with `integrated`, GD with step `step_factor`/λ_max(K₀) (K₀ the full NTK) up to
    t = `t_mult`·τ_r, giving Δ_K = ‖K⁽ᵃ⁾_t − K⁽ᵃ⁾_0‖_F/‖K⁽ᵃ⁾_0‖_F and
    Δ_W = ‖W_t − W_0‖_F/‖W_0‖_F.
    Target √2·cos(2π(a + b)/p) on the spec's split; init key `PRNGKey(seed)`.

    Parameters
    ----------
    p : int
        The modulus p ≥ 2 of the modular-addition data.
    rho : float
        Training fraction ρ in (0, 1).
    alpha : float
        Width exponent α in [0, 0.5].
    widths : sequence of int
        The widths N ≥ 1 (at least two, for the slopes).
    seeds : sequence of int
        Distinct init seeds ≥ 0.
    t_mult : float
        Integration time in units of τ_r, > 0; default 20.
    a_std : float or None
        Readout standard deviation σ_a > 0; `None` (default) means N^(−1/2).
    split_seed : int
        Seed ≥ 0 of the split; default 0.
    integrated : bool
        Whether to run GD and measure Δ_K, Δ_W (default `True`); `False` gives the t = 0
        timescales only.
    step_factor : float
        GD step in units of 1/λ_max(K₀), > 0; default 0.1.

    Returns
    -------
    dict
        `widths`, `per_seed` (each quantity per width and seed), per-width geometric means over the
        seeds `tau_r`, `tau_W`, `tau_K`, `speed` (and `delta_K`, `delta_W` when integrated), the
        fitted log-log slopes `slope_tau_r`, `slope_W_over_r`, `slope_K_over_r`, `slope_speed` (and
        `slope_inv_delta_K`, `slope_inv_delta_W`), and `paper_claim` = 2α.

    Raises
    ------
    SimulationDiverged
        If the integrated features become non-finite.
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `kramers:sep`, `kramers:feature-speed`, `kramers:eq6`.
    """
    enable_x64()
    alpha = K._alpha(alpha)
    widths = [integer_at_least(N, "widths", 1) for N in V.sequence(widths, "widths", what="a sequence of widths N >= 1")]
    seeds = _seed_list(seeds)
    t_mult = positive(t_mult, "t_mult", scalar=True)
    step_factor = positive(step_factor, "step_factor", scalar=True)
    integrated = V.flag(integrated, "integrated")
    if a_std is not None:
        positive(a_std, "a_std", scalar=True)
    data = modadd_target(p, rho, split_seed)
    X, y = data["X_train"], data["y_train"]
    d = X.shape[1]
    keys = ("tau_r", "tau_W", "tau_K", "delta_K", "delta_W", "speed")
    per = {k: np.zeros((len(widths), len(seeds))) for k in keys}
    Xj, yj = jnp.asarray(X, jnp.float64), jnp.asarray(y, jnp.float64)
    for i, N in enumerate(widths):
        # every seed of this width at once: init, then (integrated) GD of all seeds in one vmapped program,
        # each seed with its own step eta_s = step_factor / lambda_max(K_0) for its own ceil(t_mult tau_r / eta_s) steps
        prm = jax.vmap(lambda k: alpha_two_layer_init(k, N, d, a_std=a_std, dtype=jnp.float64))(
            jnp.stack([jax.random.PRNGKey(s) for s in seeds]))
        W0s, a0s = np.asarray(prm["W"]), np.asarray(prm["a"])
        etas, n_steps, Ka0s = [], [], []
        for j in range(len(seeds)):
            ts = K.initial_timescales(X, y, W0s[j], a0s[j], alpha)
            per["tau_r"][i, j], per["tau_W"][i, j], per["tau_K"][i, j] = ts["tau_r"], ts["tau_W"], ts["tau_K"]
            per["speed"][i, j] = ts["feature_speed_median"]
            if integrated:
                Ka0, Kw0 = K.ntk_decomposition(X, W0s[j], a0s[j], alpha)
                eta = step_factor / float(np.linalg.eigvalsh(Ka0 + Kw0)[-1])
                etas.append(eta)
                n_steps.append(int(math.ceil(t_mult * ts["tau_r"] / eta)))
                Ka0s.append(Ka0)
        if integrated:
            out = _gd_final_batched(prm, Xj, yj, float(alpha), jnp.asarray(etas), jnp.asarray(n_steps), max(n_steps))
            Wts, ats = np.asarray(out["W"]), np.asarray(out["a"])
            if not np.all(np.isfinite(Wts)):
                raise SimulationDiverged(max(n_steps), "W", dict(N=N, alpha=alpha, step_factor=step_factor))
            for j in range(len(seeds)):
                Kat, _ = K.ntk_decomposition(X, Wts[j], ats[j], alpha)
                per["delta_K"][i, j] = np.linalg.norm(Kat - Ka0s[j]) / np.linalg.norm(Ka0s[j])
                per["delta_W"][i, j] = np.linalg.norm(Wts[j] - W0s[j]) / np.linalg.norm(W0s[j])
    if not integrated:  # not measured: no placeholder zeros (their geometric mean was a NaN)
        for key in ("delta_K", "delta_W"):
            per.pop(key)
    gm = {k: np.exp(np.mean(np.log(np.where(v > 0, v, np.nan)), axis=1)) for k, v in per.items()}
    Ns = np.asarray(widths, dtype=np.float64)
    res: dict[str, Any] = dict(widths=Ns, per_seed=per, paper_claim=2 * alpha, **gm)
    res["slope_tau_r"] = _slope(Ns, gm["tau_r"])
    res["slope_W_over_r"] = _slope(Ns, gm["tau_W"] / gm["tau_r"])
    res["slope_K_over_r"] = _slope(Ns, gm["tau_K"] / gm["tau_r"])
    res["slope_speed"] = _slope(Ns, gm["speed"])
    if integrated:
        res["slope_inv_delta_K"] = -_slope(Ns, gm["delta_K"])
        res["slope_inv_delta_W"] = -_slope(Ns, gm["delta_W"])
    return res
