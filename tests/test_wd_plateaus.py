"""The weight-decay plateaus g^2 E[q/(nu+g)^2] (levi:eq15): one engine (rmt._plateaus), value space inside
[2^-200, 2^200], the log form outside; accuracy against mpmath and the same bits for a number and an array."""

import math

import mpmath as mp
import numpy as np
import pytest

from grokclocks import linear as L
from grokclocks import rmt
from grokclocks.rmt import _stieltjes as S


def _ref(which, lam, gamma, d_out=1):
    """g^2 E[q/(nu+g)^2]/(2 d_out), g = gamma/2, from m and m2 of the MP law at enough digits for the
    cancellations of m (rationalised nowhere) and of m - g m2."""
    lam, g = mp.mpf(lam), mp.mpf(gamma) / 2
    with mp.workdps(60 + 2 * int(abs(mp.log10(g)) + abs(mp.log10(lam)))):
        b = 1 - lam + g
        D = mp.sqrt(b * b + 4 * lam * g)
        m = (D - b) / (2 * lam * g)
        m2 = m * (1 + lam * m) / D
        mom = m2 if which == "gen" else m - g * m2
        return +(g * g * mom / (2 * d_out))


def _points(n, lo, hi, seed):
    rng = np.random.default_rng(seed)
    return (np.exp(rng.uniform(math.log(lo), math.log(hi), n)), np.exp(rng.uniform(math.log(lo), math.log(hi), n)))


def _worst(values, lam, gamma, which):
    return max(float(abs((mp.mpf(float(v)) - r) / r)) for v, r in
               ((v, _ref(which, li, gi)) for v, li, gi in zip(values, lam, gamma)))


def test_wd_asymptotes_value_space_accuracy_vs_mpmath():
    # measured on 300 points of this range (seed 11): 4.1e-16 (train), 4.4e-16 (gen); the log form the plateaus
    # came from before (three log ratios and log M, then exp) lost |log L| ulps: 3.9e-14, 5.0e-14 there
    lam, gamma = _points(80, 1e-60, 1e60, 5)
    tr, ge = L.wd_asymptotes(lam, gamma)
    assert _worst(tr, lam, gamma, "train") <= 1.5e-15
    assert _worst(ge, lam, gamma, "gen") <= 1.5e-15


def test_log_form_fallback_is_the_less_accurate_one():
    # the gain the value space brings, measured on the same points: the log form (kept only for points outside
    # [2^-200, 2^200]) is > 1e-14 off somewhere, the engine's own values are not
    lam, gamma = _points(80, 1e-60, 1e60, 5)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):  # its caller's (`_plateaus`)
        ltr, lge = S._log_plateaus(0.5 * gamma, lam)
    old = max(_worst(np.exp(ltr - math.log(2.0)), lam, gamma, "train"),
              _worst(np.exp(lge - math.log(2.0)), lam, gamma, "gen"))
    assert old > 1e-14


@pytest.mark.parametrize("which", ["train", "gen"])
def test_wd_asymptotes_log_form_outside_the_box_vs_mpmath(which):
    # points beyond [2^-200, 2^200] (and the box's edges) keep the log form: |log L| ulps
    edge = [2.0**-200, np.nextafter(2.0**-200, 0.0), 2.0**200, np.nextafter(2.0**200, np.inf), 1e-300, 1e300]
    lam = np.array([0.3, 5.0, 1e-250, 1e250] + edge)
    gamma = np.array(edge[:4] + [1.0, 1e-3] + edge[:4]) * 2.0
    lam, gamma = np.broadcast_arrays(lam[:, None], gamma[None, :])
    lam, gamma = lam.ravel(), gamma.ravel()
    out = L.wd_asymptotes(lam, gamma)[0 if which == "train" else 1]
    for v, li, gi in zip(out, lam, gamma):
        r = _ref(which, li, gi)
        if r < 2.3e-308:  # the value itself below the normal range
            continue
        rtol = 4e-16 * (10 + abs(float(mp.log(r))))
        assert abs(mp.mpf(float(v)) - r) <= rtol * r, (which, li, gi, v, r)


def test_number_and_array_calls_give_the_same_bits_across_the_box_edges():
    vals = [2.0**-200, np.nextafter(2.0**-200, 0.0), np.nextafter(2.0**-200, 1.0), 2.0**200,
            np.nextafter(2.0**200, np.inf), 0.5, 1.0, 1.5, 1e-300, 1e300, 1.7e308]
    g, a = (x.ravel() for x in np.meshgrid(vals, vals))
    tr, ge = rmt._wd_plateaus(g, a, 6.0)
    ltr, lge = rmt._log_wd_plateaus(g, a)
    for k in range(g.size):
        t1, g1 = rmt._wd_plateaus(float(g[k]), float(a[k]), 6.0)
        l1, l2 = rmt._log_wd_plateaus(float(g[k]), float(a[k]))
        assert (t1, g1, l1, l2) == (tr[k], ge[k], ltr[k], lge[k]), (g[k], a[k])
        assert rmt._log_wd_plateau(float(g[k]), float(a[k]), True) == lge[k]
    # a mask with a few points outside (gathered) and with many (the log form everywhere, value space re-done)
    few = np.concatenate([np.full(200, 0.7), [1e-300, 1e300]])
    for gg in (few, few[::-1][:20]):
        aa = np.full(gg.shape, 2.0)
        t, e = rmt._wd_plateaus(gg, aa)
        for k in range(gg.size):
            assert rmt._wd_plateaus(float(gg[k]), 2.0) == (t[k], e[k])


def test_every_caller_takes_the_one_engine():
    # the losses' t -> infinity limit, the gradient-flow and GD losses and the MP grid all read rmt's plateaus
    lam, gamma = np.array([0.4, 3.0, 1e-100]), np.array([1e-3, 0.2, 1e100])
    tr, ge = L.wd_asymptotes(lam, gamma)
    ltr, lge = rmt._log_wd_plateaus(0.5 * gamma, lam)
    np.testing.assert_array_equal(np.log(tr * 2.0)[:2], ltr[:2])
    np.testing.assert_allclose(np.log(ge * 2.0), lge, rtol=0, atol=1e-15)
    np.testing.assert_allclose(L.loss_gen(1e30, lam, 0.01, gamma=gamma), ge, rtol=1e-14)
