"""Eyring–Kramers escape times in any dimension and the 1-D law."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _pointwise as PW
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._readout import _sym

__all__ = ["eyring_kramers_rate", "eyring_kramers_time", "kramers_ratio_first_order_estimate", "kramers_time_1d",
           "log_eyring_kramers_time", "log_kramers_time_1d"]


def _hessians(hess_min: Any, hess_saddle: Any) -> tuple[list[float], list[float]]:
    """The ascending eigenvalues of the two validated Hessians, as Python floats.

    A scalar (d = 1) or a diagonal matrix has its diagonal as spectrum: it is read without linear algebra
    (`eigvalsh` of a diagonal matrix returns the same numbers sorted, at 20 us a call); any other symmetric
    matrix goes through `_sym` and `numpy.linalg.eigvalsh`.
    """
    Hm = V.as_float_array(hess_min, "hess_min")
    Hs = V.as_float_array(hess_saddle, "hess_saddle")
    if Hm.ndim == 0 and Hs.ndim == 0:
        return [float(Hm)], [float(Hs)]
    Hm = np.atleast_2d(Hm) if Hm.ndim == 0 else Hm
    Hs = np.atleast_2d(Hs) if Hs.ndim == 0 else Hs
    if Hm.ndim != 2 or Hm.shape[0] != Hm.shape[1] or Hs.shape != Hm.shape:
        raise DomainError(f"hess_min and hess_saddle must be square matrices of the same shape (got {Hm.shape}, {Hs.shape})")
    return _spectrum(Hm, "hess_min"), _spectrum(Hs, "hess_saddle")


def _spectrum(H: np.ndarray, name: str) -> list[float]:
    """Ascending eigenvalues of a square float64 array `H` (checked symmetric unless diagonal)."""
    diag = H.diagonal()
    if np.count_nonzero(H) == np.count_nonzero(diag):  # no off-diagonal entry: the diagonal is the spectrum
        return sorted(diag.tolist())
    return np.linalg.eigvalsh(_sym(H, name)).tolist()


def _log_prefactor(hess_min: Any, hess_saddle: Any) -> float:
    """ln(2π/|λ_s|) + ½(Σ ln|eig ∇²F(s)| − Σ ln eig ∇²F(m)), the Hessians validated here.

    Two small float64 arrays (d <= 8) are looked up by their bytes (a sweep calls with the same Hessians again and
    again; their validation and spectra cost ~20 us a call): the same bytes are the same numbers, so the same
    checks and the same value (an invalid pair raises each time: errors are not cached).
    """
    if type(hess_min) is np.ndarray and type(hess_saddle) is np.ndarray and hess_min.dtype == np.float64 \
            and hess_saddle.dtype == np.float64 and hess_min.size <= 64 and hess_saddle.size <= 64:
        return _log_prefactor_of_bytes(hess_min.shape, hess_min.tobytes(), hess_saddle.shape, hess_saddle.tobytes())
    return _log_prefactor_of(hess_min, hess_saddle)


@functools.lru_cache(maxsize=128)
def _log_prefactor_of_bytes(shape_m: tuple[int, ...], bytes_m: bytes, shape_s: tuple[int, ...],
                            bytes_s: bytes) -> float:
    return _log_prefactor_of(np.frombuffer(bytes_m).reshape(shape_m), np.frombuffer(bytes_s).reshape(shape_s))


def _log_prefactor_of(hess_min: Any, hess_saddle: Any) -> float:
    """`_log_prefactor`'s work on any Hessians (numbers, lists, arrays)."""
    em, es = _hessians(hess_min, hess_saddle)  # ascending: the largest magnitude is at an end
    top_m, top_s = max(-em[0], em[-1]), max(-es[0], es[-1])
    if min(abs(e) for e in em) < 1e-12 * top_m or min(abs(e) for e in es) < 1e-12 * top_s:
        raise DomainError("degenerate critical point (a Hessian eigenvalue is ~0): the Eyring-Kramers law does not "
                          "apply; see Berglund & Gentz (2010) for non-quadratic saddles")
    if em[0] <= 0:
        raise DomainError(f"hess_min must be positive definite (got smallest eigenvalue {np.float64(em[0])!r})")
    n_neg = sum(e < 0 for e in es)
    if n_neg != 1:
        raise DomainError(f"hess_saddle must have exactly one negative eigenvalue (got {n_neg})")
    # one correctly rounded sum of the logs (their signs differ: the half log-determinant ratio may cancel)
    return math.log(2 * math.pi) - math.log(-es[0]) + 0.5 * math.fsum(
        [math.log(abs(e)) for e in es] + [-math.log(e) for e in em])


