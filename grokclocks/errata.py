"""Errata as data: one record per paper statement grokclocks corrects, with its evidence.

`docs/errata.md` is generated from `ERRATA` (`python docs/gen_pages.py`), and
`tests/test_errata.py` checks that every record names a test or verify check that exists, so the
page and the evidence cannot drift apart.
"""

from __future__ import annotations

from . import _validate as V
from ._fielddocs import document_records
from ._papers import Erratum, paper_modules
from .citations import PAPERS, SPEC

__all__ = ["Erratum", "ERRATA", "check_erratum", "errata_for", "to_markdown"]


def __dir__() -> list[str]:
    """`dir()` of this module: its API (`__all__`) and its private names, not the names it imports."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("_"))})


def check_erratum(e: Erratum) -> Erratum:
    """Check an erratum record: its spec IDs exist and its number is `<paper>-<n>` of their paper.

    Parameters
    ----------
    e : Erratum
        The record to check.

    Returns
    -------
    Erratum
        `e` itself, unchanged.

    Raises
    ------
    DomainError
        If `e` is not an `Erratum`.
    UnknownKey
        If a spec ID of `e` is not registered, or `e.number` does not start with the paper key
        of its spec IDs (a `DomainError` and a `KeyError`).
    """
    if not isinstance(e, Erratum):
        raise V.DomainError(f"e must be an Erratum record (got {V.show(e)})")
    for i in e.spec_ids:
        if i not in SPEC:
            raise V.UnknownKey(f"erratum {e.number} names unknown spec ID {i!r} (e.spec_ids must be registered)")
        if not e.number.startswith(i.split(":", 1)[0] + "-"):
            raise V.UnknownKey(f"erratum {e.number}: number it '<paper>-<n>' after its spec ID {i!r} (e.number)")
    return e

ERRATA: tuple[Erratum, ...] = tuple(
    check_erratum(e) for m in paper_modules() for e in getattr(m, "ERRATA", ()))
"""Every erratum of the implemented papers, in paper order (each checked by `check_erratum` at import)."""


def errata_for(spec_id: str) -> list[Erratum]:
    """All errata that touch a spec ID.

    Parameters
    ----------
    spec_id : str
        A registered spec ID, `"<paper>:<label>"`, e.g. `"levi:eq15"`.

    Returns
    -------
    list of Erratum
        The records whose `spec_ids` include `spec_id`, in `ERRATA` order; `[]` if none.

    Raises
    ------
    UnknownKey
        If `spec_id` is not a registered spec ID (a `DomainError` and a `KeyError`).
    """
    if not isinstance(spec_id, str) or spec_id not in SPEC:
        raise V.UnknownKey(f"spec_id must be a registered spec ID such as 'levi:eq15' (got {V.show(spec_id)})")
    return [e for e in ERRATA if spec_id in e.spec_ids]


def to_markdown() -> str:
    """The errata page `docs/errata.md` as Markdown, generated from `ERRATA`.

    Returns
    -------
    str
        One table per paper with errata: number, spec IDs, where, what the paper says, what is
        correct, the evidence and the checks that show it.
    """
    lines = [
        "# Errata",
        "",
        "Statements of the source papers that grokclocks corrects. This page is generated from",
        "`grokclocks.errata.ERRATA` (`python docs/gen_pages.py`); each row names",
        "the test or verify check that shows the correction.",
        "",
    ]
    for key, paper in PAPERS.items():
        rows = [e for e in ERRATA if e.number.startswith(key + "-")]
        if not rows:
            continue
        lines += [f"## {paper.text}", ""]
        lines += ["| # | spec IDs | where | paper says | correct | evidence | shown by |",
                  "|---|---|---|---|---|---|---|"]
        for e in rows:
            cells = [e.number, ", ".join(f"`{i}`" for i in e.spec_ids), e.where, e.paper, e.correct,
                     e.evidence, "<br>".join(f"`{c}`" for c in e.checks)]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        lines.append("")
    return "\n".join(lines)


document_records(globals(), __all__)  # help() of each record class lists its fields


if __name__ == "__main__":  # pragma: no cover
    print(to_markdown())
