import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from graph.builder import TURN_STEPS, build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.cycle_builder import build_cycle_graph, build_reflect_graph
from graph.deps import Deps
from graph.session import run_turn
from kernel import skai
from state.instance import Instance
from state.turn import TurnState
from tests.graph.conftest import TurnRunner, scripted_deps
from tests.scripted import PLAN_JSON, ScriptedChatModel

TALK = "Hi there! How are you?"
WORK = "Please write a step by step plan to organise my project files"
DEEP = "Think deeply: why do people disagree about free will, and what would change your mind?"


def test_all_36_turn_loop_steps_are_nodes_with_their_spec_names(deps: Deps) -> None:
    assert len(TURN_STEPS) == len(set(TURN_STEPS)) == 36
    assert (TURN_STEPS[0], TURN_STEPS[7], TURN_STEPS[30], TURN_STEPS[-1]) == (
        "ingest",
        "mode_gate",
        "self_authored_update",
        "recurrence_closure",
    )
    assert set(skai.CLOSURE_EVENTS) <= set(TURN_STEPS)
    nodes = build_turn_graph(deps).compile().get_graph(xray=1).nodes
    names = {node_id.split(":")[-1] for node_id in nodes}
    assert set(TURN_STEPS) <= names


def test_turn_loop_names_match_the_skai_spec_when_it_is_available() -> None:
    spec = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "003_cf3a5e2e7292907d.txt"
    if not spec.exists():
        pytest.skip("the SKAi spec (../shared/seeds) is not beside this checkout")
    loop = json.loads(spec.read_text(encoding="utf-8"))["runtime"]["turn_loop"]
    assert list(TURN_STEPS) == loop


@pytest.mark.parametrize("name", ["turn", "cycle", "reflect"])
def test_topology_matches_the_mermaid_snapshot(deps: Deps, name: str) -> None:
    build = {"turn": build_turn_graph, "cycle": build_cycle_graph, "reflect": build_reflect_graph}
    drawn = build[name](deps).compile(name=name).get_graph(xray=1).draw_mermaid(with_styles=False)
    snapshot = Path(__file__).with_name(f"{name}.mermaid")
    assert snapshot.exists(), f"{snapshot.name} is missing: review the drawing and commit it"
    assert drawn == snapshot.read_text()


@pytest.mark.parametrize("text", [TALK, WORK, DEEP])
def test_every_step_runs_or_records_why_it_was_skipped(turn: TurnRunner, text: str) -> None:
    state = turn(text)
    recorded = {r.step for r in state.trace}
    assert recorded == set(TURN_STEPS)
    assert all(r.reason for r in state.trace if r.status == "skipped")


def _status(state: object, step: str) -> str:
    return next(r.status for r in state.trace if r.step == step)  # type: ignore[attr-defined]


def test_mode_gate_talk_path_skips_preface_and_deep_analysis(turn: TurnRunner) -> None:
    state = turn(TALK)
    assert state.mode == "talk"
    for step in ("presence_preface", "dual_stream_thoughts", "plan", "counterfactual_probe"):
        record = next(r for r in state.trace if r.step == step)
        assert record.status == "skipped" and "talk" in record.reason
    assert state.llm_calls <= 2


def test_mode_gate_work_path_plans_but_does_not_probe(turn: TurnRunner) -> None:
    state = turn(WORK)
    assert state.mode == "work"
    assert _status(state, "plan") == "ran" and _status(state, "integration_fuser") == "ran"
    assert _status(state, "counterfactual_probe") == "skipped"
    assert state.plan and state.llm_calls <= 4


def test_mode_gate_deep_path_probes_a_counterfactual_and_weighs_candidates(
    turn: TurnRunner,
) -> None:
    state = turn(DEEP)
    assert state.mode == "deep"
    assert _status(state, "counterfactual_probe") == "ran"
    assert _status(state, "inner_dialogue") == "ran"
    assert {c.origin for c in state.candidates} >= {"draft", "counterfactual"}
    assert state.llm_calls <= 6


def test_lambda_select_redrafts_when_the_model_gives_junk_and_stays_bounded(
    instance: Instance, tmp_path: Path
) -> None:
    from graph.checkpoints import sqlite_saver
    from graph.session import run_turn

    junk = ScriptedChatModel(replies=["!!!"])
    deps = scripted_deps(instance, junk)
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        state = run_turn(build_turn_graph(deps).compile(checkpointer=saver), TALK)
    assert [c.origin for c in state.candidates] == ["fallback", "fallback"]
    assert len(state.candidates) <= skai.MAX_INTERNAL_CANDIDATES
    assert state.llm_calls == 2 and state.reply
    assert any("unusable" in d for d in state.degraded)


