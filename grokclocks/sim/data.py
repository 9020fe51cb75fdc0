"""Data for the simulations: Gaussian teacher-student draws and modular-arithmetic tables.

The numpy tables, encodings and splits of the modular task (:func:`modular_table`, :func:`token_inputs`,
:func:`onehot_inputs`, :func:`random_split_mask`, :func:`designed_split_mask`, :data:`OPERATIONS`) are defined
in :mod:`grokclocks.task` and re-exported here; this module keeps the JAX-side tables and draws.

Randomness only through explicit ``jax.random`` keys.  The teacher-student draws of spec ``levi``
use ``jax.random.PRNGKey(1000 * d_in + seed)`` (:func:`teacher_student_keys`), so a seed names the
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
    """One (or a batch of) Gaussian teacher-student draw(s) of spec ``levi:conv-data``.

    Array fields carry the batch (seed) axes in front; the others are static metadata.
    The object is a JAX pytree (array fields are leaves), so it can be passed through
    ``jit``/``vmap``.

    Attributes
    ----------
    X : (..., N_tr, d_in)   training inputs, x_i ~ N(0, I)
    T : (..., d_in, d_out)  teacher, entries N(0, 1/(2 d_in d_out)) (variance)
    S0 : (..., d_in, d_out) initial student, same law times ``init_scale``
    delta : (..., N_tr, d_out) fixed label noise, N(0, sigma2) (zeros if sigma2 = 0)
    key : (..., 2) uint32   the key of the draw (fresh test inputs are derived from it)
    d_in, d_out, n_train, lam, init_scale, sigma2 : metadata
    seeds : tuple of int or None  the seeds, when built from seeds
    """

    X: jax.Array
    T: jax.Array
    S0: jax.Array
    delta: jax.Array
    key: jax.Array
    d_in: int
    d_out: int
    n_train: int
    lam: float
    init_scale: float = 1.0
    sigma2: float = 0.0
    seeds: tuple[int, ...] | None = None

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading (seed) axes of the array fields."""
        return tuple(self.X.shape[:-2])

    @property
    def delta0(self) -> jax.Array:
        """Initial error matrix D_0 = S_0 - T."""
        return self.S0 - self.T


_register(TeacherStudentData, ("X", "T", "S0", "delta", "key"),
          ("d_in", "d_out", "n_train", "lam", "init_scale", "sigma2", "seeds"))


@dataclasses.dataclass(frozen=True)
class TwoLayerData:
    """A (batch of) two-layer teacher-student draw(s), spec ``levi:eq16``.

    Attributes
    ----------
    X : (..., N_tr, d_in)        training inputs
    T0, S0 : (..., d_in, d_h)    first-layer teacher / student, N(0, 1/(2 d_in d_h))
    T1, S1 : (..., d_h, d_out)   second-layer teacher / student, N(0, 1/(2 d_out d_h))
    key : (..., 2) uint32
    """

    X: jax.Array
    T0: jax.Array
    T1: jax.Array
    S0: jax.Array
    S1: jax.Array
    key: jax.Array
    d_in: int
    d_h: int
    d_out: int
    n_train: int
    lam: float
    seeds: tuple[int, ...] | None = None

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return tuple(self.X.shape[:-2])


_register(TwoLayerData, ("X", "T0", "T1", "S0", "S1", "key"), ("d_in", "d_h", "d_out", "n_train", "lam", "seeds"))


@dataclasses.dataclass(frozen=True)
class ModularData:
    """Modular-addition table with a train mask, spec ``levi:appG``.

    All p^2 pairs are kept (fixed shapes, so splits of different sizes can be vmapped); the split
    is a boolean mask.

    Attributes
    ----------
    X : (p^2, 2p)            concatenated one-hots of (n, m)
    Y : (p^2, p)             one-hot of (n + m) mod p
    labels : (p^2,) int      (n + m) mod p
    train_mask : (..., p^2) bool   True on the training pairs
    p : int
    alpha : float            requested training fraction
    n_train : int            round(alpha p^2)
    """

    X: jax.Array
    Y: jax.Array
    labels: jax.Array
    train_mask: jax.Array
    p: int
    alpha: float
    n_train: int

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return tuple(self.train_mask.shape[:-1])


_register(ModularData, ("X", "Y", "labels", "train_mask"), ("p", "alpha", "n_train"))


# --------------------------------------------------------------------------------------------
# Teacher-student
# --------------------------------------------------------------------------------------------


def teacher_student_keys(d_in: int, seeds: int | Sequence[int]) -> jax.Array:
    """Keys ``jax.random.PRNGKey(1000 * d_in + seed)`` of spec section 7.1; shape (2,) or (n, 2)."""
    d_in = integer_at_least(d_in, "d_in", 1)
    if np.ndim(seeds) == 0:
        return jax.random.PRNGKey(1000 * d_in + integer_at_least(seeds, "seeds", 0))
    seeds = list(seed_tuple(seeds))
    return jnp.stack([jax.random.PRNGKey(1000 * d_in + s) for s in seeds])


