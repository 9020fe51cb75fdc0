"""Expectations of a user's integrand over the Marchenko–Pastur law by adaptive QAWS quadrature."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
from scipy import integrate

from .. import _validate as V
from ..citations import cites
from ._support import _gap, _lam

# Where the exponential factor exp(-s (nu - lam_-)) is below exp(-_TRUNC) the integrand is dropped.
_TRUNC = 60.0


def _scalar_lam(lam) -> float:
    a = _lam(lam)
    if a.ndim != 0:
        raise V.DomainError(f"lam must be a scalar here (got an array of shape {a.shape})")
    return float(a)


def _rtol(rtol) -> float:
    """QUADPACK's relative tolerance: in [1.2e-14, 1) (it refuses requests below 50 machine epsilons)."""
    t = float(V.scalar(V.in_open_interval(rtol, "rtol", 0.0, 1.0), "rtol"))  # an array: DomainError, not TypeError
    if t < 1.2e-14:
        raise V.DomainError(f"rtol must be in [1.2e-14, 1) (QUADPACK's smallest relative tolerance) (got {t!r})")
    return t


def _call(f: Callable, x: float) -> float:
    return float(np.asarray(f(np.asarray(x, dtype=np.float64)), dtype=np.float64))


def _integrand_call(f: Callable, x: float, name: str) -> float:
    """``f(x)`` for a quadrature node or the atom: a value that is not finite raises, naming the integrand and
    the point, instead of turning the sum into NaN."""
    v = _call(f, x)
    if not math.isfinite(v):
        raise V.DomainError(f"{name} must be finite on the Marchenko-Pastur support (and at 0 with the atom); "
                            f"{name}({x!r}) = {v!r}")
    return v


def _quad(g: Callable, lo: float, hi: float, *, warn: bool = True, **kw) -> float:
    """``scipy.integrate.quad`` that warns (``warn``) only when the error estimate exceeds 100x the request.

    The library's own integrands are called with ``warn=False``: their accuracy is the measured contract of
    the function that uses them (QUADPACK's estimate is pessimistic there: 3.5e-9 relative for GD losses measured
    to 2.5e-13 against mpmath), and a warning for a result inside the contract only alarms the user (issue 33:
    "MP quadrature error estimate 2.59e-12 ... exceeds the tolerance" from a verify check). A user's integrand
    (`mp_expect`, `mp_log_expect_exp`) keeps the warning: nothing else vouches for its result."""
    val, err, *info = integrate.quad(g, lo, hi, full_output=1, **kw)
    if warn and err > 100.0 * max(kw.get("epsrel", 1.49e-8) * abs(val), kw.get("epsabs", 0.0)) and err > 1e-300:
        warnings.warn(f"MP quadrature error estimate {err:.2e} for value {val:.6e} exceeds the tolerance",
                      integrate.IntegrationWarning, stacklevel=3)
    return val


