"""How a wrapped method's arguments arrive: each parameter's slot (position or keyword), read
from the method's signature once and cached, so wrappers read and replace arguments however the
caller passed them (fastmcp passes everything by keyword)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Any, NamedTuple


@dataclass(frozen=True)
class ArgumentSlot:
    """Where one parameter of a method arrives: by position (after ``self``) or by keyword."""

    name: str
    position: int | None  # None: keyword-only

    def get(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        if self.name in kwargs:
            return kwargs[self.name]
        if self.position is not None and self.position < len(args):
            return args[self.position]
        return None

    def replace(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], value: Any
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if self.name not in kwargs and self.position is not None and self.position < len(args):
            return (*args[: self.position], value, *args[self.position + 1 :]), kwargs
        return args, {**kwargs, self.name: value}


def slot_of(wrapped: Any, name: str) -> ArgumentSlot | None:
    """The slot of parameter ``name`` of ``wrapped`` (a bound method or its function), from the
    signature cache, which is keyed by the plain function (it holds no instance)."""
    return argument_slot(getattr(wrapped, "__func__", wrapped), name)


def arguments_of(wrapped: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any], *names: str) -> tuple[Any, ...]:
    """The values of parameters ``names`` in a call of ``wrapped`` (``None`` where absent)."""
    key = (getattr(wrapped, "__func__", wrapped), names)  # the plain function, as slot_of reads it
    reader = _READERS.get(key)  # runs for every request: one dict lookup
    if reader is None:
        if len(_READERS) >= _MAX_READERS:
            _READERS.clear()
        reader = _READERS[key] = _Reader.of(tuple(argument_slot(key[0], name) for name in names))
    # The SDKs pass their own calls' arguments by position: read by one itemgetter (a C call),
    # here, not in a function of the reader's (every request reads its hook's arguments). Other
    # parameters passed by keyword (the SDKs' timeouts, callbacks) change nothing.
    getter = reader.getter
    if getter is not None and len(args) >= reader.needed and not (kwargs and not reader.names.isdisjoint(kwargs)):
        return getter(args)
    return tuple([slot.get(args, kwargs) if slot is not None else None for slot in reader.slots])


class _Reader(NamedTuple):
    """How to read some parameters' values from a call: their slots, and when every one has a
    position, the C call that reads them all by position (when ``needed`` arguments came by
    position and none of ``names`` by keyword)."""

    slots: tuple[ArgumentSlot | None, ...]
    getter: Callable[[tuple[Any, ...]], tuple[Any, ...]] | None = None
    needed: int = 0
    names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, slots: tuple[ArgumentSlot | None, ...]) -> _Reader:
        positions = [slot.position for slot in slots if slot is not None and slot.position is not None]
        if len(positions) != len(slots):  # a missing or keyword-only parameter: slot by slot
            return cls(slots)
        # itemgetter of one position returns the item: read a 1-tuple of it (a slice) instead.
        getter = itemgetter(*positions) if len(positions) > 1 else itemgetter(slice(positions[0], positions[0] + 1))
        names = frozenset(slot.name for slot in slots if slot is not None)
        return cls(slots, getter, max(positions) + 1, names)


# (plain function, names) -> its reader: one per wrapper that reads arguments.
_READERS: dict[tuple[Any, tuple[str, ...]], _Reader] = {}
_MAX_READERS = 64


@lru_cache(maxsize=32)
def argument_slot(method: Callable[..., Any], name: str) -> ArgumentSlot | None:
    """The slot of parameter ``name`` of ``method``, from its signature (``None`` if it has none).

    Called with the plain function (``bound.__func__``: :func:`slot_of`), so the cache holds no
    instance.
    """
    parameters = list(inspect.signature(method).parameters.values())[1:]  # drop self
    for index, parameter in enumerate(parameters):
        if parameter.name != name:
            continue
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            return ArgumentSlot(name, None)
        if parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            return ArgumentSlot(name, index)
    return None
