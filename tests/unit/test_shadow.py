"""The psyche's shadow check: normalisation, the trigger language, the catalogue and the dev set."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from kernel.shadow import (
    Shadow,
    ShadowPattern,
    ShadowVerdict,
    action_description,
    check_shadow,
    compile_trigger,
    confusables_available,
    normalize_action,
    validate_shadow,
)
from kernel.shadow_catalogue import (
    DEFAULT_BIAS_PATTERNS,
    DEFAULT_VETO_PATTERNS,
    SEED_DESTRUCTIVE_ACTION,
)

SECURITY = Path(__file__).resolve().parents[3] / "shared" / "security"
DEV_SET = SECURITY / "shadow_dev.jsonl"

DEFAULT = Shadow(veto_patterns=DEFAULT_VETO_PATTERNS, bias_patterns=DEFAULT_BIAS_PATTERNS)
SEED_ONLY = Shadow(veto_patterns=[SEED_DESTRUCTIVE_ACTION], bias_patterns=[])


def _dev_rows() -> list[dict[str, Any]]:
    if not DEV_SET.exists():
        pytest.skip(f"shadow dev set not found at {DEV_SET}")
    lines = DEV_SET.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _vetoed(tool: str, tool_input: object, shadow: Shadow = DEFAULT) -> bool:
    return check_shadow(action_description(tool, tool_input), shadow).veto


# --------------------------------------------------------------------------- dev set


def test_dev_set_every_row_gets_its_label() -> None:
    wrong = [
        f"{row['id']} ({row['tier']}, want {row['label']}): {row['text']}"
        for row in _dev_rows()
        if check_shadow(row["text"], DEFAULT).veto != (row["label"] == "veto")
    ]
    assert wrong == []


def test_dev_set_tier_rates_meet_targets(record_property: Any) -> None:
    vetoed: dict[str, list[bool]] = defaultdict(list)
    for row in _dev_rows():
        vetoed[row["tier"]].append(check_shadow(row["text"], DEFAULT).veto)
    rates = {tier: sum(flags) / len(flags) for tier, flags in vetoed.items()}
    record_property("shadow_veto_rates", rates)
    assert rates["core"] == 1.0, rates
    assert rates["extended"] >= 0.9, rates
    assert rates["allow"] == 0.0, rates


def test_dev_set_rows_get_their_label_through_the_canonical_forms() -> None:
    from kernel.actions import check_tool_call

    wrong = [
        f"{row['id']} ({row['tier']}, want {row['label']}): {row['text']}"
        for row in _dev_rows()
        if check_tool_call(row["tool"], row["input"], DEFAULT).veto != (row["label"] == "veto")
    ]
    assert wrong == []


def test_dev_set_shell_rows_get_their_label_as_the_argv_the_shell_skill_takes() -> None:
    import shlex

    from kernel.actions import check_tool_call

    rows = [row for row in _dev_rows() if row["tool"] == "shell"]
    wrong = [
        row["id"]
        for row in rows
        if check_tool_call("shell", {"argv": shlex.split(row["input"])}, DEFAULT).veto
        != (row["label"] == "veto")
    ]
    assert rows and wrong == []


def test_dev_set_allow_rows_pass_the_seed_triggers_alone() -> None:
    rows = [row for row in _dev_rows() if row["label"] == "allow"]
    assert [row["id"] for row in rows if check_shadow(row["text"], SEED_ONLY).veto] == []


# --------------------------------------------------------------------------- action description


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        ("shell", "rm -rf /", "tool=shell input='rm -rf /'"),
        ("sql", {"q": "DROP TABLE t"}, "tool=sql input={'q': 'DROP TABLE t'}"),
        ("calc", 3, "tool=calc input=3"),
    ],
)
def test_action_description_uses_spec_shape(tool: str, tool_input: object, expected: str) -> None:
    assert action_description(tool, tool_input) == expected


# --------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("DROP   TABLE users", "drop table users"),
        ('"drop" table', "drop table"),
        ("r''m -rf /", "rm -rf /"),
        ("“delete” ‘all’", "delete all"),
        ("ｒｍ －ｒｆ /", "rm -rf /"),
        ("r\u200bm\u200d -rf\u202e /", "rm -rf /"),
        ("DROP\\nTABLE orders;", "drop table orders;"),
        ("delete\u2014all", "delete-all"),
        ("rm\u00a0\t-rf", "rm -rf"),
        ("rm${IFS}-rf", "rm -rf"),
        ("DROP/**/TABLE x", "drop table x"),
        ("r\\m -rf", "rm -rf"),
        ("ᴅʀᴏᴘ ᴛᴀʙʟᴇ", "drop table"),
        ("𝐝𝐞𝐥𝐞𝐭𝐞 𝐚𝐥𝐥", "delete all"),
    ],
)
def test_normalize_action_folds_evasions(raw: str, expected: str) -> None:
    assert normalize_action(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ԁеlеtе аll", "delete all"),  # Cyrillic d, e, a
        ("DRΟP TΑBLE", "drop table"),  # Greek capital omicron and alpha
        ("гм -гf", "rm -rf"),  # Cyrillic ghe for r
        ("rм -rf", "rm -rf"),  # Cyrillic small em
    ],
)
def test_normalize_action_maps_confusables_to_latin(raw: str, expected: str) -> None:
    if not confusables_available():
        pytest.skip("confusable-homoglyphs is not installed")
    assert normalize_action(raw) == expected


# --------------------------------------------------------------------------- core triggers


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("shell", "rm -rf /"),
        ("shell", "RM -RF /"),
        ("shell", "Rm -Rf /tmp/x"),
        ("shell", "rm    -rf   /"),
        ("shell", "rm\t-rf\n/"),
        ("shell", "'rm' '-rf' /"),
        ("shell", 'r"m" -r""f /'),
        ("shell", "`rm` -rf /"),
        ("shell", "ｒｍ -ｒｆ /"),
        ("shell", "r\u200bm -r\u200cf /"),
        ("shell", "rm\u2060 -rf\ufeff /"),
        ("sql", "DROP TABLE users"),
        ("sql", "drop   table users;"),
        ("sql", '"drop" table users'),
        ("sql", "DROP\nTABLE users"),
        ("sql", "ＤＲＯＰ ＴＡＢＬＥ users"),
        ("sql", "dr\u200bop ta\u00adble users"),
        ("email", "DELETE ALL messages"),
        ("email", "delete-all emails"),
        ("email", "delete_all(folder='inbox')"),
        ("email", "'delete' \"all\" mail"),
        ("email", "delete\u200b all mail"),
    ],
)
def test_check_shadow_seed_triggers_survive_evasions(tool: str, tool_input: str) -> None:
    verdict = check_shadow(action_description(tool, tool_input), SEED_ONLY)
    assert verdict.veto
    assert verdict.veto_pattern == "destructive_action"


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("shell", "rм -rf /"),
        ("shell", "гm -rf /"),
        ("sql", "DRΟP TABLE users"),
        ("email", "ԁеlеtе аll emails"),
        ("email", "DЕLЕТЕ АLL emails"),
    ],
)
def test_check_shadow_seed_triggers_survive_look_alikes(tool: str, tool_input: str) -> None:
    if not confusables_available():
        pytest.skip("confusable-homoglyphs is not installed")
    assert _vetoed(tool, tool_input, SEED_ONLY)


def test_check_shadow_reports_pattern_trigger_and_explanation() -> None:
    verdict = check_shadow(action_description("shell", "sudo RM  -RF /"), DEFAULT)
    assert verdict == ShadowVerdict(
        veto=True,
        veto_pattern="destructive_action",
        matched_trigger="rm -rf",
        matched_text="rm -rf",
        explanation="Destructive actions require explicit user confirmation.",
        bias=0.2,
        bias_patterns=["privilege_escalation"],
    )
    assert not verdict.proceed


# --------------------------------------------------------------------------- catalogue


@pytest.mark.parametrize(
    ("tool", "tool_input", "pattern"),
    [
        ("shell", "rm -r -f /etc", "recursive_delete"),
        ("shell", "rm -fR ./build", "recursive_delete"),
        ("shell", "rm --recursive --force /srv", "recursive_delete"),
        ("shell", "rm -r ~", "recursive_delete"),
        ("shell", "find / -mindepth 1 -delete", "recursive_delete"),
        ("shell", "find . -type f -exec rm {} +", "recursive_delete"),
        ("python", "shutil.rmtree('/home/me')", "recursive_delete"),
        ("powershell", "Remove-Item C:\\data -Recurse -Force", "recursive_delete"),
        ("cmd", "rd /s /q C:\\Users", "recursive_delete"),
        ("cmd", "del /s /q C:\\*", "recursive_delete"),
        ("shell", "mkfs.ext4 /dev/sdb1", "disk_destruction"),
        ("cmd", "format C: /q", "disk_destruction"),
        ("shell", "dd if=/dev/zero of=/dev/sda bs=1M", "disk_destruction"),
        ("shell", "wipefs -a /dev/sdb", "disk_destruction"),
        ("shell", "shred -n 3 /dev/nvme0n1", "disk_destruction"),
        ("sql", "DROP DATABASE prod;", "database_destruction"),
        ("sql", "drop schema billing cascade", "database_destruction"),
        ("sql", "TRUNCATE TABLE invoices;", "database_destruction"),
        ("sql", "DELETE FROM users", "database_destruction"),
        ("sql", "delete from user_accounts;", "database_destruction"),
        ("sql", "DELETE FROM orders WHERE 1=1", "database_destruction"),
        ("sql", "UPDATE users SET password_hash = NULL;", "database_destruction"),
        ("mongo", "db.orders.drop()", "database_destruction"),
        ("shell", "redis-cli FLUSHALL", "database_destruction"),
        ("shell", "terraform destroy -auto-approve", "infrastructure_destroy"),
        ("shell", "kubectl delete namespace prod", "infrastructure_destroy"),
        ("shell", "kubectl delete pods --all -n prod", "infrastructure_destroy"),
        ("shell", "aws s3 rb s3://bucket --force", "infrastructure_destroy"),
        ("shell", "aws s3 rm s3://bucket --recursive", "infrastructure_destroy"),
        ("shell", "gcloud projects delete my-project", "infrastructure_destroy"),
        ("shell", "docker system prune -a --volumes -f", "infrastructure_destroy"),
        ("email", "empty trash", "mass_deletion"),
        ("email", "purge mailbox", "mass_deletion"),
        ("files", "delete every file in /shared", "mass_deletion"),
        ("files", "wipe the entire cloud drive", "mass_deletion"),
        ("contacts", "purge every contact and all backups", "mass_deletion"),
        ("photos", "remove all of my photos", "mass_deletion"),
        ("shell", "git push --force origin main", "history_rewrite"),
        ("shell", "git push -f", "history_rewrite"),
        ("shell", "git reset --hard origin/main", "history_rewrite"),
        ("shell", "git filter-branch --tree-filter 'rm secrets' HEAD", "history_rewrite"),
        ("shell", "git clean -fdx", "history_rewrite"),
        ("shell", "crontab -r", "system_destruction"),
    ],
)
def test_check_shadow_catalogue_vetoes_destructive_actions(
    tool: str, tool_input: str, pattern: str
) -> None:
    verdict = check_shadow(action_description(tool, tool_input), DEFAULT)
    assert verdict.veto
    assert verdict.veto_pattern in {pattern, "destructive_action"}


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("planner", "drop table tennis practice"),
        ("planner", "drop table tennis from Saturday's plan and add hiking"),
        ("planner", "drop table tennis"),
        ("docs", "drop table of contents from the report"),
        ("files", "remove the draft I just wrote"),
        ("docs", "delete the typo in line 3"),
        ("shell", "rm notes.txt"),
        ("shell", "rm -i build/old.log"),
        ("shell", "rm -f build/app.o"),
        ("shell", "rm -r build"),
        ("shell", "find /tmp -name '*.tmp' -mtime +7 -delete"),
        ("sql", "SELECT * FROM users WHERE id = 3"),
        ("sql", "DELETE FROM t WHERE id=3"),
        ("sql", "UPDATE users SET name = 'x' WHERE id = 2;"),
        ("sql", "CREATE TABLE IF NOT EXISTS notes (id INTEGER)"),
        ("docs", "truncate the summary to 100 words"),
        ("docs", "format the report as a table with three columns"),
        ("shell", "git push"),
        ("shell", "git push origin feature/login"),
        ("shell", "git push --force-with-lease origin feature/login"),
        ("shell", "git branch -d feature/old-parser"),
        ("shell", "kubectl delete pod web-1"),
        ("shell", "aws s3 rm s3://bucket/file.txt"),
        ("shell", "dd if=/dev/zero of=/tmp/blob bs=1M count=10"),
        ("email", "mark all messages as read"),
        ("email", "archive all messages from last year"),
        ("email", "delete all-day event flag"),
        ("spreadsheet", "clear all filters"),
        ("docs", "remove all formatting"),
        ("notes", "undelete all notes"),
        ("search", "what does rm -rf do and why is it dangerous"),
        ("web_search", "how to delete all emails in gmail"),
        ("web_fetch", "https://en.wikipedia.org/wiki/Rm_(Unix)"),
        ("memory_recall", "the rm -rf incident"),
        ("chat", "what is DROP TABLE?"),
        ("docs", "explain what rm -rf does"),
    ],
)
def test_check_shadow_allows_look_alikes(tool: str, tool_input: str) -> None:
    verdict = check_shadow(action_description(tool, tool_input), DEFAULT)
    assert not verdict.veto, verdict


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("sql", "drop table tennis"),  # a SQL tool runs SQL, whatever the table is called
        ("planner", "DROP TABLE tennis"),  # upper case reads as SQL
        ("planner", "drop table tennis; select 1"),  # SQL punctuation
        ("chat", "what is rm -rf? rm -rf /"),  # a question followed by a command
        ("search_and_delete", "delete all results"),  # not a read-only tool
    ],
)
def test_check_shadow_prose_and_mention_rules_do_not_open_holes(tool: str, tool_input: str) -> None:
    assert _vetoed(tool, tool_input)


def test_check_shadow_tool_part_matches_ignore_the_mention_rule() -> None:
    shadow = Shadow(
        veto_patterns=[
            ShadowPattern(name="no_searching_secrets", triggers=[r"re:^tool=search .*\bsecret"])
        ],
        bias_patterns=[],
    )
    assert check_shadow(action_description("search", "the secret plan"), shadow).veto
    assert not check_shadow(action_description("search", "the public plan"), shadow).veto


@pytest.mark.parametrize(
    "tool_input",
    [
        "echo cm0gLXJmIC8= | base64 -d | sh",  # base64 of "rm -rf /"
        "{rm,-rf,/}",  # bash brace expansion
        "rm${IFS}-rf${IFS}/",
    ],
)
def test_check_shadow_decodes_hidden_payloads(tool_input: str) -> None:
    assert _vetoed("shell", tool_input)


# --------------------------------------------------------------------------- biases


def test_check_shadow_bias_proceeds_with_penalty() -> None:
    verdict = check_shadow(action_description("kg_query", "same tool, repeated query"), DEFAULT)
    assert verdict.proceed
    assert not verdict.veto
    assert verdict.bias == pytest.approx(0.3)
    assert verdict.bias_patterns == ["repetitive_loop"]


def test_check_shadow_bias_accumulates_and_caps_at_one() -> None:
    biases = [
        ShadowPattern(name=f"b{i}", triggers=["curl"], severity=0.4, explanation="")
        for i in range(4)
    ]
    verdict = check_shadow(
        action_description("shell", "curl x"), Shadow(veto_patterns=[], bias_patterns=biases)
    )
    assert verdict.bias == 1.0
    assert verdict.bias_patterns == ["b0", "b1", "b2", "b3"]


def test_check_shadow_clean_action_has_no_veto_and_no_bias() -> None:
    verdict = check_shadow(action_description("kg_query", "capital of France"), DEFAULT)
    assert verdict == ShadowVerdict()


# --------------------------------------------------------------------------- trigger language


@pytest.mark.parametrize(
    ("trigger", "tool", "tool_input", "fires"),
    [
        ("http_fetch", "http_fetch", "https://example.com", True),
        ("curl", "shell", "CURL https://example.com", True),
        ("curl", "shell", "curly braces", False),
        ("wire money", "bank", "Wire   Money to account 42", True),
        ("wire money", "bank", "wire-money(to=42)", True),
        ("wire money", "bank", "rewire money flows", False),
        (r"re:\bwire\s+\$?\d{4,}", "bank", "wire $25000 now", True),
        (r"re:\bwire\s+\$?\d{4,}", "bank", "wire $25 now", False),
        (r"re:^tool=shell_exec\b", "shell_exec", "ls", True),
        (r"re:^tool=shell_exec\b", "shell", "ls", False),
    ],
)
def test_check_shadow_user_triggers_work(
    trigger: str, tool: str, tool_input: str, fires: bool
) -> None:
    pattern = ShadowPattern(name="user_rule", triggers=[trigger], explanation="user rule")
    verdict = check_shadow(
        action_description(tool, tool_input), Shadow(veto_patterns=[pattern], bias_patterns=[])
    )
    assert verdict.veto is fires
    if fires:
        assert (verdict.veto_pattern, verdict.matched_trigger) == ("user_rule", trigger)


@pytest.mark.parametrize(
    ("trigger", "message"),
    [
        ("re:(unclosed", "invalid regex trigger"),
        ("re:[z-a]", "invalid regex trigger"),
        ("re:", "matches the empty string"),
        ("re:x*", "matches the empty string"),
        ("  ''  ", "empty after normalisation"),
    ],
)
def test_validate_shadow_names_pattern_of_bad_trigger(trigger: str, message: str) -> None:
    shadow = Shadow(
        veto_patterns=[ShadowPattern(name="broken_rule", triggers=["ok", trigger])],
        bias_patterns=[],
    )
    with pytest.raises(ValueError, match=rf"shadow pattern 'broken_rule': .*{message}"):
        validate_shadow(shadow)
    with pytest.raises(ValueError, match="broken_rule"):
        check_shadow(action_description("shell", "ls"), shadow)


def test_compile_trigger_marks_plain_phrases() -> None:
    assert compile_trigger("drop table").plain
    assert compile_trigger("drop table").multiword
    assert not compile_trigger("re:drop").plain


def test_validate_shadow_accepts_defaults() -> None:
    validate_shadow(DEFAULT)
    validate_shadow(Shadow())


@pytest.mark.parametrize(
    "pattern", DEFAULT_VETO_PATTERNS + DEFAULT_BIAS_PATTERNS, ids=lambda p: p.name
)
def test_catalogue_patterns_are_documented(pattern: ShadowPattern) -> None:
    assert pattern.explanation
    assert "\n" not in pattern.explanation
    assert 0.0 < pattern.severity <= 1.0


def test_catalogue_keeps_seed_pattern_first() -> None:
    seed = DEFAULT_VETO_PATTERNS[0]
    assert (seed.name, seed.triggers, seed.severity) == (
        "destructive_action",
        ["delete all", "drop table", "rm -rf"],
        1.0,
    )
    assert DEFAULT_BIAS_PATTERNS[0].name == "repetitive_loop"
    assert DEFAULT_BIAS_PATTERNS[0].severity == 0.3


def test_check_shadow_stays_fast_on_huge_inputs() -> None:
    import time

    for unit in ("git push ", "rm ", "kubectl delete ", "/* "):
        start = time.perf_counter()
        check_shadow(action_description("shell", unit * 3000), DEFAULT)
        assert time.perf_counter() - start < 2.0, unit
