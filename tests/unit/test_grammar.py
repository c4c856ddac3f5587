import re
from pathlib import Path

import pytest

from kernel.grammar import BUILTIN_GRAMMARS, split_sentences
from kernel.grammar import render_reply as kernel_render_reply
from state.grammars import load_grammar, resolve_grammar


def render_reply(draft: str, grammar: str, *, base_dir: Path | None = None, **kw: str) -> str:
    """Render as compose_final does: the file (if any) resolved by state, the rules by kernel."""
    return kernel_render_reply(draft, grammar, custom=resolve_grammar(grammar, base_dir), **kw)


DRAFT = """Hi there! Great question. I think the cache is stale after the 2.5 release, e.g. \
on node 7.

The hit rate dropped from 94% to 61% in 3 days. Mr. Smith saw the same thing on Jan. 5.

To fix it:
- Clear the cache with `make clean`
- Restart the 4 workers
- Check the hit rate again after 10 minutes

I hope this helps! Let me know if you have other questions."""

NUMBERS = ("2.5", "7", "94%", "61%", "3", "5", "4", "10")
FILLER = ("Hi there", "Great question", "I think", "I hope this helps", "Let me know")

PREFACE = "Caching here was a bad idea from the start."
THOUGHTS = "⟦ checked the metrics twice ⟧"


def _sentences(text: str) -> list[str]:
    return split_sentences(" ".join(line.lstrip("-# ") for line in text.splitlines()))


# --------------------------------------------------------------------------- sentence splitting


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two.", ["One.", "Two."]),
        ("Pi is 3.14 roughly. Next.", ["Pi is 3.14 roughly.", "Next."]),
        ("Use a cache, e.g. Redis. Done.", ["Use a cache, e.g. Redis.", "Done."]),
        ("That is, i.e. the same. Yes.", ["That is, i.e. the same.", "Yes."]),
        ("Ask Dr. Who. Or Mr. Smith.", ["Ask Dr. Who.", "Or Mr. Smith."]),
        ("J. R. Tolkien wrote it. Yes!", ["J. R. Tolkien wrote it.", "Yes!"]),
        ("See No. 5 and Fig. 2 here. Ok.", ["See No. 5 and Fig. 2 here.", "Ok."]),
        ("The answer is no. Then stop.", ["The answer is no.", "Then stop."]),
        ("Really? Yes! Sure.", ["Really?", "Yes!", "Sure."]),
        ("Wait... what now. End.", ["Wait... what now.", "End."]),
        ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
        ("It is 2024. 3 people came.", ["It is 2024.", "3 people came."]),
        ("no punctuation at all", ["no punctuation at all"]),
        ("   ", []),
    ],
)
def test_split_sentences_cases(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


# --------------------------------------------------------------------------- built-in structure


def test_render_formal_has_sections_and_bullets() -> None:
    out = render_reply(DRAFT, "formal")
    assert out.startswith("## Summary\n\n")
    assert "## Details" in out
    assert re.search(r"^- ", out, re.MULTILINE)
    assert "## Position" not in out


def test_render_formal_nests_items_under_their_intro() -> None:
    out = render_reply(DRAFT, "formal")
    assert "- To fix it:\n  - Clear the cache with `make clean`\n  - Restart the 4 workers" in out


def test_render_narrative_is_prose_without_markup() -> None:
    out = render_reply(DRAFT, "narrative")
    assert not re.search(r"^\s*(?:[-*•]|#+|\d+[.)]) ", out, re.MULTILINE)
    paragraphs = out.split("\n\n")
    assert 1 <= len(paragraphs) <= 3
    assert all("\n" not in p for p in paragraphs)


def test_render_narrative_turns_bullets_into_connected_sentences() -> None:
    out = render_reply(DRAFT, "narrative")
    assert "First, clear the cache with `make clean`." in out
    assert "Also, restart the 4 workers." in out
    assert "Finally, check the hit rate again after 10 minutes." in out


def test_render_narrative_ordered_list_uses_sequence_connectors() -> None:
    out = render_reply("1. Build it\n2. Test it\n3. Ship it", "narrative")
    assert out == "First, build it. Then, test it. Finally, ship it."


@pytest.mark.parametrize(
    ("draft", "expected"),
    [  # seen on SmolLM2: "First, Chicken. Also, Rice and Spinach." (no order, no sentences)
        (
            "Here are some ideas:\n- Chicken\n- Rice and spinach",
            "Here are some ideas: Chicken; Rice and spinach.",
        ),
        ("Pack these:\n- A hat\n- sunscreen\n- water", "Pack these: a hat, sunscreen and water."),
        ("Options:\n- Paris\n- Rome\n- Berlin", "Options: Paris, Rome and Berlin."),
        (  # "rice" in lower case elsewhere: its capital only opened the line
            "You could make:\n- Rice pudding\n- fried rice",
            "You could make: rice pudding and fried rice.",
        ),
        # numbers on things order nothing (seen on Qwen2.5-Coder-0.5B: "First, Carrot. Then, …")
        (
            "Five vegetables:\n1. Carrot\n2. Broccoli\n3. Bell pepper",
            "Five vegetables: Carrot, Broccoli and Bell pepper.",
        ),
        # steps keep their order words, sentences their own
        ("Steps:\n1. Boil water\n2. Add pasta", "Steps: First, boil water. Then, add pasta."),
        ("- Sleep early.\n- Drink water.", "First, sleep early. Also, drink water."),
    ],
)
def test_render_narrative_makes_short_unordered_items_one_series(draft: str, expected: str) -> None:
    assert render_reply(draft, "narrative") == expected


def test_render_narrative_keeps_proper_nouns_capitalised() -> None:
    out = render_reply("- Python is fast\n- Rust is faster", "narrative")
    assert out == "First, Python is fast. Also, Rust is faster."


def test_render_narrative_keeps_topic_sentence_first() -> None:
    out = render_reply(DRAFT, "narrative")
    assert out.startswith("I think the cache is stale")


def test_render_terse_is_shortest_and_has_no_filler() -> None:
    terse = render_reply(DRAFT, "terse")
    assert len(terse) < len(render_reply(DRAFT, "narrative"))
    assert len(terse) < len(render_reply(DRAFT, "formal"))
    assert len(split_sentences(terse)) <= 2
    for phrase in FILLER:
        assert phrase.lower() not in terse.lower()
    assert "#" not in terse and "\n- " not in terse


def test_render_terse_keeps_the_most_informative_sentences() -> None:
    out = render_reply(DRAFT, "terse")
    assert "94%" in out and "61%" in out


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        ("Great question! The port is 8080.", "The port is 8080."),
        ("I think the port is 8080.", "The port is 8080."),
        ("Honestly, the port is 8080. Hope this helps!", "The port is 8080."),
        ("Sure, the port is 8080.", "The port is 8080."),
        ("The port, I think, is 8080.", "The port is 8080."),
        ("As an AI, I cannot check, but the port is 8080.", "The port is 8080."),
        ("As an AI language model, the port is 8080.", "The port is 8080."),
        ("Hello! It seems that the port is 8080. Cheers!", "The port is 8080."),
        ("No, the port is 8080.", "No, the port is 8080."),
    ],
)
def test_render_terse_strips_hedges_and_pleasantries(draft: str, expected: str) -> None:
    assert render_reply(draft, "terse") == expected


