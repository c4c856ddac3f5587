"""Prompt templates: one markdown file per prompt, filled with ``string.Template``."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from string import Template


@cache
def template(name: str) -> Template:
    """Load ``prompts/<name>.md`` as a ``Template``."""
    return Template(files("prompts").joinpath(f"{name}.md").read_text(encoding="utf-8"))


def render(prompt_name: str, /, **values: object) -> str:
    """Render a prompt; a missing ``$placeholder`` raises ``KeyError``."""
    return template(prompt_name).substitute({key: str(value) for key, value in values.items()})


def names() -> list[str]:
    """Return every prompt name (the path under ``prompts/`` without ``.md``)."""
    root = files("prompts")
    found: list[str] = []

    def walk(node: object, prefix: str) -> None:
        for child in node.iterdir():  # type: ignore[attr-defined]
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif child.name.endswith(".md"):
                found.append(prefix + child.name[:-3])

    walk(root, "")
    return sorted(found)
