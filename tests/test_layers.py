"""The layers stay as docs/architecture.md draws them, read from the code's own imports (ast):
every module of the package is in one layer of the page's table, none imports a module of a
layer above its own, and there is no import cycle in ``src/`` or ``benchmarks/`` (imports inside
functions count: they run too). The TypeScript package (``node/src``) is held to its own table
the same way, from its ``import ... from './x.js'`` lines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

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


def _table(page: str, heading: str) -> list[str]:
    """The lines of the first table after ``heading`` (a ``##`` line of the page)."""
    lines = page.splitlines()
    start = lines.index(heading)
    table = []
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
    return table


def _layers(page: str, modules: set[str]) -> list[set[str]]:
    """The modules of each row of the page's table of layers, top first: a cell's `x/y.py` is
    module ``mcp_otel.x.y``, `x/` the package ``mcp_otel.x`` and all in it, `mcp_otel` the root."""
    layers = []
    for line in _table(page, "## The layers"):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or cells[0] in ("Layer", "---"):
            continue
        layer = set()
        for name in _CODE.findall(cells[1]):
            dotted = f"{PACKAGE}.{name.removesuffix('.py').removesuffix('/').replace('/', '.')}".removesuffix(
                ".__init__"
            )
            if name == PACKAGE:
                layer.add(PACKAGE)
            elif name.endswith("/"):
                layer |= {module for module in modules if module == dotted or module.startswith(dotted + ".")}
            else:
                layer.add(dotted)
        layers.append(layer)
    return layers


def _climbing(graph: dict[str, set[str]], layers: list[set[str]]) -> set[tuple[str, str]]:
    """Every import of ``graph`` into a layer above the importer's."""
    depth = {module: index for index, layer in enumerate(layers) for module in layer}
    return {(name, target) for name, targets in graph.items() for target in targets if depth[target] < depth[name]}


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


def _ts_layers(page: str, modules: set[str]) -> list[set[str]]:
    """The modules of each row of the TypeScript table: `x.ts`, or `x/` for every module in it."""
    layers = []
    for line in _table(page, "## The TypeScript package"):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] in ("Layer", "---"):
            continue
        layer = set()
        for name in _CODE.findall(cells[1]):
            if name.endswith("/"):
                layer |= {module for module in modules if module.startswith(name)}
            else:
                layer.add(name.removesuffix(".ts"))
        layers.append(layer)
    return layers


def test_the_typescript_package_keeps_its_layers() -> None:
    graph = _ts_graph()
    assert graph, "node/src has modules"
    layers = _ts_layers(ARCHITECTURE.read_text(), set(graph))
    placed = [module for layer in layers for module in layer]
    assert sorted(placed) == sorted(graph), "each TypeScript module in exactly one layer"
    assert _climbing(graph, layers) == set()
    assert _cycle(graph) is None, "no import cycle among the TypeScript modules"
    assert "sides" in graph["frontends/protocol"]  # the checks see the imports: a front end feeds the sides


GO_MODULE = REPO_ROOT / "go"
_GO_IMPORT = re.compile(r'"github\.com/mcp-otel/mcp-otel/go/([^"]+)"')


def _go_files() -> dict[str, set[str]]:
    """The Go module's files (``mcpotel/lifecycle.go``; tests left out) and the module's packages
    each imports (``internal/model``)."""
    return {
        path.relative_to(GO_MODULE).as_posix(): set(_GO_IMPORT.findall(path.read_text()))
        for path in GO_MODULE.rglob("*.go")
        if not path.name.endswith("_test.go") and "testdata" not in path.parts
    }


def _go_layers(page: str, files: set[str]) -> list[set[str]]:
    """The files of each row of the Go table: `x/y.go`, or `x/` for every file under it."""
    layers = []
    for line in _table(page, "## The Go module"):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] in ("Layer", "---"):
            continue
        layer = set()
        for name in _CODE.findall(cells[1]):
            layer |= {file for file in files if file == name or (name.endswith("/") and file.startswith(name))}
        layers.append(layer)
    return layers


def test_the_go_module_keeps_its_layers() -> None:
    files = _go_files()
    layers = _go_layers(ARCHITECTURE.read_text(), set(files))
    placed = [file for layer in layers for file in layer]
    assert sorted(placed) == sorted(files), "each Go file in exactly one layer"
    # By package: a file may import a package only if every file of it is in its layer or below.
    depth = {file: index for index, layer in enumerate(layers) for file in layer}
    climbing = {
        (file, package)
        for file, packages in files.items()
        for package in packages
        for other in files
        if other.startswith(package + "/") and other.count("/") == package.count("/") + 1 and depth[other] < depth[file]
    }
    assert climbing == set()
    assert "internal/model" in files["mcpotel/lifecycle.go"]  # the checks see the imports


def test_no_import_cycle_in_the_package() -> None:
    assert _cycle(_graph(SRC, PACKAGE)) is None


def test_no_import_cycle_in_the_benchmarks() -> None:
    assert _cycle(_graph(REPO_ROOT, "benchmarks")) is None


def test_the_architecture_page_places_every_module_once() -> None:
    graph = _graph(SRC, PACKAGE)
    layers = _layers(ARCHITECTURE.read_text(), set(graph))
    assert len(layers) == 8
    placed = [module for layer in layers for module in layer]
    assert sorted(placed) == sorted(graph), "each module in exactly one layer, and no module that is not there"


def test_no_module_imports_one_of_a_layer_above_its_own() -> None:
    graph = _graph(SRC, PACKAGE)
    assert _climbing(graph, _layers(ARCHITECTURE.read_text(), set(graph))) == set()


def test_the_checks_see_a_cycle_and_a_climbing_import() -> None:
    """The checks themselves: a cycle and an import from below into a front end are found."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    graph = _graph(SRC, PACKAGE)
    assert (
        "mcp_otel.instrumentation.client" in graph["mcp_otel.instrumentation.frontends.mcp1"]
    )  # a front end feeds the lifecycle
    assert "mcp_otel.model.messages" in graph["mcp_otel.instrumentation.client"]
    layers = _layers(ARCHITECTURE.read_text(), set(graph))
    assert {"mcp_otel.proxy.wire", "mcp_otel.instrumentation.frontends.sdk"} <= layers[2]
    assert "mcp_otel.proxy.http" in layers[0]
    assert _climbing({"mcp_otel.model.lifecycle": {"mcp_otel.proxy.wire"}, "mcp_otel.proxy.wire": set()}, layers) == {
        ("mcp_otel.model.lifecycle", "mcp_otel.proxy.wire")
    }
    assert (
        _climbing(
            {
                "mcp_otel.instrumentation.client": {"mcp_otel.instrumentation.server"},
                "mcp_otel.instrumentation.server": set(),
            },
            layers,
        )
        == set()
    )
