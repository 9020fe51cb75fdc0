"""Accuracy cases for grokclocks.rmt (the Marchenko–Pastur law), with independent mpmath references.

References (none uses grokclocks' code path):

* expectations :math:`\\mathbb E[f(\\nu)e^{-s\\nu}]` by mpmath quadrature in the angle,
  :math:`\\nu=\\lambda_-+4\\sqrt\\lambda\\sin^2(\\theta/2)`, :math:`p\\,d\\nu=\\frac2\\pi\\sin^2\\theta\\,d\\theta/\\nu`,
  with geometric break points down to the widths of the Laplace peak :math:`(s\\sqrt\\lambda)^{-1/2}` and of
  the :math:`1/\\nu` near-pole :math:`\\sqrt{\\lambda_-/\\sqrt\\lambda}` (grokclocks uses series, a tail
  integral in :math:`\\log u` and QAWS in a log-mapped variable);
* :math:`\\mathbb E[\\nu e^{-s\\nu}]` from ``mpmath.besseli``; the CDF from its closed-form antiderivative
  (the library integrates numerically); the Stieltjes moments from the quadratic's root, all in mpf with
  enough extra digits for the cancellations of the naive formulas.
"""

from __future__ import annotations

import math

import mpmath as mp

from grokclocks import rmt
from harness import HUGE, TINY, AccuracyCase, Arg, Branch

LAM = Arg(TINY, 1e300)
S = Arg(TINY, HUGE)
NEAR1 = Arg(1e-16, 0.1)  # |lam - 1|


# ---------------------------------------------------------------- the switch points of rmt (stratified draws)
# _edge_distances: sqrt(lam) <= 0.29 and >= 3.42; mp_cdf's series below rho = min(sqrt(lam), 1/sqrt(lam)) = 1/4
# (lam = 1/16, 16); the former near-pole break points at lam = 0.1459, 6.854; the atom for lam > 1
_EDGE_LAM = (0.29 ** 2, 3.42 ** 2)
_CDF_LAM = (1 / 16, *_EDGE_LAM, ((3 - math.sqrt(5)) / 2) ** 2, 1.0, ((3 + math.sqrt(5)) / 2) ** 2, 16.0)
# _continuous_integral: QAWS in y for delta >= 1 (lam <= 0.0294 or >= 33.97), in tau = log(1 + y/delta) inside
_QUAD_LAM = ((3 - 2 * math.sqrt(2)) ** 2, 1.0, (3 + 2 * math.sqrt(2)) ** 2)
# z = 2 s sqrt(lam): _log_phi1's power series below 1e-3, the Neumann series of Phi_0 up to z = 1, scipy's ive
# up to the Hankel expansion at 1e8 (_HANKEL_Z), its leading term beyond s sqrt(lam) = 1e300
_Z_PHI1 = (1e-3, 1e8, 2e300)
_Z_PHI0 = (1.0, 1e8, 2e300)
# _log_phi0: the Neumann series for sqrt(lam) <= 1/2, lam <= 1 directly, lam > 1 by duality (1/sqrt(lam) <= 1/2)
_PHI0_LAM = (0.25, 1.0, 4.0)


def _s_for_z(z, lam=None, e=None, side=None, **_):
    """s at which z = 2 s sqrt(lam) equals z (lam given, or lam = 1 + side e)."""
    lam = lam if lam is not None else _pm1(e, side)
    return z / (2.0 * math.sqrt(lam))


def _w_for_ratio(q, lam=None, e=None, side=None, **_):
    """w = q |lam - 1|: the resolvent's b = 1 - lam + w and mp_stieltjes_nu2's c = lam - 1 + w change sign at
    q = 1."""
    d = abs(lam - 1.0) if lam is not None else e
    return q * d if d > 0 else q


def _z_branch(points, lo=1e-300):
    return Branch("s", points, lo=lo, hi=HUGE, solve=_s_for_z, what="z = 2 s sqrt(lam)")


_W_BRANCH = Branch("w", (1.0,), lo=1e-8, hi=1e8, solve=_w_for_ratio, what="w/|lam - 1|")


