"""What a docs page tells a new user to type, run as written in a fresh folder.

A page marks each block of a scripted run with an HTML comment on the line above the block
(invisible on the rendered page):

=================================  =============================================================
``<!-- run: NAME -->``             the ```` ```sh ```` block below runs: every block of NAME, in
                                   page order, in one bash (``set -eo pipefail``), so a ``cd`` in
                                   one block holds in the next
``<!-- run: NAME file=PATH -->``   the block below is saved as PATH, relative to the shell's folder
                                   at that point, as a user saves a snippet before running it
``<!-- as run: NAME -->``          the ```` ```sh ```` block below repeats commands of run NAME
                                   (the README's quick starts): each of its lines is one of
                                   NAME's, in the same order
``<!-- not run: REASON -->``       the ```` ```sh ```` block below is not run here, for REASON
                                   (a registry command of a package not yet published, a desktop
                                   client's file)
=================================  =============================================================

One line is not run as written: ``git clone https://github.com/mcp-otel/mcp-otel`` copies this
checkout (its tracked and untracked files, ignored ones left out) into ``mcp-otel``, as the clone
would give it; this machine reaches only the package registries. Everything else (npm, pip, go)
runs for real against the registries, with the OpenTelemetry and mcp-otel variables of the test's
own environment removed.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CLONE = "git clone https://github.com/mcp-otel/mcp-otel"
_MARK = re.compile(
    r"^<!-- (run: (?P<name>[\w.-]+)(?: file=(?P<path>\S+))?|as run: (?P<copy>[\w.-]+)|not run: (?P<reason>.+?)) -->$"
)
_FENCE = re.compile(r"^```(?P<info>\S*)$")
# The variables a test run has that a new user's shell would not.
_OWN_PREFIXES = ("OTEL_", "MCP_OTEL_", "PYTEST_", "COV_")
_OWN_NAMES = {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "NODE_OPTIONS", "GOFLAGS"}


@dataclass(frozen=True)
class Block:
    """One fenced block of a page and the mark above it (None: unmarked)."""

    page: Path
    line: int
    info: str
    text: str
    run: str | None = None
    path: str | None = None
    as_run: str | None = None
    not_run: str | None = None


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, with its mark."""
    lines = page.read_text().splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i] == "```")
        mark = _MARK.match(lines[index - 1]) if index else None
        found.append(
            Block(
                page=page,
                line=index + 1,
                info=fence["info"],
                text="\n".join(lines[index + 1 : end]) + "\n",
                run=mark["name"] if mark else None,
                path=mark["path"] if mark else None,
                as_run=mark["copy"] if mark else None,
                not_run=mark["reason"] if mark else None,
            )
        )
        index = end + 1
    return found


def script(pages: list[Path], name: str) -> str:
    """The bash script of run ``name``: its blocks from ``pages``, in order."""
    parts = ["set -eo pipefail", _clone_function()]
    steps = [block for page in pages for block in blocks(page) if block.run == name]
    if not steps:
        raise LookupError(f"no block of run {name!r} on {', '.join(page.name for page in pages)}")
    for block in steps:
        if block.path:
            parts.append(f'mkdir -p "$(dirname {shlex.quote(block.path)})"')
            parts.append(f"cat > {shlex.quote(block.path)} <<'MCP_OTEL_DOCS_EOF'\n{block.text}MCP_OTEL_DOCS_EOF")
        else:
            assert block.info == "sh", f"{block.page.name}:{block.line}: a run's commands are a sh block"
            parts.append(f"# {block.page.name}:{block.line}")
            parts.append(block.text.replace(CLONE, "mcp_otel_clone"))
    return "\n".join(parts) + "\n"


def _clone_function() -> str:
    """A shell function standing for the clone: this checkout's files into ``./mcp-otel``."""
    root = shlex.quote(str(REPO_ROOT))
    return (
        "mcp_otel_clone() {\n"
        "  mkdir mcp-otel && (cd " + root + " && git ls-files -z -co --exclude-standard"
        " | tar --null --ignore-failed-read -T - -cf -) | tar -xf - -C mcp-otel\n"
        "}"
    )


def environment(**extra: str) -> dict[str, str]:
    """This process's environment as a new user's shell would have it, plus ``extra``."""
    clean = {
        key: value for key, value in os.environ.items() if not key.startswith(_OWN_PREFIXES) and key not in _OWN_NAMES
    }
    # A virtualenv's bin on PATH (pytest's own) is not the user's: drop it.
    venv = Path(sys.executable).parent
    clean["PATH"] = os.pathsep.join(part for part in clean.get("PATH", "").split(os.pathsep) if Path(part) != venv)
    return clean | extra


def run(
    pages: list[Path], name: str, folder: Path, *, timeout: float = 900, **extra: str
) -> subprocess.CompletedProcess[str]:
    """Run ``name``'s blocks in ``folder`` (empty, the user's), as written; raise on failure with
    the script and its output, so a page that does not work says which line."""
    text = script(pages, name)
    saved = folder.parent / f"{folder.name}.{name}.sh"  # beside the folder: the user's stays as theirs
    saved.write_text(text)
    completed = subprocess.run(
        ["bash", str(saved)],
        cwd=folder,
        env=environment(**extra),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if completed.returncode:
        raise AssertionError(
            f"run {name!r} exited {completed.returncode}\n--- script\n{text}\n--- stdout\n{completed.stdout[-6000:]}"
            f"\n--- stderr\n{completed.stderr[-6000:]}"
        )
    return completed
