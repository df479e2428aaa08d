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
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log:
            output.close()  # type: ignore[union-attr]


def missing(what: str, make_target: str) -> NoReturn:
    """Something a test runs is not installed: in CI that fails (the test command installs it);
    elsewhere the test is skipped, saying how to install it."""
    message = f"{what} is missing: `make {make_target}` installs it"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
