"""The config record of a run file: a fixed registry of the engine's config classes, JSON in and out.

A run file stores the configuration of its run as `{"class": NAME, "fields": {...}}`.  `NAME` is a
stable name from a registry fixed in this file (`modular.TrainConfig`, `linear.LinearGDConfig`, ...),
never a module path: loading a run never imports a module or calls a function that the file names.
The fields are checked to be plain JSON data of the types the dataclass declares before the class is
called with them.  A config class of the caller's own is rebuilt only when the caller passes it (the
`config_classes` argument of `load_trajectory`); the file then selects among the caller's classes.

The registered classes live in the simulation layer, which imports JAX: a class is imported when a
file that names it is rebuilt, not when this module loads.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import sys
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .. import _safe_io
from .._validate import DomainError, show

# The run-file name of every config class of the engine, and where the class lives.  Fixed in code: a run
# file chooses among these names; nothing read from a file is imported.
_REGISTRY: dict[str, tuple[str, str]] = {
    "modular.TrainConfig": ("grokclocks.sim.modular", "TrainConfig"),
    "modular.ModularConfig": ("grokclocks.sim.modular", "ModularConfig"),
    "linear.LinearGDConfig": ("grokclocks.sim.linear", "LinearGDConfig"),
    "linear.SpectralConfig": ("grokclocks.sim.linear", "SpectralConfig"),
    "linear.TwoLayerConfig": ("grokclocks.sim.linear", "TwoLayerConfig"),
    "linear.FreshNoiseConfig": ("grokclocks.sim.linear", "FreshNoiseConfig"),
    "landscapes.PowerLandscapeConfig": ("grokclocks.sim.landscapes", "PowerLandscapeConfig"),
    "landscapes.DeepLinearConfig": ("grokclocks.sim.landscapes", "DeepLinearConfig"),
    "landscapes.SoftmaxRegressionConfig": ("grokclocks.sim.landscapes", "SoftmaxRegressionConfig"),
    "landscapes.FactorizedSoftmaxConfig": ("grokclocks.sim.landscapes", "FactorizedSoftmaxConfig"),
    "deep_linear.DeepLinearConfig": ("grokclocks.sim.deep_linear", "DeepLinearConfig"),
    "deep_linear.EndToEndFlowConfig": ("grokclocks.sim.deep_linear", "EndToEndFlowConfig"),
    "langevin.FPTConfig": ("grokclocks.sim.langevin", "FPTConfig"),
}

# The `module:qualname` strings that run files of formats 1 and 2 wrote for the same classes (the linear
# configs were briefly recorded under their private file), mapped to their registry names.
_LEGACY: dict[str, str] = {
    **{f"{module}:{attr}": name for name, (module, attr) in _REGISTRY.items()},
    **{f"grokclocks.sim.linear._configs:{attr}": name for name, (module, attr) in _REGISTRY.items()
       if module == "grokclocks.sim.linear"},
}

_NONFINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


class _Mismatch(Exception):
    """A value is not of the declared type (internal to `_coerce`)."""


def _qualified(cls: type) -> str:
    """`module:qualname` of a class, the name a caller's own config class is matched by."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _registered_name(cls: type) -> str | None:
    """The registry name of `cls`, or `None` when it is not one of the engine's config classes.

    Only classes already imported are compared (the class of an instance in hand is), so this imports nothing.
    """
    for name, (module, attr) in _REGISTRY.items():
        mod = sys.modules.get(module)
        if attr == cls.__name__ and mod is not None and getattr(mod, attr, None) is cls:
            return name
    return None


def _canonical_class(name: Any) -> Any:
    """The registry name of a recorded class name (an old `module:qualname` mapped); anything else unchanged."""
    return _LEGACY.get(name, name) if isinstance(name, str) else name


