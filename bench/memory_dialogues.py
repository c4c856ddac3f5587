"""Seeded long-conversation memory data for ``bench/memory.py`` (issue 15).

Multi-session dialogues between two people over several months: every session has a date, about
a third of the turns carry a fact (told over one to three turns, often with the key detail in a
reply that does not repeat the topic word), the rest is chit-chat and near misses (the other
person on the same topics). Questions come in four kinds, each with the ids of its evidence turns:

* ``single``: one fact ("What is the name of Nora's puppy?"), phrased unlike the turn;
* ``multi``: several facts from different sessions ("Which cities has Nora visited?");
* ``temporal``: when something happened (evidence: the turn; the answer needs its session date)
  or what happened in a named month ("What did Nora start in March 2023?");
* ``open``: general knowledge plus a turn ("Which country did Nora move to?" after "I moved to
  Lyon").

Two template sets that share nothing but the generator: ``dev`` (tune on it) and ``heldout``
(different people, topics, phrasings and question wordings; never tuned on). Everything is
written here by hand; no published benchmark's data or text is used. ``generate(split, seed)``
is deterministic.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

MONTHS = (
    "January February March April May June July August September October November December"
).split()


@dataclass(frozen=True)
class Turn:
    """One utterance of a session."""

    id: str
    speaker: str
    text: str
    when: datetime
    session: int


@dataclass(frozen=True)
class Question:
    """One question with the ids of the turns that hold its answer."""

    id: str
    kind: str
    text: str
    evidence: tuple[str, ...]


@dataclass
class Dialogue:
    """One conversation between two people."""

    id: str
    people: tuple[str, str]
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


@dataclass(frozen=True)
class Frame:
    """A kind of fact: how it is told, and what is asked about it.

    ``values`` maps a slot to its choices (a choice may be a tuple of linked values, spread into
    ``slot``, ``slot_1``, ...). ``tell`` holds alternative scripts of ``(role, text, key)``: role
    ``O`` is the fact's owner, ``F`` the friend; ``key`` marks an evidence turn. ``ask`` holds
    ``(kind, text)``; ``group`` names the multi-fact question family the fact belongs to.
    """

    name: str
    values: dict[str, tuple[Any, ...]]
    tell: tuple[tuple[tuple[str, str, bool], ...], ...]
    ask: tuple[tuple[str, str], ...]
    group: str = ""


@dataclass(frozen=True)
class Templates:
    """One split's people, facts, multi-fact questions, filler and near misses."""

    names: tuple[str, ...]
    frames: tuple[Frame, ...]
    groups: dict[str, tuple[str, ...]]
    filler: tuple[str, ...]
    replies: tuple[str, ...]
    near: tuple[str, ...]
    month_ask: tuple[str, ...]


# ------------------------------------------------------------------------------------ dev split

