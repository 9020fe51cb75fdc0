"""Measure the accuracy contract of the pure-math core and write the "Accuracy" page.

For every case in ``tests/accuracy/cases_*.py`` (see ``tests/accuracy/harness.py``): the corners of
its domain and its fixed points plus a seeded sample of ``--n`` points (log-uniform per argument,
stratified across the pieces of each declared branch), each compared with the case's mpmath reference; the worst error, where it occurs, the number of documented ``DomainError``
points and every breach of the contract.  Cases whose reference takes seconds per point stop after
``--seconds`` per case (the number of points measured is recorded).  Writes ``docs/accuracy.json``
and ``docs/accuracy.md``::

    python docs/gen_accuracy.py                 # 2000 points per case, <= 240 s per case
    python docs/gen_accuracy.py --n 200 --only rmt
    python docs/gen_accuracy.py --cases "late|t_star" --merge   # re-measure some cases, keep the rest
    python docs/gen_accuracy.py --render                        # rewrite the page from accuracy.json
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import math
import multiprocessing
import os
import platform
import re
import sys
import time
import warnings

import mpmath
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ACC = ROOT / "tests" / "accuracy"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ACC))

from harness import AccuracyCase, evaluate, fixed_points, sample_points  # noqa: E402

KIND_TEXT = {
    "rel": "relative error",
    "log": "absolute error of the logarithm / max(1, |log|)",
    "exp": "relative error / max(1, |log value|)",
}


def load_cases(only: str | None, pattern: str | None = None) -> list[tuple[str, AccuracyCase]]:
    out = []
    for f in sorted(ACC.glob("cases_*.py")):
        module = f.stem.removeprefix("cases_")
        if only and module not in only.split(","):
            continue
        for c in importlib.import_module(f.stem).CASES:
            if pattern is None or re.search(pattern, c.name):
                out.append((module, c))
    return out


def _fmt_arg(a) -> str:
    if a.values:
        return "{" + ", ".join(str(v) for v in a.values) + "}"
    lo, hi = a.lo, a.hi
    scale = "log-uniform" if a.scale == "log" else "uniform"
    kind = "integer " if a.integer else ""
    return f"[{lo:.3g}, {hi:.3g}] ({kind}{scale})"


def _fmt_branch(b, a) -> str:
    what = b.what or b.arg
    cuts = ", ".join(f"{p:.4g}" for p in b.cuts(a))
    return f"{what} cut at {cuts}"


def measure(job: tuple[str, str, int, float, int]) -> dict:
    """Run one case (looked up by module and index, so that the job pickles)."""
    module, name, n, seconds, seed = job
    case = next(c for c in importlib.import_module(f"cases_{module}").CASES if c.name == name)
    pts = sample_points(case, n, seed=seed)
    ncorner = len(fixed_points(case))
    t0 = time.perf_counter()
    worst, worst_at, worst_ratio, worst_ratio_at = 0.0, None, 0.0, None
    bad, raised, done, ref_failed = [], 0, 0, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, pt in enumerate(pts):
            if i >= ncorner and time.perf_counter() - t0 > seconds:
                break
            try:
                status, err = evaluate(case, pt)
            except mpmath.libmp.NoConvergence as exc:  # the mpmath reference, not the library: not counted
                ref_failed.append({"at": pt, "status": f"reference did not converge: {exc}"[:200]})
                continue
            done += 1
            if status == "raised":
                raised += 1
            elif status.startswith("bad"):
                bad.append({"at": pt, "status": status})
            if math.isfinite(err):
                if err > worst:
                    worst, worst_at = err, pt
                tol = case.rtol(**{**case.fixed, **pt}) if callable(case.rtol) else case.rtol
                ratio = err / max(tol, 1e-300)
                if ratio > worst_ratio:
                    worst_ratio, worst_ratio_at = ratio, pt
    return {
        "module": module, "name": name, "points": done, "requested": len(pts), "corners": min(ncorner, done),
        "seconds": round(time.perf_counter() - t0, 1), "worst": worst, "worst_at": worst_at,
        "worst_ratio": worst_ratio, "worst_ratio_at": worst_ratio_at, "raised": raised, "bad": bad[:20],
        "n_bad": len(bad), "reference_failed": ref_failed[:5], "n_reference_failed": len(ref_failed),
        "kind": case.kind,
        "rtol": None if callable(case.rtol) else case.rtol, "rtol_doc": case.rtol_doc,
        "atol": None if callable(case.atol) else case.atol,
        "domain": {k: _fmt_arg(a) for k, a in case.args.items()}, "fixed": {k: repr(v) for k, v in case.fixed.items()},
        "branches": [_fmt_branch(b, case.args[b.arg]) for b in case.branches],
        "raises_doc": getattr(case, "raises_doc", "") or ("yes (see the function's docstring)" if case.raises else ""),
        "note": case.note,
    }


def machine() -> str:
    from grokclocks.verification import _cpu_model

    return f"{_cpu_model()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def versions() -> str:
    import mpmath
    import numpy
    import scipy

    return f"numpy {numpy.__version__}, scipy {scipy.__version__}, mpmath {mpmath.__version__}"


def _pt(pt) -> str:
    if not pt:
        return ""
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in pt.items())


def to_markdown(meta: dict, results: list[dict]) -> str:
    lines = [
        "# Accuracy",
        "",
        "The accuracy contract of the pure-math core, measured: the closed forms of `grokclocks.rmt`, `linear`",
        "(with its grid engine `_mpgrid`), `clocks`, `spectral`, `kramers`, `coverage` and `repulsion`, each",
        "function with one case or more in `tests/accuracy/cases_<module>.py` (the tables below): the domain of",
        "each argument, an independent reference at 30+ significant digits (mpmath quadrature, Bessel and",
        "Lambert functions, exact formulas in multiple precision; crossing times as mpmath roots) and the",
        "error the function promises there. Inside the domain a function returns a value within the",
        "contract or raises `DomainError` on a documented sub-domain; it never returns a wrong number.",
        "`pytest tests/accuracy` checks every case at the corners of its domain, at its fixed points (hard points",
        "found by earlier measurements) and on random draws (60 per case by default, fewer for slow references;",
        "`--hypothesis-profile=thorough`: 2000). Where a function switches formula at some value of an argument",
        "or of a quantity formed from them (a series below a threshold, an asymptotic form beyond one), the case",
        "declares the switch points (\"stratified\" in the domain column) and each draw first picks one of the",
        "pieces, or the plain draw over the whole domain, with equal chance: every formula is exercised.",
        "",
        "This page is generated by `python docs/gen_accuracy.py` (the numbers in `docs/accuracy.json`).",
        "",
        f"* measured on: {meta['machine']}",
        f"* date: {meta['date']}; {meta['versions']}",
        f"* sample: the corners of each domain and its fixed points plus up to {meta['n']} seeded draws per case "
        f"(seed {meta['seed']}),"
        f" at most {meta['seconds']:g} s per case; {meta['total_points']} points in all, "
        f"{meta['total_bad']} outside the contract",
        "",
        "Error measures (the `kind` of a case): **rel** — relative error, measured against max(|ref|, 2.2e-308)",
        "(results in the subnormal range compare absolutely at that scale); **log** — absolute error of a",
        "logarithm divided by max(1, |log|) (an absolute error of log L is a relative error of L); **exp** —",
        "relative error divided by max(1, |log value|), for values formed as exp of a logarithm, where the",
        "rounding of the logarithm alone costs |log| ulps. A result of ±inf is correct where the reference",
        "lies beyond the largest double plus half an ulp, ±(2^1024 - 2^970) (IEEE overflow); 0 where it lies below",
        "the smallest subnormal.",
        "",
    ]
    titles = {"rmt": "grokclocks.rmt (Marchenko–Pastur law)", "linear": "grokclocks.linear (Levi et al.)",
              "mpgrid": "grokclocks._mpgrid (grid engine of linear.grok_time_grid)"}
    by_mod: dict[str, list[dict]] = {}
    for r in results:
        by_mod.setdefault(r["module"], []).append(r)
    first = ["rmt", "linear", "mpgrid"]  # the foundation first, then the other modules alphabetically
    for mod in sorted(by_mod, key=lambda m: (first.index(m) if m in first else len(first), m)):
        rows = by_mod[mod]
        lines += [f"## {titles.get(mod, 'grokclocks.' + mod)}", "",
                  "| function [case] | domain | measure | contract | worst measured | at | points | DomainError |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            dom = "<br>".join(f"`{k}` {v}" for k, v in r["domain"].items())
            if r["fixed"]:
                dom += "<br>" + ", ".join(f"`{k}`={v}" for k, v in r["fixed"].items())
            for b in r.get("branches", []):
                dom += f"<br>stratified: {b}"
            contract = r["rtol_doc"] or (f"{r['rtol']:.1e}" if r["rtol"] is not None else "")
            if r["atol"]:
                contract += f" (or abs. {r['atol']:.0e})"
            worst = f"{r['worst']:.2e}"
            if r["n_bad"]:
                worst += f" (**{r['n_bad']} outside**)"
            if r["rtol"] is None:
                worst += f"; {r['worst_ratio']:.2f} of the contract"
            raises = f"{r['raised']} points" if r["raised"] else ""
            if r["raises_doc"]:
                raises = (r["raises_doc"] + (f" ({raises})" if raises else ""))
            name = r["name"].replace("grokclocks.", "")
            note = f"<br><small>{r['note']}</small>" if r["note"] else ""
            if r.get("n_reference_failed"):
                note += (f"<br><small>{r['n_reference_failed']} drawn points skipped: the mpmath reference did not "
                         "converge there (not counted in points)</small>")
            lines.append(f"| `{name}`{note} | {dom} | {r['kind']} | {contract} | {worst} | {_pt(r['worst_at'])} | "
                         f"{r['points']} | {raises} |")
        lines.append("")
    bad = [r for r in results if r["n_bad"]]
    if bad:
        lines += ["## Outside the contract", ""]
        for r in bad:
            for b in r["bad"][:5]:
                lines.append(f"* `{r['name']}` at {_pt(b['at'])}: {b['status']}")
        lines.append("")
    return "\n".join(lines)


def render(out: Path) -> int:
    """Rewrite accuracy.md from accuracy.json (same numbers), refreshing each case's branch notes."""
    data = json.loads((out / "accuracy.json").read_text())
    cases = {c.name: c for _, c in load_cases(None)}
    for r in data["cases"]:
        c = cases.get(r["name"])
        if c is not None:
            r["branches"] = [_fmt_branch(b, c.args[b.arg]) for b in c.branches]
    (out / "accuracy.json").write_text(json.dumps(data, indent=1, default=str) + "\n")
    (out / "accuracy.md").write_text(to_markdown(data["meta"], data["cases"]) + "\n")
    print(f"wrote {out / 'accuracy.md'} from {out / 'accuracy.json'}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="random points per case (plus the corners)")
    ap.add_argument("--seconds", type=float, default=240.0, help="time limit per case (after the corners)")
    ap.add_argument("--seed", type=int, default=20261124)
    ap.add_argument("--only", help="comma-separated modules (rmt,linear,mpgrid,...)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--out", default=str(ROOT / "docs"), help="directory for accuracy.json/.md")
    ap.add_argument("--cases", help="regular expression: only the cases whose name matches")
    ap.add_argument("--merge", action="store_true",
                    help="replace the measured cases in the existing accuracy.json, keep the others")
    ap.add_argument("--render", action="store_true",
                    help="measure nothing: rewrite accuracy.md from accuracy.json (the cases' branch notes refreshed)")
    args = ap.parse_args(argv)
    if args.render:
        return render(Path(args.out))

    cases = load_cases(args.only, args.cases)
    jobs = [(m, c.name, args.n, args.seconds, args.seed) for m, c in cases]
    t0 = time.time()
    if args.jobs > 1:
        with multiprocessing.Pool(args.jobs) as pool:
            results = []
            for r in pool.imap(measure, jobs):
                print(f"{r['name']:70s} {r['points']:5d} pts  worst {r['worst']:.2e}  bad {r['n_bad']}  "
                      f"{r['seconds']:.0f}s", flush=True)
                results.append(r)
    else:
        results = []
        for j in jobs:
            r = measure(j)
            print(f"{r['name']:70s} {r['points']:5d} pts  worst {r['worst']:.2e}  bad {r['n_bad']}  "
                  f"{r['seconds']:.0f}s", flush=True)
            results.append(r)
    out = Path(args.out)
    if args.merge and (out / "accuracy.json").exists():
        old = json.loads((out / "accuracy.json").read_text())["cases"]
        new = {r["name"]: r for r in results}
        order = [c.name for _, c in load_cases(None)]  # the cases' own order; dropped cases disappear
        known = {r["name"]: r for r in old} | new
        results = [known[n] for n in order if n in known]
    meta = {"machine": machine(), "versions": versions(),
            "date": datetime.date.today().isoformat(), "n": args.n, "seed": args.seed, "seconds": args.seconds,
            "total_points": sum(r["points"] for r in results), "total_bad": sum(r["n_bad"] for r in results),
            "wall_seconds": round(time.time() - t0)}
    (out / "accuracy.json").write_text(json.dumps({"meta": meta, "cases": results}, indent=1, default=str) + "\n")
    (out / "accuracy.md").write_text(to_markdown(meta, results) + "\n")
    print(f"wrote {out / 'accuracy.md'} ({meta['total_points']} points, {meta['total_bad']} outside, "
          f"{meta['wall_seconds']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
