"""No import cycle anywhere in the package: the graph of which module imports which (every import
statement that runs, including those inside functions; not those under ``if TYPE_CHECKING:``, which
only type checkers read) has no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "memvelope_tools"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` outside ``if TYPE_CHECKING:`` blocks."""
    nodes: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        nodes.append(node)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return nodes


def import_graph() -> dict[str, set[str]]:
    sources = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    files = {**sources, **{module_name(p): p for p in PACKAGE.rglob("*.c")}}  # C helpers are modules too
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in sources.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    base_name = ".".join(base + ([node.module] if node.module else []))
                else:
                    base_name = node.module or ""
                targets = [f"{base_name}.{alias.name}" for alias in node.names] + [base_name]
                # "from pkg import sub" imports the submodule; "from mod import name" only mod
                targets = [t for t in targets[:-1] if t in files] or [base_name]
            for target in targets:
                while target and target not in files and "." in target:
                    target = target.rpartition(".")[0]
                if target in files and target != name:
                    graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_graph_is_built_from_every_module() -> None:
    graph = import_graph()
    assert "memvelope_tools.convert.pipeline" in graph
    assert "memvelope_tools.convert.elements" in graph["memvelope_tools.convert.pipeline"]
    assert "memvelope_tools.convert.elements" in graph["memvelope_tools.read"]
    assert "memvelope_tools.convert._scan" in graph["memvelope_tools.convert.elements"]
    assert "memvelope_tools.doctor.text" in graph["memvelope_tools.doctor.findings"]  # inside a function


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_in_the_package() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])
