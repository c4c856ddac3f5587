"""Deterministic synthetic data for ``bench/memory.py``.

Two generators, both driven by a seeded ``random.Random`` and independent of the store:

* ``scale_corpus`` / ``scale_queries``: template text over many vocabularies (people, places,
  projects, money, bugs, recipes, trips, goals ...) with numbers, for the index-size benchmark.
* ``conversation``: a ~60-day, multi-session chat between a user and the agent with planted facts
  about the user, later corrections of about a third of them, near-miss statements about other
  people on the same topics, lots of chit-chat, and one question per fact.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

# ---------------------------------------------------------------------------------- vocabularies

FIRST_NAMES = (
    "Ada Ben Chloe Dario Eun Farah Gil Hana Ivo Jana Kofi Lena Milo Nadia Omar Pia Quinn Rhea "
    "Sven Tara Umar Vera Wes Xia Yara Zane Aurelio Bette Cyrus Delphine Emeka Freya Goran Hiro "
    "Isla Jude Katya Luca Mei Nils Orla Pavel Soren Thea Ugo Vivian Wren"
).split()
LAST_NAMES = (
    "Abbott Baptiste Castillo Dubois Eriksen Fischer Gonzaga Haddad Ito Jansen Kowalski "
    "Lindqvist Moreau Nakamura Okafor Petrov Quinlan Rossi Santos Takahashi Ueda Varga Walsh "
    "Yilmaz Zielinski"
).split()
CITIES = (
    "Lisbon",
    "Porto",
    "Madrid",
    "Lyon",
    "Leeds",
    "Rotterdam",
    "Krakow",
    "Montreal",
    "Melbourne",
    "Austin",
    "Nairobi",
    "Osaka",
    "Tallinn",
    "Valencia",
    "Glasgow",
    "Seville",
    "Bologna",
    "Ghent",
    "Bergen",
    "Quito",
    "Hanoi",
    "Denver",
    "Cape Town",
    "Vilnius",
    "Marseille",
    "Hamburg",
    "Dublin",
    "Reykjavik",
    "Busan",
    "Lima",
)
PROJECTS = (
    "Atlas Borealis Cobalt Delta Ember Fjord Granite Harbor Iris Juniper Kestrel Mosaic Nimbus "
    "Orchid Pebble Quartz Raven Sable Tundra Umber Vortex Willow Xenon Yarrow Zephyr"
).split()
ARTIFACTS = (
    "roadmap budget migration prototype launch review postmortem dashboard contract proposal "
    "audit rollout spec"
).split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
MONTHS = (
    "January February March April May June July August September October November December"
).split()
PRODUCTS = (
    "noise-cancelling headphones",
    "a standing desk",
    "hiking boots",
    "a cast-iron pan",
    "a yoga mat",
    "printer ink",
    "a bike helmet",
    "winter tyres",
    "a rice cooker",
    "a mechanical keyboard",
    "running shoes",
    "a two-person tent",
    "a coffee grinder",
    "a secondhand sofa",
    "a drill",
    "concert tickets",
    "a houseplant",
    "a winter coat",
    "a baby monitor",
    "train tickets",
)
SHOPS = (
    "the corner shop",
    "the farmers' market",
    "the hardware store",
    "an online outlet",
    "the airport duty free",
    "the pharmacy",
    "a flea market",
    "the department store",
    "a charity shop",
)
CURRENCIES = "EUR GBP USD CHF SEK JPY".split()
DISHES = (
    "lentil soup",
    "banana bread",
    "chicken tagine",
    "miso aubergine",
    "fish pie",
    "gazpacho",
    "carrot cake",
    "pad thai",
    "goulash",
    "focaccia",
    "tiramisu",
    "dumplings",
    "bibimbap",
    "shepherd's pie",
)
INGREDIENTS = (
    "flour butter sugar rice lentils paprika ginger garlic tahini feta spinach chickpeas yoghurt "
    "cumin oats"
).split()
COMPONENTS = (
    "auth service",
    "payment gateway",
    "CSV importer",
    "search index",
    "cron scheduler",
    "image resizer",
    "websocket layer",
    "PDF exporter",
    "cache warmer",
    "retry queue",
    "billing job",
    "mobile sync",
)
ERRORS = (
    "a KeyError",
    "a timeout",
    "a 502",
    "a null pointer exception",
    "an off-by-one",
    "a deadlock",
    "a memory leak",
    "a race condition",
    "a UnicodeDecodeError",
    "a stack overflow",
)
CONDITIONS = (
    "the input is empty",
    "two users save at once",
    "the locale is Turkish",
    "the file is over 2 GB",
    "the token expires mid-request",
    "daylight saving starts",
    "the queue backs up",
    "the network drops for a second",
)
CONCEPTS = (
    "entropy",
    "compound interest",
    "photosynthesis",
    "game theory",
    "plate tectonics",
    "the Krebs cycle",
    "Bayesian priors",
    "supply chains",
    "stoicism",
    "the French Revolution",
    "CRISPR",
    "black holes",
    "inflation",
    "the placebo effect",
    "opportunity cost",
    "circadian rhythms",
)
ADJECTIVES = (
    "surprising dense brilliant tedious moving confusing hilarious eye-opening dry beautiful "
    "bleak clever"
).split()
BOOK_TITLES = (
    "The Salt Road",
    "Glass Orchards",
    "A Map of Small Hours",
    "The Quiet Engine",
    "Rivers of Copper",
    "Night Ferry",
    "The Last Cartographer",
    "Paper Lanterns",
    "Winter Arithmetic",
    "The Orchard Keeper's Daughter",
)
AIRLINES = "TP LH BA IB KL AF SK FR U2 AZ".split()
LANDMARKS = (
    "the canal",
    "the old harbour",
    "the botanical garden",
    "the cathedral",
    "the river path",
    "the central station",
    "the university library",
    "the night market",
    "the lighthouse",
    "the city park",
)
DOCUMENTS = (
    "passport",
    "driving licence",
    "car insurance",
    "gym membership",
    "residence permit",
    "domain name",
    "library card",
    "health insurance",
    "TV licence",
)
TECHNIQUES = (
    "caching",
    "batching",
    "a bloom filter",
    "lazy loading",
    "sharding",
    "a priority queue",
    "memoization",
    "compression",
    "pagination",
    "a read replica",
)
METRICS = "latency|cloud costs|build time|error rate|page weight|memory use|churn".split("|")
SKILLS = (
    "Spanish verbs",
    "SQL window functions",
    "knife skills",
    "touch typing",
    "music theory",
    "first aid",
    "bouldering technique",
    "watercolour washes",
    "public speaking",
    "bread scoring",
)
MOODS = "tired|wired|calm|anxious|cheerful|flat|restless|content|grumpy|hopeful".split("|")


def _money(rng: random.Random) -> str:
    return f"{rng.randint(3, 900)}.{rng.randint(0, 99):02d}"


SLOTS: dict[str, Callable[[random.Random], str]] = {
    "person": lambda r: f"{r.choice(FIRST_NAMES)} {r.choice(LAST_NAMES)}",
    "first": lambda r: r.choice(FIRST_NAMES),
    "city": lambda r: r.choice(CITIES),
    "project": lambda r: r.choice(PROJECTS),
    "artifact": lambda r: r.choice(ARTIFACTS),
    "weekday": lambda r: r.choice(WEEKDAYS),
    "month": lambda r: r.choice(MONTHS),
    "day": lambda r: str(r.randint(1, 28)),
    "hour": lambda r: str(r.randint(7, 21)),
    "minute": lambda r: f"{r.choice(range(0, 60, 5)):02d}",
    "product": lambda r: r.choice(PRODUCTS),
    "shop": lambda r: r.choice(SHOPS),
    "amount": _money,
    "currency": lambda r: r.choice(CURRENCIES),
    "dish": lambda r: r.choice(DISHES),
    "ingredient": lambda r: r.choice(INGREDIENTS),
    "grams": lambda r: str(r.choice(range(25, 800, 25))),
    "minutes": lambda r: str(r.randint(5, 95)),
    "temp": lambda r: str(r.choice(range(150, 250, 10))),
    "component": lambda r: r.choice(COMPONENTS),
    "error": lambda r: r.choice(ERRORS),
    "condition": lambda r: r.choice(CONDITIONS),
    "ticket": lambda r: f"#{r.randint(100, 9999)}",
    "concept": lambda r: r.choice(CONCEPTS),
    "adjective": lambda r: r.choice(ADJECTIVES),
    "book": lambda r: r.choice(BOOK_TITLES),
    "chapter": lambda r: str(r.randint(1, 30)),
    "flight": lambda r: f"{r.choice(AIRLINES)}{r.randint(100, 2999)}",
    "gate": lambda r: f"{r.choice('ABCDEF')}{r.randint(1, 40)}",
    "landmark": lambda r: r.choice(LANDMARKS),
    "document": lambda r: r.choice(DOCUMENTS),
    "technique": lambda r: r.choice(TECHNIQUES),
    "metric": lambda r: r.choice(METRICS),
    "percent": lambda r: str(r.randint(5, 60)),
    "km": lambda r: f"{r.uniform(2, 30):.1f}",
    "bpm": lambda r: str(r.randint(110, 175)),
    "count": lambda r: str(r.randint(2, 12)),
    "skill": lambda r: r.choice(SKILLS),
    "mood": lambda r: r.choice(MOODS),
    "hours": lambda r: f"{r.uniform(4, 9.5):.1f}",
    "score": lambda r: str(r.randint(1, 10)),
}

# -------------------------------------------------------------------------- scale corpus text

SCALE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "external": (
        "Meeting with {person} about the {project} {artifact} moved to {weekday} at "
        "{hour}:{minute}.",
        "Paid {amount} {currency} for {product} at {shop} in {city}.",
        "Recipe note: the {dish} needs {grams} g of {ingredient} and {minutes} minutes at {temp} "
        "degrees.",
        "Bug {ticket} in {project}: the {component} throws {error} when {condition}.",
        "Reading {book}, chapter {chapter} on {concept} was {adjective}.",
        "Flight {flight} from {city} to {city2} leaves {month} {day}, gate {gate}.",
        "{first} recommended a {adjective} {dish} place near {landmark} in {city}.",
        "Ran {km} km along {landmark}, average heart rate {bpm}.",
        "Reminder: renew the {document} before {month} {day}; the fee is {amount} {currency}.",
        "Idea for {project}: use {technique} to cut {metric} by {percent}%.",
        "Slept {hours} hours, felt {mood}; rated the day {score} out of 10.",
        "{person} owes me {amount} {currency} for the {product}.",
        "Dinner at {first}'s in {city}: {dish}, then {dish2} for dessert.",
        "The {project} {artifact} got pushed to {month}; {person} is the owner now.",
        "Watched a talk on {concept} by {person}, pretty {adjective}.",
        "Need {count} more {ingredient} packets before {weekday}'s {dish}.",
    ),
    "self": (
        "I summarised {person}'s notes on {concept}: {count} key points, mostly about {concept2}.",
        "I suggested {technique} for the {component} in {project}; estimated {metric} drop "
        "{percent}%.",
        "I drafted an email to {person} about the {project} {artifact} and left it for review.",
        "I found {count} flights from {city} to {city2} in {month}; the cheapest was {amount} "
        "{currency}.",
        "I noticed the user seemed {mood} after the {project} {artifact} discussion.",
        "I explained {concept} with an example about {product}; the user found it {adjective}.",
        "I set a reminder for the {document} renewal on {month} {day}.",
        "I converted the {dish} recipe to {count} servings: {grams} g {ingredient}.",
        "I checked bug {ticket}: {error} in the {component}, likely when {condition}.",
        "I recommended {book} after the chat about {concept}.",
        "My estimate for the trip to {city}: {amount} {currency} over {count} days.",
        "I reflected that my answer about {concept} was too long; aim for {count} sentences.",
    ),
    "goal": (
        "Goal: finish the {project} {artifact} by {month} {day}.",
        "Goal: help the user practise {skill} {count} times a week.",
        "Goal: save {amount} {currency} towards {product} by {month}.",
        "Goal: read {book} before the trip to {city}.",
        "Goal: get {metric} in {project} down by {percent}% this quarter.",
        "Goal: learn more about {concept} to answer questions on it better.",
    ),
}
SCALE_AUTHORS = ("external", "self", "goal")
SCALE_AUTHOR_WEIGHTS = (0.45, 0.45, 0.10)
SCALE_START = datetime(2024, 3, 1, 8, 0, tzinfo=UTC)
SCALE_SPAN = timedelta(days=730)

QUERY_TEMPLATES = (
    "What did {person} say about the {project} {artifact}?",
    "How much did I pay for {product}?",
    "When is my flight to {city}?",
    "notes on {concept}",
    "Which bug in {project} had {error}?",
    "Where was that {dish} place {first} liked?",
    "When does my {document} need renewing?",
    "How far did I run along {landmark}?",
    "How can {project} reduce {metric}?",
    "What is in the {dish} recipe?",
    "Who owns the {project} {artifact} now?",
    "How did I sleep in {month}?",
    "Did I read {book}?",
    "What do I owe {first}?",
    "trip costs for {city} in {month}",
    "{component} problems when {condition}",
    "What are my goals around {skill}?",
    "Who did I have dinner with in {city}?",
)

_FIELD_CACHE: dict[str, list[str]] = {}


def fill(template: str, rng: random.Random, **fixed: str) -> str:
    """Fill a template's ``{slot}`` fields (``city2`` draws another ``city``); ``fixed`` wins."""
    names = _FIELD_CACHE.get(template)
    if names is None:
        names = [name for _, name, _, _ in string.Formatter().parse(template) if name]
        _FIELD_CACHE[template] = names
    values = dict(fixed)
    for name in names:
        if name not in values:
            values[name] = SLOTS[re.sub(r"\d+$", "", name)](rng)
    return template.format(**values)


