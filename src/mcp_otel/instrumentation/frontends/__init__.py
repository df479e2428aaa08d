"""The front ends: each source of facts about requests in its own module, the only code that
reads that source's shapes.

:mod:`.mcp1` and :mod:`.mcp2` are each SDK major's patch table (an :class:`.sdk.SdkFrontEnd`):
where its requests are sent and handled, its sessions opened and closed, and how it says what
was answered and whether the peer cancelled; :mod:`.fastmcp` turns fastmcp's own spans off.
The fourth front end is the wire, :mod:`.wire`: where a stdio line or an HTTP body or event
becomes a span (the proxy's relays, :mod:`mcp_otel.proxy`, tell it what passes). What every side
reads of a message that is no one source's shape is below them all, in :mod:`mcp_otel.model.messages`.

Every front end feeds the same sides (:mod:`mcp_otel.instrumentation.client`, :mod:`mcp_otel.instrumentation.server`,
:mod:`mcp_otel.instrumentation.sessions`) and through them the one request lifecycle
(:mod:`mcp_otel.model.lifecycle`). Both majors' tables are applied; the targets the installed major
lacks are skipped. An SDK change is fixed in one place, and the shape readers never raise on an
unexpected shape: they return ``None`` (or an empty value).
"""