def _real_scalars(*xs: Any) -> bool:
    """Whether every argument is one real number that `V.as_float_array` takes on its scalar fast path."""
    return all(type(x) in _SCALAR_TYPES for x in xs)


_SCALAR_TYPES = (float, np.float64, int)


@cites("kramers:eyring", "kramers:eq15")
@V.broadcasting("delta_F", "T")
def log_eyring_kramers_time(hess_min: Any, hess_saddle: Any, delta_F: Any, T: Any) -> float | np.ndarray:
    r"""Natural log of the Eyring–Kramers mean transition time (never forms e^(ΔF/T)).

    .. math:: \ln\tau_{\rm EK}=\ln2\pi-\ln|\lambda_s|+\tfrac12\Big(\sum\ln|{\rm eig}(\nabla^2F(s))|-\sum\ln{\rm eig}(\nabla^2F(m))\Big)+\frac{\Delta F}{T}.

    In words: ln 2π − ln|λ_s| plus half the difference of the log-determinants of the two Hessians, plus ΔF/T;
    λ_s is the negative Hessian eigenvalue at the saddle. See `eyring_kramers_time`.

    Parameters
    ----------
    hess_min : array_like
        The Hessian ∇²F(m) at the minimum, a (d, d) symmetric positive definite array (a scalar for d =
        1).
    hess_saddle : array_like
        The Hessian ∇²F(s) at the saddle, a (d, d) symmetric array with exactly one negative eigenvalue,
        the shape of `hess_min`.
    delta_F : float or array_like
        The barrier height ΔF = F(saddle) − F(minimum) > 0, in the units of F.
    T : float or array_like
        The temperature T > 0 of the overdamped Langevin dynamics dx = −∇F dt + √(2T) dB, in the units of
        F; broadcasts against `delta_F`.

    Returns
    -------
    float or ndarray
        ln τ_EK, τ_EK in the time unit of the Langevin dynamics; the broadcast shape of `delta_F` and `T`.

    References
    ----------
    Spec `kramers:eyring`, `kramers:eq15`; Bovier, Eckhoff, Gayrard, Klein (2004).
    """
    lt = _log_ek(hess_min, hess_saddle, delta_F, T)
    return lt if type(lt) is float else V.scalar_or_array(lt)


def _log_ek(hess_min, hess_saddle, delta_F, T) -> float | np.ndarray:
    """ln τ_EK of the broadcast shape of `delta_F` and `T` (validated here, once): a Python float when both
    are real scalars (the same operations on floats), else a new float64 array."""
    const = _log_prefactor(hess_min, hess_saddle)
    if _real_scalars(delta_F, T):
        return const + V.positive(delta_F, "delta_F", scalar=True) / V.positive(T, "T", scalar=True)  # inf past 1.8e308
    dF = V.positive(delta_F, "delta_F")
    T = V.positive(T, "T")
    with np.errstate(over="ignore"):
        out = np.asarray(np.divide(dF, T))  # inf only where ΔF/T itself exceeds 1.8e308 (0-d: an array too)
    out += const
    return out


