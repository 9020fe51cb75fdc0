"""Clocks: the characters of Z_p (Fourier rows) used by the modular-arithmetic results."""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as V
from ..citations import cites
from ._args import _flag, _int_p


@cites("clocks:eq2.5", "clocks:eq2.4")
def modular_characters(p, k=None, real=False):
    r"""Characters of :math:`\mathbb Z_p`, the Fourier modes of modular addition.

    .. math::

        \chi_k(a)=e^{2\pi i\,ka/p}\;\widehat=\;\Big(\cos\frac{2\pi ka}{p},\ \sin\frac{2\pi ka}{p}\Big),
        \qquad \chi_k(a+b)=\chi_k(a)\,\chi_k(b),

    so each character turns the task :math:`(a,b)\mapsto(a+b)\bmod p` (eq. 2.4) into a product.

    Parameters
    ----------
    p : int >= 2
        Modulus (any modulus; primality is not needed).
    k : int or array of int in ``[0, p)``, optional
        Frequencies (default ``arange(p)``).
    real : bool
        ``False``: complex array ``(len(k), p)``; ``True``: float array ``(2, len(k), p)`` (cos, sin).

    Returns
    -------
    ndarray
        ``chi[j, a] = exp(2 pi i k_j a / p)``.

    References
    ----------
    Spec ``clocks:eq2.5`` (paper eq. 2.5), ``clocks:eq2.4``.
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
    r"""Real orthonormal Fourier basis of :math:`\mathbb R^p` (rows).

    Rows in order :math:`f_0=p^{-1/2}\mathbf 1`, then for :math:`k=1,\dots,\lfloor(p-1)/2\rfloor`
    :math:`c_k(a)=\sqrt{2/p}\cos(2\pi ka/p)`, :math:`s_k(a)=\sqrt{2/p}\sin(2\pi ka/p)`, and for even
    :math:`p` the Nyquist row :math:`(-1)^a/\sqrt p`.  The matrix is orthogonal.

    Parameters
    ----------
    p : int >= 2

    Returns
    -------
    ndarray, shape (p, p)

    References
    ----------
    Spec ``clocks:eq2.5``, ``clocks:appF4-fourier``.
    """
    p = _int_p(p)
    V.max_size(float(p) * p, "p", p)
    return _fourier_rows(p)[0]
