"""Shared fixtures. Every test gets its own HOME and SEAM_HOME, so nothing can write to
the developer's real home, and provider variables from the outer shell never leak in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["tests.support.openai_server", "tests.support.postgres"]

_LEAKY_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SEAM_MODEL",
    "SEAM_HOME",
    "ANTHROPIC_API_KEY",
)


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    for name in _LEAKY_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SEAM_HOME", str(home / ".seam"))
    yield home
