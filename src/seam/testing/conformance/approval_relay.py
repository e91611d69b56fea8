"""The `ApprovalAnswers` conformance suite: approval answers relayed between processes
through the store (the first answer wins, a waiter elsewhere wakes for it).

Every test takes two fixtures: `store` (a fresh, empty store that is an `ExecutionStore`
and `ApprovalAnswers`) and `twin` (a second store object on the same data, as another
process would open it; a backend with no other process hands back `store` itself).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from seam.contracts.approval_answers import ApprovalAnswers
from seam.contracts.sessions import SessionNotFound
from seam.testing.conformance.support import KEY


class ApprovalRelaySuite:
    async def test_every_store_carries_approval_answers(self, store: Any) -> None:
        assert isinstance(store, ApprovalAnswers)

    async def test_the_first_answer_wins(self, store: Any, twin: Any) -> None:
        await store.create(KEY)
        assert await store.approval_answer(KEY, "c1") is None
        assert await twin.answer_approval(KEY, "c1", "once") is True
        assert await store.answer_approval(KEY, "c1", "deny") is False
        assert await twin.answer_approval(KEY, "c1", "once") is False
        assert await store.approval_answer(KEY, "c1") == "once"
        assert await twin.approval_answer(KEY, "c1") == "once"
        # Another call of the same session is its own question.
        assert await store.answer_approval(KEY, "c2", "always_deny") is True
        assert await twin.approval_answer(KEY, "c2") == "always_deny"

    async def test_an_unknown_session_is_refused(self, store: Any) -> None:
        with pytest.raises(SessionNotFound):
            await store.answer_approval(KEY, "c1", "once")

    async def test_a_waiter_gets_an_answer_stored_elsewhere(self, store: Any, twin: Any) -> None:
        await store.create(KEY)
        waiting = asyncio.ensure_future(store.wait_for_approval_answer(KEY, "c1", 30.0))
        await asyncio.sleep(0)  # let it start (and read nothing)
        assert not waiting.done()
        loop = asyncio.get_running_loop()
        started = loop.time()
        assert await twin.answer_approval(KEY, "c1", "session") is True
        assert await asyncio.wait_for(waiting, 10.0) == "session"
        # Well within the store's safety re-check: the relay woke the waiter.
        assert loop.time() - started < 2.0

    async def test_a_stored_answer_is_returned_at_once(self, store: Any) -> None:
        await store.create(KEY)
        await store.answer_approval(KEY, "c1", "deny")
        assert await store.wait_for_approval_answer(KEY, "c1", 30.0) == "deny"

    async def test_no_answer_within_the_time_is_none(self, store: Any) -> None:
        await store.create(KEY)
        assert await store.wait_for_approval_answer(KEY, "c1", 0.2) is None

    async def test_deleting_the_session_deletes_its_answers(self, store: Any) -> None:
        await store.create(KEY)
        await store.answer_approval(KEY, "c1", "once")
        await store.delete(KEY)
        await store.create(KEY)
        assert await store.approval_answer(KEY, "c1") is None
        assert await store.answer_approval(KEY, "c1", "deny") is True

    async def test_clearing_lets_a_repeated_call_id_be_asked_again(
        self, store: Any, twin: Any
    ) -> None:
        await store.create(KEY)
        await store.answer_approval(KEY, "call_0", "once")
        await store.clear_approval(KEY, "call_0")
        assert await twin.approval_answer(KEY, "call_0") is None
        assert await twin.answer_approval(KEY, "call_0", "deny") is True
        await store.clear_approval(KEY, "never-asked")  # nothing to clear is fine
