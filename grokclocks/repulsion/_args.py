"""Repulsion: argument checks."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import linalg

from .. import _validate as V


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


def _series(x: Any, name: str, *, ndim: tuple[int, ...] = (1,), extrema: bool = False) -> Any:
    """Float64 series that may contain NaN (undefined entries) but no infinities; with `extrema`, ``(a, (min,
    max))``, the NaN-skipping extremes the check reduced."""
    a, ext = V.as_float_array(x, name, allow_nan=True, extrema=True)
    if a.ndim not in ndim:
        raise DomainError(f"{name} must have {' or '.join(map(str, ndim))} dimension(s) (got shape {a.shape})")
    return (a, ext) if extrema else a


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


def _chol(A: np.ndarray, eta: float) -> tuple[np.ndarray, bool]:
    """Cholesky factor of A = Gram + eta I; `DomainError` naming eta where eta is below the rounding of
    the Gram (n eps max diag A): there A is numerically singular (a centred F~ has rank <= n - 1) and
    Cholesky either fails or returns pivots made of rounding, so no float64 solve is accurate."""
    level = A.shape[0] * float(np.finfo(np.float64).eps) * float(np.max(np.abs(np.diag(A))))
    msg = (f"eta = {eta!r} is below the rounding level of the Gram matrix + eta I (~{level:.3g} = n eps "
           f"max diag): eta must be >= about {level:.3g} for an accurate float64 solve")
    try:
        c = linalg.cho_factor(A, lower=True, check_finite=False)
    except linalg.LinAlgError as exc:
        raise DomainError(msg) from exc
    if eta < level and float(np.min(np.abs(np.diag(c[0])))) ** 2 < level:
        raise DomainError(msg)
    return c
