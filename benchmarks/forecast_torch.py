"""An independent training code for the forecast calibration study: small grokking runs in plain PyTorch.

The calibration study (`forecast_calibration.py`) fits and checks the forecaster on runs of two training codes,
so that its numbers are not a property of one implementation: the project's JAX engine
(`grokclocks.sim.modular.train_modular`) and this file, written separately from the engine (its own data split,
models, initialisation, optimisers from `torch.optim`, evaluation and logging).  PyTorch is a dependency of the
study only (`pip install torch`, a CPU wheel suffices); nothing in the package imports this file.

What it trains (`RunSpec`): a binary operation mod p (a + b, a − b, a · b, a² + b², a / b with b ≠ 0) on a
random split of the pairs (train fraction f; the test set is the rest, evaluated in full or on a fixed random
subset of `n_eval` pairs); one of four models, a one-layer transformer with or without LayerNorm (tokens
a, b, "="; learned positions; read-out at "="), an MLP on summed token embeddings and an MLP on the two
one-hot vectors; AdamW (betas (0.9, 0.98) or (0.9, 0.999)), Adam with coupled L2 (`torch.optim.Adam(
weight_decay=...)`) or SGD with momentum 0.9 and coupled L2; full batch or mini-batches drawn without
replacement each epoch; metrics logged every `log_every` steps: train accuracy and loss (on the whole
training set, or on the current mini-batch as many loops log them), test accuracy and loss, the global
parameter norm.  A run stops 5 records after its test accuracy first reaches 0.99 (its t_test is then known;
nothing after it enters the study; the budget `steps` stays its horizon), which saves about a third of the CPU
time.  Each run is written as it finishes to `<cache>/<run id>.npz` (float32 curves, the spec as JSON, wall
and CPU seconds), so an interrupted session loses at most the run in progress.

Run from the repository root (`--part i/n` trains every n-th run, for several processes or sessions):

    python benchmarks/forecast_torch.py --scale cpu            # the study's runs (resumable)
    python benchmarks/forecast_torch.py --scale cpu --list     # the run list and the cache status
    python benchmarks/forecast_torch.py --scale gpu --device cuda
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CACHE = HERE / "results" / "forecast_runs_torch"
OPS = ("add", "sub", "mul", "sq_sum", "div")
MODELS = ("tf_ln", "tf_noln", "mlp_embed", "mlp_onehot")
OPTIMIZERS = ("adamw", "adam_l2", "sgd_mom")
TEST_LEVEL = 0.99


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One training run of this code (every field decides the run; `run_id` is a hash of them)."""

    split: str              # "fit" or "heldout" (held-out configurations: never seen by a fit)
    model: str              # one of MODELS
    op: str                 # one of OPS
    p: int                  # modulus (prime)
    train_frac: float       # fraction of the pairs in the training set
    optimizer: str          # one of OPTIMIZERS
    lr: float
    weight_decay: float
    beta2: float            # Adam's second-moment decay (unused by SGD)
    batch_size: int         # 0 = full batch
    steps: int              # the budget (horizon)
    log_every: int
    n_eval: int             # test pairs evaluated (0 = the whole test set)
    train_metric: str       # "full" (whole training set) or "batch" (the current mini-batch)
    width: int              # d_model of the transformer, embedding/hidden width of the MLPs
    seed: int
    warmup: int = 0

    @property
    def config(self) -> str:
        """The configuration: every field but the seed (runs that differ only in the seed share it)."""
        d = dataclasses.asdict(self)
        d.pop("seed")
        return hashlib.sha1(json.dumps(d, sort_keys=True).encode()).hexdigest()[:10]

    @property
    def run_id(self) -> str:
        return f"{self.split}_{self.model}_{self.op}_p{self.p}_{self.config}_s{self.seed}"


def _primes(lo: int, hi: int) -> list[int]:
    return [n for n in range(max(lo, 2), hi + 1) if all(n % k for k in range(2, int(n ** 0.5) + 1))]


