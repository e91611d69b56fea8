"""Client tools through `/v1/chat/completions`: streamed calls, a named session that
keeps the turn, and keep-alive comments while a turn waits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

from seam.core import ScriptedModel
from seam.core.scripted_model import call, error_step, text_step, tool_step
from tests.openai_api.support import WEATHER, client_for, says_result
from tests.web.harness import serving

ASK = [{"role": "user", "content": "weather in Oslo?"}]


async def test_streamed_tool_calls_then_the_results_continue(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            tool_step(call("weather", city="Oslo"), call("weather", city="Bergen")),
            lambda r: text_step(" / ".join(m.content for m in r.messages if m.role == "tool")),
        ]
    )
    async with serving(model, tmp_path) as served:
        client = client_for(served)
        stream = await client.chat.completions.create(
            model="default",
            messages=ASK,
            tools=[WEATHER],
            stream=True,  # type: ignore[arg-type, list-item]
        )
        chunks = [c async for c in stream]
        deltas = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or []]
        assert [(d.index, d.function.name) for d in deltas] == [  # type: ignore[union-attr]
            (0, "weather"),
            (1, "weather"),
        ]
        assert chunks[-1].choices[0].finish_reason == "tool_calls"
        calls = [
            {"id": d.id, "type": "function", "function": d.function.model_dump()} for d in deltas
        ]
        messages: list[Any] = [
            *ASK,
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": calls[0]["id"], "content": "sunny"},
            {"role": "tool", "tool_call_id": calls[1]["id"], "content": "rain"},
        ]
        final = await client.chat.completions.create(
            model="default",
            messages=messages,
            tools=[WEATHER],  # type: ignore[list-item]
        )
        assert final.choices[0].message.content == "sunny / rain"


async def test_a_named_session_keeps_the_turn_and_checks_the_results(tmp_path: Path) -> None:
    model = ScriptedModel([tool_step(call("weather", city="Oslo")), says_result])
    async with serving(model, tmp_path) as served:
        client = client_for(served)
        named = {"X-Seam-Session": "kept"}
        first = await client.chat.completions.create(
            model="default",
            messages=ASK,
            tools=[WEATHER],
            extra_headers=named,  # type: ignore[arg-type, list-item]
        )
        (asked,) = first.choices[0].message.tool_calls or []
        history: list[Any] = [*ASK, first.choices[0].message.model_dump(exclude_none=True)]
        wrong = [*history, {"role": "tool", "tool_call_id": "nope", "content": "x"}]
        async with served.client() as native:
            refused = await native.post(
                "/v1/chat/completions",
                json={"model": "default", "messages": wrong, "tools": [WEATHER]},
                headers=named,
            )
            assert refused.status_code == 400
            assert "'nope' answers no call the session 'kept' is waiting on" in refused.text
        right = [*history, {"role": "tool", "tool_call_id": asked.id, "content": "sunny"}]
        final = await client.chat.completions.create(
            model="default",
            messages=right,
            tools=[WEATHER],
            extra_headers=named,  # type: ignore[arg-type, list-item]
        )
        assert final.choices[0].message.content == "The tool said: sunny"
        async with served.client() as native:
            detail = (await native.get("/api/sessions/kept")).json()
        roles = [(m["role"], m["content"]) for m in detail["messages"]]
        assert roles == [
            ("user", "weather in Oslo?"),
            ("assistant", ""),
            ("tool", "sunny"),
            ("assistant", "The tool said: sunny"),
        ]


async def test_keep_alive_comments_while_a_tool_waits(tmp_path: Path) -> None:
    """A named session's approval waits for a person: the stream says `: keep-alive`
    (every `heartbeat_seconds`, 0.5 s here) until the answer comes."""
    model = ScriptedModel([tool_step(call("danger")), says_result])
    async with serving(model, tmp_path) as served, served.client() as native:
        body = {"model": "default", "messages": ASK, "stream": True}
        lines: list[str] = []
        async with native.stream(
            "POST", "/v1/chat/completions", json=body, headers={"X-Seam-Session": "s"}
        ) as response:
            async for line in response.aiter_lines():
                lines.append(line)
                if line == ": keep-alive" and lines.count(line) == 2:
                    pending = (await native.get("/api/sessions/s")).json()
                    call_id = _waiting_call(pending)
                    answer = {"decision": "once"}
                    posted = await native.post(f"/api/sessions/s/approvals/{call_id}", json=answer)
                    assert posted.status_code < 300, posted.text
        data = [json.loads(x[6:]) for x in lines if x.startswith("data: {")]
        text = "".join(d["choices"][0]["delta"].get("content") or "" for d in data if d["choices"])
        assert text == "The tool said: decision: once"
        assert lines.count(": keep-alive") >= 2


def _waiting_call(detail: dict[str, Any]) -> str:
    for message in reversed(detail["messages"]):
        for tool_call in message.get("tool_calls") or []:
            return str(tool_call["id"])
    raise AssertionError(f"no call waits in {detail}")


@pytest.mark.parametrize("stream", [False, True])
async def test_a_failed_turn_is_an_error_the_client_sees(tmp_path: Path, stream: bool) -> None:
    model = ScriptedModel([error_step("fatal", "the provider said no")])
    async with serving(model, tmp_path) as served:
        client = client_for(served)
        with pytest.raises(openai.APIError) as caught:
            answer = await client.chat.completions.create(
                model="default",
                messages=ASK,
                stream=stream,  # type: ignore[arg-type]
            )
            if stream:
                async for _ in answer:  # type: ignore[union-attr]
                    pass
        assert "the provider said no" in str(caught.value)