def _run(instance: Instance, tmp_path: Path, model: ScriptedChatModel, text: str) -> TurnState:
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        return run_turn(
            build_turn_graph(scripted_deps(instance, model)).compile(checkpointer=saver), text
        )


def test_work_mode_drafts_two_candidates_under_different_intents(
    instance: Instance, tmp_path: Path
) -> None:
    on_topic = "I'd organise the project files by plan: one folder per project, then steps."
    state = _run(instance, tmp_path, ScriptedChatModel(replies=[on_topic]), WORK)
    assert state.mode == "work"
    assert [c.origin for c in state.candidates] == ["draft", "counterfactual"]
    assert len({c.intent for c in state.candidates}) == 2
    assert state.lambda_route == "done" and state.llm_calls == 3  # plan + two drafts


def test_lambda_select_redrafts_an_off_topic_draft(instance: Instance, tmp_path: Path) -> None:
    off_topic = "Bananas are rich in potassium and taste great in smoothies."
    state = _run(instance, tmp_path, ScriptedChatModel(replies=[off_topic]), WORK)
    assert [c.origin for c in state.candidates] == ["draft", "counterfactual", "redraft"]
    assert "off-topic" in state.selection_notes
    assert state.llm_calls <= skai.LLM_CALL_BUDGET["work"]


def test_an_instructions_own_words_do_not_make_a_draft_on_topic(
    instance: Instance, tmp_path: Path
) -> None:
    # The norm's words ("keep", "answers", "short") are no topic: a draft about answers being
    # short misses the cooking question and is re-drafted.
    off = "Short answers it is: I will keep my answers short from now on."
    on = "Cook a quick vegetable stir-fry tonight with rice."
    model = ScriptedChatModel(replies=[off, on])
    text = "Please keep your answers short from now on. What should I cook tonight?"
    state = _run(instance, tmp_path, model, text)
    assert [c.origin for c in state.candidates][-1] == "redraft"
    assert "off-topic" in state.selection_notes
    assert "stir-fry" in state.reply


def test_lambda_select_sets_aside_an_off_topic_candidate(
    instance: Instance, tmp_path: Path
) -> None:
    def respond(messages: Sequence[BaseMessage]) -> str:
        prompt = "\n".join(str(m.content) for m in messages)
        if str(messages[0].content).startswith("You plan a reply"):
            return PLAN_JSON
        if "Take the other reading" in prompt:  # the alternative stays on topic
            return "Your project files: plan one folder each."
        return "Bananas are rich in potassium."

    state = _run(instance, tmp_path, ScriptedChatModel(respond=respond), WORK)
    assert len(state.candidates) == 2 and state.lambda_route == "done"
    assert state.candidates[state.chosen].origin == "counterfactual"  # Λ's winner is not first
    assert "set aside" in state.selection_notes


def test_lambda_select_keeps_a_good_draft_without_redrafting(turn: TurnRunner) -> None:
    state = turn(TALK)
    assert len(state.candidates) == 1 and state.lambda_route == "done"


def test_tool_path_runs_calc_through_the_action_gateway(turn: TurnRunner) -> None:
    state = turn("What is 12 * (3 + 4)?")
    assert [(c.tool, c.status) for c in state.tool_calls] == [("calc", "ok")]
    assert "84" in state.reply
    assert state.tool_calls[0].breakdown.startswith("[score=")
    assert "archetype=+0.030" in state.tool_calls[0].breakdown  # calc is Sage (0.7)


def test_no_tool_path_records_why(turn: TurnRunner) -> None:
    state = turn(TALK)
    assert state.tool_calls == []
    record = next(r for r in state.trace if r.step == "optional_tool_calls")
    assert record.status == "skipped" and record.reason


def _enable_shell(instance: Instance, allow: list[str]) -> None:
    text = instance.config_file.read_text().replace(
        "[skills.shell]\nenabled = false\nallowlist = []",
        f"[skills.shell]\nenabled = true\nallowlist = {json.dumps(allow)}",
    )
    instance.config_file.write_text(text)


def test_shadow_veto_blocks_before_the_skill_runs(instance: Instance, tmp_path: Path) -> None:
    from graph.checkpoints import sqlite_saver
    from graph.session import run_turn

    _enable_shell(instance, ["rm", "ls"])
    victim = instance.root / "workspace" / "precious"
    victim.mkdir(parents=True)
    (victim / "keep.txt").write_text("keep me")
    deps = scripted_deps(instance, ScriptedChatModel())
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        state = run_turn(
            build_turn_graph(deps).compile(checkpointer=saver),
            "please run `rm -rf precious` in the shell",
        )
    assert (victim / "keep.txt").exists()
    assert [(c.tool, c.status) for c in state.tool_calls] == [("shell", "vetoed")]
    assert "I did not run shell" in state.reply
    assert instance.load_self().psyche.self_integration.shadow_encounters == 1
    kinds = [e.meta.get("kind") for e in deps.store.read().entries]
    assert "ShadowVeto" in kinds


