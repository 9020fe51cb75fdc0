"""The verification report: verdicts, tolerances with sources, and the written certificate."""

from __future__ import annotations

import json
import math
import os
import re
import threading
from pathlib import Path

import numpy as np
import pytest

from grokclocks.verification import (
    CertificateError,
    Report,
    Row,
    budget_warnings,
    format_table,
    merge_certificates,
    parse_shard,
    shard_plan,
    write_certificate,
    write_report,
)

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
VERIFY_CONFTEST = ROOT / "verify" / "conftest.py"
SRC = "8 seeds at d=500, spec 7.2"


@pytest.fixture(autouse=True)
def _checkout_first_on_path(monkeypatch):
    """pytester's subprocesses import grokclocks from this checkout (not another install of the package)."""
    import os

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))


# ---------------------------------------------------------------- check()


def test_check_within_tolerance_passes():
    rep = Report()
    rep.current_test = "verify/x.py::test_a"
    row = rep.check("levi:eq8", predicted=1.0, measured=1.04, rtol=0.05, source=SRC, what="L_gen at t*")
    assert row.passed and row.verdict == "pass" and row.kind == "agree"
    assert row.error == pytest.approx(0.04)
    assert (row.predicted, row.measured, row.tolerance, row.metric) == (1.0, 1.04, 0.05, "rel")
    assert row.source == SRC and row.what == "L_gen at t*" and row.test == "verify/x.py::test_a"
    assert row.scale == "cpu"
    assert rep.rows == [row]


def test_check_outside_tolerance_fails_and_is_recorded():
    rep = Report()
    with pytest.raises(AssertionError, match=r"levi:eq8 .*error 0\.1 > tolerance 0\.05"):
        rep.check("levi:eq8", predicted=1.0, measured=1.1, rtol=0.05, source=SRC)
    assert len(rep.rows) == 1
    assert not rep.rows[0].passed and rep.rows[0].verdict == "FAIL"


@pytest.mark.parametrize(
    ("kw", "predicted", "measured", "error"),
    [
        ({"rtol": 1.0}, 2.0, 3.0, 0.5),
        ({"atol": 1.0}, 2.0, 2.75, 0.75),
        ({"logtol": 1.0}, 2.0, 2.0 * math.e ** 0.5, 0.5),
        ({"logtol": 1.0}, 2.0, 2.0 * math.e ** -0.5, 0.5),
    ],
)
def test_metrics(kw, predicted, measured, error):
    row = Report().check("levi:eq8", predicted=predicted, measured=measured, source=SRC, **kw)
    assert row.error == pytest.approx(error, rel=1e-12)
    assert row.metric == {"rtol": "rel", "atol": "abs", "logtol": "log"}[next(iter(kw))]


def test_arrays_report_the_worst_element():
    rep = Report()
    row = rep.check("levi:tstar", predicted=[100.0, 200.0, 300.0], measured=[101.0, 190.0, 300.0],
                    rtol=0.06, source=SRC)
    assert row.passed and row.error == pytest.approx(0.05)
    assert (row.predicted, row.measured) == (200.0, 190.0)
    assert row.details["n_compared"] == 3
    with pytest.raises(AssertionError):
        rep.check("levi:tstar", predicted=[100.0, 200.0], measured=[100.0, 260.0], rtol=0.06, source=SRC)


def test_broadcasting_scalar_prediction():
    row = Report().check("levi:eq6", predicted=0.5, measured=np.array([0.49, 0.52]), atol=0.03, source=SRC)
    assert row.passed and row.error == pytest.approx(0.02)


def test_nan_measurement_fails():
    rep = Report()
    with pytest.raises(AssertionError):
        rep.check("levi:eq8", predicted=1.0, measured=math.nan, rtol=10.0, source=SRC)
    assert rep.rows[-1].error == math.inf and not rep.rows[-1].passed


def test_equal_infinities_agree_and_finite_vs_infinite_fails():
    rep = Report()
    row = rep.check("levi:grok-def", predicted=math.inf, measured=math.inf, rtol=0.01, source=SRC)
    assert row.passed and row.error == 0.0
    with pytest.raises(AssertionError):
        rep.check("levi:grok-def", predicted=math.inf, measured=1e6, rtol=0.01, source=SRC)


def test_check_and_reject_share_their_tolerance_handling():
    """`check` and `reject` read the tolerance the same way: the whole failure message, and which error comes
    first when both the tolerance and the source are wrong (nothing recorded then)."""
    rep = Report()
    with pytest.raises(AssertionError) as exc:
        rep.check("levi:eq8", predicted=2.0, measured=2.5, atol=0.25, source="src", what="L")
    assert str(exc.value) == "levi:eq8 L: prediction 2 vs measurement 2.5, abs error 0.5 > tolerance 0.25 (src)"
    with pytest.raises(AssertionError) as exc:
        rep.reject("levi:eq8", wrong=2.0, measured=2.5, logtol=0.5, source="src", what="W")
    assert str(exc.value) == ("levi:eq8 W: the wrong variant 2 is within log 0.223 <= 0.5 of the measurement 2.5: "
                              "the check cannot tell right from wrong")
    for record, value in ((rep.check, "predicted"), (rep.reject, "wrong")):
        with pytest.raises(ValueError, match="give exactly one of rtol, atol, logtol"):
            record("levi:eq8", **{value: 1.0}, measured=1.0, rtol=0.1, atol=0.1, source="")
        with pytest.raises(ValueError, match=r"tolerance must be finite and > 0 \(got inf\)"):
            record("levi:eq8", **{value: 1.0}, measured=1.0, logtol=math.inf, source="")
        with pytest.raises(ValueError, match="every tolerance needs its measured source"):
            record("levi:eq8", **{value: 1.0}, measured=1.0, rtol=0.1, source="")
    assert [r.kind for r in rep.rows] == ["agree", "reject"]


