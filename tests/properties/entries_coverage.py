"""Registry entries: grokclocks.coverage (spec ``uniformity``)."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import strategies as st

from .kinds import (INF, NAN, Choice, Entry, Fixed, Flag, Int, NonNeg, Param, Pos, Real, Unit, array_bad,
                    in_unit, nonneg, seeded_array)

PRIMES = (2, 3, 5, 7, 11, 13)
PRIME = Fixed(*PRIMES, bad=(4, 1, 0, 2.5, "7", True, None, 10**12 + 40, 2**61 - 1))
P_ANY = Int(2, typ=(2, 13), capped=True)
RADIUS = Param(Int(1, typ=(1, 6)).typical, lambda n: st.sampled_from([INF, 1, 10**15]),
               lambda n, v: st.sampled_from([0, -1, 2.5, -INF, NAN, "n", True, None]))  # an integer >= 1 or inf
OP = Choice("add", "sub", "mul", "sq_sum", "xy", "sq_of_sum")
METRIC = Choice("torus", "grid")
SHUFFLE = Choice("python", "numpy")


def _split():
    @st.composite
    def s(draw):
        p = draw(st.sampled_from((3, 5, 7)))
        u = draw(seeded_array((p, p), "uniform"))
        m = u < draw(st.floats(0.2, 0.7))
        m[0, 0], m[-1, -1] = True, False
        lab = (np.arange(p)[:, None] + np.arange(p)[None, :]) % p
        return {"train_mask": m, "labels": lab}
    return s()


def _mask_bad(name):
    def bad(n, kw):
        m = kw[name]
        # 0/1 integers (or integral floats) are a mask too (grokclocks.task.as_mask): non-integral and 0/2 are not
        return st.sampled_from([m + 0.5, m[:, :-1], m[None], "m", None, m.astype(int) * 2])
    return bad


def _labels_bad(n, kw):
    lab = kw["labels"]
    return st.sampled_from([lab + 0.5, lab.astype(float) * NAN, lab[:, :-1], lab.astype(str), "l", None,
                            lab.astype(np.complex128) + 1j])


def _embed():
    @st.composite
    def s(draw):
        p = draw(st.integers(3, 7))
        b_off = draw(st.sampled_from([0, p]))
        d = draw(st.integers(1, 4))
        ax = draw(st.sampled_from([0, 1]))
        n_tok = b_off + p + draw(st.integers(0, 2))
        E = draw(seeded_array((d, n_tok) if ax == 1 else (n_tok, d)))
        return {"E": E, "p": p, "b_offset": b_off, "token_axis": ax}
    return s()


def _embed_bad(name):
    def bad(n, kw):
        if name == "E":
            return st.sampled_from(array_bad(kw["E"])[:5] + [kw["E"][:1, :1], "E"])
        if name == "p":
            return st.sampled_from([2, kw["p"] + 50, 2.5, "p", True, None])
        if name == "b_offset":
            return st.sampled_from([-1, 10**6, 0.5, "0", True])
        return st.sampled_from([2, -1, 0.5, "1", True, None])
    return bad


EMBED_NAMES = {"E": ("token", "tokens"), "p": ("tokens", "E"), "b_offset": ("tokens", "E"), "token_axis": ("E",)}


def _series(k_min=1):
    return st.integers(k_min, 10).flatmap(lambda k: seeded_array((k,), "uniform"))


def _ser_bad(name):
    def bad(n, kw):
        v = kw[name]
        return st.sampled_from([np.where(np.arange(v.size) == 0, NAN, v), v.astype(str), v[None, :], np.zeros(0), "v",
                                v.astype(np.complex128) + 1j])
    return bad


ENTRIES = [
    Entry("task.label_table", {"p": PRIME, "op": OP}),
    Entry("task.code_labels", {"p": PRIME, "op": OP, "d": Int(0, typ=(0, 20), ext=(10**6,))}),
    Entry("coverage.equivalence_classes", {"p": PRIME, "op": OP}),
    Entry("coverage.class_sizes", {"p": PRIME, "op": OP}, check=nonneg),
    Entry("coverage.operator_norm_bounds", {"rtol": NonNeg(typ=(0.0, 1e-6), vec=False, optional=True)},
          build=lambda n: st.tuples(st.integers(1, 4), st.integers(1, 4)).flatmap(lambda mn: seeded_array(mn)).map(
              lambda A: {"A": A}),
          bad={"A": lambda n, kw: st.sampled_from(array_bad(kw["A"])[:6] + ["A", None])}, check=nonneg,
          inf="overflow: sqrt(rank) times an operator norm near 1.8e308"),
    Entry("coverage.min_opnorm_single_class", {"c_norm": NonNeg(typ=(0.0, 10.0)), "R": Pos(typ=(0.1, 10.0))}, vec=True,
          check=nonneg, inf="overflow: c_norm / (2 R) for a subnormal R"),
    Entry("coverage.rank1_min_norm_map", build=lambda n: st.tuples(st.integers(1, 4), st.integers(1, 4)).flatmap(
        lambda km: st.tuples(seeded_array((km[0],), "positive"), seeded_array((km[1],), "positive"))).map(
        lambda t: {"c": t[0], "u": t[1]}),
          bad={"c": lambda n, kw: st.sampled_from(array_bad(kw["c"])[:5] + [0 * kw["c"], "c"]),
               "u": lambda n, kw: st.sampled_from(array_bad(kw["u"])[:5] + [0 * kw["u"], "u"])}),
    Entry("coverage.class_target_residuals", build=lambda n: st.integers(2, 8).flatmap(
        lambda N: st.tuples(seeded_array((N, 3)), st.lists(st.integers(0, 2), min_size=N, max_size=N))).map(
        lambda t: {"outputs": t[0], "labels": np.asarray(t[1]), "targets": None}),
          bad={"outputs": lambda n, kw: st.sampled_from(array_bad(kw["outputs"])[:5] + ["o"]),
               "labels": lambda n, kw: st.sampled_from([kw["labels"] + 0.5, kw["labels"].astype(float) * NAN,
                                                        np.append(kw["labels"], 0), "l", None]),
               "targets": lambda n, kw: st.sampled_from([np.full((len(np.unique(kw["labels"])), 3), NAN),
                                                         np.ones((99, 3)), "t"])},
          names={"outputs": ("labels",), "labels": ("outputs",), "targets": ("labels", "classes")}, check=nonneg),
    Entry("coverage.consecutive_embedding_diffs", {"cyclic": Flag()}, build=lambda n: _embed(),
          bad={k: _embed_bad(k) for k in ("E", "p", "b_offset", "token_axis")} | {
              "L": lambda n, kw: st.sampled_from([np.ones((2, 99)), np.full((1, 1), NAN), "L"])},
          names={**EMBED_NAMES, "L": ("E",)}, check=nonneg),
    Entry("coverage.manhattan_distance", {"metric": METRIC},
          build=lambda n: st.tuples(st.sampled_from([5, 7]), seeded_array((3,), "uniform")).map(
              lambda t: {"p": t[0], "x": np.array([[0, 1], [2, 3], [4, 4]]), "y": np.array([1, int(t[1][0] * 4)])}),
          bad={"x": lambda n, kw: st.sampled_from([np.array([0.5, 1.0]), np.array([1, 2, 3]), "x", None,
                                                   np.array([[NAN, 1.0]])]),
               "y": lambda n, kw: st.sampled_from([np.array([1.5, 0.0]), np.array([1]), "y"])},
          names={"x": ("y",), "y": ("x",), "p": ("metric",)}, check=nonneg),
    Entry("coverage.distance_to_set", {"metric": METRIC}, build=lambda n: _split().map(lambda d: {"mask": d["train_mask"]}),
          bad={"mask": _mask_bad("mask")}, check=nonneg, inf="inf: the empty set is at infinite distance (documented)"),
    Entry("coverage.same_label_distance", {"metric": METRIC}, build=lambda n: _split(),
          bad={"train_mask": _mask_bad("train_mask"), "labels": _labels_bad},
          names={"train_mask": ("labels",), "labels": ("train_mask", "mask")}, check=nonneg,
          inf="inf: no training point with that label (documented)"),
    Entry("coverage.token_seen", {"b_offset": Int(0, typ=(0, 5))}, build=lambda n: _split().map(lambda d: {"train_mask": d["train_mask"]}),
          bad={"train_mask": _mask_bad("train_mask")}),
    Entry("coverage.token_coverage_mask", {"b_offset": Int(0, typ=(0, 5))},
          build=lambda n: _split().map(lambda d: {"train_mask": d["train_mask"]}), bad={"train_mask": _mask_bad("train_mask")}),
    Entry("coverage.accuracy_ceiling", {"n": RADIUS, "metric": METRIC,
                                        "b_offset": Int(0, typ=(0, 3), optional=True)}, build=lambda n: _split(),
          bad={"train_mask": _mask_bad("train_mask"), "labels": _labels_bad},
          names={"train_mask": ("labels", "test"), "labels": ("train_mask", "mask")}, check=in_unit),
    Entry("coverage.accuracy_ceiling_curve", {"n_max": Int(1, typ=(1, 6), capped=True), "metric": METRIC,
                                              "b_offset": Int(0, typ=(0, 3), optional=True)}, build=lambda n: _split(),
          bad={"train_mask": _mask_bad("train_mask"), "labels": _labels_bad},
          names={"train_mask": ("labels", "test"), "labels": ("train_mask", "mask")}, check=in_unit),
    Entry("coverage.implied_radius", {"accuracy": Real(0.0, 1.0, lo_closed=True, hi_closed=True, typ=(0.0, 1.0), vec=False),
                                      "metric": METRIC, "b_offset": Int(0, typ=(0, 3), optional=True)},
          build=lambda n: _split(), bad={"train_mask": _mask_bad("train_mask"), "labels": _labels_bad},
          names={"train_mask": ("labels", "test"), "labels": ("train_mask", "mask")}, check=nonneg),
    Entry("coverage.coverage_fraction", {"n": RADIUS, "metric": METRIC,
                                         "over": Choice("all", "test")},
          build=lambda n: _split().map(lambda d: {"train_mask": d["train_mask"]}),
          bad={"train_mask": _mask_bad("train_mask")}, names={"train_mask": ("test",)}, check=in_unit),
    Entry("coverage.ball_size", {"n": Int(1, typ=(1, 1000), ext=(10**9,), vec=True)}, vec=True, check=nonneg),
    Entry("coverage.ball_size_torus", {"p": Int(2, typ=(2, 200), ext=(65536,), vec=True),
                                       "n": Int(1, typ=(1, 200), ext=(10**18,), vec=True)}, vec=True, check=nonneg),
    Entry("coverage.coverer_counts", {"p": P_ANY, "n": Int(1, typ=(1, 10), ext=(10**15,)), "metric": METRIC}, check=nonneg),
    Entry("coverage.expected_uncovered", {"p": P_ANY, "n": Int(1, typ=(1, 6), ext=(10**15,), vec=True), "metric": METRIC},
          vec=True, build=lambda n: st.integers(0, 25).map(lambda m: {"m": m}),
          raises=lambda p, m, **k: m > p * p,
          bad={"m": lambda n, kw: st.sampled_from([-1, 10**6, 1.5, "m", True, None])}, names={"m": ("p",)}, check=nonneg),
    Entry("coverage.expected_uncovered_paper", {"p": Int(2, typ=(2, 13), ext=(10**9,), vec=True),
                                                "n": Int(1, typ=(1, 6), ext=(10**15,), vec=True),
                                                "m": Int(0, typ=(0, 25), ext=(10**15,), vec=True),
                                                "form": Choice("binomial", "exp")}, vec=True,
          raises=lambda p, m, **k: bool(np.any(np.asarray(m) > p * p)), check=nonneg),
    Entry("coverage.required_train_fraction", {"p": Fixed(5, 7, 11, 97, bad=(1, 2.5, "p", None)),
                                               "n": Int(1, typ=(1, 6), ext=(10**15,), vec=True),
                                               "method": Choice("paper", "paper_nolog", "torus_exact", "grid_exact")},
          vec=True, cost=2, check=nonneg, inf="inf: no training fraction makes E[U] < 1 (documented)",
          raises=lambda p, n, method: method == "paper_nolog" and bool(np.any(
              2 * np.asarray(n, dtype=object) ** 2 - 2 * np.asarray(n, dtype=object) + 1 >= p * p))),
    Entry("coverage.full_coverage_probability_lower_bound", {"p": P_ANY, "n": Int(1, typ=(1, 6), ext=(10**15,), vec=True),
                                                             "metric": METRIC}, vec=True,
          build=lambda n: st.integers(0, 25).map(lambda m: {"m": m}), raises=lambda p, m, **k: m > p * p,
          bad={"m": lambda n, kw: st.sampled_from([-1, 10**6, 1.5, "m", True, None])}, names={"m": ("p",)}, check=in_unit),
    *[Entry(f"task.{f}", {"p": Fixed(5, 7, 11, bad=(1, 2.5, "p", None, 10**12 + 39)), "k": Int(0, typ=(0, 4)),
                              "frac": Real(0.0, 1.0, hi_closed=True, typ=(0.2, 0.9), vec=False),
                              "seed": Int(0, typ=(0, 2**31), ext=(2**63 - 1,)), "shuffle": SHUFFLE},
            names={"k": ("p",)})
      for f in ("square_design", "strip_design")],
    Entry("task.random_design", {"p": Fixed(5, 7, 11, bad=(1, 2.5, "p", None, 10**12 + 39)),
                                     "frac": Real(0.0, 1.0, hi_closed=True, typ=(0.2, 0.9), vec=False),
                                     "seed": Int(0, typ=(0, 2**31), ext=(2**63 - 1,)), "shuffle": SHUFFLE}),
    Entry("task.designed_split", {"p": Fixed(5, 7, bad=(1, 2.5, "p", None)),
                                      "design": Choice("square", "strip"), "k": Fixed(2, 3, bad=(-1, 99, 1.5, "k")),
                                      "frac": Real(0.0, 1.0, hi_closed=True, typ=(0.2, 0.9), vec=False),
                                      "seed": Int(0, typ=(0, 100)), "shuffle": SHUFFLE}, names={"k": ("p", "design")}),
    Entry("coverage.progress_measure_fit", build=lambda n: st.integers(2, 10).flatmap(
        lambda k: st.tuples(seeded_array((k,)), st.lists(st.booleans(), min_size=k, max_size=k))).map(
        lambda t: {"values": t[0], "indicator": np.asarray(t[1])}),
          bad={"values": lambda n, kw: st.sampled_from(array_bad(kw["values"])[:5] + [kw["values"][:1], "v"]),
               "indicator": lambda n, kw: st.sampled_from([kw["indicator"] * 2.0 + 0.5, np.append(kw["indicator"], True),
                                                           kw["indicator"].astype(float) * NAN, "i", None])},
          names={"values": ("indicator",), "indicator": ("values",)},
          inf="tau = +-inf: the constant rule is best (an indicator that is constant)"),
    Entry("coverage.main_embedding_diff", {"variant": Choice("paper", "cyclic", "code_base", "code_rec", "code_str")},
          build=lambda n: _embed(), bad={k: _embed_bad(k) for k in ("E", "p", "b_offset", "token_axis")},
          names=EMBED_NAMES, check=nonneg),
    Entry("coverage.med_trajectory", {"variant": Choice("paper", "cyclic", "code_base", "code_rec", "code_str")},
          build=lambda n: _embed().map(lambda d: {**{k: v for k, v in d.items() if k != "E"},
                                                  "E_t": np.stack([d["E"]] * 2)}),
          bad={"E_t": lambda n, kw: st.sampled_from(array_bad(kw["E_t"])[:5] + [kw["E_t"][0], "E"]),
               "p": _embed_bad("p"), "token_axis": _embed_bad("token_axis")},
          names={"E_t": ("E", "tokens"), "p": ("tokens", "E"), "token_axis": ("E",)}, check=nonneg),
    Entry("coverage.med_code_mlp", build=lambda n: _embed(), bad={k: _embed_bad(k) for k in ("E", "p", "b_offset", "token_axis")},
          names=EMBED_NAMES, check=nonneg),
    Entry("coverage.table1"),
    Entry("coverage.table1_ceilings", {"ns": Fixed((5,), (5, 11), bad=((0,), (2.5,), ("a",), None)), "metric": METRIC,
                                       "b_offset": Fixed(None, 0, bad=(-1, 1.5, "0")),
                                       "p": Fixed(97, bad=(4, 1, "p")), "frac": Fixed(0.3, bad=(0.0, 1.5, NAN)),
                                       "seed": Fixed(0, bad=(-1, 0.5)), "shuffle": SHUFFLE}, cost=60, check=nonneg),
    Entry("coverage.go_epoch", {"threshold": Real(typ=(0.1, 1.0), vec=False)},
          build=lambda n: _series().map(lambda a: {"test_acc": np.sort(a), "epochs": None}),
          bad={"test_acc": _ser_bad("test_acc"),
               "epochs": lambda n, kw: st.sampled_from([np.arange(kw["test_acc"].size + 1.0), "e",
                                                        np.full(kw["test_acc"].size, NAN)])},
          names={"test_acc": ("epochs",), "epochs": ("test_acc",)}, check=nonneg),
    Entry("coverage.u_acc_l_acc", build=lambda n: _series().flatmap(lambda a: seeded_array(a.shape, "uniform").map(
        lambda b: {"test_acc": a, "train_acc": b})),
          bad={"test_acc": _ser_bad("test_acc"), "train_acc": _ser_bad("train_acc")},
          names={"test_acc": ("train_acc",), "train_acc": ("test_acc",)}, check=nonneg),
    Entry("coverage.med_loss_spearman", build=lambda n: _series(4).flatmap(lambda a: seeded_array(a.shape).map(
        lambda b: {"med": a, "test_loss": b, "windows": [(0, a.size)]})),
          bad={"med": _ser_bad("med"), "test_loss": _ser_bad("test_loss"),
               "windows": lambda n, kw: st.sampled_from([[(-1, 3)], [(0.5, 2)], "w", None, [(0,)], [("a", 2)]])},
          names={"med": ("test_loss",), "test_loss": ("med",)}),
    Entry("coverage.analyse_run", {"metric": METRIC}, build=lambda n: _split().flatmap(lambda d: _series(3).map(
        lambda a: {**d, "test_acc": np.sort(a)})),
          bad={"test_acc": _ser_bad("test_acc"), "train_mask": _mask_bad("train_mask"), "labels": _labels_bad,
               "go_threshold": lambda n, kw: st.sampled_from([-0.5, 1.5, NAN, "x"])},
          names={"train_mask": ("labels", "test"), "labels": ("train_mask", "mask")}, cost=2,
          nan="documented NaN markers in the record (e.g. no test loss given)"),
    Entry("coverage.experimental_setup", {"script": Choice("rec", "str", "base")}),
    Entry("task.token_ids", {"p": Int(2, typ=(2, 100), capped=True), "b_offset": Int(0, typ=(0, 100)),
                                 "d_vocab": Fixed(None)}),
]
