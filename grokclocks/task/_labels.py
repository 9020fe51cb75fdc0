r"""Operations and labels: the binary operations f(a, b) by name and the label tables f(a, b) mod p.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _validate as V
from .._validate import DomainError, integer_at_least
from ..citations import cites
from ._modulus import _prime
from ._records import PairTable


OPERATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "sq_sum": lambda a, b: a * a + b * b,
    "xy": lambda a, b: a * a + a * b + b * b,
    "sq_of_sum": lambda a, b: a * a + 2 * a * b + b * b,
}
"""Binary operations f(a, b) on ℤ_p by name, reduced mod p by the caller.

Keys `"add"` (a + b), `"sub"` (a − b), `"mul"` (a·b), `"sq_sum"` (a² + b²), `"xy"` (a² + a·b + b², the
authors' base.py) and `"sq_of_sum"` ((a + b)², the authors' rec.py); each value is a function of two int64
arrays.  A user function f(a, b) returning an integer array works wherever an operation is taken."""


@cites("uniformity:task")
def label_table(p: int, op: str | Callable[[Any, Any], Any] = "add") -> np.ndarray:
    r"""Label table L[a, b] = f(a, b) mod p of the task.

    .. math:: L[a, b] = f(a, b) \bmod p \in [0, p),\quad a, b \in \{0,\dots,p-1\}

    In words: entry [a, b] (first operand = row) is the operation's value on (a, b), reduced mod p.

    Parameters
    ----------
    p : int
        The modulus p, a prime ≤ `MAX_MODULUS` (arithmetic over 𝔽_p).
    op : str or callable, optional
        The operation f: `"add"` (default, a + b), `"sub"` (a − b), `"mul"` (a·b), `"sq_sum"`
        (a² + b²), `"xy"` (a² + a·b + b², base.py's 'xy'), `"sq_of_sum"` ((a + b)², rec.py's 'xy'), or an
        integer-valued f(a, b) broadcasting over int64 arrays.

    Returns
    -------
    numpy.ndarray
        int64 array of shape (p, p), entries in [0, p).

    Raises
    ------
    DomainError
        If `p` is not a prime ≤ `MAX_MODULUS`, or `op` is not a known name or does not return integer
        values of shape (p, p).

    References
    ----------
    Spec ID `uniformity:task` (the task).
    """
    p = _prime(p)
    a = np.arange(p, dtype=np.int64)[:, None]
    b = np.arange(p, dtype=np.int64)[None, :]
    if callable(op):
        try:
            out = np.asarray(op(a, b))
        except Exception as exc:  # noqa: BLE001
            raise DomainError(f"op must broadcast over numpy int arrays (calling it raised {exc!r})") from exc
        if out.shape != (p, p):
            try:
                out = np.broadcast_to(out, (p, p))
            except ValueError as exc:
                raise DomainError(f"op must return an array of shape ({p}, {p}) (got {out.shape})") from exc
        if np.issubdtype(out.dtype, np.floating):
            if not (np.all(np.isfinite(out)) and np.all(out == np.round(out))):
                raise DomainError("op must return integer values")
            out = out.astype(np.int64)
        elif not np.issubdtype(out.dtype, np.integer):
            if out.dtype == object:
                try:
                    out = np.array([[int(v) % p for v in row] for row in out], dtype=np.int64)
                except (TypeError, ValueError) as exc:
                    raise DomainError("op must return integer values") from exc
            else:
                raise DomainError(f"op must return integer values (got dtype {out.dtype})")
        return np.mod(out.astype(np.int64), p)
    name = V.choice(op, "op", tuple(OPERATIONS))
    if p < 3_037_000_499:  # a^2 + ab + b^2 < 3 p^2 fits int64
        return np.mod(OPERATIONS[name](a, b), p).astype(np.int64)
    return np.array([[OPERATIONS[name](int(i), int(j)) % p for j in range(p)] for i in range(p)], dtype=np.int64)


@cites("uniformity:task", "uniformity:setup")
def code_labels(p: int, op: str = "add", d: int = 0) -> np.ndarray:
    r"""Labels as the authors' code computes them: from the second operand's token id b + d.

    .. math:: L^{\rm code}[a,b]=f(a,\,b+d)\bmod p

    In words: the operation is applied to a and the token id b + d, not to b.  With d = 0 this equals
    `label_table`; with d = 60 (the authors' str.py) addition labels shift by 60 (erratum
    uniformity-8).

    Parameters
    ----------
    p : int
        The modulus p, a prime ≤ `MAX_MODULUS`.
    op : str, optional
        The operation, a name of `OPERATIONS` (default `"add"`).
    d : int, optional
        Offset of the second operand's token ids, an integer ≥ 0 (default 0).

    Returns
    -------
    numpy.ndarray
        int64 array of shape (p, p), entry [a, b] = f(a, b + d) mod p.

    Raises
    ------
    DomainError
        If `p` is not a prime ≤ `MAX_MODULUS`, `op` is unknown, or `d` is not an integer ≥ 0.

    References
    ----------
    Spec IDs `uniformity:task` (the task, a fact of the code) and `uniformity:setup` (the authors'
    setup).
    """
    p = _prime(p)
    d = V.integer_at_least(d, "d", 0)
    name = V.choice(op, "op", tuple(OPERATIONS))
    a = np.arange(p, dtype=np.int64)[:, None]
    b = np.arange(p, dtype=np.int64)[None, :] + d
    return np.mod(OPERATIONS[name](a, b), p).astype(np.int64)


@cites("uniformity:task")
def modular_table(p: int, operation: Any = "add") -> PairTable:
    r"""All p² ordered pairs and their labels (a, b, f(a, b) mod p), each an int64 array of shape (p²,).

    Row a·p + b holds the pair (a, b): the order of `grokclocks.sim.data.modular_addition_table` and of
    the papers' code, `itertools.product(range(p), range(p))`.  Unlike `label_table`, p need not be
    prime.

    Parameters
    ----------
    p : int
        The modulus p, an integer ≥ 2.
    operation : str or callable, optional
        The operation: a name of `OPERATIONS` (default `"add"`), or a function f(a, b) of two int64
        arrays returning an integer array of their shape.

    Returns
    -------
    PairTable
        The named tuple (a, b, labels) of int64 arrays of shape (p²,).

    Raises
    ------
    DomainError
        If `p` is not an integer ≥ 2, the table would exceed 2³⁰ entries, or `operation` is unknown or
        does not return an integer array of the right shape.

    References
    ----------
    Spec ID `uniformity:task` (the task).
    """
    p = integer_at_least(p, "p", 2)
    V.max_size(3.0 * p * p, "p", p)
    if callable(operation):
        fn = operation
    else:
        fn = OPERATIONS[V.choice(operation, "operation", tuple(OPERATIONS))]
    a, b = np.divmod(np.arange(p * p, dtype=np.int64), p)
    labels = np.asarray(fn(a, b))
    if labels.shape != a.shape or not np.issubdtype(labels.dtype, np.integer):
        raise DomainError(f"operation must map two int arrays of shape {a.shape} to one int array "
                          f"(got dtype {labels.dtype}, shape {labels.shape})")
    return PairTable(a, b, np.mod(labels, p).astype(np.int64))
