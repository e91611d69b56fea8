"""The `SessionUpkeep` conformance suite: ending (and ending idle) sessions, undo, export,
prune, delete.

Fixtures: `clock` and `store`, a whole `SessionStore` (see the package docstring).
"""

from __future__ import annotations

import json

import pytest

from seam.contracts.messages import Message, ToolCall, Usage
from seam.contracts.sessions import NewSession, SessionNotFound, SessionStore, UsageRecord
from seam.testing.clock import ManualClock
from seam.testing.conformance.support import assistant, refuses_unknown, rejects, session_with, user

# What `export` gives for the transcript and usage `test_export_is_json_ready_and_complete`
# stores, on every backend.
EXPORTED_MESSAGES = [
    {
        "role": "user",
        "content": "Größe? 🙂",
        "tool_calls": [],
        "tool_call_id": None,
        "name": None,
        "interrupted": False,
    },
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "name": "read_file", "arguments": '{"path":"a"}'}],
        "tool_call_id": None,
        "name": None,
        "interrupted": False,
    },
    {
        "role": "tool",
        "content": "body",
        "tool_calls": [],
        "tool_call_id": "c1",
        "name": "read_file",
        "interrupted": False,
    },
    {
        "role": "assistant",
        "content": "cut",
        "tool_calls": [],
        "tool_call_id": None,
        "name": None,
        "interrupted": True,
    },
]
EXPORTED_USAGE = {
    "calls": 1,
    "input_tokens": 10,
    "output_tokens": 2,
    "cache_read_tokens": 1,
    "cache_write_tokens": 0,
    "reasoning_tokens": 0,
    "cost_usd": 0.125,
    "unpriced_calls": 0,
}


