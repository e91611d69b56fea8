"""The Coordinator and the SessionFactory over the in-memory execution store: fresh runs,
queueing, retries, aborts and every resume-with-repair case."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from seam.contracts.events import AgentEvent, Done, TextDelta
from seam.contracts.execution import (
    UNSETTLED,
    ClaimScope,
    EventQuery,
    EventRecord,
    JournalEntry,
    Settlement,
    Submission,
)
from seam.contracts.messages import Message
from seam.contracts.tools import ToolContext
from seam.core import coordinator_journal
from seam.core.coordinator import CUT_OFF_NOTE, UNKNOWN_OUTCOME, Coordinator
from seam.core.event_log import decode, encode_deltas, replay
from seam.core.execution import InMemoryExecutionStore
from seam.core.identity import InvalidSessionName
from seam.core.loop import AgentLoop
from seam.core.model_step import CallModel, UserPrompt
from seam.core.scripted_model import ScriptedModel, call, error_step, text_step, tool_step
from seam.core.session_factory import SessionFactory
from seam.core.tool_registry import DefaultToolRegistry
from seam.core.tool_step import RunTools

KEY = 'agent-session:["local","default","main"]'


class CountingTool:
    """A tool that counts its runs, so a test can see whether a resume ran it again."""

    def __init__(self, name: str, *, idempotent: bool) -> None:
        self.name = name
        self.description = f"{name} for tests"
        self.parameters: Mapping[str, Any] = {"type": "object", "properties": {}}
        self.concurrent = False
        self.idempotent = idempotent
        self.runs = 0

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        self.runs += 1
        return f"{self.name} ran {self.runs}"


def build(
    steps: list[Any],
    *,
    backoff: tuple[float, ...] = (0.0,),
    compress: Any = None,
    store: InMemoryExecutionStore | None = None,
    lease: float = 30.0,
    extra_tools: tuple[Any, ...] = (),
) -> tuple[SessionFactory, ScriptedModel, dict[str, CountingTool]]:
    store = store if store is not None else InMemoryExecutionStore()
    model = ScriptedModel(steps)
    tools = {
        "lookup": CountingTool("lookup", idempotent=True),
        "send_email": CountingTool("send_email", idempotent=False),
    }
    registry = DefaultToolRegistry()
    for tool in (*tools.values(), *extra_tools):
        registry.register_tool(tool)
    loop = AgentLoop(model=model, tools=registry, sessions=store)
    coordinator = Coordinator(
        store,
        owner="me",
        lease=lease,
        backoff=backoff,
        compress=compress,
        dead_owners=dead_crashed,
    )
    return SessionFactory(loop, store, coordinator), model, tools


def dead_crashed(owners: Any) -> list[str]:
    return [o for o in owners if o.startswith("crashed")]


async def crashed_claim(factory: SessionFactory, text: str, *written: Message) -> str:
    """A submission a crashed worker claimed and wrote `written` for."""
    store = factory.store
    session = await factory.get_or_create_root(KEY)
    sub = await session.submit(text)
    await store.claim("crashed-worker", scope=ClaimScope(submission_id=sub.id))
    if written:
        await store.append_for(sub.id, "crashed-worker", JournalEntry(written))
    return sub.id


async def test_a_submission_runs_to_completion_and_its_events_replay() -> None:
    factory, _, _ = build([text_step("Hello there", chunk=3)])
    session = await factory.get_or_create_root(KEY)
    live: list[AgentEvent] = []
    sub = await session.ask("hi", on_event=live.append)
    assert (sub.state, sub.outcome, sub.result, sub.attempts) == (
        "settled",
        "completed",
        "Hello there",
        1,
    )
    messages = await factory.store.messages(KEY)
    assert [(m.role, m.content) for m in messages] == [
        ("user", "hi"),
        ("assistant", "Hello there"),
    ]
    assert await replay(factory.store, KEY) == live
    # A reconnecting surface gets exactly what came after its last event.
    middle = live[2].seq
    assert await replay(factory.store, KEY, after_seq=middle) == live[3:]


async def test_messages_to_a_busy_session_queue_behind_it() -> None:
    factory, model, _ = build([text_step("first answer"), text_step("second answer")])
    session = await factory.get_or_create_root(KEY)
    a = await session.submit("one")
    b = await session.submit("two")
    settled = await factory.coordinator.drain_runnable(factory.resolve)
    assert [(s.id, s.result) for s in settled] == [(a.id, "first answer"), (b.id, "second answer")]
    roles = [(m.role, m.content) for m in await factory.store.messages(KEY)]
    assert roles == [
        ("user", "one"),
        ("assistant", "first answer"),
        ("user", "two"),
        ("assistant", "second answer"),
    ]
    # The second turn saw the whole first exchange.
    assert [m.content for m in model.requests[1].messages] == [
        "one",
        "first answer",
        "two",
    ]


async def test_sequence_numbers_continue_across_turns() -> None:
    factory, _, _ = build([text_step("a"), text_step("b")])
    session = await factory.get_or_create_root(KEY)
    await session.ask("one")
    first_last = await factory.store.last_seq(KEY)
    factory.loop.sequences.forget(KEY)  # a new process knows nothing
    await session.ask("two")
    events = await replay(factory.store, KEY)
    seqs = [e.seq for e in events]
    assert seqs == sorted(set(seqs)) and min(seqs[len(seqs) // 2 :]) > first_last - 10
    assert seqs == list(range(1, len(seqs) + 1))


async def test_resume_requeues_input_that_was_never_saved() -> None:
    factory, _, _ = build([text_step("answer")])
    sid = await crashed_claim(factory, "question")
    [sub] = await factory.coordinator.resume_pending(factory.resolve)
    assert (sub.id, sub.outcome, sub.result, sub.attempts) == (sid, "completed", "answer", 2)
    assert [m.content for m in await factory.store.messages(KEY)] == ["question", "answer"]


async def test_resume_settles_a_saved_final_reply_without_the_model() -> None:
    factory, model, _ = build([])
    await crashed_claim(
        factory, "question", Message("user", "question"), Message("assistant", "the answer")
    )
    [sub] = await factory.coordinator.resume_pending(factory.resolve)
    assert (sub.outcome, sub.result) == ("completed", "the answer")
    assert model.requests == []
    assert len(await factory.store.messages(KEY)) == 2


async def test_a_saved_reply_whose_done_event_was_lost_gets_one_on_resume() -> None:
    # The worker stored the answer and died before the turn's `done` reached the log: a
    # follower of the session must still see the turn end, once (found by the chaos suite).
    factory, _, _ = build([])
    sid = await crashed_claim(
        factory, "question", Message("user", "question"), Message("assistant", "the answer")
    )
    await factory.coordinator.resume_pending(factory.resolve)
    await factory.coordinator.resume_pending(factory.resolve)
    records = await factory.store.events(KEY, EventQuery(submission_id=sid))
    assert [r.type for r in records] == ["done"]
    [event] = [e for r in records for e in decode(r)]
    assert isinstance(event, Done) and event.text == "the answer" and event.seq == 1


async def test_a_call_answered_by_the_repair_is_in_the_log_too() -> None:
    # The worker stored the model's call and died before its `tool_start` reached the log:
    # the repair's unknown-outcome result comes with a tool_start and a tool_end, so a
    # replay of the log tells the transcript's story (found by the chaos suite).
    factory, _, _ = build([text_step("sorry")])
    email = call("send_email")
    sid = await crashed_claim(
        factory, "mail it", Message("user", "mail it"), Message("assistant", "", (email,))
    )
    [sub] = await factory.coordinator.resume_pending(factory.resolve)
    assert sub.outcome == "completed"
    records = await factory.store.events(KEY, EventQuery(submission_id=sid))
    told = [e for r in records for e in decode(r)]
    assert [(e.type, getattr(e, "call_id", None)) for e in told[:2]] == [
        ("tool_start", email.id),
        ("tool_end", email.id),
    ]
    seqs = [e.seq for e in told]
    assert seqs == sorted(set(seqs))


async def test_resume_reruns_idempotent_tools_and_marks_others_unknown() -> None:
    factory, model, tools = build([text_step("all done")])
    lookup = call("lookup")
    email = call("send_email")
    other = call("lookup")
    await crashed_claim(
        factory,
        "do it",
        Message("user", "do it"),
        Message("assistant", "", (lookup, email, other)),
        Message("tool", "lookup ran 0", tool_call_id=lookup.id, name="lookup"),
    )
    [sub] = await factory.coordinator.resume_pending(factory.resolve)
    assert (sub.outcome, sub.result) == ("completed", "all done")
    assert tools["send_email"].runs == 0  # never re-run: it may have sent already
    assert tools["lookup"].runs == 1  # only the unanswered lookup
    messages = await factory.store.messages(KEY)
    results = {m.tool_call_id: m.content for m in messages if m.role == "tool"}
    assert results == {
        lookup.id: "lookup ran 0",
        email.id: UNKNOWN_OUTCOME,
        other.id: "lookup ran 1",
    }
    # Every call has exactly one result, and the model saw them all.
    assert len([m for m in messages if m.role == "tool"]) == 3
    assert {m.tool_call_id for m in model.requests[0].messages if m.role == "tool"} == set(results)


class WriteLog(InMemoryExecutionStore):
    """Notes which write carried each tool result: a step's own, or the settlement."""

    def __init__(self) -> None:
        super().__init__()
        self.results_in: list[str] = []

    async def append_for(self, submission_id: str, owner: str, entry: JournalEntry) -> None:
        self.results_in += ["step" for m in entry.messages if m.role == "tool"]
        await super().append_for(submission_id, owner, entry)

    async def settle(
        self, submission_id: str, owner: str | None, settlement: Settlement
    ) -> Submission:
        journal = settlement.journal
        self.results_in += [
            "settle" for m in (journal.messages if journal else ()) if m.role == "tool"
        ]
        return await super().settle(submission_id, owner, settlement)


