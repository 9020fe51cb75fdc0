"""Running one sweep across several processes or hosts with `jax.distributed` (no scheduler of ours).

The runs of a sweep (seeds × hyperparameter grid) never talk to each other, so a multi-host sweep
needs no cross-host collectives: every process calls `jax.distributed.initialize()` (which reads
SLURM / Open MPI / Cloud TPU environments by itself, or takes `coordinator_address`,
`num_processes` and `process_id`), takes its contiguous share of the seeds with `process_share`,
trains them on its own local devices (the engine shards the runs over `jax.local_devices()`,
`grokclocks.sim.train.shard_runs`) and saves its `grokclocks.sim.train.Trajectory`; one process
then joins the shards with `merge_seed_shards`.  The result equals the single-process sweep
(tested with two real `jax.distributed` processes on the CPU in `tests/test_sim_distributed.py`).

Example (one script, launched once per host, e.g. by `srun`)::

    import jax
    from grokclocks.sim.distributed import process_share
    from grokclocks.sim.modular import train_modular

    jax.distributed.initialize()
    seeds = process_share(range(64))
    run = train_modular("embedding_mlp", 97, seeds=seeds, weight_decay=[0.0, 1.0], steps=5000)
    run.save(f"sweep/part{jax.process_index()}")

and afterwards `merge_seed_shards([load_trajectory(f"sweep/part{i}") for i in range(n)])`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .._validate import DomainError, integer_at_least
from .train import Trajectory

__all__ = ["process_share", "merge_seed_shards"]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


def process_share(items: Iterable[Any], index: int | None = None, count: int | None = None) -> list[Any]:
    """The contiguous block of `items` that process `index` of `count` runs.

    Blocks follow `numpy.array_split`: sizes differ by at most one, earlier processes take the
    larger ones, and concatenating the blocks in process order gives `items` back (which is what
    `merge_seed_shards` relies on).

    Parameters
    ----------
    items : iterable
        What is shared out, typically the seeds of a sweep.
    index : int or None
        This process's index, an integer in [0, `count`); `None` (default) means
        `jax.process_index()` (0 without `jax.distributed`).
    count : int or None
        Number of processes, an integer ≥ 1; `None` (default) means `jax.process_count()` (1
        without `jax.distributed`).

    Returns
    -------
    list
        This process's share (possibly empty when there are more processes than items).

    Raises
    ------
    DomainError
        If `count` < 1 or `index` is outside [0, `count`).
    """
    seq = list(items)
    if index is None or count is None:
        import jax

        index = jax.process_index() if index is None else index
        count = jax.process_count() if count is None else count
    count = integer_at_least(count, "count", 1)
    index = integer_at_least(index, "index", 0)
    if index >= count:
        raise DomainError(f"index must be in [0, count) = [0, {count}) (got {index})")
    bounds = np.cumsum([0] + [len(b) for b in np.array_split(np.arange(len(seq)), count)])
    return seq[bounds[index]:bounds[index + 1]]


def merge_seed_shards(shards: Sequence[Trajectory]) -> Trajectory:
    """Join the per-process trajectories of a sweep shared out with `process_share` into one.

    Every shard must come from `grokclocks.sim.modular.train_modular` with the same configuration
    except `seeds` (checked field by field; the differing fields are named), the same record times
    and metrics, and disjoint seeds.  Arrays with a seed axis (metrics `(*grid, n_seeds, ...,
    n_records)`, extras `(*grid, n_seeds)`) are concatenated along it in shard order (`diverged`,
    `diverged_step` too); `n_devices` becomes the total number of devices used.  `final_state` is
    not merged (`None`).

    Parameters
    ----------
    shards : sequence of Trajectory
        The processes' results, in process order; empty shares (no records) are skipped, at least
        one must remain.

    Returns
    -------
    Trajectory
        The sweep over all seeds, its config that of the first shard with the seeds joined.

    Raises
    ------
    DomainError
        If no shard is left, a shard's config is not a `train_modular` configuration or differs
        from the first's in another field than `seeds`, the record times or metrics differ, or a
        seed appears in two shards.
    """
    shards = [s for s in shards if s.metrics and next(iter(s.metrics.values())).size]
    if not shards:
        raise DomainError("shards must contain at least one non-empty Trajectory")
    first = shards[0]
    cfg = first.config
    grid_axes = tuple(_cfg(cfg, "grid_axes"))
    axis = len(grid_axes)
    for i, s in enumerate(shards[1:], 1):
        _cfg(s.config, "seeds")
        if type(s.config) is not type(cfg):
            raise DomainError(f"shards must share their config class (shard 0: {type(cfg).__name__}, "
                              f"shard {i}: {type(s.config).__name__})")
        diff = [f"{f.name}: shard 0 {getattr(cfg, f.name)!r}, shard {i} {getattr(s.config, f.name)!r}"
                for f in dataclasses.fields(cfg)
                if f.name != "seeds" and getattr(cfg, f.name) != getattr(s.config, f.name)]
        if diff:
            raise DomainError(f"shards must come from the same configuration except seeds; {'; '.join(diff)}")
        if not np.array_equal(s.times, first.times):
            raise DomainError("shards must share their record times (same steps and record_every)")
        if set(s.metrics) != set(first.metrics):
            raise DomainError(f"shards must share their metrics (shard 0: {sorted(first.metrics)}, "
                              f"shard {i}: {sorted(s.metrics)})")
    all_seeds = [int(x) for s in shards for x in _cfg(s.config, "seeds")]
    if len(set(all_seeds)) != len(all_seeds):
        raise DomainError(f"shards must hold disjoint seeds (got {all_seeds}): a seed in two shards "
                          "would count one run twice")
    metrics = {k: np.concatenate([np.asarray(s.metrics[k]) for s in shards], axis=axis) for k in first.metrics}
    extras: dict[str, Any] = {}
    for k, v in first.extras.items():
        if k == "n_devices":
            extras[k] = np.asarray(sum(int(np.asarray(s.extras[k])) for s in shards))
        elif np.ndim(v) > axis:
            extras[k] = np.concatenate([np.asarray(s.extras[k]) for s in shards], axis=axis)
        else:
            extras[k] = v
    return Trajectory(times=np.asarray(first.times), metrics=metrics,
                      config=dataclasses.replace(cfg, seeds=tuple(all_seeds)), extras=extras)


def _cfg(cfg: Any, name: str) -> Any:
    if not dataclasses.is_dataclass(cfg) or not hasattr(cfg, name):
        raise DomainError(f"shards must carry their train_modular configuration (config has no {name!r})")
    return getattr(cfg, name)
