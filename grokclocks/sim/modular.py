"""Every paper's modular-arithmetic model through one front-end, `train_modular`.

`train_modular` trains any model of `MODULAR_MODELS` on op(a, b) mod p: all p² pairs are kept with a
0/1 training mask (the task's data come from `grokclocks.task`), so splits of different fractions
share shapes and are vmapped together with the seeds and a hyperparameter grid through the one
engine (`grokclocks.sim.train.simulate`).

Levi et al.'s appendix G (spec `levi:appG`) is one configuration of it, `run_modular_addition`: the
mean-field quadratic MLP (paper eq. 43) h = W1·x/√d_in, z = h², f = W2·z/d_h with W1, W2 ~ N(0, 1),
trained by full-batch GD (optax SGD) on an MSE to the one-hot labels of (n + m) mod p; inputs are
the concatenated one-hots of (n, m) (d_in = 2p).

Because the inputs are one-hot, W1·x = W1[:, n] + W1[:, p + m]: the first layer is evaluated as a
gather (identical to the matrix product, far cheaper).

Loss normalisation (spec erratum 20): `loss="sum"` (default) sums the squared error over the p
classes and averages over samples; `loss="mean"` also averages over classes (PyTorch's
`MSELoss()`), which divides the gradient by p.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .._fielddocs import document_records
from .._validate import (DomainError, as_float_array, choice, in_open_interval, integer_at_least, nonnegative,
                         positive)
from ..citations import cites
from ._runtime import enable_x64
from . import models
from .trackers import check_trackers
from ..task import modular_table, random_split_mask, token_inputs
from .models import mean_field_quadratic_init
from .train import (
    ON_DIVERGENCE,
    OPTIMIZERS,
    Trajectory,
    check_devices,
    check_record_every,
    check_run_path,
    first_crossing_step,
    optax_init,
    optimizer_factory,
    seed_tuple,
    simulate,
)
from .train._batching import _seed_keys

__all__ = [
    "ModularConfig",
    "run_modular_addition",
    "first_crossing_step",
    "quadratic_mlp_onehot_apply",
    "ModularModel",
    "MODULAR_MODELS",
    "modular_model",
    "TrainConfig",
    "train_modular",
    "BUILTIN_METRICS",
]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


@dataclasses.dataclass(frozen=True)
class ModularConfig:
    """Configuration of the runs that `run_modular_addition` wrote before it became a configuration of `train_modular`.

    Kept so that their saved files still load (`grokclocks.compare.load_run` reads their
    `threshold`); new runs carry a `TrainConfig`.
    """

    p: int
    """The modulus p ≥ 2."""
    alpha: float | tuple[float, ...]
    """Training fraction(s) α in (0, 1); a tuple was a grid axis."""
    d_h: int
    """Hidden width ≥ 1."""
    eta: float
    """Learning rate η > 0."""
    steps: int
    """Number of GD steps, ≥ 1."""
    record_every: int
    """Steps between two records, ≥ 1."""
    seeds: tuple[int, ...]
    """The seeds, ≥ 0."""
    loss: str
    """`"sum"` or `"mean"`: MSE summed over the p classes, or averaged over them."""
    weight_decay: float
    """Coefficient c ≥ 0 of c·W added to the gradient."""
    threshold: float
    """Accuracy level in (0, 1) of both clocks of the grokking delay."""
    dtype: str
    """`"float64"` or `"float32"`: the floating dtype of the run."""


def quadratic_mlp_onehot_apply(params: dict[str, jax.Array], hot: jax.Array) -> jax.Array:
    r"""Mean-field quadratic MLP on one-hot inputs given by the indices of their ones.

    The hidden pre-activation is the sum of the columns of W1 at the hot indices, scaled by
    1/√d_in; it is squared and read out by W2/d_h:

    .. math::
        h = \frac{1}{\sqrt{d_{\rm in}}}\sum_{j \in {\rm hot}} W_1[:, j],\quad z = h^2,\quad f = \frac{W_2 z}{d_h}

    Equal to `grokclocks.sim.models.mean_field_quadratic_apply` on the 0/1 inputs with ones at
    `hot`, without the dense product.

    Parameters
    ----------
    params : dict of str to jax.Array
        `{"W1": W1, "W2": W2}` from `grokclocks.sim.models.mean_field_quadratic_init`, shapes
        (d_h, d_in) and (d_out, d_h).
    hot : jax.Array
        Integer indices in [0, d_in) of the ones of each input, shape (N, k) (k = 2 for a pair
        (n, m): indices n and p + m).

    Returns
    -------
    jax.Array
        Outputs f, shape (N, d_out).
    """
    W1, W2 = params["W1"], params["W2"]
    h = jnp.sum(W1.T[hot], axis=-2) / jnp.sqrt(jnp.asarray(W1.shape[1], W1.dtype))
    return jnp.square(h) @ W2.T / W2.shape[1]


@cites("levi:appG", "levi:fig8")
def run_modular_addition(p: int, alpha: float | Sequence[float], d_h: int, eta: float, steps: int, *,
                         seeds: Sequence[int] = (0,), loss: str = "sum", record_every: int = 10,
                         weight_decay: float = 0.0, threshold: float = 0.95, dtype: str = "float64",
                         progress: bool = False, save_path: str | os.PathLike | None = None,
                         resume: bool = False, overwrite: bool = False,
                         on_divergence: str = "raise_if_all") -> Trajectory:
    r"""Levi et al.'s appendix G through `train_modular`: GD of the mean-field quadratic MLP on (n + m) mod p.

    The grokking delay of each run is added to the result.

    The model f(x) = W2·(W1·x/√(2p))²/d_h is trained on the squared error to the one-hot label,
    summed (or averaged, `loss="mean"`) over the p classes; the grokking delay Δt is the
    difference of the first recorded steps at which the test and the training accuracy
    (argmax) reach `threshold`:

    .. math::
        f(x) = \frac{1}{d_h} W_2 \Big(\frac{W_1 x}{\sqrt{2p}}\Big)^{2},\quad
        \mathcal L = \frac{1}{N_{\rm tr}}\sum_{i \in {\rm train}} \|f(x_i) - e_{y_i}\|^2\ (\text{sum}),\ \text{or } /p\ (\text{mean}),

    .. math::
        \Delta t = t_{\rm test}(\text{acc} \ge 0.95) - t_{\rm train}(\text{acc} \ge 0.95)

    (the times are the first recorded steps, resolution `record_every`).  The call is ::

        train_modular("mean_field_quadratic", p, train_frac=alpha, n_train_rule="round", seeds=seeds,
                      model_kwargs={"d_h": d_h}, optimizer="sgd", lr=eta, weight_decay=weight_decay,
                      loss="mse_" + loss, steps=steps, record_every=record_every, train_level=threshold,
                      test_level=threshold, dtype=dtype, ...)

    plus the extras `grok_time` and `lam`.

    Parameters
    ----------
    p : int
        The modulus p ≥ 2; inputs have d_in = 2p, outputs p.
    alpha : float or sequence of float
        Training fraction(s) α in (0, 1), N_tr = round(α p²) pairs; a sequence adds a leading grid
        axis.  For one seed the training sets of different α are nested (same permutation,
        `grokclocks.task.random_split_mask`).
    d_h : int
        Hidden width d_h ≥ 1.
    eta : float
        Learning rate η > 0 (the paper uses 500 with the summed loss).
    steps : int
        Number of GD steps, an integer ≥ 1 and a multiple of `record_every`.
    seeds : sequence of int
        Seeds ≥ 0, distinct: each gives the split seed and the initialisation key `PRNGKey(seed)`
        (as in `train_modular`).  Default `(0,)`.
    loss : {"sum", "mean"}
        MSE summed over the p classes (default; spec erratum 20) or averaged over them.
    record_every : int
        Steps between two records, an integer ≥ 1 dividing `steps`; default 10.
    weight_decay : float
        Coefficient c ≥ 0 of c·W added to the gradient (PyTorch convention); default 0, as in the
        paper.
    threshold : float
        Accuracy level in (0, 1) of both clocks of the grokking delay; default 0.95, the paper's.
    dtype : {"float64", "float32"}
        Floating dtype of the run; default `"float64"`.
    progress : bool
        Show a tqdm progress bar over the compiled chunks; default `False`.
    save_path : str or os.PathLike or None
        Save the run after every chunk to this `.npz` (+ `.json`) file, atomically; `None`
        (default) saves nothing.  An existing file is an error unless `resume` or `overwrite`.
    resume : bool
        With `save_path`: continue the run saved there (a finished run is returned as saved);
        default `False`.
    overwrite : bool
        With `save_path`: replace an existing run; default `False`.  Exclusive with `resume`.
    on_divergence : {"raise_if_all", "flag", "raise"}
        What a run whose metrics become NaN or inf does: `"raise_if_all"` (default) flags it in
        `extras["diverged"]` and raises `SimulationDiverged` only when every run diverged;
        `"flag"` never raises; `"raise"` raises at the first diverged run.

    Returns
    -------
    Trajectory
        `train_modular`'s result: metrics `loss_train`, `loss_test`, `acc_train`, `acc_test`,
        `param_norm` of shape `([n_alpha,] n_seeds, n_records)`; extras `t_train`, `t_test` (first
        recorded step at which the accuracy reaches `threshold`; NaN if never within `steps`),
        `n_train` (one per α: `()` or `(n_alpha,)`), and, added here, `grok_time` = t_test − t_train
        in steps and `lam` = 2/(α p); `config` a `TrainConfig`.  A file written with `save_path`
        holds `train_modular`'s result (the two added extras follow from it).

    Raises
    ------
    DomainError
        If an argument is outside its domain (α must leave a test set: α < 1).
    SimulationDiverged
        As `on_divergence` says.

    References
    ----------
    Spec `levi:appG` (paper appendix G, eq. 43, Fig. 8 = `levi:fig8`).
    """
    loss = choice(loss, "loss", ("sum", "mean"))
    threshold = float(in_open_interval(threshold, "threshold", 0.0, 1.0))
    alphas = np.atleast_1d(positive(alpha, "alpha"))
    if alphas.ndim != 1 or np.any(alphas >= 1):
        raise DomainError(f"alpha must be in (0, 1) (a test set is needed), a scalar or a 1-D sequence (got {alpha!r})")
    traj = train_modular("mean_field_quadratic", p, train_frac=alpha, n_train_rule="round", seeds=seeds,
                         model_kwargs={"d_h": d_h}, optimizer="sgd", lr=eta, weight_decay=weight_decay,
                         loss="mse_" + loss, steps=steps, record_every=record_every, train_level=threshold,
                         test_level=threshold, dtype=dtype, progress=progress, save_path=save_path, resume=resume,
                         overwrite=overwrite, on_divergence=on_divergence)
    lam = 2.0 / (alphas * integer_at_least(p, "p", 2))
    extras = dict(traj.extras, grok_time=traj.extras["t_test"] - traj.extras["t_train"],
                  lam=lam[0] if np.ndim(alpha) == 0 else lam,
                  n_train=np.asarray(traj.extras["n_train"])[..., 0])  # one size per alpha (every seed has it)
    return dataclasses.replace(traj, extras=extras)


# --------------------------------------------------------------------------------------------
# Every paper's modular-arithmetic model through one engine
# --------------------------------------------------------------------------------------------


def _mean_field_quadratic_tokens(params: dict[str, jax.Array], tokens: jax.Array) -> jax.Array:
    p = params["W2"].shape[0]
    return quadratic_mlp_onehot_apply(params, jnp.stack([tokens[:, 0], p + tokens[:, 1]], axis=1))


def _mean_field_quadratic_init(key: jax.Array, p: int, d_h: int = 512, *, dtype: Any = jnp.float32) -> dict:
    return mean_field_quadratic_init(key, 2 * p, d_h, p, dtype=dtype)


def _alpha_two_layer() -> tuple[Any, Any]:
    from . import kramers  # the alpha-parameterised net of spec kramers lives with its theory

    return kramers.alpha_two_layer_init, kramers.alpha_two_layer_apply


@dataclasses.dataclass(frozen=True)
class ModularModel:
    """A modular-task model for `train_modular`: `init(key, p, **kwargs)` and `apply(params, tokens)`.

    `apply` is what the engine differentiates (reverse mode).  The Tian entries use
    `models._tian_hidden`, a `jax.custom_vjp` (faster backward pass), which has no forward mode: for
    `jax.jvp` / `jax.hessian` of Tian's net use `grokclocks.sim.models.tian_mlp_apply`.
    """

    init: Any
    """`init(key, p, *, dtype, **model_kwargs) -> params`, the parameters for modulus p."""
    apply: Any
    """`apply(params, tokens) -> logits`, tokens of shape (N, 2) or (N, 3), logits (N, p)."""
    equals: bool = False
    """Whether the inputs are `[a, b, =]` (3 tokens, `=` being token p) instead of `[a, b]`; default
    `False`."""
    paper: str = ""
    """The spec ID of the model's definition, e.g. `"clocks:appB"`; default empty."""


