"""Issue 16, §20 trust boundaries for signals that came through ``lumen serve``.

Signals are pushed over real HTTP; then a chat turn (compiled ``turn`` graph, scripted model)
shows what reaches reply context.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from graph.builder import build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.session import run_turn
from state.config import load_config
from state.instance import Instance
from state.writeback import validate_writeback
from tests.graph.conftest import scripted_deps
from tests.integration.test_gateway_server import (
    SECRET_TOKEN,
    configure,
    envelope,
    post,
    serving,
)
from tests.scripted import ScriptedChatModel


def test_risky_and_secret_signals_never_reach_reply_context(
    instance: Instance, tmp_path: Path
) -> None:
    configure(instance)
    with serving(instance, tmp_path) as server:
        assert post(server, "gh", envelope("gh:plain"))[0] == 202
        rumor = envelope("gh:rumor", author_id="rumormill", risk_flags=["rumor"])
        assert post(server, "gh", rumor)[0] == 202
        assert post(server, "vault", envelope("vault:1"), token=SECRET_TOKEN)[0] == 202
    deps = scripted_deps(instance, ScriptedChatModel(replies=["Nothing new here."]))
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        state = run_turn(build_turn_graph(deps).compile(checkpointer=saver), "Any news today?")
    context = "\n".join(state.context_memories)
    assert "author:gh" in context  # a plain signal is recalled, marked unverified
    assert "Forwarded content (unverified" in context
    assert "rumormill" not in context  # risk-flagged: never injected directly
    assert "author:vault" not in context  # privacy = "secret": never in chat context
    # the secret source's signal is stored, flagged sensitive
    secret = [
        e for e in deps.store.read().entries if e.meta.get("entity_id", "").endswith(":vault")
    ]
    assert secret and "sensitive" in secret[0].meta["risk_flags"]
    # nor do they leave through the recall skill (the program the gateway runs)
    from graph import skills
    from state.skills import BUILTIN_SKILLS

    deps.store.flush()
    result = skills.run(
        BUILTIN_SKILLS / "recall" / "main.py",
        {"query": "news from gh vault rumormill", "k": 10, "instance": str(instance.root)},
        timeout=60,
    )
    assert result.ok, result.error
    recalled = " ".join(h["text"] for h in result.output["hits"])
    assert "author:gh" in recalled
    assert "rumormill" not in recalled and "author:vault" not in recalled


def test_signals_without_source_ref_are_refused_and_none_is_promoted(
    instance: Instance, tmp_path: Path
) -> None:
    configure(instance)
    with serving(instance, tmp_path) as server:
        payload = envelope("x")
        del payload["source_ref"]
        status, body, _ = post(server, "gh", payload)
        assert status == 422 and body["fields"] == {"source_ref": "missing"}
        for i in range(3):  # the same claim, repeated, primary: still tainted, never promoted
            signal = envelope(f"t:{i}", source_kind="trend", topic_tags=["ai agents"])
            signal["quality"] = "primary"
            signal["author_id"] = f"desk{i}"
            signal["ingest_ts"] = datetime(2026, 1, 1, i * 2, tzinfo=UTC).isoformat()
            assert post(server, "gh", signal)[0] == 202
    deps = scripted_deps(instance, ScriptedChatModel())
    assert deps.store.tiers.beliefs() == []
    slots = deps.store.tiers.current_slots("trend:topic:ai_agents")
    assert slots and all(s.status == "working" and s.tainted for s in slots)


def test_persona_writeback_cannot_change_source_definitions(instance: Instance) -> None:
    configure(instance)
    before = instance.config_file.read_bytes()
    for key in ("sources.gh.token_env", "sources", "config.sources.gh", "persona.sources"):
        result = validate_writeback(instance.load_self(), {key: "ATTACKER"}, now=datetime.now(UTC))
        assert not result.accepted and result.applied == {}
    assert instance.config_file.read_bytes() == before
    assert load_config(instance.config_file).sources["gh"].token_env == "LUMEN_TEST_GH_TOKEN"
