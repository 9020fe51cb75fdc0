"""Names from files reach the terminal, JSON and pages escaped: every source of a name, every output.

A name holding an escape sequence that retitles the terminal and clears the screen, a newline followed by an
injected line, a `<script>` and a `|` is planted in each place a name comes from -- a folder of a runs folder, an
MLflow run name, a W&B chart export's column prefix, a log column (named with --columns), a certificate's row
text, test name, commit, date and environment -- and every output is read: the terminal tables of `compare`
and `forecast`, their `--markdown` tables rendered by the site's Markdown, their `--json` (parsed: the name
kept exactly, no control byte printed), a merged certificate's summary line, JSON and page, and the GPU status
table of the docs.  Closed stdout is one line on stderr, not an AttributeError traceback.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_escape import _site_markdown, _Tree

from grokclocks._escape import terminal_text
from grokclocks.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "logs"
NAME = "x\x1b]0;PWNED\x07\x1b[2J\nINJECTED <script>alert(1)<script> | y"  # no "/": a folder's name too
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _folder(d: Path) -> tuple[list[str], list[str]]:
    for name in (NAME, "plain"):
        (d / "runs" / name).mkdir(parents=True)
        shutil.copy(FIX / "metrics.csv", d / "runs" / name / "metrics.csv")
    return [str(d / "runs")], []


def _mlflow(d: Path) -> tuple[list[str], list[str]]:
    shutil.copytree(FIX / "mlruns", d / "mlruns")
    exp = next(e for e in (d / "mlruns").iterdir() if (e / "meta.yaml").is_file() and e.name != "0")
    for i, run in enumerate(sorted(r for r in exp.iterdir() if r.is_dir())):
        (run / "tags" / "mlflow.runName").write_text(f"{NAME}{i}")
    return [str(exp)], []


def _wandb(d: Path) -> tuple[list[str], list[str]]:
    rows = list(csv.reader((FIX / "wandb_chart_val_acc.csv").open()))
    rows[0] = [c.replace("seed0", NAME) for c in rows[0]]
    with (d / "chart.csv").open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    return [str(d / "chart.csv")], []


def _column(d: Path) -> tuple[list[str], list[str]]:
    rows = list(csv.reader((FIX / "metrics.csv").open()))
    rows[0] = [NAME if c == "val_acc" else c for c in rows[0]]
    with (d / "metrics.csv").open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    return [str(d / "metrics.csv")], ["--columns", f"test_acc={NAME}"]


SOURCES = {"folder": _folder, "mlflow": _mlflow, "wandb": _wandb, "column": _column}


def _strings(obj) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else []
    return [s for x in items for s in _strings(x)]


def _md(text: str) -> str:
    from grokclocks._escape import markdown_text

    return markdown_text(text)


def _cli(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def _terminal_safe(text: str) -> None:
    assert not CONTROL.search(text), repr(CONTROL.search(text))
    assert not any(line.lstrip().startswith("INJECTED") for line in text.splitlines()), text


def _page_safe(markdown: str, benign: str) -> None:
    """`markdown` (the page with NAME planted) renders to the elements and attributes of `benign` (the same page
    with a plain name): no script, heading, link or attribute the name made; no line of text starts with it."""
    pages = []
    for text in (markdown, benign):
        tree = _Tree()
        tree.feed(_site_markdown()(text))
        pages.append(tree)
    hostile, plain = pages
    assert "script" not in hostile.tags and hostile.tags == plain.tags, (hostile.tags, plain.tags)
    assert [a for a in hostile.attrs if a[0] != "id"] == [a for a in plain.attrs if a[0] != "id"]
    assert len(hostile.cells) == len(plain.cells) and not any(x.startswith("INJECTED") for x in hostile.text)


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_a_hostile_name_reaches_every_output_escaped(source, tmp_path, capsys):
    args, extra = SOURCES[source](tmp_path)
    shown = terminal_text(NAME)
    for command in ("compare", "forecast"):
        rc, out, err = _cli([command, *args, *extra], capsys)
        assert rc == 0, err
        _terminal_safe(out + err)
        if command == "compare" or source != "column":  # a forecast names runs, not columns
            # the name is shown, its control characters as escapes (a line wrapped to the terminal at its spaces)
            assert " ".join(shown.split()) in " ".join(out.split()), out
        rc, out, err = _cli([command, *args, *extra, "--markdown"], capsys)
        assert rc == 0 and "<script>" not in out, err
        _terminal_safe(out + err)
        _page_safe(out, out.replace(_md(NAME), "plain"))
        rc, out, err = _cli([command, *args, *extra, "--json"], capsys)
        assert rc == 0, err
        _terminal_safe(out + err)
        texts = _strings(json.loads(out))  # the JSON keeps the name (a column name in its repr, as in the notes)
        if command == "compare" or source != "column":
            assert any(NAME in t or repr(NAME)[1:-1] in t for t in texts), texts[:5]


def _slice(directory: Path, k: int) -> Path:
    from grokclocks.verification import Report, write_report

    rep = Report("gpu")
    rep.current_test = f"verify/s{k}.py::test_{k}[{NAME}]"
    rep.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.01, source=NAME, what=NAME)
    js, _ = write_report(rep.rows, directory, "gpu", 5.0, tests=[{"test": rep.current_test, "outcome": "passed",
                                                                 "wall_s": 5.0}],
                         meta={"commit": NAME, "shard": [k, 2], "plan": {"a": 1}}, stem=f"verify-gpu-shard-{k}-of-2")
    data = json.loads(js.read_text())
    data["meta"].update(date=NAME, device=NAME)
    data["meta"]["environment"].update(machine=NAME, python=NAME, jax_devices=[NAME])
    js.write_text(json.dumps(data))
    return js


def test_a_hostile_certificate_reaches_the_terminal_and_the_pages_escaped(tmp_path, capsys):
    from grokclocks.verification import SuiteStatus, read_certificate, status_markdown

    for k in (1, 2):
        _slice(tmp_path / f"s{k}", k)
    rc, out, err = _cli(["verify", "--merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--report-dir",
                         str(tmp_path / "out")], capsys)
    assert rc == 0 and "merged 2 slices: 2 rows, 0 failed" in out, err
    _terminal_safe(out + err)
    cert = read_certificate(tmp_path / "out" / "verify-gpu.json")
    assert cert["meta"]["commit"] == NAME and cert["rows"][0]["what"] == NAME  # the JSON keeps the text exactly
    page = (tmp_path / "out" / "verify-gpu.md").read_text()
    assert "<script>" not in page and "\n# " not in page.split("\n", 1)[1]
    _page_safe(page, page.replace(_md(NAME), "plain"))
    st = SuiteStatus("levi", "failed", verdict="failed", date=NAME, commit=NAME, device=NAME, wall_s=5.0, n_rows=2,
                     n_failed=1)
    table = status_markdown([st, SuiteStatus(NAME, "never run")], link_dir="gpu")
    assert table.count("\n") == 3  # header, separator, two suites: no line injected
    _page_safe(table, status_markdown([SuiteStatus("levi", "failed", verdict="failed", date="d", commit="c",
                                                   device="v", wall_s=5.0, n_rows=2, n_failed=1),
                                       SuiteStatus("plain", "never run")], link_dir="gpu"))


def test_closed_stdout_is_one_line_not_a_traceback():
    """`grokclocks list >&-` ended in an AttributeError traceback ('NoneType' object has no attribute 'flush')."""
    for argv in ("list", "time --lam 0.5 --eps 1e-3"):
        r = subprocess.run(["sh", "-c", f'"{sys.executable}" -m grokclocks {argv} >&-'], stderr=subprocess.PIPE,
                           text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith("grokclocks: error: standard output is closed"), r.stderr
