"""The page "The papers' numbers" (docs/papers-numbers.md): every row runs, every verdict holds, the page is current.

Each row of docs/papers_numbers.py is a quantitative claim of a paper and the grokclocks call that computes it.
A row without an erratum must agree with the paper to its tolerance; a row with an erratum must still differ
(the erratum records a real difference), or agree in number where the erratum corrects the reading. Where the
row carries an independent mpmath reference for grokclocks' corrected value, the value must match it. The
committed page must be the one the rows render, so it cannot drift from the library.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
import time
from pathlib import Path

import pytest

from grokclocks.citations import PAPERS, SPEC
from grokclocks.errata import ERRATA

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("papers_numbers", ROOT / "docs" / "papers_numbers.py")
P = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("papers_numbers", P)  # dataclasses look the module up while the class is built
_spec.loader.exec_module(P)

ERRATUM_IDS = {e.number for e in ERRATA}


def _id(row) -> str:
    return f"{row.paper}:{row.call[:60]}"


@pytest.mark.parametrize("row", P.ROWS, ids=[_id(r) for r in P.ROWS])
def test_row_runs_and_its_verdict_holds(row):
    assert row.paper in PAPERS and (not row.spec or row.spec in SPEC), row
    assert not row.spec or row.spec.startswith(row.paper + ":"), row
    value = row.value()
    values = value if isinstance(value, tuple) else (value,)
    assert all(isinstance(v, (int, float)) and not math.isnan(v) for v in values), value
    if row.erratum is None:
        assert not row.reading
        assert row.agrees(value), f"grokclocks {value!r} vs paper {row.paper_number()!r}: a difference with no erratum"
    else:
        assert row.erratum in ERRATUM_IDS and row.erratum.startswith(row.paper + "-"), row.erratum
        if row.reading:
            assert row.agrees(value), f"{row.erratum} corrects the reading, but the numbers differ: {value!r}"
        else:
            assert not row.agrees(value), f"{row.erratum} records a difference, but grokclocks now agrees: {value!r}"
    if row.reference is not None:
        ref = float(row.reference())
        assert abs(value - ref) <= 1e-8 * abs(ref), f"grokclocks {value!r} vs independent mpmath {ref!r}"


def test_verdicts_can_fail():
    """Negative controls: a wrong paper value, a stale erratum and a missing erratum each change the verdict."""
    import dataclasses

    row = next(r for r in P.ROWS if r.spec == "levi:lstar")
    assert row.agrees(row.value())
    assert not dataclasses.replace(row, paper_value=2.6e-4).agrees(row.value())  # 4 % off at tolerance 1e-12
    assert "**agrees**" in P.verdict(dataclasses.replace(row, erratum="levi-16"), row.value())
    wrong = next(r for r in P.ROWS if r.erratum == "levi-1")
    assert "**differs** (no erratum)" in P.verdict(dataclasses.replace(wrong, erratum=None), wrong.value())
    bound = next(r for r in P.ROWS if r.kind == "le" and r.erratum is None)
    assert not dataclasses.replace(bound, paper_value=bound.value() + 1).agrees(bound.value())


def test_every_paper_has_rows_and_the_issue_s_claims_are_there():
    for key in PAPERS:
        assert sum(r.paper == key for r in P.ROWS) >= 5, key
        assert P.NOT_CHECKABLE[key], key
    specs = {r.spec for r in P.ROWS}
    for spec_id in ("levi:eq11", "levi:conv-acc", "levi:eq15", "kramers:arrhenius", "kramers:headline",
                    "uniformity:thm3.12", "uniformity:table1", "repulsion:woodbury", "repulsion:late-separation",
                    "repulsion:eta-scaling"):
        assert spec_id in specs, spec_id
    assert sum(r.spec == "uniformity:table1" for r in P.ROWS) == 11  # every U-Acc row of Table 1
    # the lost table body is said to be lost, not quoted
    assert any("Table 5" in item and "cannot be checked" in item for item in P.NOT_CHECKABLE["repulsion"])


@pytest.mark.parametrize("node", [t[3] for t in P.TRAINING_RUNS])
def test_training_run_checks_exist(node):
    path, _, func = node.partition("::")
    assert (ROOT / path).is_file() and re.search(rf"^def {func}\(", (ROOT / path).read_text(), re.M), node


def test_page_is_generated_from_the_rows():
    page = P.PAGE
    assert page.is_file(), "docs/papers-numbers.md missing: run `python docs/papers_numbers.py`"
    t0 = time.perf_counter()
    text = P.markdown()
    elapsed = time.perf_counter() - t0
    assert page.read_text() == text, "docs/papers-numbers.md is out of date: run `python docs/papers_numbers.py`"
    assert elapsed < 30, elapsed
    assert "shared/" not in text and "spec/" not in text and ".md:" not in text  # the repository stands alone
    assert text.count("](errata.md)") >= sum(1 for r in P.ROWS if r.erratum)
    assert "papers-numbers.md" in (ROOT / "mkdocs.yml").read_text()  # in the site's navigation
