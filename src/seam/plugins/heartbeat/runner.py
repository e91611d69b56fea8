"""One heartbeat: a lean turn over the checklist, delivered only when it found something.

`run_heartbeat` is the whole beat, and what a scheduler calls for a due slot:

1. skipped (and recorded so) in quiet hours, or when there is no checklist (an empty
   HEARTBEAT.md costs nothing: no model call);
2. otherwise one durable turn as the `heartbeat` personality (checklist + memory, no
   tools: see `personality.py`) in a fresh session per slot, `heartbeat:<slot>`. Fresh,
   not one reused session: a reused one would carry every earlier beat into each prompt
   and grow without bound (the 150K-token heartbeats of openclaw #64293); a fresh one is
   the same small prompt every time, and its tokens are exactly the beat's. The
   submission id is the slot's, so running a slot twice admits one turn;
3. the reply is dropped when it is the all-clear (`reply.is_heartbeat_ok`), else handed to
   the `Delivery` (target `owner` by default) under the key `heartbeat:<slot>`;
4. the beat's tokens and cost (the session's usage totals) go to the ledger.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

from seam.contracts.delivery import Delivery, DeliveryError
from seam.contracts.dnd import DndChecker
from seam.contracts.execution import Submission
from seam.contracts.sessions import SessionStore
from seam.plugins.heartbeat.ledger import BeatStatus, HeartbeatLedger, HeartbeatRun
from seam.plugins.heartbeat.personality import HEARTBEAT_PERSONALITY
from seam.plugins.heartbeat.reply import is_heartbeat_ok

log = logging.getLogger("seam.heartbeat")

REPLY_PREVIEW = 200
NO_CHECKLIST = "no checklist (write HEARTBEAT.md)"
QUIET = "quiet hours"


class BeatRuntime(Protocol):
    """What a beat needs of the runtime (`wiring.runtime.Runtime` is one)."""

    sessions: SessionStore

    async def ask(
        self,
        session: str,
        text: str,
        *,
        personality: str | None = None,
        submission_id: str | None = None,
    ) -> Submission: ...

    def session_key_for(self, name: str) -> str: ...


def slot_name(at: float) -> str:
    """A beat's slot as it appears in keys and session names: UTC, to the minute."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%MZ")


def beat_message(at: float) -> str:
    when = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"Heartbeat, {when}. Go through your checklist."


async def run_heartbeat(
    runtime: BeatRuntime,
    delivery: Delivery,
    dnd: DndChecker | None,
    clock: Callable[[], float],
    *,
    ledger: HeartbeatLedger,
    checklist: str,
    target: str = "owner",
    slot: float | None = None,
    personality: str = HEARTBEAT_PERSONALITY,
) -> HeartbeatRun:
    """Run the beat due at `slot` (default: now) and record it; see the module doc.
    `checklist` is the text the `heartbeat` personality will carry (only its emptiness
    is decided here)."""
    started = clock()
    name = slot_name(started if slot is None else slot)

    def record(status: BeatStatus, **details: object) -> HeartbeatRun:
        run = HeartbeatRun(name, status, started, clock(), **details)  # type: ignore[arg-type]
        ledger.append(run)
        return run

    if dnd is not None and await dnd.is_quiet_now(started):
        return record("skipped", reason=QUIET)
    if not checklist.strip():
        return record("skipped", reason=NO_CHECKLIST)
    session = f"heartbeat:{name}"
    sub_id = f"heartbeat:{name}"
    try:
        sub = await runtime.ask(
            session, beat_message(started), personality=personality, submission_id=sub_id
        )
    except Exception as exc:
        log.warning("heartbeat %s failed: %s", name, exc)
        return record("failed", reason=str(exc) or type(exc).__name__, session=session)
    totals = await runtime.sessions.usage_totals(runtime.session_key_for(session))
    usage = {
        "session": session,
        "submission": sub.id,
        "input_tokens": totals.usage.input_tokens,
        "output_tokens": totals.usage.output_tokens,
        "cost": totals.cost_usd if totals.calls > totals.unpriced_calls else None,
    }
    if sub.outcome != "completed":
        return record("failed", reason=sub.error or f"the turn {sub.outcome}", **usage)
    reply = sub.result or ""
    preview = reply.strip()[:REPLY_PREVIEW]
    if is_heartbeat_ok(reply):
        return record("ok", reply=preview, **usage)
    try:
        result = await delivery.deliver(target, reply, key=f"heartbeat:{name}", source=sub.id)
    except DeliveryError as exc:
        return record("failed", reason=f"cannot deliver: {exc}", reply=preview, **usage)
    return record("delivered", delivery=result.verdict, reply=preview, **usage)
