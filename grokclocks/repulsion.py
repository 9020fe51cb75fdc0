r"""Feature repulsion, the Theorem-6 sign rule and spectral lock-in detectors (spec ``repulsion``).

Xu (arXiv 2605.08119) tests Tian (2025, Theorem 6) on the two-layer model
:math:`\widehat Y=\sigma(XW)V` trained on modular addition. With centred features
:math:`\widetilde F=P_1^\perp\sigma(XW)` and weight decay :math:`\eta`, the matrix

.. math::

    B=(\widetilde F^\top\widetilde F+\eta I_K)^{-1}

has off-diagonal entries whose sign is fixed by the leave-two-out residual similarity
:math:`c=\tilde f_j^\top P_{\eta,-j\ell}\tilde f_\ell`. By the Schur complement
:math:`B_{j\ell}=-c/(\alpha\beta-c^2)` with :math:`\alpha\beta-c^2>0`: the sign rule is an exact
algebraic identity (spec §5), and with the full projector
:math:`\tilde f_j^\top P_\eta\tilde f_\ell=-\eta^2B_{j\ell}` exactly. The paper's tabulated sub-1
"sign-match" comes from the mis-scaled Woodbury form of its eq. 4 (errata ``repulsion-1/2``);
:func:`sign_match_fraction` reproduces it with ``residual="legacy"``.

The spectral side: rolling-window Gram eigenvalues :math:`\sigma_k(t)` of the last :math:`w` weight
updates :math:`\Delta W` (eq. 5), the slope detector on :math:`\log(\sigma_2/\sigma_3)` (eq. 6), the
late-stage separation, and the level metric :math:`\rho_{\rm tian}` (eq. 7, as the code computes it).

Conventions (spec §1-3): :math:`M` modulus, :math:`K` hidden width, :math:`n` training pairs,
:math:`\eta` the **weight decay** (not the learning rate). Everything is float64 numpy; the JAX
training of the Tian setup lives in :mod:`grokclocks.sim`. This module never imports JAX.
"""

from __future__ import annotations

import math
import types
from typing import Any, NamedTuple

import numpy as np
from scipy import linalg

from . import _floats as FL
from . import _validate as V
from .citations import cites

__all__ = [
    "one_hot_pairs",
    "tian_forward",
    "TianOutputs",
    "tian_mse_loss",
    "tian_loss_grad",
    "TianLossGrad",
    "adam_l2_update",
    "AdamState",
    "tian_setup",
    "tian_init_bounds",
    "TianInitBounds",
    "center_features",
    "feature_gram_inverse",
    "feature_gram_inverse_paper_eq4",
    "top_similar_pairs",
    "SimilarPairs",
    "leave_two_out_residual",
    "full_projector_residual",
    "sign_rule_terms",
    "SignRuleTerms",
    "sign_match_fraction",
    "repulsion_fraction",
    "lagged_inner_products",
    "rolling_gram_from_lagged",
    "rolling_gram_eigenvalues",
    "window_gram_eigenvalues",
    "eigengap",
    "slope_detector",
    "SlopeDetection",
    "late_median_gap",
    "late_stage_separation",
    "rho_tian",
    "first_crossing",
    "ftf_offdiag_ratio",
    "backprop_gradient_norm",
    "independence_proxy",
    "fit_power_law",
    "PowerLawFit",
    "headline_table",
    "eta_sweep_table",
    "scaling_sweep_table",
    "reduced_replication_table",
]

DomainError = V.DomainError

# ------------------------------------------------------------------------------------ validators


def _matrix(x: Any, name: str, *, min_rows: int = 1, min_cols: int = 1) -> np.ndarray:
    a = V.as_float_array(x, name)
    if a.ndim != 2:
        raise DomainError(f"{name} must be a 2-D array (got shape {a.shape})")
    if a.shape[0] < min_rows or a.shape[1] < min_cols:
        raise DomainError(f"{name} must have at least {min_rows} rows and {min_cols} columns (got shape {a.shape})")
    return a


def _eta(eta: Any) -> float:
    a = V.as_float_array(eta, "eta")
    if a.ndim != 0:
        raise DomainError(f"eta must be a scalar (got shape {a.shape})")
    if not a > 0:
        raise DomainError(f"eta must be > 0; B is undefined at eta = 0 when K > n (got {float(a)!r})")
    return float(a)


def _series(x: Any, name: str, *, ndim: tuple[int, ...] = (1,)) -> np.ndarray:
    """Float64 series that may contain NaN (undefined entries) but no infinities."""
    a = V.as_float_array(x, name, allow_nan=True)
    if a.ndim not in ndim:
        raise DomainError(f"{name} must have {' or '.join(map(str, ndim))} dimension(s) (got shape {a.shape})")
    return a


def _labels(y: Any, M: int, name: str = "y") -> np.ndarray:
    a = np.asarray(y)
    if a.ndim != 1 or a.size == 0:
        raise DomainError(f"{name} must be a non-empty 1-D array of integers (got shape {a.shape})")
    return V.index_array(a, name, M)


def _pair_indices(j: Any, l: Any, K: int) -> tuple[np.ndarray, np.ndarray]:
    jj = V.index_array(j, "j", K, what="integer column indices")
    ll = V.index_array(l, "l", K, what="integer column indices")
    jj, ll = np.broadcast_arrays(jj, ll)
    if np.any(jj == ll):
        raise DomainError("j must differ from l (the sign rule concerns off-diagonal pairs; got j == l)")
    return jj, ll


def _chol(A: np.ndarray) -> tuple[np.ndarray, bool]:
    return linalg.cho_factor(A, lower=True, check_finite=False)


# ------------------------------------------------------------------------------ model and loss


@cites("repulsion:model")
def one_hot_pairs(a: Any, b: Any, M: int) -> np.ndarray:
    r"""Concatenated one-hot codes of the operand pairs, :math:`x_i=[e_{a_i};e_{b_i}]`.

    .. math::

        X\in\{0,1\}^{n\times 2M},\qquad X_{i,a_i}=X_{i,M+b_i}=1 .

    Parameters
    ----------
    a, b : array_like of int, shape (n,)
        Operands in ``[0, M)``, same length.
    M : int
        Modulus, ``>= 2``.

    Returns
    -------
    ndarray, shape (n, 2M), float64.

    References
    ----------
    Spec ``repulsion:model`` (eq. 2): frozen identity embedding, ``num_of_ops = 2``.
    """
    M = V.integer_at_least(M, "M", 2)
    aa = _labels(a, M, "a")
    bb = _labels(b, M, "b")
    if aa.shape != bb.shape:
        raise DomainError(f"a and b must have the same length (got {aa.size} and {bb.size})")
    X = np.zeros((aa.size, 2 * M))
    r = np.arange(aa.size)
    X[r, aa] = 1.0
    X[r, M + bb] = 1.0
    return X


