"""The diagonal linear net β = u⊙u − v⊙v of the Lyu et al. check (`kramers:lyu`): JAX GD and a stiff Radau reference.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ... import _validate as V, kramers as K
from ..._validate import DomainError, integer_at_least, positive
from ...citations import cites
from .._runtime import enable_x64, SimulationDiverged
from ._arguments import _targets


def _diag_setup(X, y, lam, penalty, Sigma_test=None, beta_star=None, rel_level=0.05):
    X = V.as_float_array(X, "X")
    if X.ndim != 2:
        raise DomainError(f"X must be (n, D) (got shape {X.shape})")
    y = _targets(y, X.shape[0])
    n, D = X.shape
    S = V.as_float_array(Sigma_test, "Sigma_test")
    if S.shape != (D, D):
        raise DomainError(f"Sigma_test must be ({D}, {D}) (got {S.shape})")
    bs = V.as_float_array(beta_star, "beta_star")
    if bs.shape != (D,):
        raise DomainError(f"beta_star must have shape ({D},) (got {bs.shape})")
    V.in_open_interval(rel_level, "rel_level", 0.0, 1.0, scalar=True)
    with np.errstate(over="ignore"):  # gamma = 2 lam is inf for lam > 9e307 (rejected by the callers' rate checks)
        return X.T @ X / n, X.T @ y / n, V.scalar(K.decay_rate(lam, penalty), "lam")


_MAX_ODE_RATE = 1e300  # largest rate (Jacobian entry) given to the float64 Radau solve


@cites("kramers:lyu")
def diagonal_net_gf(X: Any, y: Any, Sigma_test: Any, beta_star: Any, init_scale: float, lam: float,
                    penalty: str = "eq2", rel_level: float = 0.05, t_max: float = 2000.0,
                    rtol: float = 1e-8, atol: float = 1e-10) -> dict[str, float]:
    r"""Gradient flow of the diagonal linear net β = u⊙u − v⊙v (stiff; the scipy Radau reference).

    The loss is ‖Xβ − y‖²/(2n) + (γ/2)(‖u‖² + ‖v‖²) with γ the decay rate of `lam` (`"eq2"`:
    λ(‖u‖² + ‖v‖²)), from u = v = s·1 (β = 0); the test loss is ½(β − β∗)ᵀΣ_te(β − β∗).

    Parameters
    ----------
    X : array_like
        Inputs, shape (n, D).
    y : array_like
        Targets, shape (n,).
    Sigma_test : array_like
        Test covariance Σ_te, shape (D, D).
    beta_star : array_like
        The teacher β∗, shape (D,).
    init_scale : float
        Initial scale s > 0 (u = v = s·1).
    lam : float
        Weight-decay coefficient λ > 0.
    penalty : {"eq2", "half"}
        Convention of the weight decay: `"eq2"` (default; paper eq. 2) adds λ‖θ‖² to the loss, so
        the decay rate is γ = 2λ; `"half"` adds (λ/2)‖θ‖², γ = λ (Lyu et al.).
    rel_level : float
        Grokking level in (0, 1): t_grok is the first time the test loss is below `rel_level` ×
        its initial value; default 0.05.
    t_max : float
        End of the integration > 0, in gradient-flow time; default 2000.
    rtol : float
        Relative tolerance of the solver, in (0, 1); default 10⁻⁸.
    atol : float
        Absolute tolerance of the solver, > 0; default 10⁻¹⁰.

    Returns
    -------
    dict of str to float
        `t_grok` (first time the test loss < `rel_level` × initial) and `t_mem` (first time the
        train loss < 10⁻³ × initial), in gradient-flow time; inf if not reached by `t_max`.

    Raises
    ------
    DomainError
        If an argument is outside its domain, or a rate of the ODE leaves the range of a float64
        solve: 4s²·max|A| or γ above 10³⁰⁰ (`init_scale` ~ 10¹⁵⁰ and beyond, `lam` ~ 10³⁰⁰ and
        beyond; at 10³⁰⁸ the first right-hand side was inf − inf).

    References
    ----------
    Spec `kramers:lyu`.
    """
    from scipy.integrate import solve_ivp

    A, bvec, g = _diag_setup(X, y, lam, penalty, Sigma_test, beta_star, rel_level)
    t_max = positive(t_max, "t_max", scalar=True)
    rtol = V.in_open_interval(rtol, "rtol", 0.0, 1.0, scalar=True)
    atol = positive(atol, "atol", scalar=True)
    D = A.shape[0]
    S = np.asarray(Sigma_test, np.float64)
    bs = np.asarray(beta_star, np.float64)
    s = positive(init_scale, "init_scale", scalar=True)
    yy = float(np.mean(np.asarray(y, np.float64) ** 2))
    a_max = max(float(np.max(np.abs(A))), float(np.max(np.abs(bvec))), 1e-300)
    with np.errstate(over="ignore"):
        jac_scale = 4.0 * s * s * a_max  # the Jacobian's u u^T A entries at the start
    if not jac_scale <= _MAX_ODE_RATE:
        raise DomainError(f"init_scale must be <= {math.sqrt(_MAX_ODE_RATE / (4.0 * a_max)):.3g} for the float64 Radau "
                          f"solve (got {s!r}: the Jacobian's entries 4 s^2 |A| exceed {_MAX_ODE_RATE:g})")
    if not g <= _MAX_ODE_RATE:
        raise DomainError(f"lam must give a decay rate gamma <= {_MAX_ODE_RATE:g} for the float64 Radau solve "
                          f"(got lam = {float(lam)!r}, gamma = {g!r})")

    def rhs(t, z):
        u, v = z[:D], z[D:]
        gb = A @ (u * u - v * v) - bvec
        return np.concatenate([-2 * u * gb - g * u, 2 * v * gb - g * v])

    def jac(t, z):
        u, v = z[:D], z[D:]
        gb = A @ (u * u - v * v) - bvec
        Juu = -2 * np.diag(gb) - 4 * u[:, None] * A * u[None, :] - g * np.eye(D)
        Juv = 4 * u[:, None] * A * v[None, :]
        Jvu = 4 * v[:, None] * A * u[None, :]
        Jvv = 2 * np.diag(gb) - 4 * v[:, None] * A * v[None, :] - g * np.eye(D)
        return np.block([[Juu, Juv], [Jvu, Jvv]])

    def test_loss(z):
        bb = z[:D] ** 2 - z[D:] ** 2 - bs
        return 0.5 * bb @ S @ bb

    def train_loss(z):
        b = z[:D] ** 2 - z[D:] ** 2
        return 0.5 * (b @ A @ b - 2 * b @ bvec + yy)

    z0 = np.concatenate([s * np.ones(D), s * np.ones(D)])
    L0te, L0tr = test_loss(z0), train_loss(z0)
    ev_te = lambda t, z: test_loss(z) - rel_level * L0te  # noqa: E731
    ev_te.terminal, ev_te.direction = True, -1
    ev_tr = lambda t, z: train_loss(z) - 1e-3 * L0tr  # noqa: E731
    ev_tr.terminal, ev_tr.direction = False, -1
    sol = solve_ivp(rhs, (0, t_max), z0, method="Radau", jac=jac, rtol=rtol, atol=atol, events=[ev_te, ev_tr])
    tg = float(sol.t_events[0][0]) if sol.t_events[0].size else math.inf
    tm = float(sol.t_events[1][0]) if sol.t_events[1].size else math.inf
    return dict(t_grok=tg, t_mem=tm)


@functools.partial(jax.jit, static_argnames=("steps", "record_every"))
def _diag_scan(A, bvec, S, bs, z0, g, eta, steps, record_every):
    D = A.shape[0]

    def one(z, _):
        u, v = z[:D], z[D:]
        gb = A @ (u * u - v * v) - bvec
        return jnp.concatenate([u - eta * (2 * u * gb + g * u), v - eta * (-2 * v * gb + g * v)]), None

    def rec(z, _):
        z, _ = jax.lax.scan(one, z, None, length=record_every)
        bb = z[:D] ** 2 - z[D:] ** 2 - bs
        return z, 0.5 * bb @ S @ bb

    return jax.lax.scan(rec, z0, None, length=steps // record_every)[1]


@cites("kramers:lyu")
def diagonal_net_gd(X: Any, y: Any, Sigma_test: Any, beta_star: Any, init_scale: float, lam: float, eta: float,
                    steps: int, penalty: str = "eq2", rel_level: float = 0.05, record_every: int = 10) -> float:
    r"""Explicit GD (JAX, float64) of the diagonal linear net β = u⊙u − v⊙v: its grokking time.

    The model, loss and initialisation of `diagonal_net_gf`.  CPU-sized only for small
    `init_scale` (the stiffness grows as s²).

    Parameters
    ----------
    X : array_like
        Inputs, shape (n, D).
    y : array_like
        Targets, shape (n,).
    Sigma_test : array_like
        Test covariance Σ_te, shape (D, D).
    beta_star : array_like
        The teacher β∗, shape (D,).
    init_scale : float
        Initial scale s > 0 (u = v = s·1).
    lam : float
        Weight-decay coefficient λ > 0.
    eta : float
        Learning rate η > 0.
    steps : int
        Number of GD steps ≥ 1.
    penalty : {"eq2", "half"}
        Convention of the weight decay: `"eq2"` (default; paper eq. 2) adds λ‖θ‖² to the loss, so
        the decay rate is γ = 2λ; `"half"` adds (λ/2)‖θ‖², γ = λ (Lyu et al.).
    rel_level : float
        Grokking level in (0, 1); default 0.05.
    record_every : int
        Steps between two test-loss records, an integer in [1, `steps`]; default 10.

    Returns
    -------
    float
        t_grok = kη at the first record where the test loss is below `rel_level` × its initial
        value (gradient-flow time, resolution `record_every`·η); inf if never.

    Raises
    ------
    SimulationDiverged
        If the test loss becomes non-finite.
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `kramers:lyu`.
    """
    enable_x64()
    A, bvec, g = _diag_setup(X, y, lam, penalty, Sigma_test, beta_star, rel_level)
    eta = positive(eta, "eta", scalar=True)
    steps = integer_at_least(steps, "steps", 1)
    record_every = integer_at_least(record_every, "record_every", 1, maximum=steps)
    D = A.shape[0]
    s = positive(init_scale, "init_scale", scalar=True)
    z0 = jnp.full(2 * D, s, jnp.float64)
    bs = jnp.asarray(beta_star, jnp.float64)
    S = jnp.asarray(Sigma_test, jnp.float64)
    L0 = 0.5 * float(bs @ S @ bs)
    te = np.asarray(_diag_scan(jnp.asarray(A), jnp.asarray(bvec), S, bs, z0, g, float(eta),
                               integer_at_least(steps, "steps", 1), int(record_every)))
    if not np.all(np.isfinite(te)):
        raise SimulationDiverged(int(np.argmin(np.isfinite(te))) * record_every, "test loss", dict(eta=eta, s=s))
    hit = np.nonzero(te < rel_level * L0)[0]
    return float((hit[0] + 1) * record_every * eta) if hit.size else math.inf
