"""Bounded time and visible retries in the HTTP providers: what `on_retry` is told, and
how the request deadline and the idle limit end a request, against a loopback server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from seam.contracts.model import ModelChunk, ModelError, RetryNotice, TextChunk
from seam.services.llm.openai_compat import OpenAICompatProvider
from seam.services.llm.pool import PooledProvider
from seam.services.llm.retry import RetryPolicy
from tests.support.openai_server import (
    OpenAIServer,
    closed_port,
    error_reply,
    openai_server_fixture,  # noqa: F401  (registers the `openai_server` fixture)
    text_reply,
)
from tests.support.providers import ask, collect, provider_factory, text_of

Make = Callable[..., OpenAICompatProvider]


@pytest.fixture
def delays() -> list[float]:
    return []


@pytest.fixture
def notices() -> list[RetryNotice]:
    return []


@pytest.fixture
async def make(
    openai_server: OpenAIServer, delays: list[float], notices: list[RetryNotice]
) -> AsyncIterator[Make]:
    async with provider_factory(
        OpenAICompatProvider,
        delays,
        base_url=openai_server.base_url,
        api_key="sk-test",
        model="test-model",
        on_retry=notices.append,
    ) as build:
        yield build


def test_a_notice_reads_as_one_line() -> None:
    assert (
        RetryNotice(2, 5, 4.2, "connection refused").line()
        == "retrying in 4 s (attempt 2 of 5): connection refused"
    )
    assert (
        RetryNotice(3, 4, 0.34, "HTTP 503").line() == "retrying in 0.3 s (attempt 3 of 4): HTTP 503"
    )


async def test_each_retry_is_told_before_its_back_off(
    openai_server: OpenAIServer, make: Make, delays: list[float], notices: list[RetryNotice]
) -> None:
    openai_server.push(error_reply(503), error_reply(502), text_reply("third time"))

    chunks = await collect(make(), ask())

    assert text_of(chunks) == "third time"
    assert [(n.attempt, n.attempts, n.reason) for n in notices] == [
        (2, 4, "HTTP 503: scripted HTTP 503"),
        (3, 4, "HTTP 502: scripted HTTP 502"),
    ]
    assert [n.delay for n in notices] == delays
    assert all(n.provider == "openai" for n in notices)


async def test_a_refused_connection_is_told_as_such(make: Make, notices: list[RetryNotice]) -> None:
    provider = make(base_url=f"http://127.0.0.1:{closed_port()}/v1", max_retries=1)

    with pytest.raises(ModelError, match="connection refused"):
        await collect(provider, ask())

    assert [n.line().split(": ", 1)[1] for n in notices] == ["connection refused"]


async def test_a_retry_after_past_the_deadline_is_not_waited_for(
    openai_server: OpenAIServer, make: Make, delays: list[float], notices: list[RetryNotice]
) -> None:
    openai_server.push(error_reply(429, headers={"Retry-After": "20"}), text_reply("x"))

    with pytest.raises(ModelError) as caught:
        await collect(make(timeout=5.0, backoff_max=30.0), ask())

    assert caught.value.kind == "rate_limited"
    assert delays == [] and notices == []
    assert openai_server.pending == 1


async def test_a_consumer_slower_than_the_deadline_gets_a_timeout_not_a_cancellation(
    openai_server: OpenAIServer, make: Make
) -> None:
    # The deadline passes while the consumer holds a chunk: the stream notices when it
    # next goes back to the server, and the consumer's own await is never cancelled.
    openai_server.push(text_reply("abcdef", chunk_size=2))
    seen: list[ModelChunk] = []

    with pytest.raises(ModelError) as caught:
        async for chunk in make(timeout=0.4).stream(ask()):
            seen.append(chunk)
            await asyncio.sleep(0.6)  # would raise CancelledError if the watch fired here

    assert seen == [TextChunk("ab")]
    assert caught.value.message == "timed out: no complete answer within 0.4 s"


async def test_a_trickle_stalls_though_bytes_keep_coming(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(text_reply("slow").trickled(0.05))  # a whole event takes ~10 s
    started = time.monotonic()

    with pytest.raises(ModelError) as caught:
        await collect(make(idle_timeout=0.5), ask())

    assert caught.value.message == "stream stalled: no event from the server for 0.5 s"
    assert 0.5 <= time.monotonic() - started < 3.0


async def test_timeouts_must_be_positive() -> None:
    for name in ("timeout", "connect_timeout", "idle_timeout"):
        options: dict[str, Any] = {name: 0}
        with pytest.raises(ValueError, match=f"{name} must be > 0"):
            OpenAICompatProvider(
                base_url="http://127.0.0.1:1/v1", api_key=None, model="m", **options
            )


async def test_a_pool_tells_each_retry_of_a_key_and_never_the_key(
    openai_server: OpenAIServer, delays: list[float], notices: list[RetryNotice]
) -> None:
    async def record(seconds: float) -> None:
        delays.append(seconds)

    inner: list[OpenAICompatProvider] = []

    def provider_for(key: str) -> OpenAICompatProvider:
        provider = OpenAICompatProvider(
            base_url=openai_server.base_url, api_key=key, model="test-model", max_retries=0
        )
        inner.append(provider)
        return provider

    keys = ("sk-first-key-0001", "sk-second-key-0002")
    pool = PooledProvider(
        keys,
        provider_for,
        retry=RetryPolicy(max_retries=1),
        sleep=record,
        on_retry=notices.append,
    )
    openai_server.push(error_reply(500), text_reply("ok"))
    try:
        chunks = await collect(pool, ask())
    finally:
        for provider in inner:
            await provider.aclose()

    assert text_of(chunks) == "ok"
    [notice] = notices
    assert (notice.attempt, notice.attempts) == (2, 2)
    assert notice.reason == "HTTP 500: scripted HTTP 500 (key sk-…0001)"
    assert all(key not in notice.line() for key in keys)
