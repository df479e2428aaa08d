"""Where ``mcp-otel run``'s agent starts: ``mcp-otel run`` puts this directory first on the
agent's ``PYTHONPATH`` (where ``opentelemetry-instrument`` puts its own), so Python imports this
``sitecustomize`` at start-up, in the agent and in the Python processes it starts.

It runs opentelemetry-instrument's own initialization (the distro, then the configurator, then
the instrumentors, with its safeguards) with one step replaced: the SDK is configured by
:class:`mcp_otel.run.configurator.RunConfigurator` instead of the configurator entry points
(mcp-otel registers none, so that ``opentelemetry-instrument`` alone configures the SDK as it would
without mcp-otel). Then it runs the ``sitecustomize`` this one shadows (the user's, or the
Python's own), as Python would have. Anything failing leaves the agent running, uninstrumented.
First, the stdio servers the agent starts with the MCP SDK's default environment are given the
run's variables (:mod:`mcp_otel.run.servers`), as the Python processes it starts with its own
environment inherit them.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _say(message: str) -> None:
    print(f"mcp-otel run: {message}", file=sys.stderr, flush=True)


def _configure() -> None:
    """In place of opentelemetry-instrument's ``_load_configurators``."""
    from opentelemetry.instrumentation.version import __version__

    from mcp_otel.run.configurator import RunConfigurator

    RunConfigurator().configure(auto_instrumentation_version=__version__)  # type: ignore[no-untyped-call]


def _auto_instrument() -> None:
    try:
        from opentelemetry.instrumentation import auto_instrumentation
        from opentelemetry.instrumentation.auto_instrumentation import _load
    except ImportError as exc:  # another Python than mcp-otel's, without OpenTelemetry
        _say(f"{sys.executable} runs uninstrumented: it cannot import {exc.name}")
        return
    # Its sitecustomize calls the step by this name: the package's (later releases), or the one it
    # binds from _load when it is imported (0.51b0). Both are put back once it has run.
    holders = [module for module in (auto_instrumentation, _load) if hasattr(module, "_load_configurators")]
    if _load not in holders:
        _say("runs uninstrumented: this opentelemetry-instrumentation has no configurator step to replace")
        return
    originals = [(module, module._load_configurators) for module in holders]
    # Python processes started while initializing do not start it over (opentelemetry-instrument
    # does the same with its own directory).
    python_path = os.environ.get("PYTHONPATH")
    if python_path is not None:
        entries = python_path.split(os.pathsep)
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in entries if not p or os.path.abspath(p) != _HERE)
    try:
        for module in holders:
            setattr(module, "_load_configurators", _configure)  # noqa: B010 (a module's global)
        import opentelemetry.instrumentation.auto_instrumentation.sitecustomize  # noqa: F401 (initializes)
    finally:
        for module, original in originals:
            setattr(module, "_load_configurators", original)  # noqa: B010
        if python_path is not None:
            os.environ["PYTHONPATH"] = python_path


def _run_shadowed_sitecustomize() -> None:
    """Import the ``sitecustomize`` Python would have imported without this one; what it raises
    reaches :mod:`site`, which reports it as it reports any ``sitecustomize``'s."""
    skip = {_HERE}
    opentelemetry = sys.modules.get("opentelemetry.instrumentation.auto_instrumentation")
    if opentelemetry is not None and opentelemetry.__file__:  # its initialization has just run
        skip.add(os.path.dirname(os.path.abspath(opentelemetry.__file__)))
    path = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) not in skip]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module  # what `import sitecustomize` gives, as without mcp-otel
    spec.loader.exec_module(module)


def _pass_to_servers() -> None:
    """The stdio servers this process starts with the SDK's default environment get the run's
    variables, as this process was started with them (:mod:`mcp_otel.run.servers`)."""
    try:
        from mcp_otel.run.servers import pass_to_servers, run_variables
    except ImportError:  # another Python than mcp-otel's: _auto_instrument says so
        return
    pass_to_servers(run_variables(os.environ, _HERE))


try:
    _pass_to_servers()
except Exception as exc:
    _say(f"its stdio servers get no run variables: {type(exc).__name__}: {exc}")
try:
    _auto_instrument()
except Exception as exc:
    _say(f"runs uninstrumented: {type(exc).__name__}: {exc}")
_run_shadowed_sitecustomize()