def run_specs(scale: str = "cpu") -> list[RunSpec]:
    """The study's runs, drawn from the design space by a fixed generator (the list is the same everywhere).

    Configurations are drawn first, each with 2 seeds (3 at gpu scale), then every configuration whose hash
    falls in the last 45 % goes to the held-out split: the split is by configuration, never by seed.
    """
    rng = np.random.default_rng(20250101 if scale == "cpu" else 20250102)
    n_configs, seeds, max_p = (75, 2, 71) if scale == "cpu" else (400, 3, 113)
    specs = []
    for c in range(n_configs):
        model = MODELS[c % len(MODELS)]
        op = str(rng.choice(OPS, p=[0.35, 0.2, 0.15, 0.15, 0.15]))
        p = int(rng.choice(_primes(23, max_p)))
        opt = str(rng.choice(OPTIMIZERS, p=[0.7, 0.15, 0.15]))
        # train fractions down to the critical region (where seeds differ several-fold) and up to easy
        frac = float(np.round(rng.uniform(0.35, 0.8) if p >= 47 else rng.uniform(0.45, 0.85), 2))
        if opt == "sgd_mom":
            lr = float(np.exp(rng.uniform(math.log(5e-2), math.log(3e-1))))
            wd = float(np.exp(rng.uniform(math.log(1e-4), math.log(1e-3))))
        elif opt == "adam_l2":
            lr = float(np.exp(rng.uniform(math.log(1e-3), math.log(5e-3))))
            wd = float(np.exp(rng.uniform(math.log(1e-4), math.log(3e-3))))
        else:
            lr = float(np.exp(rng.uniform(math.log(2e-3), math.log(1e-2))))
            wd = float(rng.choice([0.0, 0.3, 0.5, 1.0, 2.0, 3.0], p=[0.08, 0.12, 0.15, 0.3, 0.2, 0.15]))
        beta2 = float(rng.choice([0.98, 0.999]))
        n_pairs = p * p if op != "div" else p * (p - 1)
        n_train = int(frac * n_pairs)
        batch = 0 if rng.uniform() < 0.6 or n_train <= 256 else int(rng.choice([128, 256, 512]))
        if scale == "cpu" and model.startswith("tf") and n_train > 1200 and batch == 0:
            batch = 512  # a full batch of > 2,000 sequences costs too much CPU time here
        log_every = int(rng.choice([1, 5, 10, 20, 50, 100], p=[0.05, 0.15, 0.3, 0.25, 0.15, 0.1]))
        n_eval = int(rng.choice([0, 0, 256, 1000]))
        train_metric = "batch" if batch and rng.uniform() < 0.5 else "full"
        width = int(rng.choice([32, 48])) if model.startswith("tf") else int(rng.choice([64, 128]))
        steps = int(rng.choice([2000, 3000, 4000])) if scale == "cpu" else int(rng.choice([10000, 20000]))
        if log_every == 1:
            steps = min(steps, 2000)
        if scale == "cpu" and model.startswith("tf"):
            steps = min(steps, 3000)  # a transformer step costs ~10-25 ms of CPU here
        steps = steps // log_every * log_every
        warmup = 10 if model.startswith("tf") and rng.uniform() < 0.5 else 0
        split = "heldout" if (int(hashlib.sha1(f"{scale}-{c}".encode()).hexdigest(), 16) % 100) >= 55 else "fit"
        for s in range(seeds):
            specs.append(RunSpec(split, model, op, p, frac, opt, lr, wd, beta2, batch, steps, log_every,
                                 n_eval, train_metric, width, s, warmup))
    return specs


# ------------------------------------------------------------------------------------------- the task


def task(spec: RunSpec):
    """(train inputs, train labels, test inputs, test labels) as int64 tensors; inputs are (a, b) pairs."""
    import torch

    p = spec.p
    a, b = np.meshgrid(np.arange(p), np.arange(p), indexing="ij")
    a, b = a.ravel(), b.ravel()
    if spec.op == "div":
        keep = b != 0
        a, b = a[keep], b[keep]
        y = (a * np.array([pow(int(x), p - 2, p) for x in b])) % p
    else:
        y = {"add": a + b, "sub": a - b, "mul": a * b, "sq_sum": a * a + b * b}[spec.op] % p
    g = np.random.default_rng(1000 + spec.seed)
    perm = g.permutation(a.size)
    n_train = int(spec.train_frac * a.size)
    tr, te = perm[:n_train], perm[n_train:]
    if spec.n_eval and spec.n_eval < te.size:
        te = te[:spec.n_eval]
    x = np.stack([a, b], axis=1)
    t = lambda v: torch.as_tensor(v, dtype=torch.long)  # noqa: E731
    return t(x[tr]), t(y[tr]), t(x[te]), t(y[te])


