"""One heartbeat: a lean turn over the checklist, delivered only when it found something.

`run_heartbeat` is the whole beat, and what a scheduler calls for a due slot:

1. skipped (and recorded so) in quiet hours, or when there is no checklist (an empty
   HEARTBEAT.md costs nothing: no model call). A beat run by hand is never skipped as
   "nothing new" (a person asked for it), but it records the fingerprint of what it
   read (`news.py`) as a scheduled beat does, so the next scheduled one can be;
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

from seam.contracts.delivery import Delivery, DeliveryError, Notice
from seam.contracts.dnd import DndChecker
from seam.contracts.events import AgentEvent, ToolApprovalRequired
from seam.contracts.execution import Submission
from seam.contracts.guardrail import UNAVAILABLE, ApprovalDecision
from seam.contracts.sessions import SessionStore
from seam.plugins.heartbeat.ledger import BeatDetails, BeatStatus, HeartbeatLedger, HeartbeatRun
from seam.plugins.heartbeat.news import BeatNews
from seam.plugins.heartbeat.personality import HEARTBEAT_PERSONALITY
from seam.plugins.heartbeat.reply import is_heartbeat_ok

log = logging.getLogger("seam.heartbeat")

REPLY_PREVIEW = 200
NO_CHECKLIST = "no checklist (write HEARTBEAT.md)"
QUIET = "quiet hours"


class BeatRuntime(Protocol):
    """What a beat needs of the runtime (`wiring.runtime.Runtime` is one)."""

    sessions: SessionStore

    # As a beat asks (`Runtime.ask` also takes fewer arguments, and more).
    async def ask(
        self,
        session: str,
        text: str,
        *,
        personality: str,
        submission_id: str,
        on_event: Callable[[AgentEvent], None],
    ) -> Submission: ...

    def session_key_for(self, name: str) -> str: ...

    def respond_to(self, session_key: str, call_id: str, decision: ApprovalDecision) -> bool: ...


def nobody_answers(runtime: BeatRuntime) -> Callable[[AgentEvent], None]:
    """A beat's events: nobody watches a beat, so a tool call that asks for approval is
    answered `unavailable` at once (it does not run, and the model is told no one was
    there to approve it) instead of waiting out the approval timeout for nobody."""

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, ToolApprovalRequired):
            runtime.respond_to(event.session_key, event.call_id, UNAVAILABLE)

    return on_event


def slot_name(at: float) -> str:
    """A beat's slot as it appears in keys and session names: UTC, to the second."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def beat_message(at: float) -> str:
    when = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"Heartbeat, {when}. Go through your checklist."


async def skip_reason(dnd: DndChecker | None, checklist: str, now: float) -> str | None:
    """Why a beat due now does not run (quiet hours, no checklist), or None: it runs."""
    if dnd is not None and await dnd.is_quiet_now(now):
        return QUIET
    if not checklist.strip():
        return NO_CHECKLIST
    return None


async def settle_beat(
    store: SessionStore,
    delivery: Delivery,
    *,
    session: str,
    session_key: str,
    sub: Submission,
    key: str,
    target: str = "owner",
    urgent: bool = False,
) -> tuple[BeatStatus, BeatDetails]:
    """What a settled beat comes to: dropped as the all-clear (`ok`), handed to the
    Delivery (`delivered`, with its verdict) or `failed`; with the details the ledger keeps
    (tokens and cost from the beat's own session, which holds nothing else)."""
    totals = await store.usage_totals(session_key)
    details: BeatDetails = {
        "session": session,
        "submission": sub.id,
        "input_tokens": totals.usage.input_tokens,
        "output_tokens": totals.usage.output_tokens,
        "cost": totals.cost_usd if totals.calls > totals.unpriced_calls else None,
    }
    if sub.outcome != "completed":
        return "failed", {**details, "reason": sub.error or f"the turn {sub.outcome}"}
    reply = sub.result or ""
    details["reply"] = reply.strip()[:REPLY_PREVIEW]
    if is_heartbeat_ok(reply):
        return "ok", details
    try:
        result = await delivery.deliver(
            target, reply, Notice(key=key, source=sub.id, urgent=urgent)
        )
    except DeliveryError as exc:
        return "failed", {**details, "reason": f"cannot deliver: {exc}"}
    return "delivered", {**details, "delivery": result.verdict}


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
    news: BeatNews | None = None,
) -> HeartbeatRun:
    """Run the beat due at `slot` (default: now) and record it; see the module doc.
    `checklist` is the text the `heartbeat` personality will carry (only its emptiness
    is decided here)."""
    started = clock()
    name = slot_name(started if slot is None else slot)
    inputs = None if news is None else news.inputs(checklist, started)
    read: BeatDetails = {} if inputs is None else {"inputs": inputs, "inputs_at": started}

    def record(status: BeatStatus, details: BeatDetails) -> HeartbeatRun:
        run = HeartbeatRun(name, status, started, clock(), **(details | read))
        ledger.append(run)
        return run

    reason = await skip_reason(dnd, checklist, started)
    if reason is not None:
        return record("skipped", {"reason": reason})
    session = sub_id = f"heartbeat:{name}"
    try:
        sub = await runtime.ask(
            session,
            beat_message(started),
            personality=personality,
            submission_id=sub_id,
            on_event=nobody_answers(runtime),
        )
    except Exception as exc:
        log.warning("heartbeat %s failed: %s", name, exc)
        return record("failed", {"reason": str(exc) or type(exc).__name__, "session": session})
    status, details = await settle_beat(
        runtime.sessions,
        delivery,
        session=session,
        session_key=runtime.session_key_for(session),
        sub=sub,
        key=f"heartbeat:{name}",
        target=target,
    )
    return record(status, details)
