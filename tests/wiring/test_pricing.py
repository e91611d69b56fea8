from __future__ import annotations

import pytest

from seam.contracts import Usage
from seam.wiring.pricing import price_table
from seam.wiring.settings import ConfigError


def test_known_models_are_priced_per_million_tokens() -> None:
    table = price_table()
    cost = table("openai", "gpt-4o-mini", Usage(input_tokens=1_000_000, output_tokens=1_000_000))
    assert cost == pytest.approx(0.15 + 0.6)


def test_cached_input_is_billed_at_the_cache_price() -> None:
    table = price_table()
    usage = Usage(input_tokens=1_000_000, cache_read_tokens=1_000_000)
    assert table("openai", "gpt-4o-mini", usage) == pytest.approx(0.075)


def test_unknown_models_are_unpriced_and_local_ones_free() -> None:
    table = price_table()
    assert table("openai", "some-new-model", Usage(10, 10)) is None
    assert table("local", "SmolLM2-135M-Instruct", Usage(10, 10)) == 0.0
    assert table("openai", "openrouter/gpt-4o-mini", Usage(1_000_000, 0)) == pytest.approx(0.15)


def test_config_overrides_and_bad_prices_name_the_model() -> None:
    table = price_table({"my-model": {"input": 1.0, "output": 2.0}})
    assert table("openai", "my-model", Usage(1_000_000, 1_000_000)) == pytest.approx(3.0)
    with pytest.raises(ConfigError, match=r"prices\.bad: input"):
        price_table({"bad": {"input": -1, "output": 1}}, where="config.toml")
