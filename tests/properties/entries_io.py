"""Registry entries: logs (reading training logs), verification certificates and shards, the run-file and
memory helpers of sim.train, spectral_draws, the task masks, cite_many."""

from __future__ import annotations

import os
import tempfile

import numpy as np
from hypothesis import strategies as st

from .kinds import INF, NAN, Choice, Entry, Fixed, Flag, Int, NonNeg, Pos, nonneg

# ---------------------------------------------------------------------------------------------- logs


def _log_table():
    """A small in-memory log: a mapping of columns or a list of records, steps increasing."""
    @st.composite
    def s(draw):
        k = draw(st.integers(1, 6))
        steps = np.cumsum(draw(st.lists(st.integers(1, 50), min_size=k, max_size=k)))
        acc = draw(st.lists(st.floats(0.0, 1.0), min_size=k, max_size=k))
        loss = draw(st.lists(st.floats(0.0, 10.0), min_size=k, max_size=k))
        table = {"step": steps.tolist(), "val/acc": acc, "loss": loss}
        if draw(st.booleans()):
            table = [dict(zip(table, row)) for row in zip(*table.values())]
        columns = draw(st.sampled_from([None, {"test_acc": "val/acc"}, {"steps": "step", "train_loss": "loss"}]))
        return {"source": table, "columns": columns}
    return s()


def _table_bad(n, kw):
    src = kw["source"]
    rows = src if isinstance(src, list) else [dict(zip(src, r)) for r in zip(*src.values())]
    k = len(rows)
    bad = [3, None, "no/such/log.csv", [], {"x": [1.0, 2.0]},
           {"step": [r["step"] for r in rows], "val/acc": [1.5] * k},  # an accuracy outside [0, 1]
           {"step": [r["step"] for r in rows], "val/acc": ["a"] * k},
           {"step": [r["step"] for r in rows], "val/acc": [INF] * k},
           {"step": [r["step"] for r in rows], "loss": [-1.0] * k}]
    if k > 1:
        bad.append({"step": [r["step"] for r in rows][::-1], "val/acc": [r["val/acc"] for r in rows]})  # decreasing
    return st.sampled_from(bad)


def _run_logs():
    """1-3 RunLogs of one configuration (same series), from read_log."""
    def build(tables):
        import warnings

        from grokclocks.logs import read_log

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [read_log(t) for t in tables]
    return st.lists(_log_table().map(lambda d: d["source"]), min_size=1, max_size=3).map(
        lambda ts: {"logs": build(ts)})


def _logs_bad(n, kw):
    def other_series():
        from grokclocks.logs import read_log

        return kw["logs"] + [read_log({"step": [1, 2], "train_acc": [0.1, 0.2]})]
    return st.sampled_from([[], None, 3, "log", [kw["logs"][0], 3], tuple(range(2))]) | st.just(None).map(
        lambda _: other_series())


# ---------------------------------------------------------------------------------------------- verification


def _rows():
    from grokclocks.verification import Row

    return [Row("levi:eq8", "x", "agree", 1.0, 1.01, 0.01, 0.05, "rel", "src", True),
            Row("levi:eq11", "y", "agree", 2.0, float("inf"), float("inf"), 0.1, "rel", "src", False)]


def _tests_records():
    rec = st.fixed_dictionaries({"test": st.sampled_from(["verify/a.py::t", "verify/b.py::u"]),
                                 "wall_s": st.one_of(st.none(), st.floats(0.0, 400.0)),
                                 "compile_max_s": st.one_of(st.none(), st.floats(0.0, 100.0))})
    return st.lists(rec, max_size=3)


_TESTS_BAD = (3, "t", [3], [{}], [{"test": "a", "wall_s": "x"}], [{"test": "a", "wall_s": NAN}],
              [{"test": "a", "compile_max_s": -1.0}], [{"test": 3}])


def _partials(k_given=(1, 2), n=2, *, as_dirs=True):
    """A fresh directory of partial certificates (slices ``k_given`` of ``n``); the paths to pass."""
    from grokclocks.verification import certificate, write_certificate

    root = tempfile.mkdtemp(prefix="gc-prop-shards-")
    out = []
    for k in k_given:
        d = os.path.join(root, f"s{k}")
        tests = [{"test": f"verify/s{k}.py::t", "wall_s": 1.0, "compile_max_s": 0.1}]
        cert = certificate(_rows()[:1], "cpu", 1.0, tests=tests,
                           meta={"commit": "abc", "shard": [k, n], "plan": {"s.py": 1}})
        js, _ = write_certificate(cert, d, f"verify-cpu-shard-{k}-of-{n}")
        out.append(d if as_dirs else str(js))
    return out


