"""The packages kramers, coverage, compare and task keep the faces they had as modules (issue 17)."""

from __future__ import annotations

import importlib
import pickle
import pkgutil
import subprocess
import sys

import pytest

import grokclocks
from grokclocks import citations

PACKAGES = ("grokclocks.kramers", "grokclocks.coverage", "grokclocks.compare", "grokclocks.task")


@pytest.mark.parametrize("name", PACKAGES)
def test_public_objects_belong_to_the_package(name):
    mod = importlib.import_module(name)
    for attr in mod.__all__:
        obj = getattr(mod, attr)
        home = getattr(obj, "__module__", None)
        if callable(obj) and isinstance(home, str) and home.startswith("grokclocks."):
            assert not home.startswith(name + "._"), f"{name}.{attr} reports module {home}"
            if home == name:
                assert pickle.loads(pickle.dumps(obj)) is obj


def test_submodules_are_private_and_citations_name_the_package():
    for name in PACKAGES:
        subs = [m.name for m in pkgutil.iter_modules(importlib.import_module(name).__path__)]
        assert subs and all(s.startswith("_") for s in subs), (name, subs)
    importlib.import_module("grokclocks.compare")
    recorded = [n for ids in citations._REGISTRY.values() for n in ids]
    assert not [n for n in recorded if any(n.startswith(p + "._") for p in PACKAGES)]
    assert "grokclocks.kramers.eyring_kramers_time" in recorded
    assert "grokclocks.task.as_mask" in recorded


def test_no_jax_at_import():
    code = ("import grokclocks, grokclocks.task, grokclocks.kramers, grokclocks.coverage, grokclocks.compare, sys; "
            "assert 'jax' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(grokclocks.__path__[0] + "/.."))


def _public_modules() -> list[str]:
    import pkgutil

    return sorted(m.name for m in pkgutil.walk_packages(grokclocks.__path__, "grokclocks.")
                  if "._" not in m.name and not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", _public_modules())
def test_record_annotations_evaluate_in_the_face(name):
    """Every public record class (a class with annotations, re-homed to its package face or not) gives its type
    hints: `_facade.set_home` evaluates them in the module that defines them before the move, so
    `typing.get_type_hints` (the run-file reader's field check, dataclass tools, type checkers at run time)
    does not look `np`, `Any` or `Path` up in a face that does not import them (33 of 88 failed before)."""
    if name.startswith("grokclocks.sim"):
        pytest.importorskip("jax")
    import typing

    mod = importlib.import_module(name)
    records = [getattr(mod, n) for n in getattr(mod, "__all__", ()) if isinstance(getattr(mod, n), type)
               and "__annotations__" in vars(getattr(mod, n))]
    for cls in records:
        assert typing.get_type_hints(cls), f"{name}.{cls.__name__}"
