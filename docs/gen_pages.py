"""Generate the documentation pages that are derived from the library's own data.

Run from anywhere (``python docs/gen_pages.py``). It writes ``docs/errata.md`` only, and the CPU certificate's
pages with ``--certificate`` (never as a side effect); the other pages below are made in memory when the site is
built (``docs/generated_pages.py``, called by ``docs/mkdocs_hooks.py``; ``--show PAGE`` prints one), so building
the docs never changes a tracked file. The pages:

* ``docs/errata.md``            from :func:`grokclocks.errata.to_markdown` (tests/test_errata.py checks it);
* ``docs/coverage.md``          every spec ID -> status -> implementing functions, from
                                :func:`grokclocks.citations.coverage` and :data:`grokclocks.citations.SPEC`;
* ``docs/traceability.md``      every spec ID -> implementing function -> unit tests that call it -> the
                                ``pytest verify`` rows that check it (from the committed certificates);
* ``docs/architecture.md``      its module table (between the ``modules:`` markers): every module of the
                                package, its size and the grokclocks modules it imports at load, from
                                :func:`module_imports` (the graph ``tests/test_architecture.py`` checks);
* ``docs/verification/cpu.md``  the page of the latest ``.verify/verify-cpu.json`` written by ``pytest verify``
                                (and that JSON beside it), if there is one: the certificate is read checked
                                (every field typed, every row's verdict recomputed from its numbers, by
                                :func:`grokclocks.verification.read_certificate`) and its page made anew with
                                every text escaped (:func:`grokclocks.verification.certificate_markdown`), never
                                copied from a Markdown file; the comparison tables ``compare-<scale>-<run>.md``
                                of ``verify/compare`` are copied beside them;
* ``docs/verification/gpu.md``  the state of every GPU suite certificate (``docs/verification/gpu/<suite>.json``,
                                written by ``grokclocks verify --scale gpu --budget`` / ``benchmarks/gpu_session.sh``)
                                against the files of this checkout: passed / failed / stale since commit X /
                                incomplete / never run (:func:`gpu_status_markdown`); the same table on the
                                Verification page, ``docs/verification/index.md`` (between its markers); each
                                suite's page ``docs/verification/gpu/<suite>.md`` made anew from its checked
                                JSON, as ``cpu.md`` is.

Every page is written by grokclocks's one writer (a temporary file, then renamed; no link followed).
"""

from __future__ import annotations

import ast
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT))

from grokclocks._escape import markdown_code  # noqa: E402
from grokclocks._safe_write import WRITER  # noqa: E402
from grokclocks.citations import PAPERS, SPEC, coverage  # noqa: E402
from grokclocks.errata import errata_for, to_markdown  # noqa: E402

# Modules rendered by the API pages (docs/api/*.md): functions there get a cross-reference link.
API_PAGES = {
    "grokclocks.rmt": "api/rmt.md",
    "grokclocks.linear": "api/linear.md",
    "grokclocks.clocks": "api/clocks.md",
    "grokclocks.spectral": "api/spectral.md",
    "grokclocks.kramers": "api/kramers.md",
    "grokclocks.coverage": "api/coverage.md",
    "grokclocks.repulsion": "api/repulsion.md",
    "grokclocks.compare": "api/compare.md",
    "grokclocks.logs": "api/logs.md",
    "grokclocks.task": "api/task.md",
    "grokclocks.runfile": "api/runfile.md",
    "grokclocks.citations": "api/citations.md",
    "grokclocks.errata": "api/errata.md",
    "grokclocks.verification": "api/verification.md",
    "grokclocks.sim.data": "api/sim-data.md",
    "grokclocks.sim.linear": "api/sim-linear.md",
    "grokclocks.sim.modular": "api/sim-modular.md",
    "grokclocks.sim.models": "api/sim-models.md",
    "grokclocks.sim.langevin": "api/sim-langevin.md",
    "grokclocks.sim.kramers": "api/sim-kramers.md",
    "grokclocks.sim.deep_linear": "api/sim-deep-linear.md",
    "grokclocks.sim.landscapes": "api/sim-landscapes.md",
    "grokclocks.sim.train": "api/sim-train.md",
    "grokclocks.sim.distributed": "api/sim-distributed.md",
    "grokclocks.sim.trackers": "api/sim-trackers.md",
    "grokclocks.sim.repulsion": "api/sim-repulsion.md",
}