@pytest.mark.parametrize(
    ("tool", "quick", "written_in"),
    [
        ("lookup", 1.0, ["settle"]),  # may run again, quick: with the next write
        ("send_email", 1.0, ["step"]),  # may not run twice: before the turn goes on
        ("lookup", 0.0, ["step"]),  # a slow step: its results are worth keeping at once
    ],
)
async def test_quick_results_of_tools_that_may_run_again_go_with_the_next_write(
    tool: str, quick: float, written_in: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(coordinator_journal, "QUICK_TOOLS_SECONDS", quick)
    store = WriteLog()
    lookup = call(tool)
    factory, model, _ = build([tool_step(lookup), text_step("found it")], store=store)
    sub = await (await factory.get_or_create_root(KEY)).ask("look it up")
    assert (sub.outcome, sub.result) == ("completed", "found it")
    assert store.results_in == written_in
    messages = await store.messages(KEY)
    assert [(m.role, m.tool_call_id) for m in messages] == [
        ("user", None),
        ("assistant", None),
        ("tool", lookup.id),
        ("assistant", None),
    ]
    # The model's second call had the result, and the log tells the same story.
    assert [m.tool_call_id for m in model.requests[-1].messages if m.role == "tool"] == [lookup.id]
    records = await store.events(KEY, EventQuery(submission_id=sub.id))
    types = [e.type for r in records for e in decode(r)]
    assert types.index("tool_end") < types.index("text_delta") < types.index("done")


async def test_a_crash_that_lost_held_results_runs_the_tools_again() -> None:
    """The worker died during the model call after a quick step whose results it held:
    the log has the step's events and the text the model streamed, the transcript only
    the calls. The resume runs the tools again and calls the model again; the streamed
    text is not kept as cut off (that call had results the transcript never got)."""
    factory, model, tools = build([text_step("The answer is 42.")])
    lookup = call("lookup")
    sid = await crashed_claim(
        factory, "look it up", Message("user", "look it up"), Message("assistant", "", (lookup,))
    )
    store = factory.store
    await store.append_events(
        [
            EventRecord(KEY, 1, 1, "tool_start", "{}", sid),
            EventRecord(KEY, 2, 2, "tool_end", "{}", sid),
            encode_deltas([TextDelta(KEY, "t1", 3, "The ans")], sid),
        ]
    )
    [sub] = await factory.coordinator.resume_pending(factory.resolve)
    assert (sub.outcome, sub.result) == ("completed", "The answer is 42.")
    assert tools["lookup"].runs == 1
    messages = await store.messages(KEY)
    assert [(m.role, m.content, m.interrupted) for m in messages] == [
        ("user", "look it up", False),
        ("assistant", "", False),
        ("tool", "lookup ran 1", False),
        ("assistant", "The answer is 42.", False),
    ]
    assert CUT_OFF_NOTE not in model.requests[0].system


async def test_the_repair_plan_is_the_step_the_turn_starts_from() -> None:
    factory, _, _ = build([])
    fresh = await (await factory.get_or_create_root(KEY)).submit("hello")
    session = await factory.resolve(KEY)
    assert (await factory.coordinator.plan(fresh, session)).start == UserPrompt("hello")

    lookup, email = call("lookup"), call("send_email")
    sid = await crashed_claim(
        factory, "do it", Message("user", "do it"), Message("assistant", "", (lookup, email))
    )
    sub = await factory.store.submission(sid)
    assert sub is not None
    plan = await factory.coordinator.plan(sub, session)
    assert plan.start == RunTools((lookup,), then=CallModel())  # only the idempotent one
    assert [(m.tool_call_id, m.content) for m in plan.repairs] == [(email.id, UNKNOWN_OUTCOME)]
    # An abort re-runs nothing: every open call gets the unknown-outcome result.
    aborting = await factory.coordinator.plan(sub, session, rerun=False)
    assert aborting.start == CallModel() and len(aborting.repairs) == 2


async def test_resume_keeps_cut_off_text_and_tells_the_model() -> None:
    factory, model, _ = build([text_step("The capital is Paris.")])
    sid = await crashed_claim(factory, "capital of France?", Message("user", "capital of France?"))
    store = factory.store
    deltas = [TextDelta(KEY, "t1", n, piece) for n, piece in enumerate(["The cap", "ital"], 2)]
    await store.append_events([EventRecord(KEY, 1, 1, "run_start", "{}", sid)])
    await store.append_events([encode_deltas(deltas, sid)])
    [sub] = await factory.coordinator.resume_pending(factory.resolve)
    assert sub.result == "The capital is Paris."
    messages = await store.messages(KEY)
    assert [(m.role, m.content, m.interrupted) for m in messages] == [
        ("user", "capital of France?", False),
        ("assistant", "The capital", True),
        ("assistant", "The capital is Paris.", False),
    ]
    assert CUT_OFF_NOTE in model.requests[0].system


async def test_a_transient_error_is_retried_after_back_off() -> None:
    factory, _, _ = build([error_step("rate_limited", "slow down"), text_step("ok")])
    session = await factory.get_or_create_root(KEY)
    sub = await session.ask("hi")
    assert (sub.outcome, sub.result, sub.attempts) == ("completed", "ok", 2)
    assert [m.content for m in await factory.store.messages(KEY)] == ["hi", "ok"]


async def test_a_fatal_error_fails_the_submission() -> None:
    factory, _, _ = build([error_step("auth", "bad key")])
    session = await factory.get_or_create_root(KEY)
    sub = await session.ask("hi")
    assert (sub.outcome, sub.attempts) == ("failed", 1)
    assert "bad key" in (sub.error or "")


async def test_context_overflow_compresses_and_retries() -> None:
    compressed: list[str] = []

    async def compress(key: str) -> bool:
        compressed.append(key)
        return True

    factory, _, _ = build(
        [error_step("context_overflow", "too long"), text_step("fits now")], compress=compress
    )
    session = await factory.get_or_create_root(KEY)
    sub = await session.ask("hi")
    assert (sub.outcome, sub.result) == ("completed", "fits now")
    assert compressed == [KEY]


async def test_abort_of_a_queued_and_a_running_submission() -> None:
    factory, model, _ = build([])
    session = await factory.get_or_create_root(KEY)
    queued = await session.submit("never mind")
    assert (await factory.coordinator.abort(queued.id)).outcome == "aborted"
    sid = await crashed_claim(factory, "stop this", Message("user", "stop this"))
    await factory.coordinator.abort(sid)
    [sub] = await factory.coordinator.resume_pending(factory.resolve)
    assert (sub.id, sub.outcome) == (sid, "aborted")
    assert model.requests == []


async def test_resubmitting_the_same_id_does_not_run_twice() -> None:
    factory, model, _ = build([text_step("once")])
    session = await factory.get_or_create_root(KEY)
    first = await session.ask("hi", submission_id="client-1")
    again = await session.ask("hi", submission_id="client-1")
    assert first == again
    assert len(model.requests) == 1


async def test_public_names_cannot_take_task_prefix() -> None:
    factory, _, _ = build([])
    with pytest.raises(InvalidSessionName, match="reserved"):
        factory.key_for("task:main:1")
    assert factory.key_for("main") == KEY


async def test_delegate_runs_a_child_session_through_the_factory() -> None:
    factory, model, _ = build([text_step("child answer")])
    parent = await factory.get_or_create_root(KEY)
    answer = await parent.subagents.delegate("look into it", task_id="t1")
    assert answer == "child answer"
    child_key = 'agent-session:["local","default","task:main:t1"]'
    info = await factory.store.get(child_key)
    assert info is not None and info.parent_key == KEY
    assert [m.content for m in await factory.store.messages(child_key)] == [
        "look into it",
        "child answer",
    ]
    # Delegating the same task again returns the stored answer.
    assert await parent.subagents.delegate("look into it", task_id="t1") == "child answer"
    assert len(model.requests) == 1
    # Resolving the child in a fresh factory rebuilds its lineage depth.
    fresh = SessionFactory(factory.loop, factory.store, factory.coordinator)
    assert (await fresh.resolve(child_key)).depth == 1


async def test_subagents_stop_at_the_depth_limit() -> None:
    from seam.contracts.tools import ToolError

    factory, _, _ = build([text_step("a"), text_step("b")])
    factory.max_depth = 1
    parent = await factory.get_or_create_root(KEY)
    child = await factory.create_child(parent, "t1")
    with pytest.raises(ToolError, match="1 levels deep"):
        await child.subagents.delegate("deeper", task_id="t2")


async def test_a_done_event_ends_every_driven_turn() -> None:
    factory, _, _ = build([tool_step(call("lookup")), text_step("done")])
    session = await factory.get_or_create_root(KEY)
    live: list[AgentEvent] = []
    await session.ask("go", on_event=live.append)
    assert isinstance(live[-1], Done) and live[-1].text == "done"


async def test_a_second_process_follows_a_submission_another_worker_runs() -> None:
    import asyncio

    from seam.core.scripted_model import Step

    # A tool call first, then the answer after a pause: the follower comes in while the
    # turn is under way (events stored and still to come), not after it settled.
    factory, _, _ = build(
        [tool_step(call("lookup")), Step(deltas=["one ", "two ", "three"], delay=0.05)]
    )
    session = await factory.get_or_create_root(KEY)
    sub = await session.submit("count")
    runner_events: list[AgentEvent] = []
    runner = asyncio.ensure_future(
        factory.coordinator.run(sub.id, factory.resolve, runner_events.append)
    )
    while not runner_events:  # the first worker has claimed it and started
        await asyncio.sleep(0)
    other = Coordinator(factory.store, owner="other")
    followed: list[AgentEvent] = []
    settled = await other.run(sub.id, factory.resolve, followed.append)
    await runner
    assert settled.result == "one two three"
    # The follower saw the same events, each once, in order (replayed from the store).
    assert [e.seq for e in followed] == [e.seq for e in runner_events]
    assert followed == runner_events


async def test_a_crashing_tool_registry_fails_the_submission_not_the_worker() -> None:
    factory, _, _ = build([text_step("fine")])
    session = await factory.get_or_create_root(KEY)
    other = await factory.get_or_create_root('agent-session:["local","default","other"]')
    broken = await session.submit("this one breaks")
    ok = await other.submit("this one works")

    def explode(names: Any, ctx: Any) -> Any:
        raise RuntimeError("registry exploded")

    real_build = factory.loop.tools.build
    calls = 0

    def build_once_broken(names: Any, ctx: Any) -> Any:
        nonlocal calls
        calls += 1
        return explode(names, ctx) if calls == 1 else real_build(names, ctx)

    factory.loop.tools.build = build_once_broken  # type: ignore[method-assign]
    settled = await factory.coordinator.drain_runnable(factory.resolve)
    outcomes = {s.id: (s.outcome, s.error) for s in settled}
    assert outcomes[broken.id][0] == "failed" and "registry exploded" in str(outcomes[broken.id][1])
    assert outcomes[ok.id] == ("completed", None)


class RenewalWatch(InMemoryExecutionStore):
    """Sets `renewed` at every lease renewal; `fail_next_read` makes the next
    `submission()` read fail as a dropped connection would."""

    def __init__(self, *, fail_read_after_renewal: bool = False) -> None:
        super().__init__()
        self.renewed = asyncio.Event()
        self.fail_read_after_renewal = fail_read_after_renewal
        self.fail_next_read = False

    async def renew(self, submission_id: str, owner: str, *, lease: float) -> None:
        await super().renew(submission_id, owner, lease=lease)
        self.fail_next_read = self.fail_read_after_renewal
        self.fail_read_after_renewal = False
        self.renewed.set()

    async def submission(self, submission_id: str) -> Submission | None:
        if self.fail_next_read:
            self.fail_next_read = False
            raise ConnectionError("the store went away for a moment")
        return await super().submission(submission_id)


class WaitForRenewal:
    """A tool that runs until the lease has been renewed at least once."""

    name = "wait_for_renewal"
    description = "waits for a lease renewal"
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}
    concurrent = False
    idempotent = False

    def __init__(self, store: RenewalWatch) -> None:
        self.store = store

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        await self.store.renewed.wait()
        return "renewed"