# ---------------------------------------------------------------- reject()


def test_reject_far_wrong_variant_is_rejected():
    rep = Report()
    row = rep.reject("levi:eq15", wrong=2.0, measured=1.02, rtol=0.1, source=SRC, what="paper's gamma^2/4")
    assert row.passed and row.kind == "reject" and row.verdict == "rejected"
    assert row.error == pytest.approx(abs(1.02 - 2.0) / 2.0)


def test_reject_row_within_tolerance_fails():
    rep = Report()
    with pytest.raises(AssertionError, match="cannot tell right from wrong"):
        rep.reject("levi:eq15", wrong=1.0, measured=1.05, rtol=0.1, source=SRC)
    row = rep.rows[-1]
    assert not row.passed and row.verdict == "NOT REJECTED"


def test_reject_on_arrays_needs_every_element_outside():
    rep = Report()
    # one element of the wrong variant lies within the tolerance: not rejected; the row shows that element
    with pytest.raises(AssertionError):
        rep.reject("levi:eq18", wrong=[5.0, 1.01], measured=[1.0, 1.0], rtol=0.1, source=SRC)
    assert rep.rows[-1].predicted == 1.01
    row = rep.reject("levi:eq18", wrong=[5.0, 0.2], measured=[1.0, 1.0], rtol=0.1, source=SRC)
    assert row.passed and row.error == pytest.approx(0.8)  # the closest (least rejected) element


# ---------------------------------------------------------------- tolerances must be stated properly


@pytest.mark.parametrize("method", ["check", "reject"])
def test_tolerance_without_source_is_refused(method):
    rep = Report()
    value = "wrong" if method == "reject" else "predicted"
    with pytest.raises(ValueError, match="source"):
        getattr(rep, method)("levi:eq8", **{value: 1.0}, measured=1.0, rtol=0.1, source="")
    with pytest.raises(TypeError):
        getattr(rep, method)("levi:eq8", **{value: 1.0}, measured=1.0, rtol=0.1)  # source is required
    assert rep.rows == []


@pytest.mark.parametrize(
    "tols",
    [{}, {"rtol": 0.1, "atol": 0.1}, {"rtol": 0.1, "logtol": 0.1}, {"rtol": 0.0}, {"atol": -1.0},
     {"rtol": math.inf}, {"logtol": math.nan}],
)
def test_bad_tolerances_are_refused(tols):
    rep = Report()
    with pytest.raises(ValueError, match="tolerance|exactly one"):
        rep.check("levi:eq8", predicted=1.0, measured=1.0, source=SRC, **tols)
    assert rep.rows == []


def test_unknown_metric_is_refused():
    from grokclocks.verification import _errors

    with pytest.raises(ValueError, match="metric"):
        _errors(1.0, 1.0, "ratio")


# ---------------------------------------------------------------- the certificate


def _rows() -> list[Row]:
    rep = Report(scale="cpu")
    rep.current_test = "verify/levi/test_levi.py::test_eq8"
    rep.check("levi:eq8", predicted=0.25, measured=0.251, rtol=0.05, source=SRC, what="loss | gen")
    rep.reject("levi:eq15", wrong=2.0, measured=1.0, rtol=0.1, source=SRC, what="paper form")
    try:
        rep.check("levi:tstar", predicted=100.0, measured=150.0, rtol=0.05, source=SRC)
    except AssertionError:
        pass
    return rep.rows


def test_write_report_writes_json_and_markdown(tmp_path):
    rows = _rows()
    js, md = write_report(rows, tmp_path / "out", "cpu", duration_s=12.3)
    assert js == tmp_path / "out" / "verify-cpu.json" and md == tmp_path / "out" / "verify-cpu.md"
    data = json.loads(js.read_text())
    meta = data["meta"]
    assert meta["scale"] == "cpu" and meta["n_rows"] == 3 and meta["n_failed"] == 1
    assert meta["duration_s"] == pytest.approx(12.3)
    assert meta["environment"]["python"] and meta["environment"]["numpy"] == np.__version__
    assert [r["verdict"] for r in data["rows"]] == ["pass", "rejected", "FAIL"]
    assert data["rows"][0]["spec_id"] == "levi:eq8" and data["rows"][0]["source"] == SRC
    assert data["rows"][0]["test"] == "verify/levi/test_levi.py::test_eq8"
    text = md.read_text()
    assert text.startswith("# Verification certificate (cpu scale)")
    assert "3 rows, 1 failed" in text
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert len(table) == 2 + 3  # header, separator, one line per row
    assert "loss &#124; gen" in table[2]  # pipes inside cells are escaped (an HTML character reference)
    assert "| levi:tstar |" in table[4] and table[4].endswith("| **FAIL** |")  # a failure in bold


def test_format_table_plain_text():
    text = format_table(_rows(), width=200)
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("spec ID"))
    assert lines[0].startswith("Legend -- agree:") and set(lines[head + 1]) <= {"-", " "}
    assert len(lines) == head + 2 + 3  # at this width every row fits one line
    assert "NOT REJECTED" not in text and "rejected" in lines[head + 3] and "FAIL" in lines[head + 4]
    assert lines[head].rstrip().endswith("tolerance source") and lines[head + 2].rstrip().endswith(SRC)


