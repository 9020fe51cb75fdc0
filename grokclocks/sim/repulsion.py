"""Tian-setup training with the spec `repulsion` instruments: rolling update Gram, ρ_tian, snapshots.

One call of `train_tian` runs the grokking condition (η = 2×10⁻⁴) and the matched-seed control
(η = 0) of spec `repulsion:setup` through the one engine (`grokclocks.sim.modular.train_modular`:
Tian's σ(XW)V, PyTorch-default uniform init, zero-meaned MSE as trained, Adam with coupled L2
weight decay η, full batch, one step per epoch) with

* an `grokclocks.sim.trackers.update_gram_tracker` on W (and optionally V): the rolling w × w Gram
  of the weight updates, turned into σ_1..σ_k per epoch and the gap g = σ_2/σ_3 (eq. 5);
* the hook `rho_tian_hook`: ρ_tian of the training features per epoch, by the closed form of spec
  §7 (eq. 7 as the code computes it), matmuls at `precision=HIGHEST`;
* a `grokclocks.sim.trackers.snapshot_tracker` keeping (W, V) at chosen epochs, so that the
  Theorem-6 statistics (spec §5) are evaluated in float64 on the host from the same run.

Epoch alignment (spec §3, "metrics logged before the step"): row t of every per-epoch array
describes the parameters after t updates (row 0 = initialisation); σ_k(t) uses ΔW_{max(1,t−w+1)..t}.
The host-side statistics are those of `grokclocks.repulsion`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import repulsion as R
from .._fielddocs import document_records
from .._validate import DomainError, choice, integer_at_least, nonnegative, positive
from ..citations import cites
from .data import modular_table, random_split_mask
from .modular import train_modular
from .models import tian_features as _model_features
from .train import Trajectory, seed_tuple
from .trackers import rolling_eigenvalues, snapshot_tracker, snapshots, update_gram_tracker

__all__ = [
    "rho_tian_hook",
    "rho_tian_relu_hook",
    "rho_tian_jax",
    "train_features",
    "tian_features",
    "training_pairs",
    "TianRun",
    "train_tian",
]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})

_HIGHEST = jax.lax.Precision.HIGHEST


@cites("repulsion:rho-tian")
def rho_tian_jax(F: jax.Array, weights: jax.Array | None = None) -> jax.Array:
    r"""ρ_tian of a feature matrix in JAX: the closed form of spec §7, rewritten around the column means.

    Spec §7 (code `fft_dist_from_ideal`, on the raw Gram G = FFᵀ of the n rows) compares the mean
    diagonal d̄ and the mean off-diagonal ō of G with its Frobenius norm:

    .. math::

        \rho^2=1-\frac{n\bar d^2+n(n-1)\bar o^2}{\|G\|_F^2},\qquad
        \bar d=\tfrac1n\operatorname{tr}G,\quad \bar o=\frac{\mathbf 1^\top G\mathbf 1-\operatorname{tr}G}{n(n-1)} .

    With the column means μ = Fᵀ1/n, the centred features F̃ = F − 1μᵀ, H = F̃F̃ᵀ, a = F̃μ,
    h = tr H and c = ‖μ‖², one has G = H + a1ᵀ + 1aᵀ + c·11ᵀ with H1 = 0 and 1ᵀa = 0, hence
    ‖G‖²_F = ‖H‖²_F + 2n‖a‖² + n²c² and n·d̄² + n(n−1)·ō² = h²/(n−1) + n²c², and

    .. math::

        \rho^2=\frac{\|H\|_F^2+2n\|a\|^2-h^2/(n-1)}{\|H\|_F^2+2n\|a\|^2+n^2c^2} .

    The dominant n²c² (all-positive x² features make G ≈ c·11ᵀ) cancels exactly instead of in
    floating point: in float32 this form agrees with the float64 reference to 2.1e-7 relative, the
    uncentred closed form only to 2.3e-5 (measured on 24 trained feature matrices, M = 41,
    K = 512, n = 840, ρ ≈ 0.1).  ‖H‖_F = ‖F̃ᵀF̃‖_F is formed on the smaller side; every matmul at
    `precision=HIGHEST` (TF32 would perturb the 0.075 crossing).

    Parameters
    ----------
    F : jax.Array
        Features, shape (N, K), rows = samples, floating dtype.
    weights : jax.Array or None
        Row mask of shape (N,) with entries 0 or 1: rows of weight 0 (padding) are dropped exactly
        (not counted in n).  `None` (default) keeps every row.

    Returns
    -------
    jax.Array
        ρ_tian, a scalar in [0, 1] in the dtype of `F`.

    References
    ----------
    Spec `repulsion:rho-tian` (eq. 7 as the code computes it, erratum `repulsion-3`); the numpy
    reference is `grokclocks.repulsion.rho_tian`.
    """
    if weights is None:
        weights = jnp.ones(F.shape[0], F.dtype)
    w = weights.astype(F.dtype)
    n = jnp.sum(w)
    mu = jnp.sum(F * w[:, None], axis=0) / n
    Ft = (F - mu) * w[:, None]
    h = jnp.sum(Ft * Ft)
    Hs = (jnp.matmul(Ft.T, Ft, precision=_HIGHEST) if F.shape[1] <= F.shape[0]
          else jnp.matmul(Ft, Ft.T, precision=_HIGHEST))
    h2 = jnp.sum(Hs * Hs)
    a = jnp.matmul(Ft, mu, precision=_HIGHEST)
    cross = 2.0 * n * jnp.dot(a, a, precision=_HIGHEST)
    c = jnp.dot(mu, mu, precision=_HIGHEST)
    num = h2 + cross - h * h / (n - 1)
    return jnp.sqrt(jnp.maximum(0.0, num / (h2 + cross + (n * c) ** 2)))


def _train_rows_features(params: dict[str, jax.Array], inp: dict[str, jax.Array], act: str) -> jax.Array:
    return _model_features(params, inp["tokens"][inp["train_idx"]], act)


@cites("repulsion:rho-tian")
def rho_tian_hook(params: dict[str, jax.Array], inp: dict[str, jax.Array]) -> jax.Array:
    r"""`train_modular` hook: ρ_tian of the training features of Tian's net with σ(x) = x².

    Uses the run's training rows (`inp["train_idx"]`, padding weight `inp["train_w"]`) and
    `rho_tian_jax`.

    Parameters
    ----------
    params : dict of str to jax.Array
        One run's parameters of Tian's net, `{"W": (2M, K), "V": (K, M)}`.
    inp : dict of str to jax.Array
        The run's inputs as `train_modular` passes them to hooks: `tokens`, and `train_idx` /
        `train_w`, the indices of the training pairs padded with weight 0.

    Returns
    -------
    jax.Array
        ρ_tian of the training features, a scalar.

    References
    ----------
    Spec `repulsion:rho-tian`.
    """
    return rho_tian_jax(_train_rows_features(params, inp, "quadratic"), inp["train_w"])


@cites("repulsion:rho-tian")
def rho_tian_relu_hook(params: dict[str, jax.Array], inp: dict[str, jax.Array]) -> jax.Array:
    r"""`train_modular` hook: ρ_tian of the training features of Tian's net with σ = ReLU.

    Uses the run's training rows (`inp["train_idx"]`, padding weight `inp["train_w"]`) and
    `rho_tian_jax`.

    Parameters
    ----------
    params : dict of str to jax.Array
        One run's parameters of Tian's net, `{"W": (2M, K), "V": (K, M)}`.
    inp : dict of str to jax.Array
        The run's inputs as `train_modular` passes them to hooks: `tokens`, and `train_idx` /
        `train_w`, the indices of the training pairs padded with weight 0.

    Returns
    -------
    jax.Array
        ρ_tian of the training features, a scalar.

    References
    ----------
    Spec `repulsion:rho-tian`.
    """
    return rho_tian_jax(_train_rows_features(params, inp, "relu"), inp["train_w"])


@cites("repulsion:model")
def training_pairs(M: int, mask: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""One-hot inputs X of shape (n, 2M) and labels of the training pairs of a train mask (rows in table order).

    Parameters
    ----------
    M : int
        The modulus M ≥ 2.
    mask : array_like
        Boolean training mask of shape (M²,) over the pairs (a, b) in the order of
        `grokclocks.task.modular_table` (row a·M + b), with at least one `True`.

    Returns
    -------
    tuple of numpy.ndarray
        `(X, y)`: X from `grokclocks.repulsion.one_hot_pairs` (float64, (n, 2M)), y = (a + b) mod M
        (int64, (n,)).

    Raises
    ------
    DomainError
        If `mask` is not boolean of length M², or has no training pair.
    """
    M = integer_at_least(M, "M", 2)
    m = np.asarray(mask)
    if m.dtype != bool or m.shape != (M * M,) or not m.any():
        raise DomainError(f"mask must be a non-empty boolean array of shape ({M * M},) (got {m.dtype} {m.shape})")
    a, b, y = modular_table(M)
    return R.one_hot_pairs(a[m], b[m], M), y[m]


