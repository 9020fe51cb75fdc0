"""The authors' experimental setup (spec `uniformity:setup`, §9)."""

from __future__ import annotations

from typing import Any

from .. import _validate as V
from ..citations import cites

__all__ = ["experimental_setup"]


@cites("uniformity:setup")
def experimental_setup(script: str = "rec") -> dict[str, Any]:
    r"""Configuration of the authors' scripts (paper §6.1; `transformer/{rec,str,base}.py`), as a dict.

    `"rec"` and `"str"` are the paper's setup (1 layer, training fraction 0.3, seed 0; `str` has
    d = 60, d_vocab = 170); `"base"` carries the discrepant defaults of base.py (2 layers, fraction 0.5,
    seed 11; erratum uniformity-7 in `grokclocks.errata`).

    Parameters
    ----------
    script : {"rec", "str", "base"}, optional
        Which script's configuration: `"rec"` (default), `"str"` or `"base"`.

    Returns
    -------
    dict of str to object
        A new dict with keys p, d (offset of the second operand's token ids), d_vocab, n_ctx, d_model,
        num_heads, d_head, d_mlp, num_layers, act, use_ln, pos_embed, init_std, bias_init, optimizer,
        lr, weight_decay, betas, eps, warmup_steps, batch, frac_train, seed, num_epochs,
        readout_position and fn_name.

    Raises
    ------
    DomainError
        If `script` is not one of the three names.

    References
    ----------
    Spec ID `uniformity:setup` (paper §6.1, the experimental setup).
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
