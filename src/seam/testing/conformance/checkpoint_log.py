"""The `CheckpointLog` conformance suite: each changing turn's checkpoint row, recorded
once per turn (intent first), finished, marked undone, per session in order, and gone
with its session.

Every test takes one fixture: `store` (a fresh, empty `SessionStore` that is also a
`CheckpointLog`).
"""

from __future__ import annotations

from typing import Any

import pytest

from seam.contracts.checkpoints import CheckpointLog
from seam.contracts.sessions import SessionNotFound


class CheckpointLogSuite:
    async def test_rows_are_numbered_per_session_in_order(self, store: Any) -> None:
        assert isinstance(store, CheckpointLog)
        log: Any = store
        for key in ("a", "b"):
            await log.create(key)
            assert await log.checkpoints(key) == []
        first = await log.record_checkpoint(
            "a", turn_id="t1", work_dir="/w", before="c1", message_count=1
        )
        await log.record_checkpoint("b", turn_id="t1", work_dir="/v", before="x", message_count=3)
        second = await log.record_checkpoint(
            "a", turn_id="t2", work_dir="/w", before="c2", message_count=4
        )
        assert (first.seq, second.seq) == (1, 2)
        rows = await log.checkpoints("a")
        assert [(r.seq, r.turn_id, r.before, r.after, r.undone) for r in rows] == [
            (1, "t1", "c1", None, False),
            (2, "t2", "c2", None, False),
        ]
        assert (rows[0].work_dir, rows[0].message_count) == ("/w", 1)
        assert [r.before for r in await log.checkpoints("b")] == ["x"]

    async def test_a_turn_records_once(self, store: Any) -> None:
        await store.create("a")
        first = await store.record_checkpoint(
            "a", turn_id="t1", work_dir="/w", before="c1", message_count=1
        )
        again = await store.record_checkpoint(
            "a", turn_id="t1", work_dir="/w", before="other", message_count=9
        )
        assert again == first
        assert len(await store.checkpoints("a")) == 1

    async def test_finish_and_undo(self, store: Any) -> None:
        await store.create("a")
        await store.record_checkpoint(
            "a", turn_id="t1", work_dir="/w", before="c1", message_count=1
        )
        await store.finish_checkpoint("a", "t1", "c9")
        await store.finish_checkpoint("a", "no-such-turn", "zz")
        await store.mark_undone("a", 1)
        [row] = await store.checkpoints("a")
        assert (row.after, row.undone) == ("c9", True)

    async def test_unknown_sessions(self, store: Any) -> None:
        with pytest.raises(SessionNotFound):
            await store.record_checkpoint(
                "nobody", turn_id="t", work_dir="/w", before="c", message_count=0
            )
        assert await store.checkpoints("nobody") == []

    async def test_rows_go_with_their_session(self, store: Any) -> None:
        await store.create("a")
        await store.record_checkpoint(
            "a", turn_id="t1", work_dir="/w", before="c1", message_count=1
        )
        assert await store.delete("a")
        await store.create("a")
        assert await store.checkpoints("a") == []
