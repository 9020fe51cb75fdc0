"""Arrhenius inversion, SGD / full-batch temperatures and the spectral delay ratio."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _pointwise as PW
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._readout import _sym

__all__ = ["sgd_stationary_temperature_1d", "spectral_delay_ratio", "t_eff_fullbatch_heuristic", "t_eff_sgd",
           "t_eff_sgd_direction"]


@cites("kramers:teff-sgd")
@V.broadcasting("eta", "trace_sigma")
def t_eff_sgd(eta: Any, trace_sigma: Any, batch_size: int, n_params: int | None = None) -> float | np.ndarray:
    r"""SGD temperature in the diffusion approximation (corrected, erratum kramers-9).

    .. math:: T_{\rm coord}=\frac{\eta\,\mathrm{tr}\,\Sigma}{2BP}\ (\texttt{n\_params}=P),\qquad
              T_{\rm paper}=\frac{\eta\,\mathrm{tr}\,\Sigma}{2B}=P\,T_{\rm coord}\ (\texttt{n\_params=None}).

    In words: η·tr Σ/(2B), divided by P when `n_params` is given. The paper's T_paper is the sum of the mode
    temperatures (= tr(HC) of the stationary covariance), P times the per-coordinate temperature (measured
    tr(HC)/P = 1.013·T_coord for P = 8); put only T_coord or the directional `t_eff_sgd_direction` into
    e^(ΔF/T). Sampling with replacement; without replacement multiply by (n − B)/(n − 1).

    Parameters
    ----------
    eta : float or array_like
        The SGD learning rate η > 0.
    trace_sigma : float or array_like
        tr Σ ≥ 0, the trace of the per-sample gradient-noise covariance.
    batch_size : int
        The batch size B, an integer ≥ 1.
    n_params : int or None
        The number P ≥ 1 of parameters: the per-coordinate temperature T_coord; default `None`, the
        paper's T_paper.

    Returns
    -------
    float or ndarray
        The temperature, in the units of the loss.

    References
    ----------
    Spec `kramers:teff-sgd`; Li, Tai, E (2017).
    """
    sc = PW.scalars(eta, trace_sigma)
    eta, e_ext = V.positive(eta, "eta", scalar=sc, extrema=True)
    tr, t_ext = V.nonnegative(trace_sigma, "trace_sigma", scalar=sc, extrema=True)
    B = V.integer_at_least(batch_size, "batch_size", 1)
    P = 1 if n_params is None else V.integer_at_least(n_params, "n_params", 1)
    if sc:  # two numbers: the same product on floats (FL.power_product's number path: the array's bits)
        return 0.0 if tr == 0.0 else float(FL.power_product([eta, tr, 2.0 * float(B), float(P)], [1, 1, -1, -1]))
    # no spurious inf / 0 (one scaled product); exactly 0 where the trace is 0 (the select only if one is)
    if t_ext[0] > 0.0:  # the trace's extremes serve the product's proof too
        return V.scalar_or_array(PW.product([eta, tr, 2.0 * float(B), float(P)], [1, 1, -1, -1],
                                               [e_ext, t_ext, (2.0 * B, 2.0 * B), (float(P), float(P))]))
    val = FL.power_product([eta, np.where(tr == 0.0, 1.0, tr), 2.0 * float(B), float(P)], [1, 1, -1, -1])
    return V.scalar_or_array(np.where(tr == 0.0, 0.0, val))


@cites("kramers:teff-sgd")
def t_eff_sgd_direction(eta: float, sigma: Any, direction: Any, batch_size: int) -> float:
    r"""Directional SGD temperature T_s = η·e_sᵀΣe_s/(2B) (`direction` is normalised here).

    Parameters
    ----------
    eta : float
        The SGD learning rate η > 0.
    sigma : array_like
        Σ, the per-sample gradient-noise covariance, a (P, P) symmetric positive semi-definite array.
    direction : array_like
        The direction e_s, a non-zero (P,) array (e.g. the escape direction over the saddle).
    batch_size : int
        The batch size B, an integer ≥ 1.

    Returns
    -------
    float
        T_s, in the units of the loss.

    References
    ----------
    Spec `kramers:teff-sgd`.
    """
    eta = V.positive(eta, "eta", scalar=True)
    S = _sym(sigma, "sigma")
    lo = float(np.linalg.eigvalsh(S)[0])
    if lo < -V.roundoff_tol(sigma, S.shape[0], floor=1e-12) * max(float(np.max(np.abs(S))), 1e-300):
        raise DomainError(f"sigma must be a covariance (positive semi-definite) (got smallest eigenvalue {lo!r})")
    e = V.as_float_array(direction, "direction")
    if e.shape != (S.shape[0],):
        raise DomainError(f"direction must have shape ({S.shape[0]},) (got {e.shape})")
    nrm = float(np.linalg.norm(e))
    if nrm == 0:
        raise DomainError("direction must be non-zero")
    e = e / nrm
    B = V.integer_at_least(batch_size, "batch_size", 1)
    return float(eta * (e @ S @ e) / (2.0 * B))


@cites("kramers:teff-sgd")
@V.broadcasting("eta", "sigma2", "curvature")
def sgd_stationary_temperature_1d(eta: Any, sigma2: Any, batch_size: int, curvature: Any) -> float | np.ndarray:
    r"""Exact stationary h·Var θ of one-dimensional SGD θ_{k+1} = θ_k − η(hθ_k + ξ_k).

    .. math:: h\,\mathrm{Var}\,\theta=\frac{\eta\sigma^2}{B(2-\eta h)}\ \ (=2T_{\rm coord}\ \text{as}\ \eta\to0),

    In words: ησ²/(B(2 − ηh)), with Var ξ = σ²/B; it tends to 2T_coord as η → 0. Requires 0 < ηh < 2.

    Parameters
    ----------
    eta : float or array_like
        The SGD learning rate η > 0.
    sigma2 : float or array_like
        σ² ≥ 0, the per-sample gradient-noise variance.
    batch_size : int
        The batch size B, an integer ≥ 1.
    curvature : float or array_like
        h, the curvature of the quadratic loss, with 0 < ηh < 2.

    Returns
    -------
    float or ndarray
        h·Var θ.

    References
    ----------
    Spec `kramers:teff-sgd`.
    """
    sc = PW.scalars(eta, sigma2, curvature)
    eta, e_ext = V.positive(eta, "eta", scalar=sc, extrema=True)
    s2, s_ext = V.nonnegative(sigma2, "sigma2", scalar=sc, extrema=True)
    B = V.integer_at_least(batch_size, "batch_size", 1)
    # a number stays a float beside arrays (no 0-d array in the products); its extremes from the finite check
    h, (h_lo, h_hi) = V.finite(curvature, "curvature", scalar=sc or PW.scalars(curvature), extrema=True)
    if sc:  # three numbers: the same operations on floats
        gap = 2.0 - eta * h
        if abs(gap) < 0.5 and abs(h) < 1e300:  # the product's rounding restored where 2 - eta h cancels
            p, e = FL.dd_two_prod(eta, h)
            gap = (2.0 - p) - e
        if not (eta * h > 0 and gap > 0):
            raise DomainError(f"eta*curvature must be in (0, 2) (got {eta * h!r})")
        return 0.0 if s2 == 0.0 else float(FL.power_product([eta, s2, float(B), gap], [1, 1, -1, -1]))
    with np.errstate(over="ignore", invalid="ignore"):
        eh = eta * h  # the broadcast shape of eta and h (s2 broadcasts in the product)
        # bounds on every fl(eta h) from the factors' extremes (the exact product lies between the corners' exact
        # products, and rounding is monotone): no reduction; the tests below need bounds, not extremes
        corners = (e_ext[0] * h_lo, e_ext[0] * h_hi, e_ext[1] * h_lo, e_ext[1] * h_hi)
        eh_lo, eh_hi = min(corners), max(corners)
        gap = np.subtract(2.0, eh, out=eh) if eh.ndim else 2.0 - eh  # in place: one new array less
        gap_lo, gap_hi = 2.0 - eh_hi, 2.0 - eh_lo  # bounds on gap: rounding is monotone
        # 2 - eta h with the product's rounding restored where it cancels (exact there); masks only if the
        # extrema say a point may need them
        if gap_lo < 0.5 and gap_hi > -0.5:
            near = np.abs(gap) < 0.5
            if np.any(near):
                p, e = FL.dd_two_prod(eta, h)
                gap = np.where(near & (np.abs(h) < 1e300), (2.0 - p) - e, gap)
                gap_lo, gap_hi = PW.extrema(gap)
        bad = False if eh_lo > 0 and gap_lo > 0 else ~((eta * h > 0) & (gap > 0))
        if np.any(bad):
            k = np.unravel_index(int(np.argmax(bad)), bad.shape) if bad.ndim else ()
            eta_k, h_k = (float(v[k]) for v in np.broadcast_arrays(eta, h))
            raise DomainError(f"eta*curvature must be in (0, 2) (got {float(eta_k * h_k)!r})")
        # the factor 1/gap formed in place (the product's own operation: power -1 is 1.0 / x), its extremes from
        # those of gap (the division is monotone); s2's extremes serve the zero test and the product's proof
        inv = np.divide(1.0, gap, out=PW.into(gap))
        inv_ext = (1.0 / gap_hi, 1.0 / gap_lo)
        if s_ext[0] > 0.0:  # no zero variance: no select
            return V.scalar_or_array(PW.product([eta, s2, float(B), inv], [1, 1, -1, 1],
                                                   [e_ext, s_ext, (float(B), float(B)), inv_ext]))
        val = FL.power_product([eta, np.where(s2 == 0.0, 1.0, s2), float(B), inv], [1, 1, -1, 1])
        return V.scalar_or_array(np.where(s2 == 0.0, 0.0, val))


@cites("kramers:teff-gd")
@V.broadcasting()
def t_eff_fullbatch_heuristic(eta: Any, trace_hessian: Any, coef: Any) -> float | np.ndarray:
    r"""The paper's full-batch "temperature" T = coef·η²·tr ∇²F: an unsupported heuristic.

    No derivation exists in the Langevin sense: full-batch GD is deterministic (backward-error analysis gives
    the deterministic modified loss F + (η/4)‖∇F‖², not noise), and η²·tr ∇²F has units [θ]²/[F], not [F];
    `coef` is therefore required and carries the missing units. GD in a strict minimum with η < 2/F″ never
    escapes (measured: 10⁶ steps, η up to 0.249 on `double_well_1d(1)`): its escape temperature is 0 (erratum
    kramers-12).

    Parameters
    ----------
    eta : float or array_like
        The learning rate η > 0.
    trace_hessian : float or array_like
        tr ∇²F, the trace of the loss Hessian, any finite real.
    coef : float or array_like
        The proportionality constant, any finite real, in units [F]²/[θ]² (the paper gives none).

    Returns
    -------
    float or ndarray
        coef·η²·tr ∇²F.

    References
    ----------
    Spec `kramers:teff-gd` (heuristic, unsupported).
    """
    sc = PW.scalars(eta, trace_hessian, coef)  # three numbers: the same operations on floats
    # the extremes of each argument from its validation (the finite check's own two reductions)
    eta, e_ext = V.positive(eta, "eta", scalar=sc, extrema=True)
    tr, t_ext = V.finite(trace_hessian, "trace_hessian", scalar=sc, extrema=True)
    coef, c_ext = V.finite(coef, "coef", scalar=sc, extrema=True)
    c_mag, t_mag = _magnitudes(c_ext), _magnitudes(t_ext)  # |x|'s extremes where x has one sign
    buf = None
    if c_mag is not None and t_mag is None and not sc and isinstance(tr, np.ndarray) and tr.ndim:
        # signs of the trace mixed: |tr|'s smallest value by one pass (its largest is at an end), in a buffer that
        # takes the product below where the shapes allow
        buf = np.abs(tr)
        t_mag = (float(buf.min()), max(-t_ext[0], t_ext[1]))
    if c_mag is not None and t_mag is not None and FL.product_stays_normal([c_mag, e_ext, t_mag], [1, 2, 1]):
        # no zero (|x| >= its minimum > 0) and every partial product normal: the same operations as the scaled
        # product below, the signs carried by the factors (no sign or select pass; rounding is symmetric)
        if buf is not None and np.shape(eta) == buf.shape and np.ndim(coef) == 0:
            out = np.multiply(eta, eta, out=buf)
            np.multiply(coef, out, out=out)
            return np.multiply(out, tr, out=out)
        return PW.result(coef * (eta * eta) * tr)
    zero = (tr == 0.0) | (coef == 0.0)
    # eta**2 overflows past 1.3e154; one scaled product is inf / 0 only beyond the range
    mag = FL.power_product([PW.pick(zero, 1.0, abs(coef)), eta, PW.pick(zero, 1.0, abs(tr))], [1, 2, 1])
    return PW.result(PW.pick(zero, 0.0, np.sign(coef) * np.sign(tr) * mag))


def _magnitudes(ext: tuple[float, float]) -> tuple[float, float] | None:
    """The extremes of |x| from those of x where every x has one sign (0 excluded), else None."""
    lo, hi = ext
    if lo > 0.0:
        return lo, hi
    if hi < 0.0:
        return -hi, -lo
    return None


@cites("kramers:spectral")
def spectral_delay_ratio(eigs: Any, eta: Any = None) -> float | np.ndarray:
    r"""Delay ratio of the slowest to the fastest mode of a quadratic (exact for a quadratic model).

    Gradient flow: t_slow/t_fast = κ = μ_max/μ_min. GD with step η: ln|1 − ημ_max|/ln|1 − ημ_min| (→ κ as η →
    0; requires ημ_max < 2).

    Parameters
    ----------
    eigs : array_like
        The Hessian eigenvalues μ > 0 (remove zero modes first): the spectrum of one quadratic, any shape
        (only μ_min and μ_max enter).
    eta : float or array_like or None
        The GD step η > 0; default `None`, gradient flow. An array gives one ratio per step (a sweep in η).

    Returns
    -------
    float or ndarray
        The ratio: a float for `eta` `None` or a number, else an array of the shape of `eta`.

    References
    ----------
    Spec `kramers:spectral`.
    """
    _, (lo, hi) = V.positive(eigs, "eigs", context="(remove zero modes first)", extrema=True)
    if eta is None:
        return hi / lo
    sc = PW.scalars(eta) or np.ndim(eta) == 0  # a number or a 0-d array: one float
    eta, (e_lo, e_hi) = V.positive(eta, "eta", scalar=sc, extrema=True)
    if e_hi * hi >= 2:  # fl(eta hi) is monotone in eta: the largest step's product is the largest
        raise DomainError(f"eta*mu_max must be < 2 (got {e_hi * hi!r})")
    if sc:  # a number: the same operations on floats
        return _gd_ratio(eta, lo, hi, FL.SCALAR)
    if e_hi * hi < 1e-290:  # every step: log1p(-x) = -x to double precision, the ratio is hi / lo
        return V.scalar_or_array(np.full(eta.shape, hi / lo))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        return V.scalar_or_array(_gd_ratio(eta, lo, hi, FL.ARRAY))


def _gd_ratio(eta: Any, lo: float, hi: float, xp: Any) -> Any:
    """ln|1 − η hi| / ln|1 − η lo| for validated steps η (0 < η hi < 2) and eigenvalue extremes lo <= hi: a float
    for a float η (xp = `FL.SCALAR`), else an array (xp = `FL.ARRAY`, the caller's errstate); the same
    operations on every point.  hi / lo where η hi < 1e-290 (log1p(-x) = -x); fast / (η lo) scaled where η lo <
    1e-290 (a subnormal product would lose digits); DomainError where η hi = 1 (the fastest mode vanishes)."""
    fast = _log_abs_one_minus(eta, hi, xp)
    if xp is FL.SCALAR:
        if eta * hi < 1e-290:
            return hi / lo
        if fast == -math.inf:
            raise DomainError("eta*mu_max = 1 makes the fastest mode vanish in one step (ratio 0)")
        if eta * lo < 1e-290:
            return -math.copysign(float(FL.power_product([abs(fast), eta, lo], [1, -1, -1])), fast)
        return fast / _log_abs_one_minus(eta, lo, xp)
    flat = np.isneginf(fast)
    if flat.any():  # a step with eta hi = 1 exactly (hi / lo on the points below 1e-290 never gets here)
        raise DomainError("eta*mu_max = 1 makes the fastest mode vanish in one step (ratio 0)")
    out = np.divide(fast, _log_abs_one_minus(eta, lo, xp))
    if float(eta.min()) * lo < 1e-290:  # some eta lo below 1e-290 (rounding is monotone): those points scaled
        out = PW.patch(out, eta * lo < 1e-290, lambda f, e: -np.copysign(
            FL.power_product([np.abs(f), e, lo], [1, -1, -1]), f), fast, eta)
        out = PW.patch(out, eta * hi < 1e-290, lambda e: np.full(np.shape(e), hi / lo), eta)
    return out


def _log_abs_one_minus(eta: Any, mu: float, xp: Any) -> Any:
    """log|1 - eta mu|: log1p(-x) for a small product x = fl(eta mu) (log(1 - 1e-20) is -1e-20, not 0); near eta mu
    = 1 the exact difference, the product's rounding error restored (Dekker); -inf where eta mu = 1 exactly.

    Below 1/2 the form is log1p(-(p + e)) with (p, e) Dekker's exact product, and fl(p + e) = p: p + e is the
    exact product, whose rounding p is (both round the same real number), so the product itself is the argument.
    A float `eta` with xp = `FL.SCALAR`, an array with `FL.ARRAY` (the caller's errstate): the same operations
    (numpy's log and log1p on both) on every point."""
    if xp is FL.SCALAR:
        x = eta * mu
        if x < 0.5:
            return xp.log1p(-x)
        return _log_abs_one_minus_exact(eta, mu)
    x = np.multiply(eta, mu)
    near = x >= 0.5 if float(eta.max()) * mu >= 0.5 else None  # the largest fl(eta mu): rounding is monotone
    out = np.log1p(np.negative(x, out=x), out=x)
    if near is not None:  # the points with eta mu >= 1/2 re-evaluated
        out = PW.patch(out, near, _log_abs_one_minus_exact, eta, mu)
    return out


def _log_abs_one_minus_exact(eta: Any, mu: float) -> Any:
    """log|1 - eta mu| for eta mu >= 1/2 (numbers or arrays, the same operations): log1p(-((2 - p) - e)) from 3/2 on
    (|1 - x| = 1 - (2 - x)), log|(1 - p) - e| below, -inf at 0, with (p, e) Dekker's exact product."""
    p, e = FL.dd_two_prod(eta, mu)
    if type(p) is float:
        if p >= 1.5:
            return float(np.log1p(-((2.0 - p) - e)))
        d = (1.0 - p) - e
        return float(np.log(abs(d))) if d != 0.0 else -math.inf
    big = np.log1p(-((2.0 - p) - e))
    mid = np.log(np.abs((1.0 - p) - e))
    return np.where(p >= 1.5, big, mid)