async def test_a_store_error_while_renewing_the_lease_does_not_break_the_turn() -> None:
    store = RenewalWatch(fail_read_after_renewal=True)
    factory, _, _ = build(
        [tool_step(call("wait_for_renewal")), text_step("finished")],
        store=store,
        lease=0.03,
        extra_tools=(WaitForRenewal(store),),
    )
    session = await factory.get_or_create_root(KEY)
    async with asyncio.timeout(10):
        sub = await session.ask("go")
    assert (sub.outcome, sub.result) == ("completed", "finished")


async def test_the_lease_is_renewed_while_an_overflowing_session_is_compressed() -> None:
    store = RenewalWatch()

    async def compress(key: str) -> bool:
        store.renewed.clear()
        await store.renewed.wait()  # a slow summary: longer than the lease
        return True

    factory, _, _ = build(
        [error_step("context_overflow", "too long"), text_step("fits now")],
        store=store,
        lease=0.03,
        compress=compress,
    )
    session = await factory.get_or_create_root(KEY)
    async with asyncio.timeout(10):
        sub = await session.ask("hi")
    assert (sub.outcome, sub.result, sub.attempts) == ("completed", "fits now", 2)


async def test_a_resume_that_cannot_build_the_toolset_fails_the_submission() -> None:
    factory, _, _ = build([])
    await factory.get_or_create_root(KEY, personality="deleted-since")
    email = call("send_email")
    sid = await crashed_claim(
        factory, "do it", Message("user", "do it"), Message("assistant", "", (email,))
    )
    [sub] = await factory.coordinator.resume_pending(factory.resolve)
    assert (sub.id, sub.state, sub.outcome) == (sid, "settled", "failed")
    assert "deleted-since" in (sub.error or "")


