"""The todo and clarify tools, and their registration with the other extra tools."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

import pytest

from seam.contracts.tools import Tool, ToolContext, ToolError
from seam.core.storage import InMemoryStorage
from seam.core.tool_registry import DefaultToolRegistry
from seam.plugins.tools.clarify import NO_SURFACE, Clarify
from seam.plugins.tools.extra import register_extra_tools
from seam.plugins.tools.todo import Todo, TodoStore
from tests.support.tools import checked


def context(session_key: str = "s1") -> ToolContext:
    return ToolContext(session_key=session_key, storage=InMemoryStorage())


async def todo(tool: Todo, session: str = "s1", **args: Any) -> str:
    return await checked(tool).run(args, context(session))


async def test_todo_keeps_a_list_per_session() -> None:
    tool = Todo()
    out = await todo(tool, action="add", items=["write tests", "implement", "docs"])
    assert out == "todo (0/3 done):\n1. [ ] write tests\n2. [ ] implement\n3. [ ] docs"
    await todo(tool, action="update", id=1, status="done")
    out = await todo(tool, action="update", id="2", status="in_progress")
    assert out == "todo (1/3 done):\n1. [x] write tests\n2. [>] implement\n3. [ ] docs"
    assert await todo(tool, "s2", action="list") == "todo list is empty"
    await todo(tool, "s2", action="add", items="other session")
    assert await todo(tool, action="list") == out
    assert await todo(tool, action="clear") == "todo list is empty"
    assert await todo(tool, action="add", items=["again"]) == "todo (0/1 done):\n1. [ ] again"


async def test_todo_list_survives_rebuilding_the_tool_from_the_same_store() -> None:
    store = TodoStore()
    await todo(Todo(store), action="add", items=["  spaced \n  out  "])
    assert await todo(Todo(store), action="list") == "todo (0/1 done):\n1. [ ] spaced out"


async def test_todo_ids_continue_after_existing_items() -> None:
    tool = Todo()
    await todo(tool, action="add", items=["a", "b"])
    out = await todo(tool, action="add", items=["c"])
    assert out.endswith("3. [ ] c")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"action": "remove"}, '\'action\' must be one of "add", "update", "list", "clear"'),
        ({"action": "add"}, "needs 'items'"),
        ({"action": "add", "items": ["ok", ""]}, "each item must be a non-empty string"),
        ({"action": "add", "items": ["ok", 3]}, "'items[1]' must be a string (got 3)"),
        ({"action": "add", "items": ["ok", "  "]}, "each item must be a non-empty string"),
        ({"action": "update", "status": "done"}, "needs 'id'"),
        ({"action": "update", "id": 1}, "needs 'status'"),
        ({"action": "update", "id": 1, "status": "finished"}, '"pending", "in_progress", "done"'),
        ({"action": "update", "id": 9, "status": "done"}, "no todo item 9 (ids: 1)"),
    ],
)
async def test_todo_bad_input_is_named(args: dict[str, Any], message: str) -> None:
    tool = Todo()
    await todo(tool, action="add", items=["only"])
    with pytest.raises(ToolError, match=re.escape(message)):
        await checked(tool).run(args, context())
    assert await todo(tool, action="list") == "todo (0/1 done):\n1. [ ] only"


class Person:
    """Stands in for the surface: answers from a script and records what was asked."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked: list[tuple[str, str, Sequence[str] | None]] = []

    async def ask(self, session_key: str, question: str, choices: Sequence[str] | None) -> str:
        self.asked.append((session_key, question, choices))
        return self.answer


async def test_clarify_asks_through_the_surface() -> None:
    person = Person(" staging \n")
    tool = Clarify(person.ask)
    args = {"question": " Deploy where? ", "choices": ["staging", "production"]}
    out = await tool.run(args, context("chat-7"))
    assert out == "The person answered: staging"
    assert person.asked == [("chat-7", "Deploy where?", ["staging", "production"])]


async def test_clarify_reports_an_empty_answer() -> None:
    out = await Clarify(Person("   ").ask).run({"question": "Which?"}, context())
    assert out == "The person gave no answer."


async def test_clarify_without_a_surface_tells_the_model_to_ask_in_its_reply() -> None:
    assert await Clarify().run({"question": "Which?"}, context()) == NO_SURFACE
    assert "in your reply" in NO_SURFACE


async def test_clarify_timeout_lets_the_model_go_on() -> None:
    async def slow(session_key: str, question: str, choices: Sequence[str] | None) -> str:
        async with asyncio.timeout(0):
            await asyncio.Event().wait()
        return "never"

    out = await Clarify(slow).run({"question": "Which?"}, context())
    assert "did not answer in time" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument 'question'"),
        ({"question": ""}, "'question' must not be empty"),
        ({"question": "  "}, "'question' must not be empty"),
        ({"question": "x" * 1001}, "'question' must be at most 1,000 characters"),
        ({"question": "q", "choices": "yes"}, "'choices' must be a list"),
        ({"question": "q", "choices": [" "]}, "list of non-empty strings"),
        ({"question": "q", "choices": [str(i) for i in range(11)]}, "at most 10 items"),
    ],
)
async def test_clarify_bad_input_is_named(args: dict[str, Any], message: str) -> None:
    person = Person("x")
    with pytest.raises(ToolError, match=message):
        await checked(Clarify(person.ask)).run(args, context())
    assert person.asked == []


async def test_register_extra_tools() -> None:
    registry = DefaultToolRegistry()
    store = TodoStore()
    person = Person("yes")
    register_extra_tools(registry, todo_store=store, ask=person.ask)
    assert registry.names() == ["clarify", "patch", "todo", "web_fetch"]
    tools = {t.name: t for t in registry.build(None, context("k"))}
    flags = {name: (t.concurrent, t.idempotent) for name, t in tools.items()}
    assert flags == {
        "clarify": (False, False),
        "patch": (False, False),
        "todo": (False, False),
        "web_fetch": (True, True),
    }
    for tool in tools.values():
        assert isinstance(tool, Tool)
        assert len(tool.description.split()) <= 25, tool.name
    await tools["todo"].run({"action": "add", "items": ["x"]}, context("k"))
    assert [item.text for item in store.get("k")] == ["x"]
    assert await tools["clarify"].run({"question": "ok?"}, context("k")) == (
        "The person answered: yes"
    )
