"""Seeded long conversations that look like real chat memory (issue 15, second round).

``bench/memory_dialogues.py`` wrote short template turns whose questions were worded unlike the
turn on purpose; on it dense retrieval beat stemmed BM25 on the held-out split, the opposite of
what an external long-conversation benchmark shows (BM25 0.61 recall@10, MiniLM 0.44). Real long
conversations differ in ways that matter for retrieval, and this generator copies them:

* turns are long (greeting, the news, an aside, a question back), two people, many sessions;
* every person has a few topics they talk about all the time, so many turns share the speaker,
  the topic words and the friend's name without holding any fact ("the kids have been wild");
* a fact is told once, with a relative time ("yesterday", "last weekend"), so "when" questions
  need the session date; it is mentioned again later in passing (an echo sharing its key word,
  not evidence), and the friend answers with the topic's words;
* questions paraphrase: a few keep one or two of the evidence's content words, many use other
  words for the same things (children/kids, ceramics/pottery), open questions need world
  knowledge (Lisbon -> Portugal) or an inference;
* several-fact questions gather one person's events of a topic over sessions; month questions
  ask what happened to someone in a named month.

``dev`` and ``heldout`` share only this generator: people, topics, events, chit-chat, echo and
question wordings are disjoint, and ``heldout`` was written before any tuning on ``dev``.
Everything is written here by hand. ``generate(split, seed, dialogues)`` is deterministic and
returns ``memory_dialogues.Dialogue`` objects, so ``bench/memory_recall.py`` runs either set.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from memory_dialogues import MONTHS, Dialogue, Question, Turn


@dataclass(frozen=True)
class Event:
    """Something that happened to a person, and the three questions about it.

    ``tell`` is a first-person past-tense clause ("took the kids to the aquarium ..."); ``key``
    the short phrase later turns echo; ``slot`` optional choices for ``{x}`` in every text.
    """

    topic: str
    tell: str
    key: str
    what: str
    when: str
    open: str
    slot: tuple[str, ...] = ()


@dataclass(frozen=True)
class Split:
    """One split's people, events and the surrounding talk."""

    names: tuple[str, ...]
    events: tuple[Event, ...]
    multi: dict[str, tuple[str, ...]]  # topic -> several-fact question wordings
    chatter: dict[str, tuple[str, ...]]  # topic -> lines using its words, holding no fact
    filler: tuple[str, ...]
    openers: tuple[str, ...]
    closers: tuple[str, ...]
    reactions: tuple[str, ...]
    followups: tuple[str, ...]
    echoes: tuple[str, ...]
    times: tuple[str, ...]
    month_ask: tuple[str, ...]
    key_ask: tuple[str, ...]  # single-fact questions that name the thing ("... about the {key}?")


E = Event

