"""Accuracy cases for grokclocks.repulsion (feature Gram inverse, the sign rule, Adam, Gram eigenvalues).

Matrix functions are checked on families with a closed form (mpmath at 40 digits):

* ``F = [[x, 0]]`` (n = 1 < K = 2, the Woodbury route): :math:`B=\\mathrm{diag}(1/(x^2+\\eta),1/\\eta)`;
* ``F = [[x], [y]]`` (n = 2 > K = 1, the direct route): :math:`B=1/(x^2+y^2+\\eta)`;
* ``F = [[x, y]]`` (K = 2: leaving out both columns leaves the identity projector), so
  :math:`c=xy`, :math:`\\alpha=x^2+\\eta`, :math:`\\beta=y^2+\\eta`, :math:`B_{12}=-xy/(\\eta(x^2+y^2+\\eta))`,
  and the full-projector residual is :math:`\\eta xy/(x^2+y^2+\\eta)`.
"""

from __future__ import annotations

import dataclasses

import mpmath
import numpy as np

from cases_clocks import in_double
from grokclocks import repulsion as R
from harness import TINY, AccuracyCase, Arg

mpf = mpmath.mpf
EPS = 2.0 ** -52


def _eta_rel(x, y, u):
    """eta = u (x^2 + y^2) as the double the function receives."""
    return u * (x * x + y * y)


def _adam_ref(param, grad, m, v, step, lr, eta):
    p, g = mpf(param), mpf(grad) + mpf(eta) * mpf(param)
    b1, b2, eps = mpf(0.9), mpf(0.999), mpf(1e-8)
    m1 = b1 * mpf(m) + (1 - b1) * g
    v1 = b2 * mpf(v) + (1 - b2) * g * g
    s = int(step)
    return p - mpf(lr) * (m1 / (1 - b1 ** s)) / (mpmath.sqrt(v1) / mpmath.sqrt(1 - b2 ** s) + eps)


