"""The α-parameterised two-layer net and the modular-addition task of spec ``kramers`` (task data: grokclocks.task)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .. import _pointwise as PW
from .. import _validate as V
from ..task import TEST_LEVEL, TRAIN_LEVEL
from .._validate import DomainError
from ..citations import cites

__all__ = ["Milestones", "milestones", "n_train", "param_count", "two_layer_forward"]


class Milestones(NamedTuple):
    r"""Result of `milestones`: the memorisation time `t_mem` and the grokking time `t_grok` (`None`: never reached)."""

    t_mem: float | None
    """The first evaluation step at which the train accuracy reaches `q_train` (`None`: never)."""
    t_grok: float | None
    """The first evaluation step at which the test accuracy reaches `q_test` (`None`: never)."""


def _alpha(alpha: Any, *, array: bool = False) -> Any:
    """The width exponent α, checked in [0, 1/2]: a Python float; with `array`, a float for a number and a float64
    array otherwise."""
    sc = not array or PW.scalars(alpha)
    # the finite check's own extremes (in_domain with no bounds: as_float_array's test and reductions)
    a, (lo, hi) = V.finite(alpha, "alpha", scalar=sc, extrema=True)
    if not (0.0 <= lo and hi <= 0.5):
        bad = a if sc else float(a[~((a >= 0.0) & (a <= 0.5))].flat[0])
        raise DomainError(f"alpha must be in [0, 0.5] (the width exponent of eq. (1); got {bad!r})")
    return a


def _net_arrays(X: Any, W: Any, a: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X = V.as_float_array(X, "X")
    W = V.as_float_array(W, "W")
    a = V.as_float_array(a, "a")
    if X.ndim != 2 or W.ndim != 2 or a.ndim not in (1, 2):
        raise DomainError(f"X must be (n, d), W (N, d), a (N,) or (N, C) (got shapes {X.shape}, {W.shape}, {a.shape})")
    if X.shape[1] != W.shape[1] or a.shape[0] != W.shape[0]:
        raise DomainError(f"shapes inconsistent: X {X.shape}, W {W.shape}, a {a.shape}")
    return X, W, a


@cites("kramers:eq1")
def two_layer_forward(X: Any, W: Any, a: Any, alpha: float) -> np.ndarray:
    r"""The α-parameterised two-layer ReLU network of eq. (1).

    .. math:: f(x)=N^{-\alpha}\sum_{j=1}^N a_j\,\sigma(w_j\cdot x),\qquad \sigma(u)=\max(u,0).

    In words: N^(−α) times the readout-weighted sum of the ReLU features σ(wⱼ·x).

    Parameters
    ----------
    X : array_like
        The inputs, an (n, d) array: n samples of dimension d (for modular addition the one-hot pairs, d =
        2p).
    W : array_like
        The first-layer weights (features), an (N, d) array: one row wⱼ per hidden unit, N the width.
    a : array_like
        The readout weights, an (N,) array (scalar output) or (N, C) (C outputs).
    alpha : float
        α, the width exponent of eq. (1): the output is N^(−α)·Σⱼ aⱼσ(wⱼ·x); 0 ≤ α ≤ 1/2 (not Lyu et al.'s
        initialisation scale, which is `init_scale`).

    Returns
    -------
    ndarray
        The outputs f(x), float64 of shape (n,) or (n, C).

    References
    ----------
    Spec `kramers:eq1`.
    """
    X, W, a = _net_arrays(X, W, a)
    al = _alpha(alpha)
    N = W.shape[0]
    return N ** (-al) * (np.maximum(X @ W.T, 0.0) @ a)


@cites("kramers:params")
def param_count(N: int, p: int, n_out: int = 1) -> int:
    r"""Number of trained parameters of the two-layer net without biases: P = N(2p + C).

    With C = 1 it is the paper's N(d + 1), d = 2p. Headline: N = 512, p = 97 gives 99 840 (scalar output, the
    paper) or 148 992 (p-way readout, erratum kramers-1).

    Parameters
    ----------
    N : int
        The width N (number of hidden units), an integer ≥ 1.
    p : int
        The modulus p of the modular-addition task, an integer ≥ 2.
    n_out : int
        The number C of outputs (readout columns), an integer ≥ 1; default 1, the paper's scalar output.

    Returns
    -------
    int
        P.

    References
    ----------
    Spec `kramers:params`.
    """
    N = V.integer_at_least(N, "N", 1)
    p = V.integer_at_least(p, "p", 2)
    n_out = V.integer_at_least(n_out, "n_out", 1)
    return N * (2 * p + n_out)


@cites("kramers:task")
@V.broadcasting()
def n_train(p: Any, rho: Any) -> int | np.ndarray:
    r"""Training-set size n_train = ⌊ρp²⌋ of the modular-addition task (p = 97, ρ = 0.3: 2822).

    Parameters
    ----------
    p : int or array_like
        The modulus p of the modular-addition task, an integer ≥ 2 (an array: integers ≥ 2 and ≤ 2³¹, so that
        p² fits an int64).
    rho : float or array_like
        ρ, the fraction of the p² pairs used for training, 0 < ρ < 1, with 1 ≤ ⌊ρp²⌋ ≤ p² − 1; broadcasts
        against `p`.

    Returns
    -------
    int or ndarray
        n_train: a Python int for two numbers, else an int64 array of the broadcast shape of `p` and `rho`.

    References
    ----------
    Spec `kramers:task`.
    """
    if not isinstance(p, (list, tuple, np.ndarray)) and not isinstance(rho, (list, tuple, np.ndarray)):
        p = V.integer_at_least(p, "p", 2)  # two numbers: exact Python integers (p^2 unbounded)
        rho = V.in_open_interval(rho, "rho", 0.0, 1.0, scalar=True)
        n = int(math.floor(rho * p * p))
        if not 1 <= n <= p * p - 1:
            raise DomainError(f"floor(rho p^2) must be in [1, p^2 - 1] (got {n} for rho={rho!r}, p={p})")
        return n
    pf = V.counts(p, "p", 2)
    if PW.high(pf) > _P_ARRAY_MAX:
        raise DomainError(f"p must be <= {_P_ARRAY_MAX} in an array call (p^2 as int64; got {PW.high(pf)!r})")
    rho = V.in_open_interval(rho, "rho", 0.0, 1.0)
    # rho p p in the order of the number call (float p exact: p <= 2^31), floored
    x = rho * pf * pf
    n = np.floor(x, out=PW.into(x)).astype(np.int64)
    # n <= p^2 - 1 needs no test where rho < 1 - 2^-50: fl(fl(rho p) p) <= rho p^2 (1 + 2^-53)^2 < p^2
    if PW.low(n) < 1 or PW.high(rho) >= 1.0 - 2.0**-50:
        pi = np.asarray(pf).astype(np.int64)
        bad = (n < 1) | (n > pi * pi - 1)  # exact int64 p^2
        if np.any(bad):
            k = np.unravel_index(int(np.argmax(bad)), bad.shape) if bad.ndim else ()
            nk, rk, pk = (np.broadcast_to(v, bad.shape)[k] for v in (n, rho, pi))
            raise DomainError(f"floor(rho p^2) must be in [1, p^2 - 1] (got {int(nk)} for rho={float(rk)!r}, "
                              f"p={int(pk)})")
    return n if n.ndim else int(n)


_P_ARRAY_MAX = 2**31


@cites("kramers:milestones")
def milestones(steps: Any, train_acc: Any, test_acc: Any, q_train: float = TRAIN_LEVEL,
               q_test: float = TEST_LEVEL) -> Milestones:
    r"""Memorisation and grokking times on an evaluation grid (derived here; §1.4 of the paper is empty).

    .. math:: t_{\rm mem}=\min\{t:\ \text{train acc}\ge q_{\rm tr}\},\qquad t_{\rm grok}=\min\{t:\ \text{test acc}\ge q_{\rm te}\}.

    In words: the first evaluation step at which the train accuracy reaches `q_train`, and the first at which
    the test accuracy reaches `q_test`.

    Parameters
    ----------
    steps : array_like
        The evaluation steps, a strictly increasing 1-d array (the grid; report it with the result).
    train_acc : array_like
        The training accuracy at each step, fractions in [0, 1], the length of `steps`.
    test_acc : array_like
        The test accuracy at each step, fractions in [0, 1], the length of `steps`.
    q_train : float
        The memorisation threshold in (0, 1]. Default `grokclocks.task.TRAIN_LEVEL` = 1.0 (every training
        pair right: the zero-one clock of `clocks:appF4-acc-clock`, the `t_train` of
        `grokclocks.compare.compare_run`). The spec's text gives 0.99; pass `q_train=0.99` for that
        reading.
    q_test : float
        The grokking threshold in (0, 1]. Default `grokclocks.task.TEST_LEVEL` = 0.99.

    Returns
    -------
    Milestones
        (t_mem, t_grok): the first grid step reaching each threshold, `None` where it is never reached.

    References
    ----------
    Spec `kramers:milestones`.
    """
    s = V.as_float_array(steps, "steps")
    tr = V.as_float_array(train_acc, "train_acc")
    te = V.as_float_array(test_acc, "test_acc")
    if s.ndim != 1 or tr.shape != s.shape or te.shape != s.shape:
        raise DomainError(f"steps, train_acc, test_acc must be 1-D of equal length (got {s.shape}, {tr.shape}, {te.shape})")
    if np.any(np.diff(s) <= 0):
        raise DomainError(f"steps must be strictly increasing (got {V.show(s)})")
    for acc, name in ((tr, "train_acc"), (te, "test_acc")):
        if np.any((acc < 0) | (acc > 1)):
            raise DomainError(f"{name} must be accuracies in [0, 1] (fractions, not percent) (got "
                              f"{float(acc[(acc < 0) | (acc > 1)][0])!r})")
    for q, name in ((q_train, "q_train"), (q_test, "q_test")):
        qq = V.as_float_array(q, name, scalar=True)
        if not 0.0 < qq <= 1.0:
            raise DomainError(f"{name} must be in (0, 1] (got {qq!r})")

    def first(acc: np.ndarray, q: float) -> float | None:
        hit = np.nonzero(acc >= q)[0]
        return float(s[hit[0]]) if hit.size else None

    return Milestones(first(tr, q_train), first(te, q_test))