DEV = Split(
    names=tuple(
        "Nora Felix Maya Theo Iris Jonah Leah Oscar Ruby Silas Clara Hugo Ava Miles Esme Rafael "
        "Lena Tobias Zoe Arlo".split()
    ),
    events=(
        E(
            "family",
            "took the kids to the aquarium downtown, they stood in the jellyfish tunnel for ages",
            "aquarium",
            "Where did {O} take the kids on a day out?",
            "When did {O} take the kids to the aquarium?",
            "Would {O}'s kids enjoy a picture book about sea animals?",
        ),
        E(
            "family",
            "threw a surprise party for my {x}'s birthday, we all hid in the garage until they"
            " got home",
            "surprise party",
            "Whose birthday did {O} organise a surprise for?",
            "When did {O} throw the surprise party?",
            "Is {O} someone who likes planning celebrations for relatives?",
            ("mum", "dad", "sister", "husband", "grandma"),
        ),
        E(
            "family",
            "went camping with the family by the lake, we roasted marshmallows and the little"
            " one spotted a heron",
            "camping trip",
            "What did {O}'s family do by the lake?",
            "When did {O} go camping with the family?",
            "Does {O}'s household enjoy spending nights outdoors?",
        ),
        E(
            "family",
            "finally taught my son to ride a bike without stabilisers, he wobbled but did a full"
            " lap of the park",
            "bike",
            "What did {O}'s son learn to ride in the park?",
            "When did {O}'s son learn to cycle?",
            "Is {O} a parent?",
        ),
        E(
            "art",
            "finished a huge {x} painting of the sunset over the harbour, it took me three"
            " weekends",
            "sunset painting",
            "What did {O} paint over three weekends?",
            "When did {O} finish painting the sunset?",
            "Does {O} have the patience for long creative projects?",
            ("acrylic", "oil", "watercolour"),
        ),
        E(
            "art",
            "went to a pottery workshop and made a slightly wonky bowl, my hands were covered"
            " in clay",
            "pottery",
            "What did {O} make at the ceramics session?",
            "When did {O} go to the pottery workshop?",
            "Would {O} like a voucher for a clay studio?",
        ),
        E(
            "art",
            "had two of my photos picked for a little exhibition at the old library",
            "exhibition",
            "Where were {O}'s photos shown in an exhibition?",
            "When did {O}'s pictures get into the library show?",
            "Is {O} an amateur photographer?",
        ),
        E(
            "art",
            "started learning to knit and made a lumpy {x} scarf for my niece",
            "scarf",
            "What did {O} knit, and who was it for?",
            "When did {O} take up knitting?",
            "Would {O} enjoy browsing a wool shop?",
            ("red", "striped", "green"),
        ),
        E(
            "fitness",
            "ran my first half marathon, finished in just under two hours",
            "half marathon",
            "What race did {O} run, and how long did it take?",
            "When did {O} run the half marathon?",
            "Is {O} in good physical shape?",
        ),
        E(
            "fitness",
            "hiked up {x} with some people from work, the view from the top was unreal",
            "hike",
            "Which summit did {O} climb with colleagues?",
            "When did {O} hike up {x}?",
            "Does {O} enjoy the mountains?",
            ("Mount Tallow", "the Grey Ridge", "Pike Hill", "Ben Corran"),
        ),
        E(
            "fitness",
            "joined a beginner yoga class at the community centre, I could barely touch my toes",
            "yoga",
            "What class did {O} join at the community centre?",
            "When did {O} start going to yoga?",
            "Was {O} very flexible at first?",
        ),
        E(
            "fitness",
            "went kayaking along the river and nearly tipped over under the bridge",
            "kayaking",
            "What did {O} try on the river?",
            "When did {O} go paddling on the river?",
            "Can {O} probably swim?",
        ),
        E(
            "work",
            "got promoted to team lead at the design agency",
            "promotion",
            "What new role did {O} get at the agency?",
            "When did {O} get the promotion?",
            "Is {O} likely earning more money now?",
        ),
        E(
            "work",
            "passed my driving test on the second attempt, parallel parking almost broke me",
            "driving test",
            "Which exam did {O} pass, and on which try?",
            "When did {O} pass the driving test?",
            "Can {O} legally drive a car now?",
        ),
        E(
            "work",
            "gave a talk about recycling plastics at a conference in {x}",
            "talk",
            "What did {O} give a talk about at the conference?",
            "When did {O} speak at the conference in {x}?",
            "Is {O} comfortable speaking in front of an audience?",
            ("Leeds", "Bristol", "Glasgow"),
        ),
        E(
            "work",
            "enrolled in an evening course on bookkeeping because I want to switch careers",
            "course",
            "What night class did {O} sign up for?",
            "When did {O} enrol in the bookkeeping course?",
            "Is {O} thinking about changing jobs?",
        ),
        E(
            "food",
            "baked a lemon drizzle cake for the neighbours and it vanished in ten minutes",
            "cake",
            "What cake did {O} bake for the neighbours?",
            "When did {O} bake the lemon cake?",
            "Does {O} know how to bake?",
        ),
        E(
            "food",
            "tried a tiny {x} restaurant near the station, best meal I've had all year",
            "restaurant",
            "What kind of cuisine did {O} discover near the station?",
            "When did {O} eat at the {x} place?",
            "Is {O} adventurous about food?",
            ("Ethiopian", "Georgian", "Peruvian", "Sichuan"),
        ),
        E(
            "food",
            "picked my first tomatoes from the balcony, only six of them but so sweet",
            "tomatoes",
            "What did {O} grow on the balcony?",
            "When did {O} pick the first tomatoes?",
            "Does {O} have some outdoor space at home?",
        ),
        E(
            "food",
            "hosted a dumpling night for friends, we folded about two hundred of them",
            "dumplings",
            "What did {O} and friends make together at {O}'s place?",
            "When did {O} host the dumpling night?",
            "Does {O} enjoy having guests over?",
        ),
        E(
            "travel",
            "flew to {x} for a long weekend and walked until my feet hurt",
            "trip",
            "Which city did {O} fly to for a long weekend?",
            "When did {O} travel to {x}?",
            "Which country was {O} in during the long weekend away?",
            ("Lisbon", "Krakow", "Dublin", "Seville", "Kyoto"),
        ),
        E(
            "travel",
            "volunteered at the animal shelter, walking the old dogs nobody adopts",
            "shelter",
            "What did {O} do to help rescued animals?",
            "When did {O} volunteer at the animal shelter?",
            "Does {O} like dogs?",
        ),
        E(
            "travel",
            "went to a friend's wedding in a castle in Scotland, bagpipes and all",
            "wedding",
            "Where was the wedding {O} attended?",
            "When did {O} go to the wedding in Scotland?",
            "Did {O} hear traditional Scottish music recently?",
        ),
        E(
            "travel",
            "joined a march for cleaner rivers in the city centre with a homemade sign",
            "march",
            "What was the march {O} joined about?",
            "When did {O} join the march?",
            "Does {O} care about the environment?",
        ),
    ),
    multi={
        "family": (
            "What family outings and milestones has {O} mentioned?",
            "What has {O} done with their family?",
        ),
        "art": ("What creative projects has {O} worked on?", "What art or crafts has {O} made?"),
        "fitness": ("What sports or physical activities has {O} done?",),
        "work": ("What career or study milestones has {O} talked about?",),
        "food": ("What cooking or eating experiences has {O} shared?",),
        "travel": ("Where has {O} been, and for what occasions?",),
    },
    chatter={
        "family": (
            "The kids have been bouncing off the walls all week, I need a holiday from them.",
            "Parenting is exhausting but honestly I wouldn't change it for anything.",
            "My family keeps asking when we're coming to visit again.",
            "Do your kids love being outdoors as much as mine do?",
            "My son asked me why the sky is blue and I had no idea what to say.",
        ),
        "art": (
            "I really need to get back to painting, my brushes are gathering dust.",
            "Have you been to any gallery lately? I saw a great photo exhibition online.",
            "Art is the only thing that properly calms my brain down.",
            "I bought new paints and haven't opened them yet, typical me.",
            "Making things with my hands is my favourite way to switch off.",
        ),
        "fitness": (
            "My legs are still sore from my run on Tuesday.",
            "I keep saying I'll go to yoga more often and then I don't.",
            "The river looked so pretty this morning on my walk.",
            "Hiking boots are so expensive these days!",
            "I'm trying to exercise three times a week, wish me luck.",
        ),
        "work": (
            "Work has been a lot lately, so many meetings.",
            "My team keeps moving the deadlines and it's driving me mad.",
            "I'm thinking about taking some kind of course at some point.",
            "Public speaking still terrifies me, even small meetings.",
            "My boss finally noticed all the extra hours I've been doing.",
        ),
        "food": (
            "I could eat dumplings every single day, no regrets.",
            "The restaurant scene near us is getting so much better.",
            "My last cake was a disaster honestly, it sank in the middle.",
            "Tomatoes from the supermarket taste like nothing.",
            "I've been trying to cook more instead of ordering takeaway.",
        ),
        "travel": (
            "I'd love to travel somewhere new this year, somewhere with old streets.",
            "Weddings are so expensive to go to these days.",
            "The shelter near me is always asking for help with walks.",
            "Flights are crazy expensive right now.",
            "I keep looking at maps and planning trips I never take.",
        ),
    },
    filler=(
        "Morning! The coffee hasn't kicked in yet and I've already had three emails from my"
        " landlord.",
        "Long day, my commute took forever because of the roadworks again.",
        "Did you watch the match last night? I fell asleep before half time.",
        "It's freezing here today, I'm wearing two jumpers indoors.",
        "I need to stop ordering takeaway, my bank account is crying.",
        "Let's catch up properly soon, it feels like ages.",
        "I've had a headache all afternoon, too much screen time I think.",
        "The office was so quiet this week, half the team is on holiday.",
        "Honestly I just want a weekend with no plans at all.",
        "My phone screen cracked again, third time this year.",
        "I finally cleaned out the fridge, it was a crime scene.",
        "Have you seen that new series everyone is talking about? No spoilers please.",
        "Ugh, Mondays. I need another cup of tea before I can function.",
        "I slept eleven hours last night and I still feel tired.",
        "It's been raining nonstop, I forgot what the sun looks like.",
        "My neighbours are doing some kind of drilling again, since seven am.",
    ),
    openers=(
        "Hey {F}! ",
        "Oh, I have to tell you, ",
        "Hi {F}, long time! ",
        "Guess what? ",
        "",
        "",
        "Sorry for the slow reply! ",
        "Thanks {F}! ",
    ),
    closers=(
        " It was such a good day.",
        " I'm still buzzing about it.",
        " How has your week been?",
        " Anyway, what's new with you?",
        "",
        " I'll send you pictures later.",
        " Honestly didn't expect it to go that well.",
    ),
    reactions=(
        "That's amazing, {O}! How did it feel?",
        "Wow, I'm so proud of you!",
        "No way, that sounds incredible. Tell me everything.",
        "Haha I love that so much.",
        "That's so cool. I wish I'd been there.",
        "You're always up to something fun!",
    ),
    followups=(
        "It really was special, I felt like a new person afterwards.",
        "Honestly, it was a bit chaotic but in the best way.",
        "I was nervous beforehand but it went fine in the end.",
        "Thanks {F}, that means a lot. I'll tell you more next time.",
    ),
    echoes=(
        "Still thinking about the {key} from the other week, honestly.",
        "I showed my mum the photos from the {key}, she loved them.",
        "Remember when I told you about the {key}? I'd do it again in a heartbeat.",
    ),
    times=(
        "Yesterday",
        "Last weekend",
        "On Saturday",
        "This morning",
        "Two days ago",
        "Last Friday",
        "Earlier this week",
    ),
    month_ask=(
        "What did {O} get up to in {month} {year}?",
        "What happened in {O}'s life during {month} {year}?",
    ),
    key_ask=(
        "What did {O} tell {F} about the {key}?",
        "How did {O} describe the {key}?",
    ),
)

