"""No import cycle anywhere in the package: the graph of which module imports which (every import
statement that runs, including those inside functions; not those under ``if TYPE_CHECKING:``, which
only type checkers read; the package ``__init__`` each import runs on the way; and the modules the
command line loads by name) has no cycle, no import inside a function dodges one, and the tower from
the bottom to the command line is bounded."""

from __future__ import annotations

import ast
import functools
import itertools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "memvelope_tools"


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
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


def import_graph(*, in_functions: bool = True, package_edges: bool = True) -> dict[str, set[str]]:
    """module -> the package modules it imports. ``in_functions=False`` leaves out the imports inside
    functions (the modules imported by name are imported inside one); ``package_edges`` adds, for each
    import of ``a.b.c``, the ``__init__`` of ``a.b`` that runs first (not the root package's, which runs
    before anything, nor the importer's own packages)."""
    sources = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    files = {**sources, **{module_name(p): p for p in PACKAGE.rglob("*.c")}}  # C helpers are modules too
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in sources.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = _runtime_nodes(tree) if in_functions else _module_level_nodes(tree)
        if in_functions:
            graph[name].update(t for t in imports_by_name(tree, name) if t in files)
        for node in nodes:
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
    if package_edges:
        for name, targets in graph.items():
            own = set(_packages(name))
            for target in list(targets):
                graph[name].update(p for p in _packages(target) if p in files and p not in own and p != name)
    return graph


def imports_by_name(tree: ast.AST, name: str) -> set[str]:
    """The submodules the module ``name`` imports through ``importlib.import_module(f"{__name__}.{x}")``
    in a loop ``for x in NAMES``, ``NAMES`` a tuple of strings it binds at module level: how the command
    line loads each command's module, every time it builds its parser."""
    return {f"{name}.{each}" for _, names in _loads_by_name(tree) for each in names}


def _loads_by_name(tree: ast.AST) -> list[tuple[ast.Call, list[str]]]:
    """Each ``import_module`` call :func:`imports_by_name` counts, with the names it loads."""
    tuples: dict[str, list[str]] = {}
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Tuple):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            values = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
            if isinstance(target, ast.Name) and values and all(isinstance(v, str) for v in values):
                tuples[target.id] = values
    found = []
    for loop in ast.walk(tree):
        if not (isinstance(loop, ast.For) and isinstance(loop.iter, ast.Name) and isinstance(loop.target, ast.Name)):
            continue
        if loop.iter.id not in tuples:
            continue
        form = f"f'{{__name__}}.{{{loop.target.id}}}'"
        found += [
            (call, tuples[loop.iter.id])
            for call in ast.walk(loop)
            if isinstance(call, ast.Call)
            and _is_import_module(call)
            and call.args
            and ast.unparse(call.args[0]) == form
        ]
    return found


def _is_import_module(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func) in ("importlib.import_module", "import_module")


def _packages(name: str) -> list[str]:
    """The packages whose ``__init__`` runs before ``name`` is imported, below the root package."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts))]


def _module_level_nodes(tree: ast.AST) -> list[ast.AST]:
    """The runtime nodes of ``tree`` outside function bodies."""
    nodes: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        nodes.append(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return nodes


def levels(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each module's level: 0 when it imports no module of the package, else one more than the
    highest level among those it imports (the graph has no cycle)."""

    @functools.cache
    def level(name: str) -> int:
        return 1 + max((level(t) for t in graph[name]), default=-1)

    return {name: level(name) for name in graph}


def reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(graph[node])
    return False


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


def test_the_modules_the_command_line_loads_by_name_are_in_the_graph() -> None:
    graph = import_graph()
    assert {"memvelope_tools.cli.history", "memvelope_tools.cli.report"} <= graph["memvelope_tools.cli"]
    assert "memvelope_tools.cli.history" not in import_graph(in_functions=False)["memvelope_tools.cli"]


def test_every_import_by_name_is_counted_or_loads_a_name_on_first_use() -> None:
    """An ``import_module`` is either one :func:`imports_by_name` counts, or inside a package's module
    ``__getattr__`` (a name of the API loaded on first use, which no module of the package takes: see
    :func:`test_no_module_takes_a_name_a_package_loads_lazily`)."""
    unseen = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lazy = {
            id(call)
            for function in tree.body
            if isinstance(function, ast.FunctionDef) and function.name == "__getattr__"
            for call in ast.walk(function)
        }
        counted = {id(call) for call, _ in _loads_by_name(tree)}
        unseen += [
            f"{module_name(path)}:{node.lineno}"
            for node in ast.walk(tree)
            if _is_import_module(node) and id(node) not in lazy and id(node) not in counted
        ]
    assert unseen == []


