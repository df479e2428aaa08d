"""The patch table machinery: apply wrapt wrappers when their module is imported, remove them all.

Patches are declared as data (module, attribute path, wrapper) by the front ends
(:mod:`mcp_otel.instrumentation.frontends`) and by the sides for what both majors share. A target that is missing
in the installed SDK is skipped and logged once: both majors' tables are applied, and a feature
one major lacks is expected to be missing there.

Every wrapper has wrapt's signature ``(wrapped, instance, args, kwargs)``. An *inner* patch (a
method the SDK calls on every request, inside another of our patches, or a private step of its
own that no application calls) is applied as a plain function instead of a wrapt proxy, same
signature for the wrapper: binding a wrapt proxy to its instance makes a new object on every
call (~4.4k instructions under cachegrind, and ~2.5k more to call through it), a function binds
in C. What it gives up is documented on :func:`plain_method`.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import FunctionType, ModuleType
from typing import Any

import wrapt

from mcp_otel.model.safety import report_once

Wrapper = Callable[[Any, Any, tuple[Any, ...], dict[str, Any]], Any]

# Modules whose re-exports of a patched module-level function are rebound too.
_REBIND_PACKAGES = ("mcp", "fastmcp")


@dataclass(frozen=True)
class Patch:
    module: str
    target: str  # "function" or "Class.method"
    wrapper: Wrapper
    # Missing in some supported SDK versions: log at debug, not warning.
    optional: bool = False
    # A module-level function other modules import by name: rebind those names too.
    rebind: bool = False
    # A method every request calls that only the SDK calls (inside another patch, or the SDK's own
    # private step): a plain function (see plain_method).
    inner: bool = False


@dataclass
class _Applied:
    owner: Any
    attribute: str
    original: Any


class Patcher:
    """Applies a patch table now for loaded modules and on import for the rest; undoes it all."""

    def __init__(self, patches: Iterable[Patch]) -> None:
        self._patches = tuple(patches)
        self._applied: list[_Applied] = []
        self._active = False
        self._lock = threading.Lock()

    def start(self) -> None:
        self._active = True
        for module_name in dict.fromkeys(patch.module for patch in self._patches):
            module = sys.modules.get(module_name)
            if module is not None:
                self._apply_module(module)
            else:
                # Fires on import (or at once if another thread just imported it).
                wrapt.register_post_import_hook(self._apply_module, module_name)

    def stop(self) -> None:
        with self._lock:
            self._active = False
            applied, self._applied = self._applied, []
        for item in reversed(applied):
            try:
                setattr(item.owner, item.attribute, item.original)
            except Exception as exc:
                report_once(f"could not remove patch {item.attribute}", exc)

    def _apply_module(self, module: ModuleType) -> None:
        with self._lock:
            if not self._active:
                return
            for patch in self._patches:
                if patch.module == module.__name__:
                    self._apply(module, patch)

    def _apply(self, module: ModuleType, patch: Patch) -> None:
        try:
            owner_path, _, attribute = patch.target.rpartition(".")
            owner: Any = module
            for part in filter(None, owner_path.split(".")):
                owner = getattr(owner, part)
            original = owner.__dict__[attribute] if isinstance(owner, type) else getattr(owner, attribute)
        except (AttributeError, KeyError) as exc:
            level = logging.DEBUG if patch.optional else logging.WARNING
            report_once(f"patch target {patch.module}.{patch.target} not found; skipped", exc, level)
            return
        try:
            if patch.inner and isinstance(owner, type) and isinstance(original, FunctionType):
                wrapper = plain_method(original, patch.wrapper)
            else:
                wrapper = wrapt.FunctionWrapper(original, patch.wrapper)
            setattr(owner, attribute, wrapper)
            self._applied.append(_Applied(owner, attribute, original))
            if patch.rebind:
                self._rebind(original, wrapper, attribute)
        except Exception as exc:
            report_once(f"could not patch {patch.module}.{patch.target}", exc)

    def _rebind(self, original: Any, wrapper: Any, name: str) -> None:
        for module_name, module in list(sys.modules.items()):
            if module is None or module_name.split(".", 1)[0] not in _REBIND_PACKAGES:
                continue
            if getattr(module, name, None) is original:
                setattr(module, name, wrapper)
                self._applied.append(_Applied(module, name, original))


# Python 3.12+: marks a function as a coroutine function for inspect (and so for unittest.mock).
_MARK_COROUTINE_FUNCTION = getattr(inspect, "markcoroutinefunction", None)
# Before 3.12: the marker asyncio.iscoroutinefunction (which unittest.mock asks) recognizes.
_ASYNCIO_COROUTINE_MARKER = getattr(getattr(asyncio, "coroutines", None), "_is_coroutine", None)


def plain_method(function: FunctionType, wrapper: Wrapper) -> Callable[..., Any]:
    """``function`` (a method, as its class holds it) wrapped in a plain function that calls
    ``wrapper(bound method, instance, args, kwargs)``, as wrapt would. It carries the method's
    name, qualified name, docstring and signature (``__wrapped__``), and, for a coroutine
    function, the markers ``asyncio.iscoroutinefunction`` and ``unittest.mock`` read (on Python
    3.12+ ``inspect.iscoroutinefunction`` too; before 3.12 that one says ``False``: the price
    of the cheaper call, which is why only inner methods are patched this way)."""
    bind = function.__get__

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return wrapper(bind(self), self, args, kwargs)

    functools.update_wrapper(method, function)
    if inspect.iscoroutinefunction(function):
        if _MARK_COROUTINE_FUNCTION is not None:
            _MARK_COROUTINE_FUNCTION(method)
        elif _ASYNCIO_COROUTINE_MARKER is not None:
            method._is_coroutine = _ASYNCIO_COROUTINE_MARKER  # type: ignore[attr-defined]
    return method
