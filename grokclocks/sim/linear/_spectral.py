"""Linear teacher-student simulations: exact GD in the eigenbasis, spectral draws and crossing times."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..._validate import choice, DomainError, integer_at_least, nonnegative, positive
from ...citations import cites
from .._runtime import enable_x64, SimulationDiverged
from ..data import make_teacher_student, teacher_student_keys, TeacherStudentData
from ..train import Trajectory, weight_decay_coefficient
from ._configs import CrossingTimes, SpectralConfig, SpectralDraws
from ._helpers import _check_data, _stability_hint, _vmap_n


def _eig(X: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Eigenpairs of Sigma_tr = X^T X / N of one draw; eigenvalues below the round-off level set to 0."""
    n, d_in = X.shape
    sigma = X.T @ X / n
    nu, V = jnp.linalg.eigh(0.5 * (sigma + sigma.T))
    tol = jnp.max(jnp.abs(nu)) * max(n, d_in) * jnp.finfo(nu.dtype).eps
    return jnp.where(nu > tol, nu, 0.0), V


def _coefficients(nu: jax.Array, Tb: jax.Array, D0b: jax.Array, Fb: jax.Array, noise: jax.Array, eta: jax.Array,
                  decay: jax.Array) -> dict[str, jax.Array]:
    """Per-mode coefficients of the exact GD iterates from the projections on the eigenbasis."""
    d_out = Tb.shape[-1]
    Fb = jnp.where((nu > 0)[:, None], Fb, 0.0)  # exactly zero on the null space of X
    rate = 2.0 * nu / d_out + decay  # rho = 1 - eta * rate
    safe = jnp.where(rate > 0, rate, 1.0)
    Dinf = jnp.where((rate > 0)[:, None], ((2.0 / d_out) * Fb - decay * Tb) / safe[:, None], 0.0)
    A = D0b - Dinf
    return {
        "nu": nu,
        "rho": 1.0 - eta * rate,
        "a": jnp.sum(A * A, axis=1),
        "c": jnp.sum(A * Dinf, axis=1),
        "b": jnp.sum(Dinf * Dinf, axis=1),
        "fa": jnp.sum(A * Fb, axis=1),
        "fb": jnp.sum(Dinf * Fb, axis=1),
        "noise": noise,
        "d_out": jnp.asarray(d_out, nu.dtype),
    }


def _spectral_one(X: jax.Array, T: jax.Array, S0: jax.Array, delta: jax.Array, eta: jax.Array,
                  decay: jax.Array) -> dict[str, jax.Array]:
    """Eigen-decomposition of one draw and the per-mode coefficients of the exact GD iterates."""
    n = X.shape[0]
    nu, V = _eig(X)
    return _coefficients(nu, V.T @ T, V.T @ (S0 - T), V.T @ (X.T @ delta / n), jnp.sum(delta * delta) / n, eta,
                         decay)


def _projected_one(nu: jax.Array, Tb: jax.Array, Sb: jax.Array, Zb: jax.Array, zz: jax.Array, scale: jax.Array,
                   sigma2: jax.Array, eta: jax.Array, decay: jax.Array) -> dict[str, jax.Array]:
    """The coefficients of :func:`_spectral_one` from :class:`SpectralDraws` projections (no eigh)."""
    return _coefficients(nu, Tb, scale * Sb - Tb, jnp.sqrt(sigma2) * Zb, sigma2 * zz, eta, decay)


def _project_one(X: jax.Array, T: jax.Array, S0: jax.Array, delta: jax.Array) -> dict[str, jax.Array]:
    """Eigenvalues of one draw and V^T T, V^T S0, V^T X^T delta / N, |delta|^2 / N."""
    n = X.shape[0]
    nu, V = _eig(X)
    return {"nu": nu, "Tb": V.T @ T, "Sb": V.T @ S0, "Zb": V.T @ (X.T @ delta / n), "zz": jnp.sum(delta * delta) / n}