def test_the_import_by_name_finder_finds_a_loop_over_names() -> None:
    source = (
        "import importlib\nNAMES = ('a', 'b')\nOTHER = ('c',)\n"
        "def load():\n    for name in NAMES:\n        importlib.import_module(f'{__name__}.{name}')\n"
        "    for other in OTHER:\n        importlib.import_module(other)\n"
    )
    assert imports_by_name(ast.parse(source), "pkg") == {"pkg.a", "pkg.b"}


def test_the_graph_is_built_from_every_module() -> None:
    graph = import_graph()
    assert "memvelope_tools._convert.pipeline" in graph
    assert "memvelope_tools._json.elements" in graph["memvelope_tools._convert.pipeline"]
    assert "memvelope_tools._json.elements" in graph["memvelope_tools._sources"]
    assert "memvelope_tools._json._scan" in graph["memvelope_tools._json.elements"]
    assert "memvelope_tools._doctor.text" in graph["memvelope_tools._doctor.findings"]  # inside a function
    assert "memvelope_tools._frames._textscan" in graph["memvelope_tools._frames.text"]


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_in_the_package() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_package_init_edges_are_seen() -> None:
    plain, seen = import_graph(package_edges=False), import_graph()
    # _sources imports from _convert's submodules only; _convert's __init__ runs first all the same
    assert "memvelope_tools._convert" not in plain["memvelope_tools._sources"]
    assert "memvelope_tools._convert" in seen["memvelope_tools._sources"]
    assert "memvelope_tools._json" in seen["memvelope_tools._sources"]  # from ._json.elements import ...
    assert "memvelope_tools._convert" not in seen["memvelope_tools._convert.pipeline"]  # its own package


def test_no_import_inside_a_function_dodges_a_cycle() -> None:
    top = import_graph(in_functions=False)
    every = import_graph()
    dodges = [
        f"{name} -> {target}"
        for name, targets in every.items()
        for target in targets - top[name]
        if reaches(top, target, name)
    ]
    assert dodges == []


def test_the_dodge_finder_finds_a_dodge() -> None:
    top = {"a": {"b"}, "b": set()}
    assert reaches(top, "a", "b") and not reaches(top, "b", "a")


