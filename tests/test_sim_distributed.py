"""Multi-process sweeps with jax.distributed: process_share and merge_seed_shards.

The end-to-end test starts two real ``jax.distributed`` processes on the CPU (a coordinator on a
free loopback port), lets each train its share of the seeds and save it, then merges the shards and
compares them with the same sweep run in one process.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from grokclocks import DomainError
from grokclocks.sim.distributed import merge_seed_shards, process_share


@given(n=st.integers(0, 40), count=st.integers(1, 9))
def test_process_share_partitions_in_order(n, count):
    items = list(range(100, 100 + n))
    shares = [process_share(items, i, count) for i in range(count)]
    assert sum(shares, []) == items
    sizes = [len(s) for s in shares]
    assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)


def test_process_share_defaults_to_one_process_and_validates():
    assert process_share([3, 1, 2]) == [3, 1, 2]
    with pytest.raises(DomainError, match="index"):
        process_share([1, 2], 2, 2)
    with pytest.raises(DomainError, match="count"):
        process_share([1, 2], 0, 0)
    with pytest.raises(DomainError, match="shards"):
        merge_seed_shards([])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_KW = dict(p=11, train_frac=0.5, model_kwargs=dict(d_embed=8, d_hidden=16), lr=3e-3, steps=60,
           record_every=10, weight_decay=[0.0, 1.0])

_WORKER = textwrap.dedent("""
    import sys, jax
    pid, port, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=pid)
    from grokclocks.sim.distributed import process_share
    from grokclocks.sim.modular import train_modular
    assert jax.process_count() == 2 and jax.process_index() == pid
    seeds = process_share([0, 1, 2])          # process 0: [0, 1], process 1: [2]
    run = train_modular("embedding_mlp", seeds=seeds, **KW)
    run.save(f"{out}/part{jax.process_index()}")
    jax.distributed.shutdown()
    print("OK", pid, seeds)
""")


@pytest.mark.slow
def test_two_jax_distributed_processes_reproduce_the_single_process_sweep(tmp_path):
    from grokclocks.sim.modular import train_modular
    from grokclocks.sim.train import load_trajectory

    port = str(_free_port())
    code = f"KW = {_KW!r}\n" + _WORKER
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(i), port, str(tmp_path)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (so, se) in zip(procs, outs):
        assert p.returncode == 0, se[-3000:]
    assert "OK 0 [0, 1]" in outs[0][0] and "OK 1 [2]" in outs[1][0]

    merged = merge_seed_shards([load_trajectory(tmp_path / f"part{i}") for i in range(2)])
    single = train_modular("embedding_mlp", seeds=(0, 1, 2), **_KW)
    assert merged.config.seeds == (0, 1, 2)
    assert int(merged["n_devices"]) == 2
    for k in single.metrics:
        assert merged[k].shape == single[k].shape == (2, 3, 7)
        np.testing.assert_allclose(merged[k], single[k], rtol=1e-5, atol=1e-7, err_msg=k)
    np.testing.assert_array_equal(merged["n_train"], single["n_train"])
    np.testing.assert_array_equal(merged["t_train"], single["t_train"])


def test_merge_checks_the_shards_configuration():
    """Shards must share every config field but seeds, and hold disjoint seeds (no jax.distributed needed)."""
    import dataclasses

    from grokclocks.sim.modular import train_modular

    one = train_modular("embedding_mlp", seeds=(0,), p=5, train_frac=0.6, model_kwargs=dict(d_embed=4, d_hidden=8),
                        lr=3e-3, weight_decay=[0.0, 1.0], steps=8, record_every=2, n_chunks=4)
    other = dataclasses.replace(one, config=dataclasses.replace(one.config, seeds=(1,)))
    merged = merge_seed_shards([one, other])
    assert merged.config.seeds == (0, 1) and merged["acc_test"].shape == (2, 2, 5)
    assert merged["diverged"].shape == merged["diverged_step"].shape == (2, 2)
    with pytest.raises(DomainError, match="disjoint seeds"):
        merge_seed_shards([one, one])
    wrong = dataclasses.replace(other, config=dataclasses.replace(other.config, lr=(1e-2,)))
    with pytest.raises(DomainError, match=r"except seeds; lr: shard 0 \(0.003,\), shard 1 \(0.01,\)"):
        merge_seed_shards([one, wrong])
