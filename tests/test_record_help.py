"""Record classes read well in `help()`: every field is listed with its meaning, and written down once.

A record class (dataclass or `typing.NamedTuple`) documents each field by the docstring right after it;
the API pages render those once.  Python drops them at run time, so `grokclocks._fielddocs` adds an
"Attributes" section built from them to the class's `__doc__`.  Checked here, for every public record
class (found by walking the package, so a new one is checked too):

* `help(cls)` names every field with its annotation and its whole docstring, the docstring as griffe
  (the API pages' parser) reads it from the source, not as the helper does;
* the source docstring of the class has no Attributes section of its own (the site showed each field
  twice when it had one);
* `import grokclocks` parses no source for it (the section is built when `help()` first asks).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import pydoc
import subprocess
import sys
import textwrap
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import griffe
import pytest

from grokclocks import _fielddocs

ROOT = Path(__file__).resolve().parents[1]

# Records whose check is expected to fail (strict xfails: a record that passes must leave its table).  Empty:
# grokclocks.verification's BudgetItem, PlanItem, Row and SuiteStatus, the last ones, document each field.
PENDING: dict[str, str] = {}  # help() lists every field with its docstring
PENDING_SOURCE: dict[str, str] = {}  # the class docstring has no Attributes section of its own


def _public_namespaces() -> list[str]:
    import grokclocks

    names = ["grokclocks"]
    for info in pkgutil.walk_packages(grokclocks.__path__, "grokclocks."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return sorted(names)


def _is_record(obj: object) -> bool:
    return inspect.isclass(obj) and (dataclasses.is_dataclass(obj) or (issubclass(obj, tuple)
                                                                        and hasattr(obj, "_fields")))


@lru_cache(maxsize=1)
def _records() -> dict[str, type]:
    """Every record class in the `__all__` of a public namespace, by its documented path."""
    out: dict[str, type] = {}
    for name in _public_namespaces():
        mod = importlib.import_module(name)
        for attr in getattr(mod, "__all__", ()):
            obj = getattr(mod, attr, None)
            if _is_record(obj):
                out.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return out


@lru_cache(maxsize=1)
def _package() -> griffe.Module:
    return griffe.load("grokclocks", search_paths=[str(ROOT)], docstring_parser="numpy", resolve_aliases=True)


def _griffe_class(path: str) -> griffe.Class:
    obj = _package()[path.removeprefix("grokclocks.")]
    return obj.final_target if obj.is_alias else obj


def _fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) else list(cls._fields)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _help_text(obj: object) -> str:
    """The class part of pydoc's text (up to the method list), without the ` |  ` margin."""
    text = pydoc.render_doc(obj, renderer=pydoc.plaintext)
    lines = [line[4:] if line.startswith(" |  ") else line.lstrip(" |") for line in text.splitlines()]
    text = "\n".join(lines)
    for stop in ("\nMethod resolution order:", "\nMethods defined here:", "\nData descriptors defined here:"):
        text = text.split(stop)[0]
    return text


def _field_docs_of_source(gcls: griffe.Class, name: str) -> str | None:
    member = gcls.all_members.get(name) if hasattr(gcls, "all_members") else gcls.members.get(name)
    if member is None:
        return None
    member = member.final_target if member.is_alias else member
    return member.docstring.value if member.docstring is not None else None


def _params(pending: dict[str, str]) -> list:
    return [pytest.param(p, id=p, marks=[pytest.mark.xfail(reason=pending[p], strict=True)] if p in pending else [])
            for p in sorted(_records())]


def test_the_walk_finds_the_records():
    """The records of the core and of the simulation layer are found (76 on 27.11.2026)."""
    found = _records()
    assert len(found) >= 70, len(found)
    for path in ("grokclocks.linear.GrokTimes", "grokclocks._results.Bounds", "grokclocks.runfile.Trajectory",
                 "grokclocks.sim.linear.LinearGDConfig", "grokclocks.coverage.OperatorNormBounds"):
        assert path in found
    assert set(PENDING) | set(PENDING_SOURCE) <= set(found)


@pytest.mark.parametrize("path", _params(PENDING))
def test_help_lists_every_field(path):
    cls = _records()[path]
    gcls = _griffe_class(path)
    text = _help_text(cls)
    flat = _flat(text)
    assert "\nAttributes\n----------\n" in text, f"help({path}) has no Attributes section"
    problems = []
    for name in _fields(cls):
        doc = _field_docs_of_source(gcls, name)
        if not doc or not doc.strip():
            problems.append(f"{name}: no docstring in the source")
        elif f"\n{name} : " not in text and f"\n{name}\n" not in text:
            problems.append(f"{name}: not listed")
        elif _flat(doc) not in flat:
            problems.append(f"{name}: its docstring is not in help() ({_flat(doc)[:60]!r}...)")
    assert not problems, f"help({path}):\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("path", _params(PENDING_SOURCE))