def test_allowed_action_proceeds_through_the_gateway(instance: Instance, tmp_path: Path) -> None:
    from graph.checkpoints import sqlite_saver
    from graph.session import run_turn

    _enable_shell(instance, ["ls"])
    (instance.root / "workspace").mkdir()
    (instance.root / "workspace" / "notes.txt").write_text("x")
    prompts: list[str] = []

    def respond(messages: Any) -> str:
        prompts.append(str(messages[0].content))
        return "Your workspace has one file."

    deps = scripted_deps(instance, ScriptedChatModel(respond=respond))
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        state = run_turn(
            build_turn_graph(deps).compile(checkpointer=saver), "please run `ls` in the shell"
        )
    assert [(c.tool, c.status) for c in state.tool_calls] == [("shell", "ok")]
    # shell output is outside content: state keeps its shape, the model sees it screened
    assert state.tool_calls[0].output["stdout"] == "[withheld: 10 chars]"
    assert state.tool_calls[0].output["screened"]["source"] == "skill:shell"
    assert any("notes.txt" in p and "EXTERNAL_CONTENT" in p for p in prompts)


def test_second_turn_sees_the_first(turn: TurnRunner) -> None:
    turn("My name is Ada and I like astronomy.")
    second = turn("What do you know about me?")
    assert [x.user for x in second.history][-2:] == [
        "My name is Ada and I like astronomy.",
        "What do you know about me?",
    ]
    assert "The user's name is Ada." in second.beliefs  # the dialogue itself is in history
    assert second.turn_index == 2


def test_turn_updates_the_self_and_closes_the_loop(turn: TurnRunner, instance: Instance) -> None:
    state = turn("My name is Ada and I like astronomy.")
    me = instance.load_self()
    assert me.metacog.turn_index == 1
    assert any(b.id == "user.name" and "Ada" in b.text for b in me.self_state.beliefs.statements)
    assert me.self_state.memory.episodic_ring
    assert state.rc == pytest.approx(len(state.closed_events) / 4)
    assert {"habit_update", "lesson_extract", "self_representation_update"} <= set(
        state.closed_events
    )


def test_every_step_writes_a_kernel_memory(turn: TurnRunner, deps: Deps) -> None:
    turn(TALK)
    steps = {e.meta.get("step") for e in deps.store.read().entries if e.author == "kernel"}
    assert set(TURN_STEPS) <= steps


def test_unsupported_claims_are_tagged_as_hypotheses(instance: Instance, tmp_path: Path) -> None:
    from graph.checkpoints import sqlite_saver
    from graph.session import run_turn

    prompts: list[str] = []
    replies = iter(["Lisbon is lovely in spring. Your sister Maria moved there in 2019.", "Go."])

    def respond(messages: Sequence[BaseMessage]) -> str:
        prompts.append("\n".join(str(m.content) for m in messages))
        return next(replies, "Trains run hourly.")

    deps = scripted_deps(instance, ScriptedChatModel(respond=respond))
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        compiled = build_turn_graph(deps).compile(checkpointer=saver)
        state = run_turn(compiled, "Where is my sister?")
        assert "spring. (unverified) Your sister Maria" in state.reply
        assert "CONFABULATION_ALERT" in state.error_tags
        prompts.clear()
        run_turn(compiled, "How do I get to the station?")
    # the next turn's dialogue keeps the reply's own words, not the disowned claim or its tag
    assert any("Lisbon is lovely in spring." in p for p in prompts)
    assert not any("Maria" in p or "(unverified)" in p for p in prompts)


@pytest.mark.parametrize("grammar", ["narrative", "formal", "terse"])
def test_compose_final_renders_in_the_persona_grammar(
    instance: Instance, tmp_path: Path, grammar: str
) -> None:
    from graph.checkpoints import sqlite_saver
    from graph.session import run_turn

    me = instance.load_self()
    me.psyche.persona.grammar_preference = grammar
    instance.save_self(me)
    reply_text = (
        "Great question! The plan has three parts. First collect the files. "
        "Then sort them by year. Finally archive the old ones."
    )
    deps = scripted_deps(instance, ScriptedChatModel(replies=[reply_text]))
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        state = run_turn(build_turn_graph(deps).compile(checkpointer=saver), TALK)
    if grammar == "formal":
        assert "## " in state.reply and "\n- " in state.reply
    elif grammar == "terse":
        assert "Great question" not in state.reply and len(state.reply) < len(reply_text)
    else:
        assert "## " not in state.reply and "\n- " not in state.reply


