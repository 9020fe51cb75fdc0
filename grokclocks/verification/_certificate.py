"""The verification certificate: the table of one session (or one suite) as JSON and Markdown, with its environment."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import os
import platform
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validate as V
from .._escape import json_text, markdown_code, markdown_text
from .._safe_write import WRITER
from ._budget import (
    GPU_COMPILE_LIMIT_S,
    GPU_SUITE_LIMIT_S,
    GPU_TEST_LIMIT_S,
    _check_tests,
    budget_warnings,
)
from ._checked import check_certificate
from ._maths import markdown_maths
from ._report import Row, _rows


def _cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo; `platform.processor()` where there is none): the machine a
    certificate, a benchmark or the accuracy page names."""
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
                           "numpy": np.__version__, "cpu_count": os.cpu_count()}
    try:
        import scipy

        env["scipy"] = scipy.__version__
    except ImportError:  # pragma: no cover
        pass
    if "jax" in sys.modules:  # only report JAX if a check used it
        jax = sys.modules["jax"]
        env["jax"] = jax.__version__
        try:
            env["jax_devices"] = [str(d.device_kind) for d in jax.devices()]
        except Exception:  # pragma: no cover
            pass
    return env


def _device(env: dict[str, Any]) -> str:
    """The machine a certificate ran on, in words: JAX's first non-CPU device, else the CPU model and cores."""
    devs = [d for d in env.get("jax_devices", []) if isinstance(d, str) and d.lower() != "cpu"]
    if devs:
        return devs[0] + (f" x {len(devs)}" if len(devs) > 1 else "")
    return f"{env.get('cpu_model') or env.get('processor', '?')}, {env.get('cpu_count', '?')} cores"


def _row_dict(r: Row) -> dict[str, Any]:
    return dataclasses.asdict(r) | {"verdict": r.verdict}


def _row_from_dict(d: dict[str, Any]) -> Row:
    names = {f.name for f in dataclasses.fields(Row)}
    return Row(**{k: v for k, v in d.items() if k in names})