def test_source_docstring_has_no_attributes_section(path):
    """The per-field docstrings are the one source: the class docstring does not list the fields again."""
    gcls = _griffe_class(path)
    sections = gcls.docstring.parse("numpy", warnings=False) if gcls.docstring else []
    titles = [s.kind for s in sections]
    assert griffe.DocstringSectionKind.attributes not in titles
    assert "\nAttributes\n---" not in inspect.cleandoc(gcls.docstring.value if gcls.docstring else "")


# ----- the helper itself -----------------------------------------------------------------------------------

class _Point(NamedTuple):
    """A point.

    Notes
    -----
    A note.
    """

    x: float
    """The abscissa x,
    over two lines."""
    y: int
    """The ordinate y ≥ 0."""


@dataclasses.dataclass(frozen=True)
class _Base:
    """A base record."""

    a: int
    """The first field a."""


@dataclasses.dataclass(frozen=True)
class _Child(_Base):
    """A derived record."""

    b: str = "b"
    """The second field b."""


def test_document_fields_appends_the_section_before_later_sections():
    _fielddocs.document_fields(_Point)
    doc = _Point.__doc__
    assert doc.index("Attributes\n----------") < doc.index("Notes\n-----")
    assert "x : float\n    The abscissa x,\n    over two lines.\ny : int\n    The ordinate y ≥ 0." in doc
    assert _Point(1.0, 2).__doc__ == doc and inspect.getdoc(_Point) == doc.strip()
    assert _Point(1.0, 2) == (1.0, 2)  # still a plain tuple underneath


def test_document_fields_reads_inherited_fields_and_is_idempotent():
    _fielddocs.document_fields(_Child)
    first = _Child.__doc__
    _fielddocs.document_fields(_Child)
    assert _Child.__doc__ == first and first.count("Attributes") == 1
    assert "a : int\n    The first field a." in first and "b : str\n    The second field b." in first
    assert _Child(1).b == "b" and dataclasses.replace(_Child(1), b="c").b == "c"


def test_document_fields_without_source_lists_the_fields():
    """A class whose source cannot be found (no module file) still gets its fields, with their annotations."""
    ns: dict = {}
    exec(textwrap.dedent('''
        from typing import NamedTuple
        class Pair(NamedTuple):
            """A pair."""
            left: int
            """Left."""
            right: float
    '''), ns)
    pair = _fielddocs.document_fields(ns["Pair"])
    assert pair.__doc__ == "A pair.\n\nAttributes\n----------\nleft : int\nright : float\n"


def test_document_fields_leaves_other_classes_alone():
    class Plain:
        """Not a record."""

    assert _fielddocs.document_fields(Plain) is Plain and Plain.__doc__ == "Not a record."


def test_the_check_can_fail():
    """A record whose class docstring lists its fields again, or whose field has no docstring, is caught."""
    source = '''
from typing import NamedTuple

class Twice(NamedTuple):
    """Twice.

    Attributes
    ----------
    x : float
        The x.
    """

    x: float
    """The x."""
'''
    mod = griffe.visit("probe", filepath=Path("probe.py"), code=source, docstring_parser="numpy")
    kinds = [s.kind for s in mod["Twice"].docstring.parse("numpy", warnings=False)]
    assert griffe.DocstringSectionKind.attributes in kinds
    assert _field_docs_of_source(mod["Twice"], "x") == "The x."
    assert "\nAttributes\n----------\n" not in _help_text(NamedTuple("Bare", [("x", float)]))


def test_import_parses_no_source():
    """`import grokclocks` (and a face) only records where each record's source is; help() parses it."""
    code = ("import grokclocks, grokclocks.coverage\n"
            "from grokclocks import _fielddocs\n"
            "assert _fielddocs._module_tree.cache_info().currsize == 0\n"
            "from grokclocks.linear import GrokTimes\n"
            "assert 'Attributes' in GrokTimes.__doc__\n"
            "assert _fielddocs._module_tree.cache_info().currsize == 1\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr  # an assert of `code` failed: the import parsed a source, or help() did not


def test_attributes_section_comes_before_raises():
    """numpydoc's order: the generated Attributes section goes before Returns / Raises / Warns, not after them."""
    from grokclocks.verification import BudgetItem

    doc = BudgetItem.__doc__
    assert "\nRaises\n" in doc and doc.index("\nAttributes\n") < doc.index("\nRaises\n")
