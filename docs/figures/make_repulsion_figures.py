"""Figure of docs/theory/repulsion (spec ``repulsion:rolling-gram``, ``:slope-detector``).

Run once: ``python docs/figures/make_repulsion_figures.py [--npz PATH] [--seed-index 0]``.

Trains the CPU configuration of ``verify/repulsion/test_tian_training.py`` (spec recipe R2: M = 41,
K = 512, n = 840, seeds 0 and 1, eta = 2e-4 "grok" and eta = 0 "control", 500 epochs; ~30 s on 2
cores) with :func:`grokclocks.sim.repulsion.train_tian`, or reads the per-epoch arrays from ``--npz``
when that file exists (a fresh run writes it there), and writes ``docs/figures/repulsion_rolling_eigs.png``:

* top: sigma_1..sigma_5 of the rolling w = 20 Gram of the W updates (log scale) per epoch, grok seed
  (left) and control seed (right), with the slope-detector fire epoch (eq. 6: lag 25, theta = 0.04,
  t >= 100) and the test-accuracy-0.5 epoch marked where they exist;
* bottom: the gap g = sigma_2 / sigma_3 (log) and the test accuracy.

After lock-in sigma_4 and sigma_5 of the grok seed sit at the float32 resolution of the Gram
(~1e-7 sigma_1; a float64 run gives 1e-10 and 1e-13 of sigma_1 there), sigma_3 just above it
(float32 and float64 runs agree: 8.8e-9 vs 8.9e-9 at epoch 450, seed 0).

At this reduced size the detector constants do not transfer (spec erratum repulsion-7): the grok
seed's gap rises by orders of magnitude but slower than 0.04 per epoch, so it never fires, and a
control seed can fire spuriously; the late separation of g is nevertheless > 1000x.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from grokclocks import repulsion as R  # noqa: E402

OUT = Path(__file__).resolve().parent
CPU = dict(M=41, K=512, n_train=840, seeds=(0, 1), etas=(2e-4, 0.0), steps=500)


def load_or_run(npz: Path | None) -> dict[str, np.ndarray]:
    """Per-epoch sigma (eta, seed, epoch, 5), test accuracy (eta, seed, epoch) and the config."""
    if npz is not None and npz.exists():
        with np.load(npz) as f:
            return {k: f[k] for k in f.files}
    from grokclocks.sim.repulsion import train_tian

    c = CPU
    run = train_tian(c["M"], c["K"], c["n_train"], seeds=c["seeds"], etas=c["etas"], steps=c["steps"], window=20,
                     k=5, rho=False)
    data = {"sigma": run.sigma, "acc_test": run.acc_test, "epochs": run.epochs, "etas": run.etas,
            "seeds": np.asarray(run.seeds), "M": np.asarray(c["M"]), "K": np.asarray(c["K"]),
            "n_train": np.asarray(c["n_train"])}
    if npz is not None:
        npz.parent.mkdir(parents=True, exist_ok=True)
        np.savez(npz, **data)
    return data


def rolling_eigs(data: dict[str, np.ndarray], seed_index: int = 0) -> Path:
    sig, acc, ep = data["sigma"], data["acc_test"], data["epochs"]
    fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True, constrained_layout=True)
    colors = plt.cm.tab10(np.arange(sig.shape[-1]))
    for col, (i, label) in enumerate(((0, "grok"), (1, "control"))):
        s = sig[i, seed_index]
        g = R.eigengap(s)
        fire, slope = R.slope_detector(g)
        t50 = R.first_crossing(acc[i, seed_index], 0.5)
        ax = axes[0, col]
        for k in range(s.shape[-1]):
            ax.semilogy(ep, s[:, k], color=colors[k], lw=1.2, label=f"$\\sigma_{k + 1}$")
        ax.set_ylabel("eigenvalues of the rolling $w=20$ Gram of $\\Delta W$")
        bx = axes[1, col]
        bx.semilogy(ep, g, color="k", lw=1.2, label="$g=\\sigma_2/\\sigma_3$")
        bx.set_ylabel("gap $g$")
        bx.set_xlabel("epoch")
        tx = bx.twinx()
        tx.plot(ep, acc[i, seed_index], color="tab:red", lw=1.0, alpha=0.8, label="test accuracy")
        tx.set_ylim(-0.02, 1.02)
        tx.set_ylabel("test accuracy", color="tab:red")
        for a in (ax, bx):
            if t50 is not None:
                a.axvline(t50, color="tab:red", ls="--", lw=1)
            if fire is not None:
                a.axvline(fire, color="tab:blue", ls="-", lw=1.5)
        marks = [f"test 0.5 at {t50}" if t50 is not None else "test acc never 0.5",
                 f"slope detector fires at {fire}" if fire is not None else
                 f"slope detector never fires (max slope {np.nanmax(slope[100:]):.3f} < 0.04)"]
        ax.set_title(f"{label}: $\\eta$ = {data['etas'][i]:g}, seed {int(data['seeds'][seed_index])}, "
                     f"M={int(data['M'])}, K={int(data['K'])}, n={int(data['n_train'])}\n" + "; ".join(marks), fontsize=10)
        ax.legend(fontsize=8, ncol=5, loc="upper right")
        h1, l1 = bx.get_legend_handles_labels()
        h2, l2 = tx.get_legend_handles_labels()
        bx.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper left")
    fig.suptitle("Rolling-window update Gram (spec repulsion eq. 5) and the slope detector (eq. 6); dashed red: "
                 "test accuracy 0.5, solid blue: detector fire", fontsize=10)
    out = OUT / "repulsion_rolling_eigs.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--npz", type=Path, default=None, help="read the run from / write it to this .npz")
    ap.add_argument("--seed-index", type=int, default=0, help="which seed of the run to plot (0 or 1)")
    args = ap.parse_args()
    print(rolling_eigs(load_or_run(args.npz), args.seed_index))


if __name__ == "__main__":
    main()