def _paths_bad(merge):
    """Not a list of paths, a missing path, an empty directory; for a merge also a missing or repeated slice."""
    def bad(n, kw):
        cases = ["empty"] + (["missing", "twice"] if merge else [])
        return st.sampled_from([[], "dir", None, 3, [3], ["no/such/dir"]]) | st.sampled_from(cases).map(lambda what: (
            _partials((1,)) if what == "missing" else
            _partials((1, 2)) + _partials((1,)) if what == "twice" else [tempfile.mkdtemp(prefix="gc-prop-empty-")]))
    return bad


_PATHS_NAMES = ("paths", "certificate", "slice", "file or directory")


# ---------------------------------------------------------------------------------------------- verification: GPU tier

_SUITE = Fixed("levi", "kramers", "modular", bad=("nope", "../levi", "levi/x", 3, None, ""))
_ROOT = Fixed(None, bad=(3, "/no/such/checkout", ["x"]))
_SUITE_NAMES = {"suite": ("suite",), "root": ("root",)}


def _statuses():
    from grokclocks.verification import SuiteStatus

    states = st.sampled_from(["passed", "failed", "stale", "incomplete", "never run"])
    one = st.tuples(st.sampled_from(["levi", "kramers", "clocks"]), states,
                    st.sampled_from([None, "2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00"])).map(
        lambda t: SuiteStatus(t[0], t[1], date=t[2], wall_s=12.0 if t[2] else None))
    return st.lists(one, max_size=4, unique_by=lambda s: s.suite)


_STATUSES_BAD = (3, None, ["levi"], [{"suite": "levi"}])

_GPU_TIER = [
    Entry("verification.suites", {"root": _ROOT}, names={"root": ("root",)}),
    *[Entry(f"verification.{f}", {"suite": _SUITE, "root": _ROOT}, names=_SUITE_NAMES, cost=2)
      for f in ("check_suite", "suite_files", "suite_fingerprint", "suite_tests")],
    Entry("verification.function_of_node", {"nodeid": Fixed("verify/levi/test_levi.py::test_x[0.5-a]", "a.py::t",
                                                            bad=("a.py", 3, None, ""))}, names={"nodeid": ("nodeid",)}),
    Entry("verification.budget_estimates", {"directory": Fixed("docs/verification/gpu-budget", "/no/such/dir",
                                                               bad=(3, None, ["x"]))},
          names={"directory": ("directory",)}),
    Entry("verification.time_estimates", {"suite": _SUITE, "scale": Choice("cpu", "gpu"), "certificate": Fixed(None),
                                          "budget": Fixed(None, {"levi/test_levi.py::test_eq6_mp_law": 1.0}),
                                          "root": _ROOT}, names=_SUITE_NAMES | {"scale": ("scale",)}, cost=2),
    Entry("verification.plan_run", {"budget_s": NonNeg(typ=(0.0, 1e3), vec=False),
                                    "start_s": NonNeg(typ=(0.0, 30.0), vec=False)},
          build=lambda n: _statuses().map(lambda s: {"statuses": s, "estimates": {
              x.suite: {f"{x.suite}/test_x.py::test_a": (10.0, "fake")} for x in s}}),
          bad={"statuses": lambda n, kw: st.sampled_from(_STATUSES_BAD),
               "estimates": lambda n, kw: st.sampled_from([3, None, "x"])},
          names={"statuses": ("statuses",), "estimates": ("estimates",)}),
    Entry("verification.status_markdown", {"link_dir": Fixed(None, "gpu")},
          build=lambda n: _statuses().map(lambda s: {"statuses": s}),
          bad={"statuses": lambda n, kw: st.sampled_from(_STATUSES_BAD)}, names={"statuses": ("statuses",)}),
    Entry("verification.suite_status", {"certificate": Fixed(None), "suite": _SUITE, "root": _ROOT, "git": Flag()},
          names=_SUITE_NAMES | {"git": ("git",)}, cost=2),
    Entry("verification.suite_statuses", {"suite_names": Fixed(None, ["levi"], ["kramers", "levi"],
                                                               bad=(3, ["nope"], [3])),
                                          "root": _ROOT, "git": Flag()},
          build=lambda n: st.just(None).map(lambda _: {"directories": tempfile.mkdtemp(prefix="gc-prop-suites-")}),
          bad={"directories": lambda n, kw: st.sampled_from([3, None, [], [3]])},
          names={"directories": ("directories",), "suite_names": ("suite",), "root": ("root",), "git": ("git",)},
          cost=3),
    Entry("verification.read_suite_certificate", {"path": Fixed("/no/such/levi.json", bad=(3, None, "", ["x"]))},
          names={"path": ("path",)}),
    Entry("verification.suite_certificate", {"suite": _SUITE, "scale": Choice("cpu", "gpu"),
                                             "duration_s": NonNeg(typ=(0.0, 1e4), vec=False, optional=True),
                                             "meta": Fixed(None, {"commit": "abc"}, bad=(3, "m", [1])),
                                             "root": _ROOT},
          build=lambda n: st.just(None).map(lambda _: {"rows": _rows()}),
          bad={"rows": lambda n, kw: st.sampled_from([3, "r", [3]])},
          names=_SUITE_NAMES | {"rows": ("rows",), "meta": ("meta",), "scale": ("scale",), "duration_s": ("duration_s",)},
          inf="a row may carry a measured inf (shown as such)", cost=3),
]

