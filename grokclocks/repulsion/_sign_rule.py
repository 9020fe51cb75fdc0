"""Repulsion: the sign rule of Theorem 6 (similar pairs, residuals, sign matches)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy import linalg

from .. import _validate as V
from ..citations import cites
from ._args import _chol, DomainError, _eta, _matrix, _pair_indices
from ._features import feature_gram_inverse, feature_gram_inverse_paper_eq4


class SimilarPairs(NamedTuple):
    r"""Result of `top_similar_pairs`: feature pairs sorted by |S_jℓ| descending.

    A named tuple; it unpacks like the plain tuple (j, l, cos).  The three arrays have one entry per
    pair.
    """

    j: np.ndarray
    r"""int64 first column indices j."""
    l: np.ndarray
    r"""int64 second column indices ℓ > j."""
    cos: np.ndarray
    r"""float64 signed cosines S_jℓ of the pairs."""


@cites("repulsion:sign-rule")
def top_similar_pairs(F_tilde: Any, k: int = 200) -> SimilarPairs:
    r"""The `k` unordered feature pairs j < ℓ with the largest |S_jℓ|, S the cosine similarity.

    .. math::

        S_{j\ell}=\frac{\tilde f_j^\top\tilde f_\ell}{\max(\|\tilde f_j\|,10^{-30})\max(\|\tilde f_\ell\|,10^{-30})}

    In words: S_jℓ is the cosine of columns j and ℓ of F̃, each norm floored at 10⁻³⁰; the diagonal is
    excluded; pairs come in descending |S|, ties broken by (j, ℓ) in lexicographic order.

    Parameters
    ----------
    F_tilde : array_like
        Centred features F̃, a finite 2-D array of shape (n, K) with K ≥ 2.
    k : int, optional
        Number of pairs, an integer in [1, K(K − 1)/2] (default 200).

    Returns
    -------
    SimilarPairs
        The named tuple (j, l, cos): the pairs' column indices and their signed cosines.

    Raises
    ------
    DomainError
        If `F_tilde` is not a finite 2-D array with at least 2 columns, or `k` is out of range.

    References
    ----------
    Spec ID `repulsion:sign-rule` (the authors' code `residual_similarity_signs`).
    """
    Ft = _matrix(F_tilde, "F_tilde", min_cols=2)
    K = Ft.shape[1]
    k = V.integer_at_least(k, "k", 1)
    if k > K * (K - 1) // 2:
        raise DomainError(f"k must be in [1, K(K-1)/2] = [1, {K * (K - 1) // 2}] (got {k})")
    Fn = Ft / np.maximum(np.linalg.norm(Ft, axis=0), 1e-30)
    S = Fn.T @ Fn
    ju, lu = np.triu_indices(K, 1)
    s = S[ju, lu]
    order = np.lexsort((lu, ju, -np.abs(s)))[:k]
    return SimilarPairs(ju[order], lu[order], s[order])


def _solve_A(Ft: np.ndarray, eta: float) -> np.ndarray:
    """A^{-1} F~ with A = F~ F~^T + eta I_n (Cholesky)."""
    A = Ft @ Ft.T
    A[np.diag_indices(Ft.shape[0])] += eta
    return linalg.cho_solve(_chol(A, eta), Ft, check_finite=False)


def _loo_terms(Ft: np.ndarray, eta: float, jj: np.ndarray, ll: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""(c, alpha, beta) by the rank-2 downdate of (F~F~^T + eta I)^{-1}.

    With Q the 2x2 block of F~^T A^{-1} F~ on (j, l): eta [Q (I - Q)^{-1}] is F_S^T P_{eta,-jl} F_S.
    """
    Z = _solve_A(Ft, eta)
    qjj = np.einsum("ip,ip->p", Ft[:, jj.ravel()], Z[:, jj.ravel()])
    qll = np.einsum("ip,ip->p", Ft[:, ll.ravel()], Z[:, ll.ravel()])
    qjl = 0.5 * (np.einsum("ip,ip->p", Ft[:, jj.ravel()], Z[:, ll.ravel()])
                 + np.einsum("ip,ip->p", Ft[:, ll.ravel()], Z[:, jj.ravel()]))
    # (I - Q) = [[a, -b], [-b, d]] with a = 1 - qjj, d = 1 - qll, b = qjl
    a, d, b = 1.0 - qjj, 1.0 - qll, qjl
    det = a * d - b * b
    # Q (I-Q)^{-1} = (I-Q)^{-1} - I ; (I-Q)^{-1} = [[d, b], [b, a]] / det
    c = eta * b / det
    alpha = eta * d / det  # = f_j^T P f_j + eta  (eta [(I-Q)^{-1}]_11 = eta(Q(I-Q)^-1)_11 + eta)
    beta = eta * a / det
    shape = jj.shape
    return c.reshape(shape), alpha.reshape(shape), beta.reshape(shape)


@cites("repulsion:sign-rule")
@V.broadcasting("j", "l")
def leave_two_out_residual(F_tilde: Any, eta: float, j: Any, l: Any) -> float | np.ndarray:
    r"""Exact leave-two-out residual similarity c = f̃_jᵀ·P_{η,−jℓ}·f̃_ℓ of feature pairs.

    .. math::

        P_{\eta,-j\ell}=I-\widetilde F_{-j\ell}(\widetilde F_{-j\ell}^\top\widetilde F_{-j\ell}+\eta I)^{-1}
        \widetilde F_{-j\ell}^\top=\eta\,(A-UU^\top)^{-1},\quad A=\widetilde F\widetilde F^\top+\eta I_n,\
        U=[\tilde f_j,\tilde f_\ell],

    In words: P_{η,−jℓ} is the regularised residual projector of the features without columns j and ℓ,
    equal to η·(A − U·Uᵀ)⁻¹ with A = F̃·F̃ᵀ + η·I_n and U = [f̃_j, f̃_ℓ].  It is evaluated by the rank-2
    downdate (A − U·Uᵀ)⁻¹ = A⁻¹ + A⁻¹·U·(I₂ − Uᵀ·A⁻¹·U)⁻¹·Uᵀ·A⁻¹, i.e. c = η·[Q·(I₂ − Q)⁻¹]₁₂ with
    Q = Uᵀ·A⁻¹·U.  Vectorised over arrays of pairs.

    Parameters
    ----------
    F_tilde : array_like
        Centred features F̃, a finite 2-D array of shape (n, K) with K ≥ 2.
    eta : float
        The weight decay η, a finite scalar > 0, at least the rounding level of the n × n Gram matrix.
    j : int or array_like of int
        First column index (or indices), in [0, K).
    l : int or array_like of int
        Second column index (or indices), in [0, K), broadcasting against `j`, with j ≠ l everywhere.

    Returns
    -------
    float or numpy.ndarray
        c for each pair, a float for scalar indices, else an array of the broadcast shape of `j`, `l`.

    Raises
    ------
    DomainError
        If `F_tilde` or `eta` is invalid, an index is out of range, some j = l, or `j`, `l` do not
        broadcast.

    Notes
    -----
    Accuracy: the downdate divides by det(I₂ − Q), which is of order η/(η + ‖f̃_j‖² + ‖f̃_ℓ‖²); the
    relative error is about ε·(1 + (‖f̃_j‖² + ‖f̃_ℓ‖²)/η) (measured 4.8·10⁻¹³ at
    η = 10⁻³·(‖f̃_j‖² + ‖f̃_ℓ‖²) against mpmath, tests/accuracy/cases_repulsion.py).

    References
    ----------
    Spec ID `repulsion:sign-rule` (paper eq. 1; Theorem 6 of Tian 2025).
    """
    Ft = _matrix(F_tilde, "F_tilde", min_cols=2)
    eta = _eta(eta)
    jj, ll = _pair_indices(j, l, Ft.shape[1])
    c, _, _ = _loo_terms(Ft, eta, jj, ll)
    return V.scalar_or_array(c)


@cites("repulsion:full-projector")
@V.broadcasting("j", "l")
def full_projector_residual(F_tilde: Any, eta: float, j: Any, l: Any) -> float | np.ndarray:
    r"""Full-projector residual f̃_jᵀ·P_η·f̃_ℓ = η·f̃_jᵀ·(F̃·F̃ᵀ + η·I)⁻¹·f̃_ℓ of feature pairs.

    Exact identity: f̃_jᵀ·P_η·f̃_ℓ = η·(δ_jℓ − η·B_jℓ), so for j ≠ ℓ it equals −η²·B_jℓ and its sign is
    always −sgn B_jℓ (B from `feature_gram_inverse`).

    Parameters
    ----------
    F_tilde : array_like
        Centred features F̃, a finite 2-D array of shape (n, K) with K ≥ 2.
    eta : float
        The weight decay η, a finite scalar > 0, at least the rounding level of the n × n Gram matrix.
    j : int or array_like of int
        First column index (or indices), in [0, K).
    l : int or array_like of int
        Second column index (or indices), in [0, K), broadcasting against `j`, with j ≠ l everywhere.

    Returns
    -------
    float or numpy.ndarray
        The residual for each pair, a float for scalar indices, else an array of the broadcast shape.

    Raises
    ------
    DomainError
        If `F_tilde` or `eta` is invalid, an index is out of range, some j = l, or `j`, `l` do not
        broadcast.

    References
    ----------
    Spec ID `repulsion:full-projector` (the full-projector form of the sign rule).
    """
    Ft = _matrix(F_tilde, "F_tilde", min_cols=2)
    eta = _eta(eta)
    jj, ll = _pair_indices(j, l, Ft.shape[1])
    Z = _solve_A(Ft, eta)
    r = eta * np.einsum("ip,ip->p", Ft[:, jj.ravel()], Z[:, ll.ravel()])
    return V.scalar_or_array(r.reshape(jj.shape))


class SignRuleTerms(NamedTuple):
    r"""Result of `sign_rule_terms`: the terms of the Schur-complement form of Theorem 6.

    A named tuple; it unpacks like the plain tuple (B_jl, c, alpha, beta).  Each field is a float for
    scalar indices, else an array of the pairs' broadcast shape.
    """

    B_jl: float | np.ndarray
    r"""The entry B_jℓ of B = (F̃ᵀ·F̃ + η·I)⁻¹, from `feature_gram_inverse`."""
    c: float | np.ndarray
    r"""The leave-two-out residual similarity c = f̃_jᵀ·P_{η,−jℓ}·f̃_ℓ."""
    alpha: float | np.ndarray
    r"""α = f̃_jᵀ·P_{η,−jℓ}·f̃_j + η."""
    beta: float | np.ndarray
    r"""β = f̃_ℓᵀ·P_{η,−jℓ}·f̃_ℓ + η."""


@cites("repulsion:sign-rule")
@V.broadcasting("j", "l")
def sign_rule_terms(F_tilde: Any, eta: float, j: Any, l: Any) -> SignRuleTerms:
    r"""The terms (B_jℓ, c, α, β) of the Schur-complement form of Theorem 6.

    .. math::

        B_{j\ell}=-\frac{c}{\alpha\beta-c^2},\quad \alpha=\tilde f_j^\top P_{\eta,-j\ell}\tilde f_j+\eta,\
        \beta=\tilde f_\ell^\top P_{\eta,-j\ell}\tilde f_\ell+\eta,\ c=\tilde f_j^\top P_{\eta,-j\ell}\tilde f_\ell,
        \quad\alpha\beta-c^2>0 .

    In words: B_jℓ = −c/(α·β − c²) with α·β − c² > 0, so the sign of B_jℓ is minus the sign of the
    leave-two-out residual c.  B_jℓ comes from `feature_gram_inverse` (`"auto"`), independently of
    (c, α, β) (rank-2 downdate), so the identity can be checked.

    Parameters
    ----------
    F_tilde : array_like
        Centred features F̃, a finite 2-D array of shape (n, K) with K ≥ 2.
    eta : float
        The weight decay η, a finite scalar > 0, at least the rounding level of the Gram matrix.
    j : int or array_like of int
        First column index (or indices), in [0, K).
    l : int or array_like of int
        Second column index (or indices), in [0, K), broadcasting against `j`, with j ≠ l everywhere.

    Returns
    -------
    SignRuleTerms
        The named tuple (B_jl, c, alpha, beta).

    Raises
    ------
    DomainError
        If `F_tilde` or `eta` is invalid, an index is out of range, some j = l, or `j`, `l` do not
        broadcast.

    References
    ----------
    Spec ID `repulsion:sign-rule` (paper eq. 1, the Schur-complement identity).
    """
    Ft = _matrix(F_tilde, "F_tilde", min_cols=2)
    eta = _eta(eta)
    jj, ll = _pair_indices(j, l, Ft.shape[1])
    Bm = feature_gram_inverse(Ft, eta)
    c, al, be = _loo_terms(Ft, eta, jj, ll)
    f = V.scalar_or_array
    return SignRuleTerms(f(Bm[jj, ll]), f(c), f(al), f(be))


@cites("repulsion:sign-rule", "repulsion:full-projector", "repulsion:woodbury")
def sign_match_fraction(F_tilde: Any, eta: float, k: int = 200, residual: str = "exact") -> float:
    r"""Fraction of the top-`k` similar pairs with sgn B_jℓ = −sgn(residual).

    The pairs are those of `top_similar_pairs`.  The residual is chosen by `residual`:

    * `"exact"`: the leave-two-out c (`leave_two_out_residual`); always 1.0 (an identity);
    * `"full"`: f̃_jᵀ·P_η·f̃_ℓ (`full_projector_residual`); always 1.0;
    * `"legacy"`: the authors' statistic: B and the "residual" f̃_jᵀ·(f̃_ℓ − F̃·B_eq.4·F̃ᵀ·f̃_ℓ) both from
      the mis-scaled eq. 4 (erratum repulsion-2); it tracks −sgn[(F̃ᵀ·F̃)²]_jℓ and reproduces the
      paper's tabulated sub-1 values.

    Parameters
    ----------
    F_tilde : array_like
        Centred features F̃, a finite 2-D array of shape (n, K) with K ≥ 2.
    eta : float
        The weight decay η, a finite scalar > 0, at least the rounding level of the Gram matrix.
    k : int, optional
        Number of top similar pairs, an integer in [1, K(K − 1)/2] (default 200).
    residual : {"exact", "full", "legacy"}, optional
        Which residual: `"exact"` (default), `"full"` or `"legacy"`, as listed above.

    Returns
    -------
    float
        The fraction of matching signs, in [0, 1].

    Raises
    ------
    DomainError
        If `F_tilde`, `eta` or `k` is invalid, or `residual` is unknown.

    References
    ----------
    Spec IDs `repulsion:sign-rule` (paper eq. 1), `repulsion:full-projector` and `repulsion:woodbury`
    (eq. 4; the authors' code `residual_similarity_signs`).
    """
    Ft = _matrix(F_tilde, "F_tilde", min_cols=2)
    eta = _eta(eta)
    residual = V.choice(residual, "residual", ("exact", "full", "legacy"))
    jj, ll, _ = top_similar_pairs(Ft, k)
    if residual == "legacy":
        Bc = feature_gram_inverse_paper_eq4(Ft, eta)
        Bp = Bc[jj, ll]
        BF = Bc @ (Ft.T @ Ft[:, ll])  # K x k
        Pf = Ft[:, ll] - Ft @ BF
        res = np.einsum("ip,ip->p", Ft[:, jj], Pf)
    else:
        Bp = feature_gram_inverse(Ft, eta)[jj, ll]
        if residual == "exact":
            res, _, _ = _loo_terms(Ft, eta, jj, ll)
        else:
            Z = _solve_A(Ft, eta)
            res = eta * np.einsum("ip,ip->p", Ft[:, jj], Z[:, ll])
    return float(np.mean(np.sign(Bp) == -np.sign(res)))


@cites("repulsion:sign-rule")
def repulsion_fraction(F_tilde: Any, eta: float, k: int = 200) -> float:
    r"""Among the top-`k` similar pairs with S_jℓ > 0, the fraction with B_jℓ < 0 ("similar features repel").

    The statistic with empirical content: Tian's verbal claim that similar features repel (the
    authors' code `frac_neg_B_on_pos_sim`).

    Parameters
    ----------
    F_tilde : array_like
        Centred features F̃, a finite 2-D array of shape (n, K) with K ≥ 2.
    eta : float
        The weight decay η, a finite scalar > 0, at least the rounding level of the Gram matrix.
    k : int, optional
        Number of top similar pairs (see `top_similar_pairs`), an integer in [1, K(K − 1)/2]
        (default 200).

    Returns
    -------
    float
        The fraction in [0, 1]; `nan` if no top pair has a positive cosine.

    Raises
    ------
    DomainError
        If `F_tilde`, `eta` or `k` is invalid.

    References
    ----------
    Spec ID `repulsion:sign-rule` (the last column of the replication table).
    """
    Ft = _matrix(F_tilde, "F_tilde", min_cols=2)
    eta = _eta(eta)
    jj, ll, s = top_similar_pairs(Ft, k)
    pos = s > 0
    if not np.any(pos):
        return float("nan")
    Bm = feature_gram_inverse(Ft, eta)
    return float(np.mean(Bm[jj[pos], ll[pos]] < 0))
