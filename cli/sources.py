"""``lumen sources``: outside signal sources (feeds polled on a schedule, webhooks)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.common import JsonFlag, current_instance, emit_json, table

sources_app = typer.Typer(
    help="Outside signal sources: RSS/Atom feeds and webhooks.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    """Add the ``sources`` group to the app."""
    app.add_typer(sources_app, name="sources")


@sources_app.command("add")
def add(
    kind: Annotated[str, typer.Argument(help="rss (RSS or Atom) or webhook.")],
    name: Annotated[str, typer.Argument(help="Source name: a-z, 0-9, '_' and '-'.")],
    url: Annotated[str, typer.Argument(help="Feed URL (rss).")] = "",
    every: Annotated[str, typer.Option("--every", help="Poll interval: 30s, 15m, 2h, 1d.")] = "15m",
    token_env: Annotated[
        str, typer.Option("--token-env", help="Webhook: variable holding the bearer token.")
    ] = "",
    rate_per_minute: Annotated[
        float | None, typer.Option("--rate-per-minute", help="Rate limit (webhook 60, rss 4).")
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option("--allow-host", help="Host allowed despite a private address (repeat)."),
    ] = None,
    privacy: Annotated[
        str, typer.Option("--privacy", help="public, private or secret (never in chat context).")
    ] = "public",
    as_json: JsonFlag = False,
) -> None:
    """Add a source to .lumen/config.toml (an rss feed needs URL; a webhook needs --token-env)."""
    from state.errors import LumenError
    from state.sources import add_source

    if kind not in ("rss", "webhook"):
        raise LumenError(f"unknown source kind {kind!r}: use rss or webhook")
    table_: dict[str, Any] = {"kind": kind}
    if kind == "rss":
        table_ |= {"url": url, "every": every}
    else:
        if url:
            raise LumenError("a webhook has no URL: it receives POST /signals/NAME")
        table_["token_env"] = token_env
    if rate_per_minute is not None:
        table_["rate_per_minute"] = rate_per_minute
    if allow_host:
        table_["allow_hosts"] = list(allow_host)
    if privacy != "public":
        table_["privacy"] = privacy
    instance = current_instance()
    source = add_source(instance.config_file, name, table_)
    if as_json:
        emit_json({"name": name, **source.model_dump(exclude_defaults=True)})
    else:
        typer.echo(f"added {kind} source {name!r}")


@sources_app.command("list")
def list_sources(as_json: JsonFlag = False) -> None:
    """List sources with their settings and, for feeds, their poll state."""
    from state.config import load_config
    from state.sources import FeedState, SourceStates

    instance = current_instance()
    config = load_config(instance.config_file)
    states = SourceStates(instance.machine).read()
    rows: list[dict[str, Any]] = []
    for name, source in sorted(config.sources.items()):
        state = states.get(name, FeedState()) if source.kind == "rss" else None
        rows.append(
            {
                "name": name,
                "kind": source.kind,
                "url": source.url,
                "every": source.every if source.kind == "rss" else "",
                "rate_per_minute": source.per_minute(),
                "privacy": source.privacy,
                "allow_hosts": source.allow_hosts,
                "token_env": source.token_env,
                "state": state.model_dump(mode="json") if state else None,
            }
        )
    if as_json:
        emit_json(rows)
        return
    if not rows:
        typer.echo("no sources (add one with 'lumen sources add rss NAME URL')")
        return
    table(
        "Sources",
        ["name", "kind", "where", "every", "rate/min", "privacy", "last", "failures"],
        [
            [
                r["name"],
                r["kind"],
                r["url"] or f"POST /signals/{r['name']} (${r['token_env']})",
                r["every"],
                f"{r['rate_per_minute']:g}",
                r["privacy"],
                r["state"]["last_status"] if r["state"] else "",
                r["state"]["failures"] if r["state"] else "",
            ]
            for r in rows
        ],
    )


@sources_app.command("remove")
def remove(name: Annotated[str, typer.Argument(help="Source name.")]) -> None:
    """Remove a source (and its poll state); signals it brought in stay in memory."""
    from state.sources import remove_source

    instance = current_instance()
    remove_source(instance.config_file, instance.machine, name)
    typer.echo(f"removed source {name!r}")


@sources_app.command("poll")
def poll(
    name: Annotated[str | None, typer.Argument(help="One feed (default: every feed).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Poll feeds now (respecting backoff and rate limits); one JSON object per feed with --json."""
    from graph.deps import Deps
    from graph.feeds import feed_sources, poll_source
    from state.errors import LumenError

    deps = Deps.for_instance(current_instance())
    feeds = feed_sources(deps)
    if name is not None:
        if name not in feeds:
            raise LumenError(f"no feed named {name!r} (see 'lumen sources list')")
        feeds = {name: feeds[name]}
    reports = [poll_source(deps, n, s) for n, s in feeds.items()]
    if as_json:
        emit_json(reports[0].to_dict() if name is not None else [r.to_dict() for r in reports])
        return
    for report in reports:
        typer.echo(report.line())
    if not reports:
        typer.echo("no feeds (add one with 'lumen sources add rss NAME URL')")


@sources_app.command("trends")
def trends(as_json: JsonFlag = False) -> None:
    """Aggregate the last hour's signals per topic into trend snapshots now."""
    from graph.deps import Deps
    from graph.trends import snapshot_trends

    snapshots = snapshot_trends(Deps.for_instance(current_instance()))
    if as_json:
        emit_json([s.to_dict() for s in snapshots])
        return
    for s in snapshots:
        typer.echo(
            f"{s.topic}: {s.momentum} ({s.count} signals from {s.sources} sources, "
            f"{s.previous} the hour before)"
        )
    if not snapshots:
        typer.echo("no topic had a signal in the last hour")
