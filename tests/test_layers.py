"""The layers stay as docs/architecture.md draws them, in every language, read from the code's own
imports: each Python module (``ast``), each TypeScript module of ``node/src`` (its
``import ... from './x.js'`` lines), each Go file of the library module (its imports of the
module's own packages) and each Rust module of ``rust/src`` (its ``crate::``, ``super::`` and
child-module paths) is in exactly one layer of its language's table on the page, the table names
nothing that is not there, no module imports one of a layer above its own, and there is no import
cycle (in ``src/``, ``benchmarks/``, ``node/src``, among the Go module's packages, among the Rust
crate's modules; Python imports inside functions count: they run too). The Python package's
folders keep their order as well, and no Python module is over 400 lines without its docstring
saying why."""

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


def _table(page: str, heading: str) -> list[list[str]]:
    """The cells of each row of the first table after ``heading`` (a ``##`` line of the page), top
    row first, its header left out."""
    lines = page.splitlines()
    rows: list[list[str]] = []
    for line in lines[lines.index(heading) + 1 :]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] not in ("Layer", "---"):
            rows.append(cells)
    return rows


def _rows(page: str, heading: str) -> list[list[str]]:
    """The names in backticks of each row's second cell, in the first table after ``heading``."""
    return [_CODE.findall(cells[1]) for cells in _table(page, heading)]


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


RUST_SRC = REPO_ROOT / "rust" / "src"
# What is not code: comments (doc comments too), strings and character literals.
_RUST_NOT_CODE = re.compile(
    r"""//[^\n]*|/\*.*?\*/|(?<!\w)b?r(#*)".*?"\1|(?<!\w)b?"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])'""", re.DOTALL
)
_RUST_USE = re.compile(r"\buse\s+([^;]+);")
# A path's leading segments, each followed by `::` (`crate::client::` of `crate::client::f()`).
_RUST_PATH = re.compile(r"(?<![\w:$])\$?((?:\w+::)+)")


def _rust_code(text: str) -> str:
    return _RUST_NOT_CODE.sub(" ", text)


def _rust_modules() -> dict[tuple[str, ...], str]:
    """``rust/src``'s modules by their path in the crate (``("model", "classify")``), each named as
    the page names it: its file without ``.rs`` (``lib``, ``client``, ``model/mod``)."""
    modules = {}
    for path in RUST_SRC.rglob("*.rs"):
        name = path.relative_to(RUST_SRC).with_suffix("").as_posix()
        parts = tuple(name.split("/"))
        modules[() if parts == ("lib",) else parts[:-1] if parts[-1] == "mod" else parts] = name
    return modules


def _use_tree(tree: str) -> list[list[str]]:
    """The paths a ``use`` declaration's tree names (``crate::model::{self, Answer}``: ``crate::model``
    and ``crate::model::Answer``), their segments each."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+\w+", "", tree))
    head, brace, rest = tree.partition("{")
    prefix = [segment for segment in head.split("::") if segment and segment != "*"]
    if not brace:
        return [prefix]
    items, depth, start = [], 0, 0
    inner = rest.removesuffix("}")
    for index, char in enumerate(inner + ","):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(inner[start:index])
            start = index + 1
    paths = [path for item in items if item for path in _use_tree(item)]
    return [prefix + [segment for segment in path if segment != "self"] for path in paths]


def _rust_imports(code: str, here: tuple[str, ...], modules: dict[tuple[str, ...], str]) -> set[str]:
    """The crate's modules the module at ``here`` names in ``code``: through ``crate::`` (the root
    itself when a path names an item of it), ``super::``, ``self::`` or a child module's name."""
    code = _rust_code(code)
    paths = [path for tree in _RUST_USE.findall(code) for path in _use_tree(tree)]
    paths += [found.split("::")[:-1] for found in _RUST_PATH.findall(_RUST_USE.sub(" ", code))]
    found = set()
    for head, *rest in filter(None, paths):
        if head == "crate":
            base: tuple[str, ...] = ()
        elif head in ("super", "self"):
            base = here[:-1] if head == "super" else here
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
        elif (*here, head) in modules:
            base = (*here, head)
        else:
            continue  # another crate, or a name in scope
        for segment in rest:
            if (*base, segment) not in modules:
                break
            base = (*base, segment)
        if base != here:
            found.add(modules[base])
    return found


def _rust_graph() -> dict[str, set[str]]:
    """``rust/src``'s modules (``client``, ``model/classify``) and the modules each imports."""
    modules = _rust_modules()
    return {name: _rust_imports((RUST_SRC / f"{name}.rs").read_text(), here, modules) for here, name in modules.items()}


def test_the_rust_crate_keeps_its_layers() -> None:
    graph = _rust_graph()
    page = ARCHITECTURE.read_text()
    rows = _rows(page, "## The Rust crate")
    # `x.rs` is module x, `x/` every module under it (`x/mod.rs` the module x itself)
    layers = _layers(rows, set(graph), {name: name.removesuffix(".rs") for row in rows for name in row})
    _held(graph, layers)
    # only the front ends and the hosts above them use rmcp; the model uses no OpenTelemetry either
    names = [cells[0] for cells in _table(page, "## The Rust crate")]
    below = set().union(*layers[names.index("Front ends") + 1 :])
    code = {name: _rust_code((RUST_SRC / f"{name}.rs").read_text()) for name in graph}
    assert {name for name in below if "rmcp::" in code[name]} == set()
    assert {name for name in graph if name.startswith("model/") and "opentelemetry::" in code[name]} == set()
    assert "rmcp::" in code["facts"]  # the check sees rmcp where it is
    # the names module is generated from the spec, at the base, and imports nothing of the crate
    assert "semconv" in layers[-1]
    assert "Generated by spec/generate.py" in (RUST_SRC / "semconv.rs").read_text().splitlines()[0]
    assert graph["semconv"] == set()
    # the checks see the imports: `crate::` paths, `super::`, a root's and a parent's child modules
    assert {"lifecycle", "model/mod"} <= graph["client"]
    assert "model/outcome" in graph["model/classify"]
    assert {"model/classify", "model/outcome"} <= graph["model/mod"]
    assert {"client", "service"} <= graph["lib"]


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
    modules = {(): "lib", ("a",): "a", ("b",): "b/mod", ("b", "c"): "b/c", ("d",): "d"}
    code = """
        use crate::{a, b::{self, X as Y}};  // crate::d::gone
        /// [`d`](crate::d::f)
        fn f() -> &'static str { let _ = super::c::g(); "crate::d::x" }
    """
    assert _rust_imports(code, ("b", "c"), modules) == {"a", "b/mod"}
    assert _rust_imports("fn f() { c::g(); std::mem::drop(crate::Root); }", ("b",), modules) == {"b/c", "lib"}
    assert _rust_imports("$crate::d::f!(); x::a::y();", ("a",), modules) == {"d"}