def _registry() -> dict[str, ModularModel]:
    reg = {
        "embedding_mlp": ModularModel(models.embedding_mlp_init, models.embedding_mlp_apply, paper="clocks:appB"),
        "transformer": ModularModel(models.transformer_init, models.transformer_apply, True, "uniformity:setup"),
        "tian_quadratic": ModularModel(lambda k, p, K=2048, dtype=jnp.float32: models.tian_mlp_init(k, p, K, dtype=dtype),
                                       functools.partial(models._tian_train_apply, act="quadratic"), paper="repulsion:model"),
        "tian_relu": ModularModel(lambda k, p, K=2048, dtype=jnp.float32: models.tian_mlp_init(k, p, K, dtype=dtype),
                                  functools.partial(models._tian_train_apply, act="relu"), paper="repulsion:model"),
        "mean_field_quadratic": ModularModel(_mean_field_quadratic_init, _mean_field_quadratic_tokens,
                                             paper="levi:appG"),
    }
    return reg


MODULAR_MODELS: dict[str, ModularModel] = _registry()
"""The models of `train_modular` by name: `"embedding_mlp"`, `"transformer"`, `"tian_quadratic"`, `"tian_relu"`,
`"mean_field_quadratic"` (and `"alpha_two_layer"`, added on first use by `modular_model`)."""


