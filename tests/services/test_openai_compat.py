"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from email.utils import formatdate
from typing import Any

import httpx
import pytest

from seam.contracts.messages import Message, ToolCall, Usage
from seam.contracts.model import (
    DoneChunk,
    ModelChunk,
    ModelError,
    ModelProvider,
    ModelRequest,
    TextChunk,
    ThinkingChunk,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolDefinition,
    UsageChunk,
)
from seam.services.llm.openai_compat import OpenAICompatProvider
from tests.support.openai_server import (
    OpenAIServer,
    chunk,
    closed_port,
    error_reply,
    openai_server_fixture,  # noqa: F401  (registers the `openai_server` fixture)
    raw_reply,
    sse,
    stream_reply,
    text_reply,
    tool_call_reply,
    usage,
)
from tests.support.providers import ask, collect, provider_factory, text_of

Make = Callable[..., OpenAICompatProvider]
READ_FILE = ToolDefinition(
    "read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}
)
WRITE_FILE = ToolDefinition("write_file", "Write a file.", {"type": "object", "properties": {}})


@pytest.fixture
async def make(openai_server: OpenAIServer, delays: list[float]) -> AsyncIterator[Make]:
    async with provider_factory(
        OpenAICompatProvider,
        delays,
        base_url=openai_server.base_url,
        api_key="sk-test",
        model="test-model",
    ) as build:
        yield build


# -- streaming ---------------------------------------------------------------------------


