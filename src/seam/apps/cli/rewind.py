"""`seam sessions rewind NAME --to N` and `seam sessions fork NAME --at N [--as NEW]`:
thin shells over the rewinder every surface shares (`seam.wiring.rewind.rewinder`,
`contracts/rewind.py`).

A rewind drops the turns after turn N and restores the files they changed to their state
after turn N; a fork starts a new session with the first N turns and leaves the files
alone unless `--restore`. Both ask before overwriting a file the person changed after the
agent's last turn (`--yes` for scripts; without a terminal and without `--yes` they
refuse). Bad input changes nothing: an unknown session or a taken name exits 1, a turn
out of range exits 2, each with one line.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from seam.contracts.rewind import RewindPlan, SessionExists, TurnOutOfRange, restore_verb

if TYPE_CHECKING:
    from seam.contracts.checkpoints import FileChange
    from seam.contracts.rewind import Rewinder
    from seam.wiring.runtime import Runtime

NameArgument = Annotated[str, typer.Argument(help="Session name.")]
YesOption = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Overwrite files you changed since without asking."),
]


def register(sessions_app: typer.Typer) -> None:
    @sessions_app.command("rewind")
    def rewind_command(
        name: NameArgument,
        to: Annotated[int, typer.Option("--to", help="The turn to go back to (0: the start).")],
        yes: YesOption = False,
    ) -> None:
        """Drop the turns after turn N and restore the files they changed to their state
        after turn N (the files as they are now are kept in a checkpoint first)."""
        from seam.apps.cli.runner import execute

        execute(rewind_session(name, to, yes))

    @sessions_app.command("fork")
    def fork_command(
        name: NameArgument,
        at: Annotated[int, typer.Option("--at", help="How many turns the new session keeps.")],
        as_: Annotated[
            str | None, typer.Option("--as", help="The new session's name (default: NAME-fork).")
        ] = None,
        restore: Annotated[
            bool, typer.Option("--restore", help="Also put the files back to turn N's state.")
        ] = False,
        yes: YesOption = False,
    ) -> None:
        """Start a new session with the first N turns of NAME (the files untouched unless
        --restore)."""
        from seam.apps.cli.runner import execute

        execute(fork_session(name, at, as_, restore, yes))


async def rewind_session(name: str, to: int, yes: bool) -> int:
    from seam.apps.cli.render import terminal_safe
    from seam.apps.cli.runner import open_runtime
    from seam.wiring.rewind import rewinder

    async with open_runtime() as runtime:
        key = await _existing_key(runtime, name)
        service = rewinder(runtime)
        plan = await _plan(service, key, to, fork=False)
        if not await _confirmed(plan, yes, "rewind"):
            print("nothing rewound")
            return 1
        done = await service.rewind(plan)
    lines = [f"rewound session {name} to turn {to} (of {plan.turns})"]
    lines += changed_lines(done.restored, plan)
    lines.append(f"removed {done.removed_messages} messages of the later turns")
    lines += [f"the files as they were before this rewind: checkpoint {k[:12]}" for k in done.kept]
    print(terminal_safe("\n".join(lines)))
    return 0


async def fork_session(name: str, at: int, new_name: str | None, restore: bool, yes: bool) -> int:
    from seam.apps.cli.render import terminal_safe
    from seam.apps.cli.runner import CliError, open_runtime, session_key
    from seam.wiring.rewind import rewinder

    async with open_runtime() as runtime:
        key = await _existing_key(runtime, name)
        chosen = new_name or await _free_name(runtime, f"{name}-fork")
        new_key = session_key(runtime, chosen)
        service = rewinder(runtime)
        plan = await _plan(service, key, at, fork=True)
        if restore and not await _confirmed(plan, yes, "fork --restore"):
            print("nothing forked")
            return 1
        try:
            made = await service.fork(plan, new_key, restore=restore)
        except SessionExists:
            raise CliError(
                f"a session named {chosen!r} already exists: pick another --as"
            ) from None
    lines = [f"forked session {chosen} from {name} at turn {at} ({made.copied_messages} messages)"]
    if restore:
        lines += changed_lines(made.restored, plan)
    else:
        lines.append("the files were left as they are (--restore puts them back to that turn)")
    print(terminal_safe("\n".join(lines)))
    return 0


def changed_lines(restored: tuple[FileChange, ...], plan: RewindPlan) -> list[str]:
    """One line per file a restore put back (or why there were none)."""
    if not plan.files_tracked:
        return ["  the files were not restored: checkpoints are off ([checkpoints] enabled)"]
    if not restored:
        return ["  no file to restore: the later turns changed none"]
    return [f"  {restore_verb(change):9} {change.path}" for change in restored]


async def _existing_key(runtime: Runtime, name: str) -> str:
    from seam.apps.cli.runner import CliError, session_key

    key = session_key(runtime, name)
    if await runtime.sessions.get(key) is None:
        raise CliError(f"no session named {name!r} (see: seam sessions list)")
    return key


async def _plan(service: Rewinder, key: str, turn: int, *, fork: bool) -> RewindPlan:
    from seam.apps.cli.exits import USAGE
    from seam.apps.cli.runner import CliError

    try:
        return await service.plan(key, turn, fork=fork)
    except TurnOutOfRange as exc:
        raise CliError(str(exc), USAGE) from None


async def _free_name(runtime: Runtime, base: str) -> str:
    """`base`, or `base-2`, `base-3`...: the first name no session has."""
    from seam.apps.cli.runner import session_key

    candidate, n = base, 1
    while await runtime.sessions.get(session_key(runtime, candidate)) is not None:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


async def _confirmed(plan: RewindPlan, yes: bool, what: str) -> bool:
    """Ask before overwriting the person's newer edits; without a terminal, refuse."""
    from seam.apps.cli.render import terminal_safe
    from seam.apps.cli.runner import CliError

    if not plan.edited or yes:
        return True
    files = ", ".join(plan.edited)
    if not sys.stdin.isatty():
        raise CliError(
            f"you changed {files} after the agent's last turn; {what} would overwrite it:"
            f" add --yes to go ahead (your version is kept in a checkpoint first)"
        )
    print(terminal_safe(f"you changed {files} after the agent's last turn."))
    try:
        answer = await asyncio.to_thread(input, f"overwrite with turn {plan.turn}'s state? [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


__all__ = ["changed_lines", "fork_session", "register", "rewind_session"]
