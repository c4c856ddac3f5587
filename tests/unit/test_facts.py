"""kernel.facts: first-person statements become belief slots; questions and hedges do not."""

import pytest

from kernel.facts import (
    asked_slot,
    contradicted,
    extract_facts,
    misattributed,
    profile_question,
    question_parts,
    recall_question,
    said_to_user,
    second_person,
    told_sentence,
    untold,
)

LOCATION, NAME, EMPLOYER = "user.profile.location", "user.profile.name", "user.profile.employer"
OCCUPATION = "user.profile.occupation"


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
        ("I got relocated to Leeds last spring.", {LOCATION: "Leeds"}),
        # a title or place abbreviation does not end the sentence (it ended it at "Ft", "Dr")
        ("I live in Ft. Lauderdale.", {LOCATION: "Ft. Lauderdale"}),
        ("I moved to St. Louis and I work at Acme.", {LOCATION: "St. Louis", EMPLOYER: "Acme"}),
        ("Hi, I am Dr. Smith.", {}),
        ("I live on Main St. My name is Bo.", {NAME: "Bo"}),
        ("I was living in Porto when we met.", {}),  # past, not where the user lives
        ("What are three tips for learning Portuguese?", {}),
        ("JVM vs Go GC for low latency services: which should I pick?", {}),
        # occupations: a job named by a word of the trade, "work as", or what the user teaches
        ("I teach chemistry.", {OCCUPATION: "chemistry teacher"}),
        (
            "Hi! I'm Dana. I teach chemistry at a high school in Leeds.",
            {NAME: "Dana", OCCUPATION: "chemistry teacher"},
        ),
        # a named workplace after the job is the employer; an unnamed one is not
        ("I work as a nurse at St Mary's.", {OCCUPATION: "nurse", EMPLOYER: "St Mary's"}),
        (
            "Hi! I'm Alex and I work as a nurse at York Hospital.",
            {NAME: "Alex", OCCUPATION: "nurse", EMPLOYER: "York Hospital"},
        ),
        ("I'm a reporter for the BBC.", {OCCUPATION: "reporter", EMPLOYER: "the BBC"}),
        ("I'm a nurse at night.", {OCCUPATION: "nurse"}),
        ("I'm a nurse at Christmas.", {OCCUPATION: "nurse"}),
        ("I'm a nurse with COVID.", {OCCUPATION: "nurse"}),
        ("I'm a tutor for English.", {OCCUPATION: "tutor"}),
        ("I'm an analyst for IBM.", {OCCUPATION: "analyst", EMPLOYER: "IBM"}),
        (
            "I work as a consultant at McKinsey & Company.",
            {OCCUPATION: "consultant", EMPLOYER: "McKinsey & Company"},
        ),
        ("I work as a nurse in London.", {OCCUPATION: "nurse"}),
        # an "and" between two names is inside the name; before "I" it ends the name
        (
            "Hi! I'm Dana. I work as a cook at Marks and Spencer in Leeds.",
            {NAME: "Dana", OCCUPATION: "cook", EMPLOYER: "Marks and Spencer"},
        ),
        ("I work at Procter and Gamble and love it.", {EMPLOYER: "Procter and Gamble"}),
        # names with accents and apostrophes (seen in the chat: "Hi! I'm Tomás." read nothing)
        ("Hi! I'm Tomás.", {NAME: "Tomás"}),
        ("Hello, I'm Chloé Dupont.", {NAME: "Chloé Dupont"}),
        ("Hey, I'm Siobhán O'Brien.", {NAME: "Siobhán O'Brien"}),
        ("Hi! I'm OK.", {}),
        # one "I" for two verbs
        ("I live in Bath and work at Dyson.", {LOCATION: "Bath", EMPLOYER: "Dyson"}),
        ("I work at Arup and live in Bristol.", {EMPLOYER: "Arup", LOCATION: "Bristol"}),
        ("My son lives in Bath and works at Dyson.", {}),
        # "in" a town or a trade is where or what, not for whom
        ("I work in Sheffield.", {}),
        ("I work in Glasgow as a paramedic.", {OCCUPATION: "paramedic"}),
        ("I work in finance.", {}),
        # the name ends where "as …" begins; a job after it is the occupation
        ("I work at Lidl as a shift manager.", {EMPLOYER: "Lidl", OCCUPATION: "shift manager"}),
        (
            "I work for the NHS as a physio in Bristol.",
            {EMPLOYER: "the NHS", OCCUPATION: "physio"},
        ),
        (
            "I work at Johnson & Johnson as a chemist.",
            {EMPLOYER: "Johnson & Johnson", OCCUPATION: "chemist"},
        ),
        ("I work for Adobe as part of a small team.", {EMPLOYER: "Adobe"}),
        ('I work at "Bits and Pieces" now.', {EMPLOYER: "Bits and Pieces"}),
        (
            "I work as a nurse at York Hospital and I love it.",
            {OCCUPATION: "nurse", EMPLOYER: "York Hospital"},
        ),
        ("I work part-time at Tesco.", {EMPLOYER: "Tesco"}),
        # where, when or how much the user works names no employer
        ("I work from home now.", {}),
        ("Hi, I'm Sam and I work nights.", {NAME: "Sam"}),
        ("I work a lot.", {}),
        # a degree adverb starts a predicate, not a value
        ("My wife is too tired to cook.", {}),
        ("I'm a student at the University of Leeds.", {OCCUPATION: "student"}),
        ("I teach chemistry at the local college.", {OCCUPATION: "chemistry teacher"}),
        (
            "I'm a software engineer and I live in York.",
            {OCCUPATION: "software engineer", LOCATION: "York"},
        ),
        ("I'm a big fan of jazz.", {}),
        ("I'm a beginner at chess.", {}),
        ("I'm not a teacher.", {}),
        ("I teach at a primary school.", {}),
        ("I'm a student nurse.", {OCCUPATION: "student nurse"}),
        # not a job the user does for a living now, or not a job at all
        ("I'm a teacher's pet.", {}),
        ("I'm a pilot program participant.", {}),
        ("I'm a former teacher.", {}),
        ("I'm a good cook.", {}),
        ("I teach myself Spanish.", {}),
        ("I work as hard as I can.", {}),
        ("I work as part of a team.", {}),
        # a job word said to be a trade names the occupation; anything else does not
        ("My job is as a teacher, which I love.", {OCCUPATION: "teacher"}),
        ("My profession is a software engineer.", {OCCUPATION: "software engineer"}),
        ("My job is a nightmare.", {"user.profile.job": "a nightmare"}),
        ("My job is as a former teacher.", {}),
        # a job in apposition is the speaker's own; "employed by"; "my home is" a place
        ("As a nurse myself, I know how tiring nights can be.", {OCCUPATION: "nurse"}),
        ("My job as a software engineer keeps me busy.", {OCCUPATION: "software engineer"}),
        ("As a nurse, you would think I sleep well.", {}),
        ("My dream job as a pilot is far away.", {}),
        ("I'm employed by Microsoft.", {EMPLOYER: "Microsoft"}),
        # "my home" may be where the user is from, not where they live now
        (
            "My home is England but I live in Spain.",
            {"user.profile.home": "England", LOCATION: "Spain"},
        ),
        ("As a nurse, my mum worked nights.", {}),
        ("I'm a teacher who retired last year.", {}),
        ("My job as a teacher ended last year.", {}),
        ("I work at Home Depot.", {EMPLOYER: "Home Depot"}),
        ("I work at Google and Sam works at Meta.", {EMPLOYER: "Google"}),
        # found on a second review
        ("I work at Google and Sam, my husband, works at Meta.", {EMPLOYER: "Google"}),
        ("I work at AT&T.", {EMPLOYER: "AT&T"}),
        ("I'm employed by Atlassian.", {EMPLOYER: "Atlassian"}),
        ("I'm a teacher but not anymore.", {}),
        ("I'm a nurse who just retired.", {}),
        ("My job is to help the doctor.", {}),
        ("I'm a friend of a doctor who helped me.", {}),
        ("As a waiter, I learned patience.", {}),
        (
            "I'm a nurse at York Hospital and Sarah is my manager.",
            {OCCUPATION: "nurse", EMPLOYER: "York Hospital"},
        ),
        ("My home is a mess.", {"user.profile.home": "a mess"}),
        ("I'm living in Paris right now.", {LOCATION: "Paris"}),
        # "too" adds nothing to the value
        ("I live in Glasgow too.", {LOCATION: "Glasgow"}),
        ("I'm a teacher too.", {OCCUPATION: "teacher"}),
        ("I'm a nurse who works nights.", {OCCUPATION: "nurse"}),
        # with whom or what is no employer; a home that is over is no home; a town after the name
        ("I work with children.", {}),
        ("I work with Tesla on their batteries.", {}),
        ("I work for myself.", {}),
        (
            "I work with children at a primary school in York.",
            {EMPLOYER: "a primary school in York"},
        ),
        ("I work with my brother at Google.", {EMPLOYER: "Google"}),
        ("I work with my hands at home.", {}),
        # found on review: a name with "in" or "on", a home now after one that was
        ("I work at Jack in the Box.", {EMPLOYER: "Jack in the Box"}),
        (
            "I work at Southend on Sea Borough Council.",
            {EMPLOYER: "Southend on Sea Borough Council"},
        ),
        ("I work with kids at Great Ormond Street.", {EMPLOYER: "Great Ormond Street"}),
        ("I lived in Paris and now I live in Lyon.", {LOCATION: "Lyon"}),
        ("I lived in Paris and moved to Lyon last year.", {LOCATION: "Lyon"}),
        ("I lived in Paris for a year.", {}),
        ("I've lived in Paris for ten years.", {LOCATION: "Paris"}),
        ("I work at B&Q in Leeds.", {EMPLOYER: "B&Q"}),
        ("I work at the Bank of England in London.", {EMPLOYER: "the Bank of England"}),
    ],
)
def test_extract_facts(text: str, expected: dict[str, str]) -> None:
    assert {f.slot_key: f.value for f in extract_facts(text)} == expected


