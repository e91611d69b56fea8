"""Every store backend keeps compaction records (`CompactionLogSuite`: per session, oldest
first, gone with their session); SQLite keeps them across a reopen."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from seam.core import InMemorySessionStore
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.testing.clock import ManualClock
from seam.testing.conformance.compaction_log import FIRST, CompactionLogSuite

from .backends import open_backend


@pytest.fixture
async def store(
    backend: str, request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[Any]:
    opened = await open_backend(backend, request, clock, tmp_path, InMemorySessionStore)
    yield opened
    await opened.aclose()


class TestCompactionLog(CompactionLogSuite):
    pass


async def test_sqlite_keeps_records_across_a_reopen(tmp_path: Path) -> None:
    path = str(tmp_path / "sessions.db")
    store = SQLiteSessionStore(path)
    await store.create("a")
    await store.record_compaction("a", FIRST)
    await store.aclose()
    again = SQLiteSessionStore(path)
    assert await again.compactions("a") == [FIRST]
    await again.aclose()


async def test_a_compacted_sqlite_session_resumes_from_its_summary(tmp_path: Path) -> None:
    from seam.contracts import ModelRequest
    from seam.core import AgentLoop, ScriptedModel, Step, text_step
    from seam.core.compression import SUMMARY_PROMPT

    def step(request: ModelRequest) -> Step:
        if request.system == SUMMARY_PROMPT:
            return text_step("## Goals\n- talk\n## Facts\n- the codeword is PLUM")
        return text_step("answer " + "z" * 200)

    path = str(tmp_path / "sessions.db")
    store = SQLiteSessionStore(path)
    loop = AgentLoop(model=ScriptedModel([step] * 100, max_context_tokens=4_000), sessions=store)
    for n in range(40):
        [e async for e in loop.run("s1", f"question {n} " + "y" * 200)]
    records = await store.compactions("s1")
    assert records and all(r.summarised for r in records)
    await store.aclose()

    reopened = SQLiteSessionStore(path)
    model = ScriptedModel([step], max_context_tokens=4_000)
    events = [e async for e in AgentLoop(model=model, sessions=reopened).run("s1", "still there?")]
    assert events[-1].text.startswith("answer ")
    sent = model.requests[0].messages
    assert [m.content[:10] for m in sent[:3]] == ["question 0", "answer zzz", "question 1"]
    assert "the codeword is PLUM" in sent[3].content
    transcript = await reopened.messages("s1")
    tail = [
        m for i, m in enumerate(transcript) if i >= records[-1].tail_start and m.role != "system"
    ]
    assert list(sent[4:]) == tail[:-1] and len(sent) < len(transcript) - 20
    await reopened.aclose()