def _candidate(cid: str, **axes: float) -> object:
    from state.turn import Candidate

    full = {k: 0.5 for k in (*skai.AXES, *skai.PENALTIES)} | axes
    return Candidate(id=cid, text=cid, axes=full, lam=skai.lambda_score(full))


def _select(deps: Deps, candidates: list[object]) -> dict[str, object]:
    from nodes.turn.deliberate import lambda_select
    from state.turn import TurnState

    state = TurnState(user_text="x", mode="work", candidates=candidates, llm_calls=4)
    return lambda_select(state, deps=deps)


def test_lambda_select_picks_the_highest_lambda(deps: Deps) -> None:
    update = _select(deps, [_candidate("a", P=0.2), _candidate("b", P=0.9)])
    assert update["chosen"] == 1


def test_lambda_select_tie_breaks_on_higher_truthfulness(deps: Deps) -> None:
    # Equal Λ: +0.1 T (weight 1.2) in a is matched by +0.12/1.1 P (weight 1.1) in b.
    a = _candidate("a", T=0.6, P=0.5)
    b = _candidate("b", T=0.5, P=0.5 + 0.1 * 1.2 / 1.1)
    assert a.lam == pytest.approx(b.lam)  # type: ignore[attr-defined]
    assert _select(deps, [b, a])["chosen"] == 1


def test_lambda_select_tie_breaks_on_lower_servility_when_truth_is_equal(deps: Deps) -> None:
    a = _candidate("a", SSS=0.4, P=0.5)
    b = _candidate("b", SSS=0.5, P=0.5 + 0.1 / 1.1)
    assert a.lam == pytest.approx(b.lam)  # type: ignore[attr-defined]
    assert _select(deps, [b, a])["chosen"] == 1


def test_plan_repairs_out_of_range_model_json(instance: Instance, tmp_path: Path) -> None:
    from graph.checkpoints import sqlite_saver
    from graph.session import run_turn

    model = ScriptedChatModel(
        plan_json='{"steps": ["Gather the files first", "]"], "confidence": 15.2}'
    )
    deps = scripted_deps(instance, model)
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        state = run_turn(build_turn_graph(deps).compile(checkpointer=saver), WORK)
    assert state.plan == ["Gather the files first"]
    assert not any(d.startswith("plan:") for d in state.degraded)


def test_plan_falls_back_to_rules_on_prose(instance: Instance, tmp_path: Path) -> None:
    from graph.checkpoints import sqlite_saver
    from graph.session import run_turn

    deps = scripted_deps(instance, ScriptedChatModel(plan_json="Sure! Here is a plan."))
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        state = run_turn(build_turn_graph(deps).compile(checkpointer=saver), WORK)
    assert state.plan and any("not a JSON object" in d for d in state.degraded)


def test_tool_results_are_context_for_the_draft_never_pasted_in_front(
    instance: Instance, tmp_path: Path
) -> None:
    prompts: list[str] = []

    def respond(messages: Any) -> str:
        prompts.append(str(messages[0].content))  # the system message carries the context
        if "Tool results this turn" in prompts[-1]:
            return "That comes to 84."
        return "Let me work that out."

    deps = scripted_deps(instance, ScriptedChatModel(respond=respond))
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        state = run_turn(
            build_turn_graph(deps).compile(checkpointer=saver), "What is 12 * (3 + 4)?"
        )
    assert [(c.tool, c.status) for c in state.tool_calls] == [("calc", "ok")]
    assert any("calc (ok; trusted, local)" in p and "84" in p for p in prompts)
    assert state.reply.startswith("That comes to 84")


def test_a_checked_answer_the_model_ignored_follows_the_draft(turn: TurnRunner) -> None:
    state = turn("What is 12 * (3 + 4)?")  # the scripted model never mentions the result
    assert not state.reply.startswith("12")
    assert state.reply.rstrip().endswith("84") or "= 84" in state.reply.splitlines()[-1]


@pytest.mark.parametrize(
    "text",
    ["Hi! My name is Alex and I teach chemistry.", "Remember that I like green tea.", "Hello!"],
)
def test_introductions_and_greetings_recall_nothing(turn: TurnRunner, text: str) -> None:
    state = turn(text)
    assert [c.tool for c in state.tool_calls if c.tool == "recall"] == []


