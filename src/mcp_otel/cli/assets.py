"""The observability stack's deployable files, as shipped in the wheel: the collector (single, and
the scaled topology's edge and gateway), Jaeger and Tempo configurations, the Prometheus rules and
configuration, the Grafana dashboard and provisioning, and the Docker compose file that runs them
(``mcp-otel assets DIR`` writes them).

They are the repository's own files, put into the wheel by the build (``pyproject.toml``,
``force-include``) under ``mcp_otel/cli/assets/``; run from a source checkout, they are read where
they live. Either way a user gets the files the tests prove, laid out as ``docker-compose.yml``
expects them (``cd DIR && docker compose up -d``).
"""

from __future__ import annotations

from pathlib import Path

# Paths relative to the repository root (and to mcp_otel/cli/assets/ in the wheel).
ASSETS = (
    "collector-config/collector.yaml",
    "collector-config/edge.yaml",
    "collector-config/gateway.yaml",
    "collector-config/jaeger.yaml",
    "collector-config/tempo.yaml",
    "grafana/dashboards/mcp-tool-calls.json",
    "grafana/rules/mcp-tool-calls.rules.yml",
    "grafana/prometheus/prometheus.yml",
    "grafana/provisioning/dashboards/mcp-otel.yaml",
    "grafana/provisioning/datasources/mcp-otel.yaml",
    "docker-compose.yml",
)

_PACKAGE = Path(__file__).resolve().parent


class AssetsError(Exception):
    """The assets could not be written: the message says why and what to do."""


def asset_root() -> Path:
    """Where the assets are: in the installed wheel, or (a source checkout) the repository."""
    shipped = _PACKAGE / "assets"
    if (shipped / ASSETS[0]).is_file():
        return shipped
    checkout = _PACKAGE.parents[2]  # src/mcp_otel/cli
    if (checkout / ASSETS[0]).is_file():
        return checkout
    raise AssetsError("this installation of mcp-otel has no assets (a wheel built without them?)")


def write_assets(directory: Path, *, overwrite: bool = False) -> list[Path]:
    """Write every asset under ``directory`` (created if missing); returns the files written.
    Existing files with other contents are left alone unless ``overwrite``: nothing is written
    then, and the error names them."""
    root = asset_root()
    contents = {name: (root / name).read_bytes() for name in ASSETS}
    targets = {name: directory / name for name in ASSETS}
    clashes = [
        str(target) for name, target in targets.items() if target.exists() and target.read_bytes() != contents[name]
    ]
    if clashes and not overwrite:
        raise AssetsError(
            f"{len(clashes)} file(s) exist with other contents (use --force to overwrite): " + ", ".join(clashes)
        )
    for name, target in targets.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(contents[name])
    return list(targets.values())
