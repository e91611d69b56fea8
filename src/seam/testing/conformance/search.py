"""The `SessionCatalogue` conformance suite, its full-text search half: any text a person
types is a valid query (hostile ones included), hits and snippets are alike everywhere.

Fixtures: `clock` and `store`, a whole `SessionStore` (see the package docstring).
"""

from __future__ import annotations

import pytest

from seam.contracts.messages import Message, ToolCall
from seam.contracts.sessions import NewSession, SearchScope, SessionStore
from seam.testing.conformance.support import assistant, rejects, session_with, user

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


class SessionSearchSuite:
    async def test_search_finds_the_message(self, store: SessionStore) -> None:
        await session_with(
            store, "s", [user("What is the capital of Portugal?"), assistant("Lisbon.")]
        )
        hits = await store.search("lisbon")
        assert [(h.session_key, h.message_index, h.role, h.snippet) for h in hits] == [
            ("s", 1, "assistant", "Lisbon.")
        ]

    async def test_search_ignores_case_accents_and_punctuation(self, store: SessionStore) -> None:
        await session_with(store, "s", [user("Meet me at the CAFÉ, near Zürich!")])
        for query in ("cafe", "Café", "ZURICH", "zürich!", "(near)"):
            assert [h.message_index for h in await store.search(query)] == [0], query

    async def test_search_requires_every_word_in_one_message(self, store: SessionStore) -> None:
        await session_with(
            store, "s", [user("red apples"), user("green apples"), user("red and green apples")]
        )
        assert [h.message_index for h in await store.search("apples red")] == [2, 0]
        assert [h.message_index for h in await store.search("green red")] == [2]
        assert await store.search("red blue") == []

    async def test_search_matches_whole_words(self, store: SessionStore) -> None:
        await session_with(store, "s", [user("deployment finished; snake_case too")])
        assert await store.search("deplo") == []  # a prefix is not a word
        assert await store.search("finish deployment snak") == []
        assert [h.message_index for h in await store.search("deployment")] == [0]
        assert [h.message_index for h in await store.search("snake")] == [0]

    async def test_search_matches_word_stems(self, store: SessionStore) -> None:
        await session_with(
            store,
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
        await session_with(store, "s", [user("word " * 100 + "bananas at the end")])
        (hit,) = await store.search("banana")
        assert hit.snippet.startswith("…") and hit.snippet.endswith("bananas at the end")

    async def test_search_covers_user_and_assistant_only(self, store: SessionStore) -> None:
        await session_with(
            store,
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
        await session_with(store, "s", [user(f"{before} the Kraken appears {after}")])
        (hit,) = await store.search("kraken")
        assert len(hit.snippet) <= 160
        assert "the Kraken appears" in hit.snippet
        assert hit.snippet.startswith("…")
        assert hit.snippet.endswith("…")

    async def test_search_snippet_near_the_end_keeps_the_end(self, store: SessionStore) -> None:
        await session_with(store, "s", [user("word " * 100 + "finale")])
        (hit,) = await store.search("finale")
        assert len(hit.snippet) <= 160
        assert hit.snippet.startswith("…")
        assert hit.snippet.endswith("word finale")

    async def test_search_snippet_is_one_line(self, store: SessionStore) -> None:
        await session_with(store, "s", [user("first line\n\n  second\tline")])
        (hit,) = await store.search("second")
        assert hit.snippet == "first line second line"

    @pytest.mark.parametrize("query", HOSTILE_QUERIES)
    async def test_any_text_is_a_valid_query(self, store: SessionStore, query: str) -> None:
        await session_with(store, "s", [user('hello world: "NEAR" AND (not) content*')])
        hits = await store.search(query)
        assert all(h.session_key == "s" for h in hits)

    async def test_query_operators_are_plain_words(self, store: SessionStore) -> None:
        await session_with(store, "s", [user("hello world"), user("this is not and or near")])
        assert [h.message_index for h in await store.search("hello NOT world")] == []
        assert [h.message_index for h in await store.search("hello -world")] == [0]
        assert [h.message_index for h in await store.search('"hello')] == [0]
        assert [h.message_index for h in await store.search("hello*")] == [0]
        assert [h.message_index for h in await store.search("NOT AND OR NEAR")] == [1]
        assert [h.message_index for h in await store.search("(hello) world:")] == [0]

    async def test_empty_and_punctuation_queries_find_nothing(self, store: SessionStore) -> None:
        await session_with(store, "s", [user("anything at all")])
        for query in ("", "   ", "*", '""', "-", "()"):
            assert await store.search(query) == [], query

    async def test_search_rejects_a_negative_limit(self, store: SessionStore) -> None:
        await rejects(store.search("x", -1), "limit")

    async def test_search_can_leave_a_session_out(self, store: SessionStore) -> None:
        for key in ("old", "other", "current"):
            await store.create(key)
        await store.append("old", [user("topic old")])
        await store.append("other", [user("topic other")])
        await store.append("current", [user(f"topic now {i}") for i in range(5)])
        hits = await store.search("topic", 2, SearchScope(exclude_session="current"))
        assert [h.session_key for h in hits] == ["other", "old"]
        assert len(await store.search("topic", 2)) == 2
        assert await store.search(
            "topic", 2, SearchScope(exclude_session="other")
        ) == await store.search("topic", 2)

    async def test_search_can_keep_to_one_tenant(self, store: SessionStore) -> None:
        await store.create("mine", NewSession(tenant="alice"))
        await store.create("theirs", NewSession(tenant="bob"))
        await store.create("untagged")
        await store.append("mine", [user("budget plan for alice")])
        await store.append("theirs", [user("budget plan for bob")])
        await store.append("untagged", [user("budget plan, nobody's")])
        hits = await store.search("budget plan", 10, SearchScope(tenant="alice"))
        assert [h.session_key for h in hits] == ["mine"]
        assert [
            h.session_key for h in await store.search("budget", 10, SearchScope(tenant="bob"))
        ] == ["theirs"]
        assert len(await store.search("budget", 10)) == 3
        assert await store.search("budget", 10, SearchScope(tenant="carol")) == []
        assert (
            await store.search("budget", 10, SearchScope(tenant="alice", exclude_session="mine"))
            == []
        )