def n_train_from_lambda(d_in: int, lam: float) -> int:
    """N_tr = round(d_in / lam) (spec ``levi:conv-data``), which must be >= 1: ``lam <= 2 d_in``.

    (A lam above ``2 d_in`` used to be clamped to N_tr = 1 while the data kept the requested lam,
    whose true value d_in / N_tr was then ``d_in``.)
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
    """Draw Gaussian teacher-student data (float64).

    .. math::
        x_i \\sim \\mathcal N(0, I_{d_{\\rm in}}),\\quad T_{ij}, (S_0)_{ij} \\sim \\mathcal N\\Big(0, \\frac{1}{2 d_{\\rm in} d_{\\rm out}}\\Big),
        \\quad S_0 \\mathrel{*}= \\alpha,\\quad \\delta_i \\sim \\mathcal N(0, \\sigma^2 I_{d_{\\rm out}}),
        \\quad N_{\\rm tr} = \\mathrm{round}(d_{\\rm in}/\\lambda)

    (the second argument of N is the variance).  With ``E||D_0||^2 = (1 + alpha^2)/2``.

    Parameters
    ----------
    key : PRNGKey, shape (2,) or (..., 2)
        One key per draw; a batch of keys gives a batch of draws (leading axes).  Use
        :func:`teacher_student_keys` for the spec's seeding ``PRNGKey(1000 d_in + seed)``.
    d_in : int >= 1
    lam : float > 0
        Aspect ratio d_in / N_tr.
    d_out : int >= 1
    init_scale : float
        Student scale alpha (any real; 0 allowed).
    sigma2 : float >= 0
        Variance of the fixed label noise delta (drawn once).
    seeds : sequence of int, optional
        Recorded in the result (metadata) when the keys came from seeds.

    Returns
    -------
    TeacherStudentData

    References
    ----------
    Spec ``levi:conv-data`` (paper section 3 and appendix A).
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
    """Draw a two-layer teacher-student problem (float64).

    .. math::
        f(x) = S_1^\\top \\sigma(S_0^\\top x),\\quad S_0, T_0 \\sim \\mathcal N\\Big(0,\\frac{1}{2 d_{\\rm in} d_h}\\Big),
        \\quad S_1, T_1 \\sim \\mathcal N\\Big(0,\\frac{1}{2 d_{\\rm out} d_h}\\Big),\\quad x_i \\sim \\mathcal N(0, I)

    (variances).  The activation is chosen at training time (teacher and student share it).

    Parameters
    ----------
    key : PRNGKey, shape (2,) or (..., 2)
    d_in : int >= 1
    lam : float > 0        aspect ratio d_in / N_tr
    d_h : int >= 1         hidden width
    d_out : int >= 1
    seeds : sequence of int, optional (metadata)

    Returns
    -------
    TwoLayerData

    References
    ----------
    Spec ``levi:eq16`` (paper eq. 16 and appendix F, eq. 39).
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
    """All :math:`p^2` pairs of :func:`modular_addition_table`: inputs ``X``, one-hot targets ``Y``, ``labels``."""

    X: jax.Array
    Y: jax.Array
    labels: jax.Array


def modular_addition_table(p: int, dtype: Any = jnp.float64) -> ModularAdditionTable:
    """All p^2 pairs (n, m): inputs = concat(onehot(n), onehot(m)) (length 2p), labels (n + m) mod p.

    Returns :class:`ModularAdditionTable` ``(X, Y, labels)`` with X of shape (p^2, 2p), Y = one-hot labels
    (p^2, p), labels (p^2,).
    Row ``n * p + m`` holds the pair (n, m).
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
    """Modular-addition table (n + m) mod p with a random training split of fraction alpha.

    .. math::
        x_{(n,m)} = [e_n; e_m] \\in \\{0,1\\}^{2p},\\quad y = e_{(n+m) \\bmod p},\\quad
        N_{\\rm tr} = \\mathrm{round}(\\alpha p^2),\\quad \\lambda = d_{\\rm in}/N_{\\rm tr} \\approx 2/(\\alpha p)

    Parameters
    ----------
    key : PRNGKey, shape (2,) or (..., 2)
        One split per key (a random permutation of the p^2 pairs; the first N_tr are training).
    p : int >= 2
    alpha : float in (0, 1]
        Training fraction.
    dtype : float dtype of X and Y

    Returns
    -------
    ModularData  (``train_mask`` carries the key's batch axes)

    References
    ----------
    Spec ``levi:appG`` (paper appendix G).
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