async def test_text_arrives_as_ordered_deltas_then_usage_then_stop(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(
        text_reply("Hello, world!", chunk_size=3, usage_body=usage(12, 5, cached_tokens=4))
    )
    provider = make()
    assert isinstance(provider, ModelProvider)

    chunks = await collect(provider, ask())

    assert chunks == [
        TextChunk("Hel"),
        TextChunk("lo,"),
        TextChunk(" wo"),
        TextChunk("rld"),
        TextChunk("!"),
        UsageChunk(Usage(input_tokens=12, output_tokens=5, cache_read_tokens=4)),
        DoneChunk("stop"),
    ]


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_deltas_become_thinking_before_the_answer(
    openai_server: OpenAIServer, make: Make, field: str
) -> None:
    openai_server.push(
        text_reply(
            "Yes.",
            reasoning="Let me think it over.",
            reasoning_field=field,
            usage_body=usage(30, 9, reasoning_tokens=7),
        )
    )

    chunks = await collect(make(), ask())

    thinking = [c.text for c in chunks if isinstance(c, ThinkingChunk)]
    assert "".join(thinking) == "Let me think it over."
    assert text_of(chunks) == "Yes."
    assert chunks.index(ThinkingChunk(thinking[-1])) < chunks.index(TextChunk("Yes"))
    assert UsageChunk(Usage(30, 9, reasoning_tokens=7)) in chunks


@pytest.mark.parametrize(
    ("server_says", "caller_sees"),
    [("length", "length"), ("content_filter", "content_filter"), ("eos_token", "stop")],
)
async def test_finish_reason_is_mapped_to_the_contract(
    openai_server: OpenAIServer, make: Make, server_says: str, caller_sees: str
) -> None:
    openai_server.push(text_reply("Cut", finish_reason=server_says))

    chunks = await collect(make(), ask())

    assert chunks[-1] == DoneChunk(caller_sees)  # type: ignore[arg-type]


async def test_tool_call_arguments_split_across_chunks_are_reassembled(
    openai_server: OpenAIServer, make: Make
) -> None:
    arguments = '{"path": "note.txt"}'
    openai_server.push(tool_call_reply([("read_file", arguments)], split_every=5))

    chunks = await collect(make(), ask(tools=(READ_FILE,)))

    assert chunks[0] == ToolCallStart(0, "call_0_read_file", "read_file")
    fragments = [c.arguments for c in chunks if isinstance(c, ToolCallDelta)]
    assert fragments == ['{"pat', 'h": "', "note.", 'txt"}']
    assert ToolCallEnd(0, ToolCall("call_0_read_file", "read_file", arguments)) in chunks
    assert chunks[-1] == DoneChunk("tool_calls")


async def test_parallel_tool_calls_interleaved_by_index_end_in_index_order(
    openai_server: OpenAIServer, make: Make
) -> None:
    first, second = '{"path": "a.txt"}', '{"path": "b.txt", "text": "hello"}'
    openai_server.push(
        tool_call_reply(
            [("read_file", first), ("write_file", second)],
            split_every=4,
            interleave=True,
            text="On it.",
        )
    )

    chunks = await collect(make(), ask(tools=(READ_FILE, WRITE_FILE)))

    assert text_of(chunks) == "On it."
    starts = [c for c in chunks if isinstance(c, ToolCallStart)]
    assert [(s.index, s.name) for s in starts] == [(0, "read_file"), (1, "write_file")]
    for index, expected in enumerate((first, second)):
        assert (
            "".join(
                c.arguments for c in chunks if isinstance(c, ToolCallDelta) and c.index == index
            )
            == expected
        )
    ends = [c for c in chunks if isinstance(c, ToolCallEnd)]
    assert ends == [
        ToolCallEnd(0, ToolCall("call_0_read_file", "read_file", first)),
        ToolCallEnd(1, ToolCall("call_1_write_file", "write_file", second)),
    ]
    assert chunks[-1] == DoneChunk("tool_calls")


async def test_tool_calls_without_ids_get_ids_and_finish_as_tool_calls(
    openai_server: OpenAIServer, make: Make
) -> None:
    # Some local servers omit ids and finish with "stop" after calling tools.
    openai_server.push(
        tool_call_reply(
            [("read_file", '{"path": "a"}'), ("read_file", "")],
            with_ids=False,
            finish_reason="stop",
        )
    )

    chunks = await collect(make(), ask(tools=(READ_FILE,)))

    starts = [c for c in chunks if isinstance(c, ToolCallStart)]
    ends = [c.call for c in chunks if isinstance(c, ToolCallEnd)]
    assert [s.id for s in starts] == [call.id for call in ends]
    assert all(call.id.startswith("call_") for call in ends)
    assert ends[0].id != ends[1].id
    assert ends[1].arguments == "{}"  # a call with no arguments still parses as JSON
    assert chunks[-1] == DoneChunk("tool_calls")


# -- the request -------------------------------------------------------------------------


async def test_request_body_and_headers_follow_the_wire_format(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(text_reply("Done."))
    call = ToolCall("call_9", "read_file", '{"path": "a.txt"}')
    provider = make(base_url=openai_server.base_url + "/", extra_headers={"X-Title": "Seam"})
    request = ModelRequest(
        system="You are terse.",
        messages=(
            Message("user", "read a.txt"),
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", "contents", tool_call_id="call_9", name="read_file"),
            Message("assistant", "It says contents."),
        ),
        tools=(WRITE_FILE, READ_FILE),
    )

    await collect(provider, request)

    (sent,) = openai_server.chat_requests
    assert sent.method == "POST"
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.headers["x-title"] == "Seam"
    assert sent.body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "read a.txt"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_9", "content": "contents"},
        {"role": "assistant", "content": "It says contents."},
    ]
    assert [t["function"]["name"] for t in sent.body["tools"]] == ["read_file", "write_file"]
    assert sent.body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": dict(READ_FILE.parameters),
        },
    }
    assert sent.body["model"] == "test-model"
    assert sent.body["stream"] is True
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["tool_choice"] == "auto"
    assert "max_tokens" not in sent.body
    assert "temperature" not in sent.body


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("write_file", {"type": "function", "function": {"name": "write_file"}}),
    ],
)
async def test_tool_choice_is_mapped(
    openai_server: OpenAIServer, make: Make, choice: str, wire: Any
) -> None:
    openai_server.push(text_reply("ok"))

    await collect(make(), ask(tools=(READ_FILE, WRITE_FILE), tool_choice=choice))

    assert openai_server.chat_requests[0].body["tool_choice"] == wire