def _extra(*xs) -> int:
    """Extra mpmath digits to absorb the cancellations of a naive formula in these arguments."""
    return 20 + int(sum(abs(math.log10(float(x))) for x in xs if x != 0))


def ref_gap(lam):
    lam = mp.mpf(lam)
    return ((1 - lam) / (1 + mp.sqrt(lam))) ** 2


def _ladder(lo, hi, factor=4):
    out, x = [], lo
    while x < hi:
        out.append(x)
        x *= factor
    return out


def ref_cont(f, s, lam, trunc=100):
    """(-s lam_-, e^{s lam_-} E[f(nu) e^{-s nu}; nu > 0]) by quadrature in theta (mpf)."""
    s, lam = mp.mpf(s), mp.mpf(lam)
    r = mp.sqrt(lam)
    lm = ref_gap(lam)
    sr = 4 * r * s
    thmax = 2 * mp.asin(mp.sqrt(trunc / sr)) if sr > trunc else mp.pi
    widths = [thmax]
    if sr > 0:
        widths.append(1 / mp.sqrt(sr))
    if lm > 0:
        widths.append(mp.sqrt(lm / r))
    pts = sorted(set([mp.mpf(0)] + _ladder(min(widths) / 16, thmax) + [thmax]))

    def g(th):
        h = mp.sin(th / 2) ** 2
        nu = lm + 4 * r * h
        return 4 * h * (1 - h) * f(nu) * mp.exp(-sr * h) / nu

    # mpmath's quad stops on an *absolute* error of 10^-dps: integrate in theta/thmax (intervals of
    # length 1e-50 otherwise) and divide by the integrand's size (integrals of 1e-90 otherwise)
    tp = [p / thmax for p in pts]
    mids = [a + (b - a) * c for a, b in zip(tp[:-1], tp[1:]) for c in (mp.mpf(1) / 16, mp.mpf(1) / 2)]
    scale = max(abs(g(thmax * t)) for t in mids)
    if scale == 0:
        return -s * lm, mp.mpf(0)
    return -s * lm, 2 / mp.pi * thmax * scale * mp.quad(lambda t: g(thmax * t) / scale, tp)


def ref_log_expect_exp(f, s, lam, atom=True):
    """log E_MP(lam)[f(nu) e^{-s nu}] (f >= 0), atom (1 - 1/lam)^+ f(0) included if ``atom``."""
    lam = mp.mpf(lam)
    ls, v = ref_cont(f, s, lam)
    out = ls + mp.log(v) if v > 0 else mp.mpf("-inf")
    if atom and lam > 1:
        f0 = f(mp.mpf(0))
        if f0 > 0:
            if out == mp.mpf("-inf"):
                return mp.log((1 - 1 / lam) * f0)
            # log((1 - 1/lam) f0 + C) = log f0 + log1p((C - f0/lam)/f0): 1 - 1/lam is not rounded
            return mp.log(f0) + mp.log1p((mp.exp(out) - f0 / lam) / f0)
    return out


def ref_expect(f, lam, atom=True):
    ls, v = ref_cont(f, 0, lam)
    return v + ((1 - 1 / mp.mpf(lam)) * f(mp.mpf(0)) if atom and lam > 1 else 0)


def ref_log_phi0(s, lam):
    return ref_log_expect_exp(lambda nu: mp.mpf(1), s, lam)


def ref_log_phi1(s, lam):
    """log E[nu e^{-s nu}] = -s(1+lam) + log I1(2 s sqrt(lam)) - log(s sqrt(lam)) (mpmath Bessel)."""
    s, lam = mp.mpf(s), mp.mpf(lam)
    if s == 0:
        return mp.mpf(0)
    with mp.extradps(int(max(0, mp.log10(s * (1 + lam))))):  # -s(1+lam) + log I1 cancels this many digits
        r = mp.sqrt(lam)
        return +(-s * (1 + lam) + mp.log(mp.besseli(1, 2 * s * r)) - mp.log(s * r))


