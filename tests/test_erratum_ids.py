"""One numbering for errata: `<paper>-<n>` (`kramers-13`), as in `grokclocks.errata` and on the Errata page.

The spec's short labels ("erratum E13", "spec E13") once stood beside the registry's IDs in the kramers
docstrings and compare's verdicts; a reader searching the site for one found nothing under the other.
These tests fail if such a label comes back into the package, the docs, the verify checks or the tests,
and if a `<paper>-<n>` ID named anywhere in the package or the docs is not a registered erratum.

The certificates under docs/verification/ (written by `pytest verify` and copied there by
docs/gen_pages.py) are records of earlier runs: they are left as they were written and change with the
next run; their text comes from verify/, which is scanned.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grokclocks.citations import PAPERS
from grokclocks.errata import ERRATA

ROOT = Path(__file__).resolve().parents[1]

# "erratum E13", "Erratum E10:", "errata E1...E13", "spec E13", and the same split over two lines
OLD_LABEL = re.compile(r"\b(?:errat(?:um|a)|spec)\s+E\d+\b", re.IGNORECASE)
# a registered-looking ID: a paper key, a hyphen, a number
ERRATUM_ID = re.compile(r"\b(" + "|".join(PAPERS) + r")-(\d+)\b")
RECORDS = ROOT / "docs" / "verification"


def _files(*roots: str, suffixes=(".py", ".md", ".yml", ".txt")) -> list[Path]:
    out = []
    for r in roots:
        path = ROOT / r
        if path.is_file():
            out.append(path)
            continue
        out += [p for p in sorted(path.rglob("*")) if p.is_file() and p.suffix in suffixes
                and RECORDS not in p.parents and "__pycache__" not in p.parts]
    return out


def old_labels(text: str) -> list[str]:
    """The spec-style erratum labels ("erratum E13") in `text`, whitespace normalised."""
    return [" ".join(m.group(0).split()) for m in OLD_LABEL.finditer(text)]


def test_old_labels_are_found():
    """Negative control: the pattern catches each form the old labels took, and not code or the new IDs."""
    text = ("μ⁺_min/γ (erratum E5) | Erratum E10: it | (corrected, erratum E9). | escape temperature is 0 (erratum\n"
            "    E12). | errata E1...E13 | (spec E13: CV 4 %)")
    assert old_labels(text) == ["erratum E5", "Erratum E10", "erratum E9", "erratum E12", "errata E1", "spec E13"]
    assert old_labels("E2 = E if E.ndim == 2 | erratum kramers-13 | spec kramers:eq15 | 1E-3") == []


def test_no_spec_style_erratum_labels():
    files = _files("grokclocks", "docs", "verify", "tests", "benchmarks", "README.md", "mkdocs.yml")
    assert len(files) > 100
    found = [f"{p.relative_to(ROOT)}: {label}" for p in files if p != Path(__file__).resolve()
             for label in old_labels(p.read_text(encoding="utf-8", errors="replace"))]
    assert not found, ("spec-style erratum labels; name the erratum by its registry ID (e.g. 'erratum kramers-13', "
                       "see grokclocks.errata.ERRATA):\n" + "\n".join(found))


@pytest.mark.parametrize("root", ["grokclocks", "docs", "README.md"])
def test_every_named_erratum_exists(root):
    """An ID such as `kramers-13` named in the package or the docs is a record of `grokclocks.errata.ERRATA`."""
    known = {e.number for e in ERRATA}
    dangling = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in _files(root)
                for m in ERRATUM_ID.finditer(p.read_text(encoding="utf-8", errors="replace"))
                if m.group(0) not in known]
    assert not dangling, "erratum IDs with no record in grokclocks.errata:\n" + "\n".join(dangling)
