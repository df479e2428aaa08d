"""The ``mcp-otel`` command (:func:`main`, the console script ``mcp_otel.cli:main``): its
subcommands in :mod:`.main`, the observability stack's files it writes out in :mod:`.assets`."""

from mcp_otel.cli.main import main

__all__ = ["main"]