# ------------------------------------------------------------------------------------------- the models


def build_model(spec: RunSpec):
    import torch
    from torch import nn

    p, d = spec.p, spec.width

    class Transformer(nn.Module):
        """One block: attention (4 heads) and a ReLU MLP (4 d), pre-LayerNorm or none; read-out at "="."""

        def __init__(self, layernorm: bool):
            super().__init__()
            self.embed = nn.Embedding(p + 1, d)
            self.pos = nn.Parameter(torch.randn(3, d) / math.sqrt(d))
            self.attn = nn.MultiheadAttention(d, num_heads=4, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.ReLU(), nn.Linear(4 * d, d))
            self.ln1 = nn.LayerNorm(d) if layernorm else nn.Identity()
            self.ln2 = nn.LayerNorm(d) if layernorm else nn.Identity()
            self.lnf = nn.LayerNorm(d) if layernorm else nn.Identity()
            self.out = nn.Linear(d, p, bias=False)

        def forward(self, x):
            eq = torch.full((x.shape[0], 1), p, dtype=x.dtype, device=x.device)
            h = self.embed(torch.cat([x, eq], dim=1)) + self.pos
            q = self.ln1(h)
            h = h + self.attn(q, q, q, need_weights=False)[0]
            h = h + self.mlp(self.ln2(h))
            return self.out(self.lnf(h[:, -1]))

    class EmbedMLP(nn.Module):
        """Token embeddings of a and b summed, one ReLU hidden layer of 2 d, a linear read-out."""

        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(p, d)
            self.net = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, p))

        def forward(self, x):
            return self.net(self.embed(x[:, 0]) + self.embed(x[:, 1]))

    class OneHotMLP(nn.Module):
        """The two one-hot vectors concatenated (2 p inputs), one ReLU hidden layer of d, a linear read-out."""

        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(2 * p, d), nn.ReLU(), nn.Linear(d, p))

        def forward(self, x):
            oh = torch.cat([nn.functional.one_hot(x[:, 0], p), nn.functional.one_hot(x[:, 1], p)], dim=1)
            return self.net(oh.float())

    if spec.model == "tf_ln":
        return Transformer(True)
    if spec.model == "tf_noln":
        return Transformer(False)
    if spec.model == "mlp_embed":
        return EmbedMLP()
    return OneHotMLP()


def build_optimizer(spec: RunSpec, params):
    import torch

    if spec.optimizer == "adamw":
        return torch.optim.AdamW(params, lr=spec.lr, betas=(0.9, spec.beta2), weight_decay=spec.weight_decay)
    if spec.optimizer == "adam_l2":
        return torch.optim.Adam(params, lr=spec.lr, betas=(0.9, spec.beta2), weight_decay=spec.weight_decay)
    return torch.optim.SGD(params, lr=spec.lr, momentum=0.9, weight_decay=spec.weight_decay)


