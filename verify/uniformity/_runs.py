"""Training runs on designed splits for ``verify/uniformity/test_training.py`` (spec ``uniformity`` V2/V3).

One compiled program per (model, vocabulary layout): every (design, seed) pair of a batch is one vmapped
run of :func:`grokclocks.sim.modular.train_modular` (explicit ``train_mask`` of shape ``(n_runs, p^2)``,
the init seeds repeated per design).  Each run is analysed in pure numpy by
:func:`grokclocks.coverage.analyse_run` (combined torus ceiling at ``n = inf``, U-/L-Acc, GO epoch,
Spearman(MED, test loss) before and during grokking), with MED from :func:`grokclocks.coverage.med_trajectory`
of the recorded embedding matrices.

Vocabulary layouts (spec §5, §7): ``"shared"`` is the engine's transformer (tokens ``a, b, =`` with ids
``a, b, p``: ``b_offset = 0``, the code's ``rec.py``/``base.py``); ``"disjoint"`` gives the second operand
its own ids ``p + b`` (``b_offset = p``, embedding ``(2p + 1, d_model)``, ``=`` is ``2p``) -- the token-factor
control of V2 (c), registered below as the model ``"uniformity_transformer_disjoint"`` (a
:class:`~grokclocks.sim.modular.ModularModel` added to the engine's registry at import; nothing in
``grokclocks`` is changed).
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import importlib

from grokclocks.sim import models
from grokclocks.sim import modular

C = importlib.import_module("grokclocks.coverage")  # the package attribute is citations.coverage()

DISJOINT = "uniformity_transformer_disjoint"


# ------------------------------------------------------------------------------------------ models and hooks


def _disjoint_init(key: jax.Array, p: int, d_model: int = 128, n_heads: int = 4, d_head: int = 32, d_mlp: int = 512,
                   *, dtype: Any = jnp.float32) -> dict[str, jax.Array]:
    """The engine's transformer with a ``(2p + 1, d_model)`` embedding (operand-2 ids ``p..2p-1``, ``=`` = ``2p``)."""
    k_tr, k_e = jax.random.split(key)
    params = models.transformer_init(k_tr, p, d_model, n_heads, d_head, d_mlp, dtype=dtype)
    params["W_E"] = jax.random.normal(k_e, (2 * p + 1, d_model), dtype) / jnp.sqrt(jnp.asarray(d_model, dtype))
    return params


def _disjoint_apply(params: dict[str, jax.Array], tokens: jax.Array) -> jax.Array:
    """Tokens ``[a, b, p]`` of the engine -> ids ``[a, p + b, 2p]``, then the same one-layer decoder."""
    p = params["W_U"].shape[1]
    ids = jnp.stack([tokens[:, 0], tokens[:, 1] + p, jnp.full_like(tokens[:, 0], 2 * p)], axis=1)
    return models.transformer_apply(params, ids)


if DISJOINT not in modular.MODULAR_MODELS:
    modular.MODULAR_MODELS[DISJOINT] = modular.ModularModel(_disjoint_init, _disjoint_apply, True, "uniformity:setup")


def hook_W_E(params: dict[str, jax.Array], inputs: dict[str, jax.Array]) -> jax.Array:
    """Token embedding matrix of the transformer, rows = token ids (module level: compiled code is cached)."""
    return params["W_E"]


def hook_E(params: dict[str, jax.Array], inputs: dict[str, jax.Array]) -> jax.Array:
    """Token embedding matrix of the embedding MLP, rows = token ids."""
    return params["E"]


def hook_correct_transformer(params: dict[str, jax.Array], inputs: dict[str, jax.Array]) -> jax.Array:
    """Per-pair correctness (p^2,) of the shared-vocabulary transformer (row ``a p + b``)."""
    out = models.transformer_apply(params, inputs["tokens"])
    return (jnp.argmax(out, axis=-1) == inputs["labels"]).astype(jnp.int8)


def hook_correct_disjoint(params: dict[str, jax.Array], inputs: dict[str, jax.Array]) -> jax.Array:
    """Per-pair correctness (p^2,) of the disjoint-vocabulary transformer."""
    out = _disjoint_apply(params, inputs["tokens"])
    return (jnp.argmax(out, axis=-1) == inputs["labels"]).astype(jnp.int8)


def hook_correct_mlp(params: dict[str, jax.Array], inputs: dict[str, jax.Array]) -> jax.Array:
    """Per-pair correctness (p^2,) of the embedding MLP."""
    out = models.embedding_mlp_apply(params, inputs["tokens"])
    return (jnp.argmax(out, axis=-1) == inputs["labels"]).astype(jnp.int8)


MODELS = {  # name -> (engine model, embedding hook, correctness hook, b_offset(p))
    "transformer": ("transformer", hook_W_E, hook_correct_transformer, lambda p: 0),
    "transformer_disjoint": (DISJOINT, hook_W_E, hook_correct_disjoint, lambda p: p),
    "embedding_mlp": ("embedding_mlp", hook_E, hook_correct_mlp, lambda p: 0),
}


# ------------------------------------------------------------------------------------------ splits


