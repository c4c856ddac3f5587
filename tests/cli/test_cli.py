import json
from pathlib import Path

import pytest

from cli.app import main
from state.instance import Instance

READ_ONLY = [
    ["status"],
    ["memory"],
    ["memory", "--all"],
    ["memory", "--author", "kernel"],
    ["values"],
    ["goals"],
    ["goals", "--status", "perpetual"],
    ["skills"],
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", READ_ONLY, ids=lambda a: " ".join(a))
def test_read_only_command_prints_a_table(
    instance: Instance, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 0 and out.strip() and err == ""


@pytest.mark.parametrize("argv", READ_ONLY, ids=lambda a: " ".join(a))
def test_read_only_command_prints_json(
    instance: Instance, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 0
    json.loads(out)


def test_status_json_has_the_promised_fields(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(run(capsys, "status", "--json")[1])
    assert data["soul"]["name"] == "Lumen" and data["soul"]["ontology"]
    assert data["values"][0]["weight"] == 0.95
    assert data["memory_counts"]["kernel"] == 1
    assert len(data["identity"]["identity_hash"]) == 16
    assert data["dominant_archetype"] == "sage"
    assert data["model"].startswith("embedded:")


def test_goals_filters_by_year_and_status(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    perpetual = json.loads(run(capsys, "goals", "--status", "perpetual", "--json")[1])
    assert perpetual and all(g["status"] == "perpetual" for g in perpetual)
    assert json.loads(run(capsys, "goals", "--year", "1999", "--json")[1]) == []


def test_skills_lists_the_chat_skill_with_its_help(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = json.loads(run(capsys, "skills", "--json")[1])
    chat = next(r for r in rows if r["name"] == "chat")
    assert chat["origin"] == "instance" and chat["help"].startswith("Deliver a reply")


def test_doctor_passes_on_a_fresh_instance(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "doctor", "--json")
    report = json.loads(out)
    assert code == 0 and all(c["ok"] for c in report["checks"])
    assert report["counters"]["signal_ingest_total"] == 0


def test_init_refuses_existing_instance_with_one_line(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(capsys, "init")
    assert code == 1 and err.count("\n") == 1 and "already exists" in err


def one_line_error(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code, _, err = run(capsys, *argv)
    assert code != 0
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return code, err


def test_no_instance_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    _, err = one_line_error(capsys, "status")
    assert "no Lumen instance" in err


@pytest.mark.parametrize("command", ["status", "values"])
def test_corrupt_values_json_is_one_line(
    instance: Instance, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    instance.values_file.write_text('[{"name": "x", "weight": ')
    before = instance.values_file.read_bytes()
    _, err = one_line_error(capsys, command)
    assert "values.json" in err and "invalid JSON" in err
    assert instance.values_file.read_bytes() == before


def test_invalid_values_json_names_the_field(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    instance.values_file.write_text('[{"name": "x", "weight": 3}]')
    _, err = one_line_error(capsys, "values")
    assert "values.json" in err and "0.weight" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["goals", "--status", "bogus"],
        ["memory", "--author", "nobody"],
        ["memory", "--date", "2026-13-45"],
        ["memory", "-n", "0"],
        ["frobnicate"],
        ["status", "--nope"],
    ],
    ids=lambda a: " ".join(a),
)
def test_bad_flag_values_are_one_line(
    instance: Instance, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    one_line_error(capsys, *argv)


def test_unreadable_memory_line_is_skipped_and_reported(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    day_file = next(instance.memory_dir.rglob("*.jsonl"))
    with day_file.open("a") as handle:
        handle.write("not json at all\n")
    code, out, err = run(capsys, "memory", "--json")
    assert code == 0 and len(json.loads(out)) == 1
    assert "unreadable memory line skipped" in err and ":2:" in err


def test_model_that_fails_to_load_is_one_line(
    instance: Instance, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LUMEN_LLM_MODEL_PATH", "/nonexistent/model.gguf")
    _, err = one_line_error(capsys, "chat", "--once", "hello")
    assert "model" in err and "not found" in err
    code, _, _ = run(capsys, "doctor")
    assert code == 1


def test_edited_memory_makes_doctor_fail(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    day_file = next(instance.memory_dir.rglob("*.jsonl"))
    day_file.write_text(day_file.read_text().replace("initialised", "destroyed"))
    code, _, err = run(capsys, "doctor")
    assert code == 1 and "edited after writing" in err


@pytest.mark.model
def test_chat_once_on_embedded_model_creates_instance_and_remembers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "chat", "--once", "Hello, my name is Ada.", "--json")
    assert code == 0, err
    first = json.loads(out)
    assert any(ch.isalpha() for ch in first["reply"]) and first["mode"] == "talk"
    assert 1 <= first["llm_calls"] <= 2
    for key in ("lambda", "chosen", "vetoes", "timings_ms"):
        assert key in first
    assert "created one" in err
    code, out, _ = run(capsys, "chat", "--once", "What did I just tell you?")
    assert code == 0 and out.strip()
    code, out, _ = run(capsys, "memory", "--json", "--all")
    memories = json.loads(out)
    externals = [m["description"] for m in memories if m["author"] == "external"]
    assert externals == ["Hello, my name is Ada.", "What did I just tell you?"]
    kernel_steps = [m["meta"].get("step") for m in memories if m["author"] == "kernel"]
    assert kernel_steps.count("ingest") == 2 and kernel_steps.count("recurrence_closure") == 2
    from graph.deps import Deps
    from graph.session import turn_runner

    inst = Instance(tmp_path / "home")
    with turn_runner(Deps.for_instance(inst)) as compiled:
        state = compiled.get_state({"configurable": {"thread_id": "main"}})
    assert [x["user"] if isinstance(x, dict) else x.user for x in state.values["history"]] == [
        "Hello, my name is Ada.",
        "What did I just tell you?",
    ]
