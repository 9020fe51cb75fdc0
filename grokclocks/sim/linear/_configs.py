"""Linear teacher-student simulations: run configurations and result records."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ..._validate import DomainError, integer_at_least, nonnegative


@dataclasses.dataclass(frozen=True)
class LinearGDConfig:
    """Configuration of a `run_gd` run, stored in its `Trajectory` (JSON-serialisable)."""

    d_in: int
    """Input dimension d_in ≥ 1."""
    d_out: int
    """Output dimension d_out ≥ 1."""
    n_train: int
    """Training-set size N_tr = round(d_in/λ) ≥ 1."""
    lam: float
    """λ = d_in/N_tr, input dimension over training-set size, as requested (> 0; the realised ratio is
    d_in/`n_train`)."""
    init_scale: float
    """Student scale α: the initial student is α times a draw of the teacher's law (any real)."""
    sigma2: float
    """Variance σ² ≥ 0 of the fixed label noise δ, drawn once (0: noiseless labels)."""
    seeds: tuple[int, ...] | None
    """The seeds of the draws (keys `PRNGKey(1000 d_in + seed)`), or `None` when the data were built from
    keys directly."""
    eta: float | tuple[float, ...]
    """Learning rate η > 0; a tuple is a grid, the outermost batch axis of the result."""
    gamma: float | tuple[float, ...]
    """Weight decay γ ≥ 0 in the convention `wd_convention`; a tuple is a grid (with `eta`)."""
    wd_convention: str
    """`"paper"` or `"torch"`: how `gamma` is meant: the paper's eq. 3 (decay γ/d_out) or PyTorch's
    `weight_decay` (decay γ); see `grokclocks.sim.train.weight_decay_coefficient`."""
    steps: int
    """Number of GD steps run, ≥ 1."""
    record_every: int
    """Steps between two records, ≥ 1 and dividing `steps`."""
    eps: float | None = None
    """Accuracy threshold ε > 0 on the per-sample mean squared error, or `None` (default) when no accuracy
    was recorded."""
    n_gen: int = 0
    """Number of fresh test inputs behind `acc_gen`, ≥ 0 (default 0: none)."""


@dataclasses.dataclass(frozen=True)
class SpectralConfig:
    """Configuration of a `run_gd_spectral` or `crossing_times` evaluation, stored in its result."""

    d_in: int
    """Input dimension d_in ≥ 1."""
    d_out: int
    """Output dimension d_out ≥ 1."""
    n_train: int
    """Training-set size N_tr = round(d_in/λ) ≥ 1."""
    lam: float
    """λ = d_in/N_tr, input dimension over training-set size, as requested (> 0; the realised ratio is
    d_in/`n_train`)."""
    init_scale: float
    """Student scale α: the initial student is α times a draw of the teacher's law (any real)."""
    sigma2: float
    """Variance σ² ≥ 0 of the fixed label noise δ, drawn once (0: noiseless labels)."""
    seeds: tuple[int, ...] | None
    """The seeds of the draws (keys `PRNGKey(1000 d_in + seed)`), or `None` when the data were built from
    keys directly."""
    eta: float
    """Learning rate η > 0."""
    gamma: float
    """Weight decay γ ≥ 0 in the convention `wd_convention`."""
    wd_convention: str
    """`"paper"` or `"torch"`: how `gamma` is meant: the paper's eq. 3 (decay γ/d_out) or PyTorch's
    `weight_decay` (decay γ); see `grokclocks.sim.train.weight_decay_coefficient`."""
    loss_star: float | None = None
    """The loss threshold L∗ > 0 of `crossing_times`, or `None` (default) for `run_gd_spectral`."""


@dataclasses.dataclass(frozen=True, eq=False)
class CrossingTimes:
    """Loss-crossing times of `crossing_times`, arrays of the data's batch shape, in GD steps."""

    t_train: np.ndarray
    """First (continuous) step t∗_tr at which the training loss L_tr ≤ `loss_star`; 0 if already at t = 0,
    inf if the late-time limit is not below `loss_star` (spec `levi:grok-def`)."""
    t_gen: np.ndarray
    """The same for the generalisation loss L_gen: t∗_gen."""
    grok_time: np.ndarray
    """Δt = t∗_gen − t∗_tr, the grokking time; NaN where both times are infinite."""
    config: SpectralConfig
    """The configuration of the evaluation (with `loss_star`)."""