@dataclass(frozen=True)
class Memory:
    """One memory to add: text, author and time."""

    text: str
    author: str
    timestamp: datetime


def scale_text(rng: random.Random, author: str) -> str:
    """Return one or two template sentences for ``author``."""
    text = fill(rng.choice(SCALE_TEMPLATES[author]), rng)
    if rng.random() < 0.3:
        text += " " + fill(rng.choice(SCALE_TEMPLATES[author]), rng)
    return text


def scale_corpus(size: int, seed: int) -> Iterator[Memory]:
    """Yield ``size`` memories with increasing timestamps spread over ~2 years."""
    rng = random.Random(seed)
    step = SCALE_SPAN / max(size, 1)
    for i in range(size):
        author = rng.choices(SCALE_AUTHORS, SCALE_AUTHOR_WEIGHTS)[0]
        jitter = step * rng.uniform(0.0, 0.9)
        yield Memory(scale_text(rng, author), author, SCALE_START + step * i + jitter)


def scale_queries(count: int, seed: int) -> list[str]:
    """Return ``count`` distinct queries over the scale corpus's vocabularies."""
    rng = random.Random(seed + 1)
    found: dict[str, None] = {}
    for _ in range(count * 200):
        if len(found) == count:
            break
        found[fill(rng.choice(QUERY_TEMPLATES), rng)] = None
    if len(found) < count:
        raise ValueError(f"could only make {len(found)} distinct queries")
    return list(found)


