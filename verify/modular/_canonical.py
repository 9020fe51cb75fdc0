"""The canonical embedding-MLP grokking sweep, trained once per pytest session.

Shared by ``verify/modular/test_canonical_grokking.py`` (the grokking criterion of the engine) and
``verify/compare/test_compare_runs.py`` (``compare_run`` on the same runs), so the CPU suite trains
it once.  Embedding MLP of spec ``clocks:appB``; AdamW, betas (0.9, 0.98), full batch,
cross-entropy; weight decay 1 (grokking) and 0 (the control) on the same seeds and splits; the
token embeddings ``E`` are recorded with the metrics (``hook_E``).
"""

from __future__ import annotations

from grokclocks.sim.modular import train_modular
from grokclocks.sim.train import Trajectory

CONFIG = {
    # measured on 2 cores (seeds 0..7): train acc 1 at step 100-150, test >= 0.99 at 1300-2550 (wd 1);
    # wd 0: test accuracy 0.43-0.51 at 3000 steps.  lr 3e-3: at lr 1e-3 this small config needs > 6000
    # steps (measured: seed 2 not grokked at 6000).
    "cpu": dict(p=31, train_frac=0.5, d_embed=64, d_hidden=128, lr=3e-3, steps=3000, record_every=25,
                seeds=tuple(range(8))),
    # not run on a GPU yet (none lent): p = 97, train fraction 0.3 as in the spec, 64 seeds
    "gpu": dict(p=97, train_frac=0.3, d_embed=128, d_hidden=256, lr=1e-3, steps=5000, record_every=50,
                seeds=tuple(range(64))),
}
WEIGHT_DECAYS = (1.0, 0.0)

_CACHE: dict[str, Trajectory] = {}


def hook_E(params, inputs):
    """Token embedding matrix (module level, so the compiled program is reused)."""
    return params["E"]


def common_kwargs(scale: str) -> dict:
    """Training arguments shared by every run of this config (model, optimiser, schedule, hooks)."""
    c = CONFIG[scale]
    return dict(model_kwargs=dict(d_embed=c["d_embed"], d_hidden=c["d_hidden"]), optimizer="adamw", lr=c["lr"],
                betas=(0.9, 0.98), loss="ce", steps=c["steps"], record_every=c["record_every"],
                hooks={"E": hook_E}, progress=scale == "gpu")


def canonical_sweep(scale: str) -> Trajectory:
    """The sweep weight decay (1, 0) x seeds, shape ``(2, n_seeds, ...)``; trained on first use."""
    if scale not in _CACHE:
        c = CONFIG[scale]
        _CACHE[scale] = train_modular("embedding_mlp", c["p"], train_frac=c["train_frac"], seeds=c["seeds"],
                                      weight_decay=list(WEIGHT_DECAYS), **common_kwargs(scale))
    return _CACHE[scale]


def budget_sweep(n_seeds: int, n_steps: int) -> Trajectory:
    """The GPU sweep's engine call with ``n_seeds`` seeds and ``n_steps`` steps (for the GPU time budget)."""
    c = dict(CONFIG["gpu"], steps=n_steps)
    kw = common_kwargs("gpu") | dict(steps=n_steps, progress=False)
    return train_modular("embedding_mlp", c["p"], train_frac=c["train_frac"], seeds=tuple(range(n_seeds)),
                         weight_decay=list(WEIGHT_DECAYS), **kw)
