"""Spectral: constants, the result records and the shared singular-value helpers."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import _validate as V
from .._validate import DomainError


_EPS = float(np.finfo(np.float64).eps)
# Two singular values closer than this (relative to sigma_1) make the drift of each one ill-defined.
_DEGENERATE_RTOL = 1e-8


class SpectralStratumWarning(UserWarning):
    """Warning: two kept singular values lie within 10⁻⁸·σ_1, where a single one's drift is not defined.

    Raised by `singular_value_drift_terms`, `singular_value_drift` and
    `balanced_singular_value_drift`; the value they then return is u_iᵀ·(dW/dt)·v_i for the singular
    vectors the SVD happened to choose.
    """


class SingularValueDrift(NamedTuple):
    r"""Terms of the singular-value drift dσ_i/dt = F_i − λ·p·σ_i^(p−1), as returned by `singular_value_drift_terms`.

    A named tuple; it unpacks like the plain tuple (sigma, data_force, shrinkage, drift).  Every field
    is a float64 1-D array over the numerically positive singular values, in decreasing order of σ_i.
    """

    sigma: np.ndarray
    r"""The singular values σ_i > rtol·σ_1 of W."""
    data_force: np.ndarray
    r"""The data force F_i = −u_iᵀ·∇L(W)·v_i of each singular direction (u_i, v_i its singular vectors)."""
    shrinkage: np.ndarray
    r"""The penalty's pull λ·p·σ_i^(p−1) ≥ 0 on each singular value."""
    drift: np.ndarray
    r"""The drift dσ_i/dt = F_i − λ·p·σ_i^(p−1)."""


# ------------------------------------------------------------------------------------------ helpers


def _matrix(W, name: str = "W", *, stack: bool = True) -> np.ndarray:
    a = V.as_float_array(W, name)
    if a.ndim < 2 or (not stack and a.ndim != 2):
        want = "a matrix (..., m, n)" if stack else "a 2-D matrix (m, n)"
        raise DomainError(f"{name} must be {want} (got shape {a.shape})")
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        raise DomainError(f"{name} must have nonzero dimensions (got shape {a.shape})")
    return a


def _svals(a: np.ndarray) -> np.ndarray:
    return np.linalg.svd(a, compute_uv=False)


def _rtol(rtol, default: float) -> float:
    if rtol is None:
        return default
    return V.nonnegative(rtol, "rtol", scalar=True)


def _sigma_input(W, singular_values, rtol) -> tuple[np.ndarray, float]:
    """Singular values (decreasing, last axis) from W or from `singular_values=`, plus the rtol."""
    if (W is None) == (singular_values is None):
        raise DomainError("give exactly one of W and singular_values (got "
                          f"{'both' if W is not None else 'neither'})")
    if W is not None:
        a = _matrix(W)
        return _svals(a), _rtol(rtol, max(a.shape[-2:]) * _EPS)
    s = np.atleast_1d(V.nonnegative(singular_values, "singular_values"))
    s = -np.sort(-s, axis=-1)
    return s, _rtol(rtol, s.shape[-1] * _EPS)


def _thresholded_ratios(s: np.ndarray, rtol: float) -> tuple[np.ndarray, np.ndarray]:
    """sigma_1 and the mask of kept singular values, sigma_i > rtol * sigma_1 (and > 0).

    The mask compares sigma_i with rtol * sigma_1 directly: a ratio sigma_i / sigma_1 below the smallest
    double (1e-300 / 1e300) underflows to 0 but its p-th power need not (p = 1e-3: 0.25).
    """
    s1 = s[..., 0]
    keep = (s > 0) & (s > rtol * s1[..., None])
    return s1, keep


_MAX_FACTORIZATION_DEPTH = 10**6


def _depth(depth) -> int:
    return V.integer_at_least(depth, "depth", 1)


def _p(p) -> np.ndarray:
    return V.positive(p, "p")
