"""Fuzz the public API: ~10,000 seeded calls with random, extreme and malformed arguments.

Every call is drawn from the argument model of the property registry (``tests/properties``): a
*typical* valid call, a valid call with *extreme* values (5e-324, 1e300, a boundary's neighbour),
or a valid call with one argument made *invalid* (NaN, +-inf, out of range, wrong shape, empty,
complex, a string, a bool where a number is meant, a huge integer).  Each outcome is classified:

========================  =====================================================================
``domain``                ``DomainError`` (for an invalid argument: its message names the parameter)
``domain_unnamed``        ``DomainError`` whose message does not name the invalid parameter
``value``                 a result with no NaN and no inf
``inf_documented``        a result with +-inf where the registry documents why (overflow, "never")
``nan_documented``        a documented NaN marker (e.g. "no grokking time")
``diverged``              ``SimulationDiverged`` (the documented error of a diverging simulation)
``inf`` / ``nan``         an undocumented inf / a NaN returned
``suspect``               a value a cheap oracle rejects (a probability outside [0, 1], a negative time)
``error:<Type>``          any other exception type
``hang``                  no answer within the per-call timeout
``rejected_valid``        ``DomainError`` on a typical valid call that the registry does not document
``accepted_invalid``      an invalid argument answered with a value
========================  =====================================================================

The draws come from hypothesis with a fixed seed per function (``--seed``), so two runs of this
script -- e.g. on two commits -- make the same calls wherever the registry is the same.  Calls run in
worker processes (``--workers``, default 2) with a per-call ``SIGALRM`` timeout and a watchdog that
kills a worker stuck in C code.

Usage (from the repository root; the package under test is whatever ``grokclocks`` imports)::

    PYTHONPATH=$PWD python benchmarks/fuzz_api.py                      # writes benchmarks/results/fuzz_api.json
    PYTHONPATH=/tmp/fuzzbase python benchmarks/fuzz_api.py --out benchmarks/results/fuzz_api_base.json
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import multiprocessing as mp
import os
import platform
import queue
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))  # the registry (tests/properties) of THIS checkout

DEFECTS = ("inf", "nan", "suspect", "hang", "rejected_valid", "accepted_invalid", "domain_unnamed")


class CallTimeout(BaseException):
    """Raised by SIGALRM inside a call (a BaseException, so that no ``except Exception`` swallows it)."""


def _alarm(signum, frame):  # noqa: ARG001
    raise CallTimeout()


def classify(entry, mode: str, name: str | None, out) -> str:
    kind = out.kind
    if kind == "domain":
        if mode == "typical" and not (entry.raises is not None and _safe(entry.raises, out.kwargs)):
            return "rejected_valid"
        if mode == "invalid":
            names = (name,) + tuple(entry.names.get(name, ()))
            return "domain" if any(n in out.detail for n in names) else "domain_unnamed"
        return "domain"
    if mode == "invalid" and kind in ("value", "inf", "nan", "suspect"):
        return "accepted_invalid"
    if kind == "inf":
        return "inf_documented" if entry.inf else "inf"
    if kind == "nan":
        return "nan_documented" if entry.nan else "nan"
    if kind == "error":
        return "error:" + out.detail.split(":", 1)[0]
    return kind  # value, suspect, diverged


def _safe(pred, kw) -> bool:
    try:
        return bool(pred(**kw))
    except Exception:  # noqa: BLE001
        return False


def _calls_for(entry, budget: float) -> int:
    return max(3, int(round(budget / math.sqrt(max(entry.cost, 1.0)))))


def run_entry(entry, n_calls: int, seed: int, timeout: float, report) -> None:
    """Draw ``n_calls`` calls of ``entry`` (one third per mode where available) and report each outcome."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    from properties.runner import call, extreme_call, invalid_call, invalid_names, typical_call

    func = entry.resolve()
    if func is None:
        report(("missing", entry.name, None, None, "function not in this checkout", ""))
        return
    modes = ["typical"]
    if any(p.extreme for p in entry.params.values()):
        modes.append("extreme")
    if invalid_names(entry):
        modes.append("invalid")
    strategies = {"typical": typical_call(entry).map(lambda nk: ("typical", nk[1], None)),
                  "extreme": extreme_call(entry).map(lambda kw: ("extreme", kw, None)),
                  "invalid": invalid_call(entry).map(lambda kn: ("invalid", kn[0], kn[1]))}
    per_mode = max(1, n_calls // len(modes))
    for mode in modes:
        @hseed(zlib.crc32(f"{seed}:{entry.name}:{mode}".encode()))
        @settings(max_examples=per_mode, database=None, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), derandomize=False)
        @given(strategies[mode])
        def one(drawn):
            m, kw, name = drawn
            report(("start", entry.name, m, name, "", ""))
            signal.alarm(int(math.ceil(timeout)))
            try:
                out = call(entry, func, kw)
            except CallTimeout:
                from properties.runner import Outcome
                out = Outcome("hang", f"> {timeout:g} s")
            finally:
                signal.alarm(0)
            out.kwargs = kw
            kind = classify(entry, m, name, out)
            from properties.runner import short
            report(("done", entry.name, m, name, kind, (out.detail[:160] + " <- " + short(kw))[:400]))

        try:
            one()
        except CallTimeout:
            report(("done", entry.name, mode, None, "hang", "timeout outside a call"))
        except Exception as e:  # noqa: BLE001 -- a strategy that cannot draw for this checkout
            report(("skip", entry.name, mode, None, f"draw failed: {type(e).__name__}: {str(e)[:120]}", ""))


