"""Data for the simulations: Gaussian teacher-student draws and modular-arithmetic tables.

The numpy tables, encodings and splits of the modular task (`modular_table`, `token_inputs`,
`onehot_inputs`, `random_split_mask`, `designed_split_mask`, `OPERATIONS`) are defined in
`grokclocks.task` and re-exported here; this module keeps the JAX-side tables and draws.

Randomness only through explicit `jax.random` keys.  The teacher-student draws of spec `levi`
use `jax.random.PRNGKey(1000 * d_in + seed)` (`teacher_student_keys`), so a seed names the
same draw on every device.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validate as V
from .._fielddocs import document_records
from .._validate import DomainError, finite, integer_at_least, nonnegative, positive
from ..citations import cites
from ._runtime import enable_x64
from .train import seed_tuple
# the modular task's numpy tables, encodings and splits live in grokclocks.task; their old paths here keep working
from ..task import (OPERATIONS, designed_split_mask, modular_table, onehot_inputs, random_split_mask,  # noqa: F401
                    token_inputs)

__all__ = [
    "TeacherStudentData",
    "TwoLayerData",
    "ModularData",
    "teacher_student_keys",
    "make_teacher_student",
    "make_two_layer_teacher_student",
    "n_train_from_lambda",
    "ModularAdditionTable",
    "modular_addition_table",
    "make_modular_addition",
    "OPERATIONS",
    "modular_table",
    "token_inputs",
    "onehot_inputs",
    "random_split_mask",
    "designed_split_mask",
]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


def _register(cls: type, data: Sequence[str], meta: Sequence[str]) -> type:
    return jax.tree_util.register_dataclass(cls, data_fields=list(data), meta_fields=list(meta))


@dataclasses.dataclass(frozen=True)
class TeacherStudentData:
    """One (or a batch of) Gaussian teacher-student draw(s) of spec `levi:conv-data`.

    Array fields carry the batch (seed) axes in front; the others are static metadata.  The
    object is a JAX pytree (array fields are leaves), so it can be passed through `jit`/`vmap`.
    Build it with `make_teacher_student` (or `grokclocks.sim.linear.draw_teacher_student`).
    """

    X: jax.Array
    """Training inputs x_i ~ N(0, I), shape (..., N_tr, d_in)."""
    T: jax.Array
    """Teacher, entries of variance 1/(2 d_in d_out), shape (..., d_in, d_out)."""
    S0: jax.Array
    """Initial student, the teacher's law times `init_scale`, shape (..., d_in, d_out)."""
    delta: jax.Array
    """Fixed label noise, entries of variance `sigma2` (zeros if it is 0), shape (..., N_tr, d_out); the
    training labels are X·T + δ."""
    key: jax.Array
    """The key of each draw, uint32 of shape (..., 2) (fresh test inputs are derived from it)."""
    d_in: int
    """Input dimension d_in ≥ 1."""
    d_out: int
    """Output dimension d_out ≥ 1."""
    n_train: int
    """Training-set size N_tr = round(d_in/λ) ≥ 1."""
    lam: float
    """λ = d_in/N_tr, input dimension over training-set size, as requested (> 0)."""
    init_scale: float = 1.0
    """Student scale α (any real; default 1)."""
    sigma2: float = 0.0
    """Label-noise variance σ² ≥ 0 (default 0)."""
    seeds: tuple[int, ...] | None = None
    """The seeds, when the keys came from seeds (`teacher_student_keys`); `None` (default) otherwise."""

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading (seed) axes of the array fields, a tuple of int (empty for one draw)."""
        return tuple(self.X.shape[:-2])

    @property
    def delta0(self) -> jax.Array:
        """Initial error matrix D₀ = S0 − T, shape (..., d_in, d_out)."""
        return self.S0 - self.T


_register(TeacherStudentData, ("X", "T", "S0", "delta", "key"),
          ("d_in", "d_out", "n_train", "lam", "init_scale", "sigma2", "seeds"))


@dataclasses.dataclass(frozen=True)
class TwoLayerData:
    """A (batch of) two-layer teacher-student draw(s) of spec `levi:eq16`.

    A JAX pytree like `TeacherStudentData` (array fields are leaves, the rest static metadata).
    Build it with `make_two_layer_teacher_student` (or `grokclocks.sim.linear.draw_two_layer`).
    """

    X: jax.Array
    """Training inputs x_i ~ N(0, I), shape (..., N_tr, d_in)."""
    T0: jax.Array
    """First-layer teacher, entries of variance 1/(2 d_in d_h), shape (..., d_in, d_h)."""
    T1: jax.Array
    """Second-layer teacher, entries of variance 1/(2 d_out d_h), shape (..., d_h, d_out)."""
    S0: jax.Array
    """First-layer initial student, the law of `T0`, shape (..., d_in, d_h)."""
    S1: jax.Array
    """Second-layer initial student, the law of `T1`, shape (..., d_h, d_out)."""
    key: jax.Array
    """The key of each draw, uint32 of shape (..., 2)."""
    d_in: int
    """Input dimension d_in ≥ 1."""
    d_h: int
    """Hidden width d_h ≥ 1."""
    d_out: int
    """Output dimension d_out ≥ 1."""
    n_train: int
    """Training-set size N_tr = round(d_in/λ) ≥ 1."""
    lam: float
    """λ = d_in/N_tr, input dimension over training-set size, as requested (> 0)."""
    seeds: tuple[int, ...] | None = None
    """The seeds, when the keys came from seeds; `None` (default) otherwise."""

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading (seed) axes of the array fields, a tuple of int (empty for one draw)."""
        return tuple(self.X.shape[:-2])


