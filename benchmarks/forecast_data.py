"""The runs of the forecast calibration study: engine programs, the PyTorch runs, and one loader for both.

Two training codes produce the study's runs:

* the project's JAX engine (`grokclocks.sim.modular.train_modular`): programs drawn from a design space
  (`engine_programs`): the embedding MLP (spec `clocks:appB`), the one-layer transformer without LayerNorm
  (spec `uniformity:setup`) and a one-hot ReLU MLP (spec `repulsion:model`, with cross-entropy); a + b,
  a − b, a · b, a² + b² and a / b mod p (b ≠ 0 in the test set); p from 23 to 113; train fractions from
  the critical region up; AdamW with betas (0.9, 0.98) or (0.9, 0.999), Adam with coupled L2, plain GD
  with coupled L2; full batch or mini-batches; records every 2 to 100 steps.  One compiled program per
  (model, task, p, fraction, optimiser, batch, cadence), its weight decays, learning rates and seeds
  vmapped.  The study of the previous release (1,024 runs of the embedding MLP and the transformer, AdamW,
  full batch, p 23-43) is kept as extra engine data of the fitting split ("legacy" programs).
* an independent PyTorch code (`forecast_torch.py`): transformers with and without LayerNorm, embedding and
  one-hot MLPs, AdamW / Adam + L2 / SGD with momentum, full and mini-batches, logging every 1-100 steps,
  test sets of several sizes, train metrics on the whole training set or on the current batch.

Each engine program is cached as it finishes in `results/forecast_runs/<name>.npz` (accuracies as exact
counts, losses and norms as float32); `load_runs` turns both caches into `Run` records (one per run:
curves, the configuration label, the independent unit, the training code), the only form the study reads.

    python benchmarks/forecast_data.py --phase train --part 0/1     # train the missing engine programs
    python benchmarks/forecast_data.py --list                        # programs and cache status
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
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

ENGINE_CACHE = HERE / "results" / "forecast_runs"
TRAIN_LEVEL, TEST_LEVEL = 1.0, 0.99


@dataclasses.dataclass(frozen=True)
class Program:
    """One compiled engine program: a grid of weight decays x learning rates x seeds of one configuration."""

    split: str                      # "fit" or "heldout"
    model: str
    op: str
    p: int
    train_frac: float
    optimizer: str                  # "adamw", "adam" (coupled L2) or "sgd" (GD with coupled L2)
    beta2: float
    batch_size: int                 # 0 = full batch
    record_every: int
    steps: int
    weight_decay: tuple[float, ...]
    lr: tuple[float, ...]
    seeds: tuple[int, ...]
    model_kwargs: tuple[tuple[str, int], ...]
    warmup_steps: int = 0
    legacy: bool = False            # a program of the previous release's study (name kept for its cache)

    @property
    def name(self) -> str:
        if self.legacy:
            return f"{self.split}_{self.model}_p{self.p}_f{self.train_frac:g}"
        h = hashlib.sha1(repr(dataclasses.astuple(self)).encode()).hexdigest()[:8]
        return f"v2_{self.split}_{self.model}_{self.op}_p{self.p}_{self.optimizer}_{h}"

    @property
    def n_runs(self) -> int:
        return len(self.weight_decay) * len(self.lr) * len(self.seeds)


MLP = (("d_embed", 64), ("d_hidden", 128))
MLP_SMALL = (("d_embed", 32), ("d_hidden", 96))
TRANSFORMER = (("d_model", 32), ("n_heads", 2), ("d_head", 16), ("d_mlp", 64))


def legacy_programs() -> list[Program]:
    """The previous release's 20 programs (1,024 runs; cached), all used as engine fitting data now."""
    fit = [Program("fit", "embedding_mlp", "add", p, f, "adamw", 0.98, 0, 20, s, (0.0, 0.2, 0.5, 1.0, 2.0, 4.0),
                   (3e-3, 8e-3), tuple(range(5)), MLP, legacy=True)
           for p in (31, 37, 41) for f, s in ((0.6, 1600), (0.75, 1000), (0.9, 600))]
    held = [Program("heldout", "embedding_mlp", "add", p, f, "adamw", 0.98, 0, 20, s, (0.1, 0.35, 1.5, 3.0),
                    (5e-3, 1.2e-2), tuple(range(5, 12)), MLP, legacy=True)
            for p, f, s in ((29, 0.55, 1800), (29, 0.7, 1200), (29, 0.85, 800), (43, 0.7, 1200), (43, 0.85, 800),
                            (23, 0.7, 1200), (23, 0.78, 1000), (23, 0.85, 800))]
    held += [Program("heldout", "transformer", "add", 23, f, "adamw", 0.98, 0, 20, s, (0.5, 1.0, 2.0), (3e-3, 1e-2),
                     (5, 6, 7), TRANSFORMER, warmup_steps=10, legacy=True) for f, s in ((0.6, 2000), (0.8, 1600))]
    return fit + held


