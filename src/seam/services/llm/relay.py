"""Passing one provider's stream on, for the providers that choose among others (a
fallback chain, a key pool): a `RouteChunk` first, naming who answers, then the stream;
and whether anything went out yet, since after that a failure can no longer be tried
again elsewhere."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator

from seam.contracts.model import ModelChunk, ModelProvider, ModelRequest, RouteChunk


class Relay:
    """`provider`'s answer to `request`, relayed by `chunks()`; `produced` turns True once
    the first chunk went out."""

    def __init__(self, provider: ModelProvider, request: ModelRequest) -> None:
        self._provider = provider
        self._request = request
        self.produced = False

    async def chunks(self) -> AsyncGenerator[ModelChunk, None]:
        chunks = self._provider.stream(self._request)
        try:
            route, first = await first_chunk(self._provider, chunks)
            self.produced = True
            yield route
            if first is not None:
                yield first
                async for chunk in chunks:
                    yield chunk
        finally:
            await close_stream(chunks)


async def first_chunk(
    provider: ModelProvider, chunks: AsyncIterator[ModelChunk]
) -> tuple[RouteChunk, ModelChunk | None]:
    """The `RouteChunk` naming who answers, and the first real chunk (None if there is none).

    The route waits for the first real chunk, so a provider that fails before output never
    names itself to the caller; an empty answer still says who gave it. A route from a
    provider nested inside (a pool names its key) knows better and replaces this one.
    """
    route = RouteChunk(provider.name, provider.model)
    async for chunk in chunks:
        if not isinstance(chunk, RouteChunk):
            return route, chunk
        route = chunk
    return route, None


async def close_stream(chunks: AsyncIterator[ModelChunk]) -> None:
    """Close a provider's stream (and its HTTP response) now, not when it is collected.

    The contract types `stream` as any async iterator; only generators have `aclose`.
    """
    close = getattr(chunks, "aclose", None)
    if close is not None:
        await close()