def test_format_table_wraps_long_checks_and_sources_instead_of_cutting_them():
    """The terminal table keeps every word of the check and of the tolerance source (the former table cut the
    check at 48 characters and had no source column), within the width, and explains the row kinds."""
    rep = Report()
    what = "checked quantity " + " ".join(f"w{i:02d}" for i in range(40))  # 176 characters
    src = "measured spread " + " ".join(f"s{i:02d}" for i in range(30))
    rep.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.1, source=src, what=what)
    rep.observe("clocks:cor5.7", measured=2.0, source="no prediction in the paper", what="lag")
    text = format_table(rep.rows, width=140)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 140
    words = text.split()
    assert all(f"w{i:02d}" in words for i in range(40)) and all(f"s{i:02d}" in words for i in range(30))
    legend = " ".join(lines[: next(i for i, line in enumerate(lines) if line.startswith("spec ID"))])
    for phrase in ("agree:", "reject:", "WRONG variant", "'rejected'", "report:", "nan (none)", "never counted as a pass"):
        assert phrase in legend, phrase
    assert "nan (none)" in text and "no prediction in the paper" in text
    assert format_table(rep.rows, width=40) == text  # narrower requests get the minimum, 140


def test_gpu_scale_is_recorded(tmp_path):
    rep = Report(scale="gpu")
    rep.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.01, source=SRC)
    js, md = write_report(rep.rows, tmp_path, "gpu")
    assert json.loads(js.read_text())["rows"][0]["scale"] == "gpu"
    assert md.name == "verify-gpu.md"


# ---------------------------------------------------------------- the pytest plugin of verify/


def test_verify_session_writes_the_certificate(pytester, tmp_path):
    pytester.makeconftest(VERIFY_CONFTEST.read_text())
    pytester.makepyfile(
        test_demo="""
        def test_good(report, scale):
            assert scale == "cpu"
            report.check("levi:eq8", predicted=1.0, measured=1.01, rtol=0.05, source="demo", what="good")

        def test_rejects(report):
            report.reject("levi:eq15", wrong=2.0, measured=1.0, rtol=0.05, source="demo", what="wrong variant")

        def test_bad(report):
            report.check("levi:tstar", predicted=1.0, measured=2.0, rtol=0.05, source="demo", what="bad")
        """
    )
    out = tmp_path / "cert"
    result = pytester.runpytest_subprocess(f"--report-dir={out}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*grokclocks verification table (cpu scale)*", "*3 rows, 1 failed*"])
    data = json.loads((out / "verify-cpu.json").read_text())
    assert [(r["spec_id"], r["verdict"]) for r in data["rows"]] == [
        ("levi:eq8", "pass"), ("levi:eq15", "rejected"), ("levi:tstar", "FAIL")]
    assert data["rows"][2]["test"].endswith("test_demo.py::test_bad")
    assert (out / "verify-cpu.md").is_file()


def test_verify_session_records_a_partial_run(pytester, tmp_path):
    """A session that ran less than the whole tier says why in ``meta.partial`` (docs/gen_pages.py keeps the
    committed certificate then): tests deselected, a file named, a stop after a failure; None for all."""
    pytester.makeconftest(VERIFY_CONFTEST.read_text())
    pytester.makepyfile(
        test_demo="""
        def test_a(report):
            report.check("levi:eq8", predicted=1.0, measured=2.0, rtol=0.05, source="demo")

        def test_b(report):
            report.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.05, source="demo")
        """
    )
    partial = {}
    for name, args in {"all": (), "k": ("-k", "test_b"), "file": ("test_demo.py",), "x": ("-x",)}.items():
        out = tmp_path / name
        pytester.runpytest_subprocess(f"--report-dir={out}", "-p", "no:cacheprovider", *args)
        partial[name] = json.loads((out / "verify-cpu.json").read_text())["meta"]["partial"]
    assert partial["all"] is None
    assert partial["k"] == "1 tests deselected"
    assert partial["file"] == "ran test_demo.py"
    assert partial["x"] == "stopped early"
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_pages_for_test", ROOT / "docs" / "gen_pages.py")
    gp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gp)
    assert gp._selection({"partial": partial["k"]}) == "1 tests deselected"
    assert gp._selection({"partial": None}) is None


