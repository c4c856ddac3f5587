"""How a skill's successful result becomes a reply line, declared as data in its ``skill.toml``.

A skill lists ``[[present]]`` tables; the first whose conditions hold renders the line:

- ``requires``: output fields that must be present.
- ``template``: the line; ``{field}`` is the output field (``""`` when missing) and
  ``{field|default:X}`` gives ``X`` when it is missing.
- ``list``: an output field that must hold a list. Its first ``limit`` items that are objects are
  each rendered with ``item`` (a template over the item), joined with ``join`` and put in the
  template as ``{items}``; when none are, the line is ``empty``.
- ``squeeze_spaces = true``: double spaces in the rendered line become single ones.

When no table applies, the line is the generic ``tool: key=value, ...`` (or, for untrusted
output, only its size).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TOOL_LINE_CHARS = 400
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?:\|default:([^{}]*))?\}")


@dataclass(frozen=True)
class Line:
    """One way to render a result, used when its conditions hold."""

    template: str
    requires: tuple[str, ...] = ()
    list: str = ""
    item: str = ""
    limit: int | None = None
    join: str = ", "
    empty: str = ""
    squeeze_spaces: bool = False


@dataclass(frozen=True)
class Presentation:
    """A skill's reply lines, tried in order."""

    lines: tuple[Line, ...] = ()


def parse_presentation(raw: object) -> Presentation:
    """Build a ``Presentation`` from a manifest's ``[[present]]``; invalid entries are dropped."""
    if not isinstance(raw, list):
        return Presentation()
    return Presentation(tuple(line for line in map(_parse_line, raw) if line is not None))


def _parse_line(raw: object) -> Line | None:
    if not isinstance(raw, Mapping):
        return None
    template, requires, limit = raw.get("template"), raw.get("requires", []), raw.get("limit")
    texts = [raw.get(key, "") for key in ("list", "item", "join", "empty")]
    if (
        not isinstance(template, str)
        or not isinstance(requires, list)
        or not all(isinstance(r, str) for r in [*requires, *texts])
        or (limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)))
    ):
        return None
    return Line(
        template=template,
        requires=tuple(requires),
        list=str(raw.get("list", "")),
        item=str(raw.get("item", "")),
        limit=limit,
        join=str(raw.get("join", ", ")),
        empty=str(raw.get("empty", "")),
        squeeze_spaces=bool(raw.get("squeeze_spaces", False)),
    )


def fill(template: str, values: Mapping[str, Any]) -> str:
    """Put ``values`` into ``template``'s ``{field}`` / ``{field|default:X}`` placeholders."""

    def one(found: re.Match[str]) -> str:
        name, default = found.group(1), found.group(2) or ""
        return str(values[name]) if name in values else default

    return PLACEHOLDER.sub(one, template)


def _applies(line: Line, output: Mapping[str, Any]) -> bool:
    if not all(key in output for key in line.requires):
        return False
    return not line.list or isinstance(output.get(line.list), list)


def render(
    tool: str, output: Mapping[str, Any], *, untrusted: bool, presentation: Presentation
) -> str:
    """Render a successful result of ``tool`` as one reply line."""
    for line in presentation.lines:
        if not _applies(line, output):
            continue
        if line.list:
            items = output[line.list][: line.limit]
            texts = [fill(line.item, item) for item in items if isinstance(item, Mapping)]
            if not texts:
                return line.empty
            rendered = fill(line.template, {**output, "items": line.join.join(texts)})
        else:
            rendered = fill(line.template, output)
        return rendered.replace("  ", " ") if line.squeeze_spaces else rendered
    text = ", ".join(f"{k}={v}" for k, v in output.items() if k != "instance")
    if untrusted:
        return f"{tool} returned external content ({len(text)} chars)."
    return f"{tool}: {text[:TOOL_LINE_CHARS]}"


def _norm(text: str) -> str:
    return " ".join(text.casefold().split()).strip(" .!?")


def without_echo(output: Any, said: str) -> Any:
    """Drop every list item of ``output`` that is just ``said`` again (the turn's own input).

    A recall run in the turn finds the message the turn itself just stored; handing that back
    to the model as a "memory" is an echo, not information.
    """
    target = _norm(said)

    def echo(item: Any) -> bool:
        if isinstance(item, str):
            return _norm(item) == target
        if isinstance(item, Mapping):
            return any(isinstance(v, str) and _norm(v) == target for v in item.values())
        return False

    if isinstance(output, Mapping):
        return {k: without_echo(v, said) for k, v in output.items()}
    if isinstance(output, list):
        return [without_echo(item, said) for item in output if not echo(item)]
    return output


def carries(reply: str, output: Mapping[str, Any]) -> bool:
    """Say whether ``reply`` states one of the result's values (a number, a short string)."""
    values: list[str] = []
    for value in output.values():
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            values += [str(value), f"{value:g}", f"{value:,}"]
        elif isinstance(value, str) and 0 < len(value) <= 40:
            values.append(value)
    return any(v in reply for v in values)