def certificate(rows: list[Row], scale: str, duration_s: float | None = None, *,
                tests: list[dict[str, Any]] | None = None, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The certificate of a verify session as a JSON-ready dict.

    Parameters
    ----------
    rows : list of Row
        The table's rows, in the order shown.
    scale : {"cpu", "gpu"}
        The configuration size the rows were measured at (part of the file names).
    duration_s : float, optional
        Wall time of the session in seconds, finite and ≥ 0; default `None` (unknown).
    tests : list of dict, optional
        Per-test records: each a dict with a "test" node ID and, where measured, "outcome", "wall_s",
        "compile_s", "compile_max_s" (seconds, `None` or finite and ≥ 0), "peak_bytes"; default `None` (no
        records).
    meta : dict, optional
        Further JSON-ready metadata merged into meta (commit, shard, suite, ...), overriding the defaults;
        default `None` (none).

    Returns
    -------
    dict
        {"meta", "rows", "tests", "budget_warnings"}: meta holds the package version, scale, UTC date,
        environment, device (in words), duration and the row counts (n_rows, n_failed, n_reported); rows are
        the rows as dicts with their verdict; budget_warnings are those of `budget_warnings`.

    Raises
    ------
    DomainError
        If an argument is not of the form above.
    """
    from .. import __version__

    rows = _rows(rows)
    scale = V.choice(scale, "scale", ("cpu", "gpu"))  # part of the file names: nothing else may reach the path
    if duration_s is not None:
        duration_s = V.nonnegative(duration_s, "duration_s", scalar=True)
    tests = [] if tests is None else _check_tests(tests)
    if meta is not None and not isinstance(meta, dict):
        raise V.DomainError(f"meta must be None or a dict (got {V.show(meta)})")
    env = _environment()
    m = {"grokclocks": __version__, "scale": scale,
         "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "environment": env,
         "device": _device(env), "duration_s": duration_s, "n_rows": len(rows),
         "n_failed": sum(not r.passed for r in rows), "n_reported": sum(r.kind == "report" for r in rows)}
    m.update(meta or {})
    return {"meta": m, "rows": [_row_dict(r) for r in rows], "tests": tests,
            "budget_warnings": budget_warnings(tests, scale)}


PAGE_LEGEND = (
    "Legend: each row checks the result named by its spec ID; under the check, where its tolerance comes from. "
    "**pass** / **FAIL**: the prediction must match the measurement within the tolerance (an `agree` row). "
    "**rejected** / **NOT REJECTED**: the prediction is a plausible WRONG variant, named in the check; rejected "
    "(outside the tolerance) is the good outcome and shows the check can fail (a `reject` row). **reported**: a "
    "measurement with no prediction to test (a `report` row; under it, why), never counted as a pass. The error "
    "is relative (rel), absolute (abs) or of the logarithms (log), in the row's metric; numbers are rounded to "
    "4 significant digits (error and tolerance to 3); the JSON holds them in full.")
"""The legend of a certificate page's table (`rows_markdown`): what each verdict means, where the tolerance is."""

_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def compact_number(x: float, digits: int = 4) -> str:
    """`x` rounded to `digits` significant digits for a page: `0.0123`, `4321`, `3.698×10⁻¹¹`, `—` for NaN.

    Parameters
    ----------
    x : float
        The number.
    digits : int
        Significant digits, ≥ 1; default 4.

    Returns
    -------
    str
        Fixed notation for 10⁻³ ≤ |x| < 10⁵ (an integer part longer than `digits` is kept whole), else a mantissa
        times a power of ten with the exponent in superscript digits; `0`, `∞`, `−∞`, and `—` for NaN (a
        report row's prediction, error and tolerance).
    """
    if math.isnan(x):
        return "\u2014"
    if math.isinf(x):
        return "\u221e" if x > 0 else "\u2212\u221e"
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e5:
        text = f"{x:.{digits}g}"
        return text if "e" not in text else f"{x:.0f}"
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}\u00d710{str(int(exponent)).translate(_SUPERSCRIPT)}"


_BOLD = {"FAIL", "NOT REJECTED"}


def rows_markdown(rows: list[Row]) -> str:
    """The rows of a certificate as the Markdown table of its page, readable at 1280 pixels.

    Columns: spec ID, check (the check's text, and under it in small type where its tolerance comes from, or
    for a report row why it is reported), prediction, measured, error (with its metric), tolerance, verdict.  The
    row kind is not a column: the verdict names it (pass / FAIL: agree; rejected / NOT REJECTED: reject;
    reported: report; `PAGE_LEGEND`).  Numbers are compact (`compact_number`); the maths of a row's text is
    typeset and the rest escaped (`markdown_maths`); the spec ID is escaped text (`markdown_text`).

    Parameters
    ----------
    rows : list of Row
        The rows, in the order shown.

    Returns
    -------
    str
        The table (no trailing newline).
    """
    out = ["| spec ID | check | prediction | measured | error | tolerance | verdict |", "|---|---|---|---|---|---|---|"]
    for r in _rows(rows):
        under = "why" if r.kind == "report" else "tolerance"
        check = (f"{markdown_maths(r.what)}<br>" if r.what else "") + f"<small>{under}: {markdown_maths(r.source)}</small>"
        error = "\u2014" if r.kind == "report" else f"{compact_number(r.error, 3)} {markdown_text(r.metric)}"
        verdict = markdown_text(r.verdict)
        out.append(f"| {markdown_text(r.spec_id)} | {check} | {compact_number(r.predicted)} | "
                   f"{compact_number(r.measured)} | {error} | {compact_number(r.tolerance, 3)} | "
                   + (f"**{verdict}**" if r.verdict in _BOLD else verdict) + " |")
    return "\n".join(out)


