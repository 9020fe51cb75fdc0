"""Levi et al.: losses of a finite spectrum (eqs. 4, 5, 7, 13)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _floats as FL
from .. import _pointwise as P
from .. import _validate as V
from ..citations import cites
from ._conventions import _d_out, _flag, _flow_time, _t


def _spectrum(eigvals: Any) -> tuple[np.ndarray, float]:
    """1-d eigenvalues >= 0 and their smallest; round-off negatives (> -1e-10 max|nu|) are clipped to 0."""
    nu = V.as_float_array(eigvals, "eigvals")
    if nu.ndim != 1:
        raise V.DomainError(f"eigvals must be a 1-d array (got shape {nu.shape})")
    lo = float(nu.min())
    if lo >= 0.0:  # nothing to clip (one reduction)
        return nu, lo
    scale = float(np.max(np.abs(nu)))
    tol = V.roundoff_tol(eigvals, nu.size, floor=1e-10) * scale  # float32 spectra at their own precision
    bad = nu < -tol
    if np.any(bad):
        raise V.DomainError(f"eigvals must be >= 0 (eigenvalues of a Gram matrix) (got {float(nu[bad][0])!r})")
    return np.maximum(nu, 0.0), 0.0


def _finite_loss(which, t, eigvals, proj_sq, eta0, d_out, discrete, *, checked=None):
    """The loss of a finite spectrum; `checked`: the smallest eigenvalue where eigvals and proj_sq are already
    a checked spectrum and equal weights (`_equal_proj`: their one value is the weights' extremes)."""
    sc = type(t) in _SCALAR_TYPES  # a scalar call: t stays a Python float (one row of the same engine)
    tt = V.nonnegative(t, "t", scalar=sc)
    nu, nu_lo = (eigvals, checked) if checked is not None else _spectrum(eigvals)
    w = proj_sq if checked is not None else V.nonnegative(proj_sq, "proj_sq")
    if w.shape != nu.shape:
        raise V.DomainError(f"proj_sq must have the shape of eigvals {nu.shape} (got {w.shape})")
    eta = V.positive(eta0, "eta0", scalar=True) if np.ndim(eta0) == 0 else None
    if eta is None:
        raise V.DomainError("eta0 must be a scalar for the finite-spectrum losses")
    d = float(_d_out(d_out))
    disc = _flag(discrete, "discrete")
    if disc:
        # b nu = 2 eta0 nu/d_out as 2 ((eta0/d_out) nu): 2 eta0 = inf at eta0 = 1.7e308 gave inf * 0 = NaN on a
        # zero eigenvalue (the mode does not move: factor 1)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            bnu = 2.0 * ((eta / d) * nu)  # inf only where b nu > 1.8e308: GD diverges
            if float(bnu.max()) >= 2.0:
                raise V.DomainError(
                    f"eta0 must be < d_out/max(eigvals) = {d / float(nu.max())!r} for discrete=True "
                    f"(gradient descent diverges) (got {eta!r})")
            # log|1 - b nu| (log1p below b nu = 1: log(1 - 1e-74) = 0 lost the decay at t = 1.7e308)
            la = np.where(bnu < 1.0, np.log1p(-np.minimum(bnu, 1.0)), np.log(np.abs(1.0 - bnu)))
    weight = w * nu if which == "train" else w
    # a mode of weight 0 adds nothing (its e^expo is never formed); every mode live: no copies
    w_lo = float(w.flat[0]) if checked is not None and which == "gen" else float(weight.min())
    if w_lo > 0.0:
        wl, nul, lal = weight, nu, la if disc else None
        w_hi = w_lo if checked is not None and which == "gen" else float(weight.max())
    else:
        live = weight > 0.0
        if not live.any():
            return 0.0 if sc else V.scalar_or_array(np.zeros(tt.shape))
        wl, nul, lal = weight[live], nu[live], la[live] if disc else None
        w_lo, w_hi = float(wl.min()), float(wl.max())
        nu_lo = float(nul.min())
    mode = _Modes(nul, nu_lo, lal, wl, w_lo, w_hi, eta, d)
    if sc:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            return float(mode.sums(tt))
    tf = tt.reshape(-1)
    return V.scalar_or_array(FL.blockwise(mode.rows, tf.shape, tf, block=max(1, _CELLS // nul.size)).reshape(tt.shape))


_SCALAR_TYPES = (float, np.float64, int)  # a scalar time (bool is not: its type is bool)
_CELLS = 32768  # (time, mode) cells per block of the finite-spectrum sums: 256 KiB temporaries


_SPAN = 900  # weights within a factor 2^900 of each other: scaled by one power of two, none underflows


class _Modes:
    r"""The live modes of a finite spectrum (eigenvalues, log|1 - b nu| for gradient descent, weights > 0) and
    the sum :math:`\sum_iw_ie^{x_i(t)}/d` over them, for a block of times (a column: one row per time) or one
    time (a Python float: one row, the same operations; the reductions give numbers).

    The largest exponent of a row, M, is factored out: :math:`e^M\sum_iw_ie^{x_i-M}`, the weights scaled by
    an exact power of two :math:`2^{-k}` (largest in [1/2, 1)), so the sum lies between the weight of the
    top mode and the number of modes: no overflow, and a term that underflows is below 2^-173 of the sum.
    Then the product with :math:`e^M`, divided by d, times :math:`2^k` (exact).  Relative error: the sum's
    few ulp and the rounding of e^M (<= 1 ulp beside the |M| ulp from the rounding of M itself, which every
    evaluation of e^M has).  In logarithms (|log value| ulp, as a log-sum-exp) only where the product is
    below 1e-290 or the weights span more than 2^900.  0 for a row of -inf (every mode decayed beyond the
    double range).  The scaled weights (or their logarithms) are formed once per call, not per block.
    """

    def __init__(self, nu, nu_lo, la, w, w_lo, w_hi, eta, d):
        self.nu, self.la, self.eta, self.d = nu, la, eta, d
        self.k = math.frexp(w_hi)[1]
        self.scaled = self.k - math.frexp(w_lo)[1] <= _SPAN
        self.w = np.ldexp(w, -self.k) if self.scaled else np.log(w)
        self.still = nu_lo == 0.0  # some mode never decays (exponent 0; log|1 - b nu| = 0 only at nu = 0)
        if la is not None:
            self.two_la = 2.0 * la

    def exponents(self, tc):
        """The exponents x_i(t) (rows: times, columns: modes), finite or -inf."""
        if self.la is not None:
            # 0^(2t): 1 at t = 0, 0 otherwise; t (2 log|1 - b nu|): 2 t overflowed at t = 1.7e308 (inf * 0 = NaN)
            expo = tc * self.two_la
            if self.still:
                return np.where((tc == 0.0) | (self.la == 0.0), 0.0, expo)
            return np.where(tc == 0.0, 0.0, expo) if P.any_of(tc == 0.0) else expo
        # -s nu, s = 4 eta0 t/d_out (_flow_time: inf only beyond 1.8e308); a zero mode never decays
        expo = _flow_time(self.eta, tc, self.d) * self.nu
        if self.still:
            return np.where(self.nu == 0.0, 0.0, np.negative(expo, out=expo))
        return np.negative(expo, out=expo)

    def rows(self, tb):
        """The sums for a 1-d block of times."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            return self.sums(tb.reshape(-1, 1))

    def sums(self, tc):
        r""":math:`\sum_iw_ie^{x_i}/d` for a column of times (an array per row) or one time (a number).  Called
        inside the caller's errstate (over, under, invalid, divide ignored)."""
        expo = self.exponents(tc)
        one = expo.ndim == 1
        if one:  # one time: the row's extremes are numbers
            top = float(expo.max())
            if top == -math.inf:
                return 0.0
            expo -= top
            dead = None
        else:
            top = expo.max(axis=1)
            dead = top == -np.inf if float(top.min()) == -np.inf else None
            if dead is not None:
                top[dead] = 0.0
            expo -= top[:, None]
        np.exp(expo, out=expo)
        k, d = self.k, self.d
        if self.scaled:
            expo *= self.w
            total = expo.sum(axis=-1)
            prod = total * np.exp(top)
            if one:
                if prod < 1e-290:
                    return np.exp(np.log(total) + top + (k * math.log(2.0) - math.log(d)))
                return FL.SCALAR.ldexp(float(prod / d), k)
            out = np.ldexp(prod / d, k)
            if float(prod.min()) < 1e-290:
                far = prod < 1e-290
                out[far] = np.exp(np.log(total[far]) + top[far] + (k * math.log(2.0) - math.log(d)))
        else:  # log w_i joins the exponents: z_i = x_i - M + log w_i, the largest of them factored out
            np.log(expo, out=expo)
            expo += self.w
            zmax = expo.max(axis=-1)
            expo -= zmax if one else zmax[:, None]
            np.exp(expo, out=expo)
            out = np.exp(np.log(expo.sum(axis=-1)) + zmax + top - math.log(d))
            if one:
                return out
        if dead is not None:
            out[dead] = 0.0
        return out


@cites("levi:eq5", "levi:eq4", "levi:eq1", "levi:gd-exact", "levi:eq3", "levi:eq13")
def loss_train_finite(t, eigvals, proj_sq, eta0, *, d_out=1, discrete=False):
    r"""Exact training loss of one finite problem, from the spectrum of Σ_tr and the projections of the initial error D₀.

    .. math::
        \mathcal L_{\rm tr}(t)=\frac1{d_{\rm out}}\sum_iw_i\,\nu_i\,e^{-4\eta_0\nu_it/d_{\rm out}},\qquad
        w_i=\|(V^\top D_0)_{i,:}\|^2

    In words: the sum over eigen-directions i of Σ_tr of wᵢνᵢ e^(−4η₀νᵢt/d_out), divided by d_out, where wᵢ is
    the squared norm of the projection of D₀ on the i-th eigenvector (gradient flow, eq. 5). `discrete=True`
    replaces e^(−sνᵢ) by (1 − 2η₀νᵢ/d_out)^(2t), exact for gradient descent at integer t.

    Parameters
    ----------
    t : float or array_like
        Time t ≥ 0 in gradient-descent steps (real-valued; gradient flow at learning rate η₀).
    eigvals : array_like
        Eigenvalues νᵢ ≥ 0 of the training covariance Σ_tr = XᵀX/N_tr, a 1-d array (round-off negatives
        down to −10⁻¹⁰·max|ν| are set to 0).
    proj_sq : array_like
        wᵢ ≥ 0, the squared norms of the rows of VᵀD₀ (V = eigenvectors of Σ_tr), one per eigenvalue: the
        shape of `eigvals`.
    eta0 : float
        η₀, the gradient-descent learning rate (step size), a scalar > 0.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    discrete : bool
        False (default): gradient flow, e^(−4η₀νᵢt/d_out). True: discrete gradient descent, (1 −
        2η₀νᵢ/d_out)^(2t), exact at integer t; needs 2η₀·max ν/d_out < 2 (else `DomainError`).

    Returns
    -------
    float or ndarray
        L_tr(t), the shape of `t`; `inf` only where the loss exceeds 1.8·10³⁰⁸ (weights near 10³⁰⁸).

    References
    ----------
    Levi et al., eqs. (3), (4), (5), (13); spec `levi:eq5`, `levi:eq4`, `levi:gd-exact`.
    """
    return _finite_loss("train", t, eigvals, proj_sq, eta0, d_out, discrete)


@cites("levi:eq5", "levi:eq4", "levi:eq2", "levi:gd-exact", "levi:eq3", "levi:eq13")
def loss_gen_finite(t, eigvals, proj_sq, eta0, *, d_out=1, discrete=False):
    r"""Exact generalisation loss ‖D_t‖²_F/d_out of one finite problem, from the spectrum of Σ_tr and the projections of D₀.

    .. math:: \mathcal L_{\rm gen}(t)=\frac1{d_{\rm out}}\sum_iw_i\,e^{-4\eta_0\nu_it/d_{\rm out}}

    In words: the sum over eigen-directions of wᵢ e^(−4η₀νᵢt/d_out), divided by d_out (`discrete=True`: (1 −
    2η₀νᵢ/d_out)^(2t)). Directions with νᵢ = 0 never move.

    Parameters
    ----------
    t : float or array_like
        Time t ≥ 0 in gradient-descent steps (real-valued; gradient flow at learning rate η₀).
    eigvals : array_like
        Eigenvalues νᵢ ≥ 0 of the training covariance Σ_tr = XᵀX/N_tr, a 1-d array (round-off negatives
        down to −10⁻¹⁰·max|ν| are set to 0).
    proj_sq : array_like
        wᵢ ≥ 0, the squared norms of the rows of VᵀD₀ (V = eigenvectors of Σ_tr), one per eigenvalue: the
        shape of `eigvals`.
    eta0 : float
        η₀, the gradient-descent learning rate (step size), a scalar > 0.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    discrete : bool
        False (default): gradient flow, e^(−4η₀νᵢt/d_out). True: discrete gradient descent, (1 −
        2η₀νᵢ/d_out)^(2t), exact at integer t; needs 2η₀·max ν/d_out < 2 (else `DomainError`).

    Returns
    -------
    float or ndarray
        L_gen(t), the shape of `t`; `inf` only where the loss exceeds 1.8·10³⁰⁸ (weights near 10³⁰⁸).

    References
    ----------
    Levi et al., eqs. (2), (4), (5); spec `levi:eq5`, `levi:eq4`, `levi:gd-exact`.
    """
    return _finite_loss("gen", t, eigvals, proj_sq, eta0, d_out, discrete)


def _equal_proj(which, t, eigvals, eta0, d_out, D0_sq):
    nu, nu_lo = _spectrum(eigvals)
    d0 = V.nonnegative(D0_sq, "D0_sq", scalar=True) if np.ndim(D0_sq) == 0 else None
    if d0 is None:
        raise V.DomainError("D0_sq must be a scalar")
    return _finite_loss(which, t, nu, np.full(nu.shape, d0 / nu.size), eta0, d_out, False, checked=nu_lo)


@cites("levi:eq7")
def loss_train_equal_proj(t, eigvals, eta0, *, d_out=1, D0_sq=1.0):
    r"""Training loss of a finite spectrum with equal projections wᵢ = ‖D₀‖²_F/d_in.

    .. math:: \mathcal L_{\rm tr}\approx\frac{\|D_0\|_F^2}{d_{\rm out}d_{\rm in}}\sum_i\nu_ie^{-4\eta_0\nu_it/d_{\rm out}}

    In words: `loss_train_finite` with every projection replaced by its mean ‖D₀‖²_F/d_in (gradient flow),
    d_in being the number of eigenvalues.

    Parameters
    ----------
    t : float or array_like
        Time t ≥ 0 in gradient-descent steps (real-valued; gradient flow at learning rate η₀).
    eigvals : array_like
        Eigenvalues νᵢ ≥ 0 of the training covariance Σ_tr = XᵀX/N_tr, a 1-d array (round-off negatives
        down to −10⁻¹⁰·max|ν| are set to 0). Their number is d_in.
    eta0 : float
        η₀, the gradient-descent learning rate (step size), a scalar > 0.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    D0_sq : float
        ‖D₀‖²_F ≥ 0, the squared Frobenius norm of the initial error D₀ = S₀ − T (student minus teacher),
        a scalar; default 1, its expectation at the paper's initialisation.

    Returns
    -------
    float or ndarray
        L_tr(t), the shape of `t`; `inf` only where the loss exceeds 1.8·10³⁰⁸ (`D0_sq` near 10³⁰⁸).

    References
    ----------
    Levi et al., eq. (7); spec `levi:eq7`.
    """
    return _equal_proj("train", t, eigvals, eta0, d_out, D0_sq)


@cites("levi:eq7")
def loss_gen_equal_proj(t, eigvals, eta0, *, d_out=1, D0_sq=1.0):
    r"""Generalisation loss of a finite spectrum with equal projections wᵢ = ‖D₀‖²_F/d_in.

    .. math:: \mathcal L_{\rm gen}\approx\frac{\|D_0\|_F^2}{d_{\rm out}d_{\rm in}}\sum_ie^{-4\eta_0\nu_it/d_{\rm out}}

    In words: `loss_gen_finite` with every projection replaced by its mean ‖D₀‖²_F/d_in (gradient flow).

    Parameters
    ----------
    t : float or array_like
        Time t ≥ 0 in gradient-descent steps (real-valued; gradient flow at learning rate η₀).
    eigvals : array_like
        Eigenvalues νᵢ ≥ 0 of the training covariance Σ_tr = XᵀX/N_tr, a 1-d array (round-off negatives
        down to −10⁻¹⁰·max|ν| are set to 0). Their number is d_in.
    eta0 : float
        η₀, the gradient-descent learning rate (step size), a scalar > 0.
    d_out : int
        d_out, the output dimension (number of teacher outputs); an integer ≥ 1. Default 1.
    D0_sq : float
        ‖D₀‖²_F ≥ 0, the squared Frobenius norm of the initial error D₀ = S₀ − T (student minus teacher),
        a scalar; default 1, its expectation at the paper's initialisation.

    Returns
    -------
    float or ndarray
        L_gen(t), the shape of `t`; `inf` only where the loss exceeds 1.8·10³⁰⁸ (`D0_sq` near 10³⁰⁸).

    References
    ----------
    Levi et al., eq. (7); spec `levi:eq7`.
    """
    return _equal_proj("gen", t, eigvals, eta0, d_out, D0_sq)
