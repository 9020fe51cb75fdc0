"""Figures of docs/theory/uniformity.md (spec ``uniformity``); run once: ``python docs/figures/make_uniformity_figures.py``.

Writes into docs/figures/:
* ``uniformity_designs.png`` -- the authors' SQUARE / STRIP splits at p = 97 (python shuffle, seed 0);
* ``uniformity_distance_map.png`` -- distance to the training set and to the nearest same-label training
  point (torus) for a random 30 % split of a + b mod 97;
* ``uniformity_ceiling_curves.png`` -- Ceil(n) on torus and grid for the random split and two designs,
  with the paper's U-Acc.
"""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402

C = importlib.import_module("grokclocks.coverage")
OUT = Path(__file__).resolve().parent
P = 97


def designs() -> None:
    cases = [("square", 30), ("square", 50), ("strip", 40), ("strip", 60)]
    cmap = ListedColormap(["#f0f0f0", "#d62728", "#1f77b4"])  # other test, held-out region, train
    fig, axes = plt.subplots(1, 4, figsize=(13, 3.6), constrained_layout=True)
    for ax, (d, k) in zip(axes, cases):
        tr, _ = C.designed_split(P, d, k)
        held = np.zeros((P, P), bool)
        if d == "square":
            held[:k + 1, :k + 1] = True
        else:
            held[:k + 1] = True
        img = np.where(tr, 2, np.where(held, 1, 0))
        ax.imshow(img, cmap=cmap, vmin=0, vmax=2, origin="upper", interpolation="nearest")
        ax.set_title(f"{d.upper()} k={k}: {tr.sum()} train / {(~tr).sum()} test", fontsize=9)
        ax.set_xlabel("b (second operand)")
        ax.set_ylabel("a (first operand)")
    fig.suptitle("Table 1 designs, p = 97, int(0.3 p^2) = 2822 training pairs (blue), held-out region (red)",
                 fontsize=10)
    fig.savefig(OUT / "uniformity_designs.png", dpi=110)
    plt.close(fig)


def distance_map() -> None:
    tr, te = C.random_design(P, 0.3)
    lab = C.label_table(P, "add")
    d_any = C.distance_to_set(tr, "torus")
    d_lab = C.same_label_distance(tr, lab, "torus")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), constrained_layout=True)
    im = axes[0].imshow(d_any, cmap="viridis", interpolation="nearest")
    axes[0].set_title("torus distance to the training set d(x, T)", fontsize=10)
    fig.colorbar(im, ax=axes[0], shrink=0.8)
    im = axes[1].imshow(np.where(np.isfinite(d_lab), d_lab, np.nan), cmap="magma", interpolation="nearest")
    axes[1].set_title(r"same-label distance $\Delta_f(x)$, $f=a+b$ (even on the torus)", fontsize=10)
    fig.colorbar(im, ax=axes[1], shrink=0.8)
    for ax in axes:
        ax.set_xlabel("b")
        ax.set_ylabel("a")
    fig.suptitle("random 30 % split of p = 97 (python shuffle, seed 0)", fontsize=10)
    fig.savefig(OUT / "uniformity_distance_map.png", dpi=110)
    plt.close(fig)


def ceiling_curves() -> None:
    lab = C.label_table(P, "add")
    n_max = 100
    n = np.arange(1, n_max + 1)
    fig, ax = plt.subplots(figsize=(7.5, 4.4), constrained_layout=True)
    cases = [("random", None, None, "k"), ("square", 30, 99.04, "C0"), ("strip", 40, 89.89, "C3")]
    for d, k, u, col in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tr, te = C.designed_split(P, d, k, 0.3)
        lbl = d if k is None else f"{d.upper()} k={k}"
        for metric, ls in (("torus", "-"), ("grid", "--")):
            ax.plot(n, 100 * C.accuracy_ceiling_curve(tr, lab, n_max, metric, te), ls, color=col,
                    label=f"{lbl}, {metric}")
        if u is not None:
            ax.axhline(u, color=col, lw=0.8, ls=":")
            ax.text(60, u + 1.0, f"paper U-Acc {u} %", color=col, ha="center", fontsize=8, backgroundcolor="white")
    ax.axvline(P, color="grey", lw=0.6)
    ax.set_xlabel("radius n")
    ax.set_ylabel("Ceil(n)  [% of the test set]")
    ax.set_title("Theorem 3.10 ceilings: the grid reading (dashed) stays below the paper's U-Acc for n <= p",
                 fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    fig.savefig(OUT / "uniformity_ceiling_curves.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    designs()
    distance_map()
    ceiling_curves()
    print("wrote", *sorted(p.name for p in OUT.glob("uniformity_*.png")))
