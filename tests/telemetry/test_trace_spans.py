"""Spans of turns, model calls and tool calls, read back from an in-memory exporter."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from seam.contracts.messages import Usage
from seam.core.coordinator import Coordinator
from seam.core.execution import InMemoryExecutionStore
from seam.core.scripted_model import ScriptedModel, call, error_step, text_step, tool_step
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.services.telemetry.otel import OtelTracer, trace_id_for
from seam.wiring import assemble_runtime
from tests.telemetry.helpers import Crash, NamedTool, by_name, parent_id, registry


def _tracer(exporter: InMemorySpanExporter) -> OtelTracer:
    return OtelTracer(processor=SimpleSpanProcessor(exporter))


async def test_one_trace_per_turn_with_model_and_tool_spans_under_it() -> None:
    exporter = InMemorySpanExporter()
    tracer = _tracer(exporter)
    model = ScriptedModel(
        [
            tool_step(call("lookup")),
            text_step("found it", usage=Usage(input_tokens=30, output_tokens=4)),
            text_step("second answer"),
        ]
    )
    async with assemble_runtime(
        model=model, tools=registry(NamedTool("lookup")), tracer=tracer, pricing=lambda *a: 0.25
    ) as rt:
        first = await rt.ask("s", "look it up", submission_id="sub-1")
        second = await rt.ask("s", "again", submission_id="sub-2")
    assert first.outcome == second.outcome == "completed"
    spans = exporter.get_finished_spans()
    turns = by_name(spans, "turn")
    assert [t.attributes["seam.submission"] for t in turns] == ["sub-1", "sub-2"]
    # One trace per turn, named by its submission.
    assert [t.context.trace_id for t in turns] == [trace_id_for("sub-1"), trace_id_for("sub-2")]
    first_turn = turns[0]
    assert first_turn.parent is None
    assert first_turn.attributes["seam.outcome"] == "completed"
    assert first_turn.attributes["seam.attempt"] == 1
    assert first_turn.attributes["seam.session"] == rt.session_key_for("s")
    chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    tools = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert len(chats) == 3 and len(tools) == 1
    in_first = [s for s in chats + tools if s.context.trace_id == first_turn.context.trace_id]
    assert len(in_first) == 3
    assert all(parent_id(s) == first_turn.context.span_id for s in in_first)
    assert tools[0].attributes["gen_ai.tool.name"] == "lookup"
    assert tools[0].attributes["seam.tool.outcome"] == "ok"
    answered = chats[1]
    assert answered.attributes["gen_ai.usage.input_tokens"] == 30
    assert answered.attributes["gen_ai.usage.output_tokens"] == 4
    assert answered.attributes["seam.cost_usd"] == 0.25
    assert answered.attributes["gen_ai.request.model"] == model.model
    assert "seam.time_to_first_token_ms" in answered.attributes


async def test_a_retried_submission_keeps_one_trace_with_a_turn_per_attempt() -> None:
    exporter = InMemorySpanExporter()
    tracer = _tracer(exporter)
    store = InMemoryExecutionStore()
    model = ScriptedModel([error_step("retryable", "HTTP 503"), text_step("ok now")])
    coordinator = Coordinator(store, backoff=(0.0,), tracer=tracer)
    async with assemble_runtime(
        model=model, store=store, coordinator=coordinator, tracer=tracer
    ) as rt:
        sub = await rt.ask("s", "hi", submission_id="retry-me")
    assert (sub.outcome, sub.attempts) == ("completed", 2)
    turns = by_name(exporter.get_finished_spans(), "turn")
    assert [t.attributes["seam.attempt"] for t in turns] == [1, 2]
    assert [t.attributes["seam.outcome"] for t in turns] == ["retry", "completed"]
    assert {t.context.trace_id for t in turns} == {trace_id_for("retry-me")}
    failed_chat = next(
        s for s in exporter.get_finished_spans() if s.name.startswith("chat") and not s.status.is_ok
    )
    assert parent_id(failed_chat) == turns[0].context.span_id


async def test_a_turn_resumed_after_a_crash_by_another_runtime_continues_its_trace(
    tmp_path: pytest.TempPathFactory,
) -> None:
    path = str(tmp_path / "seam.db")  # type: ignore[operator]
    # An exporter per process (a runtime's close shuts its exporter down).
    exporter, exporter2 = InMemorySpanExporter(), InMemorySpanExporter()
    first = NamedTool("deploy", crash=True)
    model = ScriptedModel([tool_step(call("deploy"))])
    store = SQLiteSessionStore(path)
    with pytest.raises(Crash):
        async with assemble_runtime(
            model=model, store=store, tools=registry(first), tracer=_tracer(exporter), owner="gone"
        ) as rt:
            await rt.ask("s", "deploy it", submission_id="crashy")

    # A second process on the same file: another tracer, the first worker known dead.
    second = NamedTool("deploy")
    resumed_model = ScriptedModel([text_step("deploy state unknown; please check")])
    async with assemble_runtime(
        model=resumed_model,
        store=SQLiteSessionStore(path),
        tools=registry(second),
        tracer=_tracer(exporter2),
        dead_owners=lambda owners: [o for o in owners if o == "gone"],
    ) as rt2:
        [sub] = await rt2.resume_pending()
    assert (sub.id, sub.outcome) == ("crashy", "completed")
    assert second.runs == 0  # not idempotent: not run again

    spans = (*exporter.get_finished_spans(), *exporter2.get_finished_spans())
    turns = by_name(spans, "turn")
    assert [t.attributes["seam.attempt"] for t in turns] == [1, 2]
    assert {t.context.trace_id for t in spans} == {trace_id_for("crashy")}
    crashed_turn, resumed_turn = turns
    [tool_span] = by_name(spans, "execute_tool deploy")
    assert parent_id(tool_span) == crashed_turn.context.span_id
    chats = [s for s in spans if s.name.startswith("chat")]
    assert [parent_id(c) for c in chats] == [
        crashed_turn.context.span_id,
        resumed_turn.context.span_id,
    ]
    assert resumed_turn.attributes["seam.outcome"] == "completed"


async def test_store_operations_past_the_threshold_are_spans_in_the_turn() -> None:
    exporter = InMemorySpanExporter()
    model = ScriptedModel([text_step("hi")])
    async with assemble_runtime(model=model, tracer=_tracer(exporter), slow_store_ms=0) as rt:
        await rt.ask("s", "hello", submission_id="slow")
    spans = exporter.get_finished_spans()
    [turn] = by_name(spans, "turn")
    stored = [s for s in spans if s.name.startswith("store ")]
    names = {s.attributes["db.operation.name"] for s in stored}
    # A one-reply turn: the input and the answer go in with the settlement (no
    # `append_for`), after the admission (already claimed) and the turn's reads.
    assert {"admit_and_claim", "last_seq", "settle"} <= names
    settle = next(s for s in stored if s.name == "store settle")
    assert parent_id(settle) == turn.context.span_id
    assert settle.start_time <= settle.end_time
