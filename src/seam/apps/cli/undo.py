"""`seam undo` and `seam changes`: take back the files a turn changed, or look at them.

Both are thin shells over `Runtime.checkpoints` (plugins/checkpoints/undo.py), which the
chat, web, gateway and ACP surfaces share. Without `--session` they act on the most
recently active session. Nothing to undo (or no change to show) is said plainly, exit 1.

`seam undo` asks before it overwrites a file the person changed after the agent's turn;
`--yes` skips the question (for scripts); without a terminal to ask on and without
`--yes` it refuses. Either way the files as they were just before the undo are first kept
in a checkpoint of their own, and its id is printed.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from seam.contracts.checkpoints import CheckpointService, FileChange, UndoPlan, UndoResult
    from seam.wiring.runtime import Runtime

SessionOption = Annotated[
    str | None,
    typer.Option("--session", help="Session name (default: the most recently active one)."),
]
UndoYes = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Overwrite files you changed since the turn without asking."),
]
TurnOption = Annotated[
    int | None,
    typer.Option("--turn", min=1, help="The turn's number (default: the last that changed files)."),
]
SHORT_ID = 12


def register(app: typer.Typer) -> None:
    @app.command("undo")
    def undo_command(session: SessionOption = None, yes: UndoYes = False) -> None:
        """Restore the files the last changing turn touched and drop the turn.

        The files the turn changed go back to their bytes before it (files it created are
        deleted, files it deleted come back), and the turn leaves the conversation, so the
        model no longer sees it. Exit 1 when there is nothing to undo."""
        from seam.apps.cli.runner import execute

        execute(undo(session, yes))

    @app.command("changes")
    def changes_command(session: SessionOption = None, turn: TurnOption = None) -> None:
        """Print the unified diff a turn made to the working directory (shell commands'
        changes included). Exit 1 when the turn changed no files."""
        from seam.apps.cli.runner import execute

        execute(changes(session, turn))


async def undo(name: str | None, yes: bool) -> int:
    from seam.apps.cli.runner import open_runtime
    from seam.contracts.checkpoints import NothingToUndo

    async with open_runtime() as runtime:
        service = _service(runtime)
        key = await _session_key(runtime, name)
        try:
            plan = await service.plan_undo(key)
        except NothingToUndo as exc:
            print(str(exc))
            return 1
        if plan.edited and not yes and not await _agrees(plan):
            print("nothing undone")
            return 1
        result = await service.undo(plan)
        print_undone(runtime.session_name_of(key), result)
    return 0


async def changes(name: str | None, turn: int | None) -> int:
    from seam.apps.cli.render import terminal_safe
    from seam.apps.cli.runner import open_runtime

    async with open_runtime() as runtime:
        service = _service(runtime)
        key = await _session_key(runtime, name)
        found = await service.changes(key, turn)
        session = runtime.session_name_of(key)
    if found is None:
        if turn is None:
            print(f"no turn of session {session} changed files")
        else:
            print(f"turn {turn} of session {session} changed no files")
        return 1
    if not found.diff.changes:
        print(f"turn {found.turn} of session {session} left the files as they were")
        return 0
    sys.stdout.write(terminal_safe(found.diff.text))
    sys.stdout.flush()
    return 0


def _service(runtime: Runtime) -> CheckpointService:
    from seam.apps.cli.runner import CliError

    if runtime.checkpoints is None:
        raise CliError("checkpoints are off ([checkpoints] enabled = false in config.toml)")
    return runtime.checkpoints


async def _session_key(runtime: Runtime, name: str | None) -> str:
    """The named session's key (it must exist), or the most recently active session's."""
    from seam.apps.cli.runner import CliError, session_key

    if name is not None:
        key = session_key(runtime, name)
        if await runtime.sessions.get(key) is None:
            raise CliError(f"no session named {name!r} (see: seam sessions list)")
        return key
    recent = await runtime.list_sessions(1)
    if not recent:
        raise CliError("no sessions yet: nothing to undo")
    return recent[0].key


async def _agrees(plan: UndoPlan) -> bool:
    """Ask on the terminal whether to overwrite the person's newer edits; without one,
    refuse (a one-line error, exit 1)."""
    from seam.apps.cli.render import terminal_safe
    from seam.apps.cli.runner import CliError

    files = ", ".join(plan.edited)
    if not sys.stdin.isatty():
        raise CliError(
            f"you changed {files} after turn {plan.turn}; undo would overwrite it: run"
            " seam undo --yes to undo anyway (your version is kept in a checkpoint first)"
        )
    sys.stdout.write(terminal_safe(f"you changed {files} after turn {plan.turn}.") + "\n")
    # On stdout, not where `input` would put it (stderr, without readline loaded).
    sys.stdout.write("overwrite with the state before the turn? [y/N] ")
    sys.stdout.flush()
    answer = await asyncio.to_thread(sys.stdin.readline)  # "" at the end of input: no
    return answer.strip().lower() in ("y", "yes")


def print_undone(session: str, result: UndoResult) -> None:
    from seam.apps.cli.render import terminal_safe

    plan = result.plan
    lines = [f"undid turn {plan.turn} of session {session}"]
    lines += [f"  {_verb(change):<9} {change.path}" for change in result.restored]
    if not result.restored:
        lines.append("  (its changes to the files were already gone)")
    lines.append(f"removed {result.removed_messages} messages of that turn from the conversation")
    lines.append(f"the files as they were before this undo: checkpoint {result.kept[:SHORT_ID]}")
    print(terminal_safe("\n".join(lines)))


def _verb(change: FileChange) -> str:
    """What undo did to a file, from what the turn had done to it."""
    return {"A": "deleted", "D": "recreated"}.get(change.kind, "restored")
