"""The modulus p of the p × p tables: its size limit `MAX_MODULUS` and the primality that arithmetic over 𝔽_p needs.
"""

from __future__ import annotations

import math
from typing import Any

from .. import _validate as V
from .._validate import DomainError


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    if n > 10**10:  # trial division would take minutes (it hung on p ~ 1e18); sympy's test is exact for 64-bit n
        from sympy import isprime

        return bool(isprime(n))
    r = math.isqrt(n)
    return all(n % d for d in range(3, r + 1, 2))


MAX_MODULUS = 2 ** 14
"""Largest modulus p = 2¹⁴ = 16384 of the functions that build p × p tables (label tables, coverer counts, designs).

Their cost is O(p²) in memory and time (2.1 GB of int64 at the limit); beyond it they raise `DomainError`,
not a `MemoryError` or an hours-long trial division (`_is_prime(10**18 + 9)` is 5·10⁸ divisions)."""


def _grid_size(p: Any, name: str = "p", minimum: int = 2) -> int:
    p = V.integer_at_least(p, name, minimum)
    if p > MAX_MODULUS:
        raise DomainError(f"{name} must be <= {MAX_MODULUS} (MAX_MODULUS: the p x p tables cost O(p^2) memory; "
                          f"got {p})")
    return p


def _prime(p: Any, name: str = "p") -> int:
    p = _grid_size(p, name)
    if not _is_prime(p):
        raise DomainError(f"{name} must be prime for arithmetic over F_p (got {p})")
    return p
