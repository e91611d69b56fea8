"""The credential pool against the real loopback OpenAI server: one provider per key."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from seam.contracts.messages import Message
from seam.contracts.model import (
    ModelChunk,
    ModelError,
    ModelRequest,
    RouteChunk,
    TextChunk,
)
from seam.services.llm.openai_compat import OpenAICompatProvider
from seam.services.llm.pool import KeyState, PooledProvider, fingerprint
from seam.services.llm.retry import RetryPolicy
from tests.support.openai_server import OpenAIServer, error_reply, text_reply

KEY1 = "sk-pool-first-0000000000001111"
KEY2 = "sk-pool-second-000000000002222"
KEY3 = "sk-pool-third-0000000000003333"
KEYS = (KEY1, KEY2, KEY3)
NOW = 1_700_000_000.0
DAY = 24 * 3600.0
REQUEST = ModelRequest(system="Be brief.", messages=(Message("user", "Hi"),))

MakePool = Callable[..., PooledProvider]


class Clock:
    """Wall-clock time the test moves by hand."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def sleeps() -> list[float]:
    """Every wait the pool asked for, in order (the sleep itself is instant)."""
    return []


@pytest.fixture
async def make_pool(
    openai_server: OpenAIServer, clock: Clock, sleeps: list[float]
) -> AsyncIterator[MakePool]:
    pools: list[PooledProvider] = []

    async def record_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    def provider_for(key: str) -> OpenAICompatProvider:
        return OpenAICompatProvider(
            base_url=openai_server.base_url,
            api_key=key,
            model="test-model",
            timeout=5.0,
            max_retries=0,
            clock=clock,
        )

    def build(keys: tuple[str, ...] = KEYS, **options: Any) -> PooledProvider:
        settings: dict[str, Any] = {"clock": clock, "sleep": record_sleep}
        settings.update(options)
        pool = PooledProvider(keys, provider_for, **settings)
        pools.append(pool)
        return pool

    yield build
    for pool in pools:
        await pool.aclose()


async def collect(pool: PooledProvider) -> list[ModelChunk]:
    return [chunk async for chunk in pool.stream(REQUEST)]


def text_of(chunks: list[ModelChunk]) -> str:
    return "".join(chunk.text for chunk in chunks if isinstance(chunk, TextChunk))


def keys_used(server: OpenAIServer) -> list[str]:
    """The key behind each recorded request, read from its Authorization header."""
    return [r.headers["authorization"].removeprefix("Bearer ") for r in server.chat_requests]


def rate_limited(seconds: int) -> Any:
    return error_reply(429, headers={"Retry-After": str(seconds)})


async def test_a_429_then_a_401_completes_on_the_third_key_and_records_cooldowns(
    openai_server: OpenAIServer, make_pool: MakePool, clock: Clock, sleeps: list[float], tmp_path
) -> None:
    openai_server.push(
        rate_limited(7), rate_limited(7), error_reply(401), text_reply("Hello from key three")
    )
    state_path = tmp_path / "seam" / "pools" / "openai.json"  # folders made on first save
    pool = make_pool(state_path=state_path)

    chunks = await collect(pool)

    assert chunks[0] == RouteChunk("openai", "test-model")
    assert text_of(chunks) == "Hello from key three"
    assert keys_used(openai_server) == [KEY1, KEY1, KEY2, KEY3]
    assert sleeps == [7.0]  # the same-key retry waited out Retry-After, nothing else waited
    assert pool.state() == [
        KeyState("sk-…1111", uses=2, failures=2, cooldown_until=NOW + 7, last_error="rate_limited"),
        KeyState("sk-…2222", uses=1, failures=1, cooldown_until=NOW + DAY, last_error="auth"),
        KeyState("sk-…3333", uses=1, failures=0, cooldown_until=0.0, last_error=None),
    ]

    # A new pool (a restart) reads the state back and goes straight to the third key.
    clock.now += 1
    openai_server.push(text_reply("Still key three"))
    restarted = make_pool(state_path=state_path)
    assert restarted.state() == pool.state()
    assert text_of(await collect(restarted)) == "Still key three"
    assert keys_used(openai_server)[-1] == KEY3
    assert len(openai_server.chat_requests) == 5


