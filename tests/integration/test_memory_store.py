from pathlib import Path

from state.memory import MemoryStore

DISTRACTORS = [
    "Bought oat milk and bread at the corner shop.",
    "The build server was slow this morning.",
    "Watched a documentary about deep sea fish.",
    "Meeting moved from Tuesday to Thursday afternoon.",
    "Repainted the garden fence a dark green.",
    "The bus was late again because of roadworks.",
    "Tried a new recipe for lentil soup.",
    "Finished reading a novel about a lighthouse keeper.",
]


def test_search_finds_semantic_match_that_recency_misses(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    target = store.add("My sister moved to Lisbon in Portugal last spring.")
    for text in DISTRACTORS:
        store.add(text)
    recent_ids = {e.id for e in store.recent(3)}
    assert target not in recent_ids
    hits = store.search("Which city does my sister live in now?", k=3, recent=3)
    assert hits[0].id == target
    assert len(hits) == 3  # k is how many come back, after re-ranking the whole union
    everything = store.search("Which city does my sister live in now?", k=20, recent=3)
    assert {h.id for h in everything} >= recent_ids  # recent entries are candidates too
    assert len({h.id for h in everything}) == len(everything)


def test_store_reopens_and_keeps_index(tmp_path: Path) -> None:
    first = MemoryStore(tmp_path / "mem")
    mid = first.add("The launch code word is heliotrope.", metadata={"author": "self", "x": 1})
    second = MemoryStore(tmp_path / "mem")
    assert second.index_count() == 1
    hit = second.search("what is the code word?", k=1, recent=0)[0]
    assert (hit.id, hit.author) == (mid, "self")
    assert second.read().entries[0].meta == {"x": 1}


def test_sync_index_rebuilds_missing_entries(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    store.journal.append(store.journal.new_entry("written while the index was down", author="self"))
    assert store.index_count() == 0
    assert store.sync_index() == 1 and store.sync_index() == 0
    assert store.search("index down", k=1, recent=0)[0].text.startswith("written")


def test_search_filters_by_author(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    store.add("kernel step: recalled 3 memories", metadata={"author": "kernel"})
    store.add("I recalled a walk by the river", metadata={"author": "self"})
    hits = store.search("recalled memories", k=5, recent=5, authors=("self",))
    assert [h.author for h in hits] == ["self"]


def test_large_flush_indexes_every_entry(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    for n in range(700):  # more than the embedding cache holds
        store.add(f"note number {n} about topic {n % 13}", defer_index=True)
    assert len(store.flush()) == 700
    assert store.index_count() == 700
    store.add("note number 3 about topic 3", defer_index=True)  # a text embedded before
    store.flush()
    assert store.index_count() == 701
