"""A conversation in Spanish through the real turn graph: what the user says about themselves is
believed, asked back, corrected, and the kernel's own lines about it are Spanish.

Before ``kernel.foreign_facts``, "Vivo en Valencia y trabajo como enfermera" stored nothing, and
"¿Dónde vivo?" was not answered from beliefs (Qwen2.5-Coder-0.5B then claimed the job as its own).
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage

from graph.builder import build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.session import run_turn
from state.instance import Instance
from tests.graph.conftest import scripted_deps
from tests.scripted import ScriptedChatModel

ANSWERS = {
    "enfermera.": "¡Qué bien! Valencia es preciosa.",
    "¿Dónde vivo?": "No estoy seguro, lo siento.",
    "Bilbao.": "¡Qué cambio!",
    "¿Dónde vivo ahora?": "Vives en Valencia, claro.",
    "¿Cómo me llamo y en qué trabajo?": "Te llamas Lucía.",
}


def test_a_spanish_speaker_is_believed_asked_back_and_corrected_in_spanish(
    instance: Instance, tmp_path: Path
) -> None:
    prompts: list[str] = []

    def respond(messages: Sequence[BaseMessage]) -> str:
        prompts.append("\n".join(str(m.content) for m in messages))
        said = str(messages[-1].content).rstrip()
        return next((a for q, a in ANSWERS.items() if said.endswith(q)), "Claro.")

    deps = scripted_deps(instance, ScriptedChatModel(respond=respond))
    with sqlite_saver(tmp_path / "es.sqlite") as saver:
        compiled: Any = build_turn_graph(deps).compile(checkpointer=saver)

        told = run_turn(
            compiled, "Hola, me llamo Lucía. Vivo en Valencia y trabajo como enfermera."
        )
        assert deps.user_facts() == {
            "user.profile.name": "Lucía",
            "user.profile.location": "Valencia",
            "user.profile.occupation": "enfermera",
        }
        assert told.reply == "¡Qué bien! Valencia es preciosa."

        # the model did not know; the kernel says what the user told it, in Spanish
        asked = run_turn(compiled, "¿Dónde vivo?")
        assert asked.asked_facts == {"user.profile.location": "Valencia"}
        assert asked.reply.endswith("(Por lo que me contaste: vives en Valencia.)")

        moved = run_turn(compiled, "Me mudé a Bilbao.")
        assert moved.reply.startswith("Anotado: vives en Bilbao (no Valencia).")

        prompts.clear()
        stale = run_turn(compiled, "¿Dónde vivo ahora?")
        assert any("The user lives in Bilbao (corrected from Valencia)." in p for p in prompts)
        assert "(Por lo que me contaste: vives en Bilbao.)" in stale.reply
        assert stale.reply.endswith("(Corrección: ya no es Valencia; ahora es Bilbao.)")

        # two things asked at once: the name the model said, the job the kernel adds
        both = run_turn(compiled, "¿Cómo me llamo y en qué trabajo?")
        assert set(both.asked_facts) == {"user.profile.name", "user.profile.occupation"}
        assert both.reply.endswith("(Por lo que me contaste: trabajas como enfermera.)")
        assert "told me" not in both.reply
