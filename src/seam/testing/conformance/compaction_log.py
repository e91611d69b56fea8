"""The `CompactionLog` conformance suite: compaction records kept per session, oldest
first, and gone with their session.

Every test takes one fixture: `store` (a fresh, empty `SessionStore` that is also a
`CompactionLog`).
"""

from __future__ import annotations

from typing import Any

import pytest

from seam.contracts.context import CompactionLog, CompactionRecord
from seam.contracts.sessions import SessionNotFound

FIRST = CompactionRecord(40, 25, 45, 24, 3_100, 1_400, 12.5, "threshold", True, 1_000.0)
SECOND = CompactionRecord(70, 60, 30, 22, 3_050, 2_000, 0.4, "overflow", False, 2_000.0)


class CompactionLogSuite:
    async def test_records_are_kept_per_session_in_order(self, store: Any) -> None:
        sessions = store
        assert isinstance(sessions, CompactionLog)
        await store.create("a")
        await store.create("b")
        assert await sessions.compactions("a") == []
        await sessions.record_compaction("a", FIRST)
        await sessions.record_compaction("b", SECOND)
        await sessions.record_compaction("a", SECOND)
        assert await sessions.compactions("a") == [FIRST, SECOND]
        assert await sessions.compactions("b") == [SECOND]
        with pytest.raises(SessionNotFound):
            await sessions.record_compaction("nobody", FIRST)
        with pytest.raises(SessionNotFound):
            await sessions.compactions("nobody")
        assert await store.delete("a")
        await store.create("a")
        assert await sessions.compactions("a") == []
