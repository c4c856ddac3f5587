"""The house's layers: every import points down (cli → graph → nodes → state → kernel), no cycles.

Scans every module of the five packages with ``ast``, function-local and ``TYPE_CHECKING``
imports included, so a lazy import cannot hide an upward edge.
"""

import ast
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("kernel", "state", "nodes", "graph", "cli")
RANK = {name: rank for rank, name in enumerate(LAYERS)}
KERNEL_THIRD_PARTY = {"pydantic", "confusable_homoglyphs", "sqlglot"}
"""What kernel/ may import besides the standard library and itself: pydantic, the
confusables table (a data package: Unicode's confusables.txt as a Python mapping) and sqlglot
(a pure SQL parser, no I/O: kernel/actions.py reads the statements a tool would run)."""


def _modules() -> dict[str, Path]:
    found = {}
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    """Return (imported module, line) for every import in the module, wherever it stands."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            found.append((base, node.lineno))
            found += [
                (f"{base}.{alias.name}", node.lineno)
                for alias in node.names
                if f"{base}.{alias.name}" in MODULES
            ]
    return found


def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in MODULES.items():
        for target, _ in _imports(name, path):
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                edges[name].add(target)
    return edges


def test_layers_every_import_points_down() -> None:
    upward = [
        f"{name}:{line} imports {target}"
        for name, path in MODULES.items()
        for target, line in _imports(name, path)
        if target.split(".")[0] in RANK and RANK[target.split(".")[0]] > RANK[name.split(".")[0]]
    ]
    assert upward == []


def test_layers_have_no_import_cycles() -> None:
    edges = _edges()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in MODULES:
        if module not in index:
            visit(module)
    assert cycles == []


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith("kernel")))
def test_layers_kernel_imports_only_stdlib_pydantic_and_data(name: str) -> None:
    heavy = {
        target
        for target, _ in _imports(name, MODULES[name])
        if target.split(".")[0] not in {"kernel", "__future__", *sys.stdlib_module_names}
        and target.split(".")[0] not in KERNEL_THIRD_PARTY
    }
    assert heavy == set()


def test_layers_nodes_holds_only_steps_and_their_service_protocols() -> None:
    for name, path in MODULES.items():
        if not name.startswith("nodes.") or path.name == "__init__.py":
            continue
        assert name.count(".") == 2 or name == "nodes.services", name
        assert name.split(".")[1] in {"turn", "cycle", "reflect", "services"}, name


def test_layers_scan_sees_function_local_imports(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from graph.deps import Deps\n    return Deps\n")
    assert ("graph.deps", 2) in _imports("state.probe", probe)


# Names that are also state fields, route labels or metric keys, not references to a step.
NOT_STEP_REFERENCES = {
    "post_eval",  # TurnState.post_eval, the axes it writes
    "inner_dialogue",  # a value of TurnState.lambda_route (the builder maps it to the step)
    "survival_goals",  # a key of the workspace snapshot
    "goal_mutation",  # a key of the motivation vector
    "act",
    "plan",
    "naming",
    "consolidate",
    "drafts",
    "review",
    "ask",
    "apply",
    "resolve",
    "evolve",
    "predict",
    "compare",
    "motivation",
    "stabilize",
    "rollback",
}


def test_layers_no_step_module_names_another_step() -> None:
    from graph.builder import TURN_STEPS
    from graph.cycle_builder import CYCLE_STEPS, REFLECT_STEPS

    steps = {*TURN_STEPS, *(n for n, _ in CYCLE_STEPS), *(n for n, _ in REFLECT_STEPS)}
    named = []
    for name, path in MODULES.items():
        if not name.startswith("nodes."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in steps - NOT_STEP_REFERENCES:
                named.append(f"{name}:{node.lineno} {node.value!r}")
    assert named == []
