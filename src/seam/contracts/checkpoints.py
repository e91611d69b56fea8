"""Checkpoints: snapshots of a session's working directory, so a turn's changes can be
looked at and taken back (issue #24, `docs/undo.md`).

Two small protocols, stable for every surface:

- `CheckpointEngine` keeps snapshots of a directory outside the project's own history
  (`seam.services.checkpoints.ShadowCheckpoints`: a shadow git repository under
  `$SEAM_HOME/checkpoints/`). A checkpoint id is an opaque string (a commit id);
  ids of one directory compare by `==`, and an unchanged directory snapshots to the id it
  had last time.
- `CheckpointLog` is the durable record of which turn took which checkpoints: one
  `TurnCheckpoint` row per turn that changed (or was about to change) files. The row is
  written *before* the turn's first changing tool runs (intent first), so a crash between
  the snapshot and the tool leaves a known state: `before` is set, `after` is None.

Implementations: in memory (`seam.core.checkpoint_log`), SQLite and PostgreSQL
(`seam.services.sessions.{sqlite,postgres}_checkpoints`), each a mixin of its execution
store, so `runtime.store` is also a `CheckpointLog`.

What undo and changes do with them lives in `seam.plugins.checkpoints.undo.UndoService`,
which a configured runtime offers as `Runtime.checkpoints` (None: `[checkpoints]` off):
`plan_undo(key) -> UndoPlan` (raises `NothingToUndo`), `undo(plan) -> UndoResult`,
`changes(key, turn=None) -> TurnChanges | None`, `prune_gone()`. Its values are here, so
every surface can name them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

# One file's change between two checkpoints: added, modified, deleted (git's letters);
# a type change (file <-> symlink) counts as modified.
ChangeKind = Literal["A", "M", "D"]

DEFAULT_IGNORE: tuple[str, ...] = (
    ".git",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
    "dist",
    "build",
    "target",
    ".next",
    ".cache",
)


class CheckpointError(Exception):
    """A checkpoint could not be taken, read or restored (git failed, no such id, a path
    outside the directory); the message is one line a person can read."""


@dataclass(frozen=True, slots=True)
class CheckpointSettings:
    """`[checkpoints]` in config.toml.

    - `enabled`: take checkpoints at all (off: no hook, undo has nothing to restore);
    - `max_file_mb`: files larger than this are not kept (they are left alone by restore);
    - `ignore`: names (gitignore patterns) never kept: dependency and build directories;
    - `budget_mb`: disk the checkpoints of all projects may use; over it, the oldest
      sessions' checkpoints are dropped first;
    - `max_files`: more new or changed files than this in one snapshot (a home
      directory, a disk) is not a project: no checkpoint rather than minutes of hashing.
    """

    enabled: bool = True
    max_file_mb: float = 10.0
    ignore: tuple[str, ...] = DEFAULT_IGNORE
    budget_mb: float = 2048.0
    max_files: int = 200_000

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)

    @property
    def budget_bytes(self) -> int:
        return int(self.budget_mb * 1024 * 1024)


@dataclass(frozen=True, slots=True)
class FileChange:
    kind: ChangeKind
    path: str  # relative to the directory, "/"-separated


@dataclass(frozen=True, slots=True)
class TurnCheckpoint:
    """One changing turn of a session, as the log records it.

    - `seq`: the row's order within its session (1, 2, ...);
    - `turn_id`: the turn that took it;
    - `work_dir`: the absolute directory snapshotted;
    - `before`: the checkpoint taken before the turn's first changing tool call;
    - `after`: the checkpoint taken when the turn ended (None: it has not ended, or
      crashed; undo then compares with the directory as it is);
    - `message_count`: how many messages the transcript held when `before` was taken
      (undo removes the turn that was running then, and every turn after it);
    - `undone`: undo took it back (kept for `seam changes --turn`, skipped by undo).
    """

    session_key: str
    seq: int
    turn_id: str
    work_dir: str
    before: str
    message_count: int = 0
    created_at: float = 0.0
    after: str | None = None
    undone: bool = False


@dataclass(frozen=True, slots=True)
class Diff:
    """What changed between two checkpoints (or a checkpoint and the directory now)."""

    changes: tuple[FileChange, ...] = ()
    text: str = ""  # a unified diff (binary files as "Binary files ... differ")


class NothingToUndo(Exception):
    """The session has no turn that changed files (left to take back)."""


@dataclass(frozen=True, slots=True)
class UndoPlan:
    """What `undo` would do: the turn (`checkpoint`, numbered `turn`), the files it
    changed (`changes`: what the turn did to each), and those of them the person has
    changed since the turn ended (`edited`: undo would overwrite their newer content)."""

    session_key: str
    checkpoint: TurnCheckpoint
    turn: int
    changes: tuple[FileChange, ...]
    edited: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class UndoResult:
    plan: UndoPlan
    removed_messages: int
    # The checkpoint holding the directory as it was just before the undo.
    kept: str
    restored: tuple[FileChange, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class TurnChanges:
    """What turn `turn` did to the files (`diff.text`: a unified diff)."""

    session_key: str
    turn: int
    checkpoint: TurnCheckpoint
    diff: Diff


@runtime_checkable
class CheckpointEngine(Protocol):
    """Snapshots of directories; every call is a subprocess awaited off the event loop.

    Every method raises `CheckpointError` (never a traceback a surface must decode)."""

    async def snapshot(self, work_dir: str, *, session_key: str, label: str = "") -> str:
        """Keep the directory's files as they are now (untracked included, ignored names
        and files over the size limit skipped) and return the checkpoint's id. The same
        content as the last snapshot of that directory gives the same id."""
        ...

    async def diff(self, work_dir: str, a: str, b: str | None = None) -> Diff:
        """The changes from `a` to `b` (None: to the directory as it is now)."""
        ...

    async def restore(self, work_dir: str, checkpoint: str, paths: Sequence[str]) -> None:
        """Make each path exactly what it was at `checkpoint`: bytes and executable bit
        rewritten, a file created since deleted (and directories it left empty), a file
        deleted since recreated. Paths outside the directory raise."""
        ...

    async def disk_usage(self) -> int:
        """Bytes the checkpoints of every directory use on disk."""
        ...

    async def sessions(self) -> list[str]:
        """The session keys that hold checkpoints (of any directory)."""
        ...

    async def link_session(self, old: str, new: str) -> None:
        """Keep session `old`'s checkpoints under `new` too (a rename; then `prune` the
        key that lost)."""
        ...

    async def prune(self, session_keys: Sequence[str]) -> int:
        """Drop the checkpoints these sessions took (content another session's
        checkpoint still holds stays); returns the bytes freed."""
        ...

    async def prune_to_budget(self, keep: Sequence[str] = ()) -> int:
        """Drop the oldest sessions' checkpoints (but those of `keep`) until the disk use
        is within the budget; returns the bytes freed."""
        ...


@runtime_checkable
class RenamesCheckpoints(Protocol):
    """An undo service that carries a session's checkpoints to its new key around
    `move` (the store's rename), so undo still reaches the turns before a rename."""

    async def rename_session(
        self, old: str, new: str, move: Callable[[], Awaitable[bool]]
    ) -> bool: ...


@runtime_checkable
class CheckpointLog(Protocol):
    """The durable record of each changing turn's checkpoints (see `TurnCheckpoint`)."""

    async def record_checkpoint(
        self, session_key: str, *, turn_id: str, work_dir: str, before: str, message_count: int
    ) -> TurnCheckpoint:
        """Add the turn's row (its `before`), or return the one it has: a turn records
        once, even when resumed. Raises SessionNotFound."""
        ...

    async def finish_checkpoint(self, session_key: str, turn_id: str, after: str) -> None:
        """Set the turn's `after` (no row: nothing happens)."""
        ...

    async def mark_undone(self, session_key: str, seq: int) -> None: ...

    async def checkpoints(self, session_key: str) -> list[TurnCheckpoint]:
        """The session's rows, oldest first (an unknown session: empty)."""
        ...


@runtime_checkable
class CheckpointService(Protocol):
    """Undo and changes as every surface calls them (`Runtime.checkpoints`; implemented by
    `seam.plugins.checkpoints.undo.UndoService`)."""

    @property
    def engine(self) -> CheckpointEngine:
        """The engine behind it (rewind and fork restore through it)."""
        ...

    @property
    def log(self) -> CheckpointLog: ...

    async def live_turns(self, session_key: str) -> list[tuple[int, TurnCheckpoint]]:
        """The session's turns that changed files and are still in its transcript (not
        undone), as (turn number, row), oldest first. Raises `SessionNotFound`."""
        ...

    async def plan_undo(self, session_key: str) -> UndoPlan:
        """The session's last changing turn not yet undone; raises `NothingToUndo` (or
        `SessionNotFound`). Writes nothing."""
        ...

    async def undo(self, plan: UndoPlan) -> UndoResult:
        """Carry out the plan (ask the person about `plan.edited` first): keep the files
        in a checkpoint (`UndoResult.kept`), restore the turn's files, drop the turn and
        the turns after it from the transcript."""
        ...

    async def changes(self, session_key: str, turn: int | None = None) -> TurnChanges | None:
        """What turn `turn` (default: the last that changed files) did to the files; None
        when it changed none."""
        ...

    async def prune_gone(self, keep: Sequence[str] = ()) -> int:
        """Drop checkpoints of sessions the store no longer has, then keep within the
        budget; returns the bytes freed."""
        ...

    async def disk_usage(self) -> int:
        """Bytes every checkpoint uses on disk."""
        ...
