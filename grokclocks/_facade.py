"""Package faces: a package that keeps one concept per private submodule presents its public names as its own.

`set_home("grokclocks.linear", globals(), __all__)` in `grokclocks/linear/__init__.py` sets `__module__`
of every function and class it re-exports from its private submodules (and of their methods) to the
package, so that `help()`, pickling, the API pages, the property registry and the `@cites` registry
(`grokclocks.citations.coverage`) all name them by their documented path, `grokclocks.linear.grok_time`,
not by the file that holds them.  Record classes also get their fields listed in `help()`
(`grokclocks._fielddocs`), and the `.. math::` blocks of the package's `help()` texts are shown as Unicode
maths (`grokclocks._helpmaths`; the documentation site reads the source and keeps the LaTeX).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from . import citations
from ._fielddocs import document_fields
from ._helpmaths import render_help

__all__: list[str] = []


def _resolve_annotations(cls: type) -> None:
    """Evaluate the string annotations of `cls` (``from __future__ import annotations``) in the module that
    defines it (a NamedTuple holds them as ForwardRef), before the class is re-homed: afterwards `typing.get_type_hints` would look their names
    (`np`, `Any`, `Mapping`) up in the package face, which does not import them.  Annotations that do not
    evaluate in their own module either are left as they are."""
    own = cls.__dict__.get("__annotations__")
    if not own or not any(isinstance(v, (str, typing.ForwardRef)) for v in own.values()):
        return
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:  # noqa: BLE001 - e.g. a name imported only for type checkers: left unevaluated
        return
    cls.__annotations__ = {k: hints.get(k, v) for k, v in own.items()}


def _move(obj: Any, old: str, new: str) -> None:
    obj.__module__ = new
    citations._rename_module(f"{old}.{obj.__qualname__}", f"{new}.{obj.__qualname__}")


def set_home(package: str, namespace: Mapping[str, Any], names: Iterable[str], *, also: Iterable[str] = ()) -> None:
    """Give the objects `names` of `namespace` defined in a private submodule of `package` (or of one of the
    packages `also`, whose documented home `package` is) the home `package`.

    Record classes among them (dataclasses, NamedTuples) first get the Attributes section of their fields
    in `help()` (`grokclocks._fielddocs.document_fields`, which reads the source of the module that defines
    the class, so it runs before the class is re-homed). Last, the `help()` texts of the package (its
    docstring, the objects `names`) show their `.. math::` blocks as Unicode (`grokclocks._helpmaths`).
    """
    homes = (package, *also)
    for name in names:
        obj = namespace[name]
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        document_fields(obj)
        old = obj.__module__
        if not any(old.startswith(home + "._") for home in homes):
            continue
        if inspect.isclass(obj):
            _resolve_annotations(obj)
        _move(obj, old, package)
        if inspect.isclass(obj):
            for member in vars(obj).values():
                func = getattr(member, "__func__", member)  # staticmethod / classmethod
                if inspect.isfunction(func) and func.__module__ == old:
                    _move(func, old, package)
    render_help(namespace, names)