def ref_cdf(x, lam):
    """Closed-form antiderivative, nu = 1 + lam - 2 sqrt(lam) cos(th) (atom included for lam > 1:
    the continuous branch of atan2 starts at pi there)."""
    with mp.workdps(_extra(lam, 1e-40)):
        x, lam = mp.mpf(x), mp.mpf(lam)
        r = mp.sqrt(lam)
        lm, lp = (1 - r) ** 2, (1 + r) ** 2
        atom = (1 - 1 / lam) if lam > 1 else 0
        if x <= lm:
            return +(atom if x >= 0 else mp.mpf(0))
        if x >= lp:
            return +(atom + min(1, 1 / lam))
        th = mp.acos((1 + lam - x) / (2 * r))
        return +((lam * th + r * mp.sin(th) - (1 - lam) * mp.atan2(r * mp.sin(th), 1 - r * mp.cos(th)))
                 / (mp.pi * lam))


def ref_density(nu, lam):
    with mp.workdps(_extra(lam, 1e-40)):
        nu, lam = mp.mpf(nu), mp.mpf(lam)
        r = mp.sqrt(lam)
        lm, lp = (1 - r) ** 2, (1 + r) ** 2
        if not (lm < nu < lp) or nu <= 0:
            return mp.mpf(0)
        return +(mp.sqrt((lp - nu) * (nu - lm)) / (2 * mp.pi * lam * nu))


def _nu_in_support(lam, y):
    """A float nu at fraction y of the support (computed in float, as a user would)."""
    return float(rmt.mp_edges(lam)[0]) + 4.0 * math.sqrt(lam) * y


def _edge_dist(lam, y):
    """Distance of the float nu to the nearer exact edge, over the width (for the contracts)."""  # noqa: D401
    nu = _nu_in_support(lam, y)
    with mp.workdps(_extra(lam, 1e-40)):
        lamm = mp.mpf(lam)
        r = mp.sqrt(lamm)
        d = min(mp.mpf(nu) - (1 - r) ** 2, (1 + r) ** 2 - mp.mpf(nu))
        # |d|: at lam ~ 1e32 the support is narrower than an ulp of lam and the float nu may lie outside it
        return max(float(abs(d) / (4 * r)), 1e-300)


def ref_stieltjes(w, lam, which):
    """m, m2 = -m', E[nu/(nu+w)^2] = m - w m2 from the root of lam w m^2 + (1 - lam + w) m - 1 = 0."""
    with mp.workdps(_extra(w, lam, 1e-40) * 2):
        w, lam = mp.mpf(w), mp.mpf(lam)
        b = 1 - lam + w
        D = mp.sqrt(b * b + 4 * lam * w)
        m = (D - b) / (2 * lam * w)
        m2 = m * (1 + lam * m) / D
        return +{"m": m, "m2": m2, "nu2": m - w * m2}[which]


def _pm1(e, side):
    return 1.0 - e if side < 0 else 1.0 + e


F_TESTS = {  # name: (float integrand, mpmath integrand, lam domain)
    "1": (lambda x: 1.0, lambda x: mp.mpf(1), LAM),
    "nu^3": (lambda x: float(x) ** 3, lambda x: x**3, Arg(TINY, 1e100)),
    "exp(-3 nu)": (lambda x: math.exp(-3.0 * float(x)), lambda x: mp.exp(-3 * x), LAM),
    "1/(nu+0.01)": (lambda x: 1.0 / (float(x) + 0.01), lambda x: 1 / (x + mp.mpf("0.01")), LAM),
}

