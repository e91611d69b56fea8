"""`seam serve` and `seam keys`: the web surface and its API keys."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from seam.apps.web.keys import KeyStore

keys_app = typer.Typer(help="API keys for seam serve.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_command(
        host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port.")] = 8420,
    ) -> None:
        """Serve the HTTP API, its event streams and the chat page."""
        from seam.apps.cli.runner import execute
        from seam.apps.web.serve import serve

        execute(serve(host, port), surface="web")

    app.add_typer(keys_app, name="keys")


def _store() -> KeyStore:
    from seam.apps.web.keys import KeyStore
    from seam.wiring.settings import load_settings

    return KeyStore.for_settings(load_settings())


@keys_app.command("create")
def keys_create(
    name: Annotated[str, typer.Argument(help="A name for the key (to list or revoke it).")],
    tenant: Annotated[
        str, typer.Option("--tenant", help="Whose sessions the key reaches.")
    ] = "local",
    scope: Annotated[
        str,
        typer.Option(
            "--scope", help="full, chat (sessions and messages only) or read (GET routes only)."
        ),
    ] = "full",
) -> None:
    """Create a key; it is printed once and only its hash is stored."""
    try:
        key = _store().create(name, tenant, scope)
    except ValueError as exc:
        sys.stderr.write(f"seam: {exc}\n")
        raise typer.Exit(2) from None
    sys.stdout.write(key + "\n")
    sys.stderr.write(
        f"key {name!r} for tenant {tenant!r}, scope {scope}: store it now, it is not shown again\n"
    )


@keys_app.command("list")
def keys_list() -> None:
    """Every key: name, tenant, scope, first characters, created."""
    import time

    keys = _store().list()
    if not keys:
        sys.stdout.write("no keys yet: seam keys create NAME\n")
        return
    for k in keys:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(k.created_at))
        sys.stdout.write(f"{k.name}\ttenant={k.tenant}\tscope={k.scope}\t{k.prefix}…\t{when}\n")


@keys_app.command("revoke")
def keys_revoke(name: Annotated[str, typer.Argument(help="The key's name.")]) -> None:
    """Revoke a key at once (a running server sees it on the next request)."""
    if not _store().revoke(name):
        sys.stderr.write(f"seam: no key named {name!r}\n")
        raise typer.Exit(1)
    sys.stdout.write(f"revoked {name}\n")
