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
    r"""Result of :func:`top_similar_pairs`, sorted by :math:`|S_{j\ell}|` descending."""

    j: np.ndarray
    """first indices :math:`j`."""
    l: np.ndarray
    r"""second indices :math:`\ell>j`."""
    cos: np.ndarray
    r"""signed cosines :math:`S_{j\ell}`."""


@cites("repulsion:sign-rule")
def top_similar_pairs(F_tilde: Any, k: int = 200) -> SimilarPairs:
    r"""The ``k`` unordered pairs :math:`j<\ell` with the largest :math:`|S_{j\ell}|`.

    .. math::

        S_{j\ell}=\frac{\tilde f_j^\top\tilde f_\ell}{\max(\|\tilde f_j\|,10^{-30})\max(\|\tilde f_\ell\|,10^{-30})}

    (diagonal excluded), in descending :math:`|S|`, ties broken by :math:`(j,\ell)` lexicographic.

    Parameters
    ----------
    F_tilde : array (n, K), K >= 2; k : int in ``[1, K(K-1)/2]``.

    Returns
    -------
    (j, l, cos) : int arrays and the signed cosines.
        A :class:`SimilarPairs` named tuple (``j``, ``l``, ``cos``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``repulsion:sign-rule`` (§5; code ``residual_similarity_signs``).
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
    r"""Exact leave-two-out residual similarity :math:`c=\tilde f_j^\top P_{\eta,-j\ell}\tilde f_\ell`.

    .. math::

        P_{\eta,-j\ell}=I-\widetilde F_{-j\ell}(\widetilde F_{-j\ell}^\top\widetilde F_{-j\ell}+\eta I)^{-1}
        \widetilde F_{-j\ell}^\top=\eta\,(A-UU^\top)^{-1},\quad A=\widetilde F\widetilde F^\top+\eta I_n,\
        U=[\tilde f_j,\tilde f_\ell],

    evaluated by the rank-2 downdate :math:`(A-UU^\top)^{-1}=A^{-1}+A^{-1}U(I_2-U^\top A^{-1}U)^{-1}U^\top A^{-1}`,
    i.e. :math:`c=\eta\,[Q(I_2-Q)^{-1}]_{12}` with :math:`Q=U^\top A^{-1}U`. Vectorised over arrays of pairs.

    Accuracy: the downdate divides by :math:`\det(I_2-Q)`, which is of order :math:`\eta/(\eta+\lVert\tilde f_j\rVert^2
    +\lVert\tilde f_\ell\rVert^2)`; the relative error is :math:`\sim\varepsilon(1+(\lVert\tilde f_j\rVert^2+
    \lVert\tilde f_\ell\rVert^2)/\eta)` (measured 4.8e-13 at :math:`\eta=10^{-3}(\lVert\tilde f_j\rVert^2+\lVert\tilde f_\ell\rVert^2)`
    against mpmath, tests/accuracy/cases_repulsion.py).

    Parameters
    ----------
    F_tilde : array (n, K); eta > 0; j, l : int arrays (broadcast), ``j != l``, in ``[0, K)``.

    References
    ----------
    Spec ``repulsion:sign-rule`` (eq. 1, Theorem 6 of Tian 2025).
    """
    Ft = _matrix(F_tilde, "F_tilde", min_cols=2)
    eta = _eta(eta)
    jj, ll = _pair_indices(j, l, Ft.shape[1])
    c, _, _ = _loo_terms(Ft, eta, jj, ll)
    return V.scalar_or_array(c)


@cites("repulsion:full-projector")
@V.broadcasting("j", "l")
def full_projector_residual(F_tilde: Any, eta: float, j: Any, l: Any) -> float | np.ndarray:
    r"""Full-projector residual :math:`\tilde f_j^\top P_\eta\tilde f_\ell=\eta\,\tilde f_j^\top(\widetilde F\widetilde F^\top+\eta I)^{-1}\tilde f_\ell`.

    Exact identity: :math:`\tilde f_j^\top P_\eta\tilde f_\ell=\eta(\delta_{j\ell}-\eta B_{j\ell})`, so for
    :math:`j\ne\ell` it equals :math:`-\eta^2B_{j\ell}` and its sign is always :math:`-\operatorname{sgn}B_{j\ell}`.

    References
    ----------
    Spec ``repulsion:full-projector``.
    """
    Ft = _matrix(F_tilde, "F_tilde", min_cols=2)
    eta = _eta(eta)
    jj, ll = _pair_indices(j, l, Ft.shape[1])
    Z = _solve_A(Ft, eta)
    r = eta * np.einsum("ip,ip->p", Ft[:, jj.ravel()], Z[:, ll.ravel()])
    return V.scalar_or_array(r.reshape(jj.shape))


class SignRuleTerms(NamedTuple):
    """Result of :func:`sign_rule_terms` (Theorem 6)."""

    B_jl: float | np.ndarray
    r""":math:`B_{j\ell}`."""
    c: float | np.ndarray
    """:math:`c`."""
    alpha: float | np.ndarray
    r""":math:`\alpha`."""
    beta: float | np.ndarray
    r""":math:`\beta`."""


@cites("repulsion:sign-rule")
@V.broadcasting("j", "l")
def sign_rule_terms(F_tilde: Any, eta: float, j: Any, l: Any) -> SignRuleTerms:
    r"""The terms of the Schur-complement form of Theorem 6: :math:`(B_{j\ell}, c, \alpha, \beta)`.

    .. math::

        B_{j\ell}=-\frac{c}{\alpha\beta-c^2},\quad \alpha=\tilde f_j^\top P_{\eta,-j\ell}\tilde f_j+\eta,\
        \beta=\tilde f_\ell^\top P_{\eta,-j\ell}\tilde f_\ell+\eta,\ c=\tilde f_j^\top P_{\eta,-j\ell}\tilde f_\ell,
        \quad\alpha\beta-c^2>0 .

    :math:`B_{j\ell}` comes from :func:`feature_gram_inverse` (``"auto"``), independently of
    :math:`(c,\alpha,\beta)` (rank-2 downdate), so the identity can be checked.

    Returns
    -------
    SignRuleTerms
        A :class:`SignRuleTerms` named tuple (``B_jl``, ``c``, ``alpha``, ``beta``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``repulsion:sign-rule`` (§5, the boxed identity).
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
    r"""Fraction of the top-``k`` similar pairs with :math:`\operatorname{sgn}B_{j\ell}=-\operatorname{sgn}(\text{residual})`.

    ``residual``:

    * ``"exact"`` -- leave-two-out :math:`c` (:func:`leave_two_out_residual`); always 1.0 (identity);
    * ``"full"`` -- :math:`\tilde f_j^\top P_\eta\tilde f_\ell` (:func:`full_projector_residual`); always 1.0;
    * ``"legacy"`` -- the authors' statistic: :math:`B` and the "residual"
      :math:`\tilde f_j^\top(\tilde f_\ell-\widetilde F B_{\rm eq.4}\widetilde F^\top\tilde f_\ell)` both from
      the mis-scaled eq. 4 (erratum ``repulsion-2``); tracks :math:`-\operatorname{sgn}[(\widetilde F^\top\widetilde F)^2]_{j\ell}`.

    References
    ----------
    Spec ``repulsion:sign-rule``, ``repulsion:full-projector`` (§5; code ``residual_similarity_signs``).
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
    r"""Among the top-``k`` similar pairs with :math:`S_{j\ell}>0`, the fraction with :math:`B_{j\ell}<0`.

    The statistic with empirical content (Tian's verbal claim "similar features repel"; code
    ``frac_neg_B_on_pos_sim``). ``nan`` if no top pair has positive cosine.

    References
    ----------
    Spec ``repulsion:sign-rule`` (§5, last column of the replication table).
    """
    Ft = _matrix(F_tilde, "F_tilde", min_cols=2)
    eta = _eta(eta)
    jj, ll, s = top_similar_pairs(Ft, k)
    pos = s > 0
    if not np.any(pos):
        return float("nan")
    Bm = feature_gram_inverse(Ft, eta)
    return float(np.mean(Bm[jj[pos], ll[pos]] < 0))
