"""The package's shape, checked (docs/architecture.md, "Layers"):

* no import circle inside ``adaroll/``: every import counts - a deferred one inside a function
  (it hides a circle, it does not remove it) and one under ``if TYPE_CHECKING:`` (a circle of
  types is still two modules that each need the other);
* each layer imports only the layers below it (:data:`FORBIDDEN`); in particular
  ``integrations/`` imports no ``envs/`` or ``snapshots/`` module: its starts, restores and bill
  are the rollout and training layers';
* the generic snapshot layer imports nothing of the browser envs (web, apps): the ``criu``
  package, the one snapshot package that imports env packages (its ``criu`` and ``app-criu``
  backends), is looked up by name;
* the rollout and integrations layers dispatch on no start-kind string;
* no module in ``rollout/``, ``training/`` or ``snapshots/`` past :data:`MAX_LINES`;
* env factories, suites and snapshot backends declare their capabilities (no probing): each
  is a subclass of its contract, and no declared capability is read through ``getattr`` or
  ``hasattr``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "adaroll"
MAX_LINES = 700
"""Past this a module of the sized folders must be split. About 600 lines is the hint to look
for a seam (docs/architecture.md), not a target to squeeze a module under."""
SIZED = ("rollout", "training", "snapshots")

FORBIDDEN: dict[str, tuple[str, ...]] = {
    "routes": ("*",),
    "costs": ("*",),
    "algos": ("envs", "policies", "snapshots", "rollout", "training", "integrations"),
    "envs": ("policies", "snapshots", "rollout", "training", "integrations", "experiments"),
    "policies": ("snapshots", "rollout", "training", "integrations", "experiments"),
    "snapshots": ("policies", "rollout", "training", "integrations", "experiments"),
    "rollout": ("training", "integrations", "evaluation", "experiments", "cli"),
    "training": ("integrations", "experiments", "cli"),
    "integrations": ("envs", "snapshots", "experiments", "cli"),
}
"""Per top-level layer of ``adaroll/`` (a subpackage, or a module such as ``routes``), the layers
it must not import (``*``: nothing of ``adaroll`` at all)."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path, name: str, modules: dict[str, Path]) -> set[str]:
    """The adaroll modules ``path`` imports, wherever the import stands (module level, inside a
    function, under ``if TYPE_CHECKING:``): ``from pkg import sub`` imports the submodule
    ``sub``, ``from pkg import name`` the package; parent packages, which Python imports first
    anyway, are not counted."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
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


def layer(module: str) -> str:
    """The top-level layer a module belongs to: ``adaroll.rollout.starts`` -> ``rollout``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


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


def test_deferred_and_type_only_imports_count(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import adaroll.b\n\n\n"
        "def f():\n    from adaroll import c\n    from adaroll.d import name\n"
    )
    modules = dict.fromkeys(("adaroll.b", "adaroll.c", "adaroll.d", "adaroll.m"), source)
    assert _imports(source, "adaroll.m", modules) == {"adaroll.b", "adaroll.c", "adaroll.d"}


def test_no_import_circle_inside_adaroll_type_checking_included() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_each_layer_imports_only_what_lies_below_it() -> None:
    bad = sorted(
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        for target in targets
        if layer(target) != layer(module)
        and (
            "*" in FORBIDDEN.get(layer(module), ())
            or layer(target) in FORBIDDEN.get(layer(module), ())
        )
    )
    assert bad == []


def test_integrations_import_no_env_or_snapshot_module() -> None:
    graph = import_graph()
    adapters = [m for m in graph if layer(m) == "integrations"]
    reached = {
        m: sorted(t for t in graph[m] if layer(t) in ("envs", "snapshots")) for m in adapters
    }
    assert len(adapters) >= 4 and {m: t for m, t in reached.items() if t} == {}


BROWSER_ENVS = ("adaroll.envs.web", "adaroll.envs.apps")


def test_the_generic_snapshot_layer_imports_nothing_of_the_browser_envs() -> None:
    graph = import_graph()
    generic = [
        m for m in graph if layer(m) == "snapshots" and not m.startswith("adaroll.snapshots.criu")
    ]
    reached = {m: sorted(i for i in graph[m] if i.startswith(BROWSER_ENVS)) for m in generic}
    assert len(generic) > 3 and {m: i for m, i in reached.items() if i} == {}


def test_the_criu_backends_are_found_by_their_names_under_snapshots() -> None:
    from adaroll.snapshots.base import SNAPSHOT_BACKENDS

    for name, module in (
        ("criu", "adaroll.snapshots.criu.backend"),
        ("app-criu", "adaroll.snapshots.criu.apps"),
    ):
        assert name in SNAPSHOT_BACKENDS and name in SNAPSHOT_BACKENDS.names()
        assert SNAPSHOT_BACKENDS.get(name).__module__ == module


def test_no_start_kind_string_is_dispatched_on_in_rollout_or_integrations() -> None:
    kinds = re.compile(r'"(onestep|suffix|root)"')
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{n}"
        for folder in ("rollout", "integrations")
        for path in sorted((PACKAGE / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if kinds.search(line)
    ]
    assert found == []  # they name starts by adaroll.routes.StartKind


def test_env_kinds_suites_and_backends_declare_their_capabilities() -> None:
    from adaroll.envs import load_all
    from adaroll.envs.base import ENVS, SUITES, EnvKind, TaskSuite
    from adaroll.snapshots.base import SNAPSHOT_BACKENDS, SnapshotBackend

    loaded = [name for name, problem in load_all().items() if problem is None]
    assert {"mobile", "gymnasium"} <= set(loaded)
    for name in loaded:
        entry = ENVS.get(name)
        assert isinstance(entry, EnvKind) or issubclass(entry, EnvKind), name
        assert issubclass(SUITES.get(name), TaskSuite), name
    backends = ["memory", "replay", "forkserver", "criu"]
    if "apps" in loaded:  # app-criu's module imports the apps env
        backends.append("app-criu")
        # a whole-app env says so, and only the whole-app backend declares that it takes one
        assert ENVS.get("apps").whole_app and not ENVS.get("web").whole_app
        assert SNAPSHOT_BACKENDS.get("app-criu").whole_app  # type: ignore[attr-defined]
        assert not SNAPSHOT_BACKENDS.get("criu").whole_app  # type: ignore[attr-defined]
    for name in backends:
        assert issubclass(SNAPSHOT_BACKENDS.get(name), SnapshotBackend), name  # type: ignore[arg-type]


CAPABILITIES = (
    "episodes_per_env",
    "validate_options",
    "settings",
    "max_live",
    "concurrent_calls",
    "whole_app",
    "takes_env_options",
    "all_templates",
    "template_info",
    "expert_lengths",
    "heldout_templates",
    "options_config",
    "replays_prefix",
    "max_restores",
    "max_branches",
)
"""What env factories, envs, suites and snapshot backends declare on their classes."""


def test_no_declared_capability_is_probed() -> None:
    names = "|".join(CAPABILITIES)
    # getattr(x, "name"...) or hasattr(...), one level of calls allowed in the first argument
    probe = re.compile(rf"\b(?:getattr|hasattr)\((?:[^()]|\([^()]*\))*?[\"']({names})[\"']")
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{n}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if probe.search(line)
    ]
    assert found == []


def test_no_sized_module_passes_the_line_limit() -> None:
    long = {
        str(p.relative_to(PACKAGE.parent)): n
        for folder in SIZED
        for p in sorted((PACKAGE / folder).rglob("*.py"))
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}, f"modules over {MAX_LINES} lines (split them): {long}"
