"""The verification report: one row per theorem-vs-simulation check.

``pytest verify`` collects rows through :class:`Report` (the ``report`` fixture) and ends with
one table — spec ID, prediction, measurement, error, tolerance, verdict — written as JSON and
Markdown (a verification certificate).

Two kinds of row:

* :meth:`Report.check` — the prediction must agree with the measurement within a tolerance whose
  measured source is stated;
* :meth:`Report.reject` — a plausible *wrong* variant (a factor 2 in the rate, the paper's
  uncorrected form) must be *outside* the same tolerance, which shows the check can fail.

Both record the row and raise ``AssertionError`` when the verdict is negative.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import platform
from pathlib import Path
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _validate as V
from .runfile import _atomic_write

__all__ = ["Row", "Report", "format_table", "write_report", "certificate", "write_certificate", "merge_certificates",
           "partial_certificates", "shard_plan", "parse_shard", "budget_warnings", "CertificateError", "BudgetItem",
           "GPU_TEST_LIMIT_S", "GPU_COMPILE_LIMIT_S"]


@dataclasses.dataclass
class Row:
    """One line of the verification table: a prediction, a measurement, the error and its tolerance.

    ``kind="agree"`` passes when the error is within the tolerance; ``kind="reject"`` (a wrong
    variant) passes when it is outside; ``kind="report"`` is a measurement with no prediction to test
    (the paper makes none): it is shown, never counted as a pass, and cannot fail.  ``source`` says
    where the tolerance (or, for a report row, the reason there is no prediction) comes from.
    """

    spec_id: str
    what: str
    kind: str  # "agree" | "reject" | "report"
    predicted: float
    measured: float
    error: float
    tolerance: float
    metric: str  # "rel" | "abs" | "log"
    source: str
    passed: bool
    test: str = ""
    scale: str = "cpu"
    details: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def verdict(self) -> str:
        if self.kind == "reject":
            return "rejected" if self.passed else "NOT REJECTED"
        if self.kind == "report":
            return "reported"
        return "pass" if self.passed else "FAIL"


def _errors(predicted: Any, measured: Any, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p = np.asarray(predicted, dtype=np.float64)
    m = np.asarray(measured, dtype=np.float64)
    p, m = np.broadcast_arrays(p, m)
    with np.errstate(divide="ignore", invalid="ignore"):
        if metric == "rel":
            e = np.abs(m - p) / np.abs(p)
        elif metric == "abs":
            e = np.abs(m - p)
        elif metric == "log":
            e = np.abs(np.log(m / p))
        else:
            raise ValueError(f"metric must be 'rel', 'abs' or 'log' (got {metric!r})")
    e = np.where(np.isnan(e) & (p == m), 0.0, e)  # equal infinities / zeros agree
    e = np.where(np.isnan(e), np.inf, e)
    return p, m, e


class Report:
    """Collects verification rows for one pytest session."""

    def __init__(self, scale: str = "cpu") -> None:
        self.scale = scale
        self.rows: list[Row] = []
        self.current_test = ""

    def _row(self, spec_id: str, kind: str, predicted: Any, measured: Any, tol: float, metric: str,
             source: str, what: str, details: dict[str, Any] | None) -> Row:
        if not source:
            raise ValueError("every tolerance needs its measured source (source=...)")
        p, m, e = _errors(predicted, measured, metric)
        k = int(np.argmax(e)) if e.size else 0
        err = float(e.flat[k]) if e.size else 0.0
        passed = bool(np.all(e <= tol)) if kind == "agree" else bool(np.all(e > tol))
        if kind == "reject":
            k = int(np.argmin(e))
            err = float(e.flat[k])
        row = Row(spec_id, what, kind, float(p.flat[k]), float(m.flat[k]), err, float(tol), metric,
                  source, passed, self.current_test, self.scale, dict(details or {}))
        if e.size > 1:
            row.details.setdefault("n_compared", int(e.size))
        self.rows.append(row)
        return row

    def check(self, spec_id: str, *, predicted: Any, measured: Any, rtol: float | None = None,
              atol: float | None = None, logtol: float | None = None, source: str, what: str = "",
              details: dict[str, Any] | None = None) -> Row:
        """Record and assert ``|measured - predicted| <= tolerance`` (elementwise; the row shows the worst).

        Exactly one of ``rtol`` (relative), ``atol`` (absolute) or ``logtol`` (``|log(m/p)|``).
        """
        metric, tol = _one_tol(rtol, atol, logtol)
        row = self._row(spec_id, "agree", predicted, measured, tol, metric, source, what, details)
        assert row.passed, (f"{spec_id} {what}: prediction {row.predicted:.6g} vs measurement "
                            f"{row.measured:.6g}, {metric} error {row.error:.3g} > tolerance {tol:.3g} ({source})")
        return row

    def reject(self, spec_id: str, *, wrong: Any, measured: Any, rtol: float | None = None,
               atol: float | None = None, logtol: float | None = None, source: str, what: str = "",
               details: dict[str, Any] | None = None) -> Row:
        """Record and assert that a wrong variant lies *outside* the tolerance of the measurement."""
        metric, tol = _one_tol(rtol, atol, logtol)
        row = self._row(spec_id, "reject", wrong, measured, tol, metric, source, what, details)
        assert row.passed, (f"{spec_id} {what}: the wrong variant {row.predicted:.6g} is within "
                            f"{metric} {row.error:.3g} <= {tol:.3g} of the measurement {row.measured:.6g}: "
                            "the check cannot tell right from wrong")
        return row


    def observe(self, spec_id: str, *, measured: Any, source: str, what: str = "",
                details: dict[str, Any] | None = None) -> Row:
        """Record a measurement that has no prediction to test (a ``report`` row; it cannot fail).

        ``source`` must say why there is no prediction.  Prediction, error and tolerance are NaN in
        the table, and the verdict is ``reported`` -- never ``pass``.
        """
        if not source:
            raise ValueError("a report row needs its reason (source=...)")
        m = np.asarray(measured, dtype=np.float64)
        row = Row(spec_id, what, "report", math.nan, float(m.flat[0]) if m.size == 1 else math.nan, math.nan,
                  math.nan, "none", source, True, self.current_test, self.scale, dict(details or {}))
        if m.size > 1:
            row.details.setdefault("measured", m.tolist())
        self.rows.append(row)
        return row


def _one_tol(rtol: float | None, atol: float | None, logtol: float | None) -> tuple[str, float]:
    given = [(m, t) for m, t in (("rel", rtol), ("abs", atol), ("log", logtol)) if t is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of rtol, atol, logtol")
    metric, tol = given[0]
    if not (tol > 0 and math.isfinite(tol)):
        raise ValueError(f"tolerance must be finite and > 0 (got {tol!r})")
    return metric, float(tol)


def _fmt(x: float) -> str:
    if x == 0:
        return "0"
    if not math.isfinite(x):
        return str(x)
    return f"{x:.4g}"


def _rows(rows: Any) -> list[Row]:
    items = V.sequence(rows, "rows", min_len=0, what="a list of Row records")
    for r in items:
        if not isinstance(r, Row):
            raise V.DomainError(f"rows must hold Row records (got {V.show(r)})")
    return items


def format_table(rows: list[Row], *, markdown: bool = False) -> str:
    """The theorem table as plain text (terminal) or Markdown."""
    rows = _rows(rows)
    markdown = V.flag(markdown, "markdown")
    head = ["spec ID", "check", "kind", "prediction", "measurement", "error", "tolerance", "verdict", "tolerance source"]
    body = [[r.spec_id, r.what, r.kind, _fmt(r.predicted), _fmt(r.measured), f"{_fmt(r.error)} ({r.metric})",
             _fmt(r.tolerance), r.verdict, r.source] for r in rows]
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in b) + " |" for b in body]
        return "\n".join(out)
    short = [b[:8] for b in body]
    widths = [max(len(h), *(len(b[i]) for b in short)) if short else len(h) for i, h in enumerate(head[:8])]
    widths[1] = min(widths[1], 48)
    line = lambda cells: "  ".join(c[: widths[i]].ljust(widths[i]) for i, c in enumerate(cells))  # noqa: E731
    return "\n".join([line(head[:8]), line(["-" * w for w in widths])] + [line(b) for b in short])


def _cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; ``platform.processor()`` where there is none): the machine
    a certificate, a benchmark or the accuracy page names."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _environment() -> dict[str, Any]:
    env: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(),
                           "processor": platform.processor() or platform.machine(), "cpu_model": _cpu_model(),
                           "numpy": np.__version__}
    try:
        import os

        env["cpu_count"] = os.cpu_count()
        import scipy

        env["scipy"] = scipy.__version__
    except ImportError:  # pragma: no cover
        pass
    import sys

    if "jax" in sys.modules:  # only report JAX if a check used it
        jax = sys.modules["jax"]
        env["jax"] = jax.__version__
        try:
            env["jax_devices"] = [str(d.device_kind) for d in jax.devices()]
        except Exception:  # pragma: no cover
            pass
    return env


GPU_TEST_LIMIT_S = 180.0
GPU_COMPILE_LIMIT_S = 60.0
_LEGEND = ("`agree` rows: prediction vs measurement within the stated tolerance. `reject` rows: a plausible wrong "
           "variant (named in the check) must lie outside the tolerance, which shows the check can fail. "
           "`report` rows: a measurement with no prediction to test (reason in the last column); they are not "
           "counted as passes.\n\n")


class CertificateError(V.DomainError):
    """Partial certificates that cannot be merged (mixed scales or commits, missing or repeated slices).

    A :class:`~grokclocks.DomainError` (so a ``ValueError``)."""


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)`` with ``1 <= K <= N``; a :class:`~grokclocks.DomainError` (a ``ValueError``) naming
    the expected form otherwise."""
    try:
        k_s, n_s = str(text).split("/")
        k, n = int(k_s), int(n_s)
    except ValueError:
        raise V.DomainError(f"--shard must be K/N with integers 1 <= K <= N, e.g. 2/3 (got {text!r})") from None
    if not 1 <= k <= n:
        raise V.DomainError(f"--shard must be K/N with integers 1 <= K <= N, e.g. 2/3 (got {text!r})")
    return k, n


