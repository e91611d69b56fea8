"""`/v1/responses` through the official client: text, streamed events, a function call
round trip and a schema-shaped answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from seam.core import ScriptedModel
from seam.core.scripted_model import Step, call, text_step, tool_step
from tests.openai_api.support import client_for, says_result
from tests.web.harness import serving

WEATHER: dict[str, Any] = {
    "type": "function",
    "name": "weather",
    "description": "today's weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "strict": False,
}


async def test_a_text_answer(tmp_path: Path) -> None:
    model = ScriptedModel([text_step("Hello there")])
    async with serving(model, tmp_path) as served:
        answer = await client_for(served).responses.create(
            model="default", input="hi", instructions="Be brief."
        )
        assert answer.status == "completed" and answer.output_text == "Hello there"
        assert answer.usage is not None and answer.usage.total_tokens > 0
        assert "Be brief." in [m.content for m in model.requests[0].messages if m.role == "system"]


async def test_a_streamed_answer_sends_the_responses_events(tmp_path: Path) -> None:
    model = ScriptedModel([Step(deltas=["Hel", "lo"])])
    async with serving(model, tmp_path) as served:
        stream = await client_for(served).responses.create(
            model="default", input=[{"role": "user", "content": "hi"}], stream=True
        )
        events = [e async for e in stream]
        kinds = [e.type for e in events]
        assert kinds == [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
        assert [e.sequence_number for e in events] == list(range(1, len(events) + 1))
        assert events[-1].response.output_text == "Hello"  # type: ignore[union-attr]


async def test_a_function_call_round_trip(tmp_path: Path) -> None:
    model = ScriptedModel(
        [tool_step(call("echo", text="x")), tool_step(call("weather", city="Oslo")), says_result]
    )
    async with serving(model, tmp_path) as served:
        client = client_for(served)
        first = await client.responses.create(
            model="default",
            input="weather in Oslo?",
            tools=[WEATHER],  # type: ignore[list-item]
        )
        (item,) = first.output
        assert item.type == "function_call" and item.name == "weather"
        assert json.loads(item.arguments) == {"city": "Oslo"}
        follow: list[Any] = [
            {"role": "user", "content": "weather in Oslo?"},
            item.model_dump(exclude_none=True),
            {"type": "function_call_output", "call_id": item.call_id, "output": "sunny"},
        ]
        stream = await client.responses.create(
            model="default",
            input=follow,
            tools=[WEATHER],
            stream=True,  # type: ignore[list-item]
        )
        events = [e async for e in stream]
        assert events[-1].type == "response.completed"
        assert events[-1].response.output_text == "The tool said: sunny"  # type: ignore[union-attr]


async def test_a_streamed_function_call(tmp_path: Path) -> None:
    model = ScriptedModel([tool_step(call("weather", city="Oslo"), text="Let me look.")])
    async with serving(model, tmp_path) as served:
        stream = await client_for(served).responses.create(
            model="default",
            input="weather?",
            tools=[WEATHER],
            stream=True,  # type: ignore[list-item]
        )
        events = [e async for e in stream]
        done = [e for e in events if e.type == "response.function_call_arguments.done"]
        assert [json.loads(e.arguments) for e in done] == [{"city": "Oslo"}]  # type: ignore[union-attr]
        final = events[-1].response  # type: ignore[union-attr]
        assert [o.type for o in final.output] == ["message", "function_call"]
        assert final.output_text == "Let me look."


async def test_a_json_schema_answer(tmp_path: Path) -> None:
    model = ScriptedModel([text_step('{"city": "Oslo"}')])
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    async with serving(model, tmp_path) as served:
        answer = await client_for(served).responses.create(
            model="default",
            input="where?",
            text={"format": {"type": "json_schema", "name": "place", "schema": schema}},
        )
        assert json.loads(answer.output_text) == {"city": "Oslo"}


async def test_a_stateless_approval_is_told_in_the_stream_too(tmp_path: Path) -> None:
    model = ScriptedModel([tool_step(call("danger")), says_result])
    async with serving(model, tmp_path) as served:
        stream = await client_for(served).responses.create(
            model="default", input="clean up", stream=True
        )
        events = [e async for e in stream]
        said = "".join(e.delta for e in events if e.type == "response.output_text.delta")  # type: ignore[union-attr]
        final = events[-1].response  # type: ignore[union-attr]
        assert said == final.output_text
        assert said.startswith("The tool said: decision: unavailable")
        assert "`rm -r build` needed approval and was not run" in said