HELDOUT = Split(
    names=tuple(
        "Priya Dmitri Ingrid Kwame Soledad Bastian Mirela Tomasz Aisha Leif Carmen Yusuf Hedda "
        "Emil Noemi Rashid Greta Anton Lucia Idris".split()
    ),
    events=(
        E(
            "music",
            "played my first gig with the band at the Crown pub, my fingers were shaking on"
            " the bass",
            "gig",
            "Where did {O}'s band perform for the first time?",
            "When did {O} play the first gig at the Crown?",
            "Does {O} play a string instrument?",
        ),
        E(
            "music",
            "bought a second-hand {x} from a market stall, it needs new strings but sounds lovely",
            "market stall",
            "What did {O} buy from a market stall?",
            "When did {O} buy the second-hand {x}?",
            "Is {O} into making music?",
            ("ukulele", "mandolin", "banjo"),
        ),
        E(
            "music",
            "sang in the choir's spring concert at the cathedral, we did a piece in Latin",
            "concert",
            "In what kind of building did {O}'s choir perform?",
            "When did {O} sing at the cathedral concert?",
            "Can {O} read sheet music, probably?",
        ),
        E(
            "music",
            "saw my favourite jazz trio live at a tiny basement club",
            "jazz",
            "What kind of show did {O} catch in a basement venue?",
            "When did {O} see the jazz trio?",
            "Does {O} like live music?",
        ),
        E(
            "home",
            "moved into a flat with a view of the canal, boxes everywhere still",
            "flat",
            "What can {O} see from the new flat?",
            "When did {O} move into the canal flat?",
            "Did {O} recently change address?",
        ),
        E(
            "home",
            "repainted the hallway {x} and the whole place feels brighter",
            "hallway",
            "What colour did {O} choose for the entrance corridor?",
            "When did {O} redo the hallway?",
            "Is {O} handy with home improvement jobs?",
            ("pale yellow", "mint green", "sky blue"),
        ),
        E(
            "home",
            "built a raised vegetable bed in the back garden out of old pallets",
            "raised bed",
            "What did {O} build in the back garden?",
            "When did {O} build the vegetable bed?",
            "Does {O} have a garden?",
        ),
        E(
            "home",
            "fixed the leaking boiler myself after watching a dozen videos",
            "boiler",
            "What broken appliance did {O} repair without a plumber?",
            "When did {O} fix the boiler?",
            "Did {O} save money on a repair recently?",
        ),
        E(
            "games",
            "won the pub quiz with my cousins, the tiebreaker was about volcanoes",
            "quiz",
            "What did {O} win with the cousins?",
            "When did {O} win the pub quiz?",
            "Does {O} know a lot of trivia?",
        ),
        E(
            "games",
            "finished a thousand-piece jigsaw of {x} on the living room floor",
            "jigsaw",
            "What puzzle did {O} complete at home?",
            "When did {O} finish the jigsaw?",
            "Is {O} a patient person?",
            ("a lighthouse", "Venice", "a tropical reef"),
        ),
        E(
            "games",
            "started a weekly chess club at the cafe, six people came to the first one",
            "chess",
            "What club did {O} start at the cafe?",
            "When did {O} start the chess club?",
            "Does {O} enjoy strategy games?",
        ),
        E(
            "games",
            "reached the top league in the online racing game after months of practice",
            "racing game",
            "What gaming milestone did {O} reach?",
            "When did {O} get into the top league?",
            "Does {O} play video games?",
        ),
        E(
            "health",
            "had my wisdom teeth out, my face looked like a hamster for days",
            "wisdom teeth",
            "What dental surgery did {O} have?",
            "When did {O} have the wisdom teeth removed?",
            "Was {O} eating soft food for a while?",
        ),
        E(
            "health",
            "started seeing a physio for my bad knee, I have exercises every night",
            "physio",
            "Who is {O} seeing for the bad knee?",
            "When did {O} start physio for the knee?",
            "Does {O} have an injury?",
        ),
        E(
            "health",
            "gave blood for the first time and they gave me a biscuit and a sticker",
            "blood",
            "What did {O} donate for the first time?",
            "When did {O} give blood?",
            "Is {O} generous with their time for strangers?",
        ),
        E(
            "health",
            "quit coffee completely, the first three days were awful",
            "coffee",
            "What drink did {O} give up?",
            "When did {O} stop drinking coffee?",
            "Was {O} feeling withdrawal symptoms recently?",
        ),
        E(
            "reading",
            "joined a book club at the library, first book was a thriller set in {x}",
            "book club",
            "Where does {O}'s reading group meet?",
            "When did {O} join the book club?",
            "Does {O} read fiction?",
            ("Oslo", "Cairo", "Mumbai"),
        ),
        E(
            "reading",
            "got a short story published in a small online magazine",
            "short story",
            "What piece of writing by {O} appeared in a magazine?",
            "When was {O}'s short story published?",
            "Does {O} write creatively?",
        ),
        E(
            "reading",
            "found a first edition of an old poetry book at a charity shop for two pounds",
            "first edition",
            "What did {O} find at a charity shop?",
            "When did {O} find the first edition?",
            "Does {O} like secondhand shopping?",
        ),
        E(
            "reading",
            "listened to a whole audiobook about the history of {x} on a long train ride",
            "audiobook",
            "What did {O} learn about on the long train journey?",
            "When did {O} listen to the audiobook?",
            "Is {O} curious about history?",
            ("the Silk Road", "the Vikings", "ancient Rome"),
        ),
        E(
            "transport",
            "sold my old car and bought an electric scooter for the commute",
            "scooter",
            "How does {O} get to work now?",
            "When did {O} sell the old car?",
            "Does {O} care about emissions?",
        ),
        E(
            "transport",
            "took the night train to {x} and slept surprisingly well in the bunk",
            "night train",
            "How did {O} travel overnight, and to where?",
            "When did {O} take the night train to {x}?",
            "Which country did {O} arrive in after the overnight ride?",
            ("Vienna", "Budapest", "Zurich", "Munich"),
        ),
        E(
            "transport",
            "cycled the whole coast path over three days with my brother",
            "coast path",
            "Who did {O} cycle the coast path with?",
            "When did {O} cycle the coast path?",
            "Is {O} fit enough for long bike rides?",
        ),
        E(
            "transport",
            "got my sailing licence after a week-long course on the lake",
            "sailing",
            "What qualification did {O} earn on the water?",
            "When did {O} get the sailing licence?",
            "Could {O} take a small boat out alone?",
        ),
    ),
    multi={
        "music": ("How has {O} been involved with music?",),
        "home": ("What changes has {O} made around the house?", "What home projects did {O} do?"),
        "games": ("What games or competitions has {O} mentioned?",),
        "health": ("What health matters has {O} brought up?",),
        "reading": ("What has {O} done around books and writing?",),
        "transport": ("What journeys or transport changes has {O} described?",),
    },
    chatter={
        "music": (
            "Band practice ran late again, my neighbours must hate us.",
            "I've had the same song stuck in my head for three days.",
            "Do you still go to concerts much? I miss live music.",
            "My fingers hurt from practising scales all evening.",
            "Music is the only thing that gets me through the commute.",
        ),
        "home": (
            "The flat is a mess, I keep saying I'll tidy this weekend.",
            "Our garden is mostly weeds at this point, not gonna lie.",
            "Something in the kitchen is dripping again, I'm ignoring it.",
            "I want to paint every wall in this house, my partner disagrees.",
            "DIY videos make everything look so easy.",
        ),
        "games": (
            "I stayed up way too late playing games again.",
            "Quiz night is the highlight of my week, no shame.",
            "Chess is so frustrating, I always blunder my queen.",
            "I've got a puzzle half-done on the table that nobody is allowed to touch.",
            "My cousins are way too competitive at board games.",
        ),
        "health": (
            "My knee has been clicking again when I take the stairs.",
            "I'm trying to sleep earlier, it's not going great.",
            "The dentist sent me another reminder, I keep ignoring it.",
            "I've been drinking so much water lately, feeling better for it.",
            "Doctors' waiting rooms are the most boring places on earth.",
        ),
        "reading": (
            "I've got a pile of books by my bed I'll never finish.",
            "The library near me is the best place to hide on a Saturday.",
            "I started writing a story but got stuck on the ending.",
            "Do you prefer paper books or reading on a screen?",
            "Charity shops are dangerous, I always come home with more books.",
        ),
        "transport": (
            "The trains were delayed again this morning, classic.",
            "I've been cycling a lot more since the weather turned.",
            "Petrol prices are ridiculous right now.",
            "I'd love to do a big trip by train across Europe someday.",
            "My commute is the worst part of my day, honestly.",
        ),
    },
    filler=(
        "Evening! Just got in, the bus was packed.",
        "What a week. I'm so ready for the weekend to start.",
        "It's boiling today, I've had the fan on since breakfast.",
        "I burnt my toast this morning and set off the smoke alarm.",
        "Have you tried that new bakery on the corner? The queue was huge.",
        "My sister called for two hours last night, I know every bit of family gossip now.",
        "I'm so behind on emails it's not even funny.",
        "The cat next door has decided our garden belongs to him.",
        "Everything in the shops is so expensive at the moment.",
        "I spent the whole afternoon sorting out my taxes, send help.",
        "My internet went down for a day and I had no idea what to do with myself.",
        "Do you ever just sit in the car for ten minutes before going inside?",
        "I've started going to bed earlier and it's changed my life.",
        "Sorry I went quiet, things were hectic with visitors.",
        "The wind nearly took the bins away last night.",
        "I accidentally wore odd socks to a meeting today.",
    ),
    openers=(
        "Hiya {F}! ",
        "So, news: ",
        "Oh {F}, you'll laugh, ",
        "Quick update! ",
        "",
        "",
        "Finally some news, ",
    ),
    closers=(
        " Best thing I've done in ages.",
        " What have you been up to?",
        " Feeling pretty chuffed with myself.",
        "",
        " Hope all's good with you.",
        " I'll tell you the rest when we meet.",
    ),
    reactions=(
        "Get in, {O}! That's brilliant.",
        "Oh wow, how did that go?",
        "That's fantastic, you deserve it.",
        "Ha, classic you. Love it.",
        "I'm honestly jealous, that sounds great.",
    ),
    followups=(
        "Cheers {F}, it was a proper adventure.",
        "It went better than I thought, to be honest.",
        "Bit scary at first but I'm glad I did it.",
        "Yeah, I'm still smiling about it.",
    ),
    echoes=(
        "Funny, someone asked me about the {key} again today.",
        "I keep telling everyone about the {key}, they're sick of me.",
        "Thinking back to the {key}, what a time.",
    ),
    times=(
        "Yesterday",
        "Over the weekend",
        "On Sunday",
        "Last Thursday",
        "A couple of days ago",
        "Last week",
        "Tonight",
    ),
    month_ask=(
        "What were {O}'s main news in {month} {year}?",
        "Which events did {O} mention from {month} {year}?",
    ),
    key_ask=(
        "What details did {O} share about the {key}?",
        "What was {O}'s story about the {key}?",
    ),
)

