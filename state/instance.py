"""An instance: the directory a user owns that holds one agent's self.

Layout (lumen spec, Data Structures)::

    <root>/
      data/soul.md                       identity narrative (reflection writes it)
      data/values.json                   [{name, weight, status}]
      data/goals/<year>.json             [{name, weight, status}]
      data/memory/<year>/<date>.jsonl    append-only memory ledger
      data/compartments/psyche/psyche.toml
      skills/chat/main.py                the default chat skill
      skills/_protocol.py                the skills' shared stdin/stdout protocol
      .lumen/config.toml                 model and kernel settings
      .lumen/self.json                   identity vector, affect, budget, stability
      .lumen/checkpoints.sqlite          LangGraph checkpoints
      .lumen/chroma/                     vector index over the memory ledger

The root is ``LUMEN_HOME`` or, when unset, the platform's per-user data directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from kernel.core import identity_hash
from state.errors import DataFileError, InstanceNotFoundError, LumenError
from state.files import atomic_write_text, dump_records, parse_json
from state.records import GoalRecord, ValueRecord
from state.self_state import IdentityVector, Psyche, Self, SelfState

if TYPE_CHECKING:
    from filelock import BaseFileLock

SKILLS_SOURCE = Path(__file__).resolve().parent.parent / "skills"

DEFAULT_SOUL = """\
# Lumen

## Ontology
A self-regulating cognitive agent: a persistent self (identity, values, goals, beliefs,
persona, affect) kept by a deterministic kernel, with a language model giving judgment
inside that structure.

## Narrative
I am new. I remember what happens to me, I reflect on it, and I change only through
bounded, audited, reversible updates. I try to be plainly useful and honest about what
I do not know.
"""

DEFAULT_GOALS: tuple[GoalRecord, ...] = (
    GoalRecord(
        name="Understand the people I talk with and be genuinely useful to them",
        weight=0.9,
        status="perpetual",
    ),
    GoalRecord(name="Keep my self-model coherent and honest", weight=0.8, status="perpetual"),
    GoalRecord(name="Learn what my user cares about", weight=0.6, status="todo"),
)

GITIGNORE = ".lumen/\n*.lock\n"


def default_root(env: Mapping[str, str] | None = None) -> Path:
    """Return ``LUMEN_HOME`` or the per-user data directory."""
    environ = os.environ if env is None else env
    home = environ.get("LUMEN_HOME")
    if home:
        return Path(home).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("lumen", appauthor=False))


def default_values() -> list[ValueRecord]:
    """Seed values from SKAi's default identity values."""
    return [
        ValueRecord(name=name, weight=weight, status="active")
        for name, weight in SelfState().identity.values.items()
    ]


def new_identity() -> IdentityVector:
    """Create an identity vector with a fresh immutable id and its hash."""
    draft = IdentityVector(identity_id=f"lumen-{uuid.uuid4().hex[:12]}")
    return draft.model_copy(update={"identity_hash": identity_hash(draft.dims())})


def psyche_toml(psyche: Psyche) -> str:
    """Render a psyche as the compartment TOML of the psyche spec."""
    import tomlkit  # only init writes TOML; keep it off the read-only start-up path

    doc = tomlkit.document()
    doc.add(tomlkit.comment("Jungian psyche: persona, shadow, archetypes, self-integration."))
    doc.add(tomlkit.comment("Read when the psyche is first loaded; evolved state is persisted."))
    data = psyche.model_dump(mode="json")
    for section in ("persona", "shadow", "archetypes", "self_integration"):
        doc[section] = data[section]
    return tomlkit.dumps(doc)


def _check_triggers(path: Path, psyche: Psyche) -> None:
    """Reject unusable shadow triggers (e.g. a malformed ``re:`` regex) when the psyche loads."""
    from kernel.shadow import validate_shadow

    try:
        validate_shadow(psyche.shadow)
    except ValueError as exc:
        raise DataFileError(f"{path}: {exc}") from exc


_PARSED_SELF: dict[Path, tuple[bytes, Self]] = {}
"""The last self parsed per file, with the exact bytes it was parsed from (see ``load_self``)."""
_SOUL_TEXT: dict[Path, tuple[tuple[int, int, int], str]] = {}
"""The last text read of each soul file with the file's identity (see ``Instance.soul_text``)."""


