"""Per-step trackers for :func:`grokclocks.sim.modular.train_modular`: state that lives in the scan.

A hook (``hooks=``) sees the parameters only at the recorded steps.  Some quantities need every
step: the rolling Gram of the last ``w`` weight *updates* (spec ``repulsion:rolling-gram``), or a
copy of the parameters at chosen epochs.  A tracker is three pure functions

``init(params) -> carry``
    the initial carry of one run (called on the initial parameters, vmapped over the runs);
``update(carry, old_params, new_params, step) -> carry``
    called inside the ``lax.scan`` after every optimiser update, with the parameters before and
    after it; ``step`` (int32 scalar) is the index :math:`\\tau` of that update, i.e. the number of
    updates done so far, 1 for the first one (:math:`\\Delta W_\\tau = W_\\tau - W_{\\tau-1}`);
``read(carry) -> array or dict of arrays``
    what is recorded with the metrics at every record (a dict ``{key: array}`` is recorded as the
    metrics ``"<name>.<key>"``).  Keep it small: it is stored for every record.

The carries are part of the scan state, so they are vmapped and sharded over the runs like the
parameters, saved with the state by incremental saving and restored by ``resume=True``; the final
carries are returned in ``final_state`` (:func:`tracker_carry`).

Alignment with the records (checked in ``tests/test_sim_trackers.py``): :func:`~grokclocks.sim.train.simulate`
records at step 0 (the initial state, before any update) and after every ``record_every``
updates; the record at time :math:`t` therefore describes the state after :math:`t` updates and a
tracker readout at :math:`t` has seen the updates :math:`1..t`.  This is the spec's convention
"logged at epoch :math:`t`, before step :math:`t`" with row 0 = initialisation (spec ``repulsion:setup``).

Trackers defined here: :func:`update_gram_tracker` (ring buffer of the last ``w`` updates of one
parameter leaf and their Gram) and :func:`snapshot_tracker` (copies of the parameters at given
steps).  Both factories are cached and the trackers are frozen dataclasses compared by value, so
equal arguments reuse the compiled training program.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._validate import DomainError, integer_at_least
from ..citations import cites

__all__ = [
    "Tracker",
    "UpdateGramTracker",
    "SnapshotTracker",
    "update_gram_tracker",
    "snapshot_tracker",
    "select_leaf",
    "rolling_eigenvalues",
    "tracker_carry",
    "snapshots",
    "check_trackers",
]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})

_HIGHEST = jax.lax.Precision.HIGHEST


@dataclasses.dataclass(frozen=True)
class Tracker:
    """A user-defined tracker from three pure functions (see the module docstring).

    Attributes
    ----------
    init : callable ``params -> carry``
    update : callable ``(carry, old_params, new_params, step) -> carry``
    read : callable ``carry -> array or dict of arrays``

    Notes
    -----
    Use module-level functions: trackers are part of the key under which the compiled training
    program is cached, and two trackers are equal when their functions are the same objects.
    """

    init: Callable[[Any], Any]
    update: Callable[[Any, Any, Any, Any], Any]
    read: Callable[[Any], Any]


def select_leaf(params: Any, select: str | Callable[[Any], Any]) -> jax.Array:
    """The parameter array a tracker follows: ``params[select]`` for a name, ``select(params)`` for a callable.

    Parameters
    ----------
    params : pytree
        Parameters of one run (a dict of arrays for every model of :mod:`grokclocks.sim.models`).
    select : str or callable
        Name of a top-level entry of ``params`` (e.g. ``"W"``), or a function ``params -> array``.

    Returns
    -------
    jax.Array
        The selected array (not flattened).

    Raises
    ------
    DomainError
        ``select`` names no entry of ``params``.
    """
    if callable(select):
        return select(params)
    if not isinstance(params, Mapping) or select not in params:
        keys = sorted(params) if isinstance(params, Mapping) else type(params).__name__
        raise DomainError(f"select must name a parameter leaf, one of {keys} (got {select!r})")
    return params[select]


def _check_select(select: Any) -> str | Callable[[Any], Any]:
    if not (callable(select) or isinstance(select, str)):
        raise DomainError(f"select must be a parameter name (str) or a function params -> array (got {select!r})")
    return select


# ----------------------------------------------------------------------------- update Gram


@dataclasses.dataclass(frozen=True)
class UpdateGramTracker:
    """Ring buffer ``(window, P)`` of the last ``window`` updates of one parameter leaf, and their Gram.

    Carry ``(buf, gram, count)``: ``buf[(tau - 1) % window]`` holds :math:`\\Delta W_\\tau` flattened
    (the whole optimiser update of step :math:`\\tau`, weight decay included, computed as
    ``new - old`` in the parameters' dtype); ``gram[i, j] = <buf[i], buf[j]>`` in slot order, kept
    up to date by recomputing one row and column per step (:math:`O(wP)` per step, each entry an
    inner product evaluated once at ``precision=HIGHEST``); ``count`` = number of updates so far.

    Readout: ``{"gram": (window, window), "count": int32}``; ``gram`` is in chronological order
    (oldest update first); with ``count < window`` only the leading ``count`` rows/columns are
    non-zero.  :func:`rolling_eigenvalues` turns the records into :math:`\\sigma_k(t)`.
    """

    select: str | Callable[[Any], Any]
    window: int

    def init(self, params: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
        x = select_leaf(params, self.select)
        P = int(np.prod(x.shape))
        return (jnp.zeros((self.window, P), x.dtype), jnp.zeros((self.window, self.window), x.dtype),
                jnp.zeros((), jnp.int32))

    def update(self, carry: Any, old_params: Any, new_params: Any, step: Any) -> Any:
        buf, gram, count = carry
        delta = (select_leaf(new_params, self.select) - select_leaf(old_params, self.select)).reshape(-1)
        slot = count % self.window
        buf = jax.lax.dynamic_update_index_in_dim(buf, delta.astype(buf.dtype), slot, 0)
        v = jnp.dot(buf, delta.astype(buf.dtype), precision=_HIGHEST)
        gram = jax.lax.dynamic_update_index_in_dim(gram, v, slot, 0)
        gram = jax.lax.dynamic_update_index_in_dim(gram, v, slot, 1)
        return buf, gram, count + 1

    def read(self, carry: Any) -> dict[str, jax.Array]:
        _, gram, count = carry
        w = self.window
        start = jnp.where(count >= w, count % w, 0)
        perm = (start + jnp.arange(w)) % w
        return {"gram": gram[perm][:, perm], "count": count}


@cites("repulsion:rolling-gram")
@functools.lru_cache(maxsize=None)
def update_gram_tracker(select: str | Callable[[Any], Any] = "W", window: int = 20) -> UpdateGramTracker:
    """Tracker of the rolling-window Gram of the updates :math:`\\Delta W_\\tau` of one parameter leaf.

    .. math::

        \\Delta(t)=[\\Delta W_{\\max(1,t-w+1)},\\dots,\\Delta W_t]\\in\\mathbb R^{P\\times m},\\quad m=\\min(t,w),\\qquad
        G(t)=\\Delta(t)^\\top\\Delta(t)

    recorded at every record :math:`t` (chronological order, zero-padded to :math:`w\\times w`); the
    eigenvalues :math:`\\sigma_k(t)=\\lambda_k(G(t))` come from :func:`rolling_eigenvalues` on the host.

    Parameters
    ----------
    select : str or callable
        The parameter leaf (``"W"`` for Tian's first layer) or a function ``params -> array``.
    window : int >= 2
        Ring-buffer length :math:`w`.  A tracker of window :math:`w` also serves every smaller
        window (the trailing block of its Gram; ``window=`` of :func:`rolling_eigenvalues`).

    Returns
    -------
    UpdateGramTracker
        Cached: equal arguments return the same (equal) tracker, so compiled code is reused.

    Notes
    -----
    Memory: ``window * P`` entries per run in the parameters' dtype (spec R3: 30 runs x 20 x 290 816
    float32 = 0.70 GB; window 30: 1.05 GB).  Cost per step :math:`O(wP)`.

    References
    ----------
    Spec ``repulsion:rolling-gram`` (eq. 5; code ``EigengapTracker.push`` after ``opt.step()``).

    Examples
    --------
    >>> from grokclocks.sim.trackers import update_gram_tracker
    >>> update_gram_tracker("W", 20) is update_gram_tracker("W", 20)
    True
    """
    return UpdateGramTracker(_check_select(select), integer_at_least(window, "window", 2))


@cites("repulsion:rolling-gram")
def rolling_eigenvalues(gram: Any, count: Any, k: int = 5, window: int | None = None) -> np.ndarray:
    """Top-``k`` eigenvalues :math:`\\sigma_k(t)` from recorded :class:`UpdateGramTracker` readouts (float64, host).

    Exactly the alignment of :func:`grokclocks.repulsion.rolling_gram_eigenvalues`: the record with
    ``count`` :math:`=t` gives the eigenvalues, descending, of the Gram of
    :math:`\\Delta W_{\\max(1,t-w+1)},\\dots,\\Delta W_t` (the last :math:`m=\\min(t,w)` updates); NaN
    for :math:`t<2` and for orders :math:`>m`.

    Parameters
    ----------
    gram : array (..., W, W, n_records)
        The recorded ``"<name>.gram"`` metric as :func:`~grokclocks.sim.modular.train_modular`
        returns it (record axis last).
    count : array (..., n_records)
        The recorded ``"<name>.count"`` (the number of updates :math:`t` at each record).
    k : int in [1, window]
        Number of eigenvalues.
    window : int in [2, W], optional
        Window :math:`w` (default: the tracker's ``W``); a smaller one uses the trailing
        :math:`\\min(t,w)` updates of the recorded Gram.

    Returns
    -------
    ndarray (..., n_records, k)
        Record axis before the eigenvalue axis, as :func:`~grokclocks.repulsion.rolling_gram_eigenvalues`.

    Raises
    ------
    DomainError
        Shapes inconsistent, ``window`` outside ``[2, W]``, ``k`` outside ``[1, window]``,
        non-finite Gram, negative counts.

    References
    ----------
    Spec ``repulsion:rolling-gram`` (eq. 5, epoch alignment of the code).
    """
    G = np.asarray(gram, dtype=np.float64)
    c = np.asarray(count)
    if G.ndim < 3 or G.shape[-3] != G.shape[-2] or G.shape[:-3] + G.shape[-1:] != c.shape:
        raise DomainError(f"gram must have shape (..., W, W, n_records) and count (..., n_records) "
                          f"(got {G.shape} and {c.shape})")
    if not np.issubdtype(c.dtype, np.integer) or np.any(c < 0):
        raise DomainError(f"count must be non-negative integers (got dtype {c.dtype})")
    if not np.all(np.isfinite(G)):
        raise DomainError("gram must be finite")
    W = G.shape[-2]
    window = W if window is None else integer_at_least(window, "window", 2)
    if window > W:
        raise DomainError(f"window must be in [2, {W}] (the tracker's window; got {window})")
    k = integer_at_least(k, "k", 1)
    if k > window:
        raise DomainError(f"k must be in [1, window] = [1, {window}] (got {k})")
    Gr = np.moveaxis(G, -1, -3)  # (..., n_records, W, W)
    out = np.full(c.shape + (k,), np.nan)
    m = np.minimum(c, window)
    filled = np.minimum(c, W)  # chronological rows 0..filled-1 hold updates t-filled+1..t
    for mm in np.unique(m[c >= 2]):
        for ff in np.unique(filled[(m == mm) & (c >= 2)]):
            sel = (m == mm) & (filled == ff) & (c >= 2)
            blk = Gr[sel][:, ff - mm:ff, ff - mm:ff]
            ev = np.linalg.eigvalsh(blk)[:, ::-1]
            kk = min(k, int(mm))
            vals = np.full((ev.shape[0], k), np.nan)
            vals[:, :kk] = ev[:, :kk]
            out[sel] = vals
    return out


# --------------------------------------------------------------------------------- snapshots


@dataclasses.dataclass(frozen=True)
class SnapshotTracker:
    """Copies of the selected parameters after the updates ``at_steps`` (step 0 = initialisation).

    Carry ``{"steps": (n,) int32, "taken": (n,) bool, "params": pytree with a leading axis n}``; only the slot of the
    current step is written, so a step costs one copy of the selected parameters.  Readout: the
    number of snapshots taken so far (the copies themselves are read from ``final_state`` with
    :func:`snapshots`, never recorded per step).
    """

    select: str | Callable[[Any], Any] | None
    at_steps: tuple[int, ...]

    def _sel(self, params: Any) -> Any:
        return params if self.select is None else select_leaf(params, self.select)

    def init(self, params: Any) -> dict[str, Any]:
        x = self._sel(params)
        n = len(self.at_steps)
        at0 = jnp.asarray(np.asarray(self.at_steps) == 0)
        shots = jax.tree_util.tree_map(
            lambda a: jnp.where(at0.reshape((n,) + (1,) * a.ndim), a[None], jnp.zeros((n,) + a.shape, a.dtype)), x)
        return {"steps": jnp.asarray(self.at_steps, jnp.int32), "taken": at0, "params": shots}

    def update(self, carry: Any, old_params: Any, new_params: Any, step: Any) -> Any:
        hit = carry["steps"] == step
        i = jnp.argmax(hit)
        any_hit = jnp.any(hit)
        x = self._sel(new_params)

        def put(buf: jax.Array, a: jax.Array) -> jax.Array:
            cur = jax.lax.dynamic_index_in_dim(buf, i, 0, keepdims=False)
            return jax.lax.dynamic_update_index_in_dim(buf, jnp.where(any_hit, a.astype(buf.dtype), cur), i, 0)

        return {"steps": carry["steps"], "taken": carry["taken"] | hit,
                "params": jax.tree_util.tree_map(put, carry["params"], x)}

    def read(self, carry: Any) -> jax.Array:
        return jnp.sum(carry["taken"].astype(jnp.int32))


@functools.lru_cache(maxsize=None)
def _snapshot_tracker(select: Any, at_steps: tuple[int, ...]) -> SnapshotTracker:
    return SnapshotTracker(select, at_steps)


def snapshot_tracker(select: str | Callable[[Any], Any] | None, at_steps: Any) -> SnapshotTracker:
    """Tracker that keeps a copy of the parameters after the updates ``at_steps``.

    Parameters
    ----------
    select : str, callable or None
        ``None`` keeps the whole parameter pytree; a name or a function selects one array.
    at_steps : sequence of int >= 0
        Distinct steps (number of updates done; 0 = the initial parameters), e.g. epochs
        ``(50, 100, 175, 250, 300)`` of spec ``repulsion:sign-rule``.

    Returns
    -------
    SnapshotTracker
        Cached by ``(select, sorted at_steps)``.  Memory ``len(at_steps)`` copies per run.

    Raises
    ------
    DomainError
        ``at_steps`` empty, negative, non-integer or with repeats; ``select`` of the wrong type.

    Notes
    -----
    Read the copies with :func:`snapshots` (from ``final_state``).  A step beyond the run's last
    step is never taken (its slot stays zero; the readout counts the snapshots taken).
    """
    if select is not None:
        select = _check_select(select)
    steps = [integer_at_least(s, "at_steps", 0) for s in np.atleast_1d(np.asarray(at_steps, dtype=object)).tolist()]
    if not steps:
        raise DomainError("at_steps must not be empty")
    if len(set(steps)) != len(steps):
        raise DomainError(f"at_steps must be distinct (got {steps})")
    return _snapshot_tracker(select, tuple(sorted(steps)))


# ----------------------------------------------------------------------- engine-side helpers


def check_trackers(trackers: Mapping[str, Any] | None, reserved: Any = ()) -> tuple[tuple[str, Any], ...]:
    """Validate a ``trackers`` argument; returns its items sorted by name (hashable, for caching).

    Raises
    ------
    DomainError
        Not a mapping of str -> object with callable ``init``, ``update``, ``read``, a name
        containing ``"."``, or a name among ``reserved`` (metric and hook names).
    """
    if trackers is None:
        return ()
    if not isinstance(trackers, Mapping):
        raise DomainError(f"trackers must be a dict name -> Tracker (got {type(trackers).__name__})")
    items = []
    for name, tr in sorted(trackers.items(), key=lambda kv: str(kv[0])):
        if not isinstance(name, str) or not name or "." in name:
            raise DomainError(f"tracker names must be non-empty strings without '.' (got {name!r})")
        if name in reserved:
            raise DomainError(f"tracker name {name!r} collides with a metric or hook name")
        if not all(callable(getattr(tr, f, None)) for f in ("init", "update", "read")):
            raise DomainError(f"tracker {name!r} must have callable init, update and read (got {tr!r})")
        items.append((name, tr))
    return tuple(items)


def tracker_carry(traj: Any, name: str) -> Any:
    """The final carry of tracker ``name`` of a :func:`~grokclocks.sim.modular.train_modular` result.

    Leaves are numpy arrays with the run axes reshaped to the result's batch shape
    ``(*grid_shape, n_seeds, ...)``.

    Raises
    ------
    DomainError
        The result has no final state with trackers, or no tracker ``name``.
    """
    st = traj.final_state
    if st is None or len(st) < 4 or name not in st[3]:
        have = sorted(st[3]) if st is not None and len(st) >= 4 else []
        raise DomainError(f"no tracker {name!r} in this result's final_state (trackers: {have})")
    shape = traj.batch_shape
    return jax.tree_util.tree_map(lambda x: np.asarray(x).reshape(shape + np.shape(x)[1:]), st[3][name])


def snapshots(traj: Any, name: str) -> dict[int, Any]:
    """The parameter copies of :class:`SnapshotTracker` ``name``: ``{step: pytree (*batch_shape, ...)}``.

    Read from ``final_state`` (the carry stores its steps); only steps reached by every run are returned.

    Raises
    ------
    DomainError
        No tracker ``name`` or not a snapshot tracker.
    """
    carry = tracker_carry(traj, name)
    if not isinstance(carry, Mapping) or set(carry) != {"steps", "taken", "params"}:
        raise DomainError(f"tracker {name!r} is not a snapshot tracker")
    taken = np.asarray(carry["taken"])  # (*batch, n)
    steps = np.asarray(carry["steps"]).reshape(-1, taken.shape[-1])[0]
    ax = taken.ndim - 1
    return {int(s): jax.tree_util.tree_map(lambda x, i=i: np.take(x, i, axis=ax), carry["params"])
            for i, s in enumerate(steps) if np.all(taken[..., i])}
