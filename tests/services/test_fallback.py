"""The fallback chain over real providers: a dead port, and the loopback OpenAI server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from seam.contracts.events import RunStart
from seam.contracts.messages import Message
from seam.contracts.model import (
    ModelChunk,
    ModelError,
    ModelProvider,
    ModelRequest,
    RouteChunk,
    TextChunk,
)
from seam.core import AgentLoop
from seam.services.llm.fallback import FallbackProvider
from seam.services.llm.openai_compat import OpenAICompatProvider
from seam.services.llm.pool import PooledProvider
from tests.support.openai_server import OpenAIServer, closed_port, error_reply, text_reply

REQUEST = ModelRequest(system="Be brief.", messages=(Message("user", "Hi"),), model="big-model")
CONTEXT_OVERFLOW = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens.",
        "code": "context_length_exceeded",
    }
}

Make = Callable[..., OpenAICompatProvider]


@pytest.fixture(name="closed_port")
def closed_port_fixture() -> int:
    """A loopback port nothing listens on: connecting to it is refused at once."""
    return closed_port()


@pytest.fixture
async def make(openai_server: OpenAIServer) -> AsyncIterator[Make]:
    """Providers on the loopback server (or elsewhere), without retries of their own."""
    providers: list[OpenAICompatProvider] = []

    def build(name: str, model: str = "test-model", **overrides: Any) -> OpenAICompatProvider:
        options: dict[str, Any] = {
            "base_url": openai_server.base_url,
            "api_key": f"sk-{name}",
            "model": model,
            "name": name,
            "timeout": 5.0,
            "max_retries": 0,
        }
        options.update(overrides)
        provider = OpenAICompatProvider(**options)
        providers.append(provider)
        return provider

    yield build
    for provider in providers:
        await provider.aclose()


@pytest.fixture
def down(make: Make, closed_port: int) -> OpenAICompatProvider:
    return make("primary", "big-model", base_url=f"http://127.0.0.1:{closed_port}/v1")


async def collect(provider: ModelProvider, request: ModelRequest = REQUEST) -> list[ModelChunk]:
    return [chunk async for chunk in provider.stream(request)]


def text_of(chunks: list[ModelChunk]) -> str:
    return "".join(chunk.text for chunk in chunks if isinstance(chunk, TextChunk))


async def test_a_down_primary_falls_back_to_the_second_provider(
    openai_server: OpenAIServer, make: Make, down: OpenAICompatProvider
) -> None:
    openai_server.push(text_reply("Answer from the backup"))
    chain = FallbackProvider([down, make("backup")])

    chunks = await collect(chain)

    assert chunks[0] == RouteChunk("backup", "test-model")
    assert text_of(chunks) == "Answer from the backup"
    # The primary's model name means nothing to the backup: it used its own.
    [request] = openai_server.chat_requests
    assert request.body["model"] == "test-model"


async def test_the_primary_gets_the_requested_model_and_is_named_when_it_answers(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(text_reply("From the primary"))
    chain = FallbackProvider([make("primary", "default-model"), make("backup")])

    chunks = await collect(chain)

    assert chunks[0] == RouteChunk("primary", "default-model")
    assert text_of(chunks) == "From the primary"
    assert openai_server.chat_requests[0].body["model"] == "big-model"


async def test_a_context_overflow_is_raised_not_retried_on_the_next_provider(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(error_reply(400, CONTEXT_OVERFLOW), text_reply("never sent"))
    chain = FallbackProvider([make("primary"), make("backup")])

    with pytest.raises(ModelError) as raised:
        await collect(chain)

    assert raised.value.kind == "context_overflow"
    assert len(openai_server.chat_requests) == 1


async def test_an_error_after_output_began_is_raised_not_retried(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(text_reply("Hello there, friend").dropped(after=4), text_reply("never"))
    chain = FallbackProvider([make("primary"), make("backup")])
    chunks: list[ModelChunk] = []

    with pytest.raises(ModelError) as raised:
        async for chunk in chain.stream(REQUEST):
            chunks.append(chunk)

    assert raised.value.kind == "retryable"
    assert chunks[0] == RouteChunk("primary", "test-model")
    assert text_of(chunks) == "Hello the"
    assert len(openai_server.chat_requests) == 1


async def test_when_every_entry_fails_the_error_lists_each_and_why(
    openai_server: OpenAIServer, make: Make, down: OpenAICompatProvider
) -> None:
    openai_server.push(error_reply(401), error_reply(429, headers={"Retry-After": "3"}))
    chain = FallbackProvider([down, make("backup"), make("third", "small-model")])

    with pytest.raises(ModelError) as raised:
        await collect(chain)

    error = raised.value
    assert (error.kind, error.status, error.retry_after) == ("rate_limited", 429, 3.0)
    message = str(error)
    assert message.startswith("fallback: rate_limited (HTTP 429): every provider in the chain")
    assert "primary/big-model: retryable: connection refused (http://127.0.0.1:" in message
    assert "backup/test-model: auth (HTTP 401): scripted HTTP 401" in message
    assert "third/small-model: rate_limited (HTTP 429): scripted HTTP 429" in message


async def test_a_failure_that_clears_by_waiting_outranks_a_later_rejection(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(error_reply(429, headers={"Retry-After": "4"}), error_reply(401))
    chain = FallbackProvider([make("primary"), make("backup")])

    with pytest.raises(ModelError) as raised:
        await collect(chain)

    # The primary is free again in 4 s, so the caller should back off, not give up.
    assert (raised.value.kind, raised.value.retry_after) == ("rate_limited", 4.0)
    assert "backup/test-model: auth" in str(raised.value)


async def test_a_pool_whose_keys_are_all_rejected_falls_back_and_its_route_passes_through(
    openai_server: OpenAIServer, make: Make
) -> None:
    openai_server.push(error_reply(401), error_reply(401), text_reply("ok"))
    pool = PooledProvider(
        ("sk-pool-key-000001", "sk-pool-key-000002"), lambda key: make("pooled", api_key=key)
    )
    backup_pool = PooledProvider(("sk-backup-key-00003",), lambda key: make("backup", api_key=key))
    chain = FallbackProvider([pool, backup_pool])

    chunks = await collect(chain)

    assert chunks[0] == RouteChunk("backup", "test-model")
    assert [c for c in chunks if isinstance(c, RouteChunk)] == [chunks[0]]  # sent once
    assert text_of(chunks) == "ok"
    assert pool.state()[0].last_error == "auth"


async def test_run_start_of_an_agent_turn_names_the_provider_that_answered(
    openai_server: OpenAIServer, make: Make, down: OpenAICompatProvider
) -> None:
    openai_server.push(text_reply("Hi from backup"))
    loop = AgentLoop(model=FallbackProvider([down, make("backup")]))

    events = [event async for event in loop.run("s1", "Hello")]

    start = events[0]
    assert isinstance(start, RunStart)
    assert (start.provider, start.model) == ("backup", "test-model")
    assert events[-1].type == "done" and events[-1].text == "Hi from backup"


async def test_the_chain_presents_its_primary_and_the_smallest_context(make: Make) -> None:
    primary = make("primary", "big-model", max_context_tokens=200_000)
    chain = FallbackProvider([primary, make("backup", max_context_tokens=32_000)])

    assert (chain.name, chain.model) == ("primary", "big-model")
    assert chain.max_context_tokens == 32_000
    assert chain.capabilities == primary.capabilities


def test_an_empty_chain_is_rejected() -> None:
    with pytest.raises(ValueError, match="at least one provider"):
        FallbackProvider([])