FACTS = {LOCATION: "Porto", NAME: "Dana"}


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("I live in Porto.", ["You live in Porto."]),
        ("My name is Dana.", ["Your name is Dana."]),
        ("I'm glad you asked, I live in Porto.", ["You live in Porto."]),
        ("Hello Dana! I moved to Porto today.", ["You moved to Porto today."]),
        # Qwen2.5-Coder-0.5B through llama.cpp's server, told "Actually I moved to York last month"
        (
            "Sorry for the confusion. I was moved to Porto last month.",
            ["You were moved to Porto last month."],
        ),
        ("I live in the city of Porto.", ["You live in the city of Porto."]),  # SmolLM2
        ("You live in Porto.", []),  # already said to the user
        ("I live in Lisbon.", []),  # not the user's fact: the agent's own (or wrong) claim
        ("I live in the cloud.", []),
        # the agent is never the user: the user's name claimed anywhere in a reply
        # (SmolLM2-135M to "Hi! I'm Alex and I work as a nurse at York Hospital.")
        ("Hi Dana! Hope you're well. I'm Dana and work as a nurse.", ["You're Dana"]),
        ("Yes, I am Dana.", ["You are Dana"]),
        ("I'm Danaë, and I'm Dana's friend.", []),
        ("I’m Dana.", ["You’re Dana"]),
    ],
)
def test_misattributed_facts_are_said_back_to_the_user(reply: str, expected: list[str]) -> None:
    assert [second_person(c) for c in misattributed(reply, FACTS)] == expected


