"""Turn benchmark: kernel overhead vs a no-op floor, model calls per mode, embedded latency ratio.

Run: ``uv run python bench/turn.py [--turns 20] [--embedded 5]``.

1. Scripted model (answers instantly): for talk, work and deep inputs, N turns each through the
   real ``turn`` graph (SQLite checkpointer, durability "exit" as ``lumen chat`` uses). Interleaved
   with each turn, the *floor*: a graph of the same shape (four subgraphs of 7/11/4/14 no-op
   nodes over the same state schema, same checkpointer). Prints median and p95 of both, their
   ratio, and model calls per turn. The three rows cycle two or three messages each, so from the
   second round on their query embedding is cached; the ``talk*`` row sends a different message
   every turn (the talk messages of ``bench/mode_dev.jsonl``), as a conversation does, and so
   includes the MiniLM embedding of each new message (a few ms on two cores).
2. Embedded model: M talk turns; each turn's latency is divided by one raw call of the same
   model on the exact messages the turn's draft step sent (same seed, same temperature, so the
   same reply). Goal: ratio <= 1.5 in talk.
3. Mode gate: confusion matrix and agreement on ``bench/mode_dev.jsonl`` (the set the gate's
   signals were tuned on) and ``bench/mode_heldout.jsonl`` (written after it, never tuned on).
   The mode is computed by the real step functions (surface_parse → reality_check →
   intent_hypotheses → effort_budgeter → mode_gate) on a fresh TurnState with no memories.
4. Λ: the dev set through the real turn graph with a scripted model that drifts off-topic on
   some calls (deterministic by prompt); reports how often Λ's winner is not the first draft,
   how often a re-draft was asked, and candidates per mode. ``--lambda-embedded K`` runs the
   first K dev messages of each mode with the embedded model too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langgraph.graph import END, START, StateGraph

from graph.builder import ACT, CONSOLIDATE, DELIBERATE, PERCEIVE, build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.deps import Deps
from graph.session import run_turn, settle_heap
from kernel import skai
from nodes.turn import deliberate, perceive
from state.instance import init_instance
from state.turn import TurnInput, TurnState
from tests.scripted import ScriptedChatModel

INPUTS = {
    "talk": ["Hi there! How are you?", "Good morning!", "Haha, that's funny"],
    "work": [
        "Please write a step by step plan to organise my project files",
        "Can you list the steps to set up a Python project with tests?",
    ],
    "deep": [
        "Think deeply: why do people disagree about free will, and what would change your mind?",
        "In depth: is it ever right to break a promise? Consider both sides carefully.",
    ],
}


REPLIES = [
    "I think it depends. My view: start small.",
    "Good question. First sort the files by project, then by date.",
    "Honestly, the simplest version works: one folder per client.",
    "Start with tests for the parts you change most often.",
    "People disagree because they weigh freedom and causation differently.",
]
"""Scripted replies, cycled: distinct enough that none copies one of the last three (a single
repeated reply would make every turn re-draft as a copy of an earlier reply)."""


def floor_graph() -> Any:
    """Build a no-op graph with the turn graph's shape and state schema."""

    def noop(state: TurnState) -> dict[str, Any]:
        return {}

    parent: StateGraph[TurnState, None, TurnInput, TurnState] = StateGraph(
        TurnState, input_schema=TurnInput
    )
    previous = START
    for group, steps in (("p", PERCEIVE), ("d", DELIBERATE), ("a", ACT), ("c", CONSOLIDATE)):
        sub: StateGraph[TurnState, None, TurnState, TurnState] = StateGraph(TurnState)
        names = [f"{group}{i}" for i in range(len(steps))]
        for name in names:
            sub.add_node(name, noop)
        sub.add_edge(START, names[0])
        for left, right in pairwise(names):
            sub.add_edge(left, right)
        sub.add_edge(names[-1], END)
        parent.add_node(group, sub.compile(name=group))
        parent.add_edge(previous, group)
        previous = group
    parent.add_edge(previous, END)
    return parent