# ---------------------------------------------------------------------------------------------- sim.train


def _record_every():
    return st.tuples(st.integers(1, 5), st.integers(1, 5)).map(lambda t: {"record_every": t[0], "steps": t[0] * t[1]})


def _new_run_path():
    return st.sampled_from(["run", "run.npz", "sub/dir/run"]).map(
        lambda name: os.path.join(tempfile.mkdtemp(prefix="gc-prop-run-"), name))


def _existing_run() -> str:
    d = tempfile.mkdtemp(prefix="gc-prop-run-")
    with open(os.path.join(d, "r.npz"), "wb") as fh:
        fh.write(b"x")
    return os.path.join(d, "r")


def _run_path_bad(n, kw):
    bad = [3, "", ".", [1], os.path.join(tempfile.gettempdir(), "x", "..")]
    out = st.sampled_from(bad)
    if not (kw["resume"] or kw["overwrite"]):
        out = out | st.just(None).map(lambda _: _existing_run())  # an existing run, neither resumed nor replaced
    return out


def _devices():
    def make(which):
        import jax

        return jax.local_devices() if which == "all" else which
    return st.sampled_from([None, 1, "all"]).map(lambda d: {"devices": make(d)})


def _device():
    def make(which):
        import jax

        return jax.devices()[0] if which == "first" else None
    return st.sampled_from([None, "first"]).map(lambda d: {"device": make(d)})


def _estimate():
    return st.fixed_dictionaries({"resident": st.integers(0, 10**9), "working": st.integers(0, 10**12),
                                  "n_runs": st.integers(1, 64)}).map(lambda e: {"estimate": e})


def _estimate_bad(n, kw):
    e = kw["estimate"]
    return st.sampled_from([{}, 3, None, {**e, "n_runs": 0}, {**e, "resident": -1}, {**e, "working": NAN},
                            {**e, "working": "1"}, {"resident": 1, "working": 1}])


def _chunk_ok(out, kw):
    n = kw["estimate"]["n_runs"]
    d = kw["n_devices"]
    if out is None:
        return None
    ok = isinstance(out, int) and d <= out <= max(n, d) and out % d == 0  # n: one chunk of every run (as None)
    return None if ok else f"chunk {out!r} for {n} runs on {d} devices"


def _step_model():
    def make(shape):
        import jax.numpy as jnp

        return {"step": _step, "metrics": _metrics, "state": jnp.ones(shape), "inputs": jnp.ones(shape[-1:])}
    return st.sampled_from([(2,), (3, 2)]).map(make)


def _step(s, x):
    return 0.9 * s + x


def _metrics(s, x):
    return {"s": s.sum()}


# ---------------------------------------------------------------------------------------------- task masks