DEV = Templates(
    names=tuple(
        "Nora Felix Maya Theo Iris Jonah Leah Oscar Ruby Silas Clara Hugo Ava Miles Esme Rafael "
        "Lena Tobias Zoe Arlo".split()
    ),
    frames=(
        Frame(
            "pet",
            {
                "pet": (("puppy", "dog"), ("kitten", "cat"), ("rabbit", "rabbit")),
                "pname": ("Biscuit", "Pepper", "Mochi", "Juniper", "Waffles", "Nimbus", "Olive"),
            },
            (
                (
                    (
                        "O",
                        "Guess what, I finally adopted a {pet} from the shelter last weekend!",
                        True,
                    ),
                    ("F", "No way!! That's amazing. What did you call it?", False),
                    ("O", "{pname}! It already sleeps on my pillow every night.", True),
                ),
                (
                    ("O", "So we brought home a little {pet} on Saturday, I'm in love.", True),
                    ("F", "Aww, send pictures! Does it have a name yet?", False),
                    ("O", "We went with {pname}, the kids picked it.", True),
                ),
            ),
            (
                ("single", "What name did {O} give the {pet} adopted from the shelter?"),
                ("temporal", "When did {O} adopt the {pet}?"),
                ("open", "Is {O} more of a {pet_1} person, given the pet {O} adopted?"),
            ),
            group="animals",
        ),
        Frame(
            "hobby",
            {
                "hobby": (
                    ("pottery class", "ceramics"),
                    ("salsa lessons", "dancing"),
                    ("rock climbing", "climbing"),
                    ("watercolour painting", "painting"),
                    ("sourdough baking", "baking"),
                    ("woodworking", "carpentry"),
                ),
            },
            (
                (
                    (
                        "O",
                        "I signed up for {hobby} a few days ago, first session was so fun.",
                        True,
                    ),
                    ("F", "Oh nice, how did you get into that?", False),
                    ("O", "A coworker dragged me along and now I'm hooked.", False),
                ),
                (
                    ("F", "Have you been doing anything new lately?", False),
                    ("O", "Yes! I started {hobby}, I go every Tuesday evening now.", True),
                ),
            ),
            (
                ("single", "What new activity did {O} start going to every week?"),
                ("temporal", "When did {O} start {hobby}?"),
                ("open", "Would {O} enjoy a gift related to {hobby}?"),
            ),
            group="hobbies",
        ),
        Frame(
            "trip",
            {
                "city": (
                    ("Lisbon", "Portugal"),
                    ("Kyoto", "Japan"),
                    ("Reykjavik", "Iceland"),
                    ("Marrakesh", "Morocco"),
                    ("Vancouver", "Canada"),
                    ("Prague", "the Czech Republic"),
                    ("Cusco", "Peru"),
                ),
                "sight": ("the old town", "a huge food market", "the hot springs", "a castle"),
            },
            (
                (
                    ("O", "Just got back from {city} yesterday, still jetlagged.", True),
                    ("F", "How was it?? I've always wanted to go.", False),
                    ("O", "Unreal. We spent a whole day at {sight} and ate way too much.", True),
                ),
                (
                    ("O", "We booked flights! Heading to {city} for ten days next month.", True),
                    ("F", "Jealous. Send me a postcard.", False),
                ),
            ),
            (
                ("single", "Which city did {O} fly to for a trip?"),
                ("temporal", "When did {O} travel to {city}?"),
                ("open", "Which country was {O}'s trip to {city} in?"),
            ),
            group="places",
        ),
        Frame(
            "job",
            {
                "role": ("nurse", "data analyst", "sous chef", "teacher", "architect", "paramedic"),
                "org": (
                    "a children's hospital",
                    "a logistics startup",
                    "a seafood restaurant",
                    "a public school",
                    "a small design studio",
                ),
            },
            (
                (
                    ("O", "Big news: I accepted an offer as a {role} at {org}!", True),
                    ("F", "Congratulations!! When do you start?", False),
                    ("O", "In two weeks. Nervous but excited.", False),
                ),
                (
                    ("O", "I quit my old job. Starting Monday I'm working as a {role}.", True),
                    ("F", "Wow, that's a big change. Good for you.", False),
                ),
            ),
            (
                ("single", "What new job did {O} accept?"),
                ("temporal", "When did {O} start working as a {role}?"),
                ("open", "Does {O}'s job as a {role} involve working with people?"),
            ),
            group="work",
        ),
        Frame(
            "move",
            {
                "city": (
                    ("Lyon", "France"),
                    ("Leeds", "England"),
                    ("Denver", "the US"),
                    ("Turin", "Italy"),
                    ("Ghent", "Belgium"),
                )
            },
            (
                (
                    ("O", "We're finally moving to {city}, the lease is signed!", True),
                    ("F", "That's so far! Why there?", False),
                    ("O", "My partner got transferred, and honestly I needed a change.", False),
                ),
                (
                    ("O", "Unpacking boxes in our new flat in {city}, total chaos.", True),
                    ("F", "Haha good luck. Do you like the neighbourhood?", False),
                    ("O", "Love it, there's a bakery right downstairs.", False),
                ),
            ),
            (
                ("single", "Which city is {O} moving to?"),
                ("temporal", "When did {O} move to the new flat in {city}?"),
                ("open", "Which country does {O} live in after moving?"),
            ),
            group="places",
        ),
        Frame(
            "race",
            {
                "race": (
                    "a half marathon",
                    "a 10k charity run",
                    "a triathlon",
                    "a cycling sportive",
                ),
                "time": (
                    "under two hours",
                    "in 52 minutes",
                    "without stopping once",
                    "in the top hundred",
                ),
            },
            (
                (
                    ("O", "I did it, I finished {race} this morning!", True),
                    ("F", "Amazing, how did it go?", False),
                    ("O", "I made it {time}, my legs are jelly.", True),
                ),
                (
                    ("O", "Training is brutal, I'm running {race} at the end of the month.", True),
                    ("F", "You're going to crush it.", False),
                ),
            ),
            (
                ("single", "Which race did {O} run?"),
                ("temporal", "When did {O} run {race}?"),
                ("open", "Is {O} someone who keeps physically fit?"),
            ),
            group="sport",
        ),
        Frame(
            "book",
            {
                "book": (
                    ("a mystery novel set on a train", "mystery"),
                    ("a memoir by a mountain guide", "memoir"),
                    ("a sci-fi trilogy about a generation ship", "science fiction"),
                    ("a cookbook of Lebanese recipes", "cookbook"),
                ),
            },
            (
                (
                    ("O", "I can't put down this book, it's {book}.", True),
                    ("F", "Ooh, lend it to me when you're done?", False),
                ),
                (
                    ("F", "Read anything good recently?", False),
                    ("O", "Just finished {book}. Stayed up till 2am for the ending.", True),
                ),
            ),
            (
                ("single", "What book could {O} not put down?"),
                ("temporal", "When was {O} reading {book}?"),
                ("open", "What genre is the book {O} was reading?"),
            ),
            group="reading",
        ),
        Frame(
            "family",
            {
                "event": (
                    ("my sister had a baby girl", "niece"),
                    ("my brother got engaged", "engagement"),
                    ("my parents celebrated their 40th anniversary", "anniversary"),
                    ("my grandma turned ninety", "birthday"),
                ),
            },
            (
                (
                    ("O", "Family update: {event}!", True),
                    ("F", "Oh that's wonderful news, congrats to all of you.", False),
                    ("O", "Thanks! We had a big dinner to celebrate.", False),
                ),
            ),
            (
                ("single", "What family news did {O} share?"),
                ("temporal", "When did {O} share the family update about the {event_1}?"),
            ),
            group="family",
        ),
        Frame(
            "health",
            {
                "injury": (
                    ("sprained my ankle", "ankle"),
                    ("broke my wrist", "wrist"),
                    ("hurt my back", "back"),
                )
            },
            (
                (
                    ("O", "Ugh, I {injury} playing football, out for weeks.", True),
                    ("F", "Oh no! Take care of yourself.", False),
                    ("O", "The physio says no sport until it heals properly.", True),
                ),
            ),
            (
                ("single", "What injury did {O} get playing football?"),
                ("temporal", "When did {O} get injured playing football?"),
                ("open", "Could {O} play sport while the injury healed?"),
            ),
            group="sport",
        ),
        Frame(
            "food",
            {
                "dish": (
                    "mushroom risotto",
                    "homemade ramen",
                    "a lemon tart",
                    "vegan lasagna",
                    "paella",
                )
            },
            (
                (
                    ("O", "I tried cooking {dish} for the first time, it turned out great!", True),
                    ("F", "Recipe please!", False),
                ),
                (
                    ("F", "What did you have for dinner?", False),
                    ("O", "I made {dish} from scratch, took three hours.", True),
                ),
            ),
            (
                ("single", "What dish did {O} cook for the first time?"),
                ("open", "Does {O} enjoy cooking dinner at home?"),
            ),
            group="cooking",
        ),
    ),
    groups={
        "animals": ("What pets does {O} have?", "Which animals has {O} adopted?"),
        "hobbies": ("What activities has {O} picked up?", "Which hobbies has {O} started?"),
        "places": ("Which cities has {O} been to or lived in?", "What places has {O} mentioned?"),
        "work": ("What jobs has {O} had?",),
        "sport": ("What has {O} said about sports and fitness?",),
        "reading": ("What books has {O} read?",),
        "cooking": ("What dishes has {O} made?",),
    },
    filler=(
        "Hey! How's your week going?",
        "Pretty hectic, work has been nonstop.",
        "Same here honestly. I need a holiday.",
        "Did you see the weather? It's been raining all day.",
        "I'm so tired today, I barely slept.",
        "Haha that sounds like you.",
        "Anyway, what are you up to this weekend?",
        "Not much, probably just relaxing at home.",
        "I've been binge watching a cooking show, it's addictive.",
        "Can't believe it's already the end of the month.",
        "We should grab coffee soon.",
        "Totally, let me know when you're free.",
        "I finally cleaned my whole apartment, feels great.",
        "My phone screen cracked again, so annoying.",
        "How are your parents doing?",
        "They're good, thanks for asking!",
        "Talk soon, take care!",
        "Good morning! Hope you slept well.",
    ),
    replies=(
        "That's awesome!",
        "Haha, love that.",
        "Oh wow, tell me more.",
        "That sounds really nice.",
        "I'm so happy for you!",
        "Ha, typical.",
        "Yeah, I know what you mean.",
        "Ooh, exciting!",
    ),
    near=(
        "My cousin has a {pet} too, it chews everything.",
        "I thought about trying {hobby} once but never did.",
        "A friend of mine just came back from {city}.",
        "My neighbour works as a {role}, long shifts.",
        "I watched people run {race} on TV, looked painful.",
        "I keep meaning to read {book}, everyone talks about it.",
        "I ordered {dish} at a restaurant last night.",
    ),
    month_ask=(
        "What did {O} tell {F} about in {month} {year}?",
        "What was new with {O} in {month} {year}?",
    ),
)


