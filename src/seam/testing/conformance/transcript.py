"""The `Transcript` conformance suite: one conversation's row and messages (create, get,
load, append, messages, touch, the working directory).

Fixtures: `clock` and `store`, a whole `SessionStore` (see the package docstring).
"""

from __future__ import annotations

import pytest

from seam.contracts.messages import Message, ToolCall
from seam.contracts.sessions import DuplicateTitle, NewSession, SessionNotFound, SessionStore
from seam.testing.clock import ManualClock
from seam.testing.conformance.support import assistant, refuses_unknown, rejects, session_with, user


class TranscriptSuite:
    async def test_create_records_what_it_was_given(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        info = await store.create(
            "child", NewSession(personality="coder", title="Fix CI", parent_key="root")
        )
        assert info.key == "child"
        assert info.personality == "coder"
        assert info.title == "Fix CI"
        assert info.parent_key == "root"
        assert info.created_at == info.updated_at == clock.now
        assert info.message_count == 0
        assert info.ended is False
        assert await store.get("child") == info

    async def test_create_defaults(self, store: SessionStore) -> None:
        info = await store.create("s")
        assert (info.title, info.personality, info.parent_key) == (None, None, None)

    async def test_the_working_directory_is_part_of_the_stored_spec(
        self, store: SessionStore
    ) -> None:
        created = await store.create("s", NewSession(tenant="t", tools=("read_file",), model="m"))
        assert created.working_dir is None
        await store.set_working_dir("s", "/projects/a")
        info = await store.get("s")
        assert info is not None
        assert (info.tenant, info.tools, info.model) == ("t", ("read_file",), "m")
        assert info.working_dir == "/projects/a"
        assert [i.working_dir for i in await store.list()] == ["/projects/a"]
        await store.set_working_dir("s", None)
        cleared = await store.get("s")
        assert cleared is not None and cleared.working_dir is None

    async def test_setting_the_working_directory_of_an_unknown_session_names_it(
        self, store: SessionStore
    ) -> None:
        with pytest.raises(SessionNotFound, match="nope"):
            await store.set_working_dir("nope", "/projects/a")

    async def test_get_unknown_is_none(self, store: SessionStore) -> None:
        assert await store.get("nope") is None

    async def test_create_existing_returns_it_unchanged(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        first = await store.create("s", NewSession(personality="a", title="One"))
        await store.append("s", [user("hi")])
        before = await store.get("s")
        clock.advance()
        again = await store.create("s", NewSession(personality="b", title="Two", parent_key="p"))
        assert again == before
        assert again.personality == "a"
        assert again.created_at == first.created_at
        assert await store.find_by_title("Two") is None

    async def test_create_existing_ignores_a_title_taken_elsewhere(
        self, store: SessionStore
    ) -> None:
        await store.create("a", NewSession(title="Taken"))
        b = await store.create("b")
        assert await store.create("b", NewSession(title="Taken")) == b

    async def test_create_with_a_taken_title_names_the_owner(self, store: SessionStore) -> None:
        await store.create("first", NewSession(title="Shared"))
        with pytest.raises(DuplicateTitle, match="first"):
            await store.create("second", NewSession(title="Shared"))
        assert await store.get("second") is None

    async def test_create_rejects_a_blank_title(self, store: SessionStore) -> None:
        with pytest.raises(ValueError, match="title"):
            await store.create("s", NewSession(title="  "))
        assert await store.get("s") is None

    async def test_every_message_field_round_trips(self, store: SessionStore) -> None:
        transcript = [
            Message("system", "You are terse."),
            user('Größe? 日本語 🙂 "quoted" \\ back\nslash\ttab \x00 nul'),
            Message(
                "assistant",
                "",
                tool_calls=(
                    ToolCall("call_1", "read_file", '{"path": "ñ.txt",  "n": 1}'),
                    ToolCall("call_2", "shell", '{"cmd": "ls"'),  # raw, even when invalid JSON
                    ToolCall("call_3", "noop", ""),
                ),
            ),
            Message("tool", "file body", tool_call_id="call_1", name="read_file"),
            Message("tool", "", tool_call_id="call_2", name="shell"),
            Message("assistant", "Partial answ", interrupted=True),
            Message("user", "", name="alice"),
        ]
        await session_with(store, "s", transcript)
        assert await store.messages("s") == transcript

    async def test_append_to_unknown_session_names_it(self, store: SessionStore) -> None:
        await refuses_unknown(store.append("ghost-key", [user("hi")]))
        await refuses_unknown(store.append("ghost-key", []))
        assert await store.get("ghost-key") is None

    async def test_append_keeps_order_across_calls(self, store: SessionStore) -> None:
        await session_with(store, "s", [user("1"), assistant("2")])
        await store.append("s", [user("3")])
        await store.append("s", [assistant("4"), user("5"), assistant("6")])
        assert [m.content for m in await store.messages("s")] == ["1", "2", "3", "4", "5", "6"]

    async def test_append_updates_count_and_time(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        created = await store.create("s")
        clock.advance(5)
        await store.append("s", [user("a"), assistant("b")])
        info = await store.get("s")
        assert info is not None
        assert info.message_count == 2
        assert info.updated_at == created.created_at + 5
        assert info.created_at == created.created_at

    async def test_appending_nothing_changes_nothing(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        created = await store.create("s")
        clock.advance()
        await store.append("s", [])
        assert await store.get("s") == created

    async def test_sessions_do_not_share_transcripts(self, store: SessionStore) -> None:
        await store.create("a")
        await store.create("b")
        await store.append("a", [user("for a")])
        await store.append("b", [user("for b")])
        assert await store.messages("a") == [user("for a")]
        assert await store.messages("b") == [user("for b")]

    @pytest.mark.parametrize(
        ("start", "limit"),
        [
            (0, None),
            (2, None),
            (5, None),
            (9, None),
            (-2, None),
            (-5, None),
            (-100, None),
            (1, 2),
            (4, 10),
            (-3, 2),
            (-100, 2),
            (0, 0),
            (9, 1),
        ],
    )
    async def test_messages_slice_like_python(
        self, store: SessionStore, start: int, limit: int | None
    ) -> None:
        transcript = [user(str(i)) for i in range(5)]
        await session_with(store, "s", transcript)
        expected = transcript[start:] if limit is None else transcript[start:][:limit]
        assert await store.messages("s", start, limit) == expected

    async def test_messages_of_an_empty_session(self, store: SessionStore) -> None:
        await store.create("s")
        assert await store.messages("s") == []
        assert await store.messages("s", -1) == []

    async def test_messages_of_unknown_session_names_it(self, store: SessionStore) -> None:
        await refuses_unknown(store.messages("ghost-key"))
        await refuses_unknown(store.messages("ghost-key", -3, 2))

    async def test_messages_rejects_a_negative_limit(self, store: SessionStore) -> None:
        await store.create("s")
        await rejects(store.messages("s", 0, -1), "limit")

    async def test_load_gives_the_row_and_the_transcript(self, store: SessionStore) -> None:
        await store.create("s", NewSession(title="T"))
        transcript = [Message("system", "sys"), user("hi"), assistant("hello")]
        await store.append("s", transcript)
        loaded = await store.load("s")
        assert loaded is not None
        assert loaded.info == await store.get("s")
        assert loaded.messages == tuple(transcript)
        assert loaded.info.message_count == len(loaded.messages)

    async def test_load_of_a_session_with_no_message_yet(self, store: SessionStore) -> None:
        await store.create("s")
        loaded = await store.load("s")
        assert loaded is not None
        assert loaded.info == await store.get("s") and loaded.messages == ()

    async def test_load_unknown_is_none(self, store: SessionStore) -> None:
        assert await store.load("nope") is None

    async def test_touch_is_activity_without_a_message(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        await store.create("a")
        clock.advance()
        await store.create("b")
        clock.advance(7)
        await store.touch("a")
        info = await store.get("a")
        assert info is not None
        assert info.updated_at == clock.now
        assert info.message_count == 0
        assert [s.key for s in await store.list()] == ["a", "b"]

    async def test_touch_unknown_names_it(self, store: SessionStore) -> None:
        await refuses_unknown(store.touch("ghost-key"))
