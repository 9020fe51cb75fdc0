"""Registry entries: grokclocks.rmt, grokclocks.linear, grokclocks._mpgrid (spec ``levi``)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .kinds import (INF, Arr, Choice, Entry, Fixed, Flag, Func, Int, NonNeg, Param, Pos, Real, Unit,
                    array_bad, floats_array, seeded_array)

LAM = Pos(typ=(0.01, 5.0))
LAM1 = Real(0.0, 1.0, typ=(0.01, 0.97))          # 0 < lam < 1
S = NonNeg(typ=(0.0, 1e4))
W = Pos(typ=(1e-3, 1e3))
T = NonNeg(typ=(0.0, 1e6))
TPOS = Pos(typ=(1.0, 1e6))
ETA0 = Pos(typ=(1e-4, 0.05))                     # 2 eta0 (lam_+ + gamma/2) / d_out < 2 on the typical range
EPS = Pos(typ=(1e-6, 0.5))
GAMMA = NonNeg(typ=(0.0, 0.1))
LEVEL = Unit()
DOUT = Int(1, typ=(1, 5), ext=(10**6,))
ALPHA = Real(typ=(-3.0, 3.0))
WD = Choice("paper", "torch")
WHICH = Choice("train", "tr", "gen")


def _prob(out, kw):
    a = np.asarray(out, dtype=float)
    return None if np.all((a >= 0) & (a <= 1)) else f"accuracy outside [0, 1]: {a}"


def _nonneg(out, kw):
    a = np.concatenate([np.ravel(np.asarray(x, dtype=float)) for x in (out if isinstance(out, tuple) else (out,))])
    return None if np.all(a[~np.isinf(a)] >= 0) else f"negative value {a.min()} (a loss, time or mass)"


def _mp_density_ok(out, kw):
    return _nonneg(out, kw)


def _cdf(out, kw):
    a = np.asarray(out, dtype=float)
    return None if np.all((a >= 0) & (a <= 1 + 1e-12)) else f"cdf outside [0, 1]: {a}"


def _spectrum(n: int = 0):
    @st.composite
    def s(draw):
        k = draw(st.integers(1, 6))
        eig = draw(floats_array((k,), 0.0, 4.0))
        proj = draw(floats_array((k,), 0.0, 2.0))
        return {"eigvals": eig, "proj_sq": proj}
    return s()


def _spectrum_bad(name):
    def bad(n, kw):
        v = kw[name]
        return st.sampled_from(array_bad(v, ndim_fixed=True) + [np.append(v, 1.0), -1.0 - np.abs(v)])
    return bad


def _discrete_raises(discrete, lam, eta0, gamma, d_out, t=None, **k):
    """Documented DomainError of discrete GD: unstable (rate >= 2), or a non-integer t where modes oscillate."""
    if not discrete:
        return False
    rate = 2 * np.asarray(eta0) * ((1 + np.sqrt(lam)) ** 2 + np.asarray(gamma) / 2) / d_out
    return bool(np.any(rate >= 2) or (t is not None and np.any(rate > 1) and np.any(np.asarray(t) % 1 != 0)))


def _finite_eta0(n: int = 0):
    # eta0 small enough for discrete GD on eigenvalues <= 4
    return st.floats(1e-4, 0.2)


ENTRIES = [
    # ---------------------------------------------------------------- rmt
    Entry("rmt.mp_edges", {"lam": LAM}, vec=True, check=_nonneg),
    Entry("rmt.mp_atom", {"lam": LAM}, vec=True, check=_cdf),
    Entry("rmt.mp_density", {"nu": Real(typ=(-1.0, 10.0)), "lam": LAM}, vec=True, check=_mp_density_ok,
          inf="the density has an integrable 1/sqrt singularity at a support edge: inf at nu = lam_- = 0 (lam = 1)"),
    Entry("rmt.mp_cdf", {"x": Real(typ=(-1.0, 10.0)), "lam": Pos(typ=(0.01, 5.0))}, vec=True, check=_cdf),
    Entry("rmt.mp_moment", {"k": Int(0, typ=(0, 8), ext=(200,)), "lam": LAM}, vec=True, check=_nonneg,
          inf="overflow: E nu^k exceeds the double range for large k and lam"),
    Entry("rmt.mp_inverse_moment", {"k": Fixed(1, 2, bad=(0, 3, 1.5, True, "1", None)), "lam": LAM}, vec=True,
          raises=lambda k, lam: np.any(np.asarray(lam) == 1.0),
          inf="overflow: diverges as lam -> 1 (1/(1-lam)^3)"),
    Entry("rmt.mp_stieltjes", {"w": W, "lam": LAM}, vec=True, check=_nonneg,
          inf="overflow: m(w) ~ (1-1/lam)/w for w -> 0 with an atom"),
    Entry("rmt.mp_stieltjes2", {"w": W, "lam": LAM}, vec=True, check=_nonneg,
          inf="overflow: m_2(w) ~ (1-1/lam)/w^2 for w -> 0 with an atom"),
    Entry("rmt.mp_stieltjes_nu2", {"w": W, "lam": LAM}, vec=True, check=_nonneg,
          inf="overflow: ~ 1/sqrt(w) for w -> 0 at lam = 1"),
    Entry("rmt.mp_laplace_nu", {"s": S, "lam": LAM}, vec=True, check=_nonneg),
    Entry("rmt.mp_log_laplace_nu", {"s": S, "lam": LAM}, vec=True,
          inf="overflow: -inf where the log is below -1.8e308 (s lam_- beyond the double range)"),
    Entry("rmt.mp_laplace", {"s": S, "lam": LAM}, vec=True, check=_cdf),
    Entry("rmt.mp_log_laplace", {"s": S, "lam": LAM}, vec=True,
          inf="overflow: -inf where the log is below -1.8e308"),
    Entry("rmt.mp_expect", {"f": Func(lambda v: v, lambda v: np.exp(-v), lambda v: 1.0 / (1.0 + v)),
                            "lam": Pos(typ=(0.05, 5.0), vec=False), "include_atom": Flag(),
                            "rtol": Real(0.0, 1.0, typ=(1e-12, 1e-3), vec=False)}, cost=4),
    Entry("rmt.mp_log_expect_exp", {"g": Func(lambda v: 1.0 + 0.0 * v, lambda v: v, lambda v: v * v),
                                    "s": NonNeg(typ=(0.0, 100.0), vec=False),
                                    "lam": Pos(typ=(0.05, 5.0), vec=False), "include_atom": Flag(),
                                    "rtol": Real(0.0, 1.0, typ=(1e-12, 1e-3), vec=False)}, cost=4,
          inf="-inf is the log of an expectation that is exactly 0 (documented)"),
    # ---------------------------------------------------------------- linear
    Entry("linear.gamma_paper_convention", {"gamma": GAMMA, "d_out": DOUT, "wd_convention": WD}, vec=True,
          check=_nonneg, inf="overflow: the torch convention multiplies gamma by a power of d_out"),
    *[Entry(f"linear.{f}", {"t": T, "lam": LAM, "eta0": ETA0, "d_out": DOUT, "gamma": GAMMA,
                            "init_scale": ALPHA, "discrete": Flag(), "wd_convention": WD}, vec=True, cost=4,
            check=None if f.startswith("log") else _nonneg,
            inf="overflow: the loss grows like init_scale^2 (beyond 1.8e308 for |init_scale| > 1e154); "
                "-inf for the log of a loss that is exactly 0",
            raises=_discrete_raises)
      for f in ("loss_train", "loss_gen", "log_loss_train", "log_loss_gen")],
    *[Entry(f"linear.{f}", {"t": T, "eta0": Pos(typ=(1e-4, 0.2), vec=False),
                            "d_out": DOUT, "discrete": Flag()},
            build=lambda n: _spectrum(n), bad={"eigvals": _spectrum_bad("eigvals"), "proj_sq": _spectrum_bad("proj_sq")},
            names={"eigvals": ("proj_sq",), "proj_sq": ("eigvals",)}, check=_nonneg,
            inf="overflow: sum_i w_i q_i / d_out beyond 1.8e308 (weights near 1e308)",
            raises=lambda discrete, eta0, eigvals, d_out, **k: discrete and 2 * eta0 * float(np.max(eigvals)) / d_out >= 2)
      for f in ("loss_train_finite", "loss_gen_finite")],
    *[Entry(f"linear.{f}", {"t": T, "eta0": Pos(typ=(1e-4, 1.0), vec=False), "d_out": DOUT,
                            "D0_sq": NonNeg(typ=(0.0, 10.0), vec=False)},
            build=lambda n: _spectrum(n).map(lambda d: {"eigvals": d["eigvals"]}),
            bad={"eigvals": lambda n, kw: st.sampled_from(array_bad(kw["eigvals"]) + [-1.0 - kw["eigvals"]])},
            check=_nonneg, inf="overflow: D0_sq mean(q) / d_out beyond 1.8e308 (D0_sq near 1e308)")
      for f in ("loss_train_equal_proj", "loss_gen_equal_proj")],
    Entry("linear.accuracy_from_loss", {"L": NonNeg(typ=(0.0, 10.0)), "eps": EPS, "d_out": DOUT}, vec=True, check=_prob),
    Entry("linear.loss_threshold", {"eps": EPS, "d_out": DOUT, "level": LEVEL}, vec=True, check=_nonneg),
    Entry("linear.t_star", {"which": WHICH, "lam": LAM, "eps": EPS, "eta0": ETA0, "d_out": DOUT, "gamma": GAMMA,
                            "level": LEVEL, "init_scale": ALPHA, "discrete": Flag(), "wd_convention": WD},
          vec=True, cost=20, check=_nonneg, inf="inf: the accuracy never reaches level (documented)",
          raises=lambda discrete, lam, eta0, gamma, d_out, **k: discrete and np.any(
              2 * np.asarray(eta0) * ((1 + np.sqrt(lam)) ** 2 + np.asarray(gamma) / 2) / d_out >= 2)),
    *[Entry(f"linear.{f}", {"lam": LAM, "eps": EPS, "eta0": ETA0, "d_out": DOUT, "gamma": GAMMA,
                            "level": LEVEL, "init_scale": ALPHA, "discrete": Flag(), "wd_convention": WD},
            vec=True, cost=20, inf="inf: the generalisation accuracy never reaches level (documented); "
            "-inf where the train accuracy never does",
            nan="NaN where neither accuracy reaches level (documented: no grokking time)",
            raises=lambda discrete, lam, eta0, gamma, d_out, **k: discrete and np.any(
                2 * np.asarray(eta0) * ((1 + np.sqrt(lam)) ** 2 + np.asarray(gamma) / 2) / d_out >= 2))
      for f in ("grok_time",)],
    Entry("linear.grok_time_grid", {"lam": LAM, "gamma": GAMMA, "eps": EPS, "eta0": ETA0,
                                    "d_out": Pos(typ=(0.5, 5.0)), "level": LEVEL}, vec=True, cost=2,
          inf="inf where a loss never reaches L* (documented)", nan="dt is NaN where neither loss reaches L* (documented)"),
    Entry("linear.loss_train_late", {"t": TPOS, "lam": LAM, "eta0": ETA0, "d_out": DOUT,
                                     "order": Fixed(0, 1, bad=(2, -1, 0.5, True, "0", None))}, vec=True,
          inf="overflow: the late-time form grows like t^{-3/2} as t -> 0",
          raises=lambda lam, **k: np.any(np.asarray(lam) == 1.0)),
    *[Entry(f"linear.{f}", {"t": TPOS, "lam": LAM, "eta0": ETA0, "d_out": DOUT}, vec=True,
            inf="overflow: the late-time forms grow like a power of 1/t as t -> 0",
            raises=lambda lam, **k: np.any(np.asarray(lam) == 1.0))
      for f in ("loss_gen_late", "loss_gen_late_simple")],
    *[Entry(f"linear.{f}", {"lam": LAM1, "eps": EPS, "eta0": ETA0, "level": LEVEL}, vec=True,
            check=None if f == "grok_time_eq25" else _nonneg,
            nan="NaN where the Lambert-W argument leaves the real branch (documented)" if f == "grok_time_eq25" else None,
            inf="overflow as lam -> 1" if f != "grok_time_eq25" else "overflow as lam -> 1")
      for f in ("t_star_train_lambertw", "t_star_gen_lambertw", "grok_time_lambertw", "grok_time_eq25")],
    *[Entry(f"linear.{f}", {"lam": LAM1, "eta0": ETA0}, vec=True, inf="overflow: diverges as lam -> 1")
      for f in ("grok_time_asymptotic", "grok_time_near_one", "grok_time_wd_paper")],
    Entry("linear.t_star_gen_critical", {"eps": EPS, "eta0": ETA0, "level": LEVEL}, vec=True, check=_nonneg,
          inf="overflow: t* grows like a power of 1/eps"),
    Entry("linear.dout_max", {"lam": Real(0.0, 1.0, hi_closed=True, typ=(0.05, 1.0)),
                              "eps": Pos(typ=(1e-5, 0.1)), "eta0": Pos(typ=(1e-3, 0.1)),
                              "level": Unit()}, vec=True, cost=30),  # ~30 ms a scalar call (one search)
    Entry("linear.wd_asymptotes", {"lam": LAM, "gamma": GAMMA, "d_out": DOUT, "wd_convention": WD}, vec=True,
          check=_nonneg),
    Entry("linear.wd_asymptotes_small_gamma", {"lam": Pos(typ=(0.01, 0.97)), "gamma": GAMMA,
                                               "convention": Choice("corrected", "paper")}, vec=True,
          inf="overflow: polynomial in gamma, beyond 1.8e308 for gamma > 1e154"),
    Entry("linear.wd_gamma_max", {"lam": LAM, "eps": EPS, "d_out": DOUT, "level": LEVEL, "wd_convention": WD},
          vec=True, cost=3, check=_nonneg, inf="inf: the accuracy reaches level at any weight decay"),
    Entry("linear.init_scale_factor", {"alpha": ALPHA}, vec=True, check=_nonneg, inf="overflow: 1 + alpha^2"),
    Entry("linear.effective_eps", {"eps": EPS, "alpha": ALPHA}, vec=True, check=_nonneg,
          inf="overflow: 2 eps / (1 + alpha^2) for eps > 9e307"),
    *[Entry(f"linear.{f}", {"t": T, "lam": Pos(typ=(0.05, 5.0)), "eta0": Pos(typ=(1e-3, 0.05)),
                            "sigma2": NonNeg(typ=(0.0, 1.0)), "d_out": DOUT,
                            "mode": Choice("fixed", "fresh", "paper")}, vec=True, cost=4, check=_nonneg)
      for f in ("loss_train_label_noise", "loss_gen_label_noise")],
    Entry("linear.loss_two_layer", {"t": T, "lam": Pos(typ=(0.05, 5.0)),
                                    "eta0": Pos(typ=(1e-3, 0.05)), "d_out": DOUT,
                                    "D0_sq": NonNeg(typ=(0.0, 2.0), vec=False), "which": WHICH,
                                    "h": Pos(typ=(0.1, 2.0), vec=False)}, vec=True, cost=4, check=_nonneg),
    Entry("linear.modular_lambda", {"alpha": Real(0.0, 1.0, hi_closed=True, typ=(0.01, 1.0)),
                                    "p": Int(2, typ=(2, 200), ext=(10**9,))}, vec=True, check=_nonneg,
          inf="overflow: lambda ~ 1/(alpha p) for a subnormal alpha"),
    Entry("linear.fit_inverse_square", {"residuals": Choice("absolute", "log")},
          build=lambda n: st.tuples(st.floats(0.5, 2.0), st.floats(1.2, 3.0), st.integers(4, 8)).map(
              lambda a: {"lams": np.linspace(0.1, 0.9, a[2]),
                         "dts": a[0] * (a[1] - np.linspace(0.1, 0.9, a[2])) ** -2.0}),
          bad={"lams": lambda n, kw: st.sampled_from(array_bad(kw["lams"], ndim_fixed=False) + [kw["lams"][:2], -kw["lams"]]),
               "dts": lambda n, kw: st.sampled_from(array_bad(kw["dts"], ndim_fixed=False) + [kw["dts"][:-1], -kw["dts"]])},
          names={"lams": ("dts",), "dts": ("lams",)}, cost=2),
    Entry("linear.fig1_table", {"lams": Fixed((0.3, 0.7), (0.5, 1.2), bad=((0.5, -1.0), (0.5, float("nan")), (), "x")),
                                "epss": Fixed((1e-3,), (1e-2, 1e-4), bad=((0.0,), (float("inf"),), ())),
                                "eta0": Pos(typ=(1e-3, 0.05), vec=False), "level": Unit(vec=False)}, cost=15,
          nan="eq11 is NaN for lam >= 1 where eq. 11 is undefined (documented)",
          inf="inf where the accuracy never reaches level"),
    Entry("linear.fig2_table", {"d_outs": Fixed((1, 5), (20,), bad=((0,), (1.5,), (True,), ())),
                                "lams": Fixed((0.5,), (0.7, 0.9), bad=((-0.5,), (float("nan"),), ())),
                                "eps": Pos(typ=(1e-4, 1e-2), vec=False), "eta0": Pos(typ=(1e-3, 0.05), vec=False),
                                "level": Unit(vec=False)}, cost=20, inf="inf where the accuracy never reaches level",
          nan="grok_time is NaN where neither accuracy reaches level"),
    Entry("linear.fig3_table", {"gammas": Fixed((0.0, 1e-3), (0.01,), bad=((-1.0,), (float("nan"),), ())),
                                "lams": Fixed((0.5,), (0.9, 1.5), bad=((0.0,), (float("inf"),), ())),
                                "eps": Pos(typ=(1e-4, 1e-2), vec=False), "eta0": Pos(typ=(1e-3, 0.05), vec=False),
                                "level": Unit(vec=False), "d_out": DOUT}, cost=50,
          inf="inf = the accuracy never reaches level (documented)",
          nan="grok_time is NaN when both never reach level (documented)"),
    Entry("linear.fig5_table", {"eta0_t": Fixed((1.0, 10.0), (100.0,), bad=((0.0,), (-1.0,), (float("nan"),), ())),
                                "lam": Pos(typ=(0.1, 2.0), vec=False), "eta0": Pos(typ=(1e-3, 0.05), vec=False)},
          cost=5, raises=lambda lam, **k: lam == 1.0),
    Entry("linear.fig7_tables", {"eps": Pos(typ=(1e-4, 1e-2), vec=False), "eta0": Pos(typ=(1e-3, 0.05), vec=False),
                                 "level": Unit(vec=False), "lam_a": Pos(typ=(0.1, 1.5), vec=False),
                                 "gammas": Fixed((0.0, 0.01), bad=((-1.0,), ())),
                                 "d_outs": Fixed((1, 5), bad=((0,), (2.5,), ())),
                                 "lams": Fixed((0.5, 1.2), bad=((0.0,), (float("nan"),), ())),
                                 "parts": Fixed(("a",), ("b", "c"), bad=(("d",), (1,), None))}, cost=40,
          inf="inf = never (documented)", nan="NaN when both never reach level (documented)"),
    # ---------------------------------------------------------------- _mpgrid
    Entry("_mpgrid.loss_threshold_grid", {"eps": EPS, "d_out": Pos(typ=(0.5, 5.0)), "level": LEVEL}, vec=True,
          check=_nonneg, inf="overflow: L* ~ eps d_out / (2 P^-1(d_out/2, level)) beyond 1.8e308"),
    Entry("_mpgrid.wd_asymptote_grid", {"lam": LAM, "gamma": GAMMA, "d_out": Pos(typ=(0.5, 5.0)),
                                        "which": Choice("gen", "train")}, vec=True, check=_nonneg,
          inf="overflow: L(inf) / d_out for a subnormal d_out"),
    Entry("_mpgrid.wd_loss_grid", {"t": T, "lam": LAM, "gamma": GAMMA, "eta0": ETA0, "d_out": Pos(typ=(0.5, 5.0)),
                                   "which": Choice("gen", "train")}, vec=True, check=_nonneg,
          inf="overflow: L ~ 1/d_out beyond 1.8e308 for a subnormal d_out"),
    Entry("_mpgrid.log_wd_loss_grid", {"t": T, "lam": LAM, "gamma": GAMMA, "eta0": ETA0,
                                       "d_out": Pos(typ=(0.5, 5.0)), "which": Choice("gen", "train")}, vec=True,
          inf="overflow: -inf where log L is below -1.8e308 (no plateau and s lam_- beyond the double range)"),
    Entry("_mpgrid.mp_decay_grid", {"s": S, "lam": LAM, "gamma": GAMMA, "which": Choice("gen", "train")}, vec=True,
          inf="overflow: log D = -inf (and its log-slope) where log D is below -1.8e308 (s (lam_- + gamma/2) "
              "beyond the double range)"),
    Entry("_mpgrid.crossing_time_grid", {"which": Choice("train", "gen"), "lam": LAM, "gamma": GAMMA, "eps": EPS,
                                         "eta0": ETA0, "d_out": Pos(typ=(0.5, 5.0)), "level": LEVEL}, vec=True,
          check=_nonneg, inf="inf where the loss never reaches L* (documented)"),
]

