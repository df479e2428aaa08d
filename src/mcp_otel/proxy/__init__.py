"""``mcp-otel proxy``: the same spans and metrics for an MCP server in any language, from the wire.

The proxy starts a stdio server, or serves as a reverse proxy of a streamable HTTP one, relays
both directions unchanged, and stands in for the side that is not instrumented: as the server
(the default), a SERVER span for each request the client sends and a CLIENT span for each
request the server sends, with the outcome from the same classifier and the same single writer
of status and outcome as the in-process patches.

* :mod:`mcp_otel.proxy.wire`: the wire front end, where a JSON-RPC message becomes a span (the
  only module that knows the wire's shapes);
* :mod:`mcp_otel.proxy.stdio`: the stdio relay (the server process, its pipes, signals, shutdown);
* :mod:`mcp_otel.proxy.http`: the streamable HTTP relay (sessions, SSE, the HTTP facts);
* :mod:`mcp_otel.proxy.telemetry`: where the proxy's telemetry goes.
"""
