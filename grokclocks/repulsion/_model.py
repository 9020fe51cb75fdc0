"""Repulsion: Tian's two-layer model, its loss, gradients, Adam step and initialisation."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import types

from .. import _validate as V
from ..citations import cites
from ._args import DomainError, _labels, _matrix


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
    if beta < 0.5:  # beta^s <= 1/2: no cancellation (and log1p(beta - 1) is log 0 for beta < 1.1e-16)
        return 1.0 - beta ** s
    return -math.expm1(s * math.log1p(beta - 1.0))

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
    with np.errstate(over="ignore", invalid="ignore"):
        g = arrays["grad"] + eta * p
        m = b1 * arrays["m"] + (1 - b1) * g
        v = b2 * arrays["v"] + (1 - b2) * g * g
        # sqrt(v) as a hypot (g^2 may overflow where sqrt(v) does not); numerator and denominator halved
        # so that sqrt(v_hat) + eps does not overflow for eps ~ 1e308
        root_v = np.hypot(np.sqrt(b2 * arrays["v"]), math.sqrt(1 - b2) * np.abs(g))
        half_denom = 0.5 * root_v / math.sqrt(_one_minus_power(b2, s)) + 0.5 * eps
        step_ = lr * ((0.5 * m / _one_minus_power(b1, s)) / half_denom)
        new = p - step_
    for name, a in (("grad + eta param", g), ("m", m), ("v", v), ("param", new)):
        if not np.all(np.isfinite(a)):
            raise V.ResultOverflow(f"adam_l2_update: {name} exceeds the largest double (lr={lr!r}, eta={eta!r}, "
                                   f"eps={eps!r}): the step is not representable")
    return AdamState(new, m, v)


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
