r"""Tian-setup training with the spec ``repulsion`` instruments: rolling update Gram, :math:`\rho_{\rm tian}`, snapshots.

One call of :func:`train_tian` runs the grokking condition (:math:`\eta=2\times10^{-4}`) and the
matched-seed control (:math:`\eta=0`) of spec ``repulsion:setup`` through the one engine
(:func:`grokclocks.sim.modular.train_modular`: Tian's :math:`\sigma(XW)V`, PyTorch-default uniform
init, zero-meaned MSE as trained, Adam with coupled L2 weight decay :math:`\eta`, full batch, one
step per epoch) with

* an :func:`~grokclocks.sim.trackers.update_gram_tracker` on :math:`W` (and optionally :math:`V`):
  the rolling :math:`w\times w` Gram of the weight updates, turned into :math:`\sigma_1..\sigma_k`
  per epoch and the gap :math:`g=\sigma_2/\sigma_3` (eq. 5);
* the hook :func:`rho_tian_hook`: :math:`\rho_{\rm tian}` of the training features per epoch, by the
  closed form of spec §7 (eq. 7 as the code computes it), matmuls at ``precision=HIGHEST``;
* a :func:`~grokclocks.sim.trackers.snapshot_tracker` keeping :math:`(W,V)` at chosen epochs, so that the
  Theorem-6 statistics (spec §5) are evaluated in float64 on the host from the same run.

Epoch alignment (spec §3, "metrics logged before the step"): row :math:`t` of every per-epoch array
describes the parameters after :math:`t` updates (row 0 = initialisation); :math:`\sigma_k(t)` uses
:math:`\Delta W_{\max(1,t-w+1)..t}`.  The host-side statistics are those of :mod:`grokclocks.repulsion`.
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
    r""":math:`\rho_{\rm tian}` of a feature matrix in JAX: the closed form of spec §7, rewritten around the column means.

    Spec §7 (code ``fft_dist_from_ideal``, on the raw :math:`G=FF^\top`):

    .. math::

        \rho^2=1-\frac{n\bar d^2+n(n-1)\bar o^2}{\|G\|_F^2},\qquad
        \bar d=\tfrac1n\operatorname{tr}G,\quad \bar o=\frac{\mathbf 1^\top G\mathbf 1-\operatorname{tr}G}{n(n-1)} .

    With the column means :math:`\mu=F^\top\mathbf 1/n`, :math:`\widetilde F=F-\mathbf 1\mu^\top`,
    :math:`H=\widetilde F\widetilde F^\top`, :math:`a=\widetilde F\mu`, :math:`h=\operatorname{tr}H`,
    :math:`c=\|\mu\|^2`, one has :math:`G=H+a\mathbf 1^\top+\mathbf 1a^\top+c\,\mathbf 1\mathbf 1^\top` with
    :math:`H\mathbf 1=0`, :math:`\mathbf 1^\top a=0`, hence :math:`\|G\|_F^2=\|H\|_F^2+2n\|a\|^2+n^2c^2`,
    :math:`n\bar d^2+n(n-1)\bar o^2=h^2/(n-1)+n^2c^2`, and

    .. math::

        \rho^2=\frac{\|H\|_F^2+2n\|a\|^2-h^2/(n-1)}{\|H\|_F^2+2n\|a\|^2+n^2c^2} .

    The dominant :math:`n^2c^2` (all-positive :math:`x^2` features make :math:`G\approx c\,\mathbf 1\mathbf 1^\top`)
    cancels exactly instead of in floating point: in float32 this form agrees with the float64
    reference to 2.1e-7 relative, the uncentred closed form only to 2.3e-5 (measured on 24 trained
    feature matrices, M=41, K=512, n=840, rho ~ 0.1).  :math:`\|H\|_F=\|\widetilde F^\top\widetilde F\|_F` is formed
    on the smaller side; every matmul at ``precision=HIGHEST`` (TF32 would perturb the 0.075 crossing).

    Parameters
    ----------
    F : array (N, K)
        Features (rows = samples).
    weights : array (N,) of 0/1, optional
        Row mask: rows of weight 0 (padding) are dropped exactly (not counted in :math:`n`).

    Returns
    -------
    jax.Array
        Scalar :math:`\rho` in the dtype of ``F``.

    References
    ----------
    Spec ``repulsion:rho-tian`` (eq. 7 as the code computes it, erratum ``repulsion-3``); the numpy
    reference is :func:`grokclocks.repulsion.rho_tian`.
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
    r"""``train_modular`` hook: :math:`\rho_{\rm tian}` of the training features, :math:`\sigma=x^2`.

    Uses the run's training rows (``inp["train_idx"]``, padding weight ``inp["train_w"]``) and
    :func:`rho_tian_jax`.

    References
    ----------
    Spec ``repulsion:rho-tian``.
    """
    return rho_tian_jax(_train_rows_features(params, inp, "quadratic"), inp["train_w"])


