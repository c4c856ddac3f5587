import json
from datetime import UTC, datetime

import pytest

from cli.app import main
from kernel.norms import detect
from state.instance import Instance
from state.norms import active_norms, add_norm


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_norms_lists_and_revokes(instance: Instance, capsys: pytest.CaptureFixture[str]) -> None:
    now = datetime(2027, 3, 1, tzinfo=UTC)
    for text in ("Never use bullet points.", "Call me Sam."):
        [proposal] = detect(text)
        add_norm(instance, proposal, now=now)
    code, out, err = run(capsys, "norms", "--json")
    assert code == 0 and err == ""
    rows = json.loads(out)
    assert [r["kind"] for r in rows] == ["no_lists", "address_as"]
    for key in ("id", "text", "kind", "source", "created", "status"):
        assert key in rows[0]
    assert rows[1]["text"] == "Address the user as Sam." and rows[1]["source"] == "chat"

    code, out, _ = run(capsys, "norms")
    assert code == 0 and "no_lists" in out and rows[0]["id"] in out

    code, out, _ = run(capsys, "norms", "revoke", rows[0]["id"])
    assert code == 0 and "Revoked" in out
    assert [n.kind for n in active_norms(instance)] == ["address_as"]
    statuses = [r["status"] for r in json.loads(run(capsys, "norms", "--json")[1])]
    assert statuses == ["revoked", "active"]


def test_revoking_an_unknown_norm_is_one_line_and_fails(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "norms", "revoke", "n-missing")
    assert code == 1 and out == ""
    assert err.startswith("lumen: error:") and "n-missing" in err and err.count("\n") == 1


def test_norms_on_a_fresh_instance_is_empty(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "norms", "--json")
    assert code == 0 and json.loads(out) == []
