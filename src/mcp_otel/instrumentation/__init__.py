"""The in-process instrumentation: :class:`.instrumentor.McpInstrumentor` applies the SDK front
ends' patch tables (:mod:`.frontends`, with :mod:`.patching` and :mod:`.binding`), which feed the
sides: :mod:`.client` (CLIENT spans, the sender side), :mod:`.server` (SERVER spans, the receiver
side), :mod:`.sessions` (session durations), :mod:`.tasks` and :mod:`.transport`. Below it is
:mod:`mcp_otel.model`, shared with the proxy."""