CASES = [
    AccuracyCase("grokclocks.repulsion.tian_init_bounds [W]", lambda M: R.tian_init_bounds(int(M), 3)[0],
                 lambda M: 1 / mpmath.sqrt(2 * mpf(int(M))), {"M": Arg(2, 1e300, integer=True)}, rtol=2.3e-16),
    AccuracyCase("grokclocks.repulsion.adam_l2_update [scalar]",
                 lambda param, grad, m, v, step, lr: float(R.adam_l2_update(param, grad, m, v, int(step), lr, 2e-4)[0]),
                 lambda param, grad, m, v, step, lr: _adam_ref(param, grad, m, v, step, lr, 2e-4),
                 {"param": Arg(1e-3, 1e3), "grad": Arg(1e-6, 1e3), "m": Arg(1e-6, 1e3), "v": Arg(1e-12, 1e6),
                  "step": Arg(1, 1e6, integer=True), "lr": Arg(1e-6, 1e-1)},
                 # param - lr * update: absolute error eps (|param| + lr |update|) (a difference)
                 rtol=1e-15, atol=1e-15 * 1e3),
    AccuracyCase("grokclocks.repulsion.feature_gram_inverse [woodbury, eta * B_11]",
                 lambda x, eta: eta * R.feature_gram_inverse(np.array([[x, 0.0]]), eta)[0, 0],
                 lambda x, eta: mpf(eta) / (mpf(x) ** 2 + mpf(eta)),
                 {"x": Arg(1e-150, 1e150), "eta": Arg(1e-150, 1e150)},
                 # normwise: |B^ - B| <= c eps |B| with |B| = 1/eta; the entry 1/(x^2+eta) << 1/eta is then
                 # only absolutely accurate (1 - x^2/(x^2+eta) cancels): atol 4 eps on eta B.  The worst
                 # *relative* error of this entry is therefore large where x^2 >> eta (by design)
                 rtol=4 * EPS, atol=4 * EPS,
                 note="normwise contract: |eta (B^ - B)| <= 4 eps; entrywise relative error ~ eps x^2 / eta"),
    AccuracyCase("grokclocks.repulsion.feature_gram_inverse [direct]",
                 lambda x, y, eta: R.feature_gram_inverse(np.array([[x], [y]]), eta)[0, 0],
                 lambda x, y, eta: 1 / (mpf(x) ** 2 + mpf(y) ** 2 + mpf(eta)),
                 {"x": Arg(1e-100, 1e100), "y": Arg(1e-100, 1e100), "eta": Arg(1e-150, 1e150)}, rtol=4 * EPS),
    AccuracyCase("grokclocks.repulsion.full_projector_residual [F = [[x, y]]]",
                 lambda x, y, u: R.full_projector_residual(np.array([[x, y]]), _eta_rel(x, y, u), 0, 1),
                 lambda x, y, u: (mpf(_eta_rel(x, y, u)) * mpf(x) * mpf(y)
                                  / (mpf(x) ** 2 + mpf(y) ** 2 + mpf(_eta_rel(x, y, u)))),
                 {"x": Arg(1e-100, 1e100), "y": Arg(1e-100, 1e100), "u": Arg(1e-6, 1e6)}, rtol=8 * EPS),
    # the rank-2 downdate divides by det(I - Q) = eta / (|f_j|^2 + |f_l|^2 + eta): relative error
    # ~ eps (1 + (|f_j|^2 + |f_l|^2) / eta) (documented); measured 3e-13 at eta = 1e-3 |F|^2
    AccuracyCase("grokclocks.repulsion.leave_two_out_residual [F = [[x, y]]]",
                 lambda x, y, u: R.leave_two_out_residual(np.array([[x, y]]), _eta_rel(x, y, u), 0, 1),
                 lambda x, y, u: mpf(x) * mpf(y),
                 {"x": Arg(1e-100, 1e100), "y": Arg(1e-100, 1e100), "u": Arg(1e-3, 1e6)}, rtol=2e-12),
    AccuracyCase("grokclocks.repulsion.sign_rule_terms [B_jl, F = [[x, y]]]",
                 lambda x, y, u: R.sign_rule_terms(np.array([[x, y]]), _eta_rel(x, y, u), 0, 1)[0],
                 lambda x, y, u: (-mpf(x) * mpf(y) / (mpf(_eta_rel(x, y, u))
                                                      * (mpf(x) ** 2 + mpf(y) ** 2 + mpf(_eta_rel(x, y, u))))),
                 {"x": Arg(1e-100, 1e100), "y": Arg(1e-100, 1e100), "u": Arg(1e-3, 1e6)},
                 # Woodbury (n < K): the off-diagonal entry is -(F^T A^-1 F)_12 / eta, no cancellation
                 rtol=8 * EPS),
    AccuracyCase("grokclocks.repulsion.sign_rule_terms [alpha, F = [[x, y]]]",
                 lambda x, y, u: R.sign_rule_terms(np.array([[x, y]]), _eta_rel(x, y, u), 0, 1)[2],
                 lambda x, y, u: mpf(x) ** 2 + mpf(_eta_rel(x, y, u)),
                 {"x": Arg(1e-100, 1e100), "y": Arg(1e-100, 1e100), "u": Arg(1e-3, 1e6)}, rtol=2e-12),
    AccuracyCase("grokclocks.repulsion.tian_mse_loss [code form, one sample]",
                 lambda u, v: R.tian_mse_loss([[u, v]], [0], 2),
                 lambda u, v: ((mpf(u) - (mpf(u) + mpf(v)) / 2 - mpf(0.5)) ** 2
                               + (mpf(v) - (mpf(u) + mpf(v)) / 2 + mpf(0.5)) ** 2),
                 {"u": Arg(1e-8, 1e8), "v": Arg(1e-8, 1e8)},
                 # squares of (u - v)/2 -+ 1/2: a difference, absolute error eps max(|u|, |v|) in each
                 rtol=1e-15, atol=1e-15),
    AccuracyCase("grokclocks.repulsion.window_gram_eigenvalues [diag(x, y)]",
                 lambda x, y: R.window_gram_eigenvalues(np.diag([x, y]), k=2)[1],
                 lambda x, y: min(mpf(x), mpf(y)) ** 2, {"x": Arg(1e-70, 1e70), "y": Arg(1e-70, 1e70)},
                 rtol=2.3e-16, atol=2.3e-16 * TINY),
    AccuracyCase("grokclocks.repulsion.eigengap", lambda a, b: R.eigengap([1.0, a, b], 2, 3),
                 lambda a, b: mpf(a) / mpf(b), {"a": Arg(TINY, 1e300), "b": Arg(TINY, 1e300)},
                 rtol=1.2e-16, atol=1.2e-16 * TINY),
    AccuracyCase("grokclocks.repulsion.fit_power_law [gamma]",
                 lambda e1, f, t1, t2: R.fit_power_law([e1, e1 * f], [t1, t2])[0],
                 lambda e1, f, t1, t2: -mpmath.log(mpf(t2) / mpf(t1)) / mpmath.log(mpf(e1 * f) / mpf(e1)),
                 {"e1": Arg(1e-100, 1e100), "f": Arg(1.5, 1e100), "t1": Arg(1e-100, 1e100), "t2": Arg(1e-100, 1e100)},
                 rtol=1e-15, atol=1e-15),
    AccuracyCase("grokclocks.repulsion.ftf_offdiag_ratio [F = [[x, x], [y, -y / 2]]]",
                 lambda x, y: R.ftf_offdiag_ratio(np.array([[x, x], [y, -y / 2]])),
                 lambda x, y: (abs(mpf(x) ** 2 - mpf(y) ** 2 / 2)
                               / ((2 * mpf(x) ** 2 + mpf(y) ** 2 + mpf(y) ** 2 / 4) / 2)),
                 {"x": Arg(1e-140, 1e140), "y": Arg(1e-140, 1e140)},
                 # |x^2 - y^2/2| cancels near x = y / sqrt 2: absolute error eps (x^2 + y^2) / diag
                 rtol=4 * EPS, atol=8 * EPS),
]

CASES = [dataclasses.replace(c, reference=in_double(c.reference)) for c in CASES]
