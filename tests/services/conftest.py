from __future__ import annotations

import pytest


@pytest.fixture
def delays() -> list[float]:
    """Every backoff a provider asked to sleep, in order (the sleep itself is instant)."""
    return []