def _jsonable(x: Any) -> Any:
    """`x` as JSON data: dataclasses and mappings as objects, sequences and arrays as lists, ±inf/NaN as text."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _jsonable(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return _jsonable(x.item())
    if isinstance(x, np.ndarray) or (hasattr(x, "__array__") and hasattr(x, "shape")):  # numpy or JAX array
        return _jsonable(np.asarray(x).tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return x


def _config_obj(config: Any) -> dict[str, Any]:
    """The config record `{"class": NAME, "fields": {...}}` of `config` (`None` gives `None` for both).

    `NAME` is the registry name of an engine config class, else the class's `module:qualname` (a
    caller's own class, rebuilt only when the reader passes it in `config_classes`).
    """
    if config is None:
        return {"class": None, "fields": None}
    cls = type(config)
    return {"class": _registered_name(cls) or _qualified(cls), "fields": _jsonable(config)}


def config_to_json(config: Any) -> str:
    """JSON text of a config dataclass, tagged with the run-file name of its class.

    Parameters
    ----------
    config : dataclass instance or None
        The configuration of a run; `None` gives the record of a run without config.  An engine
        config class is named by its registry name (e.g. `modular.TrainConfig`), any other class
        by its `module:qualname`.

    Returns
    -------
    str
        The JSON object `{"class": ..., "fields": {...}}` that `config_from_json` reads back.
    """
    if config is None:
        return json.dumps(_config_obj(None))
    return json.dumps(_config_obj(config), indent=1)


def _trusted_classes(config_classes: Any) -> dict[str, type]:
    """`module:qualname` -> class for the caller's `config_classes` (dataclass types only)."""
    if config_classes is None:
        return {}
    if isinstance(config_classes, type):
        config_classes = (config_classes,)
    if isinstance(config_classes, (str, bytes)) or not isinstance(config_classes, Iterable):
        raise DomainError(f"config_classes must be an iterable of dataclass types (got {config_classes!r})")
    out: dict[str, type] = {}
    for c in config_classes:
        if not (isinstance(c, type) and dataclasses.is_dataclass(c)):
            raise DomainError(f"config_classes must hold dataclass types (got {c!r})")
        out[_qualified(c)] = c
    return out


def _config_class(name: Any, trusted: Mapping[str, type]) -> type:
    """The class a recorded config name stands for: a registered engine class, or one the caller trusts."""
    known = ", ".join(_REGISTRY)
    if not isinstance(name, str):
        raise DomainError(f"its config class must be a name, one of {known} (got {show(name)})")
    registered = _canonical_class(name)
    if registered in _REGISTRY:
        module, attr = _REGISTRY[registered]
        try:
            mod = importlib.import_module(module)  # a fixed module of grokclocks, never one named by the file
        except ImportError as exc:
            raise DomainError(f"its config class {registered} lives in the simulation layer, which needs JAX "
                              f"(pip install \"grokclocks[sim]\"); {exc}") from None
        return getattr(mod, attr)
    if name in trusted:
        return trusted[name]
    raise DomainError(f"its config class {show(name)} is not one of the engine's config classes ({known}); a run "
                      "file never decides which code is imported or called: if you trust that class, pass it "
                      "to the reader (load_trajectory(path, config_classes=[TheClass]))")


def _plain(v: Any) -> Any:
    """`v` checked to be plain JSON data (lists become tuples, the texts "inf", "-inf", "nan" floats)."""
    if v is None or isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, str):
        return _NONFINITE.get(v, v)
    if isinstance(v, (list, tuple)):
        return tuple(_plain(x) for x in v)
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        return {k: _plain(x) for k, x in v.items()}
    raise _Mismatch


def _coerce(v: Any, hint: Any) -> Any:
    """`v` (JSON data) as a value of the declared type `hint`; `_Mismatch` when it is not one.

    Understood: `int`, `float` (an int, or the texts "inf", "-inf", "nan"), `str`, `bool`, `None`,
    unions, `tuple[X, ...]`, `tuple[X, Y]`, bare `tuple` and `Any` (plain JSON data).  Any other
    annotation accepts plain JSON data only.
    """
    origin = typing.get_origin(hint)
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        for h in typing.get_args(hint):
            try:
                return _coerce(v, h)
            except _Mismatch:
                continue
        raise _Mismatch
    if hint is type(None) or hint is None:
        if v is None:
            return None
        raise _Mismatch
    if hint is bool:
        if isinstance(v, bool):
            return v
        raise _Mismatch
    if hint is int:
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        raise _Mismatch
    if hint is float:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return v
        if isinstance(v, str) and v in _NONFINITE:
            return _NONFINITE[v]
        raise _Mismatch
    if hint is str:
        if isinstance(v, str):
            return v
        raise _Mismatch
    if hint is tuple or origin is tuple:
        if not isinstance(v, (list, tuple)):
            raise _Mismatch
        args = typing.get_args(hint)
        if not args:
            return tuple(_plain(x) for x in v)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(x, args[0]) for x in v)
        if len(args) != len(v):
            raise _Mismatch
        return tuple(_coerce(x, h) for x, h in zip(v, args))
    return _plain(v)


