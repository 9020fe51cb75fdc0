"""Registry entries: the non-engine simulation helpers (grokclocks.sim.data, .linear, .langevin,
.landscapes, .deep_linear, .kramers, .models).

JAX compiles once per shape and static argument, so typical calls use a few fixed small sizes (the
fixtures below are built once per process) and the run functions carry a high ``cost`` (few examples
per profile); invalid arguments are rejected before anything is compiled, so they are cheap.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import strategies as st

from .kinds import (INF, NAN, Choice, Entry, Fixed, Flag, Func, Int, NonNeg, Pos, Real, Unit, array_bad, nonneg)

SEEDS = Fixed((0,), (0, 1), 0, bad=((), (-1,), (0.5,), ("a",), None, -1, True))


def _key(seed: int = 0):
    import jax

    return jax.random.PRNGKey(seed)


@functools.lru_cache(maxsize=None)
def _ts():
    from grokclocks.sim import linear

    return linear.draw_teacher_student(6, 0.5, seeds=(0, 1))


@functools.lru_cache(maxsize=None)
def _tl():
    from grokclocks.sim import linear

    return linear.draw_two_layer(4, 0.5, 3, seeds=(0,))


@functools.lru_cache(maxsize=None)
def _dl_data():
    from grokclocks.sim import deep_linear

    return deep_linear.make_regression_data((0,), 3, 2, 8)


@functools.lru_cache(maxsize=None)
def _dl_factors():
    from grokclocks.sim import deep_linear

    return deep_linear.init_factors((0,), (3, 2, 2))


@functools.lru_cache(maxsize=None)
def _dl_traj():
    from grokclocks.sim import deep_linear

    return deep_linear.run_deep_linear(_dl_data(), _dl_factors(), mu=0.01, eta=0.01, steps=4)


@functools.lru_cache(maxsize=None)
def _kr_params():
    import jax.numpy as jnp

    from grokclocks.sim import kramers

    return {k: np.asarray(v) for k, v in kramers.alpha_two_layer_init(_key(0), 5, 3, dtype=jnp.float64).items()}


def _lazy(fn):
    """A strategy of one value built on first use (fixtures need JAX: nothing is built at import)."""
    return st.just(None).map(lambda _: fn())


KEY = st.just(None).map(lambda _: _key(0))
KEY_BAD = lambda n, kw: st.sampled_from([0, "key", None, np.zeros(3, np.uint32), np.zeros((2,), np.float32)])  # noqa: E731
DATA_BAD = lambda n, kw: st.sampled_from([None, "data", {"X": 1}, 3.0])  # noqa: E731


def _ridge():
    return st.just(None).map(lambda _: {"Phi": np.random.default_rng(0).standard_normal((5, 3)),
                                        "y": np.random.default_rng(1).standard_normal(5),
                                        "theta0": np.zeros(3)})


def _diag():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 3))
    return {"X": X, "y": X @ np.array([1.0, 0.0, 0.0]), "Sigma_test": np.eye(3), "beta_star": np.array([1.0, 0.0, 0.0])}


def _vec_bad(name, size_from=None):
    def bad(n, kw):
        v = np.asarray(kw[name], dtype=float)
        return st.sampled_from(array_bad(v)[:5] + [np.append(v, 1.0), "v", None])
    return bad


ENTRIES = [
    # ---------------------------------------------------------------- sim.data
    Entry("sim.data.teacher_student_keys", {"d_in": Int(1, typ=(1, 50)), "seeds": SEEDS}),
    Entry("sim.data.make_teacher_student", {"key": Fixed(None), "d_in": Fixed(6), "lam": Fixed(0.5, 1.5, bad=(0.0, -1.0, NAN, INF, "0.5", None, 1e6, np.array([0.5, 0.5]))),
                                            "d_out": Fixed(1), "init_scale": Real(typ=(-2.0, 2.0), vec=False),
                                            "sigma2": NonNeg(typ=(0.0, 1.0), vec=False)},
          build=lambda n: KEY.map(lambda k: {"key": k}), bad={"key": KEY_BAD}, cost=30),
    Entry("sim.data.make_two_layer_teacher_student", {"key": Fixed(None), "d_in": Fixed(4), "lam": Fixed(0.5, bad=(0.0, -1.0, NAN, INF, "0.5", None, 1e6, np.array([0.5, 0.5]))),
                                                      "d_h": Fixed(3), "d_out": Fixed(1)},
          build=lambda n: KEY.map(lambda k: {"key": k}), bad={"key": KEY_BAD}, cost=30),
    Entry("sim.data.n_train_from_lambda", {"d_in": Int(1, typ=(1, 1000)), "lam": Pos(typ=(0.01, 2.0), vec=False)},
          raises=lambda d_in, lam: d_in / lam < 0.5, check=nonneg),
    Entry("sim.data.modular_addition_table", {"p": Fixed(3, 5, bad=(1, 2.5, "p", None, 10**6, True))}, cost=5),
    Entry("sim.data.make_modular_addition", {"key": Fixed(None), "p": Fixed(5), "alpha": Real(0.0, 1.0, hi_closed=True,
                                             typ=(0.2, 1.0), vec=False)},
          build=lambda n: KEY.map(lambda k: {"key": k}), bad={"key": KEY_BAD}, cost=30),
    Entry("task.modular_table", {"p": Int(2, typ=(2, 20), capped=True),
                                     "operation": Choice("add", "sub", "mul", "sq_sum")}),
    Entry("task.token_inputs", {"p": Fixed(5), "equals": Flag()},
          build=lambda n: st.integers(0, 6).map(lambda k: {"a": np.arange(k) % 5, "b": (np.arange(k) * 2) % 5}),
          bad={"a": lambda n, kw: st.sampled_from([np.append(kw["a"], 5), np.append(kw["a"], -9), np.append(kw["a"], 0.5), "a",
                                                   None, np.append(kw["a"], 1)]),
               "b": lambda n, kw: st.sampled_from([np.append(kw["b"], 5), np.append(kw["b"], NAN), "b"])},
          names={"a": ("b",), "b": ("a",)}),
    Entry("task.onehot_inputs", {"p": Fixed(5)},
          build=lambda n: st.integers(0, 6).map(lambda k: {"a": np.arange(k) % 5, "b": (np.arange(k) * 2) % 5}),
          bad={"a": lambda n, kw: st.sampled_from([np.append(kw["a"], 5), np.append(kw["a"], 0.5), "a", None])},
          names={"a": ("b",)}),
    Entry("task.random_split_mask", {"p": Fixed(5, 7, bad=(1, "p", None, 10**6)), "seeds": SEEDS,
                                         "frac": Unit(vec=False), "n_train": Fixed(None)},
          raises=lambda p, frac, **k: not 1 <= int(frac * p * p) <= p * p - 1),
    Entry("task.designed_split_mask", {"p": Fixed(5, 7, bad=(1, "p", None)), "design": Choice("square", "strip"),
                                           "k": Fixed(1, 2, bad=(-1, 99, 1.5, "k"))}, names={"k": ("p",)}),
    # ---------------------------------------------------------------- sim.linear
    Entry("sim.linear.draw_teacher_student", {"d_in": Fixed(6), "lam": Fixed(0.5, 1.5, bad=(0.0, -1.0, NAN, INF, "0.5", None, 1e6, np.array([0.5, 0.5]))), "d_out": Fixed(1),
                                              "seeds": Fixed((0,), (0, 1), bad=((), (-1,), ("a",), None)),
                                              "init_scale": Real(typ=(-2.0, 2.0), vec=False),
                                              "sigma2": NonNeg(typ=(0.0, 1.0), vec=False)}, cost=30,
          check=lambda out, kw: None if abs(out.lam - out.d_in / out.n_train) <= 0.5 * out.lam else
          f"stored lam {out.lam} but d_in / n_train = {out.d_in / out.n_train}"),
    Entry("sim.linear.draw_two_layer", {"d_in": Fixed(4), "lam": Fixed(0.5, bad=(0.0, -1.0, NAN, INF, "0.5", None, 1e6, np.array([0.5, 0.5]))), "d_h": Fixed(3),
                                        "d_out": Fixed(1), "seeds": Fixed((0,), bad=((), (-1,), None))}, cost=30),
    Entry("sim.linear.run_gd", {"data": Fixed(None), "eta": Pos(typ=(1e-3, 0.05), vec=False, grid_ok=True), "steps": Fixed(5),
                                "gamma": NonNeg(typ=(0.0, 0.01), vec=False, grid_ok=True), "record_every": Fixed(1),
                                "wd_convention": Choice("paper", "torch")},
          build=lambda n: _lazy(_ts).map(lambda d: {"data": d}), bad={"data": DATA_BAD}, cost=30,
          raises=lambda eta, gamma, **k: eta * 40 >= 2),
    Entry("sim.linear.run_gd_spectral", {"data": Fixed(None), "eta": Pos(typ=(1e-3, 0.05), vec=False),
                                         "ts": Fixed((0, 1, 5), np.array([0.0, 2.5]), bad=((-1,), (NAN,), "t", ())),
                                         "gamma": NonNeg(typ=(0.0, 0.01), vec=False), "wd_convention": Choice("paper", "torch")},
          build=lambda n: _lazy(_ts).map(lambda d: {"data": d}), bad={"data": DATA_BAD}, cost=30,
          raises=lambda eta, **k: eta * 40 >= 1),
    Entry("sim.linear.crossing_times", {"data": Fixed(None), "eta": Pos(typ=(1e-3, 0.05), vec=False),
                                        "loss_star": Pos(typ=(1e-4, 0.1), vec=False),
                                        "gamma": NonNeg(typ=(0.0, 0.01), vec=False), "wd_convention": Choice("paper", "torch")},
          build=lambda n: _lazy(_ts).map(lambda d: {"data": d}), bad={"data": DATA_BAD}, cost=30,
          raises=lambda eta, **k: eta * 40 >= 1, inf="inf: the loss never falls to loss_star (documented)",
          nan="grok_time is NaN where neither loss reaches loss_star (both times inf; documented)"),
    Entry("sim.linear.run_two_layer", {"data": Fixed(None), "eta": Pos(typ=(1e-3, 0.05), vec=False, grid_ok=True), "steps": Fixed(5),
                                       "activation": Choice("linear", "tanh"), "gamma": NonNeg(typ=(0.0, 0.01), vec=False, grid_ok=True),
                                       "record_every": Fixed(1), "n_gen": Fixed(16)},
          build=lambda n: _lazy(_tl).map(lambda d: {"data": d}), bad={"data": DATA_BAD}, cost=30),
    Entry("sim.linear.run_gd_fresh_noise", {"data": Fixed(None), "eta": Pos(typ=(1e-3, 0.05), vec=False), "steps": Fixed(5),
                                            "sigma2": NonNeg(typ=(0.0, 1.0), vec=False), "gamma": NonNeg(typ=(0.0, 0.01), vec=False),
                                            "record_every": Fixed(1), "noise_seed": Int(0, typ=(0, 100))},
          build=lambda n: _lazy(_ts).map(lambda d: {"data": d}), bad={"data": DATA_BAD}, cost=30,
          raises=lambda eta, **k: eta * 40 >= 1),
    # ---------------------------------------------------------------- sim.langevin
    Entry("sim.langevin.potential_fns", {"potential": Choice("double_well_1d", "saddle_2d"),
                                         "params": Fixed(None, {"h": 2.0}, bad=("h", {"q": 1.0}, {"h": -1.0}, [1.0]))},
          names={"params": ("h", "q")}),
    Entry("sim.langevin.double_well_1d", {"h": Pos(typ=(0.1, 5.0), vec=False)}),
    Entry("sim.langevin.saddle_2d", {"h": Pos(typ=(0.1, 5.0), vec=False), "k": Pos(typ=(0.1, 5.0), vec=False),
                                     "c": NonNeg(typ=(0.0, 5.0), vec=False)}),
    Entry("sim.langevin.euler_maruyama", {"T": Pos(typ=(0.1, 1.0), vec=False), "dt": Pos(typ=(1e-3, 1e-2), vec=False),
                                          "n_steps": Fixed(10), "dtype": Fixed("float32", bad=("int32", "x", "complex64"))},
          build=lambda n: st.just(None).map(lambda _: {"grad_F": __import__("grokclocks.sim.langevin", fromlist=["x"]).double_well_1d()[1],
                                                       "x0": np.full((4, 1), -1.0), "key": _key(0)}),
          bad={"grad_F": lambda n, kw: st.sampled_from([3.0, "g", None]),
               "x0": lambda n, kw: st.sampled_from([np.full((4, 1), NAN), np.zeros((2, 2, 2)), "x", None])}, cost=30),
    Entry("sim.langevin.mean_first_passage_time",
          {"potential": Fixed("double_well_1d"), "potential_params": Fixed({"h": 0.5}, bad=({"q": 1}, "h", [1])),
           "x0": Fixed((-1.0,), bad=((NAN,), "x", None, ((1.0,),))),
           "target": Fixed({"coord": 0, "threshold": 1.0}, {"threshold": 0.9},
                           bad=({"coord": 0}, {"coord": 5, "threshold": 1.0}, {"threshold": "a"}, "t", None,
                                {"coord": 0, "threshold": 1.0, "extra": 1}, {"coord": 0.5, "threshold": 1.0})),
           "T": Pos(typ=(1.0, 2.0), vec=False), "dt": Fixed(0.05), "n_walkers": Fixed(16), "horizon": Fixed(10.0)},
          names={"potential_params": ("params", "q", "h"), "x0": ("target",)}, cost=30,
          check=lambda out, kw: None if out.mean >= 0 and np.all(out.times >= 0) and 0 <= out.survival_at_horizon <= 1
          else f"negative time or survival outside [0, 1]: {out.mean}, {out.survival_at_horizon}",
          inf="inf: no walker escaped by the horizon (documented)"),
    Entry("sim.langevin.richardson_extrapolate", {"tau1": Real(typ=(1.0, 10.0), vec=False), "dt1": Fixed(0.02),
                                                  "tau2": Real(typ=(1.0, 10.0), vec=False), "dt2": Fixed(0.01),
                                                  "err1": NonNeg(typ=(0.0, 1.0), vec=False),
                                                  "err2": NonNeg(typ=(0.0, 1.0), vec=False)},
          inf="overflow: an extrapolation of taus near 1.8e308",
          bad={"dt1": lambda n, kw: st.sampled_from([0.005, NAN, -1.0, "d"]), "dt2": lambda n, kw: st.sampled_from([0.0, 0.03, "d"])},
          names={"dt1": ("dt2",), "dt2": ("dt1",)}),
    Entry("sim.langevin.first_passage_times", {"n_walkers": Fixed(8), "coord": Fixed(0, bad=(1, -1, 0.5, "c")),
                                               "threshold": Fixed(1.0, bad=(NAN, "t")), "T": Pos(typ=(0.3, 0.6), vec=False),
                                               "dt": Fixed(0.05), "n_steps": Fixed(40, bad=(0, 2**40, 1.5)),
                                               "seed": Int(0, typ=(0, 5))},
          build=lambda n: st.just(None).map(lambda _: {"grad_F": __import__("grokclocks.sim.langevin", fromlist=["x"]).double_well_1d(0.5)[1],
                                                       "x0": np.array([-1.0])}),
          bad={"grad_F": lambda n, kw: st.sampled_from([3.0, None]), "x0": lambda n, kw: st.sampled_from([np.array([NAN]), "x"])},
          names={"coord": ("x0",)}, cost=30),
    # ---------------------------------------------------------------- sim.landscapes
    Entry("sim.landscapes.power_landscape_gd", {"progress": Flag()},
          build=lambda n: st.sampled_from([(3.0, 4.0), (2.0,)]).map(lambda qs: {"config": __import__(
              "grokclocks.sim.landscapes", fromlist=["x"]).PowerLandscapeConfig(qs=qs, x0=(0.5, -0.2), eta=0.01, steps=6,
                                                                                record_every=2)}),
          bad={"config": lambda n, kw: st.sampled_from([None, "c", 3] + [
              __import__("dataclasses").replace(kw["config"], **r) for r in (
                  {"qs": (1.5,)}, {"eta": NAN}, {"eta": -1.0}, {"steps": 0}, {"x0": ("a",)}, {"qs": ("q",)})])},
          names={"config": ("q", "eta", "steps", "x0", "qs")}, cost=30),
    Entry("sim.landscapes.deep_linear_gd", {"progress": Flag()},
          build=lambda n: st.just(None).map(lambda _: {"config": __import__("grokclocks.sim.landscapes", fromlist=["x"]).DeepLinearConfig(
              target=(2.0, 0.0), init=(0.5, 0.5), depth=2, mu=0.1, eta=0.01, steps=6, record_every=2)}),
          bad={"config": lambda n, kw: st.sampled_from([None, "c"] + [
              __import__("dataclasses").replace(kw["config"], **r) for r in (
                  {"depth": 10**18}, {"depth": 0}, {"eta": 0.0}, {"mu": -1.0}, {"init": (0.5,)}, {"init": (-1.0, 0.5)},
                  {"target": (NAN, 0.0)})])},
          names={"config": ("depth", "eta", "mu", "init", "target")}, cost=30),
    Entry("sim.landscapes.deep_linear_energy_floor", {"depth": Int(1, typ=(1, 4)), "mu": NonNeg(typ=(0.0, 2.0), vec=False)},
          build=lambda n: st.sampled_from([(3.0, 1.0, 0.0), (0.5,)]).map(lambda t: {"target": t}),
          bad={"target": lambda n, kw: st.sampled_from([(NAN,), ("a",), None, ()])}, check=nonneg),
    Entry("sim.landscapes.separable_softmax_data", {"seed": Int(0, typ=(0, 10)), "n_classes": Int(2, typ=(2, 5)),
                                                    "dim": Fixed(4, bad=(1, 2.5, "d", None)),
                                                    "n": Fixed(12, bad=(0, 10**12, 1.5, True)),
                                                    "radius": Pos(typ=(0.5, 3.0), vec=False),
                                                    "noise": NonNeg(typ=(0.0, 1.0), vec=False)}, cost=3,
          inf="overflow: noise near 1.8e308"),
    Entry("sim.landscapes.softmax_regression", {"progress": Flag()},
          build=lambda n: st.sampled_from(["gd", "normalized_gd", "adam"]).map(lambda o: {"config": __import__(
              "grokclocks.sim.landscapes", fromlist=["x"]).SoftmaxRegressionConfig(optimizer=o, steps=6, record_every=2)}),
          bad={"config": lambda n, kw: st.sampled_from([None, "c"] + [
              __import__("dataclasses").replace(kw["config"], **r) for r in (
                  {"optimizer": "sgdx"}, {"eta": -1.0}, {"mu": 1.0}, {"steps": 0}, {"adam_eps": 0.0})])},
          names={"config": ("optimizer", "eta", "mu", "steps", "adam_eps")}, cost=30),
    Entry("sim.landscapes.factorized_softmax_gd", {"progress": Flag()},
          build=lambda n: st.just(None).map(lambda _: {"config": __import__("grokclocks.sim.landscapes", fromlist=["x"]).FactorizedSoftmaxConfig(
              depth=2, hidden=3, steps=6, record_every=2)}),
          bad={"config": lambda n, kw: st.sampled_from([None] + [
              __import__("dataclasses").replace(kw["config"], **r) for r in (
                  {"depth": 10**18}, {"depth": 1}, {"hidden": 0}, {"eta": NAN}, {"mu": -1.0})])},
          names={"config": ("depth", "hidden", "eta", "mu")}, cost=30),
    # ---------------------------------------------------------------- sim.deep_linear
    Entry("sim.deep_linear.make_regression_data", {"seeds": Fixed((0,), bad=((), (-1,), (0.5,), ("a",), None, -1, True)), "d_in": Fixed(3), "d_out": Fixed(2), "n": Fixed(8),
                                                   "rank": Int(1, typ=(1, 2)), "noise": NonNeg(typ=(0.0, 1.0), vec=False)},
          names={"seeds": ("seed",)}, cost=20, inf="overflow: noise near 1.8e308"),
    Entry("sim.deep_linear.make_circle_data", {"seeds": Fixed((0,), bad=((), (-1,), (0.5,), ("a",), None, -1, True)), "d_in": Fixed(3), "n_classes": Fixed(3), "n": Fixed(9),
                                               "radius": Pos(typ=(0.5, 3.0), vec=False),
                                               "noise": NonNeg(typ=(0.0, 1.0), vec=False)}, names={"seeds": ("seed",)}, cost=20,
          inf="overflow: noise near 1.8e308"),
    Entry("sim.deep_linear.init_factors", {"seeds": Fixed((0,), bad=((), (-1,), (0.5,), ("a",), None, -1, True)), "dims": Fixed((3, 2, 2), (2, 2), bad=((3,), (3, 0), None, "ab",
                                                                                                  tuple(range(1, 1003)))),
                                           "init": Choice("random", "balanced"), "init_scale": Pos(typ=(0.1, 2.0), vec=False)},
          names={"seeds": ("seed",), "dims": ("dims[i]",)}, cost=20),
    Entry("sim.deep_linear.run_deep_linear", {"data": Fixed(None), "factors": Fixed(None), "mu": NonNeg(typ=(0.0, 0.1)),  # a weight-decay grid
                                              "eta": Pos(typ=(1e-3, 0.02), vec=False), "steps": Fixed(4),
                                              "integrator": Choice("gd", "rk4")},
          build=lambda n: st.just(None).map(lambda _: {"data": _dl_data(), "factors": _dl_factors()}),
          bad={"data": DATA_BAD, "factors": lambda n, kw: st.sampled_from([(), (np.ones((1, 3, 3)),), None,
                                                                          (np.full((1, 2, 3), np.nan),)])},
          names={"factors": ("data",)}, cost=30),
    Entry("sim.deep_linear.run_end_to_end_flow", {"data": Fixed(None), "lam": NonNeg(typ=(0.0, 0.1), vec=False),
                                                  "p": Pos(typ=(0.5, 2.0), vec=False), "dt": Pos(typ=(1e-3, 0.02), vec=False),
                                                  "steps": Fixed(4), "integrator": Choice("gd", "rk4")},
          build=lambda n: st.just(None).map(lambda _: {"data": _dl_data(), "W0": np.ones((1, 2, 3)) * 0.1}),
          bad={"data": DATA_BAD, "W0": lambda n, kw: st.sampled_from([np.ones((1, 3, 2)), np.full((1, 2, 3), NAN), "W"])},
          names={"W0": ("data",)}, cost=30),
    Entry("sim.deep_linear.flow_time", build=lambda n: _lazy(_dl_traj).map(lambda t: {"traj": t}),
          bad={"traj": lambda n, kw: st.sampled_from([None, "t", 3.0])}, check=nonneg, cost=5),
    Entry("sim.deep_linear.loss_and_grad_W", {"loss": Choice("squared", "ce")},
          build=lambda n: st.just(None).map(lambda _: {"W": np.ones((2, 3)) * 0.1, "X": np.ones((4, 3)),
                                                       "Y": np.eye(2)[[0, 1, 0, 1]]}),
          bad={"W": lambda n, kw: st.sampled_from([np.full((2, 3), NAN), np.ones((3, 3)), "W"]),
               "X": lambda n, kw: st.sampled_from([np.full((4, 3), INF), np.ones(3)]),
               "Y": lambda n, kw: st.sampled_from([np.ones((4, 5)), "Y"])},
          names={"W": ("X", "Y", "shapes"), "X": ("W", "Y", "shapes"), "Y": ("W", "X", "shapes")}, cost=20),
    # ---------------------------------------------------------------- sim.kramers
    Entry("sim.kramers.alpha_two_layer_init", {"key": Fixed(None), "N": Int(1, typ=(4, 4), capped=True), "d": Fixed(3),
                                               "n_out": Fixed(1), "a_std": Pos(typ=(0.1, 2.0), vec=False, optional=True)},
          build=lambda n: KEY.map(lambda k: {"key": k}), cost=20, inf="overflow: a_std near 1.8e308"),
    Entry("sim.kramers.empirical_ntk", {"alpha": Real(0.0, 0.5, lo_closed=True, hi_closed=True, typ=(0.0, 0.5), vec=False)},
          build=lambda n: _lazy(_kr_params).map(lambda p: {"params": p, "X": np.ones((4, 3))}),
          bad={"params": lambda n, kw: st.sampled_from([None, {"W": 1.0}, "p"]),
               "X": lambda n, kw: st.sampled_from([np.full((4, 3), NAN), np.ones((4, 2)), "X"])},
          names={"params": ("W", "a"), "X": ("W", "shapes")}, cost=30),
    Entry("sim.kramers.modadd_target", {"p": Fixed(5, 7, bad=(1, "p", None, 10**9)), "rho": Real(0.0, 1.0, typ=(0.3, 0.7), vec=False),
                                        "split_seed": Int(0, typ=(0, 10)), "k": Int(0, typ=(0, 3))},
          names={"rho": ("floor",)}),
    Entry("sim.kramers.train_gd", {"alpha": Real(0.0, 0.5, lo_closed=True, hi_closed=True, typ=(0.0, 0.5), vec=False),
                                   "eta": Pos(typ=(1e-3, 0.02), vec=False), "steps": Fixed(4),
                                   "lam": NonNeg(typ=(0.0, 0.1), vec=False), "penalty": Choice("eq2", "half"),
                                   "train_W": Flag(), "record_every": Fixed(None, 2, bad=(3, 0, "r"))},
          build=lambda n: _lazy(_kr_params).map(lambda p: {"params": p, "X": np.ones((4, 3)), "y": np.ones(4)}),
          bad={"params": lambda n, kw: st.sampled_from([None, {"W": 1.0}]),
               "X": lambda n, kw: st.sampled_from([np.full((4, 3), NAN), np.ones((4, 2))]),
               "y": lambda n, kw: st.sampled_from([np.ones(5), np.full(4, NAN), "y"])},
          names={"params": ("W", "a"), "X": ("W", "shapes"), "y": ("X",), "record_every": ("steps",)}, cost=30),
    Entry("sim.kramers.ridge_gd_run", {"lam": Pos(typ=(1e-3, 0.1), vec=False), "eta": Pos(typ=(1e-3, 0.05), vec=False),
                                       "steps": Fixed(5, bad=(0, 1.5, 10**15)), "penalty": Choice("eq2", "half")},
          build=lambda n: _ridge(), bad={"Phi": lambda n, kw: st.sampled_from([np.full((5, 3), NAN), np.ones(5), "P"]),
                                         "y": _vec_bad("y"), "theta0": _vec_bad("theta0")},
          names={"Phi": ("y",), "y": ("Phi",), "theta0": ("Phi",)}, cost=30),
    Entry("sim.kramers.diagonal_net_gd", {"init_scale": Pos(typ=(0.05, 0.5), vec=False), "lam": Pos(typ=(1e-3, 0.1), vec=False),
                                          "eta": Pos(typ=(1e-3, 0.02), vec=False), "steps": Fixed(20), "penalty": Choice("eq2", "half"),
                                          "rel_level": Unit(vec=False), "record_every": Fixed(5, bad=(0, 99, "r"))},
          build=lambda n: st.just(None).map(lambda _: _diag()),
          bad={"X": lambda n, kw: st.sampled_from([np.full((6, 3), NAN), np.ones(6)]), "y": _vec_bad("y"),
               "Sigma_test": lambda n, kw: st.sampled_from([np.eye(2), "S"]), "beta_star": _vec_bad("beta_star")},
          names={"y": ("X",), "record_every": ("steps",)}, cost=30, inf="inf: never below rel_level (documented)"),
    Entry("sim.kramers.diagonal_net_gf", {"init_scale": Pos(typ=(0.05, 0.5), vec=False), "lam": Pos(typ=(1e-2, 0.1), vec=False),
                                          "penalty": Choice("eq2", "half"), "rel_level": Unit(vec=False), "t_max": Fixed(5.0)},
          build=lambda n: st.just(None).map(lambda _: _diag()),
          bad={"X": lambda n, kw: st.sampled_from([np.full((6, 3), NAN), np.ones(6)]), "y": _vec_bad("y"),
               "Sigma_test": lambda n, kw: st.sampled_from([np.eye(2), "S"]), "beta_star": _vec_bad("beta_star"),
               "t_max": lambda n, kw: st.sampled_from([0.0, NAN, "t"])},
          names={"y": ("X",)}, cost=30, inf="inf: never below rel_level by t_max (documented)"),
    Entry("sim.kramers.sgd_excess_loss", {"eta": Pos(typ=(1e-3, 0.02), vec=False), "batch_size": Int(1, typ=(1, 4)),
                                          "n_replicas": Fixed(4), "steps": Fixed(20), "burn_in": Fixed(5, bad=(20, -1, "b")),
                                          "seed": Int(0, typ=(0, 5))},
          build=lambda n: st.just(None).map(lambda _: {"X": np.random.default_rng(0).standard_normal((6, 2)),
                                                       "y": np.random.default_rng(1).standard_normal(6)}),
          bad={"X": lambda n, kw: st.sampled_from([np.full((6, 2), NAN), "X"]), "y": _vec_bad("y"),
               "batch_size": lambda n, kw: st.sampled_from([0, 7, 1.5])},
          names={"y": ("X",), "burn_in": ("steps",)}, cost=30),
    Entry("sim.kramers.modadd_adamw_run", {"p": Fixed(5), "N": Fixed(4), "seeds": Fixed((0,), bad=((), (-1,), None, "s")),
                                           "alpha": Real(0.0, 0.5, lo_closed=True, hi_closed=True, typ=(0.0, 0.5), vec=False),
                                           "lr": Pos(typ=(1e-3, 1e-2), vec=False), "wd": NonNeg(typ=(0.0, 1.0), vec=False),
                                           "steps": Fixed(10), "eval_every": Fixed(5, bad=(3, 0, "e")), "rho": Fixed(0.5),
                                           "b1": Fixed(0.9, bad=(1.0, -0.1, NAN)), "b2": Fixed(0.98, bad=(1.5, "b"))},
          names={"eval_every": ("steps",)}, cost=60),
    Entry("sim.kramers.measure_separation", {"p": Fixed(5), "rho": Fixed(0.5), "alpha": Real(0.0, 0.5, lo_closed=True,
                                             hi_closed=True, typ=(0.0, 0.5), vec=False),
                                             "widths": Fixed((2, 4), bad=((0,), (), None, ("a",))),
                                             "seeds": Fixed((0,), bad=((), (-1,), None)), "integrated": Fixed(False, bad=("no", 2)),
                                             "t_mult": Fixed(1.0, bad=(0.0, NAN)), "step_factor": Fixed(0.1, bad=(-1.0, "s"))},
          cost=60),
    # ---------------------------------------------------------------- sim.models
    Entry("sim.models.activation", {"name": Choice("linear", "tanh", "quadratic", "relu")}, names={"name": ("activation",)}),
    Entry("sim.models.linear_init", {"d_in": Int(1, typ=(3, 3), capped=True), "d_out": Fixed(1),
                                     "variance": Pos(typ=(0.1, 2.0), vec=False, optional=True)},
          build=lambda n: KEY.map(lambda k: {"key": k}), bad={"key": KEY_BAD}, cost=20),
    Entry("sim.models.two_layer_init", {"d_in": Fixed(3), "d_h": Int(1, typ=(2, 2), capped=True), "d_out": Fixed(1)},
          build=lambda n: KEY.map(lambda k: {"key": k}), bad={"key": KEY_BAD}, cost=20),
    Entry("sim.models.mean_field_quadratic_init", {"d_in": Fixed(3), "d_h": Int(1, typ=(2, 2), capped=True), "d_out": Fixed(2)},
          build=lambda n: KEY.map(lambda k: {"key": k}), bad={"key": KEY_BAD}, cost=20),
    Entry("sim.models.embedding_mlp_init", {"p": Int(2, typ=(3, 3), capped=True), "d_embed": Fixed(4), "d_hidden": Fixed(4)},
          build=lambda n: KEY.map(lambda k: {"key": k}), bad={"key": KEY_BAD}, cost=20),
    Entry("sim.models.tian_mlp_init", {"M": Int(2, typ=(3, 3)), "K": Int(1, typ=(2, 2), capped=True)},
          build=lambda n: KEY.map(lambda k: {"key": k}), bad={"key": KEY_BAD}, cost=20),
    Entry("sim.models.tian_mlp", {"M": Int(2, typ=(2, 50)), "K": Int(1, typ=(1, 50)), "activation": Choice("quadratic", "relu")}),
    Entry("sim.models.transformer_init", {"p": Int(2, typ=(3, 3), capped=True), "d_model": Fixed(4), "n_heads": Fixed(1),
                                          "d_head": Fixed(2), "d_mlp": Fixed(4)},
          build=lambda n: KEY.map(lambda k: {"key": k}), bad={"key": KEY_BAD}, cost=20),
    # ---------------------------------------------------------------- sim
    Entry("sim.enable_x64"),
    Entry("sim.x64_enabled"),
]

# JIT-compiling entries: their invalid calls are rejected before any compile, so they get the full count
# (one valid example per profile of 60: a compile takes 1-2 s on 2 cores; the thorough profile runs 33)
ENTRIES = [__import__("dataclasses").replace(e, cheap_invalid=True, cost=max(e.cost, 60)) if e.cost >= 20 else e
           for e in ENTRIES]
