"""grokclocks.rmt against independent references (mpmath at 30+ digits), properties and domain errors."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grokclocks import DomainError, rmt



@pytest.fixture(autouse=True)
def _mp_precision():
    """35 digits for every reference here, whatever other test modules set globally."""
    with mp.workdps(35):
        yield

LAMS = [0.05, 0.3, 0.9, 0.99, 1.0, 1.01, 1.5, 4.0]
SS = [1e-3, 0.1, 1.0, 5.0, 20.0, 100.0, 400.0]


def _theta_points(s, lam):
    """Break points for the theta integrals: the Laplace peak and the 1/nu near-pole sit at theta = pi."""
    r = mp.sqrt(lam)
    lm = (1 - r) ** 2
    pts = {mp.mpf(0), mp.pi / 2, mp.pi}
    for w in (1 / mp.sqrt(s * r + 1), mp.sqrt(lm / r) if lm > 0 else mp.mpf(0)):
        for c in (0.25, 0.5, 1, 2, 4, 8, 16, 32):
            x = mp.pi - c * w
            if 0 < x < mp.pi:
                pts.add(x)
    return sorted(pts)


def ref_expect(f, lam, s=0.0):
    r"""E_MP[f(nu) e^{-s nu}] via nu = 1 + lam + 2 sqrt(lam) cos(theta): (2/pi) int sin^2 f/nu dtheta (+ atom)."""
    lam, s = mp.mpf(lam), mp.mpf(s)
    r = mp.sqrt(lam)

    def g(th):
        nu = 1 + lam + 2 * r * mp.cos(th)
        if nu == 0:  # lam = 1, theta = pi: sin^2/nu -> (1 - cos)/2 (with r = 1)
            return f(nu) * (1 - mp.cos(th)) / 2 * 2 / mp.pi
        return 2 / mp.pi * mp.sin(th) ** 2 * f(nu) * mp.e ** (-s * nu) / nu

    val = mp.quad(g, _theta_points(s if s > 0 else mp.mpf(1), lam))
    if lam > 1:
        val += (1 - 1 / lam) * f(mp.mpf(0))
    return val


def ref_phi1(s, lam):
    """Independent evaluation of E[nu e^{-s nu}]: mpmath Bessel at 35 digits."""
    s, lam = mp.mpf(s), mp.mpf(lam)
    r = mp.sqrt(lam)
    return mp.e ** (-s * (1 + lam)) * mp.besseli(1, 2 * s * r) / (s * r)


def test_edges_atom_density_mass():
    for lam in LAMS:
        lm, lp = rmt.mp_edges(lam)
        assert lm == pytest.approx(float((1 - mp.sqrt(lam)) ** 2), rel=1e-15, abs=1e-300)
        assert lp == pytest.approx(float((1 + mp.sqrt(lam)) ** 2), rel=1e-15)
        mass = float(ref_expect(lambda nu: mp.mpf(1), lam)) if lam <= 1 else None
        cont = float(mp.quad(lambda x: rmt.mp_density(float(x), lam), [lm, (lm + lp) / 2, lp]))
        assert cont == pytest.approx(min(1.0, 1.0 / lam), rel=1e-7)
        assert rmt.mp_atom(lam) == pytest.approx(max(0.0, 1 - 1 / lam), abs=1e-16)
        if mass is not None:
            assert mass == pytest.approx(1.0, rel=1e-25 if False else 1e-14)
    assert rmt.mp_density(-1.0, 0.5) == 0.0 and rmt.mp_density(10.0, 0.5) == 0.0


@pytest.mark.parametrize("lam", [0.1, 0.3, 0.5, 0.9, 1.0, 1.5, 3.0])
def test_moments_vs_quadrature(lam):
    for k in range(0, 5):
        ref = ref_expect(lambda nu, k=k: nu**k, lam)
        assert rmt.mp_moment(k, lam) == pytest.approx(float(ref), rel=1e-13)
    assert rmt.mp_moment(2, lam) == pytest.approx(1 + lam, rel=1e-15)
    if lam != 1.0:
        for k in (1, 2):
            ref = ref_expect(lambda nu, k=k: nu ** (-k) if nu != 0 else mp.mpf(0), lam)
            assert rmt.mp_inverse_moment(k, lam) == pytest.approx(float(ref), rel=1e-12)


@pytest.mark.parametrize("lam", [0.3, 0.9, 1.5])
@pytest.mark.parametrize("w", [1e-3, 0.05, 1.0])
def test_stieltjes_vs_quadrature(lam, w):
    m = ref_expect(lambda nu: 1 / (nu + w), lam)
    m2 = ref_expect(lambda nu: 1 / (nu + w) ** 2, lam)
    assert rmt.mp_stieltjes(w, lam) == pytest.approx(float(m), rel=1e-13)
    assert rmt.mp_stieltjes2(w, lam) == pytest.approx(float(m2), rel=1e-12)
    mnu = ref_expect(lambda nu: nu / (nu + w) ** 2, lam)
    assert rmt.mp_stieltjes_nu2(w, lam) == pytest.approx(float(mnu), rel=1e-12)


def test_stieltjes_small_w_no_cancellation():
    # lam < 1, w -> 0: m(w) -> E[1/nu] = 1/(1 - lam); the naive numerator cancels to 0.
    assert rmt.mp_stieltjes(1e-14, 0.3) == pytest.approx(1 / 0.7, rel=1e-12)
    assert rmt.mp_stieltjes2(1e-14, 0.3) == pytest.approx(1 / 0.7**3, rel=1e-10)
    # lam > 1: m and w m2 are both ~ (1 - 1/lam)/w; their difference E[nu/(nu+w)^2] -> E[1/nu; nu>0]
    assert rmt.mp_stieltjes_nu2(1e-12, 1.5) == pytest.approx(1 / (1.5 * 0.5), rel=1e-9)


def test_laplace_nu_vs_mpmath():
    """levi:eq19 closed form vs mpmath Bessel and vs the theta quadrature, for every lam > 0 (erratum levi-8)."""
    worst = 0.0
    for lam in LAMS:
        for s in SS:
            got = rmt.mp_laplace_nu(s, lam)
            ref = ref_phi1(s, lam)
            worst = max(worst, abs(got - float(ref)) / float(ref))
    assert worst < 1e-12, worst
    # the Bessel closed form itself against the defining integral (moderate s, where mp.quad is reliable)
    for lam in (0.05, 0.3, 0.99, 1.5, 4.0):
        for s in (0.1, 1.0, 5.0):
            q = ref_expect(lambda nu: nu, lam, s)
            assert float(abs(q - ref_phi1(s, lam)) / q) < 1e-20
    assert rmt.mp_laplace_nu(0.0, 0.7) == 1.0


def test_laplace_vs_mpmath():
    """levi:gen-closed (Marcum Q closed form) vs mpmath quadrature of E[e^{-s nu}] (erratum levi-9)."""
    worst = 0.0
    for lam in LAMS:
        for s in [1e-3, 0.1, 1.0, 5.0, 20.0, 100.0]:
            ref = ref_expect(lambda nu: mp.mpf(1), lam, s)
            got = rmt.mp_laplace(s, lam)
            worst = max(worst, abs(got - float(ref)) / float(ref))
    assert worst < 1e-12, worst
    assert rmt.mp_laplace(0.0, 0.4) == pytest.approx(1.0, rel=1e-15)


@pytest.mark.parametrize("lam", [0.3, 0.9, 1.0, 1.5])
def test_log_laplace_large_s(lam):
    """Beyond s (1-sqrt(lam))^2 = 50 the integral representation is used; log values stay exact."""
    for s in [200.0, 1e3, 1e4]:
        ref_tr = mp.log(ref_phi1(s, lam))
        assert rmt.mp_log_laplace_nu(s, lam) == pytest.approx(float(ref_tr), abs=5e-12 * max(1, abs(float(ref_tr))))
        # E[e^{-s nu}] = atom + int_s^inf Phi1(u) du (independent of the closed form)
        scale = 1 / ((1 - mp.sqrt(lam)) ** 2 + 1 / mp.mpf(s))  # decay length of Phi1 beyond s
        pts = [s + k * scale for k in (0, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256)] + [mp.inf]
        tail = mp.quad(lambda u: ref_phi1(u, lam), pts)
        ref_gen = mp.log(tail + (1 - 1 / mp.mpf(lam) if lam > 1 else 0))
        assert rmt.mp_log_laplace(s, lam) == pytest.approx(float(ref_gen), abs=5e-12 * max(1, abs(float(ref_gen))))


def test_gen_derivative_is_minus_train():
    # Phi0'(s) = -Phi1(s), by central differences
    for lam in (0.3, 0.9, 1.5):
        for s in (0.5, 5.0, 30.0):
            h = 1e-5 * s
            d = (rmt.mp_laplace(s + h, lam) - rmt.mp_laplace(s - h, lam)) / (2 * h)
            assert d == pytest.approx(-rmt.mp_laplace_nu(s, lam), rel=1e-6)


@pytest.mark.parametrize("lam", [0.5, 0.99, 0.9999, 1.0, 1.0001, 1.5])
def test_mp_expect_vs_mpmath(lam):
    """levi:mp-quad: QAWS expectation, including lam near and at 1 (rel <= 1e-12)."""
    for f_np, f_mp in [(lambda x: np.exp(-3 * x), lambda x: mp.e ** (-3 * x)),
                       (lambda x: 1 / (x + 0.01), lambda x: 1 / (x + mp.mpf("0.01"))),
                       (lambda x: x**3, lambda x: x**3)]:
        got = rmt.mp_expect(f_np, lam)
        ref = ref_expect(f_mp, lam)
        assert got == pytest.approx(float(ref), rel=1e-12)


@pytest.mark.parametrize("lam", [0.5, 0.9, 1.0, 1.5])
@pytest.mark.parametrize("s", [1.0, 100.0, 1e3, 1e5])
def test_log_expect_exp_matches_closed_forms(lam, s):
    assert rmt.mp_log_expect_exp(lambda x: x, s, lam) == pytest.approx(rmt.mp_log_laplace_nu(s, lam), abs=1e-11)
    assert rmt.mp_log_expect_exp(lambda x: np.ones_like(x), s, lam) == pytest.approx(
        rmt.mp_log_laplace(s, lam), abs=1e-11)


@pytest.mark.parametrize("lam", [0.5, 1.0, 1.0 + 1e-9, 4.0])
def test_expectations_refuse_integrands_that_are_not_finite_on_the_support(lam):
    """An integrand that overflows or is infinite on the support made the quadrature NaN or inf (returned
    silently before); now DomainError names the integrand and the point.  A g with a negative expectation
    (no logarithm; -inf before) and a negative g(0) at the atom are refused too."""
    with pytest.raises(DomainError, match=r"f must be finite .* f\("), np.errstate(over="ignore"):
        rmt.mp_expect(lambda x: np.exp(800.0 * x), lam)  # exp(800 nu) overflows where nu > 0.887
    with pytest.raises(DomainError, match="f must be finite"):
        rmt.mp_expect(lambda x: np.full_like(x, np.nan), lam)
    with pytest.raises(DomainError, match="g must be non-negative"):
        rmt.mp_log_expect_exp(lambda x: -1.0 - x, 1.0, lam)
    with pytest.raises(DomainError, match="g must be finite"):
        rmt.mp_log_expect_exp(lambda x: np.full_like(x, np.inf), 1.0, lam)
    if lam > 1.0:  # the atom at 0
        with np.errstate(divide="ignore"):
            with pytest.raises(DomainError, match=r"f\(0.0\) = -inf"):
                rmt.mp_expect(lambda x: np.log(x), lam)
            assert math.isfinite(rmt.mp_expect(lambda x: np.log(x), lam, include_atom=False))  # finite on the support
    if lam == 4.0:  # support [1, 9]: g = nu - 1/2 > 0 there, g(0) = -1/2 at the atom
        with pytest.raises(DomainError, match=r"g\(0\) = -0.5"):
            rmt.mp_log_expect_exp(lambda x: x - 0.5, 1.0, lam)
        assert math.isfinite(rmt.mp_log_expect_exp(lambda x: x - 0.5, 1.0, lam, include_atom=False))


@pytest.mark.parametrize("lam", [0.01, 0.25, 0.5, 0.9, 1.0, 1.1, 2.0, 4.0])
def test_expectations_of_integrands_that_vanish_at_the_edges_and_huge_constants(lam):
    """g = (nu - lam_-)(lam_+ - nu) >= 0 is a few ulp negative at the library's nodes on the edges (review of
    the refusal: a node at delta expm1(tau_T) = 1.0000000000000002 beyond lam_+, and the user's lam_- one ulp
    from the library's); it is accepted and equals log E[g e^(-s nu)] by mp_expect.  A constant 5e307
    overflowed QUADPACK's sums (NaN before); its expectation is the constant."""
    lm, lp = (1 - math.sqrt(lam)) ** 2, (1 + math.sqrt(lam)) ** 2
    g = lambda x: (x - lm) * (lp - x)  # noqa: E731
    got = rmt.mp_log_expect_exp(g, 0.5, lam, include_atom=False)  # g(0) = -lam_- lam_+ < 0 at the atom
    ref = math.log(rmt.mp_expect(lambda x: g(x) * np.exp(-0.5 * x), lam, include_atom=False))
    assert got == pytest.approx(ref, abs=1e-12)
    assert rmt.mp_expect(lambda x: np.full_like(x, 5e307), lam) == pytest.approx(5e307, rel=1e-13)
    assert rmt.mp_expect(lambda x: np.full_like(x, 1e307), lam) == pytest.approx(1e307, rel=1e-13)


