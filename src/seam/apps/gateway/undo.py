"""`/undo` in a chat: take back the last turn of the chat's conversation that changed
files, through the service every surface shares (`Runtime.checkpoints`, docs/undo.md).

A chat cannot ask a yes/no question in the middle of a command, so a file the person
changed after the agent's turn is named and left alone: `/undo yes` overwrites it (its
newer content is kept in a checkpoint first). A running turn is stopped first (`/stop`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from seam.contracts.checkpoints import NothingToUndo
from seam.contracts.execution import UNSETTLED
from seam.contracts.rewind import restore_verb

if TYPE_CHECKING:
    from seam.wiring.runtime import Runtime

# The most files a reply names one by one (the rest are counted).
LISTED = 20


async def undo_reply(runtime: Runtime, key: str, argument: str) -> str:
    """The reply to `/undo` (or `/undo yes`) in the conversation stored under `key`."""
    service = runtime.checkpoints
    if service is None:
        return "Undo is off here (checkpoints are off in the agent's config)."
    if await runtime.sessions.get(key) is None:
        return "Nothing to undo: this conversation has no turns yet."
    if await runtime.store.submissions(key, UNSETTLED):
        return "I'm still working on a turn: /stop it first, then /undo."
    try:
        plan = await service.plan_undo(key)
    except NothingToUndo:
        return "Nothing to undo: no turn of this conversation changed files."
    if plan.edited and argument != "yes":
        return (
            f"You changed {', '.join(plan.edited)} after turn {plan.turn}. Send /undo yes to"
            " overwrite it with the state before the turn (your version is kept)."
        )
    done = await service.undo(plan)
    named = [f"{restore_verb(c)} {c.path}" for c in done.restored[:LISTED]]
    if len(done.restored) > LISTED:
        named.append(f"and {len(done.restored) - LISTED} more")
    files = "; ".join(named) if named else "its file changes were already gone"
    return f"Undid turn {plan.turn}: {files}. I no longer remember that turn."


__all__ = ["undo_reply"]