def _mask_call(with_indices=True):
    """A training set of p in [2, 7] in one of task's spellings: bool (p, p), 0/1 ints, flat, or indices
    (flat or pair rows, with p given)."""
    @st.composite
    def s(draw):
        p = draw(st.integers(2, 7))
        m = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).random((p, p)) < draw(st.floats(0.1, 0.9))
        forms = ["bool", "int", "flat"] + (["flat_idx", "pair_idx"] if with_indices else [])
        form = draw(st.sampled_from(forms))
        flat = np.flatnonzero(m)
        x = {"bool": m, "int": m.astype(np.int64), "flat": m.ravel(), "flat_idx": flat,
             "pair_idx": np.stack(np.divmod(flat, p), axis=1)}[form]
        give_p = form.endswith("idx") or draw(st.booleans())
        return {"x": x, "p": p if give_p else None}
    return s()


def _mask_bad(name):
    def bad(n, kw):
        x = np.asarray(kw[name])
        p = kw.get("p") or 3
        return st.sampled_from(["m", None, np.full((p, p), NAN), np.ones((p, p), complex), np.ones((1, p, p), bool),
                                np.array([0.5]), np.array([0, p * p]) if p else np.array([0, 9]), np.array([1, 1]),
                                np.ones((3, 5), bool), x.astype(str)])
    return bad


def _p_bad(n, kw):
    x = np.asarray(kw.get("x", kw.get("mask", kw.get("indices"))))
    side = x.shape[0] if (x.dtype == bool and x.ndim == 2) else None
    bad = [1, 2.5, True, "3", 10**30, 10**12 + 39] + ([side + 1] if side else [])
    return st.sampled_from(bad)


def _indices():
    """Flat pair indices ``a*p + b`` or pair rows ``(a, b)`` of a random training set, no pair twice."""
    @st.composite
    def s(draw):
        p = draw(st.integers(2, 7))
        flat = np.flatnonzero(np.random.default_rng(draw(st.integers(0, 2**32 - 1))).random(p * p) < 0.5)
        return {"indices": np.stack(np.divmod(flat, p), axis=1) if draw(st.booleans()) else flat, "p": p}
    return s()


def _indices_bad(n, kw):
    p = kw["p"]
    return st.sampled_from([np.array([0, 0]), np.array([-1]), np.array([p * p]), np.array([[0, p]]), np.array([0.5]),
                            np.zeros((1, 1, 1), int), "i", None, np.array([NAN])])


def _stack_call():
    return st.lists(_mask_call(with_indices=False).map(lambda d: d["x"]), min_size=1, max_size=3).filter(
        lambda xs: len({np.asarray(x).size for x in xs}) == 1).map(lambda xs: {"x": [np.asarray(x) for x in xs], "p": None})


def _stack_bad(n, kw):
    xs = kw["x"]
    other = np.ones((3, 3), bool) if np.asarray(xs[0]).size == 4 else np.ones((2, 2), bool)  # a mask for another p
    return st.sampled_from(["m", None, [], xs + [other], [np.array(["a", "b"])], [np.full((2, 2), NAN)]])


_MASK_NAMES = {"x": ("train_mask",), "mask": ("train_mask",), "indices": ("train_mask",)}

