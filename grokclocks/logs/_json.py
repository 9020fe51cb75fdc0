"""JSON logs: a list of records, a dict of lists, or a Hugging Face `trainer_state.json`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._sacred import is_sacred, sacred_table
from ._safe import json_loads, read_text
from ._table import LogError, _mapping_table, _records_table, _short, _Table

_HF_SUMMARY_KEYS = {"train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos"}


def _read_json(path: Path, max_bytes: int, named: Path) -> _Table:
    """A list of records, a dict of lists, or a `trainer_state.json` (its `log_history`)."""
    text = read_text(path, max_bytes, named=named)
    if not text.strip():
        raise LogError(f"{path.name}: the file is empty")
    try:
        obj = json_loads(text, path.name)
    except json.JSONDecodeError as exc:
        raise LogError(f"{path.name}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if isinstance(obj, Mapping) and "log_history" in obj:
        return _hf_table(obj, path.name)
    if is_sacred(obj):
        return sacred_table(obj, path.name)
    if isinstance(obj, list):
        return _records_table(obj, path.name, "json", lambda i: f"record {i}")
    if isinstance(obj, Mapping):
        return _mapping_table(obj, path.name, "json", text=True)
    raise LogError(f"{path.name}: a JSON log must be a list of records, a dict of lists or a trainer_state.json "
                   f"(got {type(obj).__name__})")


def _hf_table(state: Mapping[str, Any], source: str) -> _Table:
    hist = state["log_history"]
    if not isinstance(hist, list) or not hist:
        raise LogError(f"{source}: log_history is empty")
    keep = [(i, r) for i, r in enumerate(hist) if not (isinstance(r, Mapping) and _HF_SUMMARY_KEYS & set(r))]
    dropped = len(hist) - len(keep)
    tab = _records_table([r for _, r in keep], source, "hf", lambda j: f"log_history[{keep[j][0]}]")
    every = state.get("logging_steps", "?")
    every = every if isinstance(every, str) and len(every) <= 20 else _short(every, 20)
    tab.notes.append("Hugging Face trainer_state.json (log_history; 'loss' is the training loss averaged over "
                     f"each logging interval of {every} steps)")
    if dropped:
        tab.notes.append(f"skipped {dropped} closing summary record(s) (train_runtime, mean train_loss)")
    return tab