def shard_plan(weights: dict[str, float], n: int) -> dict[str, int]:
    """Assign groups of tests to ``n`` slices (1-based), balancing the summed weights; deterministic.

    Longest-processing-time greedy: groups by decreasing weight (ties by a stable hash of the name, then
    the name) each go to the least loaded slice (ties: the lowest index).  The same weights give the same
    plan in every process, so ``--shard 1/n`` ... ``--shard n/n`` together run every group exactly once.
    ``weights``: test group (str) -> weight >= 0; ``n``: an integer in [1, 10**4].
    """
    import hashlib

    n = V.integer_at_least(n, "n", 1, maximum=10**4)  # slices of one verify run (each group scans all n)
    if not isinstance(weights, dict) or not all(isinstance(g, str) for g in weights):
        raise V.DomainError(f"weights must be a dict test group (str) -> weight (got {V.show(weights)})")
    if weights:
        V.nonnegative(list(weights.values()), "weights")

    def key(g: str) -> tuple:
        return (-float(weights[g]), hashlib.sha1(g.encode()).hexdigest(), g)

    load = [0.0] * n
    plan: dict[str, int] = {}
    for g in sorted(weights, key=key):
        i = min(range(n), key=lambda j: (load[j], j))
        plan[g] = i + 1
        load[i] += float(weights[g])
    return plan


