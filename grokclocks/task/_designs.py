r"""Designed splits of Table 1 (uniformity §7): SQUARE and STRIP held-out regions and the random design,
built exactly as the authors' code builds them.
"""

from __future__ import annotations

import random as _pyrandom
import warnings
from typing import Any

import numpy as np

from .. import _validate as V
from .._validate import DomainError
from ..citations import cites
from ._modulus import _grid_size
from ._records import Split


def _split_from_order(p: int, held: np.ndarray, frac: float, seed: int, shuffle: str) -> Split:
    remaining = [i for i in range(p * p) if not held.flat[i]]  # row-major, as the code's list comprehension
    if shuffle == "python":
        rng = _pyrandom.Random(seed)  # == random.seed(seed); random.shuffle(...)
        rng.shuffle(remaining)
        order = np.asarray(remaining, dtype=np.int64)
    else:
        order = np.random.default_rng(seed).permutation(np.asarray(remaining, dtype=np.int64))
    train_size = int(frac * (p * p))  # the code: int(config.frac_train * len(pairs)), len(pairs) = p^2
    if train_size > order.size:
        warnings.warn(f"remainder ({order.size} points) is smaller than int(frac * p^2) = {train_size}; "
                      "using all of it for training, as the authors' code does", stacklevel=4)
    train = np.zeros(p * p, dtype=bool)
    train[order[:train_size]] = True
    train = train.reshape(p, p)
    return Split(train, ~train)


def _design_args(p, frac, seed, shuffle):
    p = _grid_size(p)
    f = V.as_float_array(frac, "frac", scalar=True)
    if not 0.0 < f <= 1.0:
        raise DomainError(f"frac must be in (0, 1] (got {f!r})")
    seed = V.integer_at_least(seed, "seed", 0)
    shuffle = V.choice(shuffle, "shuffle", ("python", "numpy"))
    return p, f, seed, shuffle


def _design(p: Any, k: Any, frac: Any, seed: Any, shuffle: Any, region: str) -> Split:
    """Hold out `region` (square a, b ≤ k; strip a ≤ k; random: nothing), split the rest."""
    p, f, seed, shuffle = _design_args(p, frac, seed, shuffle)
    held = np.zeros((p, p), dtype=bool)
    if region != "random":
        k = _k(k, p)
        held[:k + 1, :k + 1 if region == "square" else p] = True
    return _split_from_order(p, held, f, seed, shuffle)


def _k(k, p):
    k = V.integer_at_least(k, "k", 0)
    if k > p - 1:
        raise DomainError(f"k must be in [0, p-1] = [0, {p - 1}] (got {k})")
    return k


@cites("uniformity:designs")
def square_design(p: int, k: int, frac: float = 0.3, seed: int = 0, shuffle: str = "python") -> Split:
    r"""SQUARE split of Table 1, exactly as the authors' `transformer/rec.py` builds it.

    Held out: {0 ≤ a ≤ k, 0 ≤ b ≤ k} ((k + 1)² points).  The remaining pairs (row-major) are shuffled
    (`random.seed(seed); random.shuffle` for `shuffle="python"`, or
    `numpy.random.default_rng(seed).permutation`) and the first int(frac·p²) are the training set (a
    fraction of the full grid, erratum uniformity-3); everything else is the test set.  If the
    remainder is smaller than int(frac·p²) all of it is used and a `UserWarning` is issued.

    Parameters
    ----------
    p : int
        The modulus p, an integer in [2, `MAX_MODULUS`].
    k : int
        Size parameter of the held-out square, an integer in [0, p − 1].
    frac : float, optional
        Training fraction of the full grid, in (0, 1] (default 0.3).
    seed : int, optional
        Seed of the shuffle, an integer ≥ 0 (default 0).
    shuffle : {"python", "numpy"}, optional
        The shuffle: `"python"` (default, Python's `random`, as the authors' code) or `"numpy"`.

    Returns
    -------
    Split
        The named tuple (train, test): complementary boolean (p, p) masks of T and S.

    Raises
    ------
    DomainError
        If an argument is outside its domain above.

    References
    ----------
    Spec ID `uniformity:designs` (the designed splits of Table 1).
    """
    return _design(p, k, frac, seed, shuffle, "square")