def test_vectorised_shapes_and_scalars():
    s = np.linspace(0, 60, 7)[:, None]
    lam = np.array([0.3, 1.0, 2.0])[None, :]
    out = rmt.mp_laplace(s, lam)
    assert out.shape == (7, 3) and out.dtype == np.float64
    assert isinstance(rmt.mp_laplace(1.0, 0.5), float)
    ref = np.array([[rmt.mp_laplace(float(a), float(b)) for b in lam.ravel()] for a in s.ravel()])
    np.testing.assert_allclose(out, ref, rtol=1e-15)
    assert rmt.mp_edges([0.25, 4.0])[1].shape == (2,)


@settings(max_examples=60, deadline=None)
@given(lam=st.floats(0.01, 5.0), s1=st.floats(0.0, 200.0), ds=st.floats(1e-3, 100.0))
def test_laplace_properties(lam, s1, ds):
    """Phi0 in [atom, 1], decreasing in s; Phi1 decreasing in s; Phi1 <= E[nu] = 1."""
    a, b = rmt.mp_laplace(s1, lam), rmt.mp_laplace(s1 + ds, lam)
    assert rmt.mp_atom(lam) - 1e-15 <= b <= a * (1 + 1e-12)
    assert a <= 1 + 1e-13
    assert rmt.mp_laplace_nu(s1 + ds, lam) <= rmt.mp_laplace_nu(s1, lam) * (1 + 1e-12)
    assert rmt.mp_laplace_nu(s1, lam) <= 1 + 1e-13


