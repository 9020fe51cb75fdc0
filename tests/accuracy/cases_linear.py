"""Accuracy cases for grokclocks.linear (linear teacher–student theory, spec ``levi``).

References are independent of grokclocks' code paths: the MP expectations of ``cases_rmt`` (mpmath
quadrature in the angle, mpmath Bessel functions), exact formulas in mpf, mpmath's ``lambertw``,
``gammainc``, ``erfinv``, and crossing times as mpmath roots of those reference losses.
"""

from __future__ import annotations

import math

import mpmath as mp
from scipy import special

from cases_rmt import (_PHI0_LAM, _QUAD_LAM, _Z_PHI0, _Z_PHI1, LAM, NEAR1, _pm1, ref_gap, ref_log_expect_exp,
                       ref_log_phi0, ref_log_phi1, ref_stieltjes)
from grokclocks import linear as L
from harness import HUGE, TINY, AccuracyCase, Arg, Branch

ERF_SQRT2 = L.ERF_SQRT2
T = Arg(TINY, 1e300)
ETA = Arg(TINY, 1e300)
EPS = Arg(TINY, 1e300)
LEVEL = Arg(1e-6, 1.0 - 1e-6, "lin")
DOUT = Arg(values=(1, 2, 5, 37, 1000))
ALPHA = Arg(values=(0.0, 0.5, 1.0, 3.0))


def _log_rtol(*xs):
    """Contract of a value formed as exp(sum of logarithms): 4e-16 (10 + sum |log x|), the rounding of
    each logarithm carried into the exponent (the result can be moderate while the terms are ~700)."""
    return 4e-16 * (10.0 + sum(abs(math.log(x)) for x in xs))


_LOG_RTOL_DOC = ("4e-16 (10 + sum of |log x| over the arguments x) (a value formed as exp of a sum of "
                 "logarithms: the terms reach +-700 while the value is moderate)")


def _log_zgen(lam, eps):
    """log z_gen of eq. 24 at the default level (float; for the eq.-25 contract)."""
    a = (1.0 - lam) / (1.0 + math.sqrt(lam))
    return (5 / 3 * math.log(2) - math.log(3) - math.log(math.pi) / 3 + 2 / 3 * math.log(a) - 0.5 * math.log(lam)
            - 2 / 3 * math.log(eps))


def _eq25_bracket_kappa(lam, eps):
    """Condition number (|2 log a| + |3 log1p(x)|)/|bracket| of eq. 25's bracket -2 log a + 3 log1p(x), x = (2/3)
    log a/log z_gen: the bracket vanishes where eq. 25's Delta t changes sign (measured: 2.45e-13 at lam = 0.347,
    eps = 0.043, where the bracket is -0.03 from terms of 3.6; the old sample, cut at 1154 points by its time
    limit, had not drawn there)."""
    la = 2.0 * math.log1p(-math.sqrt(lam))
    lz = _log_zgen(lam, eps)
    x = (2.0 / 3.0) * la / lz
    if not (lz > 0 and x > -1):
        return 1.0
    b = -2.0 * la + 3.0 * math.log1p(x)
    return max(1.0, (abs(2.0 * la) + abs(3.0 * math.log1p(x))) / max(abs(b), 1e-300))


def _s_overflows(t, eta0, d_out=1, **_):
    """s = 4 eta0 t / d_out beyond the double range, in exact arithmetic (the library forms s without
    overflowing on 4 eta0 or eta0 t: linear._conventions._flow_time)."""
    return mp.mpf(4) * mp.mpf(eta0) * mp.mpf(t) / mp.mpf(d_out) > HUGE


def ref_lstar(eps, d_out=1, level=ERF_SQRT2):
    """L* = d eps / (2 P^{-1}(d/2, level)), P^{-1} by mpmath root finding (erfinv for d = 1)."""
    eps, level = mp.mpf(eps), mp.mpf(level)
    if d_out == 1:
        return eps / (2 * mp.erfinv(level) ** 2)
    a = mp.mpf(d_out) / 2
    # only a starting point: the leading term of P(a, x) = x^a/Gamma(a+1) (1 + O(x)), or scipy's root;
    # then the root in log x and log P (levels down to 1e-308)
    x0 = float(special.gammaincinv(float(a), float(level)))
    y0 = mp.log(x0) if x0 > 1e-300 else (mp.log(level) + mp.loggamma(a + 1)) / a
    if y0 < -1000:  # x < e^-1000: log P = a log x - log Gamma(a+1) + O(x) (tiny d_out), the root to 1e-434
        return mp.exp(mp.log(a) + mp.log(eps) - (mp.log(level) + mp.loggamma(a + 1)) / a)
    y = mp.findroot(lambda y: mp.log(mp.gammainc(a, 0, mp.exp(y), regularized=True)) - mp.log(level), y0,
                    tol=mp.mpf(10) ** (-mp.mp.dps + 5))
    return d_out * eps / (2 * mp.exp(y))


def ref_log_loss(which, t, lam, eta0, d_out=1, alpha=1.0):
    """log of the gamma = 0 loss (1 + alpha^2)/(2 d) Phi_q(4 eta0 t/d)."""
    s = 4 * mp.mpf(eta0) * mp.mpf(t) / d_out
    lphi = ref_log_phi1(s, lam) if which == "train" else ref_log_phi0(s, lam)
    return mp.log((1 + mp.mpf(alpha) ** 2) / (2 * d_out)) + lphi


def ref_log_loss_wd(which, t, lam, eta0, gamma, d_out=1, alpha=1.0):
    """log of eq. 14: (1/2d) E[q (alpha^2 e^{-s(nu+g)} + ((e^{-s(nu+g)/2} nu + g)/(nu+g))^2)], atom for q = 1."""
    s = 4 * mp.mpf(eta0) * mp.mpf(t) / d_out
    g = mp.mpf(gamma) / 2
    a2 = mp.mpf(alpha) ** 2

    def f(nu):
        e = mp.exp(-s * (nu + g) / 2)
        q = nu if which == "train" else 1
        return q * (a2 * e * e + ((e * nu + g) / (nu + g)) ** 2)

    return ref_log_expect_exp(f, 0, lam, atom=which == "gen") - mp.log(2 * d_out)


def ref_log_loss_gd(which, t, lam, eta0, d_out=1):
    """log of the exact-GD loss (1/d) E[q (1 - 2 eta nu/d)^{2t}] (gamma = 0, alpha = 1)."""
    b = 2 * mp.mpf(eta0) / d_out

    def f(nu):
        q = nu if which == "train" else 1
        return q * abs(1 - b * nu) ** (2 * mp.mpf(t))

    return ref_log_expect_exp(f, 0, lam, atom=which == "gen") - mp.log(d_out)


def _ref_log_loss_gd_wd(which, t, lam, eta0, gamma, d_out=1, alpha=1.0):
    """log of the exact-GD loss with weight decay: (1/2d) E[q (alpha^2 rho^{2t} + ((rho^t nu + g)/(nu+g))^2)],
    rho = 1 - 2 eta (nu + g)/d, atom for q = 1."""
    b, g, a2, t = 2 * mp.mpf(eta0) / d_out, mp.mpf(gamma) / 2, mp.mpf(alpha) ** 2, mp.mpf(t)

    def f(nu):
        pt = (1 - b * (nu + g)) ** t
        q = nu if which == "train" else 1
        return q * (a2 * pt * pt + ((pt * nu + g) / (nu + g)) ** 2)

    return ref_log_expect_exp(f, 0, lam, atom=which == "gen") - mp.log(2 * d_out)


def _root_s(logphi, target, s0):
    """Root of the decreasing logphi(s) = target: a bracket in log s grown from the float guess s0,
    then Illinois regula falsi (tolerance far below float precision)."""
    return mp.exp(bracketed_root(lambda x: logphi(mp.exp(x)) - target, mp.log(mp.mpf(s0))))