STATUS_NOTE = {
    "exact": "verified to the precision quoted in the spec",
    "exact (corrected)": "verified after a correction of the paper (see Errata)",
    "asymptotic": "approximation; its measured accuracy is documented",
    "paper claim": "the paper's statement, not reproduced; implemented only as a labelled transcription",
    "empirical": "empirical protocol (simulation only)",
    "convention": "a definition or convention fixed by the spec",
    "reproduction": "a figure or table of the paper regenerated by the library",
    "heuristic": "an argument, not a theorem: the function returns an estimate",
    "reconstructed": "a formula lost from the source text, restated by the spec and pinned numerically",
    "derived": "derived for the spec (not in the paper), verified numerically",
}


def _write(path: Path, text: str) -> None:
    """Write a generated page through the one writer (replacing the previous version; never through a link)."""
    old = path.read_text() if path.is_file() and not path.is_symlink() else None
    if old != text:
        WRITER.write_text(path, text, name="page", overwrite=True, make_parents=True)
    print(f"  {'wrote' if old != text else 'unchanged'} {path.relative_to(ROOT)}")


def _link(name: str) -> str:
    module, _, attr = name.rpartition(".")
    while module and module not in API_PAGES and "." in module:  # methods: grokclocks.x.Class.method
        module, _, head = module.rpartition(".")
        attr = f"{head}.{attr}"
    if module in API_PAGES and not any(p.startswith("_") for p in attr.split(".")):
        return f"[`{name}`][{name}]"  # resolved by mkdocs-autorefs to the mkdocstrings entry
    return f"`{name}`"


def coverage_markdown() -> str:
    cov = coverage()
    lines = [
        "# Spec coverage",
        "",
        "Every registered result of the five papers (its spec ID) with its status and the functions that",
        "implement it, generated by `docs/gen_pages.py` from `grokclocks.citations.coverage()` (the",
        "`@cites(...)` decorations) and `grokclocks.citations.SPEC`. An empty *implemented by* cell marks",
        "a result without an implementation.",
        "",
        "| status | meaning |",
        "|---|---|",
    ]
    lines += [f"| {s} | {m} |" for s, m in STATUS_NOTE.items()]
    lines.append("")
    for key, paper in PAPERS.items():
        ids = [i for i in SPEC if i.startswith(key + ":")]
        if not ids:
            continue
        done = sum(bool(cov.get(i)) for i in ids)
        counts = Counter(SPEC[i].status for i in ids)
        lines += [
            f"## `{key}` — {paper.text}",
            "",
            f"{done} of {len(ids)} spec IDs implemented; "
            + ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: -kv[1])) + ".",
            "",
            "| spec ID | status | result | implemented by | errata |",
            "|---|---|---|---|---|",
        ]
        for i in ids:
            e = SPEC[i]
            impl = "<br>".join(_link(n) for n in cov.get(i, [])) or "**not implemented**"
            errs = ", ".join(f"[{x.number}](errata.md)" for x in errata_for(i))
            title = e.title.replace("|", "\\|")
            lines.append(f"| `{i}` | {e.status} | {title} | {impl} | {errs} |")
        missing = [i for i in ids if not cov.get(i)]
        lines += ["", f"Not implemented: {', '.join(f'`{i}`' for i in missing)}." if missing
                  else "Every spec ID has at least one implementing function.", ""]
    return "\n".join(lines)


def _test_references() -> dict[str, set[str]]:
    """Fully qualified ``grokclocks`` names -> the unit tests (``file::test``) whose bodies use them.

    Resolved through each test file's imports (``from grokclocks.x import f``, ``import grokclocks.x as X``
    then ``X.f``), so a short name shared by two modules is not confused.
    """
    refs: dict[str, set[str]] = {}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text())
        alias: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("grokclocks"):
                for a in node.names:
                    alias[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("grokclocks"):
                        alias[a.asname or a.name] = a.name
        rel = path.relative_to(ROOT).as_posix()
        for fn in ast.walk(tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("test")):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Attribute):
                    chain = [node.attr]
                    base = node.value
                    while isinstance(base, ast.Attribute):
                        chain.append(base.attr)
                        base = base.value
                    if isinstance(base, ast.Name) and base.id in alias:
                        name = ".".join([alias[base.id], *reversed(chain)])
                        while "." in name:  # the longest prefix names the function
                            refs.setdefault(name, set()).add(f"{rel}::{fn.name}")
                            name = name.rpartition(".")[0]
                elif isinstance(node, ast.Name) and node.id in alias:
                    refs.setdefault(alias[node.id], set()).add(f"{rel}::{fn.name}")
    return refs


