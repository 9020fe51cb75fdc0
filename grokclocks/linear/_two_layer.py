"""Levi et al.: the two-layer linear network."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import _validate as V
from ..citations import cites
from ._conventions import _d_out, _t, _which
from ._losses import _log_phi


@cites("levi:eq18", "levi:eq42", "levi:eq16", "levi:eq40", "levi:eq17", "levi:eq41")
def loss_two_layer(t, lam, eta0, d_out, D0_sq, which="train", *, h=0.5, kappa=None, proj_sq=None):
    r"""Losses of the two-layer linear network :math:`f(x)=S_1^\top S_0^\top x` (corrected eq. 18).

    .. math::
        \mathcal L_{\rm tr/gen}(t)=\frac{\|D_0\|_F^2}{d_{\rm out}}\,\mathbb E\Big[q\,\exp\Big(-\frac{4\eta_0h}{d_{\rm out}^2}\nu t\Big)\Big]

    (frozen :math:`h\approx\|S_1\|_F^2\approx\tfrac12`; the paper's prefactor lacks the
    :math:`1/d_{\rm out}`, erratum levi-7).  Refined form (``kappa``, ``proj_sq`` = eigenvalues
    :math:`\kappa_j` of :math:`S_1(0)^\top S_1(0)` and :math:`\|D_0u_j\|^2`):
    :math:`\mathcal L=\frac1{d_{\rm out}}\sum_j\|D_0u_j\|^2\,\mathbb E[q\,e^{-4\eta_0\kappa_j\nu t/d_{\rm out}}]`
    (``D0_sq`` is then not used).  Valid for :math:`d_h\gg d_{\rm out}`.

    Parameters
    ----------
    t : float or array_like
        :math:`t\ge0`.
    lam : float
        :math:`\lambda>0`.
    eta0 : float
        :math:`\eta_0>0`.
    d_out : int
        :math:`\ge1`.
    D0_sq : float
        :math:`\|D_0\|_F^2\ge0` (measured, or :math:`1/(2d_h)` at the paper's init).
    which : {"train", "tr", "gen"}
    h : float
        Frozen :math:`h>0` (default 1/2).
    kappa, proj_sq : array_like, optional
        Refined form; both or neither, 1-d, same length, entries :math:`\ge0`.

    Returns
    -------
    float or ndarray

    References
    ----------
    Levi et al., eqs. (16)–(18), (40)–(42) (corrected); spec ``levi:eq18``.
    """
    w = _which(which)
    tt = _t(t)
    la = V.positive(lam, "lam", scalar=True) if np.ndim(lam) == 0 else None
    if la is None:
        raise V.DomainError("lam must be a scalar for loss_two_layer")
    et = V.positive(eta0, "eta0", scalar=True) if np.ndim(eta0) == 0 else None
    if et is None:
        raise V.DomainError("eta0 must be a scalar for loss_two_layer")
    d = float(_d_out(d_out))
    d0 = V.nonnegative(D0_sq, "D0_sq", scalar=True)
    hh = V.positive(h, "h", scalar=True)
    if (kappa is None) != (proj_sq is None):
        raise V.DomainError("kappa and proj_sq must be given together (refined form) or not at all")
    tf = tt.reshape(-1)
    if kappa is None:
        s = 4.0 * et * hh * tf / d**2
        vals = np.log(d0 / d) + _log_phi(w, s, la) if d0 > 0 else np.full(tf.shape, -np.inf)
    else:
        k = V.nonnegative(kappa, "kappa").reshape(-1)
        p = V.nonnegative(proj_sq, "proj_sq").reshape(-1)
        if k.shape != p.shape:
            raise V.DomainError(f"proj_sq must have the shape of kappa {k.shape} (got {p.shape})")
        s = 4.0 * et * np.outer(tf, k) / d
        lp = _log_phi(w, s, la).reshape(s.shape)
        vals = special.logsumexp(lp, b=np.broadcast_to(p, lp.shape), axis=1) - math.log(d)
    return V.scalar_or_array(np.exp(vals).reshape(tt.shape))