# ------------------------------------------------------------------------ planted user facts


@dataclass(frozen=True)
class Topic:
    """A fact about the user: candidate values, ways to say it, ask it, and correct it.

    Templates use ``{v}`` (the value), ``{v_cap}`` / ``{v_bare}`` (capitalised / without a
    leading article), ``{old}`` / ``{new}`` (and ``_bare``) in corrections, and ``{who}`` /
    ``{whose}`` (``_cap``) for the other person in near-miss lines.
    """

    key: str
    values: tuple[str, ...]
    says: tuple[str, ...]
    asks: tuple[str, ...]
    others: tuple[str, ...]
    fixes: tuple[str, ...] = ()


TOPICS: tuple[Topic, ...] = (
    Topic(
        "name",
        ("Maya", "Jonas", "Priya", "Elena", "Tomasz", "Aiko", "Callum", "Noor"),
        (
            "I never introduced myself properly: I'm {v}.",
            "My name's {v}, by the way.",
            "Everyone calls me {v}, and that's my actual name, not a nickname.",
        ),
        ("What's my name?", "Do you remember what I'm called?"),
        (
            "{whose_cap} name is {v}, in case it comes up.",
            "{who_cap} introduced me to someone called {v} at the party.",
        ),
    ),
    Topic(
        "city",
        ("Lisbon", "Porto", "Madrid", "Lyon", "Leeds", "Rotterdam", "Krakow", "Montreal"),
        (
            "I live in {v}.",
            "Home is {v} these days, a small flat near the river.",
            "We've been renting in {v} for about three years now.",
            "Living in {v} means the trams basically run my life.",
        ),
        ("Which city am I living in these days?", "Where's home for me right now?"),
        (
            "{who_cap} lives in {v}.",
            "{who_cap} just moved to {v} for work.",
            "{whose_cap} place in {v} has a lovely balcony.",
        ),
        (
            "Actually I moved to {new} last month, so I'm not in {old} anymore.",
            "Big news: we packed up and relocated from {old} to {new}.",
            "Quick update, I'm living in {new} now. The move finally happened.",
        ),
    ),
    Topic(
        "employer",
        (
            "Acme Corp",
            "Globex",
            "Initech",
            "Umbrella Labs",
            "Hooli",
            "Vandelay Industries",
            "Northwind Traders",
            "Cyberdyne Systems",
        ),
        (
            "I work at {v}.",
            "I've been at {v} for nearly four years.",
            "Work at {v} has been hectic this quarter.",
        ),
        ("Which company am I employed by?", "Who do I work for at the moment?"),
        (
            "{who_cap} works at {v}.",
            "{who_cap} got a job offer from {v}.",
            "{who_cap} has been at {v} since the spring.",
        ),
        (
            "Update: I left {old}, now at {new}.",
            "I handed in my notice at {old}, and I started at {new} on Monday.",
            "New job! I'm with {new} now.",
        ),
    ),
    Topic(
        "job",
        (
            "a data engineer",
            "a nurse",
            "a product manager",
            "a chemistry teacher",
            "a UX designer",
            "an accountant",
            "a paramedic",
            "an architect",
        ),
        (
            "I work as {v}.",
            "Being {v} is tiring but I love it.",
            "For a living I'm {v}, mostly.",
        ),
        ("What do I do for a living?", "What's my profession?"),
        (
            "{who_cap} is {v}.",
            "{who_cap} trained as {v}.",
            "{who_cap} wants to become {v}.",
        ),
        (
            "I changed careers, I'm {new} now rather than {old}.",
            "Since the retraining finished I work as {new}.",
            "No longer {old} for me! I've switched to being {new}.",
        ),
    ),
    Topic(
        "dog",
        ("Biscuit", "Pepper", "Rolo", "Mochi", "Juniper", "Bramble", "Ziggy", "Waffles"),
        (
            "My dog {v} chewed through another shoe today.",
            "I have a scruffy terrier called {v}.",
            "Our dog's name is {v}, he's a rescue.",
        ),
        ("What's the name of my dog?", "What is my dog called?"),
        (
            "{whose_cap} dog is called {v}.",
            "{who_cap} adopted a puppy and named it {v}.",
        ),
    ),
    Topic(
        "cat",
        ("Luna", "Miso", "Pickle", "Tofu", "Nimbus", "Olive", "Sushi", "Pip"),
        (
            "My cat {v} sleeps on my keyboard all day.",
            "We have a grey cat named {v}.",
            "{v}, my cat, knocked a plant off the shelf again.",
        ),
        ("What's my cat's name?", "Which name did I give my cat?"),
        (
            "{whose_cap} cat is called {v}.",
            "{who_cap} is cat-sitting a tabby named {v}.",
        ),
    ),
    Topic(
        "partner",
        ("Sam", "Alex", "Jordan", "Robin", "Kai", "Morgan", "Jamie", "Charlie"),
        (
            "My partner {v} is cooking tonight.",
            "{v} and I have been together for six years.",
            "I live with my partner, {v}.",
        ),
        ("Who is my partner?", "What's the name of the person I'm in a relationship with?"),
        (
            "{whose_cap} boyfriend is called {v}.",
            "{who_cap} is dating someone named {v}.",
        ),
        (
            "{old} and I broke up a while ago; I'm seeing someone called {new} now.",
            "Things ended with {old}. My new partner is {new}.",
            "I should tell you, I'm with {new} now. {old} and I split up.",
        ),
    ),
    Topic(
        "siblings",
        (
            "one younger sister",
            "two older brothers",
            "a twin brother",
            "three sisters",
            "an older half-brother",
        ),
        (
            "I have {v}.",
            "Growing up with {v} was chaotic.",
            "I'm close to my family, I've got {v}.",
        ),
        ("Do I have any brothers or sisters?", "How many siblings have I got?"),
        ("{who_cap} has {v}.", "{who_cap} grew up with {v}."),
    ),
    Topic(
        "allergy",
        ("peanuts", "shellfish", "penicillin", "pollen", "latex", "sesame", "kiwi"),
        (
            "I'm allergic to {v}, so I have to be careful.",
            "Just so you know, I react really badly to {v}.",
            "I carry antihistamines everywhere because of my {v} allergy.",
        ),
        ("Is there anything I'm allergic to?", "What should I avoid for medical reasons?"),
        ("{who_cap} is allergic to {v}.", "{whose_cap} kid reacts badly to {v}."),
    ),
    Topic(
        "diet",
        ("vegetarian", "pescatarian", "vegan", "gluten-free", "dairy-free"),
        (
            "I'm {v}, have been since university.",
            "I keep a {v} diet, mostly for health reasons.",
            "Heads up for recipes: I'm {v}.",
        ),
        ("What kind of diet do I follow?", "Which way of eating am I sticking to?"),
        ("{who_cap} went {v} this year.", "{who_cap} only cooks {v} food."),
        (
            "I'm not {old} anymore, I went fully {new}.",
            "Diet update: I switched from {old} to {new} a few weeks ago.",
            "I've been strictly {new} since the new year.",
        ),
    ),
    Topic(
        "dish",
        (
            "mushroom risotto",
            "falafel",
            "dal makhani",
            "margherita pizza",
            "veggie pho",
            "aubergine parmigiana",
            "shakshuka",
            "spinach gnocchi",
        ),
        (
            "My absolute favourite dish is {v}.",
            "If I could eat one thing forever it'd be {v}.",
            "Nothing beats a good plate of {v} for me.",
        ),
        ("What's my favourite food?", "Which meal do I love most?"),
        (
            "{whose_cap} favourite dish is {v}.",
            "{who_cap} cooked {v} for everyone on Saturday.",
        ),
        (
            "Honestly these days I'd pick {new} over {old} any day.",
            "Change of heart: my new favourite meal is {new}.",
        ),
    ),
    Topic(
        "music",
        (
            "Radiohead",
            "Fleetwood Mac",
            "Khruangbin",
            "Arctic Monkeys",
            "Nina Simone",
            "Bonobo",
            "The Cure",
            "Bjork",
        ),
        (
            "I've had {v} on repeat for years, my favourite by far.",
            "My favourite artist is {v}.",
            "Nobody comes close to {v} for me, musically.",
        ),
        ("Which musician or band do I like best?", "Who do I love listening to most?"),
        ("{who_cap} is obsessed with {v}.", "{who_cap} saw {v} live last summer."),
    ),
    Topic(
        "book",
        (
            "The Left Hand of Darkness",
            "Middlemarch",
            "Dune",
            "The Remains of the Day",
            "Piranesi",
            "One Hundred Years of Solitude",
            "Station Eleven",
        ),
        (
            "My favourite book is {v}.",
            "I reread {v} every couple of years, it's my all-time favourite.",
            "If you ever want a recommendation: {v} is the best novel I know.",
        ),
        ("Which novel do I love the most?", "What book do I rate above all others?"),
        (
            "{who_cap} lent me {v}, which I haven't started.",
            "{whose_cap} favourite book is {v}.",
        ),
    ),
    Topic(
        "film",
        (
            "Spirited Away",
            "Paddington 2",
            "Heat",
            "Amelie",
            "The Grand Budapest Hotel",
            "Arrival",
            "In the Mood for Love",
        ),
        (
            "My favourite film is {v}.",
            "I could watch {v} a hundred times.",
            "Best movie ever made? {v}, no question.",
        ),
        ("Which film do I like the most?", "What movie would I call my favourite?"),
        (
            "{who_cap} made me watch {v} last weekend.",
            "{whose_cap} favourite movie is {v}.",
        ),
    ),
    Topic(
        "hobby",
        (
            "rock climbing",
            "pottery",
            "birdwatching",
            "sourdough baking",
            "chess",
            "woodworking",
            "salsa dancing",
            "watercolour painting",
        ),
        (
            "My main hobby is {v}.",
            "I spend most weekends on {v}.",
            "{v_cap} is how I unwind after work.",
        ),
        ("What do I like to do in my free time?", "What's my favourite pastime?"),
        ("{who_cap} has taken up {v}.", "{who_cap} spends every Sunday on {v}."),
        (
            "I've given up {old}; I'm really into {new} now.",
            "These days my free time goes on {new} rather than {old}.",
            "New hobby alert: {new}. I stopped doing {old}.",
        ),
    ),
    Topic(
        "team",
        ("Arsenal", "FC Porto", "Celtic", "Borussia Dortmund", "Ajax", "Napoli", "Boca Juniors"),
        (
            "I support {v}, for better or worse.",
            "I've followed {v} since I was a kid.",
            "Watching {v} lose again ruined my evening. Still my team though.",
        ),
        ("Which team do I root for?", "Which sports club am I a fan of?"),
        ("{who_cap} supports {v}.", "{who_cap} has a season ticket for {v}."),
    ),
    Topic(
        "birthday",
        ("March 14", "July 2", "October 23", "January 9", "May 30", "August 17", "December 5"),
        (
            "My birthday is on {v}.",
            "I was born on {v}, in case you want to plan something.",
            "{v} is my birthday, don't let me forget to book a table.",
        ),
        ("When's my birthday?", "On what date was I born?"),
        ("{whose_cap} birthday is {v}.", "{who_cap} celebrates on {v} every year."),
    ),
    Topic(
        "car",
        (
            "a silver Honda Civic",
            "an old blue Volvo estate",
            "a red Mazda MX-5",
            "a Tesla Model 3",
            "a white Fiat 500",
            "a green Skoda Octavia",
        ),
        (
            "I drive {v}.",
            "My car is {v}, not glamorous but it works.",
            "I get around in {v}.",
        ),
        ("What car do I have?", "Which vehicle do I own?"),
        ("{who_cap} just bought {v}.", "{who_cap} drives {v}."),
        (
            "I sold the {old_bare}, I've got {new} now.",
            "Car news: traded in the {old_bare} for {new}.",
            "We replaced the car; it's {new} now.",
        ),
    ),
    Topic(
        "languages",
        (
            "Portuguese and French",
            "German and a little Japanese",
            "Spanish and Catalan",
            "Polish and Russian",
            "Arabic and French",
            "Mandarin and Dutch",
        ),
        (
            "Besides English I speak {v}.",
            "I grew up speaking {v} at home.",
            "I'm fluent in {v}, which helps at work.",
        ),
        (
            "What languages can I speak other than English?",
            "Which languages am I able to speak?",
        ),
        ("{who_cap} speaks {v}.", "{who_cap} is learning {v}."),
    ),
    Topic(
        "trip",
        ("Japan", "Iceland", "Peru", "Morocco", "Vietnam", "Norway", "Mexico", "New Zealand"),
        (
            "I'm going to {v} in April!",
            "We've booked two weeks in {v} for the spring.",
            "Planning my {v} trip is taking over my evenings.",
        ),
        (
            "Where am I travelling on my next holiday?",
            "What's the destination of my upcoming trip?",
        ),
        ("{who_cap} is off to {v} next month.", "{who_cap} just got back from {v}."),
        (
            "The {old} trip is off, we're going to {new} instead.",
            "Change of plans: it's {new}, not {old}, this spring.",
            "We cancelled {old}. Booked {new} instead!",
        ),
    ),
    Topic(
        "coffee",
        (
            "black, no sugar",
            "as a flat white with oat milk",
            "with lots of milk and two sugars",
            "as a double espresso",
            "iced, with a splash of cream",
        ),
        (
            "I take my coffee {v}.",
            "Every morning I have my coffee {v}.",
            "Coffee-wise I'm simple: I drink it {v}.",
        ),
        ("How do I like my coffee?", "What's my usual coffee order?"),
        ("{who_cap} drinks coffee {v}.", "{who_cap} orders coffee {v}, every single time."),
        (
            "Coffee update: these days I have it {new}.",
            "I changed my coffee habit, now I take it {new}.",
        ),
    ),
    Topic(
        "commute",
        ("by bike", "by train", "on the bus", "on foot", "by car", "on an e-scooter"),
        (
            "I get to work {v}.",
            "My commute is twenty minutes {v}.",
            "Most days I go into the office {v}.",
        ),
        ("How do I usually get to work?", "What's my way of commuting?"),
        ("{who_cap} commutes {v}.", "{who_cap} goes to work {v}."),
        (
            "I've stopped commuting {old}, I go {new} now.",
            "New routine: I get to the office {new}.",
        ),
    ),
    Topic(
        "kids",
        (
            "a six-year-old daughter",
            "two young sons",
            "a teenage son",
            "a baby girl",
            "twin girls in primary school",
        ),
        (
            "I have {v}.",
            "Life with {v} is busy.",
            "Being a parent to {v} keeps me on my toes.",
        ),
        ("Do I have any children?", "What do you know about my kids?"),
        ("{who_cap} has {v}.", "{who_cap} is raising {v} on their own."),
    ),
    Topic(
        "degree",
        (
            "marine biology",
            "philosophy",
            "mechanical engineering",
            "art history",
            "economics",
            "linguistics",
        ),
        (
            "I studied {v} at university.",
            "My degree is in {v}.",
            "Back in uni I did {v}, feels like ages ago.",
        ),
        ("What was my degree subject?", "What was my field of study in college?"),
        ("{who_cap} studied {v}.", "{who_cap} is doing a master's in {v}."),
    ),
    Topic(
        "hometown",
        ("Galway", "Bristol", "Bilbao", "Tampere", "a fishing town in Cornwall", "Graz", "Cork"),
        (
            "I grew up in {v}.",
            "My childhood was spent in {v}.",
            "I'm originally from {v}.",
        ),
        ("Where was I raised as a kid?", "Which town do I come from?"),
        ("{who_cap} grew up in {v}.", "{who_cap} is originally from {v}."),
    ),
    Topic(
        "instrument",
        ("cello", "bass guitar", "piano", "trumpet", "ukulele", "drums", "violin"),
        (
            "I play the {v}.",
            "I've been practising the {v} for an hour every evening.",
            "I play the {v} in a little amateur band.",
        ),
        ("What musical instrument do I play?", "Which instrument do I practise?"),
        ("{who_cap} plays the {v}.", "{whose_cap} son is learning the {v}."),
    ),
    Topic(
        "fear",
        ("heights", "spiders", "deep water", "flying", "clowns", "thunderstorms"),
        (
            "I'm terrified of {v}.",
            "I've always had a phobia of {v}.",
            "Nothing scares me like {v}.",
        ),
        ("What am I scared of?", "What's my biggest fear?"),
        ("{who_cap} is afraid of {v}.", "{who_cap} has a phobia of {v}."),
    ),
    Topic(
        "colour",
        ("teal", "mustard yellow", "burgundy", "forest green", "lavender", "navy blue", "coral"),
        (
            "My favourite colour is {v}.",
            "I'd paint everything {v} if I could.",
            "Anything in {v} and I'll buy it.",
        ),
        ("What colour do I like best?", "Which colour is my favourite?"),
        ("{whose_cap} favourite colour is {v}.", "{who_cap} painted the kitchen {v}."),
    ),
    Topic(
        "phone",
        (
            "a Pixel 8",
            "an iPhone 13",
            "a Fairphone 5",
            "a Samsung Galaxy S23",
            "an old iPhone SE",
            "a OnePlus 12",
        ),
        (
            "I use {v}.",
            "My phone is {v}.",
            "I'm typing this on {v}, sorry for typos.",
        ),
        ("Which smartphone have I got?", "What kind of mobile do I own?"),
        ("{who_cap} just got {v}.", "{who_cap} swears by {v}."),
        (
            "Finally upgraded from my {old_bare} to {new}.",
            "New phone: {new}. The {old_bare} died on me.",
            "I'm on {new} now.",
        ),
    ),
    Topic(
        "sport",
        (
            "five-a-side football",
            "badminton",
            "volleyball",
            "water polo",
            "tennis",
            "ultimate frisbee",
        ),
        (
            "I play {v} on Thursday evenings.",
            "Every week I play {v} with a group from work.",
            "{v_cap} is my weekly sport.",
        ),
        ("What sport do I play regularly?", "Which game do I play every week?"),
        ("{who_cap} plays {v}.", "{who_cap} joined a {v} league."),
        (
            "I quit {old}; I play {new} on Thursdays now.",
            "Switched my weekly sport from {old} to {new}.",
        ),
    ),
    Topic(
        "show",
        (
            "Severance",
            "The Bear",
            "Succession",
            "Slow Horses",
            "Shogun",
            "Only Murders in the Building",
            "Bluey",
        ),
        (
            "I'm hooked on {v} right now.",
            "Every evening it's another episode of {v}.",
            "{v} is the best thing on TV, I can't stop watching.",
        ),
        ("Which series am I watching at the moment?", "What TV show am I obsessed with lately?"),
        (
            "{who_cap} keeps telling me to watch {v}.",
            "{who_cap} binged all of {v} in a weekend.",
        ),
        (
            "Finished {old}; now I'm obsessed with {new}.",
            "I've moved on from {old}, {new} is my current show.",
        ),
    ),
    Topic(
        "training",
        (
            "the Berlin marathon",
            "a half marathon in October",
            "a 100 km cycling sportive",
            "an open-water swim across the lake",
            "my first triathlon",
            "a 10k trail race",
        ),
        (
            "I'm training for {v}.",
            "All my runs are building up to {v}.",
            "I signed up for {v}, so the training has started.",
        ),
        ("What event am I preparing for?", "What's my current fitness goal?"),
        ("{who_cap} is training for {v}.", "{who_cap} signed up for {v} too."),
        (
            "I dropped out of {old}; I'm aiming for {new} instead.",
            "Goal change: {new} rather than {old}.",
        ),
    ),
    Topic(
        "manager",
        ("Linda", "Marcus", "Dr Chen", "Fatima", "Olu", "Beatriz", "Henrik"),
        (
            "My manager is {v}.",
            "{v}, my boss, wants the report by Friday.",
            "I report to {v}, who's pretty fair.",
        ),
        ("Who's my boss?", "Who is my line manager?"),
        ("{whose_cap} manager is {v}.", "{who_cap} reports to {v}."),
        (
            "{old} left the company; my new manager is {new}.",
            "Reorg happened, I report to {new} now instead of {old}.",
        ),
    ),
    Topic(
        "friend",
        ("Zoe", "Ravi", "Hannah", "Mateo", "Ingrid", "Kwame"),
        (
            "My best friend is {v}.",
            "{v} has been my closest friend since school.",
            "I'm seeing {v}, my best mate, tonight.",
        ),
        ("Which friend am I closest to?", "Who would I call my best friend?"),
        ("{whose_cap} best friend is {v}.", "{who_cap} is best friends with {v}."),
    ),
    Topic(
        "mother",
        ("Margaret", "Rosa", "Helen", "Yuki", "Amara", "Brigitte"),
        (
            "My mum is called {v}.",
            "{v}, my mother, is visiting next week.",
            "My mother's name is {v}.",
        ),
        ("What's my mum's name?", "What is my mother called?"),
        ("{whose_cap} mum is called {v}.", "{whose_cap} mother, {v}, runs a bakery."),
    ),
    Topic(
        "remote",
        ("Mondays and Fridays", "Wednesdays", "Tuesdays and Thursdays", "Fridays", "Mondays"),
        (
            "I work from home on {v}.",
            "My home-office days are {v}.",
            "I'm remote on {v}, office the rest of the week.",
        ),
        ("Which days do I work remotely?", "When am I working from home each week?"),
        ("{who_cap} works from home on {v}.", "{who_cap} is in the office except on {v}."),
        (
            "New arrangement at work: I'm home on {new} now.",
            "They changed my schedule, my remote days are {new}, not {old}.",
        ),
    ),
    Topic(
        "blood",
        ("O negative", "A positive", "B positive", "AB negative", "O positive"),
        (
            "My blood type is {v}.",
            "I'm {v}, which the blood bank loves.",
            "I donate blood regularly, I'm {v}.",
        ),
        ("Which blood group do I have?", "What blood group am I?"),
        ("{whose_cap} blood type is {v}.", "{who_cap} found out they're {v}."),
    ),
)

