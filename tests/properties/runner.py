"""Draw calls from a registry :class:`~kinds.Entry` and classify what a call does.

Shared by ``tests/test_properties.py`` (which asserts) and ``benchmarks/fuzz_api.py`` (which counts).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from hypothesis import strategies as st

from .kinds import Entry

MODES = ("typical", "extreme", "invalid")


_STRATEGIES: dict[tuple, Any] = {}


def _cached(key: tuple, make: Any) -> Any:
    """Strategies are built once per entry (building one costs more than drawing from it)."""
    if key not in _STRATEGIES:
        _STRATEGIES[key] = make()
    return _STRATEGIES[key]


def _typical_params(entry: Entry, n: int) -> dict[str, Any]:
    return _cached(("typical-params", id(entry), n), lambda: {k: p.typical(n) for k, p in entry.params.items()})


def typical_call(entry: Entry) -> Any:
    """Strategy of ``(n, kwargs)`` for a typical valid call."""

    @st.composite
    def draw_call(draw):
        n = draw(st.sampled_from((0, 3))) if entry.vec else 0
        kw: dict[str, Any] = {}
        if entry.build is not None:
            kw.update(draw(_cached(("build", id(entry), n), lambda: entry.build(n)), label="built"))
        for name, strategy in _typical_params(entry, n).items():
            if name not in kw:
                kw[name] = draw(strategy, label=name)
        return n, kw

    return _cached(("typical", id(entry)), draw_call)


def extreme_call(entry: Entry) -> Any:
    """Strategy of ``kwargs``: a typical call with one or more arguments at an extreme value."""
    names = [k for k, p in entry.params.items() if p.extreme is not None]

    @st.composite
    def draw_call(draw):
        n, kw = draw(typical_call(entry))
        if not names:
            return kw
        chosen = draw(_cached(("extreme-names", id(entry)), lambda: st.lists(
            st.sampled_from(names), min_size=1, max_size=len(names), unique=True)))
        for name in chosen:
            kw[name] = draw(_cached(("extreme", id(entry), name, n), lambda: entry.params[name].extreme(n)),
                            label=f"extreme {name}")
        return kw

    return _cached(("extreme-call", id(entry)), draw_call)


def invalid_names(entry: Entry) -> list[str]:
    names = [k for k, p in entry.params.items() if p.invalid is not None]
    return names + [k for k in entry.bad if k not in names]


def invalid_call(entry: Entry) -> Any:
    """Strategy of ``(kwargs, name)``: a typical call with argument ``name`` made invalid."""
    names = invalid_names(entry)

    base = typical_call(entry)
    if entry.raises is not None and entry.filter_invalid:
        base = _cached(("valid-everywhere", id(entry)), lambda: base.filter(lambda nk: not entry.raises(**nk[1])))

    @st.composite
    def draw_call(draw):
        n, kw = draw(base)
        name = draw(st.sampled_from(names), label="invalid parameter")
        if name in entry.bad:
            kw[name] = draw(entry.bad[name](n, kw), label=f"invalid {name}")
        else:
            kw[name] = draw(entry.params[name].invalid(n, kw.get(name)), label=f"invalid {name}")
        return kw, name

    return _cached(("invalid-call", id(entry)), draw_call)


# ---------------------------------------------------------------- outcome of a result


def _leaves(x: Any, depth: int = 0):
    if depth > 6 or x is None or isinstance(x, (str, bytes, bool, np.bool_)):
        return
    if isinstance(x, (int, float, complex, np.number)):
        yield x
        return
    if isinstance(x, Mapping):
        for v in x.values():
            yield from _leaves(v, depth + 1)
        return
    if isinstance(x, (tuple, list)):
        for v in x:
            yield from _leaves(v, depth + 1)
        return
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            yield from _leaves(getattr(x, f.name), depth + 1)
        return
    if hasattr(x, "__array__") and hasattr(x, "dtype"):
        a = np.asarray(x)
        if a.dtype.kind in "fc":
            yield a


def nonfinite(result: Any) -> str | None:
    """``"nan"`` if any numeric leaf of ``result`` is NaN, ``"inf"`` if any is +-inf, else None."""
    has_inf = False
    for leaf in _leaves(result):
        a = np.asarray(leaf)
        if a.dtype.kind not in "fc":
            continue
        if np.isnan(a).any():
            return "nan"
        if np.isinf(a).any():
            has_inf = True
    return "inf" if has_inf else None


@dataclasses.dataclass
class Outcome:
    """``kind``: domain (DomainError), diverged (SimulationDiverged), value (finite), inf, nan, error (other
    exception), suspect."""

    kind: str
    detail: str = ""
    result: Any = None


def call(entry: Entry, func: Any, kw: dict) -> Outcome:
    """Call ``func(**kw)`` and classify the outcome."""
    from grokclocks import DomainError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                result = func(**kw)
    except DomainError as e:
        return Outcome("domain", str(e))
    except Exception as e:  # noqa: BLE001
        if type(e).__name__ == "SimulationDiverged":  # the documented error of a diverging simulation
            return Outcome("diverged", str(e)[:200])
        return Outcome("error", f"{type(e).__name__}: {str(e)[:200]}")
    except Exception as e:  # noqa: BLE001 -- any other exception type is what we count
        return Outcome("error", f"{type(e).__name__}: {str(e)[:200]}")
    nf = nonfinite(result)
    if nf == "nan":
        return Outcome("nan", "", result)
    if nf == "inf":
        return Outcome("inf", "", result)
    if entry.check is not None:
        msg = entry.check(result, kw)
        if msg:
            return Outcome("suspect", msg, result)
    return Outcome("value", "", result)


def short(kw: Mapping[str, Any]) -> str:
    """One-line summary of the arguments of a call."""
    def show(v: Any) -> str:
        if isinstance(v, np.ndarray) and v.ndim:
            return f"array{v.shape}[{', '.join(map(str, v.ravel()[:3]))}{', ...' if v.size > 3 else ''}]"
        text = " ".join(repr(v).split())
        return text if len(text) <= 40 else text[:37] + "..."

    return ", ".join(f"{k}={show(v)}" for k, v in kw.items())


def ok_message(msg: str, names: tuple[str, ...]) -> bool:
    """A DomainError message names one of ``names``."""
    return any(n in msg for n in names)


def isfinite_number(x: Any) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False