async def test_aborting_a_crashed_turn_leaves_every_tool_call_answered() -> None:
    factory, model, tools = build([text_step("next answer")])
    lookup, email = call("lookup"), call("send_email")
    sid = await crashed_claim(
        factory, "do it", Message("user", "do it"), Message("assistant", "", (lookup, email))
    )
    await factory.coordinator.abort(sid)
    [sub] = await factory.coordinator.resume_pending(factory.resolve)
    assert (sub.id, sub.outcome) == (sid, "aborted")
    assert tools["lookup"].runs == 0  # an aborted turn runs nothing
    # The next turn of the session sends the model a valid transcript.
    session = await factory.get_or_create_root(KEY)
    await session.ask("next")
    sent = model.requests[0].messages
    asked = {c.id for m in sent for c in m.tool_calls}
    answered = [m.tool_call_id for m in sent if m.role == "tool"]
    assert sorted(answered) == sorted(asked) == sorted([lookup.id, email.id])


async def test_a_new_message_waits_for_the_crashed_turn_of_its_session() -> None:
    factory, _, _ = build([text_step("answer one"), text_step("answer two")])
    await crashed_claim(factory, "one", Message("user", "one"))
    session = await factory.get_or_create_root(KEY)
    async with asyncio.timeout(10):
        second = await session.ask("two")
    assert (second.outcome, second.result) == ("completed", "answer two")
    # The crashed turn was finished first: the two turns never interleave.
    assert [(m.role, m.content) for m in await factory.store.messages(KEY)] == [
        ("user", "one"),
        ("assistant", "answer one"),
        ("user", "two"),
        ("assistant", "answer two"),
    ]
    assert await factory.store.submissions(KEY, UNSETTLED) == []