@cites("uniformity:designs")
def strip_design(p: int, k: int, frac: float = 0.3, seed: int = 0, shuffle: str = "python") -> Split:
    r"""STRIP split of Table 1, exactly as the authors' `transformer/str.py` builds it.

    Held out: {0 ≤ a ≤ k, 0 ≤ b < p} (k + 1 full rows of the first operand); then as `square_design`.
    If the remainder is smaller than int(frac·p²) all of it is used and a `UserWarning` is issued
    (STRIP k = 67 at p = 97: 2813 training points).

    Parameters
    ----------
    p : int
        The modulus p, an integer in [2, `MAX_MODULUS`].
    k : int
        Size parameter of the held-out strip, an integer in [0, p − 1].
    frac : float, optional
        Training fraction of the full grid, in (0, 1] (default 0.3).
    seed : int, optional
        Seed of the shuffle, an integer ≥ 0 (default 0).
    shuffle : {"python", "numpy"}, optional
        The shuffle: `"python"` (default, Python's `random`, as the authors' code) or `"numpy"`.

    Returns
    -------
    Split
        The named tuple (train, test): complementary boolean (p, p) masks of T and S.

    Raises
    ------
    DomainError
        If an argument is outside its domain above.

    References
    ----------
    Spec ID `uniformity:designs` (the designed splits of Table 1).
    """
    return _design(p, k, frac, seed, shuffle, "strip")


@cites("uniformity:designs")
def random_design(p: int, frac: float, seed: int = 0, shuffle: str = "python") -> Split:
    r"""Random split of the authors' base.py: shuffle all p² pairs; the first int(frac·p²) are the training set.

    Parameters
    ----------
    p : int
        The modulus p, an integer in [2, `MAX_MODULUS`].
    frac : float
        Training fraction of the full grid, in (0, 1].
    seed : int, optional
        Seed of the shuffle, an integer ≥ 0 (default 0).
    shuffle : {"python", "numpy"}, optional
        The shuffle: `"python"` (default, Python's `random`, as the authors' code) or `"numpy"`.

    Returns
    -------
    Split
        The named tuple (train, test): complementary boolean (p, p) masks of T and S.

    Raises
    ------
    DomainError
        If an argument is outside its domain above.

    References
    ----------
    Spec ID `uniformity:designs` (the designed splits).
    """
    return _design(p, None, frac, seed, shuffle, "random")


@cites("uniformity:designs")
def designed_split(p: int, design: str, k: int | None = None, frac: float = 0.3, seed: int = 0,
                   shuffle: str = "python") -> Split:
    r"""Designed split by name: `square_design`, `strip_design` (both need `k`) or `random_design`.

    Parameters
    ----------
    p : int
        The modulus p, an integer in [2, `MAX_MODULUS`].
    design : {"square", "strip", "random"}
        The design (`"SQUARE"` and `"STRIP"` are accepted too).
    k : int, optional
        Size parameter of the held-out region, an integer in [0, p − 1]; required for `"square"` and
        `"strip"`, ignored for `"random"`.  Default `None`.
    frac : float, optional
        Training fraction of the full grid, in (0, 1] (default 0.3).
    seed : int, optional
        Seed of the shuffle, an integer ≥ 0 (default 0).
    shuffle : {"python", "numpy"}, optional
        The shuffle: `"python"` (default, Python's `random`, as the authors' code) or `"numpy"`.

    Returns
    -------
    Split
        The named tuple (train, test): complementary boolean (p, p) masks of T and S.

    Raises
    ------
    DomainError
        If `design` is unknown, `k` is missing for square or strip, or an argument is outside its
        domain.

    References
    ----------
    Spec ID `uniformity:designs` (the designed splits of Table 1).
    """
    design = V.choice(design, "design", {"square": "square", "SQUARE": "square", "strip": "strip",
                                          "STRIP": "strip", "random": "random"})
    if design == "random":
        return random_design(p, frac, seed, shuffle)
    if k is None:
        raise DomainError(f"k must be given for design {design!r} (got None)")
    fn = square_design if design == "square" else strip_design
    return fn(p, k, frac, seed, shuffle)


@cites("uniformity:designs")
def designed_split_mask(p: int, design: str, k: int) -> np.ndarray:
    r"""Designed training mask (SQUARE or STRIP held-out region), flattened to shape (p²,).

    The training mask of `designed_split` with its defaults (the exact construction of the authors'
    code); row a·p + b as in `modular_table`.

    Parameters
    ----------
    p : int
        The modulus p, an integer in [2, `MAX_MODULUS`].
    design : {"square", "strip", "random"}
        The design (see `designed_split`).
    k : int
        Size parameter of the held-out region, an integer in [0, p − 1] (used by square and strip).

    Returns
    -------
    numpy.ndarray
        Boolean array of shape (p²,), the training set.

    Raises
    ------
    DomainError
        If an argument is outside its domain (see `designed_split`).

    References
    ----------
    Spec ID `uniformity:designs` (the designed splits of Table 1).
    """
    train, _ = designed_split(p, design, k)
    return np.asarray(train, dtype=bool).reshape(p * p)
