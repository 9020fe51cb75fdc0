"""The headline recipe (`kramers:headline`): AdamW on modular addition, seeds vmapped, and its milestones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ... import _validate as V, kramers as K
from ..._validate import DomainError, integer_at_least, positive
from ...citations import cites
from ._arguments import _seed_list
from ._net import alpha_two_layer_apply, alpha_two_layer_init


def _adamw_program(p, N, seeds, *, alpha, lr, wd, steps, eval_every, rho, b1, b2):
    """The vmapped AdamW program of `modadd_adamw_run` and its inputs (seeds, split permutations)."""
    X, _, _, yall = K.modadd_inputs(p)
    n = K.n_train(p, rho)
    perms = np.stack([np.random.default_rng(s).permutation(p * p) for s in seeds])
    Xj = jnp.asarray(X, jnp.float32)
    yj = jnp.asarray(yall)
    opt = optax.adamw(lr, b1=b1, b2=b2, weight_decay=wd)

    def init(seed):
        prm = alpha_two_layer_init(jax.random.PRNGKey(seed), N, 2 * p, n_out=p, dtype=jnp.float32)
        return prm, opt.init(prm)

    def loss_fn(prm, idx):
        logits = alpha_two_layer_apply(prm, Xj[idx], alpha)
        return optax.softmax_cross_entropy_with_integer_labels(logits, yj[idx]).mean()

    def acc(prm, idx):
        return jnp.mean(jnp.argmax(alpha_two_layer_apply(prm, Xj[idx], alpha), -1) == yj[idx])

    def run_one(seed, perm):
        tr, te = perm[:n], perm[n:]
        st = init(seed)

        def step(st, _):
            prm, os = st
            g = jax.grad(loss_fn)(prm, tr)
            upd, os = opt.update(g, os, prm)
            return (optax.apply_updates(prm, upd), os), None

        def rec(st, _):
            st, _ = jax.lax.scan(step, st, None, length=eval_every)
            return st, (acc(st[0], tr), acc(st[0], te))

        _, (a_tr, a_te) = jax.lax.scan(rec, st, None, length=steps // eval_every)
        return a_tr, a_te

    return jax.vmap(run_one), (jnp.asarray(seeds), jnp.asarray(perms))


@cites("kramers:headline", "kramers:milestones")
def modadd_adamw_run(p: int, N: int, seeds: Sequence[int], *, alpha: float = 0.0, lr: float = 1e-3, wd: float = 1.0,
                     steps: int = 30000, eval_every: int = 100, rho: float = 0.3,
                     b1: float = 0.9, b2: float = 0.98) -> dict[str, Any]:
    r"""The headline recipe of spec `kramers`: AdamW on modular addition, seeds vmapped (float32).

    A two-layer ReLU net (p-way readout, no biases), mean cross-entropy, full batch,
    `optax.adamw(lr, b1, b2, weight_decay=wd)`; the split seed is the init seed.

    Parameters
    ----------
    p : int
        The modulus p ≥ 2.
    N : int
        Width N ≥ 1.
    seeds : sequence of int
        Distinct seeds ≥ 0 (split and initialisation).
    alpha : float
        Width exponent α in [0, 0.5]; default 0.
    lr : float
        AdamW learning rate > 0; default 10⁻³.
    wd : float
        AdamW (decoupled) weight decay ≥ 0; default 1.
    steps : int
        Number of steps ≥ 1, a multiple of `eval_every`; default 30000.
    eval_every : int
        Steps between two accuracy records ≥ 1; default 100.
    rho : float
        Training fraction ρ in (0, 1); default 0.3.
    b1 : float
        Adam's first-moment decay in [0, 1); default 0.9.
    b2 : float
        Adam's second-moment decay in [0, 1); default 0.98.

    Returns
    -------
    dict
        `steps` (the record grid), `train_acc`, `test_acc` (seeds × records), `seeds`, and per seed
        the milestones `t_mem99`, `t_mem100`, `t_grok99`, `t_grok100` (grid steps, `None` = not
        reached) and `ratio99` = t_grok99/t_mem99, as in `grokclocks.kramers.milestones`.

    Raises
    ------
    DomainError
        If an argument is outside its domain.

    References
    ----------
    Spec `kramers:headline`, `kramers:milestones`.
    """
    p = integer_at_least(p, "p", 2)
    N = integer_at_least(N, "N", 1)
    seeds = _seed_list(seeds)
    alpha = K._alpha(alpha)
    lr = positive(lr, "lr", scalar=True)
    wd = V.nonnegative(wd, "wd", scalar=True)
    for name, b in (("b1", b1), ("b2", b2)):
        if not 0.0 <= V.finite(b, name, scalar=True) < 1.0:
            raise DomainError(f"{name} must be in [0, 1) (got {b!r})")
    steps = integer_at_least(steps, "steps", 1)
    eval_every = integer_at_least(eval_every, "eval_every", 1)
    if steps % eval_every:
        raise DomainError(f"steps must be a multiple of eval_every (got {steps}, {eval_every})")
    program, inputs = _adamw_program(p, N, seeds, alpha=alpha, lr=lr, wd=wd, steps=steps, eval_every=eval_every,
                                     rho=rho, b1=b1, b2=b2)
    a_tr, a_te = jax.jit(program)(*inputs)
    a_tr, a_te = np.asarray(a_tr), np.asarray(a_te)
    grid = np.arange(1, steps // eval_every + 1) * eval_every
    out: dict[str, Any] = dict(steps=grid, train_acc=a_tr, test_acc=a_te, seeds=seeds)
    for q, tag in ((0.99, "99"), (1.0, "100")):
        ms = [K.milestones(grid, a_tr[i], a_te[i], q, q) for i in range(len(seeds))]
        out["t_mem" + tag] = [m[0] for m in ms]
        out["t_grok" + tag] = [m[1] for m in ms]
    out["ratio99"] = [(g / m if (g is not None and m) else None) for m, g in zip(out["t_mem99"], out["t_grok99"])]
    return out