OTHER_PEOPLE = (
    "my colleague Tom",
    "my friend Aisha",
    "my neighbour Mr Okafor",
    "my cousin Rafa",
    "my old flatmate Bea",
    "my teammate Yusuf",
    "my yoga teacher Ines",
    "my friend Greta",
    "my colleague Dmitri",
    "my dentist",
    "my landlord",
    "my book club friend Leo",
)

# ----------------------------------------------------------------------------- chit-chat pools

CHAT_SLOTS: dict[str, tuple[str, ...]] = {
    "weather": (
        "raining sideways",
        "grey and drizzly",
        "weirdly warm",
        "freezing",
        "ridiculously windy",
        "foggy",
        "sunny for once",
    ),
    "task": (
        "call the plumber",
        "pay the electricity bill",
        "book a dentist appointment",
        "send the invoice to the client",
        "water the plants",
        "buy a birthday card",
        "back up my laptop",
        "return the library books",
        "renew the parking permit",
        "order more printer paper",
        "defrost the freezer",
        "reply to the school email",
    ),
    "meeting": (
        "standup",
        "budget review",
        "quarterly planning",
        "one-to-one",
        "client call",
        "design crit",
        "all-hands",
    ),
    "news": (
        "the rail strike",
        "the new bridge opening",
        "the election debate",
        "the heatwave warning",
        "the comet",
        "the data breach at that bank",
        "the transfer window",
        "the price of eggs",
    ),
    "howto": (
        "get rid of fruit flies",
        "descale a kettle",
        "fix a squeaky door",
        "keep basil alive",
        "get wine out of a carpet",
        "stop procrastinating",
        "sleep better",
        "make cold brew",
        "unshrink a wool jumper",
        "iron a shirt quickly",
    ),
    "lunch": (
        "leftover curry",
        "a bagel",
        "instant noodles",
        "a burrito bowl",
        "crackers and hummus",
        "a sad desk salad",
        "tomato soup",
    ),
    "laptop": (
        "freezing",
        "overheating",
        "dropping the wifi",
        "nagging me about updates",
        "making a buzzing noise",
    ),
    "recipient": ("my landlord", "the school", "a recruiter", "the council", "our accountant"),
    "email": ("a broken heater", "a late payment", "rescheduling", "a refund", "a parking permit"),
    "shopping": ("batteries", "bin bags", "a present", "light bulbs", "a new umbrella", "stamps"),
    "fun": ("octopuses", "volcanoes", "honey bees", "the Moon", "tardigrades", "sharks"),
    "tip": (
        "a job interview",
        "public speaking",
        "running in the heat",
        "packing light",
        "negotiating a raise",
        "meal prep",
        "staying focused",
    ),
    "article": (
        "this article on remote work",
        "the report on housing costs",
        "the paper on sleep and memory",
        "the blog post about Rust",
        "the council meeting minutes",
    ),
    "doc": (
        "deep-sea creatures",
        "the Apollo missions",
        "fungi",
        "the history of jazz",
        "ancient Egypt",
        "urban foxes",
    ),
    "errand": ("the post office", "the bank", "the tip", "the tailor", "the pharmacy"),
    "feeling": ("exhausting", "fine", "surprisingly productive", "a mess", "long", "weird"),
    "number": tuple(str(n) for n in range(3, 48)),
}

