"""Exact mean first-passage times: 1-D quadrature and a 2-D finite-volume reference; test potentials."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import integrate
from scipy import sparse
from scipy.sparse import linalg as splinalg

from .. import _floats as FL
from .. import _pointwise as PW
from .. import _validate as V
from .._validate import DomainError
from ..citations import cites

__all__ = ["arrhenius_barrier", "continuity_correction_shift", "log_mfpt_1d_exact", "mfpt_1d_exact", "mfpt_2d_exact",
           "test_potential"]


def _as_potential(F: Any) -> tuple[Callable[[Any], Any], np.ndarray | None]:
    if callable(F):
        return F, None
    c = V.as_float_array(F, "F")
    if c.ndim != 1:
        raise DomainError("F must be a callable or a 1-D sequence of polynomial coefficients (increasing powers)")
    c = np.trim_zeros(c, "b")
    if c.size == 0:
        c = np.zeros(1)
    P = np.polynomial.Polynomial(c)
    return P, c


def _critical_points(F, coef, lo, hi):
    if coef is not None:
        if coef.size <= 2:
            return np.array([])
        r = np.polynomial.Polynomial(coef).deriv().roots()
        r = np.real(r[np.abs(np.imag(r)) < 1e-9])
    else:
        xs = np.linspace(lo, hi, 4001)
        f = np.asarray([F(x) for x in xs], dtype=np.float64)
        df = np.diff(f)
        idx = np.nonzero(np.sign(df[1:]) != np.sign(df[:-1]))[0]
        r = xs[idx + 1]
    return np.sort(r[(r > lo) & (r < hi)])


def _log_mfpt_1d(F: Any, x0: float, b: float, T: float, lower: float) -> float:
    Fc, coef = _as_potential(F)
    x0 = V.finite(x0, "x0", scalar=True)
    b = V.finite(b, "b", scalar=True)
    T = V.positive(T, "T", scalar=True)
    lower = float(lower)
    if math.isnan(lower) or lower == math.inf:
        raise DomainError(f"lower must be -inf or finite (got {lower!r})")
    if not b > x0:
        raise DomainError(f"b must be > x0 (got b={b!r}, x0={x0!r}); for a target on the left mirror F(x) -> F(-x)")
    if not lower < x0:
        raise DomainError(f"lower must be < x0 (got lower={lower!r}, x0={x0!r})")

    def f(x):
        return float(Fc(x))

    if lower == -math.inf:
        if coef is not None and (coef.size % 2 == 0 or coef[-1] <= 0):
            raise DomainError("with lower = -inf the polynomial F must have even degree and a positive leading "
                              "coefficient (F -> +inf)")
        # cut-off where exp(-(F - F_min)/T) < e^-60 relative: negligible at 1e-26
        step = max(1.0, abs(x0))
        L = x0 - step
        fmin_guess = min(f(x0), f(b))
        for _ in range(200):
            crit = _critical_points(Fc, coef, L, b)
            fmin_guess = min([fmin_guess] + [f(c) for c in crit])
            if (f(L) - fmin_guess) / T > 60.0 and all(f(z) >= f(L) for z in np.linspace(L - step, L, 5)):
                break
            L -= step
            step *= 1.5
        else:  # pragma: no cover
            raise DomainError("F does not grow to +inf on the left: give a finite reflecting boundary 'lower'")
    else:
        L = lower
    crit_all = _critical_points(Fc, coef, L, b)
    pts_all = np.concatenate([[L], crit_all, [x0, b]])
    Fmin = min(f(z) for z in pts_all)
    outer_pts = np.concatenate([[x0], crit_all[(crit_all > x0) & (crit_all < b)], [b]])
    Fmax = max(f(z) for z in outer_pts)
    kw = dict(epsabs=0.0, epsrel=1e-12, limit=400)

    def inner(yv: float) -> float:
        pts = [c for c in crit_all if L < c < yv]
        return integrate.quad(lambda z: math.exp(-(f(z) - Fmin) / T), L, yv, points=pts or None, **kw)[0]

    # cumulative inner integral: accumulate piecewise to keep the nested quad cheap
    def outer_integrand(yv: float) -> float:
        return math.exp((f(yv) - Fmax) / T) * inner(yv)

    inner_pts = [c for c in outer_pts[1:-1]]
    val = integrate.quad(outer_integrand, x0, b, points=inner_pts or None, **kw)[0]
    if not (val > 0 and math.isfinite(val)):
        raise DomainError("the MFPT integrals are not finite/positive in float64: use log_mfpt_1d_exact or check F")
    return (Fmax - Fmin) / T - math.log(T) + math.log(val)


@cites("kramers:mfpt-1d")
def log_mfpt_1d_exact(F: Any, x0: float, b: float, T: float, lower: float = -math.inf) -> float:
    r"""Log of the exact one-dimensional mean first-passage time of `mfpt_1d_exact`; finite for any ΔF/T.

    Parameters
    ----------
    F : callable or array_like
        The potential F: a callable (scalar → scalar), or the coefficients of a polynomial in increasing
        powers (a 1-d sequence).
    x0 : float
        The start x₀, a finite real with `lower` < x₀ < b.
    b : float
        The absorbing point b > x₀ (mirror F for a target on the left).
    T : float
        The temperature T > 0 of the overdamped Langevin dynamics dx = −∇F dt + √(2T) dB, in the units of
        F.
    lower : float
        The reflecting boundary; default −∞ (then F must grow to +∞ on the left: an odd-degree or
        negative-leading polynomial is refused).

    Returns
    -------
    float
        ln τ(x₀ → b).

    Raises
    ------
    DomainError
        Invalid arguments, or an odd-degree / negative-leading polynomial with lower = −∞.

    References
    ----------
    Spec `kramers:mfpt-1d`.
    """
    return _log_mfpt_1d(F, x0, b, T, lower)


@cites("kramers:mfpt-1d")
def mfpt_1d_exact(F: Any, x0: float, b: float, T: float, lower: float = -math.inf) -> float:
    r"""Exact mean first-passage time of dx = −F′(x)dt + √(2T)dB from `x0` to `b` > `x0`.

    Reflecting at `lower` (default −∞, which needs F → ∞), absorbing at `b`:

    .. math:: \tau(x_0\to b)=\frac1T\int_{x_0}^{b}e^{F(y)/T}\Big[\int_{\rm lower}^{y}e^{-F(z)/T}dz\Big]dy .

    In words: the double integral of e^((F(y) − F(z))/T)/T over lower < z < y, x₀ < y < b. Evaluated with
    `scipy.integrate.quad` in shifted variables (e^((F − F_max)/T) outside, e^(−(F − F_min)/T) inside) with
    break points at the critical points of F; agrees with 30-digit mpmath to ≤ 10⁻¹⁰ up to ΔF/T = 16. This is
    the exact reference for the simulator and for `kramers_time_1d`.

    Parameters
    ----------
    F : callable or array_like
        The potential F: a callable (scalar → scalar), or the coefficients of a polynomial in increasing
        powers (a 1-d sequence).
    x0 : float
        The start x₀, a finite real with `lower` < x₀ < b.
    b : float
        The absorbing point b > x₀ (mirror F for a target on the left).
    T : float
        The temperature T > 0 of the overdamped Langevin dynamics dx = −∇F dt + √(2T) dB, in the units of
        F.
    lower : float
        The reflecting boundary; default −∞ (then F must grow to +∞ on the left: an odd-degree or
        negative-leading polynomial is refused).

    Returns
    -------
    float
        τ(x₀ → b) in the time unit of the Langevin dynamics.

    Raises
    ------
    DomainError
        Invalid arguments; an odd-degree / negative-leading polynomial with lower = −∞; `ResultOverflow`
        (also an `OverflowError`) where the result exceeds the largest double (use `log_mfpt_1d_exact`).

    References
    ----------
    Spec `kramers:mfpt-1d`.
    """
    lt = _log_mfpt_1d(F, x0, b, T, lower)
    if lt > FL.LOG_MAX:
        raise V.ResultOverflow(f"MFPT = exp({lt:.6g}) exceeds the largest double: use log_mfpt_1d_exact")
    return math.exp(lt)


# -------------------------------------------------------------------------------- exact 2-D MFPT


def _face_weight(dF: np.ndarray, T: float) -> np.ndarray:
    """T B(dF / T) = dF / expm1(dF / T) (T (1 - z / 2) for |z| < 1e-6): finite for every T > 0 -- 0 for
    dF / T -> +inf (an uphill face at T -> 0), -dF for dF / T -> -inf (the downhill drift)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        z = dF / T
        small = np.abs(z) < 1e-6
        far = dF / np.expm1(np.where(small, 1.0, z))
        return np.where(small, T * (1.0 - z / 2.0), far)


