"""The ridge-regression solvable model: gradient flow / descent, losses, timescales and the delay."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from scipy import linalg, optimize

from .. import _floats as FL
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._conventions import _decay_parts, decay_rate
from ._readout import _sym, _times

_DBL_MAX = float(np.finfo(np.float64).max)

__all__ = ["RidgeTimescales", "rf_interpolant_norm", "ridge_delay", "ridge_gd", "ridge_gf",
           "ridge_grok_time_asymptotic", "ridge_losses", "ridge_timescales"]


class RidgeTimescales(NamedTuple):
    r"""The two ridge timescales :math:`(\tau_\parallel, \tau_\perp)` (:func:`ridge_timescales`)."""

    tau_par: float
    tau_perp: float


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
    r"""Exact gradient flow of ridge regression, :math:`F=\frac1{2n}\|\Phi\theta-y\|^2+\frac\gamma2\|\theta\|^2`.

    .. math:: \theta(t)=\theta_\gamma+e^{-(A+\gamma I)t}(\theta_0-\theta_\gamma),\quad A=\Phi^\top\Phi/n,\quad
              \theta_\gamma=(A+\gamma I)^{-1}\Phi^\top y/n.

    The null-space part decays exactly as :math:`e^{-\gamma t}`.  Thin SVD of Φ; no dense matrix exponential.

    Returns
    -------
    (D,) for scalar t, (len(t), D) for 1-D t.

    References
    ----------
    ``kramers:ridge-gf``.
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
    r"""Exact discrete GD iterate :math:`\theta_k=\theta_\gamma+(I-\eta(A+\gamma I))^k(\theta_0-\theta_\gamma)`.

    Stable iff :math:`\eta(\mu_{\max}+\gamma)<2` (else ``DomainError`` unless ``allow_unstable``).

    Parameters
    ----------
    k : int >= 0 or 1-D array of ints

    References
    ----------
    ``kramers:ridge-gd``.
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

    Exactly one of (``Phi_test``, ``y_test``) or ``theta_teacher`` must be given.

    References
    ----------
    ``kramers:ridge-loss``.
    """
    Phi_a = V.as_float_array(Phi, "Phi")
    test = _test_spec(Phi_test, y_test, theta_teacher, Phi_a.shape[1] if Phi_a.ndim == 2 else -1)
    th = ridge_gf(Phi, y, lam, theta0, t, penalty)
    y = np.asarray(y, dtype=np.float64)
    tr = 0.5 * np.mean((th @ Phi_a.T - y) ** 2, axis=-1)
    return V.scalar_or_array(tr), V.scalar_or_array(test(th))


@cites("kramers:ridge-rates")
def ridge_timescales(Phi: Any, lam: float, penalty: str = "eq2") -> RidgeTimescales:
    r"""The two ridge timescales :math:`\tau_\parallel=1/(\mu^+_{\min}+\gamma)` and :math:`\tau_\perp=1/\gamma`.

    :math:`\mu^+_{\min}=\lambda^+_{\min}(\Phi^\top\Phi)/n`.  Returns :class:`RidgeTimescales`
    ``(tau_par, tau_perp)``.

    References
    ----------
    ``kramers:ridge-rates``.
    """
    _, g, mu, _ = _ridge_setup(Phi, lam, penalty)
    return RidgeTimescales(1.0 / (float(mu.min()) + g), 1.0 / g)


@cites("kramers:ridge-delay")
def ridge_grok_time_asymptotic(null_norm2: float, eps_test: float, lam: float, penalty: str = "eq2") -> float:
    r"""Asymptotic ridge grokking time :math:`t_{\rm grok}\simeq\frac1{2\gamma}\ln\frac{\|P_\perp\theta_0\|^2}{2\varepsilon_{\rm te}}`.

    Valid for :math:`\gamma\ll\mu^+_{\min}`, teacher in the row space and :math:`\|P_\perp\theta_0\|^2\gg2\varepsilon`
    (measured 474.146 vs exact 474.154 in the spec's example).

    References
    ----------
    ``kramers:ridge-delay``.
    """
    nn = V.positive(null_norm2, "null_norm2", scalar=True)
    e = V.positive(eps_test, "eps_test", scalar=True)
    g = V.scalar(decay_rate(lam, penalty), "lam")
    if nn <= 2 * e:
        raise DomainError(f"null_norm2 must be > 2 eps_test for the asymptotic form (got {nn!r} <= {2 * e!r})")
    return float(FL.log_quotient(nn, 2.0 * e)) / (2.0 * g)



def _first_passage(f: Callable[[np.ndarray], np.ndarray], level: float, t_max: float, t_fast: float) -> float:
    """First t in [0, t_max] with f(t) <= level: log grid scan then brentq."""
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
    i = hit[0]
    return float(optimize.brentq(lambda s: f(np.array([s]))[0] - level, grid[i - 1], grid[i], xtol=1e-14, rtol=1e-13))


@cites("kramers:ridge-delay")
def ridge_delay(Phi: Any, y: Any, lam: float, theta0: Any, eps_train: float, eps_test: float,
                theta_teacher: Any = None, Phi_test: Any = None, y_test: Any = None, penalty: str = "eq2",
                t_max: float | None = None) -> dict[str, float]:
    r"""Exact first-passage memorisation / grokking times of the ridge flow and the **corrected** delay ratio.

    :math:`t_{\rm mem}=\min\{t:\mathcal L_{\rm tr}\le\varepsilon_{\rm tr}\}`, :math:`t_{\rm grok}=\min\{t:\mathcal L_{\rm te}\le\varepsilon_{\rm te}\}`
    (log-grid scan for the first sign change, then ``brentq``).  Asymptotic ratio (erratum E5; the paper's
    :math:`1/(\lambda\lambda^+_{\min})` is neither a time nor a ratio):

    .. math:: \frac{t_{\rm grok}}{t_{\rm mem}}\sim\frac{\mu^+_{\min}}{\gamma}=\frac{\lambda^+_{\min}(\Phi^\top\Phi)}{n\gamma}.

    Returns
    -------
    dict(t_mem, t_grok, ratio, ratio_asymptotic) — ``inf`` where a threshold is not reached by ``t_max``
    (default :math:`50/\gamma`).

    Raises
    ------
    DomainError
        ``t_max`` not given and :math:`50/\gamma` beyond the double range (:math:`\lambda<1.4\times10^{-307}`
        for ``"eq2"``): pass a finite ``t_max``.

    References
    ----------
    ``kramers:ridge-delay``.
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

    t_mem = _first_passage(lambda s: np.atleast_1d(losses(s)[0]), e_tr, tm, t_fast)
    t_grok = _first_passage(lambda s: np.atleast_1d(losses(s)[1]), e_te, tm, t_fast)
    ratio = t_grok / t_mem if t_mem > 0 else math.inf
    return dict(t_mem=t_mem, t_grok=t_grok, ratio=ratio, ratio_asymptotic=(mu_min / lam_v) / c)


@cites("kramers:rf-norm")
def rf_interpolant_norm(K_a: Any, y: Any) -> float:
    r"""Norm of the min-norm random-feature readout interpolant :math:`\|a^\star\|=\sqrt{y^\top K^{-1}y}` (Cholesky).

    Erratum E7: since :math:`\lambda_{\min}(K_0^{(a)})` grows like :math:`N^{1-2\alpha}`, this *shrinks* like
    :math:`N^{\alpha-1/2}` (the paper says :math:`O(\sqrt N)`).

    References
    ----------
    ``kramers:rf-norm``.
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
