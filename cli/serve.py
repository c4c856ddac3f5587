"""``lumen serve``: the webhook gateway (``graph.gateway``) on uvicorn."""

from __future__ import annotations

import signal
from types import FrameType
from typing import Annotated

import typer

from cli.common import current_instance, warn


def register(app: typer.Typer) -> None:
    """Add ``serve`` to the app."""
    app.command()(serve)


def serve(
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to bind.")] = 8787,
    grace: Annotated[
        float,
        typer.Option("--grace", min=0.0, help="Seconds in-flight requests get on shutdown."),
    ] = 30.0,
) -> None:
    """Serve POST /signals/{source}, GET /healthz and GET /metrics until Ctrl+C or SIGTERM."""
    import uvicorn

    from graph.deps import Deps
    from graph.gateway import build_app
    from state.errors import LumenError

    deps = Deps.for_instance(current_instance())
    app = build_app(deps)
    gateway = app.state.gateway
    for line in gateway.warnings:
        warn(line)
    if not gateway.sources:
        warn('no webhook sources configured ([sources.NAME] kind = "webhook"): every POST gets 404')
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        lifespan="on",
        log_level="info",
        timeout_graceful_shutdown=max(1, round(grace)),
        server_header=False,
    )
    server = uvicorn.Server(config)
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal to the handler
    # that was installed before it: a no-op one makes a graceful shutdown exit 0.
    previous = {sig: signal.signal(sig, _after_shutdown) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run()
    except SystemExit as exc:  # uvicorn exits when it cannot bind
        raise LumenError(f"cannot serve on {host}:{port} (is the port in use?)") from exc
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if not server.started:
        raise LumenError(f"cannot serve on {host}:{port} (is the port in use?)")


def _after_shutdown(signum: int, frame: FrameType | None) -> None:
    """Receive the signal uvicorn re-raises once its graceful shutdown is done."""
