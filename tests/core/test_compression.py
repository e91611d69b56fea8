"""Long conversations keep working: old tool results are cleared, the middle is
summarised, the boundary survives restarts, failures back off, overflow retries once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from seam.contracts import (
    ContextCompacted,
    Done,
    ErrorEvent,
    Message,
    ModelRequest,
    Notice,
    ToolCall,
    ToolContext,
)
from seam.contracts.context import CompactionGoal
from seam.core import (
    AgentLoop,
    DefaultToolRegistry,
    InMemorySessionStore,
    LoopOptions,
    ScriptedModel,
    Step,
    call,
    error_step,
    text_step,
    tool_step,
)
from seam.core.compression import SUMMARY_PROMPT, HistoryCompressor
from seam.core.history import history_view, parse_marker, split
from seam.core.tokens import CharTokenEstimator

WINDOW = 4_000
SUMMARY = (
    "## Goals\n- keep the conversation going\n## Decisions\n- none yet\n"
    "## Facts\n- the codeword is PLUM\n## Open tasks\n- answer the next question"
)


def chat_model(window: int = WINDOW, summaries: list[ModelRequest] | None = None) -> ScriptedModel:
    """Answers every question; writes the summary when the compressor asks for one."""
    seen = summaries if summaries is not None else []

    def step(request: ModelRequest) -> Step:
        if request.system == SUMMARY_PROMPT:
            seen.append(request)
            return text_step(SUMMARY)
        question = request.messages[-1].content
        return text_step(f"answer to {question[:12]}: " + "z" * 200)

    return ScriptedModel([step] * 1_000, max_context_tokens=window)


def request_tokens(request: ModelRequest) -> int:
    estimator = CharTokenEstimator()
    return (
        estimator.text(request.system)
        + estimator.tools(request.tools)
        + estimator.messages(request.messages)
    )


async def run(loop: AgentLoop, text: str, key: str = "s1") -> list[Any]:
    return [event async for event in loop.run(key, text)]


async def test_a_conversation_three_times_the_window_keeps_answering_and_compresses() -> None:
    store = InMemorySessionStore()
    summaries: list[ModelRequest] = []
    model = chat_model(summaries=summaries)
    loop = AgentLoop(model=model, sessions=store)
    compactions: list[ContextCompacted] = []
    for n in range(110):
        events = await run(loop, f"question {n:03d} " + "y" * 200)
        done = events[-1]
        assert isinstance(done, Done) and done.finish_reason == "stop"
        assert done.text.startswith(f"answer to question {n:03d}")
        compactions += [e for e in events if isinstance(e, ContextCompacted)]

    transcript = await store.messages("s1")
    estimator = CharTokenEstimator()
    assert estimator.messages(transcript) > 3 * WINDOW  # the conversation outgrew it 3x

    # Compressed at the threshold, and every request the model answered fitted.
    assert len(compactions) >= 3
    for event in compactions:
        assert event.reason == "threshold" and event.summarised
        assert event.tokens_before >= 0.75 * WINDOW > event.tokens_after
        assert event.messages_after < event.messages_before
    answered = [r for r in model.requests if r.system != SUMMARY_PROMPT]
    assert all(request_tokens(r) < 0.8 * WINDOW for r in answered)

    # The latest request still holds the protected messages and the summary.
    last = answered[-1].messages
    stored = [m for m in transcript if parse_marker(m) is None]
    assert list(last[:3]) == stored[:3]
    assert last[3].role == "user" and "## Facts\n- the codeword is PLUM" in last[3].content
    assert list(last[-20:]) == stored[-21:-1]  # its last 20, then the new question
    assert len(summaries) == len(compactions)
    # A later summary folds in the earlier one.
    assert "the codeword is PLUM" in summaries[-1].messages[0].content

    # Each compaction is recorded with its figures, next to a marker in the transcript.
    records = await store.compactions("s1")
    assert len(records) == len(compactions)
    for record, event in zip(records, compactions, strict=True):
        marker = transcript[record.marker_index]
        assert parse_marker(marker) == (record.tail_start, record.tail_start)
        assert "the codeword is PLUM" in marker.content
        assert (record.tokens_before, record.messages_before) == (
            event.tokens_before,
            event.messages_before,
        )
        assert record.summarised and record.duration_ms >= 0 and record.created_at > 0


async def test_the_boundary_survives_a_restart() -> None:
    store = InMemorySessionStore()
    first = AgentLoop(model=chat_model(), sessions=store)
    for n in range(40):
        await run(first, f"question {n:03d} " + "y" * 200)
    assert await store.compactions("s1")

    model = chat_model()
    restarted = AgentLoop(model=model, sessions=store)
    await run(restarted, "after the restart")
    sent = model.requests[0].messages
    assert "the codeword is PLUM" in sent[3].content
    assert sent[-1].content == "after the restart"
    assert request_tokens(model.requests[0]) < 0.75 * WINDOW


class BigTool:
    name = "fetch"
    description = "fetch a page"
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}
    concurrent = True
    idempotent = True

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        return f"page {args.get('n')}: " + "p" * 4_000


def tool_loop(model: ScriptedModel, store: InMemorySessionStore, **options: Any) -> AgentLoop:
    tools = DefaultToolRegistry()
    tools.register_tool(BigTool())
    return AgentLoop(model=model, sessions=store, tools=tools, options=LoopOptions(**options))


async def test_old_tool_results_are_cleared_first_without_a_summary() -> None:
    store = InMemorySessionStore()
    model = ScriptedModel([], max_context_tokens=8_000)
    loop = tool_loop(model, store, protect_last=4)
    compactions: list[ContextCompacted] = []
    for n in range(6):
        model.add(tool_step(call("fetch", n=n)), text_step(f"read page {n}"))
        events = await run(loop, f"fetch page {n}")
        assert events[-1].text == f"read page {n}"
        compactions += [e for e in events if isinstance(e, ContextCompacted)]
    assert compactions and not any(e.summarised for e in compactions)
    assert not [r for r in model.requests if r.system == SUMMARY_PROMPT]
    sent = model.requests[-1].messages
    results = [m for m in sent if m.role == "tool"]
    assert results[0].content.startswith("page 0: ")  # in the protected head
    assert results[1].content.startswith("[old tool result cleared to save context")
    assert results[-1].content.startswith("page 5: ")  # the protected tail is intact
    # Every tool call still has its result right after it.
    for index, message in enumerate(sent):
        for position, tool_call in enumerate(message.tool_calls):
            assert sent[index + 1 + position].tool_call_id == tool_call.id


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


async def test_a_failed_summary_backs_off_60_300_900_seconds_and_the_chat_goes_on() -> None:
    clock = FakeClock()
    compressor = HistoryCompressor(clock=clock)
    store = InMemorySessionStore()
    attempts: list[str] = []
    fail = True

    def step(request: ModelRequest) -> Step:
        if request.system == SUMMARY_PROMPT:
            attempts.append("summary")
            if fail:
                return error_step("retryable", "summariser down")
            return text_step(SUMMARY)
        return text_step("ok " + "z" * 200)

    model = ScriptedModel([step] * 500, max_context_tokens=WINDOW)
    loop = AgentLoop(model=model, sessions=store, compressor=compressor)

    async def chat(turns: int) -> list[Any]:
        events: list[Any] = []
        for _ in range(turns):
            turn = await run(loop, "question " + "y" * 200)
            assert isinstance(turn[-1], Done) and turn[-1].finish_reason == "stop"
            events += turn
        return events

    events = await chat(30)  # past the threshold
    assert attempts == ["summary"]
    notice = next(e for e in events if isinstance(e, Notice))
    assert notice.kind == "context" and "summariser down" in notice.message
    assert compressor.retry_in("s1") == 60

    await chat(3)
    assert attempts == ["summary"]  # still backing off
    for delay in (300, 900, 900):
        clock.now += compressor.retry_in("s1")
        await chat(1)
        assert compressor.retry_in("s1") == delay
    assert len(attempts) == 4

    fail = False
    clock.now += 900
    events = await chat(1)
    assert len(attempts) == 5 and compressor.ready("s1")
    assert [e.summarised for e in events if isinstance(e, ContextCompacted)] == [True]


async def test_context_overflow_compacts_and_retries_once() -> None:
    store = InMemorySessionStore()
    await store.create("s1")
    await store.append(
        "s1",
        [Message("user" if i % 2 == 0 else "assistant", f"old message {i}") for i in range(40)],
    )
    model = ScriptedModel(
        [
            error_step("context_overflow", "prompt is too long"),
            text_step(SUMMARY),
            text_step("answered after compaction"),
        ]
    )
    loop = AgentLoop(model=model, sessions=store)
    events = await run(loop, "new question")
    types = [e.type for e in events]
    assert types[0] == "run_start" and "error" not in types
    compacted = next(e for e in events if isinstance(e, ContextCompacted))
    assert compacted.reason == "overflow" and compacted.summarised
    assert events[-1].text == "answered after compaction"
    retry = model.requests[-1].messages
    assert len(retry) == 3 + 1 + 20 and retry[-1].content == "new question"


async def test_a_second_overflow_in_the_same_turn_is_an_error() -> None:
    store = InMemorySessionStore()
    await store.create("s1")
    await store.append("s1", [Message("user", f"m{i}") for i in range(40)])
    model = ScriptedModel(
        [
            error_step("context_overflow"),
            text_step(SUMMARY),
            error_step("context_overflow"),
        ]
    )
    events = await run(AgentLoop(model=model, sessions=store), "q")
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert error.kind == "context_overflow" and events[-1].finish_reason == "error"


async def test_compress_now_summarises_even_below_the_threshold() -> None:
    store = InMemorySessionStore()
    model = chat_model(window=1_000_000)
    loop = AgentLoop(model=model, sessions=store)
    assert await loop.compress("s1") == []  # no such session yet
    for n in range(5):
        await run(loop, f"q{n}")
    assert await loop.compress("s1") == []  # everything is protected
    for n in range(20):
        await run(loop, f"q{n}")
    events = await loop.compress("s1")
    assert [e.type for e in events] == ["context_compacted"]
    assert events[0].reason == "manual" and events[0].summarised
    next_turn = await run(loop, "and now?")
    seqs = [events[0].seq] + [e.seq for e in next_turn]
    assert seqs == sorted(set(seqs))
    assert "PLUM" in model.requests[-1].messages[3].content


def test_the_tail_never_starts_between_a_tool_call_and_its_results() -> None:
    calls = (ToolCall("a", "fetch", "{}"), ToolCall("b", "fetch", "{}"))
    transcript = [
        Message("user", "u0"),
        Message("assistant", "a0"),
        Message("user", "u1"),
        Message("assistant", "a1"),
        Message("user", "u2"),
        Message("assistant", "", tool_calls=calls),
        Message("tool", "r1", tool_call_id="a"),
        Message("tool", "r2", tool_call_id="b"),
        Message("assistant", "done"),
    ]
    cut = split(history_view(transcript, 3), protect_last=3)
    assert cut is not None and cut.tail_start == 5  # the calling message, not "r1"
    assert [m.content for m in cut.middle] == ["a1", "u2"]
    # The head is not split either.
    head = history_view([Message("user", "u"), transcript[5], *transcript[6:8]], 2)
    assert head.head == 4


def test_markers_are_left_out_and_only_the_latest_counts() -> None:
    from seam.core.history import make_marker

    transcript: list[Message] = [Message("user", f"m{i}") for i in range(10)]
    transcript.append(make_marker("first summary", 6, 6))
    transcript += [Message("user", "m11")]
    transcript.append(make_marker("second summary", 8, 8))
    view = history_view(transcript, 3)
    assert [m.content for m in view.messages] == [
        "m0",
        "m1",
        "m2",
        "second summary",
        "m8",
        "m9",
        "m11",
    ]
    assert view.indices[3] == -1


async def test_the_summary_is_written_from_the_tool_output_not_from_its_cleared_stub() -> None:
    # The facts a summary must keep ("results and errors, kept exact") are mostly in tool
    # output; clearing it is what the view sends, not what the summariser reads.
    summaries: list[ModelRequest] = []

    def step(request: ModelRequest) -> Step:
        summaries.append(request)
        return text_step(SUMMARY)

    fetched = Message("tool", "the build failed: E1234 in parser.c " + "x" * 900, tool_call_id="c1")
    transcript = [
        Message("user", "hi"),
        Message("assistant", "hello"),
        Message("user", "build it"),
        Message("assistant", "", tool_calls=(ToolCall("c1", "terminal", "{}"),)),
        fetched,
        Message("assistant", "it failed"),
        *[Message("user" if i % 2 else "assistant", f"chat {i} " + "y" * 400) for i in range(30)],
    ]
    compacted = await HistoryCompressor().compact(
        "s1",
        transcript,
        CompactionGoal(
            model=ScriptedModel([step], max_context_tokens=WINDOW), overhead=0, target=100
        ),
    )
    assert compacted is not None and compacted.record.summarised
    assert "E1234 in parser.c" in summaries[0].messages[0].content


def test_the_window_falls_back_only_when_the_provider_cannot_say(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from seam.core.compression import FALLBACK_WINDOW, model_window

    class Silent:  # an older provider without `max_context_tokens`
        pass

    class Broken:
        @property
        def max_context_tokens(self) -> int:
            raise RuntimeError("the provider could not be built: no API key")

    assert model_window(ScriptedModel([], max_context_tokens=32_000)) == 32_000
    with caplog.at_level("WARNING", logger="seam.context"):
        assert model_window(Silent()) == FALLBACK_WINDOW  # type: ignore[arg-type]
    assert "does not say its context window" in caplog.text
    with pytest.raises(RuntimeError, match="no API key"):
        model_window(Broken())  # type: ignore[arg-type]