SPLITS = {"dev": DEV, "heldout": HELDOUT}


def _fill(text: str, **values: str) -> str:
    return text.format(**values)


def _dialogue(
    rng: random.Random, split: Split, index: int, people: tuple[str, str], start: datetime
) -> Dialogue:
    dia = Dialogue(id=f"c{index}", people=people)
    # Each person has a few favourite topics: most of their events and their chatter are there.
    topics = sorted({e.topic for e in split.events})
    likes = {p: rng.sample(topics, 4) for p in people}
    agenda = {
        p: rng.sample([e for e in split.events if e.topic in likes[p]], rng.randint(9, 13))
        for p in people
    }
    told: list[tuple[str, Event, str, str, datetime]] = []  # owner, event, x, turn id, when
    queue = [(p, e) for p in people for e in agenda[p]]
    rng.shuffle(queue)
    sessions = rng.randint(20, 28)
    per_session = [[] for _ in range(sessions)]  # type: list[list[tuple[str, Event]]]
    for n, item in enumerate(queue):
        per_session[n % sessions].append(item)
    when = start
    echo_pool: list[tuple[str, str]] = []  # (owner, key) already told
    for s in range(sessions):
        when = when + timedelta(days=rng.randint(5, 20), hours=rng.randint(-4, 4))
        lines: list[tuple[str, str, tuple[str, Event, str] | None]] = []
        for _ in range(rng.randint(6, 12)):  # small talk
            speaker = rng.choice(people)
            line = rng.choice(split.chatter[rng.choice(likes[speaker])])
            if rng.random() < 0.4:
                line = rng.choice(split.filler)
            if rng.random() < 0.5:  # real turns often run two thoughts together
                extra = rng.choice(split.chatter[rng.choice(likes[speaker])] + split.filler)
                line = f"{line} {extra}" if extra != line else line
            lines.append((speaker, line, None))
        if echo_pool and rng.random() < 0.6:
            owner, key = rng.choice(echo_pool)
            lines.insert(rng.randint(0, len(lines)), (owner, _echo(rng, split, key), None))
        for owner, event in per_session[s]:
            friend = people[1] if owner == people[0] else people[0]
            x = rng.choice(event.slot) if event.slot else ""
            clause = _fill(event.tell, x=x)
            opener = _fill(rng.choice(split.openers), F=friend)
            time = rng.choice(split.times)
            time = time[0].lower() + time[1:] if opener else time
            aside = f" {rng.choice(split.chatter[event.topic])}" if rng.random() < 0.4 else ""
            text = f"{opener}{time} I {clause}.{aside}{rng.choice(split.closers)}"
            block = [(owner, text[0].upper() + text[1:], (owner, event, x))]
            reaction = _fill(rng.choice(split.reactions), O=owner)
            if rng.random() < 0.4:
                reaction = f"{reaction} {rng.choice(split.chatter[event.topic])}"
            block.append((friend, reaction, None))
            if rng.random() < 0.5:
                block.append((owner, _fill(rng.choice(split.followups), F=friend), None))
            if rng.random() < 0.5:  # the friend answers with the topic's words
                block.append((friend, rng.choice(split.chatter[event.topic]), None))
            at = rng.randint(0, len(lines))
            lines[at:at] = block
            echo_pool.append((owner, _fill(event.key, x=x)))
        for t, (speaker, text, fact) in enumerate(lines):
            turn = Turn(
                id=f"{dia.id}:s{s + 1}:t{t}",
                speaker=speaker,
                text=text,
                when=when + timedelta(minutes=3 * t),
                session=s + 1,
            )
            dia.turns.append(turn)
            if fact:
                told.append((fact[0], fact[1], fact[2], turn.id, turn.when))
    _questions(rng, split, dia, told)
    return dia