@cites("kramers:eyring", "kramers:eq15")
@V.broadcasting("delta_F", "T")
def eyring_kramers_time(hess_min: Any, hess_saddle: Any, delta_F: Any, T: Any) -> float | np.ndarray:
    r"""Eyring–Kramers mean transition time (asymptotic, exact as T → 0) of overdamped Langevin dynamics (eq. 17).

    .. math:: \tau_{\rm EK}=\frac{2\pi}{|\lambda_s|}\sqrt{\frac{|\det\nabla^2F(s)|}{\det\nabla^2F(m)}}\;e^{\Delta F/T},

    In words: 2π/|λ_s| times √(|det ∇²F(s)|/det ∇²F(m)) times e^(ΔF/T), λ_s the single negative Hessian
    eigenvalue at the saddle: a rate, not a frequency √|λ_s| (erratum kramers-11). τ is the time to reach the next
    minimum (about twice the time to first cross the saddle; `kramers:fpt-criterion`). Finite-T error
    (measured against exact references): 14 % / 6 % at ΔF/T = 4 / 8 in 1-d, 40 % / 15 % on the 2-d test
    potential.

    Parameters
    ----------
    hess_min : array_like
        The Hessian ∇²F(m) at the minimum, a (d, d) symmetric positive definite array (a scalar for d =
        1).
    hess_saddle : array_like
        The Hessian ∇²F(s) at the saddle, a (d, d) symmetric array with exactly one negative eigenvalue,
        the shape of `hess_min`.
    delta_F : float or array_like
        The barrier height ΔF = F(saddle) − F(minimum) > 0, in the units of F.
    T : float or array_like
        The temperature T > 0 of the overdamped Langevin dynamics dx = −∇F dt + √(2T) dB, in the units of
        F; broadcasts against `delta_F`.

    Returns
    -------
    float or ndarray
        τ_EK in the time unit of the Langevin dynamics; the broadcast shape of `delta_F` and `T`.

    Raises
    ------
    DomainError
        `ResultOverflow` (a `DomainError` and an `OverflowError`) where τ_EK exceeds the largest double,
        ln τ > 709.78 (use `log_eyring_kramers_time`); a degenerate critical point; besides invalid
        arguments.

    References
    ----------
    Spec `kramers:eyring`, `kramers:eq15`.
    """
    lt = _log_ek(hess_min, hess_saddle, delta_F, T)
    top = lt if type(lt) is float else float(lt.max())
    if top > FL.LOG_MAX:
        raise V.ResultOverflow(f"tau_EK = exp({top:.6g}) exceeds the largest double (log 1.8e308 = "
                               "709.78): use log_eyring_kramers_time")
    return math.exp(lt) if type(lt) is float else V.scalar_or_array(np.exp(lt, out=lt))


@cites("kramers:eyring")
@V.broadcasting("delta_F", "T")
def eyring_kramers_rate(hess_min: Any, hess_saddle: Any, delta_F: Any, T: Any) -> float | np.ndarray:
    r"""Eyring–Kramers rate k = 1/τ_EK (it may underflow to 0 for huge ΔF/T; use the log time there).

    Parameters
    ----------
    hess_min : array_like
        The Hessian ∇²F(m) at the minimum, a (d, d) symmetric positive definite array (a scalar for d =
        1).
    hess_saddle : array_like
        The Hessian ∇²F(s) at the saddle, a (d, d) symmetric array with exactly one negative eigenvalue,
        the shape of `hess_min`.
    delta_F : float or array_like
        The barrier height ΔF = F(saddle) − F(minimum) > 0, in the units of F.
    T : float or array_like
        The temperature T > 0 of the overdamped Langevin dynamics dx = −∇F dt + √(2T) dB, in the units of
        F; broadcasts against `delta_F`.

    Returns
    -------
    float or ndarray
        k in inverse time units of the Langevin dynamics; the broadcast shape of `delta_F` and `T`.

    References
    ----------
    Spec `kramers:eyring`.
    """
    lt = _log_ek(hess_min, hess_saddle, delta_F, T)
    if type(lt) is float:
        return math.exp(max(-lt, -1e4))  # 0 below 5e-324
    np.negative(lt, out=lt)
    return V.scalar_or_array(np.exp(np.maximum(lt, -1e4, out=lt), out=lt))


