"""Session titles after the first exchange: the heuristic, a titles model, fallbacks."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from seam.contracts.hooks import AgentDone
from seam.contracts.messages import EMPTY_USAGE, Message
from seam.core import AgentLoop, DefaultHookRegistry, ScriptedModel, text_step
from seam.core.sessions import InMemorySessionStore
from seam.plugins.hooks.titles import TitleHook, clean_title, heuristic_title
from seam.services.sessions.sqlite import SQLiteSessionStore


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("what is the capital of France?", "What is the capital of France"),
        ("  \n\n  fix   the\tbuild  \nsecond line", "Fix the build"),
        ('"quoted"', "Quoted"),
        (
            "please summarise the attached quarterly report and list every risk it names",
            "Please summarise the attached quarterly report…",
        ),
        ("a" * 80, "A" + "a" * 46 + "…"),
        ("?!...", ""),
        ("", ""),
    ],
)
def test_heuristic_title(text: str, title: str) -> None:
    assert heuristic_title(text) == title
    assert len(heuristic_title(text)) <= 48


def test_a_models_reply_is_cleaned() -> None:
    assert clean_title('Title: "Paris trip plans."\nmore') == "Paris trip plans"


def done(key: str, *messages: Message) -> AgentDone:
    return AgentDone(key, "t1", "", EMPTY_USAGE, messages)


async def test_the_first_exchange_titles_the_session_and_later_ones_keep_it() -> None:
    store = InMemorySessionStore()
    hooks = DefaultHookRegistry()
    TitleHook(store).register(hooks)
    loop = AgentLoop(
        model=ScriptedModel([text_step("Paris."), text_step("Yes.")]), hooks=hooks, sessions=store
    )
    async for _ in loop.run("s", "capital of France?"):
        pass
    async for _ in loop.run("s", "are you sure?"):
        pass
    info = await store.get("s")
    assert info is not None and info.title == "Capital of France"


async def test_a_taken_title_is_numbered_and_a_titled_session_is_left_alone() -> None:
    store = InMemorySessionStore()
    hook = TitleHook(store)
    for key in ("a", "b", "c"):
        await store.create(key)
    await store.set_title("c", "Mine")
    for key in ("a", "b", "c"):
        await hook.after_turn(done(key, Message("user", "hello there")))
    titles = [(await store.get(k)).title for k in ("a", "b", "c")]  # type: ignore[union-attr]
    assert titles == ["Hello there", "Hello there #2", "Mine"]


async def test_a_titles_model_names_the_session_in_the_background() -> None:
    store = InMemorySessionStore()
    await store.create("s")
    hook = TitleHook(store, model=ScriptedModel([text_step("Weekend in Porto")]))
    await hook.after_turn(
        done("s", Message("user", "I want to go away"), Message("assistant", "ok"))
    )
    await hook.drain()
    info = await store.get("s")
    assert info is not None and info.title == "Weekend in Porto"


async def test_a_failing_titles_model_falls_back_to_the_first_message() -> None:
    store = InMemorySessionStore()
    await store.create("s")
    hook = TitleHook(store, model=ScriptedModel([]))  # out of script: a model error
    await hook.after_turn(done("s", Message("user", "book a table for two")))
    await hook.drain()
    info = await store.get("s")
    assert info is not None and info.title == "Book a table for two"


async def test_skipped_sessions_get_no_title() -> None:
    store = InMemorySessionStore()
    await store.create("task:x")
    hook = TitleHook(store, skip=lambda key: key.startswith("task:"))
    await hook.after_turn(done("task:x", Message("user", "subtask")))
    info = await store.get("task:x")
    assert info is not None and info.title is None


async def test_sessions_titled_alike_at_once_get_distinct_numbers(tmp_path: Path) -> None:
    """The store numbers each title in the write that sets it: a burst of sessions whose
    first message says the same thing gets "Hi", "Hi #2", ... with no write refused."""
    store = SQLiteSessionStore(str(tmp_path / "sessions.db"))
    try:
        keys = [f"s{n}" for n in range(20)]
        for key in keys:
            await store.create(key)
        hook = TitleHook(store)
        await asyncio.gather(*(hook.after_turn(done(k, Message("user", "hi"))) for k in keys))
        titles = {(await store.get(k)).title for k in keys}  # type: ignore[union-attr]
        assert titles == {"Hi", *(f"Hi #{n}" for n in range(2, 21))}
    finally:
        await store.aclose()


async def test_a_session_gone_before_its_title_is_left_untitled() -> None:
    hook = TitleHook(InMemorySessionStore())
    assert await hook.give("gone", "Hello") is None
    await hook.after_turn(done("gone", Message("user", "hello")))  # no error either