def _continuous_integral(f: Callable, lam: float, shift: float, rtol: float, name: str = "f",
                         warn: bool = True) -> tuple[float, float]:
    r"""Scaled continuous part :math:`\int p_c(\nu) f(\nu) e^{-shift(\nu-\lambda_-)} d\nu` by QAWS,
    returned as ``(value, log_scale)`` (the integral is ``value * exp(log_scale)``).

    With :math:`\nu=\lambda_-+4\sqrt\lambda\,y`, :math:`y\in[0,1]` (the width :math:`4\sqrt\lambda` exact;
    the difference of the rounded edges lost 11 % at :math:`\lambda=10^{-30}`),
    :math:`p_c\,d\nu=\frac8\pi\sqrt{y(1-y)}\,d y/\nu`.  The :math:`1/\nu` has a near-pole at distance
    :math:`\delta=\lambda_-/(4\sqrt\lambda)` below :math:`y=0`; adaptive QAWS in :math:`y` fails there
    (measured vs mpmath: relative error 2e+3 at :math:`\lambda=1-10^{-12}`, 5e-6 at :math:`1-10^{-8}`).
    For :math:`\delta<1` (:math:`0.03<\lambda<34`) the map :math:`y=\delta(e^\tau-1)` sends the pole to
    :math:`\tau=-\infty` (:math:`dy/\nu=d\tau/(4\sqrt\lambda)`), and QAWS runs in :math:`\tau` with the
    weight :math:`\tau^{1/2}(\tau_T-\tau)^{1/2}` on a smooth remainder (measured: <= 3e-14 for
    :math:`1,\nu^3,e^{-3\nu},1/(\nu+0.01)` at :math:`\lambda=1\pm10^{-12}, 1-10^{-15}, 1-10^{-8}, 0.99`);
    for :math:`\delta\ge1` QAWS in :math:`y` (<= 1e-15 there; same points at :math:`\lambda=0.03`:
    6e-16 in y, 6e-16 in tau).  At :math:`\lambda=1` (:math:`\delta=0`) the :math:`1/\nu` merges with the
    weight: :math:`y^{-1/2}(1-y)^{1/2}`.  The range is cut where :math:`e^{-shift(\nu-\lambda_-)}<e^{-60}`
    if that is below :math:`y=1/2` (omitted part < 1e-26 relative).
    """
    r = math.sqrt(lam)
    lm = float(_gap(lam))
    w = 4.0 * r
    opts = dict(epsabs=0.0, epsrel=rtol, limit=500)
    rate = shift * w  # exponential decay rate in y
    if math.isfinite(rate):
        y_T = 1.0 if rate * 0.5 <= _TRUNC else _TRUNC / rate

        def decay(y: float) -> float:
            return rate * y
    else:  # shift 4 sqrt(lam) beyond 1.8e308 (shift = 1.8e308 gave y_T = 0 and -inf for a finite log)
        y_T = (_TRUNC / w) / shift

        def decay(y: float) -> float:
            return shift * (w * y)
    if y_T == 0.0:  # shift w > 1e325 needs w > 6.7e16: lam_- ~ w^2/16, shift lam_- > 1.8e308, the part is exp(-inf)
        return 0.0, -math.inf
    trunc = y_T < 1.0
    beta = 0.0 if trunc else 0.5
    delta = lm / w

    def scaled(g: Callable, x_T: float, alpha: float) -> tuple[float, float]:
        # int_0^{x_T} x^alpha (x_T - x)^beta g(x) dx = x_T^(1+alpha+beta) int_0^1 u^alpha (1-u)^beta g(x_T u) du:
        # QUADPACK on [0, 1] (on [0, 1e-270] the integral underflowed to 0 at s lam_- ~ 5e276)
        val = _quad(lambda u: g(x_T * u), 0.0, 1.0, weight="alg", wvar=(alpha, beta), warn=warn, **opts)
        return val, (1.0 + alpha + beta) * math.log(x_T)

    # f in units of a power of two near its size at the centre (exact scaling): f(nu) = nu ~ 1.7e308 at
    # lam = 1.7e308, or f = 5e307, overflowed QUADPACK's sums (NaN for E[nu] = 1, NaN for E[5e307])
    f_mid = abs(_call(f, lm + 0.5 * w))
    unit = math.ldexp(1.0, math.frexp(f_mid)[1]) if math.isfinite(f_mid) and f_mid > 1.0 else 1.0
    if delta == 0.0:  # lam = 1: (8/pi) sqrt(y(1-y))/(4y) = (2/pi) y^{-1/2} (1-y)^{1/2}
        def g0(y: float) -> float:
            edge = math.sqrt(1.0 - y) if trunc else 1.0
            return _integrand_call(f, w * y, name) / unit * math.exp(-decay(y)) * edge

        val, lsc = scaled(g0, y_T, -0.5)
        return 2.0 / math.pi * val * unit, lsc
    if delta >= 1.0:
        scale = 1.0 + lam  # (1 + lam)/nu in [~1/2, ~2]: keeps QUADPACK's integrand O(f)

        def gy(y: float) -> float:
            nu = lm + w * y
            edge = math.sqrt(1.0 - y) if trunc else 1.0
            return _integrand_call(f, nu, name) / unit * math.exp(-decay(y)) * edge * (scale / nu)

        val, lsc = scaled(gy, y_T, 0.5)
        return 8.0 / math.pi * val * (unit / scale), lsc
    tau_T = math.log1p(y_T / delta)

    def gt(t: float) -> float:
        em = math.expm1(t)
        y = min(delta * em, y_T)  # delta expm1(tau_T) rounds above y_T = 1 (1.0000000000000002 at delta = 1/8)
        # sqrt(y/t) and sqrt((1-y)/(tau_T-t)) (untruncated: 1 - y = delta e^t (e^{tau_T - t} - 1) exactly)
        lo = math.sqrt(y / t) if t > 0.0 else math.sqrt(delta)
        if trunc:
            hi = math.sqrt(1.0 - y)
        elif t < tau_T:
            hi = math.sqrt(delta * (1.0 + em) * math.expm1(tau_T - t) / (tau_T - t))
        else:
            hi = math.sqrt(delta * (1.0 + em))
        return _integrand_call(f, lm + w * y, name) / unit * math.exp(-decay(y)) * lo * hi

    val, lsc = scaled(gt, tau_T, 0.5)
    return 2.0 / (math.pi * r) * val * unit, lsc


