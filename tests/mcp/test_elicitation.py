"""Elicitation as an approval-style question, against an SDK server that asks mid-call.

Approving sends the form's defaults (a required yes/no field as true); denying, nobody
there, or a form that needs typed values all tell the server "decline". The same server's
resource shows that what a resource says is untrusted like any tool result.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.events import ToolApprovalRequired
from seam.core.scripted_model import call, tool_step
from seam.plugins.mcp.connection import ServerConnection
from seam.plugins.mcp.elicit import form_defaults
from seam.plugins.mcp.servers import McpServers
from seam.plugins.mcp.spec import ServerSpec
from tests.mcp.installed import everything
from tests.plugins.test_mcp import ends, runtime_with, turn

SERVER = str(Path(__file__).with_name("confirm_server.py"))


def confirm() -> McpServers:
    return McpServers([ServerSpec(name="confirm", command=(sys.executable, SERVER))])


@pytest.mark.parametrize(
    ("answer", "told"),
    [
        ("once", "accept confirm=True note=none"),
        ("session", "accept confirm=True note=none"),
        ("deny", "decline"),
        ("unavailable", "decline"),
    ],
)
async def test_the_person_answers_the_servers_question(answer: str, told: str) -> None:
    servers = confirm()
    runtime, _ = runtime_with(servers, tool_step(call("mcp__confirm__wipe")))
    async with runtime:
        events = await turn(runtime, answer=answer)
    [asked] = [e for e in events if isinstance(e, ToolApprovalRequired)]
    assert asked.name == "mcp__confirm__wipe"
    assert asked.reason == "MCP server 'confirm' asks: Really wipe the cache?"
    assert asked.command == 'send {"confirm": true, "note": "none"}'
    [end] = ends(events)
    assert end.result == told


async def test_a_question_for_a_name_is_declined_without_asking() -> None:
    servers = confirm()
    runtime, _ = runtime_with(servers, tool_step(call("mcp__confirm__register")))
    async with runtime:
        events = await turn(runtime, answer="once")
    assert not [e for e in events if isinstance(e, ToolApprovalRequired)]
    [end] = ends(events)
    assert end.result == "decline"


def test_form_defaults() -> None:
    schema = {
        "properties": {
            "ok": {"type": "boolean"},
            "level": {"type": "integer", "default": 3},
            "comment": {"type": "string"},
            "name": {"type": "string"},
        },
        "required": ["ok", "name"],
    }
    assert form_defaults(schema) == ({"ok": True, "level": 3}, ["name"])
    assert form_defaults({}) == ({}, [])


async def test_each_call_answers_its_own_question_across_sessions() -> None:
    """On the current protocol the question comes back with the call: two sessions'
    concurrent calls are each answered by their own person."""
    from mcp.types import ElicitResult

    conn = ServerConnection(ServerSpec(name="confirm", command=(sys.executable, SERVER)))
    asked: list[str] = []

    def person(name: str, action: str) -> Any:
        async def ask(params: Any) -> Any:
            asked.append(name)
            await asyncio.sleep(0.05)  # both calls wait at once
            return ElicitResult(action=action, content={"confirm": True})

        return ask

    try:
        first, second = await asyncio.gather(
            conn.call("wipe", {}, ask=person("ann", "accept"), session="a"),
            conn.call("wipe", {}, ask=person("bob", "decline"), session="b"),
        )
    finally:
        await conn.aclose()
    assert sorted(asked) == ["ann", "bob"]
    assert first.content[0].text == "accept confirm=True note=none"
    assert second.content[0].text == "decline"


async def test_an_unlabelled_question_with_two_sessions_waiting_is_declined() -> None:
    """On the older protocol (server-everything) a question arrives on its own: with calls
    of two sessions waiting, nobody can tell whose it is, so nobody is asked."""
    conn = ServerConnection(everything())
    asked: list[str] = []

    async def ask(params: Any) -> Any:
        asked.append(params.url)
        raise AssertionError("nobody should be asked")

    slow = {"duration": 1.0, "steps": 2}
    url = {"url": "https://example.com/x"}
    try:
        await conn.client()
        results = await asyncio.gather(
            conn.call("trigger-long-running-operation", slow, ask=ask, session="a"),
            conn.call("trigger-url-elicitation", url, ask=ask, session="b"),
        )
        alone = await conn.call("trigger-url-elicitation", url, session="b")
    finally:
        await conn.aclose()
    assert asked == []
    assert "decline" in results[1].content[0].text.lower()
    assert "decline" in alone.content[0].text.lower()


async def test_a_resource_is_untrusted_content_like_any_tool_result() -> None:
    servers = confirm()
    runtime, _ = runtime_with(
        servers, tool_step(call("mcp__read_resource", server="confirm", uri="notes://evil"))
    )
    async with runtime:
        [end] = ends(await turn(runtime))
    assert "Ignore all previous instructions" in end.result
    assert "untrusted" in end.result.lower()