@cites("repulsion:rho-tian")
def rho_tian_relu_hook(params: dict[str, jax.Array], inp: dict[str, jax.Array]) -> jax.Array:
    r"""``train_modular`` hook: :math:`\rho_{\rm tian}` of the training features, :math:`\sigma=` ReLU.

    References
    ----------
    Spec ``repulsion:rho-tian``.
    """
    return rho_tian_jax(_train_rows_features(params, inp, "relu"), inp["train_w"])


@cites("repulsion:model")
def training_pairs(M: int, mask: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""One-hot inputs :math:`X` (n, 2M) and labels of the training pairs of a train mask (rows in table order).

    Parameters
    ----------
    M : int >= 2
        Modulus.
    mask : bool array (M^2,)
        Training mask over the pairs ``(a, b)`` in the order of :func:`grokclocks.sim.data.modular_table`.

    Returns
    -------
    (X, y)
        ``X`` from :func:`grokclocks.repulsion.one_hot_pairs` (float64), ``y = (a + b) mod M``.

    Raises
    ------
    DomainError
        ``mask`` not boolean of length ``M^2`` or empty.
    """
    M = integer_at_least(M, "M", 2)
    m = np.asarray(mask)
    if m.dtype != bool or m.shape != (M * M,) or not m.any():
        raise DomainError(f"mask must be a non-empty boolean array of shape ({M * M},) (got {m.dtype} {m.shape})")
    a, b, y = modular_table(M)
    return R.one_hot_pairs(a[m], b[m], M), y[m]


@cites("repulsion:model", "repulsion:ftilde")
def tian_features(params: Any, X: Any, activation: str = "sqr", centred: bool = False) -> np.ndarray:
    r"""Float64 features :math:`F=\sigma(XW)` (or :math:`\widetilde F=P_1^\perp F`) of one run's parameters.

    Parameters
    ----------
    params : dict with ``"W"`` (2M, K) and ``"V"`` (K, M)
        One run's parameters (e.g. a snapshot of :class:`TianRun`), any float dtype.
    X : array (n, 2M)
        One-hot inputs (:func:`training_pairs`).
    activation : {"sqr", "relu"}
    centred : bool
        Return :math:`\widetilde F` (column means over the rows of ``X`` removed), spec ``repulsion:ftilde``.

    Returns
    -------
    ndarray (n, K), float64.

    References
    ----------
    Spec ``repulsion:model`` (eq. 2), ``repulsion:ftilde``; computed by :func:`grokclocks.repulsion.tian_forward`.
    """
    F, _ = R.tian_forward(np.asarray(params["W"], np.float64), np.asarray(params["V"], np.float64), X, activation)
    return R.center_features(F) if centred else F


def train_features(params: Any, M: int, mask: Any, activation: str = "sqr") -> np.ndarray:
    """Centred float64 training features :math:`\\widetilde F` of one run: :func:`tian_features` on :func:`training_pairs`."""
    X, _ = training_pairs(M, mask)
    return tian_features(params, X, activation, centred=True)


@dataclasses.dataclass(frozen=True, eq=False)
class TianRun:
    r"""Result of :func:`train_tian`; arrays indexed ``[eta, seed, epoch(, order)]``.

    Attributes
    ----------
    M, K, n_train : int
    activation : str
    etas : ndarray (n_eta,)
        Weight decays (grid axis 0).
    seeds : tuple of int
    epochs : ndarray (T + 1,)
        0..steps (row t = after t updates).
    window : int
        Window :math:`w` of ``sigma``/``gap``.
    sigma : ndarray (n_eta, n_seed, T + 1, k)
        :math:`\sigma_1..\sigma_k` of the rolling update Gram of :math:`W` (NaN rows 0, 1).
    gap : ndarray (n_eta, n_seed, T + 1)
        :math:`g=\sigma_2/\sigma_3` (:func:`grokclocks.repulsion.eigengap`).
    rho : ndarray (n_eta, n_seed, T + 1) or None
        :math:`\rho_{\rm tian}` of the training features.
    acc_test, acc_train : ndarray (n_eta, n_seed, T + 1)
    sigma_V, gap_V : ndarray or None
        Same for :math:`V` (``track_V=True``).
    masks : ndarray (n_seed, M^2) bool
        Training masks.
    snapshots : dict epoch -> {"W": (n_eta, n_seed, 2M, K), "V": (n_eta, n_seed, K, M)}
    trajectory : Trajectory
        The raw engine result (``"dW.gram"``, ``"dW.count"`` for other windows).
    """

    M: int
    K: int
    n_train: int
    activation: str
    etas: np.ndarray
    seeds: tuple[int, ...]
    epochs: np.ndarray
    window: int
    sigma: np.ndarray
    gap: np.ndarray
    rho: np.ndarray | None
    acc_test: np.ndarray
    acc_train: np.ndarray
    sigma_V: np.ndarray | None
    gap_V: np.ndarray | None
    masks: np.ndarray
    snapshots: dict[int, dict[str, np.ndarray]]
    trajectory: Trajectory

    def sigmas(self, window: int | None = None, k: int = 5, leaf: str = "W") -> np.ndarray:
        """:math:`\\sigma_1..\\sigma_k` (n_eta, n_seed, T + 1, k) for another window <= the tracker's."""
        tr = self.trajectory
        name = "d" + choice(leaf, "leaf", ("W", "V"))
        if f"{name}.gram" not in tr.metrics:
            raise DomainError(f"leaf {leaf!r} was not tracked (train_tian(track_V=True) tracks V)")
        return rolling_eigenvalues(tr[f"{name}.gram"], tr[f"{name}.count"], k=k, window=window)

    def gaps(self, window: int | None = None, leaf: str = "W") -> np.ndarray:
        """:math:`g=\\sigma_2/\\sigma_3` (n_eta, n_seed, T + 1) for another window."""
        return _gaps(self.sigmas(window, 3, leaf))

    def features(self, epoch: int, eta_index: int, seed_index: int, centred: bool = True) -> np.ndarray:
        """Float64 (centred) training features of one run at a snapshot epoch."""
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
    r"""Grok and control runs of the Tian setup with every instrument of spec ``repulsion`` (one compiled program).

    Runs ``len(etas) x len(seeds)`` trainings vmapped (spec ``repulsion:setup``): split
    ``default_rng(seed).permutation(M^2)[:n_train]`` (:func:`~grokclocks.sim.data.random_split_mask`),
    init ``PRNGKey(seed)`` with PyTorch-default bounds, ``Adam(lr, betas=(0.9, 0.999), eps=1e-8)`` with
    coupled L2 ``weight_decay = eta``, zero-meaned MSE, full batch, ``steps`` epochs, every epoch recorded.

    Parameters
    ----------
    M, K, n_train : int
        Modulus (>= 2), width (>= 1), training pairs (in [1, M^2 - 1]).
    seeds : sequence of int >= 0
    etas : sequence of float >= 0
        Weight decays (grid axis 0; default grok 2e-4 and control 0).
    steps : int >= 1
        Epochs.
    activation : {"sqr", "relu"}
    window : int >= 2
        Window :math:`w` of the returned ``sigma`` / ``gap`` (eq. 5; 20 in the paper).
    max_window : int >= window, optional
        Ring-buffer length of the tracker (default ``window``); :meth:`TianRun.sigmas` gives any
        window up to it from the same run (window sweep).
    k : int in [3, window]
        Number of eigenvalues returned.
    track_V : bool
        Also track the updates of :math:`V`.
    rho : bool
        Record :math:`\rho_{\rm tian}` every epoch (:func:`rho_tian_hook`; an :math:`O(nK\min(n,K))` matmul per epoch).
    snapshot_epochs : sequence of int in [0, steps]
        Keep :math:`(W, V)` of every run after these epochs.
    lr : float > 0
    dtype : {"float32", "float64"}
    matmul_precision : {"highest", "high", "default"} or None
        ``jax.default_matmul_precision`` during the run (default ``"highest"``: full float32 on
        GPUs, where the default may use TF32; no effect on CPU).  ``None`` leaves the setting alone.
    progress, n_chunks, devices, save_path, resume, overwrite, on_divergence
        As in :func:`~grokclocks.sim.modular.train_modular`.

    Returns
    -------
    TianRun

    Raises
    ------
    DomainError
        Any argument outside its domain.

    Notes
    -----
    Precision: the Gram is accumulated in the training dtype, so in float32 its eigenvalues carry an
    absolute error of about :math:`10^{-7}`-:math:`10^{-6}\,\sigma_1` (measured at M=41, K=512: max
    1.3e-6 :math:`\sigma_1` against the float64 Gram of the same updates).  After lock-in the grok runs
    there have :math:`\sigma_3\approx3\times10^{-7}\sigma_1` (float32 and float64 training agree:
    8.8e-9 vs 8.9e-9 at epoch 450, seed 0), so :math:`g` is only good to a few per cent (late median
    1897 vs 1959 and 1893 vs 2008 from the float64 Gram of the same updates) and :math:`\sigma_4,\sigma_5`
    sit at the float32 floor.  The authors' code has the same float32 Gram (``EigengapTracker``);
    ``dtype="float64"`` removes the floor.  Cost: the :math:`\rho` hook is an :math:`O(nK\min(n,K))`
    matmul per epoch (at M=41, K=512 on 2 CPU cores it doubles the run time: 21 s vs 10 s).

    References
    ----------
    Spec ``repulsion:setup`` (§3), ``repulsion:rolling-gram`` (eq. 5), ``repulsion:rho-tian`` (eq. 7).
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
