r"""The Marchenko–Pastur law: density, atom, moments, Laplace transforms and expectations.

The eigenvalues :math:`\nu` of the empirical Gram matrix :math:`\Sigma_{\rm tr}=X^\top X/N` of
:math:`N` standard Gaussian samples in :math:`d` dimensions follow, as :math:`d,N\to\infty` at fixed
aspect ratio :math:`\lambda=d/N`, the Marchenko–Pastur law (spec ``levi:eq6``)

.. math::

    p_{\rm MP}(\nu)\,d\nu=\Big(1-\frac1\lambda\Big)^{+}\delta_0(d\nu)
    +\frac{\sqrt{(\lambda_+-\nu)(\nu-\lambda_-)}}{2\pi\lambda\,\nu}\,\mathbf 1_{[\lambda_-,\lambda_+]}(\nu)\,d\nu,
    \qquad \lambda_\pm=(1\pm\sqrt\lambda)^2 .

This module is paper-independent; :mod:`grokclocks.linear` builds the loss curves of the linear
teacher–student model on it.  All functions accept numpy-broadcastable arrays (except the generic
expectations, which take a scalar ``lam``), compute in float64 and return Python floats for scalar
input.  Quantities that under/overflow have ``log_`` variants.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
from scipy import integrate, special, stats

from . import _validate as V
from .citations import cites

__all__ = [
    "mp_edges",
    "mp_atom",
    "mp_density",
    "mp_cdf",
    "mp_moment",
    "mp_inverse_moment",
    "mp_stieltjes",
    "mp_stieltjes2",
    "mp_stieltjes_nu2",
    "mp_laplace_nu",
    "mp_log_laplace_nu",
    "mp_laplace",
    "mp_log_laplace",
    "mp_expect",
    "mp_log_expect_exp",
]

# Above this value of s (1 - sqrt(lam))^2 the closed form of E[exp(-s nu)] loses accuracy to
# cancellation (spec levi:gen-closed: rel. err 5e-14 up to 50, 1e-10 up to 200, O(1) near 600);
# beyond it we integrate the train-loss closed form instead.
_GEN_CLOSED_MAX_SA = 50.0
# QUADPACK rejects a relative tolerance at or below max(50 eps, 5e-29).
_QUAD_RTOL_MIN = 50.0 * float(np.finfo(np.float64).eps)
# Where the exponential factor exp(-s (nu - lam_-)) is below exp(-_TRUNC) we drop the integrand.
_TRUNC = 60.0


def _ive(n: int, z):
    r"""``scipy.special.ive`` with the Hankel expansion for :math:`z>10^8` (where scipy returns NaN).

    :math:`e^{-z}I_n(z)\sim(2\pi z)^{-1/2}\,[1-\tfrac{\mu-1}{8z}+\tfrac{(\mu-1)(\mu-9)}{2!(8z)^2}]`,
    :math:`\mu=4n^2`; the omitted term is below 1e-24 relative there.
    """
    z = np.asarray(z, dtype=np.float64)
    big = z > 1e8
    zs = np.where(big, z, 1.0)
    mu = 4.0 * n * n
    x = 8.0 * zs
    hankel = (1.0 - (mu - 1.0) / x + (mu - 1.0) * (mu - 9.0) / (2.0 * x * x)) / np.sqrt(2.0 * np.pi * zs)
    return np.where(big, hankel, special.ive(n, np.where(big, 1.0, z)))


def _lam(lam) -> np.ndarray:
    return V.positive(lam, "lam")


@cites("levi:eq6")
def mp_edges(lam):
    r"""Edges of the continuous part of the Marchenko–Pastur law.

    .. math:: \lambda_\pm=(1\pm\sqrt\lambda)^2

    Parameters
    ----------
    lam : float or array_like
        Aspect ratio :math:`\lambda=d_{\rm in}/N_{\rm tr}>0`.

    Returns
    -------
    (lam_minus, lam_plus) : tuple of float or ndarray

    References
    ----------
    Levi et al., eq. (6).
    """
    r = np.sqrt(_lam(lam))
    return V.scalar_or_array((1.0 - r) ** 2), V.scalar_or_array((1.0 + r) ** 2)


@cites("levi:eq6")
def mp_atom(lam):
    r"""Mass of the atom at :math:`\nu=0`: :math:`(1-1/\lambda)^+` (non-zero only for :math:`\lambda>1`).

    Parameters
    ----------
    lam : float or array_like
        Aspect ratio, :math:`\lambda>0`.

    References
    ----------
    Levi et al., eq. (6).
    """
    a = _lam(lam)
    return V.scalar_or_array(np.maximum(0.0, 1.0 - 1.0 / a))


@cites("levi:eq6")
def mp_density(nu, lam):
    r"""Density of the continuous part of the Marchenko–Pastur law (0 outside the support).

    .. math:: \frac{\sqrt{(\lambda_+-\nu)(\nu-\lambda_-)}}{2\pi\lambda\,\nu}\,\mathbf 1_{[\lambda_-,\lambda_+]}(\nu)

    Its integral is :math:`\min(1, 1/\lambda)`; the atom :func:`mp_atom` carries the rest.

    Parameters
    ----------
    nu : float or array_like
        Eigenvalue(s), any finite real.
    lam : float or array_like
        Aspect ratio, :math:`\lambda>0`.

    References
    ----------
    Levi et al., eq. (6).
    """
    x = V.finite(nu, "nu")
    a = _lam(lam)
    x, a = np.broadcast_arrays(x, a)
    r = np.sqrt(a)
    lm, lp = (1 - r) ** 2, (1 + r) ** 2
    inside = (x > lm) & (x < lp) & (x > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.sqrt(np.maximum((lp - x) * (x - lm), 0.0)) / (2 * np.pi * a * x)
    return V.scalar_or_array(np.where(inside, p, 0.0))


@cites("levi:eq6")
def mp_cdf(x, lam):
    r"""Cumulative distribution function of the Marchenko–Pastur law, atom included.

    .. math:: F(x)=\Big(1-\frac1\lambda\Big)^+\mathbf 1_{x\ge0}
        +\int_{\lambda_-}^{x}\frac{\sqrt{(\lambda_+-\nu)(\nu-\lambda_-)}}{2\pi\lambda\,\nu}\,d\nu

    (QAWS quadrature with the :math:`(\nu-\lambda_-)^{1/2}` end-point weight; used for
    Kolmogorov–Smirnov comparisons of simulated spectra).

    Parameters
    ----------
    x : float or array_like
        Point(s) at which to evaluate, any finite real.
    lam : float
        Aspect ratio, scalar :math:`\lambda>0`.
    """
    a = _scalar_lam(lam)
    xs = V.finite(x, "x")
    r = math.sqrt(a)
    lm, lp = (1.0 - r) ** 2, (1.0 + r) ** 2
    atom = max(0.0, 1.0 - 1.0 / a)
    cont_mass = min(1.0, 1.0 / a)
    norm = 1.0 / (2.0 * math.pi * a)
    out = np.empty(xs.shape, dtype=np.float64).reshape(-1)
    for i, xi in enumerate(xs.reshape(-1)):
        xi = float(xi)
        base = atom if xi >= 0.0 else 0.0
        if xi <= lm:
            out[i] = base
        elif xi >= lp:
            out[i] = base + cont_mass
        elif lm == 0.0:  # lam = 1: density sqrt(4 - nu)/(2 pi sqrt(nu))
            out[i] = base + norm * _quad(lambda v: math.sqrt(lp - v), 0.0, xi, weight="alg", wvar=(-0.5, 0.0),
                                         epsabs=0.0, epsrel=1e-12, limit=200)
        else:
            out[i] = base + norm * _quad(lambda v: math.sqrt(lp - v) / v, lm, xi, weight="alg", wvar=(0.5, 0.0),
                                         epsabs=0.0, epsrel=1e-12, limit=200)
    return V.scalar_or_array(out.reshape(xs.shape))


@cites("levi:mp-moments")
def mp_moment(k, lam):
    r"""Moment :math:`\mathbb E\nu^k` of the Marchenko–Pastur law (Narayana polynomials).

    .. math:: \mathbb E\nu^k=\sum_{j=0}^{k-1}\frac{\lambda^j}{j+1}\binom{k}{j}\binom{k-1}{j}
        \qquad(1,\ 1+\lambda,\ 1+3\lambda+\lambda^2,\dots)

    Parameters
    ----------
    k : int
        Order, :math:`k\ge0` (:math:`\mathbb E\nu^0=1`).
    lam : float or array_like
        Aspect ratio, :math:`\lambda>0`.
    """
    k = V.integer_at_least(k, "k", 0)
    a = _lam(lam)
    if k == 0:
        return V.scalar_or_array(np.ones_like(a))
    total = np.zeros_like(a)
    for j in range(k):
        total = total + a**j * math.comb(k, j) * math.comb(k - 1, j) / (j + 1)
    return V.scalar_or_array(total)


@cites("levi:mp-moments")
def mp_inverse_moment(k, lam):
    r"""Inverse moment :math:`\mathbb E[\nu^{-k};\nu>0]`, :math:`k\in\{1,2\}` (continuous part only).

    .. math::
        \lambda<1:\ \frac1{1-\lambda},\ \frac1{(1-\lambda)^3};\qquad
        \lambda>1:\ \frac1{\lambda(\lambda-1)},\ \frac1{(\lambda-1)^3}.

    Parameters
    ----------
    k : int
        1 or 2.
    lam : float or array_like
        Aspect ratio, :math:`\lambda>0`, :math:`\lambda\ne1` (both diverge at :math:`\lambda=1`).
    """
    k = V.integer_at_least(k, "k", 1)
    if k > 2:
        raise V.DomainError(f"k must be 1 or 2 (got {k})")
    a = V.not_equal(_lam(lam), "lam", 1.0, context="(the inverse moments diverge at lam = 1)")
    below = a < 1
    if k == 1:
        out = np.where(below, 1.0 / (1.0 - a), 1.0 / (a * (a - 1.0)))
    else:
        out = np.where(below, 1.0 / (1.0 - a) ** 3, 1.0 / (a - 1.0) ** 3)
    return V.scalar_or_array(out)


def _stieltjes_parts(w, lam):
    ww = V.positive(w, "w")
    a = _lam(lam)
    ww, a = np.broadcast_arrays(ww, a)
    b = 1.0 - a + ww
    r = np.sqrt(b * b + 4.0 * a * ww)
    # m = (r - b) / (2 a w); rationalised where b > 0 to avoid cancellation at small w.
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.where(b > 0, 2.0 / (b + r), (r - b) / (2.0 * a * ww))
    return m, r, a


@cites("levi:mp-stieltjes")
def mp_stieltjes(w, lam):
    r"""Resolvent moment :math:`m(w)=\mathbb E[1/(\nu+w)]` of the MP law, atom included.

    .. math:: m(w)=\frac{-(1-\lambda+w)+\sqrt{(1-\lambda+w)^2+4\lambda w}}{2\lambda w}

    evaluated without cancellation (rationalised numerator when :math:`1-\lambda+w>0`).

    Parameters
    ----------
    w : float or array_like
        Shift, :math:`w>0`.
    lam : float or array_like
        Aspect ratio, :math:`\lambda>0`.
    """
    m, _, _ = _stieltjes_parts(w, lam)
    return V.scalar_or_array(m)


@cites("levi:mp-stieltjes")
def mp_stieltjes2(w, lam):
    r"""Second resolvent moment :math:`m_2(w)=\mathbb E[1/(\nu+w)^2]=-m'(w)`, atom included.

    From :math:`\lambda w m^2+(1-\lambda+w)m-1=0`:

    .. math:: m_2(w)=\frac{m(w)\,(1+\lambda m(w))}{\sqrt{(1-\lambda+w)^2+4\lambda w}} .

    Parameters
    ----------
    w : float or array_like
        Shift, :math:`w>0`.
    lam : float or array_like
        Aspect ratio, :math:`\lambda>0`.
    """
    m, r, a = _stieltjes_parts(w, lam)
    return V.scalar_or_array(m * (1.0 + a * m) / r)


@cites("levi:mp-stieltjes", "levi:eq15")
def mp_stieltjes_nu2(w, lam):
    r"""Moment :math:`\mathbb E[\nu/(\nu+w)^2]=m(w)-w\,m_2(w)` of the MP law, without cancellation.

    .. math::
        \mathbb E\Big[\frac{\nu}{(\nu+w)^2}\Big]=\frac{m(w)\,(D-c)}{2D},\qquad
        D=\sqrt{(1-\lambda+w)^2+4\lambda w},\quad c=\lambda-1+w,

    with :math:`D-c=4w/(D+c)` when :math:`c>0`.  For :math:`\lambda>1` the atom makes :math:`m` and
    :math:`w\,m_2` both :math:`\approx(1-1/\lambda)/w`, so the difference :math:`m-w\,m_2` would cancel
    catastrophically at small :math:`w`; this form does not.  (It is the train-loss plateau of
    weight decay, spec ``levi:eq15``.)

    Parameters
    ----------
    w : float or array_like
        Shift, :math:`w>0`.
    lam : float or array_like
        Aspect ratio, :math:`\lambda>0`.
    """
    m, r, a = _stieltjes_parts(w, lam)
    ww = np.broadcast_to(V.positive(w, "w"), np.shape(m))
    c = a - 1.0 + ww
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(c > 0, 4.0 * ww / (r + c), r - c)
    return V.scalar_or_array(m * k / (2.0 * r))


def _s_lam(s, lam):
    ss = V.nonnegative(s, "s")
    a = _lam(lam)
    return np.broadcast_arrays(ss, a)


def _log_phi1(s: np.ndarray, a: np.ndarray) -> np.ndarray:
    """log E[nu exp(-s nu)] for arrays s >= 0, a > 0 (already validated, broadcast)."""
    r = np.sqrt(a)
    z = 2.0 * s * r
    with np.errstate(divide="ignore", invalid="ignore"):
        val = -s * (1.0 - r) ** 2 + np.log(_ive(1, z)) - np.log(s * r)
    # Series at small z: I1(z)/(z/2) = 1 + z^2/8 + ...; exact limit 0 at s = 0.
    small = z < 1e-6
    val = np.where(small, -s * (1.0 + a) + np.log1p(z * z / 8.0), val)
    return val


@cites("levi:eq19")
def mp_laplace_nu(s, lam):
    r"""Closed form of :math:`\Phi_1(s;\lambda)=\mathbb E_{\rm MP(\lambda)}[\nu e^{-s\nu}]` (the train-loss integral).

    .. math::
        \Phi_1(s;\lambda)=e^{-s(1+\lambda)}\,{}_0F_1(;2;\lambda s^2)
        =e^{-s(1-\sqrt\lambda)^2}\,\frac{\mathrm{ive}(1,2s\sqrt\lambda)}{s\sqrt\lambda},\qquad\Phi_1(0)=1 .

    Valid for every :math:`\lambda>0` (the atom contributes 0), not only :math:`\lambda<1` as the
    paper states (erratum levi-8).  Underflows for :math:`s(1-\sqrt\lambda)^2\gtrsim700`; use
    :func:`mp_log_laplace_nu` there.

    Parameters
    ----------
    s : float or array_like
        Spectral time, :math:`s\ge0` (:math:`s=4\eta_0t/d_{\rm out}` in the linear model).
    lam : float or array_like
        Aspect ratio, :math:`\lambda>0`.

    References
    ----------
    Levi et al., eq. (19) (and eq. (8), train part).
    """
    ss, a = _s_lam(s, lam)
    return V.scalar_or_array(np.exp(_log_phi1(ss, a)))


@cites("levi:eq19")
def mp_log_laplace_nu(s, lam):
    r"""Logarithm of :func:`mp_laplace_nu`, :math:`\log\mathbb E[\nu e^{-s\nu}]` (never underflows).

    Parameters
    ----------
    s : float or array_like
        :math:`s\ge0`.
    lam : float or array_like
        :math:`\lambda>0`.
    """
    ss, a = _s_lam(s, lam)
    return V.scalar_or_array(_log_phi1(ss, a))


def _log_tail_integral(s: float, a: float) -> float:
    r"""log of :math:`\int_s^\infty\Phi_1(u)\,du` by quadrature (scaled by :math:`e^{s(1-\sqrt\lambda)^2}`)."""
    r = math.sqrt(a)
    c = (1.0 - r) ** 2

    def f(v: float) -> float:
        u = s + v
        return math.exp(-c * v) * float(_ive(1, 2.0 * r * u)) / (r * u)

    val = _quad(f, 0.0, np.inf, epsabs=0.0, epsrel=1e-13, limit=200)
    return -s * c + math.log(val)


def _log_phi0(s: np.ndarray, a: np.ndarray) -> np.ndarray:
    """log E[exp(-s nu)] (atom included) for validated, broadcast arrays."""
    r = np.sqrt(a)
    c = (1.0 - r) ** 2
    z = 2.0 * s * r
    atom = np.maximum(0.0, 1.0 - 1.0 / a)
    out = np.empty(np.shape(s), dtype=np.float64)
    closed = s * c <= _GEN_CLOSED_MAX_SA
    if np.any(closed):
        sc, ac, rc, zc = s[closed], a[closed], r[closed], z[closed]
        e0 = np.exp(-sc * (1.0 - rc) ** 2)
        i0, i1 = _ive(0, zc), _ive(1, zc)
        # lam >= 1: e^{-s(1+lam)}[I0 + I1/sqrt(lam)] + (1 - 1/lam)[1 - Q1(sqrt(2s), sqrt(2 lam s))];
        # lam < 1 (same value, no negative-atom term): e^{-s(1+lam)}[I0/lam + I1/sqrt(lam)]
        #                              - (1 - lam)/lam * Q1(sqrt(2 lam s), sqrt(2s)).
        # 1 - Q1(a, b) = ncx2.cdf(b^2; 2, a^2) and Q1(a, b) = ncx2.sf(b^2; 2, a^2).
        above = ac >= 1.0
        val = np.empty_like(sc)
        if np.any(above):
            sa_, aa = sc[above], ac[above]
            atom_term = np.zeros_like(sa_)
            pos = aa > 1.0  # at lam = 1 the atom term vanishes (and ncx2 may return NaN at huge s)
            atom_term[pos] = (1.0 - 1.0 / aa[pos]) * stats.ncx2.cdf(2.0 * aa[pos] * sa_[pos], 2, 2.0 * sa_[pos])
            val[above] = e0[above] * (i0[above] + i1[above] / rc[above]) + atom_term
        below = ~above
        if np.any(below):
            sb, ab = sc[below], ac[below]
            q1 = np.where(sb > 0, stats.ncx2.sf(2.0 * sb, 2, 2.0 * ab * sb), 1.0)
            val[below] = e0[below] * (i0[below] / ab + i1[below] / rc[below]) - (1.0 - ab) / ab * q1
        val = np.where(sc == 0.0, 1.0, val)  # Phi0(0) = 1 exactly
        with np.errstate(divide="ignore", invalid="ignore"):
            out[closed] = np.log(val)
        # where a special function failed (NaN, or a non-positive value from cancellation) use the integral
        bad = np.zeros_like(closed)
        bad[closed] = ~(np.isfinite(val) & (val > 0))
        closed = closed & ~bad
    if np.any(~closed):
        idx = np.flatnonzero(~closed)
        flat_s, flat_a, flat_atom = s.reshape(-1), a.reshape(-1), atom.reshape(-1)
        res = out.reshape(-1)
        for i in idx:
            lt = _log_tail_integral(float(flat_s[i]), float(flat_a[i]))
            res[i] = np.logaddexp(math.log(flat_atom[i]), lt) if flat_atom[i] > 0 else lt
    return out


@cites("levi:gen-closed", "levi:eq8")
def mp_laplace(s, lam):
    r"""Closed form of :math:`\Phi_0(s;\lambda)=\mathbb E_{\rm MP(\lambda)}[e^{-s\nu}]` (the generalisation-loss integral).

    .. math::
        \Phi_0(s;\lambda)=e^{-s(1+\lambda)}\Big[I_0(2s\sqrt\lambda)+\frac{I_1(2s\sqrt\lambda)}{\sqrt\lambda}\Big]
        +\Big(1-\frac1\lambda\Big)\Big[1-Q_1\big(\sqrt{2s},\sqrt{2\lambda s}\big)\Big]

    with :math:`Q_1` the Marcum Q-function of order 1 (:math:`1-Q_1(a,b)` is the CDF of a
    non-central :math:`\chi^2_2` with non-centrality :math:`a^2` at :math:`b^2`).  The paper states
    that no closed form is known (erratum levi-9).  :math:`\Phi_0(0)=1`,
    :math:`\Phi_0(\infty)=(1-1/\lambda)^+`, :math:`\Phi_0'=-\Phi_1`.  For
    :math:`s(1-\sqrt\lambda)^2>50`, where the closed form cancels catastrophically, the value is
    computed as :math:`(1-1/\lambda)^++\int_s^\infty\Phi_1(u)\,du` by quadrature (spec ``levi:gen-closed``).

    Parameters
    ----------
    s : float or array_like
        :math:`s\ge0`.
    lam : float or array_like
        :math:`\lambda>0`.

    References
    ----------
    Levi et al., eq. (8) (gen part); closed form: spec ``levi:gen-closed``.
    """
    ss, a = _s_lam(s, lam)
    return V.scalar_or_array(np.exp(_log_phi0(ss, a)))


@cites("levi:gen-closed", "levi:eq8")
def mp_log_laplace(s, lam):
    r"""Logarithm of :func:`mp_laplace`, :math:`\log\mathbb E[e^{-s\nu}]`, atom included (never underflows).

    Parameters
    ----------
    s : float or array_like
        :math:`s\ge0`.
    lam : float or array_like
        :math:`\lambda>0`.
    """
    ss, a = _s_lam(s, lam)
    return V.scalar_or_array(_log_phi0(ss, a))


def _scalar_lam(lam) -> float:
    a = _lam(lam)
    if a.ndim != 0:
        raise V.DomainError(f"lam must be a scalar here (got an array of shape {a.shape})")
    return float(a)


def _call(f: Callable, x: float) -> float:
    return float(np.asarray(f(np.asarray(x, dtype=np.float64)), dtype=np.float64))


def _quad(g: Callable, lo: float, hi: float, **kw) -> float:
    """``scipy.integrate.quad`` that warns only when the error estimate exceeds 100x the request."""
    val, err, *info = integrate.quad(g, lo, hi, full_output=1, **kw)
    if err > 100.0 * max(kw.get("epsrel", 1.49e-8) * abs(val), kw.get("epsabs", 0.0)) and err > 1e-300:
        warnings.warn(f"MP quadrature error estimate {err:.2e} for value {val:.6e} exceeds the tolerance",
                      integrate.IntegrationWarning, stacklevel=3)
    return val


def _continuous_integral(f: Callable, lam: float, shift: float, rtol: float) -> float:
    r"""Scaled continuous part :math:`\int p_c(\nu) f(\nu) e^{-shift(\nu-\lambda_-)} d\nu` by QAWS.

    The exponential is applied inside; the integration range is truncated where it falls below
    :math:`e^{-60}` (the omitted mass is < 1e-26 relative).
    """
    r = math.sqrt(lam)
    lm, lp = (1.0 - r) ** 2, (1.0 + r) ** 2
    norm = 1.0 / (2.0 * math.pi * lam)
    opts = dict(epsabs=0.0, epsrel=rtol, limit=500)
    if abs(lam - 1.0) < 1e-12:
        # lam_- = 0: the 1/nu merges with the square root: weight nu^{-1/2} (4 - nu)^{1/2}.
        upper = 4.0 if shift * 4.0 <= _TRUNC else _TRUNC / shift
        if upper >= 4.0:
            g = lambda x: _call(f, x) * math.exp(-shift * x)  # noqa: E731
            val = _quad(g, 0.0, 4.0, weight="alg", wvar=(-0.5, 0.5), **opts)
        else:
            g = lambda x: _call(f, x) * math.exp(-shift * x) * math.sqrt(4.0 - x)  # noqa: E731
            val = _quad(g, 0.0, upper, weight="alg", wvar=(-0.5, 0.0), **opts)
        return norm * val
    width = lp - lm
    if shift * width <= _TRUNC:
        g = lambda x: _call(f, x) * math.exp(-shift * (x - lm)) / x  # noqa: E731
        val = _quad(g, lm, lp, weight="alg", wvar=(0.5, 0.5), **opts)
    else:
        upper = lm + _TRUNC / shift
        g = lambda x: _call(f, x) * math.exp(-shift * (x - lm)) * math.sqrt(lp - x) / x  # noqa: E731
        val = _quad(g, lm, upper, weight="alg", wvar=(0.5, 0.0), **opts)
    return norm * val


@cites("levi:mp-quad")
def mp_expect(f: Callable, lam, *, include_atom: bool = True, rtol: float = 1e-12) -> float:
    r"""Expectation :math:`\mathbb E_{\rm MP(\lambda)}[f(\nu)]` for any integrand, by adaptive Gauss–Jacobi quadrature.

    .. math::
        \mathbb E[f(\nu)]=\Big(1-\frac1\lambda\Big)^+f(0)+\frac1{2\pi\lambda}\int_{\lambda_-}^{\lambda_+}
        (\nu-\lambda_-)^{1/2}(\lambda_+-\nu)^{1/2}\frac{f(\nu)}{\nu}\,d\nu .

    The square-root end-point singularities are carried by the weight of QUADPACK's QAWS rule
    (``scipy.integrate.quad(weight='alg')``), so smooth integrands converge to ~1e-14; at
    :math:`\lambda=1` (:math:`|\lambda-1|<10^{-12}`) the :math:`1/\nu` is merged into the weight
    :math:`\nu^{-1/2}(4-\nu)^{1/2}`.  (A fixed Gauss–Chebyshev rule in :math:`\theta` is not
    accurate near :math:`\lambda=1`; spec ``levi:mp-quad``.)

    Parameters
    ----------
    f : callable
        Integrand, called with a float64 0-d array; must be finite on the support (and at 0 when
        the atom is included).
    lam : float
        Aspect ratio, scalar :math:`\lambda>0`.
    include_atom : bool
        Include the atom :math:`(1-1/\lambda)^+f(0)` (only non-zero for :math:`\lambda>1`).
    rtol : float
        Relative tolerance passed to QUADPACK, in :math:`(50\varepsilon, 1)` (QUADPACK's lower limit).
    """
    V.callable_(f, "f")
    a = _scalar_lam(lam)
    include_atom = V.flag(include_atom, "include_atom")
    rtol = V.in_open_interval(rtol, "rtol", _QUAD_RTOL_MIN, 1.0, scalar=True, context="(QUADPACK needs rtol > 50 eps)")
    val = _continuous_integral(f, a, 0.0, rtol)
    if include_atom and a > 1.0:
        val += (1.0 - 1.0 / a) * _call(f, 0.0)
    return val


@cites("levi:mp-quad")
def mp_log_expect_exp(g: Callable, s, lam, *, include_atom: bool = True, rtol: float = 1e-12) -> float:
    r"""Logarithm of :math:`\mathbb E_{\rm MP(\lambda)}[g(\nu)e^{-s\nu}]` for a non-negative integrand :math:`g`.

    Computed as :math:`-s\lambda_-+\log\mathbb E[g(\nu)e^{-s(\nu-\lambda_-)}]` so that nothing
    underflows; the atom term :math:`(1-1/\lambda)^+g(0)` is added with ``logaddexp``.  The range
    is truncated where :math:`e^{-s(\nu-\lambda_-)}<e^{-60}`.

    Parameters
    ----------
    g : callable
        Non-negative integrand, called with a float64 0-d array.
    s : float
        :math:`s\ge0`, scalar.
    lam : float
        Aspect ratio, scalar :math:`\lambda>0`.
    include_atom : bool
        Include the atom at :math:`\nu=0` (for :math:`\lambda>1`).
    rtol : float
        Relative tolerance passed to QUADPACK, in :math:`(50\varepsilon, 1)` (QUADPACK's lower limit).

    Returns
    -------
    float
        The logarithm (``-inf`` if the expectation is exactly 0).
    """
    V.callable_(g, "g")
    a = _scalar_lam(lam)
    include_atom = V.flag(include_atom, "include_atom")
    ss = V.nonnegative(s, "s")
    if ss.ndim != 0:
        raise V.DomainError(f"s must be a scalar here (got an array of shape {ss.shape})")
    s_ = float(ss)
    rtol = V.in_open_interval(rtol, "rtol", _QUAD_RTOL_MIN, 1.0, scalar=True, context="(QUADPACK needs rtol > 50 eps)")
    lm = (1.0 - math.sqrt(a)) ** 2
    cont = _continuous_integral(g, a, s_, rtol)
    with np.errstate(divide="ignore"):
        out = -s_ * lm + math.log(cont) if cont > 0 else -math.inf
    if include_atom and a > 1.0:
        g0 = _call(g, 0.0)
        if g0 > 0:
            out = float(np.logaddexp(out, math.log((1.0 - 1.0 / a) * g0)))
    return out