FUN_FACTS = {
    "octopuses": "octopuses have three hearts and blue blood.",
    "volcanoes": "there are around 1,350 potentially active volcanoes on land.",
    "honey bees": "a honey bee visits hundreds of flowers on a single trip.",
    "the Moon": "the Moon drifts about 3.8 cm further from Earth every year.",
    "tardigrades": "tardigrades can survive being frozen and even the vacuum of space.",
    "sharks": "some sharks are older as a lineage than trees.",
}

CHAT: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Ugh, it's {weather} again today.",
        ("Sounds grim, stay dry!", "Good day for staying in, maybe?"),
    ),
    (
        "Can you remind me to {task} tomorrow?",
        ("Sure, I'll remind you to {task} tomorrow morning.", "Done, reminder set: {task}."),
    ),
    (
        "The {meeting} ran over by {number} minutes, I'm fried.",
        ("That's a long one. Take five before the next thing.", "Oof. Want a quick recap list?"),
    ),
    (
        "Did you see the news about {news}?",
        ("I saw some headlines about {news}. What did you make of it?", "Yes, it's everywhere."),
    ),
    (
        "What's a good way to {howto}?",
        (
            "A few options to {howto}: start small, and check what worked after a day.",
            "Most people swear by a simple routine for that. Want the step-by-step?",
        ),
    ),
    (
        "Had {lunch} for lunch, not great.",
        ("Tomorrow's lunch can only be better!", "Maybe prep something tonight?"),
    ),
    (
        "My laptop keeps {laptop}.",
        (
            "Have you tried a restart and checking for updates?",
            "That sounds annoying. How old is it?",
        ),
    ),
    (
        "Help me write an email to {recipient} about {email}.",
        (
            "Here's a draft: 'Hello, I'm writing about {email}. Could we sort this out this "
            "week? Thanks.'",
            "Sure. Formal or friendly tone?",
        ),
    ),
    (
        "I need to buy {shopping} before the weekend.",
        ("Added {shopping} to your list.", "Noted, {shopping} is on the list."),
    ),
    (
        "Tell me a fun fact about {fun}.",
        ("Here's one: {fun_fact}", "Fun fact: {fun_fact}"),
    ),
    (
        "Any tips for {tip}?",
        (
            "For {tip}: prepare a little, keep it simple, and rest beforehand.",
            "Practice out loud and keep notes short.",
        ),
    ),
    (
        "Can you summarise {article} for me?",
        (
            "In short: costs are up, opinions differ, and the authors want more data.",
            "Three points: the problem, the evidence, and what they propose next.",
        ),
    ),
    (
        "I watched a documentary about {doc} last night.",
        ("Ooh, what was the most surprising bit?", "Nice, was it any good?"),
    ),
    (
        "Work was {feeling} today.",
        ("Want to talk about it?", "Thanks for telling me. Anything I can take off your plate?"),
    ),
    (
        "Just got back from {errand}. The queue was ridiculous.",
        ("Glad that's done at least.", "Queues like that are the worst."),
    ),
    (
        "What's {number} times {number2}?",
        ("That's {product}.", "{number} times {number2} is {product}."),
    ),
    (
        "How long does {lunch} keep in the fridge?",
        ("Usually two or three days if it's sealed.", "I'd eat it within three days to be safe."),
    ),
    (
        "I can't decide whether to {task} today or leave it.",
        ("Do it now and it's off your mind.", "If it takes under ten minutes, do it today."),
    ),
    ("Haha, nice.", ("Glad that landed!", ":)")),
    ("Ok thanks!", ("Any time.", "You're welcome!")),
    ("Hmm, let me think about that.", ("Take your time.", "Sure, no rush.")),
    ("That's helpful, cheers.", ("Happy to help.", "Great!")),
    (
        "I feel like I've been on my phone all day.",
        ("Maybe a short walk would help reset?", "Happens to everyone. Want a screen-free idea?"),
    ),
    (
        "Can you explain the difference between weather and climate again?",
        ("Weather is day to day; climate is the long-run average over decades.",),
    ),
)

