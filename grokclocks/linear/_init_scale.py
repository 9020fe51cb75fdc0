"""Levi et al.: the initialisation scale (eq. 33): loss factor and effective threshold."""

from __future__ import annotations

import math

import numpy as np

from .. import _pointwise as P
from .. import _validate as V
from ..citations import cites
from ._conventions import _eps


@cites("levi:init-rescale")
def init_scale_factor(alpha):
    r"""Factor by which both losses grow when the student's initialisation is rescaled, S₀ → αS₀.

    .. math:: c_\alpha=\frac{\mathbb E\|D_0\|_F^2(\alpha)}{\mathbb E\|D_0\|_F^2(1)}=\frac{1+\alpha^2}{2}

    In words: c_α = (1 + α²)/2, the expected squared initial error ‖S₀ − T‖² at scale α over its value at the
    paper's initialisation (α = 1).

    Parameters
    ----------
    alpha : float or array_like
        α, the scale of the student's initialisation relative to the paper's; any finite real (0 starts
        the student at zero).

    Returns
    -------
    float or ndarray
        c_α, the shape of `alpha` (`inf` only where it exceeds 1.8·10³⁰⁸, |α| > 1.9·10¹⁵⁴).

    References
    ----------
    Levi et al., §3.1.3; spec `levi:init-rescale` (erratum levi-18).
    """
    a = V.finite(alpha, "alpha")
    with np.errstate(over="ignore"):  # inf = the factor itself beyond 1.8e308 (|alpha| > 1.9e154)
        return V.scalar_or_array(0.5 * (1.0 + a * a))


@cites("levi:init-rescale")
@V.broadcasting()
def effective_eps(eps, alpha):
    r"""Threshold that gives the α = 1 losses the accuracies of the initialisation scale α (γ = 0).

    .. math:: \epsilon_{\rm eff}=\frac{\epsilon}{c_\alpha}=\frac{2\epsilon}{1+\alpha^2}

    In words: ε divided by c_α = (1 + α²)/2. Rescaling the initialisation does not leave the grokking time
    unchanged (the paper's claim): e.g. λ = 0.5, ε = 10⁻³: Δt = 412.5, 431.3, 463.2, 497.6 for α = 0.5, 1, 2,
    4.

    Parameters
    ----------
    eps : float or array_like
        ε, the threshold on a sample's squared error (averaged over the d_out outputs) below which the
        sample counts as correct; ε > 0.
    alpha : float or array_like
        α, the scale of the student's initialisation relative to the paper's; any finite real.

    Returns
    -------
    float or ndarray
        ε_eff, the broadcast shape of `eps` and `alpha`.

    References
    ----------
    Levi et al., §3.1.3; spec `levi:init-rescale`.
    """
    sc = P.scalars(eps, alpha)
    e = _eps(eps, sc)
    a = V.finite(alpha, "alpha", scalar=sc)
    if sc:  # two Python floats: the same operations, an overflow gives inf without a warning
        return _effective_eps(e, a)
    with np.errstate(over="ignore", under="ignore"):
        return V.scalar_or_array(_effective_eps(e, a))


def _effective_eps(e, a):
    """2 eps/(1 + alpha^2) for numbers or arrays (in the caller's errstate): the direct form where 1 + alpha^2
    and the quotient are finite, 2 (eps/h)/h with h = hypot(1, alpha) on the other points."""
    d = a * a
    d += 1.0  # in place on an array (the engine's own temporary); 1 + alpha^2 overflows at alpha = 1e155
    out = 2.0 * e  # inf at eps = 9e307
    out = np.divide(out, d, out=P.into(out, d)) if isinstance(out, np.ndarray) else out / d
    if P.high(d) < math.inf and P.high(out) < math.inf:  # d >= 1 and out >= 0 (never NaN): two reductions
        return out
    bad = ~np.isfinite(d) | ~np.isfinite(out)
    h = np.hypot(1.0, a)  # sqrt(1 + alpha^2)
    return P.result(np.where(bad, 2.0 * (e / h) / h, out))
