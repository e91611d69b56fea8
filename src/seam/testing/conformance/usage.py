"""The `UsageLedger` conformance suite: one model call's usage recorded, summed per
session, kept by undo and gone with its session.

Fixtures: `clock` and `store`, a whole `SessionStore` (see the package docstring).
"""

from __future__ import annotations

import pytest

from seam.contracts.messages import Usage
from seam.contracts.sessions import SessionNotFound, SessionStore, UsageRecord, UsageTotals
from seam.testing.conformance.support import assistant, session_with, user


class UsageLedgerSuite:
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

    async def test_undo_keeps_usage(self, store: SessionStore) -> None:
        await session_with(store, "s", [user("q"), assistant("a")])
        await store.record_usage("s", UsageRecord("p", "m", Usage(5, 5), 0.1))
        await store.undo("s")
        assert (await store.usage_totals("s")).calls == 1
