"""Repair on resume: what a claim of a submission does, read from what it already wrote.

A mixin of `Coordinator`, apart because it is the one place that reads a transcript
cut short (by a crash, an outage, a lost lease) and decides where the turn starts again:
the input never saved, a final reply already stored, streamed text the crash cut off,
tool calls without results (idempotent ones run again, the others answered "outcome
unknown"). It writes nothing itself; the claim writes the plan's repairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from seam.contracts.events import AgentEvent, TextDelta, ToolEnd, ToolStart
from seam.contracts.execution import (
    EventQuery,
    EventRecord,
    ExecutionStore,
    JournalEntry,
    Submission,
)
from seam.contracts.messages import Message, ToolCall
from seam.contracts.turn_extras import TurnExtras
from seam.core.coordinator_session import ClaimSession
from seam.core.event_log import decode, encode
from seam.core.model_step import CallModel, UserPrompt, continues_cut_off
from seam.core.tool_step import RunTools
from seam.core.turn import TurnStep

UNKNOWN_OUTCOME = (
    "outcome unknown: the process running this tool stopped before its result was saved, "
    "and the tool was not run again because running it twice may not be safe. Check its "
    "effects before relying on them or trying again."
)
CUT_OFF_NOTE = (
    "Note: your previous reply was cut off before it finished (the process running it "
    "stopped). Its text is kept above, marked as interrupted. Continue from where it "
    "stopped; do not repeat what was already said."
)
# Event types that end a model call's streamed text (text after them is a new call's).
_TEXT_BOUNDARIES = frozenset({"run_start", "tool_start", "tool_end", "done", "error", "halt"})


@dataclass(slots=True)
class RepairPlan:
    """What a claim does: write the repairs, then settle at once or run the turn from
    its starting step."""

    # The step the turn starts from: `UserPrompt(input)` on a first run, `RunTools` for
    # idempotent calls to run again, `CallModel` (with a cut-off note) to go on.
    start: TurnStep | None = None
    # Settle at once with this final reply.
    settle_with: str | None = None
    # Written before the turn continues: cut-off text, "outcome unknown" results.
    repairs: list[Message] = field(default_factory=list)
    # The calls `repairs` answers with UNKNOWN_OUTCOME (their log events: `write_repairs`).
    unanswered: list[ToolCall] = field(default_factory=list)


class Repairs:
    """`plan`: the repairs and the starting step of a claim."""

    store: ExecutionStore
    # The submissions whose claim under way in this process has started a turn.
    streamed: set[str]

    async def plan(
        self, sub: Submission, session: ClaimSession, *, rerun: bool = True
    ) -> RepairPlan:
        """What claiming `sub` does, from what it already wrote (nothing: a first run)."""
        # `steps` counts what it wrote: a first run needs no look at the transcript.
        written = await self.store.submission_messages(sub.id) if sub.steps else []
        if not written:
            return await self._from_the_input(sub)
        last = written[-1]
        if last.role == "assistant" and not last.tool_calls and not last.interrupted:
            return RepairPlan(settle_with=last.content)
        plan = RepairPlan()
        # A retry of a call already cut off keeps that first cut-off text only (the
        # model step stores no second one either): one interrupted message per call.
        # Calls whose results were never stored (held for the next write, `TurnJournal`)
        # run again or are answered: text streamed after them came from a model call
        # that had those results, and the call is made again.
        held_results = last.role == "assistant" and bool(last.tool_calls)
        cut_off = (
            ""
            if held_results or continues_cut_off(written)
            else await self._unsaved_text(sub, last)
        )
        if cut_off:
            plan.repairs.append(Message("assistant", cut_off, interrupted=True))
        model_step = CallModel(CUT_OFF_NOTE) if cut_off or last.interrupted else CallModel()
        again: list[ToolCall] = []
        asked = _last_calls(written)
        if asked is not None:
            calls, answered = asked
            for call in calls:
                if call.id in answered:
                    continue
                if rerun and session.is_idempotent(call.name):
                    again.append(call)
                else:
                    plan.repairs.append(
                        Message("tool", UNKNOWN_OUTCOME, tool_call_id=call.id, name=call.name)
                    )
                    plan.unanswered.append(call)
        plan.start = RunTools(tuple(again), then=model_step) if again else model_step
        return plan

    async def _from_the_input(self, sub: Submission) -> RepairPlan:
        """Nothing written: a first run, or one again after a crash before the turn's
        first durable write, which carries its input (`TurnJournal`: the input is durable
        in the submission row till then). Text the crashed model call streamed (the log
        has it) is kept, as it was when the input had a write of its own: the input and
        that text are stored together and the model is told it was cut off.

        Only a submission claimed before (an attempt counted) or retried in this claim
        (a store outage) can have such text: a first run reads nothing."""
        start = UserPrompt(sub.input)
        if sub.attempts <= 1 and sub.id not in self.streamed:
            return RepairPlan(start=start)
        cut_off = await self._unsaved_text(sub, None)
        if not cut_off:
            return RepairPlan(start=start)
        shown = tuple(await self.store.load_images(sub.images)) if sub.images else ()
        said = Message("user", sub.input, images=shown)
        cut = Message("assistant", cut_off, interrupted=True)
        return RepairPlan(start=CallModel(CUT_OFF_NOTE), repairs=[said, cut])

    async def write_repairs(
        self, sub: Submission, session: ClaimSession, owner: str, plan: RepairPlan
    ) -> None:
        """Store the plan's repairs with the log events that tell the same story: each call
        answered with UNKNOWN_OUTCOME gets its `tool_start` (when the crash came before the
        log had it) and a `tool_end`, so a replay of the log matches the transcript (found
        by the chaos suite: results without a `tool_start`)."""
        events: list[EventRecord] = []
        if plan.unanswered:
            records = await self.store.events(sub.session_key, EventQuery(submission_id=sub.id))
            started = {e.call_id for r in records for e in decode(r) if isinstance(e, ToolStart)}
            # After what the store holds and what this process numbered but may not have
            # written yet (a crashed turn's buffered events): never a reused number.
            stored = await self.store.last_seq(sub.session_key)
            seq = max(stored, session.loop.sequences.last(sub.session_key))
            key, redact = sub.session_key, session.loop.redact
            for call in plan.unanswered:
                told: list[AgentEvent] = []
                if call.id not in started:
                    told.append(ToolStart(key, "", seq + 1, call.id, call.name, call.arguments))
                    seq += 1
                told.append(
                    ToolEnd(key, "", seq + 1, call.id, call.name, UNKNOWN_OUTCOME, True, 0.0)
                )
                seq += 1
                events += [encode(event, sub.id, redact) for event in told]
        await self.store.append_for(sub.id, owner, JournalEntry(plan.repairs, events=events))
        if events:
            session.loop.sequences.record(sub.session_key, events[-1].seq)

    async def _unsaved_text(self, sub: Submission, last: Message | None) -> str:
        """Text the model streamed in this submission's last model call that never made
        it into the transcript (the event log has it; the crash came first)."""
        pieces: list[str] = []
        for record in await self.store.events(sub.session_key, EventQuery(submission_id=sub.id)):
            if record.type in _TEXT_BOUNDARIES:
                pieces = []
            elif record.type == "text_delta":
                pieces.extend(e.text for e in decode(record) if isinstance(e, TextDelta))
        text = "".join(pieces)
        if not text:
            return ""
        if last is not None and last.role == "assistant" and last.content.startswith(text):
            return ""  # stored after all: the crash came between storing and the next event
        return text


def _last_calls(written: Sequence[Message]) -> tuple[tuple[ToolCall, ...], set[str]] | None:
    """The last assistant message's tool calls and the ids already answered after it."""
    for index in range(len(written) - 1, -1, -1):
        message = written[index]
        if message.role == "assistant":
            if not message.tool_calls:
                return None
            answered = {m.tool_call_id for m in written[index + 1 :] if m.tool_call_id}
            return message.tool_calls, {a for a in answered if a is not None}
    return None


def resumed(start: TurnStep, extras: TurnExtras) -> TurnStep:
    """The step a first run starts from: a turn that goes on from tool results its
    caller added (`extras.resume`) calls the model instead of storing its input."""
    return CallModel() if extras.resume and isinstance(start, UserPrompt) else start