def test_render_builtins_differ_in_structure() -> None:
    outputs = {g: render_reply(DRAFT, g) for g in BUILTIN_GRAMMARS}
    assert len(set(outputs.values())) == 3
    assert "## " in outputs["formal"] and "## " not in outputs["narrative"]
    assert "## " not in outputs["terse"]


# --------------------------------------------------------------------------- content preservation


@pytest.mark.parametrize("grammar", ["narrative", "formal"])
@pytest.mark.parametrize("number", NUMBERS)
def test_render_preserves_numbers(grammar: str, number: str) -> None:
    assert re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", render_reply(DRAFT, grammar))


@pytest.mark.parametrize("grammar", ["narrative", "formal"])
def test_render_preserves_substantive_sentences(grammar: str) -> None:
    out = render_reply(DRAFT, grammar)
    for fact in ("make clean", "Mr. Smith saw the same thing on Jan. 5", "e.g. on node 7"):
        assert fact in out


@pytest.mark.parametrize("grammar", BUILTIN_GRAMMARS)
def test_render_keeps_code_blocks_verbatim(grammar: str) -> None:
    code = "```python\nx = 3.14\n\nprint(x)  # e.g. Done. Next\n```"
    out = render_reply(f"Run this snippet to print pi.\n\n{code}\n\nIt prints 3.14.", grammar)
    assert code in out


def test_render_numbered_prose_line_keeps_its_number() -> None:
    out = render_reply("The answer is below.\n42. That is all.", "formal")
    assert "42" in out


def test_render_foreign_heading_is_kept() -> None:
    out = render_reply("# Setup\nInstall it. Then run it.", "formal")
    assert "Setup" in out
    assert "Setup" in render_reply("# Setup\nInstall it. Then run it.", "narrative")


# --------------------------------------------------------------------------- preface and thoughts


def test_render_narrative_puts_preface_first() -> None:
    out = render_reply(DRAFT, "narrative", preface=PREFACE)
    assert out.startswith(PREFACE + " I think the cache is stale")


