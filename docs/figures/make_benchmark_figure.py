"""Figure and tables of docs/benchmarks.md from the committed benchmark JSON.

Reads ``benchmarks/results/modular_engine_<cpu|gpu>.json`` (written by
``benchmarks/bench_modular_engine.py``; a device whose file is missing is skipped) and writes
``docs/figures/modular_engine_throughput.png`` (seed-epochs per second against the number of
seeds: engine and plain ``jit(vmap(scan))`` with their min-max spread, PyTorch eager as a line)
and ``docs/figures/modular_engine_tables.md`` (speed and grokking-step tables), which
docs/benchmarks.md includes.  Run from the repository root::

    python docs/figures/make_benchmark_figure.py [other/modular_engine_gpu.json ...]

(a path given on the command line replaces the committed file of the same name).
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
OUT = Path(__file__).resolve().parent
PROGRAMS = ("engine", "plain_scan")


def _load(paths: list[str] | None = None) -> dict[str, dict]:
    out = {}
    for tag in ("cpu", "gpu"):
        path = RESULTS / f"modular_engine_{tag}.json"
        for given in paths or []:
            if Path(given).name == path.name:
                path = Path(given)
        if path.exists():
            data = json.loads(path.read_text())
            if "scale" in data:  # written by the current benchmark
                out[tag] = data
    return out


def _torch_rate(res: dict) -> tuple[float | None, str]:
    t = res.get("torch", {})
    for key in ("torch_eager_timing_config", "torch_eager"):
        if "epochs_per_s" in t.get(key, {}):
            return t[key]["epochs_per_s"], t[key].get("config", "")
    return None, ""


def speed_table(tag: str, data: dict) -> str:
    cmds = data["command"] if isinstance(data["command"], list) else [data["command"]]
    rows = [f"**{data['device']}** ({'; '.join(f'`{c}`' for c in cmds)}; jax {data['jax']})", "",
            *([data["notes"], ""] if data.get("notes") else []),
            "| config | seeds | engine (seed-epochs/s) | plain scan | engine / plain | engine / PyTorch eager |",
            "|---|---|---|---|---|---|"]
    for name, res in data["results"].items():
        for r in res["timing"]:
            cells = []
            for k in PROGRAMS:
                v = r.get(k, {})
                cells.append(f"{v['seed_epochs_per_s']:,.1f} [{v['min']:,.1f}, {v['max']:,.1f}]"
                             if "seed_epochs_per_s" in v else v.get("error", "n/a")[:60])
            ratio = f"{r['engine_over_plain_scan']:.2f}x" if "engine_over_plain_scan" in r else "n/a"
            torch = f"{r['engine_over_torch_eager']:.0f}x" if "engine_over_torch_eager" in r else "n/a"
            rows.append(f"| {res['timing_config']} | {r['n_seeds']} | {cells[0]} | {cells[1]} | {ratio} | {torch} |")
    rows.append("")
    rows.append("Median of the timed calls, [min, max] in brackets; epochs per call: "
                + ", ".join(f"{res['timing_config']} {res['epochs']}" for res in data["results"].values()) + ".")
    for name, res in data["results"].items():
        so = res.get("scale_out")
        if so:
            rows.append(f"Scale out ({name}): {so['n_seeds']} seeds x weight decay {so['weight_decay']} = "
                        f"{so['n_runs']} runs of {so['config']} in one `train_modular` call, {so['epochs']} epochs: "
                        f"{so['seed_epochs_per_s']:,.1f} seed-epochs/s, run chunk {so['run_chunk']} "
                        f"(`run_chunk=\"auto\"`, free memory {so['free_device_memory_bytes'] / 2**30:.1f} GiB).")
    torch_rows = []
    for name, res in data["results"].items():
        for key, t in res.get("torch", {}).items():
            if "epochs_per_s" in t:
                torch_rows.append(f"| {t.get('config', '')} | {key.replace('_timing_config', '')} | "
                                  f"{t['epochs_per_s']:,.1f} | {t.get('epochs_timed', t.get('epochs', ''))} |")
            elif "error" in t or "skipped" in t:
                torch_rows.append(f"| {res.get('grokking', {}).get('config', '')} | {key} | "
                                  f"{t.get('error', t.get('skipped'))[:80]} | |")
    if torch_rows:
        rows += ["", "| config | PyTorch loop (1 seed) | epochs/s | epochs |", "|---|---|---|---|"] + torch_rows
    return "\n".join(rows)


def grok_table(data: dict) -> str:
    rows = ["| config | program | seeds grokked | t_test median [q1, q3] | median paired diff vs engine | "
            "seeds grokked differently | KS p vs engine |", "|---|---|---|---|---|---|---|"]
    for name, res in data["results"].items():
        if "grokking" not in res:  # a run stopped before its grokking part
            continue
        g = res["grokking"]
        progs = {k: g[k] for k in ("engine", "engine_bf16", "plain_scan") if k in g}
        for k, t in res.get("torch", {}).items():
            if "grokking" in t:
                progs[k] = t["grokking"]
        for k, s in progs.items():
            med = f"{s['median']:.0f} [{s['q1']:.0f}, {s['q3']:.0f}]" if "median" in s else "n/a"
            v = s.get("vs_engine", {})
            d = "" if v.get("median_difference") is None else f"{v['median_difference']:+.0f}"
            rows.append(f"| {g['config']} ({g['epochs']} epochs) | {k} | {s['grokked']}/{s['n_seeds']} | {med} | {d} | "
                        f"{v.get('grokked_differently', '')} | "
                        f"{'' if 'ks_pvalue' not in v else format(v['ks_pvalue'], '.2f')} |")
    return "\n".join(rows)


def figure(results: dict[str, dict]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(tag, name, res) for tag, data in results.items() for name, res in data["results"].items()]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False)
    for ax, (tag, name, res) in zip(axes[0], panels):
        for k, style in zip(PROGRAMS, ("o-", "s--")):
            pts = [(r["n_seeds"], r[k]) for r in res["timing"] if "seed_epochs_per_s" in r.get(k, {})]
            if not pts:
                continue
            n = [x for x, _ in pts]
            med = [v["seed_epochs_per_s"] for _, v in pts]
            err = [[m - v["min"] for m, (_, v) in zip(med, pts)], [v["max"] - m for m, (_, v) in zip(med, pts)]]
            ax.errorbar(n, med, yerr=err, fmt=style, capsize=3, label=k.replace("_", " "))
        rate, cfg = _torch_rate(res)
        if rate and cfg == res["timing_config"]:
            ax.axhline(rate, color="gray", ls=":", label="PyTorch eager, 1 seed")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("seeds in one program")
        ax.set_ylabel("seed-epochs / s")
        ax.set_title(f"{res['timing_config']} ({tag.upper()})", fontsize=10)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = OUT / "modular_engine_throughput.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> None:
    import sys

    results = _load(sys.argv[1:] if argv is None else argv)
    if not results:
        raise SystemExit("no benchmark JSON in benchmarks/results (run benchmarks/bench_modular_engine.py)")
    parts = []
    for tag, data in results.items():
        parts += [f"### {tag.upper()}: speed", "", speed_table(tag, data), "",
                  f"### {tag.upper()}: grokking steps (first epoch with test accuracy >= 0.99, same seeds)", "",
                  grok_table(data), ""]
    (OUT / "modular_engine_tables.md").write_text("\n".join(parts))
    print("wrote", figure(results), "and", OUT / "modular_engine_tables.md")


if __name__ == "__main__":
    main()
