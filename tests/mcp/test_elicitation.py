"""Elicitation as an approval-style question, against an SDK server that asks mid-call.

Approving sends the form's defaults (a required yes/no field as true); denying, nobody
there, or a form that needs typed values all tell the server "decline".
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from seam.contracts.events import ToolApprovalRequired
from seam.core.scripted_model import call, tool_step
from seam.plugins.mcp.elicit import form_defaults
from seam.plugins.mcp.servers import McpServers
from seam.plugins.mcp.spec import ServerSpec
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