def test_verify_session_gpu_scale_from_environment(pytester, tmp_path, monkeypatch):
    monkeypatch.setenv("GROKCLOCKS_SCALE", "gpu")
    pytester.makeconftest(VERIFY_CONFTEST.read_text())
    pytester.makepyfile(
        test_demo="""
        def test_scale(report, scale):
            assert scale == "gpu"
            report.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.05, source="demo")
        """
    )
    result = pytester.runpytest_subprocess(f"--report-dir={tmp_path}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert json.loads((tmp_path / "verify-gpu.json").read_text())["meta"]["scale"] == "gpu"


def test_report_rows_are_labelled_and_never_passes(tmp_path):
    rep = Report("cpu")
    rep.check("levi:eq6", predicted=1.0, measured=1.0, atol=1e-12, source="exact", what="ok")
    row = rep.observe("clocks:cor5.7", measured=[3.0, 4.0], source="no prediction in the paper", what="lag")
    assert row.kind == "report" and row.verdict == "reported"
    assert np.isnan(row.predicted) and np.isnan(row.tolerance) and row.details["measured"] == [3.0, 4.0]
    with pytest.raises(ValueError, match="reason"):
        rep.observe("clocks:cor5.7", measured=1.0, source="")
    js, md = write_report(rep.rows, tmp_path, "cpu")
    text = md.read_text()
    assert "2 rows, 0 failed, 1 report-only" in text and "| reported |" in text
    meta = json.loads(js.read_text())["meta"]
    assert meta["n_reported"] == 1


# ---------------------------------------------------------------- slices (--shard) and their merge


@pytest.mark.parametrize(("text", "expected"), [("1/1", (1, 1)), ("2/3", (2, 3)), ("3/3", (3, 3))])
def test_parse_shard(text, expected):
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/2/3", "-1/2", ""])
def test_parse_shard_rejects(text):
    with pytest.raises(ValueError, match="K/N"):
        parse_shard(text)


def test_shard_plan_is_balanced_deterministic_and_complete():
    weights = {"levi/a.py": 300.0, "kramers/b.py": 200.0, "clocks/c.py": 120.0, "x/d.py": 90.0, "x/e.py": 80.0,
               "x/f.py": 10.0}
    plan = shard_plan(weights, 3)
    assert plan == shard_plan(dict(reversed(list(weights.items()))), 3)  # insertion order does not matter
    assert set(plan) == set(weights) and set(plan.values()) == {1, 2, 3}
    loads = [sum(w for g, w in weights.items() if plan[g] == k) for k in (1, 2, 3)]
    # greedy LPT: 300 | 200, 80 | 120, 90, 10; the makespan is the largest group's weight, the optimum here
    assert loads == [300.0, 280.0, 220.0]
    assert shard_plan(weights, 1) == {g: 1 for g in weights}
    assert sorted(shard_plan(weights, 10).values()) == [1, 2, 3, 4, 5, 6]  # more slices than groups: one each
    with pytest.raises(ValueError):
        shard_plan(weights, 0)


def _partial(directory: Path, k: int, n: int, *, scale: str = "gpu", commit: str = "abc123",
             plan: dict | None = None, tests: tuple[str, ...] | None = None, stem: str | None = None) -> Path:
    rep = Report(scale=scale)
    rep.current_test = f"verify/s{k}.py::test_{k}"
    rep.check(f"levi:eq{k}", predicted=1.0, measured=1.0, rtol=0.01, source=SRC, what=f"slice {k}")
    tests = tests if tests is not None else (rep.current_test,)
    recs = [{"test": t, "outcome": "passed", "wall_s": 10.0 * k, "compile_s": 1.0, "compile_max_s": 0.5,
             "compile_max_fun": "jit(f)", "peak_bytes": 2**30, "memory_kind": "device", "raised_peak": True}
            for t in tests]
    meta = {"commit": commit, "dirty": False, "shard": [k, n], "plan": plan or {"s.py": 1}}
    js, _ = write_report(rep.rows, directory, scale, 10.0 * k, tests=recs, meta=meta,
                         stem=stem or f"verify-{scale}-shard-{k}-of-{n}")
    return js


def test_merge_combines_the_slices_in_order(tmp_path):
    for k in (2, 1, 3):
        _partial(tmp_path / f"s{k}", k, 3)
    cert = merge_certificates([tmp_path / "s3", tmp_path / "s1", tmp_path / "s2"])
    m = cert["meta"]
    assert [r["spec_id"] for r in cert["rows"]] == ["levi:eq1", "levi:eq2", "levi:eq3"]
    assert [t["test"] for t in cert["tests"]] == ["verify/s1.py::test_1", "verify/s2.py::test_2", "verify/s3.py::test_3"]
    assert m["scale"] == "gpu" and m["commit"] == "abc123" and "shard" not in m
    assert m["n_rows"] == 3 and m["n_failed"] == 0 and m["duration_s"] == pytest.approx(60.0)
    assert [s["shard"] for s in m["merged_from"]] == [[1, 3], [2, 3], [3, 3]]
    js, md = write_certificate(cert, tmp_path / "out")
    assert js.name == "verify-gpu.json" and "Merged from 3 slices" in md.read_text()
    assert json.loads(js.read_text())["rows"] == cert["rows"]


def test_write_certificate_replaces_a_certificate_only_when_told(tmp_path):
    """A second write names the existing file and leaves both files as they were; overwrite=True replaces
    them; an existing .md alone also blocks the pair (checked before either file is written)."""
    from grokclocks import OutputExistsError

    rep = Report()
    rep.check("levi:eq1", predicted=1.0, measured=1.0, rtol=0.1, source=SRC, what="first")
    js, md = write_report(rep.rows, tmp_path, "cpu")
    before = (js.read_bytes(), md.read_bytes())
    rep2 = Report()
    rep2.check("levi:eq2", predicted=2.0, measured=2.0, rtol=0.1, source=SRC, what="second")
    with pytest.raises(OutputExistsError, match="verify-cpu.json"):
        write_report(rep2.rows, tmp_path, "cpu")
    assert (js.read_bytes(), md.read_bytes()) == before
    write_report(rep2.rows, tmp_path, "cpu", overwrite=True)
    assert "levi:eq2" in js.read_text() and "levi:eq2" in md.read_text() and "levi:eq1" not in md.read_text()
    js.unlink()
    with pytest.raises(OutputExistsError, match="verify-cpu.md"):
        write_report(rep.rows, tmp_path, "cpu")
    assert not js.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["verify-cpu.md"]  # no temporary file left


def test_merge_names_the_missing_slices(tmp_path):
    _partial(tmp_path, 2, 4)
    with pytest.raises(CertificateError, match=r"missing slice\(s\) 1, 3, 4 of 4"):
        merge_certificates([tmp_path])


def test_merge_refuses_a_slice_given_twice(tmp_path):
    _partial(tmp_path / "a", 1, 2)
    _partial(tmp_path / "b", 1, 2)
    _partial(tmp_path / "b", 2, 2)
    with pytest.raises(CertificateError, match="slice 1 of 2 given twice"):
        merge_certificates([tmp_path / "a", tmp_path / "b"])


@pytest.mark.parametrize(("kw", "message"), [
    ({"scale": "cpu"}, "scale differs"),
    ({"commit": "def456"}, "commit differs"),
    ({"plan": {"s.py": 2}}, "shard plans differ"),
])
def test_merge_refuses_mismatched_slices(tmp_path, kw, message):
    _partial(tmp_path, 1, 2)
    _partial(tmp_path, 2, 2, **kw, stem="verify-gpu-shard-2-of-2")
    with pytest.raises(CertificateError, match=message):
        merge_certificates([tmp_path])


def test_merge_refuses_different_slice_counts_and_full_certificates(tmp_path):
    _partial(tmp_path / "a", 1, 2)
    _partial(tmp_path / "a", 2, 3)
    with pytest.raises(CertificateError, match="number of slices differs"):
        merge_certificates([tmp_path / "a"])
    rep = Report("gpu")
    rep.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.1, source=SRC)
    js, _ = write_report(rep.rows, tmp_path / "full", "gpu")
    with pytest.raises(CertificateError, match="not a partial certificate"):
        merge_certificates([js])
    with pytest.raises(CertificateError, match="no partial certificate"):
        merge_certificates([tmp_path / "full"])
    with pytest.raises(CertificateError, match="no such file"):
        merge_certificates([tmp_path / "nowhere"])


