"""The turn's input goes in with its first durable write (`TurnJournal(holds_input=True)`):
a crash before that write loses nothing (the submission row holds the input) and the
resume stores it exactly once, with any text the crashed model call streamed."""

from __future__ import annotations

from seam.contracts.events import TextDelta
from seam.contracts.execution import EventRecord, JournalEntry, Settlement, Submission
from seam.contracts.messages import Message
from seam.core.compression import SUMMARY_PROMPT
from seam.core.coordinator import CUT_OFF_NOTE, Coordinator
from seam.core.event_log import encode_deltas
from seam.core.execution import InMemoryExecutionStore
from seam.core.loop import AgentLoop
from seam.core.scripted_model import call, text_step, tool_step
from seam.core.session_factory import SessionFactory
from tests.core.test_compression import chat_model
from tests.core.test_coordinator import KEY, build, crashed_claim


def _said(messages: list[Message]) -> list[tuple[str, str, bool]]:
    return [(m.role, m.content, m.interrupted) for m in messages]


async def test_a_crash_before_the_first_write_resumes_with_the_input_once() -> None:
    factory, model, _ = build([text_step("Paris.")])
    await crashed_claim(factory, "capital of France?")  # claimed, nothing written
    [sub] = await factory.coordinator.resume_pending(factory.resolve)
    assert (sub.outcome, sub.result, sub.attempts) == ("completed", "Paris.", 2)
    assert _said(await factory.store.messages(KEY)) == [
        ("user", "capital of France?", False),
        ("assistant", "Paris.", False),
    ]
    assert CUT_OFF_NOTE not in model.requests[0].system


async def test_text_the_crashed_first_call_streamed_is_kept_with_the_input() -> None:
    factory, model, _ = build([text_step("The capital is Paris.")])
    sid = await crashed_claim(factory, "capital of France?")
    await _streamed(factory, sid, "The cap", "ital")  # stored by the log, then the kill
    [resumed] = await factory.coordinator.resume_pending(factory.resolve)
    assert (resumed.result, resumed.attempts) == ("The capital is Paris.", 2)
    transcript = await factory.store.messages(KEY)
    assert _said(transcript) == [
        ("user", "capital of France?", False),
        ("assistant", "The capital", True),
        ("assistant", "The capital is Paris.", False),
    ]
    assert CUT_OFF_NOTE in model.requests[0].system


async def _streamed(factory: SessionFactory, sid: str, *pieces: str) -> None:
    """The log as a model call of submission `sid` left it, streaming `pieces`."""
    start = EventRecord(KEY, 1, 1, "run_start", "{}", sid)
    deltas = [TextDelta(KEY, "t1", 2 + n, piece) for n, piece in enumerate(pieces)]
    await factory.store.append_events([start, encode_deltas(deltas, sid)])


class Writes(InMemoryExecutionStore):
    """Records the roles of each transcript write (`append_for`, a settlement's journal)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[list[str]] = []

    async def append_for(self, submission_id: str, owner: str, entry: JournalEntry) -> None:
        self.writes.append([m.role for m in entry.messages])
        await super().append_for(submission_id, owner, entry)

    async def settle(
        self, submission_id: str, owner: str | None, settlement: Settlement
    ) -> Submission:
        if settlement.journal is not None:
            self.writes.append([m.role for m in settlement.journal.messages])
        return await super().settle(submission_id, owner, settlement)


async def test_the_input_goes_in_with_the_tool_call_before_any_tool_runs() -> None:
    store = Writes()
    factory, _, tools = build([tool_step(call("lookup")), text_step("found")], store=store)
    session = await factory.get_or_create_root(KEY)
    sub = await session.ask("look it up")
    assert (sub.result, tools["lookup"].runs) == ("found", 1)
    assert [(m.role, m.content) for m in await store.messages(KEY)] == [
        ("user", "look it up"),
        ("assistant", ""),
        ("tool", "lookup ran 1"),
        ("assistant", "found"),
    ]
    # The input is no write of its own: it goes with the intent, before the tool runs;
    # the quick result of a tool that may run again goes with the answer.
    assert store.writes == [["user", "assistant"], ["tool", "assistant"]]


async def test_a_one_reply_turn_writes_its_input_and_answer_with_the_settlement() -> None:
    store = Writes()
    factory, _, _ = build([text_step("hello")], store=store)
    session = await factory.get_or_create_root(KEY)
    await session.ask("hi")
    assert store.writes == [["user", "assistant"]]
    assert [m.content for m in await store.messages(KEY)] == ["hi", "hello"]


async def test_a_turn_that_compacts_before_its_first_call_still_sends_its_input() -> None:
    """Compaction reads the stored history: the held input is stored first, so the
    compacted request still ends with the question asked, stored once."""
    store = InMemoryExecutionStore()
    model = chat_model()
    loop = AgentLoop(model=model, sessions=store)
    factory = SessionFactory(loop, store, Coordinator(store, owner="me"))
    session = await factory.get_or_create_root(KEY)
    for n in range(40):
        sub = await session.ask(f"question {n:03d} " + "y" * 200)
        assert (sub.result or "").startswith(f"answer to question {n:03d}")
    answered = [r for r in model.requests if r.system != SUMMARY_PROMPT]
    assert len(answered) < len(model.requests)  # it did compact
    for n, request in enumerate(answered):
        assert request.messages[-1].content.startswith(f"question {n:03d}")
    questions = [m.content[:12] for m in await store.messages(KEY) if m.role == "user"]
    asked = [q for q in questions if q.startswith("question ")]
    assert asked == [f"question {n:03d}" for n in range(40)]
