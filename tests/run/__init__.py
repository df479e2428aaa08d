"""``mcp-otel run``'s and ``report``'s modules on their own: the file exporter, the SDK set-up,
service names, the report's parsers and latency sketch. The commands end to end are in tests/cli."""