def budget_warnings(tests: list[dict[str, Any]], scale: str) -> list[str]:
    """At GPU scale: tests over :data:`GPU_TEST_LIMIT_S` of wall time or with one XLA compile over
    :data:`GPU_COMPILE_LIMIT_S` (the tier's budget: 20 minutes on one H100, no test over 3 minutes)."""
    scale = V.choice(scale, "scale", ("cpu", "gpu"))
    tests = _check_tests(tests)
    if scale != "gpu":
        return []
    out = []
    for t in tests:
        if (t.get("wall_s") or 0.0) > GPU_TEST_LIMIT_S:
            out.append(f"{t['test']}: wall time {t['wall_s']:.0f} s > {GPU_TEST_LIMIT_S:.0f} s")
        if (t.get("compile_max_s") or 0.0) > GPU_COMPILE_LIMIT_S:
            out.append(f"{t['test']}: one XLA compile took {t['compile_max_s']:.0f} s > {GPU_COMPILE_LIMIT_S:.0f} s "
                       f"({t.get('compile_max_fun', '?')})")
    return out


def _check_tests(tests: Any) -> list[dict[str, Any]]:
    """The per-test records of a certificate: a list of dicts, each with a ``"test"`` name and, where
    present, ``wall_s`` / ``compile_max_s`` None or a finite number >= 0."""
    items = V.sequence(tests, "tests", min_len=0, what="a list of per-test dicts")
    for i, t in enumerate(items):
        if not isinstance(t, dict) or not isinstance(t.get("test"), str):
            raise V.DomainError(f"tests[{i}] must be a dict with a 'test' name (got {V.show(t)})")
        for key in ("wall_s", "compile_max_s"):
            if t.get(key) is not None:
                V.nonnegative(t[key], f"tests[{i}][{key!r}]", scalar=True)
    return items


