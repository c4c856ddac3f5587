"""Issue 14 item 7: ingest size cap, future timestamps, model usage recorded as cost."""

import io
import json
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cli.app import main
from graph.deps import Deps
from state.instance import Instance

FIXED = datetime(2031, 3, 4, 5, 6, tzinfo=UTC)


def run_cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, stdin: str, *argv: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _signal_files(instance: Instance) -> list[Path]:
    return list((instance.data / "signals").rglob("*.jsonl"))


# --------------------------------------------------------------------------- 6. ingest limits


def test_crash_ingest_refuses_oversized_input_in_one_line(
    instance: Instance, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from cli.ingest import MAX_INPUT_CHARS

    big = "Sensor reading 42. " * (MAX_INPUT_CHARS // 19 + 10)
    code, out, err = run_cli(capsys, monkeypatch, big, "ingest", "--source", "webhook")
    assert code != 0 and out == ""
    assert "input too large" in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err and _signal_files(instance) == []
    code, _, _ = run_cli(capsys, monkeypatch, "Sensor reading 42.", "ingest", "--source", "webhook")
    assert code == 0 and len(_signal_files(instance)) == 1


def _envelope(ts: datetime | str, ref: str = "news-1") -> dict[str, object]:
    return {
        "text": "Bridge closed for repairs until Friday.",
        "source_kind": "news",
        "source_ref": ref,
        "ingest_ts": ts if isinstance(ts, str) else ts.isoformat(),
        "lang": "en",
    }


def test_crash_ingest_refuses_an_envelope_from_the_far_future(
    instance: Instance, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = json.dumps(_envelope("9999-12-31T23:59:59+00:00"))
    code, _, err = run_cli(capsys, monkeypatch, stdin, "ingest", "--envelope")
    assert code != 0 and "more than a day in the future" in err
    assert len(err.strip().splitlines()) == 1 and _signal_files(instance) == []


def test_crash_envelope_future_skew_is_measured_on_the_injected_clock(instance: Instance) -> None:
    from graph.signals import ingest_envelope
    from state.signals import EnvelopeError

    deps = Deps.for_instance(instance, clock=lambda: FIXED)
    with pytest.raises(EnvelopeError, match="more than a day in the future"):
        ingest_envelope(deps, _envelope(FIXED + timedelta(hours=25), "a"))
    assert ingest_envelope(deps, _envelope(FIXED + timedelta(hours=23), "b")).action == "added"


# --------------------------------------------------------------------------- 7. cost


class FakeOpenAI:
    """A chat-completions endpoint on 127.0.0.1 that reports token usage, like a hosted one."""

    def __init__(self, prompt_tokens: int, completion_tokens: int) -> None:
        self.calls = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                self.rfile.read(length)
                outer.calls += 1
                body = json.dumps(
                    {
                        "id": f"c{outer.calls}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "gpt-4o-mini",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": "Here is my answer."},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": completion_tokens,
                            "total_tokens": prompt_tokens + completion_tokens,
                        },
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def hosted(instance: Instance) -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(prompt_tokens=400_000, completion_tokens=100_000)
    text = instance.config_file.read_text()
    text = text.replace('provider = "embedded"', 'provider = "openai"')
    text = text.replace('base_url = ""', f'base_url = "{server.url}"', 1)
    text = text.replace("max_cost_per_day = 1.0", "max_cost_per_day = 0.2")
    instance.config_file.write_text(text)
    yield server
    server.server.shutdown()


def test_crash_hosted_model_usage_is_cost_and_the_daily_limit_stops_calls(
    instance: Instance, hosted: FakeOpenAI
) -> None:
    from graph.policy import SecurityPolicy

    clock = {"now": FIXED}
    deps = Deps.for_instance(instance, clock=lambda: clock["now"])
    # gpt-4o-mini: 0.4 M in * 0.15 + 0.1 M out * 0.60 = 0.12 per call; the limit is 0.2
    thoughts = [
        deps.think_text("drafts", mode="talk", values=_draft_values(), fallback="(fallback)")
        for _ in range(3)
    ]
    assert [t.ok for t in thoughts] == [True, True, False]
    assert hosted.calls == 2  # the third call never reached the model
    assert "daily cost limit" in thoughts[2].reason
    policy = SecurityPolicy(instance, deps.config, clock=lambda: clock["now"])
    assert policy.usage() == (0, pytest.approx(0.24))  # cost, and no action counted
    clock["now"] = FIXED + timedelta(days=1)  # a new UTC day: the limit starts again
    again = deps.think_text("drafts", mode="talk", values=_draft_values(), fallback="-")
    assert again.ok and hosted.calls == 3


def test_crash_embedded_model_costs_nothing(instance: Instance) -> None:
    from tests.scripted import ScriptedChatModel

    deps = Deps.for_instance(instance, model_for=lambda mode: ScriptedChatModel())
    assert deps.think_text("drafts", mode="talk", values=_draft_values(), fallback="-").ok
    assert not (instance.machine / "policy_ledger.json").exists()


def _draft_values() -> dict[str, object]:
    from prompts import template

    names = (
        template("drafts/system").get_identifiers() + template("drafts/prompt").get_identifiers()
    )
    return {name: "hello" for name in names}
