"""Step time of Tian's net with the engine's first layer (``models._tian_hidden``) against plain autodiff.

A 50-step Adam scan (coupled weight decay 2e-4, lr 1e-3, centred MSE) of Tian's net at p = 71, K = 2048,
N = 2016 training pairs per seed, vmapped over ``--seeds`` seeds; alternating timed calls, median per
seed-step.  docs/benchmarks.md quotes its output (2-core EPYC: 18.5-20.6 -> 16.4-17.7 ms at 1 seed, two runs;
19.2 -> 17.5 ms at 4 seeds).

    python benchmarks/bench_tian_first_layer.py --seeds 1 --repeats 5
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=50)
    args = ap.parse_args(argv)

    import jax
    import jax.numpy as jnp
    import optax

    from grokclocks.sim import models

    p, K, n, S = 71, 2048, 2016, args.seeds
    rng = np.random.default_rng(0)
    P0 = {"W": jnp.asarray(rng.uniform(-0.08, 0.08, (S, 2 * p, K)), jnp.float32),
          "V": jnp.asarray(rng.uniform(-0.02, 0.02, (S, K, p)), jnp.float32)}
    pairs = np.stack([rng.permutation(p * p)[:n] for _ in range(S)])
    tokens = jnp.asarray(np.stack([pairs // p, pairs % p], -1), jnp.int32)
    opt = optax.chain(optax.add_decayed_weights(2e-4), optax.adam(1e-3))
    shape_only = jnp.zeros((1, p), jnp.float32)  # tian_features reads M from V.shape[1]
    hidden = {"plain autodiff": lambda W, t: models.tian_features({"W": W, "V": shape_only}, t),
              "engine (_tian_hidden)": lambda W, t: models._tian_hidden(W, t, p, "quadratic")}

    def program(feat):
        def loss(P, t):
            return models.centred_mse(models.dense(feat(P["W"], t), P["V"]), (t[:, 0] + t[:, 1]) % p)

        def train(P, t):
            def body(c, _):
                P, o = c
                u, o = opt.update(jax.grad(loss)(P, t), o, P)
                return (optax.apply_updates(P, u), o), None
            return jax.lax.scan(body, (P, opt.init(P)), None, length=args.steps)[0][0]
        f = jax.jit(jax.vmap(train))
        jax.block_until_ready(f(P0, tokens))  # compile
        return lambda: jax.block_until_ready(f(P0, tokens))

    progs = {k: program(v) for k, v in hidden.items()}
    secs: dict[str, list[float]] = {k: [] for k in progs}
    for r in range(args.repeats):
        for k in (list(progs) if r % 2 == 0 else list(progs)[::-1]):
            t0 = time.perf_counter()
            progs[k]()
            secs[k].append(time.perf_counter() - t0)
    out = {k: float(np.median(v)) / args.steps / S * 1e3 for k, v in secs.items()}
    for k, v in out.items():
        print(f"{k:24s} {v:7.2f} ms per seed-step (median of {args.repeats}; {S} seeds, {args.steps} steps)")
    return out


if __name__ == "__main__":
    main()
