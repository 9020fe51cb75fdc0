r"""Vectorised Marchenko–Pastur quadrature and crossing-time solver for phase diagrams.

This private module computes the exact large-size losses with weight decay (spec ``levi:eq14``,
which is ``levi:eq8`` at :math:`\gamma=0`) and their threshold-crossing times (``levi:tstar``,
``levi:grok-def``) for whole grids of :math:`(\lambda,\gamma,\epsilon,\eta_0,d_{\rm out},\ell)` at
once, without a Python loop over grid points.  It depends only on numpy/scipy; the public
front-end :func:`grokclocks.linear.grok_time_grid` is built on ``_train_gen_crossings``.

Decomposition (``levi:eq14``, ``levi:eq15``)
--------------------------------------------
With :math:`g=\gamma/2`, :math:`s=4\eta_0 t/d_{\rm out}`, :math:`r(\nu)=\nu/(\nu+g)` and
:math:`q_{\rm tr}=\nu,\ q_{\rm gen}=1`, expanding the square in eq. 14 gives

.. math::

    d_{\rm out}\,\mathcal L(t) = \mathcal L_1^\infty + D(s),\qquad
    D(s)=\tfrac12\,\mathbb E\Big[q\Big(e^{-s(\nu+g)}\,(1+r^2) + \frac{2g\,r}{\nu+g}\,e^{-s(\nu+g)/2}\Big)\Big],

:math:`\mathcal L_1^\infty=\tfrac{g^2}{2}\mathbb E[q/(\nu+g)^2]` (``levi:eq15``, evaluated in closed form
from the Stieltjes transform, ``levi:mp-stieltjes``; at :math:`g=0` it is :math:`(1-1/\lambda)^+` for the
generalisation loss and 0 for the training loss).  :math:`D` is a positive mixture of decaying
exponentials, so it is strictly decreasing and log-convex in :math:`s`; the crossing
:math:`\mathcal L=\mathcal L^*` is the root of :math:`\log D(s)=\log(d_{\rm out}\mathcal L^*-\mathcal L_1^\infty)`.
The atom of MP at :math:`\nu=0` (:math:`\lambda>1`) is added exactly: it contributes
:math:`\tfrac12(1-1/\lambda)\,e^{-sg}` to :math:`D` of the generalisation loss when :math:`g>0`.

Quadrature rule (``levi:mp-quad``)
----------------------------------
With :math:`\nu=\lambda_-+u`, :math:`w=\lambda_+-\lambda_-=4\sqrt\lambda`, the continuous part is
:math:`\frac1{2\pi\lambda}\int_0^w\sqrt{u(w-u)}\,\frac{F(u)}{\lambda_-+u}\,du` where :math:`F` carries the
factor :math:`e^{-\kappa s u}` (:math:`\kappa=\tfrac12` if :math:`g>0`, else 1).  Three difficulties are
removed by construction rather than by refinement:

* **large s** — the integral is truncated at :math:`T=C/(\kappa s)` (:math:`C=40`, neglected tail
  :math:`<e^{-40}`) whenever :math:`T<w/2`, else :math:`T=w`;
* **the 1/ν near-pole near λ = 1** (at :math:`u=-\lambda_-`, distance :math:`(1-\sqrt\lambda)^2` from the
  edge) — the exponential map :math:`u=\delta\,(e^\tau-1)` with :math:`\delta=\lambda_-` gives
  :math:`du/(\lambda_-+u)=d\tau`, i.e. the pole is mapped to :math:`\tau=-\infty`; the double pole
  :math:`1/(\nu+g)^2` of the weight-decay terms lands at :math:`{\rm Im}\,\tau=\pi`.  At :math:`\lambda=1`
  exactly (:math:`\lambda_-=0`) the density is :math:`u^{-1/2}\sqrt{4-u}` and :math:`\delta=g` (or :math:`T`);
* **endpoint square roots** — a Gauss–Jacobi rule in :math:`\tau\in[0,\tau_T]` with weight
  :math:`\tau^{\alpha}(\tau_T-\tau)^{\beta}`, :math:`\alpha=\tfrac12` (:math:`-\tfrac12` at :math:`\lambda=1`),
  :math:`\beta=\tfrac12` when untruncated (the :math:`\sqrt{\lambda_+-\nu}` edge), else 0.

The number of nodes is taken from a fixed ladder by the length :math:`\tau_T=\log(1+T/\delta)` of the
mapped interval (32 nodes for :math:`\tau_T\le4`, growing linearly, at most 256 for
:math:`|\lambda-1|\sim10^{-16}`), calibrated so that every case reaches a relative error
:math:`\le10^{-12}` against a 320-node rule and mpmath (see ``tests/test_mpgrid.py``).  The
derivative :math:`dD/ds` (for Newton) comes from the same rule.

Root finder (``levi:tstar``)
----------------------------
Safeguarded Newton on :math:`G=\log D(s)-\log(\text{target})` for all grid points at once, in
:math:`x=\log s`.  :math:`D` is a positive mixture of exponentials, hence log-convex: :math:`G` is convex
and decreasing in :math:`s`, so the zero of the tangent in :math:`s` at any iterate is a *certified lower
bound* of the root.  Start: the Jensen bound :math:`D(s)\ge D(0)e^{-\mu s}`, :math:`\mu=-D'(0)/D(0)`
(closed form), another certified lower bound.  Step: left of the root the root of the local model
:math:`G+b\Delta-cs(e^\Delta-1)` (:math:`c` the mixture's slowest rate: exact for the large-s form
:math:`a-b\log s-cs` of every MP decay; 4.7 evaluations a crossing on the Fig. 7 grid against 7-9 for the
plain log-Newton step), capped at 10 e-folds; right of the root the tangent in :math:`s` (exact for pure
exponentials); bisection in :math:`\log s` if a step leaves the bracket.  Converged when the Newton step is
below :math:`10^{-7}` in :math:`\log s`; the final step is applied (quadratic convergence: error below
:math:`y^2/2=5\cdot10^{-15}`), so the residual error is set by the quadrature (:math:`\sim10^{-13}`).

The same iteration (`_newton`) solves every crossing time of the package: gradient flow without weight
decay on rmt's closed forms (`_solve_closed`), with it on the rule above (`_solve`), both reached through
`_crossing_s`, which also chunks the points (16384 at a time; the rule's sums in blocks of 65536 point-nodes) and
runs two threads;
`grokclocks.linear.t_star` and `grok_time` use it too, so a grid and a point give the same numbers.

One concept per private file: `_rule` (the fixed rule: log D(s) and its slope), `_grids` (the loss,
plateau and threshold grids), `_newton` (the lockstep Newton iteration), `_crossings` (the crossing engine
and the crossing-time grid).
"""

