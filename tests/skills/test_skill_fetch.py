"""fetch: HTTP(S) GET with caps, against a local server started inside the test."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

RunSkill = Callable[..., Any]
pytestmark = pytest.mark.enable_socket  # the test process runs the server; pytest-socket

RELEASE = threading.Event()


class Handler(BaseHTTPRequestHandler):
    """Serve a handful of fixed routes."""

    def do_GET(self) -> None:
        routes: dict[str, tuple[int, str, bytes]] = {
            "/hello": (200, "text/plain; charset=utf-8", "hello, lumen \u2600\n".encode()),
            "/latin": (200, "text/plain; charset=iso-8859-1", "caf\u00e9".encode("latin-1")),
            "/big": (200, "application/octet-stream", b"a" * 200_000),
            "/missing": (404, "text/html", b"<h1>gone</h1>"),
        }
        if self.path == "/slow":
            RELEASE.wait(timeout=5)
            self._send(200, "text/plain", b"late")
        elif self.path in ("/to-file", "/to-hello"):
            self.send_response(302)
            target = "file:///etc/passwd" if self.path == "/to-file" else "/hello"
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path in routes:
            self._send(*routes[self.path])
        else:
            self._send(500, "text/plain", b"no route")

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    RELEASE.clear()
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        RELEASE.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_fetch_golden(run_skill: RunSkill, server: str) -> None:
    result = run_skill("fetch", {"url": f"{server}/hello"})
    assert result.code == 0, result.output
    assert result.output == {
        "url": f"{server}/hello",
        "status": 200,
        "content_type": "text/plain; charset=utf-8",
        "text": "hello, lumen \u2600\n",
        "truncated": False,
        "untrusted": True,
    }


def test_fetch_decodes_the_declared_charset(run_skill: RunSkill, server: str) -> None:
    assert run_skill("fetch", {"url": f"{server}/latin"}).output["text"] == "caf\u00e9"


def test_fetch_truncates_at_max_bytes(run_skill: RunSkill, server: str) -> None:
    result = run_skill("fetch", {"url": f"{server}/big", "max_bytes": 1000})
    assert result.code == 0
    assert result.output["text"] == "a" * 1000
    assert result.output["truncated"] is True


def test_fetch_default_cap_is_64_kib(run_skill: RunSkill, server: str) -> None:
    result = run_skill("fetch", {"url": f"{server}/big"})
    assert len(result.output["text"]) == 65536
    assert result.output["truncated"] is True


def test_fetch_follows_http_redirects(run_skill: RunSkill, server: str) -> None:
    result = run_skill("fetch", {"url": f"{server}/to-hello"})
    assert result.output["url"] == f"{server}/hello"
    assert result.output["status"] == 200


def test_fetch_refuses_a_redirect_to_file(run_skill: RunSkill, server: str) -> None:
    result = run_skill("fetch", {"url": f"{server}/to-file"})
    assert result.code == 3
    assert "refused" in result.output["error"]


def test_fetch_times_out(run_skill: RunSkill, server: str) -> None:
    result = run_skill("fetch", {"url": f"{server}/slow", "timeout_s": 0.5})
    assert result.code == 1
    assert "timed out" in result.output["error"]


def test_fetch_404_is_a_failure_with_status(run_skill: RunSkill, server: str) -> None:
    result = run_skill("fetch", {"url": f"{server}/missing"})
    assert result.code == 1
    assert result.output["status"] == 404
    assert "404" in result.output["error"]


def test_fetch_connection_refused_is_a_failure(run_skill: RunSkill) -> None:
    result = run_skill("fetch", {"url": "http://127.0.0.1:1/", "timeout_s": 2})
    assert result.code == 1
    assert "cannot fetch" in result.output["error"]


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.org/x", "data:text/plain,hi", "gopher://x/"]
)
def test_fetch_refuses_non_http_schemes(run_skill: RunSkill, url: str) -> None:
    result = run_skill("fetch", {"url": url})
    assert result.code == 3
    assert "only http and https" in result.output["error"]


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({}, '"url"'),
        ({"url": 5}, '"url"'),
        ({"url": "http:///nohost"}, "no host"),
        ({"url": "http://127.0.0.1:1/", "max_bytes": 0}, '"max_bytes"'),
        ({"url": "http://127.0.0.1:1/", "timeout_s": "fast"}, '"timeout_s"'),
    ],
)
def test_fetch_rejects_bad_input(
    run_skill: RunSkill, payload: dict[str, Any], fragment: str
) -> None:
    result = run_skill("fetch", payload)
    assert result.code == 2
    assert fragment in result.output["error"]
