"""The layers stay as docs/architecture.md draws them, in every language, read from the code's own
imports: each Python module (``ast``), each TypeScript module of ``node/src`` (its
``import ... from './x.js'`` lines) and each Go file of the library module (its imports of the
module's own packages) is in exactly one layer of its language's table on the page, the table names
nothing that is not there, no module imports one of a layer above its own, and there is no import
cycle (in ``src/``, ``benchmarks/``, ``node/src``, among the Go module's packages; Python imports
inside functions count: they run too). The Python package's folders keep their order as well, and
no Python module is over 400 lines without its docstring saying why."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.harness import REPO_ROOT

SRC = REPO_ROOT / "src"
PACKAGE = "mcp_otel"
ARCHITECTURE = REPO_ROOT / "docs" / "architecture.md"
_CODE = re.compile(r"`([^`]+)`")


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


def _rows(page: str, heading: str) -> list[list[str]]:
    """The names in backticks of each row's second cell, in the first table after ``heading`` (a
    ``##`` line of the page), top row first."""
    lines = page.splitlines()
    rows: list[list[str]] = []
    for line in lines[lines.index(heading) + 1 :]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] not in ("Layer", "---"):
            rows.append(_CODE.findall(cells[1]))
    return rows


def _layers(rows: list[list[str]], modules: set[str], member: dict[str, str]) -> list[set[str]]:
    """Each row's modules: a name ending in ``/`` is every module under it, else the one module
    ``member`` maps it to. A name that matches no module fails: the page names only what is there."""
    layers = []
    for row in rows:
        layer: set[str] = set()
        for name in row:
            if name.endswith("/"):
                matched = {module for module in modules if module.startswith(member[name])}
            else:
                matched = {member[name]} & modules
            assert matched, f"the architecture page names {name}, which is not there"
            layer |= matched
        layers.append(layer)
    return layers


def _climbing(graph: dict[str, set[str]], layers: list[set[str]]) -> set[tuple[str, str]]:
    """Every import of ``graph`` into a layer above the importer's."""
    depth = {module: index for index, layer in enumerate(layers) for module in layer}
    return {(name, target) for name, targets in graph.items() for target in targets if depth[target] < depth[name]}


def _held(graph: dict[str, set[str]], layers: list[set[str]]) -> None:
    placed = [module for layer in layers for module in layer]
    assert sorted(placed) == sorted(graph), "each module in exactly one layer, and no module that is not there"
    assert _climbing(graph, layers) == set()
    assert _cycle(graph) is None


