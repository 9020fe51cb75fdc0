"""Per-paper registry data: spec IDs, implementing modules and errata.

One module per paper key (``levi``, ``clocks``, ``kramers``, ``uniformity``, ``repulsion``), each
defining

``SPEC_IDS``
    ``{spec ID: (status tag, title)}`` -- every result of the paper that the library registers;
``MODULES``
    the modules whose import registers the ``@cites`` decorations of that paper;
``ERRATA``
    a tuple of :class:`Erratum` records;
``WHERE``
    ``{spec ID: location in the paper}`` (equation, theorem, section; ASCII, it goes into BibTeX notes);
``NOT_IN_PAPER``
    ``{spec ID: (basis, what it is)}`` for the registered results that are not results of the paper:
    basis ``"own"`` (derived or built for grokclocks) or the key of the textbook in
    :data:`grokclocks.citations.REFERENCES` that states them.  Every spec ID is in exactly one of the two.

:mod:`grokclocks.citations` and :mod:`grokclocks.errata` assemble them; keeping one file per paper
lets a theory be added without touching the registry code.
"""

from __future__ import annotations

import dataclasses
import importlib
from types import ModuleType

PAPER_KEYS: tuple[str, ...] = ("levi", "clocks", "kramers", "uniformity", "repulsion")

__all__ = ["PAPER_KEYS", "Erratum", "paper_modules"]


@dataclasses.dataclass(frozen=True)
class Erratum:
    """A statement of a paper that the library corrects, with the evidence and the checks that show it."""

    number: str
    """Stable label `"<paper>-<n>"` (the spec's errata numbering), e.g. `"levi-3"`."""
    spec_ids: tuple[str, ...]
    """The spec IDs affected, e.g. `("levi:eq15",)`."""
    where: str
    """Location in the paper (equation, section, figure)."""
    paper: str
    """What the paper says."""
    correct: str
    """What is right (what grokclocks implements)."""
    evidence: str
    """The measured evidence, with numbers."""
    checks: tuple[str, ...]
    """pytest node IDs (`tests/...::test_x` or `verify/...::test_y`) that show it."""
    proof: str = "measured"
    """How the correction is established: `"measured"` (numbers: simulations, quadrature, root finding), or the
    pytest node ID of the test that derives it symbolically from the paper's own starting equation
    (`grokclocks.errata` fills it in; that test is also among `checks`)."""


def paper_modules() -> list[ModuleType]:
    """The registry modules of the papers that are implemented, in :data:`PAPER_KEYS` order."""
    out = []
    for key in PAPER_KEYS:
        name = f"{__name__}.{key}"
        try:
            out.append(importlib.import_module(name))
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    return out
