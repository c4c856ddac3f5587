"""Instance configuration: ``.lumen/config.toml`` overlaid by environment variables.

Environment variables win over the file so a user can point one instance at a hosted model for a
single command: ``LUMEN_LLM_PROVIDER``, ``LUMEN_LLM_MODEL``, ``LUMEN_LLM_BASE_URL``,
``LUMEN_LLM_API_KEY_ENV`` (name of the variable holding the key, default ``OPENAI_API_KEY``),
``LUMEN_LLM_MODEL_PATH`` (a GGUF file for the embedded backend) and ``LUMEN_LLM_THREADS``.
Scale-out settings have their own: ``LUMEN_CHECKPOINTS`` (``sqlite`` or ``postgres``),
``LUMEN_POSTGRES_URL`` and ``LUMEN_CHROMA_URL``.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from state.errors import DataFileError

Provider = Literal["embedded", "openai"]


class Band(BaseModel):
    """A closed temperature interval [min, max]."""

    model_config = ConfigDict(extra="forbid")

    min: float = Field(ge=0.0, le=2.0)
    max: float = Field(ge=0.0, le=2.0)

    @model_validator(mode="after")
    def _ordered(self) -> Band:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) > max ({self.max})")
        return self


def _default_bands() -> dict[str, Band]:
    # AsteronIris Phase 5: conversation gets an adaptive band, autonomy a low-variance band.
    return {
        "talk": Band(min=0.4, max=0.9),
        "work": Band(min=0.2, max=0.6),
        "deep": Band(min=0.3, max=0.7),
        "autonomous": Band(min=0.0, max=0.3),
    }


class LLMConfig(BaseModel):
    """Which chat model to use and how."""

    model_config = ConfigDict(extra="forbid")

    provider: Provider = "embedded"
    model: str = "gpt-4o-mini"
    base_url: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    model_path: str = ""
    embedded_model: str = "smollm2-135m"
    """Which packaged model the embedded backend runs (``state.models.MODELS``)."""
    threads: int = Field(default=0, ge=0, description="0 = cores - 1 (at least 1)")
    context_tokens: int = Field(default=2048, ge=512)
    max_tokens: int = Field(default=256, ge=16)
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    timeout_s: float = Field(default=120.0, gt=0)

    def resolved_threads(self) -> int:
        """Return the thread count, resolving 0 to cores - 1."""
        return self.threads or max(1, (os.cpu_count() or 2) - 1)


class MemoryConfig(BaseModel):
    """Retrieval sizes, the signal pipeline and memory maintenance."""

    model_config = ConfigDict(extra="forbid")

    recent: int = Field(default=5, ge=0)
    semantic_k: int = Field(default=5, ge=0)
    dedup_similarity: float = Field(default=0.90, gt=0.0, le=1.0)
    """Signals this similar to an earlier one from the same origin are dropped as duplicates."""
    min_observations: int = Field(default=2, ge=1)
    """Independent observations a claim needs before promotion to a long-term belief (§17)."""
    inference: Literal["after_turn", "off"] = "after_turn"
    """Tier C: one batched LLM pass over a turn's new user memories after the reply is shown."""
    maintenance_hours: float = Field(default=24.0, gt=0.0)
    """``lumen run`` runs memory maintenance when the last run is older than this."""
    chroma_url: str = ""
    """A Chroma server (``http://127.0.0.1:8000``); empty = the embedded index under ``.lumen/``."""


class CheckpointsConfig(BaseModel):
    """Where LangGraph checkpoints (turn, cycle and reflect threads) are stored."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["sqlite", "postgres"] = "sqlite"
    """``sqlite``: ``.lumen/checkpoints.sqlite``; ``postgres``: the server at ``postgres_url``."""
    postgres_url: str = ""
    """A libpq URL or conninfo string, e.g. ``postgresql://lumen:secret@127.0.0.1:5432/lumen``."""


