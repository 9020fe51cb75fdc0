"""Registry entries: grokclocks.spectral (spec ``clocks``, sections 2, 4, 5)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .kinds import (INF, NAN, Choice, Entry, Fixed, Flag, Int, NonNeg, Pos, Real, Unit, array_bad, nonneg, seeded_array)

P = Pos(typ=(0.1, 3.0))
RTOL = NonNeg(typ=(0.0, 1e-6), vec=False, optional=True)


def _mat(stack: bool = True, min_dim: int = 1):
    @st.composite
    def s(draw):
        m, n = draw(st.integers(min_dim, 4)), draw(st.integers(min_dim, 4))
        lead = draw(st.sampled_from([(), (2,)])) if stack else ()
        W = draw(seeded_array(lead + (m, n), scale=draw(st.sampled_from([1.0, 1e-3, 1e3]))))
        return W
    return s()


def _mat_bad(name: str, stack: bool = True, zero_ok: bool = True):
    def bad(n, kw):
        W = np.asarray(kw[name])
        pool = array_bad(W, ndim_fixed=False)[:5] + [W.reshape(-1), np.zeros((0, 3)), "W", None]
        if not zero_ok:
            pool.append(np.zeros(W.shape))
        if not stack:
            pool.append(np.stack([W, W]))
        return st.sampled_from(pool)
    return bad


def _svals():
    return seeded_array((4,), "positive").map(lambda a: {"singular_values": np.sort(a)[::-1]})


def _factors():
    @st.composite
    def s(draw):
        L = draw(st.integers(1, 4))
        dims = [draw(st.integers(1, 4)) for _ in range(L + 1)]
        return [draw(seeded_array((dims[i + 1], dims[i]))) for i in range(L)]
    return s()


def _factors_bad(n, kw):
    fs = kw["factors"]
    return st.sampled_from([[b] + fs[1:] for b in array_bad(fs[0])[:4]] + [[], np.zeros((2, 2)), "f", None,
                                                                           fs + [np.ones((7, 9))]])


def _drift():
    @st.composite
    def s(draw):
        m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        return {"W": draw(seeded_array((m, n))), "grad_loss": draw(seeded_array((m, n)))}
    return s()


def _grad_bad(n, kw):
    g = kw["grad_loss"]
    return st.sampled_from(array_bad(g)[:5] + [g[:, :0], np.ones((g.shape[0] + 1, g.shape[1])), "g"])


ENTRIES = [
    Entry("spectral.stable_rank", build=lambda n: _mat().map(lambda W: {"W": W}), bad={"W": _mat_bad("W", zero_ok=False)},
          check=lambda out, kw: None if np.all(np.asarray(out) >= 1 - 1e-12) else f"stable rank below 1: {out}"),
    Entry("spectral.stable_rank_from_singular_values", build=lambda n: _svals().map(lambda d: {"sigma": d["singular_values"]}),
          bad={"sigma": lambda n, kw: st.sampled_from(array_bad(kw["sigma"], ndim_fixed=False)[:5] +
                                                       [-kw["sigma"], np.zeros(3), "s", None])},
          check=lambda out, kw: None if np.all(np.asarray(out) >= 1 - 1e-12) else f"stable rank below 1: {out}"),
    *[Entry(f"spectral.{f}", {"p": P, "rtol": RTOL}, build=lambda n: _mat().map(lambda W: {"W": W}),
            bad={"W": _mat_bad("W")}, check=nonneg, names={"W": ("singular_values",)},
            inf="overflow: sigma_1^p beyond 1.8e308 (documented)")
      for f in ("schatten_quasi_norm", "schatten_penalty")],
    Entry("spectral.layerwise_decay_penalty", {"depth": Int(1, typ=(1, 6), ext=(10**6,)), "rtol": RTOL},
          build=lambda n: _mat().map(lambda W: {"W": W}), bad={"W": _mat_bad("W")}, check=nonneg,
          inf="overflow: the Schatten-2/L penalty beyond 1.8e308"),
    Entry("spectral.balanced_factorization", {"depth": Int(1, typ=(1, 5), ext=(1000,), capped=True), "rtol": RTOL},
          build=lambda n: _mat(stack=False).map(lambda W: {"W": W, "width": None}),
          bad={"W": _mat_bad("W", stack=False), "width": lambda n, kw: st.sampled_from([0, -1, 1.5, "2", True, 10**30])},
          names={"width": ("depth",)}, cost=2),
    Entry("spectral.weight_decay_to_penalty_coefficient", {"mu": NonNeg(), "depth": Int(1, typ=(1, 10), ext=(10**15,))},
          vec=True, check=nonneg, inf="overflow: mu L / 2 beyond 1.8e308"),
    Entry("spectral.end_to_end_map", build=lambda n: _factors().map(lambda f: {"factors": f}),
          bad={"factors": _factors_bad}, inf="overflow: a product of large factors"),
    Entry("spectral.layer_imbalance", build=lambda n: _factors().map(lambda f: {"factors": f}),
          bad={"factors": _factors_bad}, check=nonneg, inf="overflow: products of large factors"),
    Entry("spectral.imbalance_decay", {"D0": Real(), "mu": NonNeg(typ=(0.0, 10.0)), "t": NonNeg(typ=(0.0, 100.0))},
          vec=True),
    Entry("spectral.end_to_end_energy", {"loss_value": Real(typ=(0.0, 10.0)), "lam": NonNeg(),
                                         "p": Pos(typ=(0.1, 3.0)), "rtol": RTOL},
          build=lambda n: _mat().map(lambda W: {"W": W}), bad={"W": _mat_bad("W")},
          inf="overflow: lam ||W||_p^p beyond 1.8e308"),
    Entry("spectral.end_to_end_energy_from_weight_decay", {"loss_value": Real(typ=(0.0, 10.0)),
                                                           "mu": NonNeg(vec=False),
                                                           "depth": Int(1, typ=(1, 6), ext=(10**6,)), "rtol": RTOL},
          build=lambda n: _mat().map(lambda W: {"W": W}), bad={"W": _mat_bad("W")},
          inf="overflow: the penalty beyond 1.8e308"),
    Entry("spectral.schatten_penalty_grad", {"p": Pos(typ=(0.1, 3.0), vec=False), "rtol": RTOL},
          build=lambda n: _mat().map(lambda W: {"W": W}), bad={"W": _mat_bad("W")},
          inf="overflow: p sigma^{p-1} for tiny sigma with p < 1"),
    *[Entry(f"spectral.{f}", {"lam": NonNeg(typ=(0.0, 10.0), vec=False), "p": Pos(typ=(0.1, 3.0), vec=False),
                              "rtol": RTOL}, build=lambda n: _drift(),
            bad={"W": _mat_bad("W", stack=False), "grad_loss": _grad_bad}, names={"grad_loss": ("W",)},
            inf="overflow: lam p sigma^{p-1} for tiny sigma with p < 1")
      for f in ("singular_value_drift", "singular_value_drift_terms")],
    Entry("spectral.balanced_singular_value_drift", {"mu": NonNeg(typ=(0.0, 10.0), vec=False),
                                                     "depth": Int(1, typ=(1, 6), ext=(10**6,)), "rtol": RTOL},
          build=lambda n: _drift(), bad={"W": _mat_bad("W", stack=False), "grad_loss": _grad_bad},
          names={"grad_loss": ("W",)}, inf="overflow: mu L sigma^{2-2/L} beyond 1.8e308"),
    Entry("spectral.free_direction_collapse_time", {"sigma0": NonNeg(typ=(0.0, 10.0)), "lam": NonNeg(typ=(0.0, 10.0)),
                                                    "p": Pos(typ=(0.1, 3.0))}, vec=True, check=nonneg,
          inf="inf: for p >= 1 (or lam = 0) a free direction never reaches 0 (documented)"),
    Entry("spectral.spectral_tail", {"normalized": Flag()},
          build=lambda n: _mat().flatmap(lambda W: st.integers(0, min(W.shape[-2:])).map(lambda k: {"W": W, "k": k})),
          bad={"W": _mat_bad("W"), "k": lambda n, kw: st.sampled_from([-1, min(kw["W"].shape[-2:]) + 1, 1.5, "1", True, None])},
          names={"W": ("k",)}, check=nonneg),
    Entry("spectral.eckart_young_rank", {"srank": Real(1.0, INF, lo_closed=True, typ=(1.0, 100.0), vec=False),
                                         "eta": Real(0.0, 1.0, hi_closed=True, typ=(0.01, 1.0), vec=False),
                                         "max_rank": Int(0, typ=(0, 50), optional=True)}, check=nonneg),
    Entry("spectral.best_rank_k", build=lambda n: _mat(stack=False).flatmap(
        lambda W: st.integers(0, 5).map(lambda k: {"W": W, "k": k})),
          bad={"W": _mat_bad("W", stack=False), "k": lambda n, kw: st.sampled_from([-1, 1.5, "1", True, None])}),
    Entry("spectral.principal_projection_error", build=lambda n: _mat(stack=False).flatmap(
        lambda W: st.integers(0, 5).map(lambda k: {"W": W, "k": k})),
          bad={"W": _mat_bad("W", stack=False), "k": lambda n, kw: st.sampled_from([-1, 1.5, "1", True, None])},
          check=nonneg),
    *[Entry(f"spectral.{f}", {"R": Pos(typ=(1.0, 10.0)), "r": Pos(typ=(0.01, 1.0)), "k": Int(1, typ=(1, 50), ext=(10**9,)),
                              "upper": Choice("vershynin", "3R")}, vec=True,
            check=None if f.startswith("log") else nonneg,
            inf=None if f.startswith("log") else "overflow: (3R/r)^k beyond 1.8e308 (use the log form)")
      for f in ("covering_number_ball_bounds", "log_covering_number_ball_bounds")],
    Entry("spectral.robust_generalization_bound", {"eps_rob": NonNeg(typ=(0.0, 1.0)), "n_cells": Real(1.0, INF, lo_closed=True, typ=(1.0, 1e6)),
                                                   "n": Real(1.0, INF, lo_closed=True, typ=(1.0, 1e6)),
                                                   "loss_bound": Pos(typ=(0.1, 10.0)), "fail_prob": Unit()},
          vec=True, check=nonneg, inf="overflow: loss_bound sqrt((2 log 2 N + 2 log(1/delta)) / n) beyond 1.8e308"),
    Entry("spectral.stable_rank_generalization_bound",
          {"eps_rob": NonNeg(typ=(0.0, 1.0)), "lip": NonNeg(typ=(0.0, 10.0)),
           "eta": Real(0.0, 1.0, hi_closed=True, typ=(0.1, 1.0)), "W_op": Pos(typ=(0.1, 10.0)),
           "R": Pos(typ=(1.0, 10.0)), "srank": Real(1.0, INF, lo_closed=True, typ=(1.0, 10.0)),
           "cover_radius": Pos(typ=(0.01, 1.0)), "n": Real(1.0, INF, lo_closed=True, typ=(10.0, 1e6)),
           "loss_bound": Pos(typ=(0.1, 10.0)), "fail_prob": Unit(), "upper": Choice("3R", "vershynin")},
          vec=False, check=nonneg, inf="overflow: the covering number of a high-dimensional ball"),
]