CASES = [
    AccuracyCase("grokclocks.rmt.mp_edges [lam_+]", lambda lam: rmt.mp_edges(lam)[1],
                 lambda lam: (1 + mp.sqrt(lam)) ** 2, {"lam": LAM}, rtol=4e-16),
    AccuracyCase("grokclocks.rmt.mp_edges [lam_-]", lambda lam: rmt.mp_edges(lam)[0], ref_gap,
                 {"lam": LAM}, rtol=1e-15),
    # lam - 2 sqrt(lam) and lam + 2 sqrt(lam) above 1e300 (the square of the rounded quotient overflowed
    # to inf at the largest double, and (1 + sqrt(lam))^2 came out an ulp below lam_-)
    AccuracyCase("grokclocks.rmt.mp_edges [lam_-, lam in [1e300, max]]", lambda lam: rmt.mp_edges(lam)[0], ref_gap,
                 {"lam": Arg(1e300, HUGE)}, rtol=1.2e-16),
    AccuracyCase("grokclocks.rmt.mp_edges [lam_+, lam in [1e300, max]]", lambda lam: rmt.mp_edges(lam)[1],
                 lambda lam: (1 + mp.sqrt(lam)) ** 2, {"lam": Arg(1e300, HUGE)}, rtol=1.2e-16),
    AccuracyCase("grokclocks.rmt.mp_edges [lam_-, lam near 1]", lambda e, side: rmt.mp_edges(_pm1(e, side))[0],
                 lambda e, side: ref_gap(_pm1(e, side)), {"e": NEAR1, "side": Arg(values=(-1, 1))},
                 rtol=1e-15),
    AccuracyCase("grokclocks.rmt.mp_atom", rmt.mp_atom,
                 lambda lam: max(mp.mpf(0), 1 - 1 / mp.mpf(lam)), {"lam": LAM}, rtol=4e-16,
                 branches=(Branch("lam", (1.0,)),)),
    AccuracyCase("grokclocks.rmt.mp_density", lambda lam, y: rmt.mp_density(_nu_in_support(lam, y), lam),
                 lambda lam, y: ref_density(_nu_in_support(lam, y), lam),
                 {"lam": LAM, "y": Arg(1e-12, 1.0 - 1e-12, "lin")},
                 rtol=lambda lam, y: 1e-15 * (1.0 + 2.0 / _edge_dist(lam, y)),
                 rtol_doc="1e-15 (1 + 2w/d), d = distance of nu to the nearer edge, w = 4 sqrt(lam)",
                 branches=(Branch("lam", _EDGE_LAM),)),
    AccuracyCase("grokclocks.rmt.mp_cdf", lambda lam, y: rmt.mp_cdf(_nu_in_support(lam, y), lam),
                 lambda lam, y: ref_cdf(_nu_in_support(lam, y), lam),
                 {"lam": LAM, "y": Arg(1e-12, 1.0 - 1e-12, "lin")},
                 rtol=lambda lam, y: 1e-14 + 2e-15 / _edge_dist(lam, y), ci_examples=15,
                 rtol_doc="1e-14 + 2e-15 w/d (d, w as for mp_density)",
                 # y = 1/2: integrated from the lower edge below, the upper one above
                 branches=(Branch("lam", _CDF_LAM), Branch("y", (0.5,), scale="lin"))),
    AccuracyCase("grokclocks.rmt.mp_cdf [lam near 1]",
                 lambda e, side, y: rmt.mp_cdf(_nu_in_support(_pm1(e, side), y), _pm1(e, side)),
                 lambda e, side, y: ref_cdf(_nu_in_support(_pm1(e, side), y), _pm1(e, side)),
                 {"e": NEAR1, "side": Arg(values=(-1, 1)), "y": Arg(1e-12, 1.0 - 1e-12, "lin")},
                 rtol=lambda e, side, y: 1e-14 + 2e-15 / _edge_dist(_pm1(e, side), y), ci_examples=15,
                 rtol_doc="1e-14 + 2e-15 w/d", branches=(Branch("y", (0.5,), scale="lin"),)),
    AccuracyCase("grokclocks.rmt.mp_moment", lambda k, lam: rmt.mp_moment(int(k), lam),
                 lambda k, lam: mp.fsum(mp.mpf(lam) ** j * mp.binomial(int(k), j) * mp.binomial(int(k) - 1, j)
                                        / (j + 1) for j in range(int(k))) if k > 0 else mp.mpf(1),
                 {"k": Arg(0, 600, "lin", integer=True), "lam": LAM}, rtol=2e-14,
                 rtol_doc="2e-14 (k <= 600; each term of the Narayana sum has a few ulps)", ci_examples=15,
                 # Narayana numbers beyond 2^1000 (from k = 510) are added in log space
                 branches=(Branch("k", (509.5,), scale="lin", near=0.02),)),
    AccuracyCase("grokclocks.rmt.mp_inverse_moment [k=1]", lambda lam: rmt.mp_inverse_moment(1, lam),
                 lambda lam: 1 / abs(1 - mp.mpf(lam)) / (mp.mpf(lam) if lam > 1 else 1),
                 {"lam": LAM}, rtol=1e-15, raises=lambda lam: lam == 1.0,
                 raises_doc='lam = 1 (both inverse moments diverge)', branches=(Branch("lam", (1.0,)),)),
    AccuracyCase("grokclocks.rmt.mp_inverse_moment [k=2]", lambda lam: rmt.mp_inverse_moment(2, lam),
                 lambda lam: 1 / abs(1 - mp.mpf(lam)) ** 3, {"lam": LAM}, rtol=2e-15,
                 raises=lambda lam: lam == 1.0,
                 raises_doc='lam = 1 (both inverse moments diverge)', branches=(Branch("lam", (1.0,)),)),
    AccuracyCase("grokclocks.rmt.mp_inverse_moment [lam near 1]",
                 lambda e, side: rmt.mp_inverse_moment(2, _pm1(e, side)),
                 lambda e, side: 1 / abs(1 - mp.mpf(_pm1(e, side))) ** 3,
                 {"e": NEAR1, "side": Arg(values=(-1, 1))}, rtol=2e-15,
                 raises=lambda e, side: _pm1(e, side) == 1.0,
                 raises_doc='lam = 1 (both inverse moments diverge)'),  # 1 + 1e-16 rounds to 1
]

