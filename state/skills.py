"""Skill discovery: which skill directories exist and what their ``skill.toml`` declares.

A skill is a directory holding ``main.py`` (a standalone program, JSON over stdin/stdout; see
``skills/_protocol.py``) and ``skill.toml``. The manifest is the whole contract with the kernel:
besides what the skill is for (archetype, trust, mutation) it declares the *affordance cues* that
make the kernel consider it (``[affordance]``, see ``kernel.affordance``) and how a result is
presented in the reply (``[[present]]``, see ``kernel.presentation``). Adding a skill therefore
needs no code change: drop the directory into the instance's ``skills/``. Running one is
``graph.skills``.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kernel.affordance import Affordance, parse_affordance
from kernel.presentation import Presentation, parse_presentation

BUILTIN_SKILLS = Path(__file__).resolve().parent.parent / "skills"
PROTOCOL_FILE = "_protocol.py"
"""The shared stdin/stdout protocol module, kept beside the skill directories that import it."""
ARCHETYPES = ("sage", "healer", "explorer", "guardian")


@dataclass(frozen=True)
class SkillInfo:
    """A skill directory found by a scan."""

    name: str
    path: Path
    origin: str
    has_main: bool


@dataclass(frozen=True)
class SkillManifest:
    """``skill.toml``: what a skill is for and how the kernel must treat it."""

    name: str
    description: str = ""
    archetype: str = ""
    untrusted_output: bool = True
    mutating: bool = True
    answers: bool = False
    """Its result is a checked answer (arithmetic, the time): the reply must carry it."""
    affordance: Affordance = field(default_factory=Affordance)
    presentation: Presentation = field(default_factory=Presentation)


Registry = Mapping[str, tuple[SkillInfo, SkillManifest]]


def manifest(skill: SkillInfo) -> SkillManifest:
    """Read a skill's ``skill.toml``; a missing or broken one gives the cautious defaults.

    Parsed manifests are cached by the file's identity (path, size, mtime): every turn asks for
    the registry, and an edited or replaced ``skill.toml`` is read again.
    """
    path = skill.path / "skill.toml"
    try:
        stat = path.stat()
    except OSError:
        return SkillManifest(name=skill.name)
    return _parsed_manifest(skill.name, str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _parsed_manifest(name: str, path: str, size: int, mtime_ns: int) -> SkillManifest:
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return SkillManifest(name=name)
    skill = SkillInfo(name, Path(path).parent, "", True)
    archetype = str(raw.get("archetype", ""))
    return SkillManifest(
        name=skill.name,
        description=str(raw.get("description", "")),
        archetype=archetype if archetype in ARCHETYPES else "",
        untrusted_output=bool(raw.get("untrusted_output", True)),
        mutating=bool(raw.get("mutating", True)),
        answers=bool(raw.get("answers", False)),
        affordance=parse_affordance(raw.get("affordance")),
        presentation=parse_presentation(raw.get("present")),
    )


def scan(instance_skills: Path | None) -> list[SkillInfo]:
    """List instance skills, then built-ins; an instance skill shadows a built-in of its name."""
    found: dict[str, SkillInfo] = {}
    for origin, root in (("instance", instance_skills), ("builtin", BUILTIN_SKILLS)):
        if root is None or not root.is_dir():
            continue
        for directory in sorted(root.iterdir()):
            if not directory.is_dir() or directory.name.startswith(("_", ".")):
                continue
            if directory.name in found:
                continue
            main = directory / "main.py"
            found[directory.name] = SkillInfo(directory.name, directory, origin, main.is_file())
    return sorted(found.values(), key=lambda s: s.name)


def registry(instance_skills: Path | None) -> dict[str, tuple[SkillInfo, SkillManifest]]:
    """Return every runnable skill by name with its manifest."""
    return {s.name: (s, manifest(s)) for s in scan(instance_skills) if s.has_main}


def ensure_protocol(skills_dir: Path) -> Path:
    """Put the shared protocol module beside the skills in ``skills_dir`` (if it is missing).

    Skills import ``_protocol`` from their parent directory (see ``skills/_protocol.py``), so an
    authored or copied skill needs the file next to its own directory.
    """
    target = skills_dir / PROTOCOL_FILE
    if not target.exists():
        source = (BUILTIN_SKILLS / PROTOCOL_FILE).read_text(encoding="utf-8")
        target.write_text(source, encoding="utf-8")
    return target


def affordances(known: Registry) -> dict[str, Affordance]:
    """Return each skill's declared cues, for ``kernel.affordance.candidates``."""
    return {name: m.affordance for name, (_, m) in known.items()}


def presentations(known: Registry) -> dict[str, Presentation]:
    """Return each skill's declared reply lines, for ``kernel.presentation.render``."""
    return {name: m.presentation for name, (_, m) in known.items()}
