"""The closed-loop map: which steps write each persisted field of the self, which read it, and why.

Generated from the code, never hand-written: the step lists the builders declare
(``graph.builder`` for the turn, ``graph.cycle_builder`` for the cycle and the reflection) name
every step function; their source is read with ``ast`` and followed into what they call.

**Fields.** Every leaf of the :class:`state.self_state.Self` model, walked three levels deep
(``metacog.lessons``, ``self_state.growth.regret_log``, ``autonomy.explored``,
``affect.curiosity``; a model three levels down counts as one field), a per-step cooldown key
(``metacog.last_fired[lesson_extract]``: the builder binds ``step`` to the step's own name), and
every instance file a step writes (``data/metacog/lessons.jsonl``, ``data/self/*.jsonl``,
``data/values.json``, ``data/goals``, ``data/soul.md``, ``data/norms.jsonl``, …). Not fields: the
memory store (``data/memory``, ``data/signals``; read by retrieval), and ``.lumen/`` machine
state (``self.json`` is the model above, checkpoints, counters, indexes).

**Where reads and writes are looked for.** In the step functions and in what they call, up to
four calls deep: helpers of the same module, functions and classes of ``nodes/``, ``graph/`` and
``state/``, and the ``Services`` methods of ``graph/deps.py``. ``kernel/`` is pure: a value that
goes in comes out. Not entered, so nothing there reads: functions whose name contains
``persist`` (the locked merge that copies a loop's parts onto the present self), the snapshot
and diff modules (``state/snapshot.py``, ``state/selfdiff.py``: views for history and status)
and ``cli/``. Passing the *whole* self to code that is not entered reads nothing; passing a part
of it (``psyche``) reads every field of that part.

**When a read counts** (the rule this module exists for). Each read is followed through local
variables and through control flow (a read in an ``if`` test reaches everything the branch
does; a test whose branch returns early reaches the rest of the function). A read counts when it
reaches a *decision*:

* a key of the step's update that some step or router reads (``state.<key>``), other than
  ``me`` (the self being carried), ``note`` and ``skipped`` (display);
* a call into a service the analyser does not enter (the model, the action gateway, the memory
  store), a call whose result is thrown away (it must act), or a ``raise``;
* a persisted field that itself counts as read (least fixpoint: a field read only to write
  another write-only field is write-only too).

A read that only flows back into the field it came from (appending, incrementing, smoothing,
copying: ``lessons = [*lessons, new]``) is a *carry*, not a read. The ``decision`` of a field
names, for each reading step, what the read reaches (``sets reflection``, ``calls
deps.think_json``, ``-> metacog.policy``) and the first line of the step's docstring.

A file read matches a file write when the paths are equal, one is a directory holding the other,
or one is a pattern of the other (``data/self/*.jsonl`` is written with a computed name).
"""

from __future__ import annotations

import ast
import builtins
import fnmatch
import inspect
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("nodes", "graph", "state")
"""Packages whose functions the analyser enters (``kernel`` is pure, ``cli`` is display)."""
NOT_ENTERED = ("state.snapshot", "state.selfdiff", "state.files", "graph.loops")
"""Modules never entered: views of the self, and the file primitives (classified by name)."""
MAX_DEPTH = 4
VIA_SHOWN = 3
AMBIGUOUS = frozenset({"data", "machine", "root"})
"""Instance path properties recognised only on an instance (other objects have such names)."""
SCHEMA_DEPTH = 3
DISPLAY_KEYS = frozenset({"me", "note", "skipped"})
NOT_FIELDS = ("data/memory", "data/signals")
"""Instance files that belong to the memory store, not to the self."""
MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "setdefault",
        "sort",
        "add",
        "discard",
        "popitem",
    }
)
COPIES = frozenset({"fork", "copy", "model_copy", "__copy__", "deepcopy"})
FILE_READS = frozenset(
    {"read_text", "read_bytes", "open", "exists", "is_file", "is_dir", "iterdir", "glob", "stat"}
)
FILE_WRITES = frozenset({"write_text", "write_bytes", "unlink", "touch"})
WRITE_PREFIXES = ("append", "atomic_write", "dump", "write", "save")
BUILTINS = frozenset(dir(builtins))


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Loop:
    """One persisted field: the steps that write it, the steps whose decisions read it."""

    field: str
    writers: tuple[str, ...]
    readers: tuple[str, ...]
    decision: str

    @property
    def write_only(self) -> bool:
        """True when some step writes the field and no decision reads it."""
        return bool(self.writers) and not self.readers

    def as_dict(self) -> dict[str, Any]:
        """The JSON form: ``{"field", "writers", "readers", "decision"}``."""
        return {
            "field": self.field,
            "writers": list(self.writers),
            "readers": list(self.readers),
            "decision": self.decision,
        }


@dataclass(frozen=True)
class StepRef:
    """A step as a builder declares it: its graph, its name, and where its function lives."""

    graph: str
    name: str
    module: str
    function: str


BUILDERS = (("graph.builder", "turn"), ("graph.cycle_builder", "cycle"))
"""Where the step lists are declared; a list named ``REFLECT_STEPS`` is the reflect graph's."""


