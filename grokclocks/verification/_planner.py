"""The planner of a GPU window: which suites to run, oldest first, as many as fit a time budget."""

from __future__ import annotations

import ast
import dataclasses
import math
from pathlib import Path
from typing import Any

from .. import _validate as V
from ._budget import SUITE_START_S
from ._read import CertificateError, list_files, read_json
from ._suites import SuiteStatus, _parse, _root, check_suite

DEFAULT_TEST_S = 60.0
"""Seconds assumed for a GPU-scale test with neither a measured time nor a budget estimate (a test not
registered in verify/budget.py): 60 s."""
DEFAULT_CPU_TEST_S = 1.0
"""Seconds assumed per CPU-scale test without a measured time: 1 s (only the planner's own tests plan CPU
runs)."""


def suite_tests(suite: str, root: Any = None) -> list[str]:
    """The test functions of a suite, read from its sources (nothing imported), in file and line order.

    Parameters
    ----------
    suite : str
        The suite: the name of a directory verify/<suite>/ holding test_*.py files, e.g. "levi".
    root : str or pathlib.Path, optional
        The checkout, a directory holding verify/; default `None`: the checkout this package was imported
        from.

    Returns
    -------
    list of str
        "<suite>/<file>::<function>" for every module-level function named test_* of verify/<suite>/test_*.py
        (a parametrized test is one entry; a file that cannot be parsed contributes none).

    Raises
    ------
    DomainError
        If `suite` is not a suite of the checkout.
    """
    r = _root(root)
    suite = check_suite(suite, r)
    out = []
    for f in sorted((r / "verify" / suite).glob("test_*.py")):
        tree = _parse(f)
        if tree is None:
            continue
        out += [f"{suite}/{f.name}::{n.name}" for n in tree.body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test_")]
    return out


def function_of_node(nodeid: str) -> str:
    """The test function of a pytest node ID, relative to verify/, its parameters dropped.

    "verify/levi/test_levi.py::test_x[0.5]" gives "levi/test_levi.py::test_x".

    Parameters
    ----------
    nodeid : str
        A pytest node ID "file::test" (the file rooted at the checkout or at verify/; a class, a parameter
        set in brackets may follow the test's name).

    Returns
    -------
    str
        The function's key, as `suite_tests` names it.

    Raises
    ------
    DomainError
        If `nodeid` is not a str of the form file::function.
    """
    if not isinstance(nodeid, str) or "::" not in nodeid:
        raise V.DomainError(f"nodeid must be a pytest node ID 'file::test' (got {V.show(nodeid)})")
    path, _, name = nodeid.partition("::")
    path = path.removeprefix("verify/")
    return f"{path}::{name.split('[', 1)[0].split('::', 1)[0]}"


def budget_estimates(directory: Any) -> dict[str, float]:
    """The estimated H100 seconds of every registered test, from verify/budget.py's tables.

    Parameters
    ----------
    directory : str or pathlib.Path
        The directory of the per-suite budget tables <suite>.json (docs/verification/gpu-budget); a missing
        directory gives no estimates.

    Returns
    -------
    dict of str to float
        "<suite>/<file>::<function>" → the summed estimate of its items, in seconds (finite, ≥ 0). Files or
        rows that are not of the budget's form are skipped, and so is a file the reader refuses (a link, not a
        regular file, over 64 MiB, not UTF-8 JSON, nested deeper than 64 levels).

    Raises
    ------
    DomainError
        If `directory` is not a path.
    """
    if not isinstance(directory, (str, Path)):
        raise V.DomainError(f"directory must be a path (got {V.show(directory)})")
    out: dict[str, float] = {}
    folder = Path(directory)
    if not folder.is_dir():
        return out
    try:
        tables = list_files(folder, "*.json")
    except CertificateError:
        return out
    for f in tables:
        try:  # found in the folder: a link there is refused (skipped), not followed
            modules = read_json(f, found_in=folder)["modules"].items()
        except (CertificateError, KeyError, TypeError, AttributeError):
            continue
        for mname, m in modules:
            for r in (m.get("items", []) if isinstance(m, dict) else []):
                try:
                    s = float(r["h100_s"])
                    node = f"{mname}::{r['test']}"
                except (KeyError, TypeError, ValueError):
                    continue
                if math.isfinite(s) and s >= 0:
                    out[node] = out.get(node, 0.0) + s
    return out


def time_estimates(suite: str, scale: str, *, certificate: dict | None = None,
                   budget: dict[str, float] | None = None, root: Any = None) -> dict[str, tuple[float, str]]:
    """The expected seconds of each test of a suite: the latest measured time where a certificate has one,
    verify/budget.py's estimate otherwise.

    Parameters
    ----------
    suite : str
        The suite: the name of a directory verify/<suite>/ holding test_*.py files, e.g. "levi".
    scale : {"cpu", "gpu"}
        The scale planned: measured times are taken only from a certificate of this scale; budget estimates
        are for "gpu" only (at "cpu" an unmeasured test counts `DEFAULT_CPU_TEST_S`).
    certificate : dict, optional
        The suite's latest certificate (stale or not: its times are still the best measurement); default
        `None` (no measured time).
    budget : dict of str to float, optional
        "<suite>/<file>::<function>" → estimated seconds, as `budget_estimates` returns them; default `None`
        (no estimate).
    root : str or pathlib.Path, optional
        The checkout, a directory holding verify/; default `None`: the checkout this package was imported
        from.

    Returns
    -------
    dict of str to tuple
        "<suite>/<file>::<function>" → (seconds, where the number comes from: "measured <date> on <device>",
        "estimate (verify/budget.py)" or "no estimate: N s assumed"), for every test of `suite_tests`.

    Raises
    ------
    DomainError
        If an argument is not of the form above.
    """
    scale = V.choice(scale, "scale", ("cpu", "gpu"))
    tests = suite_tests(suite, root)
    measured: dict[str, float] = {}
    where = ""
    if certificate is not None and not isinstance(certificate, dict):
        raise V.DomainError(f"certificate must be None or a certificate dict (got {V.show(certificate)})")
    if certificate is not None:
        m = certificate.get("meta")
        m = m if isinstance(m, dict) else {}
        if m.get("scale") == scale:
            where = f"measured {str(m.get('date', '?'))[:10]} on {m.get('device', '?')}"
            recs = certificate.get("tests", [])
            for t in recs if isinstance(recs, list) else []:
                if not (isinstance(t, dict) and isinstance(t.get("test"), str) and "::" in t["test"]):
                    continue  # a record not of the certificate's form: no measurement
                w = t.get("wall_s")
                if (t.get("outcome") in ("passed", "failed", "error") and isinstance(w, (int, float))
                        and math.isfinite(w) and w >= 0):
                    key = function_of_node(t["test"])
                    measured[key] = measured.get(key, 0.0) + float(w)
    budget = budget or {}
    out = {}
    for t in tests:
        if t in measured:
            out[t] = (measured[t], where)
        elif scale == "gpu" and t in budget:
            out[t] = (budget[t], "estimate (verify/budget.py)")
        else:
            d = DEFAULT_TEST_S if scale == "gpu" else DEFAULT_CPU_TEST_S
            out[t] = (d, f"no estimate: {d:.0f} s assumed")
    return out


@dataclasses.dataclass(frozen=True)
class PlanItem:
    """One suite of a plan, planned or left out, as `plan_run` returns it."""

    suite: str
    """The suite's name (its directory under verify/)."""
    reason: str
    """The suite's state, the reason it is a candidate or not: "never run", "stale since 1a2b3c4",
    "incomplete (2 tests not run)", "passed", "failed", ..."""
    estimate_s: float
    """Expected seconds, ≥ 0: the suite's start-up `start_s` plus its tests' expected times."""
    start_s: float
    """The start-up part of `estimate_s`, in seconds, ≥ 0."""
    tests: dict = dataclasses.field(default_factory=dict, compare=False)
    """Each test's expected time: "<suite>/<file>::<function>" → (seconds, where the number comes from), as
    `time_estimates` returns them; default empty (no test timed)."""
    run: bool = False
    """`True`: in the plan; `False` (default): left out, `why_not` says why."""
    why_not: str = ""
    """Why the suite was left out: "fresh (passed)", "does not fit: needs X s, Y s left", ...; "" (default)
    when planned."""


def _reason(s: SuiteStatus) -> str:
    if s.state == "stale":
        return f"stale since {s.stale_since}" if s.stale_since else "stale"
    if s.state == "incomplete":
        return f"incomplete ({len(s.not_run)} tests not run)"
    return s.state


def plan_run(statuses: list[SuiteStatus], estimates: dict[str, dict[str, tuple[float, str]]], budget_s: float, *,
             start_s: float = SUITE_START_S) -> list[PlanItem]:
    """Choose the suites of one window: missing or stale ones, oldest first, as many as fit the budget.

    Parameters
    ----------
    statuses : list of SuiteStatus
        The suites' states, as `suite_statuses` returns them, in the order ties are broken (the tier's suite
        order).
    estimates : dict
        Suite name → its tests' expected times ("<suite>/<file>::<function>" → (seconds ≥ 0, source), as
        `time_estimates` returns them); a suite missing here has no tests to time and is estimated at its
        start-up alone.
    budget_s : float
        Seconds available for the suites, finite and ≥ 0.
    start_s : float, optional
        Seconds of one suite's start-up (its pytest process, imports, collection), finite and ≥ 0; default
        `SUITE_START_S`.

    Returns
    -------
    list of PlanItem
        Every suite: first the planned ones in the order they run, then the others with why not.

    Raises
    ------
    DomainError
        If an argument is not of the form above.

    Notes
    -----
    Candidates are the suites never run, stale (their files changed since the certificate) or incomplete;
    a fresh certificate, passed or failed, is a verdict on the code of today and is not rerun. Oldest first:
    never-run suites first (in the given order), then by the date of their certificate. Each candidate whose
    estimate fits what is left of the budget is taken; one that does not fit is skipped and the next tried,
    so a short suite can use the end of a window.
    """
    items = V.sequence(statuses, "statuses", min_len=0, what="a list of SuiteStatus")
    if not all(isinstance(s, SuiteStatus) for s in items):
        raise V.DomainError(f"statuses must hold SuiteStatus records (got {V.show(statuses)})")
    if not isinstance(estimates, dict):
        raise V.DomainError(f"estimates must be a dict suite -> test estimates (got {V.show(estimates)})")
    budget_s = V.nonnegative(budget_s, "budget_s", scalar=True)
    start_s = V.nonnegative(start_s, "start_s", scalar=True)
    order = {s.suite: i for i, s in enumerate(items)}

    def est(s: SuiteStatus) -> tuple[float, dict]:
        tests = estimates.get(s.suite, {})
        secs = [v[0] for v in tests.values()]
        V.nonnegative(secs, f"estimates[{s.suite!r}]") if secs else None
        return start_s + float(sum(secs)), tests

    cands = [s for s in items if s.state in ("never run", "stale", "incomplete")]
    cands.sort(key=lambda s: (s.state != "never run", str(s.date or ""), order[s.suite]))
    left = budget_s
    planned, skipped = [], []
    for s in cands:
        e, tests = est(s)
        if e <= left:
            planned.append(PlanItem(s.suite, _reason(s), e, start_s, tests, run=True))
            left -= e
        else:
            skipped.append(PlanItem(s.suite, _reason(s), e, start_s, tests,
                                    why_not=f"does not fit: needs {e:.0f} s, {left:.0f} s left"))
    for s in items:
        if s.state not in ("never run", "stale", "incomplete"):
            e, tests = est(s)
            skipped.append(PlanItem(s.suite, _reason(s), e, start_s, tests, why_not=f"fresh ({s.state})"))
    return planned + skipped
