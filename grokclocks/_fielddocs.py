"""Record classes in `help()`: an "Attributes" section built from the per-field docstrings.

A record class (a dataclass or a `typing.NamedTuple`) documents each field by a string literal right after
the field, the convention the API pages render (one entry per field).  Python drops those strings when it
runs the class body, so `help(SomeRecord)` would say nothing about the fields.  `document_fields` makes
the class's runtime `__doc__` its docstring plus a numpy-style "Attributes" section listing every field
as `name : annotation` and its docstring, read from the class's source file.

The section is built on the first read of `__doc__` (by `help()`, `inspect.getdoc`, pydoc), not at
import: `document_fields` only records where the class's source is (a few microseconds), and the source
file is parsed with `ast` (never run) when the text is first asked for.  A class whose source cannot be
read (a frozen application without `.py` files) lists its fields with their annotations only.  The
source docstrings themselves carry no Attributes section: the per-field docstrings are the one source.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import sys
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from ._helpmaths import render_help

__all__: list[str] = []

# the numpy sections that come after "Attributes" in a class docstring; the section goes before the first
_LATER_SECTIONS = ("Returns", "Yields", "Receives", "Other Parameters", "Raises", "Warns", "Warnings", "Methods",
                   "See Also", "Notes", "References", "Examples")
_HEADING = re.compile(r"^(?P<title>[A-Z][A-Za-z ]*)\n-{3,}[ \t]*$", re.MULTILINE)


def is_record(obj: Any) -> bool:
    """Whether `obj` is a record class: a dataclass or a `typing.NamedTuple` class."""
    return inspect.isclass(obj) and (dataclasses.is_dataclass(obj)
                                     or (issubclass(obj, tuple) and hasattr(obj, "_fields")))


def field_names(cls: type) -> list[str]:
    """The fields of the record class `cls`, in declaration order."""
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    return list(cls._fields)


class _RecordDoc:
    """The `__doc__` of a record class: its docstring and, built on first read, the Attributes section."""

    __slots__ = ("base", "cls", "source", "_text")

    def __init__(self, base: str | None, cls: type, source: tuple[str, str] | None) -> None:
        self.base, self.cls, self.source, self._text = base, cls, source, None

    def __get__(self, obj: Any, owner: type | None = None) -> str:
        if self._text is None:
            self._text = _with_attributes(self.base, self.cls)
        return self._text


def document_fields(cls: type) -> type:
    """Give the record class `cls` a `__doc__` that ends with an Attributes section of its fields.

    Call it while `cls.__module__` still names the module that defines the class (the package faces
    call it before they re-home the class, `grokclocks._facade.set_home`).  Calling it again, or on a
    class that is no record, does nothing.

    Parameters
    ----------
    cls : type
        Any class; only a dataclass or a `typing.NamedTuple` class is changed.

    Returns
    -------
    type
        `cls` itself, so that the function also works as a class decorator.
    """
    if not is_record(cls) or isinstance(cls.__dict__.get("__doc__"), _RecordDoc):
        return cls
    cls.__doc__ = _RecordDoc(cls.__dict__.get("__doc__"), cls, _source_of(cls))
    return cls


def document_records(namespace: Mapping[str, Any], names: Iterable[str]) -> None:
    """Apply `document_fields` to every record class among the objects `names` of `namespace`, then show the
    `.. math::` blocks of the module's `help()` texts as Unicode (`grokclocks._helpmaths.render_help`).

    Parameters
    ----------
    namespace : mapping of str to object
        A module's namespace, e.g. its `globals()`.
    names : iterable of str
        The names to look at, each a key of `namespace`, e.g. the module's `__all__`.
    """
    names = list(names)
    for name in names:
        document_fields(namespace[name])
    render_help(namespace, names)


def _source_of(cls: type) -> tuple[str, str] | None:
    """(source file, qualified name) of `cls`, from the module that defines it now; `None` if unknown."""
    path = getattr(sys.modules.get(cls.__module__), "__file__", None)
    return (path, cls.__qualname__) if path and path.endswith(".py") else None


def _class_source(cls: type) -> tuple[str, str] | None:
    recorded = cls.__dict__.get("__doc__")
    return recorded.source if isinstance(recorded, _RecordDoc) else _source_of(cls)


@lru_cache(maxsize=64)
def _module_tree(path: str) -> ast.Module | None:
    try:
        with open(path, encoding="utf-8") as f:
            return ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None


def _own_field_docs(cls: type) -> dict[str, str]:
    """The docstrings written right after the annotated names in the body of `cls` (not its bases)."""
    source = _class_source(cls)
    tree = _module_tree(source[0]) if source else None
    if tree is None:
        return {}
    body: list[ast.stmt] = tree.body
    for part in source[1].split("."):
        node = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if node is None:
            return {}
        body = node.body
    out = {}
    for stmt, nxt in zip(body, body[1:]):
        if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)):
            out[stmt.target.id] = inspect.cleandoc(nxt.value.value)
    return out


def field_docs(cls: type) -> dict[str, str]:
    """Each field of the record class `cls` with its docstring ('' where it has none), bases included.

    Parameters
    ----------
    cls : type
        A dataclass or `typing.NamedTuple` class.

    Returns
    -------
    dict of str to str
        Field name -> its docstring (`inspect.cleandoc`-ed), in field order; a field of a base record
        class keeps the base's docstring unless the class documents it again.
    """
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if is_record(klass):
            docs.update(_own_field_docs(klass))
    return {name: docs.get(name, "") for name in field_names(cls)}


def _annotation(cls: type, name: str) -> str:
    for klass in cls.__mro__:
        ann = vars(klass).get("__annotations__", {})
        if name in ann:
            value = getattr(ann[name], "__forward_arg__", ann[name])  # NamedTuple keeps "float" as ForwardRef
            return value if isinstance(value, str) else inspect.formatannotation(value)
    return ""


def attributes_section(cls: type) -> str:
    """The numpy-style Attributes section of the record class `cls`: every field, its annotation, its docstring.

    Parameters
    ----------
    cls : type
        A dataclass or `typing.NamedTuple` class.

    Returns
    -------
    str
        The section, "Attributes" and its underline first, then `name : annotation` and the docstring
        indented by 4 for each field (a field without a docstring gets its line only).
    """
    lines = ["Attributes", "----------"]
    for name, doc in field_docs(cls).items():
        ann = _annotation(cls, name)
        lines.append(f"{name} : {ann}" if ann else name)
        lines += ["    " + line if line else "" for line in doc.splitlines()]
    return "\n".join(lines)


def _with_attributes(base: str | None, cls: type) -> str:
    text = inspect.cleandoc(base or "")
    if "Attributes" in _section_titles(text):
        return text
    section = attributes_section(cls)
    later = [m.start() for m in _HEADING.finditer(text) if m.group("title") in _LATER_SECTIONS]
    if later:
        return text[:later[0]] + section + "\n\n" + text[later[0]:]
    return f"{text}\n\n{section}\n" if text else section + "\n"


def _section_titles(text: str) -> set[str]:
    return {m.group("title") for m in _HEADING.finditer(text)}