def _activation(activation: str) -> str:
    return V.choice(activation, "activation", {"sqr": "sqr", "x2": "sqr", "relu": "relu"})


class TianOutputs(NamedTuple):
    """Result of :func:`tian_forward`."""

    F: np.ndarray
    """hidden features :math:`F`."""
    Y_hat: np.ndarray
    r"""outputs :math:`\hat Y=FV`."""


@cites("repulsion:model")
def tian_forward(W: Any, Vout: Any, X: Any, activation: str = "sqr") -> TianOutputs:
    r"""Features and outputs of Tian's two-layer model (no biases).

    .. math::

        F=\sigma(XW)\in\mathbb R^{n\times K},\qquad \widehat Y=FV\in\mathbb R^{n\times M},

    :math:`\sigma(x)=x^2` (``"sqr"``, default) or ReLU.

    Parameters
    ----------
    W : array (2M, K); Vout : array (K, M); X : array (n, 2M) (e.g. :func:`one_hot_pairs`).
    activation : {"sqr", "relu"}

    Returns
    -------
    (F, Y_hat)
        A :class:`TianOutputs` named tuple (``F``, ``Y_hat``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``repulsion:model`` (eq. 2); code ``TianMLP`` (torch stores W transposed).
    """
    act = _activation(activation)
    W = _matrix(W, "W")
    Vo = _matrix(Vout, "Vout")
    X = _matrix(X, "X")
    if X.shape[1] != W.shape[0]:
        raise DomainError(f"X has {X.shape[1]} columns but W has {W.shape[0]} rows (need X: (n, 2M), W: (2M, K))")
    if Vo.shape[0] != W.shape[1] or 2 * Vo.shape[1] != W.shape[0]:
        raise DomainError(f"Vout must be (K, M) = ({W.shape[1]}, {W.shape[0] // 2}) for W of shape (2M, K) = {W.shape} "
                          f"(got {Vo.shape})")
    H = X @ W
    F = H * H if act == "sqr" else np.maximum(H, 0.0)
    return TianOutputs(F, F @ Vo)


@cites("repulsion:loss")
def tian_mse_loss(Y_hat: Any, y: Any, M: int, form: str = "code") -> float:
    r"""Zero-meaned MSE of the Tian setup, as trained (``form="code"``) or as eq. 3 writes it.

    .. math::

        L_{\rm code}=\frac1n\sum_{i=1}^n\big\|\hat y_i^{\rm zm}-(e_{y_i}-\tfrac1M\mathbf 1)\big\|^2,
        \qquad \hat y_i^{\rm zm}=\hat y_i-\overline{\hat y_i}\mathbf 1\quad\text{(class centring)},

    .. math::

        J_{\rm eq.3}=\tfrac12\big\|P_1^\perp(Y-\widehat Y)\big\|_F^2,\qquad
        P_1^\perp=I_n-\tfrac1n\mathbf 1\mathbf 1^\top,\ Y={\rm onehot}(y)-\tfrac1M .

    The two are not proportional (different centring axis) and differ in scale by about :math:`2n`.
    Replications must use the code form: with coupled L2 weight decay the loss scale sets the effective
    :math:`\eta` (erratum ``repulsion-4``).

    Parameters
    ----------
    Y_hat : array (n, M); y : int array (n,) in ``[0, M)``; M : int >= 2
    form : {"code", "paper"}

    References
    ----------
    Spec ``repulsion:loss`` (eq. 3; code ``tian_mse_loss`` = Tian's ``compute_loss(..., "mse")``).
    """
    M = V.integer_at_least(M, "M", 2)
    form = V.choice(form, "form", {"code": "code", "paper": "paper", "paper_eq3": "paper"})
    Yh = _matrix(Y_hat, "Y_hat")
    yy = _labels(y, M)
    if Yh.shape != (yy.size, M):
        raise DomainError(f"Y_hat must have shape (n, M) = ({yy.size}, {M}) (got {Yh.shape})")
    T = np.full_like(Yh, -1.0 / M)
    T[np.arange(yy.size), yy] += 1.0
    if form == "code":
        R = Yh - Yh.mean(axis=1, keepdims=True) - T
        return float(np.mean(np.sum(R * R, axis=1)))
    R = T - Yh
    R = R - R.mean(axis=0, keepdims=True)
    return float(0.5 * np.sum(R * R))


class TianLossGrad(NamedTuple):
    """Result of :func:`tian_loss_grad`."""

    loss: float
    """loss :math:`L`."""
    dW: np.ndarray
    r""":math:`\partial L/\partial W`."""
    dV: np.ndarray
    r""":math:`\partial L/\partial V`."""


@cites("repulsion:loss", "repulsion:model")
def tian_loss_grad(W: Any, Vout: Any, X: Any, y: Any, M: int, activation: str = "sqr") -> TianLossGrad:
    r"""Code-form loss and its exact gradients :math:`(\partial L/\partial W,\partial L/\partial V)`.

    With :math:`H=XW`, :math:`F=\sigma(H)`, :math:`R=\widehat Y^{\rm zm}-T` (rows zero-mean),

    .. math::

        \frac{\partial L}{\partial\widehat Y}=\frac2nR,\quad
        \frac{\partial L}{\partial V}=F^\top\frac{\partial L}{\partial\widehat Y},\quad
        \frac{\partial L}{\partial W}=X^\top\Big[\Big(\frac{\partial L}{\partial\widehat Y}V^\top\Big)\odot\sigma'(H)\Big].

    A numpy reference for the JAX engine (autodiff must agree) and for small private training loops.

    Returns
    -------
    (loss, dW, dV)
        A :class:`TianLossGrad` named tuple (``loss``, ``dW``, ``dV``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``repulsion:loss``, ``repulsion:model``.
    """
    M = V.integer_at_least(M, "M", 2)
    act = _activation(activation)
    W = _matrix(W, "W")
    Vo = _matrix(Vout, "Vout")
    X = _matrix(X, "X")
    yy = _labels(y, M)
    if X.shape[0] != yy.size or X.shape[1] != W.shape[0] or Vo.shape != (W.shape[1], M):
        raise DomainError(f"inconsistent shapes: X {X.shape}, W {W.shape}, V {Vo.shape}, y ({yy.size},), M = {M}")
    n = yy.size
    H = X @ W
    F = H * H if act == "sqr" else np.maximum(H, 0.0)
    Yh = F @ Vo
    T = np.full_like(Yh, -1.0 / M)
    T[np.arange(n), yy] += 1.0
    R = Yh - Yh.mean(axis=1, keepdims=True) - T
    loss = float(np.mean(np.sum(R * R, axis=1)))
    G = (2.0 / n) * R
    dV = F.T @ G
    dF = G @ Vo.T
    dH = dF * (2.0 * H) if act == "sqr" else dF * (H > 0)
    dW = X.T @ dH
    return TianLossGrad(loss, dW, dV)


