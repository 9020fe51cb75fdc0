"""Levi et al.: the two-layer linear network."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import _validate as V
from ..citations import cites
from ._conventions import _d_out, _scalar_call, _which
from ._losses import _log_phi


@cites("levi:eq18", "levi:eq42", "levi:eq16", "levi:eq40", "levi:eq17", "levi:eq41")
@V.broadcasting("t", "lam", "eta0")
def loss_two_layer(t, lam, eta0, d_out, D0_sq, which="train", *, h=0.5, kappa=None, proj_sq=None):
    r"""Losses of the two-layer linear network f(x) = S₁ᵀS₀ᵀx (corrected eq. 18).

    .. math::
        \mathcal L_{\rm tr/gen}(t)=\frac{\|D_0\|_F^2}{d_{\rm out}}\,\mathbb E\Big[q\,\exp\Big(-\frac{4\eta_0h}{d_{\rm out}^2}\nu t\Big)\Big]

    In words: ‖D₀‖²_F/d_out times the Marchenko–Pastur expectation of q·e^(−4η₀hνt/d_out²), q = ν (train) or 1
    (generalisation), with the second layer frozen at h ≈ ‖S₁‖²_F ≈ 1/2 (the paper's prefactor lacks the
    1/d_out; erratum levi-7). Refined form, with `kappa` and `proj_sq`: L = (1/d_out)·Σⱼ ‖D₀uⱼ‖²·E[q
    e^(−4η₀κⱼνt/d_out)] (`D0_sq` and `h` are then not used). Valid for d_h ≫ d_out.

    Parameters
    ----------
    t : float or array_like
        Time t ≥ 0 in gradient-descent steps (real-valued; gradient flow at learning rate η₀).
    lam : float or array_like
        λ = d_in/N_tr, the input dimension over the number of training samples (aspect ratio of the
        training data); λ > 0.
    eta0 : float or array_like
        η₀, the gradient-descent learning rate (step size); η₀ > 0. Time enters the losses only through s
        = 4η₀t/d_out.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1.
    D0_sq : float
        ‖D₀‖²_F ≥ 0, the squared Frobenius norm of the initial end-to-end error (measured, or 1/(2d_h) at
        the paper's initialisation, d_h the hidden width).
    which : {"train", "tr", "gen"}
        Which loss: "train" (default; alias "tr") or "gen".
    h : float
        The frozen second-layer factor h ≈ ‖S₁‖²_F > 0; default 1/2, its value at the paper's
        initialisation.
    kappa : array_like or None
        Refined form: the eigenvalues κⱼ ≥ 0 of S₁(0)ᵀS₁(0), a 1-d array; given together with `proj_sq`,
        or `None` (default) for the frozen-h form.
    proj_sq : array_like or None
        Refined form: ‖D₀uⱼ‖² ≥ 0 for the eigenvectors uⱼ of S₁(0)ᵀS₁(0), the length of `kappa`; given
        together with `kappa`, or `None` (default).

    Returns
    -------
    float or ndarray
        The loss, the broadcast shape of `t`, `lam` and `eta0`.

    References
    ----------
    Levi et al., eqs. (16)–(18), (40)–(42) (corrected); spec `levi:eq18`, `levi:eq42`, `levi:eq16`.
    """
    w = _which(which)
    # a scalar call of the frozen-h form: three Python floats through the same operations (the train loss's
    # Phi_1 takes two numbers; the array call gives the same bits)
    sc = kappa is None and proj_sq is None and _scalar_call(t, lam, eta0)
    tt = V.nonnegative(t, "t", scalar=sc)
    la = V.positive(lam, "lam", scalar=sc)
    et = V.positive(eta0, "eta0", scalar=sc)
    d = float(_d_out(d_out))
    d0 = V.nonnegative(D0_sq, "D0_sq", scalar=True)
    hh = V.positive(h, "h", scalar=True)
    if (kappa is None) != (proj_sq is None):
        raise V.DomainError("kappa and proj_sq must be given together (refined form) or not at all")
    if sc:
        return float(np.exp(np.log(d0 / d) + _log_phi(w, 4.0 * et * hh * tt / d**2, la))) if d0 > 0 else 0.0
    shape, (tf, lf, ef) = V.broadcast_flat(tt, la, et)
    if kappa is None:
        s = 4.0 * ef * hh * tf / d**2
        vals = np.log(d0 / d) + _log_phi(w, s, lf) if d0 > 0 else np.full(tf.shape, -np.inf)
    else:
        k = V.nonnegative(kappa, "kappa").reshape(-1)
        p = V.nonnegative(proj_sq, "proj_sq").reshape(-1)
        if k.shape != p.shape:
            raise V.DomainError(f"proj_sq must have the shape of kappa {k.shape} (got {p.shape})")
        s = (4.0 * ef)[:, None] * (tf[:, None] * k) / d  # 4 eta0 (t kappa_j)/d_out, point by point
        lp = _log_phi(w, s, lf[:, None]).reshape(s.shape)
        vals = special.logsumexp(lp, b=np.broadcast_to(p, lp.shape), axis=1) - math.log(d)
    return V.scalar_or_array(np.exp(vals).reshape(shape))