def _ek1d_check(curv_min, curv_saddle, delta_F, T):
    """The four arguments validated, each number a Python float (no 0-d array beside arrays), arrays float64."""
    cm = V.positive(curv_min, "curv_min", scalar=PW.scalars(curv_min))
    cs, (_, cs_hi) = V.finite(curv_saddle, "curv_saddle", scalar=PW.scalars(curv_saddle), extrema=True)
    if cs_hi >= 0:
        raise DomainError(f"curv_saddle must be < 0 (got {float(cs[cs >= 0].flat[0]) if np.ndim(cs) else float(cs)!r})")
    return (cm, cs, V.positive(delta_F, "delta_F", scalar=PW.scalars(delta_F)),
            V.positive(T, "T", scalar=PW.scalars(T)))


def _log_k1d(curv_min, curv_saddle, delta_F, T) -> Any:
    """ln τ of the 1-d law, validated here: a NumPy float for four numbers (the same operations on floats:
    numpy's log on the float, IEEE division), else an array (0-d for 0-d arguments)."""
    cm, cs, dF, T = _ek1d_check(curv_min, curv_saddle, delta_F, T)
    # log F''(m) + log|F''(s)|: the product underflows (log(0): ValueError) or overflows for curvatures
    # beyond 1e+-154
    with np.errstate(over="ignore"):
        const = math.log(2 * math.pi) - 0.5 * (np.log(cm) + np.log(np.abs(cs)))
        q = dF / T
        out = PW.into(q, const)  # the quotient's own new array takes the sum (const + q = q + const: one array less)
        return np.add(q, const, out=out) if out is not None else const + q


@cites("kramers:eyring-1d")
@V.broadcasting()
def log_kramers_time_1d(curv_min: Any, curv_saddle: Any, delta_F: Any, T: Any) -> float | np.ndarray:
    r"""Log of the one-dimensional Kramers time, ln 2π − ½ln(F″(m)|F″(s)|) + ΔF/T.

    See `kramers_time_1d`.

    Parameters
    ----------
    curv_min : float or array_like
        F″(m) > 0, the curvature of the potential at the minimum.
    curv_saddle : float or array_like
        F″(s) < 0, the curvature of the potential at the saddle (barrier top).
    delta_F : float or array_like
        The barrier height ΔF = F(saddle) − F(minimum) > 0, in the units of F.
    T : float or array_like
        The temperature T > 0 of the overdamped Langevin dynamics dx = −∇F dt + √(2T) dB, in the units of
        F; broadcasts against `delta_F`.

    Returns
    -------
    float or ndarray
        ln τ, the broadcast shape of the arguments.

    References
    ----------
    Spec `kramers:eyring-1d`.
    """
    return V.scalar_or_array(_log_k1d(curv_min, curv_saddle, delta_F, T))