@cites("repulsion:model", "repulsion:ftilde")
def tian_features(params: Any, X: Any, activation: str = "sqr", centred: bool = False) -> np.ndarray:
    r"""Float64 features F = σ(XW) (or F̃ = P₁^⊥ F, the column means removed) of one run's parameters.

    Parameters
    ----------
    params : mapping of str to array_like
        One run's parameters (e.g. a snapshot of `TianRun`), any float dtype: `"W"` of shape
        (2M, K) and `"V"` of shape (K, M).
    X : array_like
        One-hot inputs of shape (n, 2M) (`training_pairs`).
    activation : {"sqr", "relu"}
        The activation σ: x² (default) or ReLU.
    centred : bool
        Whether to return F̃, the features with the column means over the rows of `X` removed
        (spec `repulsion:ftilde`); default `False`.

    Returns
    -------
    numpy.ndarray
        float64 of shape (n, K).

    References
    ----------
    Spec `repulsion:model` (eq. 2), `repulsion:ftilde`; computed by `grokclocks.repulsion.tian_forward`.
    """
    F, _ = R.tian_forward(np.asarray(params["W"], np.float64), np.asarray(params["V"], np.float64), X, activation)
    return R.center_features(F) if centred else F


def train_features(params: Any, M: int, mask: Any, activation: str = "sqr") -> np.ndarray:
    """Centred float64 training features F̃ of one run: `tian_features` on `training_pairs`.

    Parameters
    ----------
    params : mapping of str to array_like
        One run's parameters, `"W"` (2M, K) and `"V"` (K, M).
    M : int
        The modulus M ≥ 2.
    mask : array_like
        Boolean training mask of shape (M²,) in table order.
    activation : {"sqr", "relu"}
        The activation σ: x² (default) or ReLU.

    Returns
    -------
    numpy.ndarray
        float64 of shape (n_train, K), column means removed.

    Raises
    ------
    DomainError
        If `M` or `mask` is invalid.
    """
    X, _ = training_pairs(M, mask)
    return tian_features(params, X, activation, centred=True)