# A hostile certificate file is refused with one line naming it, before it is read: a FIFO would block the read
# forever, a 10^4-nested JSON raised a RecursionError, an oversized file was read whole.
_HOSTILE = {
    "FIFO": r"a FIFO \(named pipe\), not a regular file; only files are read",
    "nested 10^4": r"JSON nested deeper than 64 levels \(a certificate nests 7 levels",
    "over 64 MiB": r"the file holds 67108865 bytes \(64 MiB\), over the limit max_bytes = 67108864 \(64 MiB\); "
                   r"a certificate of the whole CPU tier holds about 0\.3 MiB",
    "not UTF-8": r"not a readable certificate: byte 0xff at offset 10 is not UTF-8",
}


def _write_hostile(path: Path, kind: str) -> Path:
    if kind == "FIFO":
        os.mkfifo(path)
    elif kind == "nested 10^4":
        path.write_text("[" * 10**4 + "]" * 10**4)
    elif kind == "over 64 MiB":
        with open(path, "wb") as f:  # sparse: nothing is written
            f.truncate(2**26 + 1)
    else:
        path.write_bytes(b'{"meta": "\xff"}')
    return path


def _outcome(call, fifo: Path) -> dict:
    """{"result": what `call()` returns} or {"exc": what it raises}, within 20 s; a read that waits on the FIFO
    `fifo` for a writer is released by opening the FIFO for writing, and the test fails."""
    box: dict = {}

    def run():
        try:
            box["result"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["exc"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(20)
    if t.is_alive():
        with open(fifo, "wb"):
            pass
        t.join(20)
        pytest.fail(f"{fifo.name}: the read waited for a writer on the FIFO")
    return box


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
@pytest.mark.parametrize("kind", list(_HOSTILE))
@pytest.mark.parametrize("reader", ["merge a file", "merge a directory", "read a suite certificate"])
def test_a_hostile_certificate_file_is_one_line_naming_it(tmp_path, kind, reader):
    from grokclocks.verification import read_suite_certificate

    f = _write_hostile(tmp_path / "verify-gpu-shard-1-of-2.json", kind)
    call = {"merge a file": lambda: merge_certificates([f]), "merge a directory": lambda: merge_certificates([tmp_path]),
            "read a suite certificate": lambda: read_suite_certificate(f)}[reader]
    exc = _outcome(call, f).get("exc")
    assert isinstance(exc, CertificateError), repr(exc)
    msg = str(exc)
    assert "\n" not in msg and len(msg) < 300 and msg.startswith(f"{f}: "), msg
    assert re.search(_HOSTILE[kind], msg), msg


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_budget_tables_skip_a_hostile_file(tmp_path):
    """`budget_estimates` skips a budget table it cannot read (as before), now without waiting on a FIFO."""
    from grokclocks.verification import budget_estimates

    for i, kind in enumerate(_HOSTILE):
        _write_hostile(tmp_path / f"{i}.json", kind)
    (tmp_path / "ok.json").write_text(json.dumps({"modules": {"levi/test_levi.py": {"items": [
        {"test": "test_a", "h100_s": 2.5}, {"test": "test_a", "h100_s": 1.0}]}}}))
    out = _outcome(lambda: budget_estimates(tmp_path), tmp_path / "0.json")
    assert out == {"result": {"levi/test_levi.py::test_a": 3.5}}, out


def test_merge_refuses_a_test_run_in_two_slices(tmp_path):
    _partial(tmp_path, 1, 2, tests=("verify/a.py::test_x",))
    _partial(tmp_path, 2, 2, tests=("verify/a.py::test_x",))
    with pytest.raises(CertificateError, match="ran in two slices"):
        merge_certificates([tmp_path])


def test_budget_warnings_at_gpu_scale_only(tmp_path):
    tests = [{"test": "a", "wall_s": 241.0, "compile_s": 1.0, "compile_max_s": 1.0},
             {"test": "b", "wall_s": 10.0, "compile_s": 70.0, "compile_max_s": 61.0, "compile_max_fun": "jit(big)"},
             {"test": "c", "wall_s": 239.0, "compile_s": 59.0, "compile_max_s": 59.0}]
    warn = budget_warnings(tests, "gpu")
    assert len(warn) == 2 and warn[0].startswith("a: wall time 241 s > 240 s") and "jit(big)" in warn[1]
    assert budget_warnings(tests, "cpu") == []
    rep = Report("gpu")
    rep.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.1, source=SRC)
    js, md = write_report(rep.rows, tmp_path, "gpu", tests=tests)
    assert "## Budget warnings" in md.read_text() and json.loads(js.read_text())["budget_warnings"] == warn
    assert "## Per-test time and memory" in md.read_text()


_DEMO_A = """
def test_a1(report):
    report.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.01, source="demo", what="a1")

def test_a2(report):
    report.check("levi:eq9", predicted=1.0, measured=1.0, rtol=0.01, source="demo", what="a2")
"""
_DEMO_B = """
def test_b1(report):
    report.check("kramers:eyring", predicted=1.0, measured=1.0, rtol=0.01, source="demo", what="b1")
"""


def test_verify_session_shards_and_the_slices_merge(pytester, tmp_path):
    pytester.makeconftest(VERIFY_CONFTEST.read_text())
    pytester.makepyfile(test_demo_a=_DEMO_A, test_demo_b=_DEMO_B)
    out = tmp_path / "cert"
    ran = []
    for k in (1, 2):
        result = pytester.runpytest_subprocess(f"--report-dir={out}", "--shard", f"{k}/2", "-p", "no:cacheprovider")
        assert result.ret == 0
        data = json.loads((out / f"verify-cpu-shard-{k}-of-2.json").read_text())
        assert data["meta"]["shard"] == [k, 2] and data["meta"]["plan"] == {"test_demo_a.py": 1, "test_demo_b.py": 2}
        ran.append([t["test"].split("::")[1] for t in data["tests"]])
        assert all(t["wall_s"] >= 0 and t["outcome"] == "passed" and t["memory_kind"] for t in data["tests"])
    assert ran == [["test_a1", "test_a2"], ["test_b1"]]  # whole modules, by test count: 2 vs 1
    cert = merge_certificates([out])
    assert [r["what"] for r in cert["rows"]] == ["a1", "a2", "b1"]


def test_verify_session_refuses_a_bad_report_dir_before_running(pytester, tmp_path):
    pytester.makeconftest(VERIFY_CONFTEST.read_text())
    pytester.makepyfile(test_demo_a=_DEMO_A)
    bad = tmp_path / "file"
    bad.write_text("x")
    result = pytester.runpytest_subprocess(f"--report-dir={bad}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --report-dir '{bad}' exists and is not a directory"])
    assert "Traceback" not in result.stderr.str() and "passed" not in result.stdout.str()
    result = pytester.runpytest_subprocess("--shard", "3/2", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --shard must be K/N*"])


# ---------------------------------------------------------------- verify/budget.py (the GPU time budget)


def _budget_module():
    import importlib.util
    import sys

    if "_gc_budget" not in sys.modules:
        spec = importlib.util.spec_from_file_location("_gc_budget", VERIFY_CONFTEST.parent / "budget.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["_gc_budget"] = mod  # dataclasses look their module up
        spec.loader.exec_module(mod)
    return sys.modules["_gc_budget"]


def test_budget_flops_count_scan_bodies_times_their_length():
    import jax
    import jax.numpy as jnp

    budget = _budget_module()

    def prog(x, n):
        def body(c, _):
            return jnp.tanh(c @ c), None  # 2 * 64^3 FLOPs (matmul) + 64^2 (tanh) per step

        return jax.lax.scan(body, x, None, length=n)[0]

    x = jax.ShapeDtypeStruct((64, 64), jnp.float32)
    costs = {n: budget.jaxpr_cost(jax.make_jaxpr(lambda x: prog(x, n))(x).jaxpr) for n in (10, 100)}
    per_step = 2 * 64**3 + 64**2
    assert costs[10].flops == pytest.approx(10 * per_step) and costs[100].flops == pytest.approx(100 * per_step)
    assert costs[100].iterations == 100 and costs[100].unknown_loops == 0
    eig = budget.jaxpr_cost(jax.make_jaxpr(jnp.linalg.eigh)(jax.ShapeDtypeStruct((3, 50, 50), jnp.float32)).jaxpr)
    assert eig.eigh == [(50, 3)] and eig.eigh_flops == pytest.approx(3 * budget.EIGH_FLOPS_COEF * 50**3)


def test_budget_measure_and_table(tmp_path):
    import jax

    from grokclocks.verification import BudgetItem

    budget = _budget_module()

    def build(n, steps):
        def make_inputs():
            return (jax.random.normal(jax.random.PRNGKey(0), (n, 32)),)

        def program(x):
            return jax.lax.scan(lambda c, _: (c * 0.5 + 1.0, None), x, None, length=steps)[0]

        return program, make_inputs

    item = BudgetItem("test_demo", build, seeds=64, steps=1000, cpu_seeds=2, cpu_steps=10, calls=2, config="demo")
    row = budget.measure(item)
    assert row["cpu_run_s"] >= 0 and row["cpu_compile_s"] > 0 and row["scan_iterations"] == 1000
    assert row["gflop"] == pytest.approx(64 * 32 * 2 * 1000 / 1e9)  # one multiply and one add per element per step
    assert row["h100_s"] >= 2 * 1000 * budget.T_ITER
    host = budget.measure(BudgetItem("test_host", None, 1, 1, 1, 1, host_s=12.0, note="numpy"))
    assert host["h100_s"] == 12.0
    data = {"meta": {"date": "today", "machine": "test"},
            "modules": {"demo/test_x.py": {"tests": ["test_demo", "test_host", "test_other"], "items": [row, host]}}}
    js, md = budget.write_table(data, tmp_path)
    text = md.read_text()
    assert "`demo/test_x.py::test_other` | (not registered)" in text and "Estimated total" in text
    stored = json.loads((tmp_path / "gpu-budget" / "demo.json").read_text())
    assert stored["modules"]["demo/test_x.py"]["items"][1]["h100_s"] == 12.0
    other = {"meta": data["meta"], "modules": {"other/test_y.py": {"tests": ["test_y"], "items": [host]}}}
    budget.write_table(other, tmp_path, {"other"})  # another suite's file; the table shows both
    text = md.read_text()
    assert "`demo/test_x.py::test_demo`" in text and "`other/test_y.py::test_y`" in text
    with pytest.raises(ValueError, match="cpu_seeds"):
        BudgetItem("t", build, 1, 1, 0, 1)


# ------------------------------------------------------------------ certificates verified, not trusted (issue 30)


def _edit(js: Path, change) -> Path:
    data = json.loads(js.read_text())
    change(data)
    js.write_text(json.dumps(data))
    return js


def _slices(tmp_path: Path, change=None) -> list[Path]:
    """Two slices in s1/ and s2/, the first edited by `change`."""
    for k in (1, 2):
        js = _partial(tmp_path / f"s{k}", k, 2)
        if change is not None and k == 1:
            _edit(js, change)
    return [tmp_path / "s1", tmp_path / "s2"]


def test_a_failed_reject_row_counts_in_the_merged_n_failed(tmp_path):
    """A reject row whose wrong variant was NOT REJECTED is a failure: the merge counts it in n_failed (and the
    page shows it), whatever the slice's meta said."""
    rep = Report("gpu")
    rep.current_test = "verify/s1.py::test_1"
    with pytest.raises(AssertionError, match="cannot tell right from wrong"):
        rep.reject("levi:eq8", wrong=1.001, measured=1.0, rtol=0.01, source=SRC, what="factor 1.001")
    write_report(rep.rows, tmp_path / "s1", "gpu", 1.0, tests=[{"test": rep.current_test, "wall_s": 1.0}],
                 meta={"commit": "abc123", "shard": [1, 2], "plan": {"s.py": 1}}, stem="verify-gpu-shard-1-of-2")
    _partial(tmp_path / "s2", 2, 2)
    cert = merge_certificates([tmp_path / "s1", tmp_path / "s2"])
    assert [r["verdict"] for r in cert["rows"]] == ["NOT REJECTED", "pass"]
    assert cert["meta"]["n_failed"] == 1 and cert["meta"]["n_rows"] == 2
    _, md = write_certificate(cert, tmp_path / "out")
    assert "2 rows, 1 failed" in md.read_text() and "| **NOT REJECTED** |" in md.read_text()


def _agree(**fields):
    return lambda c: c["rows"][0].update(fields)


@pytest.mark.parametrize(("change", "message"), [
    # an agree row with error 10 > tolerance 0.01 (its numbers consistent) stated passed: was printed "pass"
    (_agree(measured=11.0, error=10.0, tolerance=0.01, passed=True, verdict="pass"),
     r"rows\[0\] \('levi:eq1'\) states passed=true, but its error 10 > its tolerance 0\.01: an agree row with that "
     r"error fails"),
    # passed false, verdict pass: was counted passed
    (_agree(passed=False, verdict="pass"), r"rows\[0\] \('levi:eq1'\) states passed=false, but its error 0 <= its "
                                           r"tolerance 0\.01: an agree row with that error passes"),
    (_agree(verdict="FAIL"), r"rows\[0\] \('levi:eq1'\)\.verdict is 'FAIL', but a agree row with passed=true is 'pass'"),
    (_agree(error=0.001), r"rows\[0\] \('levi:eq1'\)\.error is 0\.001, but the rel error of its prediction 1\.0 and "
                          r"measurement 1\.0 is 0\.0"),
    (_agree(kind="reject"), r"rows\[0\] \('levi:eq1'\) states passed=true, but its error 0 <= its tolerance 0\.01: a "
                            r"reject row with that error fails"),
    (_agree(kind="report"), r"rows\[0\] \('levi:eq1'\) is a report row"),
    (_agree(kind="exact"), r"rows\[0\] \('levi:eq1'\)\.kind must be one of agree, reject, report"),
    (_agree(tolerance=0.0), r"rows\[0\] \('levi:eq1'\)\.tolerance must be finite and > 0"),
    (_agree(metric="sq"), r"rows\[0\] \('levi:eq1'\)\.metric must be one of rel, abs, log"),
    (lambda c: c["meta"].update(n_failed=0, n_rows=5), r"meta\.n_rows is 5, but the rows give 1"),
])
def test_merge_recomputes_every_verdict(tmp_path, change, message):
    with pytest.raises(CertificateError, match=r"^.*s1/verify-gpu-shard-1-of-2\.json: " + message) as info:
        merge_certificates(_slices(tmp_path, change))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("change", "message"), [
    (lambda c: c.update(rows={"a": 1}), r"rows must be a list of rows \(got \{'a': 1\}\)"),
    (lambda c: c["rows"].__setitem__(0, "x"), r"rows\[0\] must be a dict of the row's fields"),
    (lambda c: c["rows"][0].pop("verdict"), r"rows\[0\] lacks the field\(s\) verdict"),
    (lambda c: c["rows"][0].update(extra=1), r"rows\[0\] has unknown field\(s\) \['extra'\]"),
    (lambda c: c["rows"][0].update(error="big"), r"rows\[0\] \('levi:eq1'\)\.error must be a number \(got 'big'\)"),
    (lambda c: c["rows"][0].update(passed="yes"), r"rows\[0\] \('levi:eq1'\)\.passed must be true or false"),
    (lambda c: c["rows"][0].update(what=3), r"rows\[0\]\.what must be text \(got 3\)"),
    (lambda c: c["rows"][0].update(details=[1]), r"rows\[0\] \('levi:eq1'\)\.details must be a dict \(got \[1\]\)"),
    (lambda c: c["meta"].update(shard="ab"), r"meta\.shard must be \[K, N\] with integers 1 <= K <= N \(got 'ab'\)"),
    (lambda c: c["meta"].update(shard=[3, 2]), r"meta\.shard must be \[K, N\]"),
    (lambda c: c["meta"].update(duration_s="x"), r"meta\.duration_s must be a number >= 0 \(got 'x'\)"),
    (lambda c: c["meta"].update(commit=["<script>"]), r"meta\.commit must be text"),
    (lambda c: c["meta"].update(environment={"jax_devices": 3}), r"meta\.environment\.jax_devices must be a list of "
                                                                 r"text \(got 3\)"),
    (lambda c: c["meta"].update(scale="tpu"), r"meta\.scale must be cpu or gpu \(got 'tpu'\)"),
    (lambda c: c["tests"].__setitem__(0, 5), r"tests are not per-test records: tests\[0\] must be a dict"),
    (lambda c: c.update(tests=None), r"tests are not per-test records"),
    (lambda c: c["tests"][0].update(compile_s="1"), r"tests\[0\]\.compile_s must be a number >= 0 \(got '1'\)"),
    (lambda c: c.update(budget_warnings=[3]), r"budget_warnings must be a list of text"),
    (lambda c: c.update(meta=[1]), r"meta must be a dict"),
])
def test_a_malformed_slice_is_one_line_naming_the_file_and_the_field(tmp_path, change, message):
    """Five of these gave TypeError tracebacks and one `error: verdict` (a bare KeyError)."""
    with pytest.raises(CertificateError, match=r"^.*s1/verify-gpu-shard-1-of-2\.json: " + message) as info:
        merge_certificates(_slices(tmp_path, change))
    assert "\n" not in str(info.value) and len(str(info.value)) < 400


def test_write_certificate_refuses_a_certificate_its_numbers_contradict(tmp_path):
    rep = Report()
    rep.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.1, source=SRC)
    from grokclocks.verification import certificate

    cert = certificate(rep.rows, "cpu")
    cert["rows"][0].update(measured=2.0)  # the error no longer follows from the numbers
    with pytest.raises(CertificateError, match=r"^cert: rows\[0\] \('levi:eq8'\)\.error is 0\.0, but the rel error"):
        write_certificate(cert, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_the_committed_certificates_are_read_checked():
    """Every row of the committed certificates (CPU tier and GPU suites) has the error, passed flag and verdict
    its numbers give (788 agree/reject rows: their errors recomputed bit for bit)."""
    from grokclocks.verification import read_certificate

    files = [ROOT / "docs" / "verification" / "verify-cpu.json", *sorted((ROOT / "docs" / "verification" / "gpu")
                                                                       .glob("*.json"))]
    n = 0
    for f in files:
        cert = read_certificate(f)
        assert cert["meta"]["n_rows"] == len(cert["rows"])
        n += len(cert["rows"])
    assert n >= 477


def test_a_certificate_page_escapes_every_text(tmp_path):
    """Row text, commit, environment and test names of a certificate reach its Markdown page as text: a
    `<script>` in a row or the commit, a newline that would start a heading, a `|` that would add a cell."""
    from grokclocks.verification import certificate_markdown, read_certificate

    bad = "<script>alert(1)</script>\n\n# ALL 477 CHECKS PASSED\n|x|"

    def change(c):
        c["rows"][0].update(what=bad, source=bad)
        c["meta"].update(commit=bad, date=bad)
        c["meta"]["environment"].update(machine=bad, python=bad, jax_devices=[bad])
        c["tests"][0].update(test=bad, outcome=bad)

    js = _edit(_partial(tmp_path / "s1", 1, 1), change)
    page = certificate_markdown(read_certificate(js))
    assert "<script>" not in page and "\n# ALL" not in page and "|x|" not in page
    from grokclocks._escape import markdown_text

    assert markdown_text(bad) == "&lt;script>alert(1)&lt;/script>&#92;n&#92;n\\# ALL 477 CHECKS PASSED&#92;n&#124;x&#124;"
    assert page.count(markdown_text(bad)) >= 7
    table = [line for line in page.splitlines() if line.startswith("| levi:")]
    assert len(table) == 1 and table[0].count(" | ") == 6  # seven cells, as the header


def test_a_certificate_json_is_strict_json_when_a_text_holds_an_undecodable_byte(tmp_path):
    """A row text or test name holding a lone surrogate (a file name's byte 0xff, read with surrogateescape) is
    written as the escape `\\udcff` (six characters), so the certificate is ASCII JSON a strict parser reads;
    before, the file held the lone surrogate escape, which serde_json refuses and jq turns into U+FFFD."""
    from grokclocks.verification import read_certificate

    rep = Report(scale="cpu")
    rep.current_test = "verify/s.py::test_a[seed\udcff]"
    rep.check("levi:eq8", predicted=1.0, measured=1.0, rtol=0.01, source="run seed\udcff", what="x\udcfe")
    js, md = write_report(rep.rows, tmp_path, "cpu", 1.0, tests=[{"test": rep.current_test, "outcome": "passed"}])
    text = js.read_text(encoding="ascii")
    assert "\\udcff" not in text.replace("\\\\udcff", "") and "\\udcfe" not in text.replace("\\\\udcfe", "")
    cert = read_certificate(js)
    assert cert["rows"][0]["source"] == "run seed\\udcff" and cert["rows"][0]["what"] == "x\\udcfe"
    assert cert["tests"][0]["test"] == "verify/s.py::test_a[seed\\udcff]"
    json.dumps(cert, ensure_ascii=False).encode("utf-8")  # no lone surrogate left to encode
