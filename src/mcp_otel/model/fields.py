"""Reading one field of what the SDKs hand us (a wire dict, a pydantic model of either major, any
object) without a failing attribute lookup: pydantic answers a missing attribute by raising and
catching an ``AttributeError`` in Python, the dearest step of a request's hot path (two per
request on mcp 1.x before this module)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

_ABSENT: Any = object()


def field(value: Any, name: str) -> Any:
    """``value``'s field ``name`` (a dict's key, a model's field or extra, an attribute), or
    ``None`` when it has none."""
    if isinstance(value, dict):
        return value.get(name)
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict) and name in fields:
        return fields[name]
    extra = getattr(value, "__pydantic_extra__", _ABSENT)
    if extra is not _ABSENT:
        # A pydantic model: past its fields, only its extras (extra="allow") or the class has it.
        found = extra.get(name, _ABSENT) if isinstance(extra, dict) else _ABSENT
        if found is not _ABSENT:
            return found
        return getattr(value, name, None) if _on_class(value.__class__, name) else None
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


@lru_cache(maxsize=256)
def _on_class(kind: Any, name: str) -> bool:
    """The class (or a base) defines ``name``: a property, a method, a class attribute."""
    return any(name in klass.__dict__ for klass in kind.__mro__)