@dataclasses.dataclass(frozen=True, eq=False)
class SpectralDraws:
    r"""Teacher-student draws in the eigenbasis of their training covariance: one `eigh` serves many runs.

    With Σ_tr = XᵀX/N = V·diag(ν)·Vᵀ (eigenvalues below ν_max·max(N, d_in)·machine ε set to 0,
    as in `run_gd_spectral`), the record holds the projections of the draw with `init_scale` = 1
    and of its label noise z at `sigma2` = 1.  The fields `init_scale` and `sigma2` select the
    variant S0 = `init_scale`·S0(1), δ = √`sigma2`·z -- exactly the draws of `make_teacher_student`
    with those arguments and the same keys (up to float64 rounding of the scaling) -- so
    `run_gd_spectral` and `crossing_times` accept it in place of the data and skip the
    eigendecomposition.  Build with `spectral_draws`; change the variant with `variant`.
    """

    nu: jax.Array
    """Eigenvalues ν of Σ_tr, shape `(*batch, d_in)`, ascending; the null space is exactly 0."""
    Tb: jax.Array
    """VᵀT, the teacher in the eigenbasis, shape `(*batch, d_in, d_out)`."""
    Sb: jax.Array
    """VᵀS0 of the student drawn at `init_scale` = 1, shape `(*batch, d_in, d_out)`."""
    Zb: jax.Array
    """VᵀXᵀz/N of the unit-variance label noise z, shape `(*batch, d_in, d_out)`."""
    zz: jax.Array
    """‖z‖²/N, shape `(*batch,)`."""
    d_in: int
    """Input dimension d_in ≥ 1."""
    d_out: int
    """Output dimension d_out ≥ 1."""
    n_train: int
    """Training-set size N_tr = round(d_in/λ) ≥ 1."""
    lam: float
    """λ = d_in/N_tr, input dimension over training-set size, as requested (> 0; the realised ratio is
    d_in/`n_train`)."""
    seeds: tuple[int, ...] | None = None
    """The seeds of the draws (keys `PRNGKey(1000 d_in + seed)`), or `None` when the data were built from
    keys directly."""
    init_scale: float = 1.0
    """Student scale α of the selected variant (any real; default 1)."""
    sigma2: float = 0.0
    """Label-noise variance σ² ≥ 0 of the selected variant (default 0)."""

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading (seed) axes of the array fields, a tuple of int (empty for one draw)."""
        return tuple(self.nu.shape[:-1])

    def variant(self, *, init_scale: float | None = None, sigma2: float | None = None) -> "SpectralDraws":
        """The same draws with another student scale and/or label-noise variance.

        Parameters
        ----------
        init_scale : float or None
            Student scale α of the new variant, any finite real; `None` (default) keeps the
            current one.
        sigma2 : float or None
            Label-noise variance σ² ≥ 0 of the new variant; `None` (default) keeps the current one.

        Returns
        -------
        SpectralDraws
            A copy sharing the arrays, with the new `init_scale` and `sigma2`.

        Raises
        ------
        DomainError
            If `init_scale` is not finite or `sigma2` is negative or not finite.
        """
        kw: dict[str, float] = {}
        if init_scale is not None:
            kw["init_scale"] = float(np.asarray(init_scale, dtype=np.float64))
            if not np.isfinite(kw["init_scale"]):
                raise DomainError(f"init_scale must be finite (got {init_scale!r})")
        if sigma2 is not None:
            kw["sigma2"] = float(nonnegative(sigma2, "sigma2"))
        return dataclasses.replace(self, **kw)

    def take(self, n: int) -> "SpectralDraws":
        """The first `n` draws of a 1-D seed batch.

        Parameters
        ----------
        n : int
            Number of draws to keep, an integer in [1, number of draws].

        Returns
        -------
        SpectralDraws
            The first `n` draws (and seeds), same variant.

        Raises
        ------
        DomainError
            If the batch is not 1-D or `n` is out of range.
        """
        n = integer_at_least(n, "n", 1)
        if len(self.batch_shape) != 1 or n > self.batch_shape[0]:
            raise DomainError(f"n must be <= the number of draws {self.batch_shape} of a 1-D batch (got {n})")
        return dataclasses.replace(self, nu=self.nu[:n], Tb=self.Tb[:n], Sb=self.Sb[:n], Zb=self.Zb[:n],
                                   zz=self.zz[:n], seeds=None if self.seeds is None else self.seeds[:n])

    @staticmethod
    def concatenate(parts: "Sequence[SpectralDraws]") -> "SpectralDraws":
        """Join 1-D seed batches of the same configuration along the seed axis.

        Parameters
        ----------
        parts : sequence of SpectralDraws
            Non-empty; every part a 1-D seed batch of the same `d_in`, `d_out`, `lam` and variant
            (not checked: the metadata of the first part is kept).

        Returns
        -------
        SpectralDraws
            The draws of all parts in order; `seeds` joined, or `None` if any part has none.
        """
        first = parts[0]
        cat = {k: jnp.concatenate([getattr(p, k) for p in parts]) for k in ("nu", "Tb", "Sb", "Zb", "zz")}
        seeds = None if any(p.seeds is None for p in parts) else tuple(s for p in parts for s in p.seeds)
        return dataclasses.replace(first, seeds=seeds, **cat)


@dataclasses.dataclass(frozen=True)
class TwoLayerConfig:
    """Configuration of a `run_two_layer` run, stored in its `Trajectory`."""

    d_in: int
    """Input dimension d_in ≥ 1."""
    d_h: int
    """Hidden width d_h ≥ 1."""
    d_out: int
    """Output dimension d_out ≥ 1."""
    n_train: int
    """Training-set size N_tr = round(d_in/λ) ≥ 1."""
    lam: float
    """λ = d_in/N_tr, input dimension over training-set size, as requested (> 0; the realised ratio is
    d_in/`n_train`)."""
    seeds: tuple[int, ...] | None
    """The seeds of the draws (keys `PRNGKey(1000 d_in + seed)`), or `None` when the data were built from
    keys directly."""
    activation: str
    """`"linear"` or `"tanh"`: the hidden activation σ, shared by teacher and student."""
    eta: float | tuple[float, ...]
    """Learning rate η > 0; a tuple is a grid, the outermost batch axis of the result."""
    gamma: float | tuple[float, ...]
    """Weight decay γ ≥ 0 in the convention `wd_convention`; a tuple is a grid (with `eta`)."""
    wd_convention: str
    """`"paper"` or `"torch"`: how `gamma` is meant: the paper's eq. 3 (decay γ/d_out) or PyTorch's
    `weight_decay` (decay γ); see `grokclocks.sim.train.weight_decay_coefficient`."""
    steps: int
    """Number of GD steps run, ≥ 1."""
    record_every: int
    """Steps between two records, ≥ 1 and dividing `steps`."""
    n_gen: int
    """Number of fresh test inputs behind the tanh generalisation loss (0 for `"linear"`)."""


@dataclasses.dataclass(frozen=True)
class FreshNoiseConfig:
    """Configuration of a `run_gd_fresh_noise` run, stored in its `Trajectory`."""

    d_in: int
    """Input dimension d_in ≥ 1."""
    d_out: int
    """Output dimension d_out ≥ 1."""
    n_train: int
    """Training-set size N_tr = round(d_in/λ) ≥ 1."""
    lam: float
    """λ = d_in/N_tr, input dimension over training-set size, as requested (> 0; the realised ratio is
    d_in/`n_train`)."""
    init_scale: float
    """Student scale α: the initial student is α times a draw of the teacher's law (any real)."""
    seeds: tuple[int, ...] | None
    """The seeds of the draws (keys `PRNGKey(1000 d_in + seed)`), or `None` when the data were built from
    keys directly."""
    eta: float
    """Learning rate η > 0."""
    gamma: float
    """Weight decay γ ≥ 0 in the convention `wd_convention`."""
    wd_convention: str
    """`"paper"` or `"torch"`: how `gamma` is meant: the paper's eq. 3 (decay γ/d_out) or PyTorch's
    `weight_decay` (decay γ); see `grokclocks.sim.train.weight_decay_coefficient`."""
    sigma2: float
    """Variance σ² ≥ 0 of the label noise redrawn at every step."""
    steps: int
    """Number of GD steps run, ≥ 1."""
    record_every: int
    """Steps between two records, ≥ 1 and dividing `steps`."""
    noise_seed: int
    """Seed ≥ 0 of the noise sequence (derived from each draw's key)."""