def _verify_rows() -> dict[str, dict[str, list[dict]]]:
    """Spec ID -> scale -> the rows of the committed certificates: ``docs/verification/verify-cpu.json``, and for
    the GPU scale the per-suite certificates that are fresh for this checkout (:func:`_fresh_gpu_rows`)."""
    from grokclocks.verification import read_certificate

    out: dict[str, dict[str, list[dict]]] = {}
    js = DOCS / "verification" / "verify-cpu.json"
    if js.exists():
        for row in read_certificate(js)["rows"]:  # checked: every row's verdict recomputed from its numbers
            out.setdefault(row["spec_id"], {}).setdefault("cpu", []).append(row)
    for row in _fresh_gpu_rows():
        out.setdefault(row["spec_id"], {}).setdefault("gpu", []).append(row)
    return out


def _few(items: list[str], n: int = 3) -> str:
    shown = "<br>".join(f"`{x}`" for x in items[:n])
    return shown + (f"<br>and {len(items) - n} more" if len(items) > n else "")


def traceability_markdown() -> str:
    cov = coverage()
    refs = _test_references()
    rows = _verify_rows()
    scales = ["cpu"] if (DOCS / "verification" / "verify-cpu.json").exists() else []
    scales += ["gpu"] if _fresh_gpu_rows() else []
    lines = [
        "# Traceability: spec ID → function → test → verify check",
        "",
        "Generated by `docs/gen_pages.py`. *Functions* come from the `@cites(...)` decorations; *unit tests*",
        "are the `tests/` functions whose bodies call one of them (resolved through imports); *verify rows*",
        "are the rows of the committed certificates "
        + ", ".join(f"[{s.upper()}](verification/{s}.md)" for s in scales)
        + " whose spec ID is this one, as `passed/total` checks (report-only rows counted apart) and the tests that produced them. A dash means none.",
        "",
    ]
    totals = Counter()
    for key, paper in PAPERS.items():
        ids = [i for i in SPEC if i.startswith(key + ":")]
        if not ids:
            continue
        lines += [f"## `{key}` — {paper.text}", "",
                  "| spec ID | status | functions | unit tests | verify rows |", "|---|---|---|---|---|"]
        for i in ids:
            funcs = cov.get(i, [])
            tests = sorted({t for f in funcs for t in refs.get(f, ())})
            vr = rows.get(i, {})
            vcell = []
            for s in scales:
                r = vr.get(s, [])
                if r:
                    nodes = sorted({x["test"].split("::")[-1] for x in r})
                    checks = [x for x in r if x.get("kind") != "report"]
                    n_rep = len(r) - len(checks)
                    vcell.append(f"{s}: {sum(x['passed'] for x in checks)}/{len(checks)}"
                                 + (f" + {n_rep} report-only" if n_rep else "")
                                 + f" ({', '.join(markdown_code(n) for n in nodes[:2])}"
                                 + (f" +{len(nodes) - 2}" if len(nodes) > 2 else "") + ")")
            totals["ids"] += 1
            totals["funcs"] += bool(funcs)
            totals["tests"] += bool(tests)
            totals["verify"] += bool(vcell)
            lines.append(f"| `{i}` | {SPEC[i].status} | {'<br>'.join(_link(f) for f in funcs) or '—'} | "
                         f"{_few(tests) if tests else '—'} | {'<br>'.join(vcell) or '—'} |")
        lines.append("")
    lines[6:6] = [f"Of {totals['ids']} spec IDs: {totals['funcs']} have an implementing function, "
                  f"{totals['tests']} a unit test calling it, {totals['verify']} at least one verify row.", ""]
    return "\n".join(lines)


def _selection(meta: dict) -> str | None:
    """What a certificate's pytest session ran short of the whole tier (recorded by ``verify/conftest.py``:
    deselected tests, a file or suite named, a stop after a failure; or a slice), None for a whole run:
    a partial certificate must not replace the committed one."""
    if meta.get("shard"):
        return f"slice {meta['shard'][0]} of {meta['shard'][1]}"
    return meta.get("partial")


