"""Figure and table of docs/compare.md: one engine run compared with all five theories.

Run once: ``python docs/figures/make_compare_figure.py`` (19 s on a 2-core AMD EPYC). It trains the
embedding MLP of spec ``clocks:appB`` on a + b mod 31 (train fraction 0.5, AdamW lr 3e-3, weight decay 1,
5 seeds, 3000 steps; the CPU configuration of ``verify/compare``, which runs 8 seeds), then writes
``docs/figures/compare_grokking.png`` (Comparison.plot) and ``docs/figures/compare_grokking.md``
(Comparison.table(markdown=True)), which docs/compare.md includes.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from grokclocks.compare import compare_run  # noqa: E402
from grokclocks.sim.modular import train_modular  # noqa: E402

OUT = Path(__file__).resolve().parent


def hook_E(params, inputs):
    """Token embeddings, recorded with the metrics (compare's Fourier, stable-rank and MED statistics)."""
    return params["E"]


def main() -> None:
    run = train_modular("embedding_mlp", 31, train_frac=0.5, seeds=(0, 1, 2, 3, 4),
                        model_kwargs=dict(d_embed=64, d_hidden=128), optimizer="adamw", lr=3e-3,
                        betas=(0.9, 0.98), weight_decay=1.0, loss="ce", steps=3000, record_every=25,
                        hooks={"E": hook_E})
    cmp = compare_run(run)
    cmp.plot(OUT / "compare_grokking.png", title="a + b mod 31, embedding MLP, AdamW wd 1, 5 seeds")
    (OUT / "compare_grokking.md").write_text(cmp.table(markdown=True) + "\n")
    print(cmp.table())


if __name__ == "__main__":
    main()