def test_the_users_job_said_with_too_or_after_a_name_is_said_back() -> None:
    facts = {OCCUPATION: "teacher"}
    assert [second_person(c) for c in misattributed("I'm a teacher too.", facts)] == [
        "You're a teacher."
    ]
    # a kind of the job is the agent's own ("a virtual assistant"), or the user's letter
    assert misattributed("I'm a virtual assistant.", {OCCUPATION: "assistant"}) == []
    letter = "Dear Hiring Manager,\n\nI am a registered nurse with five years of experience."
    assert misattributed(letter, {OCCUPATION: "nurse"}) == []
    # SmolLM2-135M in the REPL, to Lena, a nurse: a relative clause after the job
    reply = "Lena, I'm a nurse who lives in Berlin. Now you have it!"
    [clause] = misattributed(reply, {OCCUPATION: "nurse"})
    assert (
        said_to_user(reply, clause) == "Lena, you're a nurse who lives in Berlin. Now you have it!"
    )


def test_the_users_name_is_the_agents_own_only_when_it_is_the_agents_name() -> None:
    assert misattributed("I'm Dana, your assistant.", FACTS) == ["I'm Dana"]
    assert misattributed("I'm Dana, your assistant.", FACTS, own_name="dana") == []


def test_said_to_user_changes_the_claim_not_a_longer_word() -> None:
    reply = "I'm Dana's assistant. I'm Dana."
    [clause] = misattributed(reply, FACTS)
    assert said_to_user(reply, clause) == "I'm Dana's assistant. You're Dana."