def _hint_text(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else str(hint).replace("typing.", "")


def _config_from_obj(obj: Any, trusted: Mapping[str, type] | None = None) -> Any:
    """Rebuild a config from its record; every refusal is a `DomainError` saying why.

    The class comes from the registry or from `trusted` (`module:qualname` -> class, the caller's
    choice); every field must be a declared field, every required one present, and each value plain
    JSON data of the declared type.  Only then is the class called.
    """
    if not isinstance(obj, Mapping) or not {"class", "fields"} <= set(obj):
        raise DomainError("its config record is malformed (needs 'class' and 'fields')")
    if obj["class"] is None:
        if obj["fields"] is not None:
            raise DomainError(f"its config record has fields but no class (fields {show(obj['fields'], 80)})")
        return None
    cls = _config_class(obj["class"], trusted or {})
    name = _canonical_class(obj["class"])
    fields = obj["fields"]
    if not isinstance(fields, Mapping):
        raise DomainError(f"the fields of its config {name} must be a JSON object (got {show(fields, 80)})")
    declared = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(str(k) for k in fields if k not in declared)
    if unknown:
        raise DomainError(f"its config {name} has fields {show(unknown, 200)} that {cls.__name__} does not declare")
    missing = [k for k, f in declared.items() if k not in fields and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise DomainError(f"its config {name} lacks the required fields {missing}")
    try:
        hints = typing.get_type_hints(cls)
    except Exception as exc:  # noqa: BLE001 - any failure to evaluate the annotations
        # the field types cannot be known: refuse rather than rebuild the config from data nobody checked
        raise DomainError(f"its config {name}: the annotations of {cls.__name__} do not evaluate "
                          f"({type(exc).__name__}: {show(str(exc), 80)}), so the saved field types cannot be "
                          "checked; define the names its annotations use at the class's module level") from None
    kwargs = {}
    for k, v in fields.items():
        hint = hints.get(k, Any)
        try:
            kwargs[k] = _coerce(v, hint)
        except _Mismatch:
            raise DomainError(f"field {show(k)} of its config {name} must be {_hint_text(hint)} as plain JSON data "
                              f"(got {show(v, 80)})") from None
    try:
        return cls(**kwargs)
    except Exception as exc:  # the class's own checks (e.g. __post_init__) refuse the values
        raise DomainError(f"its config {name} rejects the saved fields: {type(exc).__name__}: {exc}") from None


def config_from_json(text: str, *, config_classes: Iterable[type] = ()) -> Any:
    """Rebuild a config written by `config_to_json` (lists become tuples).

    Parameters
    ----------
    text : str
        JSON text of a config record, `{"class": NAME, "fields": {...}}`.
    config_classes : iterable of dataclass types, optional
        Config classes of the caller's own to accept besides the engine's registered ones, matched by
        `module:qualname`.  Default: none, only the engine's config classes are rebuilt.

    Returns
    -------
    dataclass instance or None
        The rebuilt config (`None` for a record without class).

    Raises
    ------
    DomainError
        The text is not JSON, names a class that is neither registered nor in `config_classes`,
        or holds fields that the class does not declare or values not of the declared type.
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DomainError(f"text must be the JSON text of a config record (not UTF-8: {exc})") from None
    if not isinstance(text, str):
        raise DomainError(f"text must be the JSON text of a config record, a str (got {type(text).__name__})")
    try:
        obj = _JSON.json_loads(text, "text")
    except json.JSONDecodeError as exc:
        raise DomainError(f"text must be the JSON text of a config record ({exc})") from None
    return _config_from_obj(obj, _trusted_classes(config_classes))


# JSON text read through the safe-reading layer: nested at most 64 levels (deeper was a RecursionError)
_JSON = _safe_io.Reader(DomainError, limit_hint="", stream_hint="", content="a config record nests 3 or 4 levels")
