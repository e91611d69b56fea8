"""A fallback chain: an ordered list of providers, each tried when the one before fails.

An entry is skipped only for failures another provider can fix and only before it has
produced anything: `retryable` (the entry already spent its own retries), `rate_limited`,
`auth` and `billing`. `context_overflow`, `refused` and `fatal` are raised at once: the
caller must compress, or the request itself is wrong, and another model would not help.
Once output has begun, every error is the caller's: starting over elsewhere would repeat
text the user has already seen.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import AsyncExitStack, aclosing
from dataclasses import replace

from seam.contracts.model import (
    ModelCapabilities,
    ModelChunk,
    ModelError,
    ModelProvider,
    ModelRequest,
)
from seam.services.llm.relay import Relay

_log = logging.getLogger(__name__)
_FALL_BACK_ON: frozenset[str] = frozenset({"retryable", "rate_limited", "auth", "billing"})


class FallbackProvider:
    """Presents the primary (first) entry to the caller and answers from the first entry
    that can. A `RouteChunk` naming the entry that answered comes before its output.

    `max_context_tokens` is the smallest in the chain, so a prompt compressed to fit it
    fits whichever entry ends up answering. A non-primary entry gets the request with
    `model=None`: a model name chosen for the primary means nothing to another provider.
    """

    def __init__(self, chain: Sequence[ModelProvider], *, name: str = "fallback") -> None:
        if not chain:
            raise ValueError("a fallback chain needs at least one provider")
        self._chain = tuple(chain)
        self._name = name

    @property
    def name(self) -> str:
        return self._chain[0].name

    @property
    def model(self) -> str:
        return self._chain[0].model

    @property
    def max_context_tokens(self) -> int:
        return min(provider.max_context_tokens for provider in self._chain)

    @property
    def capabilities(self) -> ModelCapabilities:
        return self._chain[0].capabilities

    @property
    def chain(self) -> tuple[ModelProvider, ...]:
        return self._chain

    def count_tokens(self, text: str) -> int:
        return self._chain[0].count_tokens(text)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        return self._stream(request)

    async def aclose(self) -> None:
        async with AsyncExitStack() as stack:
            for provider in self._chain:
                stack.push_async_callback(provider.aclose)

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[ModelChunk, None]:
        failures: list[tuple[ModelProvider, ModelError]] = []
        entry_request = request
        last = len(self._chain) - 1
        for position, provider in enumerate(self._chain):
            if position == 1 and request.model is not None:
                entry_request = replace(request, model=None)
            relay = Relay(provider, entry_request)
            try:
                async with aclosing(relay.chunks()) as chunks:
                    async for chunk in chunks:
                        yield chunk
                return
            except ModelError as error:
                if relay.produced or error.kind not in _FALL_BACK_ON:
                    raise
                failures.append((provider, error))
                if position < last:
                    following = self._chain[position + 1]
                    _log.warning(
                        "%s/%s failed (%s); falling back to %s/%s",
                        provider.name,
                        provider.model,
                        error,
                        following.name,
                        following.model,
                    )
        raise self._all_failed(failures)

    def _all_failed(self, failures: list[tuple[ModelProvider, ModelError]]) -> ModelError:
        """One error naming every entry and why it failed.

        Its kind is the last entry's, unless that one cannot clear by waiting and an
        earlier one can: then the caller should back off and retry, not give up.
        """
        chosen = failures[-1][1]
        if not chosen.retryable:
            chosen = next((e for _, e in reversed(failures) if e.retryable), chosen)
        reasons = "; ".join(
            f"{provider.name}/{provider.model}: {_reason(error)}" for provider, error in failures
        )
        return chosen.restated(
            f"every provider in the chain failed: {reasons}", provider=self._name
        )


def _reason(error: ModelError) -> str:
    code = f" (HTTP {error.status})" if error.status else ""
    return f"{error.kind}{code}: {error.message}"
