"""Reflection that a chat turn triggers, run after the reply is delivered (issue 13, item 4).

Three triggers, read from the finished turn:

- ``explicit_request``: the user asks the agent to reflect on itself ("please reflect on how you
  have been answering me"; ``kernel.learning.reflection_requested``). Never from forwarded or
  tainted text.
- ``regret``: the turn left regret at or above ``REGRET_TRIGGER`` (the growth tick's smoothed
  severity of tagged errors; SKAi's failed-goal bar, 0.6).
- ``contradiction``: the user's message contradicted a belief the agent held about them.

Within budget: the reflection is the ``reflect`` graph (REVIEW → ASK → EVOLVE, one model call for
ASK), so it runs at most once every ``COOLDOWN_TURNS`` turns for regret and contradiction; an
explicit request is always honoured. Nothing runs while the self is in safe mode or stabilizing,
except an explicit request. The turn it last ran on is kept in ``metacog.last_fired`` (read
here, next time).
"""

from __future__ import annotations

from typing import Any

from kernel import learning
from state.cycle import ReflectState
from state.turn import TurnState

REGRET_TRIGGER = 0.6
COOLDOWN_TURNS = 5
STEP = "chat_reflection"


def chat_triggers(state: TurnState) -> list[str]:
    """Return the reflection triggers this finished turn fires (empty: no reflection)."""
    if state.me is None:
        return []
    triggers = []
    if (
        not state.tainted
        and not state.external_ref
        and learning.reflection_requested(state.user_text)
    ):
        triggers.append("explicit_request")
    if state.me.metacog.regret >= REGRET_TRIGGER:
        triggers.append("regret")
    if state.contradictions:
        triggers.append("contradiction")
    return triggers


def due(state: TurnState, triggers: list[str]) -> str:
    """Return why a reflection may not run now ("" when it may)."""
    assert state.me is not None
    if not triggers:
        return "no trigger"
    if "explicit_request" in triggers:
        return ""
    if state.me.autonomy.safe_mode_left > 0 or state.me.stability.stabilization_mode:
        return "the self is in safe mode or stabilizing"
    last = state.me.metacog.last_fired.get(STEP)
    if last is not None and state.turn_index - last < COOLDOWN_TURNS:
        return f"a reflection ran at turn {last} (cooldown {COOLDOWN_TURNS} turns)"
    return ""


def reflect_after_turn(deps: Any, state: TurnState) -> tuple[list[str], ReflectState | None, str]:
    """Run the reflection a finished turn calls for: (triggers, result or None, why not)."""
    from graph.autonomy import autonomy_graphs, run_reflection

    triggers = chat_triggers(state)
    blocked = due(state, triggers)
    if blocked:
        return triggers, None, blocked
    turn = state.turn_index

    def mark(present: Any) -> Any:
        metacog = present.metacog.fork()
        metacog.last_fired[STEP] = turn
        return present.model_copy(update={"metacog": metacog})

    deps.instance.update_self(mark)
    with autonomy_graphs(deps) as (_, reflect_graph):
        return triggers, run_reflection(reflect_graph, triggers), ""
