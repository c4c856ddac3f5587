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


SHELL_PLACEHOLDERS = ("path", "word", "int", "any", "safe")
"""Placeholders of a shell argument form (``skills/shell/main.py`` says what each matches)."""


def _check_shell_form(program: str, form: str) -> None:
    """Raise ValueError unless ``form`` is a valid argument form (see ``skills/shell``)."""
    import re
    import shlex

    try:
        words = shlex.split(form)
    except ValueError as exc:
        raise ValueError(f"args of {program!r}: {form!r} is not a word list ({exc})") from None
    for word in words:
        for name, dots in re.findall(r"\{([^{}]*?)(\.\.\.)?\}", word):
            if name not in SHELL_PLACEHOLDERS:
                known = ", ".join(f"{{{p}}}" for p in SHELL_PLACEHOLDERS)
                raise ValueError(f"args of {program!r}: unknown placeholder {{{name}}} ({known})")
            if dots and not re.fullmatch(r"\{[a-z]+\.\.\.\}", word):
                raise ValueError(f"args of {program!r}: {word!r}: '...' needs a word of its own")
        if "{safe" in word and (word != "{safe...}" or words != ["{safe...}"]):
            raise ValueError(f"args of {program!r}: {{safe...}} must be a form by itself")


class ShellSkillConfig(BaseModel):
    """The ``shell`` skill: off by default; when on, allowlisted programs and argument forms.

    ``allowlist`` names the programs (the one list ``SecurityPolicy`` checks). A program with
    no entry in ``args`` gets the skill's built-in safe profile (options and workspace paths;
    inline code, ``env``/``xargs``-style wrappers, pagers, ``find -exec``, ``git -c`` ...
    refused); one with forms in ``args`` may run exactly those forms (``"{safe...}"`` adds the
    safe profile back). An ``allowlist`` entry may also be an inline table
    ``{ program = "git", args = ["status", "log -n {int}"] }``: it is read as the program's name
    in ``allowlist`` plus its forms in ``args``.
    """

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    allowlist: list[str] = Field(default_factory=list)
    args: dict[str, list[str]] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _inline_entries(cls, raw: object) -> object:
        if not isinstance(raw, dict) or not isinstance(raw.get("allowlist"), list):
            return raw
        names: list[object] = []
        forms = dict(raw.get("args") or {})
        for entry in raw["allowlist"]:
            if isinstance(entry, dict):
                if set(entry) - {"program", "args"} or not isinstance(entry.get("program"), str):
                    raise ValueError(
                        f"allowlist entry {entry!r}: use {{ program = ..., args = [...] }}"
                    )
                program = entry["program"]
                names.append(program)
                extra = entry.get("args", [])
                if not isinstance(extra, list):
                    raise ValueError(f"allowlist entry for {program!r}: args must be a list")
                forms[program] = [*forms.get(program, []), *extra]
            else:
                names.append(entry)
        return {**raw, "allowlist": names, "args": forms}

    @model_validator(mode="after")
    def _valid(self) -> ShellSkillConfig:
        # A name that is not bare (``/bin/ls``) still loads, as before; it never matches argv[0].
        for program, forms in self.args.items():
            if program not in self.allowlist:
                raise ValueError(f"args given for {program!r}, which is not in the allowlist")
            for form in forms:
                _check_shell_form(program, form)
        return self


class FetchSkillConfig(BaseModel):
    """The ``fetch`` skill: hosts that may be reached although they are local or private.

    By default fetch refuses hosts that resolve to loopback, private, link-local, multicast,
    reserved or cloud metadata addresses (``skills/_netpolicy.py``). A host listed here (a name,
    or an IP address matching every spelling of it; no port, no wildcard) is fetched anyway;
    metadata endpoints never are.
    """

    model_config = ConfigDict(extra="forbid")

    allow_hosts: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _hosts(self) -> FetchSkillConfig:
        for host in self.allow_hosts:
            bare = host.strip()
            if not bare or any(c.isspace() or c in "/@?#" for c in bare):
                raise ValueError(
                    f"allow_hosts entry {host!r}: a host name or IP, no scheme or path"
                )
        return self


class SkillsConfig(BaseModel):
    """Per-skill settings."""

    model_config = ConfigDict(extra="forbid")

    shell: ShellSkillConfig = Field(default_factory=ShellSkillConfig)
    fetch: FetchSkillConfig = Field(default_factory=FetchSkillConfig)


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


SOURCE_NAME_RE = r"^[a-z0-9][a-z0-9_-]{0,47}$"
DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """Parse ``30s``, ``15m``, ``2h``, ``1d`` (or a sum such as ``1h30m``) into seconds."""
    import re

    parts = re.findall(r"(\d+)\s*([smhd])", text.strip().lower())
    if not parts or re.sub(r"[\d\s smhd]", "", text.strip().lower()):
        raise ValueError(f"{text!r} is not a duration such as 30s, 15m, 2h or 1d")
    seconds = float(sum(int(n) * DURATION_UNITS[u] for n, u in parts))
    if seconds <= 0:
        raise ValueError(f"{text!r} must be longer than zero")
    return seconds


