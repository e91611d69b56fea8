"""Both providers' streams, fed arbitrary server-sent events: every body ends in model
chunks or a `ModelError`, never another exception."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from hypothesis import example, given
from hypothesis import strategies as st

from seam.contracts.messages import Message
from seam.contracts.model import ModelError, ModelRequest, ToolDefinition
from seam.services.llm.anthropic import AnthropicProvider
from seam.services.llm.openai_compat import OpenAICompatProvider
from seam.services.llm.sse import NotEventStream, SSEDecoder

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
maybe = lambda s: st.none() | s  # noqa: E731


def _openai_events() -> st.SearchStrategy[Any]:
    call = st.fixed_dictionaries(
        {"index": maybe(st.integers(-2, 3)) | st.text(max_size=3)},
        optional={
            "id": maybe(st.text(max_size=6)),
            "type": st.just("function"),
            "function": st.fixed_dictionaries(
                {},
                optional={
                    "name": maybe(st.text(max_size=8)),
                    "arguments": maybe(st.text(max_size=12)) | json_values,
                },
            ),
        },
    )
    delta = st.fixed_dictionaries(
        {},
        optional={
            "role": st.just("assistant"),
            "content": maybe(st.text(max_size=20)) | json_values,
            "reasoning_content": maybe(st.text(max_size=10)),
            "tool_calls": st.lists(call, max_size=3) | json_values,
        },
    )
    choice = st.fixed_dictionaries(
        {},
        optional={
            "delta": delta | json_values,
            "finish_reason": maybe(st.sampled_from(["stop", "length", "tool_calls", "x"])),
        },
    )
    usage = st.dictionaries(
        st.sampled_from(
            ["prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details"]
        ),
        st.integers(-5, 10**6) | json_values,
        max_size=4,
    )
    return (
        st.fixed_dictionaries(
            {},
            optional={
                "choices": st.lists(choice, max_size=2) | json_values,
                "usage": maybe(usage),
                "model": st.text(max_size=6),
                "error": json_values,
            },
        )
        | json_values
    )


def _anthropic_events() -> st.SearchStrategy[Any]:
    block = st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "thinking", "tool_use", "redacted_thinking", "weird"])},
        optional={
            "id": st.text(max_size=6),
            "name": st.text(max_size=6),
            "input": json_values,
            "text": st.text(max_size=6),
        },
    )
    delta = st.fixed_dictionaries(
        {
            "type": st.sampled_from(
                ["text_delta", "thinking_delta", "input_json_delta", "signature_delta", "x"]
            )
        },
        optional={
            "text": st.text(max_size=10) | json_values,
            "thinking": st.text(max_size=5),
            "partial_json": st.text(max_size=10),
            "signature": st.text(max_size=4),
            "stop_reason": maybe(st.text(max_size=10)),
        },
    )
    return (
        st.fixed_dictionaries(
            {
                "type": st.sampled_from(
                    [
                        "message_start",
                        "content_block_start",
                        "content_block_delta",
                        "content_block_stop",
                        "message_delta",
                        "message_stop",
                        "ping",
                        "error",
                    ]
                )
            },
            optional={
                "index": st.integers(-1, 3) | json_values,
                "content_block": block | json_values,
                "delta": delta | json_values,
                "message": st.fixed_dictionaries(
                    {}, optional={"usage": json_values, "model": st.text(max_size=5)}
                )
                | json_values,
                "usage": json_values,
                "error": json_values,
            },
        )
        | json_values
    )


def _lines(events: st.SearchStrategy[Any]) -> st.SearchStrategy[list[str]]:
    data_line = events.map(lambda e: "data: " + json.dumps(e))
    other = st.sampled_from(
        ["", "", ": ping", "event: x", "data: [DONE]", "data:", "id: 3", "retry: 10"]
    )
    junk = st.text(max_size=30).filter(lambda t: "\n" not in t and "\r" not in t)
    return st.lists(st.one_of(data_line, data_line, other, junk), max_size=14)


TOOLS = (
    ToolDefinition("lookup", "find", {"type": "object", "properties": {"q": {"type": "string"}}}),
)
REQUEST = ModelRequest(system="s", messages=(Message("user", "hi"),), tools=TOOLS)


async def _drain(provider: Any) -> None:
    try:
        async for _chunk in provider.stream(REQUEST):
            pass
    except ModelError:
        pass
    finally:
        await provider.aclose()


def _client(body: str, content_type: str = "text/event-stream") -> httpx.AsyncClient:
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body.encode(), headers={"content-type": content_type})

    return httpx.AsyncClient(transport=httpx.MockTransport(reply))


@given(_lines(_openai_events()))
@example(['data: {"choices": [{"delta": {"tool_calls": [{"index": 0}]}}]}', "", "data: [DONE]", ""])
def test_openai_streams_end_in_chunks_or_a_model_error(lines: list[str]) -> None:
    body = "\n".join(lines) + "\n"
    provider = OpenAICompatProvider(
        base_url="http://127.0.0.1:9/v1",
        api_key="k",
        model="m",
        max_retries=0,
        client=_client(body),
    )
    asyncio.run(_drain(provider))


@given(_lines(_anthropic_events()))
def test_anthropic_streams_end_in_chunks_or_a_model_error(lines: list[str]) -> None:
    body = "\n".join(lines) + "\n"
    provider = AnthropicProvider(
        api_key="k",
        model="claude-x",
        max_retries=0,
        client=_client(body),
        base_url="http://127.0.0.1:9",
    )
    asyncio.run(_drain(provider))


@given(st.lists(st.text(max_size=40).filter(lambda t: "\n" not in t), max_size=20))
def test_the_sse_decoder_takes_any_line_or_says_it_is_not_sse(lines: list[str]) -> None:
    decoder = SSEDecoder()
    for line in lines:
        try:
            data = decoder.feed(line)
        except NotEventStream as exc:
            assert exc.line == line
            continue
        assert data is None or isinstance(data, str)
    assert decoder.flush() in (None, "[DONE]")
