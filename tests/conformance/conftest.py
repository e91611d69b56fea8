"""The fixtures every conformance module shares: the clock, and which backend the test
runs on (each module opens its `store` from it, see backends.py)."""

from __future__ import annotations

import pytest

from seam.testing.clock import ManualClock

from .backends import BACKENDS


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend's name: "memory", or one registered in `backends.REGISTERED`."""
    name: str = request.param
    return name
