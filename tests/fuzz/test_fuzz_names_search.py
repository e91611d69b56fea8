"""Session names and search queries from users: a name is accepted or refused with
`InvalidSessionName`; any text is a valid search query on every store (FTS syntax in
user text must never raise), and a word of a stored message finds it."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from seam.contracts.messages import Message
from seam.contracts.sessions import NewSession, SearchScope, SessionStore
from seam.core.identity import (
    InvalidSessionName,
    assert_public_session_name,
    create_session_storage_key,
    parse_session_storage_key,
)
from seam.core.sessions import InMemorySessionStore
from seam.services.sessions.sqlite import SQLiteSessionStore

names = st.text(max_size=80) | st.sampled_from(["task:x", " ", "a\x00b", "ü" * 300, "\u2028"])
fts_syntax = st.sampled_from(
    ['"', "'", "*", "NEAR(", ")", "(", "AND", "OR", "NOT", "^", ":", "-", "+", "{", "}", "col:",
     "\\", "%", "_", "NEAR/2", '""', "\x00", "\u0301", "İ", "ß", "ﬁ", "١٢٣"]
)  # fmt: skip
queries = st.lists(fts_syntax | st.text(max_size=8), max_size=8).map(" ".join)


@given(names)
@example("task:abc")
def test_a_session_name_is_accepted_or_refused_and_its_key_round_trips(name: str) -> None:
    try:
        accepted = assert_public_session_name(name)
    except InvalidSessionName as exc:
        assert str(exc)
        return
    key = create_session_storage_key("local", "default", accepted)
    assert parse_session_storage_key(key) == ("local", "default", accepted)


async def _search_all(store: SessionStore, query: str) -> None:
    await store.create("k", NewSession(personality="default"))
    await store.append(
        "k", [Message("user", "deploy the widget to staging"), Message("user", query)]
    )
    assert isinstance(await store.search(query), list)
    assert isinstance(
        await store.search(query, 20, SearchScope(exclude_session="other", tenant="local")), list
    )
    hits = await store.search("widget")
    assert any(hit.session_key == "k" for hit in hits)


@settings(max_examples=max(10, settings.default.max_examples // 4))  # a database each
@given(queries)
@example('"unbalanced')
@example("NEAR(a b")
@example("*")
def test_any_text_is_a_search_query_on_every_store(query: str) -> None:
    asyncio.run(_search_all(InMemorySessionStore(), query))

    async def on_sqlite() -> None:
        with tempfile.TemporaryDirectory() as folder:
            store = SQLiteSessionStore(str(Path(folder) / "s.db"))
            try:
                await _search_all(store, query)
            finally:
                await store.aclose()

    asyncio.run(on_sqlite())
