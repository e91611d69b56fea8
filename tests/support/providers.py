"""What provider tests share: a factory that builds providers against a loopback server
(recording backoff instead of sleeping, closing them at teardown) and small helpers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from seam.contracts.messages import Message
from seam.contracts.model import ModelChunk, ModelProvider, ModelRequest, TextChunk


@asynccontextmanager
async def provider_factory(
    cls: Callable[..., Any], delays: list[float], **defaults: Any
) -> AsyncIterator[Callable[..., Any]]:
    """Yields `build(**overrides)`; every backoff the providers ask for lands in `delays`.

    Requests get a minute in all and five seconds per event, so a test that stalls by
    mistake fails in seconds while a scripted `Retry-After` still fits the deadline.
    """
    providers: list[Any] = []

    async def record_sleep(seconds: float) -> None:
        delays.append(seconds)

    def build(**overrides: Any) -> Any:
        provider = cls(
            **{"timeout": 60.0, "idle_timeout": 5.0, "sleep": record_sleep, **defaults, **overrides}
        )
        providers.append(provider)
        return provider

    try:
        yield build
    finally:
        for provider in providers:
            await provider.aclose()


def ask(text: str = "hi", **options: Any) -> ModelRequest:
    return ModelRequest(system="You are terse.", messages=(Message("user", text),), **options)


async def collect(provider: ModelProvider, request: ModelRequest) -> list[ModelChunk]:
    return [c async for c in provider.stream(request)]


def text_of(chunks: list[ModelChunk]) -> str:
    return "".join(c.text for c in chunks if isinstance(c, TextChunk))
