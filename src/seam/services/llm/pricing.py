"""Model prices: defaults for common models (overridable in `[prices]` of config.toml,
read by wiring/pricing.py), and the cost of a call from its usage.

Prices are USD per million tokens. A model that is not in the table has no cost (shown as
"unpriced"), never a guessed one. The defaults are list prices at the time of writing;
users with other rates set their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from seam.contracts.messages import Usage


class Price(BaseModel):
    # Built when a `[prices]` entry is first validated: the defaults below are valid as
    # written (`model_construct`), so a run with no prices of its own builds no validator.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(None, ge=0)  # default: the input price
    cache_write: float | None = Field(None, ge=0)  # default: the input price


DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o": Price.model_construct(input=2.5, output=10.0, cache_read=1.25),
    "gpt-4o-mini": Price.model_construct(input=0.15, output=0.6, cache_read=0.075),
    "gpt-4.1": Price.model_construct(input=2.0, output=8.0, cache_read=0.5),
    "gpt-4.1-mini": Price.model_construct(input=0.4, output=1.6, cache_read=0.1),
    "gpt-4.1-nano": Price.model_construct(input=0.1, output=0.4, cache_read=0.025),
    "o3": Price.model_construct(input=2.0, output=8.0, cache_read=0.5),
    "o4-mini": Price.model_construct(input=1.1, output=4.4, cache_read=0.275),
    "claude-sonnet-4-5": Price.model_construct(
        input=3.0, output=15.0, cache_read=0.3, cache_write=3.75
    ),
    "claude-opus-4-1": Price.model_construct(
        input=15.0, output=75.0, cache_read=1.5, cache_write=18.75
    ),
    "claude-haiku-4-5": Price.model_construct(
        input=1.0, output=5.0, cache_read=0.1, cache_write=1.25
    ),
}


@dataclass(frozen=True)
class PriceTable:
    prices: Mapping[str, Price]
    # Offline models cost nothing.
    free_providers: frozenset[str] = frozenset({"local", "scripted"})

    def __call__(self, provider: str, model: str, usage: Usage) -> float | None:
        if provider in self.free_providers:
            return 0.0
        price = self.prices.get(model) or self.prices.get(model.rsplit("/", 1)[-1])
        if price is None:
            return None
        cache_read = price.input if price.cache_read is None else price.cache_read
        cache_write = price.input if price.cache_write is None else price.cache_write
        # `Usage.input_tokens` counts every prompt token; the cache counts are subsets.
        plain_input = max(
            0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens
        )
        return (
            plain_input * price.input
            + usage.cache_read_tokens * cache_read
            + usage.cache_write_tokens * cache_write
            + usage.output_tokens * price.output
        ) / 1_000_000
