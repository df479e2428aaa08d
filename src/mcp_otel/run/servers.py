"""What the stdio servers ``mcp-otel run``'s agent starts are given of the run's environment.

``mcp-otel run`` instruments its agent through variables: its ``sitecustomize`` first on
``PYTHONPATH``, the run's file (``MCP_OTEL_RUN_FILE``) and the exporters
(``OTEL_{TRACES,METRICS,LOGS}_EXPORTER``), beside the OTLP settings it was given. The MCP SDKs'
``stdio_client`` (mcp 1.x and 2.x) gives a server only ``get_default_environment()`` (``HOME``,
``PATH``, ``SHELL``, ``TERM``, ``USER``, ``LOGNAME``) with the agent's ``env`` laid over it, so a
server started the commonest way, with no ``env``, would run uninstrumented: the agent's CLIENT
spans only, no SERVER span, no one trace.

In the agent (:func:`pass_to_servers`, called by run's ``sitecustomize``), a server started
with no ``env`` is given the run's variables as its ``env`` (:func:`run_variables`, as the
agent was started with them) and a ``service.name`` of its own, named after its program as run
names the agent (``python server.py`` gives ``server``), laid over the SDK's default as any
``env`` is, and nothing else of the agent's environment. A server the agent gives an ``env``
gets what it is given: the agent said what its server gets. Nothing here is installed outside ``mcp-otel run``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mcp_otel.model.safety import report_once
from mcp_otel.run.service_names import names_the_service, server_name_of

STDIO_CLIENT = "mcp.client.stdio"  # both majors' (a package in 1.x, a module in 2.x)
# The OTLP settings the exporters run names read (an endpoint, its headers, its protocol, ...).
OTLP_SETTINGS = "OTEL_EXPORTER_OTLP_"


def run_variables(environ: Mapping[str, str], auto_instrumentation: str) -> dict[str, str]:
    """The run's variables in ``environ`` (the agent's, as it started): those run sets for the
    agent's telemetry (:func:`~mcp_otel.run.configurator.exporters_environment`'s), the OTLP
    settings, and ``PYTHONPATH`` the run's ``sitecustomize`` directory ``auto_instrumentation``
    alone (the agent's own entries, and the working directory run adds for it, are the agent's)."""
    from mcp_otel.run.configurator import exporters_environment

    run_set = exporters_environment({}, Path(), always_file=True, rotate=(1, 1))
    passed = {name: environ[name] for name in run_set if name in environ}
    passed.update((name, value) for name, value in environ.items() if name.startswith(OTLP_SETTINGS))
    passed["PYTHONPATH"] = auto_instrumentation
    return passed


def pass_to_servers(variables: Mapping[str, str]) -> None:
    """Give ``variables`` to each stdio server started with no ``env``, once ``mcp.client.stdio``
    is imported (before anyone can take its ``stdio_client``)."""
    import wrapt

    def patch(module: Any) -> None:
        try:
            wrapt.wrap_function_wrapper(module, "stdio_client", _with(dict(variables)))
        except Exception as exc:  # an SDK without it: its servers go as they would
            report_once("could not pass mcp-otel run's variables to stdio servers", exc)

    wrapt.register_post_import_hook(patch, STDIO_CLIENT)


def _with(variables: dict[str, str]) -> Callable[..., Any]:
    def stdio_client(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            server = kwargs["server"] if "server" in kwargs else args[0]
            if server.env is None:  # the SDK lays env over its default: these alone, over it
                env = dict(variables)
                if not names_the_service(env):  # named after its program, as run names the agent
                    env["OTEL_SERVICE_NAME"] = server_name_of([server.command, *server.args])
                given = server.model_copy(update={"env": env})  # the agent's is left as it is
                if "server" in kwargs:
                    kwargs = {**kwargs, "server": given}
                else:
                    args = (given, *args[1:])
        except Exception as exc:
            report_once("could not pass mcp-otel run's variables to a stdio server", exc)
        return wrapped(*args, **kwargs)

    return stdio_client