@pytest.mark.parametrize("call, match", [
    (lambda: rmt.mp_edges(0.0), "lam must be > 0"),
    (lambda: rmt.mp_edges(-1.0), "lam must be > 0"),
    (lambda: rmt.mp_laplace(1.0, np.nan), "lam must be finite"),
    (lambda: rmt.mp_laplace(-1.0, 0.5), "s must be >= 0"),
    (lambda: rmt.mp_laplace_nu(np.inf, 0.5), "s must be finite"),
    (lambda: rmt.mp_inverse_moment(1, 1.0), "lam must be != 1"),
    (lambda: rmt.mp_inverse_moment(3, 0.5), "k must be 1 or 2"),
    (lambda: rmt.mp_moment(-1, 0.5), "k must be an integer >= 0"),
    (lambda: rmt.mp_moment(1.5, 0.5), "k must be an integer"),
    (lambda: rmt.mp_stieltjes(0.0, 0.5), "w must be > 0"),
    (lambda: rmt.mp_expect(np.exp, [0.5, 0.6]), "lam must be a scalar"),
    (lambda: rmt.mp_expect(np.exp, 0.5, rtol=0.0), "rtol must be in"),
    (lambda: rmt.mp_log_expect_exp(np.exp, -1.0, 0.5), "s must be >= 0"),
    (lambda: rmt.mp_density(0.5, []), "lam must not be empty"),
])
def test_domain_errors(call, match):
    with pytest.raises(DomainError, match=match):
        call()


