"""Rewind and fork: go back to turn N of a session, or branch a new session from it
(issue #24, `docs/undo.md`). The values and the protocol every surface names; the logic is
`seam.plugins.checkpoints.rewind.SessionRewinder` (the CLI, chat, web, gateway and ACP
all call it, through `seam.wiring.rewind.rewinder`).

    plan = await rewinder.plan(key, 3)                   # TurnOutOfRange, SessionNotFound
    if plan.edited and not person_agrees(plan): ...      # the person changed those files
    done = await rewinder.rewind(plan)                   # turns after 3 gone, files back
    made = await rewinder.fork(plan, new_key, restore=False)   # SessionExists

Turns are numbered as a person counts them (the N-th user message opens turn N), as undo
numbers them. A plan is read-only: making one writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from seam.contracts.checkpoints import FileChange


class TurnOutOfRange(ValueError):
    """The turn number names no turn the action can take (the message says the range)."""


class SessionExists(ValueError):
    """A fork's new name is taken by a session that already exists."""


@dataclass(frozen=True, slots=True)
class DirRestore:
    """The files of one working directory a rewind puts back: `checkpoint` holds them as
    they were after the plan's turn; `changes` says what the later turns did to each (an
    "A" file is deleted by the restore, a "D" file recreated, an "M" file rewritten)."""

    work_dir: str
    checkpoint: str
    changes: tuple[FileChange, ...]


@dataclass(frozen=True, slots=True)
class RewindPlan:
    """Going back to the end of turn `turn` of a session holding `turns` turns.

    - `keep_messages`: the transcript's first messages that turn 1..`turn` are;
    - `restores`: the files the later turns changed, per directory (empty: they changed
      none, or checkpoints are off: `files_tracked` is False then);
    - `edited`: files among those the person changed after the agent's last turn
      (restoring overwrites their newer content: ask first; it is kept in a checkpoint).
    """

    session_key: str
    turn: int
    turns: int
    keep_messages: int
    restores: tuple[DirRestore, ...] = ()
    edited: tuple[str, ...] = ()
    files_tracked: bool = True

    @property
    def changes(self) -> tuple[FileChange, ...]:
        return tuple(change for restore in self.restores for change in restore.changes)


@dataclass(frozen=True, slots=True)
class RewindResult:
    plan: RewindPlan
    removed_messages: int
    restored: tuple[FileChange, ...]
    # The checkpoints holding each directory as it was just before the restore.
    kept: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ForkResult:
    plan: RewindPlan
    session_key: str  # the new session's
    copied_messages: int
    restored: tuple[FileChange, ...] = ()
    kept: tuple[str, ...] = ()


def restore_verb(change: FileChange) -> str:
    """What a restore did to a file, from what the turns had done to it (a file they
    created is deleted, one they deleted recreated)."""
    return {"A": "deleted", "D": "recreated"}.get(change.kind, "restored")


@runtime_checkable
class Rewinder(Protocol):
    """Rewind and fork as every surface calls them."""

    async def plan(self, session_key: str, turn: int, *, fork: bool = False) -> RewindPlan:
        """What going back to the end of `turn` would do. A rewind takes 0..turns-1 (0:
        before the first turn), a fork 1..turns; anything else raises `TurnOutOfRange`;
        an unknown session raises `SessionNotFound`. Writes nothing."""
        ...

    async def rewind(self, plan: RewindPlan) -> RewindResult:
        """Keep the directories in checkpoints, restore the files, drop the turns after
        `plan.turn` from the transcript."""
        ...

    async def fork(self, plan: RewindPlan, new_key: str, *, restore: bool = False) -> ForkResult:
        """A new session `new_key` (the source's personality, tools, model, tenant and
        directory) holding the first `plan.turn` turns; the files are restored only when
        `restore`. Raises `SessionExists` when `new_key` is taken (nothing written)."""
        ...


__all__ = [
    "DirRestore",
    "ForkResult",
    "RewindPlan",
    "RewindResult",
    "Rewinder",
    "SessionExists",
    "TurnOutOfRange",
    "restore_verb",
]
