"""The gateway in-process over a FakePlatform: a Gateway and one Supervisor whose adapter
factory builds FakeAdapters, over whatever Runtime the test assembled."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seam.apps.gateway.pairing import PairingStore
from seam.apps.gateway.runner import Gateway
from seam.apps.gateway.supervisor import Supervisor, WatchOptions
from seam.contracts import ToolContext
from seam.contracts.chat import ChatAdapter
from seam.contracts.storage import Storage
from seam.core import DefaultToolRegistry, LoopOptions
from seam.core.execution import InMemoryExecutionStore
from seam.core.storage import InMemoryStorage
from seam.wiring import Runtime, assemble_runtime
from seam.wiring.gateway import AdapterSpec
from seam.wiring.gateway_settings import GatewaySection, gateway_model
from tests.gateway.fake_chat import FakeAdapter, FakePlatform

WAIT_LIMIT = 15.0
WORKDIR = "/proj"


class AskFirst:
    """A tool that needs a person's approval before it does anything."""

    name = "danger"
    description = "does something that needs approval"
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}
    concurrent = False
    idempotent = False

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        assert ctx.approvals is not None
        decision = await ctx.approvals.request(
            call_id=ctx.call_id, tool=self.name, command="rm -r build", reason="recursive delete"
        )
        return f"decision: {decision}"


class FreeLock:
    """The only gateway in the test: the lock is always ours."""

    async def acquire(self) -> bool:
        return True

    async def held(self) -> bool:
        return True

    async def release(self) -> None:
        return None


def section(allow: tuple[str, ...] = ("42",), owner: str = "") -> GatewaySection:
    return gateway_model().model_validate({"owner": owner, "telegram": {"allow": list(allow)}})


def make_runtime(
    model: Any,
    store: InMemoryExecutionStore,
    *,
    storage: Storage | None = None,
    builtin_tools: bool = False,
    working_dir: str = WORKDIR,
    fs_deny: tuple[str, ...] = (),
) -> Runtime:
    tools = None
    if not builtin_tools:
        tools = DefaultToolRegistry()
        tools.register_tool(AskFirst())
    return assemble_runtime(
        model=model,
        store=store,
        tools=tools,
        storage=storage or InMemoryStorage(),
        working_dir=working_dir,
        fs_deny=fs_deny,
        options=LoopOptions(approval_timeout=30.0),
    )


@dataclass
class Running:
    gateway: Gateway
    supervisor: Supervisor
    platform: FakePlatform
    adapters: list[FakeAdapter]


@asynccontextmanager
async def gateway_running(
    runtime: Runtime,
    platform: FakePlatform,
    tmp: Path,
    *,
    config: GatewaySection | None = None,
    build: Callable[[FakePlatform], ChatAdapter] | None = None,
    options: WatchOptions | None = None,
    working_dir: str = WORKDIR,
    rescue_every: float = 0.2,
    retry_tick: float = 0.05,
) -> AsyncIterator[Running]:
    from seam.apps.gateway.book import ChatBook
    from seam.apps.gateway.kept_files import KeptFiles

    adapters: list[Any] = []  # FakeAdapters, unless `build` makes a real platform's

    def factory() -> ChatAdapter:
        adapter = build(platform) if build is not None else FakeAdapter(platform)
        adapters.append(adapter)
        return adapter

    gateway = Gateway(
        runtime,
        config or section(),
        PairingStore(tmp / "pairing.json"),
        working_dir=working_dir,
        rescue_every=rescue_every,
        retry_tick=retry_tick,
        book=ChatBook(tmp / "gateway-chats.json"),
        files=KeptFiles(tmp / "gateway-files"),
    )
    supervisor = Supervisor(
        gateway,
        AdapterSpec("telegram", factory),
        FreeLock(),
        options=options or WatchOptions(check_every=0.05),
        status_path=tmp / "gateway-status.json",
        owner=(config or section()).owner,
    )
    task = asyncio.ensure_future(supervisor.run())
    try:
        yield Running(gateway, supervisor, platform, adapters)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await gateway.aclose()


async def until(platform: FakePlatform, condition: Callable[[], bool], what: str) -> None:
    """Wait until `condition()` holds, re-checking whenever the chat changes."""
    deadline = time.monotonic() + WAIT_LIMIT
    while not condition():
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"timed out waiting for {what}")
        platform.changed.clear()
        try:
            async with asyncio.timeout(min(left, 0.1)):
                await platform.changed.wait()
        except TimeoutError:
            pass


async def eventually(check: Callable[[], Awaitable[object]], what: str) -> None:
    """Wait until the awaited `check()` is truthy (store state no chat event announces),
    looking again every few milliseconds."""
    deadline = time.monotonic() + WAIT_LIMIT
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)