@pytest.mark.parametrize("lam", [0.3, 1.0, 1.5])
def test_cdf_vs_mpmath(lam):
    lm, lp = rmt.mp_edges(lam)
    xs = np.linspace(lm, lp, 7)[1:-1]
    lam_m = mp.mpf(lam)
    r = mp.sqrt(lam_m)
    lmm, lpm = (1 - r) ** 2, (1 + r) ** 2
    dens = lambda v: mp.sqrt((lpm - v) * (v - lmm)) / (2 * mp.pi * lam_m * v)  # noqa: E731
    for x in xs:
        ref = mp.quad(dens, [lmm, (lmm + x) / 2, x]) + (1 - 1 / lam_m if lam > 1 else 0)
        assert rmt.mp_cdf(x, lam) == pytest.approx(float(ref), rel=1e-11)
    assert rmt.mp_cdf(lp + 1, lam) == pytest.approx(1.0, rel=1e-12)
    assert rmt.mp_cdf(-0.5, lam) == 0.0


@pytest.mark.parametrize("lam", [1.5, 2.0, 1e10])
def test_cdf_counts_the_atom_at_zero(lam):
    """F(x) = (1 - 1/lam)^+ 1{x >= 0} + ...: the atom at nu = 0 is in F(0) (F is right-continuous), not
    only in F(x > 0): F(0) = 1 - 1/lam (0.5 at lam = 2), F just below 0 is 0."""
    atom = 1.0 - 1.0 / lam
    assert rmt.mp_cdf(0.0, lam) == pytest.approx(atom, rel=1e-15)
    assert rmt.mp_cdf(-0.0, lam) == pytest.approx(atom, rel=1e-15)
    assert rmt.mp_cdf(-5e-324, lam) == 0.0
    np.testing.assert_allclose(rmt.mp_cdf([-1.0, 0.0, 5e-324], lam), [0.0, atom, atom], rtol=1e-15)
    assert rmt.mp_cdf(0.0, 0.5) == 0.0  # no atom for lam <= 1


