"""`UsageReport` on both stores: usage summed per day (in the reader's time zone), per
model and per session, limited to a time and to a tenant's key prefix."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.messages import Usage
from seam.contracts.sessions import UsageRecord
from seam.contracts.usage_report import UsageQuery, UsageReport
from seam.services.sessions.postgres import PostgresStore
from seam.services.sessions.sqlite import SQLiteSessionStore

DAY = 86_400.0
START = 20_000 * DAY  # midnight UTC, day 20000


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Any, Clock]]:
    clock = Clock()
    if request.param == "sqlite":
        made: Any = SQLiteSessionStore(str(tmp_path / "s.db"), clock=clock)
    else:
        url = request.getfixturevalue("postgres_url")
        schema = request.getfixturevalue("postgres_schema")
        made = await PostgresStore.connect(url, schema=schema, clock=clock)
    yield made, clock
    await made.aclose()


async def record(store: Any, clock: Clock, at: float, key: str, model: str, tokens: int) -> None:
    clock.now = at
    cost = None if model == "free" else tokens / 1000
    await store.record_usage(key, UsageRecord("p", model, Usage(tokens, 1, 2), cost))


async def test_usage_is_summed_per_day_model_and_session(store: tuple[Any, Clock]) -> None:
    made, clock = store
    assert isinstance(made, UsageReport)
    for key in ("a:one", "a:two", "b:one"):
        await made.create(key)
    await record(made, clock, START + 3600, "a:one", "m1", 100)
    await record(made, clock, START + 23 * 3600, "a:two", "m2", 200)  # 23:00 UTC
    await record(made, clock, START + DAY + 60, "a:one", "m1", 300)
    await record(made, clock, START + DAY + 120, "b:one", "free", 50)
    await record(made, clock, START - DAY, "a:one", "m1", 7)  # before `since`

    query = UsageQuery(since=START, key_prefix="a:")
    days = await made.usage_by("day", query)
    assert [(g.group, g.totals.usage.input_tokens) for g in days] == [
        ("20000", 300),
        ("20001", 300),
    ]
    assert days[0].totals.calls == 2 and days[0].totals.cost_usd == pytest.approx(0.3)
    # Two hours east of UTC, the 23:00 call is the next day's.
    east = await made.usage_by("day", UsageQuery(since=START, key_prefix="a:", day_offset=7200))
    assert [(g.group, g.totals.calls) for g in east] == [("20000", 1), ("20001", 2)]

    models = await made.usage_by("model", UsageQuery(since=START))
    assert [(g.group, g.totals.usage.input_tokens) for g in models] == [
        ("free", 50),
        ("m1", 400),
        ("m2", 200),
    ]
    assert models[0].totals.unpriced_calls == 1 and models[0].totals.cost_usd == 0

    sessions = await made.usage_by("session", query)
    assert [(g.group, g.totals.usage.output_tokens) for g in sessions] == [
        ("a:one", 2),
        ("a:two", 1),
    ]
    assert sessions[0].totals.usage.cache_read_tokens == 4
    assert await made.usage_by("session", UsageQuery(since=START, key_prefix="c:")) == []


async def test_an_unknown_grouping_is_refused(store: tuple[Any, Clock]) -> None:
    made, _ = store
    with pytest.raises(ValueError, match="grouping must be one of day, model, session"):
        await made.usage_by("week", UsageQuery())
