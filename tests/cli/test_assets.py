"""``mcp-otel assets DIR``: the repository's own stack files, laid out as docker-compose.yml expects
them; nothing overwritten without ``--force`` (the wheel's copy is tested in tests/packaging)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mcp_otel.cli.assets import ASSETS
from mcp_otel.cli.main import main
from tests.harness import REPO_ROOT


def test_writes_every_asset_as_the_repository_has_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["assets", str(tmp_path / "stack")]) == 0
    assert capsys.readouterr().out.split() == [str(tmp_path / "stack" / name) for name in ASSETS]
    for name in ASSETS:
        assert (tmp_path / "stack" / name).read_bytes() == (REPO_ROOT / name).read_bytes(), name
    # Every file the compose file mounts is there.
    compose = yaml.safe_load((tmp_path / "stack" / "docker-compose.yml").read_text())
    mounts = [volume.split(":")[0] for service in compose["services"].values() for volume in service.get("volumes", [])]
    assert all((tmp_path / "stack" / mount).exists() for mount in mounts if mount.startswith("./")), mounts


def test_keeps_a_changed_file_unless_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["assets", str(tmp_path)]) == 0
    edited = tmp_path / "collector-config" / "collector.yaml"
    edited.write_text("# mine\n")
    assert main(["assets", str(tmp_path)]) == 2  # again, unchanged files are fine; a changed one is not
    assert "use --force" in capsys.readouterr().err
    assert edited.read_text() == "# mine\n"
    assert main(["assets", str(tmp_path), "--force"]) == 0
    assert edited.read_bytes() == (REPO_ROOT / "collector-config" / "collector.yaml").read_bytes()