# ------------------------------------------------------------------------------------------- training


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def train(spec: RunSpec, device: str = "cpu") -> dict:
    """Train one run; return its curves (one value per logged step) and its cost."""
    import torch
    from torch import nn

    torch.manual_seed(spec.seed)
    xtr, ytr, xte, yte = (v.to(device) for v in task(spec))
    model = build_model(spec).to(device)
    opt = build_optimizer(spec, model.parameters())
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / spec.warmup)) if spec.warmup else None
    lossf = nn.CrossEntropyLoss()
    gen = torch.Generator(device="cpu").manual_seed(10_000 + spec.seed)
    n = xtr.shape[0]
    order, pos = None, n
    rec = {k: [] for k in ("steps", "train_acc", "train_loss", "test_acc", "test_loss", "weight_norm")}
    t0, c0 = time.perf_counter(), _cpu()
    diverged = -1

    def evaluate(step: int, bx, by, batch_logits):
        with torch.no_grad():
            if spec.train_metric == "batch" and batch_logits is not None:
                tl, ta = lossf(batch_logits, by).item(), (batch_logits.argmax(-1) == by).float().mean().item()
            else:
                lg = model(xtr)
                tl, ta = lossf(lg, ytr).item(), (lg.argmax(-1) == ytr).float().mean().item()
            lg = model(xte)
            vl, va = lossf(lg, yte).item(), (lg.argmax(-1) == yte).float().mean().item()
            norm = math.sqrt(sum(float((q.detach() ** 2).sum()) for q in model.parameters()))
        for k, v in zip(rec, (step, ta, tl, va, vl, norm)):
            rec[k].append(v)

    evaluate(0, None, None, None)
    after = None  # records since the test accuracy first reached the level
    for step in range(1, spec.steps + 1):
        if spec.batch_size:
            if pos + spec.batch_size > n:
                order, pos = torch.randperm(n, generator=gen).to(device), 0
            idx = order[pos:pos + spec.batch_size]
            pos += spec.batch_size
            bx, by = xtr[idx], ytr[idx]
        else:
            bx, by = xtr, ytr
        logits = model(bx)
        loss = lossf(logits, by)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        if not math.isfinite(loss.item()):
            diverged = step
            break
        if step % spec.log_every == 0:
            evaluate(step, bx, by, logits.detach())
            if after is None and rec["test_acc"][-1] >= TEST_LEVEL:
                after = 0
            elif after is not None:
                after += 1
                if after >= 5:
                    break
    out = {k: np.asarray(v, dtype=np.float64 if k == "steps" else np.float32) for k, v in rec.items()}
    out.update(wall_s=time.perf_counter() - t0, cpu_s=_cpu() - c0, diverged_step=diverged,
               n_train=int(n), n_test=int(xte.shape[0]))
    return out


def cache_file(spec: RunSpec, cache: Path = CACHE) -> Path:
    return cache / f"{spec.run_id}.npz"


def save(spec: RunSpec, out: dict, cache: Path = CACHE) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    path = cache_file(spec, cache)
    tmp = path.with_name(path.stem + ".tmp.npz")
    np.savez_compressed(tmp, spec=np.asarray(json.dumps(dataclasses.asdict(spec))),
                        **{k: np.asarray(v) for k, v in out.items()})
    os.replace(tmp, path)
    return path


def load(path: Path) -> tuple[RunSpec, dict]:
    with np.load(path, allow_pickle=False) as f:
        d = {k: f[k] for k in f.files}
    spec = RunSpec(**json.loads(str(d.pop("spec"))))
    return spec, d


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", default="cpu", choices=("cpu", "gpu"))
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--part", default="0/1", help="i/n: train every n-th run starting at i")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--limit", type=int, default=0, help="stop after this many new runs (0: all)")
    args = ap.parse_args(argv)
    cache = args.cache or (CACHE if args.scale == "cpu" else HERE / "results" / "forecast_runs_torch_gpu")
    specs = run_specs(args.scale)
    i, n = (int(v) for v in args.part.split("/"))
    mine = specs[i::n]
    if args.list:
        for s in specs:
            print(s.run_id, "cached" if cache_file(s, cache).exists() else "-")
        print(f"{len(specs)} runs, {sum(cache_file(s, cache).exists() for s in specs)} cached")
        return 0
    import torch

    torch.set_num_threads(args.threads)
    done = 0
    for k, spec in enumerate(mine):
        if cache_file(spec, cache).exists():
            continue
        out = train(spec, args.device)
        save(spec, out, cache)
        done += 1
        # outcomes of held-out runs are not printed: nobody looks at them before the evaluation
        what = (f"test acc max {float(np.max(out['test_acc'])):.3f}" if spec.split == "fit" else "held out")
        print(time.strftime("%H:%M:%S"), f"[{k + 1}/{len(mine)}] {spec.run_id}: {spec.steps} steps, "
              f"wall {out['wall_s']:.0f} s, cpu {out['cpu_s']:.0f} s, {what}", flush=True)
        if args.limit and done >= args.limit:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