async def test_a_fresh_submission_does_not_read_back_a_transcript_it_never_wrote() -> None:
    class CountingReads(InMemoryExecutionStore):
        reads = 0

        async def submission_messages(self, submission_id: str) -> list[Message]:
            self.reads += 1
            return await super().submission_messages(submission_id)

    store = CountingReads()
    factory, _, _ = build([text_step("hello")], store=store)
    session = await factory.get_or_create_root(KEY)
    sub = await session.ask("hi")
    assert sub.result == "hello"
    assert store.reads == 0  # one store round trip less per turn


async def test_secrets_are_redacted_from_the_submission_and_the_event_log() -> None:
    from seam.core.scripted_model import Step

    factory, _, _ = build([Step(deltas=["the key is SEC", "RET-123 ok"])])
    factory.loop.redact = lambda text: text.replace("SECRET-123", "[REDACTED]")
    session = await factory.get_or_create_root(KEY)
    live: list[AgentEvent] = []
    sub = await session.ask("use SECRET-123 please", on_event=live.append)
    assert sub.input == "use [REDACTED] please"
    assert sub.result == "the key is [REDACTED] ok"
    stored = await factory.store.events(KEY)
    assert stored and not any("SECRET" in r.payload for r in stored)
    replayed = await replay(factory.store, KEY)
    assert [e.seq for e in replayed] == [e.seq for e in live]  # no gaps, no repeats
    text = "".join(e.text for e in replayed if isinstance(e, TextDelta))
    assert text == "the key is [REDACTED] ok"