def split(p: int, design: str, k: int | None, frac: float, held_labels: tuple[int, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    """``(train, test)`` boolean ``(p, p)`` masks of a design (authors' construction, python shuffle, seed 0).

    ``design = "heldlabel"``: the random split with every pair whose ``add`` label is in ``held_labels``
    moved from the training to the test set (a split whose combined ceiling at ``n = inf`` is < 1).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # STRIP with a small remainder warns (spec §7); sizes are reported
        if design == "heldlabel":
            tr, te = C.designed_split(p, "random", None, frac)
            held = np.isin(C.label_table(p, "add"), np.asarray(held_labels, dtype=np.int64))
            return tr & ~held, te | (tr & held)
        return C.designed_split(p, design, k, frac)


@dataclasses.dataclass
class Batch:
    """One compiled program: model x designs x seeds (runs in design-major order)."""

    model: str
    p: int
    designs: list[tuple[str, str, int | None]]  # (label, design, k)
    seeds: tuple[int, ...]
    frac: float
    steps: int
    record_every: int
    model_kwargs: dict
    operation: str = "add"
    lr: float = 1e-3
    held_labels: tuple[int, ...] = ()


def run_batch(b: Batch) -> dict[str, Any]:
    """Train every (design, seed) of ``b`` in one vmapped program; analyse each run with ``analyse_run``.

    Returns ``dict(runs=[...], seconds=..., times=...)``; each run dict holds the design, seed, train/test
    masks, metric trajectories, MED (``"paper"`` and ``"code_base"`` variants) and ``analyse_run``'s results.
    """
    engine_model, hook, hook_ok, boff = MODELS[b.model]
    b_offset = boff(b.p)
    splits = [split(b.p, d, k, b.frac, b.held_labels) for _, d, k in b.designs]
    masks = np.stack([tr.reshape(-1) for tr, _ in splits for _ in b.seeds])
    seeds = tuple(s for _ in b.designs for s in b.seeds)
    t0 = time.perf_counter()
    traj = modular.train_modular(engine_model, b.p, operation=b.operation, train_mask=masks, seeds=seeds,
                                 model_kwargs=b.model_kwargs, optimizer="adamw", lr=b.lr, weight_decay=1.0,
                                 betas=(0.9, 0.98), eps=1e-8, warmup_steps=10, loss="ce", steps=b.steps,
                                 record_every=b.record_every, hooks={"W_E": hook, "correct": hook_ok}, dtype="float32")
    seconds = time.perf_counter() - t0
    m = {k: np.asarray(v, dtype=np.float64) for k, v in traj.metrics.items()}
    epochs = np.asarray(traj.times, dtype=np.float64)
    labels = C.label_table(b.p, b.operation)
    runs = []
    for i, ((lab, design, k), (tr, te)) in enumerate((d, s) for d, s in zip(b.designs, splits) for _ in b.seeds):
        E_t = np.moveaxis(m["W_E"][i], -1, 0)  # (T, tokens, d)
        med = C.med_trajectory(E_t, b.p, b_offset, "paper", token_axis=0)
        med_code = C.med_trajectory(E_t, b.p, b_offset, "code_base", token_axis=0)
        res = C.analyse_run(m["acc_test"][i], tr, labels, train_acc=m["acc_train"][i], epochs=epochs,
                            test_loss=m["loss_test"][i], med=med, test_mask=te, b_offset=b_offset)
        ok = m["correct"][i].reshape(b.p, b.p, -1) > 0.5  # (a, b, T)
        unc = te & ~covered_mask(tr, labels, b_offset)
        strip = te & ~tr.any(axis=1)[:, None]  # test points whose first operand row is never trained
        res.update(
            n_uncovered=int(unc.sum()),
            uncovered_hits=ok[unc].sum(axis=0).astype(np.int64),  # (T,) uncovered test points right, per record
            strip_acc=ok[strip].mean(axis=0) if strip.any() else None,  # (T,)
            acc_test_from_hook=ok[te].mean(axis=0),
        )
        runs.append(dict(label=lab, design=design, k=k, seed=seeds[i], model=b.model, b_offset=b_offset,
                         train=tr, test=te, acc_test=m["acc_test"][i], acc_train=m["acc_train"][i],
                         loss_test=m["loss_test"][i], med=med, med_code=med_code, epochs=epochs,
                         n_train=int(tr.sum()), n_test=int(te.sum()), **res))
    return dict(runs=runs, seconds=seconds, final_params=traj.final_state[0])


# ------------------------------------------------------------------------------------------ predictions


def chance_allowance(n_test: int, ceiling: float, p: int, alpha: float) -> tuple[int, float]:
    r"""Largest number of *uncovered* test points a chance-level predictor gets right, at level ``alpha``.

    The combined ceiling counts a test point only if a same-label training point exists and both tokens
    were trained; the other :math:`N_u=(1-\mathrm{Ceil})\,|S|` points can still be hit by an argmax that is
    right by chance.  A predictor whose answer on them is independent of the true label is right with
    probability :math:`1/p` each; the count of hits is :math:`\mathrm{Bin}(N_u, 1/p)` when independent, and
    less dispersed when one answer is shared by a whole column of unseen tokens (one hit at most per
    column: variance :math:`(k+1)(1-(k+1)/p)\le N_u\frac1p(1-\frac1p)`).  Returns the upper
    :math:`(1-\alpha)` quantile :math:`h` of :math:`\mathrm{Bin}(N_u,1/p)` and the accuracy allowance
    :math:`h/|S|`.
    """
    from scipy import stats

    n_u = int(round((1.0 - ceiling) * n_test))
    if n_u == 0:
        return 0, 0.0
    h = int(stats.binom.isf(alpha, n_u, 1.0 / p))
    return h, h / n_test


def covered_mask(train: np.ndarray, labels: np.ndarray, b_offset: int) -> np.ndarray:
    """Points counted by the combined ceiling at ``n = inf``: a same-label training point exists and both tokens are trained."""
    return np.isfinite(C.same_label_distance(train, labels)) & C.token_coverage_mask(train, b_offset)