async def test_state_file_and_logs_never_hold_a_key(
    openai_server: OpenAIServer, make_pool: MakePool, tmp_path, caplog: pytest.LogCaptureFixture
) -> None:
    def echoing_401(key: str) -> Any:  # some servers quote the rejected key back
        return error_reply(401, {"error": {"message": f"Incorrect API key provided: {key}"}})

    openai_server.push(echoing_401(KEY1), echoing_401(KEY2), echoing_401(KEY3))
    state_path = tmp_path / "pool.json"
    pool = make_pool(state_path=state_path)
    caplog.set_level(logging.INFO, logger="seam.services.llm.pool")

    with pytest.raises(ModelError) as raised:
        await collect(pool)

    # Every key was rejected: no point waiting, so the kind is auth, not rate_limited.
    assert raised.value.kind == "auth"
    message = str(raised.value)
    assert "all 3 keys are cooling down; next available in 86400s" in message
    assert "sk-…1111: auth" in message
    stored = state_path.read_text()
    assert json.loads(stored)["version"] == 1
    assert "sk-…1111" in caplog.text
    for key in KEYS:
        assert key not in message
        assert key not in stored
        assert key not in caplog.text
        assert key[-4:] not in stored  # keyed by digest, not even the fingerprint


async def test_an_error_echoing_the_key_is_raised_with_the_key_masked(
    openai_server: OpenAIServer, make_pool: MakePool
) -> None:
    openai_server.push(error_reply(400, {"error": {"message": f"unknown model for key {KEY1}"}}))
    pool = make_pool()

    with pytest.raises(ModelError) as raised:
        await collect(pool)

    assert raised.value.kind == "fatal"  # no other key fixes a bad request: no rotation
    assert KEY1 not in str(raised.value)
    assert "unknown model for key sk-…1111" in str(raised.value)
    assert keys_used(openai_server) == [KEY1]


async def test_when_every_key_cools_the_error_says_when_the_next_is_free(
    openai_server: OpenAIServer, make_pool: MakePool, clock: Clock
) -> None:
    openai_server.push(rate_limited(5), rate_limited(5), rate_limited(9), rate_limited(9))
    pool = make_pool(keys=(KEY1, KEY2))

    with pytest.raises(ModelError) as raised:
        await collect(pool)
    assert raised.value.kind == "rate_limited"
    assert raised.value.retry_after == 5.0
    assert "all 2 keys are cooling down; next available in 5s" in str(raised.value)
    assert keys_used(openai_server) == [KEY1, KEY1, KEY2, KEY2]

    # While they cool, a request fails at once without touching the server.
    clock.now += 2
    with pytest.raises(ModelError) as again:
        await collect(pool)
    assert again.value.retry_after == 3.0
    assert len(openai_server.chat_requests) == 4

    # The first key is back when its cooldown ends.
    clock.now += 3
    openai_server.push(text_reply("back"))
    assert text_of(await collect(pool)) == "back"
    assert keys_used(openai_server)[-1] == KEY1


async def test_a_long_retry_after_rotates_at_once_instead_of_waiting(
    openai_server: OpenAIServer, make_pool: MakePool, sleeps: list[float]
) -> None:
    openai_server.push(rate_limited(600), text_reply("ok"))
    pool = make_pool()

    assert text_of(await collect(pool)) == "ok"
    assert keys_used(openai_server) == [KEY1, KEY2]
    assert sleeps == []
    assert pool.state()[0].cooldown_until == NOW + 600


async def test_server_errors_retry_the_same_key_with_backoff_then_rotate_without_cooldown(
    openai_server: OpenAIServer, make_pool: MakePool, sleeps: list[float]
) -> None:
    openai_server.push(error_reply(503), error_reply(503), error_reply(503), text_reply("ok"))
    pool = make_pool(retry=RetryPolicy(max_retries=2, backoff_base=0.5, backoff_max=30.0))

    assert text_of(await collect(pool)) == "ok"
    assert keys_used(openai_server) == [KEY1, KEY1, KEY1, KEY2]
    assert len(sleeps) == 2
    assert 0 <= sleeps[0] <= 0.5 and 0 <= sleeps[1] <= 1.0  # full jitter, doubling cap
    first = pool.state()[0]
    assert (first.failures, first.last_error, first.cooldown_until) == (3, "retryable", 0.0)

    # The server's trouble was not the key's: the next request starts on key 1 again.
    openai_server.push(text_reply("again"))
    assert text_of(await collect(pool)) == "again"
    assert keys_used(openai_server)[-1] == KEY1
    assert pool.state()[0].last_error is None


async def test_an_error_after_output_began_is_raised_not_retried(
    openai_server: OpenAIServer, make_pool: MakePool
) -> None:
    openai_server.push(text_reply("Hello there, friend").dropped(after=4))
    pool = make_pool()
    chunks: list[ModelChunk] = []

    with pytest.raises(ModelError) as raised:
        async for chunk in pool.stream(REQUEST):
            chunks.append(chunk)

    assert raised.value.kind == "retryable"
    assert chunks[0] == RouteChunk("openai", "test-model")
    assert text_of(chunks) == "Hello the"  # what arrived before the cut, shown once
    assert keys_used(openai_server) == [KEY1]


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("fill_first", [KEY1, KEY1, KEY1, KEY1]),
        ("round_robin", [KEY1, KEY2, KEY3, KEY1]),
    ],
)
async def test_strategies_choose_keys_per_request(
    openai_server: OpenAIServer, make_pool: MakePool, strategy: str, expected: list[str]
) -> None:
    pool = make_pool(strategy=strategy)
    for _ in expected:
        openai_server.push(text_reply("ok"))
        await collect(pool)
    assert keys_used(openai_server) == expected


