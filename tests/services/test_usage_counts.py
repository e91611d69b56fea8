"""Token counts from a provider's response become the contract's ints whatever the server
sent: a store's integer column, a budget's sum and the usage report all rely on it, and a
broken or hostile server is no reason to lose a turn's answer."""

from __future__ import annotations

import pytest

from seam.contracts.messages import Usage, token_count
from seam.services.llm import anthropic_events, openai_chunks


@pytest.mark.parametrize(
    ("sent", "counted"),
    [
        (12, 12),
        (12.0, 12),
        (12.9, 12),
        ("12", 12),
        (" 12 ", 12),
        (None, 0),
        (-5, 0),
        (True, 0),
        ("twelve", 0),
        ("-3", 0),
        ("²", 0),
        (float("nan"), 0),
        (float("inf"), 0),
        ([12], 0),
        ({"n": 12}, 0),
        (10**30, 2**63 - 1),
        (1e30, 2**63 - 1),
    ],
)
def test_a_count_is_a_non_negative_int_a_store_can_hold(sent: object, counted: int) -> None:
    value = token_count(sent)
    assert value == counted and type(value) is int


def test_openai_usage_with_odd_counts_reads_as_ints() -> None:
    usage = openai_chunks.usage_of(
        {
            "prompt_tokens": 10.0,
            "completion_tokens": "7",
            "prompt_tokens_details": {"cached_tokens": None},
            "completion_tokens_details": {"reasoning_tokens": -1},
        }
    )
    assert usage == Usage(input_tokens=10, output_tokens=7)


def test_anthropic_usage_with_odd_counts_reads_as_ints() -> None:
    usage = anthropic_events.usage_of(
        {
            "input_tokens": "5",
            "output_tokens": 3.0,
            "cache_read_input_tokens": 2,
            "cache_creation_input_tokens": "lots",
        }
    )
    assert usage == Usage(input_tokens=7, output_tokens=3, cache_read_tokens=2)