# ------------------------------------------------------------------------------- held-out split

HELDOUT = Templates(
    names=tuple(
        "Priya Dmitri Ingrid Kwame Soledad Bastian Mirela Tomasz Aisha Leif Carmen Yusuf Hedda "
        "Emil Noemi Rashid Greta Anton Lucia Idris".split()
    ),
    frames=(
        Frame(
            "instrument",
            {
                "instrument": (
                    ("the cello", "cello"),
                    ("the ukulele", "ukulele"),
                    ("the drums", "drums"),
                    ("jazz piano", "piano"),
                )
            },
            (
                (
                    (
                        "O",
                        "So I bought a second-hand instrument and I'm learning {instrument}.",
                        True,
                    ),
                    ("F", "You? Music? Since when?", False),
                    (
                        "O",
                        "Since my teacher said it's never too late, lessons every Thursday.",
                        True,
                    ),
                ),
                (
                    (
                        "O",
                        "My fingers hurt, I practised {instrument} for two hours straight.",
                        True,
                    ),
                    ("F", "Dedication! Play me something next time.", False),
                ),
            ),
            (
                ("single", "Which instrument is {O} practising?"),
                ("temporal", "When did {O} begin learning {instrument}?"),
                ("open", "Is the instrument {O} plays a string instrument?"),
            ),
            group="music",
        ),
        Frame(
            "concert",
            {
                "band": (
                    "a folk duo from Galway",
                    "an old punk band on a reunion tour",
                    "a symphony orchestra",
                    "a K-pop group",
                )
            },
            (
                (
                    ("O", "Last night's gig was incredible, we saw {band} live.", True),
                    ("F", "Was it loud? I bet it was packed.", False),
                    ("O", "Completely packed, I lost my voice singing along.", False),
                ),
            ),
            (
                ("single", "Who did {O} see live at the gig?"),
                ("temporal", "When did {O} see {band} live?"),
            ),
            group="music",
        ),
        Frame(
            "garden",
            {
                "plant": (
                    ("tomatoes and chillies", "tomatoes"),
                    ("a row of sunflowers", "sunflowers"),
                    ("strawberries", "strawberries"),
                    ("herbs like basil and mint", "herbs"),
                )
            },
            (
                (
                    (
                        "O",
                        "Our allotment finally came through, I planted {plant} over the weekend.",
                        True,
                    ),
                    ("F", "Green thumb! Do you know what you're doing?", False),
                    ("O", "Not at all, I'm watching videos every evening.", False),
                ),
                (
                    ("F", "How's the balcony garden?", False),
                    ("O", "Thriving, the {plant_1} are taking over everything.", True),
                ),
            ),
            (
                ("single", "What did {O} plant in the allotment or garden?"),
                ("temporal", "When did {O} plant the {plant_1}?"),
                ("open", "Does {O} need a sunny spot for what they grow?"),
            ),
            group="outdoors",
        ),
        Frame(
            "course",
            {
                "course": (
                    ("an evening course in Spanish", "Spanish"),
                    ("a night class on accounting", "accounting"),
                    ("a coding bootcamp", "coding"),
                    ("a sign language course", "sign language"),
                )
            },
            (
                (
                    ("O", "I enrolled in {course}, homework every week, send help.", True),
                    ("F", "Haha back to school. What made you do it?", False),
                    ("O", "I want to switch careers eventually.", True),
                ),
            ),
            (
                ("single", "What course did {O} enroll in?"),
                ("temporal", "When did {O} enroll in {course}?"),
                ("open", "Why might {O} benefit from studying {course_1}?"),
            ),
            group="learning",
        ),
        Frame(
            "vehicle",
            {
                "vehicle": (
                    ("an electric scooter", "scooter"),
                    ("a vintage Vespa", "Vespa"),
                    ("a cargo bike", "bike"),
                    ("a used camper van", "van"),
                )
            },
            (
                (
                    ("O", "Treated myself: I bought {vehicle}!", True),
                    ("F", "Nice! Where are you going to take it?", False),
                    ("O", "Everywhere, no more waiting for the bus.", False),
                ),
                (
                    ("O", "The mechanic says my {vehicle_1} needs new brakes already.", True),
                    ("F", "Ugh, second-hand stuff, right?", False),
                ),
            ),
            (
                ("single", "What did {O} buy to stop waiting for the bus?"),
                ("temporal", "When did {O} get the {vehicle_1}?"),
                ("open", "Does {O} still rely on public transport?"),
            ),
            group="things",
        ),
        Frame(
            "renovation",
            {
                "room": ("the kitchen", "the bathroom", "the attic", "the spare bedroom"),
                "colour": ("sage green", "navy blue", "terracotta", "off-white"),
            },
            (
                (
                    ("O", "We're redoing {room}, it's dust everywhere.", True),
                    ("F", "Brave. What colour are you going for?", False),
                    ("O", "{colour}, my partner wasn't sure but I won.", True),
                ),
            ),
            (
                ("single", "Which room is {O} redoing?"),
                ("temporal", "When was {O} redoing {room}?"),
                ("open", "Is the colour {O} chose for {room} warm or cool?"),
            ),
            group="things",
        ),
        Frame(
            "wedding",
            {
                "friend": (
                    "my college roommate",
                    "my oldest friend",
                    "my cousin Marta",
                    "a colleague from my first job",
                ),
                "place": ("a vineyard", "a lighthouse", "a beach in Crete", "an old barn"),
            },
            (
                (
                    ("O", "I was a bridesmaid at {friend}'s wedding, at {place}!", True),
                    ("F", "That sounds gorgeous. Did you cry?", False),
                    ("O", "During the speeches, obviously.", False),
                ),
            ),
            (
                ("single", "Whose wedding was {O} a bridesmaid at?"),
                ("temporal", "When was {O} at the wedding at {place}?"),
                ("open", "Was the wedding {O} went to at {place} held indoors?"),
            ),
            group="events",
        ),
        Frame(
            "volunteer",
            {
                "cause": (
                    ("a food bank", "food bank"),
                    ("an animal rescue", "animal rescue"),
                    ("a literacy charity", "literacy"),
                    ("a beach clean-up group", "clean-up"),
                )
            },
            (
                (
                    ("O", "I started volunteering with {cause} on Sundays.", True),
                    ("F", "That's really kind of you.", False),
                    ("O", "It's rewarding, I meet so many people there.", False),
                ),
            ),
            (
                ("single", "Where does {O} volunteer on Sundays?"),
                ("temporal", "When did {O} start volunteering with {cause}?"),
                ("open", "Does {O} care about helping the community?"),
            ),
            group="events",
        ),
        Frame(
            "gadget",
            {
                "gadget": (
                    ("a film camera", "camera"),
                    ("a smart watch", "watch"),
                    ("an e-reader", "e-reader"),
                    ("a drone", "drone"),
                )
            },
            (
                (
                    ("F", "You sound excited, what happened?", False),
                    ("O", "My new toy arrived: {gadget}. I've been playing with it all day.", True),
                ),
            ),
            (
                ("single", "What new toy arrived for {O}?"),
                ("open", "Could {O} take photos with the new {gadget_1}?"),
            ),
            group="things",
        ),
    ),
    groups={
        "music": ("What has {O} been doing with music?",),
        "outdoors": ("What has {O} planted?",),
        "learning": ("What has {O} been learning?",),
        "things": (
            "What has {O} bought or fixed recently?",
            "What purchases has {O} talked about?",
        ),
        "events": ("What social or community events has {O} been part of?",),
    },
    filler=(
        "Morning! Coffee hasn't kicked in yet.",
        "Long day, my commute took forever.",
        "Did you watch the match last night?",
        "Nope, I fell asleep on the sofa.",
        "My landlord still hasn't fixed the heating.",
        "It's freezing here today.",
        "Any plans for the holidays?",
        "Probably visiting family, the usual.",
        "I need to stop ordering takeaway.",
        "Same, my wallet is crying.",
        "Let's catch up properly soon.",
        "Deal, text me when you're around.",
        "I've had a headache all afternoon.",
        "Hope you feel better!",
        "Night night, chat tomorrow.",
        "The office is so quiet this week.",
    ),
    replies=(
        "Haha no way.",
        "Love it!",
        "Nice one.",
        "Oh, that's cool.",
        "Wow, good for you.",
        "Fair enough.",
        "Sounds lovely.",
    ),
    near=(
        "My brother tried {instrument} once, gave up in a week.",
        "Someone at work is growing {plant} too.",
        "I almost signed up for {course} years ago.",
        "Saw {vehicle} parked outside my place, so cute.",
        "My aunt volunteers at {cause}.",
        "I keep seeing ads for {gadget}.",
    ),
    month_ask=(
        "What news did {O} share in {month} {year}?",
        "What happened in {O}'s life during {month} {year}?",
    ),
)