async def test_least_used_picks_the_key_with_fewest_uses_across_restarts(
    openai_server: OpenAIServer, make_pool: MakePool, tmp_path
) -> None:
    state_path = tmp_path / "pool.json"
    first = make_pool(state_path=state_path)  # fill_first: key 1 takes both requests
    for _ in range(2):
        openai_server.push(text_reply("ok"))
        await collect(first)

    pool = make_pool(strategy="least_used", state_path=state_path)
    for _ in range(5):
        openai_server.push(text_reply("ok"))
        await collect(pool)

    assert keys_used(openai_server)[2:] == [KEY2, KEY3, KEY2, KEY3, KEY1]
    assert [key.uses for key in pool.state()] == [3, 2, 2]


async def test_round_robin_skips_a_cooling_key(
    openai_server: OpenAIServer, make_pool: MakePool
) -> None:
    openai_server.push(error_reply(401), text_reply("a"), text_reply("b"), text_reply("c"))
    pool = make_pool(strategy="round_robin")
    for _ in range(3):
        await collect(pool)
    assert keys_used(openai_server) == [KEY1, KEY2, KEY3, KEY2]


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        '["a list"]',
        '{"version": 99, "keys": {}}',
        '{"version": 1, "keys": {"abc": {"uses": -1, "failures": 0, "cooldown_until": 0}}}',
        '{"version": 1, "keys": {"abc": {"uses": 1, "failures": 0, "cooldown_until": NaN}}}',
        '{"version": 1, "keys": {"abc": {"uses": 1, "failures": 0, "cooldown_until": 0, '
        '"last_error": "bogus"}}}',
    ],
)
async def test_a_corrupt_state_file_starts_fresh_with_a_warning(
    openai_server: OpenAIServer,
    make_pool: MakePool,
    tmp_path,
    caplog: pytest.LogCaptureFixture,
    content: str,
) -> None:
    state_path = tmp_path / "pool.json"
    state_path.write_text(content)
    caplog.set_level(logging.WARNING, logger="seam.services.llm.pool")

    pool = make_pool(state_path=state_path)
    openai_server.push(text_reply("fine"))

    assert text_of(await collect(pool)) == "fine"
    assert "is corrupt" in caplog.text and "starting fresh" in caplog.text
    saved = json.loads(state_path.read_text())  # rewritten whole on the next save
    assert [entry["uses"] for entry in saved["keys"].values()] == [1, 0, 0]


async def test_an_unwritable_state_path_warns_and_still_answers(
    openai_server: OpenAIServer, make_pool: MakePool, tmp_path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    pool = make_pool(state_path=blocker / "pool.json")  # its parent is a file
    openai_server.push(text_reply("fine"))
    caplog.set_level(logging.WARNING, logger="seam.services.llm.pool")

    assert text_of(await collect(pool)) == "fine"
    assert "cannot save key pool state" in caplog.text
    assert list(tmp_path.iterdir()) == [blocker]  # no temp file left behind


@pytest.mark.parametrize(
    ("keys", "options", "message"),
    [
        ((), {}, "at least one API key"),
        ((KEY1, " "), {}, "API key 2 of 2 in the pool is empty"),
        ((KEY1, KEY2, KEY1), {}, "API key 3 in the pool repeats key 1"),
        ((KEY1,), {"strategy": "random"}, "unknown key pool strategy 'random'"),
        ((KEY1,), {"auth_cooldown": -1}, "cooldowns must be >= 0"),
    ],
)
def test_bad_configuration_is_rejected_by_name(
    keys: tuple[str, ...], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        PooledProvider(keys, lambda key: pytest.fail("no provider is built"), **options)
    assert KEY1 not in str(raised.value)


def test_a_single_string_is_not_taken_as_a_pool_of_characters() -> None:
    with pytest.raises(TypeError, match="not a single string"):
        PooledProvider(KEY1, lambda key: pytest.fail("no provider is built"))  # type: ignore[arg-type]


def test_fingerprints_show_the_prefix_and_last_four_only() -> None:
    assert fingerprint(KEY1) == "sk-…1111"
    assert fingerprint("short-key") == "…ey"


def test_the_pool_presents_its_providers_name_and_model(make_pool: MakePool) -> None:
    pool = make_pool()
    assert (pool.name, pool.model, pool.max_context_tokens) == ("openai", "test-model", 128_000)
    assert make_pool(name="openai-pool").name == "openai-pool"
