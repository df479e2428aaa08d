"""``mcp-otel proxy``: the same spans and metrics for an MCP server in any language, from the wire.

The proxy starts a stdio server, or serves as a reverse proxy of a streamable HTTP one, relays
both directions unchanged, and stands in for the side that is not instrumented: as the server
(the default), a SERVER span for each request the client sends and a CLIENT span for each
request the server sends, with the outcome from the same classifier and the same single writer
of status and outcome as the in-process patches.

These are the hosts; what they relay is read by the wire front end,
:mod:`mcp_otel.proxy.wire` (where a JSON-RPC message becomes a span), beside the SDKs' front
ends.

* :mod:`mcp_otel.proxy.main`: the command (a stdio server or an HTTP upstream);
* :mod:`mcp_otel.proxy.stdio`: the stdio relay (the server process, its pipes, signals, shutdown);
* :mod:`mcp_otel.proxy.signals`: who sent the stdio proxy SIGINT or SIGTERM (its client, or not);
* :mod:`mcp_otel.proxy.http`: the streamable HTTP relay (sessions, SSE, the HTTP facts);
* :mod:`mcp_otel.proxy.telemetry`: where the proxy's telemetry goes (its service named by
  :mod:`mcp_otel.run.service_names`, as under ``mcp-otel run``);
* :mod:`mcp_otel.proxy.wrap`: ``mcp-otel wrap``, a client's configuration with its stdio
  servers run under the proxy, and :mod:`mcp_otel.proxy.wrap_check`, its ``--check``.
"""