async def test_optional_fields_only_when_set_and_no_auth_without_a_key(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(text_reply("ok"))

    await collect(
        make(api_key=None),
        ask(tool_choice="required", model="other-model", max_tokens=64, temperature=0.2),
    )

    (sent,) = openai_server.chat_requests
    assert "authorization" not in sent.headers
    assert "tools" not in sent.body
    assert "tool_choice" not in sent.body
    assert sent.body["model"] == "other-model"
    assert sent.body["max_tokens"] == 64
    assert sent.body["temperature"] == 0.2


async def test_unknown_tool_choice_is_rejected_before_anything_is_sent(
    openai_server: OpenAIServer, make: Make
) -> None:
    with pytest.raises(ModelError, match="delete_everything") as caught:
        await collect(make(), ask(tools=(READ_FILE,), tool_choice="delete_everything"))

    assert caught.value.kind == "fatal"
    assert openai_server.requests == []


def test_base_url_must_be_http() -> None:
    with pytest.raises(ValueError, match="base_url"):
        OpenAICompatProvider(base_url="127.0.0.1:8000/v1", api_key=None, model="m")


# -- errors and retries ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "expected_delay"),
    [
        ({"Retry-After": "2"}, 2.0),
        ({"Retry-After": "120"}, 30.0),  # capped at backoff_max
        ({"retry-after-ms": "1500"}, 1.5),
        (
            {
                "Date": formatdate(1_700_000_000, usegmt=True),
                "Retry-After": formatdate(1_700_000_003, usegmt=True),
            },
            3.0,
        ),
    ],
)
async def test_rate_limit_waits_as_long_as_retry_after_says_then_succeeds(
    openai_server: OpenAIServer,
    make: Make,
    delays: list[float],
    headers: dict[str, str],
    expected_delay: float,
) -> None:
    openai_server.push(error_reply(429, headers=headers), text_reply("ok"))

    chunks = await collect(make(backoff_max=30.0), ask())

    assert text_of(chunks) == "ok"
    assert delays == [expected_delay]
    assert len(openai_server.chat_requests) == 2


async def test_server_error_is_retried_after_a_jittered_backoff(
    openai_server: OpenAIServer, make: Make, delays: list[float]
) -> None:
    openai_server.push(error_reply(500), text_reply("recovered"))

    chunks = await collect(make(backoff_base=0.5), ask())

    assert text_of(chunks) == "recovered"
    assert len(delays) == 1
    assert 0.0 <= delays[0] <= 0.5


async def test_bad_key_is_an_auth_error_and_is_not_retried(
    openai_server: OpenAIServer, make: Make, delays: list[float]
) -> None:
    body = {"error": {"message": "Incorrect API key provided: sk-te***", "type": "invalid"}}
    openai_server.push(error_reply(401, body), text_reply("never sent"))

    with pytest.raises(ModelError) as caught:
        await collect(make(), ask())

    error = caught.value
    assert (error.kind, error.status, error.provider) == ("auth", 401, "openai")
    assert "Incorrect API key provided" in error.message
    assert delays == []
    assert openai_server.pending == 1


