"""Registry entries: grokclocks.repulsion (spec ``repulsion``)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .kinds import (INF, NAN, Choice, Entry, Fixed, Flag, Int, NonNeg, Pos, Real, Unit, array_bad, in_unit, nonneg,
                    seeded_array)

ETA = Pos(typ=(1e-4, 10.0), vec=False)


def _pairs():
    @st.composite
    def s(draw):
        M = draw(st.integers(2, 6))
        n = draw(st.integers(1, 6))
        a = np.asarray(draw(st.lists(st.integers(0, M - 1), min_size=n, max_size=n)))
        b = np.asarray(draw(st.lists(st.integers(0, M - 1), min_size=n, max_size=n)))
        return {"a": a, "b": b, "M": M}
    return s()


def _idx_bad(name, bound):
    def bad(n, kw):
        v = np.asarray(kw[name])
        m = kw[bound] if isinstance(bound, str) else bound(kw)
        return st.sampled_from([v + m, v - m - 1, v + 0.5, v.astype(float) * NAN, v.astype(str), "i", None,
                                v.astype(np.complex128) + 1j, v > 0])
    return bad


def _tian(with_y: bool = False, activation: bool = True):
    @st.composite
    def s(draw):
        M = draw(st.integers(2, 4))
        K = draw(st.integers(1, 5))
        n = draw(st.integers(1, 6))
        a = np.asarray(draw(st.lists(st.integers(0, M - 1), min_size=n, max_size=n)))
        b = np.asarray(draw(st.lists(st.integers(0, M - 1), min_size=n, max_size=n)))
        X = np.zeros((n, 2 * M)); X[np.arange(n), a] = 1; X[np.arange(n), M + b] = 1
        out = {"W": draw(seeded_array((2 * M, K))), "Vout": draw(seeded_array((K, M))), "X": X}
        if with_y:
            out["y"] = (a + b) % M
            out["M"] = M
        return out
    return s()


def _mat_bad(name):
    def bad(n, kw):
        v = kw[name]
        return st.sampled_from(array_bad(v)[:5] + [v[:, :-1] if v.shape[1] > 1 else np.ones((v.shape[0], 9)), "m", None])
    return bad


TIAN_NAMES = {"W": ("X", "Vout", "shapes"), "Vout": ("W", "M", "shapes"), "X": ("W", "shapes"), "y": ("Y_hat", "X", "M"),
              "M": ("y", "Vout", "W", "X", "Y_hat", "F")}


def _features(min_k: int = 2):
    @st.composite
    def s(draw):
        n = draw(st.integers(2, 6))
        K = draw(st.integers(min_k, 6))
        F = draw(seeded_array((n, K)))
        return {"F_tilde": F - F.mean(axis=0)}
    return s()


def _ft_bad(n, kw):
    F = kw["F_tilde"]
    return st.sampled_from(array_bad(F)[:5] + ["F", None] + ([F[:, :1]] if F.shape[1] > 1 else []))


def _ft_bad_any_k(n, kw):
    F = kw["F_tilde"]
    return st.sampled_from(array_bad(F)[:5] + ["F", None])


def _pair_jl():
    return _features().flatmap(lambda d: st.tuples(st.integers(0, d["F_tilde"].shape[1] - 1),
                                                   st.integers(1, d["F_tilde"].shape[1] - 1)).map(
        lambda t: {**d, "j": np.asarray([t[0]]), "l": np.asarray([(t[0] + t[1]) % d["F_tilde"].shape[1]])}))


def _jl_bad(name):
    return _idx_bad(name, lambda kw: kw["F_tilde"].shape[1])


def _deltas():
    @st.composite
    def s(draw):
        T = draw(st.integers(3, 10))
        P = draw(st.integers(1, 5))
        return {"deltas": draw(seeded_array((T, P)))}
    return s()


def _gaps(k=1):
    return st.integers(5, 30).flatmap(lambda T: seeded_array((T,) if k == 1 else (k, T), "positive"))


ENTRIES = [
    Entry("repulsion.one_hot_pairs", build=lambda n: _pairs(),
          bad={"a": _idx_bad("a", "M"), "b": _idx_bad("b", "M"), "M": lambda n, kw: st.sampled_from([1, 2.5, "M", True, None])},
          names={"a": ("b",), "b": ("a",), "M": ("a", "b")}),
    Entry("repulsion.tian_forward", {"activation": Choice("sqr", "relu")}, build=lambda n: _tian(),
          bad={k: _mat_bad(k) for k in ("W", "Vout", "X")}, names=TIAN_NAMES),
    Entry("repulsion.tian_mse_loss", {"form": Choice("code", "paper")},
          build=lambda n: _tian(True).flatmap(lambda d: seeded_array((d["X"].shape[0], d["M"])).map(
              lambda Y: {"Y_hat": Y, "y": d["y"], "M": d["M"]})),
          bad={"Y_hat": _mat_bad("Y_hat"), "y": _idx_bad("y", "M"), "M": lambda n, kw: st.sampled_from([1, 2.5, "M", None])},
          names={"Y_hat": ("y", "M"), "y": ("Y_hat", "M"), "M": ("Y_hat", "y")}, check=nonneg),
    Entry("repulsion.tian_loss_grad", {"activation": Choice("sqr", "relu")}, build=lambda n: _tian(True),
          bad={**{k: _mat_bad(k) for k in ("W", "Vout", "X")}, "y": _idx_bad("y", "M"),
               "M": lambda n, kw: st.sampled_from([1, 2.5, "M", None])}, names=TIAN_NAMES),
    Entry("repulsion.adam_l2_update", {"step": Int(1, typ=(1, 1000), ext=(10**15,)), "lr": Pos(typ=(1e-5, 0.1), vec=False),
                                       "eta": NonNeg(typ=(0.0, 0.1), vec=False), "b1": Real(0.0, 1.0, lo_closed=True, typ=(0.0, 0.99), vec=False),
                                       "b2": Real(0.0, 1.0, lo_closed=True, typ=(0.0, 0.999), vec=False), "eps": Pos(typ=(1e-12, 1e-6), vec=False)},
          build=lambda n: st.integers(1, 5).flatmap(lambda k: st.tuples(*(seeded_array((k,)) for _ in range(4)))).map(
              lambda t: {"param": t[0], "grad": t[1], "m": t[2], "v": np.abs(t[3])}),
          bad={"param": lambda n, kw: st.sampled_from(array_bad(kw["param"])[:5] + [np.append(kw["param"], 1.0)]),
               "grad": lambda n, kw: st.sampled_from(array_bad(kw["grad"])[:5] + [np.append(kw["grad"], 1.0)]),
               "v": lambda n, kw: st.sampled_from([-1.0 - kw["v"], kw["v"] * NAN])},
          names={"param": ("grad", "m", "v"), "grad": ("param", "m", "v"), "v": ("param",)},
          inf="overflow: a step on parameters near 1.8e308"),
    Entry("repulsion.tian_setup", {"M": Int(2, typ=(2, 100)), "K": Int(1, typ=(1, 4096)), "eta": NonNeg(typ=(0.0, 1e-2), vec=False),
                                   "lr": Pos(typ=(1e-5, 0.1), vec=False), "epochs": Int(1, typ=(1, 1000)),
                                   "activation": Choice("sqr", "relu"), "window": Int(2, typ=(2, 50))},
          build=lambda n: st.integers(1, 3).map(lambda k: {"n_train": k}),
          bad={"n_train": lambda n, kw: st.sampled_from([0, 10**9, 1.5, "n", True, None])}, names={"n_train": ("M",)}),
    Entry("repulsion.tian_init_bounds", {"M": Int(2, typ=(2, 10**6), ext=(2**62,)), "K": Int(1, typ=(1, 10**6), ext=(2**62,))},
          check=nonneg),
    Entry("repulsion.center_features", build=lambda n: _features(1).map(lambda d: {"F": d["F_tilde"] + 1.0}),
          bad={"F": lambda n, kw: st.sampled_from(array_bad(kw["F"])[:6] + ["F", None])}),
    Entry("repulsion.feature_gram_inverse", {"eta": ETA, "method": Choice("auto", "woodbury", "direct", "paper_eq4")},
          build=lambda n: _features(1), bad={"F_tilde": _ft_bad_any_k},
          inf="overflow: 1/eta for a subnormal eta"),
    Entry("repulsion.feature_gram_inverse_paper_eq4", {"eta": ETA}, build=lambda n: _features(1), bad={"F_tilde": _ft_bad_any_k},
          inf="overflow: 1/eta for a subnormal eta"),
    Entry("repulsion.top_similar_pairs", build=lambda n: _features().flatmap(
        lambda d: st.integers(1, d["F_tilde"].shape[1] * (d["F_tilde"].shape[1] - 1) // 2).map(lambda k: {**d, "k": k})),
          bad={"F_tilde": _ft_bad, "k": lambda n, kw: st.sampled_from([0, 10**6, 1.5, "k", True, None])},
          names={"F_tilde": ("k",), "k": ("F_tilde",)}),
    *[Entry(f"repulsion.{f}", {"eta": ETA}, build=lambda n: _pair_jl(),
            bad={"F_tilde": _ft_bad, "j": _jl_bad("j"), "l": _jl_bad("l")},
            names={"F_tilde": ("j", "l"), "j": ("l",), "l": ("j",)},
            inf="overflow: eta times a huge inverse")
      for f in ("leave_two_out_residual", "full_projector_residual", "sign_rule_terms")],
    Entry("repulsion.sign_match_fraction", {"eta": ETA, "residual": Choice("exact", "full")},
          build=lambda n: _features().flatmap(lambda d: st.integers(1, d["F_tilde"].shape[1] * (d["F_tilde"].shape[1] - 1) // 2).map(
              lambda k: {**d, "k": k})),
          bad={"F_tilde": _ft_bad, "k": lambda n, kw: st.sampled_from([0, 10**6, 1.5, "k", True, None])},
          names={"F_tilde": ("k",), "k": ("F_tilde",)}, check=in_unit,
          nan="NaN when no pair qualifies (documented)"),
    Entry("repulsion.repulsion_fraction", {"eta": ETA},
          build=lambda n: _features().flatmap(lambda d: st.integers(1, d["F_tilde"].shape[1] * (d["F_tilde"].shape[1] - 1) // 2).map(
              lambda k: {**d, "k": k})),
          bad={"F_tilde": _ft_bad, "k": lambda n, kw: st.sampled_from([0, 10**6, 1.5, "k", True, None])},
          names={"F_tilde": ("k",), "k": ("F_tilde",)}, check=in_unit,
          nan="NaN when no top pair has S > 0 (documented)"),
    Entry("repulsion.lagged_inner_products", {"chunk": Int(1, typ=(1, 64))},
          build=lambda n: _deltas().flatmap(lambda d: st.integers(2, d["deltas"].shape[0]).map(lambda w: {**d, "window": w})),
          bad={"deltas": lambda n, kw: st.sampled_from(array_bad(kw["deltas"])[:6]),
               "window": lambda n, kw: st.sampled_from([0, 10**6, 1.5, "w", True])},
          names={"deltas": ("window",), "window": ("deltas",)},
          nan="entries with s < d (no earlier update) are NaN by construction (documented)"),
    Entry("repulsion.rolling_gram_eigenvalues",
          build=lambda n: _deltas().flatmap(lambda d: st.integers(2, d["deltas"].shape[0]).flatmap(
              lambda w: st.integers(1, w).map(lambda k: {**d, "window": w, "k": k}))),
          bad={"deltas": lambda n, kw: st.sampled_from(array_bad(kw["deltas"])[:6]),
               "window": lambda n, kw: st.sampled_from([1, 10**6, 1.5, "w", True]),
               "k": lambda n, kw: st.sampled_from([0, kw["window"] + 1, 1.5, "k"])},
          names={"deltas": ("window",), "window": ("deltas", "k"), "k": ("window",)},
          nan="rows before the first full window are NaN (documented)"),
    Entry("repulsion.rolling_gram_from_lagged",
          build=lambda n: _deltas().flatmap(lambda d: st.integers(2, d["deltas"].shape[0]).flatmap(
              lambda w: st.integers(1, w).map(lambda k: (d, w, k)))).map(
              lambda t: {"lagged": __import__("grokclocks.repulsion", fromlist=["x"]).lagged_inner_products(t[0]["deltas"], t[1]),
                         "k": t[2]}),
          bad={"lagged": lambda n, kw: st.sampled_from([kw["lagged"][:, :0], kw["lagged"].astype(str), "L", None,
                                                        np.full_like(kw["lagged"], INF)]),
               "k": lambda n, kw: st.sampled_from([0, 10**6, 1.5, "k"])},
          names={"lagged": ("k",), "k": ("lagged", "w")}, nan="rows before the first full window are NaN (documented)"),
    Entry("repulsion.window_gram_eigenvalues", build=lambda n: st.integers(1, 4).flatmap(
        lambda m: st.tuples(seeded_array((2, m, 3)), st.integers(1, m))).map(lambda t: {"window_deltas": t[0], "k": t[1]}),
          bad={"window_deltas": lambda n, kw: st.sampled_from(array_bad(kw["window_deltas"])[:5]),
               "k": lambda n, kw: st.sampled_from([0, 1.5, "k", None])},
          names={"window_deltas": ("k",), "k": ("window_deltas", "m")},
          check=lambda out, kw: None if np.all(out >= -1e-12 * np.max(np.abs(out), initial=1.0)) else f"negative eigenvalue {out.min()}"),
    Entry("repulsion.eigengap", {"i": Fixed(1, 2), "j": Fixed(3)},
          build=lambda n: seeded_array((6, 4), "positive").map(lambda a: {"eigs": -np.sort(-a, axis=1)}),
          bad={"eigs": lambda n, kw: st.sampled_from(array_bad(kw["eigs"], ndim_fixed=False)[1:4] + ["e"]),
               "i": lambda n, kw: st.sampled_from([0, 99, 1.5, "i"]), "j": lambda n, kw: st.sampled_from([99, 1.5, 0])},
          names={"eigs": ("i", "j"), "i": ("j", "eigs"), "j": ("i", "eigs")}, check=nonneg,
          inf="inf where sigma_j = 0 (documented)", nan="NaN rows stay NaN (documented)"),
    Entry("repulsion.slope_detector", {"threshold": Real(typ=(0.0, 0.1), vec=False), "floor": Pos(typ=(1e-8, 1e-3), vec=False)},
          build=lambda n: _gaps().flatmap(lambda g: st.tuples(st.integers(1, g.size - 1), st.integers(0, g.size)).map(
              lambda t: {"gap": g, "lag": t[0], "t_min": t[1]})),
          bad={"gap": lambda n, kw: st.sampled_from([np.append(kw["gap"], INF), kw["gap"].astype(str), "g", None, kw["gap"][None]]),
               "lag": lambda n, kw: st.sampled_from([0, kw["gap"].size, 1.5, "l", True]),
               "t_min": lambda n, kw: st.sampled_from([-1, 1.5, "t", None])},
          names={"gap": ("lag",), "lag": ("gap",)}, nan="the slope series is NaN before lag (documented)"),
    Entry("repulsion.late_median_gap", build=lambda n: _gaps(2).map(lambda g: {"gaps": g, "window": (2, g.shape[1] - 1)}),
          bad={"gaps": lambda n, kw: st.sampled_from([kw["gaps"].astype(str), "g", None, np.full_like(kw["gaps"], INF)]),
               "window": lambda n, kw: st.sampled_from([(3, 1), (-1, 2), (0.5, 2), "w", None, (1,)])},
          names={"gaps": ("window",), "window": ("gaps",)}, check=nonneg),
    Entry("repulsion.late_stage_separation", build=lambda n: st.tuples(_gaps(2), _gaps(2)).map(
        lambda t: {"gaps_grok": t[0], "gaps_control": t[1], "window": (1, min(t[0].shape[1], t[1].shape[1]) - 1)}),
          bad={"gaps_grok": lambda n, kw: st.sampled_from([kw["gaps_grok"].astype(str), "g", None]),
               "gaps_control": lambda n, kw: st.sampled_from([-kw["gaps_control"] * 0, "g", None]),
               "window": lambda n, kw: st.sampled_from([(3, 1), (-1, 2), "w", None])},
          names={"gaps_grok": ("window",), "gaps_control": ("window", "median"), "window": ("gaps_grok", "gaps_control")},
          check=nonneg, inf="inf when the control median is 0"),
    Entry("repulsion.rho_tian", {"variant": Choice("code", "paper"), "method": Choice("closed", "direct")},
          build=lambda n: _features(1).map(lambda d: {"F": d["F_tilde"] + 0.5}),
          bad={"F": lambda n, kw: st.sampled_from(array_bad(kw["F"])[:6] + [np.zeros_like(kw["F"]), kw["F"][:1], "F"])},
          check=nonneg),
    Entry("repulsion.first_crossing", {"threshold": Real(typ=(0.0, 2.0), vec=False)},
          build=lambda n: st.integers(1, 10).flatmap(lambda T: seeded_array((T,), "uniform", 2.0)).map(lambda s: {"series": s}),
          bad={"series": lambda n, kw: st.sampled_from([kw["series"].astype(str), "s", None, np.append(kw["series"], INF)])}),
    Entry("repulsion.ftf_offdiag_ratio", build=lambda n: _features(), bad={"F_tilde": _ft_bad}, check=nonneg),
    Entry("repulsion.backprop_gradient_norm", build=lambda n: _tian(True).map(
        lambda d: {"F": d["X"] @ d["W"], "Vout": d["Vout"], "y": d["y"], "M": d["M"]}),
          bad={"F": _mat_bad("F"), "Vout": _mat_bad("Vout"), "y": _idx_bad("y", "M"),
               "M": lambda n, kw: st.sampled_from([1, 2.5, "M", None])},
          names={"F": ("Vout", "y"), "Vout": ("F", "M"), "y": ("F", "M"), "M": ("Vout", "y")}, check=nonneg),
    Entry("repulsion.independence_proxy", {"n_pairs": Int(1, typ=(1, 50)), "seed": Int(0, typ=(0, 100))},
          build=lambda n: _tian(True).map(lambda d: {"F": d["X"] @ d["W"], "Vout": d["Vout"], "y": d["y"], "M": d["M"]}),
          bad={"F": _mat_bad("F"), "Vout": _mat_bad("Vout"), "y": _idx_bad("y", "M")},
          names={"F": ("Vout", "y"), "Vout": ("F", "M"), "y": ("F", "M")}, check=in_unit,
          nan="NaN when fewer than 2 columns have a nonzero gradient (documented)"),
    Entry("repulsion.fit_power_law", build=lambda n: st.integers(2, 6).flatmap(lambda k: st.tuples(
        st.just(np.geomspace(1e-4, 1e-2, k)), seeded_array((k,), "positive"))).map(lambda t: {"eta": t[0], "t": t[1]}),
          bad={"eta": lambda n, kw: st.sampled_from([-kw["eta"], kw["eta"][:1], np.full_like(kw["eta"], 1e-3), "e", None]),
               "t": lambda n, kw: st.sampled_from([-kw["t"], np.append(kw["t"], 1.0), kw["t"] * NAN, "t"])},
          names={"eta": ("t",), "t": ("eta",)}),
    Entry("repulsion.headline_table"),
    Entry("repulsion.eta_sweep_table"),
    Entry("repulsion.scaling_sweep_table"),
    Entry("repulsion.reduced_replication_table"),
]