def modular_model(name: str) -> ModularModel:
    """The modular-task model called `name`.

    Parameters
    ----------
    name : str
        A key of `MODULAR_MODELS` (`"embedding_mlp"`, `"transformer"`, `"tian_quadratic"`,
        `"tian_relu"`, `"mean_field_quadratic"`) or `"alpha_two_layer"`, the α-parameterised net of
        spec `kramers` (imported and registered on first use).

    Returns
    -------
    ModularModel
        Its `init`/`apply` pair and input layout.

    Raises
    ------
    DomainError
        If `name` is not a known model (the message names it `model`).
    """
    if name == "alpha_two_layer" and name not in MODULAR_MODELS:
        init, apply = _alpha_two_layer()
        MODULAR_MODELS[name] = ModularModel(init, apply, paper="kramers:eq1")
    return MODULAR_MODELS[choice(name, "model", tuple(MODULAR_MODELS) + ("alpha_two_layer",))]


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Configuration of a `train_modular` run, stored in its `Trajectory` (grid values as tuples; JSON-serialisable)."""

    model: str
    """The model's name (a key of `MODULAR_MODELS` or `"alpha_two_layer"`)."""
    model_kwargs: tuple[tuple[str, Any], ...]
    """The keyword arguments given to the model's `init`, sorted by name."""
    p: int
    """The modulus p ≥ 2."""
    operation: str
    """The operation's name (`"add"`, ...), or a user function's `__name__` (`"user"` without one)."""
    train_frac: tuple[float, ...] | None
    """The training fractions of the random splits (a grid axis if more than one); `None` for an explicit
    `train_mask`."""
    split: str
    """`"random"` or `"mask"`: whether the splits were drawn from `train_frac` or given as `train_mask`."""
    split_seed: int | None
    """The one split seed shared by every run, or `None` (each run's seed is its split seed)."""
    seeds: tuple[int, ...]
    """The seeds of the runs, ≥ 0."""
    optimizer: str
    """`"sgd"` or `"adam"` or `"adamw"`: the optimiser."""
    lr: tuple[float, ...]
    """Learning rates > 0 (a grid axis if more than one)."""
    weight_decay: tuple[float, ...]
    """Weight decays ≥ 0 (a grid axis if more than one)."""
    betas: tuple[float, float]
    """Adam's (b1, b2), each in [0, 1)."""
    eps: float
    """Adam's denominator offset > 0."""
    warmup_steps: int
    """Linear learning-rate warm-up in steps, ≥ 0."""
    loss: str
    """`"ce"` or `"mse_sum"` or `"mse_mean"` or `"centred_mse"`: the training loss (a key of
    `grokclocks.sim.models.LOSSES`)."""
    batch_size: int | None
    """Mini-batch size, or `None` for full-batch training."""
    steps: int
    """Number of optimisation steps, ≥ 1."""
    record_every: int
    """Steps between two records, ≥ 1 and dividing `steps`."""
    grid_axes: tuple[str, ...]
    """The grid axes of the result, in order, among `"train_frac"`, `"weight_decay"`, `"lr"`."""
    dtype: str
    """`"float32"` or `"float64"`: the parameters' dtype."""
    trackers: tuple[tuple[str, str], ...] = ()
    """Each tracker's name and a stable text of it; default `()`."""
    hooks: tuple[tuple[str, str], ...] = ()
    """Each hook's name and its `module:qualname`; default `()`."""
    compute_dtype: str | None = None
    """The mixed-precision compute dtype (`"bfloat16"`), or `None` (default) for none."""
    n_train_rule: str = "floor"
    """`"floor"` or `"round"`: how a random split's size follows from its fraction: int(frac·p²) or
    round(frac·p²); default `"floor"`."""


