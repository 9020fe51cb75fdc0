"""The verification report: verdicts, tolerances with sources, and the written certificate."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from grokclocks.verification import Report, Row, format_table, write_report

pytest_plugins = ["pytester"]

VERIFY_CONFTEST = Path(__file__).resolve().parents[1] / "verify" / "conftest.py"
SRC = "8 seeds at d=500, spec 7.2"


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
    assert "loss \\| gen" in table[2]  # pipes inside cells are escaped
    assert "| levi:tstar |" in table[4] and "| FAIL |" in table[4]


def test_format_table_plain_text():
    text = format_table(_rows())
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["spec", "ID"] and set(lines[1]) <= {"-", " "}
    assert len(lines) == 2 + 3
    assert "NOT REJECTED" not in text and "rejected" in lines[3] and "FAIL" in lines[4]


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
