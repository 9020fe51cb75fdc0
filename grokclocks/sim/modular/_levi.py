"""Levi et al.'s appendix G (spec `levi:appG`) as one configuration of `train_modular`: the mean-field quadratic
MLP on one-hot inputs, trained by full-batch GD on an MSE.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

import numpy as np

from ..._validate import choice, DomainError, in_open_interval, integer_at_least, positive
from ...citations import cites
from ..train import Trajectory
from ._train import train_modular


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
