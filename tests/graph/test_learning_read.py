"""Learning is read: what one turn learns changes what a later turn does (issue 13, item 5).

Each scenario drives the real ``turn`` graph with a scripted model and a realistic input; the
proof is in a later turn's prompt or decision, never in the file the lesson was written to.
"""

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from graph.builder import build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.session import run_turn
from kernel import skai
from state.instance import Instance
from state.turn import TurnState
from tests.graph.conftest import scripted_deps
from tests.scripted import ScriptedChatModel

FLUFF = (
    "Great question! As an AI language model, I'd be happy to help. I hope this helps! "
    "Let me know if you have any other questions."
)
QUESTIONS = [
    "What's a good name for a cat?",
    "Any tips for sleeping better?",
    "What should I cook tonight?",
    "How do plants drink water?",
    "Why is the sky blue?",
    "What is a good first guitar song?",
    "Is tea better than coffee?",
]
Runner = Callable[[str], TurnState]


class Recorder:
    """A scripted model that keeps every prompt and answers by a rule."""

    def __init__(self, answer: Callable[[str], str]) -> None:
        self.prompts: list[str] = []
        self.answer = answer

    def model(self) -> ScriptedChatModel:
        def respond(messages: Sequence[BaseMessage]) -> str:
            text = "\n".join(str(m.content) for m in messages)
            self.prompts.append(text)
            return self.answer(text)

        return ScriptedChatModel(respond=respond)


@pytest.fixture
def runner(instance: Instance, tmp_path: Path) -> Iterator[Callable[[Recorder], Runner]]:
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:

        def make(recorder: Recorder) -> Runner:
            compiled: Any = build_turn_graph(scripted_deps(instance, recorder.model())).compile(
                checkpointer=saver
            )
            return lambda text: run_turn(compiled, text)

        yield make


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_repeated_error_becomes_a_lesson_then_a_knob_read_by_later_drafts_and_reverted(
    instance: Instance, runner: Callable[[Recorder], Runner]
) -> None:
    recorder = Recorder(lambda _: FLUFF)
    turn = runner(recorder)
    states, prompts = [], []
    for question in QUESTIONS:
        start = len(recorder.prompts)
        states.append(turn(question))
        prompts.append("\n".join(recorder.prompts[start:]))  # this turn's drafts and re-drafts
    lesson_line = "- When a polite-assistant phrase appears in the draft: cut it"
    # Turn 2 distils the lesson; from turn 3 every drafting prompt carries it.
    assert [x["id"] for x in states[1].me.metacog.lessons] == ["L-0002-STYLE_DRIFT_ASSISTANT"]
    assert lesson_line not in prompts[0] + prompts[1]
    assert all(lesson_line in p for p in prompts[2:])
    # With enough outcomes the second lesson is confident: the plain_voice knob goes live...
    assert states[5].me.metacog.policy.get("plain_voice") == 1.0
    knob_line = 'no assistant filler such as "Great question"'
    assert not any(knob_line in p for p in prompts[:6])
    assert knob_line in prompts[6]
    # ...and since the replies did not improve (regret rose), the next turn reverts it.
    assert states[6].me.metacog.policy == {}
    changes = _jsonl(instance.metacog_dir / "policy.jsonl")
    assert [("apply" in c, "revert" in c) for c in changes] == [(True, False), (False, True)]
    assert changes[1]["why"] == "regret rose"


def test_live_knobs_change_the_gate_the_budget_and_the_tool_bar(
    instance: Instance, runner: Callable[[Recorder], Runner]
) -> None:
    """The readers of each knob (a policy the shaper writes for MISREAD_INTENT, OVER_ANALYSIS
    and CONFABULATION_ALERT), seeded to test what each step does with it."""
    recorder = Recorder(lambda _: "Here is what I think: it depends on the weather.")
    turn = runner(recorder)
    before = turn("Should I bring an umbrella tomorrow or not, what do you think?")

    def seed(policy: dict[str, float]) -> None:
        def merge(present: Any) -> Any:
            metacog = present.metacog.fork()
            metacog.policy = policy
            return present.model_copy(update={"metacog": metacog})

        instance.update_self(merge)

    seed({"mode_bias_work": 0.15, "_regret_at_apply": 0.9})
    biased = turn("Should I bring an umbrella tomorrow or not, what do you think?")
    assert biased.mode_scores["work"] == pytest.approx(before.mode_scores["work"] + 0.15, abs=1e-3)
    seed({"verbosity": -1.0, "_regret_at_apply": 0.9})
    short = turn("Can you list the steps to set up a Python project with tests?")
    seed({})
    normal = turn("Can you list the steps to set up a Python project with tests?")
    assert short.mode == normal.mode == "work"
    for state, step in ((short, -1), (normal, 0)):
        preface, body = skai.verbosity_target("work", state.turn_index)
        assert (state.effort.preface_sentences, state.effort.body_paragraphs) == (
            preface + step,
            body + step,
        )
    assert any("shorter than your usual" in line for line in short.learned)
    assert not any("shorter than your usual" in line for line in normal.learned)