ENTRIES = [
    Entry("logs.canonical_name", {"column": Fixed("val/acc", "eval_accuracy", "loss", "_step", "lr", "train/loss", "",
                                                  bad=(3, None, b"acc", ["acc"]))}),
    Entry("logs.parse_columns", {"text": Fixed(None, "", "test_acc=val/accuracy,steps=_step", " train_loss = loss ,",
                                               bad=("a", "=b", "a=", 3, ["a=b"], b"a=b"))},
          names={"text": ("columns",)}),
    Entry("logs.read_log", {"format": Fixed(None, "csv", bad=("nope", 3, ""))}, build=lambda n: _log_table(),
          bad={"source": _table_bad, "columns": lambda n, kw: st.sampled_from(
              ["x", 3, ["test_acc"], {"nope": "loss"}, {"test_acc": "no such column"}])},
          names={"source": ("mapping", "records", "a log", "column", "no such file"), "columns": ("columns",)}, cost=2),
    Entry("logs.merge_seeds", build=lambda n: _run_logs(), bad={"logs": _logs_bad}, names={"logs": ("logs", "series")},
          nan="NaN marks a step that a seed did not log (documented: the grid is the union of the seeds' grids)", cost=3),
    Entry("verification.parse_shard", {"text": Fixed("1/1", "1/2", "2/3", " 3/3", "10/10",
                                                     bad=("0/2", "3/2", "a", 3, None, "1/2/3", "1.0/2", True, ""))},
          names={"text": ("shard",)}),
    Entry("verification.shard_plan", {"n": Int(1, 10**4, typ=(1, 8))},
          build=lambda n: st.dictionaries(st.sampled_from(["a.py", "b.py", "c.py", "d.py", "e.py"]),
                                          st.floats(0.0, 100.0), max_size=5).map(lambda w: {"weights": w}),
          bad={"weights": lambda n, kw: st.sampled_from([3, None, [("a", 1.0)], {"a": NAN}, {"a": -1.0}, {"a": "x"},
                                                         {1: 1.0}, {"a": INF}])}),
    Entry("verification.budget_warnings", {"scale": Choice("cpu", "gpu")},
          build=lambda n: _tests_records().map(lambda t: {"tests": t}),
          bad={"tests": lambda n, kw: st.sampled_from(_TESTS_BAD + (None,))}),
    Entry("verification.certificate", {"scale": Choice("cpu", "gpu"), "duration_s": NonNeg(typ=(0.0, 1e4), vec=False,
                                                                                         optional=True),
                                       "meta": Fixed(None, {"commit": "abc"}, bad=(3, "m", [1]))},
          build=lambda n: _tests_records().map(lambda t: {"rows": _rows(), "tests": t}),
          bad={"tests": lambda n, kw: st.sampled_from(_TESTS_BAD),
               "rows": lambda n, kw: st.sampled_from([3, "r", [3]])},
          inf="a row may carry a measured inf (shown as such)"),
    Entry("verification.write_certificate", {"stem": Fixed(None, "cert", bad=("a/b", 3, "", ".."))},
          build=lambda n: st.sampled_from(["cpu", "gpu"]).map(lambda s: {
              "cert": __import__("grokclocks.verification", fromlist=["x"]).certificate(_rows(), s),
              "directory": tempfile.mkdtemp(prefix="gc-prop-cert-")}),
          bad={"cert": lambda n, kw: st.sampled_from([3, None, {}, {"meta": {}, "rows": []},
                                                      {"meta": {**kw["cert"]["meta"], "scale": "tpu"},
                                                       "rows": kw["cert"]["rows"]}]),
               "directory": lambda n, kw: st.sampled_from([3, None, [kw["directory"]]])},
          names={"cert": ("cert", "scale")}, cost=3),
    Entry("verification.certificate_markdown",
          build=lambda n: st.sampled_from(["cpu", "gpu"]).map(lambda s: {
              "cert": __import__("grokclocks.verification", fromlist=["x"]).certificate(_rows(), s)}),
          bad={"cert": lambda n, kw: st.sampled_from([3, None, {}, {"meta": {}, "rows": []},
                                                      {"meta": {**kw["cert"]["meta"], "scale": "tpu"},
                                                       "rows": kw["cert"]["rows"]},
                                                      {**kw["cert"], "rows": [{**r, "passed": not r["passed"]}
                                                                              for r in kw["cert"]["rows"]]}])},
          names={"cert": ("cert", "scale")}),
    Entry("verification.read_certificate", build=lambda n: st.sampled_from(["cpu", "gpu"]).map(lambda s: {
              "path": str(__import__("grokclocks.verification", fromlist=["x"]).write_certificate(
                  __import__("grokclocks.verification", fromlist=["x"]).certificate(_rows(), s),
                  tempfile.mkdtemp(prefix="gc-prop-read-"))[0])}),
          bad={"path": lambda n, kw: st.sampled_from([3, None, "", ["x"]])},
          names={"path": ("path",)}, inf="a row may carry a measured inf (shown as such)", cost=3),
    Entry("verification.partial_certificates", build=lambda n: st.booleans().map(
        lambda dirs: {"paths": _partials(as_dirs=dirs)}), bad={"paths": _paths_bad(False)}, names={"paths": _PATHS_NAMES},
          cost=5),
    Entry("verification.merge_certificates", build=lambda n: st.booleans().map(
        lambda dirs: {"paths": _partials(as_dirs=dirs)}), bad={"paths": _paths_bad(True)}, names={"paths": _PATHS_NAMES},
          cost=5),
    *_GPU_TIER,
    Entry("sim.train.check_record_every", build=lambda n: _record_every(),
          bad={"steps": lambda n, kw: st.sampled_from([0, -1, 2.5, "10", True, None, 10**30]
                                                      + ([kw["steps"] + 1] if kw["record_every"] > 1 else [])),
               "record_every": lambda n, kw: st.sampled_from([0, -1, 2.5, "2", True, None, kw["steps"] + 1])},
          names={"steps": ("steps", "record_every")}),
    Entry("sim.train.seed_tuple", {"seeds": Fixed(0, 3, (0, 1), [5, 2, 9], np.arange(3),
                                                  bad=((), -1, (2.5,), True, None, "a", (10**30,), (0, NAN), [[]])),
                                   "name": Fixed("seeds", "seed", bad=(3, None)), "distinct": Flag()},
          names={"seeds": ("seeds", "seed")}),
    Entry("runfile.check_run_path", {"resume": Flag(), "overwrite": Flag()},
          build=lambda n: st.one_of(st.none(), _new_run_path()).map(lambda p: {"save_path": p}),
          bad={"save_path": _run_path_bad},
          raises=lambda save_path, resume, overwrite: (save_path is None and (resume or overwrite))
          or (resume and overwrite)),
    Entry("sim.train.check_devices", {"n_runs": Int(1, typ=(1, 8), optional=True)}, build=lambda n: _devices(),
          bad={"devices": lambda n, kw: st.sampled_from([0, True, "cpu", 2.5, [], [3], 10**6])}),
    Entry("sim.train.choose_run_chunk", {"free_bytes": Int(0, typ=(0, 10**12), optional=True),
                                         "n_devices": Int(1, typ=(1, 4))},
          build=lambda n: _estimate(), bad={"estimate": _estimate_bad}, check=_chunk_ok),
    Entry("sim.train.free_device_memory", build=lambda n: _device(),
          bad={"device": lambda n, kw: st.sampled_from([3, "cpu", [None]])}, check=nonneg),
    Entry("sim.train.working_memory_estimate", {"record_every": Int(1, typ=(1, 4)), "n_records": Int(1, typ=(1, 4))},
          build=lambda n: _step_model(),
          bad={"step": lambda n, kw: st.sampled_from([3, None, "f"]),
               "metrics": lambda n, kw: st.sampled_from([3, None])}, check=nonneg, cost=2, cheap_invalid=True),
    Entry("sim.linear.spectral_draws", {"d_in": Int(1, typ=(2, 6), capped=True),
                                        "lam": Pos(typ=(0.25, 2.0), vec=False),
                                        "d_outs": Fixed(1, (1, 2), [3], bad=((), 0, (1, 2.5), "a", None)),
                                        "seeds": Fixed((0,), (0, 1), bad=((1, 1), (), (-1,), ("a",), None))},
          names={"d_outs": ("d_out",), "seeds": ("seed",)}, cost=10, cheap_invalid=True),
    Entry("task.as_mask", {"name": Fixed("train_mask")}, build=lambda n: _mask_call(),
          bad={"x": _mask_bad("x"), "p": _p_bad}, names=_MASK_NAMES),
    Entry("task.flat_mask", build=lambda n: _mask_call().map(lambda d: {"mask": d["x"], "p": d["p"]}),
          bad={"mask": _mask_bad("mask"), "p": _p_bad}, names=_MASK_NAMES),
    Entry("task.mask_indices", {"pairs": Flag()}, build=lambda n: _mask_call().map(lambda d: {"mask": d["x"], "p": d["p"]}),
          bad={"mask": _mask_bad("mask"), "p": _p_bad}, names=_MASK_NAMES, check=nonneg),
    Entry("task.mask_from_indices", {"name": Fixed("train_mask")}, build=lambda n: _indices(),
          bad={"indices": _indices_bad, "p": _p_bad}, names=_MASK_NAMES),
    Entry("task.as_mask_stack", {"name": Fixed("train_mask")}, build=lambda n: _stack_call(),
          bad={"x": _stack_bad}, names=_MASK_NAMES),
    # citations.py is owned by another helper: its invalid inputs raise ValueError / KeyError / TypeError
    # (reported), so only typical calls are drawn here, as for citations.cite
    Entry("citations.cite_many", {"targets": Fixed(["levi:eq8", "clocks"], "levi", ("kramers", "uniformity:task"), []),
                                  "format": Fixed("bibtex", "text")}),
]
