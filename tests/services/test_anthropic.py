"""The Anthropic Messages provider against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from seam.contracts import ToolContext
from seam.contracts.events import Done, ToolEnd, ToolStart, UsageEvent
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
from seam.core import AgentLoop, DefaultToolRegistry
from seam.services.llm.anthropic import AnthropicProvider
from tests.support.anthropic_server import (
    AnthropicServer,
    anthropic_server_fixture,  # noqa: F401  (registers the `anthropic_server` fixture)
    block_stop,
    error_event,
    error_reply,
    message_start,
    message_stop,
    ping,
    stream_reply,
    text_delta,
    text_reply,
    text_start,
    tool_use_reply,
    tool_use_start,
)
from tests.support.providers import ask, collect, provider_factory, text_of

Make = Callable[..., AnthropicProvider]
READ_FILE = ToolDefinition(
    "read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}
)
WRITE_FILE = ToolDefinition("write_file", "Write a file.", {"type": "object", "properties": {}})
CACHED = {"type": "ephemeral"}


@pytest.fixture
async def make(anthropic_server: AnthropicServer, delays: list[float]) -> AsyncIterator[Make]:
    async with provider_factory(
        AnthropicProvider,
        delays,
        base_url=anthropic_server.base_url,
        api_key="sk-ant-test",
        model="claude-test",
    ) as build:
        yield build


def sent_body(server: AnthropicServer, number: int = 0) -> dict[str, Any]:
    body = server.message_requests[number].body
    assert isinstance(body, dict)
    return body


def breakpoints(body: Mapping[str, Any]) -> list[str]:
    """Where the request put `cache_control`, as readable paths."""
    found = [f"tools[{i}]" for i, t in enumerate(body.get("tools", ())) if "cache_control" in t]
    found += [f"system[{i}]" for i, b in enumerate(body.get("system", ())) if "cache_control" in b]
    for m, message in enumerate(body["messages"]):
        found += [
            f"messages[{m}][{b}]"
            for b, block in enumerate(message["content"])
            if "cache_control" in block
        ]
    return found


# -- streaming ---------------------------------------------------------------------------


async def test_text_arrives_as_ordered_deltas_then_usage_then_stop(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push(text_reply("Hello, world!", chunk_size=3))
    provider = make()
    assert isinstance(provider, ModelProvider)

    chunks = await collect(provider, ask())

    assert chunks == [
        TextChunk("Hel"),
        TextChunk("lo,"),
        TextChunk(" wo"),
        TextChunk("rld"),
        TextChunk("!"),
        UsageChunk(Usage(input_tokens=12, output_tokens=5)),
        DoneChunk("stop"),
    ]


async def test_thinking_streams_before_the_answer_and_the_signature_stays_hidden(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push(text_reply("Yes.", chunk_size=4, thinking="Let me think it over."))

    chunks = await collect(make(), ask())

    assert chunks[:6] == [
        ThinkingChunk("Let "),
        ThinkingChunk("me t"),
        ThinkingChunk("hink"),
        ThinkingChunk(" it "),
        ThinkingChunk("over"),
        ThinkingChunk("."),
    ]
    assert chunks[6:] == [TextChunk("Yes."), UsageChunk(Usage(12, 1)), DoneChunk("stop")]


async def test_tool_use_json_split_across_many_deltas_is_reassembled_per_call(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    first = '{"path": "notes/to do.txt", "lines": [1, 2, 3]}'
    second = '{"path": "out.txt", "text": "caf\\u00e9 \\"quoted\\""}'
    anthropic_server.push(
        tool_use_reply([("read_file", first), ("write_file", second)], split_every=2, text="On it.")
    )

    chunks = await collect(make(), ask(tools=(READ_FILE, WRITE_FILE)))

    assert text_of(chunks) == "On it."
    starts = [c for c in chunks if isinstance(c, ToolCallStart)]
    assert starts == [
        ToolCallStart(0, "toolu_0_read_file", "read_file"),
        ToolCallStart(1, "toolu_1_write_file", "write_file"),
    ]
    for index, expected in ((0, first), (1, second)):
        pieces = [c.arguments for c in chunks if isinstance(c, ToolCallDelta) and c.index == index]
        assert len(pieces) > 10
        assert "".join(pieces) == expected
    ends = [c for c in chunks if isinstance(c, ToolCallEnd)]
    assert ends == [
        ToolCallEnd(0, ToolCall("toolu_0_read_file", "read_file", first)),
        ToolCallEnd(1, ToolCall("toolu_1_write_file", "write_file", second)),
    ]
    # Each call is complete as soon as its block closes, before the next one starts.
    assert chunks.index(ends[0]) < chunks.index(starts[1])
    assert chunks[-2:] == [UsageChunk(Usage(20, 9)), DoneChunk("tool_calls")]


async def test_a_tool_use_without_input_gets_an_empty_object(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push(tool_use_reply([("write_file", "")]))

    chunks = await collect(make(), ask(tools=(WRITE_FILE,)))

    ends = [c.call for c in chunks if isinstance(c, ToolCallEnd)]
    assert ends == [ToolCall("toolu_0_write_file", "write_file", "{}")]
    assert not any(isinstance(c, ToolCallDelta) for c in chunks)


async def test_usage_counts_cached_prompt_tokens_as_input_and_reports_them(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push(
        text_reply("ok", input_tokens=7, cache_read=1500, cache_write=300, output_tokens=2)
    )

    chunks = await collect(make(), ask())

    usage = next(c.usage for c in chunks if isinstance(c, UsageChunk))
    assert usage == Usage(
        input_tokens=1807, output_tokens=2, cache_read_tokens=1500, cache_write_tokens=300
    )


async def test_cumulative_usage_in_message_delta_wins_over_message_start(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    final = json.dumps(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {
                "input_tokens": 40,
                "cache_read_input_tokens": 60,
                "cache_creation_input_tokens": None,
                "output_tokens": 3,
            },
        }
    )
    anthropic_server.push(
        stream_reply(
            [
                message_start(0, cache_write=25),
                text_start(0),
                text_delta(0, "ok"),
                block_stop(0),
                f"event: message_delta\ndata: {final}\n\n".encode(),
                message_stop(),
            ]
        )
    )

    chunks = await collect(make(), ask())

    assert UsageChunk(Usage(125, 3, cache_read_tokens=60, cache_write_tokens=25)) in chunks


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("refusal", "content_filter"),
        ("pause_turn", "stop"),
        ("some_future_reason", "stop"),
    ],
)
async def test_stop_reasons_map_to_finish_reasons(
    anthropic_server: AnthropicServer, make: Make, stop_reason: str, finish: str
) -> None:
    anthropic_server.push(text_reply("x", stop_reason=stop_reason))

    chunks = await collect(make(), ask())

    assert chunks[-1] == DoneChunk(finish)  # type: ignore[arg-type]


async def test_a_stream_cut_short_before_message_stop_is_an_error(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push(
        stream_reply([message_start(), text_start(0), text_delta(0, "Partial"), ping()])
    )
    seen: list[ModelChunk] = []

    with pytest.raises(ModelError, match="ended before message_stop"):
        async for item in make().stream(ask()):
            seen.append(item)

    assert text_of(seen) == "Partial"


# -- the request -------------------------------------------------------------------------


async def test_request_headers_and_body_follow_the_wire_format(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push(text_reply("Done."))
    first = ToolCall("toolu_1", "read_file", '{"path": "a.txt"}')
    second = ToolCall("toolu_2", "read_file", '{"path": "b.txt"}')
    request = ModelRequest(
        system="You are terse.",
        messages=(
            Message("user", "read a.txt and b.txt"),
            Message("assistant", "Reading both.", tool_calls=(first, second)),
            Message("tool", "contents of a", tool_call_id="toolu_1", name="read_file"),
            Message("tool", "error: b.txt does not exist", tool_call_id="toolu_2"),
            Message("user", "also, hurry"),
            Message("assistant", "a says: contents of a"),
            Message("user", "thanks"),
        ),
        tools=(WRITE_FILE, READ_FILE),
    )

    await collect(make(base_url=anthropic_server.base_url + "/"), request)

    (sent,) = anthropic_server.message_requests
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.headers["x-api-key"] == "sk-ant-test"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert "authorization" not in sent.headers
    body = sent.body
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 8192
    assert body["stream"] is True
    assert body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": CACHED}]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "read a.txt and b.txt"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading both."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "read_file",
                    "input": {"path": "a.txt"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "read_file",
                    "input": {"path": "b.txt"},
                },
            ],
        },
        {
            # Both results and the user's follow-up share one user turn: roles alternate.
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "contents of a"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "error: b.txt does not exist",
                    "is_error": True,
                },
                {"type": "text", "text": "also, hurry", "cache_control": CACHED},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "a says: contents of a"}]},
        {"role": "user", "content": [{"type": "text", "text": "thanks"}]},
    ]
    assert body["tools"] == [
        {
            "name": "read_file",
            "description": "Read a file.",
            "input_schema": dict(READ_FILE.parameters),
        },
        {
            "name": "write_file",
            "description": "Write a file.",
            "input_schema": dict(WRITE_FILE.parameters),
            "cache_control": CACHED,
        },
    ]
    assert body["tool_choice"] == {"type": "auto"}
    assert "temperature" not in body
    assert "thinking" not in body


async def test_transcript_oddities_still_make_a_valid_request(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push(text_reply("ok"))
    request = ModelRequest(
        system="Base prompt.",
        messages=(
            Message("system", "Summary of the earlier conversation."),
            Message("user", "first"),
            Message("assistant", ""),  # an empty reply: dropped, its neighbours merge
            Message("user", "second"),
            # Bad JSON from the model and an id minted by another provider.
            Message(
                "assistant", "", tool_calls=(ToolCall("functions.read:0", "read_file", "{oops"),)
            ),
            Message("tool", "error: arguments are not valid JSON", tool_call_id="functions.read:0"),
        ),
        tools=(READ_FILE,),
    )

    await collect(make(prompt_cache=False), request)

    body = sent_body(anthropic_server)
    assert body["system"] == [
        {"type": "text", "text": "Base prompt."},
        {"type": "text", "text": "Summary of the earlier conversation."},
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "functions_read_0", "name": "read_file", "input": {}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "functions_read_0",
                    "content": "error: arguments are not valid JSON",
                    "is_error": True,
                }
            ],
        },
    ]
    assert breakpoints(body) == []


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("required", {"type": "any"}),
        ("none", {"type": "none"}),
        ("write_file", {"type": "tool", "name": "write_file"}),
    ],
)
async def test_tool_choice_is_mapped(
    anthropic_server: AnthropicServer, make: Make, choice: str, wire: dict[str, str]
) -> None:
    anthropic_server.push(text_reply("ok"))

    await collect(make(), ask(tools=(READ_FILE, WRITE_FILE), tool_choice=choice))

    assert sent_body(anthropic_server)["tool_choice"] == wire


async def test_optional_fields_only_when_set(anthropic_server: AnthropicServer, make: Make) -> None:
    anthropic_server.push(text_reply("ok"))

    await collect(
        make(api_key=None),
        ask(tool_choice="required", model="claude-other", max_tokens=64, temperature=0.2),
    )

    (sent,) = anthropic_server.message_requests
    assert "x-api-key" not in sent.headers
    assert "tools" not in sent.body
    assert "tool_choice" not in sent.body
    assert (sent.body["model"], sent.body["max_tokens"]) == ("claude-other", 64)
    assert sent.body["temperature"] == 0.2


def long_history(turns: int) -> tuple[Message, ...]:
    """`turns` user/assistant exchanges ending in a tool loop step."""
    messages: list[Message] = []
    for n in range(turns):
        messages += [Message("user", f"question {n}"), Message("assistant", f"answer {n}")]
    call = ToolCall("toolu_x", "read_file", '{"path": "a"}')
    messages += [
        Message("user", "read a"),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", "contents", tool_call_id="toolu_x"),
    ]
    return tuple(messages)


@pytest.mark.parametrize("turns", [0, 1, 5])
async def test_cache_breakpoints_mark_tools_system_and_older_history(
    anthropic_server: AnthropicServer, make: Make, turns: int
) -> None:
    anthropic_server.push(text_reply("ok"))
    request = ModelRequest(
        system="You are terse.", messages=long_history(turns), tools=(WRITE_FILE, READ_FILE)
    )

    await collect(make(), request)

    body = sent_body(anthropic_server)
    # The second-to-last user turn is "read a" (messages[-3]); the last holds tool results.
    last_user = len(body["messages"]) - 1
    assert body["messages"][last_user - 2]["content"][-1]["text"] == "read a"
    assert breakpoints(body) == [
        "tools[1]",
        "system[0]",
        f"messages[{last_user - 2}][0]",
    ]
    assert len(breakpoints(body)) <= 4


async def test_a_single_user_turn_caches_only_tools_and_system(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push(text_reply("ok"), text_reply("ok"))

    await collect(make(), ask(tools=(READ_FILE,)))
    await collect(make(prompt_cache=False), ask(tools=(READ_FILE,)))

    assert breakpoints(sent_body(anthropic_server, 0)) == ["tools[0]", "system[0]"]
    assert breakpoints(sent_body(anthropic_server, 1)) == []


async def test_thinking_budget_is_sent_without_temperature(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push(text_reply("ok", thinking="hmm"))

    await collect(
        make(thinking_budget=2048, max_tokens=4096), ask(temperature=0.3, tools=(READ_FILE,))
    )

    body = sent_body(anthropic_server)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] == 4096
    assert "temperature" not in body


@pytest.mark.parametrize(
    "request_",
    [
        # Forced tool use cannot be combined with thinking.
        ask(tools=(READ_FILE,), tool_choice="required", temperature=0.3),
        ask(tools=(READ_FILE,), tool_choice="read_file", temperature=0.3),
        # An output cap that leaves no room beyond the budget.
        ask(max_tokens=1000, temperature=0.3),
        # Continuing a tool loop: the signed thinking of the step being continued is gone.
        ModelRequest(system="s", messages=long_history(1), tools=(READ_FILE,), temperature=0.3),
    ],
    ids=["required", "named-tool", "small-max-tokens", "tool-loop-step"],
)
async def test_thinking_is_left_off_where_the_api_would_refuse_it(
    anthropic_server: AnthropicServer, make: Make, request_: ModelRequest
) -> None:
    anthropic_server.push(text_reply("ok"))

    await collect(make(thinking_budget=2048), request_)

    body = sent_body(anthropic_server)
    assert "thinking" not in body
    assert body["temperature"] == 0.3


async def test_bad_requests_are_rejected_before_anything_is_sent(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    provider = make()
    with pytest.raises(ModelError, match="delete_everything") as caught:
        await collect(provider, ask(tools=(READ_FILE,), tool_choice="delete_everything"))
    assert caught.value.kind == "fatal"

    orphan = ModelRequest(system="", messages=(Message("tool", "result"),))
    with pytest.raises(ModelError, match="message 0 has role 'tool' but no tool_call_id"):
        await collect(provider, orphan)

    assert anthropic_server.requests == []


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"base_url": "api.anthropic.com"}, "base_url"),
        ({"thinking_budget": 512}, "thinking_budget must be at least 1024"),
        ({"thinking_budget": 8192, "max_tokens": 8192}, "below max_tokens"),
        ({"timeout": 0}, "timeout"),
    ],
)
def test_bad_settings_are_named(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        AnthropicProvider(api_key="k", model="m", **options)


# -- errors and retries ------------------------------------------------------------------


async def test_rate_limit_waits_as_long_as_retry_after_says_then_succeeds(
    anthropic_server: AnthropicServer, make: Make, delays: list[float]
) -> None:
    anthropic_server.push(
        error_reply(
            429, "rate_limit_error", "Number of requests exceeded", headers={"retry-after": "7"}
        ),
        text_reply("ok"),
    )

    chunks = await collect(make(), ask())

    assert text_of(chunks) == "ok"
    assert delays == [7.0]
    assert len(anthropic_server.message_requests) == 2


@pytest.mark.parametrize(
    ("status", "error_type"), [(529, "overloaded_error"), (503, "api_error"), (500, "api_error")]
)
async def test_overloaded_and_unavailable_are_retried_after_a_jittered_backoff(
    anthropic_server: AnthropicServer,
    make: Make,
    delays: list[float],
    status: int,
    error_type: str,
) -> None:
    anthropic_server.push(error_reply(status, error_type, "Overloaded"), text_reply("recovered"))

    chunks = await collect(make(backoff_base=0.5), ask())

    assert text_of(chunks) == "recovered"
    assert len(delays) == 1
    assert 0.0 <= delays[0] <= 0.5


async def test_exhausted_retries_raise_the_last_error(
    anthropic_server: AnthropicServer, make: Make, delays: list[float]
) -> None:
    anthropic_server.push(
        *(error_reply(529, "overloaded_error", f"Overloaded #{n}") for n in (1, 2, 3))
    )

    with pytest.raises(ModelError) as caught:
        await collect(make(max_retries=2), ask())

    assert (caught.value.kind, caught.value.status) == ("retryable", 529)
    assert "Overloaded #3" in caught.value.message
    assert len(delays) == 2


async def test_bad_key_is_an_auth_error_and_is_not_retried(
    anthropic_server: AnthropicServer, make: Make, delays: list[float]
) -> None:
    anthropic_server.push(
        error_reply(401, "authentication_error", "invalid x-api-key"), text_reply("never sent")
    )

    with pytest.raises(ModelError) as caught:
        await collect(make(), ask())

    error = caught.value
    assert (error.kind, error.status, error.provider) == ("auth", 401, "anthropic")
    assert error.message == "invalid x-api-key"
    assert delays == []
    assert anthropic_server.pending == 1


@pytest.mark.parametrize(
    ("status", "error_type", "message", "kind"),
    [
        (
            400,
            "invalid_request_error",
            "prompt is too long: 212345 tokens > 200000 maximum",
            "context_overflow",
        ),
        (
            400,
            "invalid_request_error",
            "Your credit balance is too low to access the Anthropic API.",
            "billing",
        ),
        (400, "invalid_request_error", "messages.0.content: Field required", "fatal"),
        (403, "permission_error", "Your API key does not have permission", "auth"),
        (404, "not_found_error", "model: claude-nope", "fatal"),
        (413, "request_too_large", "Request exceeds the maximum size", "fatal"),
    ],
)
async def test_error_responses_are_classified(
    anthropic_server: AnthropicServer,
    make: Make,
    status: int,
    error_type: str,
    message: str,
    kind: str,
) -> None:
    anthropic_server.push(error_reply(status, error_type, message))

    with pytest.raises(ModelError) as caught:
        await collect(make(max_retries=0), ask())

    assert (caught.value.kind, caught.value.status, caught.value.message) == (kind, status, message)


@pytest.mark.parametrize(
    ("error_type", "message", "kind"),
    [
        ("overloaded_error", "Overloaded", "retryable"),
        ("api_error", "Internal server error", "retryable"),
        ("rate_limit_error", "Slow down", "rate_limited"),
        ("authentication_error", "invalid x-api-key", "auth"),
        ("permission_error", "not allowed", "auth"),
        ("billing_error", "no credits", "billing"),
        ("invalid_request_error", "prompt is too long: 201000 tokens", "context_overflow"),
        ("invalid_request_error", "tools.0: bad schema", "fatal"),
    ],
)
async def test_an_error_event_mid_stream_is_classified_by_its_type(
    anthropic_server: AnthropicServer, make: Make, error_type: str, message: str, kind: str
) -> None:
    anthropic_server.push(stream_reply([message_start(), ping(), error_event(error_type, message)]))

    with pytest.raises(ModelError) as caught:
        await collect(make(max_retries=0), ask())

    assert (caught.value.kind, caught.value.message, caught.value.status) == (kind, message, None)


async def test_an_error_event_before_any_output_is_retried(
    anthropic_server: AnthropicServer, make: Make, delays: list[float]
) -> None:
    anthropic_server.push(
        stream_reply([message_start(), error_event("overloaded_error", "Overloaded")]),
        text_reply("second try"),
    )

    chunks = await collect(make(), ask())

    assert text_of(chunks) == "second try"
    assert len(delays) == 1


async def test_an_error_event_after_output_is_raised_not_retried(
    anthropic_server: AnthropicServer, make: Make, delays: list[float]
) -> None:
    anthropic_server.push(
        stream_reply(
            [
                message_start(),
                text_start(0),
                text_delta(0, "Half an ans"),
                error_event("overloaded_error", "Overloaded"),
            ]
        ),
        text_reply("never sent"),
    )
    seen: list[ModelChunk] = []

    with pytest.raises(ModelError) as caught:
        async for item in make().stream(ask()):
            seen.append(item)

    assert caught.value.kind == "retryable"
    assert seen == [TextChunk("Half an ans")]
    assert delays == []
    assert anthropic_server.pending == 1


async def test_a_stalled_stream_times_out_as_retryable(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push(text_reply("too late").stalled(after=1))
    started = time.monotonic()

    with pytest.raises(ModelError) as caught:
        await collect(make(idle_timeout=0.3, max_retries=0), ask())

    assert caught.value.kind == "retryable"
    assert caught.value.message == "stream stalled: no event from the server for 0.3 s"
    assert time.monotonic() - started < 3.0


async def test_a_stall_before_output_is_not_sent_again(
    anthropic_server: AnthropicServer, make: Make, delays: list[float]
) -> None:
    # A server that hung on the request is likely to hang again: a second try would
    # double the wait of a person watching. (A fallback provider is still tried.)
    anthropic_server.push(text_reply("too late").stalled(after=2), text_reply("fresh"))

    with pytest.raises(ModelError, match=r"no event from the server for 0\.3 s"):
        await collect(make(idle_timeout=0.3), ask())

    assert delays == []
    assert anthropic_server.pending == 1


async def test_pings_alone_are_a_stall(anthropic_server: AnthropicServer, make: Make) -> None:
    anthropic_server.push(stream_reply([message_start(), ping(), ping(), ping()]).stalled(after=4))
    started = time.monotonic()

    with pytest.raises(ModelError, match=r"no event from the server for 0\.3 s"):
        await collect(make(idle_timeout=0.3), ask())

    assert time.monotonic() - started < 3.0


async def test_the_whole_request_has_a_deadline(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push(text_reply("too late").stalled(after=1))
    started = time.monotonic()

    with pytest.raises(ModelError) as caught:
        await collect(make(timeout=0.3, idle_timeout=10), ask())

    assert caught.value.message == "timed out: no complete answer within 0.3 s"
    assert time.monotonic() - started < 3.0


async def test_a_disconnect_after_output_is_raised_not_retried(
    anthropic_server: AnthropicServer, make: Make, delays: list[float]
) -> None:
    # Parts: message_start, text_start, ping, then "Hel", "lo ", "wor", ... The connection
    # drops after "lo "; a retry would show "Hello " twice.
    anthropic_server.push(text_reply("Hello world", chunk_size=3).dropped(after=5), text_reply("x"))
    seen: list[ModelChunk] = []

    with pytest.raises(ModelError) as caught:
        async for item in make().stream(ask()):
            seen.append(item)

    assert seen == [TextChunk("Hel"), TextChunk("lo ")]
    assert caught.value.kind == "retryable"
    assert delays == []
    assert len(anthropic_server.message_requests) == 1


async def test_an_error_body_instead_of_a_stream_is_classified(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    # A proxy answering 200 with a JSON error instead of an event stream.
    body = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
    anthropic_server.push(stream_reply([body.encode() + b"\n"]))

    with pytest.raises(ModelError) as caught:
        await collect(make(), ask())

    # Not retried: an answer that is not a stream will not become one.
    assert (caught.value.kind, caught.value.message) == ("fatal", "busy")


async def test_a_delta_for_an_unopened_tool_block_is_malformed(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push(
        stream_reply(
            [
                message_start(),
                tool_use_start(0, "toolu_1", "read_file"),
                b'event: content_block_delta\ndata: {"type":"content_block_delta","index":3,'
                b'"delta":{"type":"input_json_delta","partial_json":"{"}}\n\n',
            ]
        )
    )

    with pytest.raises(ModelError, match="malformed stream") as caught:
        await collect(make(max_retries=0), ask(tools=(READ_FILE,)))

    assert caught.value.kind == "retryable"


# -- the rest of the provider ------------------------------------------------------------


async def test_list_models_returns_the_model_ids(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.models = ["claude-sonnet-4-5", "claude-haiku-4-5"]

    assert await make().list_models() == ["claude-sonnet-4-5", "claude-haiku-4-5"]
    (sent,) = anthropic_server.requests
    assert (sent.method, sent.path) == ("GET", "/v1/models")
    assert sent.headers["x-api-key"] == "sk-ant-test"
    assert sent.headers["anthropic-version"] == "2023-06-01"


async def test_list_models_classifies_errors_like_stream(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push_models(error_reply(401, "authentication_error", "bad key"))

    with pytest.raises(ModelError) as caught:
        await make().list_models()

    assert (caught.value.kind, caught.value.status, caught.value.message) == (
        "auth",
        401,
        "bad key",
    )


def test_capabilities_and_token_estimate() -> None:
    provider = AnthropicProvider(api_key="k", model="claude-sonnet-4-5")

    assert (provider.name, provider.model, provider.max_context_tokens) == (
        "anthropic",
        "claude-sonnet-4-5",
        200_000,
    )
    caps = provider.capabilities
    assert caps.tools and caps.streaming and caps.thinking
    assert [provider.count_tokens(t) for t in ("", "abcd", "abcde")] == [0, 1, 2]


# -- through the agent loop --------------------------------------------------------------


@dataclass
class NoteTool:
    """A real tool the loop runs: looks a note up by name."""

    notes: dict[str, str]
    name: str = "read_note"
    description: str = "Read a note by name."
    concurrent: bool = True
    idempotent: bool = True

    @property
    def parameters(self) -> Mapping[str, Any]:
        return {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        return self.notes[args["name"]]


async def test_a_tool_round_trip_through_the_agent_loop(
    anthropic_server: AnthropicServer, make: Make
) -> None:
    anthropic_server.push(
        tool_use_reply([("read_note", '{"name": "groceries"}')], split_every=3, text="Checking."),
        text_reply("You need eggs and milk.", cache_read=20),
    )
    tools = DefaultToolRegistry()
    tools.register_tool(NoteTool({"groceries": "eggs, milk"}))
    loop = AgentLoop(model=make(), tools=tools)

    events = [e async for e in loop.run("s1", "What is on my grocery list?")]

    (start,) = [e for e in events if isinstance(e, ToolStart)]
    assert (start.call_id, start.name, json.loads(start.arguments)) == (
        "toolu_0_read_note",
        "read_note",
        {"name": "groceries"},
    )
    (end,) = [e for e in events if isinstance(e, ToolEnd)]
    assert (end.result, end.is_error) == ("eggs, milk", False)
    done = events[-1]
    assert isinstance(done, Done)
    assert done.text.endswith("You need eggs and milk.")
    assert done.finish_reason == "stop"
    assert sum(e.usage.cache_read_tokens for e in events if isinstance(e, UsageEvent)) == 20

    first, second = (r.body for r in anthropic_server.message_requests)
    assert [t["name"] for t in first["tools"]] == ["read_note"]
    assert first["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What is on my grocery list?"}]}
    ]
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_0_read_note",
                    "name": "read_note",
                    "input": {"name": "groceries"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_0_read_note", "content": "eggs, milk"}
            ],
        },
    ]
    # The question is now older history: the cached prefix ends there.
    assert second["messages"][0]["content"][-1]["cache_control"] == CACHED
