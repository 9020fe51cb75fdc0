"""Hostile inputs through whole `grokclocks` commands, as an outside attacker runs them.

Each case is one command line (`compare`, `forecast`, `verify --merge`, ...) on files built below, run by
`grokclocks.cli.main` in its own child process of one worker (tests/_hostile.py's `run_cli_cases`: an
address-space cap of `CAP_MIB` beyond the worker's, killed after `LIMIT_S` s).  Every case must keep the
invariants of every command -- the classes the hostile trials count:

* no traceback: `main` returns 0 or 2, no exception escapes it, stderr holds no `Traceback`;
* no hang: the case answers, in less than `CPU_LIMIT_S` of CPU time;
* no terminal injection: no control character (ESC, BEL, CSI, C1, bidirectional overrides) reaches stdout or
  stderr raw, no line begins with text planted after a newline in a name, and every line on stderr is one of
  the command's own (`grokclocks...`), never Python's two-line warning or argparse's usage block;

and its own expectation: the refusal that names what is wrong, or the result with the note or warning that
says what was left out (no silent loss, no silently wrong result).  Every case failed on the code before the
fixes it names (the exception, hang, silent result or message it gave is in its comment).
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import os
import re
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from _hostile import CPU_LIMIT_S, run_cli_cases, skip_unless_capped

FIX = Path(__file__).resolve().parent / "fixtures" / "logs"
NAME = "x\x1b]0;PWNED\x07\x1b[2J\x9b31m\nINJECTED <script>alert(1)<script> | \u202e $\\oops$ y"  # no "/"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
HEADER = ["step", "train_acc", "val_acc", "train_loss", "val_loss"]


def _csv(path: Path, header=HEADER) -> Path:
    """A run that fits its training set at step 400 and has not grokked by 2,000 (41 records)."""
    s = np.arange(0, 2050, 50)
    te = 0.05 + s / 3e5
    rows = zip(s, np.minimum(1, s / 400), te, 2 * np.exp(-s / 200), 2 - te)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows([[f"{x:g}" for x in r] for r in rows])
    return path


def _slices(d: Path, meta1: dict | None = None, row1: dict | None = None) -> Path:
    """Two partial certificates of a CPU run in `d`/s (slice 1's meta and row changed as given)."""
    s = d / "s"
    s.mkdir(parents=True)
    for k in (1, 2):
        row = {"spec_id": f"levi:eq{k}", "what": "delay", "kind": "agree", "predicted": 1.0, "measured": 1.001,
               "error": abs(1.001 - 1.0), "tolerance": 0.01, "metric": "rel", "source": "verify/levi/test_x.py",
               "passed": True, "verdict": "pass", "test": f"verify/levi/test_x.py::test_{k}"}
        meta = {"scale": "cpu", "commit": "abc123", "grokclocks": "0.1", "date": "2026-01-01T00:00:00+00:00",
                "duration_s": 1.0, "shard": [k, 2], "n_rows": 1, "n_failed": 0, "n_reported": 0}
        if k == 1:
            row.update(row1 or {})
            meta.update(meta1 or {})
        cert = {"meta": meta, "rows": [row], "tests": [{"test": row["test"], "wall_s": 0.1}], "budget_warnings": []}
        (s / f"verify-cpu-shard-{k}-of-2.json").write_text(json.dumps(cert))
    return s


def _mlflow_db(path: Path, *, run_name=lambda r: f"seed{r}", is_nan=lambda i: 0, n_runs: int = 2,
               extra_runs: int = 0) -> Path:
    """An MLflow sqlite store (MLflow's three tables, no CHECK constraint) of `n_runs` runs of 41 records."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE experiments (experiment_id, name, lifecycle_stage)")
    con.execute("CREATE TABLE runs (run_uuid, name, experiment_id, lifecycle_stage, start_time)")
    con.execute("CREATE TABLE metrics (key, value, timestamp, step, is_nan, run_uuid)")
    con.execute("INSERT INTO experiments VALUES (1, 'e', 'active')")
    for r in range(n_runs + extra_runs):
        con.execute("INSERT INTO runs VALUES (?, ?, 1, 'active', ?)", (f"u{r}", run_name(r), r))
        if r >= n_runs:
            continue  # an active run that logged nothing
        for i in range(41):
            s = i * 50
            te = 0.05 + s / 3e5
            for k, v in (("train_acc", min(1, s / 400)), ("val_acc", te), ("train_loss", 2 * math.exp(-s / 200)),
                         ("val_loss", 2 - te)):
                con.execute("INSERT INTO metrics VALUES (?, ?, 0, ?, ?, ?)", (k, v, s, is_nan(i), f"u{r}"))
    con.commit()
    con.close()
    return path


def _engine(path: Path, fields: dict) -> Path:
    """An engine run file of format 1 (its config in the .json beside it) of one run of 5 records."""
    t = np.arange(0, 50, 10.0)
    np.savez(path, times=t, **{"metric:acc_train": np.minimum(t / 20, 1)[None],
                               "metric:acc_test": np.minimum(t / 400, 1)[None]})
    path.with_suffix(".json").write_text(json.dumps({"class": None, "fields": fields}))
    return path


def _build(d: Path) -> dict[str, tuple[list[str], str, dict]]:
    """Case -> (argv, cwd, expectation: rc, and regexes `out` / `err` that must match, `no` that must not)."""
    cases: dict[str, tuple[list[str], str, dict]] = {}

    def case(name: str, argv: list, expect: dict, cwd: Path = d) -> None:
        cases[name] = ([str(a) for a in argv], str(cwd), expect)

    # --- the door to the terminal: figures, warnings, argparse ---------------------------------------------
    for nm in (NAME, "plain"):
        _csv(d / "runs" / nm / "metrics.csv")
    # ParseFatalException (exit 2 after the table was printed, no figure) and raw BEL in matplotlib's warnings
    case("plot of a run named $\\oops$ (compare)", ["compare", d / "runs", "--plot", d / "c.png"],
         {"rc": 0, "err": r"figure written to .*c\.png"})
    case("plot of a run named $\\oops$ (forecast)", ["forecast", d / "runs", "--plot", d / "f.png"],
         {"rc": 0, "err": r"figure written to .*f-run1\.png"})
    # forecast --json named no run (compare's JSON did)
    case("forecast --json names each run", ["forecast", d / "runs", "--json"], {"rc": 0, "json_names": ["plain", NAME]})
    # a RuntimeWarning of numpy printed in Python's two-line form
    _slices(d / "overflow", row1={"predicted": 1e308, "measured": -1e308, "error": 2.0})
    case("a warning of numpy is one line", ["verify", "--merge", d / "overflow" / "s", "--report-dir", d / "o1"],
         {"rc": 2, "err": r"grokclocks: warning: overflow"})
    # argparse printed its usage block
    case("a bad option value is one line", ["compare", d / "runs", "--eps-cls", "nan"],
         {"rc": 2, "err": r"^grokclocks compare: error: argument --eps-cls"})
    # --- links inside a named folder: refused or said, never silently left out -------------------------------
    for nm in ("seed0", "seed1"):
        _csv(d / "linked" / nm / "metrics.csv")
    _csv(d / "seed2_real" / "metrics.csv")
    os.symlink(d / "seed2_real", d / "linked" / "seed2")
    case("a linked seed of a runs folder is named", ["compare", d / "linked"],  # 2 runs of 3, no word
         {"rc": 0, "out": r"2 run\(s\)", "err": r"warning: 1 linked folder\(s\) .*'linked/seed2'"})
    (d / "tb").mkdir()
    ev = next((FIX / "tb").iterdir())
    shutil.copy(ev, d / "tb" / ev.name)
    (d / "tb_other").mkdir()
    shutil.copy(ev, d / "tb_other" / ev.name)
    os.symlink(d / "tb_other", d / "tb" / "validation")
    case("a linked sub-folder of a TensorBoard run is named", ["compare", d / "tb"],  # skipped without a word
         {"rc": 0, "err": r"warning: 1 linked folder\(s\) .*'tb/validation'"})
    shutil.copytree(FIX / "mlruns", d / "mlruns")
    exp = next(e for e in (d / "mlruns").iterdir() if (e / "meta.yaml").is_file() and e.name != "0")
    run = sorted(r for r in exp.iterdir() if r.is_dir())[0]
    shutil.move(run, d / "mlrun_elsewhere")
    os.symlink(d / "mlrun_elsewhere", run)
    case("a linked run of an MLflow experiment is named", ["compare", exp],  # 1 run of 2, no word
         {"rc": 0, "err": rf"warning: 1 linked folder\(s\) .*{run.name}"})
    s = _slices(d / "merge_link")
    shutil.move(s / "verify-cpu-shard-2-of-2.json", d / "merge_link" / "elsewhere.json")
    os.symlink(d / "merge_link" / "elsewhere.json", s / "verify-cpu-shard-2-of-2.json")
    case("a linked slice in a merged folder is refused", ["verify", "--merge", s, "--report-dir", d / "o2"],
         {"rc": 2, "err": r"verify-cpu-shard-2-of-2\.json' is a symbolic link inside the folder"})  # was merged
    _csv(d / "lv" / "metrics.csv")
    (d / "lv.json").write_text('{"planned_steps": 5000}')
    case("a run folder with NAME.json beside it", ["forecast", d / "lv"], {"rc": 0})  # 'lv.json: not inside'
    # --- certificates and memory -------------------------------------------------------------------------------
    _slices(d / "billion", meta1={"shard": [1, 10**9]})
    case("a slice of 10^9 slices", ["verify", "--merge", d / "billion" / "s", "--report-dir", d / "o3"],
         {"rc": 2, "err": r"meta\.shard must be of a run of at most 10000 slices"})  # MemoryError traceback
    with (d / "sparse.csv").open("wb") as f:
        f.write(b"step,train_acc\n")
        f.truncate(3 * 2**30)
    case("a 3 GB sparse CSV with --max-bytes 4G", ["compare", d / "sparse.csv", "--max-bytes", "4G"],
         {"rc": 2, "err": r"^grokclocks: error: out of memory"})  # MemoryError traceback
    # --- arguments ---------------------------------------------------------------------------------------------
    x = _csv(d / "x.csv")
    for label, value in (("'²'", "²"), ("5,000 digits", "9" * 5000)):  # "invalid _byte_count value"
        case(f"--max-bytes {label}", ["compare", x, "--max-bytes", value],
             {"rc": 2, "err": r"--max-bytes must be a positive number of bytes", "no": r"invalid _byte_count|9{50}"})
    case("forecast --train-level nan", ["forecast", x, "--train-level", "nan"],  # 'diverged', exit 0
         {"rc": 2, "err": r"--train-level must be an accuracy level in \(0, 1\]"})
    for cmd in ("compare", "forecast"):  # the whole log read, --index ignored
        case(f"{cmd} --index on a CSV", [cmd, x, "--index", "3"], {"rc": 2, "err": r"leave out --index"})
    (d / "mask.txt").write_text("y" * 1000 + "\n")
    case("--train-mask of a long bad token", ["compare", x, "--train-mask", d / "mask.txt", "--p", "7"],
         {"rc": 2, "err": r"mask\.txt' line 1: 'y{40}'\.\.\. is not an index", "no": "y" * 50})  # 160 chars of it
    # --- readers -----------------------------------------------------------------------------------------------
    _mlflow_db(d / "digits.db", run_name=lambda r: "seed" + "9" * 5000 + str(r))  # int() conversion limit
    case("an MLflow run name of 5,000 digits", ["compare", d / "digits.db"], {"rc": 0, "out": r"2 run\(s\)"})
    _mlflow_db(d / "isnan.db", is_nan=lambda i: "0" if i % 2 else 0)  # 'is NaN (did the run diverge?)'
    case("an MLflow is_nan of text '0'", ["compare", d / "isnan.db"], {"rc": 2, "err": r"is_nan is '0', not 0 or 1"})
    _mlflow_db(d / "idle.db", extra_runs=1)  # the idle run left out without a word
    case("an MLflow run without metrics is noted", ["compare", d / "idle.db"],
         {"rc": 0, "out": r"skipped 1 active run\(s\) without metrics \(\['seed2'\]\)"})
    _engine(d / "bigp.npz", {"p": 32768, "split": "random", "train_frac": [0.5], "seeds": [0]})  # 8 GiB: MemoryError
    case("an engine config of p = 32,768", ["compare", d / "bigp.npz"],
         {"rc": 2, "err": r"config p = 32768 with 1 seed\(s\).*over the limit max_bytes"})
    _engine(d / "seeds.npz", {"p": 4096, "split": "random", "train_frac": [0.5], "seeds": list(range(50))})  # > 10 s
    case("an engine config of 50 seeds for a run of 1", ["compare", d / "seeds.npz"],
         {"rc": 2, "err": r"config seeds lists 50 seeds, but the metrics hold 1"})
    return cases


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    skip_unless_capped()
    d = tmp_path_factory.mktemp("hostile_cli")
    cases = _build(d)
    got = run_cli_cases({k: (argv, cwd) for k, (argv, cwd, _) in cases.items()})
    return d, cases, got


def _case_names() -> list[str]:
    """The case names, from a build in a temporary folder (the files themselves are built again per session)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return sorted(_build(Path(tmp)))


@pytest.mark.parametrize("name", _case_names())
def test_hostile_command(name, outcomes):
    d, cases, got = outcomes
    _, _, expect = cases[name]
    r = got[name]
    out, err = r["stdout"], r["stderr"]
    # no traceback, no hang
    assert r["rc"] not in (None, "killed"), r["exc"] or f"no answer within the limit: {err[-500:]}"
    assert r["rc"] in (0, 2) and "Traceback (most recent call last)" not in err, err[-2000:]
    assert r["cpu_s"] < CPU_LIMIT_S, r["cpu_s"]
    # no terminal injection; every line on stderr is the command's own
    for text in (out, err):
        assert not CONTROL.search(text), repr(CONTROL.search(text))
        assert not any(line.lstrip("#*|> ").startswith("INJECTED") for line in text.splitlines()), text[-1000:]
    bad = [line for line in err.splitlines() if line.strip() and not line.startswith(("grokclocks", "figure written"))]
    assert not bad, bad[:5]
    # the case's own expectation
    assert r["rc"] == expect["rc"], (r["rc"], err[-800:])
    if "out" in expect:
        assert re.search(expect["out"], out, re.M), out[-1500:]
    if "err" in expect:
        assert re.search(expect["err"], err, re.M), err[-1500:]
    if "no" in expect:
        assert not re.search(expect["no"], out + err), err[-800:]
    if r["rc"] == 2:
        assert len(err.strip().splitlines()) <= 2 and len(err) < 1200, err  # a warning at most, and the error line
    if "json_names" in expect:
        js = json.loads(out)
        assert sorted(js["run_names"]) == sorted(expect["json_names"])
        assert [f["run_name"] for f in js["forecasts"]] == js["run_names"]


def test_every_case_ran_without_jax(outcomes):
    _, cases, got = outcomes
    assert set(got) == set(cases)
    assert not any(r["jax"] for r in got.values())


def test_the_figures_were_written(outcomes):
    """The figures of the runs named `$\\oops$` exist and are PNGs (before: none was written)."""
    d, _, _ = outcomes
    for f in ("c.png", "f-run0.png", "f-run1.png"):
        assert (d / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f


def test_a_refused_merge_wrote_nothing(outcomes):
    d, _, _ = outcomes
    for o in ("o1", "o2", "o3"):
        assert not (d / o / "verify-cpu.json").exists() and not (d / o / "verify-cpu.md").exists()
