"""Under a language norm the kernel's own words in a reply are in that language.

Seen with the embedded model after "Please answer in Portuguese from now on.": the reply to
"Where do I live?" was Portuguese and ended "(From what you told me: you live in Porto.)".
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage

from graph.builder import build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.session import run_turn
from kernel.norms import has_list_lines
from state.instance import Instance
from tests.graph.conftest import scripted_deps
from tests.scripted import ScriptedChatModel

ANSWERS = {
    "I live in Porto.": "Que cidade bonita!",
    "Where do I live?": "Não tenho certeza, desculpe.",
    "Where do I live now?": "Você mora em Porto, claro.",
    "Give me three tips for sleeping better.": (
        "1. Deite-se sempre à mesma hora.\n2. Evite café depois das cinco.\n"
        "3. Deixe o telemóvel fora do quarto."
    ),
    "And three tips for waking up early?": (
        "1. Go to bed at the same time every night.\n2. Put the alarm across the room.\n"
        "3. Open the curtains as soon as you wake up."
    ),
}


def test_recalled_noted_corrected_and_rewritten_lines_follow_the_language_norm(
    instance: Instance, tmp_path: Path
) -> None:
    prompts: list[str] = []

    def respond(messages: Sequence[BaseMessage]) -> str:
        prompts.append("\n".join(str(m.content) for m in messages))
        said = str(messages[-1].content)
        return next((a for q, a in ANSWERS.items() if said.rstrip().endswith(q)), "Certo.")

    deps = scripted_deps(instance, ScriptedChatModel(respond=respond))
    with sqlite_saver(tmp_path / "pt.sqlite") as saver:
        compiled: Any = build_turn_graph(deps).compile(checkpointer=saver)

        def turn(text: str) -> str:
            return str(run_turn(compiled, text).reply)

        assert turn("Please answer in Portuguese from now on.") == (
            "Entendido — vou responder em português a partir de agora."
        )
        assert turn("I live in Porto.") == (
            "Anotado: o lugar onde você mora é Porto.\n\nQue cidade bonita!"
        )
        # A norm added under the language norm is acknowledged in that language.
        assert turn("Never use numbered lists.").startswith(
            "Entendido — não vou usar marcadores nem listas numeradas a partir de agora."
        )
        prompts.clear()
        asked = turn("Where do I live?")
        # The model is not shown the kernel's "Anotado: …" as its own words (it copied the form).
        assert prompts and not any("Anotado" in p for p in prompts)
        assert asked.endswith("(Pelo que você me contou: o lugar onde você mora é Porto.)")
        assert "told me" not in asked

        prompts.clear()
        tips = turn("Give me three tips for sleeping better.")
        assert not has_list_lines(tips)
        # The persona grammar (narrative) folds the list into prose with Portuguese connectors.
        assert tips == (
            "Em primeiro lugar, deite-se sempre à mesma hora. Depois, evite café depois das cinco. "
            "Por fim, deixe o telemóvel fora do quarto."
        )
        # The kernel's line of the turn before is not shown to the model as the agent's words.
        assert prompts and not any("Pelo que você me contou" in p for p in prompts)

        # A model that ignored the norm and wrote English gets English ordinals, not mixed ones.
        english = turn("And three tips for waking up early?")
        assert english.startswith("First, go to bed") and "Primeiro" not in english

        turn("Actually I moved to Lisbon.")
        stale = turn("Where do I live now?")
        assert "(Correção: já não é Porto; agora é Lisbon.)" in stale
        assert "Correction" not in stale


def test_without_a_language_norm_the_kernel_speaks_english(
    instance: Instance, tmp_path: Path
) -> None:
    deps = scripted_deps(instance, ScriptedChatModel(replies=["Não tenho certeza, desculpe."]))
    with sqlite_saver(tmp_path / "en.sqlite") as saver:
        compiled: Any = build_turn_graph(deps).compile(checkpointer=saver)
        run_turn(compiled, "I live in Porto.")
        asked = run_turn(compiled, "Where do I live?").reply
        assert asked.endswith("(From what you told me: you live in Porto.)")
