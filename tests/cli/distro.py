"""opentelemetry-distro beside mcp-otel, as people install it for ``opentelemetry-instrument``:
the release of the installed opentelemetry-instrumentation (the distro pins it exactly), put in a
directory once (pip, from the package index; kept in ``.cache/``) for a subprocess's PYTHONPATH.
Its configurator is then one of the entry points that opentelemetry-instrument finds."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

from tests.harness import REPO_ROOT


def distro_path() -> Path:
    release = version("opentelemetry-instrumentation")
    target = REPO_ROOT / ".cache" / f"opentelemetry-distro-{release}"
    if (target / "opentelemetry" / "distro").is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f"{target.name}."))
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"]
    subprocess.run([*pip, "--target", str(staging), f"opentelemetry-distro=={release}"], check=True, timeout=300)
    try:
        staging.rename(target)  # whole or not at all
    except OSError:  # another run put it there first
        shutil.rmtree(staging)
    return target
