"""JSON under the door's rules: a nesting limit, no integer of more than `MAX_JSON_INT_DIGITS` digits, no key
twice in one object; the C scanner throughout."""

from __future__ import annotations

import json
import re
from typing import Any

from ._limits import MAX_JSON_DEPTH, MAX_JSON_INT_DIGITS


def _parse_int(text: str) -> int:
    if len(text) - text.startswith("-") > MAX_JSON_INT_DIGITS:
        raise _LongInt(len(text) - text.startswith("-"))
    return int(text)


class _LongInt(ValueError):
    pass


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return d


# one decoder each (json.loads(..., object_pairs_hook=) builds one a call); both use the C scanner
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)
_DECODER_INTS = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_int=_parse_int)
# a run of more than MAX_JSON_INT_DIGITS digits (the lookbehind starts a match only where a run starts: linear)
_LONG_DIGITS = re.compile(r"(?<![0-9])[0-9]{%d}" % (MAX_JSON_INT_DIGITS + 1))


def json_depth(obj: Any) -> int:
    """How deeply lists and dicts nest in `obj` (0 for a scalar), without recursion."""
    if isinstance(obj, dict) and not any(isinstance(v, (dict, list)) for v in obj.values()):
        return 1  # a flat record, the common case: no walk
    deepest, stack = 0, [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, dict):
            children = o.values()
        elif isinstance(o, list):
            children = o
        else:
            continue
        deepest = max(deepest, d)
        if d > MAX_JSON_DEPTH:
            return d
        stack.extend((c, d + 1) for c in children if isinstance(c, (dict, list)))
    return deepest


