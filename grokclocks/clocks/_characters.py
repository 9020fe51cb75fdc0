"""Clocks: the characters of Z_p (Fourier rows) used by the modular-arithmetic results."""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as V
from ..citations import cites
from ._args import _flag, _int_p


@cites("clocks:eq2.5", "clocks:eq2.4")
def modular_characters(p, k=None, real=False):
    r"""Characters of ℤ_p, the Fourier modes of modular addition.

    .. math::

        \chi_k(a)=e^{2\pi i\,ka/p}\;\widehat=\;\Big(\cos\frac{2\pi ka}{p},\ \sin\frac{2\pi ka}{p}\Big),
        \qquad \chi_k(a+b)=\chi_k(a)\,\chi_k(b),

    In words: χ_k(a) = exp(2πi·k·a/p), and each character turns the task (a, b) ↦ (a + b) mod p
    (eq. 2.4) into a product, χ_k(a + b) = χ_k(a)·χ_k(b).  The product k·a is reduced mod p before the
    phase is formed, so the phases are exact.

    Parameters
    ----------
    p : int
        The modulus of ℤ_p (any integer ≥ 2; primality is not needed).
    k : int or array_like of int, optional
        Frequencies, integers in [0, p) (a scalar or a 1-D array).  Default `None`: all frequencies
        0, 1, …, p − 1.
    real : bool, optional
        Output form.  `False` (default): the complex characters; `True`: their real and imaginary parts
        (cos, sin) stacked on a leading axis.

    Returns
    -------
    numpy.ndarray
        `real=False`: complex128 array of shape (len(k), p) with entry [j, a] = exp(2πi·k_j·a/p).
        `real=True`: float64 array of shape (2, len(k), p), the cosine part first, the sine part second.

    Raises
    ------
    DomainError
        If `p` is not an integer ≥ 2, an entry of `k` is not an integer in [0, p), `k` is not a
        non-empty 1-D array, `real` is not a bool, or the result would exceed 2³⁰ entries.

    References
    ----------
    Spec IDs `clocks:eq2.5` (paper eq. 2.5, the characters) and `clocks:eq2.4` (eq. 2.4, the task).
    """
    p = _int_p(p)
    real = _flag(real, "real")
    V.max_size(2.0 * (p if k is None else np.size(k)) * p, "p", p)
    kk = np.arange(p) if k is None else np.atleast_1d(V.index_array(k, "k", p))
    if kk.ndim != 1 or kk.size == 0:
        raise V.DomainError(f"k must be a non-empty 1-D array of integers (got {V.show(k)})")
    a = np.arange(p)
    ang = 2.0 * np.pi * (np.outer(kk, a) % p) / p  # reduce k a mod p first: exact phases
    if real:
        return np.stack([np.cos(ang), np.sin(ang)])
    return np.exp(1j * ang)


def _fourier_rows(p: int) -> tuple[np.ndarray, np.ndarray]:
    """Real orthonormal basis rows and the frequency of each row."""
    a = np.arange(p)
    rows = [np.full(p, 1.0 / math.sqrt(p))]
    freq = [0]
    for k in range(1, (p - 1) // 2 + 1):
        ang = 2.0 * np.pi * ((k * a) % p) / p
        rows += [math.sqrt(2.0 / p) * np.cos(ang), math.sqrt(2.0 / p) * np.sin(ang)]
        freq += [k, k]
    if p % 2 == 0:
        rows.append(np.where(a % 2 == 0, 1.0, -1.0) / math.sqrt(p))
        freq.append(p // 2)
    return np.array(rows), np.array(freq)


@cites("clocks:eq2.5", "clocks:appF4-fourier")
def fourier_basis(p):
    r"""Real orthonormal Fourier basis of ℝ^p, as the rows of a p × p matrix.

    Rows in order: f_0 = p^(−1/2)·𝟏; then for k = 1, …, ⌊(p − 1)/2⌋ the pair
    c_k(a) = √(2/p)·cos(2πka/p), s_k(a) = √(2/p)·sin(2πka/p); and for even p the Nyquist row
    (−1)^a/√p.  The matrix is orthogonal (its rows are orthonormal).

    Parameters
    ----------
    p : int
        The modulus, the dimension of the space (integer ≥ 2).

    Returns
    -------
    numpy.ndarray
        float64 array of shape (p, p); row r is the r-th basis vector in the order above.

    Raises
    ------
    DomainError
        If `p` is not an integer ≥ 2 or p² exceeds 2³⁰ entries.

    References
    ----------
    Spec IDs `clocks:eq2.5` (paper eq. 2.5) and `clocks:appF4-fourier` (App. F.4, the real basis).
    """
    p = _int_p(p)
    V.max_size(float(p) * p, "p", p)
    return _fourier_rows(p)[0]
