"""`seam serve`: bind, print the page's login URL, serve until Ctrl-C or SIGTERM."""

from __future__ import annotations

import asyncio
import gc
import ipaddress
import secrets
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seam.wiring.web_keys import WebSection

LOOPBACK_NAMES = {"localhost", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# Allocations between young-generation collections (CPython's default is 700). A turn
# allocates thousands of short-lived containers; at the default the collector runs every
# few events and its older-generation passes walk every open stream's state. At 50,000 a
# young pass was rare but long (36 to 61 ms, holding every turn in flight: most of the
# steady p99); at 5,000, with the start-up heap frozen, each is short: `bench/concurrency.py`
# steady p99 added 12 to 17 ms against 17 to 23 ms, `bench/web.py` alike (quiet machine).
GC_THRESHOLDS = (5_000, 20, 100)


def tune_gc() -> None:
    """Fewer, cheaper garbage collections for a long-running server: what exists once it
    is up (modules, the app, the runtime) is frozen out of every later collection, and the
    young generation is collected less often. In `bench/web.py` this took the collector
    from ~700 passes and ~3 s (the longest 0.6 s, holding every stream) to a few."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def server_config(app: Any, host: str, port: int, web: WebSection) -> Any:
    """uvicorn's settings for `app`: the `[web]` timeouts for slow heads and idle
    connections (`apps/web/slow_clients.py`), quiet logs, a short graceful shutdown.
    No access log: at the `warning` level its lines were never printed, yet each response
    still built one (the client's address, the quoted path)."""
    import uvicorn

    from seam.apps.web.slow_clients import head_timeout_protocol

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=3,
        http=head_timeout_protocol(web.header_timeout_seconds),
        timeout_keep_alive=web.idle_timeout_seconds,  # type: ignore[arg-type]
    )


async def serve(host: str, port: int) -> int:
    import uvicorn

    from seam.apps.cli.exits import USAGE
    from seam.apps.cli.runner import CliError
    from seam.apps.web.app import create_app
    from seam.apps.web.auth import Authenticator
    from seam.apps.web.backend import WebBackend
    from seam.apps.web.keys import KeyStore
    from seam.apps.web.retries import RetryBoard
    from seam.wiring.settings import load_settings
    from seam.wiring.web import build_web_deps
    from seam.wiring.web_keys import DEFAULT_TENANT, web_secret

    settings = load_settings()
    keys = KeyStore.for_settings(settings)
    if not is_loopback(host) and not keys.list():
        raise CliError(
            f"refusing to listen on {host}: it is reachable from other machines and no API "
            "key exists. Create one first (seam keys create NAME), or bind 127.0.0.1.",
            USAGE,
        )
    retries = RetryBoard()  # the page shows the model's retries as they happen
    backend = WebBackend.from_deps(build_web_deps(settings, retries), retries)
    token = secrets.token_urlsafe(24)
    auth = Authenticator(keys, web_secret(settings), token, DEFAULT_TENANT)
    app = create_app(backend, auth, settings=settings, keys=keys)
    tune_gc()
    server = uvicorn.Server(server_config(app, host, port, backend.config))
    task = asyncio.ensure_future(server.serve())
    while not server.started and not task.done():  # noqa: ASYNC110 (uvicorn has no event)
        await asyncio.sleep(0.05)
    if task.done():
        task.result()
        raise CliError(f"could not listen on {host}:{port}")
    bound = server.servers[0].sockets[0].getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    sys.stdout.write(
        f"seam serve: listening on http://{shown}:{bound}/\n"
        f"open the page (this link works once): http://{shown}:{bound}/?token={token}\n"
    )
    sys.stdout.flush()
    await task
    return 0
