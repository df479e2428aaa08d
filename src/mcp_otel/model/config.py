"""Settings: environment variables ``OTEL_INSTRUMENTATION_MCP_*`` and the same keyword arguments.

A keyword argument to ``McpInstrumentor().instrument()`` wins over its environment variable. An
invalid value never raises (instrumenting must not break the application): it is logged once
and the default is used. docs/settings.md lists every setting here.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any

_LOG = logging.getLogger(__name__)

ENV_PREFIX = "OTEL_INSTRUMENTATION_MCP_"
# The file mcp-otel's own processes write (``mcp-otel run``'s agent, the proxy): its exporters
# (:mod:`mcp_otel.run.otlp_file`, entry point ``FILE_EXPORTER``) are made by the SDK's configurator
# without arguments and find it here; past ``RUN_FILE_MAX_BYTES_ENV`` it rotates, keeping
# ``RUN_FILE_KEEP_ENV`` generations (the proxy's; ``mcp-otel run``'s never rotates). Here, not
# beside the exporters, so the configuration reads them without the sdk extra's protobuf.
RUN_FILE_ENV = "MCP_OTEL_RUN_FILE"
RUN_FILE_MAX_BYTES_ENV = "MCP_OTEL_RUN_FILE_MAX_BYTES"
RUN_FILE_KEEP_ENV = "MCP_OTEL_RUN_FILE_KEEP"
FILE_EXPORTER = "mcp_otel_file"
# Variables read, in order, when a setting's own is unset.
_FALLBACK_ENV = {"capture_content": ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",)}


class SdkSpans(str, Enum):
    """What to do with the spans mcp 2.x and fastmcp make for the calls we trace."""

    SUPPRESS = "suppress"  # exactly one CLIENT span per call, ours; our context on the wire
    KEEP = "keep"  # keep theirs too (they become children of ours and carry the wire context)


@dataclass(frozen=True)
class Settings:
    sdk_spans: SdkSpans = SdkSpans.SUPPRESS
    # Inject the configured propagator's fields into params._meta of each call.
    propagate: bool = True
    # Override the server identity the server reports about itself (serverInfo).
    server_name: str | None = None
    server_version: str | None = None
    # Tool and server names longer than this are cut (names come from peers).
    max_name_length: int = 256
    # Distinct tool names (and server names) metrics keep; later ones are recorded as _OTHER.
    max_metric_names: int = 100
    # mcp 1.x clients: send notifications/cancelled for calls the caller cancelled or the SDK
    # timed out (mcp 2.x clients always do), so servers stop the work and record a cancel.
    send_cancel: bool = False
    # Servers: parent each span to the context the client put in params._meta (semconv). Off for
    # servers exposed to untrusted clients: that context is then only a link.
    trust_remote_context: bool = True
    # Record tool arguments and results on spans (secret-looking keys redacted, cut to
    # max_content_length). Off by default; when unset, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
    # decides, as for the other GenAI instrumentations.
    capture_content: bool = False
    max_content_length: int = 4096
    # Put mcp.resource.uri on operation-duration points (opt-in per the conventions: URIs can be
    # unbounded); bounded like tool names.
    metrics_resource_uri: bool = False
    # Spans for notifications/progress and notifications/message too (the other notifications
    # always have theirs): a long call can send hundreds.
    trace_progress_and_logs: bool = False

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for field in fields(cls):
            default = field.default
            parse = _PARSERS[field.name]
            raw = overrides.get(field.name)
            source = f"keyword argument {field.name}"
            for variable in (ENV_PREFIX + field.name.upper(), *_FALLBACK_ENV.get(field.name, ())):
                if raw is None:
                    raw, source = environ.get(variable), variable
            if raw is None:
                continue
            try:
                values[field.name] = parse(raw)
            except (ValueError, TypeError):
                _LOG.warning("mcp-otel: ignoring invalid %s=%r; using %r", source, raw, default)
        unknown = set(overrides) - {field.name for field in fields(cls)}
        if unknown:
            _LOG.warning("mcp-otel: ignoring unknown settings %s", sorted(unknown))
        return cls(**values)


def _parse_bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ValueError(raw)


def _parse_positive_int(raw: Any) -> int:
    value = int(raw)
    if isinstance(raw, bool) or value < 1:
        raise ValueError(raw)
    return value


def _parse_text(raw: Any) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise ValueError(raw)
    return raw.strip()


# OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT's newer values (opentelemetry-util-genai):
# content on spans or not.
_CAPTURE_MODES = {"span_only": True, "span_and_event": True, "event_only": False, "no_content": False}


def _parse_capture(raw: Any) -> bool:
    mode = _CAPTURE_MODES.get(str(raw).strip().lower()) if not isinstance(raw, bool) else None
    return mode if mode is not None else _parse_bool(raw)


_PARSERS: dict[str, Callable[[Any], Any]] = {
    "sdk_spans": lambda raw: SdkSpans(str(raw).strip().lower()),
    "propagate": _parse_bool,
    "server_name": _parse_text,
    "server_version": _parse_text,
    "max_name_length": _parse_positive_int,
    "send_cancel": _parse_bool,
    "trust_remote_context": _parse_bool,
    "capture_content": _parse_capture,
    "max_content_length": _parse_positive_int,
    "max_metric_names": _parse_positive_int,
    "metrics_resource_uri": _parse_bool,
    "trace_progress_and_logs": _parse_bool,
}