def test_recall_never_hands_back_the_turns_own_message(instance: Instance, tmp_path: Path) -> None:
    prompts: list[str] = []

    def respond(messages: Any) -> str:
        prompts.append(str(messages[0].content))  # the system message carries the context
        return "You told me you live in Lisbon."

    deps = scripted_deps(instance, ScriptedChatModel(respond=respond))
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        compiled = build_turn_graph(deps).compile(checkpointer=saver)
        run_turn(compiled, "I live in Lisbon.")
        deps.store.flush()
        ask = "Do you remember where I live?"
        state = run_turn(compiled, ask)
    assert [c.tool for c in state.tool_calls] == ["recall"]
    tool_prompt = next(p for p in prompts if "Tool results this turn" in p)
    results = tool_prompt.split("Tool results this turn", 1)[1]
    assert ask not in results and "Lisbon" in results
    assert not state.reply.startswith("From memory")


def test_prompt_scaffolding_a_small_model_copies_never_reaches_the_user(
    instance: Instance, tmp_path: Path
) -> None:
    def respond(messages: Any) -> str:
        return (
            "Notes from earlier conversations:\n- The user said earlier: hello\n"
            "I'm well, thank you for asking."
        )

    deps = scripted_deps(instance, ScriptedChatModel(respond=respond))
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        state = run_turn(
            build_turn_graph(deps).compile(checkpointer=saver), "Hi there! How are you?"
        )
    assert state.reply.strip() == "I'm well, thank you for asking."


def test_a_sentence_limit_never_cuts_a_checked_answer(turn: TurnRunner) -> None:
    turn("Please answer in at most one sentence from now on.")
    state = turn("What is 17 * 23?")  # the scripted model talks past it; the answer still shows
    assert [r.kind for r in state.norm_rules] == ["max_sentences"]
    assert "391" in state.reply


def test_a_reply_that_restates_a_corrected_fact_gets_the_correction(
    instance: Instance, tmp_path: Path
) -> None:
    # (a reply that only copied the one to "I live in Lisbon." would be set aside as a copy)
    replies = ["Lisbon is lovely in spring.", "Porto has great food.", "You live in Lisbon."]
    deps = scripted_deps(instance, ScriptedChatModel(replies=replies))
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        compiled = build_turn_graph(deps).compile(checkpointer=saver)
        run_turn(compiled, "I live in Lisbon.")
        run_turn(compiled, "Actually, I moved to Porto last month.")
        state = run_turn(compiled, "Where do I live now?")
    assert "The user lives in Porto (corrected from Lisbon)." in state.beliefs
    assert state.reply.startswith("You live in Lisbon.")  # what the model said stays visible
    assert state.reply.rstrip().endswith("(Correction: Lisbon is out of date; it is Porto now.)")


def test_a_draft_that_only_repeats_the_message_becomes_a_fallback(
    instance: Instance, tmp_path: Path
) -> None:
    said = "Tell me something interesting about octopuses."
    deps = scripted_deps(instance, ScriptedChatModel(replies=[said]))
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        state = run_turn(build_turn_graph(deps).compile(checkpointer=saver), said)
    assert said not in state.reply and state.reply.strip()
    assert any("only repeated the message" in d for d in state.degraded)


@pytest.mark.parametrize(
    ("draft", "tagged"),
    [
        # Seen with Qwen2.5-Coder-0.5B, asked for a book about Rome: tagged "(unverified)".
        ("It's a must-read for anyone into history, whether you're a tourist or a scholar.", False),
        ("If you're a beginner, start with short daily lessons.", False),
        ("Once you are a member, the library lends e-books too.", False),
        ("If you live near a park, walk there every morning.", False),
        # a time or a condition in front of an invented past or relation: still a claim (review)
        ("When we last talked about your job, you seemed stressed.", True),
        ("I loved it when you told me about your dog Max.", True),
        ("When your sister Maria visits next month, take her to the museum.", True),
        ("Say hi to your sister Anna for me!", True),
        ("Even if you're a beginner like you told me, this works.", True),
    ],
)
def test_a_claim_about_the_user_is_tagged_unless_the_reply_supposes_it(
    instance: Instance, tmp_path: Path, draft: str, tagged: bool
) -> None:
    from graph.checkpoints import sqlite_saver
    from graph.session import run_turn

    deps = scripted_deps(instance, ScriptedChatModel(replies=[draft]))
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        compiled = build_turn_graph(deps).compile(checkpointer=saver)
        state = run_turn(compiled, "What do you remember about me?")
        assert ("(unverified)" in state.reply) is tagged