def bracketed_root(g, x0):
    """Root of a decreasing g: a bracket grown geometrically around the guess x0, then Illinois."""
    d = mp.mpf("1e-9") * max(1, abs(x0))
    lo, hi = x0 - d, x0 + d
    while g(lo) <= 0:
        lo, d = lo - d, 4 * d
    d = mp.mpf("1e-9") * max(1, abs(x0))
    while g(hi) > 0:
        hi, d = hi + d, 4 * d
    return _illinois(g, lo, hi)


def _illinois(g, lo, hi):
    """Root of g (g(lo) > 0 >= g(hi)) by the Illinois variant of regula falsi, to 2/3 of the working digits."""
    glo, ghi = g(lo), g(hi)
    tol = mp.mpf(10) ** (-2 * mp.mp.dps // 3) * max(1, abs(lo))
    side = 0
    for _ in range(500):
        x = hi - ghi * (hi - lo) / (ghi - glo)
        if not lo < x < hi:
            x = (lo + hi) / 2
        gx = g(x)
        if gx > 0:
            lo, glo = x, gx
            if side == -1:
                ghi /= 2
            side = -1
        else:
            hi, ghi = x, gx
            if side == 1:
                glo /= 2
            side = 1
        if hi - lo < tol or gx == 0:
            return x
    raise ArithmeticError("reference root did not converge")


def ref_t_star(which, lam, eps, eta0, d_out=1, level=ERF_SQRT2, alpha=1.0):
    """t* of the gamma = 0 gradient-flow loss, as an mpmath root (the float t* only seeds the secant)."""
    lam = mp.mpf(lam)
    kappa = ref_lstar(eps, d_out, level) * d_out / ((1 + mp.mpf(alpha) ** 2) / 2)
    if kappa >= 1:
        return mp.mpf(0)
    if which == "gen" and lam > 1 and kappa <= 1 - 1 / lam:
        return mp.inf
    try:  # the float t* only seeds the secant
        guess = L._t_star_scalar(which, float(lam), eps, eta0, float(d_out), 0.0, level, alpha, False)
    except Exception:  # noqa: BLE001
        guess = math.nan
    s0 = 4 * eta0 * guess / d_out if math.isfinite(guess) and guess > 0 else max(-float(mp.log(kappa)), 1e-300)
    logphi = (lambda s: ref_log_phi1(s, lam)) if which == "train" else (lambda s: ref_log_phi0(s, lam))
    s = _root_s(logphi, mp.log(kappa), s0)
    return s * d_out / (4 * mp.mpf(eta0))


def ref_grok_time(lam, eps, eta0, d_out=1, level=ERF_SQRT2):
    """t_gen - t_train in mpmath, with log10(1/lam) extra digits for the difference; for lam < 1e-20 the
    first-order delay Delta s = lam s_t (next order ~ lam^2 s^3 < 1e-17 relative there)."""
    with mp.extradps(int(max(0, -math.log10(lam)))) if lam >= 1e-20 else mp.extradps(0):
        tt = ref_t_star("train", lam, eps, eta0, d_out, level)
        if lam < 1e-20:
            return mp.mpf(lam) * tt
        tg = ref_t_star("gen", lam, eps, eta0, d_out, level)
        if mp.isinf(tg) and mp.isinf(tt):
            return mp.nan
        return tg - tt


def _t_star_raises(which, lam, eps, eta0, d_out=1, level=ERF_SQRT2, alpha=1.0, **_):
    """t* beyond the float range (or 4 eta0 t*/d_out beyond it): documented DomainError."""
    with mp.workdps(30):
        t = ref_t_star(which, lam, eps, eta0, d_out, level, alpha)
    return mp.isfinite(t) and (t > 0.9 * HUGE or 4 * mp.mpf(eta0) * t / d_out > 0.9 * HUGE)


def _lam_t_atol(eps, eta0, d_out=1, level=ERF_SQRT2, **_):
    """Absolute floor of a crossing time: an error of 1e-15 |log L*| in s (the float log L* itself)."""
    lstar = float(L.loss_threshold(eps, d_out, level))
    return 4e-15 * max(1.0, abs(math.log(lstar))) * d_out / (4.0 * eta0)


def ref_stieltjes_plateau(which, lam, gamma, d_out=1):
    g = mp.mpf(gamma) / 2
    with mp.workdps(2 * (30 + int(abs(math.log10(gamma))) + int(abs(math.log10(lam))))):
        mom = ref_stieltjes(g, lam, "m2" if which == "gen" else "nu2")
        return +(g * g * mom / (2 * d_out))


def _a(lam):
    return ref_gap(lam)


def _dps(lam):
    """Working digits for formulas in 1 - sqrt(lam) at tiny lam (log(1 - sqrt(lam)) etc.)."""
    return mp.workdps(mp.mp.dps + int(max(0, -math.log10(lam))) // 2 + 10)


def _ref_train_late(t, lam, eta0, order):
    lam, et = mp.mpf(lam), mp.mpf(eta0) * mp.mpf(t)
    s = 4 * et
    v = mp.exp(-s * _a(lam)) / (16 * mp.sqrt(mp.pi) * lam ** mp.mpf(0.75) * et ** mp.mpf(1.5))
    return v * (1 - 3 / (64 * et * mp.sqrt(lam))) if order == 1 else v


def _ref_gen_late(t, lam, eta0):
    lam, et = mp.mpf(lam), mp.mpf(eta0) * mp.mpf(t)
    x = 4 * et * _a(lam)
    # the two terms cancel to ~1/(2x) of each; beyond x = 800 the decaying part is below e^-800 (0 in
    # float64, or nothing beside the plateau), so it needs no digits
    with mp.extradps(int(mp.log10(x + 1)) + 10 if x < 800 else 0):
        dec = (mp.exp(-x) / (2 * mp.sqrt(mp.pi) * lam ** mp.mpf(0.75) * mp.sqrt(et))
               - abs(1 - mp.sqrt(lam)) * mp.gammainc(mp.mpf(0.5), x) / (mp.sqrt(mp.pi) * lam ** mp.mpf(0.75)))
        return +(dec + (1 - 1 / lam if lam > 1 else 0))


def _ref_gen_late_simple(t, lam, eta0):
    lam = mp.mpf(lam)
    return _ref_train_late(t, lam, eta0, 0) / _a(lam) + (1 - 1 / lam if lam > 1 else 0)


def _t_for_x(x, lam, eta0, **_):
    """t at which x = 4 eta0 (1 - sqrt(lam))^2 t equals x (d_out = 1; for the stratified draws)."""
    g = float(ref_gap(lam))
    return x / 4.0 / eta0 / g if g > 0 else math.inf  # lam = 1 (a documented DomainError): any t


# the late-time expansions switch on lam (1 - sqrt(lam) as a quotient below lam = 4) and on the exponent
# x (eq. 22's bracket: the erfcx difference below x = 1, continued fractions of 100 / 60 / 40 / 20 / 12
# terms from x = 1 / 2 / 4 / 8 / 16); x in [100, 745] is where e^-x carried |x| ulps before the
# double-double exponent (up to 45x the contract), beyond 745 e^-x alone underflows
_LATE_BRANCHES = (Branch("lam", (1.0, 4.0), lo=1e-6, hi=1e6, what="lam"),
                  Branch("t", (1.0, 2.0, 4.0, 8.0, 16.0, 100.0, 745.0), lo=1e-6, hi=1e4, solve=_t_for_x,
                         what="x = 4 eta0 (1 - sqrt(lam))^2 t"))
# the worst points of the trial that found the |x|-ulp loss (relative 4.8e-13 in loss_train_late)
_LATE_POINTS = ({"t": 37480.415316788436, "lam": 0.19096779155569496, "eta0": 0.013665264394562936},)


# ---------------------------------------------------------------- switch points of linear (stratified draws)
# the losses at gamma = 0 are rmt's Phi_1 / Phi_0 at s = 4 eta0 t/d_out (their switches in z = 2 s sqrt(lam)
# and lam: cases_rmt); the small-lam grokking delay below lam = 1/4 (_SMALL_LAM) and log(1 - sqrt(lam)) by
# log1p below lam = 1/4 (_log1m_sqrt)


def _t_for_z(z, lam=None, eta0=0.01, d_out=1, e=None, side=None, **_):
    """t at which z = 2 s sqrt(lam), s = 4 eta0 t/d_out, equals z (lam given, or 1 + side e)."""
    lam = lam if lam is not None else _pm1(e, side)
    return z * int(d_out) / 8.0 / eta0 / math.sqrt(lam)  # divided in turn: the product underflowed to 0


def _loss_z_branch(points):
    return Branch("t", points, lo=1e-300, hi=HUGE, solve=_t_for_z, what="z = 2 s sqrt(lam), s = 4 eta0 t/d_out")


_LAMBERTW_LOG_Z = (-690.8, 700.0)  # W from scipy between; log W = log z below z = 1e-300, Newton above L = 700


def _eps_for_log_z(L_, lam, level=ERF_SQRT2, gen=True, tr_of_eq25=False):
    """eps at which log z of eqs. 23/24 (gen: z_gen, else z_tr; tr_of_eq25: eq. 25's z_tr) equals L_."""
    log_a = 2.0 * math.log1p(-math.sqrt(lam))
    la = log_a if (tr_of_eq25 or not gen) else log_a / 3.0
    log_eps_eff = 1.5 * (L._approx._LOG_Z0 + la - 0.5 * math.log(lam) - L_)
    if level == ERF_SQRT2:
        return math.exp(min(log_eps_eff, 709.0))
    return math.exp(min(log_eps_eff + 2.0 * math.log(float(special.erfinv(level))) - math.log(2.0), 709.0))


def _lambertw_branches(gen):
    return (Branch("lam", (0.25,)),
            Branch("eps", _LAMBERTW_LOG_Z, lo=-1500.0, hi=1500.0, scale="lin",
                   solve=lambda q, lam, eta0, level: _eps_for_log_z(q, lam, level, gen),
                   what="log z_gen" if gen else "log z_tr"))


# gamma > 0: lam at the QAWS-map thresholds; t where the quadrature's range is cut at e^-60, (s/2) 4 sqrt(lam)
# = 120 with s = 4 eta0 t (eta0 = 0.01)
_WD_LOSS_BRANCHES = (Branch("lam", _QUAD_LAM),
                     Branch("t", (30.0,), lo=1e-6, hi=1e8, what="(s/2) sqrt(lam)",
                            solve=lambda q, lam, gamma: 50.0 * q / math.sqrt(lam)))
# the resolvent's b = 1 - lam + gamma/2 changes sign at gamma/2 = |lam - 1| (lam > 1)
_PLATEAU_BRANCHES = (Branch("lam", (1.0,)),
                     Branch("gamma", (1.0,), lo=1e-8, hi=1e8, what="gamma/(2 |lam - 1|)",
                            solve=lambda q, lam, **_: 2.0 * q * abs(lam - 1.0) if lam != 1.0 else q))


# order = 1 where the leading term alone is subnormal and the correction 1 - 3/(16 s sqrt(lam)) is huge (found by
# docs/gen_accuracy.py on the stratified draws: 6.2e-10 and 1.1e-7 before its logarithm joined the exponent)
_LATE_ORDER1_POINTS = ({"t": 1.7665370204885053e-34, "lam": 7.002171965664166e-141, "eta0": 1.3516136212158453e+36,
                        "order": 1},
                       {"t": 1.709126760814479e+268, "lam": 6.043738705749337e+28, "eta0": 1.8639417342473254e-295,
                        "order": 1})


def _eps_eff(eps, level):
    return 4 * ref_lstar(eps, 1, level)


def _z(lam, eps, level, gen):
    lam = mp.mpf(lam)
    a = _a(lam)
    e = _eps_eff(eps, level)
    return 2 ** (mp.mpf(5) / 3) * (mp.cbrt(a) if gen else a) / (3 * mp.cbrt(mp.pi) * mp.sqrt(lam) * e ** (mp.mpf(2) / 3))


def _ref_lambertw(lam, eps, eta0, level, which):
    with _dps(lam), mp.extradps(int(max(0, -math.log10(lam))) + 10):  # W(z_gen) - W(z_tr) cancels
        pre = 3 / (8 * mp.mpf(eta0) * _a(lam))
        wg, wt = mp.lambertw(_z(lam, eps, level, True)).real, mp.lambertw(_z(lam, eps, level, False)).real
        return +(pre * {"train": wt, "gen": wg, "grok": wg - wt}[which])


def _ref_eq25(lam, eps, eta0, level):
    with _dps(lam):
        return +_ref_eq25_(lam, eps, eta0, level)


def _ref_eq25_(lam, eps, eta0, level):
    lam, et = mp.mpf(lam), mp.mpf(eta0)
    a = _a(lam)
    log_zg = mp.log(_z(lam, eps, level, True))
    log_a23 = mp.mpf(2) / 3 * mp.log(a)
    if not (log_zg > 0 and log_zg + log_a23 > 0):
        return mp.nan
    return -mp.log1p(-mp.sqrt(lam)) / (2 * et * a) + 3 / (8 * et * a) * mp.log1p(log_a23 / log_zg)


def _ref_wd_gamma_max(lam, eps, d_out=1, level=ERF_SQRT2):
    lstar = ref_lstar(eps, d_out, level)
    lam = mp.mpf(lam)
    if lstar * d_out >= mp.mpf(0.5):
        return mp.inf
    if lam > 1 and (1 - 1 / lam) / 2 >= lstar * d_out:
        return mp.mpf(0)
    guess = float(L.wd_gamma_max(float(lam), eps, d_out=d_out, level=level))
    f = lambda lg: mp.log(ref_stieltjes_plateau("gen", lam, mp.exp(lg), d_out)) - mp.log(lstar)  # noqa: E731
    if guess == 0.0:  # the function says the root underflows: above L* even at gamma = 1e-323, checked here
        lg_min = mp.log(mp.mpf("1e-323"))
        if f(lg_min) > 0:
            return mp.mpf(0)  # the nearest double of a root below 1e-323
        return mp.nan  # a root the function missed: fails the comparison
    x0 = mp.log(guess)
    return mp.exp(mp.findroot(f, (x0 - mp.mpf("1e-9"), x0 + mp.mpf("1e-9")), solver="secant",
                              tol=mp.mpf(10) ** (-2 * mp.mp.dps // 3)))


def _ref_noise(which, mode, t, lam, eta0, sigma2):
    """Label-noise losses of App. C (corrected), reference expectations in theta."""
    lam, et, s2 = mp.mpf(lam), mp.mpf(eta0), mp.mpf(sigma2)
    s = 4 * et * mp.mpf(t)
    base = mp.exp(ref_log_loss(which, t, lam, eta0))
    if mode == "paper":
        return base + (s2 if which == "train" else 0)
    if mode == "fixed":
        if which == "train":
            cont = mp.exp(ref_log_expect_exp(lambda nu: mp.mpf(1), s, lam, atom=False))
            return base + s2 * (max(0, 1 - lam) + lam * cont)
        f = lambda nu: mp.expm1(-s * nu / 2) ** 2 / nu  # noqa: E731
        return base + s2 * lam * mp.exp(ref_log_expect_exp(f, 0, lam, atom=False))
    b = et  # d_out = 1
    rho2t = lambda nu: abs(1 - 2 * b * nu) ** (2 * mp.mpf(t))  # noqa: E731
    q = (lambda nu: nu) if which == "train" else (lambda nu: mp.mpf(1))
    f = lambda nu: q(nu) * (1 - rho2t(nu)) / (1 - b * nu)  # noqa: E731
    extra = b * s2 * lam * mp.exp(ref_log_expect_exp(f, 0, lam, atom=False))
    return base + (s2 if which == "train" else 0) + extra


def _ref_grok_time_wd(lam, gamma, eps):
    from cases_mpgrid import ref_t_star_wd

    with mp.extradps(int(max(0, -math.log10(lam)))):
        tg = ref_t_star_wd("gen", lam, gamma, eps, 0.01)
        tt = ref_t_star_wd("train", lam, gamma, eps, 0.01)
        if mp.isinf(tg) and mp.isinf(tt):
            return mp.nan
        return tg - tt


def _ref_fit(C, lam_star):
    return mp.mpf(C)


def _fit(C, lam_star):
    lams = [0.2, 0.3, 0.4, 0.5, 0.6]
    dts = [C * (lam_star - x) ** -2 for x in lams]
    return L.fit_inverse_square(lams, dts)[0]


CASES = [
    AccuracyCase("grokclocks.linear.gamma_paper_convention",
                 lambda gamma, d_out: L.gamma_paper_convention(gamma, d_out=int(d_out), wd_convention="torch"),
                 lambda gamma, d_out: mp.mpf(gamma) * d_out, {"gamma": Arg(TINY, 1e300), "d_out": DOUT},
                 rtol=2.3e-16),
    # ---------------------------------------------------------------- losses, gamma = 0
    AccuracyCase("grokclocks.linear.log_loss_train",
                 lambda t, lam, eta0, d_out, alpha: L.log_loss_train(t, lam, eta0, d_out=int(d_out), init_scale=alpha),
                 lambda t, lam, eta0, d_out, alpha: ref_log_loss("train", t, lam, eta0, int(d_out), alpha),
                 {"t": T, "lam": LAM, "eta0": ETA, "d_out": DOUT, "alpha": ALPHA}, rtol=1e-14, kind="log",
                 raises=_s_overflows,
                 raises_doc='4 eta0 t/d_out > 1.8e308', branches=(_loss_z_branch(_Z_PHI1),)),
    AccuracyCase("grokclocks.linear.loss_train",
                 lambda t, lam, eta0: L.loss_train(t, lam, eta0), lambda t, lam, eta0: mp.exp(
                     ref_log_loss("train", t, lam, eta0)),
                 {"t": T, "lam": LAM, "eta0": ETA}, rtol=1e-14, kind="exp", raises=_s_overflows,
                 raises_doc='4 eta0 t/d_out > 1.8e308', branches=(_loss_z_branch(_Z_PHI1),)),
    AccuracyCase("grokclocks.linear.log_loss_gen",
                 lambda t, lam, eta0, d_out, alpha: L.log_loss_gen(t, lam, eta0, d_out=int(d_out), init_scale=alpha),
                 lambda t, lam, eta0, d_out, alpha: ref_log_loss("gen", t, lam, eta0, int(d_out), alpha),
                 {"t": T, "lam": LAM, "eta0": ETA, "d_out": DOUT, "alpha": ALPHA}, rtol=2e-14, kind="log",
                 raises=_s_overflows, ci_examples=15,
                 raises_doc='4 eta0 t/d_out > 1.8e308',
                 branches=(Branch("lam", _PHI0_LAM), _loss_z_branch(_Z_PHI0))),
    AccuracyCase("grokclocks.linear.loss_gen [lam near 1]",
                 lambda t, e, side: L.loss_gen(t, _pm1(e, side), 0.01),
                 lambda t, e, side: mp.exp(ref_log_loss("gen", t, _pm1(e, side), 0.01)),
                 {"t": T, "e": NEAR1, "side": Arg(values=(-1, 1))}, rtol=2e-14, kind="exp",
                 raises=lambda t, e, side: _s_overflows(t, 0.01), ci_examples=5,
                 raises_doc='4 eta0 t/d_out > 1.8e308', branches=(_loss_z_branch(_Z_PHI0),)),
    # ---------------------------------------------------------------- losses, gamma > 0 (quadrature)
    AccuracyCase("grokclocks.linear.log_loss_gen [gamma > 0]",
                 lambda t, lam, gamma: L.log_loss_gen(t, lam, 0.01, gamma=gamma),
                 lambda t, lam, gamma: ref_log_loss_wd("gen", t, lam, 0.01, gamma),
                 {"t": Arg(1e-3, 1e12), "lam": Arg(1e-6, 1e6), "gamma": Arg(1e-300, 1e300)}, rtol=1e-12,
                 kind="log", ci_examples=4, branches=_WD_LOSS_BRANCHES),
    AccuracyCase("grokclocks.linear.log_loss_train [gamma > 0]",
                 lambda t, lam, gamma: L.log_loss_train(t, lam, 0.01, gamma=gamma),
                 lambda t, lam, gamma: ref_log_loss_wd("train", t, lam, 0.01, gamma),
                 {"t": Arg(1e-3, 1e12), "lam": Arg(1e-6, 1e6), "gamma": Arg(1e-300, 1e300)}, rtol=1e-12,
                 kind="log", ci_examples=4, branches=_WD_LOSS_BRANCHES),
    # lam = 1 with a faint weight decay: the rule's map scale is g there (log(T/g) up to 745); below
    # g max(s, 1) = 1e-34 the engine takes gradient flow's closed forms times e^(-s g) (log L was off by 3e-9
    # at t = 1500, gamma = 1e-300 before)
    AccuracyCase("grokclocks.linear.log_loss_gen [gamma > 0, lam = 1]",
                 lambda t, gamma: L.log_loss_gen(t, 1.0, 0.01, gamma=gamma),
                 lambda t, gamma: ref_log_loss_wd("gen", t, 1.0, 0.01, gamma),
                 {"t": Arg(1e-3, 1e12), "gamma": Arg(1e-323, 1e-10)}, rtol=1e-12, kind="log", ci_examples=4),
    AccuracyCase("grokclocks.linear.log_loss_train [gamma > 0, lam = 1]",
                 lambda t, gamma: L.log_loss_train(t, 1.0, 0.01, gamma=gamma),
                 lambda t, gamma: ref_log_loss_wd("train", t, 1.0, 0.01, gamma),
                 {"t": Arg(1e-3, 1e12), "gamma": Arg(1e-323, 1e-10)}, rtol=1e-12, kind="log", ci_examples=4),
    # ---------------------------------------------------------------- exact GD
    AccuracyCase("grokclocks.linear.log_loss_gen [discrete]",
                 lambda t, lam, frac: L.log_loss_gen(
                     t, lam, frac / (1 + math.sqrt(lam)) ** 2, discrete=True),
                 lambda t, lam, frac: ref_log_loss_gd("gen", t, lam, frac / (1 + math.sqrt(lam)) ** 2),
                 {"t": Arg(1.0, 1e8, integer=True), "lam": Arg(1e-6, 1e6), "frac": Arg(1e-6, 0.999, "lin")},
                 rtol=1e-12, kind="log", ci_examples=4,
                 note="eta0 = frac d_out/lam_+ (GD stable for frac < 1)",
                 # 1 - 2 eta0 lam_+/d_out < 0 (oscillating top modes) for frac > 1/2
                 branches=(Branch("lam", _QUAD_LAM), Branch("frac", (0.5,), scale="lin"))),
    AccuracyCase("grokclocks.linear.log_loss_train [discrete, gamma > 0]",
                 lambda t, lam, gamma: L.log_loss_train(t, lam, 0.01, gamma=gamma, discrete=True),
                 lambda t, lam, gamma: _ref_log_loss_gd_wd("train", t, lam, 0.01, gamma),
                 {"t": Arg(1.0, 1e8, integer=True), "lam": Arg(1e-6, 1e3), "gamma": Arg(1e-10, 10.0)},
                 rtol=1e-12, kind="log", ci_examples=3,
                 raises=lambda t, lam, gamma: 0.02 * ((1 + math.sqrt(lam)) ** 2 + gamma / 2) >= 2,
                 raises_doc="2 eta0 (lam_+ + gamma/2)/d_out >= 2 (GD diverges)",
                 # oscillating modes once 0.02 (lam_+ + gamma/2) > 1: lam in (32.6, 37.9) for gamma in [0, 10]
                 branches=(Branch("lam", (*_QUAD_LAM, (math.sqrt(45.0) - 1) ** 2, (math.sqrt(50.0) - 1) ** 2)),)),
    # ---------------------------------------------------------------- finite spectra
    AccuracyCase("grokclocks.linear.loss_gen_finite",
                 lambda t, eta0: L.loss_gen_finite(t, [0.0, 0.3, 1.1, 2.5], [0.5, 0.25, 0.125, 0.125], eta0),
                 lambda t, eta0: mp.fsum(w * mp.exp(-4 * mp.mpf(eta0) * mp.mpf(t) * mp.mpf(nu))
                                         for nu, w in ((0.0, 0.5), (0.3, 0.25), (1.1, 0.125), (2.5, 0.125))),
                 {"t": Arg(TINY, HUGE), "eta0": Arg(TINY, HUGE)}, rtol=1e-14, kind="exp"),
    AccuracyCase("grokclocks.linear.loss_train_finite",
                 lambda t, eta0: L.loss_train_finite(t, [0.3, 1.1, 2.5], [0.5, 0.25, 0.25], eta0),
                 lambda t, eta0: mp.fsum(w * mp.mpf(nu) * mp.exp(-4 * mp.mpf(eta0) * mp.mpf(t) * mp.mpf(nu))
                                         for nu, w in ((0.3, 0.5), (1.1, 0.25), (2.5, 0.25))),
                 {"t": Arg(TINY, HUGE), "eta0": Arg(TINY, HUGE)}, rtol=1e-14, kind="exp"),
    AccuracyCase("grokclocks.linear.loss_gen_equal_proj",
                 lambda t, eta0: L.loss_gen_equal_proj(t, [0.3, 1.1, 2.5], eta0),
                 lambda t, eta0: mp.fsum(mp.exp(-4 * mp.mpf(eta0) * mp.mpf(t) * mp.mpf(nu)) / 3
                                         for nu in (0.3, 1.1, 2.5)),
                 {"t": Arg(TINY, HUGE), "eta0": Arg(TINY, HUGE)}, rtol=1e-14, kind="exp"),
    AccuracyCase("grokclocks.linear.loss_train_equal_proj",
                 lambda t, eta0: L.loss_train_equal_proj(t, [0.3, 1.1, 2.5], eta0),
                 lambda t, eta0: mp.fsum(mp.mpf(nu) * mp.exp(-4 * mp.mpf(eta0) * mp.mpf(t) * mp.mpf(nu)) / 3
                                         for nu in (0.3, 1.1, 2.5)),
                 {"t": Arg(TINY, HUGE), "eta0": Arg(TINY, HUGE)}, rtol=1e-14, kind="exp"),
    # ---------------------------------------------------------------- accuracy and threshold
    AccuracyCase("grokclocks.linear.accuracy_from_loss",
                 lambda loss, eps, d_out: L.accuracy_from_loss(loss, eps, int(d_out)),
                 lambda loss, eps, d_out: mp.gammainc(mp.mpf(d_out) / 2, 0,
                                                      int(d_out) * mp.mpf(eps) / (2 * mp.mpf(loss)),
                                                      regularized=True),
                 {"loss": Arg(TINY, HUGE), "eps": Arg(TINY, HUGE), "d_out": DOUT}, rtol=1.5e-14, kind="exp",
                 ci_examples=30,
                 # P(a, x) from its series in log x where x < 1e-3 and P < 1e-280, or x < e^-690
                 branches=(Branch("eps", (1e-300, 1e-3), lo=1e-310, hi=1e300, what="x = d_out eps/(2 loss)",
                                  solve=lambda q, loss, d_out: 2.0 * q * loss / int(d_out)),),
                 # Measured (2026-11-25, 15,000 points with eps/loss log-uniform in [0.2, 5], i.e. across the
                 # accuracy transition, d_out in {1, 2, 5, 37, 1000}): worst 8.5e-15 at d_out = 1000, 5.2e-15
                 # at d_out = 1.  Log-uniform draws of loss and eps almost never land there (20,000 such points:
                 # 1.7e-15), which is how a 2e-15 contract passed the page generator and failed a CI draw
                 # (2.07e-15 at loss = eps, d_out = 1000).  The error is the rounding of x = d_out eps/(2 L)
                 # amplified by the condition number x P'(x)/P ~ 2 sqrt(d_out/(4 pi)) at x = d_out/2 (18 at
                 # d_out = 1000), not the series branch.
                 rtol_doc="1.5e-14 (transition region; the rounding of d_out eps/(2L) times the condition "
                          "number ~sqrt(d_out/pi))"),
    AccuracyCase("grokclocks.linear.accuracy_from_loss [transition]",
                 lambda loss, ratio, d_out: L.accuracy_from_loss(loss, loss * ratio, int(d_out)),
                 # the reference takes the same double eps = loss * ratio that the function receives
                 lambda loss, ratio, d_out: mp.gammainc(mp.mpf(d_out) / 2, 0,
                                                        int(d_out) * mp.mpf(loss * ratio) / (2 * mp.mpf(loss)),
                                                        regularized=True),
                 {"loss": Arg(1e-250, 1e250), "ratio": Arg(0.2, 5.0), "d_out": DOUT}, rtol=1.5e-14, kind="exp",
                 ci_examples=30, rtol_doc="1.5e-14 (see the case above)"),
    AccuracyCase("grokclocks.linear.loss_threshold",
                 lambda eps, d_out, level: L.loss_threshold(eps, int(d_out), level),
                 lambda eps, d_out, level: ref_lstar(eps, int(d_out), level),
                 {"eps": EPS, "d_out": DOUT, "level": LEVEL}, rtol=1e-13,
                 raises=lambda eps, d_out, level: ref_lstar(eps, int(d_out), level) > HUGE,
                 raises_doc="L* beyond 1.8e308 (ResultOverflow)"),
    AccuracyCase("grokclocks.linear.loss_threshold [tiny level, eps to 1.8e308]",
                 lambda eps, d_out, level: L.loss_threshold(eps, int(d_out), level),
                 lambda eps, d_out, level: ref_lstar(eps, int(d_out), level),
                 {"eps": Arg(TINY, HUGE), "d_out": DOUT, "level": Arg(TINY, 1e-6)}, rtol=1e-13,
                 raises=lambda eps, d_out, level: ref_lstar(eps, int(d_out), level) > HUGE,
                 raises_doc="L* beyond 1.8e308 (ResultOverflow)",
                 # d_out = 1: (eps/e)/e/2 where e = erfinv(level) <= 1e-150, i.e. level <= 1.128e-150
                 branches=(Branch("level", (1e-150 * 2 / math.sqrt(math.pi),)),)),
    # ---------------------------------------------------------------- exact crossing times
    AccuracyCase("grokclocks.linear.t_star [train]",
                 lambda lam, eps, eta0: L.t_star("train", lam, eps, eta0),
                 lambda lam, eps, eta0: ref_t_star("train", lam, eps, eta0),
                 {"lam": LAM, "eps": Arg(TINY, 1.0), "eta0": ETA}, rtol=1e-13,
                 atol=lambda lam, eps, eta0: _lam_t_atol(eps, eta0),
                 raises=lambda lam, eps, eta0: _t_star_raises("train", lam, eps, eta0), ci_examples=20,
                 rtol_doc="1e-13, or |error| <= 1e-15 max(1, |log L*|) d_out/(4 eta0)",
                 raises_doc='t* (or 4 eta0 t*/d_out) beyond 1.6e308'),
    AccuracyCase("grokclocks.linear.t_star [gen]",
                 lambda lam, eps, eta0, d_out: L.t_star("gen", lam, eps, eta0, d_out=int(d_out)),
                 lambda lam, eps, eta0, d_out: ref_t_star("gen", lam, eps, eta0, int(d_out)),
                 {"lam": Arg(1e-30, 1e3), "eps": Arg(1e-300, 1.0), "eta0": Arg(1e-10, 1e10), "d_out": DOUT},
                 rtol=1e-13, atol=lambda lam, eps, eta0, d_out: _lam_t_atol(eps, eta0, int(d_out)),
                 raises=lambda lam, eps, eta0, d_out: _t_star_raises("gen", lam, eps, eta0, int(d_out)),
                 ci_examples=0, rtol_doc="1e-13, or |error| <= 1e-15 max(1, |log L*|) d_out/(4 eta0)",
                 raises_doc='t* (or 4 eta0 t*/d_out) beyond 1.6e308', branches=(Branch("lam", _PHI0_LAM),)),
    AccuracyCase("grokclocks.linear.grok_time",
                 lambda lam, eps: L.grok_time(lam, eps, 0.01),
                 lambda lam, eps: ref_grok_time(lam, eps, 0.01),
                 {"lam": Arg(TINY, 1.0), "eps": Arg(1e-100, 1.0)}, rtol=1e-12, ci_examples=3,
                 raises=lambda lam, eps: _t_star_raises("gen", lam, eps, 0.01),
                 raises_doc='t* (or 4 eta0 t*/d_out) beyond 1.6e308',
                 branches=(Branch("lam", (0.01, 0.25)),)),  # the small-lam delay (_SMALL_LAM = 1e-2; 1/4 before)
    AccuracyCase("grokclocks.linear.grok_time [gamma > 0]",
                 lambda lam, gamma, eps: L.grok_time(lam, eps, 0.01, gamma=gamma),
                 lambda lam, gamma, eps: _ref_grok_time_wd(lam, gamma, eps),
                 {"lam": Arg(1e-4, 3.0), "gamma": Arg(1e-8, 1e-2), "eps": Arg(1e-8, 1e-2)},
                 rtol=lambda lam, gamma, eps: 1e-11 + 1e-13 / lam, ci_examples=0,
                 rtol_doc="1e-11 + 1e-13/lam (a difference of two crossing times, Delta t/t ~ lam)",
                 branches=(Branch("lam", _QUAD_LAM),)),
    # ---------------------------------------------------------------- late-time expansions
    AccuracyCase("grokclocks.linear.loss_train_late",
                 lambda t, lam, eta0, order: L.loss_train_late(t, lam, eta0, order=int(order)),
                 lambda t, lam, eta0, order: _ref_train_late(t, lam, eta0, int(order)),
                 {"t": T, "lam": LAM, "eta0": ETA, "order": Arg(values=(0, 1))}, rtol=lambda t, lam, eta0, order: _log_rtol(t, lam, eta0), rtol_doc=_LOG_RTOL_DOC,
                 raises=lambda t, lam, eta0, order: lam == 1.0,
                 raises_doc='lam = 1 (the expansions diverge)', branches=_LATE_BRANCHES,
                 points=tuple({**pt, "order": o} for pt in _LATE_POINTS for o in (0, 1)) + _LATE_ORDER1_POINTS),
    AccuracyCase("grokclocks.linear.loss_gen_late",
                 lambda t, lam, eta0: L.loss_gen_late(t, lam, eta0), _ref_gen_late,
                 {"t": T, "lam": LAM, "eta0": ETA}, rtol=lambda t, lam, eta0: _log_rtol(t, lam, eta0), rtol_doc=_LOG_RTOL_DOC,
                 raises=lambda t, lam, eta0: lam == 1.0, ci_examples=10,
                 raises_doc='lam = 1 (the expansions diverge)', branches=_LATE_BRANCHES, points=_LATE_POINTS),
    AccuracyCase("grokclocks.linear.loss_gen_late_simple",
                 lambda t, lam, eta0: L.loss_gen_late_simple(t, lam, eta0), _ref_gen_late_simple,
                 {"t": T, "lam": LAM, "eta0": ETA}, rtol=lambda t, lam, eta0: _log_rtol(t, lam, eta0), rtol_doc=_LOG_RTOL_DOC,
                 raises=lambda t, lam, eta0: lam == 1.0,
                 raises_doc='lam = 1 (the expansions diverge)', branches=_LATE_BRANCHES, points=_LATE_POINTS),
    # ---------------------------------------------------------------- approximate grokking times
    AccuracyCase("grokclocks.linear.t_star_train_lambertw",
                 lambda lam, eps, eta0, level: L.t_star_train_lambertw(lam, eps, eta0, level=level),
                 lambda lam, eps, eta0, level: _ref_lambertw(lam, eps, eta0, level, "train"),
                 {"lam": Arg(TINY, 1.0 - 2**-53, "log"), "eps": Arg(TINY, HUGE), "eta0": ETA, "level": LEVEL}, rtol=lambda lam, eps, eta0, level: _log_rtol(lam, eps, eta0), rtol_doc=_LOG_RTOL_DOC, ci_examples=20,
                 branches=_lambertw_branches(False)),
    AccuracyCase("grokclocks.linear.t_star_gen_lambertw",
                 lambda lam, eps, eta0, level: L.t_star_gen_lambertw(lam, eps, eta0, level=level),
                 lambda lam, eps, eta0, level: _ref_lambertw(lam, eps, eta0, level, "gen"),
                 {"lam": Arg(TINY, 1.0 - 2**-53, "log"), "eps": Arg(TINY, HUGE), "eta0": ETA, "level": LEVEL}, rtol=lambda lam, eps, eta0, level: _log_rtol(lam, eps, eta0), rtol_doc=_LOG_RTOL_DOC, ci_examples=20,
                 branches=_lambertw_branches(True)),
    AccuracyCase("grokclocks.linear.grok_time_lambertw",
                 lambda lam, eps, eta0, level: L.grok_time_lambertw(lam, eps, eta0, level=level),
                 lambda lam, eps, eta0, level: _ref_lambertw(lam, eps, eta0, level, "grok"),
                 {"lam": Arg(TINY, 1.0 - 2**-53, "log"), "eps": Arg(TINY, HUGE), "eta0": ETA, "level": LEVEL}, rtol=lambda lam, eps, eta0, level: _log_rtol(lam, eps, eta0), rtol_doc=_LOG_RTOL_DOC, ci_examples=20,
                 branches=_lambertw_branches(True)),
    AccuracyCase("grokclocks.linear.grok_time_eq25",
                 lambda lam, eps, eta0: L.grok_time_eq25(lam, eps, eta0),
                 lambda lam, eps, eta0: _ref_eq25(lam, eps, eta0, ERF_SQRT2),
                 {"lam": Arg(TINY, 1.0 - 2**-53, "log"), "eps": EPS, "eta0": ETA},
                 # x = (2/3) log a/log z_gen carries the absolute error of log z_gen (a sum of logarithms,
                 # ~eps sum |log|) relative to |log z_gen|: 1e-7 at log z_gen = 1e-7 (a switch point of the
                 # NaN boundary log z_tr = 0, lam = 1.5e-154: the draws had not been there)
                 rtol=lambda lam, eps, eta0: _log_rtol(lam, eps, eta0) * max(
                     1.0 / min(1.0, abs(1.0 - _log_zgen(lam, eps)), abs(_log_zgen(lam, eps))),
                     _eq25_bracket_kappa(lam, eps)),
                 rtol_doc="4e-16 (10 + |log lam| + |log eps| + |log eta0|) max(1/min(1, |1 - log z_gen|, "
                          "|log z_gen|), kappa) (log z_gen is a sum of logarithms, the bracket is 4 sqrt(lam)(1 - "
                          "1/log z_gen) at small lam, and (2/3) log a/log z_gen divides by it; kappa = (|2 log a| + "
                          "|3 log1p x|)/|bracket|, the condition number of the bracket where eq. 25's Delta t changes "
                          "sign)",
                 ci_examples=30,
                 # NaN where log z_tr <= 0
                 branches=(Branch("lam", (0.25,)),
                           Branch("eps", (0.0,), lo=-50.0, hi=50.0, scale="lin", what="log z_tr",
                                  solve=lambda q, lam, eta0: _eps_for_log_z(q, lam, tr_of_eq25=True)))),
    AccuracyCase("grokclocks.linear.grok_time_asymptotic", L.grok_time_asymptotic,
                 lambda lam, eta0: -mp.log1p(-mp.sqrt(lam)) / (2 * mp.mpf(eta0) * _a(lam)),
                 {"lam": Arg(TINY, 1.0 - 2**-53, "log"), "eta0": ETA}, rtol=1e-15,
                 branches=(Branch("lam", (0.25,)),)),
    AccuracyCase("grokclocks.linear.grok_time_near_one", L.grok_time_near_one,
                 lambda lam, eta0: mp.log(4 / (1 - mp.mpf(lam)) ** 2) / (mp.mpf(eta0) * (1 - mp.mpf(lam)) ** 2),
                 {"lam": Arg(TINY, 1.0 - 2**-53, "log"), "eta0": ETA}, rtol=1e-15),
    AccuracyCase("grokclocks.linear.t_star_gen_critical",
                 lambda eps, eta0, level: L.t_star_gen_critical(eps, eta0, level=level),
                 lambda eps, eta0, level: 1 / (4 * mp.pi * mp.mpf(eta0) * ref_lstar(eps, 1, level) ** 2),
                 {"eps": EPS, "eta0": ETA, "level": LEVEL}, rtol=lambda eps, eta0, level: _log_rtol(eps, eps, eta0),
                 rtol_doc="4e-16 (10 + 2 |log eps| + |log eta0|)"),
    AccuracyCase("grokclocks.linear.dout_max [value at the returned d_out]",
                 lambda lam, eps: L.dout_max(lam, eps, 0.01, level=0.95)[1],
                 lambda lam, eps: ref_grok_time(lam, eps, 0.01, L.dout_max(lam, eps, 0.01, level=0.95)[0], 0.95),
                 {"lam": Arg(0.05, 1.0, "lin"), "eps": Arg(1e-6, 1e-2)}, rtol=1e-10, ci_examples=0,
                 note="the value at the returned d_out against the reference grokking time there"),
    # ---------------------------------------------------------------- weight decay
    AccuracyCase("grokclocks.linear.wd_asymptotes [train]",
                 lambda lam, gamma, d_out: L.wd_asymptotes(lam, gamma, d_out=int(d_out))[0],
                 lambda lam, gamma, d_out: ref_stieltjes_plateau("train", lam, gamma, int(d_out)),
                 {"lam": LAM, "gamma": Arg(TINY, 1e300), "d_out": DOUT}, rtol=1e-14, kind="exp",
                 branches=_PLATEAU_BRANCHES),
    AccuracyCase("grokclocks.linear.wd_asymptotes [gen]",
                 lambda lam, gamma, d_out: L.wd_asymptotes(lam, gamma, d_out=int(d_out))[1],
                 lambda lam, gamma, d_out: ref_stieltjes_plateau("gen", lam, gamma, int(d_out)),
                 {"lam": LAM, "gamma": Arg(TINY, 1e300), "d_out": DOUT}, rtol=1e-14, kind="exp",
                 branches=_PLATEAU_BRANCHES),
    AccuracyCase("grokclocks.linear.wd_asymptotes_small_gamma [gen]",
                 lambda lam, gamma: L.wd_asymptotes_small_gamma(lam, gamma)[1],
                 lambda lam, gamma: (mp.mpf(gamma) ** 2 / (8 * abs(1 - mp.mpf(lam)) ** 3)
                                     + ((1 - 1 / mp.mpf(lam)) / 2 if lam > 1 else 0)),
                 {"lam": LAM, "gamma": Arg(TINY, 1e300)}, rtol=1e-15, raises=lambda lam, gamma: lam == 1.0,
                 raises_doc='lam = 1', branches=(Branch("lam", (1.0,)),)),
    AccuracyCase("grokclocks.linear.wd_asymptotes_small_gamma [train]",
                 lambda lam, gamma: L.wd_asymptotes_small_gamma(lam, gamma)[0],
                 lambda lam, gamma: mp.mpf(gamma) ** 2 / (8 * abs(1 - mp.mpf(lam)) * (mp.mpf(lam) if lam > 1 else 1)),
                 {"lam": LAM, "gamma": Arg(TINY, 1e300)}, rtol=1e-15, raises=lambda lam, gamma: lam == 1.0,
                 raises_doc='lam = 1', branches=(Branch("lam", (1.0,)),)),
    AccuracyCase("grokclocks.linear.wd_gamma_max",
                 lambda lam, eps: L.wd_gamma_max(lam, eps), lambda lam, eps: _ref_wd_gamma_max(lam, eps),
                 {"lam": LAM, "eps": EPS}, rtol=1e-12, ci_examples=10,
                 # inf for L* = eps >= 1/2; 0 where the lam > 1 plateau (1 - 1/lam)/2 is above L*
                 branches=(Branch("lam", (1.0,)), Branch("eps", (0.5,)))),
    AccuracyCase("grokclocks.linear.grok_time_wd_paper", L.grok_time_wd_paper,
                 lambda lam, eta0: mp.log1p(mp.sqrt(lam)) / (2 * mp.mpf(eta0) * _a(lam)),
                 {"lam": Arg(TINY, 1.0 - 2**-53, "log"), "eta0": ETA}, rtol=1e-15),
    # ---------------------------------------------------------------- initialisation scale
    AccuracyCase("grokclocks.linear.init_scale_factor", L.init_scale_factor,
                 lambda alpha: (1 + mp.mpf(alpha) ** 2) / 2, {"alpha": Arg(TINY, 1e300)}, rtol=4e-16),
    AccuracyCase("grokclocks.linear.effective_eps", L.effective_eps,
                 lambda eps, alpha: 2 * mp.mpf(eps) / (1 + mp.mpf(alpha) ** 2),
                 {"eps": EPS, "alpha": Arg(TINY, 1e300)}, rtol=6e-16),
    # ---------------------------------------------------------------- label noise
    AccuracyCase("grokclocks.linear.loss_train_label_noise [fixed]",
                 lambda t, lam, sigma2: L.loss_train_label_noise(t, lam, 0.01, sigma2),
                 lambda t, lam, sigma2: _ref_noise("train", "fixed", t, lam, 0.01, sigma2),
                 {"t": Arg(1e-3, 1e8), "lam": Arg(1e-4, 1e4), "sigma2": Arg(1e-10, 10.0)}, rtol=1e-12,
                 ci_examples=3, branches=(Branch("lam", _QUAD_LAM),)),
    AccuracyCase("grokclocks.linear.loss_gen_label_noise [fixed]",
                 lambda t, lam, sigma2: L.loss_gen_label_noise(t, lam, 0.01, sigma2),
                 lambda t, lam, sigma2: _ref_noise("gen", "fixed", t, lam, 0.01, sigma2),
                 {"t": Arg(1e-3, 1e8), "lam": Arg(1e-4, 1e4), "sigma2": Arg(1e-10, 10.0)}, rtol=1e-12,
                 ci_examples=3, branches=(Branch("lam", _QUAD_LAM),)),
    # near lam = 1 the noise integrand's weight in the rule's log-mapped variable rises like e^{5 tau/2} below the
    # layer nu ~ 1/s: the default node count lost 4.8e-9 there (found after the fixed rule replaced QAWS; the
    # log-uniform draws above rarely come within 1e-6 of 1)
    AccuracyCase("grokclocks.linear.loss_gen_label_noise [fixed, lam near 1]",
                 lambda t, e, side, sigma2: L.loss_gen_label_noise(t, _pm1(e, side), 0.01, sigma2),
                 lambda t, e, side, sigma2: _ref_noise("gen", "fixed", t, _pm1(e, side), 0.01, sigma2),
                 {"t": Arg(1.0, 1e8), "e": NEAR1, "side": Arg(values=(-1, 1)), "sigma2": Arg(1e-10, 10.0)},
                 rtol=1e-12, ci_examples=3),
    AccuracyCase("grokclocks.linear.loss_gen_label_noise [fresh]",
                 lambda t, lam, sigma2: L.loss_gen_label_noise(t, lam, 0.01, sigma2, mode="fresh"),
                 lambda t, lam, sigma2: _ref_noise("gen", "fresh", t, lam, 0.01, sigma2),
                 {"t": Arg(1.0, 1e6, integer=True), "lam": Arg(1e-4, 1e2), "sigma2": Arg(1e-10, 10.0)},
                 rtol=1e-12, ci_examples=3, raises=lambda t, lam, sigma2: 0.02 * (1 + math.sqrt(lam)) ** 2 >= 2,
                 raises_doc='2 eta0 lam_+/d_out >= 2 (GD diverges)',
                 # |1 - 2 eta0 nu| from log1p below 2 eta0 nu = 1 (lam_+ < 50 at lam < 37.9), its log above
                 branches=(Branch("lam", (*_QUAD_LAM, (math.sqrt(50.0) - 1) ** 2)),)),
    AccuracyCase("grokclocks.linear.loss_train_label_noise [fresh]",
                 lambda t, lam, sigma2: L.loss_train_label_noise(t, lam, 0.01, sigma2, mode="fresh"),
                 lambda t, lam, sigma2: _ref_noise("train", "fresh", t, lam, 0.01, sigma2),
                 {"t": Arg(1.0, 1e6, integer=True), "lam": Arg(1e-4, 1e2), "sigma2": Arg(1e-10, 10.0)},
                 rtol=1e-12, ci_examples=3, raises=lambda t, lam, sigma2: 0.02 * (1 + math.sqrt(lam)) ** 2 >= 2,
                 raises_doc='2 eta0 lam_+/d_out >= 2 (GD diverges)',
                 # |1 - 2 eta0 nu| from log1p below 2 eta0 nu = 1 (lam_+ < 50 at lam < 37.9), its log above
                 branches=(Branch("lam", (*_QUAD_LAM, (math.sqrt(50.0) - 1) ** 2)),)),
    # ---------------------------------------------------------------- two-layer, modular, fits
    AccuracyCase("grokclocks.linear.loss_two_layer",
                 lambda t, lam, d_out: L.loss_two_layer(t, lam, 0.01, int(d_out), 0.7, "train"),
                 lambda t, lam, d_out: mp.mpf(0.7) / int(d_out) * mp.exp(
                     ref_log_phi1(4 * mp.mpf(0.01) * mp.mpf(0.5) * mp.mpf(t) / int(d_out) ** 2, lam)),
                 {"t": T, "lam": LAM, "d_out": DOUT}, rtol=1e-14, kind="exp",
                 # s = 4 (0.01)(0.5) t/d_out^2 into Phi_1
                 branches=(Branch("t", _Z_PHI1, lo=1e-300, hi=HUGE, what="z = 2 s sqrt(lam)",
                                  solve=lambda q, lam, d_out: q * int(d_out) ** 2 / 0.04 / math.sqrt(lam)),)),
    AccuracyCase("grokclocks.linear.modular_lambda",
                 lambda alpha, p: L.modular_lambda(alpha, int(p)), lambda alpha, p: 2 / (mp.mpf(alpha) * int(p)),
                 {"alpha": Arg(TINY, 1.0), "p": Arg(values=(2, 3, 97, 113, 10**6))}, rtol=4e-16),
    AccuracyCase("grokclocks.linear.fit_inverse_square [exact data]", _fit, _ref_fit,
                 {"C": Arg(1e-3, 1e3), "lam_star": Arg(0.61, 2.0, "lin")}, rtol=1e-8,
                 note="C recovered from five exact points C (lam* - lam)^-2"),
    # ---------------------------------------------------------------- figure tables (compositions of t_star)
    AccuracyCase("grokclocks.linear.fig1_table [grok_time]",
                 lambda lam, eps: L.fig1_table(lams=[lam], epss=[eps])["grok_time"][0, 0],
                 lambda lam, eps: ref_grok_time(lam, eps, 0.01), {"lam": Arg(1e-3, 1.0), "eps": Arg(1e-8, 1e-1)},
                 rtol=1e-12, ci_examples=0, branches=(Branch("lam", (0.01, 0.25)),)),
    AccuracyCase("grokclocks.linear.fig2_table [t_gen]",
                 lambda lam, d_out: L.fig2_table(d_outs=[int(d_out)], lams=[lam])["t_gen"][0, 0],
                 lambda lam, d_out: ref_t_star("gen", lam, 1e-3, 0.01, int(d_out), 0.95),
                 {"lam": Arg(1e-3, 1.0), "d_out": Arg(values=(1, 5, 20, 100))}, rtol=1e-13,
                 atol=lambda lam, d_out: _lam_t_atol(1e-3, 0.01, int(d_out), 0.95), ci_examples=0),
    AccuracyCase("grokclocks.linear.fig5_table [err_eq21]",
                 lambda x: L.fig5_table(eta0_t=[x])["err_eq21"][0],
                 lambda x: _ref_train_late(x / 0.01, 0.9, 0.01, 0) / mp.exp(ref_log_loss("train", x / 0.01, 0.9, 0.01))
                 - 1, {"x": Arg(1.0, 1e4)}, rtol=1e-12, atol=1e-12, ci_examples=0,
                 note="eq21/exact - 1 is a difference of close numbers: contract on its absolute error"),
    AccuracyCase("grokclocks.linear.fig7_tables [c]",
                 lambda lam, d_out: L.fig7_tables(d_outs=(int(d_out),), lams=(lam,), parts=("c",))["c"][0, 0],
                 lambda lam, d_out: ref_grok_time(lam, 1e-3, 0.01, int(d_out), 0.95),
                 {"lam": Arg(1e-3, 1.0), "d_out": Arg(values=(1, 5, 20))}, rtol=1e-12, ci_examples=0,
                 branches=(Branch("lam", (0.01, 0.25)),)),
    AccuracyCase("grokclocks.linear.fig3_table [t_gen]",
                 lambda lam, gamma: L.fig3_table(gammas=[gamma], lams=[lam])["t_gen"][0, 0],
                 lambda lam, gamma: _ref_t_star_wd_gen(lam, gamma),
                 {"lam": Arg(0.05, 2.0), "gamma": Arg(1e-6, 1e-2)}, rtol=1e-11, ci_examples=0,
                 branches=(Branch("lam", _QUAD_LAM),)),
]


def _ref_t_star_wd_gen(lam, gamma):
    from cases_mpgrid import ref_t_star_wd

    return ref_t_star_wd("gen", lam, gamma, 1e-3, 0.01)