def copy_certificate(scale: str) -> None:
    """docs/verification/<scale>.md and verify-<scale>.json from .verify/verify-<scale>.json: read checked, the
    page made anew (every text escaped), never copied from the Markdown beside it."""
    from grokclocks.verification import certificate_markdown, read_certificate

    src_js = ROOT / ".verify" / f"verify-{scale}.json"
    dst_md = DOCS / "verification" / f"{scale}.md"
    if not src_js.exists():
        if dst_md.exists():
            print(f"  no .verify/verify-{scale}.json; keeping {dst_md.relative_to(ROOT)}")
        elif scale == "cpu":
            _write(dst_md, "# Verification certificate (cpu scale)\n\n"
                   "No certificate has been generated in this checkout yet: run `pytest verify`, then "
                   "`python docs/gen_pages.py`.\n")
        return
    cert = read_certificate(src_js)
    partial = _selection(cert["meta"])
    if partial and dst_md.exists():
        print(f"  .verify/verify-{scale}.json is from a partial run ({partial}); keeping {dst_md.relative_to(ROOT)}")
        return
    _write(DOCS / "verification" / f"verify-{scale}.json", json.dumps(cert, indent=1, default=float))
    _write(dst_md, certificate_markdown(cert).rstrip("\n") + (
        f"\n\nThe same table with every number and the environment as JSON: [verify-{scale}.json](verify-{scale}.json).\n"))
    for src in sorted((ROOT / ".verify").glob(f"compare-{scale}-*.md")):  # verify/compare's three tables
        run = src.stem.split("-", 2)[2]
        _write(DOCS / "verification" / src.name,
               f"# `compare_run` on the {markdown_code(run)} run ({scale} scale)\n\nWritten by `pytest verify/compare` "
               f"next to the certificate of the same session.\n\n" + src.read_text())


# ------------------------------------------------------------------------------------------ GPU tier (suites)


def _gpu_statuses():
    """The state of every GPU suite certificate in docs/verification/gpu/ against the files of this checkout."""
    from grokclocks.cli import VERIFY_SUITES
    from grokclocks.verification import suite_statuses, suites

    names = [s for s in VERIFY_SUITES if s in suites(ROOT)] + [s for s in suites(ROOT) if s not in VERIFY_SUITES]
    return suite_statuses(DOCS / "verification" / "gpu", names, ROOT)


def _fresh_gpu_rows() -> list[dict]:
    """The rows of the GPU suite certificates that are fresh (passed or failed, complete, fingerprint equal to
    the files of this checkout): only those count as results of the current code."""
    return [r for st in _gpu_statuses() if st.state in ("passed", "failed") for r in st.certificate["rows"]]


def gpu_suite_pages() -> None:
    """docs/verification/gpu/<suite>.md made anew from each suite's checked certificate (every text escaped)."""
    from grokclocks.verification import certificate_markdown

    for st in _gpu_statuses():
        if st.certificate is not None:
            _write(DOCS / "verification" / "gpu" / f"{st.suite}.md", certificate_markdown(st.certificate))


def gpu_status_table() -> str:
    """The one-line-per-suite table of the GPU tier for docs/verification/index.md (links into gpu/)."""
    from grokclocks.verification import status_markdown

    return "\n" + status_markdown(_gpu_statuses(), link_dir="gpu") + "\n"