def worker(names: list[str], budget: float, seed: int, timeout: float, q) -> None:
    import warnings

    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, _alarm)
    from properties.registry import ENTRIES

    by_name = {e.name: e for e in ENTRIES}
    for n in names:
        e = by_name[n]
        q.put(("entry", n, None, None, "", ""))
        run_entry(e, _calls_for(e, budget), seed, timeout, q.put)
    q.put(("exit", None, None, None, "", ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=20261124)
    ap.add_argument("--budget", type=float, default=36.0, help="calls per function before the cost scaling")
    ap.add_argument("--timeout", type=float, default=30.0, help="per-call timeout in seconds")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated substrings of function names")
    ap.add_argument("--out", default=str(HERE / "results" / "fuzz_api.json"))
    args = ap.parse_args(argv)

    from properties.registry import ENTRIES

    names = [e.name for e in ENTRIES if not args.only or any(s in e.name for s in args.only.split(","))]
    planned = {e.name: _calls_for(e, args.budget) for e in ENTRIES if e.name in names}
    # heaviest first, dealt round-robin, so that the workers finish together
    order = sorted(names, key=lambda n: -planned[n] * next(e.cost for e in ENTRIES if e.name == n))
    shares = [order[i::args.workers] for i in range(args.workers)]

    import grokclocks

    t0 = time.perf_counter()
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    by_mode: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    examples: dict[str, list[str]] = collections.defaultdict(list)
    skipped: list[str] = []
    procs = {}
    state = {}  # worker id -> (entry, mode, name) in flight, remaining names
    for wid, share in enumerate(shares):
        if share:
            p = ctx.Process(target=worker, args=(share, args.budget, args.seed, args.timeout, q), daemon=True)
            p.start()
            procs[wid] = p
            state[wid] = {"remaining": list(share), "inflight": None, "last": time.time()}
    owner = {n: wid for wid, share in enumerate(shares) for n in share}
    watchdog = args.timeout + 60.0
    started: set[str] = set()

    def record(entry, mode, name, kind, detail):
        counts[entry][kind] += 1
        by_mode[mode or "-"][kind] += 1
        bad = kind in DEFECTS or kind.startswith("error:")
        if bad and len(examples[entry]) < 3:
            examples[entry].append(f"[{mode}{' ' + name if name else ''}] {kind}: {detail}")

    while procs:
        try:
            msg = q.get(timeout=5.0)
        except queue.Empty:
            msg = None
        now = time.time()
        if msg is not None:
            tag, entry, mode, name, kind, detail = msg
            wid = owner.get(entry) if entry else None
            if tag == "exit":
                for w, p in list(procs.items()):
                    if not p.is_alive() or (state[w]["remaining"] == [] and state[w]["inflight"] is None):
                        p.join(timeout=1)
                        procs.pop(w, None)
                continue
            st = state[wid]
            st["last"] = now
            if tag == "entry":
                if entry in st["remaining"]:
                    st["remaining"].remove(entry)
                started.add(entry)
                if len(started) % 25 == 0:
                    print(f"  {len(started)}/{len(names)} functions, {sum(sum(c.values()) for c in counts.values())} "
                          f"calls, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
            elif tag == "start":
                st["inflight"] = (entry, mode, name)
            elif tag == "done":
                st["inflight"] = None
                record(entry, mode, name, kind, detail)
            elif tag in ("skip", "missing"):
                skipped.append(f"{entry} [{mode}]: {kind}")
            if tag == "exit" or (not st["remaining"] and st["inflight"] is None and not procs[wid].is_alive()):
                procs.pop(wid, None)
        for wid, p in list(procs.items()):
            st = state[wid]
            if not p.is_alive() and st["inflight"] is None and not st["remaining"]:
                procs.pop(wid)
                continue
            stuck = st["inflight"] is not None and now - st["last"] > watchdog
            if stuck or not p.is_alive():
                p.kill()
                p.join()
                if st["inflight"] is not None:
                    e, m, n = st["inflight"]
                    record(e, m, n, "hang" if stuck else "error:WorkerDied",
                           f"no answer in {watchdog:g} s (killed)" if stuck else f"worker exit code {p.exitcode}")
                    st["inflight"] = None
                rest = st["remaining"]
                if rest:  # a fresh worker goes on with the next function
                    p2 = ctx.Process(target=worker, args=(rest, args.budget, args.seed, args.timeout, q), daemon=True)
                    p2.start()
                    procs[wid] = p2
                    st["last"] = time.time()
                else:
                    procs.pop(wid)
    wall = time.perf_counter() - t0

    totals = collections.Counter()
    for c in counts.values():
        totals.update(c)
    n_calls = sum(totals.values())
    defects = {k: v for k, v in totals.items() if k in DEFECTS or k.startswith("error:")}
    try:
        commit = subprocess.run(["git", "-C", str(Path(grokclocks.__file__).parent), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        commit = ""
    result = {
        "script": "benchmarks/fuzz_api.py", "seed": args.seed, "budget": args.budget, "timeout_s": args.timeout,
        "workers": args.workers, "grokclocks": str(Path(grokclocks.__file__).parent), "commit": commit,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; load average at the end "
                   f"{os.getloadavg()[0]:.1f}", "python": platform.python_version(), "wall_s": round(wall, 1),
        "functions": len(names), "calls": n_calls, "outcomes": dict(sorted(totals.items())),
        "outcomes_by_mode": {m: dict(sorted(c.items())) for m, c in sorted(by_mode.items())},
        "defects": dict(sorted(defects.items())), "defect_calls": sum(defects.values()),
        "clean_fraction": round(1 - sum(defects.values()) / max(n_calls, 1), 4),
        "per_function": {e: dict(sorted(c.items())) for e, c in sorted(counts.items())},
        "defect_examples": dict(sorted(examples.items())), "skipped": skipped,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str) + "\n")

    kinds = sorted(totals, key=lambda k: (k in DEFECTS or k.startswith("error:"), k))
    modes = sorted(by_mode)
    print(f"grokclocks at {result['grokclocks']} ({commit}); {len(names)} functions, {n_calls} calls, "
          f"{wall:.0f} s wall, {args.workers} workers")
    print(f"{'outcome':<28}" + "".join(f"{m:>10}" for m in modes) + f"{'total':>10}")
    for k in kinds:
        flag = " *" if (k in DEFECTS or k.startswith("error:")) else ""
        print(f"{k + flag:<28}" + "".join(f"{by_mode[m][k]:>10}" for m in modes) + f"{totals[k]:>10}")
    print(f"defect calls (*): {sum(defects.values())} of {n_calls} ({100 * sum(defects.values()) / max(n_calls, 1):.2f} %); "
          f"functions with a defect: {sum(1 for e in examples if examples[e])}")
    if skipped:
        print(f"skipped: {len(skipped)} (see JSON)")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
