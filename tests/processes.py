"""Programs the tests start: a free port on 127.0.0.1, and a process that is waited for until it
listens and is always stopped by PID (terminate, then kill), its output kept in a log file; and
waiting for what such a program does in its own time."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import pytest

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        port: int = probe.getsockname()[1]
        return port


def listening(port: int) -> bool:
    try:
        socket.create_connection((LOOPBACK, port), timeout=0.2).close()
    except OSError:
        return False
    return True


def wait_until(condition: Callable[[], bool], seconds: float, what: str, log: Path | None = None) -> None:
    """Poll ``condition`` until it holds; after ``seconds`` fail, naming ``what`` (and the end of ``log``)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}" + (f":\n{log.read_text()[-3000:]}" if log else ""))
        time.sleep(0.2)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop ``process`` by its PID: SIGTERM, then SIGKILL after 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def running(
    command: Sequence[str],
    *,
    ports: Sequence[int],
    log: Path | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``command``, wait until it listens on every port in ``ports``, stop it on exit."""
    output = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 (closed below)
    process = subprocess.Popen(
        list(command), stdout=output, stderr=subprocess.STDOUT, env=dict(env or os.environ), cwd=cwd
    )
    try:
        deadline = time.monotonic() + timeout
        while not all(listening(port) for port in ports):
            if process.poll() is not None or time.monotonic() > deadline:
                told = log.read_text(errors="replace")[-3000:] if log else ""
                raise RuntimeError(f"{command[0]} did not start (exit code {process.poll()}):\n{told}")
            time.sleep(0.1)
        yield process
    finally:
        stop(process)
        if log:
            output.close()  # type: ignore[union-attr]


# Set by the Makefile for every pytest run: make installs and builds everything the tests start
# first, so under make (or in CI) a program or build not there is a broken build, never a skip.
REQUIRE_ALL_ENV = "MCP_OTEL_REQUIRE_ALL"
_NOT_SKIPPED = " (under make and in CI this fails, never skips: every program the tests start must be there)"


def required() -> bool:
    """Whether a missing program fails the tests (under make, in CI) rather than skipping them."""
    return bool(os.environ.get("CI") or os.environ.get(REQUIRE_ALL_ENV))


def unavailable(reason: str) -> NoReturn:
    """A program the test runs (a toolchain, a build) is not there: under make or in CI the test
    fails, saying so; run by hand it is skipped."""
    if required():
        pytest.fail(reason + _NOT_SKIPPED, pytrace=False)
    pytest.skip(reason)


def missing(what: str, make_target: str) -> NoReturn:
    """Something a test runs is not installed: ``unavailable``, saying how to install it."""
    unavailable(f"{what} is missing: `make {make_target}` installs it")


# A test with no Python SDK in it (other languages' agents and servers, the Go modules) runs once, in
# the suite on mcp 2.x (the marker's run): on mcp 1.x it would run the same programs again.
no_python_sdk = pytest.mark.mcp2


def needs(reason: str | None) -> pytest.MarkDecorator:
    """Mark tests that need a program (a toolchain, a build): skipped when ``reason`` says what is
    missing; under make or in CI a missing program fails their collection instead, loudly."""
    if reason is not None and required():
        pytest.fail(reason + _NOT_SKIPPED, pytrace=False)
    return pytest.mark.skipif(reason is not None, reason=reason or "")