def _step_lists(module: str, text: str, graph: str) -> list[StepRef]:
    """Read a builder's ``("name", module.function)`` step tuples without importing it."""
    tree = ast.parse(text)
    aliases = {name: ".".join(filter(None, pair)) for name, pair in _imports_of_tree(tree, module)}
    assigned: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            assigned[node.target.id] = node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                assigned[target.id] = node.value

    def expand(node: ast.expr, seen: frozenset[str]) -> list[tuple[str, str, str]]:
        if isinstance(node, ast.Name) and node.id in assigned and node.id not in seen:
            return expand(assigned[node.id], seen | {node.id})
        if isinstance(node, ast.Starred):
            return expand(node.value, seen)
        if not isinstance(node, ast.Tuple):
            return []
        elts = node.elts
        if (
            len(elts) == 2
            and isinstance(elts[0], ast.Constant)
            and isinstance(elts[0].value, str)
            and isinstance(elts[1], ast.Attribute)
            and isinstance(elts[1].value, ast.Name)
            and elts[1].value.id in aliases
        ):
            return [(elts[0].value, aliases[elts[1].value.id], elts[1].attr)]
        return [step for elt in elts for step in expand(elt, seen)]

    found: dict[str, StepRef] = {}
    for name, value in assigned.items():
        kind = "reflect" if name.startswith("REFLECT") else graph
        for step, where, function in expand(value, frozenset({name})):
            found.setdefault(step, StepRef(kind, step, where, function))
    return list(found.values())


def declared_steps(sources: Mapping[str, str] | None = None) -> list[StepRef]:
    """Every step of the three graphs, read from the builders' step lists (``ast``, no import)."""
    steps: list[StepRef] = []
    for module, graph in BUILDERS:
        text = (sources or {}).get(module)
        if text is None:
            text = ROOT.joinpath(*module.split(".")).with_suffix(".py").read_text(encoding="utf-8")
        steps += _step_lists(module, text, graph)
    return steps


DRIVER_MODULES = ("graph.autonomy", "graph.session")
"""Modules that run the compiled graphs between steps (``lumen run``, ``lumen chat``)."""


def drivers(sources: Mapping[str, str] | None = None) -> list[StepRef]:
    """The loop drivers that load the persisted self themselves; they count like steps.

    ``lumen run`` waits out a persisted cooldown before the next cycle (``wait_for_cooldown``):
    a decision taken between steps. A driver that only formats a step's state (``cycle_row``,
    the ``--json`` line) reads no persisted self and is not one.
    """
    found = []
    for module in DRIVER_MODULES:
        text = (sources or {}).get(module)
        if text is None:
            path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
            if not path.exists():
                continue
            text = path.read_text(encoding="utf-8")
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(n, ast.Attribute) and n.attr == "load_self" for n in ast.walk(node)
            ):
                found.append(StepRef("driver", node.name, module, node.name))
    return found


def write_only(loops: Iterable[Loop]) -> list[str]:
    """The fields some step writes and no decision reads."""
    return [loop.field for loop in loops if loop.write_only]


# --------------------------------------------------------------------------- the self's schema


def _schema(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], bool]:
    """Map every path of the model (to ``SCHEMA_DEPTH``) to whether it is a leaf."""
    paths: dict[tuple[str, ...], bool] = {}
    for name, info in model.model_fields.items():
        path = (*prefix, name)
        sub = info.annotation
        nested = isinstance(sub, type) and issubclass(sub, BaseModel)
        if nested and len(path) < SCHEMA_DEPTH:
            assert isinstance(sub, type) and issubclass(sub, BaseModel)
            paths[path] = False
            paths.update(_schema(sub, path))
        else:
            paths[path] = True
    return paths


def self_schema() -> dict[tuple[str, ...], bool]:
    """The persisted self's paths (``True`` for a field, ``False`` for a model holding fields)."""
    from state.self_state import Self

    return _schema(Self)


def instance_paths() -> dict[str, str]:
    """Map each path property of ``Instance`` to its place relative to the instance root."""
    from state.instance import Instance

    root = Path("/instance")
    instance = Instance(root)
    found: dict[str, str] = {}
    for name, member in inspect.getmembers(Instance):
        if isinstance(member, property):
            value = getattr(instance, name)
            if isinstance(value, Path):
                found[name] = value.relative_to(root).as_posix()
    found["goals_file"] = instance.goals_dir.relative_to(root).as_posix()
    return found


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Ref:
    """What an expression refers to, beyond the fields it carries."""

    kind: str
    path: tuple[str, ...] = ()
    extra: Any = None


Taint = frozenset[str]
NONE: Taint = frozenset()


@dataclass(frozen=True)
class Val:
    """An expression's value: the fields it was computed from, and what it refers to."""

    taint: Taint = NONE
    ref: Ref | None = None


@dataclass
class _Module:
    name: str
    tree: ast.Module
    funcs: dict[str, ast.FunctionDef] = field(default_factory=dict)
    classes: dict[str, dict[str, ast.FunctionDef]] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    consts: dict[str, str] = field(default_factory=dict)


def _imports_of_tree(tree: ast.Module, module: str) -> list[tuple[str, tuple[str, str | None]]]:
    found: dict[str, tuple[str, str | None]] = {}
    for node in tree.body:
        found.update(_imports_of(node, module))
    return list(found.items())


