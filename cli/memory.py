"""``lumen memory``, ``lumen beliefs`` and ``lumen maintain``.

``lumen memory [flags]`` lists recent ledger entries; its sub-commands ``search`` and ``forget``
reach the ranked retrieval and the audited soft delete of ``state.memory.MemoryStore``.
``beliefs`` shows the belief tiers (``state.tiers``) and ``maintain`` runs the memory
maintenance pass. Errors are ``LumenError``, which the main CLI turns into one line on stderr.
Output helpers come from ``cli.common``; heavy modules are imported inside the commands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.common import JsonFlag, current_instance, emit_json, table, warn
from state.errors import LumenError

if TYPE_CHECKING:
    from state.memory import Hit, MemoryStore
    from state.records import MemoryEntry
    from state.tiers import BeliefNode, Claim, Event, MemoryTiers, SlotValue

memory_app = typer.Typer(
    name="memory",
    help="View recent memories (default: the last 20), search them or forget one.",
    add_completion=False,
    invoke_without_command=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    """Mount ``lumen memory`` and add ``beliefs`` and ``maintain`` to the app."""
    app.add_typer(memory_app, name="memory")
    app.command("beliefs")(beliefs_command)
    app.command("maintain")(maintain_command)


MIN_ID_PREFIX = 8
SHORT_ID = 12
TEXT_WIDTH = 100
MAX_K = 100
FORGET_EVENTS = ("SoftDeleted", "TombstoneWritten")


class AuthorChoice(StrEnum):
    """Memory authors."""

    self_ = "self"
    kernel = "kernel"
    goal = "goal"
    external = "external"


# --------------------------------------------------------------------------- helpers


def _store() -> MemoryStore:
    """Open the memory store of the current instance (no model, no config needed)."""
    from state.memory import MemoryStore

    return MemoryStore.for_instance(current_instance())


def clip(text: str, width: int = TEXT_WIDTH) -> str:
    """Return ``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _iso(moment: datetime) -> str:
    return moment.isoformat()


# --------------------------------------------------------------------------- memory (list)


@memory_app.callback(invoke_without_command=True)
def memory_main(
    ctx: typer.Context,
    author: Annotated[
        AuthorChoice | None, typer.Option("--author", help="Filter by author.")
    ] = None,
    on_date: Annotated[
        str | None, typer.Option("--date", help="Only this day (YYYY-MM-DD).", metavar="YYYY-MM-DD")
    ] = None,
    show_all: Annotated[bool, typer.Option("--all", help="Show every entry.")] = False,
    limit: Annotated[int, typer.Option("-n", min=1, help="How many recent entries.")] = 20,
    as_json: JsonFlag = False,
) -> None:
    """View recent memories (default: the last 20); ``search`` and ``forget`` act on them."""
    if ctx.invoked_subcommand is not None:
        return
    from state.journal import MemoryJournal

    report = MemoryJournal(current_instance().memory_dir).read(day=_parse_day(on_date))
    for line in report.skipped:
        warn(line)
    entries = [e for e in report.entries if author is None or e.author == author.value]
    if not show_all:
        entries = entries[-limit:]
    if as_json:
        emit_json([e.model_dump(mode="json") for e in entries])
        return
    table(
        "Memories",
        ["timestamp", "author", "weight", "situation", "description"],
        [
            [
                e.timestamp.strftime("%Y-%m-%d %H:%M:%S"),
                e.author,
                f"{e.weight:.2f}",
                e.situation,
                e.description[:120],
            ]
            for e in entries
        ],
    )


def _parse_day(on_date: str | None) -> date | None:
    """Read ``--date`` (YYYY-MM-DD) or refuse it with one line."""
    if on_date is None:
        return None
    try:
        return date.fromisoformat(on_date)
    except ValueError:
        raise LumenError(f"--date must be YYYY-MM-DD, not {on_date!r}") from None


# --------------------------------------------------------------------------- memory search


@memory_app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for.")],
    k: Annotated[int, typer.Option("-k", metavar="N", help=f"How many hits (1..{MAX_K}).")] = 10,
    as_json: JsonFlag = False,
) -> None:
    """Search memories by the full ranking (meaning, words, recency, importance, corrections)."""
    if not 1 <= k <= MAX_K:
        raise LumenError(f"-k must be between 1 and {MAX_K}, not {k}")
    if not query.strip():
        raise LumenError("search needs a non-empty QUERY")
    hits = _store().search(query, k=k)
    if as_json:
        emit_json([hit_json(h) for h in hits])
        return
    if not hits:
        typer.echo(f"no memories match {query!r}")
        return
    for hit in hits:
        typer.echo(hit_line(hit))


