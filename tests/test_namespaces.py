"""Public namespaces show their API and nothing else: `dir(module)` lists no imported helper.

Every name in `dir(module)` that does not start with an underscore must be in the module's
`__all__` or be one of its public submodules (a package's submodule named without a leading
underscore, e.g. `grokclocks.sim.trackers` once imported).  `annotations` (left behind by
`from __future__ import annotations`), `set_home`, `np`, `jax`, `Any` and the like are leaks: they
show up in tab completion and `dir()`, and `grokclocks.annotations` looked like part of the API.
"""

from __future__ import annotations

import importlib
import types

import pytest

# The namespaces of the package face and of the simulation layer: each must be clean.
CLEAN = (
    "grokclocks",
    "grokclocks.errata",
    "grokclocks.sim",
    "grokclocks.sim.data",
    "grokclocks.sim.deep_linear",
    "grokclocks.sim.distributed",
    "grokclocks.sim.kramers",
    "grokclocks.sim.landscapes",
    "grokclocks.sim.langevin",
    "grokclocks.sim.linear",
    "grokclocks.sim.models",
    "grokclocks.sim.modular",
    "grokclocks.sim.repulsion",
    "grokclocks.sim.trackers",
    "grokclocks.sim.train",
)

# The other public namespaces: the names they leak today, which may only shrink (a new leak fails).
KNOWN = {
    "grokclocks.citations": {"Any", "Callable", "F", "Sequence", "TypeVar", "annotations", "dataclasses",
                             "functools", "importlib", "inspect", "paper_modules", "warnings"},
    "grokclocks.cli": {"DomainError", "FORMATTER", "Sequence", "annotations", "argparse", "sys"},
    "grokclocks.clocks": {"annotations", "set_home"},
    "grokclocks.compare": {"THEORIES", "annotations", "set_home"},
    "grokclocks.coverage": {"MED_VARIANTS", "METRICS", "annotations", "set_home"},
    "grokclocks.kramers": {"annotations", "set_home"},
    "grokclocks.linear": {"annotations", "set_home"},
    "grokclocks.logs": {"Any", "Callable", "DomainError", "Mapping", "Path", "Sequence", "annotations", "csv",
                        "dataclasses", "io", "json", "math", "np", "os", "re", "warnings", "zipfile"},
    "grokclocks.repulsion": {"DomainError", "annotations", "set_home"},
    "grokclocks.rmt": {"Callable", "NamedTuple", "V", "annotations", "cites", "integrate", "math", "np", "special",
                       "warnings"},
    "grokclocks.runfile": {"Any", "Callable", "DomainError", "Mapping", "NamedTuple", "OutputExistsError", "Path",
                           "annotations", "dataclasses", "file_path", "flag", "hashlib", "importlib", "json", "math",
                           "np", "os", "uuid", "warnings", "writable_file", "zipfile", "zlib"},
    "grokclocks.spectral": {"DomainError", "annotations", "set_home"},
    "grokclocks.task": {"Any", "Callable", "DomainError", "NamedTuple", "Sequence", "V", "annotations", "cites",
                        "flag", "integer_at_least", "math", "max_size", "np", "warnings"},
    "grokclocks.verification": {"Any", "Callable", "Path", "V", "annotations", "dataclasses", "json", "math", "np",
                                "platform"},
}


def _public_submodule(mod: types.ModuleType, name: str) -> bool:
    value = getattr(mod, name, None)
    return isinstance(value, types.ModuleType) and value.__name__ == f"{mod.__name__}.{name}"


def leaked(mod: types.ModuleType) -> list[str]:
    """Names of `dir(mod)` without a leading underscore that are neither in `__all__` nor public submodules."""
    exported = set(getattr(mod, "__all__", ()))
    return sorted(n for n in dir(mod) if not n.startswith("_") and n not in exported and not _public_submodule(mod, n))


@pytest.mark.parametrize("name", CLEAN)
def test_namespace_shows_only_its_api(name):
    mod = importlib.import_module(name)
    assert hasattr(mod, "__all__"), f"{name} defines no __all__"
    bad = leaked(mod)
    assert not bad, f"dir({name}) shows names that are not its API (not in __all__, not a public submodule): {bad}"
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing, f"{name}.__all__ names missing objects: {missing}"


# Package faces: they only import their API, so they drop what is left over instead of hiding it.
FACES = ("grokclocks", "grokclocks.sim", "grokclocks.sim.linear", "grokclocks.sim.train")


@pytest.mark.parametrize("name", FACES)
def test_faces_drop_their_helpers(name):
    """`from __future__ import annotations` binds `annotations`; `grokclocks.annotations` is not API."""
    mod = importlib.import_module(name)
    assert not [n for n in ("annotations", "set_home") if hasattr(mod, n)]


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_other_namespaces_leak_nothing_new(name):
    mod = importlib.import_module(name)
    new = sorted(set(leaked(mod)) - KNOWN[name])
    assert not new, f"dir({name}) shows new names that are not its API: {new}"


def test_private_names_stay_reachable():
    """Hiding imports from `dir()` changes neither attribute access nor the private names."""
    import grokclocks.sim.data as data

    assert data.np is importlib.import_module("numpy")
    assert {"_register", "_key_batch", "__name__", "__doc__"} <= set(dir(data))


def test_the_check_can_fail():
    mod = types.ModuleType("grokclocks_fake")
    mod.__all__ = ["f"]
    mod.f, mod.np, mod.annotations = (lambda: 0), object(), object()
    mod.sub = types.ModuleType("grokclocks_fake.sub")
    assert leaked(mod) == ["annotations", "np"]