def test_lam_one_huge_s_is_finite():
    """At lam = 1 the atom term is absent; no NaN from the non-central chi^2 at huge s."""
    for s in (6.9e8, 4e10):
        v = rmt.mp_log_laplace(s, 1.0)
        assert np.isfinite(v)
        # lam = 1: Phi0(s) = ive(0, 2s) + ive(1, 2s) ~ 1/sqrt(pi s)
        assert v == pytest.approx(-0.5 * math.log(math.pi * s), abs=1e-9)


def test_issue15_fuzz_regressions():
    """The fuzz defects of issue 15 (values before the fix in the comments)."""
    assert rmt.mp_laplace(2.0, 1e-30) == pytest.approx(math.exp(-2.0), rel=1e-15)  # was 1.76e13
    assert rmt.mp_laplace(2.0, 1e-12) == pytest.approx(math.exp(-2.0 + 2e-12), rel=1e-15)  # had 4 digits
    assert rmt.mp_log_laplace(2.0, 1e-30) == pytest.approx(-2.0, rel=1e-15)  # was +30.5
    assert rmt.mp_expect(lambda x: np.exp(-2.0 * x), 1e-30) == pytest.approx(math.exp(-2.0), rel=1e-14)  # 11 % off
    # lam = 1 - 1e-10: ZeroDivisionError; lam = 1e-20: 8e-8 off (the support is 4e-10 wide around 1)
    def cdf(x, lam):  # closed-form antiderivative, nu = 1 + lam - 2 sqrt(lam) cos(theta), 60 digits
        with mp.workdps(60):
            x, lam = mp.mpf(x), mp.mpf(lam)
            r = mp.sqrt(lam)
            th = mp.acos((1 + lam - x) / (2 * r))
            return float((lam * th + r * mp.sin(th) - (1 - lam) * mp.atan2(r * mp.sin(th), 1 - r * mp.cos(th)))
                         / (mp.pi * lam))

    assert rmt.mp_cdf(0.1, 1 - 1e-10) == pytest.approx(cdf(0.1, 1 - 1e-10), rel=1e-14)
    assert rmt.mp_cdf(1.0, 1e-20) == pytest.approx(cdf(1.0, 1e-20), rel=1e-15)


