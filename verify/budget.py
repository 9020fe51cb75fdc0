"""Time budget of the GPU verification tier (``pytest verify --scale gpu``), measured without a GPU.

Each verify module may list its GPU-scale tests' dominant programs in a module-level ``GPU_BUDGET``
(a list of :class:`grokclocks.verification.BudgetItem`).  For every item this script

1. counts the FLOPs of the program at the **full** GPU size from its jaxpr (``jax.make_jaxpr`` on the
   abstract inputs of :func:`jax.eval_shape`: nothing is allocated or run): ``dot_general`` exactly,
   elementwise ops one FLOP per output element, ``eigh`` as ``EIGH_FLOPS_COEF n^3`` per matrix, bodies of
   ``lax.scan`` times their length (XLA's own ``cost_analysis`` counts a loop body once, whatever its trip
   count, so it cannot be used for a scan);
2. compiles and runs the program on this machine's CPU at the **reduced** size ``(cpu_seeds, cpu_steps)``
   (compile time, then the best of two runs) and extrapolates the CPU time to the full size by the
   FLOP ratio;
3. estimates the H100 time of the test (an *estimate*, every constant stated below):

   ``H100 s = COMPILE_FACTOR x CPU compile  +  calls x [ T_CALL + eigh time + max(FLOPs / RATE, CPU-full / CPU_TO_H100)
   + scan iterations x T_ITER ]  +  host_s``  (an ``on_host`` program: the CPU time measured here; an item with
   ``build=None``: ``host_s`` only; an item with ``gpu_rate``: that measured H100 rate x seeds x steps)

and writes one JSON per suite, ``docs/verification/gpu-budget/<suite>.json`` (so that helpers measuring different
suites do not edit the same file), and the table ``docs/verification/gpu-budget.md`` from all of them (one row per
item, totals per test, per suite -- its pytest start-up ``SUITE_START_S`` included -- and overall; a test over
``TEST_LIMIT_S`` (240 s) or a suite over ``SUITE_LIMIT_S`` (420 s) is flagged, and the number of GPU windows the
tier needs is the first-fit-decreasing packing of the suites into windows of ``WINDOW_S`` seconds).  The planner
of a GPU window (``grokclocks verify --scale gpu --budget SECONDS``) times a test by its latest measurement where a
certificate has one and by this table otherwise.  The next GPU run's certificate
(per-test wall and compile time in its details) is compared with this table.

Registering a test (in ``verify/<suite>/test_<x>.py``)::

    from grokclocks.verification import BudgetItem

    def _budget_eq8(n_seeds, n_steps):
        def make_inputs():                      # JAX-traceable, no arguments: traced abstractly at full size
            return (jax.random.normal(jax.random.key(0), (n_seeds, 13333, 4000)),)
        def program(X):                         # JAX-traceable: the test's dominant computation
            return jnp.linalg.eigh(jnp.einsum("sni,snj->sij", X, X) / X.shape[1])
        return program, make_inputs

    GPU_BUDGET = [
        BudgetItem("test_eq8_losses", _budget_eq8, seeds=64, steps=1, cpu_seeds=1, cpu_steps=1,
                   calls=3, precision="float64", config="d_in=4000, lam 0.3/0.5/0.9, exact GD via eigh"),
    ]

``seeds``/``steps`` are the full GPU size, ``cpu_seeds``/``cpu_steps`` the reduced size run here (pick it so
that one run takes seconds); ``calls`` = how often the test runs the program with these shapes;
``host_s`` = numpy/scipy seconds outside the program (say in ``note`` where the number comes from).
A test may register several items; tests without one are listed as unregistered.

Usage::

    PYTHONPATH=. python verify/budget.py                      # every suite, measure, write the table
    PYTHONPATH=. python verify/budget.py --only levi,kramers  # re-measure two suites, keep the other rows
    PYTHONPATH=. python verify/budget.py --no-measure         # FLOP counts only (no CPU run)
    PYTHONPATH=. python verify/budget.py --recompute          # new constants, the stored measurements
    PYTHONPATH=. python verify/budget.py --recompute --measure-missing --only kramers   # + measure new items only

Each suite's rows live in their own ``gpu-budget/<suite>.json``; ``--only`` rewrites only those suites' files
and regenerates ``gpu-budget.md`` from all of them.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import importlib
import inspect
import json
import math
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VERIFY = ROOT / "verify"
OUT_DIR = ROOT / "docs" / "verification"

# ----------------------------------------------------------------------------- model constants (stated)
RATE = {"float32": 30e12, "float64": 25e12}
RATE_SRC = ("30 TFLOP/s float32 (the engine measured 33 TFLOP/s at 256 seeds on the H100, 2026-11-24); "
            "25 TFLOP/s float64 (assumed: ~40 % of the H100 SXM FP64 tensor-core peak of 67 TFLOP/s)")
EIGH_FLOPS_COEF = 9.0  # FLOPs of a symmetric eigendecomposition with vectors ~ 9 n^3 (tridiagonalisation + back-transform)
EIGH_4000_S = 0.38
EIGH_MIN_S = 2e-4
EIGH_SRC = ("eigh (float64, with vectors) 0.38 s x (n/4000)^3 per matrix, >= 0.2 ms: the 2026-11-24 log, where "
            "test_tstar_crossing_times ran 128 eighs of 4000 x 4000 (+ bisection) in 49 s under contention (upper "
            "bound; test_eq8_losses: 320 in 184 s, test_init_rescale: 192 in 166 s)")
T_ITER = 20e-6
T_ITER_SRC = ("20 us per scan iteration (kernel launches of a loop body; 2026-11-24 anchor: a 1-seed jit(scan) "
              "AdamW MLP step ran at 78 us incl. ~1.5 GFLOP)")
CPU_TO_H100 = 1000.0
CPU_TO_H100_SRC = ("the CPU time extrapolated to full size / 1000 as a floor where the FLOP count underrates a program "
                   "(an H100 is taken to be at most 1000x this CPU: the AdamW headline program ran at 36 GFLOP/s "
                   "float32 here, the engine at 33 TFLOP/s on the H100); memory bandwidth is not modelled otherwise, "
                   "except through the H100 rates measured on 2026-11-24")
T_CALL = 5e-3
T_CALL_SRC = "5 ms per program call (dispatch, transfer of the results to the host)"
COMPILE_FACTOR = 2.0
COMPILE_SRC = "XLA:GPU compile assumed 2x the XLA:CPU compile time measured here"
from grokclocks.verification import GPU_BENCH_S, GPU_COMMAND_S, GPU_SUITE_LIMIT_S, GPU_TEST_LIMIT_S, SUITE_START_S

TEST_LIMIT_S = GPU_TEST_LIMIT_S  # 240 s: no single test over this
SUITE_LIMIT_S = GPU_SUITE_LIMIT_S  # 420 s: no suite (its pytest process, start-up included) over this
WINDOW_S = GPU_COMMAND_S - GPU_BENCH_S  # the suites' share of one GPU window's command (the benchmark at its cap)

# Wall times of the 2026-11-24 H100 run (shared/gpu-runs/2026-11-24, parallel processes on one GPU:
# upper bounds under contention; "not finished" = no verdict within the process's 330-530 s).
LOGGED_2026_11_24: dict[str, str] = {
    "levi/test_levi.py::test_eq6_mp_law": "93-135",
    "levi/test_levi.py::test_eq5_finite_sample_exact": "27",
    "levi/test_levi.py::test_eq8_losses": "184-214",
    "levi/test_levi.py::test_tstar_crossing_times": "49",
    "levi/test_levi.py::test_accuracy_map": "59",
    "levi/test_levi.py::test_eq20_gd_identity": "40",
    "levi/test_levi.py::test_gd_exact_discretisation": "13 (cuSolver error)",
    "levi/test_levi.py::test_eq14_weight_decay_losses": "30 (cuSolver error)",
    "levi/test_levi.py::test_eq15_wd_asymptotes": "(cuSolver error)",
    "levi/test_levi.py::test_wd_grok_time": "59",
    "levi/test_levi.py::test_init_rescale": "166",
    "levi/test_levi.py::test_label_noise_fixed": "27",
    "levi/test_levi.py::test_noise_fresh": "26",
    "levi/test_levi.py::test_dout_nonmonotone": "74",
    "levi/test_levi.py::test_asymptotic_forms_vs_exact": "<1",
    "levi/test_levi_networks.py::test_eq17_hdot_one_step": "33",
    "levi/test_levi_networks.py::test_eq18_two_layer": "28",
    "levi/test_levi_networks.py::test_tanh": "99",
    "levi/test_levi_networks.py::test_appG_modular_addition": "411",
    "kramers/test_kramers.py::test_eyring_1d_simulation": "170-239",
    "kramers/test_kramers.py::test_eyring_2d_simulation": "488",
    "kramers/test_kramers.py::test_eyring_law_vs_exact": "4",
    "kramers/test_kramers.py::test_fpt_criterion_exact": "2",
    "kramers/test_kramers.py::test_escape_time_cv": "5",
    "kramers/test_kramers.py::test_fullbatch_gd_never_escapes": "61",
    "kramers/test_kramers.py::test_lln_kernel_norm": "30",
    "kramers/test_kramers.py::test_sep_initial_velocity_exponents": "111",
    "kramers/test_kramers.py::test_sep_integrated_kernel_change": "not finished",
    "kramers/test_kramers.py::test_rf_norm_scaling": "not run",
    "kramers/test_kramers.py::test_eq5_readout_residual": "2",
    "kramers/test_kramers.py::test_ridge_gd_exact": "80",
    "kramers/test_kramers.py::test_ridge_delay": "10",
    "kramers/test_kramers.py::test_lyu_slope": "not finished",
    "kramers/test_kramers.py::test_teff_sgd": "not run",
    "kramers/test_kramers.py::test_spectral_delay_ratio": "not run",
    "kramers/test_kramers.py::test_headline": "not run",
}


# ----------------------------------------------------------------------------- FLOPs from a jaxpr


@dataclasses.dataclass
class Cost:
    flops: float = 0.0  # everything but eigh
    eigh: list = dataclasses.field(default_factory=list)  # (n, count)
    iterations: float = 0.0  # scan iterations (launch-bound steps)
    unknown_loops: int = 0  # while loops (trip count unknown: body counted once)

    def add(self, other: "Cost", mult: float = 1.0) -> None:
        self.flops += mult * other.flops
        self.eigh += [(n, c * mult) for n, c in other.eigh]
        self.iterations += mult * other.iterations
        self.unknown_loops += other.unknown_loops

    @property
    def eigh_flops(self) -> float:
        return sum(c * EIGH_FLOPS_COEF * n**3 for n, c in self.eigh)

    @property
    def eigh_seconds(self) -> float:
        return sum(c * max(EIGH_4000_S * (n / 4000.0) ** 3, EIGH_MIN_S) for n, c in self.eigh)


def _size(aval: Any) -> int:
    return int(math.prod(getattr(aval, "shape", ()) or (1,)))


def _subjaxprs(eqn: Any):
    for v in eqn.params.values():
        for x in (v if isinstance(v, (tuple, list)) else (v,)):
            if hasattr(x, "eqns"):
                yield x
            elif hasattr(x, "jaxpr") and hasattr(x.jaxpr, "eqns"):
                yield x.jaxpr


def jaxpr_cost(jaxpr: Any) -> Cost:
    """FLOPs, eigendecompositions and scan iterations of a jaxpr (scan bodies x their length)."""
    c = Cost()
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name == "dot_general":
            (lc, _), _ = eqn.params["dimension_numbers"]
            lhs = eqn.invars[0].aval
            k = math.prod(lhs.shape[i] for i in lc) if lc else 1
            c.flops += 2.0 * _size(eqn.outvars[0].aval) * k
        elif name == "scan":
            inner = jaxpr_cost(eqn.params["jaxpr"].jaxpr)
            n = int(eqn.params["length"])
            c.add(inner, n)
            c.iterations += n
        elif name == "while":
            inner = Cost()
            for sub in _subjaxprs(eqn):
                inner.add(jaxpr_cost(sub))
            c.add(inner)
            c.unknown_loops += 1
        elif name == "cond":
            branches = [jaxpr_cost(b.jaxpr) for b in eqn.params["branches"]]
            c.add(max(branches, key=lambda b: b.flops + b.eigh_flops))
        elif name == "eigh":
            shape = eqn.invars[0].aval.shape
            c.eigh.append((int(shape[-1]), int(math.prod(shape[:-2]) if len(shape) > 2 else 1)))
        else:
            subs = list(_subjaxprs(eqn))
            if subs:
                for sub in subs:
                    c.add(jaxpr_cost(sub))
            else:
                c.flops += float(sum(_size(v.aval) for v in eqn.outvars))
    return c


# ----------------------------------------------------------------------------- helpers for GPU_BUDGET builders


def engine_program(step, metrics, record_every: int, n_records: int, batch_axes):
    """The program :func:`grokclocks.sim.train.simulate` runs (outer scan over records, inner scan over
    ``record_every`` steps, metrics per record, vmapped over ``batch_axes``), for budget builders:
    ``engine_program(...)(state0, inputs)``."""
    import jax

    from grokclocks.sim.train import batched

    def run(state, inputs):
        def one_step(s, _):
            return step(s, inputs), None

        def one_record(s, _):
            s, _ = jax.lax.scan(one_step, s, None, length=record_every)
            return s, metrics(s, inputs)

        return jax.lax.scan(one_record, state, None, length=n_records)

    return batched(run, batch_axes)


# ----------------------------------------------------------------------------- discovery


def _suites(only: set[str] | None) -> list[Path]:
    dirs = sorted(d for d in VERIFY.iterdir() if d.is_dir() and (d / "__init__.py").exists())
    return [d for d in dirs if only is None or d.name in only]


def discover(only: set[str] | None = None) -> list[tuple[str, Any, list[str]]]:
    """(module path relative to verify/, module, test names) for every test module of the chosen suites."""
    if str(VERIFY) not in sys.path:
        sys.path.insert(0, str(VERIFY))
    out = []
    for d in _suites(only):
        for f in sorted(d.glob("test_*.py")):
            mod = importlib.import_module(f"{d.name}.{f.stem}")
            tests = [n for n, o in inspect.getmembers(mod, inspect.isfunction) if n.startswith("test_")
                     and o.__module__ == mod.__name__]
            out.append((f"{d.name}/{f.name}", mod, sorted(tests, key=lambda n: inspect.getsourcelines(getattr(mod, n))[1])))
    return out


# ----------------------------------------------------------------------------- measuring one item


def _block(x: Any) -> Any:
    import jax

    return jax.block_until_ready(x)


def measure(item: Any, run_cpu: bool = True) -> dict[str, Any]:
    """Cost at full size, CPU time at reduced size and the H100 estimate of one BudgetItem."""
    import jax

    if item.build is None:  # host work only
        return estimate(item, {"test": item.test, "config": item.config, "seeds": item.seeds, "steps": item.steps,
                               "cpu_seeds": item.cpu_seeds, "cpu_steps": item.cpu_steps, "precision": item.precision,
                               "gflop": 0.0, "flops": 0.0, "eigh": [], "eigh_s": 0.0, "scan_iterations": 0.0,
                               "unknown_loops": 0})
    if item.precision == "float64":
        from grokclocks.sim import enable_x64

        enable_x64()
    program, make_full = item.build(item.seeds, item.steps)
    abstract = jax.eval_shape(make_full)
    full = jaxpr_cost(jax.make_jaxpr(program)(*abstract).jaxpr)
    row: dict[str, Any] = {
        "test": item.test, "config": item.config, "seeds": item.seeds, "steps": item.steps, "calls": item.calls,
        "cpu_seeds": item.cpu_seeds, "cpu_steps": item.cpu_steps, "precision": item.precision,
        "gflop": (full.flops + full.eigh_flops) / 1e9, "eigh": [[n, c] for n, c in full.eigh],
        "scan_iterations": full.iterations, "unknown_loops": full.unknown_loops, "host_s": item.host_s,
        "note": item.note,
    }
    cpu_full = None
    compile_s = None
    if run_cpu:
        prog_r, make_r = item.build(item.cpu_seeds, item.cpu_steps)
        inputs = _block(jax.jit(make_r)())
        small = jaxpr_cost(jax.make_jaxpr(prog_r)(*inputs).jaxpr)
        t0 = time.perf_counter()
        compiled = jax.jit(prog_r).lower(*inputs).compile()
        compile_s = time.perf_counter() - t0
        runs = []
        for _ in range(2):
            t0 = time.perf_counter()
            _block(compiled(*inputs))
            runs.append(time.perf_counter() - t0)
        run_s = min(runs)
        f_small = small.flops + small.eigh_flops
        f_full = full.flops + full.eigh_flops
        cpu_full = run_s * (f_full / f_small if f_small > 0 else item.seeds * item.steps / (item.cpu_seeds * item.cpu_steps))
        row.update(cpu_compile_s=compile_s, cpu_run_s=run_s, cpu_gflop=f_small / 1e9, cpu_full_s=cpu_full)
    row.update(flops=full.flops, eigh_s=full.eigh_seconds)
    return estimate(item, row)


def estimate(item: Any, row: dict[str, Any]) -> dict[str, Any]:
    """The H100 estimate of a measured row (the model of the module docstring, constants above)."""
    compile_s, cpu_full = row.get("cpu_compile_s"), row.get("cpu_full_s")
    if item.build is None:
        run_gpu, comp_gpu = 0.0, 0.0
    elif item.on_host:  # runs on the CPU device on every machine: the time measured here
        run_gpu, comp_gpu = (cpu_full or 0.0), (compile_s or 0.0)
    elif item.gpu_rate is not None:  # a rate measured on the H100 in an earlier run
        run_gpu = T_CALL + item.gpu_rate * item.seeds * item.steps
        comp_gpu = COMPILE_FACTOR * (compile_s or 0.0)
    else:
        run_gpu = (T_CALL + row["eigh_s"] + max(row["flops"] / RATE[item.precision], (cpu_full or 0.0) / CPU_TO_H100)
                   + row["scan_iterations"] * T_ITER)
        comp_gpu = COMPILE_FACTOR * (compile_s or 0.0)
    row.update(on_host=item.on_host or item.build is None, gpu_rate=item.gpu_rate, host_s=item.host_s,
               calls=item.calls, note=item.note, h100_compile_s=comp_gpu, h100_run_s=run_gpu,
               h100_s=comp_gpu + item.calls * run_gpu + item.host_s)
    return row


# ----------------------------------------------------------------------------- table


def _fmt(x: Any, nd: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if x == 0:
        return "0"
    return f"{x:.{nd}g}"


def pack_windows(suite_s: dict[str, float], capacity: float) -> list[list[str]]:
    """First-fit decreasing: the suites (seconds each) packed into windows of `capacity` seconds; a suite over the
    capacity gets a window of its own."""
    windows: list[list[str]] = []
    load: list[float] = []
    for s in sorted(suite_s, key=lambda x: (-suite_s[x], x)):
        for i, used in enumerate(load):
            if used + suite_s[s] <= capacity:
                windows[i].append(s)
                load[i] += suite_s[s]
                break
        else:
            windows.append([s])
            load.append(suite_s[s])
    return windows


def load_budget(out_dir: Path) -> dict[str, Any]:
    """Every suite's stored rows: {"modules": {module: {...}}, "meta": {suite: meta}}."""
    modules: dict[str, Any] = {}
    metas: dict[str, Any] = {}
    for f in sorted((out_dir / "gpu-budget").glob("*.json")):
        d = json.loads(f.read_text())
        modules.update(d["modules"])
        metas[f.stem] = d["meta"]
    return {"modules": modules, "meta": metas}


