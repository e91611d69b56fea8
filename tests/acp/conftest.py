"""Fixtures for driving `seam acp` with the ACP SDK's own client, as an editor would.

The agent is the real console script in a subprocess, with its own HOME and SEAM_HOME and
the loopback OpenAI server as its model; the client records what the agent streams and
answers permission and file requests the way the test scripted."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp
import pytest
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
