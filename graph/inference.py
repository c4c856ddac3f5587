"""Tier C inference after a chat turn: one batched model pass, validated claims stored.

AsteronIris §14.2 step 6, "optional inference to Tier C". The turn's new user memories are shown
to the model once, under short ids; its JSON proposals are judged by ``state.claims`` (cited
memory, ``user.*`` slot, grounded short value, confidence clamped to ≤ 0.70) and the survivors
become ``InferredClaim`` rows with provenance. Nothing the model says can make the pass raise:
an unusable answer yields no claims, and every pass that called the model leaves one ``kernel``
memory saying what was inferred and what was dropped. A model that cannot load is still an error
(the thinking gateway's rule), and ``memory.inference = "off"`` skips the pass entirely.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from graph.deps import Deps
from graph.thinking import think_json
from nodes.services import Judgment, Services
from state import claims as infer
from state.records import MemoryEntry
from state.tiers import Claim, TierError, normalise_value

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

INFER_PROMPT = "memory/infer"
INFER_MODE = "autonomous"
"""The low-temperature band: extraction wants the likeliest reading, not variety."""
INFER_SITUATION = "memory.infer"


def infer_claims(deps: Deps, entries: Sequence[MemoryEntry]) -> list[Claim]:
    """Infer Tier C claims about the chat user from a turn's new memories; return those stored."""
    if deps.config.memory.inference == "off":
        return []
    sources = infer.sources_for(entries)
    if not sources:
        return []
    handed_out: list[BaseChatModel] = []
    judged = _ask_model(_remembering_model(deps, handed_out), sources)
    verdict = infer.judge(judged.value, sources, known=_known_claims(deps))
    stored, refused = _store(deps, verdict.drafts, model=_model_name(handed_out))
    _record_pass(deps, sources, judged, stored, [*verdict.dropped, *refused])
    return stored


def _ask_model(deps: Services, sources: Sequence[infer.Source]) -> Judgment[infer.InferAnswer]:
    return think_json(
        deps,
        INFER_PROMPT,
        mode=INFER_MODE,
        values={"memories": infer.listing(sources), "max_claims": infer.MAX_CLAIMS},
        schema=infer.InferAnswer,
        fallback=infer.InferAnswer(claims=[]),
    )


def _remembering_model(deps: Deps, handed_out: list[BaseChatModel]) -> Deps:
    """Return ``deps`` whose model factory also notes the model it hands out (to name it)."""

    def model_for(mode: str) -> BaseChatModel:
        model = deps.model_for(mode)
        handed_out.append(model)
        return model

    return dataclasses.replace(deps, model_for=model_for)


def _model_name(handed_out: Sequence[BaseChatModel]) -> str:
    """Name the model that answered: its GGUF file, its hosted model name, or its class."""
    if not handed_out:
        return ""
    model = handed_out[-1]
    path = getattr(model, "model_path", None)
    if isinstance(path, str) and path:
        return f"embedded:{Path(path).name}"
    name = getattr(model, "model_name", None)
    return name if isinstance(name, str) and name else type(model).__name__


def _known_claims(deps: Services) -> set[tuple[str, str, str]]:
    """Return ``(slot, normalised value, memory id)`` for every stored chat-user claim."""
    return {
        (claim.slot_key, normalise_value(claim.value), memory_id)
        for claim in deps.store.tiers.claims(infer.CHAT_ENTITY)
        if claim.entity_id == infer.CHAT_ENTITY
        for memory_id in claim.provenance
    }


def _store(
    deps: Services, drafts: Sequence[infer.ClaimDraft], *, model: str
) -> tuple[list[Claim], list[str]]:
    """Add each draft to Tier C; a draft the tiers refuse is reported, not raised."""
    stored: list[Claim] = []
    refused: list[str] = []
    for draft in drafts:
        try:
            stored.append(
                deps.store.tiers.add_claim(
                    entity_id=draft.entity_id,
                    slot_key=draft.slot_key,
                    value=draft.value,
                    confidence=draft.confidence,
                    provenance=draft.provenance,
                    model=model,
                )
            )
        except TierError as exc:
            refused.append(f"{draft.slot_key}={draft.value!r}: refused by the tiers ({exc})")
    return stored, refused


def _record_pass(
    deps: Services,
    sources: Sequence[infer.Source],
    judged: Judgment[infer.InferAnswer],
    stored: Sequence[Claim],
    dropped: Sequence[str],
) -> None:
    """Leave one ``kernel`` memory describing the pass."""
    kept = [f"{c.slot_key}={c.value!r} ({c.confidence:.2f})" for c in stored]
    unusable = "" if judged.ok else judged.reason
    deps.store.add(
        infer.summary(sources, kept, dropped, unusable=unusable),
        metadata={
            "author": "kernel",
            "situation": INFER_SITUATION,
            "memories": [s.memory_id for s in sources],
            "claims": [c.id for c in stored],
            "dropped": list(dropped),
            "model_ok": judged.ok,
            "reason": judged.reason,
            "ms": round(judged.ms, 1),
        },
        defer_index=True,
    )