def _one_minus_power(beta: float, s: int) -> float:
    """1 - beta^s for beta in [0, 1), s >= 1, as -expm1(s log1p(beta - 1)) (beta - 1 exact for beta in
    [1/2, 1]; 1 - 0.999**2 lost 3 digits to cancellation); beta = 0 gives 1."""
    return 1.0 if beta == 0.0 else -math.expm1(s * math.log1p(beta - 1.0))

class AdamState(NamedTuple):
    """Result of :func:`adam_l2_update`: parameter and Adam moments after the step."""

    param: np.ndarray
    """updated parameter."""
    m: np.ndarray
    """first moment :math:`m`."""
    v: np.ndarray
    """second moment :math:`v`."""


@cites("repulsion:setup")
def adam_l2_update(param: Any, grad: Any, m: Any, v: Any, step: int, lr: float = 1e-3, eta: float = 0.0,
                   b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> AdamState:
    r"""One ``torch.optim.Adam(lr, weight_decay=eta)`` step: **coupled** L2, then Adam.

    .. math::

        g\leftarrow\nabla L+\eta\theta,\quad m\leftarrow\beta_1m+(1-\beta_1)g,\quad
        v\leftarrow\beta_2v+(1-\beta_2)g^2,\quad
        \theta\leftarrow\theta-\mathrm{lr}\,\frac{m/(1-\beta_1^s)}{\sqrt{v/(1-\beta_2^s)}+\epsilon}

    (torch applies :math:`\epsilon` after the bias-corrected square root; ``step`` = s >= 1).
    optax equivalent: ``optax.chain(optax.add_decayed_weights(eta), optax.adam(lr))``.

    Returns
    -------
    (param, m, v) after the step.
        A :class:`AdamState` named tuple (``param``, ``m``, ``v``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``repulsion:setup`` (§3: not AdamW).
    """
    s = V.integer_at_least(step, "step", 1)
    lr = V.positive(lr, "lr", scalar=True)
    eta = V.nonnegative(eta, "eta", scalar=True)
    b1 = V.as_float_array(b1, "b1", scalar=True)
    b2 = V.as_float_array(b2, "b2", scalar=True)
    for name, b in (("b1", b1), ("b2", b2)):
        if not 0.0 <= b < 1.0:
            raise DomainError(f"{name} must be in [0, 1) (got {b!r})")
    eps = V.positive(eps, "eps", scalar=True)
    p = V.as_float_array(param, "param")
    arrays = {"grad": V.as_float_array(grad, "grad"), "m": V.as_float_array(m, "m"),
              "v": V.nonnegative(v, "v", context="(a second-moment estimate)")}
    for name, a in arrays.items():
        V.same_shape(a, name, p.shape, "param")
    g = arrays["grad"] + eta * p
    m = b1 * arrays["m"] + (1 - b1) * g
    v = b2 * arrays["v"] + (1 - b2) * g * g
    mhat = m / _one_minus_power(b1, s)
    denom = np.sqrt(v) / math.sqrt(_one_minus_power(b2, s)) + eps
    return AdamState(p - lr * mhat / denom, m, v)


class TianInitBounds(NamedTuple):
    """Result of :func:`tian_init_bounds`: half-widths of the uniform initialisations."""

    W: float
    r""":math:`1/\sqrt{2M}` (first layer)."""
    V: float
    r""":math:`1/\sqrt K` (second layer)."""


@cites("repulsion:setup")
def tian_init_bounds(M: int, K: int) -> TianInitBounds:
    r"""Half-widths of the PyTorch ``nn.Linear`` default init: :math:`W\sim\mathcal U(\pm1/\sqrt{2M})`,
    :math:`V\sim\mathcal U(\pm1/\sqrt K)` (fan-in :math:`2M` and :math:`K`).

    Returns
    -------
    TianInitBounds
        A :class:`TianInitBounds` named tuple (``W``, ``V``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``repulsion:setup``.
    """
    M = V.count(M, "M", 2)
    K = V.count(K, "K", 1)
    return TianInitBounds(1.0 / math.sqrt(2 * M), 1.0 / math.sqrt(K))


@cites("repulsion:setup")
def tian_setup(M: int = 71, K: int = 2048, n_train: int = 2016, eta: float = 2e-4, lr: float = 1e-3,
               epochs: int = 400, activation: str = "sqr", window: int = 20) -> types.MappingProxyType:
    r"""The pinned hyper-parameters of the Tian / Figure-3 setup (read-only mapping).

    Data: all :math:`M^2` pairs, target :math:`(a+b)\bmod M`, first ``n_train`` of a seeded permutation
    train, the rest test (``n_train = 2016`` = 0.39992 :math:`M^2` at :math:`M=71`). Init: torch
    ``nn.Linear`` defaults (:func:`tian_init_bounds`). Optimiser: Adam(lr, betas (0.9, 0.999), eps 1e-8)
    with coupled L2 ``weight_decay = eta`` (:func:`adam_l2_update`), full batch, one step per epoch;
    metrics logged **before** the step (row t = parameters after t steps). Loss: code form of
    :func:`tian_mse_loss`. Conditions: ``eta = 2e-4`` (grok) vs ``eta = 0`` (control); 400 epochs for
    :math:`x^2`, 800 for ReLU; 15 seeds.

    Raises
    ------
    DomainError
        ``n_train`` not in ``[1, M^2 - 1]``, ``eta < 0``, ``lr <= 0``, ``M < 2``, ``K < 1``.

    References
    ----------
    Spec ``repulsion:setup`` (§3).
    """
    M = V.integer_at_least(M, "M", 2)
    K = V.integer_at_least(K, "K", 1)
    n_train = V.integer_at_least(n_train, "n_train", 1)
    if n_train > M * M - 1:
        raise DomainError(f"n_train must be in [1, M^2 - 1] = [1, {M * M - 1}] (got {n_train})")
    eta = V.nonnegative(eta, "eta", scalar=True)
    lr = V.positive(lr, "lr", scalar=True)
    epochs = V.integer_at_least(epochs, "epochs", 1)
    act = _activation(activation)
    window = V.integer_at_least(window, "window", 2)
    wb, vb = tian_init_bounds(M, K)
    return types.MappingProxyType({
        "M": M, "K": K, "n_train": n_train, "n_test": M * M - n_train, "eta": eta, "lr": lr,
        "betas": (0.9, 0.999), "adam_eps": 1e-8, "weight_decay": "coupled L2 (torch Adam, not AdamW)",
        "epochs": epochs, "activation": act, "init_W_halfwidth": wb, "init_V_halfwidth": vb,
        "loss": "code", "log_before_step": True, "window": window, "lag": 25, "threshold": 0.04,
        "t_min": 100, "rho_threshold": 0.075, "grok_threshold": 0.5, "n_seeds": 15,
    })


# ------------------------------------------------------------------------- features and B


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
    Z = linalg.cho_solve(_chol(A), Ft, check_finite=False)  # A^{-1} F~  (n x K)
    Bm = -(Ft.T @ Z)
    Bm[np.diag_indices(K)] += 1.0
    Bm /= eta
    return 0.5 * (Bm + Bm.T)


def _direct(Ft: np.ndarray, eta: float) -> np.ndarray:
    K = Ft.shape[1]
    A = Ft.T @ Ft
    A[np.diag_indices(K)] += eta
    Bm = linalg.cho_solve(_chol(A), np.eye(K), check_finite=False)
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
    Z = linalg.cho_solve(_chol(A), Ft, check_finite=False)
    Bm = -(Ft.T @ Z) / eta**2
    Bm[np.diag_indices(K)] += 1.0 / eta
    return 0.5 * (Bm + Bm.T)


# ----------------------------------------------------------------------------- the sign rule


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
    return linalg.cho_solve(_chol(A), Ft, check_finite=False)


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


# --------------------------------------------------------------- rolling Gram and the detector


@cites("repulsion:rolling-gram")
def lagged_inner_products(deltas: Any, window: int = 20, chunk: int = 64) -> np.ndarray:
    r"""Lagged inner products :math:`L[s,d]=\langle\Delta_{s+1},\Delta_{s+1-d}\rangle`, :math:`0\le d<w`.

    ``deltas[s]`` is :math:`\Delta W_{s+1}` flattened (shape ``(T, P)``); ``L[s, d]`` is NaN for
    :math:`s<d`. These :math:`w` numbers per step are all that the rolling Gram needs (a training loop
    can log them online from a ring buffer at :math:`O(wP)` per step). Computed in float64 in row
    chunks, so float32 input is not copied whole.

    References
    ----------
    Spec ``repulsion:rolling-gram`` (eq. 5).
    """
    window = V.integer_at_least(window, "window", 2)
    D = np.asarray(deltas)
    if D.ndim != 2 or D.size == 0:
        raise DomainError(f"deltas must be a non-empty 2-D array (T, P) (got shape {D.shape})")
    if not np.issubdtype(D.dtype, np.floating):
        D = V.as_float_array(D, "deltas")
    T = D.shape[0]
    if window > T:
        raise DomainError(f"window must be <= the number of deltas T = {T} (history shorter than one window; got {window})")
    chunk = V.integer_at_least(chunk, "chunk", 1)
    L = np.full((T, window), np.nan)
    for r0 in range(0, T, chunk):
        r1 = min(T, r0 + chunk)
        lo = max(0, r0 - window + 1)
        blk = np.asarray(D[lo:r1], dtype=np.float64)
        if not np.all(np.isfinite(blk)):
            raise DomainError("deltas must be finite (got a NaN or infinity)")
        for d in range(window):
            s0 = max(r0, d)
            if s0 >= r1:
                continue
            a = blk[s0 - lo:r1 - lo]
            b = blk[s0 - d - lo:r1 - d - lo]
            L[s0:r1, d] = np.einsum("ij,ij->i", a, b)
    return L


@cites("repulsion:rolling-gram")
def rolling_gram_from_lagged(lagged: Any, k: int = 5) -> np.ndarray:
    r"""Rolling-window Gram eigenvalues from lagged inner products (:func:`lagged_inner_products`).

    Row :math:`t=0..T` (epoch, logged before step :math:`t`) holds the top-``k`` eigenvalues, descending,
    of the :math:`m\times m` Gram of :math:`\Delta W_{t-m+1..t}`, :math:`m=\min(t,w)`; NaN for rows 0, 1
    and for orders :math:`>m`. Batched ``eigh`` on :math:`w\times w` matrices: :math:`O(w^3)` per row.

    Parameters
    ----------
    lagged : array (T, w) with ``lagged[s, d]`` finite for ``s >= d``.
    k : int in ``[1, w]``.

    References
    ----------
    Spec ``repulsion:rolling-gram`` (eq. 5; code ``EigengapTracker``).
    """
    L = _series(lagged, "lagged", ndim=(2,))
    if L.ndim != 2 or L.shape[1] < 2 or L.shape[0] < 1:
        raise DomainError(f"lagged must be a 2-D array (T, window >= 2) (got shape {L.shape})")
    T, w = L.shape
    if w > T:
        raise DomainError(f"window must be <= the number of deltas T = {T} (got {w})")
    k = V.integer_at_least(k, "k", 1)
    if k > w:
        raise DomainError(f"k must be in [1, window] = [1, {w}] (got {k})")
    valid = np.zeros_like(L, dtype=bool)
    for d in range(w):
        valid[d:, d] = True
    if np.any(~np.isfinite(L[valid])):
        raise DomainError("lagged must be finite where s >= d")
    out = np.full((T + 1, k), np.nan)
    a = np.arange(w)
    dd = np.abs(a[:, None] - a[None, :])
    mx = np.maximum(a[:, None], a[None, :])
    # full windows: rows t = w..T; deltas s = t-w .. t-1; G[a, b] = L[t-w+max(a,b), |a-b|]
    if T >= w:
        t = np.arange(w, T + 1)
        G = L[(t - w)[:, None, None] + mx[None], dd[None]]
        ev = np.linalg.eigvalsh(G)[:, ::-1]
        out[w:, :k] = ev[:, :k]
    # partial windows: rows t = 2 .. min(w-1, T)
    for t in range(2, min(w - 1, T) + 1):
        m = t
        G = L[mx[:m, :m], dd[:m, :m]]
        ev = np.linalg.eigvalsh(G)[::-1]
        kk = min(k, m)
        out[t, :kk] = ev[:kk]
    return out


@cites("repulsion:rolling-gram")
def rolling_gram_eigenvalues(deltas: Any, window: int = 20, k: int = 5) -> np.ndarray:
    r"""Top-``k`` eigenvalues :math:`\sigma_k(t)` of the rolling :math:`w\times w` update Gram.

    .. math::

        \Delta(t)=[\Delta W_{t-w+1},\dots,\Delta W_t]\in\mathbb R^{P\times w},\qquad
        \sigma_k(t)=\lambda_k\big(\Delta(t)^\top\Delta(t)\big)

    (squared singular values of :math:`\Delta`), with the code's epoch alignment: row :math:`t` uses the
    last :math:`\min(t,w)` deltas; rows 0, 1 and orders :math:`>\min(t,w)` are NaN.

    Parameters
    ----------
    deltas : array (T, P), ``deltas[s]`` = :math:`\Delta W_{s+1}` (whole optimiser update, flattened).
    window : int, 2 <= window <= T.
    k : int in ``[1, window]``.

    Returns
    -------
    ndarray (T + 1, k).

    References
    ----------
    Spec ``repulsion:rolling-gram`` (eq. 5).
    """
    window = V.integer_at_least(window, "window", 2)
    k = V.integer_at_least(k, "k", 1)
    if k > window:
        raise DomainError(f"k must be in [1, window] = [1, {window}] (got {k})")
    return rolling_gram_from_lagged(lagged_inner_products(deltas, window), k)


@cites("repulsion:rolling-gram")
def window_gram_eigenvalues(window_deltas: Any, k: int = 5) -> np.ndarray:
    r"""Descending eigenvalues of :math:`\Delta^\top\Delta` for a stack of windows ``(..., m, P)``.

    The per-step :math:`O(m^2P+m^3)` form (what a ring buffer in a training loop feeds). Returns the top
    ``min(k, m)`` eigenvalues, shape ``(..., min(k, m))``.

    References
    ----------
    Spec ``repulsion:rolling-gram``.
    """
    D = V.as_float_array(window_deltas, "window_deltas")
    if D.ndim < 2:
        raise DomainError(f"window_deltas must have shape (..., m, P) (got {D.shape})")
    k = V.integer_at_least(k, "k", 1)
    G = D @ np.swapaxes(D, -1, -2)
    ev = np.linalg.eigvalsh(G)[..., ::-1]
    return ev[..., : min(k, D.shape[-2])]


@cites("repulsion:rolling-gram")
def eigengap(eigs: Any, i: int = 2, j: int = 3) -> np.ndarray | float:
    r"""Eigengap :math:`g(t)=\sigma_i(t)/\sigma_j(t)` (default :math:`\sigma_2/\sigma_3`).

    NaN where either is NaN or :math:`\sigma_j\le0` (code: ``evW[2] > 0`` else NaN).

    References
    ----------
    Spec ``repulsion:rolling-gram``.
    """
    E = _series(eigs, "eigs", ndim=(1, 2))
    E2 = E if E.ndim == 2 else E[None]
    i = V.integer_at_least(i, "i", 1)
    j = V.integer_at_least(j, "j", 1)
    if max(i, j) > E2.shape[-1]:
        raise DomainError(f"i and j must be <= the number of eigenvalues {E2.shape[-1]} (got {i}, {j})")
    num, den = E2[:, i - 1], E2[:, j - 1]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        g = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return g if E.ndim == 2 else float(g[0])  # 1-D input = one row of eigenvalues


class SlopeDetection(NamedTuple):
    """Result of :func:`slope_detector` (eq. 6)."""

    t_fire: int | None
    """first index where the detector fires, None if it never does."""
    s: np.ndarray
    """the slope statistic :math:`s_t`."""


@cites("repulsion:slope-detector")
def slope_detector(gap: Any, lag: int = 25, threshold: float = 0.04, t_min: int = 100,
                   floor: float = 1e-6) -> SlopeDetection:
    r"""Slope detector on the log eigengap (eq. 6).

    .. math::

        x(t)=\log\max(g(t),10^{-6}),\qquad s(t)=\frac{x(t)-x(t-L)}{L},\qquad
        t_{\rm fire}=\min\{t\ge t_{\min}:s(t)>\theta\}

    (natural log; :math:`s` is NaN for :math:`t<L` or where either :math:`x` is NaN; NaN never fires).
    Invariant to a common rescaling of :math:`\Delta W` (the gap is a ratio).

    Parameters
    ----------
    gap : 1-D array indexed by epoch (row 0 = init), NaN allowed.
    lag : int, 1 <= lag < len(gap). threshold : float. t_min : int >= 0. floor : float > 0.

    Returns
    -------
    (t_fire or None, s)
        A :class:`SlopeDetection` named tuple (``t_fire``, ``s``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``repulsion:slope-detector`` (eq. 6; code ``analysis.slope_signal``, ``analyze_eta_sweep.slope_fire``).
    """
    g = _series(gap, "gap")
    lag = V.integer_at_least(lag, "lag", 1)
    if lag >= g.size:
        raise DomainError(f"lag must be < len(gap) = {g.size} (got {lag})")
    threshold = V.finite(threshold, "threshold", scalar=True)
    t_min = V.integer_at_least(t_min, "t_min", 0)
    floor = V.positive(floor, "floor", scalar=True)
    with np.errstate(invalid="ignore"):
        x = np.log(np.where(np.isnan(g), np.nan, np.maximum(g, floor)))
    s = np.full(g.size, np.nan)
    s[lag:] = (x[lag:] - x[:-lag]) / lag
    with np.errstate(invalid="ignore"):
        hit = np.nonzero((s > threshold) & (np.arange(g.size) >= t_min))[0]
    return SlopeDetection((int(hit[0]) if hit.size else None), s)


def _window(window: Any, T: int) -> tuple[int, int]:
    try:
        a, b = window
    except (TypeError, ValueError) as exc:
        raise DomainError(f"window must be a pair (start, stop) of epochs (got {window!r})") from exc
    a = V.integer_at_least(a, "window start", 0)
    b = V.integer_at_least(b, "window stop", 0)
    if a > b or b >= T:
        raise DomainError(f"window must satisfy 0 <= start <= stop < number of epochs {T} (got ({a}, {b}))")
    return a, b


@cites("repulsion:late-separation")
def late_median_gap(gaps: Any, window: tuple[int, int] = (200, 400)) -> float | np.ndarray:
    r"""Per-run :math:`m=\operatorname{median}_{a\le t\le b}g(t)` (NaN-aware, inclusive).

    ``gaps`` 1-D (one run) or 2-D (runs x epochs). NaN for a run with no finite gap in the window.

    References
    ----------
    Spec ``repulsion:late-separation``.
    """
    G = _series(gaps, "gaps", ndim=(1, 2))
    a, b = _window(window, G.shape[-1])
    seg = G[..., a:b + 1]
    out = np.full(seg.shape[:-1], np.nan)
    ok = np.any(np.isfinite(seg), axis=-1)
    if np.any(ok):
        out[ok] = np.nanmedian(seg[ok] if seg.ndim == 2 else seg, axis=-1)
    return V.scalar_or_array(out)


@cites("repulsion:late-separation")
def late_stage_separation(gaps_grok: Any, gaps_control: Any, window: tuple[int, int] = (200, 400)) -> float:
    r"""Late-stage separation :math:`\operatorname{median}(m_{\rm grok})/\operatorname{median}(m_{\rm control})`.

    :math:`m` = per-run median gap over the window (:func:`late_median_gap`); the paper's 229x uses
    epochs 200-400. The value depends on the window (the gap decays after lock-in; erratum ``repulsion-6``).

    References
    ----------
    Spec ``repulsion:late-separation`` (code ``analysis.py``).
    """
    _series(gaps_grok, "gaps_grok", ndim=(1, 2))
    _series(gaps_control, "gaps_control", ndim=(1, 2))
    mg = np.atleast_1d(late_median_gap(gaps_grok, window))
    mc = np.atleast_1d(late_median_gap(gaps_control, window))
    if np.all(np.isnan(mg)) or np.all(np.isnan(mc)):
        raise DomainError("each condition needs at least one run with a finite gap in the window")
    den = float(np.nanmedian(mc))
    if not den > 0:
        raise DomainError(f"the control's median late gap must be > 0 (got {den!r})")
    return float(np.nanmedian(mg)) / den


# --------------------------------------------------------------------------------- rho_tian


@cites("repulsion:rho-tian")
def rho_tian(F: Any, variant: str = "code", method: str = "closed") -> float:
    r"""Level metric :math:`\rho_{\rm tian}`: distance of the feature kernel from the two-level ideal.

    ``variant="code"`` (what the paper's and Tian's code compute) on the raw :math:`G=FF^\top`:

    .. math::

        \bar d=\tfrac1n\operatorname{tr}G,\quad \bar o=\frac{\mathbf 1^\top G\mathbf 1-\operatorname{tr}G}{n(n-1)},\quad
        \rho=\frac{\|G-[(\bar d-\bar o)I+\bar o\mathbf 1\mathbf 1^\top]\|_F}{\|G\|_F}
        =\sqrt{1-\frac{n\bar d^2+n(n-1)\bar o^2}{\|G\|_F^2}},

    the closed form (``method="closed"``, default) needing only :math:`\|F\|_F^2`, :math:`\|F^\top\mathbf 1\|^2`
    and :math:`\|G\|_F=\|F^\top F\|_F` (smaller side); ``method="direct"`` forms the :math:`n\times n` matrix.

    ``variant="paper_eq7"``: eq. 7 as printed, :math:`G'=P_1^\perp FF^\top` (column-centred, as the code's
    ``fft``), :math:`\bar d,\bar o` from :math:`G'`, denominator :math:`\|FF^\top\|_F` -- for comparison only
    (erratum ``repulsion-3``). Fire rule: :func:`first_crossing` at 0.075 (tuned to M=71, K=2048).

    Raises
    ------
    DomainError
        ``F`` not 2-D, fewer than 2 rows, all zero, non-finite.

    References
    ----------
    Spec ``repulsion:rho-tian`` (eq. 7; code ``tian_metrics`` ``fft_dist_from_ideal``, Tian's ``fit_diag_11``).
    """
    F = _matrix(F, "F", min_rows=2)
    variant = V.choice(variant, "variant", {"code": "code", "paper_eq7": "paper_eq7", "paper": "paper_eq7"})
    method = V.choice(method, "method", ("closed", "direct"))
    if not np.any(F != 0):
        raise DomainError("F must not be all zero (rho_tian is 0/0)")
    n = F.shape[0]
    if variant == "code" and method == "closed":
        tr = float(np.sum(F * F))
        s1 = F.sum(axis=0)
        tot = float(s1 @ s1)
        Gs = F.T @ F if F.shape[1] <= n else F @ F.T
        g2 = float(np.sum(Gs * Gs))
        dbar = tr / n
        obar = (tot - tr) / (n * (n - 1))
        return math.sqrt(max(0.0, 1.0 - (n * dbar**2 + n * (n - 1) * obar**2) / g2))
    G0 = F @ F.T
    G = G0 if variant == "code" else G0 - G0.mean(axis=0, keepdims=True)
    tr = float(np.trace(G))
    dbar = tr / n
    obar = (float(G.sum()) - tr) / (n * (n - 1))
    ideal = np.full((n, n), obar)
    ideal[np.diag_indices(n)] = dbar
    return float(np.linalg.norm(G - ideal) / np.linalg.norm(G0))


@cites("repulsion:rho-tian", "repulsion:slope-detector", "repulsion:headline")
def first_crossing(series: Any, threshold: float) -> int | None | list:
    r"""First epoch :math:`t` with ``series[t] >= threshold`` (NaN never crosses); ``None`` if never.

    Used for the grokking epoch (test accuracy >= 0.5, absolute threshold as in
    ``analyze_eta_sweep.py``) and the :math:`\rho_{\rm tian}` fire epoch (>= 0.075). A 2-D input
    (runs x epochs) gives a list, one entry per run.

    References
    ----------
    Spec ``repulsion:rho-tian``, ``repulsion:headline`` (§7-9).
    """
    s = _series(series, "series", ndim=(1, 2))
    th = V.finite(threshold, "threshold", scalar=True)
    if s.ndim == 2:
        return [first_crossing(r, th) for r in s]
    with np.errstate(invalid="ignore"):
        hit = np.nonzero(s >= th)[0]
    return int(hit[0]) if hit.size else None


# ---------------------------------------------------------------------------- logged extras


@cites("repulsion:aux")
def ftf_offdiag_ratio(F_tilde: Any) -> float:
    r"""Off-diagonal ratio of :math:`H=\widetilde F^\top\widetilde F`: mean :math:`|H_{j\ell}|_{j\ne\ell}` / mean :math:`|H_{jj}|`.

    .. math::

        r=\frac{\frac1{K(K-1)}\sum_{j\ne\ell}|H_{j\ell}|}{\max\big(\frac1K\sum_j|H_{jj}|,10^{-30}\big)}

    Stays < 0.04 in both conditions of the full setup (Tian's bound 8 %).

    References
    ----------
    Spec ``repulsion:aux`` (a) (code ``tian_metrics`` ``ftf_ratio``).
    """
    Ft = _matrix(F_tilde, "F_tilde", min_cols=2)
    scale = float(np.max(np.abs(Ft)))
    if scale == 0.0:
        return 0.0  # the code's value for F~ = 0 (0 / 1e-30)
    # the ratio is scale invariant: scale F~ to max |entry| 1 first, so the code's floor 1e-30 on the
    # diagonal mean (now >= 1/K) never bites and F~ of size 1e-20 (H ~ 1e-40) no longer gives off/1e-30
    Fs = Ft / scale
    H = np.abs(Fs.T @ Fs)
    K = H.shape[0]
    dg = float(np.trace(H)) / K
    off = (float(H.sum()) - float(np.trace(H))) / (K * (K - 1))
    return off / max(dg, 1e-30)


def _G_F(F: Any, Vout: Any, y: Any, M: int) -> np.ndarray:
    M = V.integer_at_least(M, "M", 2)
    F = _matrix(F, "F")
    Vo = _matrix(Vout, "Vout")
    yy = _labels(y, M)
    if Vo.shape != (F.shape[1], M) or yy.size != F.shape[0]:
        raise DomainError(f"inconsistent shapes: F {F.shape}, V {Vo.shape} (need (K, M) = ({F.shape[1]}, {M})), y ({yy.size},)")
    Y = np.full((yy.size, M), -1.0 / M)
    Y[np.arange(yy.size), yy] += 1.0
    R = Y - F @ Vo
    R = R - R.mean(axis=0, keepdims=True)
    return R @ Vo.T


@cites("repulsion:aux")
def backprop_gradient_norm(F: Any, Vout: Any, y: Any, M: int) -> float:
    r"""Backpropagated-gradient norm :math:`\|G_F\|_F`, :math:`G_F=P_1^\perp(Y-FV)V^\top`, :math:`Y={\rm onehot}-1/M`.

    Both :math:`Y` and :math:`FV` are sample-centred (the theory's form, not the trained loss).
    Peaks near epoch 50 in the full setup (seed 0: 71.2 at 57 grok, 63.6 at 49 control).

    References
    ----------
    Spec ``repulsion:aux`` (b) (code ``tian_metrics`` ``gF_norm``).
    """
    return float(np.linalg.norm(_G_F(F, Vout, y, M)))


@cites("repulsion:aux")
def independence_proxy(F: Any, Vout: Any, y: Any, M: int, n_pairs: int = 500, seed: Any = 0) -> float:
    r"""Median :math:`|\cos(g_j,g_{j'})|` over random column pairs of :math:`G_F` (independence proxy).

    ``n_pairs`` index pairs drawn with ``numpy.random.default_rng(seed).integers(0, K)`` (twice), pairs
    with :math:`j=j'` dropped, norms clamped at 1e-30 (as the code). ``seed`` may be a Generator. ~0.08
    in the full setup.

    References
    ----------
    Spec ``repulsion:aux`` (c) (code ``tian_metrics`` ``indep_cos_med``).
    """
    G = _G_F(F, Vout, y, M)
    n_pairs = V.integer_at_least(n_pairs, "n_pairs", 1)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(V.integer_at_least(seed, "seed", 0))
    K = G.shape[1]
    a = rng.integers(0, K, size=n_pairs)
    b = rng.integers(0, K, size=n_pairs)
    keep = a != b
    if not np.any(keep):
        return float("nan")
    A, Bc = G[:, a[keep]], G[:, b[keep]]
    cos = np.abs(np.sum(A * Bc, axis=0)) / (np.maximum(np.linalg.norm(A, axis=0), 1e-30)
                                            * np.maximum(np.linalg.norm(Bc, axis=0), 1e-30))
    return float(np.median(cos))


# -------------------------------------------------------------------- eta scaling and tables


class PowerLawFit(NamedTuple):
    r"""Result of :func:`fit_power_law`: :math:`t=A\,\eta^{-\gamma}`."""

    gamma: float
    r"""exponent :math:`\gamma`."""
    A: float
    """prefactor :math:`A`."""


@cites("repulsion:eta-scaling")
def fit_power_law(eta: Any, t: Any) -> PowerLawFit:
    r"""Least-squares fit :math:`t=A\,\eta^{-\gamma}` in log-log; returns :math:`(\gamma, A)`.

    The paper's "1/eta scaling" is :math:`\gamma=1`; its own sweep medians give :math:`\gamma=0.81`
    between 5e-5 and 2e-4 and saturation above (erratum ``repulsion-5``).

    Parameters
    ----------
    eta, t : 1-D arrays, same length >= 2, positive, at least two distinct eta.

    Returns
    -------
    PowerLawFit
        A :class:`PowerLawFit` named tuple (``gamma``, ``A``); it unpacks like a plain tuple.

    References
    ----------
    Spec ``repulsion:eta-scaling``.
    """
    e = V.positive(eta, "eta")
    tt = V.positive(t, "t")
    if e.ndim != 1 or tt.ndim != 1 or e.size != tt.size or e.size < 2:
        raise DomainError(f"eta and t must be 1-D arrays of the same length >= 2 (got {e.shape}, {tt.shape})")
    if np.unique(e).size < 2:
        raise DomainError("eta must contain at least two distinct values")
    # fit in logs relative to the first point: log(e / e0) from the quotient (log e - log e0 cancels:
    # 1.3e-13 relative error of gamma at e ~ 1e-100, e1/e0 = 1.5; now 2e-16); A = e^{log A} is inf only
    # where it exceeds the largest double (math.exp raised OverflowError)
    x = FL.log_quotient(e, e[0])
    y = FL.log_quotient(tt, tt[0])
    slope, icpt = np.polyfit(x, y, 1)
    gamma = -float(slope)
    log_A = float(icpt) + math.log(tt[0]) + gamma * math.log(e[0])
    return PowerLawFit(gamma, FL.exp_or_inf(log_A))



@cites("repulsion:headline")
def headline_table() -> dict[str, dict[str, Any]]:
    r"""The paper's headline numbers (M=71, K=2048, n=2016, :math:`\sigma=x^2`, 400 epochs, 15 seeds) and
    the spec's independent replication (5 seeds), for the verify tables.

    References
    ----------
    Spec ``repulsion:headline`` (§9).
    """
    return {
        "train_acc_1_epoch": {"paper": 25, "spec": (20, 25), "spec_control": (15, 19)},
        "grok_epoch_0.5": {"paper": 102, "paper_iqr": (99, 102), "spec": (99, 99, 102, 99, 101),
                           "control_final_test": (0.024, 0.038)},
        "test_0.99_epoch": {"paper": 139, "spec": (134, 139)},
        "rho_fire_epoch": {"paper": 17, "paper_iqr": (17, 18), "paper_control_max": 0.0645,
                           "spec": (16, 19), "spec_control_max": (0.062, 0.065)},
        "slope_fire_epoch": {"paper": 174, "paper_iqr": (173, 174), "paper_fires": "15/15",
                             "paper_control_fires": "0/15", "spec": (173, 172, 174, 174, 173)},
        "late_median_gap": {"paper_grok": 300, "paper_grok_iqr": (168, 320), "paper_control": 1.31,
                            "paper_control_iqr": (1.25, 1.37), "paper_ratio": 229,
                            "spec_grok": 288.0, "spec_control": 1.26, "spec_ratio": 228.6},
        "legacy_sign_match": {"paper": (0.865, 0.955, 0.985), "paper_epochs": (50, 175, 300),
                              "spec_seed0": (0.890, 0.905, 0.950, 0.975, 0.960),
                              "spec_epochs": (50, 100, 175, 250, 300)},
        "repulsion_fraction": {"spec_seed0": (0.890, 0.940, 0.950, 0.973, 0.959),
                               "spec_epochs": (50, 100, 175, 250, 300)},
        "relu": {"paper_fires": "0/15", "paper_separation": 1.4, "paper_test_0.99": 530},
        "window": {"paper": "w = 5, 10: control false positives (3/3); w = 20, 30: perfect (3 seeds)"},
    }


@cites("repulsion:eta-scaling")
def eta_sweep_table() -> dict[float, dict[str, Any]]:
    r"""The paper's eta sweep (5 seeds, 600 epochs), medians: test-0.5 epoch, rho fire, lock-in (slope fire).

    References
    ----------
    Spec ``repulsion:eta-scaling``.
    """
    return {
        1e-5: {"grok": None, "rho": None, "lockin": None, "note": "0/5 grok in 600 epochs; 2000-epoch run: "
               "test 0.5 at 1094, 0.99 at 1527, rho at 527, peak gap ~25"},
        5e-5: {"grok": 312, "rho": 185, "lockin": 280},
        1e-4: {"grok": 174, "rho": 20, "lockin": 199},
        2e-4: {"grok": 101, "rho": 17, "lockin": 173},
        5e-4: {"grok": 102, "rho": 23, "lockin": 553},
    }


@cites("repulsion:scaling-sweep")
def scaling_sweep_table() -> dict[str, Any]:
    r"""The paper's M x p sweep (eta = 2e-4, 5 seeds) as reported (paper claim, not re-run here).

    :math:`p_{\rm crit}\approx\ln M/M` is Tian's estimate.

    References
    ----------
    Spec ``repulsion:scaling-sweep``.
    """
    return {
        "M": (41, 71, 127), "p": (0.1, 0.2, 0.3, 0.5), "eta": 2e-4, "seeds": 5,
        "rho_fires": "60/60 runs at epochs ~11-25",
        "groks": {41: (0.5,), 71: (0.2, 0.3, 0.5), 127: (0.2, 0.3)},
        "diverges": {127: (0.5,)},
        "p_crit": {M: math.log(M) / M for M in (41, 71, 127)},
    }


@cites("repulsion:reduced-replication")
def reduced_replication_table() -> list[dict[str, Any]]:
    r"""The spec's reduced-size replication (JAX float32, 3 seeds per condition; §9).

    Each row: M, K, frac, eta, epochs, test-0.5 epochs, test-0.99 epochs, slope fires, note.

    References
    ----------
    Spec ``repulsion:reduced-replication``.
    """
    r = [
        (23, 256, 0.4, 2e-4, 400, None, None, "2/3 (337, 344) without grokking"),
        (23, 256, 0.4, 0.0, 400, None, None, "0/3; late gap ~75-95"),
        (23, 256, 0.4, 5e-4, 800, None, None, "3/3 at 283-288"),
        (23, 256, 0.4, 1e-3, 800, (711, 736), None, "3/3 at 249-261"),
        (23, 256, 0.4, 2e-3, 800, (406, 464), (609, 629), "2/3 at 232-239"),
        (23, 256, 0.4, 5e-3, 800, (283, 321), (441, 575), "3/3 at 483-562"),
        (41, 512, 0.5, 2e-4, 600, (199, 230), (356, 388), "0/3 (max slope ~0.030)"),
        (41, 512, 0.5, 1e-3, 600, (115, 117), (136, 139), "2/3 at 547-577"),
        (41, 512, 0.5, 0.0, 600, None, None, "2/3 false fires (401, 423)"),
        (71, 2048, 0.4, 2e-4, 400, (99, 99), (137, 137), "fires at 173"),
        (71, 2048, 0.4, 0.0, 400, None, None, "none; late gap 1.21"),
    ]
    keys = ("M", "K", "frac", "eta", "epochs", "test_0.5", "test_0.99", "slope_fire")
    return [dict(zip(keys, row)) for row in r]
