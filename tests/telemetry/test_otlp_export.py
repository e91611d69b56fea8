"""Done-when: a turn with two tool calls and one model retry, exported over OTLP/HTTP to
a local collector stand-in and checked span by span."""

from __future__ import annotations

import json

from seam.services.llm.openai_compat import OpenAICompatProvider
from seam.services.telemetry.otel import otlp_tracer, trace_id_for
from seam.services.telemetry.spans import noting_retries
from seam.wiring import assemble_runtime
from tests.support.openai_server import (
    DEFAULT_MODEL,
    OpenAIServer,
    error_reply,
    text_reply,
    tool_call_reply,
)
from tests.telemetry.helpers import NamedTool, registry
from tests.telemetry.otlp_collector import Collector


async def test_a_turn_with_two_tools_and_a_retry_reaches_the_collector_span_by_span(
    openai_server: OpenAIServer,
) -> None:
    openai_server.push(error_reply(503))  # the model call's first try: retried
    openai_server.push(tool_call_reply([("lookup", "{}"), ("note", json.dumps({"x": 1}))]))
    openai_server.push(text_reply("All done."))
    with Collector() as collector:
        tracer = otlp_tracer(collector.endpoint, service_name="seam-test")
        provider = OpenAICompatProvider(
            base_url=openai_server.base_url,
            api_key="k",
            model=DEFAULT_MODEL,
            max_retries=1,
            backoff_base=0.0,
            timeout=10.0,
            on_retry=noting_retries(tracer, None),
        )
        tools = registry(NamedTool("lookup"), NamedTool("note"))
        # No store operation is slow enough to be a span here (one that is: below).
        async with assemble_runtime(
            model=provider, tools=tools, tracer=tracer, slow_store_ms=60_000
        ) as rt:
            sub = await rt.ask("work", "look it up and note it", submission_id="otlp-1")
        # Closing the runtime flushed the batch to the collector.
    assert sub.outcome == "completed", sub.error
    assert set(collector.paths) == {"/v1/traces"}
    assert set(collector.content_types) == {"application/x-protobuf"}
    spans = collector.spans
    assert {s.service for s in spans} == {"seam-test"}
    assert {s.trace_id for s in spans} == {f"{trace_id_for('otlp-1'):032x}"}

    [turn] = [s for s in spans if s.name == "turn"]
    assert turn.parent_span_id == ""
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["seam.submission"] == "otlp-1"
    assert turn.attributes["seam.session"] == rt.session_key_for("work")
    assert turn.attributes["seam.personality"] == "default"
    assert turn.attributes["seam.attempt"] == 1
    assert turn.attributes["seam.outcome"] == "completed"

    chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert [c.name for c in chats] == [f"chat {DEFAULT_MODEL}"] * 2
    assert all(c.parent_span_id == turn.span_id for c in chats)
    first, second = sorted(chats, key=lambda c: c.attributes["seam.iteration"])
    for chat in chats:
        assert chat.attributes["gen_ai.provider.name"] == "openai"
        assert chat.attributes["gen_ai.request.model"] == DEFAULT_MODEL
        assert "seam.time_to_first_token_ms" in chat.attributes or chat is first
    # The first call was retried once by the provider, and says so.
    assert first.attributes["seam.retries"] == 1
    assert [name for name, _ in first.events] == ["retry"]
    assert "503" in first.events[0][1]["seam.retry.reason"]
    assert first.attributes["gen_ai.usage.input_tokens"] == 20
    assert first.attributes["gen_ai.usage.output_tokens"] == 9
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert "seam.retries" not in second.attributes
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)

    tool_spans = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert [s.attributes["gen_ai.tool.name"] for s in tool_spans] == ["lookup", "note"]
    assert [s.name for s in tool_spans] == ["execute_tool lookup", "execute_tool note"]
    for tool_span in tool_spans:
        assert tool_span.parent_span_id == turn.span_id
        assert tool_span.attributes["seam.tool.outcome"] == "ok"
        assert tool_span.attributes["seam.tool.duration_ms"] >= 0
        assert tool_span.attributes["gen_ai.tool.call.id"].startswith("call_")
    assert len(spans) == 5  # the turn, two model calls, two tool calls