@functools.lru_cache(maxsize=None)
def _project_fn(n_douts: int) -> Any:
    def fn(X: jax.Array, Ts: tuple, S0s: tuple, deltas: tuple) -> tuple:
        n = X.shape[0]
        nu, V = _eig(X)
        out = []
        for T, S0, delta in zip(Ts, S0s, deltas):
            out.append({"Tb": V.T @ T, "Sb": V.T @ S0, "Zb": V.T @ (X.T @ delta / n), "zz": jnp.sum(delta * delta) / n})
        return nu, tuple(out)

    return jax.jit(jax.vmap(fn))


@cites("levi:conv-data", "levi:gd-exact")
def spectral_draws(d_in: int, lam: float, d_outs: int | Sequence[int] = (1,), *,
                   seeds: Sequence[int] = (0,)) -> dict[int, SpectralDraws]:
    r"""Teacher-student draws of `draw_teacher_student` decomposed once for several output dimensions.

    The inputs X of a seed do not depend on d_out (spec section 7.1 splits the key into X, T, S0
    and the noise), so one `eigh` of Σ_tr per seed serves every output dimension, student scale and
    label-noise variance: the result holds, per d_out, the projections of the draw (`init_scale`
    = 1, unit noise) on the eigenbasis; select a variant with `SpectralDraws.variant` and pass it
    to `run_gd_spectral` or `crossing_times`.  Runs in float64.

    Parameters
    ----------
    d_in : int
        Input dimension d_in ≥ 1.
    lam : float
        λ = d_in/N_tr, input dimension over training-set size; 0 < λ ≤ 2 d_in.
    d_outs : int or sequence of int
        The output dimensions d_out ≥ 1 to decompose, one or a non-empty sequence; default `(1,)`.
    seeds : sequence of int
        Seeds ≥ 0, distinct (keys `PRNGKey(1000 d_in + seed)`); they form a leading batch axis.
        Default `(0,)`.

    Returns
    -------
    dict of int to SpectralDraws
        For each d_out, its draws with `sigma2` = 0 and `init_scale` = 1.

    Raises
    ------
    DomainError
        If an argument is outside its domain or `d_outs` is empty.

    References
    ----------
    Spec `levi:conv-data` (keys `PRNGKey(1000 d_in + seed)`), `levi:gd-exact` (section 7.1).
    """
    enable_x64()
    outs = tuple(integer_at_least(k, "d_out", 1) for k in np.atleast_1d(d_outs).tolist())
    if not outs:
        raise DomainError("d_outs must not be empty")
    seed_tuple = tuple(integer_at_least(s, "seed", 0) for s in np.atleast_1d(seeds).tolist())
    keys = teacher_student_keys(d_in, list(seed_tuple))
    draws = [make_teacher_student(keys, d_in, lam, k, init_scale=1.0, sigma2=1.0, seeds=seed_tuple) for k in outs]
    nu, proj = _project_fn(len(outs))(draws[0].X, tuple(d.T for d in draws), tuple(d.S0 for d in draws),
                                      tuple(d.delta for d in draws))
    first = draws[0]
    return {k: SpectralDraws(nu=nu, d_in=first.d_in, d_out=k, n_train=first.n_train, lam=first.lam, seeds=seed_tuple,
                             **pr)
            for k, pr in zip(outs, proj)}


def _power(rho: jax.Array, t: jax.Array) -> jax.Array:
    """rho**t for real t >= 0 (rho < 0 only for integer t; 0**0 = 1)."""
    mag = jnp.power(jnp.abs(rho), t)
    odd = jnp.mod(t, 2.0) == 1.0
    return jnp.where((rho < 0) & odd, -mag, mag)