def test_render_formal_puts_preface_in_position_section() -> None:
    out = render_reply(DRAFT, "formal", preface=PREFACE)
    assert out.startswith(f"## Position\n\n{PREFACE}\n\n## Summary")


def test_render_terse_drops_preface() -> None:
    assert PREFACE not in render_reply(DRAFT, "terse", preface=PREFACE)


@pytest.mark.parametrize("grammar", BUILTIN_GRAMMARS)
def test_render_appends_thoughts_last(grammar: str) -> None:
    out = render_reply(DRAFT, grammar, preface=PREFACE, thoughts=f"  {THOUGHTS}\n")
    assert out.endswith(f"\n\n{THOUGHTS}")
    assert out.count(THOUGHTS) == 1


@pytest.mark.parametrize("grammar", BUILTIN_GRAMMARS)
def test_render_blank_thoughts_add_nothing(grammar: str) -> None:
    assert render_reply(DRAFT, grammar, thoughts="  \n") == render_reply(DRAFT, grammar)


# --------------------------------------------------------------------------- edge cases


@pytest.mark.parametrize("grammar", BUILTIN_GRAMMARS)
@pytest.mark.parametrize("draft", ["", "   ", "\n\n\t\n"])
def test_render_blank_draft_is_empty(grammar: str, draft: str) -> None:
    assert render_reply(draft, grammar, preface=PREFACE, thoughts=THOUGHTS) == ""


@pytest.mark.parametrize("grammar", BUILTIN_GRAMMARS)
@pytest.mark.parametrize(
    "draft",
    [
        "ok",
        "42",
        "Great question! I hope this helps.",
        "- single item",
        "## Summary",
        "```\ncode only\n```",
        "...",
        "1) one\n2) two",
    ],
)
def test_render_never_returns_empty_for_non_blank_draft(grammar: str, draft: str) -> None:
    assert render_reply(draft, grammar).strip()


@pytest.mark.parametrize("grammar", BUILTIN_GRAMMARS)
def test_render_single_sentence_is_kept(grammar: str) -> None:
    assert "The build is green." in render_reply("The build is green.", grammar)


@pytest.mark.parametrize("grammar", [" Formal ", "TERSE", "Narrative"])
def test_render_builtin_names_are_case_insensitive(grammar: str) -> None:
    name = grammar.strip().lower()
    assert render_reply(DRAFT, grammar) == render_reply(DRAFT, name)


def test_render_unknown_grammar_raises() -> None:
    with pytest.raises(ValueError, match="unknown grammar 'poetic'"):
        render_reply(DRAFT, "poetic")


@pytest.mark.parametrize("grammar", BUILTIN_GRAMMARS)
def test_render_is_stable_on_its_own_output(grammar: str) -> None:
    once = render_reply(DRAFT, grammar)
    assert render_reply(once, grammar) == once


@pytest.mark.parametrize("first", BUILTIN_GRAMMARS)
@pytest.mark.parametrize("second", BUILTIN_GRAMMARS)
def test_render_accepts_any_grammars_output(first: str, second: str) -> None:
    rendered = render_reply(DRAFT, first, preface=PREFACE, thoughts=THOUGHTS)
    again = render_reply(rendered, second, preface=PREFACE)
    assert again.strip()
    assert "4" in again or second == "terse"


def test_render_formal_output_reformats_without_duplicate_sections() -> None:
    once = render_reply(DRAFT, "formal", preface=PREFACE)
    twice = render_reply(once, "formal")
    assert twice.count("## Summary") == 1 and twice.count("## Details") == 1
    assert _sentences(once)  # sanity: the output still reads as sentences


# --------------------------------------------------------------------------- custom grammars