def _imports_of(node: ast.AST, module: str) -> dict[str, tuple[str, str | None]]:
    found: dict[str, tuple[str, str | None]] = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            found[alias.asname or alias.name.split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0],
                None,
            )
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = module.split(".")[: -node.level]
            base = ".".join([*parts, *([base] if base else [])])
        for alias in node.names:
            found[alias.asname or alias.name] = (base, alias.name)
    return found


# --------------------------------------------------------------------------- the analyser


@dataclass
class _Facts:
    """What one step does with the persisted fields."""

    writes: set[str] = field(default_factory=set)
    decisions: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    edges: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))


class _Analyser:
    def __init__(
        self,
        sources: Mapping[str, str] | None,
        consumed: set[str] | None,
    ) -> None:
        self.sources = dict(sources or {})
        self.modules: dict[str, _Module | None] = {}
        self.schema = self_schema()
        self.paths = instance_paths()
        self.consumed = consumed if consumed is not None else self._consumed()
        self.facts: _Facts = _Facts()
        self.recording = True
        self.step = ""
        self.stack: list[tuple[str, str]] = []
        self.memo: dict[tuple[str, str, int, bool, Taint, str], Val] = {}

    # ----------------------------------------------------------------- sources

    def module(self, name: str) -> _Module | None:
        if name in self.modules:
            return self.modules[name]
        text = self.sources.get(name)
        if text is None:
            parts = name.split(".")
            if parts[0] not in PACKAGES:
                self.modules[name] = None
                return None
            path = ROOT.joinpath(*parts).with_suffix(".py")
            if not path.exists():
                path = ROOT.joinpath(*parts, "__init__.py")
            if not path.exists():
                self.modules[name] = None
                return None
            text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        info = _Module(name, tree)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                info.funcs[node.name] = node
            elif isinstance(node, ast.ClassDef):
                info.classes[node.name] = {
                    n.name: n for n in node.body if isinstance(n, ast.FunctionDef)
                }
            elif isinstance(node, ast.Import | ast.ImportFrom):
                info.imports.update(_imports_of(node, name))
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                if isinstance(node.value.value, str):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            info.consts[target.id] = node.value.value
        self.modules[name] = info
        return info

    def _consumed(self) -> set[str]:
        """State keys some step, helper or router reads (``state.<key>``, ``update["key"]``)."""
        keys: set[str] = set()
        files = [*ROOT.joinpath("nodes").rglob("*.py"), *ROOT.joinpath("graph").glob("*.py")]
        names = {".".join(f.relative_to(ROOT).with_suffix("").parts) for f in files} - {
            "graph.loops"
        } | set(self.sources)
        trees = [info.tree for n in sorted(names) if (info := self.module(n)) is not None]
        for tree in trees:
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Load)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "state"
                ):
                    keys.add(node.attr)
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in {"get", "pop"}
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id in {"update", "result", "out"}
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                ):
                    keys.add(node.args[0].value)
        return keys

    # ----------------------------------------------------------------- fields

    def leaves(self, path: tuple[str, ...], key: str | None = None) -> Taint:
        """The field ids under a path of the self."""
        if self.schema.get(path, False):
            name = ".".join(path)
            return frozenset({f"{name}[{key}]" if key else name})
        return frozenset(
            ".".join(p) for p, leaf in self.schema.items() if leaf and p[: len(path)] == path
        )

    def descend(self, path: tuple[str, ...], attr: str) -> tuple[str, ...] | None:
        """The path one attribute further, or None when ``attr`` is not a field there."""
        if path and self.schema.get(path, False):
            return path  # an attribute of a field's value (a list element's weight)
        nxt = (*path, attr)
        return nxt if nxt in self.schema else None

    @staticmethod
    def file_field(rel: str) -> str | None:
        if not rel.startswith("data/") or any(
            rel == p or rel.startswith(p + "/") for p in NOT_FIELDS
        ):
            return None
        return rel

    # ----------------------------------------------------------------- sinks

    def write(self, fields: Taint, taint: Taint, ctx: Taint) -> None:
        if not self.recording:
            return
        for target in fields:
            self.facts.writes.add(target)
            for source in taint | ctx:
                if source not in fields:
                    self.facts.edges[source].add(target)

    def decide(self, taint: Taint, label: str) -> None:
        if not self.recording:
            return
        for source in taint:
            self.facts.decisions[source].add(label)

    # ----------------------------------------------------------------- expressions

    def read(self, val: Val) -> Taint:
        """The fields a value carries once it is used as a value (a reference is read)."""
        ref = val.ref
        if ref is None:
            return val.taint
        if ref.kind == "self" and ref.path:
            return val.taint | self.leaves(ref.path, ref.extra)
        if ref.kind == "file":
            rel = ref.path[0]
            return val.taint | frozenset({f"file:{rel}"})
        return val.taint

    def run_step(self, step: StepRef) -> _Facts:
        info = self.module(step.module)
        if info is None or step.function not in info.funcs:
            raise LookupError(f"step {step.name}: {step.module}.{step.function} not found")
        self.facts = _Facts()
        self.memo = {}
        self.step = step.name
        fn = info.funcs[step.function]
        env = {
            "deps": Val(ref=Ref("deps")),
            "step": Val(ref=Ref("const", extra=step.name)),
        }
        first = fn.args.posonlyargs + fn.args.args
        if first and step.graph != "driver":
            env[first[0].arg] = Val(ref=Ref("state"))
        self.function(info, fn, env, NONE, depth=0)
        return self.facts

    def function(
        self, info: _Module, fn: ast.FunctionDef, env: dict[str, Val], ctx: Taint, depth: int
    ) -> Val:
        """Analyse a function body (twice: local variables first, then the sinks)."""
        key = (info.name, fn.name)
        if key in self.stack:
            return Val()
        memo = (info.name, fn.name, depth, self.recording, ctx, repr(sorted(env.items())))
        if memo in self.memo:  # same call, same arguments: same result, facts already recorded
            return self.memo[memo]
        self.memo[memo] = result = self._function(info, fn, env, ctx, depth)
        return result

    def _function(
        self, info: _Module, fn: ast.FunctionDef, env: dict[str, Val], ctx: Taint, depth: int
    ) -> Val:
        key = (info.name, fn.name)
        self.stack.append(key)
        recording = self.recording
        try:
            scope = _Scope(self, info, dict(env), depth)
            self.recording = False
            scope.block(fn.body, ctx)
            self.recording = recording
            scope.returned = Val()
            scope.block(fn.body, ctx)
            return scope.returned
        finally:
            self.recording = recording
            self.stack.pop()


