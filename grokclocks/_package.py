"""A package face over private submodules: its public objects belong to the package.

``grokclocks.kramers`` (and ``coverage``, ``compare``) are packages whose files each hold one concept
(``_ridge.py``, ``_escape.py``, ...).  :func:`adopt`, called at the end of the package's
``__init__``, makes every public object of ``__all__`` look as it did when the package was one
module: its ``__module__`` is the package (so ``repr``, pickling, the docs and the property registry
name ``grokclocks.kramers.eyring_kramers_time``, never ``grokclocks.kramers._escape...``), and the
``@cites`` registry records it under that name (``docs/coverage.md`` and the traceability page are
unchanged).
"""

from __future__ import annotations

from typing import Any

from . import citations


def adopt(package: str, names: list[str], namespace: dict[str, Any]) -> None:
    """Re-home the objects ``names`` of ``namespace`` defined in ``package``'s private submodules."""
    prefix = package + "._"
    renamed: dict[str, str] = {}
    for name in names:
        obj = namespace[name]
        module = getattr(obj, "__module__", None)
        if not (isinstance(module, str) and module.startswith(prefix)) or not hasattr(obj, "__qualname__"):
            continue
        renamed[f"{module}.{obj.__qualname__}"] = f"{package}.{obj.__qualname__}"
        obj.__module__ = package
    if renamed:
        for ids in citations._REGISTRY.values():
            ids[:] = [renamed.get(n, n) for n in ids]
