"""The training engine: the options of a run, checked before anything is compiled (steps, seeds, devices, sharding)."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import numpy as np

from ..._validate import DomainError, flag, integer_at_least


ON_DIVERGENCE: tuple[str, ...] = ("raise_if_all", "flag", "raise")
"""Values of ``on_divergence`` (:func:`simulate`); the first is the default."""


class RecordPlan(NamedTuple):
    """Result of :func:`check_record_every`: the checked step counts."""

    steps: int
    """total GD steps."""
    record_every: int
    """steps between records."""


def check_record_every(steps: Any, record_every: Any) -> RecordPlan:
    """``(steps, record_every)`` as ints: both >= 1, ``record_every <= steps`` and dividing it.

    Returns
    -------
    RecordPlan
        A :class:`RecordPlan` named tuple (``steps``, ``record_every``); it unpacks like a plain tuple.
    """
    steps = integer_at_least(steps, "steps", 1)
    record_every = integer_at_least(record_every, "record_every", 1)
    if record_every > steps:
        raise DomainError(f"record_every must be <= steps={steps} (got {record_every})")
    if steps % record_every:
        raise DomainError(f"steps must be a multiple of record_every={record_every} (got {steps})")
    return RecordPlan(steps, record_every)


def seed_tuple(seeds: Any, name: str = "seeds", *, distinct: bool = True) -> tuple[int, ...]:
    """Integer seeds >= 0 as a tuple (a scalar is one seed); each seed is one run.

    A repeated seed would repeat the same run (identical numbers counted twice in every statistic
    over seeds), so it is a :class:`DomainError`, as is an empty sequence. ``distinct=False`` is for
    callers whose runs differ in something besides the seed (a per-run train mask) and which check
    that the runs are distinct themselves.
    """
    if not isinstance(name, str):
        raise DomainError(f"name must be the parameter's name, a str (got {name!r})")
    distinct = flag(distinct, "distinct")
    items = [seeds] if np.ndim(seeds) == 0 else list(np.asarray(list(seeds), dtype=object).reshape(-1))
    out = tuple(integer_at_least(s, f"every entry of {name}", 0) for s in items)
    if not out:
        raise DomainError(f"{name} must not be empty")
    if distinct and len(set(out)) != len(out):
        twice = sorted({s for s in out if out.count(s) > 1})
        raise DomainError(f"{name} must be distinct: each seed is one run (got {out}; repeated: {twice})")
    return out


def check_devices(devices: Any, n_runs: int | None = None) -> list[Any]:
    """The local devices asked for: ``None`` = all, an int ``n`` = the first ``n``, or a list of devices.

    Raises :class:`DomainError` for a bad type, more devices than exist locally, an empty, repeated
    or non-local device list, and (when ``n_runs`` is given) an explicit number of devices > 1 that
    does not divide the ``n_runs`` runs.
    """
    if n_runs is not None:
        n_runs = integer_at_least(n_runs, "n_runs", 1)
    local = jax.local_devices()
    if devices is None:
        return local
    if isinstance(devices, (bool, np.bool_, str, bytes, float, np.floating)):
        raise DomainError(f"devices must be None, an integer >= 1 or a list of jax devices (got {devices!r})")
    if isinstance(devices, (int, np.integer)):
        n = integer_at_least(devices, "devices", 1)
        if n > len(local):
            raise DomainError(f"devices must be at most the {len(local)} local device(s) {local} (got {n})")
        devs = local[:n]
    else:
        try:
            devs = list(devices)
        except TypeError:
            raise DomainError(f"devices must be None, an integer >= 1 or a list of jax devices "
                              f"(got {devices!r})") from None
        if not devs or len(set(devs)) != len(devs) or any(d not in local for d in devs):
            raise DomainError(f"devices must be a non-empty list of distinct local devices {local} (got {devs!r})")
    if n_runs is not None and len(devs) > 1 and n_runs % len(devs):
        raise DomainError(f"devices={len(devs)} must divide the number of runs ({n_runs}); "
                          "use devices=None (all devices when they divide it, else one) or another count")
    return devs
