"""Rewind a session to turn N, or fork a new session from it (`contracts/rewind.py`): the
logic `seam sessions rewind|fork`, the chat's `/rewind`, and the web API's fork share.

The files go back through the same checkpoints undo uses (`TurnCheckpoint` rows): the
state after turn N is the `before` checkpoint of the first changing turn after N, and only
the files the later turns changed are restored (the person's other edits stay). As undo
does, a rewind first snapshots each directory as it is, so nothing is lost.

Without an engine (`[checkpoints]` off) the transcript is still rewound or forked; the
plan says so (`files_tracked` False) and the surfaces tell the person.
"""

from __future__ import annotations

from collections.abc import Sequence

from seam.contracts.checkpoints import CheckpointEngine, CheckpointLog, TurnCheckpoint
from seam.contracts.messages import Message
from seam.contracts.rewind import (
    DirRestore,
    ForkResult,
    RewindPlan,
    RewindResult,
    SessionExists,
    TurnOutOfRange,
)
from seam.contracts.sessions import NewSession, SessionNotFound, SessionStore
from seam.plugins.checkpoints.undo import turn_number, turn_start


class SessionRewinder:
    """Rewind and fork over the session store, its checkpoint log and the engine."""

    def __init__(
        self, store: SessionStore, log: CheckpointLog | None, engine: CheckpointEngine | None
    ) -> None:
        self._store = store
        self._log = log
        self._engine = engine

    async def plan(self, session_key: str, turn: int, *, fork: bool = False) -> RewindPlan:
        """What going back to the end of `turn` would do (see `Rewinder.plan`)."""
        if await self._store.get(session_key) is None:
            raise SessionNotFound(f"no session {session_key!r}")
        messages = await self._store.messages(session_key)
        turns = sum(1 for m in messages if m.role == "user")
        _check_range(turn, turns, fork=fork)
        keep = _turn_end(messages, turn)
        if self._engine is None or self._log is None:
            return RewindPlan(session_key, turn, turns, keep, files_tracked=False)
        later = [
            row
            for row in await self._log.checkpoints(session_key)
            if not row.undone
            and turn_start(messages, row) is not None
            and turn_number(messages, row) > turn
        ]
        restores: list[DirRestore] = []
        edited: list[str] = []
        for work_dir in dict.fromkeys(row.work_dir for row in later):
            rows = [row for row in later if row.work_dir == work_dir]
            restore, newer = await self._dir_plan(work_dir, rows)
            if restore.changes:
                restores.append(restore)
            edited += newer
        return RewindPlan(session_key, turn, turns, keep, tuple(restores), tuple(edited))

    async def _dir_plan(
        self, work_dir: str, rows: Sequence[TurnCheckpoint]
    ) -> tuple[DirRestore, list[str]]:
        """One directory's restore: the files the turns changed, as the directory now
        differs from the first turn's `before`; and those the person changed since."""
        assert self._engine is not None
        touched: set[str] = set()
        for row in rows:
            diff = await self._engine.diff(work_dir, row.before, row.after)
            touched.update(change.path for change in diff.changes)
        target = rows[0].before
        now = await self._engine.diff(work_dir, target)
        changes = tuple(change for change in now.changes if change.path in touched)
        edited: list[str] = []
        last = rows[-1]
        if last.after is not None and changes:
            since = await self._engine.diff(work_dir, last.after)
            edited = [change.path for change in since.changes if change.path in touched]
        return DirRestore(work_dir, target, changes), edited

    async def rewind(self, plan: RewindPlan) -> RewindResult:
        """Keep, restore, then drop the turns after `plan.turn` (see `Rewinder.rewind`)."""
        if plan.turn >= plan.turns:
            raise TurnOutOfRange(f"turn {plan.turn} is the last turn: nothing to rewind")
        kept = await self._restore(plan)
        removed = await self._store.undo(plan.session_key, plan.turns - plan.turn)
        if self._log is not None:
            messages = await self._store.messages(plan.session_key)
            for row in await self._log.checkpoints(plan.session_key):
                if not row.undone and len(messages) < row.message_count:
                    await self._log.mark_undone(plan.session_key, row.seq)
        return RewindResult(plan, removed, plan.changes, kept)

    async def fork(self, plan: RewindPlan, new_key: str, *, restore: bool = False) -> ForkResult:
        """A new session with the first `plan.turn` turns (see `Rewinder.fork`)."""
        if await self._store.get(new_key) is not None:
            raise SessionExists(f"a session {new_key!r} already exists")
        info = await self._store.get(plan.session_key)
        if info is None:
            raise SessionNotFound(f"no session {plan.session_key!r}")
        messages = await self._store.messages(plan.session_key, 0, plan.keep_messages)
        await self._store.create(
            new_key,
            NewSession(
                personality=info.personality,
                tenant=info.tenant,
                tools=info.tools,
                model=info.model,
            ),
        )
        if info.working_dir is not None:
            await self._store.set_working_dir(new_key, info.working_dir)
        if messages:
            await self._store.append(new_key, messages)
        kept = await self._restore(plan) if restore else ()
        restored = plan.changes if restore else ()
        return ForkResult(plan, new_key, len(messages), restored, kept)

    async def _restore(self, plan: RewindPlan) -> tuple[str, ...]:
        """Snapshot each directory as it is (nothing lost), then restore its files."""
        kept: list[str] = []
        if self._engine is None:
            return ()
        for restore in plan.restores:
            kept.append(
                await self._engine.snapshot(
                    restore.work_dir,
                    session_key=plan.session_key,
                    label=f"before rewind to turn {plan.turn}",
                )
            )
            paths = [change.path for change in restore.changes]
            await self._engine.restore(restore.work_dir, restore.checkpoint, paths)
        return tuple(kept)


def _check_range(turn: int, turns: int, *, fork: bool) -> None:
    low, high = (1, turns) if fork else (0, turns - 1)
    if turns == 0:
        raise TurnOutOfRange("the session has no turns yet")
    if not low <= turn <= high:
        raise TurnOutOfRange(f"turn {turn} is out of range: give {low} to {high}")


def _turn_end(messages: Sequence[Message], turn: int) -> int:
    """How many messages turns 1..`turn` are (those before the first turn included)."""
    seen = 0
    for index, message in enumerate(messages):
        if message.role == "user":
            seen += 1
            if seen > turn:
                return index
    return len(messages)


__all__ = ["SessionRewinder"]
