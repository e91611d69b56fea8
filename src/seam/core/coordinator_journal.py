"""What a claimed turn writes, in as few transactions as durability allows.

A turn writes its transcript at each step's end. Most of those writes must commit
before the turn goes on: the user's message and the results of tools (what a resume
starts from), and above all an assistant message that asks for tool calls, which is the
intent that must be durable before any tool has a side effect. The final answer is
different: nothing happens after it but the turn's `done`, so it waits and commits with
the settlement (`Settlement.journal`), in one transaction: the answer is durable no
later than the acknowledgement, and an answer never settles without its events.

The event log rides along: its records go with the next transcript write
(`EventRecorder.handover`), and the last ones with the settlement, so a quick turn makes
no event write of its own.

Tool results are held too when losing them costs nothing but running the tools again:
every tool of the step may run twice (`idempotent`, which is also what lets a resume run
it again) and the step took less than `QUICK_TOOLS_SECONDS`. They go in with the turn's
next write (the model's next step, or the answer with the settlement). A crash before it
finds the calls without results and runs them again, as after a crash during the tools
(`Repairs.plan`, which then drops the text the model streamed after them: its call never
had the results in its stored history). A slow step's results, or any result of a tool
that may not run twice, commit before the turn goes on. Their log events are not held:
the recorder stores them in order, so the log never has a gap a replay would skip.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from seam.contracts.execution import EventRecord, ExecutionStore, JournalEntry
from seam.contracts.messages import Message
from seam.contracts.sessions import UsageRecord
from seam.core.event_log import EventRecorder

EMPTY = JournalEntry(())
# A step of tools that may run twice and ended within this many seconds of its calls'
# write: its results are held for the next write (see the module docstring).
QUICK_TOOLS_SECONDS = 1.0
# Whether the tool named may run again after a crash (`ClaimSession.is_idempotent`).
Rerunnable = Callable[[str], bool]


def is_answer(messages: Sequence[Message]) -> bool:
    """A final answer: one complete assistant message that asks for no tool call."""
    if len(messages) != 1:
        return False
    message = messages[0]
    return message.role == "assistant" and not message.tool_calls and not message.interrupted


def joined(first: JournalEntry, then: JournalEntry) -> JournalEntry:
    """Both entries as one write, `first` before `then`."""
    if first is EMPTY:
        return then
    return JournalEntry(
        (*first.messages, *then.messages),
        usage=(*first.usage, *then.usage),
        events=(*first.events, *then.events),
    )


class TurnJournal:
    """The transcript writer of one claim, and what it holds back for the settlement.

    `holds_input`: the turn starts by storing its input (`UserPrompt`). That message is
    durable already, in the submission row, so it is held and goes in with the turn's
    next write (the model's reply: the assistant message asking for tools, or the answer
    with the settlement) instead of a transaction of its own. A crash before that write
    loses nothing: the claim that resumes finds nothing written and stores the input
    then, with any text the crashed call streamed (`Repairs.plan`). Writing with no
    messages stores what is held (compaction does, before it reads the stored history).
    """

    def __init__(
        self,
        store: ExecutionStore,
        submission_id: str,
        owner: str,
        recorder: EventRecorder,
        *,
        holds_input: bool = False,
        rerunnable: Rerunnable | None = None,
    ) -> None:
        self._store = store
        self._submission_id = submission_id
        self._owner = owner
        self.recorder = recorder
        self._held = EMPTY
        self._input = holds_input
        self._rerunnable = rerunnable
        self._written_at = time.monotonic()  # the last write's commit (a step's calls')

    async def write(self, messages: Sequence[Message], usage: Sequence[UsageRecord]) -> None:
        """The turn's `TranscriptWriter`. The recorder stores events behind the turn's
        back; repair reads the log beside the transcript (`_unsaved_text`), so the log
        must never lag it: what it has not stored goes in this write."""
        if self._input:
            self._input = False
            if len(messages) == 1 and messages[0].role == "user" and not usage:
                self._held = JournalEntry(messages)
                return
        held = self._held
        if not (messages or usage or held.messages):
            return  # nothing to store: no transaction
        if self._may_hold(messages):
            # Their events stay with the recorder, which stores them in order.
            self._held = joined(held, JournalEntry(messages, usage=usage))
            return
        events: Sequence[EventRecord] = (
            await self.recorder.handover() if messages or held.messages else ()
        )
        entry = joined(held, JournalEntry(messages, usage=usage, events=events))
        if is_answer(messages):
            self._held = entry  # written with the settlement (or `release`)
            return
        self._held = EMPTY
        await self._store.append_for(self._submission_id, self._owner, entry)
        self._written_at = time.monotonic()

    def _may_hold(self, messages: Sequence[Message]) -> bool:
        """Whether `messages` are a quick step's results of tools that may run again."""
        rerunnable = self._rerunnable
        if rerunnable is None or not messages:
            return False
        if any(m.role != "tool" or not m.name for m in messages):
            return False
        if time.monotonic() - self._written_at >= QUICK_TOOLS_SECONDS:
            return False
        return all(rerunnable(message.name or "") for message in messages)

    async def tail(self) -> JournalEntry | None:
        """What is left to write when the turn is over: the held answer and every event
        not stored yet; None when nothing is. The caller writes it (with its settlement)."""
        events = await self.recorder.handover()
        entry = joined(self._held, JournalEntry((), events=events))
        self._held = EMPTY
        if not (entry.messages or entry.usage or entry.events):
            return None
        return entry

    async def abandon(self) -> None:
        """The turn stopped on an error: write what was held (best effort, it may be the
        error), then store the events left."""
        entry = self._held
        self._held = EMPTY
        try:
            if entry is not EMPTY:
                events = await self.recorder.handover()
                await self._store.append_for(
                    self._submission_id, self._owner, joined(entry, JournalEntry((), events=events))
                )
        finally:
            await self.recorder.aclose()