SPLITS = {"dev": DEV, "heldout": HELDOUT}


# ------------------------------------------------------------------------------------ generator


def _fill(text: str, values: dict[str, str]) -> str:
    return text.format(**values)


def _pick(rng: random.Random, frame: Frame) -> dict[str, str]:
    values: dict[str, str] = {}
    for slot, choices in frame.values.items():
        choice = rng.choice(choices)
        if isinstance(choice, tuple):
            values[slot] = choice[0]
            for i, part in enumerate(choice[1:], start=1):
                values[f"{slot}_{i}"] = part
        else:
            values[slot] = choice
    return values


def _dialogue(
    rng: random.Random, tpl: Templates, index: int, people: tuple[str, str], start: datetime
) -> Dialogue:
    dia = Dialogue(id=f"d{index}", people=people)
    sessions = rng.randint(18, 26)
    when = start
    tellings: list[tuple[str, Frame, dict[str, str], list[str], datetime]] = []
    near_values: dict[str, str] = {}
    told: Counter[tuple[str, str]] = Counter()
    for frame in tpl.frames:
        near_values.update(_pick(rng, frame))
    for s in range(1, sessions + 1):
        when = when + timedelta(days=rng.randint(4, 16), hours=rng.randint(-3, 3))
        chat = rng.sample(tpl.filler + tpl.replies, len(tpl.filler + tpl.replies))
        turns: list[tuple[str, str, str]] = []  # (speaker, text, tag)
        for _ in range(rng.randint(3, 6)):
            turns.append((rng.choice(people), chat.pop(), ""))
        facts = rng.sample(tpl.frames, rng.randint(1, 2))
        for frame in facts:
            owner = rng.choice(people)
            friend = people[1] if owner == people[0] else people[0]
            if told[(owner, frame.name)] >= (2 if frame.group else 1):
                continue
            told[(owner, frame.name)] += 1
            values = _pick(rng, frame)
            script = rng.choice(frame.tell)
            at = rng.randint(0, len(turns))
            block = []
            for n, (role, text, key) in enumerate(script):
                who = owner if role == "O" else friend
                block.append((who, _fill(text, values), f"fact{len(tellings)}:{n}:{int(key)}"))
            turns[at:at] = block
            tellings.append((owner, frame, values, [], when))
        for _ in range(rng.randint(6, 14)):
            at = rng.randint(0, len(turns))
            if rng.random() < 0.25:
                line = _fill(rng.choice(tpl.near), near_values)
            else:
                line = chat.pop() if chat else rng.choice(tpl.replies)
            turns.insert(at, (rng.choice(people), line, ""))
        for t, (speaker, text, tag) in enumerate(turns):
            turn = Turn(
                id=f"{dia.id}:s{s}:t{t}",
                speaker=speaker,
                text=text,
                when=when + timedelta(minutes=2 * t),
                session=s,
            )
            dia.turns.append(turn)
            if tag:
                fact, _n, key = tag.split(":")
                if key == "1":
                    tellings[int(fact[4:])][3].append(turn.id)
    _questions(rng, tpl, dia, tellings)
    return dia