def _write(tmp_path: Path, text: str, name: str = "memo.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_render_custom_grammar_applies_rules(tmp_path: Path) -> None:
    _write(
        tmp_path,
        'name = "memo"\nmax_sentences = 3\nbullet = "* "\nheader = "MEMO"\n'
        'drop_patterns = ["(?i)^(hi|great question)"]\nprefix = ">> "\nsuffix = " <<"\n',
    )
    out = render_reply(DRAFT, "memo.toml", base_dir=tmp_path, preface=PREFACE, thoughts=THOUGHTS)
    assert out == (
        f">> MEMO\n\n{PREFACE}\n\n"
        "* I think the cache is stale after the 2.5 release, e.g. on node 7.\n"
        "* The hit rate dropped from 94% to 61% in 3 days.\n"
        "* Mr. Smith saw the same thing on Jan. 5. <<"
        f"\n\n{THOUGHTS}"
    )


def test_render_custom_grammar_joiner_and_filler(tmp_path: Path) -> None:
    path = _write(tmp_path, 'joiner = " | "\nstrip_filler = true\npreface = false\n')
    out = render_reply(
        "Hi! I think it is 7. It is odd.", str(path), base_dir=tmp_path, preface=PREFACE
    )
    assert out == "It is 7. | It is odd."


def test_render_custom_grammar_empty_file_uses_defaults(tmp_path: Path) -> None:
    path = _write(tmp_path, "")
    assert render_reply("One. Two.", str(path), base_dir=tmp_path) == "One. Two."
    assert load_grammar(path).name == "memo"


def test_render_custom_grammar_dropping_everything_falls_back(tmp_path: Path) -> None:
    path = _write(tmp_path, 'drop_patterns = [".*"]\n')
    assert render_reply("  Only this.  ", str(path), base_dir=tmp_path) == "Only this."


def test_render_custom_relative_path_resolves_against_base_dir(tmp_path: Path) -> None:
    (tmp_path / "grammars").mkdir()
    _write(tmp_path / "grammars", 'bullet = "+ "\n', name="plus.toml")
    out = render_reply("Alpha. Beta.", "grammars/plus.toml", base_dir=tmp_path)
    assert out == "+ Alpha.\n+ Beta."


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("max_sentences = ", "invalid TOML"),
        ("max_sentences = 0", "max_sentences must be a positive integer"),
        ("max_sentences = true", "max_sentences must be a positive integer"),
        ('max_sentences = "2"', "max_sentences must be a positive integer"),
        ("bullet = 3", "bullet must be a string"),
        ("preface = 1", "preface must be true or false"),
        ('drop_patterns = "x"', "drop_patterns must be a list of strings"),
        ('drop_patterns = ["("]', "drop pattern '(' does not compile"),
        ('colour = "red"', "unknown key"),
    ],
)
def test_load_grammar_rejects_broken_file(tmp_path: Path, text: str, problem: str) -> None:
    _write(tmp_path, text, name="broken.toml")
    with pytest.raises(ValueError, match=re.escape(problem)) as info:
        render_reply(DRAFT, "broken.toml", base_dir=tmp_path)
    message = str(info.value)
    assert "broken.toml" in message and "\n" not in message


def test_load_grammar_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"nope\.toml: cannot read") as info:
        render_reply(DRAFT, "nope.toml", base_dir=tmp_path)
    assert "\n" not in str(info.value)


def test_render_custom_grammar_validated_even_for_blank_draft(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read"):
        render_reply("  ", "missing.toml", base_dir=tmp_path)


def test_render_narrative_keeps_colon_of_item_introducing_nested_list() -> None:
    out = render_reply("- Setup:\n  - Install it\n  - Run it\n- Done", "narrative")
    assert out == "Setup: install it and run it. Done."


def test_render_narrative_lowers_the_verbs_that_open_advice_but_not_names() -> None:
    # Seen with Qwen2.5-Coder-0.5B: "First, Research the job requirements …", "Finally, Listen …".
    draft = "Tips:\n1. Research the company.\n2. Listen to the question.\n3. Python helps too."
    out = render_reply(draft, "narrative")
    assert out == (
        "Tips: First, research the company. Then, listen to the question. "
        "Finally, Python helps too."
    )


@pytest.mark.parametrize(
    ("draft", "expected"),
    [  # a review found titles lowered by the advice verbs: "First, contact (1997)", "slow Horses"
        ("- Contact (1997)\n- Drive by Daniel Pink", "Contact (1997) and Drive by Daniel Pink."),
        (
            "- Slow Horses\n- Journal is Apple's diary app",
            "First, Slow Horses. Also, Journal is Apple's diary app.",
        ),
        (
            "- Visit Lisbon in May.\n- Drink water.",
            "First, visit Lisbon in May. Also, drink water.",
        ),
    ],
)
def test_render_narrative_keeps_titles_that_open_with_an_advice_verb(
    draft: str, expected: str
) -> None:
    assert render_reply(draft, "narrative") == expected


def test_render_narrative_folds_a_numbered_list_whose_items_are_spaced_by_blank_lines() -> None:
    # Seen with Qwen2.5-Coder-0.5B: "2." and "3." were left in the prose after the first item.
    draft = "1. **Try a routine**: it helps.\n\n2. **Start calm**: it helps.\n\n3. **Use a fan**."
    assert render_reply(draft, "narrative") == (
        "First, **Try a routine**: it helps. Then, **Start calm**: it helps. "
        "Finally, **Use a fan**."
    )
    # prose between two numbered lines ends the list: "2." after it is kept as written
    assert render_reply("1. One\n\nSome prose here.\n\n2. Two", "narrative") == (
        "One.\n\nSome prose here.\n\n2. Two"
    )
