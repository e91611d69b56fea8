"""Fixtures of the hostile-model tests: the backend, the machine, the loopback listener,
and the clean-up of any process a move left behind."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from seam.services.sandbox.bwrap import DEFAULT_BWRAP, bwrap_available
from tests.security.listener import LoopbackListener

BACKENDS = ("bwrap", "local")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each test runs on bubblewrap (every command approved) and on the local backend
    (nobody to approve)."""
    if request.param == "bwrap" and not Path(DEFAULT_BWRAP).exists():
        pytest.skip(f"bubblewrap is not installed at {DEFAULT_BWRAP} (scripts/start installs it)")
    if request.param == "bwrap" and not bwrap_available():
        pytest.skip("bubblewrap cannot create its namespaces on this machine")
    return str(request.param)


@pytest.fixture
def listener() -> Iterator[LoopbackListener]:
    with LoopbackListener() as running:
        yield running


def processes_holding(markers: list[str]) -> dict[int, str]:
    """Live processes whose command line holds one of `markers`: pid -> command line."""
    found: dict[int, str] = {}
    if not markers:
        return found
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if any(marker in cmdline for marker in markers):
            found[int(entry.name)] = cmdline.strip()
    return found


@pytest.fixture
def leftovers() -> Iterator[list[str]]:
    """The markers a test's daemons carry; whatever still holds one afterwards (started by
    this test, so ours to end) is killed by its pid."""
    markers: list[str] = []
    yield markers
    for pid in processes_holding(markers):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
