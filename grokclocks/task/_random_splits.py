r"""Random splits of the p² pairs: the first n_train of `numpy.random.default_rng(seed).permutation(p·p)`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _validate as V
from .._validate import DomainError, integer_at_least
from ..citations import cites
from ._records import Split


def _n_train(p: int, frac: float | None, n_train: int | None) -> int:
    if (frac is None) == (n_train is None):
        raise DomainError("give exactly one of frac and n_train")
    if frac is not None:
        frac = V.positive(frac, "frac", scalar=True)
        if frac >= 1:
            raise DomainError(f"frac must be in (0, 1) (got {frac})")
        n_train = int(frac * p * p)
    n_train = integer_at_least(n_train, "n_train", 1)
    if n_train >= p * p:
        raise DomainError(f"n_train must be in [1, p^2 - 1] = [1, {p * p - 1}] (got {n_train})")
    return n_train


def _permutation(p: int, seed: Any, name: str = "seed") -> np.ndarray:
    """`np.random.default_rng(seed).permutation(p*p)`: the order of every numpy random split here."""
    return np.random.default_rng(integer_at_least(seed, name, 0)).permutation(p * p)


@cites("uniformity:task")
def random_split_mask(p: int, seeds: int | Sequence[int], *, frac: float | None = None,
                      n_train: int | None = None) -> np.ndarray:
    r"""Random training masks over the p² pairs: the first n_train of `numpy.random.default_rng(seed).permutation`.

    Give `frac` (then n_train = int(frac·p²), as the papers' code) or `n_train`, not both.

    Parameters
    ----------
    p : int
        The modulus p, an integer ≥ 2.
    seeds : int or sequence of int
        Seed(s) of the permutation, integers ≥ 0: an int gives one mask, a non-empty sequence one mask
        per seed.
    frac : float, optional
        Training fraction of the p² pairs, in (0, 1).  Default `None`: use `n_train`.
    n_train : int, optional
        Number of training pairs, an integer in [1, p² − 1].  Default `None`: use `frac`.

    Returns
    -------
    numpy.ndarray
        Boolean array of shape (p²,) for an int seed, (n_seeds, p²) for a sequence.

    Raises
    ------
    DomainError
        If `p` < 2, both or neither of `frac` and `n_train` are given, either is out of range, `seeds`
        is empty or holds a negative or non-integer seed, or p² exceeds 2³⁰.

    References
    ----------
    Spec ID `uniformity:task` (the task).
    """
    p = integer_at_least(p, "p", 2)
    V.max_size(float(p) ** 2, "p", p)
    n_train = _n_train(p, frac, n_train)
    scalar = np.ndim(seeds) == 0
    if not scalar and np.size(seeds) == 0:
        raise DomainError("seeds must not be empty")
    out = []
    for s in np.atleast_1d(seeds).tolist():
        m = np.zeros(p * p, dtype=bool)
        m[_permutation(p, s, "seeds")[:n_train]] = True
        out.append(m)
    return out[0] if scalar else np.stack(out)


@cites("kramers:task")
def modadd_split(p: int, rho: float, seed: int) -> Split:
    r"""Train and test pair indices of a random split: the first n_train of default_rng(seed).permutation(p·p) train.

    n_train = ⌊ρ·p²⌋ (see `grokclocks.kramers.n_train`).

    Parameters
    ----------
    p : int
        The modulus p, an integer ≥ 2.
    rho : float
        Training fraction ρ, in the open interval (0, 1), such that 1 ≤ ⌊ρ·p²⌋ ≤ p² − 1.
    seed : int
        Seed of the permutation, an integer ≥ 0.

    Returns
    -------
    Split
        The named tuple (train, test) of int64 flat pair indices a·p + b, in permutation order.

    Raises
    ------
    DomainError
        If `p` < 2, `rho` is outside (0, 1) or gives an empty side, `seed` is not an integer ≥ 0, or p²
        exceeds 2³⁰.

    References
    ----------
    Spec ID `kramers:task` (the modular-addition task and its split).
    """
    p = integer_at_least(p, "p", 2)
    rho = V.in_open_interval(rho, "rho", 0.0, 1.0, scalar=True)
    n = int(math.floor(rho * p * p))
    if not 1 <= n <= p * p - 1:
        raise DomainError(f"floor(rho p^2) must be in [1, p^2 - 1] (got {n} for rho={rho!r}, p={p})")
    V.max_size(float(p) ** 2, "p", p)
    perm = _permutation(p, seed)
    return Split(perm[:n], perm[n:])
