"""The `session_search` tool over a real SQLite session store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.messages import Message
from seam.contracts.sessions import NewSession
from seam.contracts.tools import ToolContext, ToolError
from seam.core.execution import InMemoryExecutionStore
from seam.core.personalities import StaticPersonalityRegistry
from seam.core.scripted_model import ScriptedModel
from seam.core.storage import InMemoryStorage
from seam.plugins.tools.session_search import MAX_LIMIT, SessionSearchTool
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.wiring import assemble_runtime
from seam.wiring.tools import build_tool_registry
from tests.support.tools import checked

DAY_ONE = 1_714_521_600.0  # 2024-05-01 00:00 UTC


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteSessionStore]:
    now = [DAY_ONE]
    sessions = SQLiteSessionStore(str(tmp_path / "s.db"), clock=lambda: now[0])
    await sessions.create("trip", NewSession(title="Trip to Lisbon"))
    await sessions.append(
        "trip",
        [
            Message("user", "Which tram goes to Belém?"),
            Message("tool", "tram 15 timetable", tool_call_id="c", name="web_fetch"),
            Message("assistant", "Tram 15 goes from Praça da Figueira to Belém."),
        ],
    )
    now[0] += 86_400
    await sessions.create("untitled-key")
    await sessions.append("untitled-key", [Message("user", "remind me about the tram pass")])
    await sessions.create("current")
    await sessions.append("current", [Message("user", "what did we say about the tram?")])
    yield sessions
    await sessions.aclose()


async def search(tool: SessionSearchTool, session: str = "current", **args: Any) -> str:
    return await checked(tool).run(
        args, ToolContext(session_key=session, storage=InMemoryStorage())
    )


async def test_finds_past_sessions_newest_first_without_the_current_one(
    store: SQLiteSessionStore,
) -> None:
    out = await search(SessionSearchTool(store), query="tram")
    assert out == (
        "3 matches, newest first:\n"
        "- [untitled-key, 2024-05-02] user: remind me about the tram pass\n"
        '- ["Trip to Lisbon", 2024-05-01] assistant: Tram 15 goes from Praça da Figueira to'
        " Belém.\n"
        '- ["Trip to Lisbon", 2024-05-01] user: Which tram goes to Belém?'
    )


async def test_from_another_session_the_current_one_is_found(store: SQLiteSessionStore) -> None:
    out = await search(SessionSearchTool(store), session="trip", query="tram", limit=1)
    assert out == (
        "1 match, newest first:\n- [current, 2024-05-02] user: what did we say about the tram?"
    )


async def test_every_word_must_match_and_accents_are_ignored(store: SQLiteSessionStore) -> None:
    out = await search(SessionSearchTool(store), query="BELEM tram")
    assert out.startswith("2 matches")
    assert "timetable" not in out  # tool output is not searched
    none = await search(SessionSearchTool(store), query="tram submarine")
    assert none == "No past conversation has all of these words: tram submarine"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument 'query'"),
        ({"query": "   "}, "give one or more words"),
        ({"query": 3}, r"'query' must be a string \(got 3\)"),
        ({"query": "tram", "limit": 0}, r"'limit' must be >= 1 \(got 0\)"),
        ({"query": "tram", "limit": MAX_LIMIT + 1}, f"'limit' must be <= {MAX_LIMIT}"),
        ({"query": "tram", "limit": "two"}, "'limit' must be an integer"),
        ({"query": "tram", "limit": True}, r"'limit' must be an integer \(got true\)"),
    ],
)
async def test_bad_arguments_are_errors_the_model_reads(
    store: SQLiteSessionStore, args: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolError, match=message):
        await search(SessionSearchTool(store), **args)


async def test_without_a_store_it_says_so() -> None:
    with pytest.raises(ToolError, match="not configured"):
        await search(SessionSearchTool(None), query="tram")


async def test_the_registry_builds_it_over_the_given_store(store: SQLiteSessionStore) -> None:
    registry = build_tool_registry(sessions=store)
    ctx = ToolContext(session_key="current", storage=InMemoryStorage())
    (tool,) = registry.build(["session_search"], ctx)
    assert tool.concurrent and tool.idempotent
    assert (await tool.run({"query": "pass"}, ctx)).startswith("1 match")
    (definition,) = registry.definitions([tool])
    assert definition.parameters["required"] == ["query"]


async def test_a_runtime_searches_its_own_store() -> None:
    store = InMemoryExecutionStore()
    await store.create("earlier")
    await store.append("earlier", [Message("user", "the wifi password is on the fridge")])
    runtime = assemble_runtime(
        model=ScriptedModel([]), personalities=StaticPersonalityRegistry(), store=store
    )
    ctx = ToolContext(session_key="now", storage=InMemoryStorage())
    (tool,) = runtime.tools.build(["session_search"], ctx)
    assert "on the fridge" in await tool.run({"query": "wifi password"}, ctx)
    await runtime.aclose()


async def test_only_the_callers_tenant_is_searched(store: SQLiteSessionStore) -> None:
    await store.create("alice-now", NewSession(tenant="alice"))
    await store.create("alice-before", NewSession(tenant="alice"))
    await store.create("bob-before", NewSession(tenant="bob"))
    await store.append("alice-before", [Message("user", "the garden tram plan")])
    await store.append("bob-before", [Message("user", "bob's secret tram plan")])
    tool = SessionSearchTool(store)
    ctx = ToolContext(session_key="alice-now", storage=InMemoryStorage())
    result = await tool.run({"query": "tram plan"}, ctx)
    assert "garden tram plan" in result
    assert "bob" not in result
