"""`seam gateway`: build the configured adapters, run a supervisor for each until SIGTERM
or Ctrl-C, then hand back what is running (another gateway, or the next start, finishes
it: every message is a durable submission)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seam.wiring.runtime import Runtime

log = logging.getLogger("seam.gateway")


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
    from seam.apps.cli.exits import USAGE
    from seam.apps.cli.runner import CliError
    from seam.apps.gateway.runner import Gateway
    from seam.apps.gateway.supervisor import Supervisor, WatchOptions
    from seam.wiring.chat_platforms import platform_names
    from seam.wiring.configure import create_runtime
    from seam.wiring.cron import maybe_start_scheduler, stop_scheduler
    from seam.wiring.gateway import adapter_lock, adapter_specs, status_path
    from seam.wiring.gateway_chats import CHATS_FILE, ChatBook
    from seam.wiring.gateway_settings import gateway_section
    from seam.wiring.pairing import PairingStore
    from seam.wiring.settings import load_settings

    settings = load_settings()
    section = gateway_section(settings)
    specs = adapter_specs(settings)
    if not specs:
        first, *others = platform_names()
        raise CliError(
            f"no chat platform is configured: add [gateway.{first}] (or {', '.join(others)}) "
            "to config.toml",
            USAGE,
        )
    show_gateway_log()
    options = WatchOptions(alert_after=section.alert_after_seconds)
    if stall_after is not None:
        options = WatchOptions(
            stall_after=stall_after,
            check_every=check_every or options.check_every,
            alert_after=options.alert_after,
        )
    async with create_runtime(settings=settings, gateway=True) as runtime:
        gateway = Gateway(
            runtime,
            section,
            PairingStore.for_settings(settings),
            working_dir=str(settings.working_dir),
            book=ChatBook(settings.home / CHATS_FILE),
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
        # Cron jobs and the heartbeat run here too (each slot once, whichever process
        # claims it), with a deliverer for file: and webhook targets beside the chats'.
        background = await maybe_start_scheduler(runtime)
        loop = asyncio.get_running_loop()
        stopping = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stopping.set)
        names = ", ".join(spec.name for spec in specs)
        log.info("running %s (pid %s)", names, runtime.owner)
        waiter = asyncio.ensure_future(stopping.wait())
        try:
            done, _ = await asyncio.wait({waiter, *tasks}, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                failure = None if task is waiter or task.cancelled() else task.exception()
                if failure is not None:
                    raise failure
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
            for task in (*tasks, upkeep, waiter):
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.gather(*tasks, upkeep, waiter, return_exceptions=True)
            await stop_scheduler(background)
            await gateway.aclose()
        log.info("stopped")
    return 0
