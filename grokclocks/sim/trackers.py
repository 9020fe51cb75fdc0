"""Per-step trackers for `grokclocks.sim.modular.train_modular`: state that lives in the scan.

A hook (`hooks=`) sees the parameters only at the recorded steps.  Some quantities need every
step: the rolling Gram of the last w weight updates (spec `repulsion:rolling-gram`), or a copy
of the parameters at chosen epochs.  A tracker is three pure functions

`init(params) -> carry`
    the initial carry of one run (called on the initial parameters, vmapped over the runs);
`update(carry, old_params, new_params, step) -> carry`
    called inside the `lax.scan` after every optimiser update, with the parameters before and
    after it; `step` (int32 scalar) is the index τ of that update, i.e. the number of updates done
    so far, 1 for the first one (ΔW_τ = W_τ − W_{τ−1});
`read(carry) -> array or dict of arrays`
    what is recorded with the metrics at every record (a dict `{key: array}` is recorded as the
    metrics `"<name>.<key>"`).  Keep it small: it is stored for every record.

The carries are part of the scan state, so they are vmapped and sharded over the runs like the
parameters, saved with the state by incremental saving and restored by `resume=True`; the final
carries are returned in `final_state` (`tracker_carry`).

Alignment with the records (checked in `tests/test_sim_trackers.py`): `grokclocks.sim.train.simulate`
records at step 0 (the initial state, before any update) and after every `record_every` updates;
the record at time t therefore describes the state after t updates and a tracker readout at t has
seen the updates 1..t.  This is the spec's convention "logged at epoch t, before step t" with row
0 = initialisation (spec `repulsion:setup`).

Trackers defined here: `update_gram_tracker` (ring buffer of the last w updates of one parameter
leaf and their Gram) and `snapshot_tracker` (copies of the parameters at given steps).  Both
factories are cached and the trackers are frozen dataclasses compared by value, so equal arguments
reuse the compiled training program.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._fielddocs import document_records
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
    """A user-defined tracker from three pure functions, for the `trackers` of `grokclocks.sim.modular.train_modular`.

    Notes
    -----
    Use module-level functions: trackers are part of the key under which the compiled training
    program is cached, and two trackers are equal when their functions are the same objects.
    """

    init: Callable[[Any], Any]
    """`init(params) -> carry`: the initial carry of one run, from its initial parameters."""
    update: Callable[[Any, Any, Any, Any], Any]
    """`update(carry, old_params, new_params, step) -> carry`: called after every optimiser update inside
    the scan; `step` is the number of updates done, 1 for the first."""
    read: Callable[[Any], Any]
    """`read(carry) -> array or dict of arrays`: what is recorded at every record (a dict is recorded as
    the metrics `"<name>.<key>"`)."""


def select_leaf(params: Any, select: str | Callable[[Any], Any]) -> jax.Array:
    """The parameter array a tracker follows: `params[select]` for a name, `select(params)` for a callable.

    Parameters
    ----------
    params : pytree
        Parameters of one run (a dict of arrays for every model of `grokclocks.sim.models`).
    select : str or callable
        Name of a top-level entry of `params` (e.g. `"W"`), or a function `params -> array`.

    Returns
    -------
    jax.Array
        The selected array (not flattened).

    Raises
    ------
    DomainError
        If `select` names no entry of `params`.
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
    """Ring buffer (window, P) of the last `window` updates of one parameter leaf, and their Gram.

    Carry `(buf, gram, count)`: `buf[(τ − 1) % window]` holds ΔW_τ flattened (the whole optimiser
    update of step τ, weight decay included, computed as `new - old` in the parameters' dtype);
    `gram[i, j]` = ⟨buf[i], buf[j]⟩ in slot order, kept up to date by recomputing one row and
    column per step (O(wP) per step, each entry an inner product evaluated once at
    `precision=HIGHEST`); `count` = number of updates so far.

    Readout: `{"gram": (window, window), "count": int32}`; `gram` is in chronological order (oldest
    update first); with `count` < `window` only the leading `count` rows/columns are non-zero.
    `rolling_eigenvalues` turns the records into σ_k(t).  Build it with `update_gram_tracker`.
    """

    select: str | Callable[[Any], Any]
    """The parameter leaf followed: a top-level name of the parameters or a function `params -> array` (see
    `select_leaf`)."""
    window: int
    """Ring-buffer length w ≥ 2."""

    def init(self, params: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
        """The empty carry of one run.

        Parameters
        ----------
        params : pytree
            The run's initial parameters (only the selected leaf's shape and dtype are used).

        Returns
        -------
        tuple of jax.Array
            `(buf, gram, count)`: zeros of shape (window, P) and (window, window) in the leaf's
            dtype, and the int32 count 0.
        """
        x = select_leaf(params, self.select)
        P = int(np.prod(x.shape))
        return (jnp.zeros((self.window, P), x.dtype), jnp.zeros((self.window, self.window), x.dtype),
                jnp.zeros((), jnp.int32))

    def update(self, carry: Any, old_params: Any, new_params: Any, step: Any) -> Any:
        """Store the update new − old of the selected leaf in the next slot and refresh its Gram row and column.

        Parameters
        ----------
        carry : tuple of jax.Array
            `(buf, gram, count)` of `init` or of the previous update.
        old_params : pytree
            The parameters before the optimiser update.
        new_params : pytree
            The parameters after it.
        step : jax.Array
            The update's index τ (int32, 1 for the first); unused (the carry counts the updates).

        Returns
        -------
        tuple of jax.Array
            The new `(buf, gram, count)`.
        """
        buf, gram, count = carry
        delta = (select_leaf(new_params, self.select) - select_leaf(old_params, self.select)).reshape(-1)
        slot = count % self.window
        buf = jax.lax.dynamic_update_index_in_dim(buf, delta.astype(buf.dtype), slot, 0)
        v = jnp.dot(buf, delta.astype(buf.dtype), precision=_HIGHEST)
        gram = jax.lax.dynamic_update_index_in_dim(gram, v, slot, 0)
        gram = jax.lax.dynamic_update_index_in_dim(gram, v, slot, 1)
        return buf, gram, count + 1

    def read(self, carry: Any) -> dict[str, jax.Array]:
        """The Gram of the buffered updates in chronological order, and the number of updates.

        Parameters
        ----------
        carry : tuple of jax.Array
            `(buf, gram, count)`.

        Returns
        -------
        dict of str to jax.Array
            `{"gram": (window, window) array, oldest update first, "count": int32 scalar}`.
        """
        _, gram, count = carry
        w = self.window
        start = jnp.where(count >= w, count % w, 0)
        perm = (start + jnp.arange(w)) % w
        return {"gram": gram[perm][:, perm], "count": count}


@cites("repulsion:rolling-gram")
@functools.lru_cache(maxsize=None)
def update_gram_tracker(select: str | Callable[[Any], Any] = "W", window: int = 20) -> UpdateGramTracker:
    r"""Tracker of the rolling-window Gram of the updates ΔW_τ of one parameter leaf.

    The last m = min(t, w) updates, flattened, form the columns of Δ(t), and G(t) = Δ(t)ᵀΔ(t) is
    their Gram matrix:

    .. math::

        \Delta(t)=[\Delta W_{\max(1,t-w+1)},\dots,\Delta W_t]\in\mathbb R^{P\times m},\quad m=\min(t,w),\qquad
        G(t)=\Delta(t)^\top\Delta(t)

    recorded at every record t (chronological order, zero-padded to w × w); the eigenvalues
    σ_k(t) = λ_k(G(t)) come from `rolling_eigenvalues` on the host.

    Parameters
    ----------
    select : str or callable
        The parameter leaf followed: a top-level name of the parameters (default `"W"`, Tian's
        first layer) or a function `params -> array`.
    window : int
        Ring-buffer length w ≥ 2; default 20.  A tracker of window w also serves every smaller
        window (the trailing block of its Gram; `window` of `rolling_eigenvalues`).

    Returns
    -------
    UpdateGramTracker
        Cached: equal arguments return the same (equal) tracker, so compiled code is reused.

    Raises
    ------
    DomainError
        If `select` is neither a str nor callable, or `window` < 2.

    Notes
    -----
    Memory: `window`·P entries per run in the parameters' dtype (spec R3: 30 runs × 20 × 290 816
    float32 = 0.70 GB; window 30: 1.05 GB).  Cost per step O(wP).

    References
    ----------
    Spec `repulsion:rolling-gram` (eq. 5; code `EigengapTracker.push` after `opt.step()`).

    Examples
    --------
    >>> from grokclocks.sim.trackers import update_gram_tracker
    >>> update_gram_tracker("W", 20) is update_gram_tracker("W", 20)
    True
    """
    return UpdateGramTracker(_check_select(select), integer_at_least(window, "window", 2))


@cites("repulsion:rolling-gram")
def rolling_eigenvalues(gram: Any, count: Any, k: int = 5, window: int | None = None) -> np.ndarray:
    """Top-`k` eigenvalues σ_k(t) from recorded `UpdateGramTracker` readouts (float64, on the host).

    Exactly the alignment of `grokclocks.repulsion.rolling_gram_eigenvalues`: the record with
    `count` = t gives the eigenvalues, descending, of the Gram of ΔW_{max(1, t−w+1)}, ..., ΔW_t
    (the last m = min(t, w) updates); NaN for t < 2 and for orders > m.

    Parameters
    ----------
    gram : array_like
        The recorded `"<name>.gram"` metric as `grokclocks.sim.modular.train_modular` returns it,
        shape (..., W, W, n_records) (record axis last), finite.
    count : array_like
        The recorded `"<name>.count"`, integers ≥ 0 of shape (..., n_records): the number of
        updates t at each record.
    k : int
        Number of eigenvalues, an integer in [1, `window`]; default 5.
    window : int or None
        Window w, an integer in [2, W]; `None` (default) means the tracker's W.  A smaller one uses
        the trailing min(t, w) updates of the recorded Gram.

    Returns
    -------
    numpy.ndarray
        float64 of shape (..., n_records, k): the record axis before the eigenvalue axis, as in
        `grokclocks.repulsion.rolling_gram_eigenvalues`.

    Raises
    ------
    DomainError
        If the shapes are inconsistent, `window` is outside [2, W], `k` outside [1, `window`], the
        Gram is not finite, or a count is negative or not an integer.

    References
    ----------
    Spec `repulsion:rolling-gram` (eq. 5, epoch alignment of the code).
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
    """Copies of the selected parameters after the updates `at_steps` (step 0 = initialisation).

    Carry `{"steps": (n,) int32, "taken": (n,) bool, "params": pytree with a leading axis n}`; only
    the slot of the current step is written, so a step costs one copy of the selected parameters.
    Readout: the number of snapshots taken so far (the copies themselves are read from
    `final_state` with `snapshots`, never recorded per step).  Build it with `snapshot_tracker`.
    """

    select: str | Callable[[Any], Any] | None
    """What is copied: `None` the whole parameter pytree, a name or a function one array (see
    `select_leaf`)."""
    at_steps: tuple[int, ...]
    """The steps (numbers of updates done, ≥ 0, distinct, ascending) after which a copy is kept."""

    def _sel(self, params: Any) -> Any:
        return params if self.select is None else select_leaf(params, self.select)

    def init(self, params: Any) -> dict[str, Any]:
        """The carry of one run, with the step-0 snapshot taken if 0 is among `at_steps`.

        Parameters
        ----------
        params : pytree
            The run's initial parameters.

        Returns
        -------
        dict of str to object
            `{"steps", "taken", "params"}` as described in the class docstring.
        """
        x = self._sel(params)
        n = len(self.at_steps)
        at0 = jnp.asarray(np.asarray(self.at_steps) == 0)
        shots = jax.tree_util.tree_map(
            lambda a: jnp.where(at0.reshape((n,) + (1,) * a.ndim), a[None], jnp.zeros((n,) + a.shape, a.dtype)), x)
        return {"steps": jnp.asarray(self.at_steps, jnp.int32), "taken": at0, "params": shots}

    def update(self, carry: Any, old_params: Any, new_params: Any, step: Any) -> Any:
        """Copy the new parameters into the slot of `step` if it is one of `at_steps`.

        Parameters
        ----------
        carry : dict of str to object
            The carry of `init` or of the previous update.
        old_params : pytree
            The parameters before the optimiser update (unused).
        new_params : pytree
            The parameters after it, copied when `step` is due.
        step : jax.Array
            The number of updates done, int32, 1 for the first.

        Returns
        -------
        dict of str to object
            The new carry.
        """
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
        """The number of snapshots taken so far.

        Parameters
        ----------
        carry : dict of str to object
            The tracker's carry.

        Returns
        -------
        jax.Array
            int32 scalar.
        """
        return jnp.sum(carry["taken"].astype(jnp.int32))


@functools.lru_cache(maxsize=None)
def _snapshot_tracker(select: Any, at_steps: tuple[int, ...]) -> SnapshotTracker:
    return SnapshotTracker(select, at_steps)


def snapshot_tracker(select: str | Callable[[Any], Any] | None, at_steps: Any) -> SnapshotTracker:
    """Tracker that keeps a copy of the parameters after the updates `at_steps`.

    Parameters
    ----------
    select : str or callable or None
        What is copied: `None` the whole parameter pytree; a top-level name or a function
        `params -> array` one array.
    at_steps : int or sequence of int
        Distinct steps ≥ 0 (numbers of updates done; 0 = the initial parameters), e.g. the epochs
        (50, 100, 175, 250, 300) of spec `repulsion:sign-rule`.

    Returns
    -------
    SnapshotTracker
        Cached by (`select`, sorted `at_steps`).  Memory: `len(at_steps)` copies per run.

    Raises
    ------
    DomainError
        If `at_steps` is empty, negative, non-integer or has repeats, or `select` has the wrong type.

    Notes
    -----
    Read the copies with `snapshots` (from `final_state`).  A step beyond the run's last step is
    never taken (its slot stays zero; the readout counts the snapshots taken).
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
    """Check a `trackers` argument of `grokclocks.sim.modular.train_modular`.

    Parameters
    ----------
    trackers : mapping of str to tracker, or None
        Tracker name -> an object with callable `init`, `update` and `read`; names non-empty and
        without `"."`.  `None` means no tracker.
    reserved : collection of str
        Names a tracker may not take (the metric and hook names); default none.

    Returns
    -------
    tuple of (str, tracker) pairs
        The items sorted by name (hashable, for caching); `()` for `None`.

    Raises
    ------
    DomainError
        If `trackers` is not such a mapping, a name contains `"."` or is among `reserved`.
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
    """The final carry of a tracker of a `grokclocks.sim.modular.train_modular` result.

    Parameters
    ----------
    traj : Trajectory
        The result of `train_modular` run with `trackers`.
    name : str
        The tracker's name (its key in `trackers`).

    Returns
    -------
    pytree
        The carry, its leaves numpy arrays with the run axis reshaped to the result's batch shape
        `(*grid_shape, n_seeds, ...)`.

    Raises
    ------
    DomainError
        If the result has no final state with trackers, or no tracker `name`.
    """
    st = traj.final_state
    if st is None or len(st) < 4 or name not in st[3]:
        have = sorted(st[3]) if st is not None and len(st) >= 4 else []
        raise DomainError(f"no tracker {name!r} in this result's final_state (trackers: {have})")
    shape = traj.batch_shape
    return jax.tree_util.tree_map(lambda x: np.asarray(x).reshape(shape + np.shape(x)[1:]), st[3][name])


def snapshots(traj: Any, name: str) -> dict[int, Any]:
    """The parameter copies of a `SnapshotTracker`, by step.

    Read from `final_state` (the carry stores its steps); only steps reached by every run are
    returned.

    Parameters
    ----------
    traj : Trajectory
        The result of `grokclocks.sim.modular.train_modular` run with the snapshot tracker.
    name : str
        The tracker's name (its key in `trackers`).

    Returns
    -------
    dict of int to pytree
        `{step: copy}`, each copy with the result's batch shape `(*batch_shape, ...)` in front.

    Raises
    ------
    DomainError
        If there is no tracker `name`, or it is not a snapshot tracker.
    """
    carry = tracker_carry(traj, name)
    if not isinstance(carry, Mapping) or set(carry) != {"steps", "taken", "params"}:
        raise DomainError(f"tracker {name!r} is not a snapshot tracker")
    taken = np.asarray(carry["taken"])  # (*batch, n)
    steps = np.asarray(carry["steps"]).reshape(-1, taken.shape[-1])[0]
    ax = taken.ndim - 1
    return {int(s): jax.tree_util.tree_map(lambda x, i=i: np.take(x, i, axis=ax), carry["params"])
            for i, s in enumerate(steps) if np.all(taken[..., i])}


document_records(globals(), __all__)  # help() of each record class lists its fields
