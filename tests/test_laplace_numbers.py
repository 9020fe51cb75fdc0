"""A scalar call of the Marchenko-Pastur Laplace transform Phi_0 (rmt.mp_laplace, rmt.mp_log_laplace) and of the
generalisation loss (linear.loss_gen, log_loss_gen) runs rmt's `_log_phi0` on two floats (the branch that applies by
an `if`, the double series on Python floats, the rule on one point); it must give the array call's bits on every
branch: the series (z <= 1), lam = 1, the rule in y and in the log-mapped tau, lam > 1 by duality, s lam beyond
1.8e308, s = 0."""

import math

import numpy as np
import pytest

from grokclocks import linear as L
from grokclocks import rmt

# (s, lam) on each branch of _log_phi0
BRANCHES = [
    (0.0, 0.5), (0.0, 3.0), (0.3, 0.5), (1e-6, 1e-300), (2.0, 1e-30),  # the series (z = 2 s sqrt(lam) <= 1)
    (0.6, 1.0), (40.0, 1.0), (1e301, 1.0),  # lam = 1 (ive; the huge-s form)
    (3.0, 0.01), (300.0, 0.9), (1e5, 1 - 1e-9), (1e12, 1 - 1e-15), (5.0, 0.3),  # the rule (y, tau, truncated)
    (3.0, 4.0), (1e3, 1 + 1e-12), (0.01, 1e6), (1e-3, 1e300), (1e10, 1e300),  # lam > 1 (duality; s lam overflows)
]


@pytest.mark.parametrize("fn", [rmt.mp_laplace, rmt.mp_log_laplace], ids=lambda f: f.__name__)
def test_mp_laplace_number_equals_array_on_every_branch(fn):
    s = np.array([p[0] for p in BRANCHES])
    lam = np.array([p[1] for p in BRANCHES])
    with np.errstate(all="ignore"):
        arr = fn(s, lam)
    for k, (sk, lk) in enumerate(BRANCHES):
        v = fn(sk, lk)
        assert type(v) is float
        assert v == arr[k] or (math.isnan(v) and math.isnan(arr[k])), (sk, lk, v, arr[k])


@pytest.mark.parametrize("fn", [L.loss_gen, L.log_loss_gen], ids=lambda f: f.__name__)
def test_loss_gen_number_equals_array_on_random_points(fn):
    rng = np.random.default_rng(7)
    t = np.exp(rng.uniform(math.log(1e-3), math.log(1e9), 300))
    lam = np.exp(rng.uniform(math.log(1e-12), math.log(1e12), 300))
    lam[::9], lam[::10] = 1.0, 1.0 - 1e-10
    t[::17] = 0.0
    arr = fn(t, lam, 0.01, init_scale=0.5)
    for k in range(t.size):
        assert fn(float(t[k]), float(lam[k]), 0.01, init_scale=0.5) == arr[k], (t[k], lam[k])
