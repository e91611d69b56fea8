"""The `SessionCatalogue` conformance suite, its listing half: recent and rich lists, a
search hit's session, a lineage's root (full-text search is `search.py`).

Fixtures: `clock` and `store`, a whole `SessionStore` (see the package docstring).
"""

from __future__ import annotations

import pytest

from seam.contracts.messages import Message, ToolCall, Usage
from seam.contracts.sessions import NewSession, SessionStore, UsageRecord, UsageTotals
from seam.testing.clock import ManualClock
from seam.testing.conformance.support import assistant, refuses_unknown, rejects, session_with, user


class SessionCatalogueSuite:
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
        await store.create("s", NewSession(title="T", personality="p", parent_key="root"))
        await store.append("s", [user("x")])
        assert await store.list() == [await store.get("s")]

    async def test_list_of_an_empty_store(self, store: SessionStore) -> None:
        assert await store.list() == []

    async def test_list_rejects_a_negative_limit(self, store: SessionStore) -> None:
        await rejects(store.list(-1), "limit")

    async def test_list_rich_counts_tokens_and_previews(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        await store.create("quiet", NewSession(title="Quiet"))
        clock.advance()
        await store.create("busy", NewSession(personality="coder"))
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
            await session_with(store, key, [user(f"question {key}")])
            clock.advance()
        await store.touch("b")
        assert [s.info for s in await store.list_rich(3)] == await store.list(3)
        assert [s.preview for s in await store.list_rich(2)] == ["question b", "question d"]
        assert await store.list_rich(0) == []
        await rejects(store.list_rich(-1), "limit")

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
        await rejects(store.list_recently_active(start, -1), "limit")

    async def test_a_hit_leads_back_to_its_session(self, store: SessionStore) -> None:
        await store.create("a", NewSession(title="A"))
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
        await store.create("root", NewSession(title="Root"))
        await store.create("child", NewSession(parent_key="root"))
        await store.create("grandchild", NewSession(parent_key="child"))
        for key in ("root", "child", "grandchild"):
            assert await store.resolve_root(key) == await store.get("root")

    async def test_resolve_root_stops_at_a_missing_parent_or_a_loop(
        self, store: SessionStore
    ) -> None:
        await store.create("orphan", NewSession(parent_key="deleted-long-ago"))
        await store.create("kid", NewSession(parent_key="orphan"))
        root = await store.resolve_root("kid")
        assert root.key == "orphan"
        await store.create("x", NewSession(parent_key="y"))
        await store.create("y", NewSession(parent_key="x"))
        assert (await store.resolve_root("x")).key in {"x", "y"}
        await refuses_unknown(store.resolve_root("ghost-key"))
