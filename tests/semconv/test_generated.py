"""The names modules are what spec/names.yaml gives: each carries the spec's sha256 (the same check
the TypeScript and Go packages run in their own tests), and regenerating them all changes nothing.
The settings in the spec are the ones ``mcp_otel.model.config`` reads, with the same variables and defaults.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import shutil
import subprocess
import sys
from dataclasses import MISSING, fields
from enum import Enum
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from mcp_otel.model import config
from tests.harness import REPO_ROOT

SPEC = REPO_ROOT / "spec" / "names.yaml"
STAMP = re.compile(r"spec/names\.yaml sha256 ([0-9a-f]{64})")


def generator() -> ModuleType:
    """spec/generate.py (a script beside the spec, not a package)."""
    found = importlib.util.spec_from_file_location("spec_generate", REPO_ROOT / "spec" / "generate.py")
    assert found is not None
    assert found.loader is not None
    module = importlib.util.module_from_spec(found)
    sys.modules[found.name] = module  # (its dataclasses look their module up there)
    found.loader.exec_module(module)
    return module


def test_the_python_names_module_carries_the_spec_hash() -> None:
    stamp = STAMP.search((REPO_ROOT / "src" / "mcp_otel" / "semconv.py").read_text())
    assert stamp is not None, "src/mcp_otel/semconv.py has no spec hash: run python spec/generate.py"
    assert stamp.group(1) == hashlib.sha256(SPEC.read_bytes()).hexdigest(), (
        "src/mcp_otel/semconv.py is stale: run python spec/generate.py"
    )


def test_every_generated_file_is_what_the_spec_gives() -> None:
    stale = [
        path
        for path, text in generator().generate().items()
        if not (REPO_ROOT / path).exists() or (REPO_ROOT / path).read_text() != text
    ]
    assert stale == [], f"stale: {stale}: run python spec/generate.py"


def setting_default(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def test_the_spec_settings_are_the_ones_python_reads() -> None:
    settings = yaml.safe_load(SPEC.read_text())["mcp_otel"]["settings"]
    assert settings["prefix"] == config.ENV_PREFIX
    python = [entry for entry in settings["list"] if "python" in entry.get("languages", ["python"])]
    assert [entry["name"] for entry in python] == [field.name for field in fields(config.Settings)]
    defaults = {field.name: setting_default(field.default) for field in fields(config.Settings)}
    assert all(field.default is not MISSING for field in fields(config.Settings))
    assert {entry["name"]: entry["default"] for entry in python} == defaults
    fallbacks = {entry["name"]: tuple(entry["fallback_variables"]) for entry in python if "fallback_variables" in entry}
    assert fallbacks == config._FALLBACK_ENV
    assert [variable["name"] for variable in settings["process_variables"]] == [
        config.RUN_FILE_ENV,
        config.RUN_FILE_MAX_BYTES_ENV,
        config.RUN_FILE_KEEP_ENV,
    ]


def test_the_readme_commands_regenerate_a_stale_copy(tmp_path: Path) -> None:
    """spec/README.md's commands, as written, in a fresh folder holding the spec and its outputs:
    ``--check`` names the files a changed spec made stale and exits 1; the plain command rewrites
    them, and ``--check`` passes then."""
    files = ["spec/names.yaml", "spec/generate.py", *generator().generate()]
    for path in files:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / path, tmp_path / path)
    spec = tmp_path / "spec" / "names.yaml"
    spec.write_text(spec.read_text().replace("brief: The session's id.", "brief: The session's own id."))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "spec/generate.py", *args]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)

    stale = run("--check")
    assert stale.returncode == 1
    assert stale.stderr.splitlines() == [f"{path} is stale: run python spec/generate.py" for path in files[2:]]
    assert run().returncode == 0
    assert "The session's own id." in (tmp_path / "node" / "src" / "semconv.ts").read_text()
    assert run("--check").returncode == 0
