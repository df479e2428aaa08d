"""The Go library's module (go/) requires the MCP SDK and the OpenTelemetry API only, as otelhttp's
does; the OpenTelemetry SDK, the test server and the programs the tests run are in a module of
their own (go/test). Each module is tidy on both SDK versions it is tested with (go.mod: the
lowest, newest.mod: the newest), so its requirements are what its packages import.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.go.conftest import GO_TESTS
from tests.processes import no_python_sdk

pytestmark = no_python_sdk

GO_LIBRARY_MODULE = GO_TESTS.parent
MODULE_FILES = ("go.mod", "newest.mod")
# What an application that instruments its MCP SDK takes on by importing mcpotel.
LIBRARY_REQUIRES = {
    "github.com/modelcontextprotocol/go-sdk",
    "go.opentelemetry.io/otel",
    "go.opentelemetry.io/otel/metric",
    "go.opentelemetry.io/otel/trace",
}
_REQUIRE_BLOCK = re.compile(r"^require \((.*?)^\)", re.MULTILINE | re.DOTALL)


def direct_requires(module_file: Path) -> set[str]:
    """The modules a go.mod requires directly (not those marked ``// indirect``)."""
    lines = [line for block in _REQUIRE_BLOCK.findall(module_file.read_text()) for line in block.splitlines()]
    return {line.split()[0] for line in lines if line.strip() and "// indirect" not in line}


@pytest.mark.parametrize("name", MODULE_FILES)
def test_the_library_requires_the_opentelemetry_api_only(name: str) -> None:
    assert direct_requires(GO_LIBRARY_MODULE / name) == LIBRARY_REQUIRES


@pytest.mark.parametrize("name", MODULE_FILES)
def test_the_tests_module_has_the_sdk_and_the_library_from_this_checkout(name: str) -> None:
    text = (GO_TESTS / name).read_text()
    assert {"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/sdk/metric"} <= direct_requires(GO_TESTS / name)
    assert "\nreplace github.com/mcp-otel/mcp-otel/go => ../\n" in text


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
@pytest.mark.parametrize("module", [GO_LIBRARY_MODULE, GO_TESTS], ids=["go", "go/test"])
@pytest.mark.parametrize("name", MODULE_FILES)
def test_each_module_is_tidy(module: Path, name: str) -> None:
    """An import the module file does not require, or a requirement nothing imports, fails here."""
    go = shutil.which("go")
    assert go is not None
    tidy = subprocess.run(
        [go, "mod", "tidy", "-diff", f"-modfile={name}"], cwd=module, capture_output=True, text=True, timeout=300
    )
    assert tidy.returncode == 0, tidy.stdout + tidy.stderr
