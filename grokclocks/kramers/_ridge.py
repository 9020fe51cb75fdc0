"""The ridge-regression solvable model: gradient flow / descent, losses, timescales and the delay."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from scipy import linalg, optimize

from .. import _pointwise as PW
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._conventions import _decay_parts, decay_rate
from ._readout import _sym, _times

_DBL_MAX = float(np.finfo(np.float64).max)

__all__ = ["RidgeTimescales", "rf_interpolant_norm", "ridge_delay", "ridge_gd", "ridge_gf",
           "ridge_grok_time_asymptotic", "ridge_losses", "ridge_timescales"]


class RidgeTimescales(NamedTuple):
    r"""Result of `ridge_timescales`: `tau_par` = τ∥ and `tau_perp` = τ⊥, in gradient-flow time."""

    tau_par: float
    """τ∥ = 1/(μ⁺_min + γ), the slowest relaxation inside the row space of Φ."""
    tau_perp: float
    """τ⊥ = 1/γ, the decay time of the null-space part."""


def _ridge_setup(Phi: Any, lam: Any, penalty: str) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    Phi = V.as_float_array(Phi, "Phi")
    if Phi.ndim != 2:
        raise DomainError(f"Phi must be (n, D) (got shape {Phi.shape})")
    n, D = Phi.shape
    with np.errstate(over="ignore"):  # gamma = 2 lam is inf for lam > 9e307: see _decay_parts
        g = V.scalar(decay_rate(lam, penalty), "lam")
    # thin SVD: Phi = U s V^T; A = Phi^T Phi / n has eigenvalues s^2/n on the row space
    _, s, Vt = np.linalg.svd(Phi, full_matrices=False)
    keep = s > 1e-12 * (s[0] if s.size else 1.0)
    mu = s[keep] ** 2 / n
    Vr = Vt[keep].T  # (D, r)
    return Phi, g, mu, Vr


def _ridge_parts(Phi, y, lam, theta0, penalty):
    Phi, g, mu, Vr = _ridge_setup(Phi, lam, penalty)
    n, D = Phi.shape
    y = V.as_float_array(y, "y")
    theta0 = V.as_float_array(theta0, "theta0")
    if y.shape != (n,) or theta0.shape != (D,):
        raise DomainError(f"y must be ({n},) and theta0 ({D},) (got {y.shape}, {theta0.shape})")
    b = Phi.T @ y / n
    lam_v, c = _decay_parts(lam, penalty)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # theta_gamma = Vr c_g; c_g = b_r / (mu + gamma), as (b_r / lam) / (mu / lam + c) where gamma overflows
        c_g = np.where(np.isfinite(g), (Vr.T @ b) / (mu + g), ((Vr.T @ b) / lam_v) / (mu / lam_v + c))
    c0 = Vr.T @ theta0
    perp0 = theta0 - Vr @ c0
    return Phi, g, mu, Vr, c_g, c0, perp0


@cites("kramers:ridge-gf")
def ridge_gf(Phi: Any, y: Any, lam: float, theta0: Any, t: Any, penalty: str = "eq2") -> np.ndarray:
    r"""Exact gradient flow of ridge regression, F = (1/(2n))‖Φθ − y‖² + (γ/2)‖θ‖².

    .. math:: \theta(t)=\theta_\gamma+e^{-(A+\gamma I)t}(\theta_0-\theta_\gamma),\quad A=\Phi^\top\Phi/n,\quad
              \theta_\gamma=(A+\gamma I)^{-1}\Phi^\top y/n.

    In words: θ relaxes from θ₀ to the ridge solution θ_γ at the rates of A + γI, A = ΦᵀΦ/n; the null-space
    part decays exactly as e^(−γt). Computed from the thin SVD of Φ (no dense matrix exponential).

    Parameters
    ----------
    Phi : array_like
        The feature matrix Φ, an (n, D) array: n training points, D features.
    y : array_like
        The training targets y, an (n,) array.
    lam : float
        λ, the weight-decay coefficient of the penalty named by `penalty`; λ > 0.
    theta0 : array_like
        The initial parameters θ₀, a (D,) array.
    t : float or array_like
        Gradient-flow time(s) t ≥ 0, a scalar or a 1-d array.
    penalty : {"eq2", "half"}
        The penalty convention (spec convention C1). "eq2" (default): the objective L + λ‖θ‖² of the
        paper's eq. (2), decay rate γ = 2λ. "half": L + (λ/2)‖θ‖² (§2.5–2.6 of the paper, Lyu et al.), γ =
        λ.

    Returns
    -------
    ndarray
        θ(t): shape (D,) for a scalar `t`, (len(t), D) for a 1-d `t`.

    References
    ----------
    Spec `kramers:ridge-gf`.
    """
    Phi, g, mu, Vr, c_g, c0, perp0 = _ridge_parts(Phi, y, lam, theta0, penalty)
    lam_v, cg = _decay_parts(lam, penalty)
    tt = _times(t)
    T1 = np.atleast_1d(tt)
    with np.errstate(over="ignore", under="ignore"):
        gt = cg * (lam_v * T1)  # gamma t, 0 at t = 0 also where gamma = 2 lam overflows
        x = np.multiply.outer(T1, mu) + gt[:, None]
        c = c0 * np.exp(-x) + c_g * -np.expm1(-x)  # not c_g + e^{-x}(c0 - c_g): cancels for x << 1
        out = c @ Vr.T + np.exp(-gt)[:, None] * perp0
    return out[0] if tt.ndim == 0 else out


@cites("kramers:ridge-gd")
def ridge_gd(Phi: Any, y: Any, lam: float, theta0: Any, eta: float, k: Any, penalty: str = "eq2",
             allow_unstable: bool = False) -> np.ndarray:
    r"""Exact discrete gradient-descent iterate of ridge regression, θ_k = θ_γ + (I − η(A + γI))ᵏ(θ₀ − θ_γ).

    Stable if and only if η(μ_max + γ) < 2, μ_max the largest eigenvalue of A = ΦᵀΦ/n (else `DomainError`,
    unless `allow_unstable`).

    Parameters
    ----------
    Phi : array_like
        The feature matrix Φ, an (n, D) array: n training points, D features.
    y : array_like
        The training targets y, an (n,) array.
    lam : float
        λ, the weight-decay coefficient of the penalty named by `penalty`; λ > 0.
    theta0 : array_like
        The initial parameters θ₀, a (D,) array.
    eta : float
        The learning rate η > 0.
    k : int or array_like
        The step count(s) k ≥ 0, an integer or a 1-d integer array.
    penalty : {"eq2", "half"}
        The penalty convention (spec convention C1). "eq2" (default): the objective L + λ‖θ‖² of the
        paper's eq. (2), decay rate γ = 2λ. "half": L + (λ/2)‖θ‖² (§2.5–2.6 of the paper, Lyu et al.), γ =
        λ.
    allow_unstable : bool
        Whether to return the (diverging) iterates where η(μ_max + γ) ≥ 2; default False (`DomainError`).

    Returns
    -------
    ndarray
        θ_k: shape (D,) for a scalar `k`, (len(k), D) for a 1-d `k`.

    References
    ----------
    Spec `kramers:ridge-gd`.
    """
    Phi, g, mu, Vr, c_g, c0, perp0 = _ridge_parts(Phi, y, lam, theta0, penalty)
    eta = V.positive(eta, "eta", scalar=True)
    mmax = float(mu.max()) if mu.size else 0.0
    if eta * (mmax + g) >= 2 and not allow_unstable:
        raise DomainError(f"eta must be < 2/(mu_max + gamma) = {2 / (mmax + g):.6g} for stable GD (got {eta!r})")
    kk = np.asarray(k)
    if not np.issubdtype(kk.dtype, np.integer) or np.any(kk < 0) or kk.ndim > 1:
        raise DomainError(f"k must be a non-negative integer or 1-D array of them (got {k!r})")
    K1 = np.atleast_1d(kk).astype(np.float64)
    step = eta * (mu + g)
    fac = np.power.outer(1.0 - step, K1).T  # (len(k), r)
    # 1 - (1 - step)^k = -expm1(k log1p(-step)) for step < 1 (no cancellation for k step << 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        one_minus = np.where(step < 1.0, -np.expm1(np.multiply.outer(K1, np.log1p(-np.minimum(step, 0.5)))),
                             1.0 - fac)
    one_minus = np.where(step < 0.5, one_minus, 1.0 - fac)
    c = c0 * fac + c_g * one_minus
    out = c @ Vr.T + np.power(1.0 - eta * g, K1)[:, None] * perp0
    return out[0] if kk.ndim == 0 else out


def _test_spec(Phi_test, y_test, theta_teacher, D):
    given_set = Phi_test is not None or y_test is not None
    if given_set == (theta_teacher is not None):
        raise DomainError("give exactly one test specification: (Phi_test, y_test) or theta_teacher")
    if given_set:
        if Phi_test is None or y_test is None:
            raise DomainError("Phi_test and y_test must be given together")
        Pt = V.as_float_array(Phi_test, "Phi_test")
        yt = V.as_float_array(y_test, "y_test")
        if Pt.ndim != 2 or Pt.shape[1] != D or yt.shape != (Pt.shape[0],):
            raise DomainError(f"Phi_test must be (m, {D}) and y_test (m,) (got {Pt.shape}, {yt.shape})")
        return lambda th: 0.5 * np.mean((th @ Pt.T - yt) ** 2, axis=-1)
    tT = V.as_float_array(theta_teacher, "theta_teacher")
    if tT.shape != (D,):
        raise DomainError(f"theta_teacher must have shape ({D},) (got {tT.shape})")
    return lambda th: 0.5 * np.sum((th - tT) ** 2, axis=-1)


@cites("kramers:ridge-loss")
def ridge_losses(Phi: Any, y: Any, lam: float, theta0: Any, t: Any, Phi_test: Any = None, y_test: Any = None,
                 theta_teacher: Any = None, penalty: str = "eq2") -> tuple[Any, Any]:
    r"""Train and test loss along the exact ridge gradient flow.

    .. math:: \mathcal L_{\rm tr}=\tfrac1{2n}\|\Phi\theta(t)-y\|^2,\qquad
              \mathcal L_{\rm te}=\tfrac1{2n_{\rm te}}\|\Phi_{\rm te}\theta(t)-y_{\rm te}\|^2\ \text{or}\ \tfrac12\|\theta(t)-\theta_T\|^2.

    In words: half the mean squared training residual, and either half the mean squared test residual or half
    the squared distance to the teacher. Exactly one of (`Phi_test`, `y_test`) or `theta_teacher` must be
    given.

    Parameters
    ----------
    Phi : array_like
        The feature matrix Φ, an (n, D) array: n training points, D features.
    y : array_like
        The training targets y, an (n,) array.
    lam : float
        λ, the weight-decay coefficient of the penalty named by `penalty`; λ > 0.
    theta0 : array_like
        The initial parameters θ₀, a (D,) array.
    t : float or array_like
        Gradient-flow time(s) t ≥ 0, a scalar or a 1-d array.
    Phi_test : array_like or None
        The test feature matrix Φ_te, an (m, D) array, given together with `y_test`; or `None` (default)
        with `theta_teacher` given instead.
    y_test : array_like or None
        The test targets, an (m,) array, given together with `Phi_test`; or `None` (default).
    theta_teacher : array_like or None
        The teacher parameters θ_T, a (D,) array: the test loss is then ½‖θ − θ_T‖²; or `None` (default)
        with `Phi_test` and `y_test` given instead.
    penalty : {"eq2", "half"}
        The penalty convention (spec convention C1). "eq2" (default): the objective L + λ‖θ‖² of the
        paper's eq. (2), decay rate γ = 2λ. "half": L + (λ/2)‖θ‖² (§2.5–2.6 of the paper, Lyu et al.), γ =
        λ.

    Returns
    -------
    (train, test) : tuple of float or ndarray
        The two losses, each a float for a scalar `t` or an array of the length of `t`.

    References
    ----------
    Spec `kramers:ridge-loss`.
    """
    Phi_a = V.as_float_array(Phi, "Phi")
    test = _test_spec(Phi_test, y_test, theta_teacher, Phi_a.shape[1] if Phi_a.ndim == 2 else -1)
    th = ridge_gf(Phi, y, lam, theta0, t, penalty)
    y = np.asarray(y, dtype=np.float64)
    tr = 0.5 * np.mean((th @ Phi_a.T - y) ** 2, axis=-1)
    return V.scalar_or_array(tr), V.scalar_or_array(test(th))


@cites("kramers:ridge-rates")
def ridge_timescales(Phi: Any, lam: float, penalty: str = "eq2") -> RidgeTimescales:
    r"""The two ridge timescales τ∥ = 1/(μ⁺_min + γ) and τ⊥ = 1/γ.

    μ⁺_min = λ⁺_min(ΦᵀΦ)/n is the smallest positive eigenvalue of ΦᵀΦ/n: τ∥ is the slowest relaxation inside
    the row space of Φ, τ⊥ the decay of the null-space part.

    Parameters
    ----------
    Phi : array_like
        The feature matrix Φ, an (n, D) array: n training points, D features.
    lam : float
        λ, the weight-decay coefficient of the penalty named by `penalty`; λ > 0.
    penalty : {"eq2", "half"}
        The penalty convention (spec convention C1). "eq2" (default): the objective L + λ‖θ‖² of the
        paper's eq. (2), decay rate γ = 2λ. "half": L + (λ/2)‖θ‖² (§2.5–2.6 of the paper, Lyu et al.), γ =
        λ.

    Returns
    -------
    RidgeTimescales
        (tau_par, tau_perp) in gradient-flow time.

    References
    ----------
    Spec `kramers:ridge-rates`.
    """
    _, g, mu, _ = _ridge_setup(Phi, lam, penalty)
    return RidgeTimescales(1.0 / (float(mu.min()) + g), 1.0 / g)


@cites("kramers:ridge-delay")
@V.broadcasting("null_norm2", "eps_test", "lam")
def ridge_grok_time_asymptotic(null_norm2: Any, eps_test: Any, lam: Any, penalty: str = "eq2") -> float | np.ndarray:
    r"""Asymptotic ridge grokking time t_grok ≈ ln(‖P⊥θ₀‖²/(2ε_te))/(2γ).

    Valid for γ ≪ μ⁺_min, a teacher in the row space and ‖P⊥θ₀‖² ≫ 2ε (measured 474.146 against the exact
    474.154 in the spec's example).

    Parameters
    ----------
    null_norm2 : float or array_like
        ‖P⊥θ₀‖² > 2ε_te, the squared norm of the initial parameters' component in the null space of Φ.
    eps_test : float or array_like
        ε_te > 0, the test-loss threshold that defines grokking.
    lam : float or array_like
        λ, the weight-decay coefficient of the penalty named by `penalty`; λ > 0.
    penalty : {"eq2", "half"}
        The penalty convention (spec convention C1). "eq2" (default): the objective L + λ‖θ‖² of the
        paper's eq. (2), decay rate γ = 2λ. "half": L + (λ/2)‖θ‖² (§2.5–2.6 of the paper, Lyu et al.), γ =
        λ.

    Returns
    -------
    float or ndarray
        t_grok in gradient-flow time, the broadcast shape of the arguments.

    References
    ----------
    Spec `kramers:ridge-delay`.
    """
    sc = PW.scalars(null_norm2, eps_test, lam)
    nn = V.positive(null_norm2, "null_norm2", scalar=sc)
    e = V.positive(eps_test, "eps_test", scalar=sc)
    g = decay_rate(lam, penalty)  # a float for a number, else a new array (a product of lam)
    with np.errstate(over="ignore"):  # 2 eps_test = inf is refused below; inf for a subnormal decay rate
        two_e = 2.0 * e
        if sc:  # three numbers: the same operations on floats
            if nn <= two_e:
                raise DomainError(f"null_norm2 must be > 2 eps_test for the asymptotic form (got {nn!r} <= "
                                  f"{two_e!r})")
            return float(PW.log_quotient(nn, two_e)) / (2.0 * g)
        nn_ext, e_ext = PW.extrema(nn), PW.extrema(two_e)
        if nn_ext[0] <= e_ext[1]:  # some point may break the condition: the exact test (else none does)
            nb, eb = np.broadcast_arrays(nn, two_e)
            bad = nb <= eb
            if np.any(bad):
                k = np.unravel_index(int(np.argmax(bad)), bad.shape) if bad.ndim else ()
                raise DomainError(f"null_norm2 must be > 2 eps_test for the asymptotic form (got {float(nb[k])!r} "
                                  f"<= {float(eb[k])!r})")
        lq = PW.log_quotient(nn, two_e, extrema=(nn_ext, e_ext))
        den = np.multiply(g, 2.0, out=g) if isinstance(g, np.ndarray) and g.ndim else 2.0 * g  # g: our own array
        return V.scalar_or_array(np.divide(lq, den, out=PW.into(lq, den)))



def _first_passage(f: Callable[[np.ndarray], np.ndarray], level: float, t_max: float, t_fast: float,
                   name: str = "level") -> float:
    """First t in [0, t_max] with f(t) <= level: log grid scan then brentq.  A `DomainError` naming `name` where
    the level lies within the rounding of the loss, so that the grid's values and the bracket's own evaluations
    disagree on the side of the level (eps_test = 5e-324 with theta0 = theta_teacher: the loss at t = 0 is 0 on
    the grid and 6e-33 alone; brentq raised "f(a) and f(b) must have different signs")."""
    if f(np.array([0.0]))[0] <= level:
        return 0.0
    # from 1e-6 of the fast time (not of t_max: with t_max = 50 / gamma ~ 1e300 the first bracket would
    # span 300 decades and brentq would not converge), 8 points per decade at least
    t_lo = 1e-6 * min(t_fast, t_max)
    n_grid = max(4000, int(8 * (math.log10(t_max) - math.log10(t_lo))))  # t_max / t_lo may overflow
    grid = np.concatenate([[0.0], np.geomspace(t_lo, t_max, n_grid)])
    vals = f(grid) - level
    hit = np.nonzero(vals <= 0)[0]
    if not hit.size:
        return math.inf
    i = int(hit[0])

    def g(s: float) -> float:
        return float(f(np.array([s]))[0]) - level

    ga, gb = (g(float(grid[i - 1])), g(float(grid[i]))) if i else (math.nan, math.nan)
    if gb == 0.0:
        return float(grid[i])
    if not (ga > 0.0 > gb):
        raise DomainError(f"{name} = {level!r} lies within the rounding of the loss near t = {float(grid[i])!r} "
                          "(the first passage below it is not determined); take a larger level")
    return float(optimize.brentq(g, grid[i - 1], grid[i], xtol=1e-14, rtol=1e-13))


@cites("kramers:ridge-delay")
def ridge_delay(Phi: Any, y: Any, lam: float, theta0: Any, eps_train: float, eps_test: float,
                theta_teacher: Any = None, Phi_test: Any = None, y_test: Any = None, penalty: str = "eq2",
                t_max: float | None = None) -> dict[str, float]:
    r"""Exact first-passage memorisation and grokking times of the ridge flow, and the corrected delay ratio.

    t_mem = min{t : L_tr ≤ ε_tr}, t_grok = min{t : L_te ≤ ε_te} (log-grid scan for the first sign change, then
    `brentq`). The asymptotic ratio (erratum kramers-5; the paper's 1/(λλ⁺_min) is neither a time nor a ratio):

    .. math:: \frac{t_{\rm grok}}{t_{\rm mem}}\sim\frac{\mu^+_{\min}}{\gamma}=\frac{\lambda^+_{\min}(\Phi^\top\Phi)}{n\gamma}.

    In words: the smallest positive eigenvalue of ΦᵀΦ/n over the decay rate γ.

    Parameters
    ----------
    Phi : array_like
        The feature matrix Φ, an (n, D) array: n training points, D features.
    y : array_like
        The training targets y, an (n,) array.
    lam : float
        λ, the weight-decay coefficient of the penalty named by `penalty`; λ > 0.
    theta0 : array_like
        The initial parameters θ₀, a (D,) array.
    eps_train : float
        ε_tr > 0, the training-loss threshold of memorisation.
    eps_test : float
        ε_te > 0, the test-loss threshold of grokking.
    theta_teacher : array_like or None
        The teacher parameters θ_T, a (D,) array: the test loss is then ½‖θ − θ_T‖²; or `None` (default)
        with `Phi_test` and `y_test` given instead.
    Phi_test : array_like or None
        The test feature matrix Φ_te, an (m, D) array, given together with `y_test`; or `None` (default)
        with `theta_teacher` given instead.
    y_test : array_like or None
        The test targets, an (m,) array, given together with `Phi_test`; or `None` (default).
    penalty : {"eq2", "half"}
        The penalty convention (spec convention C1). "eq2" (default): the objective L + λ‖θ‖² of the
        paper's eq. (2), decay rate γ = 2λ. "half": L + (λ/2)‖θ‖² (§2.5–2.6 of the paper, Lyu et al.), γ =
        λ.
    t_max : float or None
        The end t_max > 0 of the search in gradient-flow time; default `None`, meaning 50/γ.

    Returns
    -------
    dict
        `t_mem`, `t_grok` (gradient-flow time; `inf` where a threshold is not reached by `t_max`), their
        `ratio` and `ratio_asymptotic` = μ⁺_min/γ.

    Raises
    ------
    DomainError
        Where `t_max` is not given and 50/γ is beyond the double range (λ < 1.4·10⁻³⁰⁷ for "eq2"): pass a
        finite `t_max`; where `eps_train` or `eps_test` lies within the rounding of its loss (e.g. 5·10⁻³²⁴
        with `theta0` at the teacher), so that the first passage below it is not determined; besides invalid
        arguments.

    References
    ----------
    Spec `kramers:ridge-delay`.
    """
    e_tr = V.positive(eps_train, "eps_train", scalar=True)
    e_te = V.positive(eps_test, "eps_test", scalar=True)
    Phi_a = V.as_float_array(Phi, "Phi")
    _test_spec(Phi_test, y_test, theta_teacher, Phi_a.shape[1] if Phi_a.ndim == 2 else -1)
    _, g, mu, _ = _ridge_setup(Phi, lam, penalty)
    lam_v, c = _decay_parts(lam, penalty)
    mu_min = float(mu.min())
    if t_max is None:
        tm = (50.0 / c) / lam_v
        if not math.isfinite(tm):
            raise DomainError(f"lam must be >= {50.0 / c / _DBL_MAX:.3g} for the default t_max = 50/gamma (got {lam_v!r}: "
                              "50/gamma overflows); pass a finite t_max")
    else:
        tm = V.positive(t_max, "t_max", scalar=True)
    t_fast = 1.0 / (mu_min + g) if math.isfinite(mu_min + g) else (1.0 / c) / lam_v  # tau_par (1/gamma if gamma overflows)

    def losses(tt):
        return ridge_losses(Phi, y, lam, theta0, np.asarray(tt, dtype=np.float64), Phi_test, y_test, theta_teacher,
                            penalty)

    t_mem = _first_passage(lambda s: np.atleast_1d(losses(s)[0]), e_tr, tm, t_fast, "eps_train")
    t_grok = _first_passage(lambda s: np.atleast_1d(losses(s)[1]), e_te, tm, t_fast, "eps_test")
    ratio = t_grok / t_mem if t_mem > 0 else math.inf
    return dict(t_mem=t_mem, t_grok=t_grok, ratio=ratio, ratio_asymptotic=(mu_min / lam_v) / c)


@cites("kramers:rf-norm")
def rf_interpolant_norm(K_a: Any, y: Any) -> float:
    r"""Norm ‖a⋆‖ = √(yᵀK⁻¹y) of the minimum-norm random-feature readout interpolant (Cholesky).

    Erratum kramers-7: since λ_min(K₀⁽ᵃ⁾) grows like N^(1−2α), this shrinks like N^(α−1/2) (the paper says O(√N)).

    Parameters
    ----------
    K_a : array_like
        The readout kernel K₀⁽ᵃ⁾, an (n, n) symmetric positive definite array.
    y : array_like
        The targets y, an (n,) array.

    Returns
    -------
    float
        ‖a⋆‖.

    References
    ----------
    Spec `kramers:rf-norm`.
    """
    K = _sym(K_a, "K_a")
    y = V.as_float_array(y, "y")
    if y.shape != (K.shape[0],):
        raise DomainError(f"y must have shape ({K.shape[0]},) (got {y.shape})")
    try:
        c = linalg.cho_factor(K, lower=True)
    except linalg.LinAlgError as exc:
        raise DomainError("K_a must be symmetric positive definite (Cholesky failed)") from exc
    return float(math.sqrt(float(y @ linalg.cho_solve(c, y))))