def gpu_status_markdown() -> str:
    """docs/verification/gpu.md: one line per GPU suite (passed / failed / stale since commit X / incomplete /
    never run, with date, device and wall time) and how a GPU window runs the missing ones."""
    from grokclocks.verification import GPU_SUITE_LIMIT_S, GPU_TEST_LIMIT_S, status_markdown

    st = _gpu_statuses()
    count = Counter(s.state for s in st)
    summary = (f"**{count['passed']} of {len(st)} suites passed on the files of this checkout**; "
               + ", ".join(f"{n} {k}" for k, n in (("failed", count["failed"]), ("stale", count["stale"]),
                                                   ("incomplete", count["incomplete"]),
                                                   ("never run", count["never run"])) if n) + ".")
    return "\n".join([
        "# Verification at GPU scale",
        "",
        "The GPU tier (`pytest verify --scale gpu`: the spec's paper-scale configurations -- larger input dimensions,",
        "more seeds, longer training) is certified **suite by suite**, one `verify/<suite>/` directory each, because",
        "GPU time comes in short windows: 15 minutes of device time in all, machine start-up included, at most 10",
        "minutes a command. A suite's certificate records its commit, date, device, wall time and every test's wall",
        "time, compile time and peak memory, and the sha256 of every file its results can depend on: the suite's own",
        "files, `verify/conftest.py` and every grokclocks or verify module they import. It is **stale** from the",
        "first commit that changes one of the files that can change a row: kept and shown, never counted as a result",
        "of the current code. The modules of `grokclocks.verification` that only write, read, render, merge or plan",
        "certificates (all but `_report.py`, which computes each row's error and verdict) are hashed apart and do",
        "not make a certificate stale.",
        "",
        summary,
        "",
        status_markdown(st, link_dir="gpu"),
        "",
        "Generated by `docs/gen_pages.py` from `docs/verification/gpu/<suite>.json`; a suite's page holds its full",
        "table and per-test times. Only the fresh certificates (passed or failed) enter the",
        "[Traceability](../traceability.md) page.",
        "",
        "## Running a GPU window",
        "",
        f"Each suite fits one window: no suite is estimated over {GPU_SUITE_LIMIT_S:.0f} s (its pytest start-up "
        f"included) and no test over {GPU_TEST_LIMIT_S:.0f} s",
        "([GPU time budget](gpu-budget.md), which also says how many windows the whole tier needs). Whoever has a",
        "window runs one prepared command (at most 540 s; it checks its own clock and never runs past 570 s):",
        "",
        "```bash",
        "benchmarks/gpu_session.sh /tmp/gpu-out      # its first line prints the estimated time of each part",
        "cp -r /tmp/gpu-out/docs /tmp/gpu-out/benchmarks .   # the results, in the repository's layout",
        "```",
        "",
        "It runs the engine benchmark in its quick GPU mode (at most 120 s), then the planner with the time left:",
        "`grokclocks verify --scale gpu --budget SECONDS` runs the suites whose certificate is missing, stale or",
        "incomplete, oldest first, as many as fit (timed by their latest measurement, else the budget table's",
        "estimate), one pytest process per suite. No test starts that would end past the budget, a suite still",
        "running at its end is stopped without a certificate, and each finished suite's certificate is written at",
        "once, so a window cut short keeps every finished suite. `--dry-run` prints the plan only.",
        "",
        "See [Running the GPU tier](gpu-tier.md) for one process, slices and what each certificate records, and",
        "[GPU windows](gpu-windows.md) for what each window ran, its times against the estimates and its findings.",
        "",
        "## What `--scale gpu` runs, per suite",
        "",
        "* `levi`: input dimensions up to 4000, 8-64 seeds, the two-layer and tanh networks at d_in = 1000 (seeds",
        "  192-223, and 448-511 more for the linear net's bias control: not those the tolerances were set on), the",
        "  d_h = 50 width of Fig. 4 on seeds 384-447 (erratum levi-22), appendix-G modular addition at p = 48;",
        "* `clocks`: the embedding-MLP sweep at p = 97 (train fraction 0.3/0.5 × weight decay 0-3, 15 000 steps,",
        "  seeds 3-5: the Theorem 5.6 ordering checked on every wd = 1 run, reported at the other weight decays),",
        "  deep linear nets of width 128/256 with 16 seeds;",
        "* `kramers`: Langevin walkers at ΔF/T = 4 and 6 (2^21 walkers, two step sizes, Richardson), the",
        "  diagonal network at D = 200, n = 80, 5 AdamW seeds at p = 97 for 30 000 steps;",
        "* `kramers_barrier8`: the walkers at ΔF/T = 8 (1-D with 2^21, 2-D with 2^20 walkers: below the 2^21 the",
        "  paper-scale recipe asks for, because 2^21 is estimated at 427 s against the 240 s test limit), where the",
        "  asymptotic law is 5.7 % / 15 % off the exact time against a 0.4 % tolerance;",
        "* `kramers_widths`: the timescale-separation exponents from widths N = 4096..262144 with 16 seeds;",
        "* `uniformity`: coverage statistics at p = 193 with 10 000 random sets, the Table 1 grid of transformer runs;",
        "* `repulsion`: the headline configuration M = 71, K = 2048, n = 2016, 15 seeds × {η = 2·10⁻⁴, 0} and 128",
        "  more controls, with the window, threshold, ReLU and eta sweeps;",
        "* `modular` / `compare`: 64-seed canonical grokking at p = 97 and the comparison table on GPU-size runs.",
        "",
    ])


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def module_imports(package: Path = ROOT / "grokclocks", *, load_time_only: bool = True) -> dict[str, set[str]]:
    """``{module: grokclocks modules it imports}`` from the source (``ast``; nothing is imported).

    With ``load_time_only`` an import inside a function body (deferred until the function runs) is
    left out: that is the graph a cycle at import time would live in.  ``from . import x`` counts as
    an import of the submodule ``x`` when it is one, else of the package.
    """
    files = sorted(package.rglob("*.py"))
    names = {_module_name(f): f for f in files}
    graph: dict[str, set[str]] = {}
    for name, f in names.items():
        tree = ast.parse(f.read_text(), filename=str(f))
        is_pkg = f.name == "__init__.py"
        base = name.split(".") if is_pkg else name.split(".")[:-1]
        deps: set[str] = set()
        nodes = tree.body if load_time_only else list(ast.walk(tree))
        stack = list(nodes)
        while stack:
            node = stack.pop()
            if load_time_only and isinstance(node, (ast.If, ast.Try)):  # guarded imports still run at load
                stack += node.body + node.orelse + getattr(node, "finalbody", []) + \
                    [n for h in getattr(node, "handlers", []) for n in h.body]
                continue
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.split(".")[0] == "grokclocks"}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    mod = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                if mod.split(".")[0] != "grokclocks":
                    continue
                for a in node.names:
                    sub = f"{mod}.{a.name}"
                    deps.add(sub if sub in names else mod)
        deps.discard(name)
        graph[name] = {d for d in deps if d in names}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a self-import): the cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _unit(module: str) -> str:
    """The documented unit a module belongs to: a package's private files belong to the package."""
    parts = module.split(".")
    for k in range(2, len(parts)):
        if parts[k].startswith("_"):
            return ".".join(parts[:k])
    return module