@functools.lru_cache(maxsize=None)
def _classifier_fns(apply: Any, loss_name: str, optimizer: str, warmup_steps: int, batch_size: int | None,
                    hooks: tuple[tuple[str, Any], ...],
                    trackers: tuple[tuple[str, Any], ...] = (), padded: bool = True,
                    compute_dtype: str | None = None) -> tuple[Any, Any]:
    """Cached (step, metrics) pair of a classifier trained on a masked table (one compiled program each).

    Without trackers the state is `(params, opt_state, t)`; with trackers it is
    `(params, opt_state, t, carries)`, `carries` a dict name -> carry updated after every
    optimiser update with `(carry, old_params, new_params, t + 1)`.

    `padded=False` (every run has the same number of training pairs, so `train_w` is all ones):
    the full-batch loss is a plain mean over `train_idx`, without the padding weights.
    `compute_dtype` (e.g. `"bfloat16"`): the training forward and backward pass run on a copy of
    the parameters cast to it (outputs cast back before the loss); parameters, gradients, optimiser
    state and the recorded metrics stay in the parameters' dtype.
    """
    loss_fn = models.LOSSES[loss_name]
    opt = optimizer_factory(optimizer, warmup_steps)

    def forward(params: Any, tokens: jax.Array) -> jax.Array:
        if compute_dtype is None:
            return apply(params, tokens)
        low = jax.tree_util.tree_map(
            lambda x: x.astype(compute_dtype) if jnp.issubdtype(x.dtype, jnp.floating) else x, params)
        return apply(low, tokens).astype(jax.tree_util.tree_leaves(params)[0].dtype)

    def objective(params: Any, inp: dict[str, jax.Array], key: jax.Array) -> jax.Array:
        # only the training rows are evaluated: train_idx (n_max,) with 0/1 padding weights train_w
        idx, w = inp["train_idx"], (inp["train_w"] if padded else None)
        if batch_size is not None:
            w = inp["train_w"]
            idx = idx[jax.random.choice(key, idx.shape[0], (batch_size,), replace=False, p=w / jnp.sum(w))]
            w = None
        return loss_fn(forward(params, inp["tokens"][idx]), inp["labels"][idx], w)

    grad = jax.grad(objective)

    def step(state: Any, inp: dict[str, jax.Array]) -> Any:
        params, opt_state, t = state[:3]
        g = grad(params, inp, jax.random.fold_in(inp["key"], t))
        updates, opt_state = opt(inp).update(g, opt_state, params)
        new = optax.apply_updates(params, updates)
        if not trackers:
            return new, opt_state, t + 1
        carries = {name: tr.update(state[3][name], params, new, t + 1) for name, tr in trackers}
        return new, opt_state, t + 1, carries

    def metrics(state: Any, inp: dict[str, jax.Array]) -> dict[str, jax.Array]:
        params = state[0]
        out = apply(params, inp["tokens"])
        y, train = inp["labels"], inp["mask"]
        test = 1.0 - train
        correct = (jnp.argmax(out, axis=-1) == y).astype(train.dtype)
        per = {
            "loss_train": loss_fn(out, y, train),
            "loss_test": loss_fn(out, y, test),
            "acc_train": jnp.sum(correct * train) / jnp.sum(train),
            "acc_test": jnp.sum(correct * test) / jnp.sum(test),
            "param_norm": models.param_norm(params),
        }
        for name, fn in hooks:
            per[name] = fn(params, inp)
        for name, tr in trackers:
            r = tr.read(state[3][name])
            if isinstance(r, dict):
                per.update({f"{name}.{k}": v for k, v in r.items()})
            else:
                per[name] = r
        return per

    return step, metrics


def _describe(tracker: Any) -> str:
    """Stable text of a tracker for the config (functions as module:qualname, no addresses)."""
    def fmt(v: Any) -> str:
        if callable(v):
            return f"{getattr(v, '__module__', '?')}:{getattr(v, '__qualname__', type(v).__name__)}"
        return repr(v)

    if dataclasses.is_dataclass(tracker) and not isinstance(tracker, type):
        fields = ", ".join(f"{f.name}={fmt(getattr(tracker, f.name))}" for f in dataclasses.fields(tracker))
        return f"{type(tracker).__name__}({fields})"
    return fmt(tracker)


BUILTIN_METRICS: tuple[str, ...] = ("loss_train", "loss_test", "acc_train", "acc_test", "param_norm")
"""Metrics that `train_modular` always records (hook and tracker names must differ from them)."""


def _betas(betas: Any) -> tuple[float, float]:
    """Adam's `(b1, b2)`: a pair of finite numbers, each in [0, 1)."""
    if isinstance(betas, (str, bytes)) or np.ndim(betas) != 1 or np.size(betas) != 2:
        raise DomainError(f"betas must be a pair (b1, b2), each in [0, 1) (got {betas!r})")
    b = as_float_array(betas, "betas")
    if np.any((b < 0) | (b >= 1)):
        raise DomainError(f"betas must be a pair (b1, b2), each in [0, 1) (got {tuple(b.tolist())})")
    return float(b[0]), float(b[1])


def _level(x: Any, name: str) -> float:
    """An accuracy level in (0, 1]."""
    v = float(as_float_array(x, name))
    if not 0.0 < v <= 1.0:
        raise DomainError(f"{name} must be in (0, 1] (got {v!r})")
    return v


