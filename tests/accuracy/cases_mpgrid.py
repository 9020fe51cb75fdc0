"""Accuracy cases for grokclocks._mpgrid (the vectorised fixed-rule engine behind linear.grok_time_grid).

Two kinds of reference: mpmath (the MP expectations of ``cases_rmt``, crossing times as mpmath roots)
and, for the crossing times with weight decay, the spec's method (levi:mp-quad QAWS quadrature and
Brent root finding, i.e. ``grokclocks.linear.t_star``) -- the proof the brief asks for that the fixed
Gauss-Jacobi rule matches the adaptive one on the whole domain.
"""

from __future__ import annotations

import math

import mpmath as mp

from cases_linear import (_lam_t_atol, bracketed_root, ref_grok_time, ref_log_loss, ref_log_loss_wd, ref_lstar,
                          ref_stieltjes_plateau, ref_t_star)
from cases_rmt import NEAR1, _pm1, ref_log_expect_exp
from grokclocks import _mpgrid as G
from grokclocks import linear as L
from harness import HUGE, TINY, AccuracyCase, Arg, Branch

GAMMA = Arg(1e-12, 10.0)


def _level_for_x(x, d_out, **_):
    """level at which x = P^-1(d_out/2, level) equals x, from P(a, x) ~ x^a/Gamma(a + 1) (small x)."""
    a = 0.5 * d_out
    return math.exp(min(a * math.log(x) - math.lgamma(a + 1.0), 0.0))


# _mpgrid's switches: P^-1 below 1e-300 from its series (loss_threshold_grid); the quadrature's range cut at
# e^-60 where s_eff 2 sqrt(lam) > 60, s_eff = s/2 with weight decay (s sqrt(lam) = 60), s without (30); the
# plateau (1 - 1/lam) for lam > 1
def _s_sqrt_lam(cut, arg="s", factor=1.0, lam_of=None):
    """Branch on s sqrt(lam) (arg = s) or on 4 eta0 t sqrt(lam) (arg = t, factor = 4 eta0 = 0.04)."""
    def solve(q, **kw):
        lam = lam_of(**kw) if lam_of else kw["lam"]
        return q / (factor * math.sqrt(lam))
    return Branch(arg, (cut,), lo=1e-6, hi=1e12, solve=solve, what="s sqrt(lam)")


def ref_log_decay(which, s, lam, gamma):
    """log D(s), D = (1/2) E[q (e^{-s(nu+g)} (1 + r^2) + 2 g r e^{-s(nu+g)/2}/(nu+g))], r = nu/(nu+g)."""
    s, g = mp.mpf(s), mp.mpf(gamma) / 2

    def f(nu):
        q = nu if which == "train" else 1
        r = nu / (nu + g)
        e = mp.exp(-s * (nu + g) / 2)
        return q * (e * e * (1 + r * r) + 2 * g * r * e / (nu + g))

    return ref_log_expect_exp(f, 0, lam, atom=which == "gen") - mp.log(2)


def ref_t_star_wd(which, lam, gamma, eps, eta0):
    """t* of the eq.-14 loss (gamma > 0, d_out = 1) as an mpmath root of the reference loss."""
    log_target = mp.log(ref_lstar(eps))
    plateau = ref_stieltjes_plateau(which, lam, gamma)
    if plateau >= mp.exp(log_target):
        return mp.inf
    guess = float(L.t_star(which, lam, eps, eta0, gamma=gamma))
    g = lambda x: ref_log_loss_wd(which, mp.exp(x), lam, eta0, gamma) - log_target  # noqa: E731
    return mp.exp(bracketed_root(g, mp.log(mp.mpf(guess))))


def _grid_t(which, lam, gamma, eps):
    return G.crossing_time_grid(which, lam, gamma, eps, 0.01)