def _fmt_bytes(b: float | None) -> str:
    if b is None:
        return "-"
    return f"{b / 2**30:.2f} GiB" if b >= 2**30 else f"{b / 2**20:.0f} MiB"


def _test_code(test: Any) -> str:
    """A pytest node ID as inline code that may wrap after each `/` and `::` and before a parameter's `[` (a
    `<wbr>`), so the per-test table fits the page; inserted into the escaped text, which holds `/`, `:` and
    `\\[` only where the ID does (`markdown_text` writes no such character in an escape)."""
    text = re.sub(r"(/|::)", r"\1<wbr>", markdown_text(test)).replace("\\[", "<wbr>\\[")
    return f"<code>{text}</code>"


def _tests_table(tests: list[dict[str, Any]]) -> str:
    head = "| test | outcome | wall s | XLA compile s (total / longest) | peak memory (process, so far) | slice |"
    out = [head, "|---|---|---|---|---|---|"]
    for t in tests:
        comp = (f"{t['compile_s']:.1f} / {t['compile_max_s']:.1f}" if t.get("compile_s") is not None
                and t.get("compile_max_s") is not None else "-")
        mem = _fmt_bytes(t.get("peak_bytes")) + (" (raised)" if t.get("raised_peak") else "")
        wall = t.get("wall_s")
        out.append(f"| {_test_code(t['test'])} | {markdown_text(t.get('outcome', '?'))} | "
                   f"{'-' if wall is None else f'{wall:.1f}'} | {comp} | {mem} | {markdown_text(t.get('shard', ''))} |")
    return "\n".join(out)


def _suite_header(meta: dict[str, Any]) -> str:
    fp = meta.get("fingerprint") or {}
    files = fp.get("files") or {}
    suite = meta["suite"]
    text = (f"Suite {markdown_code(suite)} ({markdown_code('verify/' + suite + '/')}); "
            f"fingerprint {markdown_code(str(fp.get('digest', '?'))[:16])} over "
            f"{len(files)} files (the suite's own files, `verify/conftest.py` and every grokclocks or verify module "
            "they import): the certificate is stale once one of them changes.")
    if meta.get("complete") is False:
        text += " **Incomplete**: " + "; ".join(markdown_text(x) for x in meta.get("not_run_reason", [])) + "."
    return text + "\n\n"


