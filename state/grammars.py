"""Custom persona grammars on disk: find and load the ``.toml`` file a persona names.

The rules of a grammar (what its keys mean, how a reply is rendered) are pure and live in
``kernel.grammar``; this module only resolves the path, confined to the instance, and reads the
file.
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


def resolve_grammar(
    grammar: str, base_dir: Path | None, *, root: Path | None = None
) -> CustomGrammar | None:
    """Return the custom grammar a ``.toml`` path names, ``None`` for a built-in one.

    A custom grammar file must live inside the instance: the path is taken relative to
    ``base_dir`` (the psyche's folder) and, once symlinks are resolved, must lie under ``root``
    (the instance root; ``base_dir`` when not given) and be a regular file with one hard link.
    Anything else (``../../etc/x.toml``, ``/etc/x.toml``, ``~/x.toml``, a symlink or hard link
    out of the instance, no ``base_dir``) raises a one-line ``ValueError`` before the file is
    read, so the caller falls back to a built-in grammar.
    """
    name = grammar.strip()
    if name.lower() in BUILTIN_GRAMMARS:
        return None
    if not name.lower().endswith(".toml"):
        raise ValueError(
            one_line(f"unknown grammar {name!r}: use {', '.join(BUILTIN_GRAMMARS)} or a .toml path")
        )
    if base_dir is None:
        raise ValueError(one_line(f"grammar file {name!r}: no instance to look in"))
    fence = (root or base_dir).resolve()
    path = (base_dir / name).resolve()
    if not path.is_relative_to(fence):
        raise ValueError(one_line(f"grammar file {name!r} must live inside the instance"))
    if path.is_file() and path.stat().st_nlink > 1:
        raise ValueError(one_line(f"grammar file {name!r} has more than one hard link"))
    return load_grammar(path)
