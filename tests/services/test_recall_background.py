"""Indexing for search by meaning is off the turn's path: a turn embeds nothing; the
background indexer of long-running processes (the web backend, the gateway) and the
chat's idle indexer fill the vectors in; a search through a scripted model's tool call
finds what was said in other words. Real SQLite store, real embedder."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.apps.cli.chat_recall import IdleIndexer
from seam.apps.web.backend import WebBackend
from seam.contracts.messages import Message
from seam.contracts.session_recall import MessageVectors
from seam.core.personalities import StaticPersonalityRegistry
from seam.core.scripted_model import ScriptedModel, call, text_step, tool_step
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.testing.conformance.search import HOSTILE_QUERIES
from seam.wiring import assemble_runtime
from seam.wiring.runtime import Runtime
from seam.wiring.session_recall import start_indexing

WIFI = "the wifi password is in the blue notebook"
QUESTION = "where did I write down the cabin's internet login?"


def build(tmp_path: Path, model: ScriptedModel) -> Runtime:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    return assemble_runtime(model=model, personalities=StaticPersonalityRegistry(), store=store)


def vectors(runtime: Runtime) -> MessageVectors:
    store = runtime.store
    assert isinstance(store, SQLiteSessionStore)
    return store.message_vectors()


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    model = ScriptedModel(
        [
            text_step("Noted."),
            tool_step(call("session_search", query=QUESTION)),
            text_step("In the blue notebook."),
        ]
    )
    async with build(tmp_path, model) as opened:
        yield opened


async def test_a_turn_embeds_nothing_and_the_tool_finds_it_by_meaning(runtime: Runtime) -> None:
    await runtime.ask("cabin", "Remember: " + WIFI)
    assert (await vectors(runtime).vector_mark())[0] == 0  # nothing embedded in the turn
    await runtime.ask("later", QUESTION)
    transcript = await runtime.sessions.messages(runtime.session_key_for("later"))
    (result,) = [m for m in transcript if m.role == "tool"]
    assert result.content.startswith("1 match, best first:")
    assert "cabin" in result.content and "user (meaning): Remember: " + WIFI in result.content
    # The search indexed what was missing first: the first turn's question and answer,
    # and the question asked (the tool call itself has no text to search).
    assert (await vectors(runtime).vector_mark())[0] == 3


async def test_hostile_queries_are_answered_not_raised(runtime: Runtime) -> None:
    await runtime.ask("cabin", "Remember: " + WIFI)
    recall = runtime.session_recall()
    for query in HOSTILE_QUERIES:
        assert isinstance(await recall.search(query, 5), list), query


async def test_the_background_indexer_fills_in_the_vectors(runtime: Runtime) -> None:
    await runtime.ask("cabin", "Remember: " + WIFI)
    recall = runtime.session_recall()
    task = start_indexing(recall, None)
    try:
        await asyncio.sleep(0)  # a yield, no wait: the background pass takes the lock first
        assert await recall.index_pending() == 0  # waits for that pass: nothing left
        assert (await vectors(runtime).vector_mark())[0] == 2
    finally:
        task.cancel()


async def test_the_web_backend_indexes_in_the_background(tmp_path: Path) -> None:
    runtime = build(tmp_path, ScriptedModel([text_step("Noted.")]))
    await runtime.open()
    await runtime.sessions.create("earlier")
    await runtime.sessions.append("earlier", [Message("user", WIFI)])
    backend = WebBackend(runtime)
    await backend.start()
    try:
        await asyncio.sleep(0)  # a yield: the backend's indexer starts its pass
        assert await runtime.session_recall().index_pending() == 0
        assert (await vectors(runtime).vector_mark())[0] == 1
    finally:
        await backend.aclose()


async def test_the_chat_indexes_while_the_person_types(runtime: Runtime) -> None:
    await runtime.ask("cabin", "Remember: " + WIFI)
    indexer = IdleIndexer()
    indexer.poke(runtime)
    indexer.poke(runtime)  # one pass at a time
    await asyncio.sleep(0)  # a yield: the pass starts
    assert await runtime.session_recall().index_pending() == 0
    assert (await vectors(runtime).vector_mark())[0] == 2
    await indexer.aclose()
