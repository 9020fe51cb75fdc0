"""Levi et al.: weight decay: loss asymptotes, the largest weight decay that still groks, eq. 16."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import _pointwise as P
from .. import _validate as V
from .. import rmt
from .._constants import ERF_SQRT2
from ..citations import cites
from ._conventions import (
    _d_out,
    _eps,
    _eta0,
    _gamma_paper,
    _lam,
    _lam_below_one,
    _lam_not_one,
    _level,
    _ROOT_RTOL,
)
from .._floats import bracketed_root
from .._mpgrid._grids import _half_gamma
from ._crossing import _log_lstar
from ._losses import _log_loss_inf


class WDAsymptotes(NamedTuple):
    r"""Result of `wd_asymptotes` and `wd_asymptotes_small_gamma`: the t → ∞ losses with weight decay (eq. 15).

    `L_tr_inf` is the train loss and `L_gen_inf` the generalisation loss as t → ∞.
    """

    L_tr_inf: float | np.ndarray
    """The train loss as t → ∞, L_tr(∞)."""
    L_gen_inf: float | np.ndarray
    """The generalisation loss as t → ∞, L_gen(∞)."""


@cites("levi:eq15", "levi:mp-stieltjes", "levi:conv-wd")
@V.broadcasting()
def wd_asymptotes(lam, gamma, *, d_out=1, wd_convention="paper"):
    r"""Exact t → ∞ train and generalisation losses with weight decay (eq. 15, corrected).

    .. math::
        \mathcal L_{\rm tr}(\infty)=\frac{\gamma^2}{8d_{\rm out}}\,\mathbb E\Big[\frac{\nu}{(\nu+g)^2}\Big]
        =\frac{\gamma^2}{8d_{\rm out}}[m(g)-g\,m_2(g)],\qquad
        \mathcal L_{\rm gen}(\infty)=\frac{\gamma^2}{8d_{\rm out}}\,m_2(g),\qquad g=\frac\gamma2

    In words: γ²/(8d_out) times E[ν/(ν + g)²] (train) and E[1/(ν + g)²] = m₂(g) (generalisation) over the
    Marchenko–Pastur law, atom included, g = γ/2 (m, m₂ are its resolvent moments). For λ > 1 the
    generalisation value tends to (1 − 1/λ)/(2d_out) as γ → 0⁺, half of the γ = 0 plateau; at γ = 0 exactly
    the γ = 0 limits (0, max(0, 1 − 1/λ)/d_out) are returned. Independent of the learning rate and (for γ > 0)
    of the init scale.

    Parameters
    ----------
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0.
    gamma : float or array_like
        Weight decay γ ≥ 0, in the convention named by `wd_convention`. The single value 5e-324 in the
        paper convention raises `DomainError` (its half γ/2 rounds to 0).
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    wd_convention : {"paper", "torch"}
        Convention of `gamma`. "paper" (default): the paper's γ of eq. (3), whose GD step adds η₀γS/d_out.
        "torch": the `weight_decay` of PyTorch's `SGD` on a mean-reduced MSE, whose step adds η₀γS;
        converted as γ_paper = d_out·γ (spec `levi:conv-wd`).

    Returns
    -------
    (L_tr_inf, L_gen_inf) : tuple of float or ndarray
        A `WDAsymptotes` named tuple: the limiting train and generalisation losses, each the broadcast
        shape of `lam` and `gamma`; it unpacks like a plain tuple.

    References
    ----------
    Levi et al., eq. (15) (the paper's γ²/4 is corrected to γ²/8; erratum levi-1); spec `levi:eq15`,
    `levi:mp-stieltjes`, `levi:conv-wd`.
    """
    sc = P.scalars(lam, gamma)
    ll = _lam(lam, sc)
    d = _d_out(d_out)
    gg = _gamma_paper(gamma, d, wd_convention, sc)
    if sc and gg > 0.0:  # two numbers: the engine's operations on floats (the array call's bits)
        tr, ge = rmt._wd_plateaus(_half_gamma(gg), ll, 2.0 * float(d))
        return WDAsymptotes(float(tr), float(ge))
    shape, (lf, gf) = ((), (ll, gg)) if sc else V.broadcast_flat(ll, gg)
    low = P.low(gf) if np.size(gf) else 0.0
    if low > 0.0:  # every gamma > 0: both plateaus from one engine
        g = np.multiply(gf, 0.5)
        if 0.5 * low == 0.0:  # the smallest gamma's half rounds to 0 (its DomainError); the half is monotone
            _half_gamma(gf)
        tr, ge = (np.reshape(v, shape) for v in rmt._wd_plateaus(g, lf, 2.0 * float(d)))
    else:
        lf, gf = np.atleast_1d(lf, gf)  # a scalar call with gamma = 0: one-point arrays
        one = np.ones(lf.shape)
        tr, ge = (np.exp(_log_loss_inf(w, lf, float(d), gf, one)).reshape(shape) for w in ("train", "gen"))
    return WDAsymptotes(V.scalar_or_array(tr), V.scalar_or_array(ge))


@cites("levi:eq15")
@V.broadcasting()
def wd_asymptotes_small_gamma(lam, gamma, *, convention="corrected"):
    r"""Small-γ forms of the weight-decay asymptotes (d_out = 1).

    .. math::
        \lambda<1:\ \frac{\gamma^2}{8(1-\lambda)},\ \frac{\gamma^2}{8(1-\lambda)^3};\qquad
        \lambda>1:\ \frac{\gamma^2}{8\lambda(\lambda-1)},\ \frac{1-1/\lambda}{2}+\frac{\gamma^2}{8(\lambda-1)^3}

    In words (train, generalisation): for λ < 1, γ²/(8(1 − λ)) and γ²/(8(1 − λ)³); for λ > 1, γ²/(8λ(λ − 1))
    and (1 − 1/λ)/2 + γ²/(8(λ − 1)³). `convention="paper"` returns the paper's printed γ²/(4(1 − λ)) and
    γ²/(4(1 − λ)³) (twice too large; stated only for λ < 1). Valid for γ/2 ≪ (1 − √λ)²; use `wd_asymptotes`
    otherwise.

    Parameters
    ----------
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, λ ≠ 1; 0 < λ < 1 with `convention="paper"`.
    gamma : float or array_like
        Weight decay γ ≥ 0 in the paper convention.
    convention : {"corrected", "paper"}
        "corrected" (default): the expansions of the exact asymptotes above; "paper": the paper's printed
        eq. 15.

    Returns
    -------
    (L_tr_inf, L_gen_inf) : tuple of float or ndarray
        A `WDAsymptotes` named tuple, each entry the broadcast shape of `lam` and `gamma`; it unpacks like
        a plain tuple.

    References
    ----------
    Levi et al., eq. (15); spec `levi:eq15`; errata levi-1, levi-3.
    """
    conv = V.choice(convention, "convention", ("corrected", "paper"))
    sc = P.scalars(lam, gamma)
    g = V.nonnegative(gamma, "gamma", scalar=sc)
    if conv == "paper":
        ll = _lam_below_one(lam, "the paper's eq. 15")
        ll, g = np.broadcast_arrays(ll, g)
        return WDAsymptotes(V.scalar_or_array(g**2 / (4.0 * (1.0 - ll))), V.scalar_or_array(g**2 / (4.0 * (1.0 - ll) ** 3)))
    ll = _lam_not_one(lam, "the small-gamma expansion of eq. 15", sc)
    if sc:  # two Python floats through the same arithmetic (no overflow or underflow warns on floats)
        return WDAsymptotes(*_small_gamma_corrected(ll, g))
    with np.errstate(over="ignore", under="ignore"):
        tr, ge = _small_gamma_corrected(ll, g)  # each of the broadcast shape (q = g/|1 - lam| is a factor of both)
    return WDAsymptotes(V.scalar_or_array(tr), V.scalar_or_array(ge))


def _small_gamma_corrected(ll, g):
    """(train, gen) of the corrected small-gamma forms, for two numbers or arrays (the same operations), in the
    caller's errstate.  Divided before multiplied: g^2 overflows at 1e155; |1 - lam| is 1 - lam or lam - 1 exactly.
    Each side of lam = 1 alone where every point lies there (its extremes): no select."""
    lo, hi = P.extrema(ll)
    if hi < 1.0 or lo > 1.0:
        below = hi < 1.0
        dl = 1.0 - ll if below else ll - 1.0
        q = g / dl
        tr = (g / 8.0) * q if below else (g / (8.0 * ll)) * q
        ge = (q / (8.0 * dl)) * q
        return tr, (ge if below else 0.5 * dl / ll + ge)
    below = ll < 1.0
    dl = np.where(below, 1.0 - ll, ll - 1.0)
    q = g / dl
    tr = np.where(below, (g / 8.0) * q, (g / (8.0 * ll)) * q)
    ge = np.where(below, 0.0, 0.5 * dl / ll) + (q / (8.0 * dl)) * q
    return tr, ge


# The smallest weight decay the exact asymptote takes (gamma / 2 must not round to 0 in float64), in logs.
_LOG_GAMMA_MIN = math.log(1e-323)


def _wd_gamma_max_flat(lam: np.ndarray, eps: np.ndarray, d: float, level: np.ndarray) -> np.ndarray:
    """γ_max for flat arrays (paper convention): the root in u = log γ of log L_gen(∞; e^u) = log L*, bracketed
    by galloping 8 octaves at a time from γ = 1 and found by the Illinois method in lockstep (`bracketed_root`)."""
    log_target = _log_lstar(eps, d, level)  # in logs: L* may exceed 1.8e308 (tiny level)
    out = np.empty(lam.shape)
    every = log_target + math.log(d) >= math.log(0.5)  # L_gen(inf) < 1/(2 d_out) for every gamma
    with np.errstate(divide="ignore", invalid="ignore"):
        none = ~every & (lam > 1.0) & (np.log(0.5 * ((lam - 1.0) / lam)) >= log_target + math.log(d))
    out[every] = np.inf
    out[none] = 0.0  # even gamma -> 0+ leaves the plateau above L*
    idx = np.flatnonzero(~every & ~none)
    if idx.size == 0:
        return out
    la, lt = lam[idx], log_target[idx]
    one = np.ones(la.shape)

    def f(u, k):
        return _log_loss_inf("gen", la[k], d, np.exp(u), one[k]) - lt[k]

    step = 8.0 * math.log(2.0)
    lo, hi = np.zeros(la.size), np.zeros(la.size)
    f0 = f(lo, np.arange(la.size))
    down = f0 > 0  # gallop down until f <= 0 ... (f increases with gamma)
    below = np.zeros(la.size, dtype=bool)  # still above L* at the smallest gamma: gamma_max underflows
    k = np.flatnonzero(down)
    while k.size:
        hi[k], lo[k] = lo[k], np.maximum(lo[k] - step, _LOG_GAMMA_MIN)
        above = f(lo[k], k) > 0
        below[k[above & (lo[k] <= _LOG_GAMMA_MIN)]] = True
        k = k[above & (lo[k] > _LOG_GAMMA_MIN)]
    k = np.flatnonzero(~down)
    while k.size:
        lo[k], hi[k] = hi[k], hi[k] + step
        k = k[f(hi[k], k) <= 0]
    out[idx[below]] = 0.0  # the root lies below 1e-323: 0.0 is the nearest double
    ok = np.flatnonzero(~below)
    if ok.size:

        def f_ok(u, j):
            return f(u, ok[j])

        out[idx[ok]] = np.exp(bracketed_root(f_ok, lo[ok], hi[ok], xtol=1e-14, rtol=_ROOT_RTOL))
    return out


@cites("levi:eq15", "levi:eq14", "levi:fig3")
@V.broadcasting()
def wd_gamma_max(lam, eps, *, d_out=1, level=ERF_SQRT2, wd_convention="paper"):
    r"""Largest weight decay for which the generalisation accuracy still reaches `level` (edge of Fig. 3's gray region).

    .. math:: \gamma_{\max}:\quad \mathcal L_{\rm gen}(\infty;\gamma_{\max})=\frac{\gamma_{\max}^2}{8d_{\rm out}}\,m_2(\gamma_{\max}/2)=\mathcal L^*

    In words: the root in γ of L_gen(∞; γ) = L*, with the exact asymptote of `wd_asymptotes` (which increases
    with γ) and L* of `loss_threshold`. Returns `inf` if L* ≥ 1/(2d_out) (every γ works), 0.0 if λ > 1 and
    (1 − 1/λ)/(2d_out) ≥ L* (no γ > 0 works), and 0.0 where γ_max lies below 10⁻³²³, the nearest double
    (it underflows: at λ = 1 the asymptote grows like √γ, so ε = 2.2·10⁻³⁰⁸ puts γ_max near 10⁻⁶¹⁶). Reference values (ε = 10⁻³, d_out = 1, default level): 0.02713
    (λ = 0.3), 0.01659 (0.5), 0.007882 (0.7), 0.001621 (0.9).

    Parameters
    ----------
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0.
    eps : float or array_like
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    level : float or array_like
        Accuracy level ℓ in (0, 1): a crossing time is where the accuracy reaches ℓ. Default `ERF_SQRT2` =
        erf(√2) ≈ 0.9545, the paper's "95 %", for which L* = ε/4 exactly at d_out = 1.
    wd_convention : {"paper", "torch"}
        Convention of the returned γ: "paper" (default) or "torch" (the paper value divided by d_out; spec
        `levi:conv-wd`).

    Returns
    -------
    float or ndarray
        γ_max in the requested convention, the broadcast shape of `lam`, `eps` and `level`.

    References
    ----------
    Levi et al., eqs. (14), (15), Fig. 3; spec `levi:eq15`, `levi:eq14`, `levi:fig3`.
    """
    ll = _lam(lam)
    ee = _eps(eps)
    d = _d_out(d_out)
    lv = _level(level)
    conv = V.choice(wd_convention, "wd_convention", ("paper", "torch"))
    shape, (lf, ef, vf) = V.broadcast_flat(ll, ee, lv)
    out = _wd_gamma_max_flat(lf, ef, float(d), vf).reshape(shape)
    if conv == "torch":
        out = out / d
    return V.scalar_or_array(out)


@cites("levi:eq15-dt")
@V.broadcasting()
def grok_time_wd_paper(lam, eta0):
    r"""The paper's grokking time with weight decay: a paper claim, contradicted by the exact eq. 14.

    .. math:: \Delta t_{\rm grok}\simeq\frac{\log(1+\sqrt\lambda)}{2\eta_0(1-\sqrt\lambda)^2}\quad\text{(paper; not derivable)}

    In words: log(1 + √λ)/(2η₀(1 − √λ)²), independent of γ. Transcription only: the exact `grok_time` with
    `gamma` > 0 increases with γ and diverges at `wd_gamma_max` (λ = 0.5, ε = 10⁻³: 431, 439, 457, 596, ∞
    for γ = 0, 10⁻³, 3·10⁻³, 10⁻², 3·10⁻², while this gives 312; erratum levi-2).

    Parameters
    ----------
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0, with 0 < λ < 1.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.

    Returns
    -------
    float or ndarray
        The paper's Δt in GD steps, the broadcast shape of `lam` and `eta0`.

    References
    ----------
    Levi et al., eq. (15) and §3.3.2; spec `levi:eq15-dt` (status: paper claim).
    """
    ll = _lam_below_one(lam, "the paper's weight-decay grokking time")
    et = _eta0(eta0)
    with np.errstate(over="ignore", under="ignore"):
        return V.scalar_or_array(np.log1p(np.sqrt(ll)) / (2.0 * et) / rmt._gap(ll))