def _row_dict(r: Row) -> dict[str, Any]:
    return dataclasses.asdict(r) | {"verdict": r.verdict}


def _row_from_dict(d: dict[str, Any]) -> Row:
    names = {f.name for f in dataclasses.fields(Row)}
    return Row(**{k: v for k, v in d.items() if k in names})


def certificate(rows: list[Row], scale: str, duration_s: float | None = None, *,
                tests: list[dict[str, Any]] | None = None, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The certificate as a JSON-ready dict: ``meta``, ``rows``, ``tests`` (per-test wall time, compile time,
    memory, outcome) and ``budget_warnings``."""
    from . import __version__

    rows = _rows(rows)
    scale = V.choice(scale, "scale", ("cpu", "gpu"))  # part of the file names: nothing else may reach the path
    if duration_s is not None:
        duration_s = V.nonnegative(duration_s, "duration_s", scalar=True)
    tests = [] if tests is None else _check_tests(tests)
    if meta is not None and not isinstance(meta, dict):
        raise V.DomainError(f"meta must be None or a dict (got {V.show(meta)})")
    m = {"grokclocks": __version__, "scale": scale,
         "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "environment": _environment(),
         "duration_s": duration_s, "n_rows": len(rows), "n_failed": sum(not r.passed for r in rows),
         "n_reported": sum(r.kind == "report" for r in rows)}
    m.update(meta or {})
    return {"meta": m, "rows": [_row_dict(r) for r in rows], "tests": tests,
            "budget_warnings": budget_warnings(tests, scale)}


def _fmt_bytes(b: float | None) -> str:
    if b is None:
        return "-"
    return f"{b / 2**30:.2f} GiB" if b >= 2**30 else f"{b / 2**20:.0f} MiB"


def _tests_table(tests: list[dict[str, Any]]) -> str:
    head = "| test | outcome | wall s | XLA compile s (total / longest) | peak memory (process, so far) | slice |"
    out = [head, "|---|---|---|---|---|---|"]
    for t in tests:
        comp = (f"{t['compile_s']:.1f} / {t['compile_max_s']:.1f}" if t.get("compile_s") is not None else "-")
        mem = _fmt_bytes(t.get("peak_bytes")) + (" (raised)" if t.get("raised_peak") else "")
        out.append(f"| `{t['test']}` | {t.get('outcome', '?')} | {t.get('wall_s', float('nan')):.1f} | {comp} | {mem} "
                   f"| {t.get('shard', '')} |")
    return "\n".join(out)


def write_certificate(cert: dict[str, Any], directory: str | Path, stem: str | None = None, *,
                      overwrite: bool = False) -> tuple[Path, Path]:
    """Write a certificate dict as ``<stem>.json`` and ``<stem>.md`` (default stem ``verify-<scale>``).

    An existing ``<stem>.json`` or ``<stem>.md`` is replaced only with ``overwrite=True``; otherwise
    :class:`grokclocks.OutputExistsError` names it and nothing is written.  Each file is written
    atomically (a temporary file in ``directory``, then ``os.replace``), so an interrupted write leaves
    the previous file whole.
    """
    if not isinstance(overwrite, bool):
        raise V.DomainError(f"overwrite must be True or False (got {V.show(overwrite)})")
    if not isinstance(directory, (str, Path)):
        raise V.DomainError(f"directory must be a path (str or pathlib.Path) (got {V.show(directory)})")
    if (not isinstance(cert, dict) or not isinstance(cert.get("meta"), dict) or not isinstance(cert.get("rows"), list)
            or not {"scale", "n_rows", "n_failed", "n_reported"} <= set(cert["meta"])):
        raise V.DomainError("cert must be a certificate dict (from certificate() or merge_certificates()) with "
                            f"'meta' (scale, n_rows, n_failed, n_reported) and 'rows' (got {V.show(cert)})")
    if stem is not None and (not isinstance(stem, str) or not stem or Path(stem).name != stem or stem in (".", "..")):
        raise V.DomainError(f"stem must be None or a file name without a directory (got {V.show(stem)})")
    meta = cert["meta"]
    scale = V.choice(meta["scale"], "scale", ("cpu", "gpu"))  # part of the file names
    d = Path(directory)
    stem = stem or f"verify-{scale}"
    js, md = d / f"{stem}.json", d / f"{stem}.md"
    for f in (js, md):  # both checked before either is written
        V.writable_file(f, "certificate file", overwrite=overwrite)
    d.mkdir(parents=True, exist_ok=True)
    js_text = json.dumps(cert, indent=1, default=float)
    env = meta.get("environment", {})
    rows = [_row_from_dict(r) for r in cert["rows"]]
    dev = ", ".join(env.get("jax_devices", [])) or env.get("processor", "?")
    dur = meta.get("duration_s")
    title = f"# Verification certificate ({scale} scale)"
    if meta.get("shard"):
        title += f", slice {meta['shard'][0]} of {meta['shard'][1]}"
    header = (f"{title}\n\n"
              f"grokclocks {meta.get('grokclocks', '?')}, {meta.get('date', '?')}, Python {env.get('python', '?')} on "
              f"{env.get('machine', '?')} ({env.get('cpu_count', '?')} cores; devices: {dev}); "
              f"{meta['n_rows']} rows, {meta['n_failed']} failed, {meta['n_reported']} report-only"
              + (f", {dur:.0f} s" if dur else "") + ".\n\n")
    if meta.get("commit"):
        header += f"Commit `{meta['commit']}`" + (" (with uncommitted changes)" if meta.get("dirty") else "") + ".\n\n"
    if meta.get("merged_from"):
        header += (f"Merged from {len(meta['merged_from'])} slices (`grokclocks verify --merge`): "
                   + ", ".join(f"slice {s['shard'][0]}: {s['n_tests']} tests, {s['duration_s']:.0f} s"
                               for s in meta["merged_from"]) + ".\n\n")
    warn = cert.get("budget_warnings") or []
    if warn:
        header += ("## Budget warnings\n\nThe GPU tier must fit 20 minutes on one H100 with no test over "
                   f"{GPU_TEST_LIMIT_S:.0f} s and no XLA compile over {GPU_COMPILE_LIMIT_S:.0f} s:\n\n"
                   + "".join(f"* {w}\n" for w in warn) + "\n")
    body = header + _LEGEND + format_table(rows, markdown=True) + "\n"
    if cert.get("tests"):
        kind = cert["tests"][0].get("memory_kind", "")
        body += ("\n## Per-test time and memory\n\nWall time includes fixture setup; XLA compile time is the sum of "
                 "the backend compiles during the test (jax.monitoring) and its longest single compile. Memory: "
                 f"{kind}; '(raised)' marks a test that raised the process peak.\n\n" + _tests_table(cert["tests"]) + "\n")
    _atomic_write(js, lambda fh: fh.write(js_text.encode()))
    _atomic_write(md, lambda fh: fh.write(body.encode()))
    return js, md


def write_report(rows: list[Row], directory: str | Path, scale: str, duration_s: float | None = None, *,
                 tests: list[dict[str, Any]] | None = None, meta: dict[str, Any] | None = None,
                 stem: str | None = None, overwrite: bool = False) -> tuple[Path, Path]:
    """Write ``verify-<scale>.json`` and ``verify-<scale>.md`` (or ``<stem>.*``) into ``directory``
    (an existing pair is replaced only with ``overwrite=True``, as :func:`write_certificate`)."""
    return write_certificate(certificate(rows, scale, duration_s, tests=tests, meta=meta), directory, stem,
                             overwrite=overwrite)


def partial_certificates(paths: list[str | Path]) -> list[Path]:
    """The partial certificates ``verify-<scale>-shard-K-of-N.json`` in each directory (or the files given)."""
    if not isinstance(paths, (list, tuple)) or not paths:
        raise CertificateError(f"paths must be a non-empty list of partial certificates or directories "
                               f"(got {V.show(paths)})")
    if not all(isinstance(p, (str, Path)) for p in paths):
        raise CertificateError(f"paths must hold file or directory names, str or pathlib.Path (got {V.show(paths)})")
    found: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            hits = sorted(p.glob("verify-*-shard-*-of-*.json"))
            if not hits:
                raise CertificateError(f"no partial certificate (verify-<scale>-shard-K-of-N.json) in {p}")
            found += hits
        elif p.is_file():
            found.append(p)
        else:
            raise CertificateError(f"{p}: no such file or directory")
    return found


def merge_certificates(paths: list[str | Path]) -> dict[str, Any]:
    """Combine the partial certificates of ``pytest verify --shard K/N`` (one per slice) into one.

    Checks that every slice has the same scale, commit, number of slices and shard plan, that no slice is
    given twice and none is missing (the message names the missing ones), and that no test ran in two
    slices.  Rows and per-test records are concatenated in slice order; ``meta.merged_from`` lists the
    slices with their durations; ``duration_s`` is the sum (the wall time of running them one after another).
    """
    files = partial_certificates(paths)
    certs = []
    for f in files:
        try:
            c = json.loads(f.read_text())
        except (OSError, ValueError) as exc:
            raise CertificateError(f"{f}: not a readable certificate ({exc})") from None
        if not isinstance(c, dict) or "meta" not in c or "rows" not in c:
            raise CertificateError(f"{f}: not a verification certificate (no meta/rows)")
        if not c["meta"].get("shard"):
            raise CertificateError(f"{f}: not a partial certificate (written without --shard)")
        certs.append((f, c))
    first_f, first = certs[0]
    m0 = first["meta"]
    n = int(m0["shard"][1])
    for f, c in certs[1:]:
        m = c["meta"]
        for key, name in (("scale", "scale"), ("commit", "commit"), ("grokclocks", "grokclocks version")):
            if m.get(key) != m0.get(key):
                raise CertificateError(f"{name} differs between slices: {m.get(key)!r} in {f.name}, "
                                       f"{m0.get(key)!r} in {first_f.name}")
        if int(m["shard"][1]) != n:
            raise CertificateError(f"number of slices differs: {f.name} is of {m['shard'][1]}, {first_f.name} of {n}")
        if m.get("plan") != m0.get("plan"):
            raise CertificateError(f"shard plans differ between {f.name} and {first_f.name} (different test "
                                   "selection or budget table): run every slice with the same arguments")
    by_k: dict[int, Path] = {}
    for f, c in certs:
        k = int(c["meta"]["shard"][0])
        if k in by_k:
            raise CertificateError(f"slice {k} of {n} given twice: {by_k[k]} and {f}")
        by_k[k] = f
    missing = [k for k in range(1, n + 1) if k not in by_k]
    if missing:
        raise CertificateError(f"missing slice(s) {', '.join(map(str, missing))} of {n} (have {sorted(by_k)})")
    certs.sort(key=lambda fc: int(fc[1]["meta"]["shard"][0]))
    rows, tests, warn, seen = [], [], [], {}
    for f, c in certs:
        for t in c.get("tests", []):
            if t["test"] in seen:
                raise CertificateError(f"test {t['test']} ran in two slices ({seen[t['test']]} and {f.name})")
            seen[t["test"]] = f.name
        rows += c["rows"]
        tests += c.get("tests", [])
        warn += c.get("budget_warnings", [])
    durs = [c["meta"].get("duration_s") or 0.0 for _, c in certs]
    meta = {k: v for k, v in m0.items() if k not in ("shard", "duration_s", "date")}
    meta.update(date=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), duration_s=float(sum(durs)),
                n_rows=len(rows), n_failed=sum(r["verdict"] in ("FAIL", "NOT REJECTED") for r in rows),
                n_reported=sum(r["kind"] == "report" for r in rows), dirty=any(c["meta"].get("dirty") for _, c in certs),
                merged_from=[{"file": str(f), "shard": c["meta"]["shard"], "n_tests": len(c.get("tests", [])),
                              "n_rows": len(c["rows"]), "duration_s": c["meta"].get("duration_s") or 0.0,
                              "date": c["meta"].get("date"), "environment": c["meta"].get("environment")}
                             for f, c in certs])
    return {"meta": meta, "rows": rows, "tests": tests, "budget_warnings": warn}


@dataclasses.dataclass(frozen=True)
class BudgetItem:
    """One program of a GPU-scale verify test, registered for the GPU time budget (``verify/budget.py``).

    A verify module lists its tests' dominant programs in a module-level ``GPU_BUDGET`` list; the
    budget script measures each on the CPU at the reduced size ``(cpu_seeds, cpu_steps)``, counts its
    FLOPs at the full size ``(seeds, steps)`` from the jaxpr (no execution), and estimates the H100 time.

    ``build(n_seeds, n_steps)`` returns ``(program, make_inputs)``: ``make_inputs()`` is a JAX-traceable
    zero-argument function returning a tuple of arrays (it is traced abstractly with
    :func:`jax.eval_shape` at the full size, so nothing large is allocated), and ``program(*inputs)`` is
    JAX-traceable (the script jit-compiles it).  ``calls`` is how many times the test runs the program
    with the same shapes (e.g. five configurations); a test may register several items (one per program).
    ``host_s`` is host-side (numpy/scipy) time at the full size outside the program, with its source in
    ``note`` (an item with ``build=None`` is host work only).  ``precision`` is the program's arithmetic
    (``"float32"`` or ``"float64"``); ``on_host=True`` marks a program the test runs on the CPU device even on
    a GPU machine (its estimate is the CPU time measured here).  ``gpu_rate`` (seconds per seed x step on the
    H100, measured in an earlier GPU run; source in ``note``) replaces the FLOP model of the run time.
    """

    test: str
    build: Callable[[int, int], tuple[Callable[..., Any], Callable[[], tuple]]] | None
    seeds: int
    steps: int
    cpu_seeds: int
    cpu_steps: int
    calls: int = 1
    config: str = ""
    precision: str = "float32"
    host_s: float = 0.0
    note: str = ""
    on_host: bool = False
    gpu_rate: float | None = None

    def __post_init__(self) -> None:
        for name in ("seeds", "steps", "cpu_seeds", "cpu_steps", "calls"):
            v = getattr(self, name)
            if not (isinstance(v, int) and v >= 1):
                raise ValueError(f"BudgetItem.{name} must be an integer >= 1 (got {v!r})")
        if self.precision not in ("float32", "float64"):
            raise ValueError(f"BudgetItem.precision must be 'float32' or 'float64' (got {self.precision!r})")
        if not (self.host_s >= 0 and math.isfinite(self.host_s)):
            raise ValueError(f"BudgetItem.host_s must be finite and >= 0 (got {self.host_s!r})")
