"""Errata records: well formed, backed by checks that exist, and identical to the docs page."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from grokclocks.citations import PAPERS, SPEC
from grokclocks.errata import ERRATA, SYMBOLIC_PROOFS, Erratum, check_erratum, errata_for, to_markdown

ROOT = Path(__file__).resolve().parents[1]
SPEC_DIR = ROOT.parent / "shared" / "spec"


def _test_functions(path: Path) -> set[str]:
    """Node-ID suffixes (``test_x`` and ``TestClass::test_x``) of the tests defined in ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            found.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    found.add(f"{node.name}::{item.name}")
    return found


def test_records_are_well_formed():
    numbers = [e.number for e in ERRATA]
    assert len(numbers) == len(set(numbers)), "duplicate erratum numbers"
    for e in ERRATA:
        assert re.fullmatch(r"[a-z]+-\d+", e.number), e.number
        assert e.number.split("-")[0] in PAPERS, e.number
        assert e.spec_ids and all(i in SPEC for i in e.spec_ids), e.number
        assert all(i.startswith(e.number.split("-")[0] + ":") for i in e.spec_ids), e.number
        for field in ("where", "paper", "correct", "evidence"):
            assert getattr(e, field).strip(), f"{e.number}: empty {field}"
        assert e.paper.strip() != e.correct.strip(), e.number
        assert e.checks, f"{e.number} names no check"


def test_unknown_spec_id_is_rejected():
    with pytest.raises(KeyError, match="levi:nope"):
        check_erratum(Erratum("levi-99", ("levi:nope",), "x", "a", "b", "c", ("tests/test_x.py::test_y",)))
    with pytest.raises(KeyError, match="paper"):
        check_erratum(Erratum("clocks-99", ("levi:eq8",), "x", "a", "b", "c", ("tests/test_x.py::test_y",)))


def test_errata_for():
    assert [e.number for e in errata_for("levi:eq15")] == ["levi-1", "levi-3"]
    assert errata_for("levi:eq8") == []


def test_numbering_is_consecutive_per_paper():
    for key in PAPERS:
        ns = sorted(int(e.number.split("-")[1]) for e in ERRATA if e.number.startswith(key + "-"))
        assert ns == list(range(1, len(ns) + 1)), (key, ns)


def test_levi_errata_match_spec_section_9():
    path = SPEC_DIR / "levi.md"
    if not path.exists():
        pytest.skip(f"{path} not present (shared/ is not beside this checkout)")
    text = path.read_text()
    section = text[text.index("## 9. Errata"):text.index("## 10.")]
    rows = re.findall(r"^\| (\d+) \|", section, re.M)
    assert rows == [str(i) for i in range(1, len(rows) + 1)] and len(rows) >= 21
    ours = sorted((int(e.number.split("-")[1]) for e in ERRATA if e.number.startswith("levi-")))
    # every erratum of the spec is recorded; grokclocks' own findings (e.g. levi-22, from the GPU tier)
    # continue the spec's numbering without gaps
    assert ours[:len(rows)] == [int(r) for r in rows]
    assert ours == list(range(1, len(ours) + 1))


@pytest.mark.parametrize("erratum", ERRATA, ids=lambda e: e.number)
def test_every_check_exists(erratum):
    for node_id in erratum.checks:
        path_part, sep, func = node_id.partition("::")
        assert sep and func, f"{erratum.number}: {node_id!r} is not a pytest node ID (file::test)"
        assert path_part.startswith(("tests/", "verify/")) and path_part.endswith(".py"), node_id
        path = ROOT / path_part
        assert path.is_file(), f"{erratum.number}: {path_part} does not exist"
        func = func.split("[", 1)[0]  # a parametrised node ID names the function before '['
        assert func in _test_functions(path), f"{erratum.number}: no test {func!r} in {path_part}"


def test_markdown_names_every_erratum_and_check():
    md = to_markdown()
    assert md.startswith("# Errata\n")
    for e in ERRATA:
        assert f"| {e.number} |" in md
        for c in e.checks:
            assert f"`{c}`" in md
    # every table row has the same number of (unescaped) cells as the header
    for line in md.splitlines():
        if line.startswith("| "):
            assert len(re.split(r"(?<!\\)\|", line)) == 10, line


def test_page_says_how_each_correction_is_established():
    """Each row says "proven symbolically" (naming the test, which is among its checks) or "measured"."""
    md = to_markdown()
    rows = {line.split(" | ")[0][2:]: line for line in md.splitlines() if re.match(r"\| [a-z]+-\d+ \|", line)}
    assert set(rows) == {e.number for e in ERRATA}
    for e in ERRATA:
        if e.proof == "measured":
            assert "| measured |" in rows[e.number], e.number
        else:
            assert e.proof.startswith("tests/test_symbolic_errata.py::test_") and e.proof in e.checks, e.number
            assert f"| proven symbolically (`{e.proof.split('::', 1)[1]}`) |" in rows[e.number], e.number
    assert {e.number for e in ERRATA if e.proof != "measured"} == set(SYMBOLIC_PROOFS)
    assert {"levi-1", "repulsion-1", "kramers-9", "levi-4"} <= set(SYMBOLIC_PROOFS)  # the examples


def test_docs_page_is_generated_from_the_records():
    page = ROOT / "docs" / "errata.md"
    assert page.is_file(), "docs/errata.md missing: run `python docs/gen_pages.py`"
    assert page.read_text().rstrip("\n") == to_markdown().rstrip("\n"), (
        "docs/errata.md is out of date: run `python docs/gen_pages.py`")


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_pages_quote_the_number_of_errata(page):
    """The count of corrected statements quoted on the front pages is the number of records."""
    quoted = re.findall(r"(\d+) statements of (?:these|the five) papers are corrected", (ROOT / page).read_text())
    assert quoted and all(int(q) == len(ERRATA) for q in quoted), (page, quoted, len(ERRATA))
