"""The protocol every skill speaks, in one place: JSON in on stdin, one JSON object out on stdout.

A skill is a directory ``<name>/`` holding ``main.py`` and ``skill.toml``; the kernel runs it as
``[sys.executable, <name>/main.py]`` (``graph.skills``), from the project's ``skills/`` or from an
instance's ``skills/``, with no shell and a timeout. The contract:

- ``main.py --help`` prints a usage line and the skill's description and exits 0.
- stdin holds one JSON object, the input; stdout gets exactly one JSON object, the output.
- Exit 0 on success, 2 on bad input, 3 when refused by the skill's own policy, 1 on any other
  failure; a failure's output is ``{"error": "...", ...}``. There is never a traceback.

``serve`` does all of that around a skill's ``run(payload) -> dict``, which raises
``SkillError(message, code)`` for an expected failure. The ``--help`` text is the skill's module
docstring: its first line ``name: summary`` gives the program name and description, the rest the
details.

Importing this module: it lives beside the skill directories (``skills/_protocol.py``;
``state.instance`` copies it into every instance's ``skills/`` and authoring does too), so a skill
puts its parent directory on ``sys.path``. When that copy is missing, the installed ``lumen``
package (``skills._protocol``) serves instead::

    import sys
    from pathlib import Path

    try:  # skills/_protocol.py beside this skill's directory
        sys.path.append(str(Path(__file__).resolve().parent.parent))
        from _protocol import SkillError, serve
    except ImportError:  # no copy there: the installed lumen package
        from skills._protocol import SkillError, serve


    def run(payload: dict) -> dict:
        return {"echo": payload}


    if __name__ == "__main__":
        sys.exit(serve(run, __doc__))

Standard library only: a skill runs outside the kernel's process and packages.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_REFUSED = 3


class SkillError(Exception):
    """An expected failure, reported as ``{"error": ..., **extra}`` with an exit code."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT, **extra: Any) -> None:
        """Keep the message, the exit code and extra fields for the error object."""
        super().__init__(message)
        self.code = code
        self.extra = extra


def read_payload() -> dict[str, Any]:
    """Read one JSON object from stdin."""
    try:
        raw = sys.stdin.buffer.read().decode("utf-8")
        payload = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SkillError(f"stdin is not one JSON object: {exc}") from None
    if not isinstance(payload, dict):
        raise SkillError("stdin must hold a JSON object")
    return payload


def resolve_instance(payload: dict[str, Any]) -> Path:
    """Return the instance root from the payload's "instance" or LUMEN_HOME."""
    raw = payload.get("instance")
    if raw is None:
        raw = os.environ.get("LUMEN_HOME") or None
    if raw is None:
        raise SkillError('no instance: pass "instance" or set LUMEN_HOME')
    if not isinstance(raw, str) or not raw.strip():
        raise SkillError('"instance" must be a non-empty path string')
    root = Path(raw).expanduser()
    if not root.is_absolute():
        raise SkillError(f"instance path must be absolute, not {raw!r}")
    looks_like_instance = (
        (root / "data" / "soul.md").is_file()
        and (root / "data" / "values.json").is_file()
        and (root / ".lumen").is_dir()
    )
    if not looks_like_instance:
        raise SkillError(f"no Lumen instance at {root}")
    return root


def parser(doc: str | None, prog: str | None = None) -> argparse.ArgumentParser:
    """Return the ``--help`` parser built from a skill's docstring (``name: summary`` first)."""
    first, _, details = (doc or "").partition("\n")
    name, colon, summary = first.partition(": ")
    if not colon:
        name, summary = "", first
    return argparse.ArgumentParser(
        prog=prog or name or Path(sys.argv[0]).resolve().parent.name,
        description=summary[:1].upper() + summary[1:],
        epilog=details.strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def serve(
    run: Callable[[dict[str, Any]], dict[str, Any]],
    doc: str | None,
    *,
    prog: str | None = None,
    argv: list[str] | None = None,
    ensure_ascii: bool = True,
) -> int:
    """Handle ``--help``, read the payload, call ``run``, print its result; return the exit code."""
    parser(doc, prog).parse_args(argv)
    try:
        result = run(read_payload())
    except SkillError as exc:
        print(json.dumps({"error": str(exc), **exc.extra}))
        return exc.code
    except Exception as exc:  # the protocol allows no traceback, only a JSON error
        print(json.dumps({"error": f"internal error: {type(exc).__name__}: {exc}"}))
        return EXIT_FAILED
    print(json.dumps(result, ensure_ascii=ensure_ascii))
    return EXIT_OK
