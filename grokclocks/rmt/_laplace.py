"""Laplace transforms E[e^(-s nu)] and E[nu e^(-s nu)] of the Marchenko–Pastur law."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import _pointwise as P
from .. import _validate as V
from ..citations import cites
from ._bessel import _ive, _log_ive_2sr
from ._support import _gap, _lam, _lower_edge
from ._rule import mp_rule, truncation


# E[exp(-s nu)] for lam <= 1 (spec levi:gen-closed) is evaluated without the Bessel + Marcum-Q closed
# form: its subtraction of two terms of size 1/lam gave 1.8e13 instead of 0.135 at lam = 1e-30, s = 2,
# and measured against mpmath (theta-quadrature, 40 digits) it loses accuracy as s (1-sqrt(lam))^2 grows
# well before the spec's switch point 50 (2.3e-13 at lam = 0.3, s = 98; 1.5e-12 at lam = 0.7, s = 1124;
# 3.1e-11 at lam = 0.9, s = 1.9e4), and scipy's Marcum Q (ncx2.sf) is silently wrong at large
# non-centrality (0.6 relative at s = 1e12, lam = 1 - 1e-6).  Branches, all sums of positive terms:
#   z = 2 s sqrt(lam) <= 1: the double power series of the Neumann series (_log_phi0_series), error <= 2e-15;
#   lam = 1: e^{-2s}[I0(2s) + I1(2s)];
#   otherwise: the fixed Gauss-Jacobi rule over the law (grokclocks.rmt._rule, the package's one engine for
#   MP integrals), e^{-s lam_-} E[e^{-s (nu - lam_-)}] with the range truncated where the factor is below
#   e^{-40}; calibrated against the adaptive tail integral and mpmath (tests/test_rmt.py).
# (The Neumann series in ive(m, z), m <= 64, for sqrt(lam) <= 1/2, and the adaptive tail integral
# int_s^inf Phi_1(u) du for 1/4 < lam < 1 that this rule replaces cost 56 us and 0.3 ms a point.)


def _s_lam(s, lam, sc: bool = False):
    """s >= 0 and lam > 0 checked: two floats where `sc` (every argument a Python number), else broadcast arrays."""
    ss = V.nonnegative(s, "s", scalar=sc)
    a = _lam(lam, sc)
    return (ss, a) if sc else np.broadcast_arrays(ss, a)


def _log_phi1(s, a):
    r"""log E[nu exp(-s nu)] for arrays s >= 0, a > 0 (already validated, broadcast), or two floats.

    :math:`-s\lambda_- + \log\mathrm{ive}(1,z) - \log(s\sqrt\lambda)`, :math:`z=2s\sqrt\lambda`; for
    :math:`z<10^{-3}` the power series :math:`-s(1+\lambda)+\log(2I_1(z)/z)`,
    :math:`2I_1(z)/z=1+y/2+y^2/12+y^3/144+\dots`, :math:`y=z^2/4` (omitted term < 1e-23 relative;
    scipy's ive(1, z) is off by up to 6e-14 below z = 1e-10).
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # -s lam_- = -inf: below -1.8e308, exact
        return _log_phi1_engine(s, a)


def _log_phi1_engine(s, a):
    """`_log_phi1` in the caller's errstate (divide, invalid and over ignored); on numbers only the branch that applies."""
    r = np.sqrt(a)
    z = 2.0 * s * r
    small = z < 1e-3
    if isinstance(small, (bool, np.bool_)):
        return _log_phi1_series(s, a, z) if small else _log_phi1_bessel(s, a, r)
    return np.where(small, _log_phi1_series(s, a, z), _log_phi1_bessel(np.where(small, 1.0, s), a, r))


def _log_phi1_bessel(s, a, r):
    r""":math:`-s\lambda_- + \log\mathrm{ive}(1,2s\sqrt\lambda) - \log s - \log\sqrt\lambda` (z >= 1e-3)."""
    return -s * _lower_edge(a) + _log_ive_2sr(1, s, r) - np.log(s) - np.log(r)


def _log_phi1_series(s, a, z):
    r""":math:`-s(1+\lambda)+\log(2I_1(z)/z)` by its power series in :math:`y=z^2/4` (z < 1e-3)."""
    y = 0.25 * z * z
    return -s * (1.0 + a) + np.log1p(y * (0.5 + y * (1.0 / 12.0 + y / 144.0)))


# 1/(k! (m+k)!) for the double power series of _log_phi0_series at z <= 1 (m = 1..24, k = 0..12)
_M_SMALL = np.arange(1, 25, dtype=np.float64)[:, None]
_K_SMALL = np.arange(0, 13, dtype=np.float64)[None, :]
_COEF_SMALL = _M_SMALL * np.exp(-special.gammaln(_K_SMALL + 1.0) - special.gammaln(_M_SMALL + _K_SMALL + 1.0))


def _series_horner(x: np.ndarray, y: np.ndarray, m0: int, m1: int = 24) -> np.ndarray:
    r""":math:`\sum_{m=m_0}^{m_1}x^{m-m_0}P_m(y)`, :math:`P_m(y)=\sum_k c_{mk}y^k`, :math:`c_{mk}=m/(k!(m+k)!)`
    (24 x 13 terms, `_COEF_SMALL`), by Horner's rule in y and then in x: 312 multiply-adds of positive terms a
    point (the former (points, 24, 13) array of powers cost 20 us a point)."""
    arrays = isinstance(x, np.ndarray) or isinstance(y, np.ndarray)  # else two floats: the same operations on floats
    coef = _COEF_SMALL if arrays else _COEF_ROWS
    acc = np.zeros(np.shape(x)) if arrays else 0.0
    for m in range(m1 - 1, m0 - 2, -1):
        row = coef[m]
        p = np.full(np.shape(y), row[-1]) if arrays else row[-1]
        for k in range(len(row) - 2, -1, -1):
            p = p * y + row[k]
        acc = acc * x + p
    return acc


_COEF_ROWS = _COEF_SMALL.tolist()  # the same coefficients as Python floats (a float's Horner: 0.03 us an operation)


def _log_phi0_series(s: np.ndarray, a: np.ndarray) -> np.ndarray:
    r"""log E[exp(-s nu)] from a Neumann series of positive terms (1-d arrays; lam <= 1 and z = 2 s sqrt(lam) <= 1).

    Expanding the Poisson kernel :math:`1/\nu(\theta)` of the :math:`\theta`-representation in
    :math:`\cos n\theta` and integrating term by term (spec ``levi:gen-closed``, derivation) gives,
    after the :math:`(1-\lambda)` factors cancel exactly,

    .. math:: \Phi_0(s)=e^{-s(1+\lambda)}\sum_{m\ge1}m\,r^{m-1}\,\frac{2I_m(z)}{z},
        \qquad r=\sqrt\lambda,\ z=2sr,

    valid for every :math:`\lambda\le1` and free of cancellation (the Bessel + Marcum-Q closed form
    subtracts two terms of size :math:`1/\lambda`: 1.8e13 instead of 0.135 at
    :math:`\lambda=10^{-30}`, s = 2).  For :math:`z\le1` the double power series
    :math:`\sum_{m,k}m\,(s\lambda)^{m-1}(s^2\lambda)^k/(k!(m+k)!)` (:math:`s\lambda\le1/4`,
    :math:`s^2\lambda\le1/4`: 24 x 13 terms, omitted < 1e-25).
    """
    S = _series_horner(s * a, s * s * a, 1)
    out = -s * (1.0 + a) + np.log(S)
    return out


def _log_phi0_le1(s, a, r, c):
    """log E[exp(-s nu)] for 1-d arrays, 0 < a <= 1 (no atom): the branch of the module constants; on floats only
    the branch that applies (the rule on one-point arrays)."""
    if not isinstance(s, np.ndarray):
        if s * r <= 0.5:
            return _log_phi0_series(s, a)
        if c == 0.0:
            return _log_phi0_one(s)
        return _log_phi0_rule(np.array([s]), np.array([r]), np.array([c]))[0]
    out = np.empty(s.shape)
    series = s * r <= 0.5
    one = ~series & (c == 0.0)
    if np.any(series):
        out[series] = _log_phi0_series(s[series], a[series])
    if np.any(one):
        out[one] = _log_phi0_one(s[one])
    rule = ~series & ~one
    if np.any(rule):
        out[rule] = _log_phi0_rule(s[rule], r[rule], c[rule])
    return out


def _log_phi0_one(so):
    """lam = 1: log(e^{-2s}[I0(2s) + I1(2s)]), a sum of positive terms (1-d array or float s > 0.5)."""
    huge = so > 1e300  # ive(0, 2s) = ive(1, 2s) (1 + O(1/s)): log 2 + log ive(1, 2s)
    z = 2.0 * P.pick(huge, 1.0, so)
    with np.errstate(over="ignore", divide="ignore"):
        if isinstance(huge, (bool, np.bool_)):
            return math.log(2.0) + _log_ive_2sr(1, so, 1.0) if huge else np.log(_ive(0, z) + _ive(1, z))
        return np.where(huge, math.log(2.0) + _log_ive_2sr(1, so, 1.0), np.log(_ive(0, z) + _ive(1, z)))


def _log_phi0_rule(s: np.ndarray, r: np.ndarray, c: np.ndarray) -> np.ndarray:
    r""":math:`\log\mathbb E[e^{-s\nu}]=-s\lambda_-+\log\mathbb E[e^{-s(\nu-\lambda_-)}]` by the fixed rule
    (1-d arrays; ``r`` = √λ, ``c`` = λ₋ from the user's λ, no atom). ``s (nu - lam_-)`` as ``s u``: ``s w``
    overflows at s = 1.8e308."""
    w = 4.0 * r
    out = np.empty(s.shape)
    for b in mp_rule(c, w, truncation(w, s)):
        sb = s[b.sel]
        S = (b.weight * np.exp(-sb[:, None] * b.u)).sum(axis=1)
        out[b.sel] = -sb * c[b.sel] + b.log_scale + np.log(S)
    return out


def _log_phi0_cont(s: np.ndarray, a: np.ndarray) -> np.ndarray:
    r"""log E[exp(-s nu); nu > 0], the continuous part only, for validated, broadcast arrays.

    :math:`\lambda>1` by the duality of the MP law (the non-zero eigenvalues of
    :math:`X^\top X/N` are those of :math:`XX^\top/N`): :math:`\nu/\lambda\sim{\rm MP}(1/\lambda)` on
    :math:`\nu>0`, so the continuous part is :math:`\Phi_0(s\lambda;1/\lambda)/\lambda`.  Only
    :math:`\sqrt{1/\lambda}=1/\sqrt\lambda` and :math:`(1-\sqrt{1/\lambda})^2=\lambda_-/\lambda` enter, both
    computed from :math:`\lambda` itself: the rounding of a float :math:`1/\lambda` would shift
    :math:`\lambda_-` by ~1e-16 absolute, i.e. 1e-11 relative in :math:`\Phi_0` at :math:`\lambda=1+10^{-8}`,
    :math:`s=10^{12}` (measured).  ``-inf`` where :math:`s\lambda` is beyond 1.8e308.
    """
    if not isinstance(s, np.ndarray) and not isinstance(a, np.ndarray):  # two floats: the branch that applies
        if a <= 1.0:  # `_gap`'s operations on the float (its square <= 1: no overflow to ignore)
            return _log_phi0_le1(s, a, np.sqrt(a), _lower_edge(a))
        with np.errstate(over="ignore"):
            sd = s * a
            gap = _lower_edge(a)  # `_gap` of the float
        if not sd < math.inf:  # s lam beyond 1.8e308: the continuous part is exp(-inf)
            return -math.inf
        return _log_phi0_le1(sd, 1.0 / a, 1.0 / np.sqrt(a), gap / a) - np.log(a)
    shape = np.shape(s)
    sf, af = np.asarray(s, dtype=np.float64).reshape(-1), np.asarray(a, dtype=np.float64).reshape(-1)
    out = np.empty(sf.shape)
    le1 = af <= 1.0
    if np.any(le1):
        al = af[le1]
        out[le1] = _log_phi0_le1(sf[le1], al, np.sqrt(al), _gap(al))
    gt1 = ~le1
    if np.any(gt1):
        sg, ag = sf[gt1], af[gt1]
        with np.errstate(over="ignore"):
            sd = sg * ag
        fin = np.isfinite(sd)
        cont = np.full(sg.shape, -np.inf)  # s lam beyond 1.8e308: the continuous part is exp(-inf)
        if np.any(fin):
            ai = ag[fin]
            cont[fin] = _log_phi0_le1(sd[fin], 1.0 / ai, 1.0 / np.sqrt(ai), _gap(ai) / ai) - np.log(ai)
        out[gt1] = cont
    return out.reshape(shape)


def _log_phi0(s, a):
    r"""log E[exp(-s nu)] (atom included) for validated, broadcast arrays or two floats: the atom max(0, 1 − 1/λ)
    and the continuous part (`_log_phi0_cont`), two positive terms added in logs."""
    cont = _log_phi0_cont(s, a)
    if not isinstance(s, np.ndarray) and not isinstance(a, np.ndarray):
        if not a > 1.0:
            return cont
        return np.logaddexp(np.log(a - 1.0) - np.log(a), cont)
    a = np.broadcast_to(np.asarray(a, dtype=np.float64), np.shape(cont))
    gt1 = a > 1.0
    if not np.any(gt1):
        return cont
    with np.errstate(divide="ignore"):
        atom = np.where(gt1, np.log(np.where(gt1, a - 1.0, 1.0)) - np.log(a), -np.inf)
    return np.where(gt1, np.logaddexp(atom, cont), cont)


def _phi1_slope(s: np.ndarray, a: np.ndarray) -> np.ndarray:
    r""":math:`d\log\Phi_1/ds=-\mathbb E[\nu^2e^{-s\nu}]/\mathbb E[\nu e^{-s\nu}]` (flat arrays), a Newton derivative.

    :math:`=-(1+\lambda)+2\sqrt\lambda\,I_2(z)/I_1(z)` with :math:`I_2/I_1=I_0/I_1-2/z`, written as
    :math:`-(1-\sqrt\lambda)^2+2\sqrt\lambda\,(\delta-2/z)`, :math:`\delta=I_0/I_1-1`, free of the cancellation
    of the two terms of size 2 (at λ = 1, s = 1e43 the direct form gave 0); :math:`\delta` from
    :math:`a+a^2`, :math:`a=1/(2z)+1/(8z^2)` (the expansion of :math:`1-I_1/I_0`) above :math:`z=10^3`
    (relative error ~1e-6, ample for a derivative), and :math:`I_2/I_1=z/4` below :math:`z=10^{-3}`.
    """
    r = np.sqrt(a)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        z = 2.0 * s * r
        small = z < 1e-3
        large = z > 1e3
        zs = np.where(small | large, 1.0, z)
        aa = 0.5 / z + 0.125 / (z * z)
        delta = np.where(large, aa + aa * aa, _ive(0, zs) / _ive(1, zs) - 1.0)
        return np.where(small, -(1.0 + a) + 0.5 * r * z, -_gap(a) + 2.0 * r * (delta - 2.0 / np.where(small, 1.0, z)))


def _log_phi1_increment(s: np.ndarray, u: np.ndarray, a: np.ndarray) -> np.ndarray:
    r""":math:`\log\Phi_1(s+u)-\log\Phi_1(s)` (arrays) without subtracting two large logarithms.

    :math:`\log\Phi_1(s)=-s(1+\lambda)+z+M(z)`, :math:`z=2s\sqrt\lambda`,
    :math:`M(z)=\log(2\,\mathrm{ive}(1,z)/z)` (series :math:`\log(1+y/2+\dots)-z` below
    :math:`z=10^{-3}`, as in :func:`_log_phi1`), so the increment is
    :math:`-\lambda_-u+M(z_2)-M(z_1)` with :math:`M` of moderate size.
    """
    r = np.sqrt(a)

    def M(z):
        small = z < 1e-3
        zs = np.where(small, 1.0, z)
        y = 0.25 * z * z
        return np.where(small, np.log1p(y * (0.5 + y * (1.0 / 12.0 + y / 144.0))) - z, np.log(2.0 * _ive(1, zs) / zs))

    return -_gap(a) * u + M(2.0 * (s + u) * r) - M(2.0 * s * r)


def _phi0_excess(s: np.ndarray, a: np.ndarray) -> np.ndarray:
    r""":math:`(\Phi_0(s)-\Phi_1(s))/\Phi_1(s)=\mathbb E[(1-\nu)e^{-s\nu}]/\mathbb E[\nu e^{-s\nu}]` for
    :math:`\lambda\le10^{-2}` (flat arrays), without the cancellation of the difference.

    For :math:`z=2s\sqrt\lambda\le1` from the double power series of :func:`_log_phi0_series`, in which
    :math:`\Phi_1` is exactly the terms :math:`m=1`: (terms :math:`m\ge2`)/(terms :math:`m=1`), a ratio of
    positive sums (~ :math:`\lambda s`; :math:`\Phi_0-\Phi_1` as a difference keeps no digit at
    :math:`\lambda<10^{-16}`).  For :math:`z>1` both expectations by the fixed rule (`_rule`), with
    :math:`1-\nu=(2\sqrt\lambda-\lambda)-u`: the sign change of :math:`1-\nu` on the support costs at most a
    factor :math:`4/z` there.  Used for the grokking delay at small :math:`\lambda` (``linear``).
    """
    s, a = np.asarray(s, dtype=np.float64), np.asarray(a, dtype=np.float64)
    r = np.sqrt(a)
    z = 2.0 * s * r
    out = np.empty(s.shape)
    small = z <= 1.0
    if np.any(small):
        x, y = s[small] * a[small], s[small] * s[small] * a[small]
        out[small] = x * _series_horner(x, y, 2) / _series_horner(x, y, 1, 1)
    big = ~small
    if np.any(big):
        sb, rb, ab = s[big], r[big], a[big]
        lm, w = _gap(ab), 4.0 * rb
        val = np.empty(sb.shape)
        for b in mp_rule(lm, w, truncation(w, sb)):
            e = b.weight * np.exp(-sb[b.sel, None] * b.u)
            one_m_nu = (rb[b.sel] * (2.0 - rb[b.sel]))[:, None] - b.u
            val[b.sel] = (e * one_m_nu).sum(axis=1) / (e * b.nu).sum(axis=1)
        out[big] = val
    return out


@cites("levi:eq19")
@V.broadcasting()
def mp_laplace_nu(s, lam):
    r"""Closed form of Φ₁(s; λ) = E[ν e^(−sν)] over the Marchenko–Pastur law (the train-loss integral).

    .. math::
        \Phi_1(s;\lambda)=e^{-s(1+\lambda)}\,{}_0F_1(;2;\lambda s^2)
        =e^{-s(1-\sqrt\lambda)^2}\,\frac{\mathrm{ive}(1,2s\sqrt\lambda)}{s\sqrt\lambda},\qquad\Phi_1(0)=1 .

    In words: e^(−s(1 − √λ)²)·ive(1, 2s√λ)/(s√λ), with ive(1, z) = e^(−z)I₁(z) the scaled modified Bessel
    function. Valid for every λ > 0 (the atom contributes 0), not only λ < 1 as the paper states (erratum
    levi-8). It underflows for s(1 − √λ)² ≳ 700; use `mp_log_laplace_nu` there.

    Parameters
    ----------
    s : float or array_like
        The spectral time s ≥ 0 (s = 4η₀t/d_out in the linear model, `grokclocks.linear`).
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        Φ₁(s; λ), the broadcast shape of `s` and `lam`.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation): relative error ≤ 4·10⁻¹⁵·max(1, |log value|) for s
    in [0, 1.8·10³⁰⁸] and λ in [10⁻³⁰⁸, 10³⁰⁰] (power series below z = 2s√λ = 10⁻³, Hankel expansion above
    10⁸).

    References
    ----------
    Levi et al., eq. (19) (and eq. (8), train part); spec `levi:eq19`.
    """
    sc = P.scalars(s, lam)
    ss, a = _s_lam(s, lam, sc)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return P.result(np.exp(_log_phi1_engine(ss, a)))


@cites("levi:eq19")
@V.broadcasting()
def mp_log_laplace_nu(s, lam):
    r"""Logarithm of `mp_laplace_nu`, log E[ν e^(−sν)] (never underflows).

    Absolute error ≤ 4·10⁻¹⁵·max(1, |value|) for s in [0, 1.8·10³⁰⁸] and λ in [10⁻³⁰⁸, 10³⁰⁰]; `-inf` where
    the logarithm is below −1.8·10³⁰⁸.

    Parameters
    ----------
    s : float or array_like
        The spectral time s ≥ 0 (s = 4η₀t/d_out in the linear model, `grokclocks.linear`).
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        log Φ₁(s; λ), the broadcast shape of `s` and `lam`.

    References
    ----------
    Levi et al., eq. (19); spec `levi:eq19`.
    """
    sc = P.scalars(s, lam)
    ss, a = _s_lam(s, lam, sc)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return P.result(_log_phi1_engine(ss, a))


@cites("levi:gen-closed", "levi:eq8")
@V.broadcasting()
def mp_laplace(s, lam):
    r"""Closed form of Φ₀(s; λ) = E[e^(−sν)] over the Marchenko–Pastur law, atom included (the generalisation-loss integral).

    .. math::
        \Phi_0(s;\lambda)=e^{-s(1+\lambda)}\Big[I_0(2s\sqrt\lambda)+\frac{I_1(2s\sqrt\lambda)}{\sqrt\lambda}\Big]
        +\Big(1-\frac1\lambda\Big)\Big[1-Q_1\big(\sqrt{2s},\sqrt{2\lambda s}\big)\Big]

    In words: Bessel terms plus (1 − 1/λ) times the CDF 1 − Q₁ of a non-central χ²₂ (Q₁ the Marcum Q-function
    of order 1). The paper states that no closed form is known (erratum levi-9). Φ₀(0) = 1, Φ₀(∞) = max(0, 1 −
    1/λ), Φ₀′ = −Φ₁.

    Evaluation (every branch a sum of positive terms; the closed form above subtracts two terms of size 1/λ
    and gave 1.8·10¹³ instead of 0.1353 at λ = 10⁻³⁰, s = 2): λ > 1 by the duality Φ₀(s; λ) = (1 − 1/λ) +
    Φ₀(sλ; 1/λ)/λ; for λ ≤ 1 the Neumann series e^(−s(1+λ))·Σ_{m≥1} m·λ^((m−1)/2)·2I_m(z)/z, z = 2s√λ, as a
    double power series where z ≤ 1; at λ = 1, e^(−2s)[I₀(2s) + I₁(2s)]; otherwise e^(−sλ₋)·E[e^(−s(ν−λ₋))] by
    the fixed Gauss–Jacobi rule over the law (24 + 2τ_T nodes in a log-mapped variable that removes the 1/ν
    near-pole, the range cut where the factor is below e⁻⁴⁰; proved against the spec's adaptive tail integral
    ∫_s^∞ Φ₁(u) du and mpmath: ≤ 2.1·10⁻¹⁵ of log Φ₀ near λ = 1; spec `levi:gen-closed`). Vectorised over `s`
    and `lam`, no quadrature per point. It underflows to 0 at large s; use `mp_log_laplace` there.

    Parameters
    ----------
    s : float or array_like
        The spectral time s ≥ 0 (s = 4η₀t/d_out in the linear model, `grokclocks.linear`).
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        Φ₀(s; λ), the broadcast shape of `s` and `lam`.

    Notes
    -----
    Measured accuracy (Accuracy page of the documentation): relative error ≤ 2·10⁻¹⁴·max(1, |log value|) for s
    in [0, 1.8·10³⁰⁸] and λ in [10⁻³⁰⁸, 10³⁰⁰].

    References
    ----------
    Levi et al., eq. (8) (generalisation part); spec `levi:gen-closed`, `levi:eq8`.
    """
    sc = P.scalars(s, lam)
    ss, a = _s_lam(s, lam, sc)
    return P.result(np.exp(_log_phi0(ss, a)))


@cites("levi:gen-closed", "levi:eq8")
@V.broadcasting()
def mp_log_laplace(s, lam):
    r"""Logarithm of `mp_laplace`, log E[e^(−sν)], atom included (never underflows).

    The same branches as `mp_laplace`; absolute error ≤ 2·10⁻¹⁴·max(1, |value|) for s in [0, 1.8·10³⁰⁸] and λ
    in [10⁻³⁰⁸, 10³⁰⁰]; `-inf` where the logarithm is below −1.8·10³⁰⁸.

    Parameters
    ----------
    s : float or array_like
        The spectral time s ≥ 0 (s = 4η₀t/d_out in the linear model, `grokclocks.linear`).
    lam : float or array_like
        The aspect ratio λ = d/N of the Gram matrix (d_in/N_tr in the linear model), λ > 0.

    Returns
    -------
    float or ndarray
        log Φ₀(s; λ), the broadcast shape of `s` and `lam`.

    References
    ----------
    Levi et al., eq. (8); spec `levi:gen-closed`, `levi:eq8`.
    """
    sc = P.scalars(s, lam)
    ss, a = _s_lam(s, lam, sc)
    return P.result(_log_phi0(ss, a))