def pct(values: list[float], q: float) -> float:
    """Return the q-quantile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def answer_on_topic(messages: Sequence[BaseMessage]) -> str:
    """A scripted reply that takes up the message's own words, so no new message is re-drafted
    as off-topic (the cycled ``REPLIES`` fit only the rows' own inputs)."""
    said = str(messages[-1].content).rsplit("\n\n", 1)[-1]
    terms = [w for w in said.split() if len(w) > 3][:3] or ["that"]
    return f"Good to hear about {' '.join(terms)}. I think it depends on the day, honestly."


def scripted(turns: int) -> None:
    """Measure kernel overhead against the floor, per mode."""
    print(f"== scripted model, {turns} turns per mode (durability=exit, SQLite) ==")
    print(
        f"{'mode':5s} {'kernel med':>10s} {'p95':>7s} {'floor med':>10s} {'p95':>7s} "
        f"{'ratio':>6s} {'calls/turn':>10s} {'modes seen':>12s} {'index ms':>9s}"
    )
    print("(kernel = the graph run the user waits for; index = Chroma upsert of the turn's two")
    print(" memories, done after the reply is shown, reported separately; talk* = a new message")
    print(" every turn, so each query is embedded: the other rows repeat theirs, cached)")
    fresh = [row["text"] for row in load_set("mode_dev.jsonl") if row["mode"] == "talk"]
    for mode, texts in [*INPUTS.items(), ("talk*", fresh)]:
        with tempfile.TemporaryDirectory() as tmp:
            instance = init_instance(Path(tmp) / "inst")
            model = (
                ScriptedChatModel(replies=REPLIES)
                if mode in INPUTS
                else ScriptedChatModel(respond=answer_on_topic)  # new messages, rarely re-drafted
            )
            deps = Deps.for_instance(instance, model_for=lambda _m, m=model: m)
            kernel_ms: list[float] = []
            floor_ms: list[float] = []
            calls: list[int] = []
            index_ms: list[float] = []
            seen: set[str] = set()
            with (
                sqlite_saver(Path(tmp) / "turn.sqlite") as saver,
                sqlite_saver(Path(tmp) / "floor.sqlite") as floor_saver,
            ):
                turn = build_turn_graph(deps).compile(checkpointer=saver)
                floor = floor_graph().compile(checkpointer=floor_saver)
                run_turn(turn, "warm up")  # first-use costs (Chroma, embedder) are not per turn
                settle_heap()  # as turn_runner does for `lumen chat`
                for i in range(turns):
                    text = texts[i % len(texts)]
                    started = time.perf_counter()
                    floor.invoke(
                        TurnInput(user_text=text, source="user"),
                        {"configurable": {"thread_id": "floor"}},
                        durability="exit",
                    )
                    floor_ms.append((time.perf_counter() - started) * 1000)
                    started = time.perf_counter()
                    state = run_turn(turn, text)
                    kernel_ms.append((time.perf_counter() - started) * 1000)
                    started = time.perf_counter()
                    deps.store.flush()  # what `lumen chat` does after showing the reply
                    index_ms.append((time.perf_counter() - started) * 1000)
                    calls.append(state.llm_calls)
                    seen.add(state.mode)
            k_med, f_med = statistics.median(kernel_ms), statistics.median(floor_ms)
            print(
                f"{mode:5s} {k_med:10.1f} {pct(kernel_ms, 0.95):7.1f} {f_med:10.1f} "
                f"{pct(floor_ms, 0.95):7.1f} {k_med / f_med:6.2f} "
                f"{statistics.mean(calls):10.2f} {','.join(sorted(seen)):>12s} "
                f"{statistics.median(index_ms):9.1f}"
            )


def cold_cache(model: Any) -> None:
    """Drop llama.cpp's cached prompt so no call reuses another's prompt processing."""
    client = getattr(model, "client", None)
    if client is not None and hasattr(client, "reset"):
        client.reset()


class MessageLog(BaseCallbackHandler):
    """Keep the messages of every chat request (the draft's are replayed raw)."""

    def __init__(self) -> None:
        self.calls: list[list[Any]] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.calls.append(list(messages[0]))


def _raw_stream(model: Any, messages: list[Any]) -> tuple[float, float, str]:
    """Stream one raw call: (ms to the first token, ms in all, the text)."""
    started = time.perf_counter()
    first = 0.0
    text = ""
    for chunk in model.stream(messages):
        if chunk.content and not first:
            first = (time.perf_counter() - started) * 1000
        text += str(chunk.content)
    return first, (time.perf_counter() - started) * 1000, text


def streamed(turns: int, label: str, configure: Any = None) -> None:
    """Talk turns streamed as the REPL shows them, each against one raw call of its draft.

    For every turn: the time to the first streamed token and to the end of the turn, divided by
    the same figures of one raw streamed call of the same model on the exact messages the turn's
    draft sent (same seed and temperature, so the same reply). The model's prompt cache is
    cleared (embedded) or displaced by a short unrelated request (server) before each call.
    """
    from langchain_core.messages import HumanMessage

    from graph.llm import make_chat_model
    from graph.session import stream_turn
    from state.config import load_config

    print(f"\n== {label}: {turns} talk turns, streamed, vs one raw call of the draft ==")
    with tempfile.TemporaryDirectory() as tmp:
        instance = init_instance(Path(tmp) / "inst")
        if configure is not None:
            configure(instance)
        # Greedy decoding (temperature 0, allowed by widening the talk band for this bench only),
        # so the raw call and the turn's draft produce the same reply and their times compare.
        text = instance.config_file.read_text()
        text = text.replace("temperature = 0.7", "temperature = 0.0")
        text = text.replace("talk = { min = 0.4, max = 0.9 }", "talk = { min = 0.0, max = 0.9 }")
        instance.config_file.write_text(text)
        config = load_config(instance.config_file)
        log = MessageLog()
        raw = make_chat_model(config, mode="talk")
        if config.llm.provider == "openai":
            raw = raw.model_copy(update={"seed": 7})

        def model_for(mode: str) -> Any:
            model = make_chat_model(config, mode=mode)
            if config.llm.provider == "openai":
                model = model.model_copy(update={"seed": 7})
            return model.model_copy(update={"callbacks": [log]})

        def displace() -> None:
            cold_cache(raw)
            if config.llm.provider == "openai":
                raw.invoke([HumanMessage("ok")])

        deps = Deps.for_instance(instance, model_for=model_for)
        first_ratios: list[float] = []
        turn_ratios: list[float] = []
        with sqlite_saver(Path(tmp) / "turn.sqlite") as saver:
            turn = build_turn_graph(deps).compile(checkpointer=saver)
            run_turn(turn, "warm up")
            for i in range(turns):
                log.calls.clear()
                text = INPUTS["talk"][i % len(INPUTS["talk"])]
                displace()
                started = time.perf_counter()
                first: list[float] = []

                def on_token(
                    _draft: str, _token: str, mark: list[float] = first, t0: float = started
                ) -> None:
                    if not mark:
                        mark.append((time.perf_counter() - t0) * 1000)

                state = stream_turn(turn, text, on_step=lambda _s: None, on_token=on_token)
                turn_ms = (time.perf_counter() - started) * 1000
                deps.store.flush()
                if not log.calls or not first:
                    print(f"  turn {i + 1}: no streamed draft (mode {state.mode}); skipped")
                    continue
                displace()
                raw_first, raw_ms, raw_text = _raw_stream(raw, log.calls[0])
                first_ratios.append(first[0] / raw_first)
                turn_ratios.append(turn_ms / raw_ms)
                drafted = state.candidates[state.chosen].text if state.chosen >= 0 else ""
                same = "same draft" if raw_text.strip() == drafted.strip() else "draft differs"
                print(
                    f"  turn {i + 1}: mode={state.mode} calls={state.llm_calls} first token "
                    f"{first[0]:6.0f} ms (raw {raw_first:6.0f}) turn {turn_ms:6.0f} ms "
                    f"(raw {raw_ms:6.0f}); {same}"
                )
        if first_ratios:
            print(
                f"first-token ratio: median {statistics.median(first_ratios):.2f} (goal <= 1.2); "
                f"turn ratio: median {statistics.median(turn_ratios):.2f} (goal <= 1.5)"
            )


def served(turns: int) -> None:
    """Run ``streamed`` against llama.cpp's OpenAI-compatible server on the embedded GGUF."""
    from tests.llama_server import ServerError, serve

    with tempfile.TemporaryDirectory() as logs:
        try:
            with serve(Path(logs) / "server.log") as base:

                def configure(instance: Any) -> None:
                    text = instance.config_file.read_text()
                    text = text.replace('provider = "embedded"', 'provider = "openai"')
                    text = text.replace('base_url = ""', f'base_url = "{base}"')
                    instance.config_file.write_text(text)

                streamed(turns, "llama.cpp OpenAI-compatible server (SmolLM2-135M)", configure)
        except ServerError as exc:
            print(f"llama.cpp server did not start; skipped ({exc})")


BENCH = Path(__file__).resolve().parent
GATE_STEPS = (
    perceive.surface_parse,
    perceive.reality_check,
    perceive.intent_hypotheses,
    perceive.effort_budgeter,
    deliberate.mode_gate,
)


def load_set(name: str) -> list[dict[str, str]]:
    """Read a labelled ``{"text", "mode", "lang"}`` JSONL set from bench/."""
    lines = (BENCH / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def gate(text: str) -> TurnState:
    """Run the perception steps the gate depends on, then the real mode_gate step."""
    state = TurnState(user_text=text, turn_index=1)
    for step in GATE_STEPS:  # none of them touches deps
        update = step(state, deps=cast(Any, None))
        state = state.model_copy(
            update={k: v for k, v in update.items() if k in TurnState.model_fields}
        )
    return state


def mode_agreement(name: str) -> None:
    """Print the gate's confusion matrix, agreement and per-language agreement on one set."""
    rows = load_set(name)
    matrix: Counter[tuple[str, str]] = Counter()
    by_lang: Counter[tuple[str, bool]] = Counter()
    for row in rows:
        mode = gate(row["text"]).mode
        matrix[(row["mode"], mode)] += 1
        by_lang[(row["lang"], mode == row["mode"])] += 1
    hits = sum(matrix[(m, m)] for m in skai.MODES)
    print(
        f"\n-- {name}: {len(rows)} messages, agreement {hits}/{len(rows)} = {hits / len(rows):.1%}"
    )
    print(f"{'label / gate':>13s} " + " ".join(f"{m:>5s}" for m in skai.MODES))
    for label in skai.MODES:
        print(f"{label:>13s} " + " ".join(f"{matrix[(label, m)]:5d}" for m in skai.MODES))
    langs = sorted({lang for lang, _ in by_lang})
    print(
        "   by language: "
        + ", ".join(
            f"{lang} {by_lang[(lang, True)]}/{by_lang[(lang, True)] + by_lang[(lang, False)]}"
            for lang in langs
        )
    )


OFF_TOPIC_REPLY = "I think it depends. My view: start small, and keep it simple."


def drifting_reply(messages: Sequence[BaseMessage]) -> str:
    """A scripted small model: on topic most of the time, generic on about a third of calls.

    The choice is a hash of the whole prompt, so it is reproducible and differs between the
    direct draft, the alternative reading and a re-draft of the same message.
    """
    prompt = "\n".join(str(m.content) for m in messages)
    if str(messages[0].content).startswith("You plan a reply"):
        return (
            '{"steps": ["Answer the question directly.", "Offer a next step."], "confidence": 0.7}'
        )
    user = prompt.rsplit("The user's message:", 1)[-1].strip()
    draw = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:2], "big") % 3
    if draw == 0:
        return OFF_TOPIC_REPLY
    terms = [w for w in user.split() if len(w) > 4][:3] or ["that"]
    reply = f"I think the key here is {' and '.join(terms)}."
    if "Take the other reading" in prompt:
        reply = f"I'm assuming you mainly want guidance on {terms[0]}. " + reply
        reply += " Is that what you need?"
    elif draw == 2:
        reply += " Because that matters most, start there; next, try one small step."
    return reply