GREETINGS = (
    ("Morning!", ("Good morning! What's on your mind?", "Morning! How are you today?")),
    ("Hey, you around?", ("Always. What's up?", "Yep, here. How can I help?")),
    ("Hi again.", ("Hi! Good to hear from you.", "Welcome back!")),
    ("Evening, quick one.", ("Evening! Go ahead.", "Sure, what is it?")),
)
CLOSINGS = (
    ("Ok that's all for now, thanks.", ("Talk soon!", "Anytime, have a good one.")),
    ("Gotta run, talk later.", ("Bye for now!", "See you later.")),
    ("Night!", ("Good night, sleep well.", "Night!")),
)
FACT_ACKS = (
    "Thanks for telling me!",
    "Good to know.",
    "Noted, I'll remember that.",
    "Got it.",
    "Oh nice, thanks for sharing.",
    "Interesting! How's that going?",
    "I'll keep that in mind.",
    "That's lovely to hear.",
)
FIX_ACKS = (
    "Thanks for the update!",
    "Got it, I'll update my notes.",
    "Oh, that's a big change!",
    "Understood, noted.",
    "Ah, good to know things changed.",
)
OTHER_ACKS = ("Ha, small world.", "Nice!", "Interesting, thanks.", "Oh fun.", "Cool.")
LEAD_INS = (
    "Long day today. ",
    "Random thought. ",
    "Okay, something about me. ",
    "Not sure if I told you this. ",
    "Hmm. ",
)
TAIL_OUTS = (" Anyway.", " Just so you know.", " Random, I know.", " Ha.")

