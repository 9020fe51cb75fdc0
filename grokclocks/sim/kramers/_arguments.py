"""Argument checks shared by the simulations of spec `kramers`: the net's parameters, the targets, the seeds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import _validate as V, kramers as K
from ..._validate import DomainError
from ..train import seed_tuple


def _params_net(params: Any, X: Any) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """`params = {"W": (N, d), "a": (N,) or (N, C)}` and inputs `X` (n, d), finite (eq. 1)."""
    if not isinstance(params, dict) or set(params) != {"W", "a"}:
        raise DomainError(f'params must be a dict {{"W": (N, d), "a": (N,) or (N, C)}} (got {V.show(params)})')
    Xa, W, a = K._net_arrays(X, params["W"], params["a"])
    return {"W": W, "a": a}, Xa


def _targets(y: Any, n: int) -> np.ndarray:
    ya = V.as_float_array(y, "y")
    if ya.shape != (n,):
        raise DomainError(f"y must have shape ({n},) (one target per row of X) (got {ya.shape})")
    return ya


def _seed_list(seeds: Any) -> list[int]:
    V.sequence(seeds, "seeds", what="a non-empty sequence of integer seeds >= 0")
    return list(seed_tuple(seeds))  # distinct: a repeated seed would count one run twice
