import io
import json
import sys
from datetime import UTC, datetime, timedelta

import pytest

from cli.app import main
from cli.memory import hit_line
from kernel.memory import Observation
from state.instance import Instance
from state.memory import Hit, MemoryStore

ADA = "person:user:ada"
BOB = "person:user:bob"
HIT_KEYS = {
    "id",
    "text",
    "score",
    "author",
    "timestamp",
    "source",
    "tainted",
    "superseded",
    "contradictions",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def one_line_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, _, err = run(capsys, *argv)
    assert code != 0
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def store_of(instance: Instance) -> MemoryStore:
    return MemoryStore(instance.memory_dir, index_path=instance.chroma_dir)


@pytest.fixture
def store(instance: Instance) -> MemoryStore:
    """A store holding three memories (two external, one self)."""
    memories = store_of(instance)
    # add_entry: raw memories, without the user-statement classification add() would run
    memories.add_entry("My favourite city is Paris; I moved there in 2019.")
    memories.add_entry("I now live in Berlin, near the river Spree.")
    memories.add("Lumen spent the afternoon reflecting on its goals.", metadata={"author": "self"})
    return memories


def ids_by_text(store: MemoryStore) -> dict[str, str]:
    return {e.description.split()[1]: e.id for e in store.journal if e.author != "kernel"}


def observe(
    store: MemoryStore,
    entity: str,
    value: str,
    *,
    memory_id: str,
    hours_ago: float,
    confidence: float = 0.7,
) -> None:
    store.tiers.observe(
        entity_id=entity,
        slot_key="profile.city",
        value=value,
        observation=Observation(
            memory_id=memory_id,
            source_ref=f"chat:{memory_id}",
            author=entity,
            observed=datetime.now(UTC) - timedelta(hours=hours_ago),
            quality="primary",
        ),
        confidence=confidence,
    )


# --------------------------------------------------------------------------- memory (list)


def test_memory_without_subcommand_still_lists_and_filters(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = run_json(capsys, "memory", "--author", "self")
    assert isinstance(rows, list)
    assert [r["description"] for r in rows] == [
        "Lumen spent the afternoon reflecting on its goals."
    ]
    everything = run_json(capsys, "memory", "--all")
    assert isinstance(everything, list) and len(everything) == 4  # three plus the kernel's


# --------------------------------------------------------------------------- memory search


def test_search_finds_an_added_memory_and_honours_k(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    berlin = ids_by_text(store)["now"]
    hits = run_json(capsys, "memory", "search", "Which city by the Spree do I live in?")
    assert isinstance(hits, list) and len(hits) == 3
    assert hits[0]["id"] == berlin
    assert all(set(h) == HIT_KEYS for h in hits)
    assert hits[0]["score"] >= hits[1]["score"] >= hits[2]["score"]
    one = run_json(capsys, "memory", "search", "Spree", "-k", "1")
    assert isinstance(one, list) and [h["id"] for h in one] == [berlin]


def test_search_prints_one_line_per_hit(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    berlin = ids_by_text(store)["now"]
    code, out, err = run(capsys, "memory", "search", "river Spree", "-k", "2")
    lines = out.splitlines()
    assert code == 0 and err == "" and len(lines) == 2
    assert berlin[:12] in lines[0] and berlin not in lines[0]
    assert "external" in lines[0] and "near the river Spree" in lines[0]


def test_hit_line_shows_markers_and_clips_long_text() -> None:
    hit = Hit(
        id="0123456789abcdef0123456789abcdef",
        text="word " * 60,
        score=0.51234,
        author="external",
        timestamp="2026-01-02T03:04:05+00:00",
        source="both",
        tainted=True,
        superseded=True,
        contradictions=2,
    )
    line = hit_line(hit)
    assert line.startswith("0.512  0123456789ab  external  2026-01-02 03:04")
    assert "[superseded]" in line and "[contradicted x2]" in line and "[tainted]" in line
    assert line.endswith("…") and len(line) < 200


def test_search_with_no_match_says_so(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "memory", "search", "anything at all")
    assert code == 0 and "no memories match" in out


@pytest.mark.parametrize("k", ["0", "101", "-3", "many"])
def test_search_refuses_a_bad_k(
    store: MemoryStore, capsys: pytest.CaptureFixture[str], k: str
) -> None:
    err = one_line_error(capsys, "memory", "search", "Paris", "-k", k)
    assert "-k" in err


def test_search_refuses_an_empty_query(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "QUERY" in one_line_error(capsys, "memory", "search", "  ")


# --------------------------------------------------------------------------- memory forget


@pytest.mark.parametrize("prefix_length", [None, 8, 12], ids=["full", "prefix8", "prefix12"])
def test_forget_hides_a_memory_from_search_but_keeps_the_ledger_line(
    store: MemoryStore, capsys: pytest.CaptureFixture[str], prefix_length: int | None
) -> None:
    berlin = ids_by_text(store)["now"]
    given = berlin if prefix_length is None else berlin[:prefix_length]
    code, out, err = run(capsys, "memory", "forget", given, "--reason", "the user asked")
    assert code == 0, err
    assert berlin[:12] in out and "ledger keeps the line" in out and "the user asked" in out
    hits = run_json(capsys, "memory", "search", "river Spree Berlin")
    assert isinstance(hits, list) and hits and berlin not in {h["id"] for h in hits}
    ledger = run_json(capsys, "memory", "--all")
    assert isinstance(ledger, list) and berlin in {row["id"] for row in ledger}
    trail = store_of_tiers_events(store, berlin)
    assert trail == ["SoftDeleted", "TombstoneWritten"]
    tomb = store.tiers.events(ref=berlin, kinds=["TombstoneWritten"])
    assert len(tomb) == 1 and tomb[0].data["reason"] == "the user asked"


def store_of_tiers_events(store: MemoryStore, memory_id: str) -> list[str]:
    return [e.kind for e in reversed(store.tiers.events(ref=memory_id))]


def test_forget_json_reports_the_audit(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    paris = ids_by_text(store)["favourite"]
    data = run_json(capsys, "memory", "forget", paris, "--reason", "  outdated  ")
    assert isinstance(data, dict)
    assert data["id"] == paris and data["reason"] == "outdated" and data["ledger_kept"] is True
    assert data["events"] == ["SoftDeleted", "TombstoneWritten"]
    assert data["text"].startswith("My favourite city is Paris")


def test_forgetting_twice_is_one_line(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    paris = ids_by_text(store)["favourite"]
    assert run(capsys, "memory", "forget", paris, "--reason", "outdated")[0] == 0
    err = one_line_error(capsys, "memory", "forget", paris, "--reason", "outdated")
    assert "already forgotten" in err
    assert len(store.tiers.events(ref=paris, kinds=["TombstoneWritten"])) == 1


def test_forgetting_a_kernel_memory_is_refused(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = next(e.id for e in store.journal if e.author == "kernel")
    err = one_line_error(capsys, "memory", "forget", kernel, "--reason", "tidy up")
    assert "kernel" in err
    assert store.tiers.events(ref=kernel) == []


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("0123456789abcdef0123456789abcdef", "no memory"),
        ("zzzzzzzz", "no memory"),
        ("abc", "at least 8"),
    ],
    ids=["unknown-id", "unknown-prefix", "short-prefix"],
)
def test_forgetting_an_unknown_id_is_one_line(
    store: MemoryStore, capsys: pytest.CaptureFixture[str], given: str, message: str
) -> None:
    err = one_line_error(capsys, "memory", "forget", given, "--reason", "gone")
    assert message in err


def test_forgetting_needs_a_reason(store: MemoryStore, capsys: pytest.CaptureFixture[str]) -> None:
    paris = ids_by_text(store)["favourite"]
    assert "reason" in one_line_error(capsys, "memory", "forget", paris, "--reason", "  ")
    assert "--reason" in one_line_error(capsys, "memory", "forget", paris)
    assert store.tiers.events(ref=paris) == []


def test_an_ambiguous_prefix_is_refused(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    memories = store_of(instance)
    for tail in ("1", "2"):
        entry = memories.journal.new_entry(f"twin memory {tail}", author="external")
        memories.append(entry.model_copy(update={"id": "feedface" + tail * 24}))
    err = one_line_error(capsys, "memory", "forget", "feedface", "--reason", "twins")
    assert "ambiguous" in err and "2 memories" in err
    assert run(capsys, "memory", "forget", "feedface1", "--reason", "twins")[0] == 0


# --------------------------------------------------------------------------- beliefs


def test_beliefs_on_an_empty_store_is_friendly(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "beliefs")
    assert code == 0 and out.strip() == "no beliefs yet" and err == ""
    data = run_json(capsys, "beliefs")
    assert data == {"slots": [], "claims": [], "graph": {"nodes": [], "edges": []}}


def test_beliefs_shows_a_current_slot(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    observe(store, ADA, "Paris", memory_id=ids_by_text(store)["favourite"], hours_ago=2)
    code, out, _ = run(capsys, "beliefs")
    assert code == 0
    line = next(line for line in out.splitlines() if "profile.city" in line)
    assert ADA in line and "= Paris" in line and "0.70" in line and "working" in line
    assert "(tainted)" not in line
    data = run_json(capsys, "beliefs")
    assert isinstance(data, dict) and set(data) == {"slots", "claims", "graph"}
    (slot,) = [s for s in data["slots"] if s["entity"] == ADA]
    assert slot["entity"] == ADA and slot["slot"] == "profile.city"
    assert slot["value"] == "Paris" and slot["status"] == "working"
    assert datetime.fromisoformat(slot["created"]).tzinfo is not None


def test_history_shows_the_superseded_version_and_its_events(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = ids_by_text(store)
    observe(store, ADA, "Paris", memory_id=ids["favourite"], hours_ago=2)
    observe(store, ADA, "Berlin", memory_id=ids["now"], hours_ago=1, confidence=0.8)
    current = run(capsys, "beliefs")[1]
    assert "= Berlin" in current and "= Paris" not in current
    code, out, _ = run(capsys, "beliefs", "--history")
    assert code == 0
    paris = next(line for line in out.splitlines() if "= Paris" in line)
    assert "superseded" in paris and "contradicted x1" in paris
    assert "ContradictionMarked" in out and "BeliefSuperseded" in out
    data = run_json(capsys, "beliefs", "--history")
    assert isinstance(data, dict)
    assert [(s["value"], s["status"]) for s in data["history"]] == [
        ("Paris", "superseded"),
        ("Berlin", "working"),
    ]
    kinds = [e["kind"] for e in data["events"]]
    assert kinds.index("ContradictionMarked") < kinds.index("BeliefSuperseded")
    assert [e["seq"] for e in data["events"]] == sorted(e["seq"] for e in data["events"])


def test_forgetting_the_only_source_demotes_the_slot_in_history(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    paris = ids_by_text(store)["favourite"]
    observe(store, ADA, "Paris", memory_id=paris, hours_ago=2)
    code, out, _ = run(capsys, "memory", "forget", paris, "--reason", "wrong")
    assert code == 0 and "demoted" in out and "profile.city = Paris" in out
    assert run(capsys, "beliefs")[1].strip() == "no beliefs yet"
    data = run_json(capsys, "beliefs", "--history")
    assert isinstance(data, dict)
    assert [s["status"] for s in data["history"]] == ["demoted"]
    kinds = {e["kind"] for e in data["events"]}
    assert {"SoftDeleted", "TombstoneWritten", "BeliefDemoted"} <= kinds


def test_entity_filter(store: MemoryStore, capsys: pytest.CaptureFixture[str]) -> None:
    ids = ids_by_text(store)
    observe(store, ADA, "Berlin", memory_id=ids["now"], hours_ago=5)
    observe(store, ADA, "Berlin", memory_id=ids["favourite"], hours_ago=1)  # promoted: a node
    observe(store, BOB, "Lisbon", memory_id=ids["favourite"], hours_ago=1)
    both = run(capsys, "beliefs")[1]
    assert ADA in both and BOB in both
    code, out, _ = run(capsys, "beliefs", "--entity", "ada")
    assert code == 0 and ADA in out and BOB not in out
    ada = run_json(capsys, "beliefs", "--entity", "ada")
    assert isinstance(ada, dict) and len(ada["graph"]["nodes"]) == 1
    data = run_json(capsys, "beliefs", "--entity", "bob", "--history")
    assert isinstance(data, dict)
    assert {s["entity"] for s in data["slots"] + data["history"]} == {BOB}
    assert {e["entity"] for e in data["events"]} == {BOB}
    assert data["graph"] == {"nodes": [], "edges": []}
    code, out, _ = run(capsys, "beliefs", "--entity", "carol")
    assert code == 0 and out.strip() == "no beliefs about 'carol' yet"


def test_inferred_claims_are_listed_as_hypotheses(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = ids_by_text(store)
    store.tiers.add_claim(
        entity_id=ADA,
        slot_key="profile.job",
        value="engineer",
        confidence=0.9,
        provenance=[ids["favourite"], ids["now"]],
    )
    code, out, _ = run(capsys, "beliefs")
    assert code == 0
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Hypotheses"))
    claim = lines[header + 1]
    assert "profile.job = engineer" in claim and "0.70" in claim and "from 2 memories" in claim
    data = run_json(capsys, "beliefs")
    assert isinstance(data, dict) and data["slots"] == []
    (found,) = data["claims"]
    assert found["confidence"] == 0.7 and len(found["provenance"]) == 2


def test_promoted_slots_appear_in_the_belief_graph(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = ids_by_text(store)
    observe(store, ADA, "Berlin", memory_id=ids["now"], hours_ago=5)
    observe(store, ADA, "Berlin", memory_id=ids["favourite"], hours_ago=1)
    data = run_json(capsys, "beliefs")
    assert isinstance(data, dict)
    (slot,) = [s for s in data["slots"] if s["entity"] == ADA]
    assert slot["status"] == "promoted"
    (node,) = data["graph"]["nodes"]
    assert node["slot_value_id"] == slot["id"]
    out = run(capsys, "beliefs")[1]
    assert "promoted" in out and node["id"] in out


# --------------------------------------------------------------------------- maintain


def test_maintain_runs_and_reports(instance: Instance, capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "maintain")
    assert isinstance(data, dict) and data
    code, out, _ = run(capsys, "maintain")
    assert code == 0 and out.strip()


def test_maintain_needs_an_instance(capsys: pytest.CaptureFixture[str]) -> None:
    assert "no Lumen instance" in one_line_error(capsys, "maintain")


# --------------------------------------------------------------------------- ingest --envelope


def ingest(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, stdin: str, *argv: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    return run(capsys, "ingest", *argv)


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["a list"]', "JSON object"),
        ("   ", "empty"),
        (json.dumps({"text": "hello", "source_kind": "news"}), "source_ref"),
    ],
    ids=["invalid-json", "not-an-object", "empty", "missing-fields"],
)
def test_ingest_envelope_refuses_bad_input_with_one_line(
    instance: Instance,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    stdin: str,
    message: str,
) -> None:
    code, _, err = ingest(capsys, monkeypatch, stdin, "--envelope")
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err
    assert message in err


def test_ingest_envelope_records_a_signal(
    instance: Instance, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    envelope = {
        "text": "Local news: the river Spree festival opens on Friday.",
        "source_kind": "news",
        "source_ref": "https://news.example/spree-festival",
        "ingest_ts": "2026-01-02T03:04:05Z",
        "lang": "en",
    }
    code, out, err = ingest(capsys, monkeypatch, json.dumps(envelope), "--envelope", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["action"] == "added" and result["memory_id"]
    ledger = run_json(capsys, "memory", "--all")
    assert isinstance(ledger, list) and result["memory_id"] in {row["id"] for row in ledger}


def test_ingest_needs_a_source_or_an_envelope(
    instance: Instance, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = ingest(capsys, monkeypatch, "some text", "--json")
    assert code == 1 and "--source" in err and "--envelope" in err
    code, _, err = ingest(capsys, monkeypatch, "{}", "--envelope", "--source", "news")
    assert code == 1 and "--envelope" in err and err.count("\n") == 1
