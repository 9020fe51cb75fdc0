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
    r"""Concatenated one-hot codes of the operand pairs, x_i = [e_{a_i}; e_{b_i}].

    .. math::

        X\in\{0,1\}^{n\times 2M},\qquad X_{i,a_i}=X_{i,M+b_i}=1 .

    In words: row i of X has a 1 in column a_i and a 1 in column M + b_i, zeros elsewhere (the frozen
    identity embedding of the two operands).

    Parameters
    ----------
    a : array_like of int
        First operands a_i, a non-empty 1-D integer array with entries in [0, M).
    b : array_like of int
        Second operands b_i, a 1-D integer array of the length of `a` with entries in [0, M).
    M : int
        The modulus M, an integer ≥ 2.

    Returns
    -------
    numpy.ndarray
        float64 array of shape (n, 2M), the inputs X.

    Raises
    ------
    DomainError
        If `M` is not an integer ≥ 2, or `a`, `b` are not non-empty 1-D integer arrays of one length
        with entries in [0, M).

    References
    ----------
    Spec ID `repulsion:model` (paper eq. 2: frozen identity embedding, two operands).
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
    r"""Result of `tian_forward`: the hidden features and outputs of Tian's two-layer model.

    A named tuple; it unpacks like the plain tuple (F, Y_hat).
    """

    F: np.ndarray
    r"""Hidden features F = σ(X·W), float64 of shape (n, K)."""
    Y_hat: np.ndarray
    r"""Outputs Ŷ = F·V, float64 of shape (n, M)."""


@cites("repulsion:model")
def tian_forward(W: Any, Vout: Any, X: Any, activation: str = "sqr") -> TianOutputs:
    r"""Features F = σ(X·W) and outputs Ŷ = F·V of Tian's two-layer model (no biases).

    .. math::

        F=\sigma(XW)\in\mathbb R^{n\times K},\qquad \widehat Y=FV\in\mathbb R^{n\times M},

    with σ(x) = x² (`"sqr"`, default) or ReLU.

    Parameters
    ----------
    W : array_like
        First-layer weights, a finite array of shape (2M, K) (the transpose of torch's storage in the
        authors' `TianMLP`).
    Vout : array_like
        Second-layer weights V, a finite array of shape (K, M).
    X : array_like
        Inputs, a finite array of shape (n, 2M), e.g. from `one_hot_pairs`.
    activation : {"sqr", "relu"}, optional
        The activation σ: `"sqr"` (default, x²; `"x2"` is accepted too) or `"relu"`.

    Returns
    -------
    TianOutputs
        The named tuple (F, Y_hat) of float64 arrays of shapes (n, K) and (n, M).

    Raises
    ------
    DomainError
        If an array is not finite and 2-D, the shapes do not fit (X: (n, 2M), W: (2M, K), V: (K, M)),
        or `activation` is unknown.

    References
    ----------
    Spec ID `repulsion:model` (paper eq. 2; the authors' code `TianMLP`).
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
    r"""Zero-meaned MSE of the Tian setup, as trained (`form="code"`) or as eq. 3 writes it.

    .. math::

        L_{\rm code}=\frac1n\sum_{i=1}^n\big\|\hat y_i^{\rm zm}-(e_{y_i}-\tfrac1M\mathbf 1)\big\|^2,
        \qquad \hat y_i^{\rm zm}=\hat y_i-\overline{\hat y_i}\mathbf 1\quad\text{(class centring)},

    .. math::

        J_{\rm eq.3}=\tfrac12\big\|P_1^\perp(Y-\widehat Y)\big\|_F^2,\qquad
        P_1^\perp=I_n-\tfrac1n\mathbf 1\mathbf 1^\top,\ Y={\rm onehot}(y)-\tfrac1M .

    In words: the code form is the mean over samples of the squared distance between the output row,
    centred over the classes, and the centred one-hot target e_y − 𝟏/M; eq. 3 is half the squared
    Frobenius norm of the residual Y − Ŷ centred over the samples.  The two are not proportional
    (different centring axis) and differ in scale by about 2n.  Replications must use the code form:
    with coupled L2 weight decay the loss scale sets the effective η (erratum repulsion-4).

    Parameters
    ----------
    Y_hat : array_like
        Model outputs Ŷ, a finite array of shape (n, M).
    y : array_like of int
        Labels y_i, a non-empty 1-D integer array of length n with entries in [0, M).
    M : int
        The modulus M (number of classes), an integer ≥ 2.
    form : {"code", "paper"}, optional
        `"code"` (default): the loss the authors' code trains; `"paper"` (or `"paper_eq3"`): eq. 3.

    Returns
    -------
    float
        The loss, ≥ 0.

    Raises
    ------
    DomainError
        If `M`, `y` or `form` is invalid or `Y_hat` is not finite of shape (n, M).

    References
    ----------
    Spec ID `repulsion:loss` (paper eq. 3; the code form is Tian's `compute_loss(..., "mse")`).
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
    r"""Result of `tian_loss_grad`: the code-form loss and its gradients.

    A named tuple; it unpacks like the plain tuple (loss, dW, dV).
    """

    loss: float
    r"""The code-form loss L (see `tian_mse_loss`)."""
    dW: np.ndarray
    r"""∂L/∂W, float64 of the shape of W, (2M, K)."""
    dV: np.ndarray
    r"""∂L/∂V, float64 of the shape of V, (K, M)."""


@cites("repulsion:loss", "repulsion:model")
def tian_loss_grad(W: Any, Vout: Any, X: Any, y: Any, M: int, activation: str = "sqr") -> TianLossGrad:
    r"""Code-form loss of the Tian model and its exact gradients (∂L/∂W, ∂L/∂V).

    With H = X·W, F = σ(H) and R = Ŷ^zm − T (the output rows centred, minus the centred targets):

    .. math::

        \frac{\partial L}{\partial\widehat Y}=\frac2nR,\quad
        \frac{\partial L}{\partial V}=F^\top\frac{\partial L}{\partial\widehat Y},\quad
        \frac{\partial L}{\partial W}=X^\top\Big[\Big(\frac{\partial L}{\partial\widehat Y}V^\top\Big)\odot\sigma'(H)\Big].

    In words: ∂L/∂Ŷ = (2/n)·R, ∂L/∂V = Fᵀ·∂L/∂Ŷ, and ∂L/∂W = Xᵀ·((∂L/∂Ŷ·Vᵀ) ⊙ σ′(H)).  A numpy
    reference for the JAX engine (autodiff must agree) and for small private training loops.

    Parameters
    ----------
    W : array_like
        First-layer weights, a finite array of shape (2M, K).
    Vout : array_like
        Second-layer weights V, a finite array of shape (K, M).
    X : array_like
        Inputs, a finite array of shape (n, 2M), e.g. from `one_hot_pairs`.
    y : array_like of int
        Labels y_i, a 1-D integer array of length n with entries in [0, M).
    M : int
        The modulus M, an integer ≥ 2.
    activation : {"sqr", "relu"}, optional
        The activation σ: `"sqr"` (default, x²) or `"relu"`.

    Returns
    -------
    TianLossGrad
        The named tuple (loss, dW, dV).

    Raises
    ------
    DomainError
        If an array is not finite and 2-D, the shapes are inconsistent, or `M`, `y`, `activation` is
        invalid.

    References
    ----------
    Spec IDs `repulsion:loss` (paper eq. 3) and `repulsion:model` (eq. 2).
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
    r"""Result of `adam_l2_update`: the parameter and the Adam moments after the step.

    A named tuple; it unpacks like the plain tuple (param, m, v).
    """

    param: np.ndarray
    r"""The updated parameter θ, float64 of the parameter's shape."""
    m: np.ndarray
    r"""The updated first-moment estimate m."""
    v: np.ndarray
    r"""The updated second-moment estimate v, ≥ 0."""


@cites("repulsion:setup")
def adam_l2_update(param: Any, grad: Any, m: Any, v: Any, step: int, lr: float = 1e-3, eta: float = 0.0,
                   b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> AdamState:
    r"""One `torch.optim.Adam(lr, weight_decay=eta)` step: coupled L2 weight decay, then Adam.

    .. math::

        g\leftarrow\nabla L+\eta\theta,\quad m\leftarrow\beta_1m+(1-\beta_1)g,\quad
        v\leftarrow\beta_2v+(1-\beta_2)g^2,\quad
        \theta\leftarrow\theta-\mathrm{lr}\,\frac{m/(1-\beta_1^s)}{\sqrt{v/(1-\beta_2^s)}+\epsilon}

    In words: the decay η·θ is added to the gradient before the moments are updated (not AdamW), and
    the step is lr times the bias-corrected first moment over the bias-corrected root of the second
    moment plus ε (torch adds ε after the square root).  The optax equivalent is
    `optax.chain(optax.add_decayed_weights(eta), optax.adam(lr))`.

    Parameters
    ----------
    param : array_like
        The parameter θ before the step, a finite array of any shape.
    grad : array_like
        The loss gradient ∇L at θ, finite, of the shape of `param`.
    m : array_like
        First-moment estimate before the step, finite, of the shape of `param` (zeros at the start).
    v : array_like
        Second-moment estimate before the step, finite and ≥ 0, of the shape of `param`.
    step : int
        The step count s after this step, an integer ≥ 1 (s = 1 for the first step).
    lr : float, optional
        Learning rate, finite and > 0 (default 10⁻³).
    eta : float, optional
        Coupled L2 weight-decay coefficient η, finite and ≥ 0 (default 0).
    b1 : float, optional
        First-moment decay β₁, in [0, 1) (default 0.9).
    b2 : float, optional
        Second-moment decay β₂, in [0, 1) (default 0.999).
    eps : float, optional
        The ε added to the root of the second moment, finite and > 0 (default 10⁻⁸).

    Returns
    -------
    AdamState
        The named tuple (param, m, v) after the step.

    Raises
    ------
    DomainError
        If an argument is outside its domain above or an array does not have the shape of `param`.
    ResultOverflow
        If the decayed gradient, a moment or the new parameter exceeds the largest double.

    References
    ----------
    Spec ID `repulsion:setup` (the training setup: Adam with coupled L2, not AdamW).
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
    r"""Result of `tian_init_bounds`: the half-widths of the uniform initialisations.

    A named tuple; it unpacks like the plain tuple (W, V).
    """

    W: float
    r"""Half-width 1/√(2M) of the first layer's uniform initialisation (fan-in 2M)."""
    V: float
    r"""Half-width 1/√K of the second layer's uniform initialisation (fan-in K)."""


@cites("repulsion:setup")
def tian_init_bounds(M: int, K: int) -> TianInitBounds:
    r"""Half-widths of the PyTorch `nn.Linear` default initialisation: W ∼ U(±1/√(2M)), V ∼ U(±1/√K).

    The fan-ins are 2M (first layer) and K (second layer).

    Parameters
    ----------
    M : int
        The modulus M, an integer ≥ 2.
    K : int
        The hidden width K, an integer ≥ 1.

    Returns
    -------
    TianInitBounds
        The named tuple (W, V) of half-widths.

    Raises
    ------
    DomainError
        If `M` is not an integer ≥ 2 or `K` not an integer ≥ 1.

    References
    ----------
    Spec ID `repulsion:setup` (the training setup).
    """
    M = V.count(M, "M", 2)
    K = V.count(K, "K", 1)
    return TianInitBounds(1.0 / math.sqrt(2 * M), 1.0 / math.sqrt(K))


@cites("repulsion:setup")
def tian_setup(M: int = 71, K: int = 2048, n_train: int = 2016, eta: float = 2e-4, lr: float = 1e-3,
               epochs: int = 400, activation: str = "sqr", window: int = 20) -> types.MappingProxyType:
    r"""The pinned hyper-parameters of the Tian / Figure-3 setup, as a read-only mapping.

    Data: all M² pairs, target (a + b) mod M; the first `n_train` of a seeded permutation train, the
    rest test (n_train = 2016 = 0.39992·M² at M = 71).  Initialisation: torch `nn.Linear` defaults
    (`tian_init_bounds`).  Optimiser: Adam(lr, betas (0.9, 0.999), eps 10⁻⁸) with coupled L2
    weight_decay = η (`adam_l2_update`), full batch, one step per epoch; metrics logged before the
    step (row t = parameters after t steps).  Loss: the code form of `tian_mse_loss`.  Conditions:
    η = 2·10⁻⁴ (grokking) against η = 0 (control); 400 epochs for x², 800 for ReLU; 15 seeds.

    Parameters
    ----------
    M : int, optional
        The modulus M, an integer ≥ 2 (default 71).
    K : int, optional
        The hidden width K, an integer ≥ 1 (default 2048).
    n_train : int, optional
        Number of training pairs, an integer in [1, M² − 1] (default 2016).
    eta : float, optional
        Coupled L2 weight decay η, finite and ≥ 0 (default 2·10⁻⁴; 0 is the control).
    lr : float, optional
        Adam learning rate, finite and > 0 (default 10⁻³).
    epochs : int, optional
        Number of full-batch steps, an integer ≥ 1 (default 400; the paper uses 800 for ReLU).
    activation : {"sqr", "relu"}, optional
        The activation: `"sqr"` (default, x²) or `"relu"`.
    window : int, optional
        Rolling-window length w of the spectral detector, an integer ≥ 2 (default 20).

    Returns
    -------
    types.MappingProxyType
        A read-only mapping of the arguments (validated) and the pinned constants: n_test, betas,
        adam_eps, weight_decay (a description), init_W_halfwidth, init_V_halfwidth, loss,
        log_before_step, lag, threshold, t_min, rho_threshold, grok_threshold and n_seeds.

    Raises
    ------
    DomainError
        If `n_train` is not in [1, M² − 1], `eta` < 0, `lr` ≤ 0, `M` < 2, `K` < 1, `epochs` < 1,
        `window` < 2, or `activation` is unknown.

    References
    ----------
    Spec ID `repulsion:setup` (the training setup).
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