def test_a_lowered_tool_bar_lets_a_borderline_need_call_the_tool(
    instance: Instance, deps: Any
) -> None:
    """tool_affordance reads the ``tool_threshold`` knob (CONFABULATION_ALERT's policy)."""
    from nodes.turn.act import tool_affordance

    me = instance.load_self()
    text = "not sure, maybe something or other?"  # ambiguous: only the fallback cue matches
    update = tool_affordance(TurnState(user_text=text, me=me), deps=deps)
    assert 0.55 <= float(update["tool_need"]) < 0.62  # type: ignore[arg-type]
    assert update["tool_choice"] is None and "< 0.62" in str(update["why"])
    me.metacog.policy = {"tool_threshold": -0.07, "_regret_at_apply": 0.2}
    lowered = tool_affordance(TurnState(user_text=text, me=me), deps=deps)
    assert lowered["tool_choice"] is not None


def test_a_vetoed_action_leaves_a_self_norm_that_later_prompts_carry(
    instance: Instance, runner: Callable[[Recorder], Runner]
) -> None:
    text = instance.config_file.read_text().replace(
        "[skills.shell]\nenabled = false\nallowlist = []",
        '[skills.shell]\nenabled = true\nallowlist = ["rm", "ls"]',
    )
    instance.config_file.write_text(text)
    (instance.root / "workspace" / "precious").mkdir(parents=True)
    recorder = Recorder(lambda _: "Okay.")
    turn = runner(recorder)
    vetoed = turn("please run `rm -rf precious` in the shell")
    assert [c.status for c in vetoed.tool_calls] == ["vetoed"]
    [norm] = _jsonl(instance.self_authored_dir / "self_norms.jsonl")
    assert norm["trigger"] == "boundary_choice"
    later = turn("What should we tidy up in the project today?")
    assert any(norm["text"] in line for line in later.learned)
    assert norm["text"] in recorder.prompts[-1]


def test_rehearsal_asks_the_model_once_and_its_rule_becomes_a_lesson(
    instance: Instance, runner: Callable[[Recorder], Runner]
) -> None:
    def answer(prompt: str) -> str:
        if "Write one rule that would have helped" in prompt:
            return "If the user asks for steps, then give at most five numbered steps."
        return "My view: start with the smallest useful version. 1. Plan. 2. Build. 3. Check."

    recorder = Recorder(answer)
    turn = runner(recorder)
    states = [turn(f"Please write a step by step plan to organise my {x} files") for x in range(8)]
    eighth = states[7]
    assert eighth.turn_index == 8 and eighth.mode == "work"
    rehearsal = next(r for r in eighth.trace if r.step == "rehearsal_run")
    assert rehearsal.status == "ran"
    [record] = _jsonl(instance.metacog_dir / "rehearsals.jsonl")
    assert record["lesson"] == "L-0008-REHEARSAL"
    ninth = turn("Please write a step by step plan to organise my photo files")
    assert "- When the user asks for steps: give at most five numbered steps." in ninth.learned
    assert "give at most five numbered steps" in recorder.prompts[-1]


def test_a_named_concept_shapes_the_prompt_when_the_user_uses_it(
    instance: Instance, runner: Callable[[Recorder], Runner]
) -> None:
    recorder = Recorder(lambda _: "That sounds lovely, tell me more about the garden.")
    turn = runner(recorder)
    for text in (
        "My garden is full of tomatoes this year.",
        "The garden needs water every evening.",
        "I spent the whole morning in the garden.",
    ):
        state = turn(text)
    named = {c.cid for c in state.me.self_state.named_concepts.index}
    assert "garden" in named
    later = turn("What could I plant in the garden next spring?")
    assert any("keep coming back to" in line and "garden" in line for line in later.learned)
    unrelated = turn("What is the capital of Peru?")
    assert not any("keep coming back to" in line for line in unrelated.learned)


def test_intent_hypotheses_follow_the_message(runner: Callable[[Recorder], Runner]) -> None:
    turn = runner(Recorder(lambda _: "I see."))
    torn = turn("Should I quit my job to study music? I'm torn.")
    task = turn("Write me a packing list for a weekend hike")
    feeling = turn("I'm so tired today")
    assert "seek_opinion" in [h.label for h in torn.intents[:2]]
    assert task.intents[0].label == "get_task_done"
    assert "seek_acknowledgement" in [h.label for h in feeling.intents[:2]]
    assert len({torn.intents[0].label, task.intents[0].label, feeling.intents[0].label}) == 3
