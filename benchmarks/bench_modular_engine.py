"""Speed of the modular-arithmetic engine against honest baselines, measured in one run (issue 13).

Programs, all full batch, one optimiser step per epoch, the same model, optimiser, initial
parameters (``PRNGKey(seed)``) and split (``random_split_mask(p, seed, ...)``) for a given seed:

* ``engine`` -- :func:`grokclocks.sim.modular.train_modular`, ``n`` seeds in one compiled program,
  the whole call timed (set-up, the step-0 record, the scan, every record and the final state
  copied to the host); metrics (train/test loss and accuracy, parameter norm) every ``record_every``
  epochs.
* ``plain_scan`` -- a plain ``jax.jit(jax.vmap(train))`` with ``train`` a ``lax.scan`` over blocks of
  ``record_every`` epochs, each block a ``lax.scan`` of optax steps and one test-accuracy
  evaluation, written here with nothing from the engine (the model in its textbook form:
  ``(E[a] + E[b]) W1`` for the MLP, ``(W[a] + W[M + b])^2 V`` for Tian's net); the jitted call and
  the copy of its outputs to the host are timed.
* ``torch_eager`` (and ``torch_compile`` where ``torch.compile`` works) -- one seed, a Python loop
  over epochs as the papers' code trains, evaluating train/test loss and accuracy every
  ``record_every`` epochs (``torch.no_grad``); timed over >= 1000 epochs after 20 warm-up epochs.
  PyTorch is optional: without it these rows say why they are missing.
* ``engine_bf16`` -- the engine with ``compute_dtype="bfloat16"`` (mixed precision); only its
  grokking steps are compared here (its speed matters on a GPU).

Speed (metrics recorded every 100 epochs, as in the issue's table): for each seed count the engine
and the plain scan are compiled, then timed alternately
``--repeats`` times in the same process (median, min, max reported; ratio = median / median).
Grokking: the first recorded epoch with test accuracy >= 0.99 of every program on the same seeds,
summarised (fraction grokked, median, quartiles) and compared pairwise with the engine (median of
the per-seed differences, two-sample Kolmogorov-Smirnov p-value), so a faster program is shown to
train the same thing.

Run (GPU, the issue's defaults)::

    python benchmarks/bench_modular_engine.py --scale gpu --config both

CPU (2 cores: a reduced seed list and epoch count at the canonical size, the grokking statistics
on a reduced config)::

    python benchmarks/bench_modular_engine.py --scale cpu --config both

Quick GPU mode, part (b) of a GPU window (``benchmarks/gpu_session.sh``): the canonical config only; a PyTorch
eager loop of 1000 timed epochs first, then the engine and the plain ``jit(vmap(scan))`` at 1, 16 and 256 seeds
(500 timed epochs a call, 3 repeats, alternating), all in one run; no measurement starts after ``--max-seconds``
and each is saved as it finishes (``benchmarks/results/modular_engine_gpu_quick.json``)::

    python benchmarks/bench_modular_engine.py --scale gpu-quick --max-seconds 110

Writes ``benchmarks/results/modular_engine_<cpu|gpu>.json``; ``benchmarks/plot_modular_engine.py``
turns it into the figure of ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: Model + optimiser configurations (``n_train`` = an exact training-set size, else ``train_frac``).
CONFIGS = {
    # spec clocks:appB, the canonical config
    "canonical": dict(model="embedding_mlp", p=97, train_frac=0.3, model_kwargs=dict(d_embed=128, d_hidden=256),
                      optimizer="adamw", lr=1e-3, betas=(0.9, 0.98), weight_decay=1.0, loss="ce"),
    # the CPU grokking config of verify/modular (groks in 1300-2550 epochs on 8 seeds)
    "canonical_small": dict(model="embedding_mlp", p=31, train_frac=0.5, model_kwargs=dict(d_embed=64, d_hidden=128),
                            optimizer="adamw", lr=3e-3, betas=(0.9, 0.98), weight_decay=1.0, loss="ce"),
    # spec repulsion:setup (recipe R3)
    "tian": dict(model="tian_quadratic", p=71, n_train=2016, model_kwargs=dict(K=2048), optimizer="adam", lr=1e-3,
                 betas=(0.9, 0.999), weight_decay=2e-4, loss="centred_mse"),
    # spec R2, the CPU recipe of verify/repulsion
    "tian_small": dict(model="tian_quadratic", p=41, n_train=840, model_kwargs=dict(K=512), optimizer="adam",
                       lr=1e-3, betas=(0.9, 0.999), weight_decay=2e-4, loss="centred_mse"),
}

#: What each scale measures: timing config, seed counts, timed epochs; grokking config, seeds, epochs.
SCALES = {
    "gpu": {
        "canonical": dict(timing=("canonical", (1, 4, 16, 64, 256, 1024), 1000), grok=("canonical", 64, 5000),
                          record_every=100, grok_record_every=100, torch_seeds=4, run_chunks=(256,),
                          scale_out=("canonical", 1024, (0.1, 0.3, 1.0, 3.0), 200)),
        "tian": dict(timing=("tian", (1, 4, 16, 64, 256, 1024), 200), grok=("tian", 64, 1000),
                     record_every=100, grok_record_every=10, torch_seeds=4, run_chunks=(16, 64)),
    },
    "cpu": {
        # 300 timed epochs (3 records) per call: the per-call costs (the step-0 record, host copies) are
        # about 1 % of a 100-epoch call at 1 seed, as large as the differences measured
        "canonical": dict(timing=("canonical", (1, 4, 16), 300), grok=("canonical_small", 16, 3000),
                          record_every=100, grok_record_every=100, torch_seeds=4, run_chunks=(),
                          scale_out=("canonical_small", 1024, (0.3, 1.0), 50)),
        "tian": dict(timing=("tian", (1, 2, 4), 300), grok=("tian_small", 8, 500),
                     record_every=100, grok_record_every=10, torch_seeds=2, run_chunks=(),
                     torch_on_timing_config=False),
    },
}

# The quick mode of a GPU window (benchmarks/gpu_session.sh): the canonical config only, the engine and the plain
# jit(vmap(scan)) at 1, 16 and 256 seeds (500 timed epochs a call, 3 repeats), and a PyTorch eager loop of 1000
# timed epochs on the same config, in one run of at most GPU_BENCH_S = 120 s (--max-seconds). "cpu-quick" is the
# same control flow at a CPU size, for testing the script without a GPU.
# engine_program: the engine's compiled program also timed alone (per-call vs per-step work; 2026-11-27 H100 at 1
# seed: the whole engine call 67 ms against the plain scan's 41 ms for 500 epochs).
SCALES["gpu-quick"] = {"canonical": dict(timing=("canonical", (1, 16, 256), 500), grok=None, record_every=100,
                                         run_chunks=(), torch_timing=True, engine_program=True)}
SCALES["cpu-quick"] = {"canonical": dict(timing=("canonical", (1, 2), 100), grok=None, record_every=100,
                                         run_chunks=(), torch_timing=True, engine_program=True)}
QUICK_PARTS = "torch_timing,timing"

TEST_LEVEL = 0.99
TORCH_WARMUP = 20
_T0 = time.perf_counter()


def _cfg(name: str) -> dict:
    return dict(CONFIGS[name])


def model_flops_per_seed_epoch(name: str, record_every: int) -> float:
    """Matmul FLOPs of one step in the textbook form (forward + backward = 3 x the forward products on
    the training rows) plus the amortised test evaluation (one forward on the test rows per record)."""
    c = CONFIGS[name]
    p = c["p"]
    n_tr = c["n_train"] if "n_train" in c else int(c["train_frac"] * p * p)
    if c["model"] == "embedding_mlp":
        fwd_row = 2 * (c["model_kwargs"]["d_embed"] * c["model_kwargs"]["d_hidden"] + c["model_kwargs"]["d_hidden"] * p)
    else:
        fwd_row = 2 * c["model_kwargs"]["K"] * p  # first layer: a gather of two rows of W
    return 3.0 * n_tr * fwd_row + (p * p - n_tr) * fwd_row / record_every


def _splits(name: str, seeds: tuple[int, ...]) -> np.ndarray:
    from grokclocks.sim.data import random_split_mask

    c = CONFIGS[name]
    kw = dict(n_train=c["n_train"]) if "n_train" in c else dict(frac=c["train_frac"])
    return np.atleast_2d(random_split_mask(c["p"], list(seeds), **kw))


def _init(name: str, seed: int) -> dict:
    import jax

    from grokclocks.sim import models

    c = CONFIGS[name]
    key = jax.random.PRNGKey(seed)
    if c["model"] == "embedding_mlp":
        return models.embedding_mlp_init(key, c["p"], **c["model_kwargs"])
    return models.tian_mlp_init(key, c["p"], c["model_kwargs"]["K"])


def t_test(acc: np.ndarray, times: np.ndarray) -> np.ndarray:
    """First recorded epoch with test accuracy >= 0.99 along the last axis (NaN = never)."""
    hit = np.asarray(acc) >= TEST_LEVEL
    return np.where(hit.any(-1), np.asarray(times, float)[np.argmax(hit, -1)], np.nan)


# ------------------------------------------------------------------------------------- engine


def engine_run(name: str, seeds: tuple[int, ...], epochs: int, record_every: int, **extra) -> tuple[float, dict]:
    """Wall time of one whole ``train_modular`` call and its test-accuracy records."""
    from grokclocks.sim.modular import train_modular

    c = _cfg(name)
    model, p = c.pop("model"), c.pop("p")
    if "n_train" in c:
        c.pop("n_train")
        c["train_mask"] = _splits(name, seeds)
    kw = dict(c, seeds=seeds, steps=epochs, record_every=record_every, n_chunks=1, devices=None, **extra)
    t0 = time.perf_counter()
    run = train_modular(model, p, **kw)
    dt = time.perf_counter() - t0
    return dt, {"times": run.times, "acc_test": run["acc_test"], "acc_train": run["acc_train"],
                "run_chunk": int(run.extras.get("run_chunk", -1))}


def engine_program(name: str, seeds: tuple[int, ...], epochs: int, record_every: int):
    """The compiled program one ``train_modular`` call runs (its record scan, ``n_chunks=1``), called alone on that
    call's initial state and inputs; returns ``run() -> (seconds, None)`` (the call and the copy of its records to
    the host).  Against the whole call (``engine``) it separates the engine's per-call work (argument checks,
    inputs, initialisation, the step-0 record, results on the host) from its per-step work; against
    ``plain_scan`` it compares the two steps alone.  The program is captured by wrapping the engine's cache of
    compiled programs (``grokclocks.sim.train._engine._compiled_chunk``) for one call."""
    import jax

    from grokclocks.sim.train import _engine

    seen: dict = {}
    chunk, locked = _engine._compiled_chunk, _engine._simulate_locked

    def spy_chunk(*a, **k):
        seen["program"] = chunk(*a, **k)
        return seen["program"]

    def spy_locked(step, metrics, state0, inputs, **k):
        seen["args"] = (state0, inputs)
        return locked(step, metrics, state0, inputs, **k)

    _engine._compiled_chunk, _engine._simulate_locked = spy_chunk, spy_locked
    try:
        engine_run(name, seeds, epochs, record_every)
    finally:
        _engine._compiled_chunk, _engine._simulate_locked = chunk, locked
    program, (state0, inputs) = seen["program"], seen["args"]

    def run():
        t0 = time.perf_counter()
        jax.device_get(program(state0, inputs))
        return time.perf_counter() - t0, None

    return run


# --------------------------------------------------------------------------------- plain scan


def plain_scan(name: str, seeds: tuple[int, ...], epochs: int, record_every: int):
    """A plain ``jit(vmap(lax.scan))`` of the same model and optimiser; returns ``run() -> (seconds, records)``."""
    import jax
    import jax.numpy as jnp
    import optax

    c = CONFIGS[name]
    p = c["p"]
    a, b = np.divmod(np.arange(p * p), p)
    X = jnp.asarray(np.stack([a, b], 1), jnp.int32)
    Y = jnp.asarray((a + b) % p, jnp.int32)
    masks = _splits(name, seeds)
    train_idx = jnp.asarray(np.stack([np.flatnonzero(m) for m in masks]), jnp.int32)
    test_idx = jnp.asarray(np.stack([np.flatnonzero(~m) for m in masks]), jnp.int32)
    params = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *[_init(name, s) for s in seeds])
    b1, b2 = c["betas"]
    if c["model"] == "embedding_mlp":
        opt = optax.adamw(c["lr"], b1=b1, b2=b2, weight_decay=c["weight_decay"])

        def apply(P, t):
            return jax.nn.relu((P["E"][t[:, 0]] + P["E"][t[:, 1]]) @ P["W1"] + P["b1"]) @ P["W2"] + P["b2"]

        def loss(P, i):
            return optax.softmax_cross_entropy_with_integer_labels(apply(P, X[i]), Y[i]).mean()
    else:
        opt = optax.chain(optax.add_decayed_weights(c["weight_decay"]), optax.adam(c["lr"], b1=b1, b2=b2))

        def apply(P, t):
            return jnp.square(P["W"][t[:, 0]] + P["W"][p + t[:, 1]]) @ P["V"]

        def loss(P, i):
            out = apply(P, X[i])
            zm = out - out.mean(1, keepdims=True)
            return jnp.mean(jnp.sum(jnp.square(zm - (jax.nn.one_hot(Y[i], p) - 1.0 / p)), 1))

    def train(P, tr, te):
        def step(carry, _):
            P, o = carry
            u, o = opt.update(jax.grad(loss)(P, tr), o, P)
            return (optax.apply_updates(P, u), o), None

        def block(carry, _):
            carry, _ = jax.lax.scan(step, carry, None, length=record_every)
            return carry, jnp.mean(jnp.argmax(apply(carry[0], X[te]), -1) == Y[te])

        return jax.lax.scan(block, (P, opt.init(P)), None, length=epochs // record_every)

    fn = jax.jit(jax.vmap(train))
    times = np.arange(record_every, epochs + 1, record_every)

    def run():
        t0 = time.perf_counter()
        out = jax.device_get(fn(params, train_idx, test_idx))
        return time.perf_counter() - t0, {"times": times, "acc_test": np.asarray(out[1])}

    return run


# -------------------------------------------------------------------------------------- torch


def torch_run(name: str, seed: int, epochs: int, record_every: int, device: str, compile_model: bool = False) -> dict:
    """One seed in a plain PyTorch loop from the same initial parameters and split; timed after warm-up."""
    import torch
    import torch.nn as nn

    c = CONFIGS[name]
    p = c["p"]
    dev = torch.device(device)
    a, b = np.divmod(np.arange(p * p), p)
    X = torch.tensor(np.stack([a, b], 1), device=dev)
    Y = torch.tensor((a + b) % p, device=dev)
    mask = _splits(name, (seed,))[0]
    tr = torch.tensor(np.flatnonzero(mask), device=dev)
    te = torch.tensor(np.flatnonzero(~mask), device=dev)
    init = {k: torch.tensor(np.asarray(v), device=dev) for k, v in _init(name, seed).items()}
    b1, b2 = c["betas"]
    if c["model"] == "embedding_mlp":
        d_e, d_h = c["model_kwargs"]["d_embed"], c["model_kwargs"]["d_hidden"]

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.E = nn.Embedding(p, d_e)
                self.l1 = nn.Linear(d_e, d_h)
                self.l2 = nn.Linear(d_h, p)
                with torch.no_grad():
                    self.E.weight.copy_(init["E"])
                    self.l1.weight.copy_(init["W1"].T)
                    self.l1.bias.copy_(init["b1"])
                    self.l2.weight.copy_(init["W2"].T)
                    self.l2.bias.copy_(init["b2"])

            def forward(self, x):
                return self.l2(torch.relu(self.l1(self.E(x[:, 0]) + self.E(x[:, 1]))))

        net = Net().to(dev)
        opt = torch.optim.AdamW(net.parameters(), lr=c["lr"], betas=(b1, b2), weight_decay=c["weight_decay"])

        def loss_fn(out, y):
            return nn.functional.cross_entropy(out, y)
    else:
        K = c["model_kwargs"]["K"]

        class Net(nn.Module):  # Tian's code: Linear(2M, K, bias=False) on one-hots, sigma = x^2, Linear(K, M)
            def __init__(self):
                super().__init__()
                self.W = nn.Linear(2 * p, K, bias=False)
                self.V = nn.Linear(K, p, bias=False)
                with torch.no_grad():
                    self.W.weight.copy_(init["W"].T)
                    self.V.weight.copy_(init["V"].T)

            def forward(self, x):
                onehot = torch.cat([nn.functional.one_hot(x[:, 0], p), nn.functional.one_hot(x[:, 1], p)], 1).float()
                return self.V(self.W(onehot) ** 2)

        net = Net().to(dev)
        opt = torch.optim.Adam(net.parameters(), lr=c["lr"], betas=(b1, b2), weight_decay=c["weight_decay"])

        def loss_fn(out, y):
            zm = out - out.mean(1, keepdim=True)
            return ((zm - (nn.functional.one_hot(y, p).float() - 1.0 / p)) ** 2).sum(1).mean()

    model = torch.compile(net) if compile_model else net
    Xtr, Ytr, Xte, Yte = X[tr], Y[tr], X[te], Y[te]

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def evaluate():
        with torch.no_grad():
            out_tr, out_te = model(Xtr), model(Xte)
            return (loss_fn(out_tr, Ytr).item(), loss_fn(out_te, Yte).item(),
                    (out_tr.argmax(1) == Ytr).float().mean().item(), (out_te.argmax(1) == Yte).float().mean().item())

    acc, t_start = [], None
    for ep in range(1, epochs + 1):
        if ep == TORCH_WARMUP + 1:
            sync()
            t_start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss_fn(model(Xtr), Ytr).backward()
        opt.step()
        if ep % record_every == 0:
            acc.append(evaluate()[3])
    sync()
    dt = time.perf_counter() - t_start
    timed = epochs - TORCH_WARMUP
    return {"seed": seed, "epochs_timed": timed, "seconds": dt, "epochs_per_s": timed / dt,
            "times": np.arange(record_every, epochs + 1, record_every), "acc_test": np.asarray(acc),
            "torch": torch.__version__, "threads": torch.get_num_threads(), "device": device}


def torch_timing(name: str, epochs: int, record_every: int, device: str) -> dict:
    """The PyTorch eager loop on the timing config: one seed, `epochs` timed after the warm-up (or why it is missing)."""
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        return {"skipped": f"PyTorch not installed ({exc}); pip install torch to measure this baseline"}
    n = epochs + TORCH_WARMUP
    try:
        r = torch_run(name, 0, n - n % record_every + record_every, record_every, device)
    except Exception as exc:  # noqa: BLE001 -- recorded, the other measurements go on
        return {"torch_eager_timing_config": {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}}
    rec = {k: v for k, v in r.items() if k not in ("times", "acc_test")}
    rec["config"] = name
    return {"torch_eager_timing_config": rec}


# ---------------------------------------------------------------------------------- summaries


def spread(seconds: list[float], seed_epochs: int) -> dict:
    thr = sorted(seed_epochs / s for s in seconds)
    return {"seed_epochs_per_s": statistics.median(thr), "min": thr[0], "max": thr[-1], "repeats": len(thr),
            "seconds": seconds}


def grok_summary(t: np.ndarray, ref: np.ndarray | None = None) -> dict:
    """Fraction grokked, median and quartiles of t_test; vs ``ref`` (same seeds): paired differences, KS p."""
    t = np.asarray(t, float)
    ok = t[np.isfinite(t)]
    out = {"n_seeds": int(t.size), "grokked": int(ok.size),
           "t_test": [None if not np.isfinite(x) else float(x) for x in t]}
    if ok.size:
        q1, med, q3 = np.percentile(ok, [25, 50, 75])
        out.update(median=float(med), q1=float(q1), q3=float(q3), mean=float(ok.mean()), sd=float(ok.std(ddof=0)))
    if ref is not None:
        ref = np.asarray(ref, float)[: t.size]
        both = np.isfinite(t) & np.isfinite(ref)
        d = t[both] - ref[both]
        out["vs_engine"] = {
            "paired_seeds": int(both.sum()),
            "median_difference": float(np.median(d)) if d.size else None,
            "median_abs_difference": float(np.median(np.abs(d))) if d.size else None,
            "grokked_differently": int((np.isfinite(t) != np.isfinite(ref)).sum()),
        }
        if ok.size >= 2 and np.isfinite(ref).sum() >= 2:
            from scipy.stats import ks_2samp

            out["vs_engine"]["ks_pvalue"] = float(ks_2samp(ok, ref[np.isfinite(ref)]).pvalue)
    return out


def _fmt_grok(label: str, g: dict) -> str:
    s = f"{label:>14}: grokked {g['grokked']}/{g['n_seeds']}"
    if "median" in g:
        s += f", t_test median {g['median']:.0f} [{g['q1']:.0f}, {g['q3']:.0f}]"
    v = g.get("vs_engine")
    if v and v["median_difference"] is not None:
        s += (f"; vs engine: median diff {v['median_difference']:+.0f}, median |diff| {v['median_abs_difference']:.0f}"
              f", grokked differently {v['grokked_differently']}")
        if "ks_pvalue" in v:
            s += f", KS p = {v['ks_pvalue']:.2f}"
    return s


# ---------------------------------------------------------------------------------- scale out


def scale_out(name: str, n_seeds: int, weight_decays: tuple[float, ...], epochs: int, record_every: int) -> dict:
    """``n_seeds`` x a weight-decay grid in one ``train_modular`` call (``run_chunk="auto"``): throughput,
    the run chunk chosen and the memory estimate behind it."""
    from grokclocks.sim import train
    from grokclocks.sim.modular import train_modular

    c = _cfg(name)
    model, p = c.pop("model"), c.pop("p")
    c.pop("weight_decay")
    seeds = tuple(range(n_seeds))
    if "n_train" in c:
        c.pop("n_train")
        c["train_mask"] = _splits(name, seeds)
    kw = dict(c, seeds=seeds, weight_decay=list(weight_decays), steps=epochs, record_every=record_every,
              n_chunks=1, devices=None)
    t0 = time.perf_counter()
    run = train_modular(model, p, **kw)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    run = train_modular(model, p, **kw)
    dt = time.perf_counter() - t0
    n_runs = n_seeds * len(weight_decays)
    return {"config": name, "n_seeds": n_seeds, "weight_decay": list(weight_decays), "n_runs": n_runs,
            "epochs": epochs, "record_every": record_every, "run_chunk": int(run["run_chunk"]),
            "free_device_memory_bytes": train.free_device_memory(), "memory_fraction": train.MEMORY_FRACTION,
            "seconds_first_call_incl_compile": first, "seconds": dt, "seed_epochs_per_s": n_runs * epochs / dt,
            "final_test_acc_median_per_wd": np.median(run["acc_test"][..., -1], axis=-1).tolist()}


# --------------------------------------------------------------------------------------- main


def bench_config(key: str, plan: dict, args: argparse.Namespace, torch_dev: str, save=lambda part: None) -> dict:
    """Every measurement of one config; ``save(partial_result)`` is called after each step, so a run
    stopped by a time limit keeps what it measured."""
    rec = plan["record_every"]
    tname, seed_counts, epochs = plan["timing"]
    if args.seeds:
        seed_counts = tuple(int(s) for s in args.seeds.split(","))
    if args.epochs:
        epochs = args.epochs
    epochs = max(rec, epochs - epochs % rec)
    out: dict = {"timing_config": tname, "config": CONFIGS[tname], "epochs": epochs, "record_every": rec,
                 "model_flops_per_seed_epoch": model_flops_per_seed_epoch(tname, rec), "timing": []}
    parts = set(args.parts.split(","))

    def out_of_time(what: str) -> bool:
        """--max-seconds: True (and recorded) when no new measurement may start."""
        if args.max_seconds and time.perf_counter() - _T0 > args.max_seconds:
            out.setdefault("stopped", []).append(f"{what}: not started, {args.max_seconds:.0f} s limit reached")
            print(f"{key}: {what} not started ({args.max_seconds:.0f} s limit)", flush=True)
            save(out)
            return True
        return False

    if "torch_timing" in parts and plan.get("torch_timing"):
        out["torch"] = torch_timing(tname, args.torch_epochs, rec, torch_dev)
        r = out["torch"].get("torch_eager_timing_config", {})
        if "epochs_per_s" in r:
            print(f"{key}: torch_eager ({tname}, 1 seed, {r['epochs_timed']} epochs timed): {r['epochs_per_s']:.1f} "
                  "epochs/s", flush=True)
        else:
            print(f"{key}: torch_eager not measured: {out['torch'].get('skipped') or r.get('error')}", flush=True)
        save(out)
    if "scale_out" in parts and plan.get("scale_out"):
        sname, sn, swd, sep = plan["scale_out"]
        sep = args.scale_out_epochs or sep
        out["scale_out"] = scale_out(sname, args.scale_out_seeds or sn, swd, sep, min(rec, sep))
        so = out["scale_out"]
        print(f"{key}: scale out {so['n_runs']} runs ({so['n_seeds']} seeds x wd {so['weight_decay']}, {so['config']}), "
              f"run_chunk {so['run_chunk']}: {so['seed_epochs_per_s']:.1f} seed-epochs/s", flush=True)
    for n in seed_counts if "timing" in parts else ():
        if out_of_time(f"timing at {n} seeds"):
            break
        seeds = tuple(range(n))
        row: dict = {"n_seeds": n}
        progs: dict = {}
        try:
            progs["plain_scan"] = plain_scan(tname, seeds, epochs, rec)
            progs["plain_scan"]()  # compile
        except Exception as exc:  # e.g. out of device memory at 1024 seeds
            row["plain_scan"] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            progs.pop("plain_scan", None)
        variants = {"engine": {}}
        for ch in plan["run_chunks"]:
            if ch < n:
                variants[f"engine_run_chunk_{ch}"] = {"run_chunk": ch}
        for label, extra in variants.items():
            try:
                engine_run(tname, seeds, epochs, rec, **extra)  # compile
                progs[label] = lambda extra=extra: engine_run(tname, seeds, epochs, rec, **extra)
            except Exception as exc:
                row[label] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        if plan.get("engine_program") and "engine" in progs:
            try:
                progs["engine_program"] = engine_program(tname, seeds, epochs, rec)
                progs["engine_program"]()
            except Exception as exc:
                row["engine_program"] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
                progs.pop("engine_program", None)
        secs: dict = {k: [] for k in progs}
        for r in range(args.repeats):
            order = list(progs) if r % 2 == 0 else list(progs)[::-1]
            for k in order:
                dt, rec_ = progs[k]()
                secs[k].append(dt)
                if k == "engine":
                    row.setdefault("engine_run_chunk", rec_["run_chunk"])
        for k, s in secs.items():
            row[k] = spread(s, n * epochs)
            row[k]["model_flop_per_s"] = row[k]["seed_epochs_per_s"] * out["model_flops_per_seed_epoch"]
        if "engine" in secs and "plain_scan" in secs:
            row["engine_over_plain_scan"] = row["engine"]["seed_epochs_per_s"] / row["plain_scan"]["seed_epochs_per_s"]
            row["paired_ratios"] = paired_ratios(secs["plain_scan"], secs["engine"])
        if "engine_program" in secs:
            med = {k: statistics.median(secs[k]) for k in ("engine", "engine_program", "plain_scan") if k in secs}
            row["engine_per_call_s"] = med["engine"] - med["engine_program"]  # the engine's work outside its program
            if "plain_scan" in med:
                row["engine_program_over_plain_scan"] = med["plain_scan"] / med["engine_program"]
        if "epochs_per_s" in out.get("torch", {}).get("torch_eager_timing_config", {}) and "engine" in row:
            row["engine_over_torch_eager"] = (row["engine"]["seed_epochs_per_s"]
                                              / out["torch"]["torch_eager_timing_config"]["epochs_per_s"])
        out["timing"].append(row)
        save(out)
        msg = f"{key}: {n:5d} seeds"
        for k in progs:
            msg += f" | {k} {row[k]['seed_epochs_per_s']:9.1f} [{row[k]['min']:.1f}, {row[k]['max']:.1f}]"
        if "engine_over_plain_scan" in row:
            msg += f" | engine/plain {row['engine_over_plain_scan']:.2f}x"
        if "engine_per_call_s" in row:
            msg += f" | engine per call {1e3 * row['engine_per_call_s']:.1f} ms"
        print(msg, flush=True)

    if "grok" not in parts or not plan.get("grok"):
        return out
    # ---- grokking-step distributions, the same seeds for every program
    gname, n_grok, g_epochs = plan["grok"]
    rec = plan["grok_record_every"]
    if args.grok_seeds:
        n_grok = args.grok_seeds
    if args.grok_epochs:
        g_epochs = args.grok_epochs - args.grok_epochs % rec
    seeds = tuple(range(n_grok))
    grok: dict = {"config": gname, "epochs": g_epochs, "record_every": rec, "level": TEST_LEVEL}
    _, eng = engine_run(gname, seeds, g_epochs, rec)
    t_eng = t_test(eng["acc_test"], eng["times"])
    grok["engine"] = grok_summary(t_eng)
    _, bf = engine_run(gname, seeds, g_epochs, rec, compute_dtype="bfloat16")
    grok["engine_bf16"] = grok_summary(t_test(bf["acc_test"], bf["times"]), t_eng)
    _, pl = plain_scan(gname, seeds, g_epochs, rec)()
    grok["plain_scan"] = grok_summary(t_test(pl["acc_test"], pl["times"]), t_eng)
    out["grokking"] = grok
    save(out)
    print(f"{key}: grokking ({gname}, {n_grok} seeds, {g_epochs} epochs, record every {rec})")
    for k in ("engine", "engine_bf16", "plain_scan"):
        print(_fmt_grok(k, grok[k]), flush=True)

    # ---- PyTorch: timing (>= 1000 epochs after warm-up) and grokking steps on the first seeds
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        out["torch"] = {"skipped": f"PyTorch not installed ({exc}); pip install torch to measure this baseline"}
        print(f"{key}: torch baseline skipped (not installed)")
    else:
        t_epochs = max(g_epochs, args.torch_epochs + TORCH_WARMUP)
        t_epochs -= t_epochs % rec
        ts: dict = {}
        for mode in ("eager", "compile"):
            n_t = (args.torch_seeds or plan["torch_seeds"]) if mode == "eager" else 1
            runs = []
            try:
                for s in range(n_t):
                    runs.append(torch_run(gname, s, t_epochs, rec, torch_dev, compile_model=mode == "compile"))
            except Exception as exc:  # torch.compile needs a working compiler toolchain
                ts[f"torch_{mode}"] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
                print(f"{key}: torch_{mode} failed: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                continue
            t_t = np.array([t_test(r["acc_test"], r["times"]) for r in runs])
            ts[f"torch_{mode}"] = {"config": gname, "epochs": t_epochs, "eval_every": rec,
                                   "epochs_per_s": statistics.median(r["epochs_per_s"] for r in runs),
                                   "runs": [{k: v for k, v in r.items() if k not in ("times", "acc_test")} for r in runs],
                                   "grokking": grok_summary(t_t, t_eng)}
            print(f"{key}: torch_{mode} ({gname}, 1 seed, {t_epochs - TORCH_WARMUP} epochs timed): "
                  f"{ts[f'torch_{mode}']['epochs_per_s']:.1f} epochs/s", flush=True)
            print(_fmt_grok(f"torch_{mode}", ts[f"torch_{mode}"]["grokking"]), flush=True)
            out["torch"] = ts
            save(out)
        if gname != tname and plan.get("torch_on_timing_config", True):  # time torch on the timing config too
            for mode in ("eager",):
                try:
                    r = torch_run(tname, 0, args.torch_epochs + TORCH_WARMUP, plan["record_every"], torch_dev)
                    ts[f"torch_{mode}_timing_config"] = {k: v for k, v in r.items() if k not in ("times", "acc_test")}
                    ts[f"torch_{mode}_timing_config"]["config"] = tname
                    print(f"{key}: torch_{mode} ({tname}, 1 seed, {args.torch_epochs} epochs timed): "
                          f"{r['epochs_per_s']:.1f} epochs/s", flush=True)
                except Exception as exc:
                    ts[f"torch_{mode}_timing_config"] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        out["torch"] = ts
        # the ratio only where PyTorch ran the timing config itself (not the reduced grokking config)
        ref_run = ts.get("torch_eager_timing_config") or (ts.get("torch_eager", {}) if gname == tname else {})
        ref = ref_run.get("epochs_per_s")
        if ref:
            for row in out["timing"]:
                if "engine" in row and "seed_epochs_per_s" in row["engine"]:
                    row["engine_over_torch_eager"] = row["engine"]["seed_epochs_per_s"] / ref
    out["grokking"] = grok
    return out


def paired_ratios(plain_seconds: list[float], engine_seconds: list[float]) -> list[float]:
    """Engine / plain throughput of each repeat (the two calls of a repeat run back to back)."""
    return [p / e for p, e in zip(plain_seconds, engine_seconds)]


def device_name() -> str:
    import jax

    d = jax.devices()[0]
    if d.platform == "cpu":
        from grokclocks.verification import _cpu_model

        return f"CPU: {_cpu_model()}, {os.cpu_count()} cores"
    return f"{d.platform.upper()}: {d.device_kind}"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", choices=tuple(SCALES), default=None,
                    help="seed counts / epochs / grokking configs (default: gpu on a GPU, else cpu)")
    ap.add_argument("--config", choices=("canonical", "tian", "both"), default="both")
    ap.add_argument("--seeds", default=None, help="override the seed counts, e.g. 1,16,64")
    ap.add_argument("--epochs", type=int, default=None, help="override the timed epochs per call")
    ap.add_argument("--repeats", type=int, default=3, help="timed calls per program and seed count (median)")
    ap.add_argument("--grok-seeds", type=int, default=None, help="override the number of grokking seeds")
    ap.add_argument("--grok-epochs", type=int, default=None, help="override the grokking epochs")
    ap.add_argument("--torch-seeds", type=int, default=None, help="override the PyTorch eager grokking seeds")
    ap.add_argument("--torch-epochs", type=int, default=1000, help="PyTorch epochs timed after warm-up")
    ap.add_argument("--device", choices=("cpu", "gpu"), default=None, help="JAX platform (default: JAX's default)")
    ap.add_argument("--parts", default="timing,grok,scale_out",
                    help="comma-separated subset of timing, grok (grokking steps and the PyTorch loops), scale_out")
    ap.add_argument("--scale-out-seeds", type=int, default=None, help="override the scale-out seed count")
    ap.add_argument("--scale-out-epochs", type=int, default=None, help="override the scale-out epochs")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="start no new measurement after this many seconds of the run (the quick GPU mode of "
                         "benchmarks/gpu_session.sh: 110); every finished measurement is saved as it finishes")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if args.scale in ("gpu-quick", "cpu-quick"):
        args.config = "canonical"
        if args.parts == "timing,grok,scale_out":
            args.parts = QUICK_PARTS
    if args.device:
        os.environ["JAX_PLATFORMS"] = "cuda" if args.device == "gpu" else "cpu"

    import jax

    on_gpu = jax.devices()[0].platform == "gpu"
    scale = args.scale or ("gpu" if on_gpu else "cpu")
    torch_dev = "cuda" if on_gpu else "cpu"
    names = ("canonical", "tian") if args.config == "both" else (args.config,)
    out = {"device": device_name(), "scale": scale, "jax": jax.__version__, "python": platform.python_version(),
           "command": "python benchmarks/bench_modular_engine.py " + " ".join(sys.argv[1:] if argv is None else argv),
           "results": {}}
    try:
        import optax

        out["optax"] = optax.__version__
    except ImportError:
        pass
    tag = ("gpu" if on_gpu else "cpu") + ("_quick" if scale.endswith("-quick") else "")
    path = Path(args.out) if args.out else ROOT / "benchmarks" / "results" / f"modular_engine_{tag}.json"
    path.parent.mkdir(parents=True, exist_ok=True)

    def save(name: str, part: dict) -> None:
        out["results"][name] = part
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(out, indent=1, default=_json_default) + "\n")
        os.replace(tmp, path)

    for name in names:
        save(name, bench_config(name, SCALES[scale][name], args, torch_dev, lambda part, n=name: save(n, part)))
    print(f"wrote {path}")
    return out


def _json_default(x):
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, tuple):
        return list(x)
    raise TypeError(type(x))


if __name__ == "__main__":
    main()
