"""`ServerConnection`: one MCP server's session, started on demand and restarted after a crash.

The SDK's transports are anyio task groups, which must be entered and left by the same
task; so each connection lives in a task of its own (`_serve`) that opens the client,
hands it over, and waits to be told to close. Calls are made from the turns' tasks over
that client. A call that finds the connection closed (the process died, the HTTP server
went away) marks it broken; the next call starts a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO

from seam.contracts.addresses import (
    ALLOW_PRIVATE_ADVICE,
    Resolver,
    Unreachable,
    allow_entry,
    url_addresses,
)
from seam.plugins.mcp.spec import ServerSpec
from seam.plugins.resolver import system_resolve

log = logging.getLogger(__name__)

CLOSE_GRACE = 5.0  # seconds a closing connection gets before its task is cancelled

# Answers a server's `elicitation/create` for the call that is waiting on it.
Asker = Callable[[Any], Awaitable[Any]]
# Takes a server's `notifications/progress` for a call: (progress, total, message).
Progress = Callable[[float, float | None, str | None], Awaitable[None]]


# The asker of the call running in this task (see `_elicit`).
_ASKER: contextvars.ContextVar[Asker | None] = contextvars.ContextVar("mcp_asker", default=None)


class ServerError(Exception):
    """The server could not be reached or broke off; the message is for the model."""


class ServerConnection:
    def __init__(self, spec: ServerSpec, *, resolve: Resolver | None = None) -> None:
        """`resolve`: how a run-time HTTP server's name is looked up (the system's
        resolver unless a test hands in its own)."""
        self.spec = spec
        self._resolve = resolve
        self.state = "not started"  # not started | starting | ready | failed | crashed | stopped
        self.error = ""
        self.tools: list[Any] | None = None  # the server's listing (mcp `Tool`s), once known
        self.prompts: list[Any] = []  # its prompts (mcp `Prompt`s), listed with the tools
        self.resources = False  # whether it declared the resources capability
        # The calls waiting on the server, newest last, with their sessions (`_elicit`).
        self._askers: list[tuple[str, Asker]] = []
        self.starts = 0
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()

    @property
    def ready(self) -> bool:
        return self._client is not None and self._task is not None and not self._task.done()

    @property
    def alive(self) -> bool:
        """Connected, as far as anyone can tell without asking the server."""
        return self.ready and not _closed(self._client)

    async def client(self) -> Any:
        """The connected client, starting (or restarting) the server when needed."""
        if self.ready:
            return self._client
        async with self._lock:
            if self.ready:
                return self._client
            await self._close()
            if self.spec.problem:
                self.state, self.error = "failed", self.spec.problem
                raise ServerError(self.spec.problem)
            self.state, self.error = "starting", ""
            try:
                async with asyncio.timeout(self.spec.connect_timeout):
                    self._client = await self._start()
                    self.tools = await _list_tools(self._client)
                    await self._list_extras(self._client)
            except TimeoutError:
                await self._close()
                self.state = "failed"
                self.error = f"did not start within {self.spec.connect_timeout:g} s"
                raise ServerError(self.error) from None
            except Exception as exc:
                await self._close()
                self.state, self.error = "failed", _reason(exc)
                raise ServerError(self.error) from None
            self.state = "ready"
            self.starts += 1
            return self._client

    async def _list_extras(self, client: Any) -> None:
        """What the server offers beside tools: its prompts (for slash commands) and
        whether it has resources (for `mcp__resources` / `mcp__read_resource`). A server
        that fails to list them still offers its tools."""
        capabilities = client.server_capabilities
        self.resources, self.prompts = False, []
        try:
            if capabilities.resources is not None:
                # The SDK's servers declare the capability whether or not they have any:
                # the tools are offered (their tokens spent) only for a server with some.
                found = await client.list_resources()
                templates = await client.list_resource_templates()
                self.resources = bool(found.resources or templates.resource_templates)
            if capabilities.prompts is not None:
                self.prompts = list((await client.list_prompts()).prompts)
        except Exception as exc:
            if not self._broken_listing(exc):
                log.warning("mcp server %s: listing its extras failed: %s", self.spec.name, exc)
                return
            raise

    def _broken_listing(self, exc: Exception) -> bool:
        """A closed connection fails the start; an error answer only loses the extras."""
        from mcp.shared.exceptions import MCPError

        return not isinstance(exc, MCPError)

    async def call(
        self,
        tool: str,
        args: dict[str, Any],
        *,
        progress: Progress | None = None,
        ask: Asker | None = None,
        session: str = "",
    ) -> Any:
        """`tools/call` with the call timeout; a broken connection is marked for restart.
        `progress` gets the server's progress notes; `ask` answers its elicitations while
        the call waits (without one they are declined); `session` is whose call it is."""
        entry = (session, ask) if ask is not None else None
        token = _ASKER.set(ask)
        if entry is not None:
            self._askers.append(entry)
        try:
            return await self.request(
                tool, lambda client: client.call_tool(tool, args, progress_callback=progress)
            )
        finally:
            _ASKER.reset(token)
            if entry is not None:
                self._askers.remove(entry)

    async def request(self, what: str, send: Callable[[Any], Awaitable[Any]]) -> Any:
        """One request (`send(client)`) with the call timeout; a broken connection is
        marked for restart, and every failure is a `ServerError` for the model."""
        client = await self.client()
        if _closed(client):
            # It died while idle (the process was killed, the HTTP server went away): the
            # call was never sent, so a new connection takes it without an error.
            log.info("mcp server %s closed while idle; restarting it", self.spec.name)
            await self._close()
            client = await self.client()
        try:
            async with asyncio.timeout(self.spec.call_timeout):
                return await send(client)
        except TimeoutError:
            raise ServerError(
                f"{what} did not answer within {self.spec.call_timeout:g} s (call timeout)"
            ) from None
        except Exception as exc:
            if self._broken(exc):
                self.state, self.error = "crashed", _reason(exc)
                await self._close(keep_state=True)
                raise ServerError(
                    f"the server stopped during the call ({self.error}); "
                    "it will be restarted on the next call"
                ) from None
            raise ServerError(_reason(exc)) from None

    async def _elicit(self, context: Any, params: Any) -> Any:
        """The SDK's elicitation callback. On the current protocol the question comes back
        in the call's own result, so it is answered in the calling task (`_ASKER`). On an
        older one it arrives on its own, unlabelled: the newest waiting call answers when
        every waiting call is one session's; otherwise (several sessions share the server,
        and the question could be one person's about another's call), or with no call
        waiting, it is declined."""
        from mcp.types import ElicitResult

        ask = _ASKER.get()
        if ask is None and len({session for session, _ in self._askers}) == 1:
            ask = self._askers[-1][1]
        if ask is None:
            log.info("mcp server %s: an elicitation no call could answer, declined", self.spec.name)
            return ElicitResult(action="decline")
        return await ask(params)

    def _broken(self, exc: Exception) -> bool:
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED

        if isinstance(exc, MCPError):
            return exc.code == CONNECTION_CLOSED or not self.ready
        return True  # a transport error, not an answer

    async def _start(self) -> Any:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[Any] = loop.create_future()
        self._stop = asyncio.Event()
        serve = self._serve(ready, self._stop)
        self._task = asyncio.create_task(serve, name=f"mcp:{self.spec.name}")
        return await asyncio.shield(ready)

    async def _serve(self, ready: asyncio.Future[Any], stop: asyncio.Event) -> None:
        try:
            async with AsyncExitStack() as stack:
                client = await self._open(stack)
                if not ready.done():
                    ready.set_result(client)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ServerError("cancelled"))
            elif not stop.is_set():
                log.warning("mcp server %s stopped: %s", self.spec.name, _reason(exc))
            if not isinstance(exc, Exception):
                raise

    async def _open(self, stack: AsyncExitStack) -> Any:
        from mcp import Client

        spec = self.spec
        if spec.command:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=spec.command[0],
                args=list(spec.command[1:]),
                env=dict(spec.env),
                cwd=spec.cwd,
            )
            transport: Any = stdio_client(params, errlog=stack.enter_context(_errlog(spec.errlog)))
        else:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            pinned = await _check_address(spec, self._resolve or system_resolve)
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=spec.headers,
                    timeout=httpx2.Timeout(spec.call_timeout, connect=spec.connect_timeout),
                    transport=pinned,
                )
            )
            transport = streamable_http_client(spec.url, http_client=http)
        return await stack.enter_async_context(Client(transport, elicitation_callback=self._elicit))

    async def _close(self, *, keep_state: bool = False) -> None:
        task, self._task, self._client = self._task, None, None
        if self._stop is not None:
            self._stop.set()
        if task is not None and not task.done():
            done, _ = await asyncio.wait((task,), timeout=CLOSE_GRACE)
            if not done:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        elif task is not None:
            with contextlib.suppress(BaseException):
                task.result()

    async def aclose(self) -> None:
        async with self._lock:
            await self._close()
            if self.state in ("ready", "starting"):
                self.state = "stopped"


async def _check_address(spec: ServerSpec, resolve: Resolver) -> Any:
    """Refuse a run-time server's URL on a non-public address (every address its name
    resolves to is checked) unless `spec.allow_private` lists it; the transport that
    connects to the checked address (`pinned.py`), or None for a configured server."""
    if spec.allow_private is None:
        return None
    from urllib.parse import urlsplit

    from seam.plugins.mcp.pinned import PinnedTransport

    parts = urlsplit(spec.url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    allow = {allow_entry(entry) for entry in spec.allow_private}
    try:
        addresses = await url_addresses(spec.url, host, port, allow, resolve, ALLOW_PRIVATE_ADVICE)
    except Unreachable as exc:
        raise ServerError(str(exc)) from None
    if not addresses:
        raise ServerError(f"could not resolve {host}: no address")
    return PinnedTransport(host, addresses[0])


def _closed(client: Any) -> bool:
    """Whether the client's connection is known to be closed (the SDK keeps the flag on its
    dispatcher; if that ever moves, this says "open" and the call reports the closure)."""
    dispatcher = getattr(getattr(client, "_session", None), "_dispatcher", None)
    return getattr(dispatcher, "_closed", False) is True


async def _list_tools(client: Any) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(100):  # pages; a server that never stops paging is cut off
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _errlog(path: str | None) -> contextlib.AbstractContextManager[TextIO]:
    """Where the child's stderr goes: a log file, else nowhere (never over the chat)."""
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        return open(path, "a", encoding="utf-8")  # closed by the connection's exit stack
    return open(os.devnull, "w", encoding="utf-8")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        inner: Sequence[BaseException] = exc.exceptions
        return "; ".join(_reason(e) for e in inner)
    message = getattr(exc, "message", None)
    text = message if isinstance(message, str) and message else str(exc) or type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"


__all__ = ["ServerConnection", "ServerError"]
