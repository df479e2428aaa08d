"""The layers stay as docs/architecture.md draws them, read from the code's own imports (ast):
no import cycle in ``src/`` or ``benchmarks/`` (imports inside functions count: they run too),
and nothing at or below the lifecycle imports a front end, a host (the proxy's relays and
command, the instrumentor, the CLI) or the CLI's helpers."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.harness import REPO_ROOT

SRC = REPO_ROOT / "src"
PACKAGE = "mcp_otel"
# Above the lifecycle: the hosts (the package's root is the public API: the instrumentor) and
# the front ends they apply. Every other module of the package
# is the lifecycle's layer or below it (the sides, the classifier, the writer, metrics, shapes).
HOSTS = {
    "mcp_otel",
    "mcp_otel.instrumentor",
    "mcp_otel.cli",
    "mcp_otel.run_configurator",
    "mcp_otel.wrap",
    "mcp_otel.assets",
}
ABOVE = ("mcp_otel.frontends", "mcp_otel.proxy")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The known modules ``path`` (module ``name``) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            # ``from pkg import module`` imports the module; ``from module import name``, the module
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target not in (name, PACKAGE):  # the root runs before any submodule
                found.add(target)
    return found


def _graph(root: Path, top: str) -> dict[str, set[str]]:
    paths = {_module_name(path, root): path for path in (root / top).rglob("*.py")}
    return {name: _imports(path, name, set(paths)) for name, path in paths.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, as the modules along it, or ``None``."""
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := walk(target)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := walk(node)):
            return found
    return None


def _is_above(name: str) -> bool:
    return name in HOSTS or any(name == top or name.startswith(top + ".") for top in ABOVE)


def test_no_import_cycle_in_the_package() -> None:
    assert _cycle(_graph(SRC, PACKAGE)) is None


def test_no_import_cycle_in_the_benchmarks() -> None:
    assert _cycle(_graph(REPO_ROOT, "benchmarks")) is None


def test_nothing_below_the_front_ends_imports_them_or_a_host() -> None:
    graph = _graph(SRC, PACKAGE)
    climbing = {
        (name, target)
        for name, targets in graph.items()
        if not _is_above(name)
        for target in targets
        if _is_above(target)
    }
    assert climbing == set()


def test_the_checks_see_a_cycle_and_a_climbing_import() -> None:
    """The checks themselves: a cycle and an import from below into a front end are found."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    graph = _graph(SRC, PACKAGE)
    assert "mcp_otel.client" in graph["mcp_otel.frontends.mcp1"]  # a front end feeds the lifecycle
    assert "mcp_otel.messages" in graph["mcp_otel.client"]
    assert all(_is_above(name) for name in ("mcp_otel.frontends.wire", "mcp_otel.proxy.http", "mcp_otel.cli"))
    assert not _is_above("mcp_otel.lifecycle")