def _questions(
    rng: random.Random,
    tpl: Templates,
    dia: Dialogue,
    tellings: list[tuple[str, Frame, dict[str, str], list[str], datetime]],
) -> None:
    def ask(kind: str, text: str, evidence: list[str]) -> None:
        dia.questions.append(
            Question(f"{dia.id}:q{len(dia.questions)}", kind, text, tuple(dict.fromkeys(evidence)))
        )

    seen: set[tuple[str, str, str]] = set()
    for owner, frame, values, evidence, _when in tellings:
        friend = dia.people[1] if owner == dia.people[0] else dia.people[0]
        filled = {**values, "O": owner, "F": friend}
        for kind, text in frame.ask:
            question = _fill(text, filled)
            if (owner, frame.name, question) in seen:
                continue  # the same question about a repeated fact would be ambiguous
            seen.add((owner, frame.name, question))
            same = [t for t in tellings if t[0] == owner and t[1].name == frame.name]
            if len(same) > 1:
                continue  # "What is Nora's pet's name?" with two pets: left to multi
            ask(kind, question, evidence)
    for person in dia.people:
        other = dia.people[1] if person == dia.people[0] else dia.people[0]
        for group, texts in tpl.groups.items():
            facts = [t for t in tellings if t[0] == person and t[1].group == group]
            if len(facts) >= 2:
                text = rng.choice(texts)
                ask(
                    "multi",
                    _fill(text, {"O": person, "F": other}),
                    [e for f in facts for e in f[3]],
                )
        by_month: dict[tuple[int, int], list[str]] = {}
        for owner, _frame, _values, evidence, when in tellings:
            if owner == person:
                by_month.setdefault((when.year, when.month), []).extend(evidence)
        for (year, month), evidence in sorted(by_month.items()):
            if rng.random() < 0.2:
                text = rng.choice(tpl.month_ask)
                filled = {"O": person, "F": other, "month": MONTHS[month - 1], "year": str(year)}
                ask("temporal", _fill(text, filled), evidence)


def generate(split: str, seed: int = 15, dialogues: int = 10) -> list[Dialogue]:
    """Return ``dialogues`` seeded conversations of the ``dev`` or ``heldout`` template set."""
    tpl = SPLITS[split]
    rng = random.Random(f"{split}:{seed}")
    names = list(tpl.names)
    rng.shuffle(names)
    out = []
    for i in range(dialogues):
        people = (names[(2 * i) % len(names)], names[(2 * i + 1) % len(names)])
        start = datetime(2022 + i % 3, 1 + rng.randrange(12), 1 + rng.randrange(28), 18, tzinfo=UTC)
        out.append(_dialogue(rng, tpl, i, people, start))
    return out


if __name__ == "__main__":
    for split in SPLITS:
        data = generate(split)
        kinds = Counter(q.kind for d in data for q in d.questions)
        print(split, sum(len(d.turns) for d in data), "turns", dict(kinds))
        d = data[0]
        for t in d.turns[:30]:
            print(" ", t.id, t.when.date(), t.speaker + ":", t.text)
        for q in d.questions[:12]:
            print(" ", q.kind, q.text, q.evidence)