def _hook_items(hooks: Any) -> tuple[tuple[str, Any], ...]:
    """`hooks` as sorted `(name, fn)` pairs: string names, not built-in metric names, callable values."""
    if hooks is None:
        return ()
    if not isinstance(hooks, Mapping):
        raise DomainError(f"hooks must be a dict name -> fn(params, inputs) (got {type(hooks).__name__})")
    for name, fn in hooks.items():
        if not isinstance(name, str) or not name:
            raise DomainError(f"hook names must be non-empty strings (got {name!r})")
        if name in BUILTIN_METRICS:
            raise DomainError(f"hook name {name!r} collides with a built-in metric {BUILTIN_METRICS}; "
                              "choose another name")
        if not callable(fn):
            raise DomainError(f"hook {name!r} must be callable fn(params, inputs) (got {fn!r})")
    return tuple(sorted(hooks.items()))


def _no_tracker_collision(hook_items: Sequence[tuple[str, Any]], tracker_items: Sequence[tuple[str, Any]]) -> None:
    """A hook may not take a tracker's recorded name (`name` or `name.key`)."""
    for h, _ in hook_items:
        for t, _ in tracker_items:
            if h.startswith(t + "."):
                raise DomainError(f"hook name {h!r} collides with the readout of tracker {t!r} ({t}.<key>)")


def _model_kwargs(spec: ModularModel, model: str, model_kwargs: Any) -> dict[str, Any]:
    """`model_kwargs` checked against the model's `init` signature (names it does not take are an error)."""
    if model_kwargs is None:
        return {}
    if not isinstance(model_kwargs, Mapping):
        raise DomainError(f"model_kwargs must be a dict (got {type(model_kwargs).__name__})")
    kwargs = dict(model_kwargs)
    if "dtype" in kwargs:
        raise DomainError("model_kwargs must not set dtype: pass dtype= to train_modular")
    params = inspect.signature(spec.init).parameters
    if not any(q.kind is q.VAR_KEYWORD for q in params.values()):
        accepted = [n for n, q in list(params.items())[2:] if n != "dtype" and q.kind is not q.VAR_POSITIONAL]
        unknown = sorted(set(kwargs) - set(accepted))
        if unknown:
            raise DomainError(f"model_kwargs: {model!r} takes {accepted}, not {unknown}")
    return kwargs


N_TRAIN_RULES: tuple[str, ...] = ("floor", "round")
"""How a random split's size follows from its fraction (`train_modular`'s `n_train_rule`).

`"floor"`: int(frac·p²), the papers' code; `"round"`: round(frac·p²), Levi et al. App. G.
"""


def _split_size(p: int, frac: float, rule: str) -> dict[str, Any]:
    """Keyword of `grokclocks.task.random_split_mask` for `rule`: `frac` (int(frac p²)) or `n_train`."""
    if rule == "floor":
        return {"frac": frac}
    if not 0.0 < frac < 1.0:
        raise DomainError(f"train_frac must be in (0, 1) (got {frac})")
    return {"n_train": int(round(frac * p * p))}


