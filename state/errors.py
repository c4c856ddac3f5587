"""Typed errors the CLI turns into one clear line on stderr."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError


class LumenError(Exception):
    """An expected failure with a message fit for a user."""


class InstanceNotFoundError(LumenError):
    """No instance at the resolved path."""


class DataFileError(LumenError):
    """A data file is unreadable or does not match its schema."""

    @classmethod
    def from_validation(cls, path: Path, error: ValidationError, prefix: str = "") -> DataFileError:
        """Build an error naming the file and the first offending field."""
        first = error.errors()[0]
        loc = ".".join(str(part) for part in (prefix, *first["loc"]) if part != "")
        count = error.error_count()
        more = f" (+{count - 1} more)" if count > 1 else ""
        return cls(f"{path}: field '{loc or '<root>'}': {first['msg']}{more}")


class ModelLoadError(LumenError):
    """The configured chat model could not be created or loaded."""
