"""Repulsion: the extra quantities logged during training."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validate as V
from ..citations import cites
from ._args import DomainError, _labels, _matrix


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