@pytest.mark.parametrize("lam, s", [(0.3, 1.0), (1.5, 5.0)])
def test_gen_closed_form_identity(lam, s):
    """levi:gen-closed (erratum levi-9): the Bessel + Marcum-Q closed form is E[e^{-s nu}] exactly.

    Checked in mpmath at 35 digits against the theta quadrature (Q1 by quadrature of its integral). The
    library does not evaluate it: it subtracts two terms of size 1/lam (1.8e13 instead of 0.135 at
    lam = 1e-30, s = 2) and loses accuracy as s (1 - sqrt lam)^2 grows (3e-11 at lam = 0.9, s = 1.9e4)."""
    lam_, s_ = mp.mpf(lam), mp.mpf(s)
    r = mp.sqrt(lam_)
    a, b = mp.sqrt(2 * s_), mp.sqrt(2 * lam_ * s_)  # Q1(a, b) = int_b^inf x exp(-(x^2 + a^2)/2) I0(a x) dx
    q1 = mp.quad(lambda x: x * mp.e ** (-(x * x + a * a) / 2) * mp.besseli(0, a * x), [b, b + 5, b + 20, mp.inf])
    closed = (mp.e ** (-s_ * (1 + lam_)) * (mp.besseli(0, 2 * s_ * r) + mp.besseli(1, 2 * s_ * r) / r)
              + (1 - 1 / lam_) * (1 - q1))
    ref = ref_expect(lambda nu: mp.mpf(1), lam, s)
    assert abs(closed - ref) < mp.mpf(10) ** -25 * ref
    assert rmt.mp_laplace(s, lam) == pytest.approx(float(ref), rel=2e-14)


@pytest.mark.parametrize("func, first", [
    (rmt.mp_density, "nu"), (rmt.mp_stieltjes, "w"), (rmt.mp_stieltjes2, "w"), (rmt.mp_stieltjes_nu2, "w"),
    (rmt.mp_laplace_nu, "s"), (rmt.mp_log_laplace_nu, "s"), (rmt.mp_laplace, "s"), (rmt.mp_log_laplace, "s"),
], ids=lambda c: getattr(c, "__name__", c))
def test_shapes_that_do_not_broadcast_raise_domain_error(func, first):
    # first argument (3,) against lam (4,) reached NumPy's bare "shape mismatch" ValueError
    with pytest.raises(DomainError, match=rf"{first}, lam must broadcast against each other "
                                          rf"\(got shapes {first} \(3,\), lam \(4,\)\)"):
        func(np.full(3, 1.0), np.full(4, 0.5))
    # (3, 1) against (1, 4) still broadcasts, element by element equal to the scalar calls; lam on both
    # sides of 1 (an atom at 0 for lam > 1)
    x, lam = np.array([0.5, 1.0, 1.7]), np.array([0.3, 0.5, 1.5, 2.0])
    got = func(x[:, None], lam[None, :])
    assert got.shape == (3, 4)
    np.testing.assert_array_equal(got, [[func(xi, li) for li in lam] for xi in x])