def architecture_modules_markdown() -> str:
    """The module table of docs/architecture.md: each documented module or package, its files and
    lines, and the grokclocks units it imports (a package's private files counted as the package)."""
    graph = module_imports()
    full = module_imports(load_time_only=False)
    files = {_module_name(f): f for f in sorted((ROOT / "grokclocks").rglob("*.py"))}
    size = {m: len(f.read_text().splitlines()) for m, f in files.items()}
    units: dict[str, list[str]] = {}
    for m in sorted(files):
        units.setdefault(_unit(m), []).append(m)

    def deps_of(g: dict[str, set[str]], members: list[str], unit: str) -> set[str]:
        return {_unit(d) for m in members for d in g[m]} - {unit}

    lines = ["| module | files | lines (largest file) | imports from grokclocks (*italic*: only inside functions) |",
             "|---|---|---|---|"]
    for unit, members in units.items():
        load, deferred = deps_of(graph, members, unit), deps_of(full, members, unit)
        deps = [f"`{d.removeprefix('grokclocks.')}`" for d in sorted(load)]
        deps += [f"*`{d.removeprefix('grokclocks.')}`*" for d in sorted(deferred - load)]
        n = sum(size[m] for m in members)
        lines.append(f"| `{unit}` | {len(members)} | {n} ({max(size[m] for m in members)}) | {', '.join(deps) or '-'} |")
    cycles = import_cycles(full)
    lines += ["", f"{len(files)} files, {sum(size.values())} lines; the largest file has {max(size.values())} lines. "
              "Import cycles between files (deferred imports included): "
              + ("none." if not cycles else "; ".join(" -> ".join(c) for c in cycles) + ".")]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Write the stored generated pages (errata.md: a test holds it equal to its rendering). The pages whose content
    changes with the checkout are made when the site is built (docs/generated_pages.py), so building the docs never
    changes a tracked file; `--show PAGE` prints one. `--certificate` copies the latest `pytest verify`
    certificate from .verify/ into docs/verification/ (the committed one): a deliberate step, never a side effect
    of a docs build."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--certificate", action="store_true", help="copy .verify/verify-cpu.* into docs/verification/")
    ap.add_argument("--show", metavar="PAGE", help="print a page generated at build time (e.g. traceability.md)")
    args = ap.parse_args(argv)
    if args.show:
        sys.path.insert(0, str(DOCS))
        from generated_pages import show

        print(show(args.show))
        return
    print("generating documentation pages")
    _write(DOCS / "errata.md", to_markdown())
    if args.certificate:
        copy_certificate("cpu")
    gpu_suite_pages()  # the GPU suites' pages from their committed, checked JSON (unchanged on a clean tree)
    sys.path.insert(0, str(DOCS))
    __import__("gen_theory").main()  # the theory pages' equations, from grokclocks.symbolic (docs/gen_theory.py)
    print("  at build time: coverage.md, traceability.md, verification/gpu.md and the tables of architecture.md "
          "and verification/index.md (docs/generated_pages.py)")


if __name__ == "__main__":
    main()
