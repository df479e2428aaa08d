"""The in-process instrumentation's own machinery, module by module: binding, patching, transports.
The sides' behaviour, end to end on the real SDKs, is in tests/client, tests/server, tests/metrics."""
