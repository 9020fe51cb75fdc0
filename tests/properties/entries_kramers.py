"""Registry entries: grokclocks.kramers (spec ``kramers``)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .kinds import (INF, NAN, Choice, Entry, Fixed, Flag, Func, Int, NonNeg, Pos, Real, Unit, array_bad, in_unit,
                    nonneg, seeded_array)

PEN = Choice("eq2", "half")
NORM = Choice("sum", "mean")
ALPHA = Real(0.0, 0.5, lo_closed=True, hi_closed=True, typ=(0.0, 0.5), vec=False)
ALPHA_V = Real(0.0, 0.5, lo_closed=True, hi_closed=True, typ=(0.0, 0.5))  # the swept closed forms
PMOD = Int(2, typ=(2, 9), capped=True)


def _net(vector: bool = False):
    @st.composite
    def s(draw):
        n, d, N = draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 5))
        C = draw(st.integers(2, 3)) if vector else None
        return {"X": draw(seeded_array((n, d))), "W": draw(seeded_array((N, d))),
                "a": draw(seeded_array((N,) if C is None else (N, C)))}
    return s()


def _net_bad(name, axis: int = 0):
    def bad(n, kw):
        v = kw[name]
        wrong = np.concatenate([v, v[:1] if axis == 0 else v[:, :1]], axis=axis)
        return st.sampled_from(array_bad(v)[:5] + [wrong, "x", None])
    return bad


NET_NAMES = {"X": ("W", "shapes"), "W": ("X", "a", "shapes"), "a": ("W", "shapes")}


def _psd(n):
    return seeded_array((n, n)).map(lambda A: A @ A.T + 0.1 * np.eye(n))


def _kernel_problem():
    @st.composite
    def s(draw):
        n = draw(st.integers(1, 5))
        return {"K_a": draw(_psd(n)), "y": draw(seeded_array((n,))), "r0": draw(seeded_array((n,)))}
    return s()


def _sq_bad(name):
    def bad(n, kw):
        K = kw[name]
        pool = array_bad(K)[:5] + [K[:, :-1] if K.shape[1] > 1 else np.ones((1, 2)), "K", None]
        if K.shape[0] > 1:
            pool.append(K + np.triu(np.ones_like(K), 1))
        return st.sampled_from(pool)
    return bad


def _vec_bad(name, length_of=None):
    def bad(n, kw):
        v = kw[name]
        return st.sampled_from(array_bad(v)[:5] + [np.append(v, 1.0), "v", None])
    return bad


def _ridge(test: bool = False):
    @st.composite
    def s(draw):
        n, D = draw(st.integers(1, 5)), draw(st.integers(1, 5))
        out = {"Phi": draw(seeded_array((n, D))), "y": draw(seeded_array((n,))), "theta0": draw(seeded_array((D,)))}
        if test:
            out["theta_teacher"] = draw(seeded_array((D,)))
        return out
    return s()


def _hess(d_min: int = 1):
    @st.composite
    def s(draw):
        d = draw(st.integers(d_min, 3))
        Q = np.linalg.qr(draw(seeded_array((d, d))) + 3 * np.eye(d))[0]
        em = 0.5 + draw(seeded_array((d,), "uniform"))
        es = 0.5 + draw(seeded_array((d,), "uniform"))
        es[0] = -es[0]
        return {"hess_min": Q @ np.diag(em) @ Q.T, "hess_saddle": Q @ np.diag(es) @ Q.T}
    return s()


def _hess_bad(name):
    def bad(n, kw):
        H = kw[name]
        flip = -H if name == "hess_min" else np.abs(H) + np.eye(H.shape[0])
        return st.sampled_from(array_bad(H)[:4] + [flip, np.zeros_like(H), "H", None, np.ones((2, 3))])
    return bad


def _records():
    @st.composite
    def s(draw):
        k = draw(st.integers(1, 8))
        steps = np.cumsum(1.0 + draw(seeded_array((k,), "uniform")) * 10)
        return {"steps": steps, "train_acc": np.sort(draw(seeded_array((k,), "uniform"))),
                "test_acc": np.sort(draw(seeded_array((k,), "uniform")))}
    return s()


def _acc_bad(name):
    def bad(n, kw):
        v = kw[name]
        return st.sampled_from([v * 100 + 2, v - 2, v.astype(np.complex128) + 1j, np.append(v, 0.5), "acc", None,
                                np.where(np.arange(v.size) == 0, np.nan, v)])
    return bad


def _dw(x):
    return (x * x - 1.0) ** 2


ENTRIES = [
    # lam = 0 is valid with allow_zero (the thorough profile drew lam = 0, allow_zero=True as an invalid call when lam
    # was modelled as > 0): lam >= 0, and DomainError the documented answer for a zero without allow_zero
    Entry("kramers.decay_rate", {"lam": NonNeg(typ=(0.0, 10.0)), "penalty": PEN, "allow_zero": Flag()}, vec=True,
          raises=lambda lam, allow_zero=False, **k: not allow_zero and bool(np.any(np.asarray(lam) == 0.0)),
          check=nonneg, inf="overflow: 2 lam for lam > 9e307"),
    Entry("kramers.kernel_rate_factor", {"n": Int(1, typ=(1, 1000), ext=(10**18,), vec=True), "loss_norm": NORM},
          vec=True, check=nonneg),
    Entry("kramers.two_layer_forward", {"alpha": ALPHA}, build=lambda n: st.one_of(_net(), _net(True)),
          bad={"X": _net_bad("X", 1), "W": _net_bad("W"), "a": _net_bad("a")}, names=NET_NAMES),
    Entry("kramers.param_count", {"N": Int(1, typ=(1, 1000), ext=(10**6,)), "p": Int(1, typ=(2, 100)),
                                  "n_out": Int(1, typ=(1, 10))}, check=nonneg),
    Entry("kramers.n_train", {"p": Int(2, typ=(2, 200), ext=(10**9,), vec=True), "rho": Unit()}, vec=True,
          raises=lambda p, rho: not np.all((np.floor(rho * np.asarray(p, float) ** 2) >= 1)
                                           & (np.floor(rho * np.asarray(p, float) ** 2) <= np.asarray(p, float) ** 2 - 1)),
          check=nonneg),
    Entry("task.modadd_inputs", {"p": PMOD}),
    Entry("task.modadd_split", {"p": PMOD, "rho": Real(0.0, 1.0, typ=(0.3, 0.7), vec=False),
                                   "seed": Int(0, typ=(0, 2**31), ext=(2**63 - 1,))},
          raises=lambda p, rho, seed: not 1 <= int(rho * p * p) <= p * p - 1),
    Entry("kramers.milestones", {"q_train": Real(0.0, 1.0, hi_closed=True, typ=(0.5, 1.0), vec=False),
                                 "q_test": Real(0.0, 1.0, hi_closed=True, typ=(0.5, 1.0), vec=False)},
          build=lambda n: _records(),
          bad={"steps": lambda n, kw: st.sampled_from(array_bad(kw["steps"])[:5] + [
              np.append(kw["steps"], kw["steps"][-1]), np.append(kw["steps"], 1e9), "s"]),
               "train_acc": _acc_bad("train_acc"), "test_acc": _acc_bad("test_acc")},
          names={"steps": ("train_acc", "test_acc"), "train_acc": ("steps",), "test_acc": ("steps",)},
          check=nonneg),
    Entry("kramers.two_layer_jacobian", {"alpha": ALPHA}, build=lambda n: _net(),
          bad={"X": _net_bad("X", 1), "W": _net_bad("W"), "a": _net_bad("a")}, names=NET_NAMES),
    Entry("kramers.ntk_decomposition", {"alpha": ALPHA}, build=lambda n: st.one_of(_net(), _net(True)),
          bad={"X": _net_bad("X", 1), "W": _net_bad("W"), "a": _net_bad("a")}, names=NET_NAMES),
    Entry("kramers.relu_nngp_modadd", {"p": Int(2, typ=(2, 1000), ext=(10**15,))}, check=nonneg),
    Entry("kramers.relu_feature_kernel_modadd", {"p": Int(2, typ=(2, 1000), ext=(10**15,))}, check=nonneg),
    Entry("kramers.nngp_kernel_matrix", {"feature": Flag()},
          build=lambda n: st.integers(2, 9).flatmap(lambda p: st.tuples(
              st.lists(st.integers(0, p - 1), min_size=1, max_size=6), st.integers(0, 10**6)).map(
              lambda t: {"p": p, "a_idx": np.asarray(t[0]), "b_idx": np.asarray(t[0][::-1])})),
          bad={"a_idx": lambda n, kw: st.sampled_from([kw["a_idx"] + kw["p"], kw["a_idx"] - kw["p"], kw["a_idx"] + 0.5,
                                                        kw["a_idx"].astype(float) * np.nan, np.append(kw["a_idx"], 0),
                                                        "a", None, kw["a_idx"] > 0]),
               "b_idx": lambda n, kw: st.sampled_from([kw["b_idx"] + kw["p"], -1 - kw["b_idx"], kw["b_idx"][None, :]]),
               "p": lambda n, kw: st.sampled_from([1, 2.5, "p", True, None])},
          names={"a_idx": ("b_idx",), "b_idx": ("a_idx",), "p": ("a_idx", "b_idx")}),
    Entry("kramers.modadd_nngp_spectrum", {"p": Int(2, typ=(2, 50), ext=(10**15,))}),
    Entry("kramers.readout_residual", {"lam": NonNeg(typ=(0.0, 1.0), vec=False), "t": NonNeg(typ=(0.0, 100.0)),
                                       "penalty": PEN, "loss_norm": NORM}, vec=True, build=lambda n: _kernel_problem(),
          bad={"K_a": _sq_bad("K_a"), "y": _vec_bad("y"), "r0": _vec_bad("r0")},
          names={"K_a": ("y", "r0"), "y": ("K_a", "r0"), "r0": ("K_a", "y")}),
    Entry("kramers.readout_kernel_norm", {"N": Int(1, typ=(1, 10**4), ext=(10**18,), vec=True),
                                          "p": Int(2, typ=(2, 200), vec=True), "alpha": ALPHA_V}, vec=True,
          check=nonneg),
    Entry("kramers.feature_kernel_norm", {"N": Int(1, typ=(1, 10**4), ext=(10**18,), vec=True),
                                          "p": Int(2, typ=(2, 200), vec=True), "alpha": ALPHA_V,
                                          "a_std": Pos(typ=(0.01, 10.0), optional=True)}, vec=True,
          check=nonneg, inf="overflow: N sigma_a^2 (1 + 2p)/3 beyond 1.8e308"),
    Entry("kramers.readout_timescale", {"which": Choice("max", "min"), "eta": Pos(typ=(1e-3, 0.1), vec=False, optional=True),
                                        "lam": NonNeg(typ=(0.0, 1.0), vec=False), "penalty": PEN, "loss_norm": NORM},
          build=lambda n: _kernel_problem().map(lambda d: {"K_a": d["K_a"]}), bad={"K_a": _sq_bad("K_a")}, check=nonneg,
          inf="inf: a zero mode with lam = 0 never relaxes (documented)"),
    Entry("kramers.initial_timescales", {"alpha": ALPHA},
          build=lambda n: _net().flatmap(lambda d: seeded_array((d["X"].shape[0],)).map(lambda y: {**d, "y": y})),
          bad={"X": _net_bad("X", 1), "W": _net_bad("W"), "a": _net_bad("a"), "y": _vec_bad("y")},
          names={**NET_NAMES, "y": ("X",)}, inf="inf: a zero initial velocity (documented: no motion)"),
    Entry("kramers.feature_timescale_estimate", {"N": Int(1, typ=(1, 10**4), ext=(10**18,), vec=True), "alpha": ALPHA_V,
                                                 "a_std": Pos(typ=(0.01, 10.0), optional=True)}, vec=True, check=nonneg,
          inf="overflow: N^{2 alpha} / (N sigma_a^2) for a subnormal a_std"),
    Entry("kramers.separation_exponent", {"alpha": ALPHA_V,
                                          "measure": Choice("paper_claim", "paper_algebra", "weights", "kernel",
                                                            "kernel_integrated"),
                                          "a_init": Choice("paper", "unit")},
          raises=lambda measure, a_init, **k: measure.startswith("paper") and a_init != "paper", vec=True),
    *[Entry(f"kramers.{f}", {"init_scale": Real(1.0, INF, typ=(1.5, 1e6)), "lam": Pos(typ=(1e-4, 1.0)), "penalty": PEN},
            vec=True, check=nonneg, inf="overflow: ln s / gamma for a subnormal lam")
      for f in ("implicit_bias_time_estimate",)],
    Entry("kramers.ridge_gf", {"lam": Pos(typ=(1e-3, 1.0), vec=False), "t": NonNeg(typ=(0.0, 100.0)), "penalty": PEN},
          vec=True, build=lambda n: _ridge(),
          bad={"Phi": _net_bad("Phi", 1), "y": _vec_bad("y"), "theta0": _vec_bad("theta0")},
          names={"Phi": ("y", "theta0"), "y": ("theta0", "Phi"), "theta0": ("y", "Phi")}),
    Entry("kramers.ridge_gd", {"lam": Pos(typ=(1e-3, 1.0), vec=False), "eta": Pos(typ=(1e-3, 0.05), vec=False),
                               "k": Fixed(0, 7, 1000, (0, 3), bad=(-1, 1.5, "k", None, True, [[1]])),
                               "penalty": PEN, "allow_unstable": Fixed(False)},
          build=lambda n: _ridge(), bad={"Phi": _net_bad("Phi", 1), "y": _vec_bad("y"), "theta0": _vec_bad("theta0")},
          names={"Phi": ("y", "theta0"), "y": ("theta0", "Phi"), "theta0": ("y", "Phi")},
          raises=lambda Phi, eta, lam, penalty, **k: eta * (np.linalg.norm(Phi, 2) ** 2 / Phi.shape[0] + lam) >= 1.9,
          inf="overflow: an unstable step (allow_unstable) grows like |1 - eta mu|^k"),
    Entry("kramers.ridge_losses", {"lam": Pos(typ=(1e-3, 1.0), vec=False), "t": NonNeg(typ=(0.0, 100.0)), "penalty": PEN},
          vec=True, build=lambda n: _ridge(test=True),
          bad={"Phi": _net_bad("Phi", 1), "y": _vec_bad("y"), "theta0": _vec_bad("theta0"),
               "theta_teacher": _vec_bad("theta_teacher")},
          names={"Phi": ("y", "theta0", "theta_teacher"), "y": ("theta0", "Phi"), "theta0": ("y", "Phi"),
                 "theta_teacher": ("Phi", "D")}, check=nonneg),
    Entry("kramers.ridge_timescales", {"lam": Pos(typ=(1e-3, 1.0), vec=False), "penalty": PEN},
          build=lambda n: _ridge().map(lambda d: {"Phi": d["Phi"]}),
          bad={"Phi": lambda n, kw: st.sampled_from(array_bad(kw["Phi"])[:6])}, check=nonneg,
          inf="overflow: 1/gamma for a subnormal lam"),
    Entry("kramers.ridge_delay", {"lam": Pos(typ=(1e-2, 1.0), vec=False), "eps_train": Pos(typ=(1e-4, 0.1), vec=False),
                                  "eps_test": Pos(typ=(1e-4, 0.1), vec=False), "penalty": PEN},
          build=lambda n: _ridge(test=True),
          bad={"Phi": _net_bad("Phi", 1), "y": _vec_bad("y"), "theta0": _vec_bad("theta0"),
               "theta_teacher": _vec_bad("theta_teacher")},
          names={"Phi": ("y", "theta0", "theta_teacher"), "y": ("theta0", "Phi"), "theta0": ("y", "Phi"),
                 "theta_teacher": ("Phi", "D")}, cost=3,
          inf="inf where a threshold is not reached by t_max (documented)", nan="ratio is NaN when both times are inf"),
    Entry("kramers.ridge_grok_time_asymptotic", {"null_norm2": Pos(typ=(1e-3, 10.0)),
                                                 "eps_test": Pos(typ=(1e-4, 0.1)),
                                                 "lam": Pos(typ=(1e-3, 1.0)), "penalty": PEN}, vec=True,
          raises=lambda null_norm2, eps_test, **k: bool(np.any(np.asarray(null_norm2) <= 2 * np.asarray(eps_test))),
          inf="overflow: 1/(2 gamma) for a subnormal lam"),
    Entry("kramers.rf_interpolant_norm", build=lambda n: _kernel_problem().map(lambda d: {"K_a": d["K_a"], "y": d["y"]}),
          bad={"K_a": _sq_bad("K_a"), "y": _vec_bad("y")}, names={"K_a": ("y",), "y": ("K_a",)}, check=nonneg),
    *[Entry(f"kramers.{f}", {"delta_F": Pos(typ=(0.1, 5.0)), "T": Pos(typ=(0.1, 5.0))}, vec=True,
            build=lambda n: _hess(), bad={"hess_min": _hess_bad("hess_min"), "hess_saddle": _hess_bad("hess_saddle")},
            names={"hess_min": ("hess_saddle", "degenerate"), "hess_saddle": ("hess_min", "degenerate")},
            check=None if f.startswith("log") else nonneg,
            inf="overflow: delta_F / T beyond 1.8e308 (log time), its exp (time); the rate underflows to 0")
      for f in ("eyring_kramers_time", "log_eyring_kramers_time", "eyring_kramers_rate")],
    *[Entry(f"kramers.{f}", {"curv_min": Pos(typ=(0.1, 10.0)), "curv_saddle": Real(-INF, 0.0, typ=(-10.0, -0.1)),
                             "delta_F": Pos(typ=(0.1, 5.0)), "T": Pos(typ=(0.1, 5.0))}, vec=True,
            check=None if f.startswith("log") else nonneg,
            inf=None if f == "kramers_time_1d" else "overflow: delta_F / T beyond 1.8e308 (the log of the time)")
      for f in ("kramers_time_1d", "log_kramers_time_1d")],
    Entry("kramers.kramers_ratio_first_order_estimate",
          {"derivs_min": Fixed((8.0, 24.0, 24.0), bad=((-1.0, 0.0, 0.0), ("a",), (), None, (np.nan, 1.0, 1.0))),
           "derivs_saddle": Fixed((-4.0, 0.0, 24.0), bad=((4.0, 0.0, 0.0), ("a",), (), None)),
           "T": Pos(typ=(0.01, 1.0))}, vec=True),
    *[Entry(f"kramers.{f}", {"F": Func(_dw, optional=False) if False else Fixed(_dw, (0.0, 0.0, -2.0, 0.0, 1.0),
                                                                               bad=(3.0, "F", None, (0.0, 1.0))),
                             "x0": Fixed(-1.0, -0.5, bad=(0.5, np.nan, "x", None)),
                             "b": Fixed(0.0, 0.2, bad=(-2.0, np.inf, "b")),
                             "T": Pos(typ=(0.2, 2.0), vec=False)}, cost=3,
            check=None if f.startswith("log") else nonneg, names={"x0": ("b", "lower"), "b": ("x0",)})
      for f in ("mfpt_1d_exact", "log_mfpt_1d_exact")],
    Entry("kramers.mfpt_2d_exact", {"F": Fixed(lambda x, y: (x * x - 1) ** 2 + y * y, bad=(3.0, None, "F")),
                                    "x0": Fixed((-1.0, 0.0), bad=((5.0, 0.0), (np.nan, 0.0), "x", (1.0,))),
                                    "b": Fixed(0.0, bad=(np.nan, "b", -3.0)), "T": Pos(typ=(0.3, 1.0), vec=False),
                                    "h": Fixed(0.1, bad=(0.0, -0.1, np.nan, "h")), "richardson": Flag()}, cost=30,
          names={"x0": ("box", "b"), "b": ("x0", "box")}),
    Entry("kramers.test_potential", {"name": Choice("double_well_1d", "saddle_2d"), "h": Pos(typ=(0.1, 5.0), vec=False)},
          inf="overflow: the curvatures 8h beyond 1.8e308"),
    Entry("kramers.continuity_correction_shift", {"T": Pos(typ=(1e-3, 5.0)), "dt": Pos(typ=(1e-4, 0.1))}, vec=True,
          check=nonneg),
    Entry("kramers.arrhenius_barrier", {"delay_ratio": Pos(typ=(1.0, 1e6)),
                                        "prefactor_ratio": Pos(typ=(0.1, 10.0))}, vec=True),
    Entry("kramers.t_eff_sgd", {"eta": Pos(typ=(1e-4, 1.0)), "trace_sigma": NonNeg(typ=(0.0, 10.0)),
                                "batch_size": Int(1, typ=(1, 512)), "n_params": Int(1, typ=(1, 10**6), optional=True)},
          vec=True,
          check=nonneg, inf="overflow: eta tr(Sigma) / (2B) beyond 1.8e308"),
    Entry("kramers.t_eff_sgd_direction", {"eta": Pos(typ=(1e-4, 1.0), vec=False), "batch_size": Int(1, typ=(1, 512))},
          build=lambda n: st.integers(1, 4).flatmap(lambda d: st.tuples(seeded_array((d, d)), seeded_array((d,))).map(
              lambda t: {"sigma": t[0] @ t[0].T, "direction": t[1] + 0.1})),
          bad={"sigma": lambda n, kw: st.sampled_from(array_bad(kw["sigma"])[:4] + [-kw["sigma"] - np.eye(len(kw["direction"])),
                                                                                    "s", None]),
               "direction": lambda n, kw: st.sampled_from(array_bad(kw["direction"])[:4] + [0 * kw["direction"],
                                                                                            np.append(kw["direction"], 1.0)])},
          names={"sigma": ("direction",), "direction": ("sigma",)}, check=nonneg,
          inf="overflow: eta e^T Sigma e / (2B) beyond 1.8e308"),
    Entry("kramers.sgd_stationary_temperature_1d", {"eta": Pos(typ=(1e-4, 0.1)), "sigma2": NonNeg(typ=(0.0, 10.0)),
                                                    "batch_size": Int(1, typ=(1, 512)), "curvature": Pos(typ=(0.1, 10.0))},
          vec=True, raises=lambda eta, curvature, **k: bool(np.any(np.asarray(eta) * np.asarray(curvature) >= 2)),
          check=nonneg,
          inf="overflow: eta sigma^2 / (B (2 - eta h)) beyond 1.8e308"),
    Entry("kramers.t_eff_fullbatch_heuristic", {"eta": Pos(typ=(1e-4, 1.0)),
                                                "trace_hessian": Real(typ=(-10.0, 100.0)),
                                                "coef": Real(typ=(0.0, 10.0))}, vec=True,
          inf="overflow: coef eta^2 tr H beyond 1.8e308"),
    Entry("kramers.spectral_delay_ratio", {"eta": Pos(typ=(1e-3, 0.1), optional=True)}, vec=True,
          build=lambda n: seeded_array((4,), "positive").map(lambda e: {"eigs": e}),
          bad={"eigs": lambda n, kw: st.sampled_from(array_bad(kw["eigs"], ndim_fixed=False)[:5] + [-kw["eigs"], "e"])},
          raises=lambda eigs, eta: eta is not None and bool(np.any(np.asarray(eta) * float(np.max(eigs)) >= 1.0)),
          check=nonneg,
          inf="overflow: a condition number beyond 1.8e308"),
    *[Entry(f"kramers.{f}", {"mechanism": Fixed("ridge"), "mu_min": Pos(typ=(1e-3, 10.0)),
                             "lam": Pos(typ=(1e-3, 1.0)), "penalty": PEN}, vec=True,
            bad={"mechanism": lambda n, kw: st.sampled_from(["nope", None, 3]),
                 "foo": lambda n, kw: st.sampled_from([1.0, "x"])},
            names={"foo": ("unknown",)}, check=nonneg, inf="overflow: mu_min / gamma for a subnormal lam")
      for f in ("delay_scaling_estimate",)],
    Entry("kramers.headline_record"),
]

