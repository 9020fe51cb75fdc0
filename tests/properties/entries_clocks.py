"""Registry entries: grokclocks.clocks (spec ``clocks``)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .kinds import (INF, NAN, Choice, Entry, Fixed, Flag, Int, NonNeg, Param, Pos, Real, Unit, array_bad, in_unit,
                    nonneg, ordered, seeded_array)

KCLS = Int(2, typ=(2, 10), ext=(10**9,))
THETA = Real(0.5, 1.0, typ=(0.55, 0.95))
P = Int(2, typ=(2, 12), capped=True)


def _logits_labels(n_cls_min: int = 2):
    @st.composite
    def s(draw):
        n = draw(st.integers(1, 5))
        k = draw(st.integers(n_cls_min, 5))
        z = draw(seeded_array((n, k), scale=draw(st.sampled_from([1.0, 30.0]))))
        y = np.asarray(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)), np.int64)
        return {"logits": z, "labels": y}
    return s()


def _labels_bad(n, kw):
    y = kw["labels"]
    k = kw["logits"].shape[1] if "logits" in kw else int(y.max()) + 1
    return st.sampled_from([np.where(np.arange(y.size) == 0, k, y), y - 1 - y.max(), y + 0.5,
                            np.append(y, 0), y[None, :], y.astype(float) * NAN, y.astype(str), y > 0, "labels", None])


def _probs():
    @st.composite
    def s(draw):
        k = draw(st.integers(1, 6))
        batch = draw(st.sampled_from([(), (3,)]))
        z = draw(seeded_array(batch + (k,), scale=draw(st.sampled_from([1.0, 20.0]))))
        dtype = draw(st.sampled_from([np.float64, np.float32, np.float16]))
        zz = np.asarray(z, dtype)
        e = np.exp(zz - zz.max(axis=-1, keepdims=True))
        return {"probs": (e / e.sum(axis=-1, keepdims=True)).astype(dtype)}
    return s()


def _records(value_name: str, lo: float = 0.0, hi: float = 2.0, monotone: bool = False):
    @st.composite
    def s(draw):
        n = draw(st.integers(2, 12))
        t = np.cumsum(draw(seeded_array((n,), "positive")))
        v = draw(seeded_array((n,), "uniform"))
        v = lo + (hi - lo) * (np.sort(v)[::-1] if monotone else v)
        return {"times": t, value_name: v}
    return s()


def _times_bad(n, kw):
    t = kw["times"]
    return st.sampled_from(array_bad(t) + [t[::-1].copy(), np.concatenate([t[:1], t[:1]]) if t.size == 2 else
                                           np.concatenate([t[:1], t[:-1]]), t[:-1]])


def _values_bad(name, extra=()):
    def bad(n, kw):
        v = kw[name]
        pool = [v.astype(np.complex128) + 1j, v.astype(str), np.append(v, 0.0), v[None, :], "values"] + list(extra)
        return st.sampled_from(pool)
    return bad


def _acc_bad(n, kw):
    v = kw["train_acc"]
    return st.sampled_from([100.0 * v + 1.5, v - 2.0, v.astype(np.complex128) + 1j, v.astype(str), np.append(v, 0.5),
                            "acc"])


def _gap_growth():
    @st.composite
    def s(draw):
        d = draw(_records("min_gaps", -1.0, 3.0))
        j = draw(st.integers(0, d["times"].size - 2))
        return {**d, "t0": float(d["times"][j])}
    return s()


def _relu_net():
    @st.composite
    def s(draw):
        depth = draw(st.integers(1, 3))
        dims = [draw(st.integers(1, 4)) for _ in range(depth + 1)]
        ws = [draw(seeded_array((dims[i + 1], dims[i]))) for i in range(depth)]
        bs = [draw(seeded_array((dims[i + 1],))) for i in range(depth)]
        x = draw(seeded_array(draw(st.sampled_from([(dims[0],), (2, dims[0])]))))
        return {"weights": ws, "biases": bs, "x": x}
    return s()


def _list_bad(name):
    def bad(n, kw):
        ws = kw[name]
        first = array_bad(ws[0])
        return st.sampled_from([[f] + list(ws[1:]) for f in first] + [[], ws[:-1] if len(ws) > 1 else ws + ws, "w", None])
    return bad


def _head_model():
    @st.composite
    def s(draw):
        p, de, dh, k = (draw(st.integers(2, 5)) for _ in range(4))
        return {"E": draw(seeded_array((de, p))), "W1": draw(seeded_array((dh, de))), "W2": draw(seeded_array((k, dh))),
                "a": draw(st.integers(0, p - 1)), "b": draw(st.integers(0, p - 1)), "y": draw(st.integers(0, k - 1)),
                "b1": draw(st.one_of(st.none(), seeded_array((dh,)))), "b2": draw(st.one_of(st.none(), seeded_array((k,))))}
    return s()


def _head_bad(name):
    def bad(n, kw):
        v = kw[name]
        if name in ("a", "b"):
            return st.sampled_from([kw["E"].shape[1], -1, 0.5, True, NAN, "0", None])
        if name == "y":
            return st.sampled_from([kw["W2"].shape[0], -1, 0.5, True, NAN, None])
        if v is None:
            return st.sampled_from([np.zeros(7), "b", np.array([NAN])])
        return st.sampled_from(array_bad(v) + [v[..., :-1] if v.shape[-1] > 1 else np.concatenate([v, v], axis=-1)])
    return bad


def _preacts(prefix: str = "preacts"):
    @st.composite
    def s(draw):
        n = draw(st.integers(1, 3))
        shapes = [(draw(st.integers(1, 3)), draw(st.integers(1, 4))) for _ in range(n)]
        return [draw(seeded_array(sh)) for sh in shapes]
    return s()


def _preacts_bad(name):
    def bad(n, kw):
        hs = kw[name]
        return st.sampled_from([[b] + hs[1:] for b in array_bad(hs[0])[:4]] + [[], "h", None, 3.0])
    return bad


def _path():
    @st.composite
    def s(draw):
        h1 = draw(_preacts())
        steps = draw(st.integers(1, 3))
        path = [[h + 0.01 * draw(seeded_array(h.shape)) for h in h1] for _ in range(steps)]
        return {"preacts_t1": h1, "preacts_path": path}
    return s()


def _pattern():
    return _preacts().flatmap(lambda h1: seeded_array((1,)).map(
        lambda r: {"preacts_t1": h1, "preacts_t": [h + float(r[0]) for h in h1]}))


def _embedding(token_axis_free: bool = True):
    @st.composite
    def s(draw):
        p = draw(st.integers(2, 12))
        d = draw(st.integers(1, 4))
        ax = draw(st.sampled_from([0, 1])) if token_axis_free else 0
        E = draw(seeded_array((p, d) if ax == 0 else (d, p)))
        give_p = draw(st.booleans())
        return {"E": E, "p": p if give_p else None, "token_axis": ax}
    return s()


def _embedding_bad(n, kw):
    E = kw["E"]
    return st.sampled_from(array_bad(E)[:5] + [np.zeros((2, 2, 2)), "E"])


def _features():
    @st.composite
    def s(draw):
        n = draw(st.integers(4, 10))
        d = draw(st.integers(1, 3))
        k = draw(st.integers(2, 3))
        lab = np.arange(n) % k
        H = draw(seeded_array((n, d))) + 3.0 * lab[:, None]
        return {"features": H, "labels": lab}
    return s()


def _feat_labels_bad(n, kw):
    y = kw["labels"]
    return st.sampled_from([y.astype(float) * NAN, y + 0.5, y.astype(str), np.append(y, 0), y[None, :], y > 0,
                            y.astype(np.complex128) + 1j, "labels", None])


_MISMATCH = {"eps": Pos(typ=(1e-6, 0.5)), "delta": Pos(typ=(1e-6, 0.5)), "n_classes": KCLS,
             "rate": Pos(typ=(0.01, 10.0)), "t0": NonNeg(typ=(0.0, 10.0)), "gamma0": Real(typ=(-5.0, 5.0)),
             "C_kl": Pos(typ=(0.1, 10.0)), "theta": THETA, "gap0": Pos(typ=(0.01, 10.0)), "T": Real(typ=(0.0, 10.0))}

ENTRIES = [
    Entry("clocks.modular_characters", {"p": P, "k": Fixed(None, bad=(-1, 99, 0.5, NAN, "k", [], [[0]])),
                                        "real": Flag()}),
    Entry("clocks.fourier_basis", {"p": P}),
    Entry("clocks.logit_gaps", build=lambda n: _logits_labels(),
          bad={"logits": lambda n, kw: st.sampled_from(array_bad(kw["logits"]) + [kw["logits"][:, :1]]),
               "labels": _labels_bad}, names={"labels": ("logits",), "logits": ("labels",)}),
    Entry("clocks.min_logit_gap", build=lambda n: _logits_labels(),
          bad={"logits": lambda n, kw: st.sampled_from(array_bad(kw["logits"]) + [kw["logits"][:, :1]]),
               "labels": _labels_bad}, names={"labels": ("logits",), "logits": ("labels",)}),
    Entry("clocks.cross_entropy_from_gaps", build=lambda n: _logits_labels().map(
        lambda d: {"gaps": d["logits"]}), bad={"gaps": lambda n, kw: st.sampled_from(array_bad(kw["gaps"], ndim_fixed=False))},
        check=nonneg),
    Entry("clocks.cross_entropy", {"reduction": Choice("mean", "sum", "none")}, build=lambda n: _logits_labels(),
          bad={"logits": lambda n, kw: st.sampled_from(array_bad(kw["logits"]) + [kw["logits"][:, :1]]),
               "labels": _labels_bad}, names={"labels": ("logits",), "logits": ("labels",)}, check=nonneg),
    Entry("clocks.ce_tail_bound", {"gamma": Real(typ=(-20.0, 50.0)), "n_classes": KCLS}, vec=True, check=nonneg,
          inf="overflow: log(1 + (K-1) e^-gamma) for gamma -> -inf is finite; never inf"),
    Entry("clocks.ce_tail_bound_linear", {"gamma": Real(typ=(-20.0, 50.0)), "n_classes": KCLS}, vec=True,
          check=nonneg, inf="overflow: (K-1) e^-gamma for gamma < -709"),
    Entry("clocks.gap_for_loss_level", {"eps": Pos(typ=(1e-10, 10.0)), "n_classes": KCLS, "sharp": Flag()}, vec=True),
    Entry("clocks.ce_smoothness_constant", {"B": NonNeg()}, vec=True, check=nonneg, inf="overflow: B^2/2 for B > 1.9e154"),
    Entry("clocks.softmax_logit_hessian", build=lambda n: _probs(),
          bad={"probs": lambda n, kw: st.sampled_from(
              array_bad(kw["probs"], ndim_fixed=False) + [kw["probs"] * 1.1 + 0.01, kw["probs"] - 0.5, 0.5])}),
    Entry("clocks.binary_pl_ratio", {"margin": Real(typ=(-30.0, 30.0))}, vec=True, check=nonneg,
          inf="overflow: ~ |m| for m -> -inf exceeds no bound; exp(log ratio) overflows only for m < -1e308"),
    Entry("clocks.log_binary_pl_ratio", {"margin": Real(typ=(-30.0, 30.0))}, vec=True),
    Entry("clocks.zero_one_loss_threshold", {"n": Int(1, typ=(1, 10**6), ext=(10**18,), vec=True)}, check=nonneg, vec=True),
    Entry("clocks.fit_gap_growth", build=lambda n: _gap_growth(),
          bad={"times": _times_bad, "min_gaps": _values_bad("min_gaps", [np.full(1, NAN)]),
               "t0": lambda n, kw: st.sampled_from([kw["times"][-1], kw["times"][0] - 1.0, NAN, "t0", np.array([1.0, 2.0])])},
          names={"min_gaps": ("times",), "times": ("min_gaps", "t0")}),
    Entry("clocks.fast_clock_bound", {"eps": Pos(typ=(1e-8, 1.0)), "n_classes": KCLS, "rate": Pos(typ=(1e-3, 10.0)),
                                      "t0": NonNeg(typ=(0.0, 100.0)), "gamma0": Real(typ=(-10.0, 10.0)),
                                      "sharp": Flag()}, vec=True, check=nonneg, inf="overflow: (log((K-1)/eps) - gamma0)/c for c -> 0"),
    Entry("clocks.fast_clock_loss_bound", {"t": NonNeg(typ=(100.0, 1e3)), "n_classes": KCLS,
                                           "rate": Pos(typ=(1e-3, 10.0)), "t0": NonNeg(typ=(0.0, 100.0)),
                                           "gamma0": Real(typ=(-10.0, 10.0)), "linear": Flag()}, vec=True,
          check=nonneg, inf="overflow: (K-1) e^{-gamma} with the linear tail"),
    Entry("clocks.contraction_clock_bound", {"eps": Pos(typ=(1e-10, 1.0)),
                                             "loss0": NonNeg(typ=(0.0, 100.0)),
                                             "rho": Unit(), "k0": Int(0, typ=(0, 100), ext=(10**15,)),
                                             "exact": Flag()}, vec=True,
          inf="overflow: a step index beyond the largest double (rho <~ 1e-306), documented as math.inf"),
    Entry("clocks.relu_active_affine_map", build=lambda n: _relu_net(),
          bad={"weights": _list_bad("weights"), "biases": _list_bad("biases"),
               "x": lambda n, kw: st.sampled_from(array_bad(kw["x"], ndim_fixed=False)[:5] + [np.zeros((1, 1, 1)), "x"])},
          names={"weights": ("biases", "x"), "biases": ("weights",), "x": ("weights",)}),
    Entry("clocks.head_embedding_gradient_norms", build=lambda n: _head_model(),
          bad={k: _head_bad(k) for k in ("E", "W1", "W2", "a", "b", "y", "b1", "b2")},
          names={"E": ("W1", "shapes", "tokens"), "W1": ("E", "W2", "shapes", "b1"), "W2": ("W1", "shapes", "b2", "y"),
                 "a": ("tokens",), "b": ("tokens",), "b1": ("b2",), "b2": ("b1",)}, check=nonneg),
    Entry("clocks.gate_margin", build=lambda n: _preacts().map(lambda h: {"preacts": h}),
          bad={"preacts": _preacts_bad("preacts")}, check=nonneg),
    Entry("clocks.gates_certified_stable", build=lambda n: _path(),
          bad={"preacts_t1": _preacts_bad("preacts_t1"), "preacts_path": lambda n, kw: st.sampled_from(
              [[[h * NAN for h in kw["preacts_t1"]]], [[h[..., :0] for h in kw["preacts_t1"]]], "path", None, 1.0])},
          names={"preacts_t1": ("preacts_path",), "preacts_path": ("preacts_t1",)}),
    Entry("clocks.gate_pattern_changes", build=lambda n: _pattern(),
          bad={"preacts_t1": _preacts_bad("preacts_t1"), "preacts_t": _preacts_bad("preacts_t")},
          names={"preacts_t1": ("preacts_t",), "preacts_t": ("preacts_t1",)}),
    Entry("clocks.first_layer_preact_change_bound",
          {"x_norm": NonNeg(typ=(0.0, 10.0))},
          build=lambda n: st.tuples(seeded_array((3, 2)), seeded_array((3,))).map(
              lambda a: {"delta_W1": a[0], "delta_b1": a[1]}),
          bad={"delta_W1": lambda n, kw: st.sampled_from(array_bad(kw["delta_W1"])),
               "delta_b1": lambda n, kw: st.sampled_from(array_bad(kw["delta_b1"], ndim_fixed=False))},
          vec=True, check=nonneg, inf="overflow: ||dW||_2 x_norm beyond 1.8e308"),
    Entry("clocks.kl_decay_exponent", {"theta": THETA}, vec=True, check=nonneg,
          inf="overflow: 1/(2 theta - 1) as theta -> 1/2"),
    Entry("clocks.representation_clock_exponent", {"theta": THETA}, vec=True, check=nonneg),
    Entry("clocks.kl_differential_bounds", {"gap": NonNeg(typ=(0.0, 10.0)), "c_kl": Pos(typ=(0.1, 1.0)),
                                            "C_kl": Pos(typ=(1.0, 10.0)), "theta": THETA}, vec=True, check=nonneg,
          raises=lambda c_kl, C_kl, **k: np.any(np.asarray(c_kl) > np.asarray(C_kl)),
          inf="overflow: C^2 gap^{2 theta} for gap > 1e154"),
    *[Entry(f"clocks.{f}", {"t": NonNeg(typ=(0.0, 1e4)), "gap0": Pos(typ=(1e-3, 10.0)), "a": Pos(typ=(1e-3, 10.0)),
                            "theta": THETA, "t0": Fixed(0.0, bad=(NAN, INF, "0", None))},
            vec=True, check=None if f.startswith("log") else nonneg)
      for f in ("kl_gap_solution", "log_kl_gap_solution")],
    Entry("clocks.kl_gap_solution_pl", {"t": NonNeg(typ=(0.0, 1e4)), "gap0": Pos(typ=(1e-3, 10.0)),
                                        "a": Pos(typ=(1e-3, 10.0)), "t0": Fixed(0.0)}, vec=True, check=nonneg),
    Entry("clocks.kl_gap_bounds", {"t": NonNeg(typ=(0.0, 1e4)), "gap0": Pos(typ=(1e-3, 10.0)), "c_kl": Pos(typ=(0.1, 1.0)),
                                   "C_kl": Pos(typ=(1.0, 10.0)), "theta": THETA, "t0": Fixed(0.0)}, vec=True,
          check=ordered),
    Entry("clocks.kl_clock_time", {"delta": Pos(typ=(1e-6, 1e-3)), "gap0": Pos(typ=(1e-2, 10.0)), "a": Pos(typ=(1e-3, 10.0)),
                                   "theta": THETA, "t0": Real(typ=(0.0, 10.0))}, vec=True,
          inf="overflow: (delta^{1-2theta} - gap0^{1-2theta})/(a(2theta-1)) for delta -> 0"),
    Entry("clocks.representation_clock_bounds", {"delta": Pos(typ=(1e-6, 1e-3)), "gap0": Pos(typ=(1e-2, 10.0)),
                                                 "c_kl": Pos(typ=(0.1, 1.0)), "C_kl": Pos(typ=(1.0, 10.0)),
                                                 "theta": THETA, "T": Real(typ=(0.0, 10.0)),
                                                 "m_G": Pos(typ=(0.1, 1.0)), "M_G": Pos(typ=(1.0, 10.0))}, vec=True,
          inf="overflow: delta^{1-2theta} for delta -> 0", check=ordered),
    Entry("clocks.energy_dissipation_residual", build=lambda n: _records("energy").flatmap(
        lambda d: seeded_array((d["times"].size,), "positive").map(lambda g: {**d, "grad_sq_norm": g})),
        bad={"times": _times_bad, "energy": _values_bad("energy", [np.full(1, NAN)]),
             "grad_sq_norm": _values_bad("grad_sq_norm", [np.full(1, -1.0)])},
        names={"times": ("energy", "grad_sq_norm"), "energy": ("times",), "grad_sq_norm": ("times",)}),
    Entry("clocks.kl_exponent_power", {"q": Real(2.0, INF, typ=(2.1, 100.0))}, vec=True),
    Entry("clocks.kl_rate_power", {"q": Real(2.0, INF, typ=(2.1, 100.0))}, vec=True, inf="overflow: q^2 for q > 1.3e154"),
    Entry("clocks.kl_exponent_depth", {"depth": Int(2, typ=(2, 20), ext=(10**18,), vec=True)}, vec=True),
    Entry("clocks.kl_rate_depth", {"depth": Int(2, typ=(2, 20), ext=(10**6,), vec=True),
                                   "n_directions": Int(1, typ=(1, 10), ext=(10**18,), vec=True)},
          vec=True, inf="overflow: the rate grows like L^L"),
    Entry("clocks.kl_constants_critical_weight_decay"),
    Entry("clocks.weight_decay_tail_rate", {"mu": Pos(typ=(0.1, 10.0)), "depth": Int(2, typ=(2, 6), ext=(10**6,)),
                                            "f_perp_norm": NonNeg(typ=(0.0, 0.05))}, vec=True, check=nonneg,
          inf="overflow: 2 mu L for mu near the double maximum"),
    Entry("clocks.clock_mismatch_lower_bound", dict(_MISMATCH), vec=True,
          inf="overflow: delta^{1-2theta} for delta -> 0; -inf: the fast-clock term for rate -> 0"),
    Entry("clocks.coupled_mismatch_lower_bound", {**{k: v for k, v in _MISMATCH.items() if k != "delta"},
                                                  "kappa": Pos(typ=(0.1, 3.0))}, vec=True,
          inf="overflow: eps^{kappa(1-2theta)} for eps -> 0"),
    Entry("clocks.crossover_eps", {k: Pos(typ=(0.5, 3.0)) if k == "kappa" else
                                   (Int(2, typ=(2, 10)) if k == "n_classes" else
                                    Real(0.5, 1.0, typ=(0.55, 0.95)) if k == "theta" else
                                    Pos(typ=(0.1, 10.0)) if k in ("rate", "C_kl", "gap0") else
                                    NonNeg(typ=(0.0, 10.0)) if k == "t0" else
                                    Real(typ=(-5.0, 5.0)))
                                   for k in ("kappa", "n_classes", "rate", "t0", "gamma0", "C_kl", "theta", "gap0", "T")},
          vec=True, cost=20, check=in_unit, filter_invalid=False,  # ~3 ms a scalar call (the scan from the top, a root)
          raises=lambda **k: True),  # documented: no sign change in [1e-300, 1) is a DomainError
    Entry("clocks.first_hitting_time", {"threshold": Real(typ=(0.0, 2.0), vec=False), "window": Int(1, typ=(1, 4), ext=(10**18,)),
                                        "direction": Choice("below", "above")},
          build=lambda n: _records("values"), bad={"times": _times_bad, "values": _values_bad("values")},
          names={"times": ("values",), "values": ("times",)},
          inf="inf: the threshold is never met (documented)"),
    Entry("clocks.classifier_clock", {"eps": Pos(typ=(1e-3, 2.0), vec=False), "window": Int(1, typ=(1, 4))},
          build=lambda n: _records("losses", monotone=True), bad={"times": _times_bad, "losses": _values_bad("losses")},
          names={"times": ("losses", "values"), "losses": ("times", "values")}, inf="inf: never (documented)"),
    Entry("clocks.representation_clock", {"delta": Pos(typ=(1e-3, 2.0), vec=False), "window": Int(1, typ=(1, 4))},
          build=lambda n: _records("gaps", monotone=True), bad={"times": _times_bad, "gaps": _values_bad("gaps")},
          names={"times": ("gaps", "values"), "gaps": ("times", "values")}, inf="inf: never (documented)"),
    Entry("clocks.accuracy_clock", {"target": Real(0.0, 1.0, hi_closed=True, typ=(0.5, 1.0), vec=False),
                                    "window": Int(1, typ=(1, 4))},
          build=lambda n: _records("train_acc", 0.0, 1.0), bad={"times": _times_bad, "train_acc": _acc_bad},
          names={"times": ("train_acc", "values"), "train_acc": ("times", "values")}, inf="inf: never (documented)"),
    Entry("clocks.accumulated_time", build=lambda n: seeded_array((5,), "uniform", 0.1).map(lambda a: {"lrs": a}),
          bad={"lrs": lambda n, kw: st.sampled_from(array_bad(kw["lrs"]) + [-kw["lrs"] - 1.0])}, check=nonneg),
    Entry("clocks.separation_ratio", {"t_rep": Param(NonNeg(typ=(0.0, 1e4)).typical, lambda n: st.sampled_from([INF, 0.0, 1e300]),
                                                     lambda n, v: st.sampled_from([NAN, -INF, -1.0, "1", 1j, True, None])),
                                      "t_cls": Pos(typ=(1e-3, 1e4))}, vec=True, check=nonneg,
          inf="inf: t_rep = inf (the representation clock never ran) is returned as an infinite ratio"),
    Entry("clocks.stable_rank_gap", {"target": Real(typ=(1.0, 5.0), vec=False, optional=True)},
          build=lambda n: seeded_array((6,), "uniform", 4.0).map(lambda a: {"sranks": 1.0 + np.concatenate([[5.0], a])}),
          bad={"sranks": lambda n, kw: st.sampled_from(array_bad(kw["sranks"]) + [kw["sranks"] - 10.0])}, check=nonneg),
    Entry("clocks.class_separation_ratio", {"between": Choice("mean", "min_pair")}, build=lambda n: _features(),
          bad={"features": lambda n, kw: st.sampled_from(array_bad(kw["features"])[:5] + [np.zeros((2, 2, 2))]),
               "labels": _feat_labels_bad},
          names={"features": ("labels",), "labels": ("features", "classes")}, check=nonneg),
    Entry("clocks.fourier_energies", {"center": Flag()}, build=lambda n: _embedding(),
          bad={"E": _embedding_bad, "p": lambda n, kw: st.sampled_from([kw["E"].shape[kw["token_axis"]] + 1, 1, 2.5, "p", True]),
               "token_axis": lambda n, kw: st.sampled_from([2, -3, 0.5, "0", None, True])},
          names={"E": ("token",), "p": ("token",), "token_axis": ("p",)}, check=nonneg),
    Entry("clocks.fourier_energy_outside", {"center": Flag(), "freqs": Fixed((1,), (1, 2), (0, 5, -1)),
                                            "n_top": Fixed(None)}, build=lambda n: _embedding(),
          bad={"E": _embedding_bad, "p": lambda n, kw: st.sampled_from([kw["E"].shape[kw["token_axis"]] + 1, 1, 2.5, "p", True]),
               "freqs": lambda n, kw: st.sampled_from([(), (0.5,), ("a",), (NAN,), [[1]], "1"]),
               "n_top": lambda n, kw: st.sampled_from([0, 1.5, "1", True])},
          names={"E": ("token", "energy"), "p": ("token",), "n_top": ("freqs",), "freqs": ("n_top",)},
          raises=lambda E, center, **k: bool(center) and np.allclose(E, np.mean(E, axis=k["token_axis"], keepdims=True)),
          check=in_unit),
]