for _which, _f in (("m", rmt.mp_stieltjes), ("m2", rmt.mp_stieltjes2), ("nu2", rmt.mp_stieltjes_nu2)):
    CASES.append(AccuracyCase(f"grokclocks.rmt.{_f.__name__}", _f,
                              lambda w, lam, _w=_which: ref_stieltjes(w, lam, _w),
                              {"w": Arg(TINY, HUGE), "lam": Arg(TINY, HUGE)}, rtol=4e-15,
                              branches=(Branch("lam", (1.0,)), _W_BRANCH)))
    CASES.append(AccuracyCase(f"grokclocks.rmt.{_f.__name__} [lam near 1]",
                              lambda w, e, side, _f=_f: _f(w, _pm1(e, side)),
                              lambda w, e, side, _w=_which: ref_stieltjes(w, _pm1(e, side), _w),
                              {"w": Arg(TINY, 1e300), "e": NEAR1, "side": Arg(values=(-1, 1))}, rtol=4e-15,
                              branches=(_W_BRANCH,)))

CASES += [
    AccuracyCase("grokclocks.rmt.mp_log_laplace_nu", rmt.mp_log_laplace_nu, ref_log_phi1,
                 {"s": S, "lam": LAM}, rtol=4e-15, kind="log", branches=(_z_branch(_Z_PHI1),)),
    AccuracyCase("grokclocks.rmt.mp_log_laplace_nu [lam near 1]",
                 lambda s, e, side: rmt.mp_log_laplace_nu(s, _pm1(e, side)),
                 lambda s, e, side: ref_log_phi1(s, _pm1(e, side)),
                 {"s": S, "e": NEAR1, "side": Arg(values=(-1, 1))}, rtol=4e-15, kind="log",
                 branches=(_z_branch(_Z_PHI1),)),
    AccuracyCase("grokclocks.rmt.mp_laplace_nu", rmt.mp_laplace_nu, lambda s, lam: mp.exp(ref_log_phi1(s, lam)),
                 {"s": S, "lam": LAM}, rtol=4e-15, kind="exp", branches=(_z_branch(_Z_PHI1),)),
    AccuracyCase("grokclocks.rmt.mp_log_laplace", rmt.mp_log_laplace, ref_log_phi0,
                 {"s": S, "lam": LAM}, rtol=2e-14, kind="log", ci_examples=20,
                 branches=(Branch("lam", _PHI0_LAM), _z_branch(_Z_PHI0))),
    AccuracyCase("grokclocks.rmt.mp_log_laplace [lam near 1]",
                 lambda s, e, side: rmt.mp_log_laplace(s, _pm1(e, side)),
                 lambda s, e, side: ref_log_phi0(s, _pm1(e, side)),
                 {"s": S, "e": NEAR1, "side": Arg(values=(-1, 1))}, rtol=2e-14, kind="log", ci_examples=10,
                 branches=(_z_branch(_Z_PHI0),)),
    AccuracyCase("grokclocks.rmt.mp_log_laplace [s <= 1e4]", rmt.mp_log_laplace, ref_log_phi0,
                 {"s": Arg(1e-3, 1e4), "lam": Arg(1e-3, 1e3)}, rtol=2e-14, kind="log", ci_examples=10,
                 branches=(Branch("lam", _PHI0_LAM), _z_branch((1.0,), lo=1e-4))),
    AccuracyCase("grokclocks.rmt.mp_laplace", rmt.mp_laplace, lambda s, lam: mp.exp(ref_log_phi0(s, lam)),
                 {"s": S, "lam": LAM}, rtol=2e-14, kind="exp", ci_examples=10,
                 branches=(Branch("lam", _PHI0_LAM), _z_branch(_Z_PHI0))),
]

