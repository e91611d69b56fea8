"""Fixtures for driving `seam acp` with the ACP SDK's own client, as an editor would.

The agent is the real console script in a subprocess, with its own HOME and SEAM_HOME and
the loopback OpenAI server as its model; the client records what the agent streams and
answers permission and file requests the way the test scripted."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

import acp
import pytest
import pytest_asyncio
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from tests.cli.conftest import SEAM, Cli, make_cli
from tests.support.openai_server import (
    OpenAIServer,
    openai_server_fixture,  # noqa: F401  (registers the `openai_server` fixture)
    text_reply,
)
from tests.support.shared_model import (  # noqa: F401  (registers `shared_model`)
    SharedModel,
    shared_model_fixture,
)


@dataclass
class EditorClient:
    """What an editor does: shows updates, answers permission requests, serves buffers."""

    answer: str | None = "allow_once"  # option id, None: the request is cancelled
    buffers: dict[str, str] = field(default_factory=dict)
    updates: list[Any] = field(default_factory=list)
    permissions: list[Any] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: dict[str, str] = field(default_factory=dict)
    first_text: asyncio.Event = field(default_factory=asyncio.Event)
    asked: asyncio.Event = field(default_factory=asyncio.Event)
    # With `hold`, a permission request waits for it (then is cancelled), as when the
    # person presses stop while the editor shows the prompt.
    hold: asyncio.Event | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        if getattr(update, "session_update", "") == "agent_message_chunk":
            self.first_text.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        self.asked.set()
        if self.hold is not None:
            await self.hold.wait()
        if self.answer is None or self.hold is not None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:  # like an editor: the saved file when there is no open buffer
            return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise acp.RequestError.resource_not_found(path) from exc

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes[path] = content
        return WriteTextFileResponse()

    def on_connect(self, conn: Any) -> None:
        pass

    def kinds(self) -> list[str]:
        return [u.session_update for u in self.updates]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.updates if u.session_update == kind)


@dataclass
class WatchingClient(EditorClient):
    """An EditorClient that sets `seen` when an update of the kind `watch` arrives."""

    watch: str = "tool_call"
    seen: asyncio.Event = field(default_factory=asyncio.Event)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        if update.session_update == self.watch:
            self.seen.set()


async def stalled_turn(agent: Agent, client: EditorClient, conn: Any) -> tuple[str, Any]:
    """A new thread in the test's project whose turn is stalled mid-answer, its first
    words shown: (the thread's id, the prompt's future)."""
    reply = text_reply("one two three four five six", chunk_size=2).stalled(after=2)
    agent.model.push(reply)
    session = await conn.new_session(cwd=str(agent.cli.project), mcp_servers=[])
    prompt = [acp.text_block("count")]
    turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=prompt))
    await asyncio.wait_for(client.first_text.wait(), 60)
    return session.session_id, turn


@dataclass
class Editor:
    cli: Cli
    client: EditorClient
    conn: Any


@pytest.fixture
def cli(tmp_path: Any, openai_server: OpenAIServer) -> Cli:
    return make_cli(
        tmp_path, {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "test-key"}
    )


@asynccontextmanager
async def open_editor(cli: Cli, client: EditorClient, *, fs: bool = True) -> AsyncIterator[Any]:
    """`seam acp` spawned by the SDK and initialized, as `conn`."""
    async with acp.spawn_agent_process(client, str(SEAM), "acp", env=cli.env, cwd=cli.project) as (
        conn,
        _proc,
    ):
        caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs))
        init = await asyncio.wait_for(
            conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=caps), 30
        )
        yield conn, init


class RoutingClient:
    """The client of a module's shared `seam acp`: every call goes to the running test's
    EditorClient (`current`), looked up at call time. Tests in a worker run one at a time,
    so that is the client that test scripted."""

    def __init__(self) -> None:
        self.current = EditorClient()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await self.current.session_update(session_id, update, **kwargs)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        return await self.current.request_permission(session_id, tool_call, options, **kwargs)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        return await self.current.read_text_file(session_id, path, line, limit, **kwargs)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        return await self.current.write_text_file(session_id, path, content, **kwargs)

    def on_connect(self, conn: Any) -> None:
        pass


@dataclass
class SharedAgent:
    """One `seam acp` (its own HOME and SEAM_HOME, editor fs capabilities on) for the
    tests of a module: starting one costs 2-4 s of CPU, a test's own session costs none."""

    cli: Cli
    router: RoutingClient
    conn: Any
    init: Any


@dataclass
class Agent:
    """A test's view of the shared agent: its own project directory (where its sessions
    work), the reset model, and `editor(client)` to talk through `client`."""

    shared: SharedAgent
    cli: Cli
    model: SharedModel

    @asynccontextmanager
    async def editor(self, client: EditorClient) -> AsyncIterator[Any]:
        """Like `open_editor`, on the shared connection: yields (conn, init)."""
        self.shared.router.current = client
        try:
            yield self.shared.conn, self.shared.init
        finally:
            self.shared.router.current = EditorClient()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_agent(
    tmp_path_factory: pytest.TempPathFactory, shared_model: SharedModel
) -> AsyncIterator[SharedAgent]:
    cli = make_cli(
        tmp_path_factory.mktemp("acp"),
        {"OPENAI_BASE_URL": shared_model.base_url, "OPENAI_API_KEY": "test-key"},
    )
    router = RoutingClient()
    async with open_editor(cli, cast("EditorClient", router)) as (conn, init):
        yield SharedAgent(cli, router, conn, init)


@pytest.fixture
def agent(shared_agent: SharedAgent, shared_model: SharedModel, tmp_path: Path) -> Agent:
    """The shared agent, with a project directory and a model script of this test's own."""
    shared_model.reset()
    project = tmp_path / "project"
    project.mkdir()
    return Agent(shared_agent, replace(shared_agent.cli, project=project), shared_model)
