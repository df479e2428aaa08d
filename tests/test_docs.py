"""The README is the front door (short, every link resolving) and the documentation's tables say
what the code writes: the outcome, cancel reason and error type values in them are the ones in
:mod:`mcp_otel.semconv`. Every design rule the code of any language cites (``docs/decisions.md rule
N``) is on that page. The site itself is built strictly by ``make docs-check`` (in ``make test``):
a broken link, a missing page or an anchor that moved fails it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from mcp_otel.semconv import CancelReason, ErrorType, Outcome, ResultType
from tests.harness import REPO_ROOT

README = REPO_ROOT / "README.md"
DOCS = REPO_ROOT / "docs"
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`]+)`")
ERROR_TYPES = {value for name, value in vars(ErrorType).items() if name.isupper()}
OUTCOMES = {outcome.value for outcome in Outcome}
CANCEL_REASONS = {reason.value for reason in CancelReason}
RESULT_TYPES = {result_type.value for result_type in ResultType}  # answered with no outcome yet


def test_the_readme_is_short() -> None:
    assert len(README.read_text().splitlines()) <= 150


def test_every_link_in_the_readme_resolves() -> None:
    links = _LINK.findall(README.read_text())
    assert len(links) >= 15  # the quick starts' and the documentation's
    for link in links:
        if link.startswith(("http://", "https://")):
            continue
        path, _, anchor = link.partition("#")
        assert (REPO_ROOT / path).is_file(), link
        assert not anchor, f"{link}: GitHub and the site name anchors differently; link the page"


def _table_rows(text: str) -> list[list[str]]:
    """The cells of every table row (header and separator rows included)."""
    rows = [line.strip().strip("|").split("|") for line in text.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row] for row in rows]


def _columns(rows: list[list[str]], header: str) -> list[str]:
    """The cells under ``header`` in every table that has that column."""
    cells, index = [], None
    for row in rows:
        if header in row:
            index = row.index(header)
        elif index is not None and len(row) > index and not set(row[index]) <= {"-"}:
            cells.append(row[index])
        if len(row) <= (index or 0):
            index = None
    return cells


@pytest.mark.parametrize("page", [README, DOCS / "outcomes.md"], ids=lambda page: page.name)
def test_the_outcome_tables_name_only_values_the_code_writes(page: Path) -> None:
    rows = _table_rows(page.read_text())
    outcome_cells = _columns(rows, "`mcp.request.outcome`")
    error_cells = _columns(rows, "`error.type`")
    assert outcome_cells
    assert error_cells
    named_outcomes = {code for cell in outcome_cells for code in _CODE.findall(cell)}
    assert named_outcomes & OUTCOMES == OUTCOMES, "each outcome appears"
    for code in named_outcomes - OUTCOMES:
        assert code in CANCEL_REASONS | RESULT_TYPES or code.startswith("mcp.request.") or "=" in code, code
    named_errors = {code for cell in error_cells for code in _CODE.findall(cell)}
    for code in named_errors:
        words = code.split(", ")
        for word in words:
            known = word in ERROR_TYPES or word in CANCEL_REASONS or re.fullmatch(r"-?\d+", word)
            assert known or word.startswith(("mcp.", "rpc.", "tool.", "http.")), word
    assert {ErrorType.TOOL_ERROR, ErrorType.TIMEOUT, ErrorType.CONNECTION_CLOSED} <= named_errors | {
        word for code in named_errors for word in code.split(", ")
    }


DECISIONS = DOCS / "decisions.md"
_RECORD = re.compile(r"\bADR\b")  # a design record by number, as the code once cited one not in the repository
_RULES_CITED = re.compile(r"decisions\.md[\s#/*]+rules?[\s#/*]+(\d+(?:(?:,|\s+and|\s+or)[\s#/*]+\d+)*)")
_TEXT = {".py", ".ts", ".mjs", ".cjs", ".js", ".go", ".md", ".yaml", ".yml", ".toml", ".json", ".txt", ".sh", ".mk"}
_NOT_OURS = {"node_modules", "dist", "site", "__pycache__"}


def _our_text_files() -> list[tuple[str, str]]:
    """Every text file of the repository (relative path, text): code, configuration and docs of
    every language, without dependencies, builds or virtualenvs."""
    found = []
    for folder, names, files in os.walk(REPO_ROOT):
        names[:] = [name for name in names if name not in _NOT_OURS and not name.startswith((".", "dist."))]
        for file in files:
            path = Path(folder, file)
            if path.suffix in _TEXT or file in ("Makefile", "Dockerfile"):
                found.append((path.relative_to(REPO_ROOT).as_posix(), path.read_text(errors="replace")))
    return found


def _rules_on_the_page() -> list[int]:
    return [int(number) for number in re.findall(r"^## Rule (\d+):", DECISIONS.read_text(), re.MULTILINE)]


def test_the_decisions_page_numbers_its_rules_in_order() -> None:
    rules = _rules_on_the_page()
    assert rules == list(range(1, len(rules) + 1))
    assert len(rules) >= 6


def test_every_design_rule_cited_is_on_the_decisions_page() -> None:
    rules, files = set(_rules_on_the_page()), _our_text_files()
    assert any(name == "node/src/outcome.ts" for name, _ in files), "the walk sees every language"
    records = [name for name, text in files if _RECORD.search(text)]
    assert records == [], "cite the rule as `docs/decisions.md rule N`, not a record the repository lacks"
    cited = {
        (name, int(number))
        for name, text in files
        for numbers in _RULES_CITED.findall(text)
        for number in re.findall(r"\d+", numbers)
    }
    assert {rule for _, rule in cited} >= {1, 3, 4, 5}, "the code's citations are found"
    assert sorted((name, rule) for name, rule in cited if rule not in rules) == []


def test_every_page_is_in_the_site() -> None:
    nav = (REPO_ROOT / "mkdocs.yml").read_text()
    pages = {path.name for path in DOCS.glob("*.md")}
    assert pages == set(re.findall(r":\s*(\S+\.md)\s*$", nav, re.MULTILINE))


# Pages a reader scans: no prose paragraph longer than this. The generated benchmark tables
# (benchmarks.md, written by benchmarks/run.py) and the changelog (included from CHANGELOG.md)
# are not written as pages.
MAX_PARAGRAPH_LINES = 10
_NOT_PAGES = {"benchmarks.md", "changelog.md"}
_LIST_ITEM = re.compile(r"\s*([-*+]|\d+\.)\s")


def _prose_paragraphs(text: str) -> list[tuple[int, int]]:
    """Each prose paragraph's first line number and length in lines: a run of text lines outside
    code fences, ended by a blank line, a heading, a table row, a picture or the next list item."""
    paragraphs: list[tuple[int, int]] = []
    start, length, fenced = 0, 0, False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        fence = stripped.startswith("```")
        fenced ^= fence
        ends = fence or fenced or not stripped or stripped.startswith(("#", "|", "![", "<", "--8<--"))
        if length and (ends or _LIST_ITEM.match(line)):
            paragraphs.append((start, length))
            length = 0
        if not ends:
            start, length = (number, 1) if not length else (start, length + 1)
    if length:
        paragraphs.append((start, length))
    return paragraphs


def test_the_paragraph_reader_counts_prose_only() -> None:
    text = "intro\nstill intro\n\n```\ncode\ncode\n```\n| a |\n|---|\n- one\n  one more\n- two\n# Head\nlast\n"
    assert _prose_paragraphs(text) == [(1, 2), (10, 2), (12, 1), (14, 1)]


@pytest.mark.parametrize(
    "page",
    [README, *sorted(page for page in DOCS.glob("*.md") if page.name not in _NOT_PAGES)],
    ids=lambda page: page.name,
)
def test_no_prose_paragraph_is_longer_than_ten_lines(page: Path) -> None:
    long = [(line, length) for line, length in _prose_paragraphs(page.read_text()) if length > MAX_PARAGRAPH_LINES]
    assert long == [], f"{page.name}: (first line, lines) of each paragraph to split or make a table or list"