class SessionUpkeepSuite:
    async def test_delete_removes_session_messages_and_hits(self, store: SessionStore) -> None:
        await store.create("gone", NewSession(title="Gone"))
        await store.create("kept")
        await store.append("gone", [user("shared word")])
        await store.append("kept", [user("shared word")])
        assert await store.delete("gone") is True
        assert await store.get("gone") is None
        assert await store.find_by_title("Gone") is None
        with pytest.raises(SessionNotFound):
            await store.messages("gone")
        assert [h.session_key for h in await store.search("shared")] == ["kept"]
        assert [s.key for s in await store.list()] == ["kept"]

    async def test_delete_unknown_is_false(self, store: SessionStore) -> None:
        assert await store.delete("nope") is False

    async def test_a_deleted_key_starts_afresh(self, store: SessionStore) -> None:
        await store.create("s", NewSession(title="T"))
        await store.append("s", [user("old")])
        await store.delete("s")
        info = await store.create("s", NewSession(title="T"))
        assert info.message_count == 0
        assert await store.messages("s") == []
        assert await store.search("old") == []

    async def test_end_marks_the_session_once(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        created = await store.create("s")
        assert (created.ended, created.ended_at) == (False, None)
        clock.advance(3)
        await store.end("s")
        ended = await store.get("s")
        assert ended is not None
        assert ended.ended is True
        assert ended.ended_at == created.created_at + 3
        assert ended.updated_at == created.updated_at  # ending is not activity
        clock.advance(3)
        await store.end("s")
        assert await store.get("s") == ended  # the first end is kept

    async def test_an_ended_session_still_takes_messages(self, store: SessionStore) -> None:
        await store.create("s")
        await store.end("s")
        await store.append("s", [user("one more thing")])
        info = await store.get("s")
        assert info is not None
        assert info.ended is True
        assert info.message_count == 1

    async def test_end_unknown_names_it(self, store: SessionStore) -> None:
        await refuses_unknown(store.end("ghost-key"))

    async def test_export_is_json_ready_and_complete(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        await store.create("s", NewSession(title="Café", personality="p", parent_key="root"))
        transcript = [
            user("Größe? 🙂"),
            Message("assistant", "", tool_calls=(ToolCall("c1", "read_file", '{"path":"a"}'),)),
            Message("tool", "body", tool_call_id="c1", name="read_file"),
            Message("assistant", "cut", interrupted=True),
        ]
        await store.append("s", transcript)
        await store.record_usage("s", UsageRecord("p", "m", Usage(10, 2, 1, 0, 0), 0.125))
        await store.end("s")
        exported = await store.export("s")
        assert json.loads(json.dumps(exported)) == exported
        info = await store.get("s")
        assert info is not None
        assert exported["key"] == "s"
        assert exported["title"] == "Café"
        assert exported["personality"] == "p"
        assert exported["parent_key"] == "root"
        assert exported["created_at"] == info.created_at
        assert exported["updated_at"] == info.updated_at
        assert exported["ended"] is True
        assert exported["ended_at"] == clock.now
        assert exported["message_count"] == 4
        assert exported["messages"] == EXPORTED_MESSAGES
        assert exported["usage"] == EXPORTED_USAGE

    async def test_export_unknown_names_it(self, store: SessionStore) -> None:
        await refuses_unknown(store.export("ghost-key"))

    async def test_export_all_is_oldest_first(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        assert await store.export_all() == []
        for key in ("b", "c", "a"):
            await session_with(store, key, [user(f"in {key}")])
            clock.advance()
        await store.touch("b")
        everything = await store.export_all()
        assert [s["key"] for s in everything] == ["b", "c", "a"]
        assert everything == [await store.export(k) for k in ("b", "c", "a")]

    async def test_prune_deletes_only_old_ended_sessions(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        day = 86_400.0
        for key in ("old-ended", "old-open", "resumed"):
            await store.create(key, NewSession(title=key))
            await store.append(key, [user(f"needle in {key}")])
            await store.record_usage(key, UsageRecord("p", "m", Usage(1, 1)))
        await store.end("old-ended")
        await store.end("resumed")
        clock.advance(50 * day)
        await store.touch("resumed")  # used again after it ended
        clock.advance(50 * day)
        await store.create("new-ended")
        await store.end("new-ended")

        assert await store.prune(90) == 1
        assert await store.get("old-ended") is None
        assert await store.find_by_title("old-ended") is None
        assert {s.key for s in await store.list()} == {"old-open", "resumed", "new-ended"}
        assert {h.session_key for h in await store.search("needle")} == {"old-open", "resumed"}
        assert await store.prune(90) == 0

        clock.advance(day)
        assert await store.prune(0.5) == 2  # "resumed" and "new-ended"; never "old-open"
        assert [s.key for s in await store.list()] == ["old-open"]

    async def test_prune_goes_by_whole_days(self, store: SessionStore, clock: ManualClock) -> None:
        await store.create("s")
        await store.end("s")
        clock.advance(2 * 86_400 - 1)
        assert await store.prune(2) == 0
        clock.advance(2)
        assert await store.prune(2) == 1

    async def test_prune_rejects_a_negative_age(self, store: SessionStore) -> None:
        await rejects(store.prune(-1), "older_than_days")
        await rejects(store.prune(float("nan")), "older_than_days")

    async def test_end_idle_ends_sessions_as_of_when_they_went_idle(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        hour = 3_600.0
        start = clock.now
        for key in ("idle", "already-ended", "busy"):
            await store.create(key)
        await store.end("already-ended")
        clock.advance(2 * hour)
        await store.touch("busy")
        clock.advance(hour)

        assert await store.end_idle(2.5 * hour) == 1  # "idle" only; "busy" moved 1 h ago
        idle = await store.get("idle")
        assert idle is not None and idle.ended
        assert idle.ended_at == start + 2.5 * hour
        assert idle.updated_at == start  # ending is not activity
        ended = await store.get("already-ended")
        assert ended is not None and ended.ended_at == start  # the first end is kept
        busy = await store.get("busy")
        assert busy is not None and not busy.ended
        assert await store.end_idle(2.5 * hour) == 0
        # Prune ages it from when it went idle, half an hour ago (not from now).
        assert await store.prune(1 / 24) == 1  # "already-ended" (3 h ago)
        assert await store.prune(0.25 / 24) == 1  # "idle"
        assert [s.key for s in await store.list()] == ["busy"]

    async def test_end_idle_rejects_a_negative_time(self, store: SessionStore) -> None:
        await rejects(store.end_idle(-1), "idle_seconds")

    async def test_undo_removes_the_last_turn(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        first_turn = [
            user("first question"),
            Message("assistant", "", tool_calls=(ToolCall("c1", "grep", "{}"),)),
            Message("tool", "grep output", tool_call_id="c1", name="grep"),
            assistant("first answer"),
        ]
        second_turn = [user("second question"), assistant("second answer")]
        await session_with(store, "s", [Message("system", "sys"), *first_turn, *second_turn])
        clock.advance()
        assert await store.undo("s") == 2
        assert await store.messages("s") == [Message("system", "sys"), *first_turn]
        info = await store.get("s")
        assert info is not None
        assert info.message_count == 5
        assert info.updated_at == clock.now
        assert await store.search("second") == []
        assert [h.message_index for h in await store.search("first")] == [4, 1]
        # The transcript goes on where it now ends.
        await store.append("s", [user("again")])
        assert [m.content for m in await store.messages("s", -2)] == ["first answer", "again"]
        assert [h.message_index for h in await store.search("again")] == [5]

    async def test_undo_several_turns_and_more_than_there_are(self, store: SessionStore) -> None:
        await session_with(
            store,
            "s",
            [
                Message("system", "sys"),
                user("q1"),
                assistant("a1"),
                user("q2"),
                assistant("a2"),
                user("q3"),
                assistant("a3"),
            ],
        )
        assert await store.undo("s", 2) == 4
        assert [m.content for m in await store.messages("s")] == ["sys", "q1", "a1"]
        assert await store.undo("s", 10) == 2
        assert await store.messages("s") == [Message("system", "sys")]
        assert await store.undo("s") == 0

    async def test_undo_of_nothing(self, store: SessionStore, clock: ManualClock) -> None:
        created = await store.create("s")
        clock.advance()
        assert await store.undo("s") == 0
        assert await store.get("s") == created  # nothing removed: not activity either
        await store.append("s", [Message("system", "sys"), user("q"), assistant("a")])
        assert await store.undo("s", 0) == 0
        assert len(await store.messages("s")) == 3
        await rejects(store.undo("s", -1), "turns")
        await refuses_unknown(store.undo("ghost-key"))