@dataclasses.dataclass(frozen=True, eq=False)
class TianRun:
    r"""Result of `train_tian`; per-epoch arrays are indexed [eta, seed, epoch(, order)]."""

    M: int
    """The modulus M ≥ 2."""
    K: int
    """Hidden width K ≥ 1."""
    n_train: int
    """Number of training pairs per run."""
    activation: str
    """`"sqr"` or `"relu"`: the activation σ."""
    etas: np.ndarray
    """Weight decays η ≥ 0, shape (n_eta,) (grid axis 0)."""
    seeds: tuple[int, ...]
    """The seeds (grid axis 1)."""
    epochs: np.ndarray
    """0..steps, shape (T + 1,) (row t = after t updates)."""
    window: int
    """Window w of `sigma` / `gap`."""
    sigma: np.ndarray
    """σ_1..σ_k of the rolling update Gram of W, shape (n_eta, n_seed, T + 1, k) (NaN rows 0, 1)."""
    gap: np.ndarray
    """g = σ_2/σ_3 (`grokclocks.repulsion.eigengap`), shape (n_eta, n_seed, T + 1)."""
    rho: np.ndarray | None
    """ρ_tian of the training features, shape (n_eta, n_seed, T + 1); `None` without `rho=True`."""
    acc_test: np.ndarray
    """Test accuracy in [0, 1], shape (n_eta, n_seed, T + 1)."""
    acc_train: np.ndarray
    """Training accuracy in [0, 1], shape (n_eta, n_seed, T + 1)."""
    sigma_V: np.ndarray | None
    """σ_1..σ_k of the update Gram of V (`track_V=True`), else `None`."""
    gap_V: np.ndarray | None
    """g of V (`track_V=True`), else `None`."""
    masks: np.ndarray
    """Training masks, bool of shape (n_seed, M²)."""
    snapshots: dict[int, dict[str, np.ndarray]]
    """epoch -> {"W": (n_eta, n_seed, 2M, K), "V": (n_eta, n_seed, K, M)}."""
    trajectory: Trajectory
    """The raw engine result (`"dW.gram"`, `"dW.count"` for other windows)."""

    def sigmas(self, window: int | None = None, k: int = 5, leaf: str = "W") -> np.ndarray:
        """σ_1..σ_k of the rolling update Gram for another window, from the same run.

        Parameters
        ----------
        window : int or None
            Window w, an integer in [2, the tracker's `max_window`]; `None` (default) means the
            tracker's length.
        k : int
            Number of eigenvalues, an integer in [1, w]; default 5.
        leaf : {"W", "V"}
            Which layer's updates: `"W"` (default) or `"V"` (needs `track_V=True`).

        Returns
        -------
        numpy.ndarray
            float64 of shape (n_eta, n_seed, T + 1, k).

        Raises
        ------
        DomainError
            If the leaf was not tracked or `window`/`k` is out of range.
        """
        tr = self.trajectory
        name = "d" + choice(leaf, "leaf", ("W", "V"))
        if f"{name}.gram" not in tr.metrics:
            raise DomainError(f"leaf {leaf!r} was not tracked (train_tian(track_V=True) tracks V)")
        return rolling_eigenvalues(tr[f"{name}.gram"], tr[f"{name}.count"], k=k, window=window)

    def gaps(self, window: int | None = None, leaf: str = "W") -> np.ndarray:
        """The gap g = σ_2/σ_3 for another window, from the same run.

        Parameters
        ----------
        window : int or None
            Window w, an integer in [3, the tracker's `max_window`]; `None` (default) means the
            tracker's length.
        leaf : {"W", "V"}
            Which layer's updates: `"W"` (default) or `"V"` (needs `track_V=True`).

        Returns
        -------
        numpy.ndarray
            float64 of shape (n_eta, n_seed, T + 1).

        Raises
        ------
        DomainError
            If the leaf was not tracked or `window` is out of range.
        """
        return _gaps(self.sigmas(window, 3, leaf))

    def features(self, epoch: int, eta_index: int, seed_index: int, centred: bool = True) -> np.ndarray:
        """Float64 (centred) training features of one run at a snapshot epoch.

        Parameters
        ----------
        epoch : int
            One of the snapshot epochs (keys of `snapshots`).
        eta_index : int
            Index of the run's weight decay in `etas`.
        seed_index : int
            Index of the run's seed in `seeds`.
        centred : bool
            Whether to remove the column means (F̃); default `True`.

        Returns
        -------
        numpy.ndarray
            float64 of shape (n_train, K).

        Raises
        ------
        DomainError
            If `epoch` is not a snapshot epoch.
        """
        if epoch not in self.snapshots:
            raise DomainError(f"epoch must be one of the snapshot epochs {sorted(self.snapshots)} (got {epoch!r})")
        p = {k: v[eta_index, seed_index] for k, v in self.snapshots[epoch].items()}
        X, _ = training_pairs(self.M, self.masks[seed_index])
        return tian_features(p, X, self.activation, centred=centred)


