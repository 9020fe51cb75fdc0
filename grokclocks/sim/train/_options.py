"""The training engine: the options of a run, checked before anything is compiled (steps, seeds, devices, sharding)."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import numpy as np

from ..._validate import DomainError, flag, integer_at_least


ON_DIVERGENCE: tuple[str, ...] = ("raise_if_all", "flag", "raise")
"""Accepted values of `on_divergence` in `simulate`; the first, `"raise_if_all"`, is the default."""


class RecordPlan(NamedTuple):
    """Result of `check_record_every`: the checked step counts of a run."""

    steps: int
    """Total number of optimisation steps of the run, ≥ 1."""
    record_every: int
    """Number of steps between two records, in [1, `steps`] and dividing `steps`."""


def check_record_every(steps: Any, record_every: Any) -> RecordPlan:
    """Check the step counts of a run: both ≥ 1, `record_every` ≤ `steps` and dividing it.

    Parameters
    ----------
    steps : int
        Total number of optimisation steps, an integer ≥ 1 (integral floats are accepted).
    record_every : int
        Number of steps between two records, an integer in [1, `steps`] that divides `steps`.

    Returns
    -------
    RecordPlan
        The named tuple (`steps`, `record_every`) as Python ints; it unpacks like a plain tuple.

    Raises
    ------
    DomainError
        If either count is not an integer ≥ 1, `record_every` > `steps`, or `record_every` does not
        divide `steps`.
    """
    steps = integer_at_least(steps, "steps", 1)
    record_every = integer_at_least(record_every, "record_every", 1)
    if record_every > steps:
        raise DomainError(f"record_every must be <= steps={steps} (got {record_every})")
    if steps % record_every:
        raise DomainError(f"steps must be a multiple of record_every={record_every} (got {steps})")
    return RecordPlan(steps, record_every)


def seed_tuple(seeds: Any, name: str = "seeds", *, distinct: bool = True) -> tuple[int, ...]:
    """Check seeds and return them as a tuple of Python ints; each seed is one run.

    A repeated seed would repeat the same run (identical numbers counted twice in every statistic
    over seeds), so it is a `DomainError`, as is an empty sequence.

    Parameters
    ----------
    seeds : int or sequence of int
        One seed (a scalar gives a 1-tuple) or a sequence of them; every seed an integer ≥ 0.
    name : str
        The caller's parameter name, used in error messages; default `"seeds"`.
    distinct : bool
        Whether repeated seeds are an error (default `True`).  `False` is for callers whose runs
        differ in something besides the seed (a per-run train mask) and which check that the
        runs are distinct themselves.

    Returns
    -------
    tuple of int
        The seeds in the order given, at least one.

    Raises
    ------
    DomainError
        If a seed is not an integer ≥ 0, `seeds` is empty, a seed repeats (with `distinct`), or
        `name` is not a str.
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
    """The local JAX devices a run asks for, checked.

    Parameters
    ----------
    devices : None, int or sequence of jax devices
        `None` means all local devices; an int `n` ≥ 1 the first `n` of `jax.local_devices()`; a
        sequence lists the devices themselves (non-empty, distinct, all local).
    n_runs : int or None
        Number of runs to be shared over the devices (the size of the outermost batch axis), an
        integer ≥ 1; when given, an explicit choice of more than one device must divide it.
        `None` (default) skips that check.

    Returns
    -------
    list of jax devices
        The devices to use, in `jax.local_devices()` order for an int.

    Raises
    ------
    DomainError
        For a bad type, more devices than exist locally, an empty, repeated or non-local device
        list, or an explicit number of devices > 1 that does not divide `n_runs`.
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
