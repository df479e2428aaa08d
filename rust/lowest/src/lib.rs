//! Empty: this package only runs the mcp-otel crate's tests on its lowest dependency versions.