CASES = [
    AccuracyCase("grokclocks._mpgrid.loss_threshold_grid",
                 lambda eps, d_out, level: G.loss_threshold_grid(eps, d_out=d_out, level=level),
                 lambda eps, d_out, level: ref_lstar(eps, d_out, level),
                 {"eps": Arg(TINY, 1e300), "d_out": Arg(values=(1, 2.5, 37, 1000)),
                  "level": Arg(1e-6, 1 - 1e-6, "lin")}, rtol=1e-13),
    AccuracyCase("grokclocks._mpgrid.loss_threshold_grid [tiny level, tiny d_out, eps to 1.8e308]",
                 lambda eps, d_out, level: G.loss_threshold_grid(eps, d_out=d_out, level=level),
                 lambda eps, d_out, level: ref_lstar(eps, d_out, level),
                 {"eps": Arg(TINY, HUGE), "d_out": Arg(values=(1e-300, 0.01, 1, 2.5, 37)),
                  "level": Arg(TINY, 1e-6)}, rtol=1e-13,
                 branches=(Branch("level", (1e-300,), lo=1e-320, hi=1e-100, solve=_level_for_x,
                                  what="x = P^-1(d_out/2, level)"),)),
    AccuracyCase("grokclocks._mpgrid.wd_asymptote_grid [gen]",
                 lambda lam, gamma: G.wd_asymptote_grid(lam, gamma),
                 lambda lam, gamma: ref_stieltjes_plateau("gen", lam, gamma),
                 {"lam": Arg(TINY, HUGE), "gamma": Arg(TINY, HUGE)}, rtol=1e-14, kind="exp",
                 branches=(Branch("lam", (1.0,)),)),
    AccuracyCase("grokclocks._mpgrid.wd_asymptote_grid [train]",
                 lambda lam, gamma: G.wd_asymptote_grid(lam, gamma, which="train"),
                 lambda lam, gamma: ref_stieltjes_plateau("train", lam, gamma),
                 {"lam": Arg(TINY, HUGE), "gamma": Arg(TINY, HUGE)}, rtol=1e-14, kind="exp",
                 branches=(Branch("lam", (1.0,)),)),
    AccuracyCase("grokclocks._mpgrid.mp_decay_grid [gen]",
                 lambda s, lam, gamma: G.mp_decay_grid(s, lam, gamma)[0],
                 lambda s, lam, gamma: ref_log_decay("gen", s, lam, gamma),
                 {"s": Arg(1e-6, 1e12), "lam": Arg(1e-6, 1e6), "gamma": GAMMA}, rtol=1e-12, kind="log",
                 ci_examples=4, branches=(Branch("lam", (1.0,)), _s_sqrt_lam(60.0))),
    AccuracyCase("grokclocks._mpgrid.mp_decay_grid [train, lam near 1]",
                 lambda s, e, side, gamma: G.mp_decay_grid(s, _pm1(e, side), gamma, which="train")[0],
                 lambda s, e, side, gamma: ref_log_decay("train", s, _pm1(e, side), gamma),
                 {"s": Arg(1e-6, 1e12), "e": NEAR1, "side": Arg(values=(-1, 1)), "gamma": GAMMA},
                 rtol=1e-12, kind="log", ci_examples=0,
                 branches=(_s_sqrt_lam(60.0, lam_of=lambda e, side, **_: _pm1(e, side)),)),
    AccuracyCase("grokclocks._mpgrid.log_wd_loss_grid [gen]",
                 lambda t, lam, gamma: G.log_wd_loss_grid(t, lam, gamma, 0.01),
                 lambda t, lam, gamma: ref_log_loss_wd("gen", t, lam, 0.01, gamma),
                 {"t": Arg(1e-3, 1e12), "lam": Arg(1e-6, 1e6), "gamma": GAMMA}, rtol=1e-12, kind="log",
                 ci_examples=10, branches=(Branch("lam", (1.0,)), _s_sqrt_lam(60.0, "t", 0.04))),
    AccuracyCase("grokclocks._mpgrid.wd_loss_grid [train, gamma = 0]",
                 lambda t, lam: G.wd_loss_grid(t, lam, 0.0, 0.01, which="train"),
                 lambda t, lam: mp.exp(ref_log_loss("train", t, lam, 0.01)),
                 {"t": Arg(1e-3, 1e12), "lam": Arg(1e-6, 1e6)}, rtol=1e-12, kind="exp", ci_examples=10,
                 branches=(_s_sqrt_lam(30.0, "t", 0.04),)),
    AccuracyCase("grokclocks._mpgrid.crossing_time_grid [train, gamma = 0]",
                 lambda lam, eps: G.crossing_time_grid("train", lam, 0.0, eps, 0.01),
                 lambda lam, eps: ref_t_star("train", lam, eps, 0.01),
                 {"lam": Arg(1e-8, 1e4), "eps": Arg(1e-100, 1.0)}, rtol=1e-11,
                 atol=lambda lam, eps: _lam_t_atol(eps, 0.01), ci_examples=10),
    AccuracyCase("grokclocks._mpgrid.crossing_time_grid [gen, gamma = 0, lam near 1]",
                 lambda e, side, eps: G.crossing_time_grid("gen", _pm1(e, side), 0.0, eps, 0.01),
                 lambda e, side, eps: ref_t_star("gen", _pm1(e, side), eps, 0.01),
                 {"e": NEAR1, "side": Arg(values=(-1, 1)), "eps": Arg(1e-12, 1.0)}, rtol=1e-11,
                 atol=lambda e, side, eps: _lam_t_atol(eps, 0.01), ci_examples=0),
    AccuracyCase("grokclocks._mpgrid.crossing_time_grid [gen, gamma > 0, vs mpmath]",
                 lambda lam, gamma, eps: G.crossing_time_grid("gen", lam, gamma, eps, 0.01),
                 lambda lam, gamma, eps: ref_t_star_wd("gen", lam, gamma, eps, 0.01),
                 {"lam": Arg(0.01, 3.0), "gamma": Arg(1e-8, 1e-2), "eps": Arg(1e-8, 1e-2)}, rtol=1e-11,
                 ci_examples=0),
    AccuracyCase("grokclocks._mpgrid.crossing_time_grid [gamma > 0, vs the spec's QAWS + Brent]",
                 lambda which, lam, gamma, eps: G.crossing_time_grid(which, lam, gamma, eps, 0.01),
                 lambda which, lam, gamma, eps: mp.mpf(
                     L.t_star(which, lam, eps, 0.01, gamma=gamma)),
                 {"which": Arg(values=("train", "gen")), "lam": Arg(1e-4, 1e2), "gamma": Arg(1e-10, 1.0),
                  "eps": Arg(1e-12, 0.5)}, rtol=1e-11, ci_examples=5,
                 note="reference: grokclocks.linear.t_star (QAWS in a log-mapped variable + Brent), the "
                      "spec's method (levi:mp-quad, levi:tstar)"),
    AccuracyCase("grokclocks.linear.grok_time_grid [dt, gamma = 0]",
                 lambda lam, eps: L.grok_time_grid(lam, 0.0, eps, 0.01)[2],
                 lambda lam, eps: ref_grok_time(lam, eps, 0.01),
                 {"lam": Arg(1e-8, 1.0), "eps": Arg(1e-30, 1.0)}, rtol=1e-10, ci_examples=0,
                 branches=(Branch("lam", (0.01, 0.25)),)),  # the small-lam delay (_SMALL_LAM = 1e-2; 1/4 before)
    AccuracyCase("grokclocks.linear.grok_time_grid [dt, vs linear.grok_time]",
                 lambda lam, gamma, eps: L.grok_time_grid(lam, gamma, eps, 0.01)[2],
                 lambda lam, gamma, eps: mp.mpf(L.grok_time(lam, eps, 0.01, gamma=gamma)),
                 {"lam": Arg(1e-6, 10.0), "gamma": Arg(values=(0.0, 1e-6, 1e-3)), "eps": Arg(1e-12, 0.5)},
                 rtol=lambda lam, gamma, eps: 1e-10 if gamma == 0.0 else 1e-10 + 1e-13 / lam, ci_examples=5,
                 branches=(Branch("lam", (0.25, 1.0)),),
                 rtol_doc="1e-10 (gamma = 0); 1e-10 + 1e-13/lam (gamma > 0: a difference of two crossing "
                          "times, Delta t/t ~ lam)",
                 note="reference: grokclocks.linear.grok_time (the spec's QAWS + Brent)"),
]