@cites("levi:mp-quad")
def mp_expect(f: Callable, lam, *, include_atom: bool = True, rtol: float = 1e-12) -> float:
    r"""Expectation E[f(ν)] over the Marchenko–Pastur law for any integrand, by adaptive Gauss–Jacobi quadrature.

    .. math::
        \mathbb E[f(\nu)]=\Big(1-\frac1\lambda\Big)^+f(0)+\frac1{2\pi\lambda}\int_{\lambda_-}^{\lambda_+}
        (\nu-\lambda_-)^{1/2}(\lambda_+-\nu)^{1/2}\frac{f(\nu)}{\nu}\,d\nu .

    In words: the atom's mass times f(0) plus the integral of f against `mp_density`. The square-root
    end-point singularities are carried by the weight of QUADPACK's QAWS rule (`scipy.integrate.quad` with
    `weight='alg'`), so smooth integrands converge to about 10⁻¹⁴ (spec `levi:mp-quad`). Near λ = 1 the 1/ν
    near-pole is removed by the change of variables ν − λ₋ = λ₋(e^τ − 1) before QAWS; at λ = 1 exactly it
    merges with the weight (ν^(−1/2)(4 − ν)^(1/2)). (A fixed Gauss–Chebyshev rule in θ is not accurate near λ
    = 1; neither is QAWS in ν without the map: 2·10³ relative error at λ = 1 − 10⁻¹².)

    Parameters
    ----------
    f : callable
        The integrand f(ν), called with a float64 0-d array and returning a real number; it must be finite
        on the support (and at 0 when the atom is included).
    lam : float
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0; a scalar.
    include_atom : bool
        Whether to add the atom term max(0, 1 − 1/λ)·f(0) (non-zero only for λ > 1); default True.
    rtol : float
        The relative tolerance passed to QUADPACK, in [1.2·10⁻¹⁴, 1) (QUADPACK refuses smaller requests);
        default 10⁻¹².

    Returns
    -------
    float
        E[f(ν)].

    Raises
    ------
    DomainError
        `ResultOverflow` (a `DomainError`) where the expectation is beyond the double range, besides
        invalid arguments and an integrand that is not finite.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation): relative error ≤ 10⁻¹³ for integrands analytic on
    a neighbourhood of the support (measured with 1, νᵏ, e^(−cν), 1/(ν + w)) for every λ in [10⁻³⁰⁰, 10³⁰⁰];
    the value is correctly rounded to 0 where it underflows. Integrands whose values are below about 10⁻²⁹⁰ on
    the support lose accuracy in QUADPACK: use `mp_log_expect_exp` for exponentially small expectations.

    References
    ----------
    Spec `levi:mp-quad`.
    """
    V.callable_(f, "f")
    a = _scalar_lam(lam)
    include_atom = V.flag(include_atom, "include_atom")
    return _expect(f, a, include_atom, _rtol(rtol), True)


