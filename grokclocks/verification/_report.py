"""Rows of the verification table and the collector `Report` that records them (one per pytest session)."""

from __future__ import annotations

import dataclasses
import math
import shutil
import textwrap
from typing import Any

import numpy as np

from .. import _validate as V
from .._escape import markdown_text, terminal_text


@dataclasses.dataclass
class Row:
    """One line of the verification table: a prediction, a measurement, the error and its tolerance.

    `Report.check`, `Report.reject` and `Report.observe` build the rows; a certificate stores each as a dict
    of these fields plus its `verdict`.
    """

    spec_id: str
    """The spec ID the row checks, e.g. "levi:eq8"."""
    what: str
    """What is compared, in words (the table's check column); may be empty."""
    kind: str
    """The row's kind: "agree", "reject" or "report".

    "agree": the row passes when the error is within the tolerance; "reject": the prediction is a plausible
    wrong variant and the row passes when its error is outside the tolerance; "report": a measurement with
    no prediction to test (the paper makes none), shown but never counted as a pass, and it cannot fail."""
    predicted: float
    """The prediction; for a "reject" row the wrong variant, NaN for a "report" row. With arrays, the element
    shown: the worst one for "agree", the least rejected one for "reject"."""
    measured: float
    """The measurement of that element; NaN for a "report" row of several values."""
    error: float
    """The error of that element in `metric`, ≥ 0 (inf for a NaN or infinite mismatch; NaN for a "report"
    row)."""
    tolerance: float
    """The tolerance, in the same metric as `error`, finite and > 0 (NaN for a "report" row)."""
    metric: str
    """How the error is measured: "rel" |m − p|/|p|, "abs" |m − p|, "log" |log(m/p)| (m the measurement,
    p the prediction), or "none" for a "report" row."""
    source: str
    """Where the tolerance comes from (a measured spread, the spec's table), or for a "report" row why there
    is no prediction; never empty."""
    passed: bool
    """The verdict: for "agree" error ≤ tolerance, for "reject" error > tolerance, always `True` for
    "report"."""
    test: str = ""
    """The pytest node ID of the test that recorded the row; default "" (recorded outside a session)."""
    scale: str = "cpu"
    """The configuration size of the session, "cpu" (default) or "gpu"."""
    details: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Further JSON-ready numbers of the row (per-seed values, "n_compared": the number of elements
    compared); default empty."""

    @property
    def verdict(self) -> str:
        """The table's verdict: "pass" / "FAIL" (agree), "rejected" / "NOT REJECTED" (reject), "reported"."""
        if self.kind == "reject":
            return "rejected" if self.passed else "NOT REJECTED"
        if self.kind == "report":
            return "reported"
        return "pass" if self.passed else "FAIL"