def hit_json(hit: Hit) -> dict[str, Any]:
    """Return the ``--json`` view of one search hit."""
    return {
        "id": hit.id,
        "text": hit.text,
        "score": hit.score,
        "author": hit.author,
        "timestamp": hit.timestamp,
        "source": hit.source,
        "tainted": hit.tainted,
        "superseded": hit.superseded,
        "contradictions": hit.contradictions,
    }


def hit_markers(hit: Hit) -> list[str]:
    """Return the bracketed markers that qualify a hit."""
    markers = []
    if hit.superseded:
        markers.append("[superseded]")
    if hit.contradictions:
        markers.append(f"[contradicted x{hit.contradictions}]")
    if hit.tainted:
        markers.append("[tainted]")
    return markers


def hit_line(hit: Hit) -> str:
    """Return one human-readable line for a search hit."""
    when = hit.timestamp[:16].replace("T", " ")
    parts = [f"{hit.score:.3f}", hit.id[:SHORT_ID], hit.author, when, *hit_markers(hit)]
    return "  ".join([*parts, clip(hit.text)])


# --------------------------------------------------------------------------- memory forget


@memory_app.command("forget")
def forget_command(
    memory_id: Annotated[
        str,
        typer.Argument(
            metavar="ID", help=f"Memory id (or a unique prefix of >= {MIN_ID_PREFIX} characters)."
        ),
    ],
    reason: Annotated[
        str, typer.Option("--reason", metavar="TEXT", help="Why it is forgotten (audited).")
    ],
    as_json: JsonFlag = False,
) -> None:
    """Forget a memory: a tombstone hides it from retrieval; the ledger line stays, audited."""
    from state.tiers import TierError

    store = _store()
    full_id = resolve_memory_id(store, memory_id)
    try:
        entry = store.forget(full_id, reason)
    except TierError as exc:
        raise LumenError(str(exc)) from None
    demoted = demoted_by_forgetting(store.tiers, full_id)
    if as_json:
        emit_json(forget_json(store.tiers, entry, reason.strip(), demoted))
        return
    for line in forget_lines(entry, reason.strip(), demoted):
        typer.echo(line)


def resolve_memory_id(store: MemoryStore, given: str) -> str:
    """Return the ledger id ``given`` names exactly or as a unique prefix (≥ 8 characters)."""
    wanted = given.strip()
    if not wanted:
        raise LumenError("forget needs a memory ID")
    ids = [entry.id for entry in store.journal]
    if wanted in ids:
        return wanted
    if len(wanted) < MIN_ID_PREFIX:
        raise LumenError(
            f"no memory with id {wanted!r} (an id prefix needs at least {MIN_ID_PREFIX} characters)"
        )
    matches = sorted({mid for mid in ids if mid.startswith(wanted)})
    if not matches:
        raise LumenError(f"no memory with id or id prefix {wanted!r}")
    if len(matches) > 1:
        shown = ", ".join(m[:SHORT_ID] for m in matches[:3])
        raise LumenError(f"id prefix {wanted!r} is ambiguous: {len(matches)} memories ({shown}…)")
    return matches[0]


def demoted_by_forgetting(tiers: MemoryTiers, memory_id: str) -> list[Event]:
    """Return the slot demotions caused by forgetting ``memory_id`` (its only source)."""
    return [
        event
        for event in tiers.events(kinds=["BeliefDemoted"], limit=50)
        if memory_id in str(event.data.get("reason", ""))
    ]


def forget_json(
    tiers: MemoryTiers, entry: MemoryEntry, reason: str, demoted: list[Event]
) -> dict[str, Any]:
    """Return the ``--json`` view of a forgotten memory."""
    return {
        "id": entry.id,
        "author": entry.author,
        "timestamp": _iso(entry.timestamp),
        "text": entry.description,
        "reason": reason,
        "forgotten": True,
        "ledger_kept": True,
        "events": [e.kind for e in reversed(tiers.events(ref=entry.id, kinds=FORGET_EVENTS))],
        "demoted_slots": [
            {"id": e.ref, "entity": e.entity_id, "slot": e.slot_key, "value": e.data.get("value")}
            for e in demoted
        ],
    }


def forget_lines(entry: MemoryEntry, reason: str, demoted: list[Event]) -> list[str]:
    """Return the human-readable report of a forgotten memory."""
    lines = [
        f"Forgot {entry.id[:SHORT_ID]} ({entry.author}, {_stamp(entry.timestamp)}): "
        f"{clip(entry.description)}",
        f"  reason: {reason}",
        "  The ledger keeps the line (append-only); a tombstone hides it from search "
        "(audited: SoftDeleted + TombstoneWritten).",
    ]
    for event in demoted:
        lines.append(
            f"  belief no longer supported, demoted: {event.entity_id} {event.slot_key} = "
            f"{event.data.get('value', '')}"
        )
    return lines


