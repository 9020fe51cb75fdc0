"""The regression target of the separation check: cos(2πk(a + b)/p) on the spec's modular-addition split.
"""

from __future__ import annotations

import math

import numpy as np

from ... import kramers as K
from ..._validate import integer_at_least
from ...citations import cites


@cites("kramers:task")
def modadd_target(p: int, rho: float, split_seed: int = 0, k: int = 1) -> dict[str, np.ndarray]:
    r"""Training data of the NTK checks: the spec's split and the target √2·cos(2πk(a + b)/p).

    Parameters
    ----------
    p : int
        The modulus p ≥ 2; inputs are the concatenated one-hots of (a, b), of length 2p.
    rho : float
        Training fraction ρ in (0, 1): the first ⌊ρp²⌋ pairs of `default_rng(split_seed).permutation(p²)`.
    split_seed : int
        Seed ≥ 0 of the split; default 0.
    k : int
        Frequency k ≥ 0 of the target; default 1.

    Returns
    -------
    dict of str to numpy.ndarray
        `X_train`, `y_train`, `X_test`, `y_test` (float64), and `a`, `b`, the training pairs' tokens.

    Raises
    ------
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `kramers:task`.
    """
    k = integer_at_least(k, "k", 0)
    split_seed = integer_at_least(split_seed, "split_seed", 0)
    X, a, b, yc = K.modadd_inputs(p)
    tr, te = K.modadd_split(p, rho, split_seed)
    y = math.sqrt(2.0) * np.cos(2 * np.pi * k * yc / p)
    return dict(X_train=X[tr], y_train=y[tr], X_test=X[te], y_test=y[te], a=a[tr], b=b[tr])