def certificate_markdown(cert: dict[str, Any]) -> str:
    """The Markdown page of a certificate: title, environment, counts, the table and the per-test records.

    Parameters
    ----------
    cert : dict
        A certificate (from `certificate`, `merge_certificates`, `suite_certificate` or `read_certificate`);
        it is checked first: every field of its type, every row's verdict the one its numbers give.

    Returns
    -------
    str
        The page, as `write_certificate` writes it beside the JSON.  Every text the certificate holds (row
        text, commit, dates, environment, test names) is escaped (control characters and newlines shown,
        Markdown and HTML characters written as text), so the page shows it and nothing in it becomes markup.

    Raises
    ------
    CertificateError
        If `cert` is not a certificate of that form (one line naming the field).
    """
    cert = check_certificate(cert, "cert")
    meta = cert["meta"]
    scale = meta["scale"]
    env = meta.get("environment") or {}
    rows = [_row_from_dict(r) for r in cert["rows"]]
    dev = ", ".join(env.get("jax_devices", [])) or env.get("processor", "?")
    dur = meta.get("duration_s")
    title = f"# Verification certificate ({scale} scale)"
    if meta.get("suite"):
        title = f"# Verification certificate: suite {markdown_text(meta['suite'])} ({scale} scale)"
    if meta.get("shard"):
        title += f", slice {meta['shard'][0]} of {meta['shard'][1]}"
    t = markdown_text
    header = (f"{title}\n\n"
              f"grokclocks {t(meta.get('grokclocks', '?'))}, {t(meta.get('date', '?'))}, Python "
              f"{t(env.get('python', '?'))} on {t(env.get('machine', '?'))} ({t(env.get('cpu_count', '?'))} cores; "
              f"devices: {t(dev)}); {meta['n_rows']} rows, {meta['n_failed']} failed, {meta['n_reported']} "
              "report-only" + (f", {dur:.0f} s" if dur else "") + ".\n\n")
    if meta.get("commit"):
        header += (f"Commit {markdown_code(meta['commit'])}" + (" (with uncommitted changes)" if meta.get("dirty")
                                                                 else "")
                   + (f" ({t(meta['commit_note'])})" if meta.get("commit_note") else "") + ".\n\n")
    if meta.get("suite"):
        header += _suite_header(meta)
    if meta.get("merged_from"):
        header += (f"Merged from {len(meta['merged_from'])} slices (`grokclocks verify --merge`): "
                   + ", ".join(f"slice {s['shard'][0]}: {s['n_tests']} tests, {s['duration_s']:.0f} s"
                               for s in meta["merged_from"]) + ".\n\n")
    warn = cert.get("budget_warnings") or []
    if warn:
        header += (f"## Budget warnings\n\nEach GPU suite must fit one command of a GPU window ({GPU_SUITE_LIMIT_S:.0f} s, "
                   f"start-up included) with no test over {GPU_TEST_LIMIT_S:.0f} s and no XLA compile over "
                   f"{GPU_COMPILE_LIMIT_S:.0f} s:\n\n" + "".join(f"* {t(w)}\n" for w in warn) + "\n")
    body = header + PAGE_LEGEND + "\n\n" + rows_markdown(rows) + "\n"
    if cert.get("tests"):
        kind = cert["tests"][0].get("memory_kind", "")
        body += ("\n## Per-test time and memory\n\nWall time includes fixture setup; XLA compile time is the sum of "
                 "the backend compiles during the test (jax.monitoring) and its longest single compile. Memory: "
                 f"{t(kind)}; '(raised)' marks a test that raised the process peak.\n\n" + _tests_table(cert["tests"])
                 + "\n")
    return body


def write_certificate(cert: dict[str, Any], directory: str | os.PathLike, stem: str | None = None, *,
                      overwrite: bool = False, keep_previous: bool = False) -> tuple[Path, Path]:
    """Write a certificate dict as <stem>.json and <stem>.md.

    Parameters
    ----------
    cert : dict
        A certificate from `certificate`, `merge_certificates` or `suite_certificate`: "meta" (with scale,
        n_rows, n_failed, n_reported) and "rows".
    directory : str or os.PathLike
        The directory to write into; created (with its parents) if missing.
    stem : str, optional
        The file name without extension and without a directory; default `None`: "verify-<scale>".
    overwrite : bool, optional
        Replace an existing <stem>.json or <stem>.md; default False (then `OutputExistsError` names the
        file and nothing is written).
    keep_previous : bool, optional
        Replace an existing pair after moving it to <stem>.prev.json and <stem>.prev.md (an older .prev
        pair is dropped); default False. Implies `overwrite`.

    Returns
    -------
    tuple of pathlib.Path
        The JSON and the Markdown file.

    Raises
    ------
    DomainError
        If `cert` is not a certificate dict (every field of its type, every row's verdict the one its
        numbers give: a `CertificateError` naming the field), `stem` holds a directory, a flag is not a
        bool, or a file is a symbolic link, a directory or not a regular file.
    OutputExistsError
        If a file exists and neither `overwrite` nor `keep_previous` is set (both files are checked before
        either is written).

    Notes
    -----
    Each file is written by grokclocks's one writer: to a temporary file in `directory`, then renamed, so an
    interrupted write leaves the previous file whole and no half-written certificate; no link is followed.
    Every text of the certificate is escaped in the Markdown (`certificate_markdown`).
    """
    for name, flag in (("overwrite", overwrite), ("keep_previous", keep_previous)):
        if not isinstance(flag, bool):
            raise V.DomainError(f"{name} must be True or False (got {V.show(flag)})")
    if not isinstance(directory, (str, os.PathLike)):
        raise V.DomainError(f"directory must be a path (str or pathlib.Path) (got {V.show(directory)})")
    if (not isinstance(cert, dict) or not isinstance(cert.get("meta"), dict) or not isinstance(cert.get("rows"), list)
            or not {"scale", "n_rows", "n_failed", "n_reported"} <= set(cert["meta"])):
        raise V.DomainError("cert must be a certificate dict (from certificate() or merge_certificates()) with "
                            f"'meta' (scale, n_rows, n_failed, n_reported) and 'rows' (got {V.show(cert)})")
    if stem is not None and (not isinstance(stem, str) or not stem or Path(stem).name != stem or stem in (".", "..")):
        raise V.DomainError(f"stem must be None or a file name without a directory (got {V.show(stem)})")
    scale = V.choice(cert["meta"]["scale"], "scale", ("cpu", "gpu"))  # part of the file names
    d = Path(directory)
    stem = stem or f"verify-{scale}"
    js, md = d / f"{stem}.json", d / f"{stem}.md"
    replace = overwrite or keep_previous
    for f in (js, md):  # both checked before either is written
        WRITER.check(f, name="certificate file", overwrite=replace, make_parents=True)
    body = certificate_markdown(cert)  # checks it: a row whose verdict its numbers contradict is refused
    js_text = json_text(cert, default=float)  # strict JSON text: an undecodable byte of a name as its escape
    if keep_previous:
        for f in (js, md):
            WRITER.move_aside(f, f.with_name(f"{stem}.prev{f.suffix}"))
    WRITER.write_text(js, js_text, name="certificate file", overwrite=replace, make_parents=True)
    WRITER.write_text(md, body, name="certificate file", overwrite=replace, make_parents=True)
    return js, md