# --------------------------------------------------------------------------- beliefs


@dataclass
class BeliefView:
    """What ``lumen beliefs`` shows: slots, hypotheses, graph and (optionally) history."""

    slots: list[SlotValue]
    claims: list[Claim]
    nodes: list[BeliefNode]
    edges: list[tuple[str, str, str, float]]
    history: list[SlotValue] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)

    def empty(self) -> bool:
        """Say whether there is nothing at all to show."""
        return not (self.slots or self.claims or self.nodes or self.history)


def beliefs_command(
    entity: Annotated[
        str | None,
        typer.Option("--entity", metavar="E", help="Only entities whose id contains E."),
    ] = None,
    history: Annotated[
        bool,
        typer.Option("--history", help="Every slot version and the governance events about them."),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Show current beliefs (slots), inferred hypotheses and the belief graph."""
    view = collect_beliefs(_store().tiers, entity=entity, history=history)
    if as_json:
        emit_json(beliefs_json(view, history=history))
        return
    if view.empty():
        typer.echo(f"no beliefs about {entity!r} yet" if entity else "no beliefs yet")
        return
    for line in beliefs_lines(view, history=history):
        typer.echo(line)


def collect_beliefs(tiers: MemoryTiers, *, entity: str | None, history: bool) -> BeliefView:
    """Gather the belief tiers, filtered to entities containing ``entity``."""
    slots = tiers.current_slots(entity)
    nodes = tiers.beliefs(include_inactive=history)
    versions = tiers.slot_history(entity) if history else []
    if entity:
        known = {s.id for s in (versions or slots)}
        nodes = [n for n in nodes if n.slot_value_id in known or entity in n.text]
    node_ids = {n.id for n in nodes}
    edges = [e for e in tiers.edges() if e[0] in node_ids or e[1] in node_ids]
    return BeliefView(
        slots=slots,
        claims=tiers.claims(entity),
        nodes=nodes,
        edges=edges,
        history=versions,
        events=slot_events(tiers, versions) if history else [],
    )


def slot_events(tiers: MemoryTiers, versions: list[SlotValue]) -> list[Event]:
    """Return the governance events about ``versions``, oldest first.

    That is every event on a slot version or on the belief node it became, plus the soft
    deletes of memories that supported one of them.
    """
    ids = {v.id for v in versions}
    found: dict[int, Event] = {}
    for slot_id in ids:
        for ref in (slot_id, f"slot:{slot_id}"):
            found.update((e.seq, e) for e in tiers.events(ref=ref, limit=1000))
    for event in tiers.events(kinds=FORGET_EVENTS, limit=1000):
        if ids.intersection(tiers.slot_ids_for(event.ref)):
            found[event.seq] = event
    return [found[seq] for seq in sorted(found)]


def slot_json(slot: SlotValue) -> dict[str, Any]:
    """Return the JSON view of one slot version."""
    return {
        "id": slot.id,
        "entity": slot.entity_id,
        "slot": slot.slot_key,
        "value": slot.value,
        "confidence": slot.confidence,
        "importance": slot.importance,
        "status": slot.status,
        "contradictions": slot.contradictions,
        "origin": slot.origin,
        "tainted": slot.tainted,
        "created": _iso(slot.created),
        "updated": _iso(slot.updated),
        "observed": _iso(slot.observed),
    }


def claim_json(claim: Claim) -> dict[str, Any]:
    """Return the JSON view of one inferred claim."""
    return {
        "id": claim.id,
        "entity": claim.entity_id,
        "slot": claim.slot_key,
        "value": claim.value,
        "confidence": claim.confidence,
        "provenance": list(claim.provenance),
        "model": claim.model,
        "created": _iso(claim.created),
    }


def node_json(node: BeliefNode) -> dict[str, Any]:
    """Return the JSON view of one belief-graph node."""
    return {
        "id": node.id,
        "text": node.text,
        "weight": node.weight,
        "identity_linked": node.identity_linked,
        "status": node.status,
        "slot_value_id": node.slot_value_id,
    }


def event_json(event: Event) -> dict[str, Any]:
    """Return the JSON view of one governance event."""
    return {
        "seq": event.seq,
        "ts": _iso(event.ts),
        "kind": event.kind,
        "entity": event.entity_id,
        "slot": event.slot_key,
        "ref": event.ref,
        "data": event.data,
    }


def beliefs_json(view: BeliefView, *, history: bool) -> dict[str, Any]:
    """Return the ``--json`` view of ``lumen beliefs``."""
    data: dict[str, Any] = {
        "slots": [slot_json(s) for s in view.slots],
        "claims": [claim_json(c) for c in view.claims],
        "graph": {
            "nodes": [node_json(n) for n in view.nodes],
            "edges": [
                {"src": src, "dst": dst, "kind": kind, "strength": strength}
                for src, dst, kind, strength in view.edges
            ],
        },
    }
    if history:
        data["history"] = [slot_json(s) for s in view.history]
        data["events"] = [event_json(e) for e in view.events]
    return data


def slot_line(slot: SlotValue) -> str:
    """Return one line for a current belief slot."""
    line = (
        f"  {slot.entity_id}  {slot.slot_key} = {clip(slot.value, 60)}  "
        f"confidence {slot.confidence:.2f}  {slot.status}"
    )
    return line + ("  (tainted)" if slot.tainted else "")


def claim_line(claim: Claim) -> str:
    """Return one line for an inferred claim (a hypothesis, never a belief)."""
    sources = len(claim.provenance)
    noun = "memory" if sources == 1 else "memories"
    return (
        f"  {claim.entity_id}  {claim.slot_key} = {clip(claim.value, 60)}  "
        f"confidence {claim.confidence:.2f}  from {sources} {noun}"
    )


def node_line(node: BeliefNode) -> str:
    """Return one line for a belief-graph node."""
    linked = "  identity-linked" if node.identity_linked else ""
    return f"  {node.id}  weight {node.weight:.2f}  {node.status}{linked}  {clip(node.text, 80)}"


def version_line(slot: SlotValue) -> str:
    """Return one line for a slot version in the history."""
    marks = f"  contradicted x{slot.contradictions}" if slot.contradictions else ""
    tainted = "  (tainted)" if slot.tainted else ""
    return (
        f"  {_stamp(slot.created)}  {slot.entity_id}  {slot.slot_key} = {clip(slot.value, 60)}  "
        f"confidence {slot.confidence:.2f}  {slot.status}{marks}{tainted}  "
        f"(updated {_stamp(slot.updated)})"
    )


def event_detail(event: Event) -> str:
    """Summarise an event's data: values, status and confidence changes, reason."""
    data = event.data
    parts = []
    if "old_value" in data and "new_value" in data:
        parts.append(f"{data['old_value']!r} -> {data['new_value']!r}")
    elif "value" in data:
        parts.append(f"value {data['value']!r}")
    if "before" in data and "after" in data:
        parts.append(f"{data['before']} -> {data['after']}")
    if "confidence_before" in data and "confidence_after" in data:
        parts.append(
            f"confidence {float(data['confidence_before']):.2f} -> "
            f"{float(data['confidence_after']):.2f}"
        )
    if data.get("reason"):
        parts.append(f"reason: {data['reason']}")
    return clip("; ".join(parts), 120)


def event_line(event: Event) -> str:
    """Return one line for a governance event."""
    subject = f"{event.entity_id} {event.slot_key}".strip() or f"ref {event.ref[:SHORT_ID]}"
    return f"  {_stamp(event.ts)}  {event.kind}  {subject}  {event_detail(event)}".rstrip()


def _section(title: str, rows: list[str]) -> list[str]:
    return [f"{title} ({len(rows)})", *rows] if rows else []


def beliefs_lines(view: BeliefView, *, history: bool) -> list[str]:
    """Return the human-readable ``lumen beliefs`` report."""
    lines = _section("Beliefs: current slots", [slot_line(s) for s in view.slots]) or [
        "Beliefs: no current slot"
    ]
    lines += _section(
        "Hypotheses: inferred claims, not beliefs", [claim_line(c) for c in view.claims]
    )
    lines += _section("Belief graph: nodes", [node_line(n) for n in view.nodes])
    lines += _section(
        "Belief graph: edges",
        [f"  {src} -[{kind} {strength:.2f}]-> {dst}" for src, dst, kind, strength in view.edges],
    )
    if history:
        lines += _section("History: every slot version", [version_line(s) for s in view.history])
        lines += _section("Governance events", [event_line(e) for e in view.events])
    return lines


# --------------------------------------------------------------------------- maintain


def maintain_command(as_json: JsonFlag = False) -> None:
    """Run the memory maintenance pass now and print what it changed."""
    from graph.deps import Deps
    from graph.maintenance import maintain

    report = maintain(Deps.for_instance(current_instance()))
    if as_json:
        emit_json(report.to_dict())
        return
    for line in report.lines():
        typer.echo(line)