# ------------------------------------------------------------------------------ conversation


@dataclass(frozen=True)
class Line:
    """One conversation line; ``tag`` is ``fact:``/``fix:``/``other:<key>`` for planted lines."""

    text: str
    author: str
    timestamp: datetime
    tag: str = ""


@dataclass(frozen=True)
class Probe:
    """A question about one planted fact and the tags of its current and superseded lines."""

    key: str
    question: str
    current_tag: str
    stale_tag: str | None


@dataclass(frozen=True)
class Conversation:
    """The generated chat plus one probe per planted fact."""

    lines: list[Line]
    probes: list[Probe]
    days: int
    sessions: int


@dataclass(frozen=True)
class Exchange:
    """A user line and the agent's reply (possibly empty) before timestamps are assigned."""

    user: str
    reply: str
    tag: str = ""


CONVERSATION_START = datetime(2026, 1, 5, tzinfo=UTC)


def cap(text: str) -> str:
    """Capitalise the first character only."""
    return text[:1].upper() + text[1:]


def bare(value: str) -> str:
    """Drop a leading indefinite article."""
    return re.sub(r"^(a|an) ", "", value)


def value_fields(prefix: str, value: str) -> dict[str, str]:
    """Return ``{prefix}``, ``{prefix}_cap`` and ``{prefix}_bare`` for a value."""
    return {prefix: value, f"{prefix}_cap": cap(value), f"{prefix}_bare": bare(value)}