class SourceConfig(BaseModel):
    """One outside signal source, ``[sources.NAME]`` (issue 16; AsteronIris §14, §19, §20).

    ``kind = "webhook"`` pushes to ``lumen serve`` (``POST /signals/NAME``) with the bearer token
    read from the environment variable ``token_env``; ``kind = "rss"`` is a feed (RSS or Atom)
    polled every ``every``. ``rate_per_minute`` is the webhook's token bucket (refill rate; the
    bucket holds ``burst`` tokens, default one minute's worth) or, for a feed, the most fetches
    a minute (default 4 for feeds, 60 for webhooks). ``privacy = "secret"`` keeps the source's
    signals out of chat context.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["webhook", "rss"]
    url: str = ""
    every: str = "15m"
    token_env: str = ""
    rate_per_minute: float | None = Field(default=None, gt=0.0, le=60_000.0)
    burst: int = Field(default=0, ge=0, le=100_000)
    max_body_bytes: int = Field(default=65_536, ge=256, le=4_194_304)
    allow_hosts: list[str] = Field(default_factory=list)
    privacy: Literal["public", "private", "secret"] = "public"
    publisher: str = ""
    quality: Literal["primary", "secondary", "unknown"] = "unknown"
    lang: str = "und"
    topic_tags: list[str] = Field(default_factory=list)
    source_kinds: list[Literal["discord", "x", "news", "trend", "webhook", "manual"]] = Field(
        default_factory=list
    )
    timeout_s: float = Field(default=10.0, gt=0.0, le=120.0)
    max_bytes: int = Field(default=2_097_152, ge=1024, le=33_554_432)
    backoff_base_s: float = Field(default=60.0, gt=0.0)
    backoff_cap_s: float = Field(default=6 * 3600.0, gt=0.0)

    @model_validator(mode="after")
    def _complete(self) -> SourceConfig:
        if self.kind == "rss":
            if not self.url.lower().startswith(("http://", "https://")):
                raise ValueError("a feed needs an http(s) url")
            parse_duration(self.every)
        if self.kind == "webhook" and not self.token_env:
            raise ValueError("a webhook needs token_env (the variable holding its bearer token)")
        if self.backoff_base_s > self.backoff_cap_s:
            raise ValueError("backoff_base_s must not exceed backoff_cap_s")
        return self

    def per_minute(self) -> float:
        """Return the rate limit, resolving the per-kind default."""
        if self.rate_per_minute is not None:
            return self.rate_per_minute
        return 60.0 if self.kind == "webhook" else 4.0

    def every_seconds(self) -> float:
        """Return the poll interval in seconds."""
        return parse_duration(self.every)


class ModelPrice(BaseModel):
    """What a model's tokens cost, per million, in the unit of ``policy.max_cost_per_day``."""

    model_config = ConfigDict(extra="forbid")

    input_per_mtok: float = Field(default=0.0, ge=0.0)
    output_per_mtok: float = Field(default=0.0, ge=0.0)


def _default_prices() -> dict[str, ModelPrice]:
    # USD list prices per million tokens (input, output) of OpenAI's small models.
    return {
        "gpt-4o-mini": ModelPrice(input_per_mtok=0.15, output_per_mtok=0.60),
        "gpt-4o": ModelPrice(input_per_mtok=2.50, output_per_mtok=10.00),
        "gpt-4.1-mini": ModelPrice(input_per_mtok=0.40, output_per_mtok=1.60),
        "gpt-4.1-nano": ModelPrice(input_per_mtok=0.10, output_per_mtok=0.40),
    }


class CostsConfig(BaseModel):
    """Model prices: token usage becomes cost against ``policy.max_cost_per_day``.

    The embedded model always costs 0. A hosted model is priced by ``models[name]``; a name not
    in the table (a local OpenAI-compatible server, say) costs ``unknown``, 0 unless set.
    """

    model_config = ConfigDict(extra="forbid")

    models: dict[str, ModelPrice] = Field(default_factory=_default_prices)
    unknown: ModelPrice = Field(default_factory=ModelPrice)

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float:
        """Return what ``input_tokens`` in and ``output_tokens`` out of ``model`` cost."""
        price = self.models.get(model, self.unknown)
        return (
            max(0, input_tokens) * price.input_per_mtok
            + max(0, output_tokens) * price.output_per_mtok
        ) / 1_000_000


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
    sources: dict[str, SourceConfig] = Field(default_factory=dict)
    """Outside signal sources by name (``lumen sources``, ``lumen serve``)."""
    costs: CostsConfig = Field(default_factory=CostsConfig)
    """Per-model token prices (``graph.thinking`` records each call's cost)."""

    @model_validator(mode="after")
    def _source_names(self) -> Config:
        import re

        for name in self.sources:
            if not re.fullmatch(SOURCE_NAME_RE, name):
                raise ValueError(f"source name {name!r}: use a-z, 0-9, '_' and '-' (max 48)")
        return self


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
# A program without forms gets a safe profile: options and paths inside the workspace; inline
# code (python3 -c, sh -c), env/xargs-style wrappers, pagers, find -exec, git -c are refused.
# Exact forms per program, e.g. [skills.shell.args] git = ["status", "log -n {int}"].
[skills.shell]
enabled = false
allowlist = []

# fetch refuses local, private and cloud-metadata addresses unless the host is listed here.
[skills.fetch]
allow_hosts = []

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

# What a hosted model's tokens cost per million (counted against [policy] max_cost_per_day; a
# model call is refused once today's cost reaches it). The embedded model costs 0; a model not
# listed costs [costs.unknown] (0 unless set, e.g. a local OpenAI-compatible server).
[costs.models]
"gpt-4o-mini" = { input_per_mtok = 0.15, output_per_mtok = 0.60 }
"gpt-4o" = { input_per_mtok = 2.50, output_per_mtok = 10.00 }
"gpt-4.1-mini" = { input_per_mtok = 0.40, output_per_mtok = 1.60 }
"gpt-4.1-nano" = { input_per_mtok = 0.10, output_per_mtok = 0.40 }
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
