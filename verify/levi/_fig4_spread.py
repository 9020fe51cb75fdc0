"""Per-seed measurement of the Fig. 4 d_h = 50 linear two-layer net against its predicted forms (CPU, float64).

Run as a script (resumable: seeds already in the output file are skipped)::

    python -m verify.levi._fig4_spread --seeds 256:320 --out verify/levi/data/fig4_dh50_seeds256-319.jsonl

For every seed, explicit GD on (S0, S1) as ``test_eq18_two_layer`` runs it (d_in = 1000, d_h = 50, d_out = 5,
lambda = 0.5, eta = 0.01, 3e4 steps, records every 3000 steps; computed in the eigenbasis of Sigma_tr, see
``_runs``), and at each record t > 0, train and generalisation loss:

* ``meas``: the simulation;
* ``paper`` / ``kappa`` / ``realised``: the three forms of ``test_levi_networks._forms`` (paper form, kappa-refined
  with the Marchenko-Pastur law, kappa-refined with the realised spectrum of Sigma_tr);
* ``reduced``: the exact linear recursion of D with both frozen kernels,
  ``D <- D - eta (2/d_out) [Sigma D K1 + K0 Sigma D]``, ``K1 = S1(0)^T S1(0)``, ``K0 = S0(0) S0(0)^T`` -- the
  reduced dynamics (spec levi:eq17, exact form) with neither kernel evolving.  ``realised`` drops the ``K0`` term
  (and runs in continuous time); ``meas`` lets both kernels evolve.  So log(meas/reduced) is the effect of the
  weights' evolution and log(reduced/realised) that of the dropped ``S0 S0^T Sigma D`` term.

One JSON line per seed; nothing here is read by a test at run time (the test states the numbers it uses).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from grokclocks.sim._runtime import enable_x64
from grokclocks.sim.linear import draw_two_layer

from .test_levi_networks import _forms, _numpy_draws, _spectra, D_OUT, ETA, LAM

D_IN, D_H, STEPS, REC = 1000, 50, 30_000, 3000


def _runs(nu, S0, S1, T, steps, rec):
    """GD on (S0, S1) and the frozen-kernel recursion of D, both in the eigenbasis of Sigma_tr (one draw).

    ``nu``: eigenvalues of Sigma_tr; ``S0``, ``T``: rotated to its eigenbasis (V^T S0, V^T T).  GD on L_tr =
    Tr(D^T Sigma D)/d_out is equivariant under the rotation, so this is the GD of ``run_two_layer`` (same steps,
    float64; checked: seeds 0-15 reproduce its numbers) at 1/13 of the cost (Sigma D is a scaling, not a
    1000 x 1000 product).  Returns losses (2 runs, 2 = train/gen, n_records) and h at every record.
    """
    c = ETA * 2.0 / D_OUT
    K1 = S1.T @ S1

    def gd(state, _):
        A, B = state
        G = nu[:, None] * (A @ B - T)  # Sigma D in the eigenbasis
        return (A - c * G @ B.T, B - c * A.T @ G), None

    def red(D, _):
        G = nu[:, None] * D
        return D - c * (G @ K1 + S0 @ (S0.T @ G)), None

    def losses(D):
        return jnp.stack([jnp.sum(nu[:, None] * D * D), jnp.sum(D * D)]) / D_OUT

    def chunk(carry, _):
        (A, B), D = carry
        (A, B), _ = jax.lax.scan(gd, (A, B), None, length=rec)
        D, _ = jax.lax.scan(red, D, None, length=rec)
        h = 0.5 * (jnp.sum(A * A) + jnp.sum(B * B))
        return ((A, B), D), (losses(A @ B - T), losses(D), h)

    _, (gd_l, red_l, h) = jax.lax.scan(chunk, ((S0, S1), S0 @ S1 - T), None, length=steps // rec)
    return jnp.stack([gd_l.T, red_l.T]), h


def run(seeds, out, chunk):
    enable_x64()
    done = set()
    if os.path.exists(out):
        with open(out) as fh:
            done = {json.loads(line)["seed"] for line in fh if line.strip()}
    todo = [s for s in seeds if s not in done]
    runs = jax.jit(jax.vmap(lambda *a: _runs(*a, STEPS, REC)))
    for i in range(0, len(todo), chunk):
        part = tuple(todo[i:i + chunk])
        t0 = time.time()
        data = draw_two_layer(D_IN, LAM, D_H, D_OUT, seeds=part)
        X, S0, S1, T = _numpy_draws(data)
        nu, V = _spectra(X)
        S0r, Tr = np.einsum("sij,sik->sjk", V, S0), np.einsum("sij,sik->sjk", V, T)
        losses, h = (np.asarray(a) for a in runs(jnp.asarray(nu), jnp.asarray(S0r), jnp.asarray(S1), jnp.asarray(Tr)))
        ts = REC * np.arange(1, STEPS // REC + 1, dtype=float)
        lines = []
        for j, s in enumerate(part):
            pref_sq = float(np.sum((S0[j] @ S1[j] - T[j]) ** 2))
            f = _forms(nu[j], V[j], S0[j], S1[j], T[j], ts, pref_sq)
            rec = {"seed": int(s), "t": ts.tolist(), "kappa0": np.linalg.eigvalsh(S1[j].T @ S1[j]).tolist(),
                   "h": h[j].tolist(), "meas": losses[j, 0].tolist(), "reduced": losses[j, 1].tolist()}
            rec.update({k: f[k].tolist() for k in ("paper", "kappa", "realised")})
            lines.append(json.dumps(rec))
        with open(out, "a") as fh:
            fh.write("\n".join(lines) + "\n")
        lk = [float(np.log(losses[j, 0, 0, -1] / f_k)) for j, f_k in
              enumerate(json.loads(x)["kappa"][0][-1] for x in lines)]
        print(f"seeds {part}: {time.time() - t0:.0f} s, log(meas/kappa) L_tr(T) {np.round(lk, 3).tolist()}",
              flush=True)


def seeds_out_chunk(chunk):
    """The command line of the measurement scripts of verify/levi: --seeds start:stop, --out, --chunk."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", required=True, help="start:stop")
    ap.add_argument("--out", required=True)
    ap.add_argument("--chunk", type=int, default=chunk)
    a = ap.parse_args()
    lo, hi = (int(x) for x in a.seeds.split(":"))
    return range(lo, hi), a.out, a.chunk


def main():
    run(*seeds_out_chunk(4))


if __name__ == "__main__":
    main()