for _name, (_ff, _fm, _dom) in F_TESTS.items():
    CASES.append(AccuracyCase(f"grokclocks.rmt.mp_expect [f={_name}]",
                              lambda lam, _ff=_ff: rmt.mp_expect(_ff, lam, rtol=2e-14),
                              lambda lam, _fm=_fm: ref_expect(_fm, lam), {"lam": _dom},
                              rtol=1e-13, ci_examples=6, branches=(Branch("lam", _QUAD_LAM),)))
    CASES.append(AccuracyCase(f"grokclocks.rmt.mp_expect [f={_name}, lam near 1]",
                              lambda e, side, _ff=_ff: rmt.mp_expect(_ff, _pm1(e, side), rtol=2e-14),
                              lambda e, side, _fm=_fm: ref_expect(_fm, _pm1(e, side)),
                              {"e": NEAR1, "side": Arg(values=(-1, 1))}, rtol=1e-13, ci_examples=4))

CASES += [
    AccuracyCase("grokclocks.rmt.mp_log_expect_exp [g=nu^2]",
                 lambda s, lam: rmt.mp_log_expect_exp(lambda x: float(x) ** 2, s, lam, rtol=2e-14),
                 lambda s, lam: ref_log_expect_exp(lambda x: x**2, s, lam),
                 {"s": S, "lam": Arg(TINY, 1e100)}, rtol=1e-13, kind="log", ci_examples=5,
                 # the range is cut at e^-60 when s 4 sqrt(lam) > 120
                 branches=(Branch("lam", _QUAD_LAM),
                           Branch("s", (30.0,), lo=1e-10, hi=1e10, what="s sqrt(lam)",
                                  solve=lambda q, lam: q / math.sqrt(lam)))),
    AccuracyCase("grokclocks.rmt.mp_log_expect_exp [g=1/(nu+1), lam near 1]",
                 lambda s, e, side: rmt.mp_log_expect_exp(lambda x: 1.0 / (float(x) + 1.0), s, _pm1(e, side),
                                                          rtol=2e-14),
                 lambda s, e, side: ref_log_expect_exp(lambda x: 1 / (x + 1), s, _pm1(e, side)),
                 {"s": S, "e": NEAR1, "side": Arg(values=(-1, 1))}, rtol=1e-13, kind="log", ci_examples=5,
                 branches=(Branch("s", (30.0,), lo=1e-10, hi=1e10, what="s sqrt(lam)",
                                  solve=lambda q, e, side: q / math.sqrt(_pm1(e, side))),)),
]

