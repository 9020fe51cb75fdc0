"""Argument checks and helpers of `train_modular`: metrics, Adam betas, levels, hooks, model keywords, split
sizes, grid axes.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..._validate import as_float_array, DomainError
from ._model_table import ModularModel


def _describe(tracker: Any) -> str:
    """Stable text of a tracker for the config (functions as module:qualname, no addresses)."""
    def fmt(v: Any) -> str:
        if callable(v):
            return f"{getattr(v, '__module__', '?')}:{getattr(v, '__qualname__', type(v).__name__)}"
        return repr(v)

    if dataclasses.is_dataclass(tracker) and not isinstance(tracker, type):
        fields = ", ".join(f"{f.name}={fmt(getattr(tracker, f.name))}" for f in dataclasses.fields(tracker))
        return f"{type(tracker).__name__}({fields})"
    return fmt(tracker)


BUILTIN_METRICS: tuple[str, ...] = ("loss_train", "loss_test", "acc_train", "acc_test", "param_norm")
"""Metrics that `train_modular` always records (hook and tracker names must differ from them)."""


def _betas(betas: Any) -> tuple[float, float]:
    """Adam's `(b1, b2)`: a pair of finite numbers, each in [0, 1)."""
    if isinstance(betas, (str, bytes)) or np.ndim(betas) != 1 or np.size(betas) != 2:
        raise DomainError(f"betas must be a pair (b1, b2), each in [0, 1) (got {betas!r})")
    b = as_float_array(betas, "betas")
    if np.any((b < 0) | (b >= 1)):
        raise DomainError(f"betas must be a pair (b1, b2), each in [0, 1) (got {tuple(b.tolist())})")
    return float(b[0]), float(b[1])


def _level(x: Any, name: str) -> float:
    """An accuracy level in (0, 1]."""
    v = float(as_float_array(x, name))
    if not 0.0 < v <= 1.0:
        raise DomainError(f"{name} must be in (0, 1] (got {v!r})")
    return v


def _hook_items(hooks: Any) -> tuple[tuple[str, Any], ...]:
    """`hooks` as sorted `(name, fn)` pairs: string names, not built-in metric names, callable values."""
    if hooks is None:
        return ()
    if not isinstance(hooks, Mapping):
        raise DomainError(f"hooks must be a dict name -> fn(params, inputs) (got {type(hooks).__name__})")
    for name, fn in hooks.items():
        if not isinstance(name, str) or not name:
            raise DomainError(f"hook names must be non-empty strings (got {name!r})")
        if name in BUILTIN_METRICS:
            raise DomainError(f"hook name {name!r} collides with a built-in metric {BUILTIN_METRICS}; "
                              "choose another name")
        if not callable(fn):
            raise DomainError(f"hook {name!r} must be callable fn(params, inputs) (got {fn!r})")
    return tuple(sorted(hooks.items()))


def _no_tracker_collision(hook_items: Sequence[tuple[str, Any]], tracker_items: Sequence[tuple[str, Any]]) -> None:
    """A hook may not take a tracker's recorded name (`name` or `name.key`)."""
    for h, _ in hook_items:
        for t, _ in tracker_items:
            if h.startswith(t + "."):
                raise DomainError(f"hook name {h!r} collides with the readout of tracker {t!r} ({t}.<key>)")


def _model_kwargs(spec: ModularModel, model: str, model_kwargs: Any) -> dict[str, Any]:
    """`model_kwargs` checked against the model's `init` signature (names it does not take are an error)."""
    if model_kwargs is None:
        return {}
    if not isinstance(model_kwargs, Mapping):
        raise DomainError(f"model_kwargs must be a dict (got {type(model_kwargs).__name__})")
    kwargs = dict(model_kwargs)
    if "dtype" in kwargs:
        raise DomainError("model_kwargs must not set dtype: pass dtype= to train_modular")
    params = inspect.signature(spec.init).parameters
    if not any(q.kind is q.VAR_KEYWORD for q in params.values()):
        accepted = [n for n, q in list(params.items())[2:] if n != "dtype" and q.kind is not q.VAR_POSITIONAL]
        unknown = sorted(set(kwargs) - set(accepted))
        if unknown:
            raise DomainError(f"model_kwargs: {model!r} takes {accepted}, not {unknown}")
    return kwargs


N_TRAIN_RULES: tuple[str, ...] = ("floor", "round")
"""How a random split's size follows from its fraction (`train_modular`'s `n_train_rule`).

`"floor"`: int(frac·p²), the papers' code; `"round"`: round(frac·p²), Levi et al. App. G.
"""


def _split_size(p: int, frac: float, rule: str) -> dict[str, Any]:
    """Keyword of `grokclocks.task.random_split_mask` for `rule`: `frac` (int(frac p²)) or `n_train`."""
    if rule == "floor":
        return {"frac": frac}
    if not 0.0 < frac < 1.0:
        raise DomainError(f"train_frac must be in (0, 1) (got {frac})")
    return {"n_train": int(round(frac * p * p))}


def _grid_values(value: Any, name: str, check: Any) -> tuple[float, ...]:
    arr = np.atleast_1d(np.asarray(value, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise DomainError(f"{name} must be a scalar or a non-empty 1-D sequence (got shape {arr.shape})")
    return tuple(float(check(v, name)) for v in arr)
