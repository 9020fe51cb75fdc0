"""Speed of the modular-arithmetic engine vs a reference-style PyTorch loop (issue: engine benchmark).

Two configurations, both full batch, one optimiser step per epoch:

* ``canonical`` -- p = 97, train fraction 0.3, embedding MLP (embedding 128, hidden 256), AdamW
  lr 1e-3, betas (0.9, 0.98), wd 1, cross-entropy (spec ``clocks:appB``);
* ``tian`` -- M = 71, K = 2048, n = 2016, sigma(XW)V with sigma = x^2, Adam with coupled L2
  (lr 1e-3, wd 2e-4), zero-meaned MSE (spec ``repulsion:setup``).

(a) **reference**: the way the papers' code trains -- one seed, a Python loop over epochs, each
epoch a forward/backward/step on the training set and an evaluation of train and test
loss/accuracy (``torch.no_grad``), metrics moved to the host every epoch.  PyTorch is used only
here; it is not a dependency of grokclocks.

(b) **engine**: :func:`grokclocks.sim.modular.train_modular` with 1, 16, 64, 256 seeds vmapped in
one compiled ``lax.scan``, metrics (train/test loss and accuracy, parameter norm) recorded every
epoch (``record_every=1``, the reference's work) and every 100 epochs.

Timings: wall clock of a second, identical call (the first compiles), ``jax.block_until_ready``
implied by the host transfer of the metrics.  Throughput = seed-epochs per second.  FLOPs per
seed-epoch are counted analytically (forward + backward = 3 x the forward matmuls on the training
rows; the recording adds one forward on all p^2 rows per record) and turned into achieved FLOP/s.

Run: ``python benchmarks/bench_modular_engine.py [--config canonical|tian|both] [--seeds 1,16,64,256]
[--epochs 200] [--ref-epochs 50]``; writes ``benchmarks/results/modular_engine_<device>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONFIGS = {
    "canonical": dict(model="embedding_mlp", p=97, train_frac=0.3, model_kwargs=dict(d_embed=128, d_hidden=256),
                      optimizer="adamw", lr=1e-3, betas=(0.9, 0.98), weight_decay=1.0, loss="ce"),
    "tian": dict(model="tian_quadratic", p=71, n_train=2016, model_kwargs=dict(K=2048), optimizer="adam", lr=1e-3,
                 betas=(0.9, 0.999), weight_decay=2e-4, loss="centred_mse"),
}


def flops_per_seed_epoch(name: str, record_every: int) -> float:
    """Analytic matmul FLOPs of one optimiser step (+ the amortised recording)."""
    c = CONFIGS[name]
    p = c["p"]
    if name == "canonical":
        n_tr = int(c["train_frac"] * p * p)
        d_e, d_h = c["model_kwargs"]["d_embed"], c["model_kwargs"]["d_hidden"]
        fwd_row = 2 * (d_e * d_h + d_h * p)
    else:
        n_tr = c["n_train"]
        K = c["model_kwargs"]["K"]
        fwd_row = 2 * K * p  # the first layer is a gather of two rows of W (one-hot inputs)
    return 3.0 * n_tr * fwd_row + p * p * fwd_row / record_every


# ------------------------------------------------------------------------------------ reference


def reference_torch(name: str, epochs: int, device: str) -> dict:
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    c = CONFIGS[name]
    p = c["p"]
    a, b = np.divmod(np.arange(p * p), p)
    y = (a + b) % p
    perm = np.random.default_rng(0).permutation(p * p)
    n_tr = int(c["train_frac"] * p * p) if name == "canonical" else c["n_train"]
    tr, te = perm[:n_tr], perm[n_tr:]
    dev = torch.device(device)
    if name == "canonical":
        d_e, d_h = c["model_kwargs"]["d_embed"], c["model_kwargs"]["d_hidden"]

        class MLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.E = nn.Embedding(p, d_e)
                self.l1 = nn.Linear(d_e, d_h)
                self.l2 = nn.Linear(d_h, p)

            def forward(self, x):
                return self.l2(torch.relu(self.l1(self.E(x[:, 0]) + self.E(x[:, 1]))))

        model = MLP().to(dev)
        X = torch.tensor(np.stack([a, b], 1), device=dev)
        opt = torch.optim.AdamW(model.parameters(), lr=c["lr"], betas=c["betas"], weight_decay=c["weight_decay"])

        def loss_fn(out, target):
            return nn.functional.cross_entropy(out, target)
    else:
        K = c["model_kwargs"]["K"]
        X = torch.zeros(p * p, 2 * p, device=dev)
        X[np.arange(p * p), a] = 1
        X[np.arange(p * p), p + b] = 1
        model = nn.Sequential(nn.Linear(2 * p, K, bias=False)).to(dev)
        V = nn.Linear(K, p, bias=False).to(dev)

        class Tian(nn.Module):
            def __init__(self):
                super().__init__()
                self.W, self.V = model[0], V

            def forward(self, x):
                return self.V(self.W(x) ** 2)

        model = Tian().to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=c["lr"], betas=c["betas"], weight_decay=c["weight_decay"])

        def loss_fn(out, target):
            zm = out - out.mean(1, keepdim=True)
            t = nn.functional.one_hot(target, p).float() - 1.0 / p
            return ((zm - t) ** 2).sum(1).mean()

    Y = torch.tensor(y, device=dev)
    tr_t, te_t = torch.tensor(tr, device=dev), torch.tensor(te, device=dev)

    def epoch():
        opt.zero_grad()
        loss = loss_fn(model(X[tr_t]), Y[tr_t])
        loss.backward()
        opt.step()
        with torch.no_grad():
            out_tr, out_te = model(X[tr_t]), model(X[te_t])
            return (loss_fn(out_tr, Y[tr_t]).item(), loss_fn(out_te, Y[te_t]).item(),
                    (out_tr.argmax(1) == Y[tr_t]).float().mean().item(),
                    (out_te.argmax(1) == Y[te_t]).float().mean().item())

    for _ in range(5):  # warm-up
        epoch()
    t0 = time.perf_counter()
    for _ in range(epochs):
        last = epoch()
    dt = time.perf_counter() - t0
    return {"epochs": epochs, "seconds": dt, "seed_epochs_per_s": epochs / dt, "final_metrics": last,
            "torch": torch.__version__, "torch_threads": torch.get_num_threads(), "device": device}


# --------------------------------------------------------------------------------------- engine


def engine(name: str, n_seeds: int, epochs: int, record_every: int) -> dict:
    from grokclocks.sim.data import random_split_mask
    from grokclocks.sim.modular import train_modular

    c = dict(CONFIGS[name])
    model, p = c.pop("model"), c.pop("p")
    seeds = tuple(range(n_seeds))
    if "n_train" in c:
        c["train_mask"] = random_split_mask(p, seeds, n_train=c.pop("n_train"))
    kw = dict(c, seeds=seeds, steps=epochs, record_every=record_every, n_chunks=1, devices=None)
    train_modular(model, p, **kw)  # compile
    t0 = time.perf_counter()
    run = train_modular(model, p, **kw)
    dt = time.perf_counter() - t0
    return {"n_seeds": n_seeds, "epochs": epochs, "record_every": record_every, "seconds": dt,
            "seed_epochs_per_s": n_seeds * epochs / dt, "n_devices": int(run["n_devices"]),
            "final_train_acc_mean": float(np.mean(run["acc_train"][..., -1]))}


def device_name() -> str:
    import jax

    d = jax.devices()[0]
    if d.platform == "cpu":
        cpu = platform.processor() or platform.machine()
        try:
            for line in Path("/proc/cpuinfo").read_text().splitlines():
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
        return f"CPU: {cpu}, {os.cpu_count()} cores"
    return f"{d.platform.upper()}: {d.device_kind}"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", choices=("canonical", "tian", "both"), default="both")
    ap.add_argument("--seeds", default="1,16,64,256")
    ap.add_argument("--epochs", type=int, default=200, help="engine epochs per timed call")
    ap.add_argument("--ref-epochs", type=int, default=50, help="reference epochs timed")
    ap.add_argument("--roofline", type=float, default=None,
                    help="peak FLOP/s of the device for the roofline fraction (e.g. 4e14 = the issue's H100 TF32 figure)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    import jax

    dev = device_name()
    torch_dev = "cuda" if jax.devices()[0].platform == "gpu" else "cpu"
    names = ("canonical", "tian") if args.config == "both" else (args.config,)
    seeds = [int(s) for s in args.seeds.split(",")]
    out = {"device": dev, "jax": jax.__version__, "python": platform.python_version(), "results": {}}
    try:
        import optax

        out["optax"] = optax.__version__
    except ImportError:
        pass
    for name in names:
        res = {"flops_per_seed_epoch": {"record_every_1": flops_per_seed_epoch(name, 1),
                                        "record_every_100": flops_per_seed_epoch(name, 100)}}
        try:
            res["reference"] = reference_torch(name, args.ref_epochs, torch_dev)
        except ImportError as exc:  # torch missing: engine numbers only
            res["reference"] = {"error": str(exc)}
        ref = res["reference"].get("seed_epochs_per_s")
        res["engine"] = []
        for n in seeds:
            for rec in (1, 100):
                epochs = max(rec, args.epochs - args.epochs % rec)
                r = engine(name, n, epochs, rec)
                fl = flops_per_seed_epoch(name, rec)
                r["achieved_flop_per_s"] = r["seed_epochs_per_s"] * fl
                if ref:
                    r["speedup_vs_reference"] = r["seed_epochs_per_s"] / ref
                if args.roofline:
                    r["roofline_fraction"] = r["achieved_flop_per_s"] / args.roofline
                res["engine"].append(r)
                print(f"{name}: {n:4d} seeds, record_every {rec:3d}: {r['seed_epochs_per_s']:10.1f} seed-epochs/s"
                      + (f"  ({r['speedup_vs_reference']:.1f}x reference)" if ref else ""), flush=True)
        if ref:
            print(f"{name}: reference {ref:.1f} epochs/s ({res['reference']['device']})", flush=True)
        out["results"][name] = res
    tag = "gpu" if torch_dev == "cuda" else "cpu"
    path = Path(args.out) if args.out else ROOT / "benchmarks" / "results" / f"modular_engine_{tag}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")
    return out


if __name__ == "__main__":
    main()