def lambda_winners(limit_per_mode: int | None, model: Any = None) -> None:
    """Run the dev set through the turn graph; report how often Λ's winner is not c1."""
    rows = load_set("mode_dev.jsonl")
    if limit_per_mode is not None:
        taken: Counter[str] = Counter()
        kept = []
        for row in rows:
            if taken[row["mode"]] < limit_per_mode:
                taken[row["mode"]] += 1
                kept.append(row)
        rows = kept
    label = "embedded model" if model is not None else "scripted drifting model"
    print(f"\n== Λ selection over {len(rows)} dev messages ({label}) ==")
    stats: dict[str, Counter[str]] = {m: Counter() for m in skai.MODES}
    with tempfile.TemporaryDirectory() as tmp:
        instance = init_instance(Path(tmp) / "inst")
        chat = model if model is not None else ScriptedChatModel(respond=drifting_reply)
        deps = Deps.for_instance(instance, model_for=lambda _m: chat)
        with sqlite_saver(Path(tmp) / "turn.sqlite") as saver:
            turn = build_turn_graph(deps).compile(checkpointer=saver)
            for row in rows:
                state = run_turn(turn, row["text"])
                deps.store.flush()
                c = stats[state.mode]
                c["turns"] += 1
                c["candidates"] += len(state.candidates)
                c["calls"] += state.llm_calls
                c["multi"] += len(state.candidates) >= 2
                c["not_first"] += state.chosen > 0
                c["redraft"] += any(x.origin == "redraft" for x in state.candidates)
                c["over_budget"] += state.llm_calls > skai.LLM_CALL_BUDGET[state.mode]
    print(
        f"{'mode':5s} {'turns':>5s} {'cand/turn':>9s} {'calls/turn':>10s} {'>=2 cand':>8s} "
        f"{'winner!=c1':>10s} {'redraft':>7s} {'over budget':>11s}"
    )
    total: Counter[str] = Counter()
    for mode, c in stats.items():
        total.update(c)
        n = max(1, c["turns"])
        print(
            f"{mode:5s} {c['turns']:5d} {c['candidates'] / n:9.2f} {c['calls'] / n:10.2f} "
            f"{c['multi']:8d} {c['not_first'] / n:10.1%} {c['redraft'] / n:7.1%} "
            f"{c['over_budget']:11d}"
        )
    n = max(1, total["turns"])
    multi = max(1, total["multi"])
    print(
        f"all   winner is not the first draft in {total['not_first']}/{total['turns']} turns "
        f"({total['not_first'] / n:.1%}; {total['not_first'] / multi:.1%} of turns with >=2 "
        f"candidates); re-draft in {total['redraft'] / n:.1%}"
    )


def main() -> None:
    """Run the parts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--embedded", type=int, default=5)
    parser.add_argument("--only", choices=["latency", "gate", "lambda"], default=None)
    parser.add_argument("--lambda-embedded", type=int, default=0)
    args = parser.parse_args()
    if args.only in (None, "latency"):
        scripted(args.turns)
        if args.embedded:
            streamed(args.embedded, "embedded model (SmolLM2-135M, in-process)")
            served(args.embedded)
    if args.only in (None, "gate"):
        print("\n== mode gate (real perceive + mode_gate steps) ==")
        mode_agreement("mode_dev.jsonl")
        mode_agreement("mode_heldout.jsonl")
        mode_agreement("mode_fresh.jsonl")  # written by a second person, never used in tuning
    if args.only in (None, "lambda"):
        lambda_winners(None)
        if args.lambda_embedded:
            from graph.llm import make_chat_model
            from state.config import load_config

            with tempfile.TemporaryDirectory() as tmp:
                config = load_config(init_instance(Path(tmp) / "i").config_file)
                real = make_chat_model(config, mode="talk")
            lambda_winners(args.lambda_embedded, model=real)


if __name__ == "__main__":
    main()
