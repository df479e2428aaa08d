"""The install and first-hour pages hold to the rule: every command they show is run by a test in
a fresh folder (a marked run, :mod:`tests.first_hour.docs_commands`), repeats a run's commands, or
says why not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.first_hour.docs_commands import REPO_ROOT, blocks

DOCS = REPO_ROOT / "docs"
PAGES = [REPO_ROOT / "README.md", DOCS / "instrument.md", DOCS / "typescript.md", DOCS / "go.md", DOCS / "rust.md"]
TESTS = Path(__file__).parent


def _commands(text: str) -> list[str]:
    """A block's command lines, comments and blank lines left out."""
    lines = (line.split("  #")[0].strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_command_block_is_run_or_says_why_not(page: Path) -> None:
    unmarked = [
        block.line for block in blocks(page) if block.info == "sh" and not (block.run or block.as_run or block.not_run)
    ]
    assert unmarked == [], f"{page.name}: sh blocks at these lines are neither run nor say why not"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_run_a_page_marks_is_run_by_a_test(page: Path) -> None:
    sources = "\n".join(path.read_text() for path in TESTS.glob("test_*.py"))
    runs = {block.run for block in blocks(page) if block.run}
    missing = {run for run in runs if not re.search(rf"[\"']{re.escape(run)}[\"']", sources)}
    assert missing == set()


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_a_block_that_repeats_a_run_repeats_its_commands_in_order(page: Path) -> None:
    for block in blocks(page):
        if not block.as_run:
            continue
        run = [
            command
            for other in PAGES
            for step in blocks(other)
            if step.run == block.as_run and not step.path
            for command in _commands(step.text)
        ]
        assert run, f"{page.name}:{block.line}: no run {block.as_run!r}"
        position = 0
        for command in _commands(block.text):
            assert command in run[position:], f"{page.name}:{block.line}: {command!r} is not run {block.as_run!r}'s"
            position = run.index(command, position) + 1
