"""A certificate checked, not trusted: every field typed, every row's verdict recomputed from its numbers.

A certificate read from a file (a slice of `merge_certificates`, a suite certificate, the certificate the
documentation shows) or handed to `write_certificate` is a claim about numbers.  `check_certificate` accepts
it only when the claim follows from the numbers it holds:

* every row field has its type (text, a float, a bool, a dict of details) and `kind`, `metric` and `scale`
  one of their values;
* an "agree" or "reject" row's error is the error of its prediction and measurement in its metric
  (`grokclocks.verification._errors`, the function that computed it), its tolerance is finite and > 0,
  and its `passed` and `verdict` are those of error ≤ tolerance ("agree": "pass" / "FAIL") or error >
  tolerance ("reject": "rejected" / "NOT REJECTED"); a "report" row has metric "none" and verdict
  "reported";
* the counts in its meta (`n_rows`, `n_failed`, `n_reported`) are those of its rows;
* the fields the tables and pages print (dates, commit, environment, slices, per-test records) have their
  types, so that rendering cannot fail half-way.

Anything else is a one-line `CertificateError` naming the file (or the argument) and the field, e.g.
`s1/verify-gpu-shard-1-of-2.json: rows[0] (levi:eq8): stated passed=true and verdict 'pass', but its error
10 > its tolerance 0.01: an agree row with that error fails`.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

from .. import _validate as V
from ._budget import _check_tests
from ._read import CertificateError, read_json
from ._report import Row, _errors

KINDS = ("agree", "reject", "report")
METRICS = ("rel", "abs", "log")
_ROW_FIELDS = {f.name for f in dataclasses.fields(Row)} | {"verdict"}
_ROW_TEXT = ("spec_id", "what", "source", "test")
_ROW_NUMBERS = ("predicted", "measured", "error", "tolerance")
_REQUIRED = ("spec_id", "what", "kind", "predicted", "measured", "error", "tolerance", "metric", "source", "passed",
             "verdict")
_SUITE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
MAX_SLICES = 10**4
"""The most slices of one verify run (`shard_plan`'s limit): a certificate's `meta.shard` [K, N] has N at most this,
so that a merge's bookkeeping of the slices is bounded (a slice claiming N = 10⁹ made the merge list 10⁹ missing
slices: a `MemoryError`)."""


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _fail(name: str, field: str, message: str) -> CertificateError:
    return CertificateError(f"{name}: {field} {message}")


def check_row(row: Any, name: str, i: int) -> dict[str, Any]:
    """Row `i` of the certificate `name`, its fields typed and its verdict recomputed; the row (floats as float).

    Raises
    ------
    CertificateError
        A missing, unknown or mistyped field, or a stated error, `passed` or `verdict` that does not follow
        from the row's prediction, measurement, metric and tolerance (one line naming `name` and the field).
    """
    where = f"rows[{i}]"
    if not isinstance(row, dict):
        raise _fail(name, where, f"must be a dict of the row's fields (got {V.show(row)})")
    missing = [k for k in _REQUIRED if k not in row]
    if missing:
        raise _fail(name, where, f"lacks the field(s) {', '.join(missing)}")
    unknown = sorted(str(k) for k in row if k not in _ROW_FIELDS)
    if unknown:
        raise _fail(name, where, f"has unknown field(s) {V.show(unknown)} (a row holds {', '.join(sorted(_ROW_FIELDS))})")
    for k in _ROW_TEXT:
        if k in row and not isinstance(row[k], str):
            raise _fail(name, f"{where}.{k}", f"must be text (got {V.show(row[k])})")
    where = f"{where} ({V.show(row['spec_id'], 40)})"
    for k in _ROW_NUMBERS:
        if not _is_number(row[k]):
            raise _fail(name, f"{where}.{k}", f"must be a number (got {V.show(row[k])})")
    if row["kind"] not in KINDS:
        raise _fail(name, f"{where}.kind", f"must be one of {', '.join(KINDS)} (got {V.show(row['kind'])})")
    if not isinstance(row["passed"], bool):
        raise _fail(name, f"{where}.passed", f"must be true or false (got {V.show(row['passed'])})")
    if not isinstance(row["verdict"], str):
        raise _fail(name, f"{where}.verdict", f"must be text (got {V.show(row['verdict'])})")
    if "scale" in row and row["scale"] not in ("cpu", "gpu"):
        raise _fail(name, f"{where}.scale", f"must be cpu or gpu (got {V.show(row['scale'])})")
    if "details" in row and not isinstance(row["details"], dict):
        raise _fail(name, f"{where}.details", f"must be a dict (got {V.show(row['details'])})")
    out = {k: (float(v) if k in _ROW_NUMBERS else v) for k, v in row.items()}
    kind, metric, err, tol = out["kind"], out["metric"], out["error"], out["tolerance"]
    if kind == "report":
        if metric != "none" or not out["passed"] or not (math.isnan(err) and math.isnan(tol)):
            raise _fail(name, where, "is a report row (a measurement without a prediction), which has metric 'none', "
                                     f"no error or tolerance (NaN) and passed=true (got metric {V.show(metric)}, error "
                                     f"{err!r}, tolerance {tol!r}, passed={out['passed']})")
    else:
        if metric not in METRICS:
            raise _fail(name, f"{where}.metric", f"must be one of {', '.join(METRICS)} for {'an' if kind == 'agree' else 'a'} "
                                                 f"{kind} row (got {V.show(metric)})")
        if not (math.isfinite(tol) and tol > 0):
            raise _fail(name, f"{where}.tolerance", f"must be finite and > 0 (got {tol!r})")
        recomputed = float(_errors(out["predicted"], out["measured"], metric)[2])
        if not (recomputed == err or math.isclose(recomputed, err, rel_tol=1e-12)):
            raise _fail(name, f"{where}.error", f"is {err!r}, but the {metric} error of its prediction "
                                                f"{out['predicted']!r} and measurement {out['measured']!r} is "
                                                f"{recomputed!r}")
        passed = err <= tol if kind == "agree" else err > tol
        if out["passed"] != passed:
            rel = "<=" if err <= tol else ">"
            raise _fail(name, where, f"states passed={str(out['passed']).lower()}, but its error {err:.6g} {rel} its "
                                     f"tolerance {tol:.6g}: {'an' if kind == 'agree' else 'a'} {kind} row with that "
                                     f"error {'passes' if passed else 'fails'}")
    verdict = Row(**{k: v for k, v in out.items() if k != "verdict"}).verdict
    if out["verdict"] != verdict:
        raise _fail(name, f"{where}.verdict", f"is {V.show(out['verdict'])}, but a {kind} row with passed="
                                              f"{str(out['passed']).lower()} is {verdict!r}")
    return out


def _optional(record: dict, key: str, test: Any, what: str, name: str, where: str = "meta") -> None:
    """`record[key]` (the field `where.key` of the certificate `name`), when given, passes `test`."""
    if record.get(key) is not None and not test(record[key]):
        raise _fail(name, f"{where}.{key}", f"must be {what} (got {V.show(record[key])})")


def _shard(x: Any) -> bool:
    return (isinstance(x, list) and len(x) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in x)
            and 1 <= x[0] <= x[1])


def _text_list(x: Any) -> bool:
    return isinstance(x, list) and all(isinstance(v, str) for v in x)


def _nonneg(x: Any) -> bool:
    return _is_number(x) and math.isfinite(x) and x >= 0


def _check_meta(meta: Any, name: str) -> None:
    if not isinstance(meta, dict):
        raise _fail(name, "meta", f"must be a dict (got {V.show(meta)})")
    if meta.get("scale") not in ("cpu", "gpu"):
        raise _fail(name, "meta.scale", f"must be cpu or gpu (got {V.show(meta.get('scale'))})")
    for key in ("commit", "date", "grokclocks", "device", "partial", "commit_note"):
        _optional(meta, key, lambda x: isinstance(x, str), "text", name)
    for key in ("duration_s", "startup_s"):
        _optional(meta, key, _nonneg, "a number >= 0", name)
    for key in ("dirty", "complete"):
        _optional(meta, key, lambda x: isinstance(x, bool), "true or false", name)
    for key in ("not_run", "not_run_reason", "pytest_args"):
        _optional(meta, key, _text_list, "a list of text", name)
    _optional(meta, "shard", _shard, "[K, N] with integers 1 <= K <= N", name)
    _optional(meta, "shard", lambda x: x[1] <= MAX_SLICES, f"of a run of at most {MAX_SLICES} slices", name)
    _optional(meta, "plan", lambda x: isinstance(x, dict), "a dict", name)
    _optional(meta, "suite", lambda x: isinstance(x, str) and _SUITE_NAME.match(x), "a suite name (letters, digits, _)",
              name)
    _optional(meta, "fingerprint", lambda x: isinstance(x, dict) and isinstance(x.get("digest", ""), str)
              and isinstance(x.get("files", {}), dict), "a dict with a digest (text) and files", name)
    env = meta.get("environment")
    if env is not None:
        if not isinstance(env, dict):
            raise _fail(name, "meta.environment", f"must be a dict (got {V.show(env)})")
        for key in ("python", "machine", "processor", "cpu_model", "numpy", "scipy", "jax"):
            _optional(env, key, lambda x: isinstance(x, str), "text", name, "meta.environment")
        _optional(env, "cpu_count", lambda x: isinstance(x, int) and not isinstance(x, bool), "an integer", name,
                  "meta.environment")
        _optional(env, "jax_devices", _text_list, "a list of text", name, "meta.environment")
    merged = meta.get("merged_from")
    if merged is not None:
        if not isinstance(merged, list):
            raise _fail(name, "meta.merged_from", f"must be a list (got {V.show(merged)})")
        for j, s in enumerate(merged):
            ok = (isinstance(s, dict) and _shard(s.get("shard")) and isinstance(s.get("n_tests"), int)
                  and isinstance(s.get("n_rows"), int) and _nonneg(s.get("duration_s")))
            if not ok:
                raise _fail(name, f"meta.merged_from[{j}]", "must be a dict with shard [K, N], n_tests, n_rows and "
                                                            f"duration_s (got {V.show(s)})")


def _check_test_records(tests: Any, name: str) -> list[dict[str, Any]]:
    try:
        items = _check_tests(tests)
    except V.DomainError as exc:
        raise _fail(name, "tests", f"are not per-test records: {exc}") from None
    for i, t in enumerate(items):
        where = f"tests[{i}]"
        for key in ("compile_s", "compile_max_s", "peak_bytes", "wall_s"):
            _optional(t, key, _nonneg, "a number >= 0", name, where)
        for key in ("outcome", "memory_kind", "compile_max_fun"):
            _optional(t, key, lambda x: isinstance(x, str), "text", name, where)
        _optional(t, "raised_peak", lambda x: isinstance(x, bool), "true or false", name, where)
        _optional(t, "shard", lambda x: isinstance(x, (str, int)) and not isinstance(x, bool), "text or an integer",
                  name, where)
    return items


def check_certificate(cert: Any, name: str) -> dict[str, Any]:
    """The certificate `cert` (from the file or argument `name`), checked; its rows with floats as float.

    Parameters
    ----------
    cert : object
        The decoded JSON of a certificate: {"meta", "rows", "tests", "budget_warnings"}.
    name : str
        The file or argument it came from, first in every message.

    Returns
    -------
    dict
        The certificate: the same meta, tests and budget warnings, and its rows as `check_row` returns them.

    Raises
    ------
    CertificateError
        A field missing or of the wrong type, a row whose verdict does not follow from its numbers
        (`check_row`), or counts in meta that are not those of the rows; one line naming `name` and the field.
    """
    if not isinstance(cert, dict) or "meta" not in cert or "rows" not in cert:
        raise CertificateError(f"{name}: not a verification certificate (a dict with meta and rows; got "
                               f"{V.show(cert)})")
    _check_meta(cert["meta"], name)
    if not isinstance(cert["rows"], list):
        raise _fail(name, "rows", f"must be a list of rows (got {V.show(cert['rows'])})")
    rows = [check_row(r, name, i) for i, r in enumerate(cert["rows"])]
    tests = _check_test_records(cert.get("tests", []), name)
    warn = cert.get("budget_warnings", [])
    if not _text_list(warn):
        raise _fail(name, "budget_warnings", f"must be a list of text (got {V.show(warn)})")
    counts = {"n_rows": len(rows), "n_failed": sum(r["verdict"] in ("FAIL", "NOT REJECTED") for r in rows),
              "n_reported": sum(r["kind"] == "report" for r in rows)}
    meta = cert["meta"]
    for key, n in counts.items():
        if key in meta and not (isinstance(meta[key], int) and not isinstance(meta[key], bool) and meta[key] == n):
            raise _fail(name, f"meta.{key}", f"is {V.show(meta[key])}, but the rows give {n}")
    return {**cert, "rows": rows, "tests": tests, "budget_warnings": warn}


def read_certificate(path: Any) -> dict[str, Any]:
    """A verification certificate read from its JSON file and checked: not trusted, verified.

    Parameters
    ----------
    path : str or os.PathLike
        The certificate file, e.g. .verify/verify-cpu.json or docs/verification/gpu/levi.json.

    Returns
    -------
    dict
        The certificate ({"meta", "rows", "tests", "budget_warnings"}), every row's verdict recomputed from
        its prediction, measurement, metric and tolerance and found to be the one stated.

    Raises
    ------
    DomainError
        If `path` is not a path naming a file.
    CertificateError
        If the file is refused (missing, not a regular file, over 64 MiB, not UTF-8, not JSON, nested deeper
        than 64 levels), a field is missing or of the wrong type, a row's stated error, `passed` or verdict
        does not follow from its numbers, or the counts of its meta are not those of its rows; one line
        naming the file and the field.
    """
    p = V.file_path(path, "path")
    return check_certificate(read_json(Path(p)), str(p))