@dataclass(frozen=True)
class Instance:
    """Paths of one instance, plus loaders for its files."""

    root: Path

    @property
    def data(self) -> Path:
        """Return ``data/``."""
        return self.root / "data"

    @property
    def soul_file(self) -> Path:
        """Return ``data/soul.md``."""
        return self.data / "soul.md"

    @property
    def values_file(self) -> Path:
        """Return ``data/values.json``."""
        return self.data / "values.json"

    @property
    def goals_dir(self) -> Path:
        """Return ``data/goals/``."""
        return self.data / "goals"

    @property
    def memory_dir(self) -> Path:
        """Return ``data/memory/``."""
        return self.data / "memory"

    @property
    def psyche_file(self) -> Path:
        """Return the psyche compartment file."""
        return self.data / "compartments" / "psyche" / "psyche.toml"

    @property
    def skills_dir(self) -> Path:
        """Return the instance's ``skills/``."""
        return self.root / "skills"

    @property
    def machine(self) -> Path:
        """Return ``.lumen/`` (machine state)."""
        return self.root / ".lumen"

    @property
    def config_file(self) -> Path:
        """Return ``.lumen/config.toml``."""
        return self.machine / "config.toml"

    @property
    def self_file(self) -> Path:
        """Return ``.lumen/self.json``."""
        return self.machine / "self.json"

    @property
    def checkpoint_db(self) -> Path:
        """Return ``.lumen/checkpoints.sqlite``."""
        return self.machine / "checkpoints.sqlite"

    @property
    def branches_dir(self) -> Path:
        """Return ``.lumen/branches/`` (forks and replays of the self)."""
        return self.machine / "branches"

    @property
    def chroma_dir(self) -> Path:
        """Return ``.lumen/chroma/``."""
        return self.machine / "chroma"

    @property
    def metacog_dir(self) -> Path:
        """Return ``data/metacog/`` (outcomes, lessons, rehearsals, policy changes)."""
        return self.data / "metacog"

    @property
    def self_authored_dir(self) -> Path:
        """Return ``data/self/`` (self_norms, learning_notebook, evidence_ledger)."""
        return self.data / "self"

    def goals_file(self, year: int) -> Path:
        """Return ``data/goals/<year>.json``."""
        return self.goals_dir / f"{year}.json"

    def exists(self) -> bool:
        """Say whether this directory looks like an instance."""
        return self.soul_file.exists() and self.values_file.exists() and self.machine.is_dir()

    def require(self) -> Instance:
        """Return self, or raise if there is no instance here."""
        if not self.exists():
            raise InstanceNotFoundError(
                f"no Lumen instance at {self.root} (run 'lumen init' or set LUMEN_HOME)"
            )
        return self

    def load_psyche(self) -> Psyche:
        """Load the psyche: persisted self > compartment file > default (psyche spec)."""
        if self.self_file.exists():
            return self.load_self().psyche
        if not self.psyche_file.exists():
            return Psyche()
        try:
            raw = tomllib.loads(self.psyche_file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, OSError) as exc:
            raise DataFileError(f"{self.psyche_file}: invalid TOML: {exc}") from exc
        try:
            psyche = Psyche.model_validate(raw)
        except ValidationError as exc:
            raise DataFileError.from_validation(self.psyche_file, exc) from exc
        _check_triggers(self.psyche_file, psyche)
        return psyche

    def soul_text(self) -> str:
        """Return ``data/soul.md`` ("" when missing), re-read only when the file changed.

        Drafting and scoring ask for the self's name several times a turn; the text is kept with
        the file's identity (inode, mtime, size), and an atomic rewrite is a new inode.
        """
        try:
            stat = self.soul_file.stat()
        except FileNotFoundError:
            return ""
        key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        kept = _SOUL_TEXT.get(self.soul_file)
        if kept is not None and kept[0] == key:
            return kept[1]
        text = self.soul_file.read_text(encoding="utf-8")
        _SOUL_TEXT[self.soul_file] = (key, text)
        return text

    def load_self(self, *, read_only: bool = False) -> Self:
        """Load the persisted self (identity vector, psyche, affect, budget, stability).

        A turn reads the self three times (ingest, snapshot, the locked merge); parsing and
        validating 30 KB each time was a tenth of a scripted turn. The last parse is kept per
        file together with the bytes it came from: the file is always read, and only when its
        bytes are exactly those is a fresh copy of the kept self returned. ``read_only=True``
        returns the kept self itself (no copy): for callers that only read it (the snapshot).
        """
        try:
            data = self.self_file.read_bytes()
        except FileNotFoundError as exc:
            raise DataFileError(f"{self.self_file}: file is missing") from exc
        except OSError as exc:
            raise DataFileError(f"{self.self_file}: cannot read ({exc.strerror})") from exc
        kept = _PARSED_SELF.get(self.self_file)
        if kept is not None and kept[0] == data:
            return kept[1] if read_only else kept[1].fork()
        raw = parse_json(self.self_file, data)
        try:
            the_self = Self.model_validate(raw)
        except ValidationError as exc:
            raise DataFileError.from_validation(self.self_file, exc) from exc
        _check_triggers(self.self_file, the_self.psyche)
        _PARSED_SELF[self.self_file] = (data, the_self.fork())
        return the_self

    def save_self(self, the_self: Self) -> None:
        """Persist the self atomically.

        Rewritten at the end of every turn and cycle: the data is synced before the rename (never
        torn), the rename is not (``sync_rename=False``): a power loss may bring back the previous
        turn's self, which is a complete last good state (the ledger's appends are not synced
        either). Halves the fsyncs of a turn, the one cost that grows with disk contention.
        """
        text = the_self.model_dump_json(indent=2) + "\n"
        atomic_write_text(self.self_file, text, sync_rename=False)
        _PARSED_SELF[self.self_file] = (text.encode("utf-8"), the_self.fork())

    def data_lock(self) -> BaseFileLock:
        """Return the instance lock that values and goals read-modify-writes hold.

        One inter-process file lock (``.lumen/data.lock``) for ``values.json`` and every goals
        file: a ``reflect`` and a ``run`` that each read, change and write them serialise, so
        neither loses the other's update. The lock object is one per path in this process
        (``is_singleton``) and re-entrant per thread, so a writer may nest it; other threads and
        processes wait for it.
        """
        from filelock import FileLock

        self.machine.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.machine / "data.lock"), is_singleton=True)

    def update_self(self, merge: Callable[[Self], Self]) -> Self:
        """Read the present self, apply ``merge`` and write it back, under an inter-process lock.

        Each loop owns parts of the self (a turn its self_state and metacog, a cycle the identity
        vector, affect and stability, reflection the psyche): ``merge`` copies only its own parts
        onto the present self, so concurrent ``chat`` and ``run`` never undo each other.
        ``merge`` must not change ``present`` in place (it is the kept parse, not a copy: build
        the result with ``model_copy`` and ``fork``, as every merge does).
        """
        from state.files import path_lock

        with path_lock(self.self_file):
            merged = merge(self.load_self(read_only=True))
            self.save_self(merged)
        return merged


