"""Linear teacher-student simulations: run configurations and result records."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ..._validate import DomainError, integer_at_least, nonnegative


@dataclasses.dataclass(frozen=True)
class LinearGDConfig:
    """Configuration of :func:`run_gd` (JSON-serialisable; ``eta``/``gamma`` are tuples for a grid)."""

    d_in: int
    d_out: int
    n_train: int
    lam: float
    init_scale: float
    sigma2: float
    seeds: tuple[int, ...] | None
    eta: float | tuple[float, ...]
    gamma: float | tuple[float, ...]
    wd_convention: str
    steps: int
    record_every: int
    eps: float | None = None
    n_gen: int = 0


@dataclasses.dataclass(frozen=True)
class SpectralConfig:
    """Configuration of :func:`run_gd_spectral` / :func:`crossing_times`."""

    d_in: int
    d_out: int
    n_train: int
    lam: float
    init_scale: float
    sigma2: float
    seeds: tuple[int, ...] | None
    eta: float
    gamma: float
    wd_convention: str
    loss_star: float | None = None


@dataclasses.dataclass(frozen=True, eq=False)
class CrossingTimes:
    """Loss-crossing times of :func:`crossing_times` (arrays of the data's batch shape).

    ``t_train``/``t_gen``: first (continuous) step at which L_tr / L_gen <= ``loss_star``; ``0`` if
    already at t = 0, ``inf`` if the late-time limit is not below ``loss_star`` (spec
    ``levi:grok-def``); ``grok_time = t_gen - t_train`` (NaN if both are infinite).
    """

    t_train: np.ndarray
    t_gen: np.ndarray
    grok_time: np.ndarray
    config: SpectralConfig


@dataclasses.dataclass(frozen=True, eq=False)
class SpectralDraws:
    r"""Teacher-student draws in the eigenbasis of their training covariance: one ``eigh`` serves many runs.

    With :math:`\Sigma_{\rm tr} = X^\top X/N = V{\rm diag}(\nu)V^\top` (eigenvalues below
    ``nu_max * max(N, d_in) * machine eps`` set to 0, as in :func:`run_gd_spectral`):
    ``nu`` (*batch, d_in); ``Tb = V^T T`` and ``Sb = V^T S0`` of the draw with ``init_scale = 1``;
    ``Zb = V^T X^T z / N`` and ``zz = |z|^2 / N`` of its label noise ``z`` at ``sigma2 = 1``.  The fields
    ``init_scale`` / ``sigma2`` select the variant ``S0 = init_scale * S0(1)``, ``delta = sqrt(sigma2) z`` --
    exactly the draws of :func:`make_teacher_student` with those arguments and the same keys (up to
    float64 rounding of the scaling) -- so :func:`run_gd_spectral` and :func:`crossing_times` accept it in
    place of the data and skip the eigendecomposition.  Build with :func:`spectral_draws`; change the
    variant with :meth:`variant`.
    """

    nu: jax.Array
    Tb: jax.Array
    Sb: jax.Array
    Zb: jax.Array
    zz: jax.Array
    d_in: int
    d_out: int
    n_train: int
    lam: float
    seeds: tuple[int, ...] | None = None
    init_scale: float = 1.0
    sigma2: float = 0.0

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading (seed) axes of the array fields."""
        return tuple(self.nu.shape[:-1])

    def variant(self, *, init_scale: float | None = None, sigma2: float | None = None) -> "SpectralDraws":
        """The same draws with another student scale ``init_scale`` and/or label-noise variance ``sigma2``."""
        kw: dict[str, float] = {}
        if init_scale is not None:
            kw["init_scale"] = float(np.asarray(init_scale, dtype=np.float64))
            if not np.isfinite(kw["init_scale"]):
                raise DomainError(f"init_scale must be finite (got {init_scale!r})")
        if sigma2 is not None:
            kw["sigma2"] = float(nonnegative(sigma2, "sigma2"))
        return dataclasses.replace(self, **kw)

    def take(self, n: int) -> "SpectralDraws":
        """The first ``n`` draws of a 1-D seed batch."""
        n = integer_at_least(n, "n", 1)
        if len(self.batch_shape) != 1 or n > self.batch_shape[0]:
            raise DomainError(f"n must be <= the number of draws {self.batch_shape} of a 1-D batch (got {n})")
        return dataclasses.replace(self, nu=self.nu[:n], Tb=self.Tb[:n], Sb=self.Sb[:n], Zb=self.Zb[:n],
                                   zz=self.zz[:n], seeds=None if self.seeds is None else self.seeds[:n])

    @staticmethod
    def concatenate(parts: "Sequence[SpectralDraws]") -> "SpectralDraws":
        """Join 1-D seed batches of the same configuration along the seed axis."""
        first = parts[0]
        cat = {k: jnp.concatenate([getattr(p, k) for p in parts]) for k in ("nu", "Tb", "Sb", "Zb", "zz")}
        seeds = None if any(p.seeds is None for p in parts) else tuple(s for p in parts for s in p.seeds)
        return dataclasses.replace(first, seeds=seeds, **cat)


@dataclasses.dataclass(frozen=True)
class TwoLayerConfig:
    """Configuration of :func:`run_two_layer`."""

    d_in: int
    d_h: int
    d_out: int
    n_train: int
    lam: float
    seeds: tuple[int, ...] | None
    activation: str
    eta: float | tuple[float, ...]
    gamma: float | tuple[float, ...]
    wd_convention: str
    steps: int
    record_every: int
    n_gen: int


@dataclasses.dataclass(frozen=True)
class FreshNoiseConfig:
    """Configuration of :func:`run_gd_fresh_noise`."""

    d_in: int
    d_out: int
    n_train: int
    lam: float
    init_scale: float
    seeds: tuple[int, ...] | None
    eta: float
    gamma: float
    wd_convention: str
    sigma2: float
    steps: int
    record_every: int
    noise_seed: int
