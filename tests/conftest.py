"""Shared fixtures. Every test gets its own HOME and SEAM_HOME, so nothing can write to
the developer's real home, and provider variables from the outer shell never leak in.

The suite runs in parallel (`scripts/test`: pytest-xdist, `--dist loadgroup`): each test
leaves the process as it found it (`isolated_home`, `root_logger_restored`), and
`pytest_xdist_make_scheduler` keeps together on one worker the modules that must share one
(`ONE_WORKER`) and hands out the longest tests first (`tests/support/durations.py`)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.durations import DurationLog, durations_path, longest_first, read_durations

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


@pytest.fixture(autouse=True)
def root_logger_restored() -> Iterator[None]:
    """A test that configures logging the way a surface does (`configure_logging` adds
    handlers bound to that moment's stderr and SEAM_HOME) does not hand them on to the
    tests that run after it in the same worker."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers[:] = handlers
    root.setLevel(level)


# Modules whose tests run one after another on one worker, and why.
ONE_WORKER: dict[str, str] = {
    # Each run starts worker processes and a PostgreSQL server or a tmpfs of its own and
    # counts on the CPU they get: two at once on two cores starve each other's deadlines.
    "tests/chaos/test_chaos.py": "chaos",
    # Module-scoped fixtures that are costly to start once per worker instead of once:
    # the llama.cpp model or server, a Chromium browser.
    "tests/services/test_llama_local.py": "llama-local",
    "tests/services/test_llama_server_e2e.py": "llama-server",
    "tests/web/test_page.py": "chromium",
    "tests/web/test_page_errors.py": "chromium",
}


def pytest_configure(config: pytest.Config) -> None:
    """The controller (not an xdist worker) records each test's time for the next run's
    order, when `scripts/test` names the file (`SEAM_TEST_DURATIONS`)."""
    path = durations_path()
    if path is not None and not hasattr(config, "workerinput"):
        config.pluginmanager.register(DurationLog(path), "seam-durations")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With `--dist loadgroup`: each test a unit of its own, except the modules in
    `ONE_WORKER`, each a unit sent whole to one worker (and, as xdist does, tests marked
    `xdist_group`). The grouping is decided here, on the node ids, because pytest 9 no
    longer lets xdist append a group to an item's node id on the workers. The units are
    handed out longest first, by the last run's times (`tests/support/durations.py`)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling  # type: ignore[import-untyped]

    durations = read_durations(durations_path())

    class Grouped(LoadGroupScheduling):  # type: ignore[misc]
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            group = ONE_WORKER.get(nodeid.split("::", 1)[0])
            return group if group is not None else str(super()._split_scope(nodeid))

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the queue is complete by the first hand-out
                longest_first(self.workqueue, durations)
                self.ordered = True
            super()._assign_work_unit(node)

    return Grouped(config, log)
