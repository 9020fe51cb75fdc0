"""The authors' experimental setup (spec ``uniformity:setup``, §9)."""

from __future__ import annotations

from typing import Any

from .. import _validate as V
from ..citations import cites

__all__ = ["experimental_setup"]


@cites("uniformity:setup")
def experimental_setup(script: str = "rec") -> dict[str, Any]:
    r"""Configuration of the authors' scripts (paper §6.1; ``transformer/{rec,str,base}.py``).

    ``"rec"`` / ``"str"`` are the paper's setup (1 layer, frac 0.3, seed 0; ``str`` has ``d = 60``,
    ``d_vocab = 170``); ``"base"`` carries the discrepant defaults (2 layers, frac 0.5, seed 11; erratum
    uniformity-7).  References: spec ``uniformity:setup`` (§9).
    """
    script = V.choice(script, "script", ("rec", "str", "base"))
    cfg: dict[str, Any] = dict(
        p=97, d=0, d_vocab=98, n_ctx=3, d_model=128, num_heads=4, d_head=32, d_mlp=512, num_layers=1,
        act="ReLU", use_ln=False, pos_embed=True, init_std="1/sqrt(d_model) for every matrix", bias_init=0.0,
        optimizer="AdamW", lr=1e-3, weight_decay=1.0, betas=(0.9, 0.98), eps=1e-8, warmup_steps=10,
        batch="full", frac_train=0.3, seed=0, num_epochs=300, readout_position=2, fn_name="add")
    if script == "str":
        cfg.update(d=60, d_vocab=170, num_epochs=30000)
    elif script == "base":
        cfg.update(num_layers=2, frac_train=0.5, seed=11)
    return cfg