from __future__ import annotations

from .._facade import set_home
from ..rmt._rule import _rule01
from ._crossings import _CHUNK, _crossing, _crossing_s, _solve_closed, _train_gen_crossings, crossing_time_grid
from ._grids import (
    _TINY,
    _common,
    _half_gamma,
    _p_inverse,
    DecayGrid,
    log_wd_loss_grid,
    loss_threshold_grid,
    mp_decay_grid,
    wd_asymptote_grid,
    wd_loss_grid,
)
from ._newton import _BRACKET_TOL, _LOG_S_MAX, _MAX_ITER, _MAX_STEP, _NEWTON_TOL, _model_step, _newton, _solve
from ._rule import (
    _LADDER,
    _TRUNC,
    _asymptote,
    _combine,
    _decay,
    _decay_general,
    _decay_regular,
    _edges,
    _log_asymptote,
    _n_nodes,
)

__all__ = [
    "loss_threshold_grid",
    "wd_asymptote_grid",
    "wd_loss_grid",
    "log_wd_loss_grid",
    "mp_decay_grid",
    "DecayGrid",
    "crossing_time_grid",
]


def __dir__() -> list[str]:
    """`dir()` of this package: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_") and n != "annotations")})


set_home(__name__, globals(), __all__)
del annotations, set_home  # not part of the API
