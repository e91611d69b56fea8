"""The `SessionStore` contract, written once and run against every backend.

A backend's test module subclasses `SessionStoreSuite` and provides two fixtures:
`clock` (a `ManualClock`) and `store` (a fresh, empty store built with that clock).
"""

from __future__ import annotations

import json

import pytest

from seam.contracts.messages import Message, ToolCall, Usage
from seam.contracts.sessions import (
    DuplicateTitle,
    SessionNotFound,
    SessionStore,
    UsageRecord,
    UsageTotals,
)

# Texts that would be FTS5 syntax errors (or silently mean something else) if passed
# straight to MATCH.
HOSTILE_QUERIES = [
    "",
    "   ",
    '"',
    '"hello',
    'hello"',
    '""',
    "*",
    "hello*",
    "-",
    "-hello",
    "hello -world",
    "AND",
    "OR",
    "NOT",
    "NEAR",
    "hello AND",
    "OR hello",
    "hello NOT world",
    "NEAR(hello world)",
    "NEAR(hello world, 2)",
    "(",
    ")",
    "(hello",
    "hello)",
    "content:hello",
    ":",
    "col:",
    "^hello",
    "+",
    "{content}: hello",
    "hello'; DROP TABLE messages; --",
    "\x00",
    "\\",
    "%_",
    "🙂",
]


