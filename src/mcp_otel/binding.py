"""How a wrapped method's arguments arrive: each parameter's slot (position or keyword), read
from the method's signature once and cached, so wrappers read and replace arguments however the
caller passed them (fastmcp passes everything by keyword)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


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


def plain_function(wrapped: Any) -> Any:
    """The function behind a bound method: the key of the signature cache (it holds no instance)."""
    return getattr(wrapped, "__func__", wrapped)


def arguments_of(wrapped: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any], *names: str) -> tuple[Any, ...]:
    """The values of parameters ``names`` in a call of ``wrapped`` (``None`` where absent)."""
    values = []
    for slot in _slots(plain_function(wrapped), names):  # runs for every request: one cache lookup
        values.append(slot.get(args, kwargs) if slot is not None else None)
    return tuple(values)


@lru_cache(maxsize=64)
def _slots(method: Callable[..., Any], names: tuple[str, ...]) -> tuple[ArgumentSlot | None, ...]:
    return tuple(argument_slot(method, name) for name in names)


@lru_cache(maxsize=32)
def argument_slot(method: Callable[..., Any], name: str) -> ArgumentSlot | None:
    """The slot of parameter ``name`` of ``method``, from its signature (``None`` if it has none).

    Callers pass the plain function (``bound.__func__``), so the cache holds no instance.
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