async def test_a_crashed_delegation_is_finished_on_resume_not_started_over() -> None:
    from seam.core.session_factory import submission_id_for
    from seam.plugins.tools.subagents import DelegateTask

    factory, model, _ = build([text_step("child answer"), text_step("parent final")])
    factory.loop.tools.register_tool(DelegateTask())
    store = factory.store
    delegate = call("delegate_task", task="look it up")
    parent_sub = await crashed_claim(
        factory,
        "delegate it",
        Message("user", "delegate it"),
        Message("assistant", "", (delegate,)),
    )
    parent = await factory.resolve(KEY)
    child = await factory.create_child(parent, delegate.id)
    child_sub = await child.submit("look it up", submission_id=submission_id_for(child.key))
    await store.claim("crashed-worker", scope=ClaimScope(submission_id=child_sub.id))
    await store.append_for(
        child_sub.id, "crashed-worker", JournalEntry([Message("user", "look it up")])
    )

    settled = {s.id: s for s in await factory.coordinator.resume_pending(factory.resolve)}
    assert (settled[parent_sub].outcome, settled[parent_sub].result) == (
        "completed",
        "parent final",
    )
    assert settled[child_sub.id].result == "child answer"
    results = [m for m in await store.messages(KEY) if m.role == "tool"]
    assert [(m.tool_call_id, m.content) for m in results] == [(delegate.id, "child answer")]
    # The child ran once, continuing its stored turn: one user message, one answer.
    assert [m.content for m in await store.messages(child.key)] == ["look it up", "child answer"]
    assert len(model.requests) == 2