def _terminates(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Return | ast.Raise | ast.Continue | ast.Break)


class _Scope:
    """One function being analysed: its variables, its module, how deep in the calls it is."""

    def __init__(self, an: _Analyser, info: _Module, env: dict[str, Val], depth: int) -> None:
        self.an = an
        self.info = info
        self.env = env
        self.depth = depth
        self.returned = Val()

    # ----------------------------------------------------------------- statements

    def block(self, body: list[ast.stmt], ctx: Taint) -> None:
        for stmt in body:
            ctx = self.stmt(stmt, ctx)

    def stmt(self, stmt: ast.stmt, ctx: Taint) -> Taint:
        """Analyse one statement; return the control taint of the statements after it."""
        an = self.an
        if isinstance(stmt, ast.Assign):
            val = self.ev(stmt.value)
            for target in stmt.targets:
                self.assign(target, val, ctx)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(stmt.target, self.ev(stmt.value), ctx)
        elif isinstance(stmt, ast.AugAssign):
            self.assign(stmt.target, Val(self.an.read(self.ev(stmt.value))), ctx, augment=True)
        elif isinstance(stmt, ast.NamedExpr):
            self.assign(stmt.target, self.ev(stmt.value), ctx)
        elif isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Call):
                self.call(stmt.value, ctx, discarded=True)
            else:
                self.ev(stmt.value)
        elif isinstance(stmt, ast.Return):
            self.ret(stmt.value, ctx)
        elif isinstance(stmt, ast.If | ast.While):
            test = an.read(self.ev(stmt.test))
            inner = ctx | test
            self.block(stmt.body, inner)
            self.block(stmt.orelse, inner)
            if _terminates(stmt.body) or _terminates(stmt.orelse):
                return inner
        elif isinstance(stmt, ast.For):
            it = self.ev(stmt.iter)
            self.bind(stmt.target, Val(it.taint, it.ref))
            inner = ctx | an.read(it)
            self.block(stmt.body, inner)
            self.block(stmt.orelse, ctx)
        elif isinstance(stmt, ast.With):
            for item in stmt.items:
                val = self.ev(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, val)
            self.block(stmt.body, ctx)
        elif isinstance(stmt, ast.Try):
            self.block(stmt.body, ctx)
            for handler in stmt.handlers:
                self.block(handler.body, ctx)
            self.block(stmt.orelse, ctx)
            self.block(stmt.finalbody, ctx)
        elif isinstance(stmt, ast.Raise):
            taint = an.read(self.ev(stmt.exc)) if stmt.exc is not None else NONE
            an.decide(taint | ctx, "raises")
        elif isinstance(stmt, ast.Assert):
            return ctx | an.read(self.ev(stmt.test))
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            for name, (module, attr) in _imports_of(stmt, self.info.name).items():
                self.env[name] = Val(ref=self.imported(module, attr))
        elif isinstance(stmt, ast.Match):
            self.ev(stmt.subject)
            for case in stmt.cases:
                self.block(case.body, ctx)
        return ctx

    def ret(self, value: ast.expr | None, ctx: Taint) -> None:
        an = self.an
        if value is None:
            return
        if self.depth > 0:  # a helper: the caller decides what its result does
            val = self.ev(value)
            self.returned = Val(self.returned.taint | val.taint | ctx, val.ref or self.returned.ref)
            return
        if isinstance(value, ast.Dict):
            for key, item in zip(value.keys, value.values, strict=True):
                if key is None:  # **spread: a dict of state keys
                    an.decide(an.read(self.ev(item)) | ctx, "sets state")
                elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                    if key.value in DISPLAY_KEYS:
                        if key.value != "me":
                            self.ev(item)
                        continue
                    taint = an.read(self.ev(item)) | ctx
                    if key.value in an.consumed:
                        an.decide(taint, f"sets {key.value}")
            return
        an.decide(an.read(self.ev(value)) | ctx, "sets state")

    def bind(self, target: ast.expr, val: Val) -> None:
        if isinstance(target, ast.Name):
            old = self.env.get(target.id, Val())
            self.env[target.id] = Val(old.taint | val.taint, val.ref or old.ref)
        elif isinstance(target, ast.Tuple | ast.List):
            plain = Val(self.an.read(val))
            for elt in target.elts:
                self.bind(elt.value if isinstance(elt, ast.Starred) else elt, plain)

    def assign(self, target: ast.expr, val: Val, ctx: Taint, augment: bool = False) -> None:
        an = self.an
        ref = val.ref
        if isinstance(target, ast.Name):
            if ref is not None and ref.kind == "selfupd":
                self.updates(ref, Ref("self", ref.path), ctx)
                val = Val(val.taint, Ref("self", ref.path))
            if augment:
                old = self.env.get(target.id)
                if old is not None and old.ref is not None and old.ref.kind == "self":
                    an.write(an.leaves(old.ref.path, old.ref.extra), val.taint, ctx)
                    return
            self.bind(target, Val(val.taint | ctx, val.ref))
            return
        if isinstance(target, ast.Tuple | ast.List):
            self.bind(target, Val(an.read(val) | ctx))
            return
        if isinstance(target, ast.Attribute | ast.Subscript):
            base = self.ev(target.value)
            extra = NONE
            if isinstance(target, ast.Subscript):
                extra = an.read(self.ev(target.slice))
            where = self.target_ref(target, base)
            if where is None:
                # a local container (a dict being built): it now carries the value too
                root = target.value
                while isinstance(root, ast.Attribute | ast.Subscript):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in self.env:
                    old = self.env[root.id]
                    self.env[root.id] = Val(old.taint | an.read(val) | extra | ctx, old.ref)
                return
            if ref is not None and ref.kind == "selfupd" and ref.path == where.path:
                self.updates(ref, where, ctx)
                return
            an.write(an.leaves(where.path, where.extra), an.read(val) | extra, ctx)

    def target_ref(self, target: ast.Attribute | ast.Subscript, base: Val) -> Ref | None:
        ref = base.ref
        if ref is None or ref.kind != "self":
            return None
        if isinstance(target, ast.Attribute):
            path = self.an.descend(ref.path, target.attr)
            return Ref("self", path if path is not None else ref.path)
        key = self.step_key(target.slice)
        if key and self.an.schema.get(ref.path, False):
            return Ref("self", ref.path, key)
        return Ref("self", ref.path, ref.extra)

    def step_key(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            val = self.env.get(node.id)
            if val is not None and val.ref is not None and val.ref.kind == "const":
                return str(val.ref.extra)
        return None

    def updates(self, upd: Ref, where: Ref, ctx: Taint) -> None:
        """Write the fields a ``model_copy(update=...)`` of the self changes."""
        an = self.an
        keys: dict[str, Val] | None = upd.extra
        if keys is None:
            base = an.leaves(where.path)
            an.write(base, NONE, ctx)
            return
        for key, val in keys.items():
            path = an.descend(where.path, key)
            if path is None:
                continue
            if val.ref is not None and val.ref.kind == "self" and val.ref.path == path:
                continue  # a copy of the same part: carried, not changed
            if val.ref is not None and val.ref.kind == "selfupd" and val.ref.path == path:
                self.updates(val.ref, Ref("self", path), ctx)  # a copy with its own changes
                continue
            an.write(an.leaves(path), an.read(val), ctx)

    # ----------------------------------------------------------------- expressions

    def ev(self, node: ast.expr) -> Val:
        an = self.an
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            return Val(ref=self.global_ref(node.id))
        if isinstance(node, ast.Attribute):
            return self.attribute(self.ev(node.value), node.attr)
        if isinstance(node, ast.Subscript):
            base = self.ev(node.value)
            index = self.ev(node.slice)
            ref = base.ref
            if ref is not None and ref.kind == "self":
                key = self.step_key(node.slice)
                if key and an.schema.get(ref.path, False):
                    return Val(base.taint | index.taint, Ref("self", ref.path, key))
                return Val(base.taint | an.read(index), ref)
            return Val(an.read(base) | an.read(index))
        if isinstance(node, ast.Call):
            return self.call(node, NONE, discarded=False)
        if isinstance(node, ast.BinOp):
            left = self.ev(node.left)
            right = self.ev(node.right)
            if isinstance(node.op, ast.Div) and left.ref is not None and left.ref.kind == "file":
                part = self.path_part(node.right)
                return Val(left.taint, Ref("file", (f"{left.ref.path[0]}/{part}",)))
            return Val(an.read(left) | an.read(right))
        if isinstance(node, ast.IfExp):
            return Val(
                an.read(self.ev(node.test))
                | an.read(self.ev(node.body))
                | an.read(self.ev(node.orelse))
            )
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            return self.comprehension(node)
        if isinstance(node, ast.Lambda):
            return Val()
        if isinstance(node, ast.NamedExpr):
            val = self.ev(node.value)
            self.assign(node.target, val, NONE)
            return val
        if isinstance(node, ast.Dict):
            taint = NONE
            for k, v in zip(node.keys, node.values, strict=True):
                if k is not None:
                    taint |= an.read(self.ev(k))
                taint |= an.read(self.ev(v))
            return Val(taint)
        if isinstance(node, ast.Starred):
            return self.ev(node.value)
        taint = NONE
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                taint |= an.read(self.ev(child))
        return Val(taint)

    def path_part(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.info.consts:
            return self.info.consts[node.id]
        if isinstance(node, ast.JoinedStr):
            return "".join(
                str(v.value) if isinstance(v, ast.Constant) else "*" for v in node.values
            )
        return "*"

    def comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> Val:
        an = self.an
        taint = NONE
        for gen in node.generators:
            it = self.ev(gen.iter)
            taint |= an.read(it)
            self.bind(gen.target, it)
            for cond in gen.ifs:
                taint |= an.read(self.ev(cond))
        if isinstance(node, ast.DictComp):
            taint |= an.read(self.ev(node.key)) | an.read(self.ev(node.value))
            return Val(taint)
        elt = self.ev(node.elt)
        return Val(taint | an.read(elt), elt.ref if isinstance(node.elt, ast.Name) else None)

    def attribute(self, base: Val, attr: str) -> Val:
        an = self.an
        ref = base.ref
        if attr in an.paths and attr != "goals_file":
            if (ref is not None and ref.kind == "inst") or attr not in AMBIGUOUS:
                return Val(base.taint, Ref("file", (an.paths[attr],)))
        if attr == "instance":
            return Val(base.taint, Ref("inst"))
        if ref is None:
            return Val(base.taint)
        kind = ref.kind
        if kind == "self":
            path = an.descend(ref.path, attr)
            if path is not None:
                return Val(base.taint, Ref("self", path))
            return Val(base.taint, Ref("method", extra=(ref, attr)))
        if kind == "state":
            if attr == "me":
                return Val(ref=Ref("self", ()))
            if attr in {"model_copy", "fork"}:
                return Val(ref=Ref("method", extra=(ref, attr)))
            return Val()
        if kind == "file":
            if attr == "parent":
                return Val(base.taint, Ref("file", (ref.path[0].rpartition("/")[0],)))
            return Val(base.taint, Ref("method", extra=(ref, attr)))
        if kind in {"deps", "obj", "svc", "inst"}:
            return Val(base.taint, Ref("method", extra=(ref, attr)))
        if kind == "module":
            return Val(ref=self.imported(ref.path[0], attr))
        return Val(base.taint)

    # ----------------------------------------------------------------- names and calls

    def global_ref(self, name: str) -> Ref | None:
        info = self.info
        if name in info.funcs:
            return Ref("func", extra=(info.name, name))
        if name in info.classes:
            return Ref("class", extra=(info.name, name))
        if name in info.imports:
            module, attr = info.imports[name]
            return self.imported(module, attr)
        if name in info.consts:
            return Ref("const", extra=info.consts[name])
        return None

    def imported(self, module: str, attr: str | None) -> Ref | None:
        if attr is None:
            return Ref("module", (module,))
        target = self.an.module(module) if module.split(".")[0] in PACKAGES else None
        if target is None:
            if self.an.module(f"{module}.{attr}") is not None:
                return Ref("module", (f"{module}.{attr}",))
            return Ref("pure") if module.split(".")[0] == "kernel" else None
        if attr in target.funcs:
            return Ref("func", extra=(module, attr))
        if attr in target.classes:
            return Ref("class", extra=(module, attr))
        if attr in target.imports:  # re-exported
            inner, name = target.imports[attr]
            return self.imported(inner, name)
        return None

    def args(self, node: ast.Call) -> tuple[list[Val], dict[str, Val]]:
        positional = [self.ev(a) for a in node.args]
        named = {k.arg or "**": self.ev(k.value) for k in node.keywords}
        return positional, named

    def call(self, node: ast.Call, ctx: Taint, *, discarded: bool) -> Val:
        an = self.an
        if (
            isinstance(node.func, ast.Name)
            and node.func.id == "next"
            and node.args
            and isinstance(node.args[0], ast.GeneratorExp)
        ):
            gen = self.ev(node.args[0])
            rest = NONE
            for extra in node.args[1:]:
                rest |= an.read(self.ev(extra))
            return Val(gen.taint | rest, gen.ref)
        if isinstance(node.func, ast.Attribute):
            base = self.ev(node.func.value)
            if base.ref is not None and base.ref.kind == "self":  # a method of a field's value
                callee = Val(base.taint, Ref("method", extra=(base.ref, node.func.attr)))
            else:
                callee = self.attribute(base, node.func.attr)
        else:
            callee = self.ev(node.func)
        positional, named = self.args(node)
        everything = [*positional, *named.values()]
        plain = callee.taint
        for val in everything:
            plain |= an.read(val)
        ref = callee.ref
        local = self.local_root(node.func)
        if local is not None:  # a local container grows: it carries what was put in
            old = self.env[local]
            self.env[local] = Val(old.taint | plain | ctx, old.ref)
            return Val(plain)
        if ref is not None and ref.kind == "method":
            owner, name = ref.extra
            return self.method(owner, name, node, positional, named, plain, ctx, discarded)
        if ref is not None and ref.kind in {"func", "class"}:
            module, name = ref.extra
            if ref.kind == "class":
                return Val(plain, Ref("obj", extra=(module, name)))
            if module in NOT_ENTERED or "persist" in name:
                return self.primitive(name, everything, plain, ctx)
            return self.enter(module, name, None, node, positional, named, ctx, discarded, plain)
        if ref is not None and ref.kind == "pure":
            return Val(plain)
        files = [v for v in everything if v.ref is not None and v.ref.kind == "file"]
        fname = node.func.id if isinstance(node.func, ast.Name) else ""
        if files and fname:
            return self.primitive(fname, everything, plain, ctx)
        if discarded and fname not in BUILTINS:
            an.decide(plain | ctx, f"calls {ast.unparse(node.func)[:40]}")
        return Val(plain)

    def local_root(self, func: ast.expr) -> str | None:
        """The local variable a container method (``append``, ``update``…) is called on."""
        if not (isinstance(func, ast.Attribute) and func.attr in MUTATORS):
            return None
        root = func.value
        while isinstance(root, ast.Attribute | ast.Subscript):
            root = root.value
        if not isinstance(root, ast.Name) or root.id not in self.env:
            return None
        ref = self.env[root.id].ref
        return root.id if ref is None or ref.kind == "const" else None

    def primitive(self, name: str, args: list[Val], plain: Taint, ctx: Taint) -> Val:
        """A file primitive (by name: append/atomic_write/dump/write write, the rest read)."""
        an = self.an
        files = [v.ref.path[0] for v in args if v.ref is not None and v.ref.kind == "file"]
        data = NONE
        for val in args:
            if val.ref is None or val.ref.kind != "file":
                data |= an.read(val)
        if not files:
            return Val(plain)
        if name.startswith(WRITE_PREFIXES):
            for rel in files:
                target = an.file_field(rel)
                if target is not None:
                    an.write(frozenset({f"file:{target}"}), data, ctx)
            return Val()
        return Val(plain)

    def method(
        self,
        owner: Ref,
        name: str,
        node: ast.Call,
        positional: list[Val],
        named: dict[str, Val],
        plain: Taint,
        ctx: Taint,
        discarded: bool,
    ) -> Val:
        an = self.an
        kind = owner.kind
        if kind == "self":
            key = self.step_key(node.args[0]) if node.args else None
            if key and name in {"get", "pop", "setdefault"} and an.schema.get(owner.path, False):
                owner = Ref("self", owner.path, key)  # the step's own entry of a dict field
                plain = NONE
                for val in [*positional[1:], *named.values()]:
                    plain |= an.read(val)
            if name in MUTATORS:
                an.write(an.leaves(owner.path, owner.extra), plain, ctx)
                return Val(an.leaves(owner.path, owner.extra) if name == "pop" else NONE)
            if name in COPIES:
                update = named.get("update")
                if name == "model_copy" and update is not None:
                    keys = self.literal_update(node)
                    return Val(NONE, Ref("selfupd", owner.path, keys))
                return Val(NONE, Ref("self", owner.path, owner.extra))
            if name == "model_validate":
                return Val(plain, Ref("selfupd", owner.path, None))
            return Val(an.leaves(owner.path, owner.extra) | plain)
        if kind == "state":
            return Val(NONE, Ref("state"))
        if kind == "file":
            rel = owner.path[0]
            if name in FILE_WRITES:
                target = an.file_field(rel)
                if target is not None:
                    an.write(frozenset({f"file:{target}"}), plain, ctx)
                return Val()
            if name in FILE_READS or name.startswith("read"):
                return Val(frozenset({f"file:{rel}"}) | plain)
            return Val(plain, Ref("file", (rel,)))
        if kind == "inst":
            if name == "goals_file":
                return Val(plain, Ref("file", (an.paths["goals_file"],)))
            if name == "load_self":
                return Val(NONE, Ref("self", ()))
            if name in {"update_self", "save_self"}:
                return Val()
            return Val(plain)
        if kind == "deps":
            if name == "now":
                return Val()
            return self.enter("graph.deps", name, "Deps", node, positional, named, ctx, True, plain)
        if kind == "obj":
            module, cls = owner.extra
            return self.enter(
                module, name, cls, node, positional, named, ctx, discarded, plain, receiver=owner
            )
        if kind == "svc":
            an.decide(plain | ctx, f"calls {'.'.join(owner.path)}.{name}")
            return Val(plain)
        return Val(plain)

    def literal_update(self, node: ast.Call) -> dict[str, Val] | None:
        for kw in node.keywords:
            if kw.arg == "update" and isinstance(kw.value, ast.Dict):
                keys: dict[str, Val] = {}
                for key, value in zip(kw.value.keys, kw.value.values, strict=True):
                    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                        return None
                    keys[key.value] = self.ev(value)
                return keys
        return None

    def enter(
        self,
        module: str,
        name: str,
        cls: str | None,
        node: ast.Call,
        positional: list[Val],
        named: dict[str, Val],
        ctx: Taint,
        effect: bool,
        plain: Taint,
        receiver: Ref | None = None,
    ) -> Val:
        """Follow a call into a project function or method, or treat it as opaque."""
        an = self.an
        info = an.module(module)
        fn: ast.FunctionDef | None = None
        if info is not None:
            fn = info.classes.get(cls, {}).get(name) if cls else info.funcs.get(name)
        label = f"calls {'deps.' if module == 'graph.deps' else ''}{name}"
        if info is None or fn is None or self.depth + 1 > MAX_DEPTH or "persist" in name:
            if cls == "Deps" and name in {"instance", "store", "config", "vault", "model_for"}:
                return Val(plain, Ref("svc", (f"deps.{name}",)))
            if effect and "persist" not in name:
                an.decide(plain | ctx, label)
            return Val(plain)
        if any(d.id == "property" for d in fn.decorator_list if isinstance(d, ast.Name)):
            return Val(plain, Ref("svc", (name,)))
        env: dict[str, Val] = {}
        params = [*fn.args.posonlyargs, *fn.args.args]
        if (
            cls is not None
            and params
            and not any(
                isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list
            )
        ):
            this = receiver or (Ref("deps") if cls == "Deps" else Ref("obj", extra=(module, cls)))
            env[params[0].arg] = Val(ref=this)
            params = params[1:]
        for param, val in zip(params, positional, strict=False):
            env[param.arg] = val
        keyword = {p.arg for p in [*params, *fn.args.kwonlyargs]}
        for key, val in named.items():
            if key in keyword:
                env[key] = val
        for param in [*params, *fn.args.kwonlyargs]:
            env.setdefault(param.arg, Val())
            if param.arg in {"instance", "target"} and env[param.arg].ref is None:
                env[param.arg] = Val(ref=Ref("inst"))
        result = an.function(info, fn, env, ctx, self.depth + 1)
        return result


# --------------------------------------------------------------------------- the map


def _doc(steps: Sequence[StepRef], an: _Analyser) -> dict[str, str]:
    docs: dict[str, str] = {}
    for step in steps:
        info = an.module(step.module)
        fn = info.funcs.get(step.function) if info is not None else None
        text = ast.get_docstring(fn) if fn is not None else None
        docs[step.name] = (text or "").strip().splitlines()[0] if text else ""
    return docs


def _matches(read: str, written: str) -> bool:
    """Whether a read of path ``read`` sees what was written at ``written`` (files only)."""
    if read == written:
        return True
    if not (read.startswith("file:") and written.startswith("file:")):
        return False
    r, w = read[5:], written[5:]
    return (
        w.startswith(r + "/")
        or r.startswith(w + "/")
        or fnmatch.fnmatch(w, r)
        or fnmatch.fnmatch(r, w)
    )


def analyse(
    steps: Sequence[StepRef] | None = None,
    *,
    sources: Mapping[str, str] | None = None,
    consumed: set[str] | None = None,
) -> list[Loop]:
    """Build the closed-loop map of the given steps (default: every step the builders declare).

    ``sources`` maps module names to source text (tests analyse synthetic modules that way);
    ``consumed`` overrides the state keys that count as read by a later step or router.
    """
    steps = list([*declared_steps(), *drivers()] if steps is None else steps)
    an = _Analyser(sources, consumed)
    facts = {step.name: an.run_step(step) for step in steps}
    docs = _doc(steps, an)

    written: set[str] = set()
    for fact in facts.values():
        written |= fact.writes
    fields = sorted(
        {".".join(p) for p, leaf in an.schema.items() if leaf} | written,
        key=lambda f: (f.startswith("file:"), f),
    )

    def targets(source: str) -> set[str]:
        """The fields a read reference stands for (a dict field covers its per-step keys)."""
        found = {f for f in fields if _matches(source, f)}
        found |= {f for f in fields if f.startswith(source + "[")}
        return found

    decisions: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    edges: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    writers: dict[str, set[str]] = defaultdict(set)
    for name, fact in facts.items():
        for target in fact.writes:
            writers[target].add(name)
        for source, labels in fact.decisions.items():
            for f in targets(source):
                decisions[f][name] |= labels
        for source, outs in fact.edges.items():
            for f in targets(source):
                for out in outs:
                    for g in targets(out) or {out}:
                        if g != f:
                            edges[f][name].add(g)

    live = {f for f in fields if decisions[f]}
    changed = True
    while changed:
        changed = False
        for f in fields:
            if f in live:
                continue
            if any(g in live for outs in edges[f].values() for g in outs):
                live.add(f)
                changed = True

    order = {step.name: i for i, step in enumerate(steps)}
    loops = []
    for f in fields:
        readers: dict[str, list[str]] = {}
        for step, labels in decisions[f].items():
            readers.setdefault(step, []).extend(sorted(labels))
        for step, outs in edges[f].items():
            via = sorted(g.removeprefix("file:") for g in outs if g in live)
            if len(via) > VIA_SHOWN:
                via = [*via[:VIA_SHOWN], f"{len(via) - VIA_SHOWN} more fields"]
            if via:
                readers.setdefault(step, []).extend(f"-> {g}" for g in via)
        names = sorted(readers, key=lambda s: order.get(s, 0))
        decision = "; ".join(
            f"{s} ({', '.join(dict.fromkeys(readers[s]))}): {docs.get(s, '')}".rstrip(": ")
            for s in names
        )
        loops.append(
            Loop(
                field=f.removeprefix("file:"),
                writers=tuple(sorted(writers[f], key=lambda s: order.get(s, 0))),
                readers=tuple(names),
                decision=decision,
            )
        )
    return loops
