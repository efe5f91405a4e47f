"""The package layers of ../shared/DESIGN.md, checked on the source: every import (lazy ones
inside functions included; not those for type annotations only) follows acausal <-
components, solvers <- learning, learning's rooms import only rooms below them and only
through their ``__init__``, no module imports a cycle, and nothing changes the garbage
collector or the recursion limit outside a ``with`` that restores it."""

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("acausal", "components", "solvers", "learning")
ALLOWED = {  # package -> the packages of ours it may import
    "acausal": set(),
    "components": {"acausal"},
    "solvers": {"acausal"},
    "learning": {"acausal", "components", "solvers"},
}
# learning's rooms (its subpackages), bottom to top: a room imports rooms of lower layers
# only, never one beside or above it; learning's own __init__ and the command line sit on top
LEARNING_LAYERS = (
    ("core",),
    ("laws",),
    ("feasibility", "optimization"),
    ("fitting", "training"),
    ("evaluation", "mechanics"),
)


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Our modules that ``name`` imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    base = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text())):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - node.level + 1]
                mod = ".".join(anchor + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _runtime_nodes(tree: ast.AST):
    """Every node except those under ``if TYPE_CHECKING:`` (annotations only, never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            typing_only = isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)
            if not typing_only:
                stack.append(child)


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    """Our modules and their imports, built once for this module's tests (frozen: a test
    cannot change what another sees)."""
    known = modules()
    g = nx.DiGraph()
    for name, path in known.items():
        g.add_node(name)
        g.add_edges_from((name, target) for target in imports(name, path, known))
    return nx.freeze(g)


def test_packages_import_only_the_layers_below(graph):
    bad = [
        (a, b)
        for a, b in graph.edges
        if a.split(".")[0] != b.split(".")[0] and b.split(".")[0] not in ALLOWED[a.split(".")[0]]
    ]
    assert bad == []


def test_no_import_cycle_between_or_inside_packages(graph):
    assert graph.number_of_edges() > 100  # the walk sees the imports (175 when written)
    # a package's __init__ imports its modules; a module importing its own package's
    # __init__ back is a cycle too, and is reported like any other
    assert list(nx.simple_cycles(graph)) == []


def room(module: str) -> str | None:
    """The room of a learning module (``learning.fitting.objective`` -> ``fitting``)."""
    parts = module.split(".")
    return parts[1] if parts[0] == "learning" and len(parts) > 1 and parts[1] != "cli" else None


def test_learning_rooms_import_only_the_rooms_below_through_their_init(graph):
    layer = {r: k for k, rooms in enumerate(LEARNING_LAYERS) for r in rooms}
    found = {p.name for p in (ROOT / "learning").iterdir() if (p / "__init__.py").is_file()}
    assert found == set(layer)  # every room has its place in the order
    bad = []
    for a, b in graph.edges:
        if room(a) is None or not b.startswith("learning") or room(a) == room(b):
            continue  # the top (learning's __init__, the command line), others, a room inside
        # b is a private module of another room, a room not below, or the top of learning
        if room(b) is None or b != f"learning.{room(b)}" or layer[room(b)] >= layer[room(a)]:
            bad.append((a, b))
    assert bad == []


def test_the_command_line_sits_on_top(graph):
    assert "learning.cli" in graph and not list(graph.predecessors("learning.cli"))
    assert {"solvers", "learning.feasibility"} <= set(graph.successors("learning.cli"))


def test_gc_and_recursion_limit_are_only_changed_inside_a_restoring_with():
    for path in modules().values():
        text = path.read_text()
        assert "setrecursionlimit" not in text, path
        if "gc.disable()" in text:  # only in the context manager that restores it
            assert path.name == "gc_pause.py" and "def paused_gc" in text, path
            assert text.count("gc.disable()") == 1 and "gc.enable()" in text