def test_told_sentence_names_the_correction() -> None:
    assert told_sentence(LOCATION, "Porto", "Lisbon") == "you live in Porto (not Lisbon)"
    assert told_sentence("user.profile.pet_name", "Luna") == "your pet name is Luna"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Where do I live now?", True),
        ("what's my name", True),
        ("Remind me where I work.", True),
        ("Do you remember my dog's name?", True),
        ("Where should I live?", False),  # advice, not recall
        ("Could you tell me my name?", True),  # a polite request, not advice
        ("Where is Lisbon?", False),  # not about the user
        ("I live in Porto.", False),  # a statement
        # questions about everything the user said
        ("Who am I?", True),
        ("Tell me about myself.", True),
        ("What do you know about me?", True),
    ],
)
def test_recall_question(text: str, expected: bool) -> None:
    assert recall_question(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Who am I?", True),
        ("who am i and what do I do", True),
        ("What do you remember about me?", True),
        ("Do you still remember me?", True),
        ("What have I told you so far?", True),
        ("What do you know about Lisbon?", False),
        ("Who am I supposed to call about the leak", False),
        ("Who am I talking to?", False),  # about the agent
        ("Remember this about me: I hate onions.", False),  # a statement
        ("What did I tell you about Paris?", False),  # one thing, by meaning
        ("So, what do you remember about me?", True),
        ("What's my name?", False),  # one fact, by meaning
    ],
)
def test_profile_question(text: str, expected: bool) -> None:
    assert profile_question(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What's my name and where do I live?", ["What's my name", "where do I live?"]),
        (
            "What's my name, and what am I allergic to?",
            ["What's my name", "what am I allergic to?"],
        ),
        ("Where do salt and pepper come from?", ["Where do salt and pepper come from?"]),
        ("What do I do?", ["What do I do?"]),
    ],
)
def test_question_parts(text: str, expected: list[str]) -> None:
    assert question_parts(text) == expected


def test_asked_slot_by_wording() -> None:
    assert asked_slot("What do I do?") == OCCUPATION
    assert asked_slot("what do I do for a living") == OCCUPATION
    assert asked_slot("What do I do about my back pain?") is None
    # the employer, which the job's description is as near to by meaning (seen in the REPL)
    for question in ("Where do I work?", "Who do I work for now?", "Which company do I work at?"):
        assert asked_slot(question) == "user.profile.employer"
    assert asked_slot("Where do I work out?") is None
    assert asked_slot("Where did I work before?") is None  # not the current employer


def test_said_to_user_capitalises_only_at_a_sentence_start() -> None:
    reply = "Actually, I moved to Porto, and the weather is great."
    [clause] = misattributed(reply, FACTS)
    assert said_to_user(reply, clause) == "Actually, you moved to Porto, and the weather is great."
    reply = "Welcome back! My name is Dana."
    [clause] = misattributed(reply, FACTS)
    assert said_to_user(reply, clause) == "Welcome back! Your name is Dana."


KNOWN = {"user.profile.name": "Alex", "user.profile.location": "York"}


@pytest.mark.parametrize(
    ("reply", "wrong"),
    [
        # SmolLM2-135M on the embedded default, asked "What's my name and where do I live?"
        (
            '(unverified) Your name is "Lil", and you live in the beautiful town of Ashwood.',
            ["user.profile.name", "user.profile.location"],
        ),
        ("You're based in Leeds these days.", ["user.profile.location"]),
        ("You are called Sam.", ["user.profile.name"]),
        ("You live in York, Alex!", []),  # right
        ("Your name is Alex and you live in York.", []),
        ("If you live in Leeds, try the market.", []),  # hedged: asserts nothing
        ("You don't live in Leeds any more.", []),  # negated
        ("I live in the cloud, on a server.", []),  # the agent's own
        ("I think you live in Leeds.", []),  # mixed speakers: left alone
    ],
)
def test_a_reply_that_tells_the_user_a_wrong_fact_is_caught(reply: str, wrong: list[str]) -> None:
    assert [slot for slot, _ in contradicted(reply, KNOWN)] == wrong
    assert all(value == KNOWN[slot] for slot, value in contradicted(reply, KNOWN))


def test_nothing_is_contradicted_without_beliefs() -> None:
    assert contradicted("Your name is Lil.", {}) == []


def test_a_fact_is_told_only_in_a_sentence_the_agent_does_not_claim() -> None:
    facts = {NAME: "Alex", OCCUPATION: "nurse", EMPLOYER: "York Hospital"}
    claimed = "You're Alex, and I'll be your friendly nurse at York Hospital."
    assert untold(claimed, facts) == {OCCUPATION: "nurse", EMPLOYER: "York Hospital"}
    assert untold("You're Alex, a nurse at York Hospital: you told me so.", facts) == {}
    assert untold("I'm proud of my career as a nurse at York Hospital, Alex.", facts) == {
        OCCUPATION: "nurse",
        EMPLOYER: "York Hospital",
    }
    assert untold("Alex, a nurse at York Hospital.", facts) == {}
    assert untold("Your name is Alex. I think you work as a nurse.", facts) == {
        EMPLOYER: "York Hospital"
    }
    # what the agent knows of the user is no claim; values are whole words; lists stay whole
    assert untold("I remember you work at York Hospital, Alex.", facts) == {OCCUPATION: "nurse"}
    assert untold("You're Alexandra, a nursery nurse.", facts) == {
        NAME: "Alex",
        EMPLOYER: "York Hospital",
    }
    assert untold("You speak English and French.", {"langs": "English and French"}) == {}
    assert untold("Anything.", {}) == {}
