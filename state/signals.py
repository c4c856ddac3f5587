"""The §13.2 signal envelope: what every outside signal must carry before it enters memory.

Required: ``text``, ``source_kind``, ``source_ref``, ``ingest_ts`` (RFC 3339 with offset), ``lang``.
Recommended: ``author_id``, ``author_handle``, ``topic_tags``, ``risk_flags``, ``quality``.
A malformed envelope raises ``EnvelopeError`` whose message names every bad field on one line.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

SourceKind = Literal["discord", "x", "news", "trend", "webhook", "manual", "chat"]
RiskFlag = Literal["rumor", "unverified", "sensitive", "policy_risky"]
Quality = Literal["primary", "secondary", "unknown"]
MAX_SIGNAL_CHARS = 20_000
MAX_FUTURE_SKEW = timedelta(days=1)
"""An ``ingest_ts`` later than now plus this is refused (a 9999-12-31 stamp never expires)."""


class EnvelopeError(ValueError):
    """A signal envelope that does not follow §13.2."""


class SignalEnvelope(BaseModel):
    """One outside signal, as §13.2 requires it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(min_length=1, max_length=MAX_SIGNAL_CHARS)
    source_kind: SourceKind
    source_ref: str = Field(min_length=1, max_length=2048)
    ingest_ts: datetime
    lang: str = Field(min_length=2, max_length=16)
    author_id: str | None = Field(default=None, max_length=256)
    author_handle: str | None = Field(default=None, max_length=256)
    topic_tags: tuple[str, ...] = ()
    risk_flags: tuple[RiskFlag, ...] = ()
    quality: Quality = "unknown"

    @field_validator("text", "source_ref")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("ingest_ts")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("must be RFC 3339 with a UTC offset")
        return value

    @field_validator("lang")
    @classmethod
    def _language_tag(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*|und", value):
            raise ValueError(
                "must be a language tag such as 'en', 'ja' or 'pt-BR' ('und' if unknown)"
            )
        return value.lower()

    @field_validator("topic_tags")
    @classmethod
    def _normalise_tags(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        tags = []
        for tag in value:
            slug = "_".join(re.findall(r"[a-z0-9]+", tag.lower()))[:48]
            if slug and slug not in tags:
                tags.append(slug)
        return tuple(tags[:16])

    @classmethod
    def parse(cls, payload: Any, *, now: datetime | None = None) -> SignalEnvelope:
        """Validate a decoded JSON object; raise ``EnvelopeError`` with a one-line reason.

        With ``now`` (the caller's clock), an ``ingest_ts`` more than ``MAX_FUTURE_SKEW`` ahead
        of it is refused: TTLs and recency are computed from it.
        """
        if not isinstance(payload, dict):
            raise EnvelopeError("signal envelope must be a JSON object")
        try:
            envelope = cls.model_validate(payload)
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                where = ".".join(str(p) for p in error["loc"]) or "envelope"
                message = "missing" if error["type"] == "missing" else error["msg"]
                if error["type"] == "extra_forbidden":
                    message = "unknown field"
                problems.append(f"{where}: {message}")
            raise EnvelopeError("invalid signal envelope: " + "; ".join(problems)) from None
        if now is not None and envelope.ingest_ts > now + MAX_FUTURE_SKEW:
            raise EnvelopeError(
                "invalid signal envelope: ingest_ts: more than a day in the future "
                f"({envelope.ingest_ts.isoformat()})"
            )
        return envelope
