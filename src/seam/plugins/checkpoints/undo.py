"""Taking a turn back (`undo`) and looking at what it did (`changes`): the logic every
surface calls (`Runtime.checkpoints`; `seam undo`, `seam changes`, and the chat, web,
gateway and ACP surfaces built on it).

    plan = await service.plan_undo(key)            # NothingToUndo when there is none
    if plan.edited and not person_agrees(plan):    # the person changed those files since
        ...
    done = await service.undo(plan)                # UndoResult: files, messages, kept id
    shown = await service.changes(key, turn=None)  # TurnChanges: the turn's unified diff
    turns = await service.live_turns(key)          # [(turn number, TurnCheckpoint)]
    await service.engine.restore(row.work_dir, row.after, paths)  # rewind: after turn N

Undo restores only the files the turn changed (the person's other edits stay), each to
its bytes before the turn; then it removes the turn, and every turn after it, from the
transcript, so the model no longer sees them. Before it writes anything it snapshots the
directory as it is, so nothing is lost: the person's newer content stays reachable in
that checkpoint (`UndoResult.kept`), which a later restore can bring back.

Turns are numbered as a person counts them: the N-th user message of the session opens
turn N.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from seam.contracts.checkpoints import (
    CheckpointEngine,
    CheckpointLog,
    NothingToUndo,
    TurnChanges,
    TurnCheckpoint,
    UndoPlan,
    UndoResult,
)
from seam.contracts.messages import Message
from seam.contracts.sessions import SessionNotFound, SessionStore


class UndoService:
    """Undo and changes over the session store (also the `CheckpointLog`) and the engine."""

    def __init__(self, engine: CheckpointEngine, store: SessionStore, log: CheckpointLog) -> None:
        self.engine = engine
        self.log = log
        self._store = store

    async def rename_session(self, old: str, new: str, move: Callable[[], Awaitable[bool]]) -> bool:
        """`RenamesCheckpoints`: the checkpoints are named for both keys while `move`
        renames the session in the store, then for the one that holds it: a crash in
        between leaves an extra name, never a turn whose snapshots were collected."""
        await self.engine.link_session(old, new)
        moved = await move()
        await self.engine.prune([old] if moved else [new])
        return moved

    async def live_turns(self, session_key: str) -> list[tuple[int, TurnCheckpoint]]:
        """The session's turns that changed files and are still in its transcript (not
        undone), as (turn number, row), oldest first. Raises `SessionNotFound`."""
        messages = await self._messages(session_key)
        live = []
        for row in await self.log.checkpoints(session_key):
            # A turn whose messages are gone (undone through the store alone) is not live.
            if not row.undone and turn_start(messages, row) is not None:
                live.append((turn_number(messages, row), row))
        return live

    async def plan_undo(self, session_key: str) -> UndoPlan:
        """The session's last changing turn not yet undone, as an `UndoPlan`; raises
        `NothingToUndo` (or `SessionNotFound`)."""
        live = await self.live_turns(session_key)
        if not live:
            raise NothingToUndo("nothing to undo: no turn of this session changed files")
        turn, row = live[-1]
        diff = await self.engine.diff(row.work_dir, row.before, row.after)
        if not diff.changes:
            # Its changes were already reverted (by hand, or the command failed): there
            # is still the turn to drop from the transcript.
            return UndoPlan(session_key, row, turn, ())
        edited: tuple[str, ...] = ()
        if row.after is not None:
            since = await self.engine.diff(row.work_dir, row.after)
            touched = {c.path for c in diff.changes}
            edited = tuple(c.path for c in since.changes if c.path in touched)
        return UndoPlan(session_key, row, turn, diff.changes, edited)

    async def undo(self, plan: UndoPlan) -> UndoResult:
        """Carry out a plan from `plan_undo` (the caller asked the person about
        `plan.edited` first): keep the directory in a checkpoint, restore the turn's files,
        drop the turn and the turns after it from the transcript."""
        row = plan.checkpoint
        kept = await self.engine.snapshot(
            row.work_dir, session_key=plan.session_key, label=f"before undo of turn {row.turn_id}"
        )
        await self.engine.restore(row.work_dir, row.before, [c.path for c in plan.changes])
        messages = await self._messages(plan.session_key)
        start = turn_start(messages, row)
        removed = 0
        if start is not None:
            turns = sum(1 for m in messages[start:] if m.role == "user")
            removed = await self._store.undo(plan.session_key, turns)
        await self.log.mark_undone(plan.session_key, row.seq)
        return UndoResult(plan=plan, removed_messages=removed, kept=kept, restored=plan.changes)

    async def changes(self, session_key: str, turn: int | None = None) -> TurnChanges | None:
        """What turn `turn` (default: the last that changed files) did to the files;
        None when it changed none (or there is no such turn)."""
        live = [(n, row) for n, row in await self.live_turns(session_key) if turn in (None, n)]
        if not live:
            return None
        number, row = live[-1]
        diff = await self.engine.diff(row.work_dir, row.before, row.after)
        return TurnChanges(session_key, number, row, diff)

    async def prune_gone(self, keep: Sequence[str] = ()) -> int:
        """Drop the checkpoints of sessions the store no longer has, then keep the disk
        use within the budget (the sessions in `keep` last); returns the bytes freed."""
        gone = [key for key in await self.engine.sessions() if await self._store.get(key) is None]
        freed = await self.engine.prune(gone) if gone else 0
        return freed + await self.engine.prune_to_budget(keep)

    async def disk_usage(self) -> int:
        return await self.engine.disk_usage()

    async def _messages(self, session_key: str) -> list[Message]:
        if await self._store.get(session_key) is None:
            raise SessionNotFound(f"no session {session_key!r}")
        return await self._store.messages(session_key)


def turn_start(messages: Sequence[Message], row: TurnCheckpoint) -> int | None:
    """The index of the user message that opened the row's turn (the last one before the
    checkpoint was taken), or None when the transcript no longer holds it."""
    if len(messages) < row.message_count:
        return None  # taken back (the store's undo, or a rewind)
    for index in range(row.message_count - 1, -1, -1):
        if messages[index].role == "user":
            return index
    return None


def turn_number(messages: Sequence[Message], row: TurnCheckpoint) -> int:
    """The row's turn as a person counts it (the N-th user message opens turn N); 0 when
    the transcript no longer holds it."""
    start = turn_start(messages, row)
    if start is None:
        return 0
    return sum(1 for m in messages[: start + 1] if m.role == "user")