class ShellSkillConfig(BaseModel):
    """The ``shell`` skill: off by default; only allowlisted programs when on."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    allowlist: list[str] = Field(default_factory=list)


class SkillsConfig(BaseModel):
    """Per-skill settings."""

    model_config = ConfigDict(extra="forbid")

    shell: ShellSkillConfig = Field(default_factory=ShellSkillConfig)


class GuardConfig(BaseModel):
    """External-content injection defense (AsteronIris §23): thresholds and rollout step."""

    model_config = ConfigDict(extra="forbid")

    sanitize_at: float = Field(default=0.3, ge=0.0, le=1.0)
    block_at: float = Field(default=0.7, ge=0.0, le=1.0)
    rollout: Literal["off", "audit", "enforce"] = "enforce"

    @model_validator(mode="after")
    def _ordered(self) -> GuardConfig:
        if self.sanitize_at > self.block_at:
            raise ValueError("sanitize_at must not exceed block_at")
        return self


class PolicyConfig(BaseModel):
    """SecurityPolicy (AsteronIris §6-§12): applied on every execution path."""

    model_config = ConfigDict(extra="forbid")

    allowed_commands: list[str] = Field(default_factory=list)
    max_actions_per_hour: int = Field(default=120, ge=0)
    max_cost_per_day: float = Field(default=1.0, ge=0.0)
    autonomous_shell: bool = False
    autonomous_skill_authoring: bool = False


class AutonomyConfig(BaseModel):
    """``lumen run``: how long a forced cooldown lasts (MSCP §8.1 activate_cooldown(30))."""

    model_config = ConfigDict(extra="forbid")

    cooldown_seconds: float = Field(default=30.0, ge=0.0)


class Config(BaseModel):
    """The whole instance configuration."""

    model_config = ConfigDict(extra="forbid")

    llm: LLMConfig = Field(default_factory=LLMConfig)
    temperature_bands: dict[str, Band] = Field(default_factory=_default_bands)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    skills: SkillsConfig = Field(default_factory=SkillsConfig)
    guard: GuardConfig = Field(default_factory=GuardConfig)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    autonomy: AutonomyConfig = Field(default_factory=AutonomyConfig)
    checkpoints: CheckpointsConfig = Field(default_factory=CheckpointsConfig)


ENV_OVERRIDES: dict[str, str] = {
    "LUMEN_LLM_PROVIDER": "provider",
    "LUMEN_LLM_MODEL": "model",
    "LUMEN_LLM_BASE_URL": "base_url",
    "LUMEN_LLM_API_KEY_ENV": "api_key_env",
    "LUMEN_LLM_MODEL_PATH": "model_path",
    "LUMEN_LLM_EMBEDDED_MODEL": "embedded_model",
    "LUMEN_LLM_THREADS": "threads",
}

SECTION_ENV_OVERRIDES: dict[str, tuple[str, str]] = {
    "LUMEN_CHECKPOINTS": ("checkpoints", "backend"),
    "LUMEN_POSTGRES_URL": ("checkpoints", "postgres_url"),
    "LUMEN_CHROMA_URL": ("memory", "chroma_url"),
}
"""Environment variables for settings outside ``[llm]``: variable -> (section, key)."""

DEFAULT_CONFIG_TOML = """\
# Lumen instance configuration. Environment variables LUMEN_LLM_* override [llm].

[llm]
# "embedded" runs SmolLM2-135M in-process (offline, no key). "openai" uses any
# OpenAI-compatible endpoint: set model, base_url (empty = api.openai.com) and
# export the key in the variable named by api_key_env.
provider = "embedded"
model = "gpt-4o-mini"
base_url = ""
api_key_env = "OPENAI_API_KEY"
# The embedded model: "smollm2-135m" (default, 98 MB), or a larger one installed with an extra:
# "qwen2.5-coder-0.5b" (uv sync --extra qwen05) or "qwen2.5-coder-1.5b" (--extra qwen15).
embedded_model = "smollm2-135m"
model_path = ""      # a GGUF file of your own (overrides embedded_model)
threads = 0          # 0 = cores - 1
context_tokens = 2048
max_tokens = 256
temperature = 0.7    # clamped into the band of the calling mode
timeout_s = 120