async def test_prompt_too_long_is_a_context_overflow(
    openai_server: OpenAIServer, make: Make, delays: list[float]
) -> None:
    body = {
        "error": {
            "message": "This model's maximum context length is 8192 tokens. However, your "
            "messages resulted in 9001 tokens.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    }
    openai_server.push(error_reply(400, body))

    with pytest.raises(ModelError) as caught:
        await collect(make(), ask())

    assert caught.value.kind == "context_overflow"
    assert "maximum context length is 8192" in caught.value.message
    assert delays == []


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (402, "Payment required", "billing"),
        (429, "You exceeded your current quota (insufficient_quota)", "billing"),
        (403, "Forbidden", "auth"),
        (413, "prompt is too long: 250000 tokens", "context_overflow"),
        (400, "Your request was rejected by our content policy", "refused"),
        (404, "The model `nope` does not exist", "fatal"),
        (503, "Service unavailable", "retryable"),
        (529, "Overloaded", "retryable"),
    ],
)
async def test_error_statuses_are_classified(
    openai_server: OpenAIServer, make: Make, status: int, message: str, kind: str
) -> None:
    openai_server.push(error_reply(status, {"error": {"message": message}}))

    with pytest.raises(ModelError) as caught:
        await collect(make(max_retries=0), ask())

    assert (caught.value.kind, caught.value.status) == (kind, status)
    assert message in caught.value.message


async def test_exhausted_retries_raise_the_last_error(
    openai_server: OpenAIServer, make: Make, delays: list[float]
) -> None:
    openai_server.push(
        *(error_reply(503, {"error": {"message": f"overloaded #{n}"}}) for n in (1, 2, 3))
    )

    with pytest.raises(ModelError) as caught:
        await collect(make(max_retries=2, backoff_base=0.5), ask())

    assert caught.value.kind == "retryable"
    assert caught.value.status == 503
    assert "overloaded #3" in caught.value.message
    assert len(openai_server.chat_requests) == 3
    assert len(delays) == 2
    assert 0.0 <= delays[0] <= 0.5 and 0.0 <= delays[1] <= 1.0


async def test_malformed_chunk_before_any_output_is_retried(
    openai_server: OpenAIServer, make: Make, delays: list[float]
) -> None:
    openai_server.push(raw_reply(["data: {not json", ""]), text_reply("fine"))

    chunks = await collect(make(), ask())

    assert text_of(chunks) == "fine"
    assert len(delays) == 1


