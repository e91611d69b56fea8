"""The OpenAI-compatible provider's extensions, against real HTTP servers on 127.0.0.1.

Reasoning details, the token-limit field by model, parallel tool calls, tool calls a model
wrote as text, and the stale-stream detector.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from seam.contracts.messages import Usage
from seam.contracts.model import (
    DoneChunk,
    ModelChunk,
    ModelError,
    TextChunk,
    ThinkingChunk,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolDefinition,
    UsageChunk,
    WarningChunk,
)
from seam.services.llm.openai_compat import OpenAICompatProvider
from tests.support.openai_server import (
    OpenAIServer,
    chunk,
    openai_server_fixture,  # noqa: F401  (registers the `openai_server` fixture)
    stream_reply,
    text_reply,
    tool_call_reply,
    usage,
    usage_chunk,
)
from tests.support.providers import ask, collect, provider_factory, text_of

Make = Callable[..., OpenAICompatProvider]
READ_FILE = ToolDefinition(
    "read_file",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
SEARCH = ToolDefinition(
    "search", "Search.", {"type": "object", "properties": {"query": {"type": "string"}}}
)
LIST_TODOS = ToolDefinition("list_todos", "List todos.", {"type": "object", "properties": {}})


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


def ends_of(chunks: list[ModelChunk]) -> list[tuple[str, Any]]:
    return [
        (c.call.name, json.loads(c.call.arguments)) for c in chunks if isinstance(c, ToolCallEnd)
    ]


def content_reply(text: str, chunk_size: int = 4, finish_reason: str = "stop") -> Any:
    return text_reply(text, chunk_size=chunk_size, finish_reason=finish_reason)


# -- reasoning ---------------------------------------------------------------------------


async def test_reasoning_details_become_thinking_and_reasoning_tokens_are_reported(
    openai_server: OpenAIServer, make: Make
) -> None:
    # OpenRouter's shape: readable text and summaries, plus an encrypted part with none.
    details = [
        [{"type": "reasoning.text", "text": "First, ", "format": "unknown", "index": 0}],
        [{"type": "reasoning.summary", "summary": "check the file.", "index": 0}],
        [{"type": "reasoning.encrypted", "data": "gAAAAB...", "index": 1}],
    ]
    openai_server.push(
        stream_reply(
            [
                *(chunk({"role": "assistant", "reasoning_details": part}) for part in details),
                chunk({"content": "Done."}),
                chunk({}, "stop"),
                usage_chunk(usage(40, 25, reasoning_tokens=18)),
            ]
        )
    )

    chunks = await collect(make(), ask())

    thinking = [c.text for c in chunks if isinstance(c, ThinkingChunk)]
    assert thinking == ["First, ", "check the file."]
    assert text_of(chunks) == "Done."
    assert UsageChunk(Usage(40, 25, reasoning_tokens=18)) in chunks


async def test_reasoning_sent_both_plain_and_as_details_is_shown_once(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(
        stream_reply(
            [
                chunk(
                    {
                        "reasoning": "Think.",
                        "reasoning_details": [{"type": "reasoning.text", "text": "Think."}],
                    }
                ),
                chunk({"content": "Ok."}, "stop"),
            ]
        )
    )

    chunks = await collect(make(), ask())

    assert [c for c in chunks if isinstance(c, ThinkingChunk)] == [ThinkingChunk("Think.")]


# -- max_completion_tokens vs max_tokens -------------------------------------------------


@pytest.mark.parametrize(
    ("model", "token_param", "field", "temperature_sent"),
    [
        ("gpt-4o-mini", "auto", "max_tokens", True),
        ("llama-3.1-8b-instruct", "auto", "max_tokens", True),
        ("o1", "auto", "max_completion_tokens", False),
        ("o1-mini", "auto", "max_completion_tokens", False),
        ("o3-mini-2025-01-31", "auto", "max_completion_tokens", False),
        ("o4-mini", "auto", "max_completion_tokens", False),
        ("gpt-5", "auto", "max_completion_tokens", False),
        ("gpt-5.1-codex", "auto", "max_completion_tokens", False),
        ("GPT-5-mini", "auto", "max_completion_tokens", False),
        ("openai/o3", "auto", "max_tokens", True),  # a router translates the field itself
        ("omni-7b", "auto", "max_tokens", True),
        ("my-azure-deployment", "max_completion_tokens", "max_completion_tokens", True),
        ("o3", "max_tokens", "max_tokens", False),
    ],
)
async def test_token_limit_field_and_temperature_follow_the_model(
    openai_server: OpenAIServer,
    make: Make,
    model: str,
    token_param: str,
    field: str,
    temperature_sent: bool,
) -> None:
    openai_server.push(text_reply("ok"))

    await collect(make(token_param=token_param), ask(model=model, max_tokens=99, temperature=0.3))

    body = openai_server.chat_requests[0].body
    assert body[field] == 99
    other = {"max_tokens", "max_completion_tokens"} - {field}
    assert other.isdisjoint(body)
    assert ("temperature" in body) is temperature_sent


async def test_the_configured_model_decides_when_the_request_names_none(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(text_reply("ok"))

    await collect(make(model="o3-mini"), ask(max_tokens=50))

    body = openai_server.chat_requests[0].body
    assert body["model"] == "o3-mini"
    assert body["max_completion_tokens"] == 50
    assert "max_tokens" not in body


def test_an_unknown_token_param_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="auto, max_completion_tokens, max_tokens"):
        OpenAICompatProvider(
            base_url="http://127.0.0.1:1/v1",
            api_key=None,
            model="m",
            token_param="max_output_tokens",  # type: ignore[arg-type]
        )


# -- parallel tool calls -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "tools", "sent"),
    [
        (True, (READ_FILE,), True),
        (False, (READ_FILE,), False),
        (None, (READ_FILE,), None),  # some servers reject the field: None leaves it out
        (True, (), None),  # meaningless without tools
    ],
)
async def test_parallel_tool_calls_field(
    openai_server: OpenAIServer,
    make: Make,
    option: bool | None,
    tools: tuple[ToolDefinition, ...],
    sent: bool | None,
) -> None:
    openai_server.push(text_reply("ok"))

    await collect(make(parallel_tool_calls=option), ask(tools=tools))

    assert openai_server.chat_requests[0].body.get("parallel_tool_calls") is sent


@pytest.mark.parametrize(
    ("model", "sent"), [("o3-mini", None), ("o1", None), ("o4-mini", None), ("gpt-5", True)]
)
async def test_o_series_models_never_get_the_parallel_tool_calls_field(
    openai_server: OpenAIServer, make: Make, model: str, sent: bool | None
) -> None:
    # They answer 400 "Unsupported parameter: 'parallel_tool_calls'", even for false.
    openai_server.push(text_reply("ok"))

    await collect(make(), ask(model=model, tools=(READ_FILE,)))

    assert openai_server.chat_requests[0].body.get("parallel_tool_calls") is sent


async def test_three_parallel_calls_interleaved_all_arrive_whole_and_in_order(
    openai_server: OpenAIServer, make: Make
) -> None:
    calls = [
        ("read_file", '{"path": "a.txt"}'),
        ("search", '{"query": "rent due date"}'),
        ("read_file", '{"path": "notes/ü.md"}'),
    ]
    openai_server.push(tool_call_reply(calls, split_every=3, interleave=True))

    chunks = await collect(make(), ask(tools=(READ_FILE, SEARCH)))

    starts = [(c.index, c.name) for c in chunks if isinstance(c, ToolCallStart)]
    assert starts == [(0, "read_file"), (1, "search"), (2, "read_file")]
    ends = [c for c in chunks if isinstance(c, ToolCallEnd)]
    assert [(e.index, e.call.name, e.call.arguments) for e in ends] == [
        (index, name, arguments) for index, (name, arguments) in enumerate(calls)
    ]
    assert len({e.call.id for e in ends}) == 3
    assert chunks[-1] == DoneChunk("tool_calls")


# -- tool calls written as text ----------------------------------------------------------


async def test_a_call_written_as_text_becomes_a_real_call_and_is_never_shown(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(
        content_reply(
            '<tool_call>\n{"name": "read_file", "arguments": {"path": "todo.md"}}\n</tool_call>'
        )
    )

    chunks = await collect(make(), ask(tools=(READ_FILE,)))

    assert text_of(chunks) == ""
    start, delta, end = (c for c in chunks if c.kind.startswith("tool_call"))
    assert isinstance(start, ToolCallStart) and isinstance(delta, ToolCallDelta)
    assert isinstance(end, ToolCallEnd)
    assert (start.index, start.id, start.name) == (0, end.call.id, "read_file")
    assert delta.arguments == end.call.arguments == '{"path": "todo.md"}'
    assert chunks[-1] == DoneChunk("tool_calls")  # the server said "stop"


async def test_bare_json_calls_are_recovered_with_the_text_after_them_kept(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(
        content_reply(
            '{"name": "list_todos", "arguments": {}}\n'
            '{"name": "search", "arguments": {"query": "dentist"}}\n'
            "Checking both now."
        )
    )

    chunks = await collect(make(), ask(tools=(LIST_TODOS, SEARCH)))

    assert ends_of(chunks) == [("list_todos", {}), ("search", {"query": "dentist"})]
    assert text_of(chunks) == "Checking both now."
    text_at = next(i for i, c in enumerate(chunks) if isinstance(c, TextChunk))
    first_call_at = next(i for i, c in enumerate(chunks) if isinstance(c, ToolCallStart))
    assert text_at < first_call_at
    assert chunks[-1] == DoneChunk("tool_calls")


async def test_prose_that_mentions_json_streams_as_prose(
    openai_server: OpenAIServer, make: Make
) -> None:
    prose = 'The API answers {"name": "Ada", "role": "admin"} for each user.'
    openai_server.push(content_reply(prose, chunk_size=5))

    chunks = await collect(make(), ask(tools=(READ_FILE,)))

    deltas = [c.text for c in chunks if isinstance(c, TextChunk)]
    assert "".join(deltas) == prose
    assert len(deltas) > 1  # streamed as it came, not held back to the end
    assert not [c for c in chunks if c.kind.startswith("tool_call") or c.kind == "warning"]
    assert chunks[-1] == DoneChunk("stop")


async def test_a_json_answer_that_is_not_a_call_is_shown_whole(
    openai_server: OpenAIServer, make: Make
) -> None:
    answer = '{"name": "Ada Lovelace", "born": 1815}'
    openai_server.push(content_reply(answer))

    chunks = await collect(make(), ask(tools=(READ_FILE,)))

    assert text_of(chunks) == answer
    assert ends_of(chunks) == []
    assert chunks[-1] == DoneChunk("stop")


async def test_a_text_call_to_an_unknown_tool_stays_text_with_a_warning(
    openai_server: OpenAIServer, make: Make
) -> None:
    text = '<tool_call>{"name": "delete_all", "arguments": {}}</tool_call>'
    openai_server.push(content_reply(text))

    chunks = await collect(make(), ask(tools=(READ_FILE,)))

    assert text_of(chunks) == text
    assert ends_of(chunks) == []
    (warning,) = [c for c in chunks if isinstance(c, WarningChunk)]
    assert "'delete_all' is not an offered tool" in warning.message
    assert chunks[-1] == DoneChunk("stop")


async def test_a_text_call_with_arguments_that_fail_the_schema_stays_text(
    openai_server: OpenAIServer, make: Make
) -> None:
    text = '{"name": "read_file", "arguments": {"file": "a.txt"}}'
    openai_server.push(content_reply(text))

    chunks = await collect(make(), ask(tools=(READ_FILE,)))

    assert text_of(chunks) == text
    assert ends_of(chunks) == []
    (warning,) = [c for c in chunks if isinstance(c, WarningChunk)]
    assert "missing the required property 'path'" in warning.message


async def test_a_call_after_prose_runs_though_the_prose_was_already_shown(
    openai_server: OpenAIServer, make: Make
) -> None:
    text = 'Let me look.\n<function=read_file>{"path": "a.txt"}</function>'
    openai_server.push(content_reply(text))

    chunks = await collect(make(), ask(tools=(READ_FILE,)))

    assert text_of(chunks) == text
    assert ends_of(chunks) == [("read_file", {"path": "a.txt"})]
    assert chunks[-1] == DoneChunk("tool_calls")


@pytest.mark.parametrize(
    ("options", "request_options"),
    [
        ({"recover_text_tool_calls": False}, {"tools": (READ_FILE,)}),
        ({}, {"tools": (READ_FILE,), "tool_choice": "none"}),
        ({}, {}),
    ],
    ids=["recovery off", "tool_choice none", "no tools offered"],
)
async def test_no_recovery_when_off_or_no_tool_may_be_called(
    openai_server: OpenAIServer,
    make: Make,
    options: dict[str, Any],
    request_options: dict[str, Any],
) -> None:
    text = '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>'
    openai_server.push(content_reply(text))

    chunks = await collect(make(**options), ask(**request_options))

    assert text_of(chunks) == text
    assert ends_of(chunks) == []
    assert chunks[-1] == DoneChunk("stop")


async def test_structured_calls_win_over_text_and_held_text_is_still_shown(
    openai_server: OpenAIServer, make: Make
) -> None:
    text = '{"name": "read_file", "arguments": {"path": "from-text.md"}}'
    openai_server.push(tool_call_reply([("read_file", '{"path": "real.md"}')], text=text))

    chunks = await collect(make(), ask(tools=(READ_FILE,)))

    assert ends_of(chunks) == [("read_file", {"path": "real.md"})]
    assert text_of(chunks) == text


async def test_a_held_call_cut_off_by_the_token_limit_is_shown_as_text(
    openai_server: OpenAIServer, make: Make
) -> None:
    text = '<tool_call>{"name": "read_file", "arguments": {"pa'
    openai_server.push(content_reply(text, finish_reason="length"))

    chunks = await collect(make(), ask(tools=(READ_FILE,)))

    assert text_of(chunks) == text
    assert ends_of(chunks) == []
    assert chunks[-1] == DoneChunk("length")


# -- the stale-stream detector -----------------------------------------------------------


async def test_a_stall_after_output_is_raised_as_retryable_not_retried(
    openai_server: OpenAIServer, make: Make, delays: list[float]
) -> None:
    openai_server.push(text_reply("Hello world", chunk_size=3).stalled(after=3), text_reply("x"))
    seen: list[ModelChunk] = []
    started = time.monotonic()

    with pytest.raises(ModelError) as caught:
        async for item in make(stale_timeout=0.3).stream(ask()):
            seen.append(item)

    assert text_of(seen) == "Hello "
    assert caught.value.kind == "retryable"
    assert caught.value.message == "stream stalled: no event from the server for 0.3 s"
    assert 0.3 <= time.monotonic() - started < 3.0  # well before the 5 s read timeout
    assert delays == []
    assert openai_server.pending == 1


async def test_a_stall_before_output_is_not_sent_again(
    openai_server: OpenAIServer, make: Make, delays: list[float]
) -> None:
    # The role chunk arrives, then nothing: no output reached the caller yet, but a
    # server that hung on this request would likely hang again and double the wait.
    openai_server.push(text_reply("never").stalled(after=1), text_reply("second try"))

    with pytest.raises(ModelError, match=r"no event from the server for 0\.3 s"):
        await collect(make(stale_timeout=0.3), ask())

    assert delays == []
    assert len(openai_server.chat_requests) == 1


async def test_a_slow_consumer_is_not_a_stalled_server(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(text_reply("abcdef", chunk_size=2))
    seen: list[ModelChunk] = []

    async for item in make(stale_timeout=0.2).stream(ask()):
        if not seen:
            await asyncio.sleep(0.35)  # busy with the first chunk past the stale limit
        seen.append(item)

    assert text_of(seen) == "abcdef"
    assert seen[-1] == DoneChunk("stop")


class PingServer:
    """An SSE endpoint that sends `: ping` comments forever and never a data event."""

    def __init__(self) -> None:
        self.pings = 0
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self.base_url = ""

    async def start(self) -> PingServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    async def close(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            await reader.readexactly(length)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
            )
            ping = b": ping\n\n"
            while True:
                writer.write(b"%X\r\n%s\r\n" % (len(ping), ping))
                await writer.drain()
                self.pings += 1
                await asyncio.sleep(0.05)  # the server's keep-alive pace
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._handlers.discard(task)
            writer.close()


@pytest.fixture
async def ping_server() -> AsyncIterator[PingServer]:
    server = await PingServer().start()
    yield server
    await server.close()


async def test_keep_alive_comments_without_data_are_a_stall(
    ping_server: PingServer, make: Make
) -> None:
    provider = make(base_url=ping_server.base_url, stale_timeout=0.4, max_retries=0)
    started = time.monotonic()

    with pytest.raises(ModelError) as caught:
        await collect(provider, ask())

    elapsed = time.monotonic() - started
    assert caught.value.kind == "retryable"
    assert "stream stalled" in caught.value.message
    assert 0.4 <= elapsed < 3.0  # the 5 s read timeout never fires: bytes kept coming
    assert ping_server.pings >= 4


def test_stale_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="stale_timeout must be > 0"):
        OpenAICompatProvider(
            base_url="http://127.0.0.1:1/v1", api_key=None, model="m", stale_timeout=0
        )
