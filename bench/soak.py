"""Crash soak: SIGKILL ``lumen chat --once`` and ``lumen run --cycles 1`` at random points.

Run: ``uv run python bench/soak.py [--turns 100] [--cycles 100] [--seed 7] [--keep DIR]``.

A fresh instance talks to a fake OpenAI-compatible endpoint on 127.0.0.1 (started here, in a
thread: it answers every chat completion at once and reports token usage, so the turn's real
code path runs, cost recording included, without model time). Each step starts one real
``lumen`` process, chat or run in random order, and SIGKILLs it after a random delay drawn from
0 to 1.5 times the median time a finished one took; a step that ends first counts as finished.
Meanwhile a writer thread pipes outside text into ``lumen ingest --ref`` in a loop (each ref
twice, so de-duplication is exercised under the same kills), and agent tasks are queued so
``lumen run`` has due jobs to claim.

Afterwards it checks and prints:

* corrupt files: every ``.json`` and every line of every ``.jsonl`` under the instance parses,
  SQLite files pass ``PRAGMA quick_check``, and ``lumen doctor`` has no failing check (torn lines
  moved aside are counted and shown, not failures);
* lost acknowledged memories: every chat turn that exited 0 has its message in the ledger, and
  every ingest that exited 0 (not a duplicate) has its ``FactAdded`` line;
* duplicate signals: ``FactAdded`` lines per ``source_ref`` above one;
* a stuck queue: tasks left ``running`` by a killed runner are counted, then the queue is read
  with a clock past the lease: none may still be running, and a new agent task must fit.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from state.instance import Instance, init_instance  # noqa: E402
from state.journal import MemoryJournal  # noqa: E402
from state.tasks import DEFAULT_LEASE, TaskQueue  # noqa: E402


class FakeEndpoint:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 that answers at once, with usage."""

    def __init__(self) -> None:
        """Start serving in a daemon thread."""

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                structured = "response_format" in request or "tools" in request
                text = "{}" if structured else "I hear you; let us take it one step at a time."
                body = json.dumps(
                    {
                        "id": "soak",
                        "object": "chat.completion",
                        "created": 0,
                        "model": request.get("model", "soak"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": 200,
                            "completion_tokens": 20,
                            "total_tokens": 220,
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


def configure(instance: Instance, url: str) -> None:
    """Point the instance at the fake endpoint; room for the soak's actions and costs."""
    text = instance.config_file.read_text(encoding="utf-8")
    text = text.replace('provider = "embedded"', 'provider = "openai"')
    text = text.replace('model = "gpt-4o-mini"', 'model = "soak-model"')
    text = text.replace('base_url = ""', f'base_url = "{url}"', 1)
    text = text.replace("max_actions_per_hour = 120", "max_actions_per_hour = 100000")
    instance.config_file.write_text(text, encoding="utf-8")


def lumen_env(home: Path) -> dict[str, str]:
    """Return the environment of a ``lumen`` child process on the soak instance."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LUMEN_")}
    env.update({"LUMEN_HOME": str(home), "LUMEN_LLM_THREADS": "1", "OPENAI_API_KEY": "soak"})
    return env


def lumen(home: Path, *args: str) -> list[str]:
    """Return the argv of a ``lumen`` command."""
    return [sys.executable, "-m", "cli", *args]


class Writer(threading.Thread):
    """Ingest outside text in a loop (each ref twice) until stopped; record what exited 0."""

    def __init__(self, home: Path, seed: int) -> None:
        """Prepare the writer."""
        super().__init__(daemon=True)
        self.home = home
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.acked: list[str] = []  # refs whose ingest exited 0 and was not a duplicate
        self.runs = 0

    def run(self) -> None:
        """Ingest until stopped."""
        n = 0
        while not self.stop.is_set():
            ref = f"soak-ref-{n // 2}"
            text = f"Harbour notice {n // 2}: berth {self.rng.randint(1, 40)} closes at dusk."
            done = subprocess.run(
                [*lumen(self.home, "ingest", "--source", "webhook", "--ref", ref, "--json")],
                input=text,
                capture_output=True,
                text=True,
                cwd=REPO,
                env=lumen_env(self.home),
                timeout=300,
                check=False,
            )
            self.runs += 1
            if done.returncode == 0 and not json.loads(done.stdout).get("duplicate"):
                self.acked.append(ref)
            n += 1


ERRORS: Counter[str] = Counter()
"""The last stderr line of every step that finished with a non-zero exit (printed at the end)."""


def step(home: Path, argv: list[str], kill_after: float | None) -> tuple[str, float, int]:
    """Run one command, SIGKILLing it after ``kill_after`` s; return (outcome, seconds, code)."""
    started = time.monotonic()
    process = subprocess.Popen(
        argv,
        cwd=REPO,
        env=lumen_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _, err = process.communicate(timeout=kill_after if kill_after is not None else 600)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.communicate()
        return "killed", time.monotonic() - started, -9
    if process.returncode:
        lines = [line for line in err.splitlines() if line.strip()]
        command = argv[3] if len(argv) > 3 else argv[-1]
        ERRORS[f"{command}: {lines[-1][:160] if lines else '?'}"] += 1
    return "finished", time.monotonic() - started, process.returncode


def corrupt_files(root: Path) -> list[str]:
    """Return every JSON file, JSONL line or SQLite file under ``root`` that does not parse."""
    bad: list[str] = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or "chroma" in path.parts:
            continue
        if path.suffix == ".json":
            try:
                json.loads(path.read_bytes())
            except ValueError:
                bad.append(str(path))
        elif path.suffix in {".jsonl", ".torn"}:
            for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
                try:
                    json.loads(raw)
                except ValueError:
                    bad.append(f"{path}:{number}")
            if (
                path.suffix == ".jsonl"
                and path.stat().st_size
                and not path.read_bytes().endswith(b"\n")
            ):
                bad.append(f"{path}: torn tail not yet repaired")
        elif path.suffix == ".sqlite":
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
                verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                bad.append(f"{path}: {verdict}")
    return bad


def main() -> int:
    """Run the soak and print its figures; exit 1 if any check fails."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=100, help="lumen chat --once runs")
    parser.add_argument("--cycles", type=int, default=100, help="lumen run --cycles 1 runs")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="keep the instance here (default: temp dir)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    home = args.keep or Path(tempfile.mkdtemp(prefix="lumen-soak-")) / "home"
    instance = init_instance(home)
    endpoint = FakeEndpoint()
    configure(instance, endpoint.url)
    queue = TaskQueue(instance)
    for i in range(3):
        queue.propose_agent(
            f"Summarise harbour notice {i}.",
            origin="soak",
            expires_at=datetime.now(UTC) + timedelta(days=2),
        )

    plan = ["chat"] * args.turns + ["run"] * args.cycles
    rng.shuffle(plan)
    durations: dict[str, list[float]] = {"chat": [], "run": []}
    acked_turns: list[str] = []
    outcomes: Counter[str] = Counter()
    writer = Writer(home, args.seed)
    writer.start()
    started = time.monotonic()
    for index, kind in enumerate(plan):
        token = f"soak-{index:04d}-{rng.randrange(16**6):06x}"
        if kind == "chat":
            argv = lumen(home, "chat", "--once", f"Please remember the code word {token}.")
        else:
            argv = lumen(home, "run", "--cycles", "1", "--no-reflection")
        typical = statistics.median(durations[kind]) if durations[kind] else None
        kill_after = (
            None if typical is None or rng.random() < 0.25 else rng.uniform(0, 1.5 * typical)
        )
        outcome, seconds, code = step(home, argv, kill_after)
        outcomes[f"{kind} {outcome}" + (f" exit {code}" if outcome == "finished" else "")] += 1
        if outcome == "finished":
            durations[kind].append(seconds)
            if kind == "chat" and code == 0:
                acked_turns.append(token)
        if index % 20 == 19:
            queue.propose_agent(  # keep due jobs coming for `lumen run`
                f"Summarise harbour notice {index}.",
                origin="soak",
                expires_at=datetime.now(UTC) + timedelta(days=2),
            )
            print(
                f"  {index + 1}/{len(plan)} steps, {time.monotonic() - started:.0f} s", flush=True
            )
    writer.stop.set()
    writer.join(timeout=600)
    elapsed = time.monotonic() - started

    # ------------------------------------------------------------------ checks
    bad = corrupt_files(instance.root)
    doctor = subprocess.run(
        lumen(home, "doctor", "--json"),
        capture_output=True,
        text=True,
        cwd=REPO,
        env=lumen_env(home),
        timeout=600,
        check=False,
    )
    checks = json.loads(doctor.stdout)["checks"] if doctor.stdout.strip() else []
    failing = [f"{c['name']}: {c['detail']}" for c in checks if not c["ok"]]
    journal = MemoryJournal(instance.memory_dir)
    torn = journal.torn()
    from state.files import torn_lines

    torn_all = torn_lines(instance.data)
    ledger = "\n".join(e.description for e in journal.read().entries)
    lost_turns = [t for t in acked_turns if t not in ledger]
    facts: Counter[str] = Counter()
    for path in (instance.data / "signals").rglob("*.jsonl"):
        for raw in path.read_bytes().splitlines():
            record = json.loads(raw)
            if record.get("event") == "FactAdded" and record.get("source_ref"):
                facts[record["source_ref"]] += 1
    lost_signals = [ref for ref in writer.acked if facts[ref] == 0]
    duplicates = {ref: n for ref, n in facts.items() if n > 1}
    left_running = [t for t in TaskQueue(instance).list() if t.status == "running"]
    later = datetime.now(UTC) + DEFAULT_LEASE + timedelta(seconds=1)
    after_lease = TaskQueue(instance, clock=lambda: later)
    still_running = [t for t in after_lease.list() if t.status == "running"]
    fits = after_lease.propose_agent(
        "One more after the soak.", origin="soak", expires_at=later + timedelta(days=1)
    )
    done_tasks = [t for t in after_lease.list(include_finished=True) if t.status == "done"]

    print(
        f"\nSoak: {len(plan)} steps ({args.turns} chat turns, {args.cycles} run cycles) in "
        f"{elapsed:.0f} s, seed {args.seed}, instance {home}"
    )
    for name, count in sorted(outcomes.items()):
        print(f"  {name:28} {count}")
    print(f"  concurrent ingests           {writer.runs} ({len(writer.acked)} acknowledged new)")
    print(f"  agent tasks done             {len(done_tasks)}")
    print(f"corrupt files / lines          {len(bad)}" + (f"  first: {bad[0]}" if bad else ""))
    print(f"doctor failing checks          {len(failing)}" + (f"  {failing}" if failing else ""))
    print(f"torn lines moved aside         {len(torn_all)} (memory ledger {len(torn)})")
    print(f"acknowledged turns             {len(acked_turns)}, lost {len(lost_turns)}")
    print(f"acknowledged signals           {len(writer.acked)}, lost {len(lost_signals)}")
    print(f"duplicate signals              {len(duplicates)}")
    print(
        f"tasks left running by kills    {len(left_running)}; running after the lease "
        f"{len(still_running)}; a new agent task fits: {fits is not None}"
    )
    ok = not (bad or failing or lost_turns or lost_signals or duplicates or still_running)
    ok = ok and fits is not None
    for line, count in ERRORS.most_common(8):  # why finished steps failed (not kills)
        print(f"  exit 1 x{count}: {line}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