class ManualClock:
    """A clock tests move by hand, so timestamps and recency order are exact."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float = 1.0) -> None:
        self.now += seconds


def user(text: str) -> Message:
    return Message("user", text)


def assistant(text: str) -> Message:
    return Message("assistant", text)


class SessionStoreSuite:
    # --- create / get -------------------------------------------------------------

    async def test_is_a_session_store(self, store: SessionStore) -> None:
        assert isinstance(store, SessionStore)

    async def test_create_records_what_it_was_given(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        info = await store.create("child", personality="coder", title="Fix CI", parent_key="root")
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
        created = await store.create("s", tenant="t", tools=("read_file",), model="m")
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
        first = await store.create("s", personality="a", title="One")
        await store.append("s", [user("hi")])
        before = await store.get("s")
        clock.advance()
        again = await store.create("s", personality="b", title="Two", parent_key="p")
        assert again == before
        assert again.personality == "a"
        assert again.created_at == first.created_at
        assert await store.find_by_title("Two") is None

    async def test_create_existing_ignores_a_title_taken_elsewhere(
        self, store: SessionStore
    ) -> None:
        await store.create("a", title="Taken")
        b = await store.create("b")
        assert await store.create("b", title="Taken") == b

    async def test_create_with_a_taken_title_names_the_owner(self, store: SessionStore) -> None:
        await store.create("first", title="Shared")
        with pytest.raises(DuplicateTitle, match="first"):
            await store.create("second", title="Shared")
        assert await store.get("second") is None

    async def test_create_rejects_a_blank_title(self, store: SessionStore) -> None:
        with pytest.raises(ValueError, match="title"):
            await store.create("s", title="  ")
        assert await store.get("s") is None

    # --- append / messages ----------------------------------------------------------

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
        await store.create("s")
        await store.append("s", transcript)
        assert await store.messages("s") == transcript

    async def test_append_to_unknown_session_names_it(self, store: SessionStore) -> None:
        with pytest.raises(SessionNotFound, match="ghost-key"):
            await store.append("ghost-key", [user("hi")])
        with pytest.raises(SessionNotFound, match="ghost-key"):
            await store.append("ghost-key", [])
        assert await store.get("ghost-key") is None

    async def test_append_keeps_order_across_calls(self, store: SessionStore) -> None:
        await store.create("s")
        await store.append("s", [user("1"), assistant("2")])
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
        await store.create("s")
        await store.append("s", transcript)
        expected = transcript[start:] if limit is None else transcript[start:][:limit]
        assert await store.messages("s", start, limit) == expected

    async def test_messages_of_an_empty_session(self, store: SessionStore) -> None:
        await store.create("s")
        assert await store.messages("s") == []
        assert await store.messages("s", -1) == []

    async def test_messages_of_unknown_session_names_it(self, store: SessionStore) -> None:
        with pytest.raises(SessionNotFound, match="ghost-key"):
            await store.messages("ghost-key")
        with pytest.raises(SessionNotFound, match="ghost-key"):
            await store.messages("ghost-key", -3, 2)

    async def test_messages_rejects_a_negative_limit(self, store: SessionStore) -> None:
        await store.create("s")
        with pytest.raises(ValueError, match="limit"):
            await store.messages("s", 0, -1)

    # --- titles ---------------------------------------------------------------------

    async def test_set_title_and_find_by_title(self, store: SessionStore) -> None:
        await store.create("s")
        await store.set_title("s", "Trip to Lisbon")
        found = await store.find_by_title("Trip to Lisbon")
        assert found is not None
        assert found.key == "s"
        assert found.title == "Trip to Lisbon"
        assert await store.find_by_title("trip to lisbon") is None
        assert await store.find_by_title("Nothing") is None

    async def test_retitling_frees_the_old_title(self, store: SessionStore) -> None:
        await store.create("a", title="Old")
        await store.set_title("a", "New")
        assert await store.find_by_title("Old") is None
        await store.create("b", title="Old")
        found = await store.find_by_title("Old")
        assert found is not None
        assert found.key == "b"

    async def test_setting_a_session_its_own_title_again_is_fine(self, store: SessionStore) -> None:
        await store.create("a", title="Same")
        await store.set_title("a", "Same")
        info = await store.get("a")
        assert info is not None
        assert info.title == "Same"

    async def test_duplicate_title_names_the_other_session(self, store: SessionStore) -> None:
        await store.create("owner-key", title="Taken")
        await store.create("b", title="Mine")
        with pytest.raises(DuplicateTitle, match="owner-key"):
            await store.set_title("b", "Taken")
        b = await store.get("b")
        assert b is not None
        assert b.title == "Mine"
        owner = await store.find_by_title("Taken")
        assert owner is not None
        assert owner.key == "owner-key"

    async def test_set_title_on_unknown_session_names_it(self, store: SessionStore) -> None:
        with pytest.raises(SessionNotFound, match="ghost-key"):
            await store.set_title("ghost-key", "T")

    async def test_set_title_rejects_a_blank_title(self, store: SessionStore) -> None:
        await store.create("s", title="Kept")
        with pytest.raises(ValueError, match="title"):
            await store.set_title("s", "")
        assert await store.find_by_title("Kept") is not None

    async def test_retitling_is_not_activity(self, store: SessionStore, clock: ManualClock) -> None:
        created = await store.create("s")
        clock.advance()
        await store.set_title("s", "T")
        info = await store.get("s")
        assert info is not None
        assert info.updated_at == created.updated_at

    # --- list -----------------------------------------------------------------------

    async def test_list_is_most_recently_updated_first(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        for key in ("a", "b", "c"):
            await store.create(key)
            clock.advance()
        assert [s.key for s in await store.list()] == ["c", "b", "a"]
        await store.append("a", [user("bump")])
        assert [s.key for s in await store.list()] == ["a", "c", "b"]
        assert [s.key for s in await store.list(limit=2)] == ["a", "c"]
        assert await store.list(limit=0) == []

    async def test_list_breaks_ties_by_key(self, store: SessionStore) -> None:
        for key in ("m", "z", "a"):
            await store.create(key)
        assert [s.key for s in await store.list()] == ["a", "m", "z"]

    async def test_list_returns_full_infos(self, store: SessionStore) -> None:
        await store.create("s", title="T", personality="p", parent_key="root")
        await store.append("s", [user("x")])
        assert await store.list() == [await store.get("s")]

    async def test_list_of_an_empty_store(self, store: SessionStore) -> None:
        assert await store.list() == []

    async def test_list_rejects_a_negative_limit(self, store: SessionStore) -> None:
        with pytest.raises(ValueError, match="limit"):
            await store.list(-1)

    # --- search ---------------------------------------------------------------------

    async def test_search_finds_the_message(self, store: SessionStore) -> None:
        await store.create("s")
        await store.append("s", [user("What is the capital of Portugal?"), assistant("Lisbon.")])
        hits = await store.search("lisbon")
        assert [(h.session_key, h.message_index, h.role, h.snippet) for h in hits] == [
            ("s", 1, "assistant", "Lisbon.")
        ]

    async def test_search_ignores_case_accents_and_punctuation(self, store: SessionStore) -> None:
        await store.create("s")
        await store.append("s", [user("Meet me at the CAFÉ, near Zürich!")])
        for query in ("cafe", "Café", "ZURICH", "zürich!", "(near)"):
            assert [h.message_index for h in await store.search(query)] == [0], query

    async def test_search_requires_every_word_in_one_message(self, store: SessionStore) -> None:
        await store.create("s")
        await store.append(
            "s", [user("red apples"), user("green apples"), user("red and green apples")]
        )
        assert [h.message_index for h in await store.search("apples red")] == [2, 0]
        assert [h.message_index for h in await store.search("green red")] == [2]
        assert await store.search("red blue") == []

    async def test_search_matches_whole_words(self, store: SessionStore) -> None:
        await store.create("s")
        await store.append("s", [user("deployment finished; snake_case too")])
        assert await store.search("deplo") == []  # a prefix is not a word
        assert await store.search("finish deployment snak") == []
        assert [h.message_index for h in await store.search("deployment")] == [0]
        assert [h.message_index for h in await store.search("snake")] == [0]

    async def test_search_matches_word_stems(self, store: SessionStore) -> None:
        await store.create("s")
        await store.append(
            "s",
            [
                user("I bought two bananas and some apples"),
                assistant("Running the connection tests happily"),
                user("a generalization of relational ponies"),
            ],
        )

        def found(query: str) -> list[int]:
            return [h.message_index for h in hits[query]]

        hits = {
            q: await store.search(q)
            for q in (
                "banana",
                "BANANAS apple",
                "run connected test",
                "connections",
                "pony",
                "general",
            )
        }
        assert found("banana") == [0]
        assert found("BANANAS apple") == [0]
        assert found("run connected test") == [1]
        assert found("connections") == [1]
        assert found("pony") == [2]
        assert found("general") == [2]
        assert await store.search("bandana") == []

    async def test_the_snippet_is_around_the_stemmed_match(self, store: SessionStore) -> None:
        await store.create("s")
        await store.append("s", [user("word " * 100 + "bananas at the end")])
        (hit,) = await store.search("banana")
        assert hit.snippet.startswith("…") and hit.snippet.endswith("bananas at the end")

    async def test_search_covers_user_and_assistant_only(self, store: SessionStore) -> None:
        await store.create("s")
        await store.append(
            "s",
            [
                Message("system", "needle in the system prompt"),
                user("needle from the user"),
                Message("assistant", "", tool_calls=(ToolCall("c1", "grep", '{"q":"needle"}'),)),
                Message("tool", "needle in tool output", tool_call_id="c1", name="grep"),
                assistant("needle in the answer"),
            ],
        )
        hits = await store.search("needle")
        assert [(h.message_index, h.role) for h in hits] == [(4, "assistant"), (1, "user")]

    async def test_search_returns_newest_first_across_sessions(self, store: SessionStore) -> None:
        await store.create("a")
        await store.create("b")
        await store.append("a", [user("topic one")])
        await store.append("b", [user("topic two")])
        await store.append("a", [user("topic three")])
        hits = await store.search("topic")
        assert [(h.session_key, h.message_index) for h in hits] == [("a", 1), ("b", 0), ("a", 0)]
        assert [(h.session_key, h.message_index) for h in await store.search("topic", 2)] == [
            ("a", 1),
            ("b", 0),
        ]
        assert await store.search("topic", 0) == []

    async def test_search_snippet_is_short_and_shows_the_match(self, store: SessionStore) -> None:
        before = " ".join(f"filler{i}" for i in range(200))
        after = " ".join(f"padding{i}" for i in range(200))
        await store.create("s")
        await store.append("s", [user(f"{before} the Kraken appears {after}")])
        (hit,) = await store.search("kraken")
        assert len(hit.snippet) <= 160
        assert "the Kraken appears" in hit.snippet
        assert hit.snippet.startswith("…")
        assert hit.snippet.endswith("…")

    async def test_search_snippet_near_the_end_keeps_the_end(self, store: SessionStore) -> None:
        await store.create("s")
        await store.append("s", [user("word " * 100 + "finale")])
        (hit,) = await store.search("finale")
        assert len(hit.snippet) <= 160
        assert hit.snippet.startswith("…")
        assert hit.snippet.endswith("word finale")

    async def test_search_snippet_is_one_line(self, store: SessionStore) -> None:
        await store.create("s")
        await store.append("s", [user("first line\n\n  second\tline")])
        (hit,) = await store.search("second")
        assert hit.snippet == "first line second line"

    @pytest.mark.parametrize("query", HOSTILE_QUERIES)
    async def test_any_text_is_a_valid_query(self, store: SessionStore, query: str) -> None:
        await store.create("s")
        await store.append("s", [user('hello world: "NEAR" AND (not) content*')])
        hits = await store.search(query)
        assert all(h.session_key == "s" for h in hits)

    async def test_query_operators_are_plain_words(self, store: SessionStore) -> None:
        await store.create("s")
        await store.append("s", [user("hello world"), user("this is not and or near")])
        assert [h.message_index for h in await store.search("hello NOT world")] == []
        assert [h.message_index for h in await store.search("hello -world")] == [0]
        assert [h.message_index for h in await store.search('"hello')] == [0]
        assert [h.message_index for h in await store.search("hello*")] == [0]
        assert [h.message_index for h in await store.search("NOT AND OR NEAR")] == [1]
        assert [h.message_index for h in await store.search("(hello) world:")] == [0]

    async def test_empty_and_punctuation_queries_find_nothing(self, store: SessionStore) -> None:
        await store.create("s")
        await store.append("s", [user("anything at all")])
        for query in ("", "   ", "*", '""', "-", "()"):
            assert await store.search(query) == [], query

    async def test_search_rejects_a_negative_limit(self, store: SessionStore) -> None:
        with pytest.raises(ValueError, match="limit"):
            await store.search("x", -1)

    # --- usage ----------------------------------------------------------------------

    async def test_usage_starts_empty(self, store: SessionStore) -> None:
        await store.create("s")
        assert await store.usage_totals("s") == UsageTotals()

    async def test_usage_is_summed_per_session(self, store: SessionStore) -> None:
        await store.create("s")
        await store.create("other")
        await store.record_usage("s", UsageRecord("openai", "m", Usage(100, 20, 50, 5, 3), 0.25))
        await store.record_usage("s", UsageRecord("openai", "m", Usage(10, 2), None, "t2"))
        await store.record_usage("other", UsageRecord("local", "x", Usage(1, 1), 0.0))
        totals = await store.usage_totals("s")
        assert totals.calls == 2
        assert totals.usage == Usage(110, 22, 50, 5, 3)
        assert totals.cost_usd == pytest.approx(0.25)
        assert totals.unpriced_calls == 1

    async def test_usage_of_unknown_session_raises(self, store: SessionStore) -> None:
        with pytest.raises(SessionNotFound):
            await store.record_usage("nope", UsageRecord("p", "m", Usage(1, 1)))
        with pytest.raises(SessionNotFound):
            await store.usage_totals("nope")

    async def test_delete_forgets_usage(self, store: SessionStore) -> None:
        await store.create("s")
        await store.record_usage("s", UsageRecord("p", "m", Usage(1, 1), 1.0))
        await store.delete("s")
        await store.create("s")
        assert await store.usage_totals("s") == UsageTotals()

    # --- delete ---------------------------------------------------------------------

    async def test_delete_removes_session_messages_and_hits(self, store: SessionStore) -> None:
        await store.create("gone", title="Gone")
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
        await store.create("s", title="T")
        await store.append("s", [user("old")])
        await store.delete("s")
        info = await store.create("s", title="T")
        assert info.message_count == 0
        assert await store.messages("s") == []
        assert await store.search("old") == []

    # --- load / touch / end -----------------------------------------------------------

    async def test_load_gives_the_row_and_the_transcript(self, store: SessionStore) -> None:
        await store.create("s", title="T")
        transcript = [Message("system", "sys"), user("hi"), assistant("hello")]
        await store.append("s", transcript)
        loaded = await store.load("s")
        assert loaded is not None
        assert loaded.info == await store.get("s")
        assert loaded.messages == tuple(transcript)
        assert loaded.info.message_count == len(loaded.messages)

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
        with pytest.raises(SessionNotFound, match="ghost-key"):
            await store.touch("ghost-key")

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
        with pytest.raises(SessionNotFound, match="ghost-key"):
            await store.end("ghost-key")

    # --- lineage titles -----------------------------------------------------------------

    async def test_next_title_numbers_a_lineage(self, store: SessionStore) -> None:
        assert await store.next_title("Trip") == "Trip"
        await store.create("1", title="Trip")
        assert await store.next_title("Trip") == "Trip #2"
        await store.create("2", title=await store.next_title("Trip"))
        assert await store.next_title("Trip") == "Trip #3"
        # Continuing a numbered session continues the numbering.
        assert await store.next_title("Trip #2") == "Trip #3"

    async def test_next_title_goes_past_the_highest_number(self, store: SessionStore) -> None:
        await store.create("a", title="Trip #5")
        assert await store.next_title("Trip") == "Trip #6"
        await store.create("b", title="Trip")
        await store.delete("a")
        assert await store.next_title("Trip") == "Trip #2"

    async def test_next_title_ignores_titles_that_only_look_alike(
        self, store: SessionStore
    ) -> None:
        for key, title in enumerate(
            ["Trip #2 draft", "Trips", "trip", "Trip#2", "Trip #0", "Trip "]
        ):
            await store.create(str(key), title=title)
        assert await store.next_title("Trip") == "Trip"

    async def test_next_title_is_always_free(self, store: SessionStore) -> None:
        for n, title in enumerate(["A", "A #2", "A #3", "B #2", "C #1"]):
            await store.create(str(n), title=title)
        for base in ("A", "A #3", "B", "C", "D"):
            proposed = await store.next_title(base)
            assert await store.find_by_title(proposed) is None, base
        assert await store.next_title("C") == "C #2"

    async def test_next_title_rejects_a_blank_title(self, store: SessionStore) -> None:
        with pytest.raises(ValueError, match="title"):
            await store.next_title(" ")

    # --- rich and recent lists ------------------------------------------------------------

    async def test_list_rich_counts_tokens_and_previews(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        await store.create("quiet", title="Quiet")
        clock.advance()
        await store.create("busy", personality="coder")
        long_question = "Please   look at\nthe build " + "log " * 40
        await store.append(
            "busy",
            [
                Message("system", "sys"),
                user(long_question),
                Message("assistant", "", tool_calls=(ToolCall("c1", "shell", "{}"),)),
                Message("tool", "ok", tool_call_id="c1", name="shell"),
                assistant("Fixed."),
                user("thanks"),
            ],
        )
        await store.record_usage("busy", UsageRecord("p", "m", Usage(100, 10), 0.5))
        await store.record_usage("busy", UsageRecord("p", "m", Usage(50, 5)))
        busy, quiet = await store.list_rich()
        assert busy.info == await store.get("busy")
        assert (busy.user_messages, busy.assistant_messages, busy.tool_messages) == (2, 2, 1)
        assert busy.usage.calls == 2
        assert busy.usage.usage == Usage(150, 15)
        assert busy.usage.cost_usd == pytest.approx(0.5)
        assert busy.last_activity == busy.info.updated_at == clock.now
        assert busy.preview.startswith("Please look at the build log log")
        assert len(busy.preview) == 80 and busy.preview.endswith("…")
        assert quiet.info.title == "Quiet"
        assert (quiet.user_messages, quiet.assistant_messages, quiet.tool_messages) == (0, 0, 0)
        assert quiet.usage == UsageTotals()
        assert quiet.preview == ""

    async def test_list_rich_keeps_the_order_and_limit_of_list(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        for key in ("a", "b", "c", "d"):
            await store.create(key)
            await store.append(key, [user(f"question {key}")])
            clock.advance()
        await store.touch("b")
        assert [s.info for s in await store.list_rich(3)] == await store.list(3)
        assert [s.preview for s in await store.list_rich(2)] == ["question b", "question d"]
        assert await store.list_rich(0) == []
        with pytest.raises(ValueError, match="limit"):
            await store.list_rich(-1)

    async def test_list_recently_active(self, store: SessionStore, clock: ManualClock) -> None:
        start = clock.now
        for key in ("old", "mid", "new"):
            await store.create(key)
            clock.advance(10)
        # created at start, start + 10, start + 20
        assert [s.key for s in await store.list_recently_active(start + 10)] == ["new", "mid"]
        assert [s.key for s in await store.list_recently_active(start + 11)] == ["new"]
        assert await store.list_recently_active(clock.now) == []
        await store.append("old", [user("back again")])
        assert [s.key for s in await store.list_recently_active(clock.now)] == ["old"]
        assert [s.key for s in await store.list_recently_active(start, limit=2)] == ["old", "new"]
        with pytest.raises(ValueError, match="limit"):
            await store.list_recently_active(start, -1)

    # --- messages by id, lineage roots ------------------------------------------------

    async def test_a_hit_leads_back_to_its_session(self, store: SessionStore) -> None:
        await store.create("a", title="A")
        await store.create("b")
        await store.append("a", [user("shared words"), assistant("shared words too")])
        await store.append("b", [user("shared words here")])
        hits = await store.search("shared words")
        assert len({h.message_id for h in hits}) == 3
        for hit in hits:
            found = await store.session_for_message(hit.message_id)
            assert found is not None
            assert found == await store.get(hit.session_key)
        unknown = max(h.message_id for h in hits) + 1000
        assert await store.session_for_message(unknown) is None

    async def test_a_removed_message_has_no_session(self, store: SessionStore) -> None:
        await store.create("a")
        await store.create("b")
        await store.append("a", [user("alpha words")])
        await store.append("b", [user("beta words"), user("gamma words")])
        (alpha,) = await store.search("alpha")
        (gamma,) = await store.search("gamma")
        await store.delete("a")
        assert await store.session_for_message(alpha.message_id) is None
        await store.undo("b")
        assert await store.session_for_message(gamma.message_id) is None

    async def test_resolve_root_follows_parents(self, store: SessionStore) -> None:
        await store.create("root", title="Root")
        await store.create("child", parent_key="root")
        await store.create("grandchild", parent_key="child")
        for key in ("root", "child", "grandchild"):
            assert await store.resolve_root(key) == await store.get("root")

    async def test_resolve_root_stops_at_a_missing_parent_or_a_loop(
        self, store: SessionStore
    ) -> None:
        await store.create("orphan", parent_key="deleted-long-ago")
        await store.create("kid", parent_key="orphan")
        root = await store.resolve_root("kid")
        assert root.key == "orphan"
        await store.create("x", parent_key="y")
        await store.create("y", parent_key="x")
        assert (await store.resolve_root("x")).key in {"x", "y"}
        with pytest.raises(SessionNotFound, match="ghost-key"):
            await store.resolve_root("ghost-key")

    # --- export -----------------------------------------------------------------------

    async def test_export_is_json_ready_and_complete(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        await store.create("s", title="Café", personality="p", parent_key="root")
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
        assert exported["messages"] == [
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
        assert exported["usage"] == {
            "calls": 1,
            "input_tokens": 10,
            "output_tokens": 2,
            "cache_read_tokens": 1,
            "cache_write_tokens": 0,
            "reasoning_tokens": 0,
            "cost_usd": 0.125,
            "unpriced_calls": 0,
        }

    async def test_export_unknown_names_it(self, store: SessionStore) -> None:
        with pytest.raises(SessionNotFound, match="ghost-key"):
            await store.export("ghost-key")

    async def test_export_all_is_oldest_first(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        assert await store.export_all() == []
        for key in ("b", "c", "a"):
            await store.create(key)
            await store.append(key, [user(f"in {key}")])
            clock.advance()
        await store.touch("b")
        everything = await store.export_all()
        assert [s["key"] for s in everything] == ["b", "c", "a"]
        assert everything == [await store.export(k) for k in ("b", "c", "a")]

    # --- prune ------------------------------------------------------------------------

    async def test_prune_deletes_only_old_ended_sessions(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        day = 86_400.0
        for key in ("old-ended", "old-open", "resumed"):
            await store.create(key, title=key)
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
        with pytest.raises(ValueError, match="older_than_days"):
            await store.prune(-1)
        with pytest.raises(ValueError, match="older_than_days"):
            await store.prune(float("nan"))

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
        with pytest.raises(ValueError, match="idle_seconds"):
            await store.end_idle(-1)

    # --- undo -------------------------------------------------------------------------

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
        await store.create("s")
        await store.append("s", [Message("system", "sys"), *first_turn, *second_turn])
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
        await store.create("s")
        await store.append(
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
        with pytest.raises(ValueError, match="turns"):
            await store.undo("s", -1)
        with pytest.raises(SessionNotFound, match="ghost-key"):
            await store.undo("ghost-key")

    async def test_undo_keeps_usage(self, store: SessionStore) -> None:
        await store.create("s")
        await store.append("s", [user("q"), assistant("a")])
        await store.record_usage("s", UsageRecord("p", "m", Usage(5, 5), 0.1))
        await store.undo("s")
        assert (await store.usage_totals("s")).calls == 1

    # --- search, excluding a session ----------------------------------------------------

    async def test_search_can_leave_a_session_out(self, store: SessionStore) -> None:
        for key in ("old", "other", "current"):
            await store.create(key)
        await store.append("old", [user("topic old")])
        await store.append("other", [user("topic other")])
        await store.append("current", [user(f"topic now {i}") for i in range(5)])
        hits = await store.search("topic", 2, exclude_session="current")
        assert [h.session_key for h in hits] == ["other", "old"]
        assert len(await store.search("topic", 2)) == 2
        assert await store.search("topic", 2, exclude_session="other") == await store.search(
            "topic", 2
        )

    async def test_search_can_keep_to_one_tenant(self, store: SessionStore) -> None:
        await store.create("mine", tenant="alice")
        await store.create("theirs", tenant="bob")
        await store.create("untagged")
        await store.append("mine", [user("budget plan for alice")])
        await store.append("theirs", [user("budget plan for bob")])
        await store.append("untagged", [user("budget plan, nobody's")])
        hits = await store.search("budget plan", 10, tenant="alice")
        assert [h.session_key for h in hits] == ["mine"]
        assert [h.session_key for h in await store.search("budget", 10, tenant="bob")] == ["theirs"]
        assert len(await store.search("budget", 10)) == 3
        assert await store.search("budget", 10, tenant="carol") == []
        assert await store.search("budget", 10, tenant="alice", exclude_session="mine") == []