def _gaps(sig: np.ndarray) -> np.ndarray:
    flat = sig.reshape((-1,) + sig.shape[-2:])
    return np.stack([R.eigengap(s) for s in flat]).reshape(sig.shape[:-1])


@cites("repulsion:setup", "repulsion:rolling-gram", "repulsion:rho-tian")
def train_tian(M: int = 71, K: int = 2048, n_train: int = 2016, *, seeds: Sequence[int] = tuple(range(15)),
               etas: Sequence[float] = (2e-4, 0.0), steps: int = 400, activation: str = "sqr",
               window: int = 20, max_window: int | None = None, k: int = 5, track_V: bool = False,
               rho: bool = True, snapshot_epochs: Sequence[int] = (), lr: float = 1e-3,
               dtype: str = "float32", matmul_precision: str | None = "highest", progress: bool = False,
               n_chunks: int | None = None, devices: Any = None, save_path: Any = None,
               resume: bool = False, overwrite: bool = False, on_divergence: str = "raise_if_all") -> TianRun:
    r"""Grok and control runs of the Tian setup with every instrument of spec `repulsion` (one compiled program).

    Runs `len(etas)` × `len(seeds)` trainings vmapped (spec `repulsion:setup`): split
    `default_rng(seed).permutation(M²)[:n_train]` (`grokclocks.task.random_split_mask`), init
    `PRNGKey(seed)` with PyTorch-default bounds, `Adam(lr, betas=(0.9, 0.999), eps=1e-8)` with
    coupled L2 `weight_decay = eta`, zero-meaned MSE, full batch, `steps` epochs, every epoch
    recorded.

    Parameters
    ----------
    M : int
        The modulus M ≥ 2; default 71.
    K : int
        Hidden width K ≥ 1; default 2048.
    n_train : int
        Training pairs per run, an integer in [1, M² − 1]; default 2016.
    seeds : sequence of int
        Distinct seeds ≥ 0 (split and initialisation); default 0..14.
    etas : sequence of float
        Weight decays η ≥ 0, grid axis 0; default (2×10⁻⁴, 0): the grokking run and its control.
    steps : int
        Number of epochs (one full-batch step each), ≥ 1; default 400.
    activation : {"sqr", "relu"}
        The activation σ: x² (default; `"x2"` and `"quadratic"` are the same) or ReLU.
    window : int
        Window w ≥ 2 of the returned `sigma` / `gap` (eq. 5; 20 in the paper, the default).
    max_window : int or None
        Ring-buffer length of the tracker, an integer ≥ `window`; `None` (default) means `window`.
        `TianRun.sigmas` gives any window up to it from the same run (window sweep).
    k : int
        Number of eigenvalues returned, an integer in [3, `window`]; default 5.
    track_V : bool
        Also track the updates of V; default `False`.
    rho : bool
        Record ρ_tian every epoch (`rho_tian_hook`; an O(nK·min(n, K)) matmul per epoch); default
        `True`.
    snapshot_epochs : sequence of int
        Epochs in [0, `steps`] after which (W, V) of every run is kept; default none.
    lr : float
        Adam's learning rate > 0; default 10⁻³.
    dtype : {"float32", "float64"}
        The parameters' dtype (and that of the Gram); default `"float32"`.
    matmul_precision : {"highest", "high", "default"} or None
        `jax.default_matmul_precision` during the run: `"highest"` (default) is full float32 on
        GPUs, where the default may use TF32 (no effect on CPU).  `None` leaves the setting alone.
    progress : bool
        Show a tqdm progress bar over the compiled chunks; default `False`.
    n_chunks : int or None
        Number of compiled calls the epochs are split into, an integer ≥ 1; `None` (default)
        means 1, or 20 with a progress bar or `save_path`.
    devices : None, int or sequence of jax devices
        Shard the runs over local devices: `None` (default) all local devices (one device when
        their number does not divide the runs), an int `n` the first `n`, a sequence the devices
        themselves.
    save_path : str or os.PathLike or None
        Save the engine's run after every chunk to this `.npz` (+ `.json`) file, atomically;
        `None` (default) saves nothing.  An existing file is an error unless `resume` or
        `overwrite`.
    resume : bool
        With `save_path`: continue the run saved there (a finished run is returned as saved);
        default `False`.
    overwrite : bool
        With `save_path`: replace an existing run; default `False`.  Exclusive with `resume`.
    on_divergence : {"raise_if_all", "flag", "raise"}
        What a run whose metrics become NaN or inf does: `"raise_if_all"` (default) flags it and
        raises `SimulationDiverged` only when every run diverged; `"flag"` never raises; `"raise"`
        raises at the first diverged run.

    Returns
    -------
    TianRun
        The per-epoch instruments, snapshots and the raw engine result.

    Raises
    ------
    DomainError
        If an argument is outside its domain.

    Notes
    -----
    Precision: the Gram is accumulated in the training dtype, so in float32 its eigenvalues carry
    an absolute error of about 10⁻⁷–10⁻⁶·σ_1 (measured at M = 41, K = 512: max 1.3e-6·σ_1 against
    the float64 Gram of the same updates).  After lock-in the grok runs there have σ_3 ≈ 3×10⁻⁷·σ_1
    (float32 and float64 training agree: 8.8e-9 vs 8.9e-9 at epoch 450, seed 0), so g is only good
    to a few per cent (late median 1897 vs 1959 and 1893 vs 2008 from the float64 Gram of the same
    updates) and σ_4, σ_5 sit at the float32 floor.  The authors' code has the same float32 Gram
    (`EigengapTracker`); `dtype="float64"` removes the floor.  Cost: the ρ hook is an
    O(nK·min(n, K)) matmul per epoch (at M = 41, K = 512 on 2 CPU cores it doubles the run time:
    21 s vs 10 s).

    References
    ----------
    Spec `repulsion:setup` (§3), `repulsion:rolling-gram` (eq. 5), `repulsion:rho-tian` (eq. 7).
    """
    M = integer_at_least(M, "M", 2)
    K = integer_at_least(K, "K", 1)
    n_train = integer_at_least(n_train, "n_train", 1)
    steps = integer_at_least(steps, "steps", 1)
    act = choice(activation, "activation", {"sqr": "sqr", "x2": "sqr", "quadratic": "sqr", "relu": "relu"})
    window = integer_at_least(window, "window", 2)
    max_window = window if max_window is None else integer_at_least(max_window, "max_window", window)
    k = integer_at_least(k, "k", 3)
    if k > window:
        raise DomainError(f"k must be in [3, window] = [3, {window}] (got {k})")
    seeds = seed_tuple(seeds)
    eta_arr = np.atleast_1d(np.asarray(nonnegative(etas, "etas"), dtype=float))
    if eta_arr.ndim != 1:
        raise DomainError(f"etas must be a 1-D sequence (got shape {eta_arr.shape})")
    lr = float(positive(lr, "lr"))
    snaps = tuple(integer_at_least(e, "snapshot_epochs", 0) for e in np.atleast_1d(
        np.asarray(list(snapshot_epochs), dtype=object)).tolist())
    if any(e > steps for e in snaps):
        raise DomainError(f"snapshot_epochs must lie in [0, steps={steps}] (got {snaps})")
    masks = random_split_mask(M, seeds, n_train=n_train)  # validates n_train
    trackers: dict[str, Any] = {"dW": update_gram_tracker("W", max_window)}
    if track_V:
        trackers["dV"] = update_gram_tracker("V", max_window)
    if snaps:
        trackers["snap"] = snapshot_tracker(None, snaps)
    hooks = {"rho": rho_tian_hook if act == "sqr" else rho_tian_relu_hook} if rho else None
    if matmul_precision is not None:
        matmul_precision = choice(matmul_precision, "matmul_precision", ("highest", "high", "default"))
    ctx = jax.default_matmul_precision(matmul_precision) if matmul_precision else contextlib.nullcontext()
    with ctx:
        traj = train_modular("tian_quadratic" if act == "sqr" else "tian_relu", M, train_mask=masks, seeds=seeds,
                             model_kwargs=dict(K=K), optimizer="adam", lr=lr, betas=(0.9, 0.999), eps=1e-8,
                             weight_decay=[float(e) for e in eta_arr], loss="centred_mse", steps=steps,
                             record_every=1, hooks=hooks, trackers=trackers, dtype=dtype, progress=progress,
                             n_chunks=n_chunks, devices=devices, save_path=save_path, resume=resume,
                             overwrite=overwrite, on_divergence=on_divergence)
    sig = rolling_eigenvalues(traj["dW.gram"], traj["dW.count"], k=k, window=window)
    sigV = gapV = None
    if track_V:
        sigV = rolling_eigenvalues(traj["dV.gram"], traj["dV.count"], k=k, window=window)
        gapV = _gaps(sigV)
    shots = snapshots(traj, "snap") if snaps else {}
    return TianRun(M=M, K=K, n_train=n_train, activation=act, etas=eta_arr, seeds=seeds,
                   epochs=np.asarray(traj.times), window=window, sigma=sig, gap=_gaps(sig),
                   rho=np.asarray(traj["rho"]) if rho else None, acc_test=np.asarray(traj["acc_test"]),
                   acc_train=np.asarray(traj["acc_train"]), sigma_V=sigV, gap_V=gapV, masks=masks,
                   snapshots={int(e): {kk: np.asarray(v) for kk, v in p.items()} for e, p in shots.items()},
                   trajectory=traj)


document_records(globals(), __all__)  # help() of each record class lists its fields
