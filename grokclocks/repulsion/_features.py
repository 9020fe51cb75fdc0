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
    r"""Centred features F̃ = P₁^⊥·F = F − 𝟏·f̄ᵀ, each column minus its mean over the samples.

    Centred, not normalised; compute it from the training inputs only.

    Parameters
    ----------
    F : array_like
        Hidden features, a finite 2-D array of shape (n, K): one row per training sample, one column
        per hidden unit.

    Returns
    -------
    numpy.ndarray
        float64 array of shape (n, K) whose columns have mean 0.

    Raises
    ------
    DomainError
        If `F` is not a finite, non-empty 2-D array.

    References
    ----------
    Spec ID `repulsion:ftilde` (the authors' code `theorem6_verify.get_F_tilde`).
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
    r"""B = (F̃ᵀ·F̃ + η·I_K)⁻¹, solved directly or by Woodbury on the smaller side.

    .. math::

        B=\frac1\eta\Big[I_K-\widetilde F^\top(\widetilde F\widetilde F^\top+\eta I_n)^{-1}\widetilde F\Big]
        \qquad(\eta>0).

    In words: the inverse of the regularised K × K feature Gram matrix, or equivalently (Woodbury)
    (I_K − F̃ᵀ·(F̃·F̃ᵀ + η·I_n)⁻¹·F̃)/η, which needs only an n × n solve.  Cholesky solves throughout;
    the result is symmetrised.

    Parameters
    ----------
    F_tilde : array_like
        Centred features F̃ (see `center_features`), a finite 2-D array of shape (n, K).
    eta : float
        The weight decay η (not the learning rate), a finite scalar > 0, at least the rounding level
        n·ε·max diag of the Gram matrix.
    method : {"auto", "woodbury", "direct", "paper_eq4"}, optional
        `"woodbury"` solves the n × n system (choose it when n < K), `"direct"` the K × K one, `"auto"`
        (default) the smaller side (Woodbury when n ≤ K: centring makes rank F̃ ≤ n − 1, so at n = K the
        direct route is the ill-conditioned one).  `"paper_eq4"` returns the paper's erroneous
        expression (`feature_gram_inverse_paper_eq4`), for erratum demonstrations only.

    Returns
    -------
    numpy.ndarray
        float64 symmetric array of shape (K, K), the matrix B.

    Raises
    ------
    DomainError
        If `F_tilde` is not a finite 2-D array, `eta` is not a scalar > 0 or is below the Gram matrix's
        rounding level (no accurate float64 solve), or `method` is unknown.

    Notes
    -----
    Accuracy: Woodbury against direct ≤ 10⁻⁹ relative where each route is the well-conditioned one;
    with n > K and η = 10⁻⁶ the Woodbury route loses about 10⁻⁸ by cancellation.  The Woodbury route
    is accurate normwise, |B̂ − B| ≤ 4ε/η (measured on F̃ = [[x, 0]], tests/accuracy); an entry much
    smaller than 1/η (a direction with σ² ≫ η) is then only absolutely accurate: relative error
    about ε·σ²/η.

    References
    ----------
    Spec ID `repulsion:woodbury` (paper eq. 4, corrected; erratum repulsion-1).
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
    r"""Erratum demonstration: the paper's eq. 4 (and the authors' `theorem6_verify.woodbury_B`), which is wrong.

    .. math::

        B_{\rm eq.4}=\frac1\eta I-\frac1{\eta^2}\widetilde F^\top(\widetilde F\widetilde F^\top+\eta I)^{-1}\widetilde F
        =\frac B\eta+\Big(\frac1\eta-\frac1{\eta^2}\Big)I\qquad\text{(equals $B$ only at $\eta=1$)}.

    In words: B_eq.4 = I/η − F̃ᵀ·(F̃·F̃ᵀ + η·I)⁻¹·F̃/η² = B/η + (1/η − 1/η²)·I, equal to the true B (see
    `feature_gram_inverse`) only at η = 1.  Its off-diagonal entries equal B_jℓ/η (signs right); the
    diagonal is wrong.  Not for use except to show the erratum.

    Parameters
    ----------
    F_tilde : array_like
        Centred features F̃, a finite 2-D array of shape (n, K).
    eta : float
        The weight decay η, a finite scalar > 0, at least the rounding level of the n × n Gram matrix.

    Returns
    -------
    numpy.ndarray
        float64 symmetric array of shape (K, K), the paper's B_eq.4.

    Raises
    ------
    DomainError
        If `F_tilde` is not a finite 2-D array or `eta` is not a scalar > 0 above the rounding level.

    References
    ----------
    Spec ID `repulsion:woodbury` (paper eq. 4; erratum repulsion-1).
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
