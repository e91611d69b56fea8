"""The cron store contract, run against every backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.cron import CronStore
from seam.core.cron import InMemoryCronStore

from .backends import BACKENDS, open_backend
from .cron_suite import CronStoreSuite
from .session_store_suite import ManualClock


class _Holder:
    """The in-memory backend as the SQL ones come: a store whose `cron` is the view."""

    def __init__(self, clock: ManualClock) -> None:
        self.cron = InMemoryCronStore(clock=clock)

    async def aclose(self) -> None:
        pass


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(params=BACKENDS)
async def cron(
    request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[CronStore]:
    backend: Any = await open_backend(request, clock, tmp_path, _Holder)
    assert isinstance(backend.cron, CronStore)
    yield backend.cron
    await backend.aclose()


class TestCronStore(CronStoreSuite):
    pass