async def test_malformed_chunk_is_a_retryable_error_that_says_so(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(raw_reply(["data: {not json", ""]))

    with pytest.raises(ModelError) as caught:
        await collect(make(max_retries=0), ask())

    assert caught.value.kind == "retryable"
    assert "malformed stream" in caught.value.message
    assert "{not json" in caught.value.message


async def test_a_response_that_is_not_sse_fails_at_once_with_what_it_said(
    openai_server: OpenAIServer, make: Make, delays: list[float]
) -> None:
    openai_server.push(
        raw_reply(["<html>", "<h1>Bad gateway</h1>"], content_type="text/html"), text_reply("x")
    )

    with pytest.raises(ModelError) as caught:
        await collect(make(), ask())

    assert caught.value.kind == "fatal"  # the same page would come back: not retried
    assert "not an event stream (text/html): Bad gateway" in caught.value.message
    assert delays == [] and openai_server.pending == 1


async def test_an_html_page_is_quoted_by_its_title(openai_server: OpenAIServer, make: Make) -> None:
    page = ["<!DOCTYPE html>", "<html><head>", "<title>502 Bad Gateway</title>", "</head>"]
    openai_server.push(raw_reply([*page, "<body>" + "x" * 5000 + "</body></html>"]))

    with pytest.raises(ModelError) as caught:
        await collect(make(), ask())

    assert caught.value.kind == "fatal"
    assert caught.value.message.endswith("not an event stream (text/event-stream): 502 Bad Gateway")


async def test_a_json_error_body_with_status_200_fails_at_once_with_its_message(
    openai_server: OpenAIServer, make: Make, delays: list[float]
) -> None:
    error = {"error": {"message": "Upstream is " + "very " * 100 + "down", "type": "server_error"}}
    text = json.dumps(error, indent=2)  # pretty-printed: the message spans lines
    openai_server.push(raw_reply(text.splitlines(), content_type="application/json"))

    with pytest.raises(ModelError) as caught:
        await collect(make(), ask())

    assert caught.value.kind == "fatal"
    assert caught.value.message.startswith("Upstream is very very")
    assert len(caught.value.message) <= 200
    assert delays == []


async def test_error_event_inside_the_stream_is_classified_and_retried(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(
        stream_reply([sse({"error": {"message": "Upstream overloaded", "code": 502}})]),
        text_reply("second try"),
    )

    chunks = await collect(make(), ask())

    assert text_of(chunks) == "second try"


async def test_a_stalled_stream_times_out_as_retryable(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(text_reply("too late").stalled())
    started = time.monotonic()

    with pytest.raises(ModelError) as caught:
        await collect(make(timeout=0.3, max_retries=0), ask())

    assert caught.value.kind == "retryable"
    assert "timed out" in caught.value.message
    assert time.monotonic() - started < 3.0


async def test_error_after_output_began_is_raised_not_retried(
    openai_server: OpenAIServer, make: Make, delays: list[float]
) -> None:
    # The connection drops after "Hel" and "lo "; a retry would show them twice.
    openai_server.push(text_reply("Hello world", chunk_size=3).dropped(after=3), text_reply("x"))
    seen: list[ModelChunk] = []

    with pytest.raises(ModelError) as caught:
        async for item in make().stream(ask()):
            seen.append(item)

    assert text_of(seen) == "Hello "
    assert caught.value.kind == "retryable"
    assert delays == []
    assert len(openai_server.chat_requests) == 1
    assert openai_server.pending == 1


async def test_a_stream_cut_short_is_an_error_not_a_silently_short_answer(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(stream_reply([chunk({"content": "Partial"})], done=False))
    seen: list[ModelChunk] = []

    with pytest.raises(ModelError, match="ended before"):
        async for item in make().stream(ask()):
            seen.append(item)

    assert text_of(seen) == "Partial"


async def test_unreachable_server_is_a_retryable_connect_error(
    make: Make, delays: list[float]
) -> None:
    port = closed_port()  # nothing listens there

    with pytest.raises(ModelError) as caught:
        await collect(make(base_url=f"http://127.0.0.1:{port}/v1", max_retries=1), ask())

    assert caught.value.kind == "retryable"
    assert caught.value.message.startswith(f"connection refused (http://127.0.0.1:{port}/v1")
    assert len(delays) == 1


# -- the rest of the provider ------------------------------------------------------------


async def test_list_models_returns_the_endpoint_model_ids(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.models = ["llama-3-8b", "qwen2.5-7b"]

    assert await make().list_models() == ["llama-3-8b", "qwen2.5-7b"]
    (sent,) = openai_server.requests
    assert (sent.method, sent.path) == ("GET", "/v1/models")
    assert sent.headers["authorization"] == "Bearer sk-test"


async def test_list_models_classifies_errors_like_stream(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push_models(error_reply(401, {"error": {"message": "bad key"}}))

    with pytest.raises(ModelError) as caught:
        await make().list_models()

    assert (caught.value.kind, caught.value.status) == ("auth", 401)
    assert "bad key" in caught.value.message


async def test_an_injected_client_stays_open_after_aclose(
    openai_server: OpenAIServer,
) -> None:
    openai_server.push(text_reply("ok"))
    async with httpx.AsyncClient() as client:
        provider = OpenAICompatProvider(
            base_url=openai_server.base_url, api_key=None, model="m", client=client
        )
        assert text_of(await collect(provider, ask())) == "ok"
        await provider.aclose()

        assert not client.is_closed


def test_token_estimate_is_about_four_characters_a_token() -> None:
    provider = OpenAICompatProvider(base_url="http://127.0.0.1:1/v1", api_key=None, model="m")

    assert provider.count_tokens("") == 0
    assert provider.count_tokens("abcd") == 1
    assert provider.count_tokens("abcde") == 2
    assert provider.capabilities.tools and provider.capabilities.streaming
