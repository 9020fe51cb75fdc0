"""The property registry: every public callable of grokclocks has an :class:`~kinds.Entry` here or
an :class:`~kinds.Exempt` with its reason (``tests/test_properties.py`` enforces it)."""

from __future__ import annotations

from .entries_clocks import ENTRIES as _CLOCKS
from .entries_coverage import ENTRIES as _COVERAGE
from .entries_kramers import ENTRIES as _KRAMERS
from .entries_levi import ENTRIES as _LEVI
from .entries_repulsion import ENTRIES as _REPULSION
from .entries_spectral import ENTRIES as _SPECTRAL
from .kinds import Entry, Exempt

ENTRIES: list[Entry] = [*_LEVI, *_CLOCKS, *_SPECTRAL, *_KRAMERS, *_COVERAGE, *_REPULSION]

EXEMPT: list[Exempt] = []
