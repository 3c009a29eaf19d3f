"""Canonical JSON and content hashes: the same value gives the same bytes everywhere.

Dataclasses become objects of their compared fields (locations and sources are
left out), enums their values, tuples lists, and frozensets lists sorted by
their canonical text. Keys are sorted, separators compact, text UTF-8. Nothing
here depends on ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields, is_dataclass
from enum import Enum
from typing import Any

__all__ = ["JSONValue", "canonical_value", "canonical_json", "content_hash"]

JSONValue = None | bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"]


def canonical_value(value: Any) -> JSONValue:
    """A JSON value that stands for ``value``, independent of hashing order."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, Enum):
        return canonical_value(value.value)
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, JSONValue] = {}
        for f in fields(value):
            if f.compare:
                item = getattr(value, f.name)
                if f.metadata.get("omit_default") and item == f.default:
                    continue
                out[f.name] = canonical_value(item)
        return out
    if isinstance(value, tuple | list):
        return [canonical_value(v) for v in value]
    if isinstance(value, frozenset | set):
        items = [canonical_value(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, dict):
        return {str(k): canonical_value(v) for k, v in value.items()}
    raise TypeError(f"no canonical form for {type(value).__name__}")


def canonical_json(value: Any) -> str:
    """Canonical JSON text of ``value`` (sorted keys, compact, UTF-8)."""
    return json.dumps(
        canonical_value(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


def content_hash(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value``."""
    digest = hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
    return f"sha256:{digest}"
