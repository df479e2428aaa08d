"""The ``mcp-otel`` command: ``run`` an agent with its MCP tool calls traced and summarized,
``report`` the same summary from OTLP JSON span files, and write the stack's ``assets``.

Exit codes: ``run`` returns the agent's; ``report`` returns 0, 1 when a failure rate is above
``--fail-above``, and 2 when a file or line could not be read (after reporting what could);
``assets`` 0, or 2 when it could not write (nothing is overwritten without ``--force``).

Over 400 lines: every subcommand's options are one ``argparse`` tree, built in :func:`main`; each
subcommand's own body beside it is short.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from mcp_otel.cli.assets import AssetsError, write_assets
from mcp_otel.proxy.wrap import CLIENTS
from mcp_otel.run.calls import EVERY_METHOD
from mcp_otel.run.report import format_json, format_table, summarize_files
from mcp_otel.run.service_names import names_the_service, service_name_of
from mcp_otel.semconv import METHOD_TOOLS_CALL

EXIT_ABOVE_THRESHOLD = 1
EXIT_UNREADABLE = 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mcp-otel", description="OpenTelemetry for MCP requests (tool calls first).")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser(
        "run",
        help="run a Python agent with MCP tool calls traced, then print a per-server summary",
        description="Runs COMMAND under opentelemetry-instrument (mcp-otel included). Spans and metrics "
        "go to --output as OTLP JSON lines, and also to the exporters OTEL_TRACES_EXPORTER and "
        "OTEL_METRICS_EXPORTER name (else to OTLP when an OTLP endpoint is set).",
    )
    run.add_argument(
        "--output", type=Path, default=Path("mcp-otel.jsonl"), help="telemetry file (default: %(default)s)"
    )
    _summary_options(run)
    run.add_argument("agent", nargs=argparse.REMAINDER, metavar="-- COMMAND...", help="the agent to run")

    report = commands.add_parser(
        "report",
        help="summarize MCP tool calls from OTLP JSON span files",
        description="Summarizes the calls in each FILE and the generations it was rotated into (FILE.1, ...); "
        "with no FILE, every file mcp-otel proxy writes by default ($XDG_STATE_HOME/mcp-otel/proxy, else "
        "~/.local/state/mcp-otel/proxy), from the servers' side.",
    )
    report.add_argument("files", nargs="*", type=Path, metavar="FILE")
    _summary_options(report)
    report.add_argument(
        "--side",
        choices=["client", "server"],
        help="whose spans to count (default: client; with no FILE, server: the proxies stand in for the servers)",
    )
    report.add_argument(
        "--since",
        type=_duration,
        metavar="DURATION",
        help="only the calls that ended in the last DURATION: 90s, 30m, 1h, 2d, 1w",
    )
    report.add_argument(
        "--conversation",
        metavar="ID",
        help="only the requests of one conversation (gen_ai.conversation.id, from the application's baggage), "
        "across servers: with --method '*', all of them",
    )
    report.add_argument(
        "--fail-above",
        type=_rate,
        metavar="RATE",
        help="exit 1 if any failure rate (cancels excluded) is above RATE, e.g. 0.05",
    )

    proxy = commands.add_parser(
        "proxy",
        help="run an MCP server (any language, stdio or HTTP) behind a relay that traces its requests",
        description="Starts COMMAND, an MCP server over stdio, and relays this process's stdin and stdout to "
        "it byte for byte (its stderr passes through); or, with --listen and --upstream, serves HOST:PORT as "
        "a reverse proxy of the streamable HTTP server at URL. Each request the client sends gets the SERVER span, "
        "and each request the server sends the CLIENT span, that an instrumented server would make, with "
        "its outcome (--as client: the client's spans instead). Spans and metrics go where the standard "
        "OTEL_* settings say (OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER, OTEL_SDK_DISABLED, ...; a console "
        "exporter writes to stderr); a signal they name no exporter for goes to --output as OTLP JSON lines "
        "(mcp-otel report --side server reads them), and to OTLP too when an OTLP endpoint is set. When "
        "telemetry cannot be set up, the traffic is relayed all the same and stderr says why. Exits with the "
        "server's status (over HTTP: runs until SIGINT or SIGTERM).",
    )
    proxy.add_argument(
        "--name", help="the server's service.name (default: from COMMAND, or the upstream's host and port)"
    )
    proxy.add_argument("--listen", metavar="HOST:PORT", help="serve HTTP here, as a reverse proxy of --upstream")
    proxy.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST:PORT",
        help="a Host the listener accepts besides its loopback names (HOST:* any port); bound to a non-loopback "
        "address, the only ones accepted (none given: any)",
    )
    proxy.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="an Origin the listener accepts besides the loopback ones (http://HOST:* any port); bound to a "
        "non-loopback address, the only ones accepted (none given: any)",
    )
    proxy.add_argument("--upstream", metavar="URL", help="the streamable HTTP server, e.g. http://127.0.0.1:8000/mcp")
    proxy.add_argument(
        "--as",
        dest="stands_for",
        choices=["server", "client"],
        default="server",
        help="the side that is not instrumented, whose spans the proxy makes (default: %(default)s); "
        "as the client, each request carries the proxy's trace context to the server",
    )
    proxy.add_argument(
        "--output",
        type=Path,
        help="telemetry file, appended to (default: NAME.jsonl in $XDG_STATE_HOME/mcp-otel/proxy, "
        "else ~/.local/state/mcp-otel/proxy)",
    )
    proxy.add_argument(
        "--max-file-size",
        type=_megabytes,
        default=20,
        metavar="MB",
        help="the telemetry file rotates past this many MiB (default: %(default)s)",
    )
    proxy.add_argument(
        "--keep-files",
        type=_positive,
        default=3,
        metavar="N",
        help="rotated telemetry files kept beside it, FILE.1 the newest; the oldest is dropped (default: %(default)s)",
    )
    proxy.add_argument("server", nargs=argparse.REMAINDER, metavar="-- COMMAND...", help="the server to run")

    wrap = commands.add_parser(
        "wrap",
        help="rewrite an MCP client's configuration so that its stdio servers run under mcp-otel proxy",
        description="Rewrites each stdio server of FILE to run under `mcp-otel proxy`, named by its key: the "
        "mcpServers files of Claude Desktop, Cursor, Claude Code, Gemini CLI, Windsurf and Cline, VS Code's mcp.json "
        "or settings, Zed's context_servers (JSON), Codex CLI's config.toml, Goose's and Continue's config.yaml "
        "(comments and formatting kept). Every other field is kept, servers reached by URL are listed and left "
        "alone, wrapping twice changes nothing, and the original is kept as FILE.mcp-otel-backup. "
        "--unwrap restores it.",
    )
    wrap.add_argument("files", nargs="+", type=Path, metavar="FILE")
    wrap.add_argument("--unwrap", action="store_true", help="run the servers directly again")
    wrap.add_argument(
        "--client",
        choices=sorted(CLIENTS),
        help="whose file it is, where its name and shape do not tell (a YAML file neither Goose's nor Continue's)",
    )
    wrap.add_argument(
        "--force", action="store_true", help="wrap even when the proxy could not export from this environment"
    )
    wrap.add_argument(
        "--check",
        action="store_true",
        help="change nothing: start each server as its client would, ask initialize and tools/list, and say "
        "whether it answers, whether it is wrapped and where its telemetry goes (exit 1 if a wrapped one does not "
        "answer)",
    )

    assets = commands.add_parser(
        "assets",
        help="write the stack's files (collector, Jaeger, Prometheus rules, Grafana dashboard, compose) to DIR",
        description="Writes the collector, Jaeger and Tempo configurations, the Prometheus rules and "
        "configuration, the Grafana dashboard and provisioning, and docker-compose.yml under DIR; then "
        "`cd DIR && docker compose up -d` starts the stack.",
    )
    assets.add_argument("directory", type=Path, metavar="DIR")
    assets.add_argument("--force", action="store_true", help="overwrite files that exist with other contents")

    args = parser.parse_args(argv)
    if args.command == "run":
        return _run(parser, args)
    if args.command == "assets":
        return _assets(args)
    if args.command == "proxy":
        return _proxy(parser, args)
    if args.command == "wrap":
        return _wrap(args)
    return _report(args)


def _assets(args: argparse.Namespace) -> int:
    try:
        written = write_assets(args.directory, overwrite=args.force)
    except (AssetsError, OSError) as exc:
        print(f"mcp-otel assets: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    for path in written:
        print(path)
    print(f"mcp-otel assets: {len(written)} files; `cd {args.directory} && docker compose up -d`", file=sys.stderr)
    return 0


def _proxy(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    command = args.server[1:] if args.server[:1] == ["--"] else args.server
    as_client = args.stands_for == "client"
    if args.listen or args.upstream:
        if not (args.listen and args.upstream) or command:
            parser.error("proxy: over HTTP, give both --listen HOST:PORT and --upstream URL, and no command")
        if importlib.util.find_spec("aiohttp") is None:  # the relay itself needs it: no failing open
            print("mcp-otel proxy: HTTP needs aiohttp: pip install 'mcp-otel[proxy]'", file=sys.stderr)
            return EXIT_UNREADABLE
        from mcp_otel.proxy.main import proxy_http

        return proxy_http(
            args.listen,
            args.upstream,
            name=args.name,
            output=args.output,
            as_client=as_client,
            rotate=_rotate(args),
            allow_hosts=args.allow_host,
            allow_origins=args.allow_origin,
        )
    if not command:
        parser.error("proxy: give the server's command after --, e.g. mcp-otel proxy -- python -m my_server")
    from mcp_otel.proxy.main import proxy  # without the SDK it relays all the same, and says so

    return proxy(command, name=args.name, output=args.output, as_client=as_client, rotate=_rotate(args))


def _rotate(args: argparse.Namespace) -> tuple[int, int]:
    return int(args.max_file_size * 1024 * 1024), args.keep_files


def _wrap(args: argparse.Namespace) -> int:
    from mcp_otel.proxy.telemetry import missing_requirement
    from mcp_otel.proxy.wrap import WrapError, unwrap_file, wrap_file

    if args.check:
        return _wrap_check(args.files, args.client)
    if not args.unwrap and not args.force and (missing := missing_requirement()) is not None:
        # A wrapped server would answer, but the proxy in front of it could record nothing.
        print(
            f"mcp-otel wrap: the proxy could not export from this environment: {missing}. "
            "Nothing was changed; --force wraps all the same (the servers then run without telemetry).",
            file=sys.stderr,
        )
        return EXIT_ABOVE_THRESHOLD
    status = 0
    for path in args.files:
        try:
            result = unwrap_file(path, args.client) if args.unwrap else wrap_file(path, client=args.client)
        except WrapError as exc:
            print(f"mcp-otel wrap: {exc}", file=sys.stderr)
            status = EXIT_UNREADABLE
            continue
        done = "unwrapped" if args.unwrap else "wrapped"
        print(f"{path}: {done}: {', '.join(result.wrapped) or 'none'}")
        if result.already:
            print(f"{path}: already wrapped: {', '.join(result.already)}")
        if result.skipped:
            why = "not wrapped" if args.unwrap else "not stdio (left as they are)"
            print(f"{path}: {why}: {', '.join(result.skipped)}")
    return status


def _wrap_check(files: Sequence[Path], client: str | None) -> int:
    from mcp_otel.proxy.wrap import WrapError, check_file

    status = 0
    for path in files:
        try:
            checks = check_file(path, client)
        except WrapError as exc:
            print(f"mcp-otel wrap: {exc}", file=sys.stderr)
            status = max(status, EXIT_UNREADABLE)
            continue
        for check in checks:
            print(f"{path}: {check.line()}", flush=True)
            if check.wrapped and not check.answered:
                status = max(status, EXIT_ABOVE_THRESHOLD)
    return status


def _summary_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--by", choices=["server", "tool", "method"], default="server", help="group by (default: %(default)s)"
    )
    parser.add_argument(
        "--method",
        help=f"count requests of this MCP method ({EVERY_METHOD!r}: every method; default: {METHOD_TOOLS_CALL}, "
        "or every method with --by method)",
    )
    parser.add_argument("--format", choices=["table", "json"], default="table", help="(default: %(default)s)")


def _has_telemetry(path: Path) -> bool:
    from mcp_otel.run.calls import with_generations

    return any(generation.stat().st_size for generation in with_generations(path) if generation.exists())


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def _duration(text: str) -> float:
    """Seconds in ``90s``, ``30m``, ``1h``, ``2d``, ``1w``."""
    number, unit = text.strip()[:-1], text.strip()[-1:].lower()
    try:
        seconds = float(number) * _UNITS[unit]
    except (KeyError, ValueError):
        raise argparse.ArgumentTypeError("a number and a unit: 90s, 30m, 1h, 2d, 1w") from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError("a duration above zero")
    return seconds


def _megabytes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0
    if not value > 0:
        raise argparse.ArgumentTypeError("a size in MiB above zero, e.g. 20 or 0.5")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError("a whole number, 1 or more")
    return value


def _rate(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError("a rate between 0 and 1")
    return value


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    agent = args.agent[1:] if args.agent[:1] == ["--"] else args.agent
    if not agent:
        parser.error("run: give the agent's command after --, e.g. mcp-otel run -- python agent.py")
    output: Path = args.output.resolve()
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("", encoding="utf-8")  # this run's telemetry only
    env = _run_environment(output, agent)
    remote = env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    _progress(f"running {' '.join(agent)}")
    _progress(f"telemetry to {output}" + (f" and to {remote}" if remote else ""))
    # Found on the agent's PATH and started as opentelemetry-instrument starts it; exit codes as
    # a shell's when it cannot be.
    executable = shutil.which(agent[0], path=env["PATH"])
    if executable is None:
        _progress(f"cannot run {agent[0]}: no such command")
        return 127
    try:
        returncode = subprocess.call([executable, *agent[1:]], env=env)
    except OSError as exc:
        _progress(f"cannot run {agent[0]}: {exc.strerror or exc}")
        return 126
    _progress(f"the agent exited with {returncode}; summarizing {output.name}")
    summaries, problems = summarize_files([output], method=_method(args), by=args.by)
    for problem in problems:
        _progress(problem)
    print(format_table(summaries, args.by) if args.format == "table" else format_json(summaries), flush=True)
    return returncode


def _run_environment(output: Path, agent: Sequence[str] = ()) -> dict[str, str]:
    """The agent's environment: auto-instrumentation configured by our configurator (the
    sitecustomize in ``PYTHONPATH``'s first entry), the file exporter added to whatever exporters
    the user configured (OTLP when an endpoint is set), and a ``service.name`` from the program it
    runs unless the user named the service."""
    # the sdk extra's: `run` needs it
    from mcp_otel.run.configurator import agent_python_path, exporters_environment

    env = dict(os.environ)
    name = service_name_of(agent)
    if name and not names_the_service(env):
        env["OTEL_SERVICE_NAME"] = name
    env.update(exporters_environment(env, output, always_file=True))
    env["PYTHONPATH"] = agent_python_path(env.get("PYTHONPATH"), os.getcwd())
    # `python` in the command is this environment's, as if it were activated.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _method(args: argparse.Namespace) -> str:
    """The method whose requests are counted: ``--method``, else tool calls (every method when
    grouping by method)."""
    if args.method:
        return str(args.method)
    return EVERY_METHOD if args.by == "method" else METHOD_TOOLS_CALL


def _report(args: argparse.Namespace) -> int:
    files, side = args.files, args.side or "client"
    if not files:
        from mcp_otel.proxy.telemetry import state_directory

        directory = state_directory()
        # A proxy that has recorded nothing yet leaves an empty file: nothing to say of it.
        files = [path for path in sorted(directory.glob("*.jsonl")) if _has_telemetry(path)]
        side = args.side or "server"
        if not files:
            print(f"mcp-otel report: no FILE given, and no proxy has written to {directory}", file=sys.stderr)
            return EXIT_UNREADABLE
    since = None if args.since is None else time.time_ns() - int(args.since * 1e9)
    summaries, problems = summarize_files(files, side, _method(args), args.by, since, args.conversation)
    print(format_table(summaries, args.by) if args.format == "table" else format_json(summaries))
    for problem in problems:
        print(f"mcp-otel report: {problem}", file=sys.stderr)
    if problems:
        return EXIT_UNREADABLE
    if args.fail_above is not None:
        above = [s for s in summaries if s.failure_rate is not None and s.failure_rate > args.fail_above]
        for summary in above:
            rate = f"{summary.failure_rate:.1%}"
            print(
                f"mcp-otel report: {summary.name}: failure rate {rate} is above {args.fail_above:.1%}", file=sys.stderr
            )
        if above:
            return EXIT_ABOVE_THRESHOLD
    return 0


def _progress(message: str) -> None:
    print(f"mcp-otel: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