def init_instance(root: Path, *, force: bool = False, now: datetime | None = None) -> Instance:
    """Scaffold an instance at ``root``.

    ``now`` is the clock reading the instance is created at (default: the current UTC time): it
    names this year's goals file and dates the first memory, so a test can pin both.

    Refuses when an instance already exists unless ``force``; even with ``force`` nothing that
    exists is overwritten or deleted: only missing files are created.
    """
    instance = Instance(root)
    if instance.exists() and not force:
        raise LumenError(f"an instance already exists at {root} (use --force to add missing files)")
    if root.exists() and not root.is_dir():
        raise LumenError(f"{root} exists and is not a directory")
    now = now or datetime.now(UTC)
    day = now.date()

    def create(path: Path, text: str) -> None:
        if not path.exists():
            atomic_write_text(path, text)

    for directory in (
        instance.data,
        instance.goals_dir,
        instance.memory_dir / f"{day.year:04d}",
        instance.psyche_file.parent,
        instance.skills_dir,
        instance.machine,
    ):
        directory.mkdir(parents=True, exist_ok=True)
    create(instance.soul_file, DEFAULT_SOUL)
    if not instance.values_file.exists():
        dump_records(instance.values_file, default_values())
    if not instance.goals_file(day.year).exists():
        dump_records(instance.goals_file(day.year), DEFAULT_GOALS)
    create(instance.psyche_file, psyche_toml(Psyche()))
    from state.config import DEFAULT_CONFIG_TOML

    create(instance.config_file, DEFAULT_CONFIG_TOML)
    if not instance.self_file.exists():
        psyche = instance.load_psyche() if instance.psyche_file.exists() else Psyche()
        instance.save_self(Self(identity=new_identity(), psyche=psyche))
    chat_skill = instance.skills_dir / "chat"
    if not (chat_skill / "main.py").exists():
        shutil.copytree(
            SKILLS_SOURCE / "chat",
            chat_skill,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    # The skills' shared stdin/stdout protocol, importable from beside them (skills/_protocol.py).
    protocol = SKILLS_SOURCE / "_protocol.py"
    create(instance.skills_dir / protocol.name, protocol.read_text(encoding="utf-8"))
    create(instance.root / ".gitignore", GITIGNORE)
    from state.journal import MemoryJournal

    journal = MemoryJournal(instance.memory_dir)
    if not journal.files():
        journal.append(
            journal.new_entry(
                f"Instance initialised at {instance.root}.",
                author="kernel",
                situation="init",
                meta={"step": "init"},
                timestamp=now,
            )
        )
    if not (instance.root / ".git").exists() and shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(instance.root)], check=False, timeout=30)
    return instance


def copy_instance(source: Instance, root: Path) -> Instance:
    """Copy an instance to ``root`` without lock files or its branches; return the copy.

    The copy is made under ``<root>.partial`` and renamed at the end, so a crash mid-copy never
    leaves a half instance at ``root``.
    """

    def ignore(directory: str, names: list[str]) -> set[str]:
        skip = {n for n in names if n.endswith(".lock")}
        if Path(directory) == source.machine:
            skip.add(source.branches_dir.name)
        return skip

    root.parent.mkdir(parents=True, exist_ok=True)
    partial = root.with_name(root.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(source.root, partial, ignore=ignore, symlinks=True)
    partial.rename(root)
    return Instance(root)
