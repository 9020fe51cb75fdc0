r"""The Marchenko–Pastur law: density, atom, moments, Laplace transforms and expectations.

The eigenvalues ν of the empirical Gram matrix Σ_tr = XᵀX/N of N standard Gaussian samples in d dimensions
follow, as d, N → ∞ at fixed aspect ratio λ = d/N, the Marchenko–Pastur law (spec `levi:eq6`): an atom of
mass max(0, 1 − 1/λ) at 0 and a continuous part on [λ₋, λ₊], λ± = (1 ± √λ)²,

.. math::

    p_{\rm MP}(\nu)\,d\nu=\Big(1-\frac1\lambda\Big)^{+}\delta_0(d\nu)
    +\frac{\sqrt{(\lambda_+-\nu)(\nu-\lambda_-)}}{2\pi\lambda\,\nu}\,\mathbf 1_{[\lambda_-,\lambda_+]}(\nu)\,d\nu,
    \qquad \lambda_\pm=(1\pm\sqrt\lambda)^2 .

This package is paper-independent; `grokclocks.linear` builds the loss curves of the linear teacher–student
model on it. Every function of a number is a vectorised function of its array arguments (numpy
broadcasting, like a `scipy.special` ufunc), computes in float64 and returns a Python float for scalar
input; a scalar call and an array call run the same code. The generic expectations `mp_expect` and
`mp_log_expect_exp` take the user's integrand and a scalar `lam` (adaptive QAWS quadrature, the reference
every fixed rule of the package is measured against). Quantities that underflow or overflow have `log_`
variants.

One concept per private file: `_support` (edges, atom), `_density` (density, CDF), `_moments`,
`_stieltjes` (resolvent moments, weight-decay plateaus), `_laplace` (the Laplace transforms Φ₀, Φ₁),
`_rule` (the fixed Gauss–Jacobi rule over the law: the one engine for the package's own MP integrals),
`_adaptive` (expectations of a user's integrand), `_bessel` (scaled Bessel functions).
"""

from __future__ import annotations

from .._facade import set_home
from ._adaptive import _quad, mp_expect, mp_log_expect_exp
from ._bessel import _ive, _log_ive_2sr
from ._density import mp_cdf, mp_density
from ._laplace import (
    _COEF_SMALL,
    _log_phi0,
    _log_phi0_cont,
    _log_phi1,
    _phi1_slope,
    _log_phi1_increment,
    _phi0_excess,
    mp_laplace,
    mp_laplace_nu,
    mp_log_laplace,
    mp_log_laplace_nu,
)
from ._moments import mp_inverse_moment, mp_moment
from ._stieltjes import _log_wd_plateau, _log_wd_plateaus, _wd_plateaus, mp_stieltjes, mp_stieltjes2, mp_stieltjes_nu2
from ._support import _gap, MPEdges, mp_atom, mp_edges

__all__ = [
    "mp_edges",
    "MPEdges",
    "mp_atom",
    "mp_density",
    "mp_cdf",
    "mp_moment",
    "mp_inverse_moment",
    "mp_stieltjes",
    "mp_stieltjes2",
    "mp_stieltjes_nu2",
    "mp_laplace_nu",
    "mp_log_laplace_nu",
    "mp_laplace",
    "mp_log_laplace",
    "mp_expect",
    "mp_log_expect_exp",
]


def __dir__() -> list[str]:
    """`dir()` of this package: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_") and n != "annotations")})


set_home(__name__, globals(), __all__)
del annotations, set_home  # not part of the API