# Every temperature the kernel sets is clamped into the band of its mode.
[temperature_bands]
talk = { min = 0.4, max = 0.9 }
work = { min = 0.2, max = 0.6 }
deep = { min = 0.3, max = 0.7 }
autonomous = { min = 0.0, max = 0.3 }

[memory]
recent = 5       # N most recent memories in each retrieval
semantic_k = 5   # top-K semantic matches in each retrieval
chroma_url = ""  # a Chroma server, e.g. "http://127.0.0.1:8000"; empty = the embedded index

# The shell skill is off by default; when on, only these programs may run (argv, never a shell).
[skills.shell]
enabled = false
allowlist = []

# External content (webhooks, skill output, fetched pages, files, forwarded text) is scanned:
# score >= sanitize_at -> sanitized and flagged; score >= block_at -> blocked.
# rollout: "off" (no scanning), "audit" (decide and log, never block), "enforce".
[guard]
sanitize_at = 0.3
block_at = 0.7
rollout = "enforce"

# Applied on every execution path (chat tools, run cycles, scheduled jobs, skills).
[policy]
allowed_commands = []            # programs the shell skill may run (in addition to [skills.shell])
max_actions_per_hour = 120
max_cost_per_day = 1.0
autonomous_shell = false         # autonomy never runs shell unless this is true
autonomous_skill_authoring = false

# lumen run: after 3 meta-escalations in a row the run cools down this long (MSCP: 30 s).
[autonomy]
cooldown_seconds = 30

# Where LangGraph checkpoints live. "sqlite" = .lumen/checkpoints.sqlite; "postgres" = the server at
# postgres_url, e.g. "postgresql://lumen:secret@127.0.0.1:5432/lumen".
# Environment: LUMEN_CHECKPOINTS, LUMEN_POSTGRES_URL.
[checkpoints]
backend = "sqlite"
postgres_url = ""
"""


def load_config(path: Path, env: dict[str, str] | None = None) -> Config:
    """Load the config file (missing file = defaults) and apply environment overrides."""
    environ = os.environ if env is None else env
    raw: dict[str, object] = {}
    if path.exists():
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, OSError) as exc:
            raise DataFileError(f"{path}: invalid TOML: {exc}") from exc
    llm = dict(raw.get("llm", {}) or {})  # type: ignore[call-overload]
    for var, key in ENV_OVERRIDES.items():
        if environ.get(var):
            llm[key] = environ[var]
    raw["llm"] = llm
    _apply_section_overrides(raw, environ)
    try:
        return Config.model_validate(raw)
    except ValidationError as exc:
        source = path if path.exists() else Path("environment")
        raise DataFileError.from_validation(source, exc) from exc


def _apply_section_overrides(raw: dict[str, object], environ: Mapping[str, str]) -> None:
    """Overlay ``SECTION_ENV_OVERRIDES`` onto the raw config tables (set variables only)."""
    for var, (section, key) in SECTION_ENV_OVERRIDES.items():
        if environ.get(var):
            table = dict(raw.get(section, {}) or {})  # type: ignore[call-overload]
            table[key] = environ[var]
            raw[section] = table


def set_llm_value(path: Path, key: str, value: str | int) -> None:
    """Set one ``[llm]`` value in a config file, keeping its comments and layout (atomic)."""
    import tomlkit

    from state.files import atomic_write_text

    document = tomlkit.parse(path.read_text(encoding="utf-8"))
    llm = document.get("llm")
    if llm is None:
        llm = tomlkit.table()
        document["llm"] = llm
    llm[key] = value
    atomic_write_text(path, tomlkit.dumps(document))
