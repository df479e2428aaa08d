"""Fail-open bookkeeping: our own errors are logged once and never reach the application."""

from __future__ import annotations

import logging
import threading

_LOG = logging.getLogger("mcp_otel")
_reported: set[str] = set()
_lock = threading.Lock()


def report_once(where: str, exc: BaseException | None = None, level: int = logging.WARNING) -> None:
    """Log a problem in mcp-otel's own code the first time it happens at ``where``."""
    with _lock:
        if where in _reported:
            return
        _reported.add(where)
    _LOG.log(level, "mcp-otel: %s%s (reported once)", where, f": {exc!r}" if exc else "", exc_info=exc)