#: Largest relative error of the linear solve that :func:`mfpt_2d_exact` returns (estimated by one step of
#: iterative refinement); 1e-6 is 20x below the scheme's discretisation accuracy (2.3e-5).
MFPT_2D_SOLVE_RTOL = 1e-6


def _solve_refined(A: sparse.csc_matrix, rhs: np.ndarray) -> tuple[np.ndarray, float]:
    """``A x = rhs`` by sparse LU plus one step of iterative refinement; returns ``(x, max_i |dx_i| / |x_i|)``,
    the correction of the refinement step as an estimate of the relative forward error at every node."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", splinalg.MatrixRankWarning)
        try:
            lu = splinalg.splu(A)
        except RuntimeError:  # exactly singular
            return np.full(rhs.shape, np.inf), np.inf
        x = lu.solve(rhs)
        dx = lu.solve(rhs - A @ x)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = float(np.max(np.abs(dx) / np.abs(x))) if np.all(np.isfinite(x)) else np.inf
    return x + dx, rel


@cites("kramers:eyring", "kramers:test-potentials")
def mfpt_2d_exact(F: Callable[[np.ndarray, np.ndarray], np.ndarray], x0: Sequence[float], b: float, T: float, *,
                  box: tuple[float, float, float] = (-2.0, -2.5, 2.5), h: float = 0.02,
                  richardson: bool = True) -> float:
    r"""Exact reference mean first-passage time in 2-d: a finite-volume solve of the backward (Dynkin) equation.

    .. math:: T\Delta\tau-\nabla F\cdot\nabla\tau=-1\ \text{in}\ \{x<b\},\qquad \tau=0\ \text{on}\ x=b,

    In words: the expected time τ to reach the line x = b solves T·Δτ − ∇F·∇τ = −1, with τ = 0 on the line and
    reflecting walls at x = x_lo and at the y edges of the box. Discretisation: the generator T e^(F/T)
    ∇·(e^(−F/T)∇τ) with exponential face weights r_ij = (T/h²)·B((F_j − F_i)/T), B(z) = z/(e^z − 1)
    (Scharfetter–Gummel; preserves detailed balance) on a uniform grid with a node line on x = b; sparse LU
    (`scipy.sparse.linalg.splu`); the value at `x0` is bilinearly interpolated. The scheme is O(h²)
    (−1.0·10⁻³, −2.6·10⁻⁴, −6.6·10⁻⁵ at h = 0.04, 0.02, 0.01 on `saddle_2d(1, 1, 3)`, T = 1/4); with
    `richardson=True` the solves at h and 2h are extrapolated: this reproduces the spec's table to ≤ 2.3·10⁻⁵
    for ΔF/T = 3 to 10 and, with c = 0, the 1-d quadrature to 10⁻⁶. Reflecting walls mirror the node inside
    (zero normal derivative), which keeps the scheme second order with a wall where the density is not
    negligible (wall at x = −1.35 beside the minimum at −1, T = 1/2: Richardson at h = 0.025 and 0.0125 agree
    to 4·10⁻⁷; a wall without the mirror was first order there, 2·10⁻³ apart).

    The face weights T·B(ΔF/T) = ΔF/(e^(ΔF/T) − 1) keep the system finite for every T > 0 (subnormal or about
    10³⁰⁸). The solve's condition number grows like e^(ΔF/T): where rates over the barrier underflow to 0 the
    time is beyond the double range (`ResultOverflow`). One step of iterative refinement estimates the solve's
    relative error (6·10⁻¹⁴, 10⁻¹¹, 4·10⁻⁷, 9·10⁻⁵, 1.3·10⁻³ at ΔF/T = 3, 10, 20, 25, 30 on `saddle_2d(1, 1,
    3)`, h = 0.02); above 10⁻⁶ (about ΔF/T > 21 there) it raises `DomainError` (raise T) instead of returning
    a time with lost digits.

    Parameters
    ----------
    F : callable
        The potential F(x, y), vectorised over numpy arrays x, y of equal shape.
    x0 : sequence of float
        The start (x, y), inside the box with x < b.
    b : float
        The absorbing line x = b.
    T : float
        The temperature T > 0 of the overdamped Langevin dynamics dx = −∇F dt + √(2T) dB, in the units of
        F.
    box : tuple of float
        (x_lo, y_lo, y_hi), the reflecting walls, with y_lo < y_hi and x_lo < b; default (−2, −2.5, 2.5).
    h : float
        The grid spacing h > 0; h (and 2h with `richardson`) must divide the box. Default 0.02.
    richardson : bool
        Whether to extrapolate the solves at h and 2h (default True) or return the solve at h.

    Returns
    -------
    float
        τ(x₀) in the time unit of the Langevin dynamics.

    Raises
    ------
    DomainError
        Where the solve's estimated relative error exceeds 10⁻⁶, where h does not divide the box,
        `ResultOverflow` where τ is beyond the double range; besides invalid arguments.

    References
    ----------
    Spec `kramers:eyring` (exact reference), `kramers:test-potentials`.
    """
    V.callable_(F, "F")
    T = V.positive(T, "T", scalar=True)
    h = V.positive(h, "h", scalar=True)
    b = V.finite(b, "b", scalar=True)
    box_a = V.as_float_array(box, "box")
    if box_a.shape != (3,) or not box_a[1] < box_a[2] or not box_a[0] < b:
        raise DomainError(f"box must be (x_lo, y_lo, y_hi) with y_lo < y_hi and x_lo < b (got {V.show(box)})")
    x0_a = V.as_float_array(x0, "x0")
    if x0_a.shape != (2,):
        raise DomainError(f"x0 must be a point (x, y) (got shape {x0_a.shape})")
    x_lo, y_lo, y_hi = (float(v) for v in box_a)
    px, py = (float(v) for v in x0_a)
    if not (x_lo < px < b and y_lo < py < y_hi):
        raise DomainError(f"x0 must lie inside the box with x < b (got {(px, py)!r})")
    # one sparse solve over the grid: beyond 1e7 nodes it takes hours, and h -> 0 used to exhaust memory
    V.max_size((b - x_lo) / h * (y_hi - y_lo) / h, "h", h, limit=10**7)
    if V.flag(richardson, "richardson"):
        fine = mfpt_2d_exact(F, x0, b, T, box=box, h=h, richardson=False)
        coarse = mfpt_2d_exact(F, x0, b, T, box=box, h=2 * h, richardson=False)
        return fine + (fine - coarse) / 3.0
    cells = ((b - x_lo) / h, (y_hi - y_lo) / h)
    if any(abs(c - round(c)) > 1e-9 * c for c in cells):  # a dividing h leaves only division rounding, ~1e-15 c
        # round() moved a wall off the box: at box (-1.35, -1, 1), h = 0.05 the Richardson solve at 2h had its
        # wall at -1.4 and extrapolated two different boxes (2.6e-3 off the true MFPT, documented <= 2.3e-5)
        raise DomainError(f"h must divide the box: (b - x_lo) / h = {cells[0]!r} and (y_hi - y_lo) / h = "
                          f"{cells[1]!r} must be whole numbers (with richardson=True, for 2h as well)")
    nx = int(round(cells[0]))
    ny = int(round(cells[1]))
    xs = b - h * np.arange(nx, -1, -1)  # last node exactly on b
    ys = y_lo + h * np.arange(ny + 1)
    Xg, Yg = np.meshgrid(xs, ys, indexing="ij")
    Fg = np.asarray(F(Xg, Yg), dtype=np.float64)
    if Fg.shape != Xg.shape:
        raise DomainError(f"F must be vectorised: F(X, Y) on the grid of shape {Xg.shape} returned shape {Fg.shape}")
    if not np.all(np.isfinite(Fg)):
        i, j = np.argwhere(~np.isfinite(Fg))[0]
        raise DomainError(f"F must be finite on the box up to x = b: F({float(xs[i])!r}, {float(ys[j])!r}) = {float(Fg[i, j])!r}")
    nxp, nyp = Fg.shape
    unk = nx  # nodes with i < nx are unknown; i = nx is the absorbing line
    idx = -np.ones((nxp, nyp), dtype=np.int64)
    idx[:unk] = np.arange(unk * nyp).reshape(unk, nyp)
    rows, cols, vals, weights = [], [], [], []
    for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        I, J = np.meshgrid(np.arange(unk), np.arange(nyp), indexing="ij")
        I2, J2 = I + di, J + dj
        # a reflecting wall: the ghost node beyond it mirrors the neighbour inside (zero normal derivative),
        # so the inward coupling counts twice; dropping it was a first-order wall (0.2 % at h = 0.05 with
        # the wall at x = -1.35 near the minimum)
        out = (I2 < 0) | (I2 >= nxp) | (J2 < 0) | (J2 >= nyp)
        I2, J2 = np.where(out, I - di, I2), np.where(out, J - dj, J2)
        weights.append((idx[I, J].ravel(), idx[I2, J2].ravel(), _face_weight(Fg[I2, J2] - Fg[I, J], T).ravel()))
    # rates r = w / h^2 with w = T B(dF / T); the system is solved with w / s (s = max w): no overflow of
    # T / h^2 or of a diagonal sum for T ~ 1e308, none of dF / T (inf - inf) for a subnormal T
    scale = max(float(np.max(w)) for _, _, w in weights)
    diag = np.zeros(unk * nyp)
    for src, dst, w in weights:
        r = w / scale if scale > 0 else w
        np.add.at(diag, src, -r)
        inside = dst >= 0
        rows.append(src[inside])
        cols.append(dst[inside])
        vals.append(r[inside])
    A = sparse.csr_matrix((np.concatenate(vals + [diag]),
                           (np.concatenate(rows + [np.arange(unk * nyp)]), np.concatenate(cols + [np.arange(unk * nyp)]))),
                          shape=(unk * nyp, unk * nyp))
    rel_err = 0.0
    if scale > 0:
        tau_scaled, rel_err = _solve_refined(A.tocsc(), -np.ones(unk * nyp))
    else:
        tau_scaled = np.full(unk * nyp, np.inf)
    with np.errstate(over="ignore", under="ignore"):
        tau = (tau_scaled * h**2) / scale if scale > 0 else tau_scaled
    if not np.all(np.isfinite(tau)):
        # a singular system: every rate out of a set of nodes underflowed to 0 (each < 5e-324), so the
        # escape time from it exceeds 1 / (n_nodes 5e-324) > 1e308
        raise V.ResultOverflow(f"the MFPT at T = {T!r} exceeds the largest double (rates over the barrier "
                               "underflow to 0): use the log-space 1-D form or a larger T")
    if np.any(tau <= 0) or not rel_err <= MFPT_2D_SOLVE_RTOL:
        # the exact discrete solution is > 0 at every node (M-matrix, rhs < 0); the refinement step estimates
        # the solve's forward error, which grows like exp(barrier / T) eps
        raise DomainError(f"T = {T!r} is too small for a float64 solve on this landscape: the system's condition "
                          f"number ~ exp(barrier / T) leaves a relative error of {rel_err:.1e} in the solve (more "
                          f"than {MFPT_2D_SOLVE_RTOL:g}{'; it returned a non-positive MFPT' if np.any(tau <= 0) else ''}); "
                          "use a larger T (about barrier / T <= 20; the spec's table covers barrier / T <= 10)")
    full = np.zeros((nxp, nyp))
    full[:unk] = tau.reshape(unk, nyp)
    from scipy.interpolate import RegularGridInterpolator

    return float(RegularGridInterpolator((xs, ys), full)([[px, py]])[0])


@cites("kramers:test-potentials")
def test_potential(name: str, **params: float) -> dict[str, Any]:
    r"""Benchmark landscapes with known critical points (exact).

    * "double_well_1d" (parameter `h`): F = h(x² − 1)²; minima ±1, saddle 0, ΔF = h, F″(m) = 8h, F″(s) = −4h,
      τ_EK = 2π/(√32·h)·e^(h/T).
    * "saddle_2d" (parameters `h`, `k`, `c`): F = h(x² − 1)² + ½(k + cx²)y²; minima (±1, 0), saddle (0, 0),
      ∇²F(m) = diag(8h, k + c), ∇²F(s) = diag(−4h, k), τ_EK = 2π/(4h)·√(k/(2(k + c)))·e^(h/T).

    Parameters
    ----------
    name : {"double_well_1d", "saddle_2d"}
        Which landscape.
    **params : float
        The landscape's parameters by name: `h` > 0 (barrier height; default 1) for both; `k` > 0
        (transverse stiffness; default 1) and `c` ≥ 0 (its growth away from the saddle; default 3) for
        "saddle_2d". Other names are refused.

    Returns
    -------
    dict
        `F`, `grad` (acting on arrays whose last axis is the coordinate; 1-d: also scalars), `hess_min`,
        `hess_saddle`, `delta_F`, `x_min`, `x_saddle`, `x_min_other`, `dim`, and `coef` (the polynomial in
        increasing powers) for the 1-d well or `F_xy` (F(x, y)) for the 2-d one.

    References
    ----------
    Spec `kramers:test-potentials`.
    """
    name = V.choice(name, "name", ("double_well_1d", "saddle_2d"))
    if name == "double_well_1d":
        unknown = set(params) - {"h"}
        if unknown:
            raise DomainError(f"double_well_1d takes only h (got {sorted(unknown)})")
        h = V.positive(params.get("h", 1.0), "h", scalar=True)
        return dict(
            F=lambda x: h * (np.asarray(x, dtype=np.float64) ** 2 - 1.0) ** 2,
            grad=lambda x: 4.0 * h * np.asarray(x, dtype=np.float64) * (np.asarray(x, dtype=np.float64) ** 2 - 1.0),
            hess_min=np.array([[8.0 * h]]), hess_saddle=np.array([[-4.0 * h]]), delta_F=h,
            x_min=np.array([-1.0]), x_saddle=np.array([0.0]), x_min_other=np.array([1.0]), dim=1,
            coef=np.array([h, 0.0, -2.0 * h, 0.0, h]))
    unknown = set(params) - {"h", "k", "c"}
    if unknown:
        raise DomainError(f"saddle_2d takes only h, k, c (got {sorted(unknown)})")
    h = V.positive(params.get("h", 1.0), "h", scalar=True)
    k = V.positive(params.get("k", 1.0), "k", scalar=True)
    c = V.nonnegative(params.get("c", 3.0), "c", scalar=True)

    def F(z):
        z = np.asarray(z, dtype=np.float64)
        x, y = z[..., 0], z[..., 1]
        return h * (x**2 - 1.0) ** 2 + 0.5 * (k + c * x**2) * y**2

    def grad(z):
        z = np.asarray(z, dtype=np.float64)
        x, y = z[..., 0], z[..., 1]
        return np.stack([4.0 * h * x * (x**2 - 1.0) + c * x * y**2, (k + c * x**2) * y], axis=-1)

    return dict(F=F, grad=grad, hess_min=np.diag([8.0 * h, k + c]), hess_saddle=np.diag([-4.0 * h, k]), delta_F=h,
                x_min=np.array([-1.0, 0.0]), x_saddle=np.array([0.0, 0.0]), x_min_other=np.array([1.0, 0.0]), dim=2,
                F_xy=lambda x, y: h * (x**2 - 1.0) ** 2 + 0.5 * (k + c * x**2) * y**2)


test_potential.__test__ = False  # not a pytest test despite its name


@cites("kramers:fpt-criterion")
@V.broadcasting()
def continuity_correction_shift(T: Any, dt: Any) -> float | np.ndarray:
    r"""Broadie–Glasserman shift 0.5826·√(2TΔt) of a barrier monitored at discrete times.

    Moving a saddle-crossing threshold outward by this amount removes the leading O(√Δt) bias of discrete
    monitoring (predicts +13 % at Δt = 0.01, T = 1/4; measured +11.6 %). The recommended criterion avoids it:
    reach the other minimum (≈ τ_EK; crossing the saddle ≈ τ_EK/2).

    Parameters
    ----------
    T : float or array_like
        The temperature T > 0 of the overdamped Langevin dynamics dx = −∇F dt + √(2T) dB, in the units of
        F.
    dt : float or array_like
        The time step Δt > 0 between monitoring times.

    Returns
    -------
    float or ndarray
        The shift, in the units of the coordinate; the broadcast shape of `T` and `dt`.

    References
    ----------
    Spec `kramers:fpt-criterion`; Broadie, Glasserman, Kou (1997).
    """
    T = V.positive(T, "T")
    dt = V.positive(dt, "dt")
    return V.scalar_or_array(0.5826 * math.sqrt(2.0) * np.sqrt(T) * np.sqrt(dt))  # T dt under/overflows past 1e+-308


@cites("kramers:arrhenius")
@V.broadcasting()
def arrhenius_barrier(delay_ratio: Any, prefactor_ratio: Any = 1.0) -> float | np.ndarray:
    r"""Arrhenius inversion ΔF/T_eff = ln(delay_ratio/prefactor_ratio) (exact algebra, heuristic use).

    Headline: ln 73 = 4.2905. Caveats (measured): (i) at ΔF/T ≈ 4 the Eyring–Kramers law itself is 14–40 %
    off; (ii) τ₀ = t_mem is an assumption; (iii) Kramers escape times are exponentially distributed
    (coefficient of variation ≈ 1) while the headline t_grok has 4 % across seeds (erratum kramers-13). A ratio below
    the prefactor gives a negative barrier (allowed, with a `RuntimeWarning`).

    Parameters
    ----------
    delay_ratio : float or array_like
        The measured delay ratio t_grok/t_mem > 0.
    prefactor_ratio : float or array_like
        The ratio τ₀/t_mem > 0 of the Arrhenius prefactor to the memorisation time; default 1 (τ₀ =
        t_mem).

    Returns
    -------
    float or ndarray
        ΔF/T_eff, dimensionless; the broadcast shape of the arguments.

    References
    ----------
    Spec `kramers:arrhenius`.
    """
    sc = PW.scalars(delay_ratio, prefactor_ratio)
    r, r_ext = V.positive(delay_ratio, "delay_ratio", scalar=sc, extrema=True)
    p, p_ext = V.positive(prefactor_ratio, "prefactor_ratio", scalar=sc, extrema=True)
    if sc:  # two numbers: log_quotient's operations on floats
        if r < p:
            warnings.warn("delay_ratio < prefactor_ratio gives a negative barrier", RuntimeWarning, stacklevel=2)
        return float(PW.log_quotient(r, p))
    if r_ext[0] < p_ext[1] and np.any(r < p):  # the extremes in the common case
        warnings.warn("delay_ratio < prefactor_ratio gives a negative barrier", RuntimeWarning, stacklevel=2)
    return V.scalar_or_array(PW.log_quotient(r, p, extrema=(r_ext, p_ext)))
