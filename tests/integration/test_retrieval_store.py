"""Issue 15 through the real MemoryStore (Chroma + offline MiniLM + SQLite FTS5)."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

from state.memory import MemoryStore

START = datetime(2023, 1, 10, 18, tzinfo=UTC)
CHATTER = [
    "Haha, that's so true.",
    "Work has been nonstop this week.",
    "Did you see the rain today?",
    "I need a holiday honestly.",
    "Let's grab coffee soon.",
    "My phone died again, so annoying.",
]


def _add(store: MemoryStore, text: str, when: datetime, speaker: str = "Nora") -> str:
    return store.add(text, metadata={"timestamp": when.isoformat(), "speaker": speaker})


def test_recent_chatter_does_not_displace_an_old_relevant_memory(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    old = _add(store, "We adopted a rescue greyhound called Pixel.", START)
    for n in range(30):  # months of later chatter, the newest entries by far
        _add(store, CHATTER[n % len(CHATTER)], START + timedelta(days=90, hours=n))
    hits = store.search("What is the name of Nora's dog?", k=3)
    assert hits[0].id == old
    top = store.search("What is the name of Nora's dog?", k=3, recent=5)
    assert top[0].id == old  # recent entries are candidates, not reserved slots


def test_stemmed_lexical_match_moved_moving(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    target = _add(store, "Felix: we're moving to Ghent in the spring!", START, "Felix")
    for n, text in enumerate(CHATTER):
        _add(store, text, START + timedelta(days=n + 1), "Felix")
    assert store.search("Where has Felix moved?", k=1, recent=0)[0].id == target


def test_speaker_metadata_reaches_the_lexical_index(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    nora = _add(store, "I started pottery classes on Tuesdays.", START, "Nora")
    felix = _add(store, "I started pottery classes on Tuesdays.", START, "Felix")
    ids = [h.id for h in store.search("When did Felix start pottery?", k=2, recent=0)]
    assert ids[0] == felix and nora in ids


def test_dated_question_finds_the_session_of_that_date(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    march = _add(
        store, "Nora: I ran a half marathon this morning!", datetime(2023, 3, 12, tzinfo=UTC)
    )
    may = _add(store, "Nora: I ran a 10k charity run today!", datetime(2023, 5, 14, tzinfo=UTC))
    for n, text in enumerate(CHATTER):
        _add(store, f"Nora: {text}", datetime(2023, 4, 1 + n, tzinfo=UTC))
    now = datetime(2024, 1, 1, tzinfo=UTC)
    assert store.search("What race did Nora run in May 2023?", k=1, now=now)[0].id == may
    assert store.search("What race did Nora run in March 2023?", k=1, now=now)[0].id == march


def test_old_store_gets_stemmed_terms_on_first_search(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    target = _add(store, "Felix: we're moving to Ghent in the spring!", START, "Felix")
    db = store.tiers._db()
    db.execute("DELETE FROM lexicon")  # as a store mirrored before the stemmed index existed
    db.execute("INSERT INTO docs_stem(docs_stem) VALUES ('delete-all')")
    assert store.tiers.lexical("moved Ghent", 5) == []
    reopened = MemoryStore(tmp_path / "mem")
    assert reopened.search("Where has Felix moved?", k=1, recent=0)[0].id == target
    assert [m for m, _ in reopened.tiers.lexical("moved Ghent", 5)] == [target]


FILLER = [
    "Have you seen that new series everyone is talking about? No spoilers please.",
    "It really was special, I felt like a new person afterwards.",
    "No way, that sounds incredible. Tell me everything.",
    "Work has been a lot lately, so many meetings.",
    "I finally cleaned out the fridge, it was a crime scene.",
    "The restaurant scene near us is getting so much better.",
]


def test_question_naming_a_speaker_finds_their_news_not_their_chatter(tmp_path: Path) -> None:
    # Two people chatting, each line stored as "Name: text" with the speaker in metadata. A
    # question names Ruby: embedded as asked, it is nearest to Ruby's short chit-chat (the name
    # dominates a short line's embedding); the name must select Ruby's lines, not rank them.
    store = MemoryStore(tmp_path / "mem")
    n = 0
    for _ in range(3):
        for who in ("Ruby", "Felix"):
            for text in FILLER:
                n += 1
                _add(store, f"{who}: {text}", START + timedelta(hours=n), who)
    ruby = _add(
        store,
        "Ruby: Oh, I have to tell you, last weekend I got promoted to team lead at the design"
        " agency. My boss finally noticed all the extra hours I've been doing. How has your week"
        " been?",
        START + timedelta(hours=n + 1),
        "Ruby",
    )
    felix = _add(
        store,
        "Felix: Guess what? I got promoted to head chef at the bistro, my boss finally noticed.",
        START + timedelta(hours=n + 2),
        "Felix",
    )
    for question in (
        "What new role did Ruby get at the agency?",
        "What job change did Ruby mention?",
    ):
        assert store.search(question, k=1, recent=0)[0].id == ruby
    ids = [h.id for h in store.search("What did Felix get promoted to?", k=2, recent=0)]
    assert ids == [felix, ruby]  # the other person's promotion still comes before chatter


def test_speaker_from_a_name_prefix_when_metadata_has_none(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    target = store.add(
        "Iris: I finally finished the quilt for my sister.",
        metadata={"timestamp": START.isoformat()},
    )
    for n, text in enumerate(CHATTER):
        store.add(f"Iris: {text}", metadata={"timestamp": (START + timedelta(days=n)).isoformat()})
    assert store.tiers.speakers_in("What did Iris make?") == ["iris"]
    assert store.search("What did Iris sew for her sister?", k=1, recent=0)[0].id == target


def test_old_store_learns_its_speakers_on_first_search(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    target = _add(store, "I started pottery classes on Tuesdays.", START, "Nora")
    db = store.tiers._db()
    db.execute("DELETE FROM speakers")  # as a store written before speakers were kept
    db.execute("DELETE FROM lexical_state")
    reopened = MemoryStore(tmp_path / "mem")
    assert reopened.search("What class did Nora start?", k=1, recent=0)[0].id == target
    assert reopened.tiers.speakers_in("Nora?") == ["nora"]


def test_cached_candidates_never_bring_back_a_forgotten_memory(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    target = _add(store, "Felix: the spare key is under the blue flowerpot.", START, "Felix")
    for n, text in enumerate(CHATTER):
        _add(store, f"Felix: {text}", START + timedelta(days=n + 1), "Felix")
    assert store.search("Where is the spare key?", k=1, recent=0)[0].id == target
    assert target in store._known  # seen once, now ranked from the cache
    store.forget(target, "moved the key")
    assert target not in [h.id for h in store.search("Where is the spare key?", k=5, recent=0)]