async def test_the_session_cache_is_bounded_and_rebuilds_from_the_store() -> None:
    factory, _, _ = build([text_step("a")])
    factory.cache_size = 2
    keys = [f'agent-session:["local","default","s{n}"]' for n in range(3)]
    first = await factory.get_or_create_root(keys[0])
    await factory.get_or_create_root(keys[1])
    assert await factory.resolve(keys[0]) is first  # used again: kept
    await factory.get_or_create_root(keys[2])  # evicts s1, the least recently used
    assert await factory.resolve(keys[0]) is first
    rebuilt = await factory.resolve(keys[1])
    assert rebuilt.key == keys[1] and rebuilt.info.personality == first.info.personality

    # What the loop kept for an evicted session goes with it; its numbering resumes
    # from the store on its next turn.
    await rebuilt.ask("again")
    await factory.get_or_create_root(keys[2])
    await factory.resolve(keys[0])
    assert keys[1] not in factory.loop.sequences


async def test_calls_a_failed_turn_left_unanswered_get_a_stand_in_result_next_turn() -> None:
    from seam.core.history import NO_RESULT

    factory, model, _ = build([text_step("fresh start")])
    lost = call("send_email")
    session = await factory.get_or_create_root(KEY)
    await factory.store.append(
        KEY, [Message("user", "email bob"), Message("assistant", "", (lost,))]
    )  # a turn whose submission failed before its call was answered
    sub = await session.ask("what happened?")
    assert sub.result == "fresh start"
    sent = model.requests[0].messages
    assert [(m.role, m.tool_call_id, m.content) for m in sent[1:3]] == [
        ("assistant", None, ""),
        ("tool", lost.id, NO_RESULT),
    ]
    assert sent[-1].content == "what happened?"
    # The transcript keeps what happened: no stand-in was stored.
    assert [m.role for m in await factory.store.messages(KEY)] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]