def _spectral_losses(dec: dict[str, jax.Array], t: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(L_tr(t), L_gen(t)) of one draw at times t (any shape)."""
    P = _power(dec["rho"], t[..., None])
    mode = P * P * dec["a"] + 2.0 * P * dec["c"] + dec["b"]
    l_gen = jnp.sum(mode, axis=-1) / dec["d_out"]
    l_tr = (jnp.sum(dec["nu"] * mode, axis=-1) - 2.0 * jnp.sum(P * dec["fa"] + dec["fb"], axis=-1)
            + dec["noise"]) / dec["d_out"]
    return l_tr, l_gen


@functools.lru_cache(maxsize=None)
def _spectral_fns(n_batch: int) -> tuple[Any, Any]:
    dec = jax.jit(_vmap_n(_spectral_one, n_batch), static_argnums=())
    losses = jax.jit(_vmap_n(_spectral_losses, n_batch))
    return dec, losses


@functools.lru_cache(maxsize=None)
def _projected_fn(n_batch: int) -> Any:
    return jax.jit(_vmap_n(_projected_one, n_batch))


def _decompose(data: TeacherStudentData | SpectralDraws, eta: float, gamma: float,
               wd_convention: str) -> dict[str, jax.Array]:
    nb = len(data.batch_shape)
    decay = weight_decay_coefficient(gamma, data.d_out, wd_convention)
    e = jnp.broadcast_to(jnp.asarray(eta, jnp.float64), data.batch_shape)
    c = jnp.broadcast_to(jnp.asarray(decay, jnp.float64), data.batch_shape)
    if isinstance(data, SpectralDraws):
        a = jnp.broadcast_to(jnp.asarray(data.init_scale, jnp.float64), data.batch_shape)
        s2 = jnp.broadcast_to(jnp.asarray(data.sigma2, jnp.float64), data.batch_shape)
        return _projected_fn(nb)(data.nu, data.Tb, data.Sb, data.Zb, data.zz, a, s2, e, c)
    dec_fn, _ = _spectral_fns(nb)
    return dec_fn(data.X, data.T, data.S0, data.delta, e, c)


def _check_rho(dec: dict[str, jax.Array], config: Any, *, continuous: bool, t_nonint: bool) -> None:
    rho = np.asarray(dec["rho"])
    if np.any(rho < -1.0):
        raise SimulationDiverged(1, "mode growth factor |1 - eta (2 nu/d_out + c)|", config,
                                 f"GD diverges from the first step: min rho = {rho.min():.4g} < -1; "
                                 + _stability_hint(config.d_out))
    if np.any(rho < 0) and (continuous or t_nonint):
        raise DomainError(f"eta must be < d_out / (2 nu_max + c) = {float(config.eta) / (1 - rho.min()):.6g} for "
                          f"continuous (non-integer) t: some modes oscillate (rho = {rho.min():.4g} < 0) "
                          f"(got eta={config.eta!r})")


@cites("levi:eq5", "levi:eq33", "levi:gd-exact", "levi:eq3")
def run_gd_spectral(data: TeacherStudentData, eta: float, ts: Any, *, gamma: float = 0.0,
                    wd_convention: str = "paper") -> Trajectory:
    r"""The exact GD iterates of `run_gd` in closed form, from `eigh` of the training Gram matrix.

    In the eigenbasis V of Σ_tr each mode of the error D̄ = VᵀD decays geometrically, by the factor
    ρ per step, towards its fixed point D̄_∞:

    .. math::
        \Sigma_{\rm tr} = V{\rm diag}(\nu)V^\top,\quad \bar D_t = V^\top D_t
        = \rho^t(\bar D_0 - \bar D_\infty) + \bar D_\infty,\quad
        \rho = 1 - \eta\Big(\frac{2\nu}{d_{\rm out}} + c\Big),\quad
        \bar D_\infty = \frac{\frac{2}{d_{\rm out}}\bar F - c\bar T}{\frac{2\nu}{d_{\rm out}} + c}

    (c = γ/d_out in the paper convention; modes with 2ν/d_out + c = 0 do not move, and eigenvalues
    below ν_max·max(N, d_in)·machine ε are the null space, set to 0), and the losses of `run_gd`
    evaluated on it.  This is GD, not an approximation; t may be real (continuous
    interpolation ρᵗ) when every ρ > 0.  Runs in float64.

    Parameters
    ----------
    data : TeacherStudentData or SpectralDraws
        The draws, or their eigen-projections from `spectral_draws` (no `eigh` then).
    eta : float
        Learning rate η > 0.  Every ρ ≥ −1 is needed (GD stable); non-integer `ts` need every ρ > 0.
    ts : array_like
        1-D array of times t ≥ 0, in GD steps, at which to evaluate the losses (real values
        allowed when every ρ > 0).
    gamma : float
        Weight decay γ ≥ 0 in the convention `wd_convention`; default 0.
    wd_convention : {"paper", "torch"}
        How `gamma` is meant: `"paper"` (default), the decay γ/d_out of paper eq. 3, or `"torch"`,
        PyTorch's `SGD(weight_decay=gamma)` (decay γ).

    Returns
    -------
    Trajectory
        `times` = `ts`; metrics `loss_train`, `loss_gen` of shape `(*data.batch_shape, len(ts))`;
        `config` a `SpectralConfig`.

    Raises
    ------
    SimulationDiverged
        If some mode has ρ < −1 (GD diverges).
    DomainError
        For non-integer `ts` while some ρ < 0, and for invalid arguments.

    References
    ----------
    Spec `levi:eq5`, `levi:gd-exact` (section 7.1), per-mode solution `levi:eq33` in GD form,
    update `levi:eq3`.
    """
    enable_x64()
    _check_data(data, (TeacherStudentData, SpectralDraws))
    eta = positive(eta, "eta", scalar=True)
    gamma = nonnegative(gamma, "gamma", scalar=True)
    wd_convention = choice(wd_convention, "wd_convention", ("paper", "torch"))
    t = nonnegative(ts, "ts")
    if t.ndim != 1:
        raise DomainError(f"ts must be a 1-D array of times (got shape {t.shape})")
    config = SpectralConfig(d_in=data.d_in, d_out=data.d_out, n_train=data.n_train, lam=data.lam,
                            init_scale=data.init_scale, sigma2=data.sigma2, seeds=data.seeds, eta=eta, gamma=gamma,
                            wd_convention=wd_convention)
    dec = _decompose(data, eta, gamma, wd_convention)
    _check_rho(dec, config, continuous=False, t_nonint=bool(np.any(t != np.round(t))))
    nb = len(data.batch_shape)
    _, loss_fn = _spectral_fns(nb)
    tt = jnp.broadcast_to(jnp.asarray(t, jnp.float64), data.batch_shape + t.shape)
    l_tr, l_gen = jax.device_get(loss_fn(dec, tt))
    return Trajectory(times=t, metrics={"loss_train": np.asarray(l_tr), "loss_gen": np.asarray(l_gen)}, config=config)


_N_DOUBLINGS = 64  # bracket search on t = 0, 1, 2, 4, ..., 2**63
_N_BISECTIONS = 80  # halves the bracket 2**80 times: far below float64 resolution of t


def _crossing_one(dec: dict[str, jax.Array], loss_star: jax.Array) -> tuple[jax.Array, jax.Array]:
    """First t with L(t) <= loss_star for train and gen (0 if at t=0, inf if never), by bisection."""
    grid = jnp.concatenate([jnp.zeros(1), 2.0 ** jnp.arange(_N_DOUBLINGS - 1, dtype=jnp.float64)])
    l_tr, l_gen = _spectral_losses(dec, grid)

    def one(curve: jax.Array, which: int) -> jax.Array:
        below = curve <= loss_star
        k = jnp.argmax(below)
        lo = grid[jnp.maximum(k - 1, 0)]
        hi = grid[k]

        def body(_: Any, bracket: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
            a, b = bracket
            mid = 0.5 * (a + b)
            ok = _spectral_losses(dec, mid)[which] <= loss_star
            return jnp.where(ok, a, mid), jnp.where(ok, mid, b)

        _, hi = jax.lax.fori_loop(0, _N_BISECTIONS, body, (lo, hi))
        return jnp.where(below[0], 0.0, jnp.where(jnp.any(below), hi, jnp.inf))

    return one(l_tr, 0), one(l_gen, 1)


@functools.lru_cache(maxsize=None)
def _crossing_fn(n_batch: int) -> Any:
    return jax.jit(_vmap_n(_crossing_one, n_batch))


@cites("levi:tstar", "levi:grok-def", "levi:gd-exact")
def crossing_times(data: TeacherStudentData, eta: float, loss_star: float, *, gamma: float = 0.0,
                   wd_convention: str = "paper") -> CrossingTimes:
    r"""First (continuous) GD time at which the training / generalisation loss reaches `loss_star`, per seed.

    The crossing times t∗_tr and t∗_gen of the loss threshold L∗, and their difference, the
    grokking time Δt:

    .. math::
        t^*_{\rm tr/gen} = \min\{t \ge 0 : \mathcal L_{\rm tr/gen}(t) \le \mathcal L^*\},\qquad
        \Delta t = t^*_{\rm gen} - t^*_{\rm tr}

    with the exact GD losses of `run_gd_spectral` on continuous t: a bracket from the doubling
    grid t = 0, 1, 2, 4, ... (first grid point with L ≤ L∗), then 80 bisections.  For losses that
    decrease monotonically (no weight decay, no label noise, ρ > 0) this is the first crossing;
    otherwise it is a crossing inside the first bracket.  t∗ = 0 if L(0) ≤ L∗; t∗ = inf if no grid
    point up to 2⁶² steps is below L∗ (e.g. when the t → ∞ limit is not below L∗, spec
    `levi:grok-def`).  Runs in float64.

    Parameters
    ----------
    data : TeacherStudentData or SpectralDraws
        The draws, or their eigen-projections from `spectral_draws` (no `eigh` then).
    eta : float
        Learning rate η > 0; continuous t needs every mode factor ρ = 1 − η(2ν/d_out + c) > 0,
        i.e. η < d_out/(2ν_max + γ) in the paper convention.
    loss_star : float
        The loss threshold L∗ > 0 (e.g. `grokclocks.linear.loss_threshold(eps, d_out, level)`).
    gamma : float
        Weight decay γ ≥ 0 in the convention `wd_convention`; default 0.
    wd_convention : {"paper", "torch"}
        How `gamma` is meant: `"paper"` (default), the decay γ/d_out of paper eq. 3, or `"torch"`,
        PyTorch's `SGD(weight_decay=gamma)` (decay γ).

    Returns
    -------
    CrossingTimes
        `t_train`, `t_gen`, `grok_time` in GD steps, of shape `data.batch_shape`; `grok_time` is
        NaN where both times are inf (neither loss reaches `loss_star`: no grokking time, the
        convention of `grokclocks.linear.grok_time_grid`).

    Raises
    ------
    SimulationDiverged
        If some mode has ρ < −1 (GD diverges).
    DomainError
        If some ρ < 0 (η too large for continuous t), or an argument is outside its domain.

    References
    ----------
    Spec `levi:tstar`, `levi:grok-def`, section 7.1 (bisection with the exact GD iterates).
    """
    enable_x64()
    _check_data(data, (TeacherStudentData, SpectralDraws))
    eta = positive(eta, "eta", scalar=True)
    gamma = nonnegative(gamma, "gamma", scalar=True)
    loss_star = positive(loss_star, "loss_star", scalar=True)
    wd_convention = choice(wd_convention, "wd_convention", ("paper", "torch"))
    config = SpectralConfig(d_in=data.d_in, d_out=data.d_out, n_train=data.n_train, lam=data.lam,
                            init_scale=data.init_scale, sigma2=data.sigma2, seeds=data.seeds, eta=eta, gamma=gamma,
                            wd_convention=wd_convention, loss_star=loss_star)
    dec = _decompose(data, eta, gamma, wd_convention)
    _check_rho(dec, config, continuous=True, t_nonint=True)
    nb = len(data.batch_shape)
    ls = jnp.broadcast_to(jnp.asarray(loss_star, jnp.float64), data.batch_shape)
    t_tr, t_gen = (np.asarray(x) for x in jax.device_get(_crossing_fn(nb)(dec, ls)))
    with np.errstate(invalid="ignore"):
        dt = t_gen - t_tr
    return CrossingTimes(t_train=t_tr, t_gen=t_gen, grok_time=dt, config=config)