def _echo(rng: random.Random, split: Split, key: str) -> str:
    return _fill(rng.choice(split.echoes), key=key)


def _questions(
    rng: random.Random,
    split: Split,
    dia: Dialogue,
    told: list[tuple[str, Event, str, str, datetime]],
) -> None:
    def ask(kind: str, text: str, evidence: list[str]) -> None:
        dia.questions.append(
            Question(f"{dia.id}:q{len(dia.questions)}", kind, text, tuple(dict.fromkeys(evidence)))
        )

    # Shares as in real long-conversation sets: mostly single facts, open questions rare.
    for owner, event, x, turn_id, _when in told:
        friend = dia.people[1] if owner == dia.people[0] else dia.people[0]
        key = _fill(event.key, x=x)
        single = event.what if rng.random() < 0.6 else rng.choice(split.key_ask)
        for kind, text, share in (
            ("single", single, 0.9),
            ("temporal", event.when, 0.4),
            ("open", event.open, 0.12),
        ):
            if rng.random() < share:
                ask(kind, _fill(text, O=owner, F=friend, x=x, key=key), [turn_id])
    for person in dia.people:
        by_topic: dict[str, list[str]] = {}
        by_month: dict[tuple[int, int], list[str]] = {}
        for owner, event, _x, turn_id, when in told:
            if owner == person:
                by_topic.setdefault(event.topic, []).append(turn_id)
                by_month.setdefault((when.year, when.month), []).append(turn_id)
        for topic, evidence in sorted(by_topic.items()):
            if len(evidence) >= 2:
                ask("multi", _fill(rng.choice(split.multi[topic]), O=person), evidence)
        for (year, month), evidence in sorted(by_month.items()):
            if rng.random() < 0.3:
                filled = _fill(
                    rng.choice(split.month_ask), O=person, month=MONTHS[month - 1], year=str(year)
                )
                ask("temporal", filled, evidence)


def generate(split: str, seed: int = 15, dialogues: int = 10) -> list[Dialogue]:
    """Return ``dialogues`` seeded conversations of the ``dev`` or ``heldout`` set."""
    data = SPLITS[split]
    rng = random.Random(f"convo:{split}:{seed}")
    names = list(data.names)
    rng.shuffle(names)
    out = []
    for i in range(dialogues):
        people = (names[(2 * i) % len(names)], names[(2 * i + 1) % len(names)])
        start = datetime(2022 + i % 3, 1 + rng.randrange(12), 1 + rng.randrange(28), 17, tzinfo=UTC)
        out.append(_dialogue(rng, data, i, people, start))
    return out


if __name__ == "__main__":
    for name in SPLITS:
        convos = generate(name)
        kinds = Counter(q.kind for d in convos for q in d.questions)
        print(name, sum(len(d.turns) for d in convos), "turns", dict(kinds))
        first = convos[0]
        for turn in first.turns[:24]:
            print(" ", turn.id, turn.when.date(), turn.speaker + ":", turn.text)
        for q in first.questions[:10]:
            print(" ", q.kind, q.text, q.evidence)
