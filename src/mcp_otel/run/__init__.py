"""``mcp-otel run`` and ``report`` with no backend: the OpenTelemetry SDK set-up of mcp-otel's own
processes (:mod:`.configurator`, for run's agent and the proxy), the agent's start-up directory
(``run_auto_instrumentation/``), run's variables passed to the servers it starts (:mod:`.servers`),
service naming (:mod:`.service_names`), the OTLP JSON lines file exporter (:mod:`.otlp_file`,
its encoding in :mod:`.otlp_json`), and ``report``: the calls read back from the file
(:mod:`.calls`) and their summaries (:mod:`.report`)."""