@cites("kramers:eyring-1d")
@V.broadcasting()
def kramers_time_1d(curv_min: Any, curv_saddle: Any, delta_F: Any, T: Any) -> float | np.ndarray:
    r"""One-dimensional Kramers time (asymptotic as T → 0).

    .. math:: \tau=\frac{2\pi}{\sqrt{F''(m)\,|F''(s)|}}\,e^{\Delta F/T}.

    In words: 2π/√(F″(m)|F″(s)|) times e^(ΔF/T). For F = (x² − 1)² the exact mean first-passage time
    (`mfpt_1d_exact`) exceeds it by 14.2 % at ΔF/T = 4, 5.7 % at 8, 2.6 % at 16.

    Parameters
    ----------
    curv_min : float or array_like
        F″(m) > 0, the curvature of the potential at the minimum.
    curv_saddle : float or array_like
        F″(s) < 0, the curvature of the potential at the saddle (barrier top).
    delta_F : float or array_like
        The barrier height ΔF = F(saddle) − F(minimum) > 0, in the units of F.
    T : float or array_like
        The temperature T > 0 of the overdamped Langevin dynamics dx = −∇F dt + √(2T) dB, in the units of
        F; broadcasts against `delta_F`.

    Returns
    -------
    float or ndarray
        τ in the time unit of the Langevin dynamics, the broadcast shape of the arguments.

    Raises
    ------
    DomainError
        `ResultOverflow` (a `DomainError` and an `OverflowError`) where τ exceeds the largest double, ln τ
        > 709.78 (use `log_kramers_time_1d`); besides invalid arguments.

    References
    ----------
    Spec `kramers:eyring-1d`.
    """
    lt = _log_k1d(curv_min, curv_saddle, delta_F, T)
    top = PW.high(lt)
    if top > FL.LOG_MAX:
        raise V.ResultOverflow(f"tau = exp({top:.6g}) exceeds the largest double: use log_kramers_time_1d")
    return V.scalar_or_array(np.exp(lt, out=PW.into(lt)))


@cites("kramers:eyring-1d")
@V.broadcasting("T")
def kramers_ratio_first_order_estimate(derivs_min: Sequence[float], derivs_saddle: Sequence[float],
                                       T: Any) -> float | np.ndarray:
    r"""Estimate of τ_exact/τ_EK to first order in T (Laplace expansion at the minimum m and the saddle s).

    .. math:: 1+T\Big[\tfrac{5F'''(m)^2}{24F''(m)^3}-\tfrac{F''''(m)}{8F''(m)^2}+\tfrac{F''''(s)}{8F''(s)^2}+\tfrac{5F'''(s)^2}{24|F''(s)|^3}\Big].

    In words: 1 plus T times a combination of the second to fourth derivatives of F at m and s. For F = h(x² −
    1)²: 1 + (3/8)T/h (1.047 against the exact 1.057 at T/h = 1/8).

    Parameters
    ----------
    derivs_min : sequence of float
        (F″(m), F‴(m), F⁗(m)), the derivatives at the minimum; F″(m) > 0.
    derivs_saddle : sequence of float
        (F″(s), F‴(s), F⁗(s)), the derivatives at the saddle; F″(s) < 0.
    T : float or array_like
        The temperature T > 0 of the overdamped Langevin dynamics dx = −∇F dt + √(2T) dB, in the units of
        F; an array gives one estimate per temperature (a sweep in T).

    Returns
    -------
    float or ndarray
        The estimated ratio τ_exact/τ_EK; a float for a number T, else an array of the shape of `T`.

    References
    ----------
    Spec `kramers:eyring-1d` (documented estimate of the asymptotic error).
    """
    m2, m3, m4 = _three(derivs_min, "derivs_min")
    s2, s3, s4 = _three(derivs_saddle, "derivs_saddle")
    if m2 <= 0 or s2 >= 0:
        raise DomainError("derivs_min[0] must be > 0 and derivs_saddle[0] < 0")
    sc = PW.scalars(T)
    T = V.positive(T, "T", scalar=sc)
    hi, k = _bracket(m2, m3, m4, s2, s3, s4)
    xp = FL.ops_of(T)
    with xp.errstate(over="ignore", under="ignore"):
        if k == 0:  # B a double >= 2^-1000: T B rounded once (inf only beyond the range; a subnormal T B leaves 1)
            total = T * hi
        else:  # T B = (t hi) 2^(j + k), T = t 2^j with t in [1/2, 1): one rounding, then an exact power of two
            t, j = xp.frexp(T)
            total = xp.ldexp(t * hi, xp.to_int(j + k, -2200, 2200))
    if sc:
        return 1.0 + total
    return V.scalar_or_array(np.add(total, 1.0, out=PW.into(total)))


