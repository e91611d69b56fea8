"""`/undo`, `/diff`, `/rewind N` and `/retry` in `seam chat`: the chat's doors to the services every
surface shares (`Runtime.checkpoints`, `seam.wiring.rewind.rewinder`; docs/undo.md).

They act on the chat's current session. A file the person changed after the agent's turn
is never overwritten without a question on the chat's own input (a `y` goes ahead; the
newer content is kept in a checkpoint first, and its id printed).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from seam.apps.cli.render import terminal_safe
from seam.apps.cli.runner import CliError, session_key
from seam.contracts.checkpoints import CheckpointService, NothingToUndo
from seam.contracts.rewind import TurnOutOfRange

if TYPE_CHECKING:
    from seam.wiring.runtime import Runtime

COMMANDS = (
    ("/undo", "take back the last turn that changed files (files and conversation)"),
    ("/diff [N]", "what the last turn that changed files (or turn N) did to them"),
    ("/rewind N", "go back to the end of turn N: later turns and their file changes go"),
)
Handler = Callable[[str], Awaitable[None]]


class UndoCommands:
    """The three handlers over a chat's runtime, its current session (`session()`), its
    output (`say`) and its input (`ask`: a line, None at end of input)."""

    def __init__(
        self,
        runtime: Runtime,
        session: Callable[[], str],
        say: Callable[[str], None],
        ask: Callable[[str], Awaitable[str | None]],
    ) -> None:
        self.runtime = runtime
        self.session = session
        self.say = say
        self.ask = ask

    def handlers(self) -> dict[str, Handler]:
        return {"/undo": self.undo, "/diff": self.diff, "/rewind": self.rewind}

    async def undo(self, arg: str) -> None:
        from seam.apps.cli.undo import print_undone

        service, key = await self._service_and_key()
        try:
            plan = await service.plan_undo(key)
        except NothingToUndo as exc:
            self.say(str(exc))
            return
        if plan.edited and not await self._agrees(plan.edited, plan.turn):
            self.say("nothing undone")
            return
        print_undone(self.session(), await service.undo(plan))

    async def diff(self, arg: str) -> None:
        turn = _turn_number(arg, "/diff [N]") if arg else None
        service, key = await self._service_and_key()
        found = await service.changes(key, turn)
        if found is None:
            self.say(
                f"turn {turn} changed no files"
                if turn is not None
                else "no turn of this session changed files"
            )
        elif not found.diff.changes:
            self.say(f"turn {found.turn} left the files as they were")
        else:
            self.say(terminal_safe(found.diff.text.rstrip("\n")))

    async def rewind(self, arg: str) -> None:
        from seam.apps.cli.rewind import changed_lines
        from seam.wiring.rewind import rewinder

        turn = _turn_number(arg, "/rewind N")
        key = await self._key()
        service = rewinder(self.runtime)
        try:
            plan = await service.plan(key, turn)
        except TurnOutOfRange as exc:
            raise CliError(str(exc)) from None
        if plan.edited and not await self._agrees(plan.edited, plan.turn):
            self.say("nothing rewound")
            return
        done = await service.rewind(plan)
        lines = [f"rewound to turn {turn} (of {plan.turns})", *changed_lines(done.restored, plan)]
        lines.append(f"removed {done.removed_messages} messages of the later turns")
        self.say(terminal_safe("\n".join(lines)))

    async def take_back_last(self) -> str | None:
        """`/retry`: the last turn taken back (its messages dropped, the files it changed
        put back, as `/rewind` does), and its user message returned to run again; None
        when the person would rather keep their own later edits to those files."""
        from seam.wiring.rewind import rewinder

        key = await self._key()
        messages = await self.runtime.sessions.messages(key)
        text = next((m.content for m in reversed(messages) if m.role == "user"), "")
        service = rewinder(self.runtime)
        try:
            plan = await service.plan(key, 0)
            if plan.turns > 1:
                plan = await service.plan(key, plan.turns - 1)
        except TurnOutOfRange as exc:
            raise CliError(str(exc)) from None
        if not text.strip():
            raise CliError("nothing to retry: this session has no message of yours")
        if plan.edited and not await self._agrees(plan.edited, plan.turn):
            self.say("nothing retried")
            return None
        await service.rewind(plan)
        return text

    async def _key(self) -> str:
        key = session_key(self.runtime, self.session())
        if await self.runtime.sessions.get(key) is None:
            raise CliError("nothing yet in this session")
        return key

    async def _service_and_key(self) -> tuple[CheckpointService, str]:
        service = self.runtime.checkpoints
        if service is None:
            raise CliError("checkpoints are off ([checkpoints] enabled = false in config.toml)")
        return service, await self._key()

    async def _agrees(self, edited: tuple[str, ...], turn: int) -> bool:
        self.say(terminal_safe(f"you changed {', '.join(edited)} after turn {turn}."))
        answer = await self.ask("overwrite it? your version is kept in a checkpoint [y/N] ")
        return (answer or "").strip().lower() in ("y", "yes")


def _turn_number(arg: str, usage: str) -> int:
    try:
        return int(arg)
    except ValueError:
        raise CliError(f"usage: {usage} (a turn number)") from None


__all__ = ["COMMANDS", "UndoCommands"]
