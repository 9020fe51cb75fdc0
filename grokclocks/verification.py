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
from typing import Any

import numpy as np

from . import _validate as V

__all__ = ["Row", "Report", "format_table", "write_report"]


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


def _environment() -> dict[str, Any]:
    env: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(),
                           "processor": platform.processor() or platform.machine(), "numpy": np.__version__}
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


def write_report(rows: list[Row], directory: str | Path, scale: str, duration_s: float | None = None) -> tuple[Path, Path]:
    """Write ``verify-<scale>.json`` and ``verify-<scale>.md`` into ``directory``."""
    from . import __version__

    rows = _rows(rows)
    scale = V.choice(scale, "scale", ("cpu", "gpu"))  # part of the file names: nothing else may reach the path
    if duration_s is not None:
        duration_s = V.nonnegative(duration_s, "duration_s", scalar=True)
    if not isinstance(directory, (str, Path)):
        raise V.DomainError(f"directory must be a path (str or pathlib.Path) (got {V.show(directory)})")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    env = _environment()
    meta = {"grokclocks": __version__, "scale": scale, "date": stamp, "environment": env,
            "duration_s": duration_s, "n_rows": len(rows), "n_failed": sum(not r.passed for r in rows),
            "n_reported": sum(r.kind == "report" for r in rows)}
    js = d / f"verify-{scale}.json"
    js.write_text(json.dumps({"meta": meta, "rows": [dataclasses.asdict(r) | {"verdict": r.verdict} for r in rows]},
                             indent=1, default=float))
    md = d / f"verify-{scale}.md"
    dev = ", ".join(env.get("jax_devices", [])) or env["processor"]
    header = (f"# Verification certificate ({scale} scale)\n\n"
              f"grokclocks {__version__}, {stamp}, Python {env['python']} on {env['machine']} "
              f"({env.get('cpu_count', '?')} cores; devices: {dev}); "
              f"{len(rows)} rows, {meta['n_failed']} failed, {meta['n_reported']} report-only"
              + (f", {duration_s:.0f} s" if duration_s else "") + ".\n\n"
              "`agree` rows: prediction vs measurement within the stated tolerance. `reject` rows: a plausible wrong "
              "variant (named in the check) must lie outside the tolerance, which shows the check can fail. "
              "`report` rows: a measurement with no prediction to test (reason in the last column); they are not "
              "counted as passes.\n\n")
    md.write_text(header + format_table(rows, markdown=True) + "\n")
    return js, md
