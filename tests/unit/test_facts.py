"""kernel.facts: first-person statements become belief slots; questions and hedges do not."""

import pytest

from kernel.facts import extract_facts

LOCATION, NAME, EMPLOYER = "user.profile.location", "user.profile.name", "user.profile.employer"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I live in Lisbon.", {LOCATION: "Lisbon"}),
        # several clauses, each with its own first-person subject
        ("Hi! I'm Dana, I just moved to Lisbon.", {NAME: "Dana", LOCATION: "Lisbon"}),
        ("I moved to Lisbon and I work at Acme.", {LOCATION: "Lisbon", EMPLOYER: "Acme"}),
        ("My sister lives in Rome but I live in Milan.", {LOCATION: "Milan"}),
        # a correction's contrast: the affirmative part asserts
        ("Actually I moved to Porto, not Lisbon.", {LOCATION: "Porto"}),
        ("I live in Porto rather than Lisbon.", {LOCATION: "Porto"}),
        ("I don't live in Paris, I live in Lyon.", {LOCATION: "Lyon"}),
        # introductions count after a greeting only, and never name a nationality
        ("Hey, I'm Sam Lee.", {NAME: "Sam Lee"}),
        ("Hello, I am Japanese and I live in Osaka.", {LOCATION: "Osaka"}),
        ("I'm Dana.", {}),
        ("Hi, I'm tired.", {}),
        # questions, negations and hedges assert nothing
        ("Where do I live now?", {}),
        ("Do I live in Lisbon?", {}),
        ("I don't live in Paris.", {}),
        ("I no longer work at Acme.", {}),
        ("Maybe, I live in Lisbon.", {}),
        ("If I moved to Lisbon, I would be happier.", {}),
        ("What are three tips for learning Portuguese?", {}),
        ("JVM vs Go GC for low latency services: which should I pick?", {}),
    ],
)
def test_extract_facts(text: str, expected: dict[str, str]) -> None:
    assert {f.slot_key: f.value for f in extract_facts(text)} == expected