def write_report(rows: list[Row], directory: str | os.PathLike, scale: str, duration_s: float | None = None, *,
                 tests: list[dict[str, Any]] | None = None, meta: dict[str, Any] | None = None,
                 stem: str | None = None, overwrite: bool = False, keep_previous: bool = False) -> tuple[Path, Path]:
    """Write the certificate of `rows` as verify-<scale>.json and verify-<scale>.md (or <stem>.*).

    Parameters
    ----------
    rows : list of Row
        The table's rows, in the order shown.
    directory : str or os.PathLike
        The directory to write into; created (with its parents) if missing.
    scale : {"cpu", "gpu"}
        The configuration size the rows were measured at (part of the file names).
    duration_s : float, optional
        Wall time of the session in seconds, finite and ≥ 0; default `None` (unknown).
    tests : list of dict, optional
        Per-test records: each a dict with a "test" node ID and, where measured, "outcome", "wall_s",
        "compile_s", "compile_max_s" (seconds, `None` or finite and ≥ 0), "peak_bytes"; default `None` (no
        records).
    meta : dict, optional
        Further JSON-ready metadata merged into the certificate's meta (commit, shard, suite, ...),
        overriding the defaults; default `None` (none).
    stem : str, optional
        The file name without extension and without a directory; default `None`: "verify-<scale>".
    overwrite : bool, optional
        Replace an existing <stem>.json or <stem>.md; default False (then `OutputExistsError` names the
        file and nothing is written).
    keep_previous : bool, optional
        Replace an existing pair after moving it to <stem>.prev.json and <stem>.prev.md (an older .prev
        pair is dropped); default False. Implies `overwrite`.

    Returns
    -------
    tuple of pathlib.Path
        The JSON and the Markdown file.

    Raises
    ------
    DomainError
        If an argument is not of the form above.
    OutputExistsError
        If a file exists and neither `overwrite` nor `keep_previous` is set.
    """
    return write_certificate(certificate(rows, scale, duration_s, tests=tests, meta=meta), directory, stem,
                             overwrite=overwrite, keep_previous=keep_previous)
