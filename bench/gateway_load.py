"""Load on ``lumen serve``: N concurrent clients for a bounded time, then an exact ledger audit.

Run: ``uv run python bench/gateway_load.py [--clients 8] [--seconds 10] [--dup-every 10]``.

Creates a throwaway instance with one webhook source (rate limit out of the way), starts
``lumen serve`` as a subprocess on a free 127.0.0.1 port and lets each client post envelopes over
a keep-alive connection until the time is up; every ``dup-every``-th post re-sends one of the
client's earlier ``source_ref``s (it must be answered ``duplicate``). The server is then stopped
with SIGTERM (graceful shutdown) and the instance is audited: every signal answered 202 is in
the memory ledger exactly once and in the signal ledger exactly once, no ``source_ref`` appears
twice, and nothing was stored that was not answered 202 (lost = 0, duplicated = 0).

Prints accepted signals/s, latency p50/p95/max of accepted posts, and the audit.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOKEN = "bench-token-7d1e"
WORDS = (
    "parser release harbor violet engine market rain summit ledger orbit cedar pulse quartz "
    "lantern meadow copper falcon glacier tide ember canyon velvet signal prism tundra"
).split()


def text_for(ref: str) -> str:
    digest = hashlib.sha256(ref.encode()).digest()
    return " ".join(WORDS[b % len(WORDS)] for b in digest[:14]) + "."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def client(
    port: int, index: int, deadline: float, dup_every: int, out: list[tuple[str, int, str, float]]
) -> None:
    """Post until ``deadline``; record (ref, status, id, seconds) per request."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    sent: list[str] = []
    n = 0
    while time.monotonic() < deadline:
        n += 1
        if dup_every and n % dup_every == 0 and sent:
            ref = sent[len(sent) // 2]
        else:
            ref = f"load:{index}:{n}"
            sent.append(ref)
        body = json.dumps(
            {
                "text": text_for(ref),
                "source_kind": "webhook",
                "source_ref": ref,
                "ingest_ts": datetime.now(UTC).isoformat(),
                "lang": "en",
                "topic_tags": [f"topic{n % 5}"],
            }
        )
        started = time.perf_counter()
        try:
            conn.request(
                "POST",
                "/signals/load",
                body=body,
                headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
            )
            resp = conn.getresponse()
            data = json.loads(resp.read())
            status = resp.status
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            status, data = 0, {}
        out.append((ref, status, str(data.get("id", "")), time.perf_counter() - started))
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--dup-every", type=int, default=10)
    args = parser.parse_args()
    from state.instance import init_instance

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "inst"
        instance = init_instance(root)
        with instance.config_file.open("a", encoding="utf-8") as handle:
            handle.write(
                '\n[sources.load]\nkind = "webhook"\ntoken_env = "BENCH_TOKEN"\n'
                "rate_per_minute = 60000\nburst = 100000\n"
            )
        port = free_port()
        env = {**os.environ, "LUMEN_HOME": str(root), "BENCH_TOKEN": TOKEN}
        log = Path(tmp) / "serve.log"
        with log.open("wb") as sink:
            server = subprocess.Popen(
                [sys.executable, "-m", "cli", "serve", "--port", str(port)],
                cwd=REPO,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        try:
            _wait_ready(port, server, log)
            results: list[tuple[str, int, str, float]] = []
            deadline = time.monotonic() + args.seconds
            started = time.monotonic()
            threads = [
                threading.Thread(target=client, args=(port, i, deadline, args.dup_every, results))
                for i in range(args.clients)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - started
        finally:
            server.send_signal(signal.SIGTERM)
            code = server.wait(timeout=120)
        _report(instance.root, results, elapsed, code, args)


def _wait_ready(port: int, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"lumen serve exited: {log.read_text()}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("lumen serve did not start")


def _report(
    root: Path,
    results: list[tuple[str, int, str, float]],
    elapsed: float,
    code: int,
    args: argparse.Namespace,
) -> None:
    statuses = Counter(status for _, status, _, _ in results)
    accepted = {mid: ref for ref, status, mid, _ in results if status == 202}
    latencies = sorted(sec for _, status, _, sec in results if status == 202)
    memory = Counter()
    for path in (root / "data" / "memory").rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            memory[json.loads(line)["id"]] += 1
    refs = Counter()
    for path in (root / "data" / "signals").rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            refs[json.loads(line).get("source_ref", "")] += 1
    lost = [mid for mid in accepted if memory[mid] != 1]
    duplicated = [ref for ref, n in refs.items() if n > 1]
    unanswered = set(refs) - set(accepted.values())
    dup_answers = sum(1 for ref, status, _, _ in results if status == 200 and ref in refs)
    p95 = latencies[max(0, round(0.95 * len(latencies)) - 1)] if latencies else 0.0
    print(f"clients {args.clients}, {elapsed:.1f} s, statuses {dict(sorted(statuses.items()))}")
    print(f"accepted {len(accepted)} signals: {len(accepted) / elapsed:.1f} signals/s")
    if latencies:
        print(
            f"latency of accepted posts: p50 {statistics.median(latencies) * 1000:.1f} ms, "
            f"p95 {p95 * 1000:.1f} ms, max {latencies[-1] * 1000:.1f} ms"
        )
    print(f"duplicates answered 'duplicate': {dup_answers}")
    print(
        f"audit: signal ledger {sum(refs.values())} records, lost {len(lost)}, "
        f"duplicated {len(duplicated)}, stored but not acknowledged {len(unanswered)}; "
        f"server exit {code}"
    )
    if lost or duplicated or unanswered or code != 0:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
