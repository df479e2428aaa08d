"""The patch table machinery: apply wrapt wrappers when their module is imported, remove them all.

Patches are declared as data (module, attribute path, wrapper) by the front ends
(:mod:`mcp_otel.frontends`) and by the sides for what both majors share. A target that is missing
in the installed SDK is skipped and logged once: both majors' tables are applied, and a feature
one major lacks is expected to be missing there.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import wrapt

from mcp_otel.safety import report_once

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