def _primes(lo: int, hi: int) -> list[int]:
    return [n for n in range(max(lo, 2), hi + 1) if all(n % k for k in range(2, int(n ** 0.5) + 1))]


def engine_programs(scale: str = "cpu") -> list[Program]:
    """The engine's new programs, drawn from the design space by a fixed generator; ~45 % held out by program."""
    rng = np.random.default_rng(7 if scale == "cpu" else 8)
    n_prog = 32 if scale == "cpu" else 160
    out = []
    for c in range(n_prog):
        model = str(rng.choice(["embedding_mlp", "transformer", "tian_relu"], p=[0.5, 0.3, 0.2]))
        op = str(rng.choice(["add", "sub", "mul", "sq_sum", "div"], p=[0.35, 0.15, 0.15, 0.15, 0.2]))
        big = rng.uniform() < (0.1 if scale == "cpu" else 0.4)
        p = int(rng.choice([97, 113])) if big else int(rng.choice(_primes(23, 61)))
        frac = float(np.round(rng.uniform(0.3, 0.7) if p >= 59 else rng.uniform(0.4, 0.85), 2))
        opt = str(rng.choice(["adamw", "adamw", "adam", "sgd"], p=[0.45, 0.2, 0.2, 0.15]))
        beta2 = 0.999 if (opt == "adam" and rng.uniform() < 0.5) or (opt == "adamw" and rng.uniform() < 0.35) else 0.98
        if opt == "adamw":
            wd = tuple(sorted(rng.choice([0.0, 0.3, 1.0, 2.0, 3.0], size=3, replace=False).tolist()))
            lo = float(np.exp(rng.uniform(math.log(2e-3), math.log(5e-3))))
            lr = (round(lo, 5), round(min(2.5 * lo, 1.2e-2), 5))
        elif opt == "adam":
            wd = (1e-4, 1e-3, 5e-3)
            lo = float(np.exp(rng.uniform(math.log(1.5e-3), math.log(4e-3))))
            lr = (round(lo, 5), round(2.5 * lo, 5))
        else:
            wd = (1e-3, 3e-3, 1e-2)
            lr = (0.3, 1.0)
        batch = 0 if rng.uniform() < 0.65 else int(rng.choice([128, 256, 512]))
        steps = int(rng.choice([2000, 3000, 4000])) if p < 59 else int(rng.choice([2000, 3000]))
        every = int(rng.choice([2, 5, 10, 20, 50, 100], p=[0.05, 0.15, 0.3, 0.3, 0.12, 0.08]))
        every = max(every, steps // 400)  # at most ~400 records per run (the cache stays small)
        steps = steps // every * every
        seeds = (0, 1) if p < 97 else (0,)
        kw = {"embedding_mlp": MLP_SMALL if rng.uniform() < 0.5 else MLP, "transformer": TRANSFORMER,
              "tian_relu": (("K", int(rng.choice([96, 192]))),)}[model]
        warm = 10 if model == "transformer" and rng.uniform() < 0.5 else 0
        split = "heldout" if int(hashlib.sha1(f"engine-{scale}-{c}".encode()).hexdigest(), 16) % 100 >= 55 else "fit"
        out.append(Program(split, model, op, p, frac, opt, beta2, batch, every, steps, wd, lr, seeds, kw, warm))
    return out


def _division_masks(p: int, frac: float, seeds: tuple[int, ...]) -> np.ndarray:
    """Per-seed training masks for a / b mod p: a fraction of the pairs with b != 0, plus every b = 0 pair (whose
    label, defined as 0, is then never tested): the test set is pure division."""
    a, b = np.divmod(np.arange(p * p), p)
    masks = []
    for s in seeds:
        idx = np.flatnonzero(b != 0)
        perm = np.random.default_rng(s).permutation(idx.size)
        m = b == 0
        m[idx[perm[:int(frac * idx.size)]]] = True
        masks.append(m)
    return np.stack(masks)


def _div_label(p: int):
    inv = np.array([0] + [pow(int(x), p - 2, p) for x in range(1, p)], dtype=np.int64)

    def div(a, b):
        return (a * inv[b]) % p

    div.__name__ = "div"
    return div


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cache_path(prog: Program, cache: Path = ENGINE_CACHE) -> Path:
    return cache / f"{prog.name}.npz"


def train_program(prog: Program, cache: Path = ENGINE_CACHE) -> dict:
    """Train one program (or read it from the cache) and return its arrays."""
    path = cache_path(prog, cache)
    if path.exists():
        with np.load(path, allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    from grokclocks.sim.modular import train_modular

    t0, c0 = time.perf_counter(), _cpu()
    kw = {"optimizer": prog.optimizer, "lr": list(prog.lr), "weight_decay": list(prog.weight_decay),
          "betas": (0.9, prog.beta2), "warmup_steps": prog.warmup_steps, "loss": "ce", "steps": prog.steps,
          "record_every": prog.record_every, "train_level": TRAIN_LEVEL, "test_level": TEST_LEVEL,
          "on_divergence": "flag", "model_kwargs": dict(prog.model_kwargs), "seeds": prog.seeds}
    if prog.batch_size:
        kw["batch_size"] = prog.batch_size
    if prog.op == "div":
        masks = _division_masks(prog.p, prog.train_frac, prog.seeds)
        traj = train_modular(prog.model, prog.p, operation=_div_label(prog.p), train_frac=None, train_mask=masks, **kw)
        n_train = masks.sum(-1)
        n_test = (~masks).sum(-1)
    else:
        traj = train_modular(prog.model, prog.p, operation=prog.op, train_frac=prog.train_frac, **kw)
        n_train = np.asarray(traj.extras["n_train"]).reshape(-1)[:len(prog.seeds)]
        n_test = prog.p * prog.p - n_train
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    shape = (len(prog.weight_decay), len(prog.lr), len(prog.seeds))
    m = {k: np.asarray(traj.metrics[k], dtype=np.float64).reshape(shape + (-1,))
         for k in ("acc_train", "acc_test", "loss_train", "loss_test", "param_norm")}
    ntr = np.broadcast_to(np.asarray(n_train).reshape(1, 1, -1, 1), m["acc_train"].shape)
    nte = np.broadcast_to(np.asarray(n_test).reshape(1, 1, -1, 1), m["acc_test"].shape)
    big = np.iinfo(np.uint16).max

    def count(acc, n):  # exact: the engine's accuracy is (correct pairs) / n; NaN (diverged) -> max uint16
        c = np.where(np.isfinite(acc), np.rint(acc * n), big)
        return c.astype(np.uint16)

    out = {"correct_train": count(m["acc_train"], ntr), "correct_test": count(m["acc_test"], nte),
           "n_train": np.asarray(n_train, dtype=np.int64), "n_test": np.asarray(n_test, dtype=np.int64)}
    out.update({k: m[k].astype(np.float32) for k in ("loss_train", "loss_test", "param_norm")})
    out.update(times=np.asarray(traj.times, dtype=np.int64), weight_decay=np.asarray(prog.weight_decay),
               lr=np.asarray(prog.lr), seeds=np.asarray(prog.seeds), wall_s=np.asarray(wall), cpu_s=np.asarray(cpu),
               diverged=np.asarray(traj.extras["diverged"]).reshape(shape),
               program=np.asarray(json.dumps(dataclasses.asdict(prog))))
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.npz")
    np.savez_compressed(tmp, **out)
    os.replace(tmp, path)
    return out


# ------------------------------------------------------------------------------------------- one loader


@dataclasses.dataclass
class Run:
    """One run of either code as the study reads it: the curves (a `grokclocks.forecast.RunCurves`) and its labels."""

    curves: object          # grokclocks.forecast.RunCurves (its group: the cross-validation fold unit)
    code: str               # "engine" or "torch"
    split: str              # "fit" or "heldout"
    model: str              # model family (engine: embedding_mlp / transformer / tian_relu; torch: tf_ln, ...)
    config: str             # configuration label (everything but the seed)
    unit: str               # independent unit: code, configuration and seed
    optimizer: str
    lr: float
    weight_decay: float
    meta: dict


API_OPTIMIZER = {"adamw": "adamw", "sgd": "sgd", "adam": "adam", "adam_l2": "adam", "sgd_mom": "sgd-momentum"}
"""How a user would name each run's optimizer to `grokclocks.forecast` (its lr x wd rate holds for "adamw" and
plain "sgd"; momentum SGD and Adam with coupled L2 leave it unknown)."""


def _decay_rate(optimizer: str, lr: float, wd: float) -> float | None:
    """lr x wd per step, as `grokclocks.forecast` computes it from (lr, weight_decay, optimizer): for decoupled
    AdamW and plain SGD with coupled L2; None for Adam with coupled L2 and for momentum SGD."""
    return lr * wd if API_OPTIMIZER[optimizer] in ("adamw", "sgd") else None


def load_engine(scale: str = "cpu", cache: Path = ENGINE_CACHE, splits: tuple[str, ...] = ("fit",)) -> list[Run]:
    """Every cached engine run of the given splits (legacy programs count as "fit"), diverged runs left out."""
    from grokclocks.forecast import RunCurves

    out = []
    progs = [dataclasses.replace(p, split="fit") if p.legacy else p for p in legacy_programs()]
    for prog, legacy_name in [(p, legacy_programs()[i].name) for i, p in enumerate(progs)] + \
            [(p, None) for p in engine_programs(scale)]:
        if prog.split not in splits:
            continue
        path = cache / f"{legacy_name}.npz" if legacy_name else cache_path(prog, cache)
        if not path.exists():
            continue
        with np.load(path, allow_pickle=False) as f:
            d = {k: f[k] for k in f.files}
        t = d["times"].astype(np.float64)
        if "correct_test" in d:
            big = np.iinfo(np.uint16).max
            ntr = d["n_train"].reshape(1, 1, -1, 1).astype(np.float64)
            nte = d["n_test"].reshape(1, 1, -1, 1).astype(np.float64)
            acc_tr = np.where(d["correct_train"] == big, np.nan, d["correct_train"] / ntr)
            acc_te = np.where(d["correct_test"] == big, np.nan, d["correct_test"] / nte)
        else:
            acc_tr, acc_te = d["acc_train"].astype(np.float64), d["acc_test"].astype(np.float64)
        for i, wd in enumerate(d["weight_decay"]):
            for j, lr in enumerate(d["lr"]):
                for k, seed in enumerate(d["seeds"]):
                    series = [acc_tr[i, j, k], acc_te[i, j, k]] + [d[n][i, j, k].astype(np.float64)
                                                                   for n in ("loss_train", "loss_test", "param_norm")]
                    if bool(d["diverged"][i, j, k]) or not all(np.isfinite(v).all() for v in series):
                        continue
                    config = f"engine:{prog.name}:wd{float(wd):g}:lr{float(lr):g}"
                    rc = RunCurves(t, *series, horizon=float(prog.steps),
                                   decay_rate=_decay_rate(prog.optimizer, float(lr), float(wd)),
                                   group=f"engine:{prog.name}", train_level=TRAIN_LEVEL, test_level=TEST_LEVEL)
                    out.append(Run(rc, "engine", prog.split, prog.model, config, f"{config}:s{int(seed)}",
                                   prog.optimizer, float(lr), float(wd),
                                   {"p": prog.p, "op": prog.op, "train_frac": prog.train_frac,
                                    "batch_size": prog.batch_size, "record_every": prog.record_every,
                                    "beta2": prog.beta2, "legacy": prog.legacy, "seed": int(seed)}))
    return out


def load_torch(scale: str = "cpu", splits: tuple[str, ...] = ("fit",)) -> list[Run]:
    """Every cached PyTorch run of the given splits (diverged runs left out)."""
    import forecast_torch as T

    from grokclocks.forecast import RunCurves

    cache = T.CACHE if scale == "cpu" else HERE / "results" / "forecast_runs_torch_gpu"
    out = []
    for spec in T.run_specs(scale):
        if spec.split not in splits or not T.cache_file(spec, cache).exists():
            continue
        _, d = T.load(T.cache_file(spec, cache))
        if int(d["diverged_step"]) >= 0:
            continue
        series = [d[k].astype(np.float64) for k in ("train_acc", "test_acc", "train_loss", "test_loss", "weight_norm")]
        if not all(np.isfinite(v).all() for v in series):
            continue
        config = f"torch:{spec.config}"
        rc = RunCurves(d["steps"].astype(np.float64), *series, horizon=float(spec.steps),
                       decay_rate=_decay_rate(spec.optimizer, spec.lr, spec.weight_decay), group=config,
                       train_level=TRAIN_LEVEL, test_level=TEST_LEVEL)
        out.append(Run(rc, "torch", spec.split, spec.model, config, f"{config}:s{spec.seed}", spec.optimizer,
                       spec.lr, spec.weight_decay, {**dataclasses.asdict(spec), "cpu_s": float(d["cpu_s"]),
                                                    "wall_s": float(d["wall_s"])}))
    return out


def phase_train(scale: str, part: str, log) -> None:
    progs = engine_programs(scale)
    i, n = (int(v) for v in part.split("/"))
    mine = progs[i::n]
    log(f"{len(progs)} engine programs ({sum(p.n_runs for p in progs)} runs); this part: {len(mine)}")
    for k, prog in enumerate(mine):
        if cache_path(prog).exists():
            continue
        try:
            d = train_program(prog)
        except Exception as exc:  # noqa: BLE001 - one failed program must not stop the others; it is logged
            log(f"[{k + 1}/{len(mine)}] {prog.name}: FAILED {type(exc).__name__}: {exc}")
            continue
        what = ""
        if prog.split == "fit":  # outcomes of held-out programs are not printed before the evaluation
            acc = d["correct_test"] / d["n_test"].reshape(1, 1, -1, 1)
            what = f"; grokked {int((acc >= TEST_LEVEL).any(-1).sum())}/{prog.n_runs}"
        log(f"[{k + 1}/{len(mine)}] {prog.name}: {prog.n_runs} runs x {prog.steps} steps, wall "
            f"{float(d['wall_s']):.0f} s, cpu {float(d['cpu_s']):.0f} s{what}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", default="cpu", choices=("cpu", "gpu"))
    ap.add_argument("--phase", default="train", choices=("train",))
    ap.add_argument("--part", default="0/1")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        for prog in engine_programs(args.scale):
            print(prog.name, prog.n_runs, prog.steps, prog.record_every, prog.batch_size, prog.train_frac,
                  prog.lr, prog.weight_decay, "cached" if cache_path(prog).exists() else "-")
        return 0

    def log(msg: str) -> None:
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    phase_train(args.scale, args.part, log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
