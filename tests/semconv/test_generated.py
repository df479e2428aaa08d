"""The names modules are what spec/names.yaml gives: each carries the spec's sha256 (the same check
the TypeScript and Go packages run in their own tests), and regenerating them all changes nothing.
The settings in the spec are the ones ``mcp_otel.config`` reads, with the same variables and defaults.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from dataclasses import MISSING, fields
from enum import Enum
from types import ModuleType
from typing import Any

import yaml

from mcp_otel import config
from tests.harness import REPO_ROOT

SPEC = REPO_ROOT / "spec" / "names.yaml"
STAMP = re.compile(r"spec/names\.yaml sha256 ([0-9a-f]{64})")


def generator() -> ModuleType:
    """spec/generate.py (a script beside the spec, not a package)."""
    found = importlib.util.spec_from_file_location("spec_generate", REPO_ROOT / "spec" / "generate.py")
    assert found is not None and found.loader is not None
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
