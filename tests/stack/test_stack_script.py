"""The stack without Docker says what it offers: `collector-config/stack.sh` (`make stack-up`)
prints, at every start, that the Jaeger built from the Go module proxy has no UI and where the
UI and the figures are; the stack's page (docs/stack.md) says the same words; and the Jaeger it
starts does serve the placeholder page and the query API, so the words stay true."""

from __future__ import annotations

import re
import subprocess
import urllib.request
from pathlib import Path

import pytest

from tests.harness import REPO_ROOT
from tests.processes import LOOPBACK, free_port, wait_until
from tests.stack.stack import jaeger

pytestmark = pytest.mark.mcp2  # the stack's assets do not depend on the SDK major

STACK_SCRIPT = REPO_ROOT / "collector-config" / "stack.sh"


def _note() -> str:
    return subprocess.run(
        ["bash", str(STACK_SCRIPT), "note"], capture_output=True, text=True, check=True, timeout=30
    ).stdout.strip()


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("`", "")).strip()


def test_stack_up_says_there_is_no_jaeger_ui_and_where_to_look() -> None:
    note = _note()
    for fact in ("no UI", "docker compose up", "http://127.0.0.1:9090", "mcp-otel report"):
        assert fact in note, fact
    up = STACK_SCRIPT.read_text().split("\nup)", 1)[1].split(";;", 1)[0]
    assert 'echo ">> $JAEGER_UI_NOTE"' in up  # said at every start
    assert _words(note) in _words((REPO_ROOT / "docs" / "stack.md").read_text())


def test_the_built_jaeger_serves_its_api_and_only_a_placeholder_page(tmp_path: Path) -> None:
    with jaeger(tmp_path, f"http://{LOOPBACK}:{free_port()}") as started:
        base = started.url

        def get(path: str) -> str:
            with urllib.request.urlopen(base + path, timeout=10) as response:
                return str(response.read().decode())

        wait_until(lambda: '"data"' in get("/api/services"), 30, "Jaeger's query API")
        assert "This is not the Jaeger UI you are looking for" in get("/")