# Python: `x/y.py` is module mcp_otel.x.y, `x/__init__.py` the package mcp_otel.x, `x/` the package
# and every module under it, `mcp_otel` the root.
def _python_name(name: str) -> str:
    if name == PACKAGE:
        return PACKAGE
    dotted = name.removesuffix("/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return f"{PACKAGE}.{dotted}" + ("." if name.endswith("/") else "")


def _python_layers(modules: set[str]) -> list[set[str]]:
    rows = _rows(ARCHITECTURE.read_text(), "## The Python package")
    member = {name: _python_name(name) for row in rows for name in row}
    # `x/` also holds the package x itself
    layers = _layers(rows, modules, member)
    for row, layer in zip(rows, layers, strict=True):
        layer |= {member[name].removesuffix(".") for name in row if name.endswith("/")} & modules
    return layers


# The package's folders, top first: a folder imports only folders below it (and the top-level
# modules the table puts in its layers or below). The order is the page's, held here in one line.
FOLDERS = ("cli", "proxy", "run", "instrumentation", "model")


def _folder(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FOLDERS else None


def test_the_python_package_keeps_its_layers() -> None:
    graph = _graph(SRC, PACKAGE)
    _held(graph, _python_layers(set(graph)))


def test_the_python_folders_import_only_folders_below_their_own() -> None:
    graph = _graph(SRC, PACKAGE)
    assert {_folder(module) for module in graph} == {*FOLDERS, None}, "every folder of the package is in FOLDERS"
    upward = {
        (name, target)
        for name, targets in graph.items()
        for target in targets
        if (mine := _folder(name)) and (theirs := _folder(target)) and FOLDERS.index(theirs) < FOLDERS.index(mine)
    }
    assert upward == set()
    # the model reads no one source: nothing of the instrumentation, the proxy, run or the CLI
    below = {f"{PACKAGE}.semconv", f"{PACKAGE}.version"}
    read = {target for name, targets in graph.items() if _folder(name) == "model" for target in targets}
    assert {target for target in read if _folder(target) != "model"} <= below


def test_a_python_module_over_400_lines_says_why_in_its_docstring() -> None:
    long = {
        path.relative_to(SRC).as_posix(): ast.get_docstring(ast.parse(path.read_text())) or ""
        for path in (SRC / PACKAGE).rglob("*.py")
        if len(path.read_text().splitlines()) > 400 and path.name != "semconv.py"  # generated from spec/
    }
    assert {path for path, docstring in long.items() if "400 lines" not in docstring} == set()


def test_no_import_cycle_in_the_benchmarks() -> None:
    assert _cycle(_graph(REPO_ROOT, "benchmarks")) is None


NODE_SRC = REPO_ROOT / "node" / "src"
_TS_IMPORT = re.compile(r"""^(?:import|export)\b[^;]*?from\s+'(\.{1,2}/[^']+)\.js';""", re.MULTILINE | re.DOTALL)


def _ts_graph() -> dict[str, set[str]]:
    """``node/src``'s modules (``client``, ``frontends/sdk1``) and the modules each imports."""
    graph = {}
    for path in NODE_SRC.rglob("*.ts"):
        name = path.relative_to(NODE_SRC).with_suffix("").as_posix()
        targets = {(path.parent / found).resolve() for found in _TS_IMPORT.findall(path.read_text())}
        graph[name] = {target.relative_to(NODE_SRC.resolve()).as_posix() for target in targets}
    return graph


def test_the_typescript_package_keeps_its_layers() -> None:
    graph = _ts_graph()
    assert graph, "node/src has modules"
    rows = _rows(ARCHITECTURE.read_text(), "## The TypeScript package")
    # `x.ts` is module x, `x/` every module under it
    _held(graph, _layers(rows, set(graph), {name: name.removesuffix(".ts") for row in rows for name in row}))
    assert "sides" in graph["frontends/protocol"]  # the checks see the imports: a front end feeds the sides


GO_MODULE = REPO_ROOT / "go"
_GO_IMPORT = re.compile(r'"github\.com/mcp-otel/mcp-otel/go/([^"]+)"')


def _go_files() -> dict[str, set[str]]:
    """The library module's files (``mcpotel/lifecycle.go``; tests, test data and any module of
    its own inside ``go/`` left out) and the module's packages each imports (``internal/model``)."""
    nested = [path.parent for path in GO_MODULE.rglob("go.mod") if path.parent != GO_MODULE]
    return {
        path.relative_to(GO_MODULE).as_posix(): set(_GO_IMPORT.findall(path.read_text()))
        for path in GO_MODULE.rglob("*.go")
        if not path.name.endswith("_test.go")
        and "testdata" not in path.parts
        and not any(path.is_relative_to(module) for module in nested)
    }


def _go_packages(files: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module's packages (a folder of files: ``mcpotel``, ``internal/model``) and the
    packages each imports."""
    graph: dict[str, set[str]] = {}
    for file, packages in files.items():
        graph.setdefault(file.rpartition("/")[0], set()).update(packages)
    return graph


def test_the_go_module_keeps_its_layers() -> None:
    files = _go_files()
    rows = _rows(ARCHITECTURE.read_text(), "## The Go module")
    layers = _layers(rows, set(files), {name: name for row in rows for name in row})  # `x/y.go`, or `x/`
    placed = [file for layer in layers for file in layer]
    assert sorted(placed) == sorted(files), "each Go file in exactly one layer"
    # Files of one package see each other without imports, so the order is held by package: a
    # file may import a package only if every file of it is in the file's layer or below.
    depth = {file: index for index, layer in enumerate(layers) for file in layer}
    climbing = {
        (file, package)
        for file, packages in files.items()
        for package in packages
        for other in files
        if other.rpartition("/")[0] == package and depth[other] < depth[file]
    }
    assert climbing == set()
    packages = _go_packages(files)
    assert set().union(*packages.values()) <= set(packages), "every package imported is in the module"
    assert _cycle(packages) is None, "no import cycle among the Go module's packages"
    assert "internal/model" in files["mcpotel/lifecycle.go"]  # the checks see the imports


def test_the_checks_see_a_cycle_a_climbing_import_and_a_stale_name() -> None:
    """The checks themselves: a cycle, an import from below into a front end, a folder importing
    one above it and a name the page gives that is not there are found."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    graph = _graph(SRC, PACKAGE)
    assert "mcp_otel.instrumentation.client" in graph["mcp_otel.instrumentation.frontends.mcp1"]
    assert "mcp_otel.model.messages" in graph["mcp_otel.instrumentation.client"]
    layers = _python_layers(set(graph))
    front_ends = next(layer for layer in layers if "mcp_otel.proxy.wire" in layer)
    assert "mcp_otel.instrumentation.frontends.sdk" in front_ends
    assert "mcp_otel.proxy.http" in next(layer for layer in layers if "mcp_otel.instrumentation.instrumentor" in layer)
    lifecycle, wire = "mcp_otel.model.lifecycle", "mcp_otel.proxy.wire"
    assert _climbing({lifecycle: {wire}, wire: set()}, layers) == {(lifecycle, wire)}
    client, server = "mcp_otel.instrumentation.client", "mcp_otel.instrumentation.server"
    assert _climbing({client: {server}, server: set()}, layers) == set()
    assert FOLDERS.index("model") > FOLDERS.index(_folder(wire) or "")
    with pytest.raises(AssertionError, match=r"names gone\.py, which is not there"):
        _layers([["gone.py"]], set(graph), {"gone.py": "mcp_otel.gone"})
    go = _go_packages({"a/x.go": {"b"}, "b/y.go": {"a"}})
    assert _cycle(go) == ["a", "b", "a"]