def _grid_values(value: Any, name: str, check: Any) -> tuple[float, ...]:
    arr = np.atleast_1d(np.asarray(value, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise DomainError(f"{name} must be a scalar or a non-empty 1-D sequence (got shape {arr.shape})")
    return tuple(float(check(v, name)) for v in arr)


@cites("clocks:appB", "repulsion:setup", "uniformity:setup", "levi:appG")
def train_modular(model: str = "embedding_mlp", p: int = 97, *, operation: Any = "add",
                  train_frac: float | Sequence[float] | None = 0.3, train_mask: Any = None,
                  seeds: Sequence[int] = (0,), split_seed: int | None = None, model_kwargs: dict | None = None,
                  optimizer: str = "adamw", lr: float | Sequence[float] = 1e-3,
                  weight_decay: float | Sequence[float] = 1.0, betas: tuple[float, float] = (0.9, 0.98),
                  eps: float = 1e-8, warmup_steps: int = 0, loss: str = "ce", batch_size: int | None = None,
                  steps: int = 1000, record_every: int = 10, hooks: dict[str, Any] | None = None,
                  trackers: dict[str, Any] | None = None, train_level: float = 1.0, test_level: float = 0.99,
                  dtype: str = "float32", progress: bool = False, n_chunks: int | None = None,
                  save_path: str | os.PathLike | None = None, resume: bool = False, overwrite: bool = False,
                  devices: Any = None, on_divergence: str = "raise_if_all", compute_dtype: str | None = None,
                  run_chunk: int | str | None = "auto", n_train_rule: str = "floor") -> Trajectory:
    """Train any paper's model on a modular-arithmetic task: many seeds and a hyperparameter grid at once.

    One compiled program runs every combination of `seeds` × `train_frac` × `weight_decay` × `lr`
    (each a scalar or a sequence): the runs are flattened into one batch axis that is `vmap`-ped
    (and sharded over `devices`), with `lax.scan` over steps and metrics recorded inside the scan
    every `record_every` steps (`grokclocks.sim.train.simulate`).

    All p² pairs are kept with a 0/1 training mask (fixed shapes, so splits of any size batch
    together); the test set is the complement.

    Parameters
    ----------
    model : str
        The model, a key of `MODULAR_MODELS` or `"alpha_two_layer"`: `"embedding_mlp"` (default;
        spec `clocks:appB`, `model_kwargs` `d_embed`, `d_hidden`), `"transformer"`
        (`uniformity:setup`: `d_model`, `n_heads`, `d_head`, `d_mlp`), `"tian_quadratic"` /
        `"tian_relu"` (`repulsion:model`: `K`), `"mean_field_quadratic"` (`levi:appG`: `d_h`),
        `"alpha_two_layer"` (spec `kramers`).
    p : int
        The modulus p ≥ 2; default 97.
    operation : str or callable
        The label op(a, b) mod p: a name of `grokclocks.task.OPERATIONS` (`"add"` (default),
        `"sub"`, `"mul"`, `"sq_sum"`, `"xy"`, `"sq_of_sum"`) or a function `f(a, b)` on int64
        arrays (`grokclocks.task.modular_table`).
    train_frac : float or sequence of float or None
        Fraction(s) of the p² pairs in the training set, each in (0, 1): the random split is
        `default_rng(seed).permutation(p²)[:n]` with n = int(frac·p²) (or round, see
        `n_train_rule`; `grokclocks.task.random_split_mask`); a sequence is a grid axis.  Ignored
        when `train_mask` is given; `None` needs `train_mask`.  Default 0.3.
    train_mask : array_like or None
        An explicit split instead of `train_frac`: bool of shape (p²,) (one split for every seed)
        or (n_seeds, p²) (one per seed, e.g. from `grokclocks.task.designed_split_mask`), `True` on
        the training pairs; each split needs a training and a test pair.  `None` (default) draws
        random splits.
    seeds : sequence of int
        Seeds ≥ 0: each run's initialisation key is `PRNGKey(seed)`, and the seed is its split
        seed unless `split_seed` is given.  Distinct, except with a per-seed `train_mask` (then
        each (seed, mask) pair must be).  Default `(0,)`.
    split_seed : int or None
        One split seed ≥ 0 shared by every run (spec `clocks:appB` uses 0); `None` (default) uses
        each run's seed.  Not allowed with `train_mask`.
    model_kwargs : dict or None
        Keyword arguments of the model's `init` (the widths listed under `model`; not `dtype`);
        names it does not take are an error.  `None` (default) keeps the model's defaults.
    optimizer : {"sgd", "adam", "adamw"}
        The optimiser (`grokclocks.sim.train.optimizer_factory`): GD with coupled L2, Adam with
        coupled L2 (PyTorch `Adam(weight_decay=...)`), or AdamW with decoupled decay (default).
    lr : float or sequence of float
        Learning rate(s) > 0; a sequence is a grid axis.  Default 10⁻³.
    weight_decay : float or sequence of float
        Weight decay(s) ≥ 0 in PyTorch's convention for `optimizer`; a sequence is a grid axis.
        Default 1.
    betas : tuple of float
        Adam's moment decays (b1, b2), each in [0, 1); unused by `"sgd"`.  Default (0.9, 0.98).
    eps : float
        Adam's denominator offset > 0; default 10⁻⁸.
    warmup_steps : int
        Linear learning-rate warm-up length in steps, an integer ≥ 0 (the rate is multiplied by
        min(step/w, 1)); default 0, none.
    loss : {"ce", "mse_sum", "mse_mean", "centred_mse"}
        The training loss, a key of `grokclocks.sim.models.LOSSES`: softmax cross-entropy
        (default), MSE to the one-hot label summed or averaged over classes, or Tian's zero-meaned
        MSE.
    batch_size : int or None
        Mini-batch GD: each step samples `batch_size` distinct training pairs (key
        `fold_in(PRNGKey(seed + 1), step)`), an integer in [1, smallest training set].  `None`
        (default) is full-batch GD.
    steps : int
        Number of optimisation steps, an integer ≥ 1 and a multiple of `record_every`; default 1000.
    record_every : int
        Steps between two records, an integer ≥ 1 dividing `steps`; default 10.
    hooks : dict or None
        Extra metrics recorded with the others, name -> `fn(params, inputs) -> array` (`inputs` has
        `tokens`, `labels`, `mask`, and `train_idx`, `train_w`: the indices of the run's training
        pairs, padded to the largest training set with weight 0); use module-level functions so
        that compiled code is reused.  Names must differ from the built-in metrics
        (`BUILTIN_METRICS`) and from the trackers' (`name` or `name.key`).  Recorded in the config as
        `module:qualname`.  `None` (default) adds none.
    trackers : dict or None
        Per-step state in the scan, name -> tracker (`grokclocks.sim.trackers`):
        `tracker.update(carry, old_params, new_params, step)` after every optimiser update (`step`
        = 1 for the first), `tracker.read(carry)` recorded with the metrics as `name` (or
        `name.key` for a dict readout).  The record at step t has seen the updates 1..t.  Empty or
        `None` (default): exactly the program without trackers.
    train_level : float
        Training-accuracy level in (0, 1] of the extra `t_train`; default 1.
    test_level : float
        Test-accuracy level in (0, 1] of the extra `t_test`; default 0.99.
    dtype : {"float32", "float64"}
        The parameters' dtype (float64 switches JAX to x64); default `"float32"`.
    progress : bool
        Show a tqdm progress bar over the compiled chunks, with the current forecast of t_test after
        every chunk (`grokclocks.forecast.progress_line`); default `False`.
    n_chunks : int or None
        Number of compiled calls the records are split into, an integer ≥ 1 (divergence is checked
        and the run saved after each); `None` (default) means 1, or 20 with a progress bar or
        `save_path`.
    save_path : str or os.PathLike or None
        Save the run after every chunk to this `.npz` (+ `.json`) file, atomically; it holds the
        result below (grid shape, extras) with the state.  `None` (default) saves nothing.  An
        existing file is an error unless `resume` or `overwrite` (checked before anything is built
        or compiled).
    resume : bool
        With `save_path`: continue the run saved there; a finished run is returned unchanged.
        Default `False`.
    overwrite : bool
        With `save_path`: replace an existing run; default `False`.  Exclusive with `resume`.
    devices : None, int or sequence of jax devices
        Shard the runs over local devices: `None` (default) means all local devices (one device
        when their number does not divide the runs), an int `n` the first `n`, a sequence the
        devices themselves.
    on_divergence : {"raise_if_all", "flag", "raise"}
        What a run whose metrics become NaN or inf does: `"raise_if_all"` (default) flags it in
        `extras["diverged"]` and raises `SimulationDiverged` only when every run diverged;
        `"flag"` never raises; `"raise"` raises at the first diverged run.
    compute_dtype : {"bfloat16"} or None
        Mixed precision: the training forward and backward pass run in this dtype (a cast copy of
        the parameters; the outputs are cast back before the loss), while the parameters, their
        gradients, the optimiser state and the recorded metrics stay in `dtype`.  `None` (default):
        everything in `dtype`.
    run_chunk : int, "auto" or None
        At most this many runs at a time inside the one program (an integer ≥ 1); `"auto"`
        (default) chunks only when the program's memory estimate exceeds the free device memory;
        `None` runs all at once.  The chunk used is `extras["run_chunk"]`.
    n_train_rule : {"floor", "round"}
        Size of a random split: int(frac·p²) (default; the papers' code) or round(frac·p²) (Levi
        et al. App. G, `run_modular_addition`).

    Returns
    -------
    Trajectory
        Metrics `loss_train`, `loss_test`, `acc_train`, `acc_test`, `param_norm` (and the hooks')
        of shape `(*grid_shape, n_seeds, [hook value shape,] n_records)`, where `grid_shape` lists
        the sequence-valued arguments among (`train_frac`, `weight_decay`, `lr`) in that order
        (`config.grid_axes`).  Extras: `t_train`, `t_test` (first recorded step with accuracy ≥ the
        level; NaN = never; for a diverged run only its records before the divergence count),
        `n_train`, `n_devices`, `run_chunk`, `diverged`, `diverged_step`.  `final_state` =
        `(params, opt_state, step)` without trackers and `(params, opt_state, step, carries)` with
        them (`carries`: dict name -> final carry), every leaf with the flattened run axis in front
        (runs in C order over the grid axes and the seeds; `grokclocks.sim.trackers.tracker_carry`
        reshapes a carry to the batch shape).  `config` is a `TrainConfig`.

    Raises
    ------
    DomainError
        If an argument is outside its domain (checked before anything is built or compiled).
    SimulationDiverged
        As `on_divergence` says.

    References
    ----------
    Specs `clocks:appB`, `repulsion:setup`, `uniformity:setup`, `levi:appG`.
    """
    spec = modular_model(model)
    p = integer_at_least(p, "p", 2)
    dtype = choice(dtype, "dtype", ("float64", "float32"))
    optimizer = choice(optimizer, "optimizer", OPTIMIZERS)
    loss = choice(loss, "loss", tuple(models.LOSSES))
    steps, record_every = check_record_every(steps, record_every)
    if n_chunks is not None:
        n_chunks = integer_at_least(n_chunks, "n_chunks", 1)
    warmup_steps = integer_at_least(warmup_steps, "warmup_steps", 0)
    eps = float(positive(eps, "eps"))
    b1, b2 = _betas(betas)
    train_level = _level(train_level, "train_level")
    test_level = _level(test_level, "test_level")
    on_divergence = choice(on_divergence, "on_divergence", ON_DIVERGENCE)
    if compute_dtype is not None:
        compute_dtype = choice(compute_dtype, "compute_dtype", ("bfloat16",))
    n_train_rule = choice(n_train_rule, "n_train_rule", N_TRAIN_RULES)
    check_run_path(save_path, resume=resume, overwrite=overwrite)
    per_run_masks = train_mask is not None and np.ndim(train_mask) == 2
    seeds = seed_tuple(seeds, distinct=not per_run_masks)
    kwargs = _model_kwargs(spec, model, model_kwargs)
    hook_items = _hook_items(hooks)
    tracker_items = check_trackers(trackers, reserved=BUILTIN_METRICS + tuple(n for n, _ in hook_items))
    _no_tracker_collision(hook_items, tracker_items)
    if dtype == "float64":
        enable_x64()
    fdt = jnp.float64 if dtype == "float64" else jnp.float32
    lrs = _grid_values(lr, "lr", positive)
    wds = _grid_values(weight_decay, "weight_decay", nonnegative)
    a, b, labels = modular_table(p, operation)
    tokens = token_inputs(a, b, p, equals=spec.equals)

    if train_mask is not None:
        if split_seed is not None:
            raise DomainError(f"split_seed has no effect with train_mask (got split_seed={split_seed!r})")
        masks = np.asarray(train_mask)
        if masks.dtype != bool or masks.shape[-1] != p * p or masks.ndim not in (1, 2):
            raise DomainError(f"train_mask must be boolean of shape (p^2,) or (n_seeds, p^2) with p^2={p * p} "
                              f"(got {masks.dtype} {masks.shape})")
        if masks.ndim == 2 and masks.shape[0] != len(seeds):
            raise DomainError(f"train_mask of shape (n_runs, p^2) needs one mask per seed "
                              f"(got {masks.shape[0]} masks for {len(seeds)} seeds)")
        if masks.ndim == 2 and len(set(seeds)) != len(seeds):
            pairs = [(s, m.tobytes()) for s, m in zip(seeds, masks)]
            if len(set(pairs)) != len(pairs):
                raise DomainError("each run (seed, train_mask row) must be distinct: a repeated pair repeats "
                                  f"the same run (seeds {seeds})")
        masks = np.broadcast_to(masks, (len(seeds), p * p))[None]  # (1 frac, n_seeds, p^2)
        fracs: tuple[float, ...] | None = None
        split = "mask"
    else:
        if train_frac is None:
            raise DomainError("give train_frac or train_mask")
        fracs = _grid_values(train_frac, "train_frac", positive)
        split_seeds = [s if split_seed is None else integer_at_least(split_seed, "split_seed", 0) for s in seeds]
        masks = np.stack([random_split_mask(p, split_seeds, **_split_size(p, f, n_train_rule))
                          for f in fracs])  # (n_frac, n_seeds, p^2)
        split = "random"
    if (~masks).all(axis=-1).any() or masks.all(axis=-1).any():
        raise DomainError("every split needs at least one training and one test pair")
    if batch_size is not None:
        batch_size = integer_at_least(batch_size, "batch_size", 1)
        if batch_size > masks.sum(-1).min():
            raise DomainError(f"batch_size must be <= the smallest training set ({masks.sum(-1).min()}), got {batch_size}")

    grid_axes = tuple(n for n, v in (("train_frac", train_frac if train_mask is None else 0.0),
                                     ("weight_decay", weight_decay), ("lr", lr)) if np.ndim(v) > 0)
    n_f, n_w, n_l, n_s = masks.shape[0], len(wds), len(lrs), len(seeds)
    # runs in C order over (frac, wd, lr, seed)
    F, W, L, S = np.meshgrid(np.arange(n_f), np.arange(n_w), np.arange(n_l), np.arange(n_s), indexing="ij")
    F, W, L, S = (x.ravel() for x in (F, W, L, S))
    run_seeds = np.asarray(seeds)[S]
    check_devices(devices, len(run_seeds))
    # What is the same for every run enters the program once, unbatched (in_axes None): one split
    # shared by all runs (split_seed, a 1-D train_mask), a learning rate or weight decay that is not
    # a grid axis.  Only what differs between runs carries the run axis.
    run_masks = masks[F, S]
    shared_split = bool((run_masks == run_masks[:1]).all())
    split_masks = run_masks[:1] if shared_split else run_masks
    # indices of each run's training pairs, padded to the largest training set with weight 0
    n_max = int(split_masks.sum(-1).max())
    padded = n_max != int(split_masks.sum(-1).min())
    order = np.argsort(~split_masks, axis=-1, kind="stable")[:, :n_max]

    def per_run(values: np.ndarray, batched: bool, dt: Any) -> jax.Array:
        return jnp.asarray(values if batched else values[0], dt)

    inputs = {
        "tokens": jnp.asarray(tokens, jnp.int32),
        "labels": jnp.asarray(labels, jnp.int32),
        "mask": per_run(split_masks, not shared_split, fdt),
        "lr": per_run(np.asarray(lrs)[L], n_l > 1, fdt),
        "wd": per_run(np.asarray(wds)[W], n_w > 1, fdt),
        "b1": jnp.asarray(b1, fdt), "b2": jnp.asarray(b2, fdt), "eps": jnp.asarray(eps, fdt),
        "key": _seed_keys([int(s) + 1 for s in run_seeds]),
        "train_idx": per_run(order, not shared_split, jnp.int32),
        "train_w": per_run(np.take_along_axis(split_masks, order, axis=-1), not shared_split, fdt),
    }
    batched_keys = {"key"} | ({"lr"} if n_l > 1 else set()) | ({"wd"} if n_w > 1 else set())
    if not shared_split:
        batched_keys |= {"mask", "train_idx", "train_w"}
    axes = [{k: (0 if k in batched_keys else None) for k in inputs}]
    # the initialisation stays op by op (compiled, XLA turns its divisions by constants into products: E would
    # differ in the last bit); the keys and the optimiser state are one compiled call each (cached)
    params = jax.vmap(lambda k: spec.init(k, p, dtype=fdt, **kwargs))(_seed_keys([int(s) for s in run_seeds]))
    step, metrics = _classifier_fns(spec.apply, loss, optimizer, warmup_steps, batch_size, hook_items, tracker_items,
                                    padded, compute_dtype)
    opt = optimizer_factory(optimizer, warmup_steps)
    params, opt_state = optax_init(opt, params, inputs, axes)
    state0 = (params, opt_state, jnp.zeros(len(run_seeds), jnp.int32))
    if tracker_items:
        state0 = state0 + ({name: jax.vmap(tr.init)(params) for name, tr in tracker_items},)
    config = TrainConfig(model=model, model_kwargs=tuple(sorted(kwargs.items())), p=p,
                         operation=operation if isinstance(operation, str) else getattr(operation, "__name__", "user"),
                         train_frac=fracs, split=split, split_seed=split_seed, seeds=seeds, optimizer=optimizer,
                         lr=lrs, weight_decay=wds, betas=(b1, b2), eps=eps, warmup_steps=warmup_steps, loss=loss,
                         batch_size=batch_size, steps=steps, record_every=record_every, grid_axes=grid_axes,
                         dtype=dtype, trackers=tuple((n, _describe(tr)) for n, tr in tracker_items),
                         hooks=tuple((n, _describe(fn)) for n, fn in hook_items), compute_dtype=compute_dtype,
                         n_train_rule=n_train_rule)
    shape = tuple(len(x) for x, name in ((fracs or (0,), "train_frac"), (wds, "weight_decay"), (lrs, "lr"))
                  if name in grid_axes) + (n_s,)
    n_train = masks[F, S].sum(-1).reshape(shape)

    def derived(traj: Trajectory) -> dict[str, np.ndarray]:
        return {"t_train": first_crossing_step(traj.times, traj.metrics["acc_train"], train_level),
                "t_test": first_crossing_step(traj.times, traj.metrics["acc_test"], test_level),
                "n_train": n_train}

    return simulate(step, metrics, state0, inputs, steps=steps, record_every=record_every, batch_axes=axes,
                    config=config, progress=progress, n_chunks=n_chunks, save_path=save_path, resume=resume,
                    overwrite=overwrite, devices=devices, on_divergence=on_divergence, batch_shape=shape,
                    extras_fn=derived, divergence_hint=f"lr={lrs} may be too large for {model} with {optimizer}",
                    run_chunk=run_chunk, progress_info=_forecast_line if progress else None)


def _forecast_line(traj: Trajectory) -> str:
    """The progress bar's text after a chunk: the current forecast of the run(s) (`grokclocks.forecast`)."""
    from ..forecast import progress_line  # numpy/scipy only; the one import of the tool layer by the engine

    return "forecast: " + progress_line(dataclasses.replace(traj, extras={}))


document_records(globals(), __all__)  # help() of each record class lists its fields