def _expect(f: Callable, a: float, include_atom: bool, rtol: float, warn: bool) -> float:
    """`mp_expect` after validation (``warn``: see `_quad`)."""
    val, lsc = _continuous_integral(f, a, 0.0, rtol, "f", warn)
    val *= math.exp(lsc)  # lsc = log of the mapped interval's length: |lsc| < 400 here
    if include_atom and a > 1.0:
        val += (a - 1.0) / a * _integrand_call(f, 0.0, "f")
    if not math.isfinite(val):
        raise V.ResultOverflow(f"E[f] at lam = {a!r} is beyond the double range ({val!r}): scale f down")
    return val


@cites("levi:mp-quad")
def mp_log_expect_exp(g: Callable, s, lam, *, include_atom: bool = True, rtol: float = 1e-12) -> float:
    r"""Logarithm of E[g(ν) e^(−sν)] over the Marchenko–Pastur law, for a non-negative integrand g.

    Computed as −sλ₋ + log E[g(ν) e^(−s(ν − λ₋))] so that nothing underflows; the atom term max(0, 1 −
    1/λ)·g(0) is added with `logaddexp`. The range is truncated where e^(−s(ν − λ₋)) < e^(−60). Same
    quadrature and accuracy as `mp_expect` (absolute error of the logarithm ≤ 10⁻¹³·max(1, |log|)); `-inf`
    where the logarithm is below the float range (sλ₋ > 1.8·10³⁰⁸).

    Parameters
    ----------
    g : callable
        The non-negative integrand g(ν), called with a float64 0-d array; finite on the support (and at 0
        when the atom is included).
    s : float
        The decay rate s ≥ 0 of the exponential factor, a scalar (the spectral time 4η₀t/d_out in the
        linear model).
    lam : float
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0; a scalar.
    include_atom : bool
        Whether to add the atom term at ν = 0 (non-zero only for λ > 1); default True.
    rtol : float
        The relative tolerance passed to QUADPACK, in [1.2·10⁻¹⁴, 1) (QUADPACK refuses smaller requests);
        default 10⁻¹².

    Returns
    -------
    float
        The natural logarithm of the expectation (`-inf` if the expectation is exactly 0).

    Raises
    ------
    DomainError
        Where g is negative (its expectation, or g(0) at the atom), besides invalid arguments.

    References
    ----------
    Spec `levi:mp-quad`.
    """
    V.callable_(g, "g")
    a = _scalar_lam(lam)
    include_atom = V.flag(include_atom, "include_atom")
    ss = V.nonnegative(s, "s")
    if ss.ndim != 0:
        raise V.DomainError(f"s must be a scalar here (got an array of shape {ss.shape})")
    return _log_expect_exp(g, float(ss), a, include_atom, _rtol(rtol), True)


def _log_expect_exp(g: Callable, s_: float, a: float, include_atom: bool, rtol: float, warn: bool) -> float:
    """`mp_log_expect_exp` after validation (``warn``: see `_quad`)."""
    lm = float(_gap(a))
    cont, lsc = _continuous_integral(g, a, s_, rtol, "g", warn)
    if cont < 0.0:  # g < 0 by a few ulp near an edge is harmless; a negative expectation has no logarithm
        raise V.DomainError(f"g must be non-negative: the continuous part of E[g(nu) e^(-s nu)] is negative "
                            f"({cont!r} x e^{lsc!r}) at s = {s_!r}, lam = {a!r}")
    with np.errstate(divide="ignore", over="ignore"):
        out = float(-s_ * lm + lsc + math.log(cont)) if cont > 0 else -math.inf
    if include_atom and a > 1.0:
        g0 = _integrand_call(g, 0.0, "g")
        if g0 < 0.0:
            raise V.DomainError(f"g must be non-negative: g(0) = {g0!r} at the atom (lam = {a!r} > 1)")
        if g0 > 0:
            out = float(np.logaddexp(out, math.log(a - 1.0) - math.log(a) + math.log(g0)))
    return out