async def test_a_sessions_own_model_and_tools_are_used_for_its_turns() -> None:
    factory, model, _ = build([text_step("ok"), text_step("ok")])
    key = 'agent-session:["local","default","pinned"]'
    pinned = await factory.get_or_create_root(key, model="big-model", tools=["lookup"])
    await pinned.ask("hi")
    fresh = SessionFactory(factory.loop, factory.store, factory.coordinator)
    await (await fresh.resolve(key)).ask("again")  # rebuilt from the store after a restart
    for request in model.requests:
        assert request.model == "big-model"
        assert [d.name for d in request.tools] == ["lookup"]


async def test_usage_figures_count_the_sessions_own_tools() -> None:
    factory, _, _ = build([text_step("ok")])
    key = 'agent-session:["local","default","narrow"]'
    narrow = await factory.get_or_create_root(key, tools=["lookup"])
    await narrow.ask("hi")
    wide_key = 'agent-session:["local","default","wide"]'
    wide = await factory.get_or_create_root(wide_key)
    await factory.store.append(wide_key, await factory.store.messages(key))
    narrow_usage = await factory.loop.context_usage(key)
    wide_usage = await factory.loop.context_usage(wide.key)
    assert narrow_usage is not None and wide_usage is not None
    assert narrow_usage.tokens < wide_usage.tokens  # one tool schema against two


class DiskFullOnce(InMemoryExecutionStore):
    """Refuses to store the first tool result, as SQLite does when the disk fills up
    between a tool call and its result (what the chaos suite hit)."""

    def __init__(self) -> None:
        super().__init__()
        self.refused = 0

    async def append_for(self, submission_id: str, owner: str, entry: JournalEntry) -> None:
        if not self.refused and any(m.role == "tool" for m in entry.messages):
            self.refused += 1
            raise OSError(28, "database or disk is full")
        await super().append_for(submission_id, owner, entry)


async def test_a_submission_failed_by_a_store_error_leaves_no_tool_call_unanswered() -> None:
    # A tool that may not run twice: its result is written before the turn goes on.
    store = DiskFullOnce()
    factory, model, _ = build(
        [tool_step(call("send_email")), text_step("next answer")], store=store
    )
    session = await factory.get_or_create_root(KEY)
    failed = await session.ask("look it up")
    assert failed.outcome == "failed" and "disk is full" in str(failed.error)
    assert store.refused == 1
    messages = await store.messages(KEY)
    calls = [c.id for m in messages for c in m.tool_calls]
    results = [m.tool_call_id for m in messages if m.role == "tool"]
    assert calls and calls == results
    assert [m.content for m in messages if m.role == "tool"] == [UNKNOWN_OUTCOME]
    # The session's next turn sends the model a valid transcript and completes.
    ok = await session.ask("and now?")
    assert (ok.outcome, ok.result) == ("completed", "next answer")
    sent = model.requests[-1].messages
    assert [m.tool_call_id for m in sent if m.role == "tool"] == calls