def lazy_imports(package: Path = PACKAGE) -> list[str]:
    """Every ``from pkg import name`` in ``package`` where ``pkg``'s ``__init__`` makes ``name`` on first use
    (a module ``__getattr__``): the graph sees only ``pkg``, not the submodule that really loads."""
    sources = {module_name(p, package): p for p in package.rglob("*.py")}
    files = {**sources, **{module_name(p, package): p for p in package.rglob("*.c")}}
    bound: dict[str, set[str]] = {}  # package with a module __getattr__ -> the names its __init__ binds itself
    for name, path in sources.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if path.name != "__init__.py" or not any(
            isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body
        ):
            continue
        names: set[str] = set()
        for node in _module_level_nodes(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
        bound[name] = names
    found: list[str] = []
    for name, path in sorted(sources.items()):
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = here.split(".")
                target = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target not in bound or target == name:
                continue
            found += [
                f"{name}:{node.lineno} {target}.{a.name}"
                for a in node.names
                if a.name not in bound[target] and f"{target}.{a.name}" not in files
            ]
    return found


def test_no_module_takes_a_name_a_package_loads_lazily() -> None:
    offenders = lazy_imports()
    assert not offenders, "import these from the submodule that defines them:\n" + "\n".join(offenders)


def test_the_lazy_import_finder_finds_one(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("X = 1\n\ndef __getattr__(name):\n    return 2\n")
    (package / "sub" / "impl.py").write_text("lazy = 2\n")
    (package / "a.py").write_text("from .sub import X, impl, lazy\n")
    assert lazy_imports(package) == ["pkg.a:1 pkg.sub.lazy"]


#: Levels from the bottom of the package to its top (the command line and the demo), counting the
#: ``__init__`` of each package on the way and the commands the command line loads by name: at most
#: ten, so that the tower does not grow unseen. Ten is what one job per module takes on the way from
#: ``python -m memvelope_tools history add`` to the format tags (:data:`TALLEST`): starting the command
#: line; building its parser with every command; the history command's options and output; adding an
#: export to a history folder; keeping the folder's search index up to date; the history (messages and
#: titles) of any kind of input; envelopes as a Parquet dataset; reading back the Parquet folders the
#: toolkit writes; the frames' columns and their types; the spec's field tables, derived from its
#: schemas; the format tags. Each imports the next at run time and does a job the others do not.
MAX_LEVELS = 10
TALLEST = (
    "__main__",
    "cli",
    "cli.history",
    "_history_folder",
    "_search.folder",
    "_corpus",
    "_parquet",
    "_frames.folders",
    "_frames.columns",
    "_spec",
    "_tags",
)


def test_the_levels_from_the_bottom_to_the_command_line_are_bounded() -> None:
    found = levels(import_graph())
    top = max(found.values())
    assert top <= MAX_LEVELS, f"{max(found, key=found.__getitem__)} is {top} levels up"
    assert found["memvelope_tools._tags"] == 0 and found["memvelope_tools.errors"] == 0


def test_the_tallest_chain_is_one_import_after_another() -> None:
    graph, found = import_graph(), levels(import_graph())
    names = [f"memvelope_tools.{name}" for name in TALLEST]
    assert [found[name] for name in names] == list(range(MAX_LEVELS, -1, -1))
    assert all(lower in graph[upper] for upper, lower in itertools.pairwise(names))


def test_drawing_code_reads_no_input() -> None:
    """The chart modules draw the frames they are given; reading an input into frames is the public
    layer's (``plot``) or the report's."""
    graph = import_graph()
    for drawing in ("memvelope_tools._charts", "memvelope_tools._usage_charts"):
        assert not reaches(graph, drawing, "memvelope_tools._sources"), drawing


def test_levels_count_the_longest_way_down() -> None:
    assert levels({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == {"a": 2, "b": 1, "c": 0}


# ---- private names -------------------------------------------------------------------------------
#
# The rule: a name that starts with an underscore (not a dunder) belongs to the module that defines
# it. No module of the package takes one from another module of the package, neither by
# ``from module import _name`` nor as ``module._name`` on a module it imported. A private
# submodule (a C helper such as ``frames._textscan``) is the exception: modules inside its own
# package (the package that holds it, and that package's subpackages) may import it.


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _may_import_submodule(importer: str, target: str) -> bool:
    package = target.rpartition(".")[0]
    return importer == package or importer.startswith(package + ".")


def private_imports(package: Path = PACKAGE) -> list[str]:
    """Every place a module of ``package`` uses another module's underscore name, as ``module:line name``."""
    root = package.name
    sources = {module_name(p, package): p for p in package.rglob("*.py")}
    files = {**sources, **{module_name(p, package): p for p in package.rglob("*.c")}}
    found: list[str] = []
    for name, path in sorted(sources.items()):
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules: dict[str, str] = {}  # local name -> module of the package it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == root:
                        modules[alias.asname or alias.name] = alias.name
                        parts = alias.name.split(".")
                        for i, part in enumerate(parts[1:], 1):
                            module = ".".join(parts[: i + 1])
                            if _private(part) and module != name and not _may_import_submodule(name, module):
                                found.append(f"{name}:{node.lineno} {module}")
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")
                    base_name = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    base_name = node.module or ""
                if base_name.split(".")[0] != root:
                    continue
                for alias in node.names:
                    target = f"{base_name}.{alias.name}"
                    if target in files:  # a submodule
                        modules[alias.asname or alias.name] = target
                        if _private(alias.name) and not _may_import_submodule(name, target):
                            found.append(f"{name}:{node.lineno} {target}")
                    elif _private(alias.name) and base_name != name:
                        found.append(f"{name}:{node.lineno} {target}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                owner = modules.get(ast.unparse(node.value))
                if owner is not None and owner != name:
                    target = f"{owner}.{node.attr}"
                    if target not in files or not _may_import_submodule(name, target):
                        found.append(f"{name}:{node.lineno} {target}")
    return found


def test_the_private_name_finder_finds_each_kind(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("_hidden = 1\npublic = 2\n__version__ = '1'\n")
    (package / "_helper.c").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "_native.c").write_text("")
    (package / "b.py").write_text(
        "from .a import _hidden, public, __version__\n"  # one offender
        "from . import a\n"
        "import pkg.a as alias\n"
        "x = a._hidden + alias._hidden + a.public\n"  # two offenders
        "from . import _helper\n"  # a private submodule of its own package: allowed
        "from .sub import _native\n"  # a subpackage's private submodule: not allowed
        "import pkg.sub._native\n"  # the same
        "import os\n"
        "y = os._exit\n"  # not the package's: out of scope
    )
    (package / "sub" / "c.py").write_text("from . import _native\nfrom .._helper import thing\n")  # both allowed
    assert private_imports(package) == [
        "pkg.b:1 pkg.a._hidden",
        "pkg.b:6 pkg.sub._native",
        "pkg.b:7 pkg.sub._native",
        "pkg.b:4 pkg.a._hidden",
        "pkg.b:4 pkg.a._hidden",
    ]


def test_no_module_uses_another_modules_private_names() -> None:
    offenders = private_imports()
    assert not offenders, "underscore names used outside their module:\n" + "\n".join(offenders)
