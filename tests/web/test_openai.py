"""The OpenAI-compatible endpoint, driven by the official `openai` client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from seam.contracts.model import ModelRequest
from seam.core import ScriptedModel
from seam.core.scripted_model import Step, call, text_step, tool_step
from tests.web.harness import serving, sse_events


def client_for(served, tenant: str = "local") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=f"{served.url}/v1", api_key=served.keys[tenant], max_retries=0
    )


def echo_tool_result(request: ModelRequest) -> Step:
    """Answers with what the tool returned, so the text proves the round trip."""
    result = request.messages[-1].content
    return text_step(f"The tool said: {result}")


async def test_models_are_the_personalities(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served:
        models = await client_for(served).models.list()
        assert [m.id for m in models.data] == ["default"]


async def test_a_non_streamed_answer_with_a_server_side_tool_round_trip(tmp_path: Path) -> None:
    model = ScriptedModel([tool_step(call("echo", text="ping")), echo_tool_result])
    async with serving(model, tmp_path) as served:
        answer = await client_for(served).chat.completions.create(
            model="default", messages=[{"role": "user", "content": "use the tool"}]
        )
        assert answer.object == "chat.completion"
        assert answer.choices[0].message.role == "assistant"
        assert answer.choices[0].message.content == "The tool said: echo: ping"
        assert answer.choices[0].message.tool_calls is None
        assert answer.choices[0].finish_reason == "stop"
        assert answer.usage is not None and answer.usage.total_tokens > 0
        # Stateless: the throwaway session is gone again.
        async with served.client() as native:
            assert (await native.get("/api/sessions")).json() == {"sessions": []}


async def test_a_streamed_answer_in_the_openai_wire_format(tmp_path: Path) -> None:
    model = ScriptedModel([Step(deltas=["Hello", ", ", "world"])])
    async with serving(model, tmp_path) as served:
        stream = await client_for(served).chat.completions.create(
            model="default",
            messages=[
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "earlier question"},
                {"role": "assistant", "content": "earlier answer"},
                {"role": "user", "content": "say hello"},
            ],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [chunk async for chunk in stream]
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == "Hello, world"
        assert chunks[0].choices[0].delta.role == "assistant"
        finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
        assert finishes[-1] == "stop" and finishes.count("stop") == 1
        assert chunks[-1].choices == [] and chunks[-1].usage is not None
        assert len({c.id for c in chunks}) == 1
        # The request's messages were the whole conversation the model saw.
        sent = [(m.role, m.content) for m in model.requests[0].messages if m.role != "system"]
        assert sent[-3:] == [
            ("user", "earlier question"),
            ("assistant", "earlier answer"),
            ("user", "say hello"),
        ]


async def test_with_a_session_header_the_turn_is_durable(tmp_path: Path) -> None:
    model = ScriptedModel([text_step("first"), text_step("second")])
    async with serving(model, tmp_path) as served:
        client = client_for(served)
        for text in ("one", "two"):
            await client.chat.completions.create(
                model="default",
                messages=[{"role": "user", "content": text}],
                extra_headers={"X-Seam-Session": "kept"},
            )
        async with served.client() as native:
            detail = (await native.get("/api/sessions/kept")).json()
            assert [m["content"] for m in detail["messages"]] == ["one", "first", "two", "second"]
            events = await sse_events(native, "/api/sessions/kept/events", count=2)
            assert [e["data"]["text"] for e in events if e["event"] == "done"] == [
                "first",
                "second",
            ]


async def test_an_unknown_model_is_a_404_the_client_understands(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served:
        with pytest.raises(openai.NotFoundError) as caught:
            await client_for(served).chat.completions.create(
                model="gpt-nothing", messages=[{"role": "user", "content": "hi"}]
            )
        assert "gpt-nothing" in str(caught.value)
        bad_key = openai.AsyncOpenAI(base_url=f"{served.url}/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            await bad_key.models.list()


async def test_client_side_tools_come_back_as_tool_calls(tmp_path: Path) -> None:
    """A client tool is offered to the model; its call comes back to the client (not run
    here), after a Seam tool ran in the same turn; the `tool` message continues it."""
    model = ScriptedModel(
        [
            tool_step(call("echo", text="first")),  # Seam's own tool, run on the server
            tool_step(call("weather", city="Oslo"), text="Checking."),  # the client's
            echo_tool_result,
        ]
    )
    weather = {
        "type": "function",
        "function": {
            "name": "weather",
            "description": "today's weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
    async with serving(model, tmp_path) as served:
        client = client_for(served)
        messages: list[Any] = [{"role": "user", "content": "weather in Oslo?"}]
        answer = await client.chat.completions.create(
            model="default",
            messages=messages,
            tools=[weather],  # type: ignore[list-item]
        )
        choice = answer.choices[0]
        assert choice.finish_reason == "tool_calls"
        assert choice.message.content == "Checking."
        (asked,) = choice.message.tool_calls or []
        assert asked.function.name == "weather"  # type: ignore[union-attr]
        assert asked.function.arguments == '{"city": "Oslo"}'  # type: ignore[union-attr]
        offered = {t.name for t in model.requests[0].tools}
        assert {"weather", "echo"} <= offered
        messages += [
            choice.message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": asked.id, "content": "sunny, 21 C"},
        ]
        final = await client.chat.completions.create(
            model="default",
            messages=messages,
            tools=[weather],  # type: ignore[list-item]
        )
        assert final.choices[0].finish_reason == "stop"
        assert final.choices[0].message.content == "The tool said: sunny, 21 C"
        sent = model.requests[-1].messages
        assert [m.role for m in sent if m.role != "system"][-3:] == ["user", "assistant", "tool"]
        async with served.client() as native:  # both throwaway sessions are gone
            assert (await native.get("/api/sessions")).json() == {"sessions": []}


@pytest.mark.parametrize("stream", [False, True])
async def test_a_stateless_approval_has_no_one_to_ask(tmp_path: Path, stream: bool) -> None:
    model = ScriptedModel([tool_step(call("danger")), echo_tool_result])
    async with serving(model, tmp_path) as served:
        client = client_for(served)
        messages: list[Any] = [{"role": "user", "content": "clean up"}]
        if stream:
            chunks = [
                c
                async for c in await client.chat.completions.create(
                    model="default", messages=messages, stream=True
                )
            ]
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            assert chunks[-1].choices[0].finish_reason == "stop"
        else:
            answer = await client.chat.completions.create(model="default", messages=messages)
            text = answer.choices[0].message.content or ""
        # The tool was told nobody could approve (not that the person said no) ...
        assert text.startswith("The tool said: decision: unavailable")
        # ... and the client is told what was not run and how to run it.
        assert "`rm -r build` needed approval and was not run" in text
        assert "X-Seam-Session" in text