def _errors(predicted: Any, measured: Any, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Broadcast prediction and measurement and their elementwise error in `metric` (NaN becomes inf;
    equal infinities and equal zeros agree)."""
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
    """Collects the verification rows of one pytest session (the `report` fixture of verify/).

    Parameters
    ----------
    scale : {"cpu", "gpu"}, optional
        The configuration size of the session, stamped on every row; default "cpu".

    Notes
    -----
    `check` and `reject` record a row and raise `AssertionError` when its verdict is negative, so a test
    stops at its first failed row; `observe` records a measurement with no prediction and never fails.
    `current_test` is the pytest node ID stamped on the rows (the fixture sets it per test).
    """

    def __init__(self, scale: str = "cpu") -> None:
        self.scale = scale
        """The configuration size of the session, "cpu" or "gpu", stamped on every row."""
        self.rows: list[Row] = []
        """The rows recorded so far, in the order recorded (failed ones included)."""
        self.current_test = ""
        """The pytest node ID stamped on the rows recorded next; "" outside a test (the `report` fixture sets
        it per test)."""

    def _row(self, spec_id: str, kind: str, predicted: Any, measured: Any, rtol: float | None, atol: float | None,
             logtol: float | None, source: str, what: str, details: dict[str, Any] | None) -> Row:
        """Record the "agree" or "reject" row of `predicted` against `measured` under the one tolerance given."""
        metric, tol = _one_tol(rtol, atol, logtol)
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
        """Record an "agree" row and assert |measured − predicted| ≤ tolerance, element by element.

        Parameters
        ----------
        spec_id : str
            The spec ID checked, e.g. "levi:eq8".
        predicted : float or array_like
            The prediction; broadcast against `measured`.
        measured : float or array_like
            The measurement (simulation, exact reference).
        rtol : float, optional
            Relative tolerance on |m − p|/|p|, finite and > 0. Give exactly one of `rtol`, `atol`, `logtol`.
        atol : float, optional
            Absolute tolerance on |m − p|, finite and > 0.
        logtol : float, optional
            Tolerance on |log(m/p)|, finite and > 0.
        source : str
            Where the tolerance comes from (the measured spread, the spec's table); must not be empty.
        what : str, optional
            What is compared, in words; default "".
        details : dict, optional
            Further JSON-ready numbers kept with the row; default none.

        Returns
        -------
        Row
            The recorded row; the worst element is shown.

        Raises
        ------
        AssertionError
            If an element's error exceeds the tolerance (the row is recorded first, as "FAIL").
        ValueError
            If `source` is empty or not exactly one finite positive tolerance is given (nothing recorded).
        """
        row = self._row(spec_id, "agree", predicted, measured, rtol, atol, logtol, source, what, details)
        assert row.passed, (f"{spec_id} {what}: prediction {row.predicted:.6g} vs measurement {row.measured:.6g}, "
                            f"{row.metric} error {row.error:.3g} > tolerance {row.tolerance:.3g} ({source})")
        return row

    def reject(self, spec_id: str, *, wrong: Any, measured: Any, rtol: float | None = None,
               atol: float | None = None, logtol: float | None = None, source: str, what: str = "",
               details: dict[str, Any] | None = None) -> Row:
        """Record a "reject" row and assert that a wrong variant lies outside the tolerance of the measurement.

        Parameters
        ----------
        spec_id : str
            The spec ID whose check this row shows can fail.
        wrong : float or array_like
            The plausible wrong variant (the paper's uncorrected form, a factor 2 in a rate); broadcast
            against `measured`.
        measured : float or array_like
            The same measurement the check uses.
        rtol : float, optional
            Relative tolerance, finite and > 0 (usually the check's own). Give exactly one of `rtol`, `atol`,
            `logtol`.
        atol : float, optional
            Absolute tolerance, finite and > 0.
        logtol : float, optional
            Tolerance on |log(m/p)|, finite and > 0.
        source : str
            Where the tolerance comes from; must not be empty.
        what : str, optional
            The wrong variant, in words; default "".
        details : dict, optional
            Further JSON-ready numbers kept with the row; default none.

        Returns
        -------
        Row
            The recorded row; the element closest to the wrong variant (the least rejected) is shown.

        Raises
        ------
        AssertionError
            If an element of the wrong variant lies within the tolerance ("NOT REJECTED": the check cannot
            tell right from wrong).
        ValueError
            If `source` is empty or not exactly one finite positive tolerance is given.
        """
        row = self._row(spec_id, "reject", wrong, measured, rtol, atol, logtol, source, what, details)
        assert row.passed, (f"{spec_id} {what}: the wrong variant {row.predicted:.6g} is within "
                            f"{row.metric} {row.error:.3g} <= {row.tolerance:.3g} of the measurement "
                            f"{row.measured:.6g}: the check cannot tell right from wrong")
        return row

    def observe(self, spec_id: str, *, measured: Any, source: str, what: str = "",
                details: dict[str, Any] | None = None) -> Row:
        """Record a measurement that has no prediction to test (a "report" row; it cannot fail).

        Parameters
        ----------
        spec_id : str
            The spec ID the measurement belongs to.
        measured : float or array_like
            The measurement; with several values the row shows NaN and keeps the list in its details.
        source : str
            Why there is no prediction (the paper makes none); must not be empty.
        what : str, optional
            What is measured, in words; default "".
        details : dict, optional
            Further JSON-ready numbers kept with the row; default none.

        Returns
        -------
        Row
            The recorded row: prediction, error and tolerance NaN, metric "none", verdict "reported" (never
            "pass").

        Raises
        ------
        ValueError
            If `source` is empty.
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


LEGEND = ("agree: the prediction must match the measurement within the tolerance. "
          "reject: the prediction column holds a plausible WRONG variant (named in the check); 'rejected' -- "
          "outside the tolerance -- is the good outcome and shows the check can fail. "
          "report: a measurement with no prediction to test (prediction and error show nan (none), the reason is "
          "the tolerance source); never counted as a pass.")
"""The legend of the verification table: one sentence per row kind (agree, reject, report), printed above the
terminal table (`format_table`) and the Markdown certificate (`write_certificate`)."""
_TERMINAL_MIN_WIDTH = 140
_HEAD = ["spec ID", "check", "kind", "prediction", "measurement", "error", "tolerance", "verdict", "tolerance source"]


def _cells(r: Row) -> list[str]:
    """The row's cells as text; its own text (ID, check, source: a certificate file's, when merged) with its
    control characters and newlines shown as escapes (`terminal_text`), so a cell is one line of plain text."""
    return [terminal_text(x) for x in (r.spec_id, r.what, r.kind, _fmt(r.predicted), _fmt(r.measured),
                                       f"{_fmt(r.error)} ({r.metric})", _fmt(r.tolerance), r.verdict, r.source)]


def format_table(rows: list[Row], *, markdown: bool = False, width: int | None = None) -> str:
    """The verification table as plain text for a terminal, or as Markdown.

    Parameters
    ----------
    rows : list of Row
        The rows, in the order shown.
    markdown : bool, optional
        False (default): a terminal table, a one-paragraph legend of the row kinds first, the check and the
        tolerance-source columns wrapped (never cut) to fit `width`; True: a Markdown table with every cell
        in full, no legend.  Either way a cell's control characters and newlines are shown as escapes, and
        in Markdown every character that would be markup or HTML is escaped (`grokclocks._escape`).
    width : int, optional
        Line width of the terminal table in characters (≥ 140 is honoured; narrower requests give 140);
        default the terminal's width, at least 140. Ignored with `markdown`.

    Returns
    -------
    str
        The table (no trailing newline).

    Raises
    ------
    DomainError
        If `rows` is not a list of `Row` records, `markdown` not a bool or `width` not an integer ≥ 1.
    """
    rows = _rows(rows)
    markdown = V.flag(markdown, "markdown")
    body = [_cells(r) for r in rows]
    if markdown:
        out = ["| " + " | ".join(_HEAD) + " |", "|" + "---|" * len(_HEAD)]
        out += ["| " + " | ".join(markdown_text(c) for c in b) + " |" for b in body]
        return "\n".join(out)
    if width is None:
        width = shutil.get_terminal_size((160, 24)).columns
    width = max(V.integer_at_least(width, "width", 1), _TERMINAL_MIN_WIDTH)
    fixed = [0, 2, 3, 4, 5, 6, 7]  # every column but the check (1) and the source (8)
    widths = [max(len(_HEAD[i]), *(len(b[i]) for b in body)) if body else len(_HEAD[i]) for i in range(len(_HEAD))]
    widths[0] = min(widths[0], 30)
    room = width - sum(widths[i] for i in fixed) - 2 * (len(_HEAD) - 1)
    check_w = max(16, min(widths[1], int(room * 0.55)))
    widths[1] = check_w
    widths[8] = max(12, min(widths[8], room - check_w))

    def wrap(text: str, w: int) -> list[str]:
        return textwrap.wrap(text, w, break_long_words=True, break_on_hyphens=False) or [""]

    def lines(cells: list[str]) -> list[str]:
        cols = [wrap(c, widths[i]) if i in (0, 1, 8) else [c] for i, c in enumerate(cells)]
        n = max(len(c) for c in cols)
        return ["  ".join((c[j] if j < len(c) else "").ljust(widths[i]) for i, c in enumerate(cols)).rstrip()
                for j in range(n)]

    legend = textwrap.wrap("Legend -- " + LEGEND, width)
    out = legend + lines(_HEAD) + ["  ".join("-" * w for w in widths)]
    for b in body:
        out += lines(b)
    return "\n".join(out)