_register(TwoLayerData, ("X", "T0", "T1", "S0", "S1", "key"), ("d_in", "d_h", "d_out", "n_train", "lam", "seeds"))


@dataclasses.dataclass(frozen=True)
class ModularData:
    """Modular-addition table with a training mask, spec `levi:appG`.

    All p² pairs are kept (fixed shapes, so splits of different sizes can be vmapped); the split
    is a boolean mask.  A JAX pytree; build it with `make_modular_addition`.
    """

    X: jax.Array
    """Concatenated one-hots of (n, m), shape (p², 2p); row n·p + m holds the pair (n, m)."""
    Y: jax.Array
    """One-hot of (n + m) mod p, shape (p², p)."""
    labels: jax.Array
    """(n + m) mod p, int, shape (p²,)."""
    train_mask: jax.Array
    """bool, `True` on the training pairs, shape (..., p²) with the keys' batch axes in front."""
    p: int
    """The modulus p ≥ 2."""
    alpha: float
    """Requested training fraction α in (0, 1]."""
    n_train: int
    """Number of training pairs, round(α p²)."""

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading (split) axes of `train_mask`, a tuple of int (empty for one split)."""
        return tuple(self.train_mask.shape[:-1])


_register(ModularData, ("X", "Y", "labels", "train_mask"), ("p", "alpha", "n_train"))


# --------------------------------------------------------------------------------------------
# Teacher-student
# --------------------------------------------------------------------------------------------


def teacher_student_keys(d_in: int, seeds: int | Sequence[int]) -> jax.Array:
    """The keys `jax.random.PRNGKey(1000 * d_in + seed)` of the teacher-student draws (spec section 7.1).

    Parameters
    ----------
    d_in : int
        Input dimension d_in ≥ 1 of the draws (part of the key, so that every d_in has its own draws).
    seeds : int or sequence of int
        One seed ≥ 0, or a non-empty sequence of distinct seeds ≥ 0.

    Returns
    -------
    jax.Array
        uint32 keys: shape (2,) for one seed, (n, 2) for a sequence of n seeds.

    Raises
    ------
    DomainError
        If `d_in` or a seed is out of its domain, or the seeds repeat.
    """
    d_in = integer_at_least(d_in, "d_in", 1)
    if np.ndim(seeds) == 0:
        return jax.random.PRNGKey(1000 * d_in + integer_at_least(seeds, "seeds", 0))
    seeds = list(seed_tuple(seeds))
    return jnp.stack([jax.random.PRNGKey(1000 * d_in + s) for s in seeds])


def n_train_from_lambda(d_in: int, lam: float) -> int:
    """Training-set size N_tr = round(d_in/λ) of a teacher-student draw (spec `levi:conv-data`).

    N_tr must be ≥ 1, so λ ≤ 2 d_in.  (A λ above 2 d_in used to be clamped to N_tr = 1 while the
    data kept the requested λ, whose true value d_in/N_tr was then d_in.)

    Parameters
    ----------
    d_in : int
        Input dimension d_in ≥ 1.
    lam : float
        λ = d_in/N_tr, input dimension over training-set size; 0 < λ ≤ 2 d_in.

    Returns
    -------
    int
        N_tr = round(d_in/λ) ≥ 1 (Python's round: halves to even).

    Raises
    ------
    DomainError
        If `d_in` < 1, `lam` ≤ 0 or > 2 d_in, or the inputs X (N_tr × d_in) would exceed 2³⁰ entries.
    """
    d_in = integer_at_least(d_in, "d_in", 1)
    lam = positive(lam, "lam", scalar=True)
    if not d_in / lam >= 0.5:
        raise DomainError(f"lam must be <= 2 d_in = {2 * d_in} so that N_tr = round(d_in / lam) >= 1 (got {lam!r})")
    V.max_size(d_in / lam * d_in, "d_in (with lam)", (d_in, lam))  # the inputs X are (N_tr, d_in), N_tr = d_in / lam
    return int(round(d_in / lam))


def _key_batch(key: Any) -> tuple[jax.Array, tuple[int, ...]]:
    try:
        key = jnp.asarray(key)
    except (TypeError, ValueError) as exc:
        raise DomainError(f"key must be a jax.random.PRNGKey (uint32, shape (..., 2)) (got {V.show(key)})") from exc
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    if key.dtype != jnp.uint32 or key.ndim < 1 or key.shape[-1] != 2:
        raise DomainError(f"key must be a jax.random.PRNGKey (uint32, shape (..., 2)) (got dtype {key.dtype}, "
                          f"shape {key.shape})")
    return key, tuple(key.shape[:-1])


def _vmap_keys(fn: Any, key: jax.Array, batch: tuple[int, ...]) -> Any:
    f = fn
    for _ in batch:
        f = jax.vmap(f)
    return f(key)


@cites("levi:conv-data")
def make_teacher_student(key: Any, d_in: int, lam: float, d_out: int = 1, *, init_scale: float = 1.0,
                         sigma2: float = 0.0, seeds: Sequence[int] | None = None) -> TeacherStudentData:
    r"""Draw Gaussian teacher-student data (float64).

    Inputs x_i ~ N(0, I), teacher T and student S0/α with entries of variance 1/(2 d_in d_out),
    fixed label noise δ_i ~ N(0, σ²I), and N_tr = round(d_in/λ) samples (the second argument of N
    is the variance), so that E‖D₀‖² = (1 + α²)/2:

    .. math::
        x_i \sim \mathcal N(0, I_{d_{\rm in}}),\quad T_{ij}, (S_0)_{ij} \sim \mathcal N\Big(0, \frac{1}{2 d_{\rm in} d_{\rm out}}\Big),
        \quad S_0 \mathrel{*}= \alpha,\quad \delta_i \sim \mathcal N(0, \sigma^2 I_{d_{\rm out}}),
        \quad N_{\rm tr} = \mathrm{round}(d_{\rm in}/\lambda)

    Parameters
    ----------
    key : jax.Array
        PRNG key(s), uint32 of shape (2,) or (..., 2) (typed keys are accepted): one key per draw;
        a batch of keys gives a batch of draws (leading axes).  Use `teacher_student_keys` for the
        spec's seeding `PRNGKey(1000 d_in + seed)`.
    d_in : int
        Input dimension d_in ≥ 1.
    lam : float
        λ = d_in/N_tr, input dimension over training-set size; 0 < λ ≤ 2 d_in.
    d_out : int
        Output dimension d_out ≥ 1; default 1.
    init_scale : float
        Student scale α, any finite real (0 allowed: a zero student); default 1.
    sigma2 : float
        Variance σ² ≥ 0 of the fixed label noise δ, drawn once; default 0 (noiseless labels).
    seeds : sequence of int or None
        The seeds the keys came from, recorded in the result as metadata; `None` (default) records
        none.

    Returns
    -------
    TeacherStudentData
        The draws, with the keys' batch axes in front of every array.

    Raises
    ------
    DomainError
        If an argument is outside its domain or `key` is not a PRNG key.

    References
    ----------
    Spec `levi:conv-data` (paper section 3 and appendix A).
    """
    enable_x64()
    d_in = integer_at_least(d_in, "d_in", 1)
    d_out = integer_at_least(d_out, "d_out", 1)
    n = n_train_from_lambda(d_in, lam)
    init_scale = finite(init_scale, "init_scale", scalar=True)
    sigma2 = nonnegative(sigma2, "sigma2", scalar=True)
    key, batch = _key_batch(key)
    std = (2.0 * d_in * d_out) ** -0.5

    def draw(k: jax.Array) -> tuple[jax.Array, ...]:
        kx, kt, ks, kd = jax.random.split(k, 4)
        X = jax.random.normal(kx, (n, d_in), dtype=jnp.float64)
        T = std * jax.random.normal(kt, (d_in, d_out), dtype=jnp.float64)
        S0 = init_scale * std * jax.random.normal(ks, (d_in, d_out), dtype=jnp.float64)
        delta = jnp.sqrt(sigma2) * jax.random.normal(kd, (n, d_out), dtype=jnp.float64)
        return X, T, S0, delta

    X, T, S0, delta = _vmap_keys(draw, key, batch)
    if seeds is not None:
        seeds = tuple(int(s) for s in seeds)
    return TeacherStudentData(X=X, T=T, S0=S0, delta=delta, key=key, d_in=d_in, d_out=d_out, n_train=n,
                              lam=float(lam), init_scale=init_scale, sigma2=sigma2, seeds=seeds)


@cites("levi:eq16")
def make_two_layer_teacher_student(key: Any, d_in: int, lam: float, d_h: int, d_out: int = 1, *,
                                   seeds: Sequence[int] | None = None) -> TwoLayerData:
    r"""Draw a two-layer teacher-student problem (float64).

    The network is f(x) = S1ᵀ σ(S0ᵀ x); first layers S0, T0 have entries of variance
    1/(2 d_in d_h), second layers S1, T1 of variance 1/(2 d_out d_h), and inputs x_i ~ N(0, I):

    .. math::
        f(x) = S_1^\top \sigma(S_0^\top x),\quad S_0, T_0 \sim \mathcal N\Big(0,\frac{1}{2 d_{\rm in} d_h}\Big),
        \quad S_1, T_1 \sim \mathcal N\Big(0,\frac{1}{2 d_{\rm out} d_h}\Big),\quad x_i \sim \mathcal N(0, I)

    The activation σ is chosen at training time (teacher and student share it).

    Parameters
    ----------
    key : jax.Array
        PRNG key(s), uint32 of shape (2,) or (..., 2): one key per draw; a batch of keys gives a
        batch of draws.
    d_in : int
        Input dimension d_in ≥ 1.
    lam : float
        λ = d_in/N_tr, input dimension over training-set size; 0 < λ ≤ 2 d_in.
    d_h : int
        Hidden width d_h ≥ 1.
    d_out : int
        Output dimension d_out ≥ 1; default 1.
    seeds : sequence of int or None
        The seeds the keys came from, recorded as metadata; `None` (default) records none.

    Returns
    -------
    TwoLayerData
        The draws, with the keys' batch axes in front of every array.

    Raises
    ------
    DomainError
        If an argument is outside its domain or `key` is not a PRNG key.

    References
    ----------
    Spec `levi:eq16` (paper eq. 16 and appendix F, eq. 39).
    """
    enable_x64()
    d_in = integer_at_least(d_in, "d_in", 1)
    d_h = integer_at_least(d_h, "d_h", 1)
    d_out = integer_at_least(d_out, "d_out", 1)
    n = n_train_from_lambda(d_in, lam)
    key, batch = _key_batch(key)
    s0 = (2.0 * d_in * d_h) ** -0.5
    s1 = (2.0 * d_out * d_h) ** -0.5

    def draw(k: jax.Array) -> tuple[jax.Array, ...]:
        kx, kt0, kt1, ks0, ks1 = jax.random.split(k, 5)
        X = jax.random.normal(kx, (n, d_in), dtype=jnp.float64)
        T0 = s0 * jax.random.normal(kt0, (d_in, d_h), dtype=jnp.float64)
        T1 = s1 * jax.random.normal(kt1, (d_h, d_out), dtype=jnp.float64)
        S0 = s0 * jax.random.normal(ks0, (d_in, d_h), dtype=jnp.float64)
        S1 = s1 * jax.random.normal(ks1, (d_h, d_out), dtype=jnp.float64)
        return X, T0, T1, S0, S1

    X, T0, T1, S0, S1 = _vmap_keys(draw, key, batch)
    if seeds is not None:
        seeds = tuple(int(s) for s in seeds)
    return TwoLayerData(X=X, T0=T0, T1=T1, S0=S0, S1=S1, key=key, d_in=d_in, d_h=d_h, d_out=d_out, n_train=n,
                        lam=float(lam), seeds=seeds)


# --------------------------------------------------------------------------------------------
# Modular addition
# --------------------------------------------------------------------------------------------


class ModularAdditionTable(NamedTuple):
    """All p² pairs of `modular_addition_table`: inputs, one-hot targets and labels."""

    X: jax.Array
    """Concatenated one-hots of (n, m), shape (p², 2p); row n·p + m holds the pair (n, m)."""
    Y: jax.Array
    """One-hot of the label, shape (p², p)."""
    labels: jax.Array
    """(n + m) mod p, int, shape (p²,)."""


def modular_addition_table(p: int, dtype: Any = jnp.float64) -> ModularAdditionTable:
    """All p² pairs (n, m) of addition mod p: inputs [onehot(n); onehot(m)] of length 2p, labels (n + m) mod p.

    Row n·p + m holds the pair (n, m).

    Parameters
    ----------
    p : int
        The modulus p ≥ 2 (the table has 3p³ entries, at most 2³⁰).
    dtype : dtype
        Floating dtype of `X` and `Y`; default float64 (float32 where JAX runs without x64).

    Returns
    -------
    ModularAdditionTable
        The named tuple (`X`, `Y`, `labels`) with X of shape (p², 2p), Y the one-hot labels (p², p)
        and labels (p²,).

    Raises
    ------
    DomainError
        If `p` < 2 or the table would be too large.
    """
    p = integer_at_least(p, "p", 2)
    V.max_size(3.0 * p**3, "p", p)  # X is (p^2, 2p), Y (p^2, p)
    n, m = jnp.divmod(jnp.arange(p * p), p)
    labels = (n + m) % p
    X = jnp.concatenate([jax.nn.one_hot(n, p, dtype=dtype), jax.nn.one_hot(m, p, dtype=dtype)], axis=1)
    Y = jax.nn.one_hot(labels, p, dtype=dtype)
    return ModularAdditionTable(X, Y, labels)


@cites("levi:appG")
def make_modular_addition(key: Any, p: int, alpha: float, *, dtype: Any = jnp.float64) -> ModularData:
    r"""Modular-addition table (n + m) mod p with a random training split of fraction α.

    Inputs are the concatenated one-hots of (n, m), targets the one-hot of (n + m) mod p, and
    N_tr = round(α p²) pairs are training pairs, so λ = d_in/N_tr ≈ 2/(α p):

    .. math::
        x_{(n,m)} = [e_n; e_m] \in \{0,1\}^{2p},\quad y = e_{(n+m) \bmod p},\quad
        N_{\rm tr} = \mathrm{round}(\alpha p^2),\quad \lambda = d_{\rm in}/N_{\rm tr} \approx 2/(\alpha p)

    Parameters
    ----------
    key : jax.Array
        PRNG key(s), uint32 of shape (2,) or (..., 2): one split per key (a random permutation of
        the p² pairs, whose first N_tr are training pairs).
    p : int
        The modulus p ≥ 2.
    alpha : float
        Training fraction α in (0, 1]; round(α p²) must be ≥ 1.
    dtype : dtype
        Floating dtype of `X` and `Y`; default float64.

    Returns
    -------
    ModularData
        The table; `train_mask` carries the key's batch axes.

    Raises
    ------
    DomainError
        If an argument is outside its domain or `key` is not a PRNG key.

    References
    ----------
    Spec `levi:appG` (paper appendix G).
    """
    p = integer_at_least(p, "p", 2)
    V.max_size(3.0 * p**3, "p", p)
    alpha = positive(alpha, "alpha", scalar=True)
    if alpha > 1:
        raise DomainError(f"alpha must be in (0, 1] (got {alpha!r})")
    n_train = int(round(alpha * p * p))
    if n_train < 1 or n_train > p * p:
        raise DomainError(f"alpha * p^2 must round to an integer in [1, p^2] (got alpha={alpha!r}, p={p})")
    key, batch = _key_batch(key)
    X, Y, labels = modular_addition_table(p, dtype)

    def split(k: jax.Array) -> jax.Array:
        perm = jax.random.permutation(k, p * p)
        return jnp.zeros(p * p, dtype=bool).at[perm[:n_train]].set(True)

    mask = _vmap_keys(split, key, batch)
    return ModularData(X=X, Y=Y, labels=labels, train_mask=mask, p=p, alpha=alpha, n_train=n_train)


document_records(globals(), __all__)  # help() of each record class lists its fields
