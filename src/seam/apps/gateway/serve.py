"""`seam gateway`: build the configured adapters, run a supervisor for each until SIGTERM
or Ctrl-C, then hand back what is running (another gateway, or the next start, finishes
it: every message is a durable submission)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seam.apps.gateway.supervisor import WatchOptions
    from seam.wiring.gateway import AdapterSpec
    from seam.wiring.runtime import Runtime
    from seam.wiring.settings import Settings

log = logging.getLogger("seam.gateway")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _BelowWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.WARNING


def show_gateway_log() -> None:
    """The gateway's state changes (info) on stderr too; warnings already go there."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("seam gateway: %(message)s"))
    handler.addFilter(_BelowWarning())
    log.addHandler(handler)
    log.setLevel(logging.INFO)


async def end_idle_sessions(runtime: Runtime) -> None:
    """A gateway runs for weeks: end sessions idle past `[sessions] idle_end` now and
    then, as `seam worker` does (a chat's next message then starts a fresh one)."""
    if runtime.idle_end <= 0:
        return
    while True:
        await asyncio.sleep(min(runtime.idle_end / 4, 3600.0))
        await runtime.end_idle_sessions()


async def serve_gateway(
    *, stall_after: float | None = None, check_every: float | None = None
) -> int:
    """Run every adapter `[gateway]` configures until SIGINT or SIGTERM (0), or until one
    supervisor fails (its error is raised). `stall_after`, `check_every`: tests shorten
    the watchdog."""
    from seam.apps.gateway.book import CHATS_FILE, ChatBook
    from seam.apps.gateway.kept_files import KEPT_DIR, KeptFiles
    from seam.apps.gateway.pairing import PairingStore
    from seam.apps.gateway.runner import Gateway
    from seam.apps.gateway.status import status_path
    from seam.apps.gateway.supervisor import Supervisor
    from seam.wiring.configure import create_runtime
    from seam.wiring.cron import maybe_start_scheduler, stop_scheduler
    from seam.wiring.gateway import adapter_lock
    from seam.wiring.gateway_settings import gateway_section
    from seam.wiring.session_recall import start_indexing
    from seam.wiring.settings import load_settings

    settings = load_settings()
    section = gateway_section(settings)
    specs = _configured_specs(settings)
    show_gateway_log()
    options = _watch_options(section.alert_after_seconds, stall_after, check_every)
    async with create_runtime(settings=settings, gateway=True) as runtime:
        gateway = Gateway(
            runtime,
            section,
            PairingStore.for_settings(settings),
            working_dir=str(settings.working_dir),
            book=ChatBook(settings.home / CHATS_FILE),
            files=KeptFiles(settings.home / KEPT_DIR),
        )
        supervisors = [
            Supervisor(
                gateway,
                spec,
                adapter_lock(settings, spec.name),
                options=options,
                status_path=status_path(settings),
                owner=section.owner,
                delivery_owner=runtime.owner,
            )
            for spec in specs
        ]
        tasks = [asyncio.ensure_future(s.run()) for s in supervisors]
        upkeep = asyncio.ensure_future(end_idle_sessions(runtime))
        indexing = start_indexing(runtime.session_recall(), settings)  # search by meaning
        # Cron jobs and the heartbeat run here too (each slot once, whichever process
        # claims it), with a deliverer for file: and webhook targets beside the chats'.
        background = await maybe_start_scheduler(runtime)
        names = ", ".join(spec.name for spec in specs)
        try:
            await _until_stopped(tasks, f"running {names} (pid {runtime.owner})")
        finally:
            await _cancel(*tasks, upkeep, indexing)
            await stop_scheduler(background)
            await gateway.aclose()
        log.info("stopped")
    return 0


def _configured_specs(settings: Settings) -> list[AdapterSpec]:
    """The adapters `[gateway]` configures; a usage error when it configures none."""
    from seam.apps.cli.exits import USAGE
    from seam.apps.cli.runner import CliError
    from seam.wiring.chat_platforms import platform_names
    from seam.wiring.gateway import adapter_specs

    specs = adapter_specs(settings)
    if not specs:
        first, *others = platform_names()
        raise CliError(
            f"no chat platform is configured: add [gateway.{first}] (or {', '.join(others)}) "
            "to config.toml",
            USAGE,
        )
    return specs


def _watch_options(
    alert_after: float, stall_after: float | None, check_every: float | None
) -> WatchOptions:
    """The watchdog's options: `[gateway] alert_after_seconds`, and the stall timing
    tests shorten."""
    from seam.apps.gateway.supervisor import WatchOptions

    options = WatchOptions(alert_after=alert_after)
    if stall_after is None:
        return options
    return WatchOptions(
        stall_after=stall_after,
        check_every=check_every or options.check_every,
        alert_after=options.alert_after,
    )


async def _until_stopped(tasks: Sequence[asyncio.Future[Any]], started: str) -> None:
    """Wait for SIGINT or SIGTERM, or for a supervisor to fail (its error is raised);
    `started` is logged once the signals are caught."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stopping.set)
    log.info("%s", started)
    waiter: asyncio.Future[Any] = asyncio.ensure_future(stopping.wait())
    try:
        done, _ = await asyncio.wait({waiter, *tasks}, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            failure = None if task is waiter or task.cancelled() else task.exception()
            if failure is not None:
                raise failure
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)
        await _cancel(waiter)


async def _cancel(*tasks: asyncio.Future[Any]) -> None:
    """Cancel `tasks` and wait for them to end (what they raise then is theirs)."""
    for task in tasks:
        task.cancel()
    with contextlib.suppress(Exception):
        await asyncio.gather(*tasks, return_exceptions=True)
