"""The package's shape, checked: no import circle inside ``adaroll/`` (every import counts, a
deferred one inside a function too: it hides a circle, it does not remove it), no module in
``rollout/``, ``training/`` or ``snapshots/`` (the CRIU backend, ``snapshots/criu/``, included)
past the house limit (:data:`MAX_LINES`), and the generic snapshot layer
importing nothing of the web env (its ``criu`` backend is looked up by name)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "adaroll"
MAX_LINES = 700
"""Past this a module of the sized folders must be split. About 600 lines is the hint to look
for a seam (docs/architecture.md), not a target to squeeze a module under."""
SIZED = ("rollout", "training", "snapshots")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:`` (never executed)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                todo.extend(child.orelse)
                continue
            todo.append(child)
    return out


def _imports(path: Path, name: str, modules: dict[str, Path]) -> set[str]:
    """The adaroll modules ``path`` imports when it runs: ``from pkg import sub`` imports the
    submodule ``sub``, ``from pkg import name`` the package; parent packages, which Python
    imports first anyway, are not counted."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in modules else base)
    return {m for m in out if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, name, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle (its modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)) is not None:
            return found
    return None


def test_the_cycle_finder_finds_a_circle_and_only_a_circle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_import_graph_sees_the_package_imports() -> None:
    graph = import_graph()
    assert "adaroll.rollout.jobs" in graph["adaroll.rollout.collector"]
    assert "adaroll.training.scheduler" in graph["adaroll.training.pipeline"]


def test_deferred_imports_count_and_type_only_ones_do_not(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import adaroll.b\n\n\n"
        "def f():\n    from adaroll import c\n    from adaroll.d import name\n"
    )
    modules = dict.fromkeys(("adaroll.b", "adaroll.c", "adaroll.d", "adaroll.m"), source)
    assert _imports(source, "adaroll.m", modules) == {"adaroll.c", "adaroll.d"}


def test_no_import_circle_inside_adaroll() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_generic_snapshot_layer_imports_nothing_of_the_web_env() -> None:
    graph = import_graph()
    generic = [
        m
        for m in graph
        if (m == "adaroll.snapshots" or m.startswith("adaroll.snapshots."))
        and not m.startswith("adaroll.snapshots.criu")
    ]
    reached = {m: sorted(i for i in graph[m] if i.startswith("adaroll.envs.web")) for m in generic}
    assert len(generic) > 3 and {m: i for m, i in reached.items() if i} == {}


def test_the_criu_backend_is_found_by_its_name_under_snapshots() -> None:
    from adaroll.snapshots.base import SNAPSHOT_BACKENDS

    assert "criu" in SNAPSHOT_BACKENDS and "criu" in SNAPSHOT_BACKENDS.names()
    assert SNAPSHOT_BACKENDS.get("criu").__module__ == "adaroll.snapshots.criu.backend"


def test_no_sized_module_passes_the_line_limit() -> None:
    long = {
        str(p.relative_to(PACKAGE.parent)): n
        for folder in SIZED
        for p in sorted((PACKAGE / folder).rglob("*.py"))
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}, f"modules over {MAX_LINES} lines (split them): {long}"
