"""Custom persona grammars on disk: find and load the ``.toml`` file a persona names.

The rules of a grammar (what its keys mean, how a reply is rendered) are pure and live in
``kernel.grammar``; this module only resolves the path and reads the file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from kernel.grammar import BUILTIN_GRAMMARS, CustomGrammar, grammar_from_table, one_line


def load_grammar(path: Path) -> CustomGrammar:
    """Load and validate a custom grammar TOML file, raising a one-line ``ValueError``."""
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except OSError as err:
        raise ValueError(one_line(f"grammar file {path}: cannot read ({err.strerror})")) from err
    except tomllib.TOMLDecodeError as err:
        raise ValueError(one_line(f"grammar file {path}: invalid TOML ({err})")) from err
    return grammar_from_table(data, path)


def resolve_grammar(grammar: str, base_dir: Path | None) -> CustomGrammar | None:
    """Return the custom grammar a ``.toml`` path names, ``None`` for a built-in one."""
    name = grammar.strip()
    if name.lower() in BUILTIN_GRAMMARS:
        return None
    if not name.lower().endswith(".toml"):
        raise ValueError(
            one_line(f"unknown grammar {name!r}: use {', '.join(BUILTIN_GRAMMARS)} or a .toml path")
        )
    path = Path(name).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    return load_grammar(path)