def write_table(data: dict[str, Any], out_dir: Path, suites: set[str] | None = None) -> tuple[Path, Path]:
    """Write ``gpu-budget/<suite>.json`` for the given suites (all if None) and ``gpu-budget.md`` from every suite."""
    jdir = out_dir / "gpu-budget"
    jdir.mkdir(parents=True, exist_ok=True)
    by_suite: dict[str, dict] = {}
    for mname, m in data["modules"].items():
        by_suite.setdefault(mname.split("/")[0], {})[mname] = m
    js = jdir
    for suite, mods in by_suite.items():
        if suites is None or suite in suites:
            (jdir / f"{suite}.json").write_text(json.dumps({"meta": data["meta"], "modules": mods}, indent=1,
                                                           sort_keys=True))
    data = load_budget(out_dir)
    modules = data["modules"]
    dates = sorted({m.get("date", "?") for m in data["meta"].values()})
    machines = sorted({m.get("machine", "?") for m in data["meta"].values()})
    data["meta"] = {"date": " / ".join(dates), "machine": " / ".join(machines)}
    lines = ["# GPU tier time budget (estimated)", "",
             f"Generated by `verify/budget.py` on {data['meta']['date']} ({data['meta']['machine']}). "
             "**These are estimates, not GPU measurements**: each test's dominant program is run here on the CPU at a "
             "reduced size, its FLOPs are counted at the full GPU size, and the H100 time is estimated as "
             "`2 x CPU compile + calls x [5 ms + eigh + max(FLOPs/rate, CPU-full/1000) + scan iterations x 20 us] + host` "
             "(programs the test runs on the host CPU device, and host-only work, at the time measured or logged; "
             "items with an H100 rate measured on 2026-11-24 use that rate). "
             "The next GPU certificate (per-test wall and compile time in its details) is to be compared with it.", "",
             "Model constants: " + "; ".join([RATE_SRC, EIGH_SRC, T_ITER_SRC, T_CALL_SRC, CPU_TO_H100_SRC, COMPILE_SRC]) + ".", "",
             f"Limits: no test over {TEST_LIMIT_S:.0f} s, no suite over {SUITE_LIMIT_S:.0f} s with its start-up, so that "
             "each suite fits one GPU window (15 minutes of device time, start-up included, at most 10 minutes a "
             "command); the suites of the tier are run window by window (`grokclocks verify --scale gpu --budget`, "
             "`benchmarks/gpu_session.sh`).", ""]
    total = 0.0
    suite_tot: dict[str, float] = {}
    flagged = []
    head = ("| test | GPU config | seeds x steps (calls) | GFLOP (full) | CPU reduced: seeds x steps, compile / run s | "
            "CPU full (extrap.) s | est. H100 s | 2026-11-24 log s | notes |")
    body = []
    for mname in sorted(modules):
        m = modules[mname]
        suite = mname.split("/")[0]
        for test in m["tests"]:
            rows = [r for r in m["items"] if r["test"] == test]
            node = f"{mname}::{test}"
            log = LOGGED_2026_11_24.get(node, "")
            if not rows:
                body.append(f"| `{node}` | (not registered) | | | | | | {log} | |")
                continue
            t_sum = sum(r["h100_s"] for r in rows)
            total += t_sum
            suite_tot[suite] = suite_tot.get(suite, 0.0) + t_sum
            if t_sum > TEST_LIMIT_S:
                flagged.append((node, t_sum))
            for i, r in enumerate(rows):
                red = (f"{r['cpu_seeds']} x {r['cpu_steps']}: {_fmt(r.get('cpu_compile_s'))} / {_fmt(r.get('cpu_run_s'))}"
                       if "cpu_run_s" in r else ("host only" if r.get("on_host") and not r["gflop"] else "not measured"))
                est = _fmt(r["h100_s"]) + (f" (test {_fmt(t_sum)})" if len(rows) > 1 and i == len(rows) - 1 else "")
                note = r["note"] + (f"; {r['unknown_loops']} while loop(s) counted once" if r["unknown_loops"] else "")
                body.append(f"| `{node}` | {r['config']} | {r['seeds']} x {r['steps']} ({r['calls']}) | {_fmt(r['gflop'])} | "
                            f"{red} | {_fmt(r.get('cpu_full_s'))} | {est} | {log if i == 0 else ''} | {note} |")
    suites_s = {s: v + SUITE_START_S for s, v in suite_tot.items()}
    windows = pack_windows(suites_s, WINDOW_S)
    tier = sum(suites_s.values())
    lines += [f"**Estimated total of the registered tests: {total:.0f} s ({total / 60:.1f} min); with the start-up of "
              f"each suite's pytest process ({SUITE_START_S:.0f} s), {tier:.0f} s.** Per suite (start-up included): "
              + ", ".join(f"{s} {v:.0f} s" for s, v in sorted(suites_s.items())) + ".", "",
              f"**GPU windows:** one window's command is at most {GPU_COMMAND_S:.0f} s, of which the quick engine "
              f"benchmark takes up to {GPU_BENCH_S:.0f} s, leaving {WINDOW_S:.0f} s for suites; packed first-fit "
              f"decreasing, the tier needs **{len(windows)} windows**: "
              + "; ".join(f"{i + 1}: " + ", ".join(w) + f" ({sum(suites_s[x] for x in w):.0f} s)"
                          for i, w in enumerate(windows)) + ".", ""]
    over_suites = [(s, v) for s, v in sorted(suites_s.items()) if v > SUITE_LIMIT_S]
    if flagged:
        lines += [f"**Over the per-test limit ({TEST_LIMIT_S:.0f} s):** "
                  + ", ".join(f"`{n}` ({v:.0f} s)" for n, v in flagged) + ".", ""]
    if over_suites:
        lines += [f"**Over the per-suite limit ({SUITE_LIMIT_S:.0f} s):** "
                  + ", ".join(f"`{n}` ({v:.0f} s)" for n, v in over_suites) + ".", ""]
    lines += [head, "|" + "---|" * 9] + body + [""]
    md = out_dir / "gpu-budget.md"
    md.write_text("\n".join(lines))
    return js, md


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Estimate the H100 time of every registered GPU-scale verify test.")
    ap.add_argument("--only", help="comma-separated suites (e.g. levi,kramers); the other suites' rows are kept")
    ap.add_argument("--out", default=str(OUT_DIR), help="output directory (default docs/verification)")
    ap.add_argument("--no-measure", action="store_true", help="count FLOPs only, do not run on the CPU")
    ap.add_argument("--test", help="only items of this test function (for a quick look; not written)")
    ap.add_argument("--recompute", action="store_true",
                    help="re-derive the estimates of the stored measurements with the current constants (no run)")
    ap.add_argument("--measure-missing", action="store_true",
                    help="with --recompute: measure the items that have no stored measurement (new tests or configs)")
    args = ap.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    out = Path(args.out)
    modules = dict(load_budget(out)["modules"])
    if args.recompute:
        for mname, mod, tests in discover(only):
            if mname not in modules and not args.measure_missing:  # never measured: nothing to recompute
                continue
            stored = {(r["test"], r["config"]): r for r in modules.get(mname, {}).get("items", [])}
            rows = []
            for item in getattr(mod, "GPU_BUDGET", []):
                r = stored.get((item.test, item.config))
                if r is None and item.build is None:  # host work only: nothing to measure
                    r = measure(item)
                if r is None and args.measure_missing:
                    r = measure(item)
                    print(f"{mname}::{item.test} [{item.config}]: measured, est. H100 {r['h100_s']:.3g} s", flush=True)
                if r is None:
                    print(f"{mname}::{item.test} [{item.config}]: not measured yet (run without --recompute, or add "
                          "--measure-missing)")
                    continue
                if "flops" not in r:  # rows written before the FLOP split was stored
                    r["eigh_s"] = Cost(eigh=[tuple(e) for e in r["eigh"]]).eigh_seconds
                    r["flops"] = r["gflop"] * 1e9 - Cost(eigh=[tuple(e) for e in r["eigh"]]).eigh_flops
                rows.append(estimate(item, r))
            modules[mname] = {"tests": tests, "items": rows}
        only = set()  # nothing to measure
    for mname, mod, tests in (discover(only) if only != set() else []):
        items = []
        for item in getattr(mod, "GPU_BUDGET", []):
            if args.test and item.test != args.test:
                continue
            t0 = time.perf_counter()
            row = measure(item, run_cpu=not args.no_measure)
            print(f"{mname}::{item.test} [{item.config}]: {row['gflop']:.3g} GFLOP, CPU "
                  f"{_fmt(row.get('cpu_run_s'))} s at {item.cpu_seeds}x{item.cpu_steps} -> est. H100 {row['h100_s']:.3g} s "
                  f"({time.perf_counter() - t0:.1f} s to measure)", flush=True)
            items.append(row)
        modules[mname] = {"tests": tests, "items": items}
    if args.test:
        return 0
    import jax

    meta = {"date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, jax {jax.__version__} "
                       f"({jax.devices()[0].platform})",
            "constants": {"rate": RATE, "eigh_4000_s": EIGH_4000_S, "t_iter_s": T_ITER, "cpu_to_h100": CPU_TO_H100,
                          "compile_factor": COMPILE_FACTOR}}
    suites = set(args.only.split(",")) if args.only else {m.split("/")[0] for m in modules}
    js, md = write_table({"meta": meta, "modules": modules}, out, suites)
    print(f"written {md} and {js}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
