"""Repulsion: centred features and the regularised feature Gram inverse B."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import linalg

from .. import _validate as V
from ..citations import cites
from ._args import _chol, _eta, _matrix


@cites("repulsion:ftilde")
def center_features(F: Any) -> np.ndarray:
    r"""Centred features :math:`\widetilde F=P_1^\perp F=F-\mathbf 1\bar f^\top` (column means over samples).

    Centred, **not** normalised; computed from the training inputs only.

    References
    ----------
    Spec ``repulsion:ftilde`` (code ``theorem6_verify.get_F_tilde``).
    """
    F = _matrix(F, "F")
    return F - F.mean(axis=0, keepdims=True)


def _woodbury(Ft: np.ndarray, eta: float) -> np.ndarray:
    n, K = Ft.shape
    A = Ft @ Ft.T
    A[np.diag_indices(n)] += eta
    Z = linalg.cho_solve(_chol(A, eta), Ft, check_finite=False)  # A^{-1} F~  (n x K)
    Bm = -(Ft.T @ Z)
    Bm[np.diag_indices(K)] += 1.0
    Bm /= eta
    return 0.5 * (Bm + Bm.T)


def _direct(Ft: np.ndarray, eta: float) -> np.ndarray:
    K = Ft.shape[1]
    A = Ft.T @ Ft
    A[np.diag_indices(K)] += eta
    Bm = linalg.cho_solve(_chol(A, eta), np.eye(K), check_finite=False)
    return 0.5 * (Bm + Bm.T)


@cites("repulsion:woodbury")
def feature_gram_inverse(F_tilde: Any, eta: float, method: str = "auto") -> np.ndarray:
    r""":math:`B=(\widetilde F^\top\widetilde F+\eta I_K)^{-1}`, directly or by Woodbury on the smaller side.

    .. math::

        B=\frac1\eta\Big[I_K-\widetilde F^\top(\widetilde F\widetilde F^\top+\eta I_n)^{-1}\widetilde F\Big]
        \qquad(\eta>0).

    Parameters
    ----------
    F_tilde : array (n, K), finite.
    eta : float > 0 (weight decay).
    method : {"auto", "woodbury", "direct", "paper_eq4"}
        ``"woodbury"`` solves the :math:`n\times n` system (choose when :math:`n<K`), ``"direct"`` the
        :math:`K\times K` one, ``"auto"`` the smaller side (Woodbury when :math:`n\le K`: centring makes
        :math:`\operatorname{rank}\widetilde F\le n-1`, so at :math:`n=K` the direct route is the ill-conditioned one). ``"paper_eq4"`` returns the paper's erroneous
        expression (:func:`feature_gram_inverse_paper_eq4`), for erratum demonstrations only.
        Cholesky solves throughout; the result is symmetrised.

    Notes
    -----
    Accuracy: Woodbury vs direct <= 1e-9 relative where each route is the well-conditioned one; with
    :math:`n>K` and :math:`\eta=10^{-6}` the Woodbury route loses ~1e-8 by cancellation (spec §10 R1).
    The Woodbury route is accurate normwise, :math:`|\hat B-B|\le4\varepsilon/\eta` (measured on
    :math:`\widetilde F=[[x,0]]`, tests/accuracy); an entry much smaller than :math:`1/\eta` (a direction
    with :math:`\sigma^2\gg\eta`) is then only absolutely accurate: relative error
    :math:`\sim\varepsilon\sigma^2/\eta`.

    References
    ----------
    Spec ``repulsion:woodbury`` (eq. 4, corrected; erratum ``repulsion-1``).
    """
    Ft = _matrix(F_tilde, "F_tilde")
    eta = _eta(eta)
    method = V.choice(method, "method", ("auto", "woodbury", "direct", "paper_eq4"))
    if method == "paper_eq4":
        return feature_gram_inverse_paper_eq4(Ft, eta)
    if method == "auto":
        # n <= K: the centred F~ has rank <= n - 1 < K, so F~^T F~ + eta I is ill-conditioned while the
        # n x n system's near-null direction (the constant vector) is orthogonal to the columns of F~
        method = "woodbury" if Ft.shape[0] <= Ft.shape[1] else "direct"
    return _woodbury(Ft, eta) if method == "woodbury" else _direct(Ft, eta)


@cites("repulsion:woodbury")
def feature_gram_inverse_paper_eq4(F_tilde: Any, eta: float) -> np.ndarray:
    r"""**Erratum demonstration**: the paper's eq. 4 (and ``theorem6_verify.woodbury_B``), which is wrong.

    .. math::

        B_{\rm eq.4}=\frac1\eta I-\frac1{\eta^2}\widetilde F^\top(\widetilde F\widetilde F^\top+\eta I)^{-1}\widetilde F
        =\frac B\eta+\Big(\frac1\eta-\frac1{\eta^2}\Big)I\qquad\text{(equals $B$ only at $\eta=1$)}.

    Off-diagonal entries equal :math:`B_{j\ell}/\eta` (signs right); the diagonal is wrong.
    Not for use except to show the erratum.

    References
    ----------
    Spec ``repulsion:woodbury`` (erratum ``repulsion-1``).
    """
    Ft = _matrix(F_tilde, "F_tilde")
    eta = _eta(eta)
    n, K = Ft.shape
    A = Ft @ Ft.T
    A[np.diag_indices(n)] += eta
    Z = linalg.cho_solve(_chol(A, eta), Ft, check_finite=False)
    Bm = -(Ft.T @ Z) / eta / eta  # not / eta**2: that overflows (OverflowError) for eta > 1.3e154
    Bm[np.diag_indices(K)] += 1.0 / eta
    return 0.5 * (Bm + Bm.T)