def _three(x: Any, name: str) -> list[float]:
    """Three validated derivatives as floats: a tuple or list of three Python floats number by number (V's
    scalar check, the message of the array check), anything else through `V.as_float_array`."""
    if type(x) in (tuple, list) and len(x) == 3 and all(type(v) is float for v in x):
        if all(v - v == 0.0 for v in x):  # three finite floats (NaN and +-inf give NaN): V.finite's scalar test
            return list(x)
        return [V.finite(v, name, scalar=True) for v in x]  # the message of the first non-finite one
    a = V.as_float_array(x, name)
    if a.size != 3:
        raise DomainError(f"{name} must hold three derivatives (F'', F''', F'''') (got shape {a.shape})")
    return a.reshape(-1).tolist()


@functools.lru_cache(maxsize=256)  # a sweep in T calls it with the same six derivatives again and again (the exact
# sum of four terms costs ~15 us); a float key: -0.0 and 0.0 share an entry, and give the same bracket (a zero
# derivative makes its term a zero of either sign, which leaves the exact sum, and an all-zero sum is returned as 0.0)
def _bracket(m2: float, m3: float, m4: float, s2: float, s3: float, s4: float) -> tuple[float, int]:
    """The bracket B = 5m3²/(24m2³) − m4/(8m2²) + s4/(8s2²) + 5s3²/(24|s2|³) as ``(hi, k)``, B ≈ hi·2^k.

    The terms with exact binary exponents, summed exactly and rounded once (`FL.signed_power_sum`: m3**2 raised
    OverflowError past 1.3e154, and two overflowing terms of opposite sign gave nan).  k = 0 where B is a double
    of magnitude >= 2^-1000 (then T·B is one rounding).  Otherwise (B beyond the double range, or below 2^-1000,
    where T·B would lose bits to a subnormal) the terms are summed scaled by 2^-k, k stepping down by 1000 from
    the largest term's binary exponent until |B 2^-k| >= 2^-1000: the terms cancelling to any depth leave B's own
    exponent, not 0.  A sum still 0 once k is 1000 below the lowest bit any term carries is an exact 0.
    """
    s2a = abs(s2)
    terms = [(5.0 / 24.0, [abs(m3), m2], [2, -3]),
             (-1.0 / 8.0 * math.copysign(1.0, m4), [abs(m4), m2], [1, -2]),
             (1.0 / 8.0 * math.copysign(1.0, s4), [abs(s4), s2a], [1, -2]),
             (5.0 / 24.0, [abs(s3), s2a], [2, -3])]
    hi = FL.signed_power_sum(terms)
    if _TWO_M1000 <= abs(hi) < math.inf:
        return hi, 0
    live = [(c, xs, ps) for c, xs, ps in terms if all(x != 0.0 for x in xs)]
    # |term| within 2^(E - 5) .. 2^(E + 3), E the sum of the binary exponents; its lowest bit >= 2^(E - 60)
    exps = [math.frexp(c)[1] + sum(a * math.frexp(x)[1] for x, a in zip(xs, ps)) for c, xs, ps in live]
    if not live or (hi == 0.0 and min(exps) - 60 >= -1000):  # an exact 0 (a nonzero sum would show)
        return 0.0, 0
    k, low = max(exps), min(exps) - 60
    while True:
        chunks, rest = [], -k  # 2^-k as factors 2 with powers of at most 1000 (a float's ** overflows past 2^1023)
        while abs(rest) > 1000:
            chunks.append(1000 if rest > 0 else -1000)
            rest -= chunks[-1]
        chunks.append(rest)
        hi = FL.signed_power_sum([(c, [*xs, *[2.0] * len(chunks)], [*ps, *chunks]) for c, xs, ps in live])
        if abs(hi) >= _TWO_M1000:
            return hi, k
        if k < low + 1000:  # B != 0 would be >= 2^low, so |B 2^-k| > 2^-1000 here: B is 0
            return 0.0, 0
        k -= 1000


_TWO_M1000 = 2.0**-1000
