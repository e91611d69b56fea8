"""How often driving a turn has raised (not a turn that settled failed: that one answers
with its error), kept in the store so the limit of `ATTEMPTS` holds across restarts.

A turn whose driving raises (the store refused to take its lease, say) is driven again
by the gateway's rescue loop; counted only in memory, every restart gave it `ATTEMPTS`
more tries, and a fault that outlives the process was re-run forever, one restart at a
time. Each failure is one outbox row, `<submission id>:turn-failed:<n>` under the target
`gateway-turn:<chat>/` (no deliverer claims it), marked sent at once: history, never
pending, so nothing sends it and no report counts it as stuck.
"""

from __future__ import annotations

from seam.apps.gateway.inbox import ATTEMPTS
from seam.contracts.chat import ChatRef
from seam.contracts.outbox import Outbox, OutboxQuery, Outgoing

TURN_PREFIX = "gateway-turn:"


class TurnFailures:
    """The failed drivings of each turn, counted in `outbox` (cached per process)."""

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox
        self._counts: dict[str, int] = {}

    async def count(self, sid: str) -> int:
        """How many times driving `sid` has raised, in this process or an earlier one."""
        known = self._counts.get(sid)
        if known is None:
            query = OutboxQuery(source=sid, target_prefix=TURN_PREFIX, limit=ATTEMPTS + 1)
            known = self._counts[sid] = len(await self.outbox.outbox_items(query))
        return known

    async def record(self, sid: str, chat: ChatRef, error: str) -> int:
        """Keep one more failure of `sid`; the count with it."""
        tries = await self.count(sid) + 1
        key = f"{sid}:turn-failed:{tries}"
        await self.outbox.enqueue(key, Outgoing(f"{TURN_PREFIX}{chat}/", error, source=sid))
        await self.outbox.mark_sent(key, delivered_id="recorded")
        self._counts[sid] = tries
        return tries

    async def given_up(self, sid: str) -> bool:
        """Whether `sid` has had its `ATTEMPTS` tries (it is not driven again)."""
        return await self.count(sid) >= ATTEMPTS


__all__ = ["TURN_PREFIX", "TurnFailures"]