def person_fields(who: str) -> dict[str, str]:
    """Return ``who`` / ``whose`` fields (plain and capitalised) for a near-miss line."""
    whose = f"{who}'s"
    return {"who": who, "who_cap": cap(who), "whose": whose, "whose_cap": cap(whose)}


def pad(rng: random.Random, text: str) -> str:
    """Sometimes wrap a planted statement in small talk so it is not always a bare sentence."""
    roll = rng.random()
    if roll < 0.2:
        return rng.choice(LEAD_INS) + text
    if roll < 0.3:
        return text + rng.choice(TAIL_OUTS)
    return text


def chat_exchange(rng: random.Random) -> Exchange:
    """Return one chit-chat exchange with its slots filled consistently on both sides."""
    user, replies = rng.choice(CHAT)
    values = {name: rng.choice(options) for name, options in CHAT_SLOTS.items()}
    values["number2"] = rng.choice(CHAT_SLOTS["number"])
    values["product"] = str(int(values["number"]) * int(values["number2"]))
    values["fun_fact"] = FUN_FACTS[values["fun"]]
    reply = rng.choice(replies).format(**values) if rng.random() < 0.92 else ""
    return Exchange(user.format(**values), reply)


@dataclass
class FactPlan:
    """The user's value for one topic and, if corrected, the new value."""

    topic: Topic
    value: str
    new_value: str | None


def plan_facts(rng: random.Random, corrected_share: float) -> list[FactPlan]:
    """Pick each topic's value and which correctable topics get a correction."""
    correctable = [t.key for t in TOPICS if t.fixes]
    wanted = min(len(correctable), round(len(TOPICS) * corrected_share))
    corrected = set(rng.sample(correctable, wanted))
    plans = []
    for topic in TOPICS:
        value, new_value = rng.sample(topic.values, 2)
        plans.append(FactPlan(topic, value, new_value if topic.key in corrected else None))
    return plans


def fact_exchange(rng: random.Random, plan: FactPlan) -> Exchange:
    """The user states the (original) fact."""
    text = rng.choice(plan.topic.says).format(**value_fields("v", plan.value))
    return Exchange(pad(rng, cap(text)), rng.choice(FACT_ACKS), f"fact:{plan.topic.key}")


def fix_exchange(rng: random.Random, plan: FactPlan, new_value: str) -> Exchange:
    """The user corrects the fact to ``new_value``."""
    fields = value_fields("old", plan.value) | value_fields("new", new_value)
    text = cap(rng.choice(plan.topic.fixes).format(**fields))
    return Exchange(pad(rng, text), rng.choice(FIX_ACKS), f"fix:{plan.topic.key}")


def other_exchanges(rng: random.Random, plan: FactPlan) -> list[Exchange]:
    """Two to four near-miss lines: other people, same topic, other values."""
    taken = {plan.value, plan.new_value}
    spare = [v for v in plan.topic.values if v not in taken]
    out = []
    for _ in range(rng.randint(2, 4)):
        fields = person_fields(rng.choice(OTHER_PEOPLE)) | value_fields("v", rng.choice(spare))
        text = cap(rng.choice(plan.topic.others).format(**fields))
        out.append(Exchange(text, rng.choice(OTHER_ACKS), f"other:{plan.topic.key}"))
    return out


def session_days(rng: random.Random, days: int, sessions: int) -> list[int]:
    """Pick distinct, sorted day offsets for the sessions (the first and last day included)."""
    middle = rng.sample(range(1, days - 1), sessions - 2)
    return [0, *sorted(middle), days - 1]


def schedule_planted(
    rng: random.Random, plans: list[FactPlan], days: list[int]
) -> list[list[Exchange]]:
    """Place statements early, corrections at least a week later, near-misses anywhere."""
    buckets: list[list[Exchange]] = [[] for _ in days]
    early = max(1, int(len(days) * 0.6))
    for plan in plans:
        limit = max(1, int(len(days) * 0.45)) if plan.new_value else early
        said = rng.randrange(limit)
        buckets[said].append(fact_exchange(rng, plan))
        if plan.new_value:
            later = [i for i, day in enumerate(days) if day >= days[said] + 7]
            buckets[rng.choice(later)].append(fix_exchange(rng, plan, plan.new_value))
        for exchange in other_exchanges(rng, plan):
            buckets[rng.randrange(len(days))].append(exchange)
    return buckets


def fill_session(rng: random.Random, planted: list[Exchange], target_lines: int) -> list[Exchange]:
    """Mix planted exchanges with chit-chat up to about ``target_lines``, greeting to goodbye."""
    body = list(planted)
    while 2 * len(body) < target_lines - 4:
        body.append(chat_exchange(rng))
    rng.shuffle(body)
    hello, hello_replies = rng.choice(GREETINGS)
    bye, bye_replies = rng.choice(CLOSINGS)
    return [
        Exchange(hello, rng.choice(hello_replies)),
        *body,
        Exchange(bye, rng.choice(bye_replies)),
    ]


def timestamp_session(rng: random.Random, day: int, exchanges: list[Exchange]) -> list[Line]:
    """Give a session's lines increasing timestamps on its day, starting at a random hour."""
    clock = CONVERSATION_START + timedelta(days=day, hours=rng.randint(7, 20))
    clock += timedelta(minutes=rng.randint(0, 50))
    lines = []
    for exchange in exchanges:
        clock += timedelta(seconds=rng.randint(20, 150))
        lines.append(Line(exchange.user, "external", clock, exchange.tag))
        if exchange.reply:
            clock += timedelta(seconds=rng.randint(2, 20))
            lines.append(Line(exchange.reply, "self", clock))
    return lines


def probes_for(rng: random.Random, plans: Sequence[FactPlan]) -> list[Probe]:
    """One question per fact; the current line is the correction when there is one."""
    probes = []
    for plan in plans:
        key = plan.topic.key
        corrected = plan.new_value is not None
        probes.append(
            Probe(
                key=key,
                question=rng.choice(plan.topic.asks),
                current_tag=f"fix:{key}" if corrected else f"fact:{key}",
                stale_tag=f"fact:{key}" if corrected else None,
            )
        )
    return probes


def conversation(
    seed: int,
    *,
    days: int = 60,
    sessions: int = 30,
    target_lines: int = 2200,
    corrected_share: float = 1 / 3,
) -> Conversation:
    """Generate the planted-fact conversation and its probes (deterministic for a seed)."""
    rng = random.Random(seed)
    plans = plan_facts(rng, corrected_share)
    day_offsets = session_days(rng, days, sessions)
    planted = schedule_planted(rng, plans, day_offsets)
    lines: list[Line] = []
    per_session = target_lines / sessions
    for day, exchanges in zip(day_offsets, planted, strict=True):
        target = round(per_session * rng.uniform(0.6, 1.4))
        lines.extend(timestamp_session(rng, day, fill_session(rng, exchanges, target)))
    return Conversation(lines, probes_for(rng, plans), days, sessions)
