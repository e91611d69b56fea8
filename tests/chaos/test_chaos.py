"""The chaos suite (quick mode by default; `SEAM_CHAOS=long` for 1,000 submissions
across 50 sessions): see tests/chaos/harness.py for what is broken and what is checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos.harness import Figures, PostgresBackend, SqliteBackend, mode, run
from tests.chaos.infra import SmallDisk, pg_available, throwaway_postgres

# The long mode runs for many minutes: past the suite's default per-test timeout.
pytestmark = [pytest.mark.chaos, pytest.mark.timeout(mode().limit + 300)]


def _verdict(figures: Figures) -> None:
    print(figures.report())
    problems = "\n".join(figures.problems[:40])
    assert not figures.failed(), f"{figures.report()}\n{problems}"


def test_sqlite_workers_survive_kills_model_faults_and_a_full_disk(tmp_path: Path) -> None:
    disk = SmallDisk(tmp_path / "disk")
    if not disk.mount():
        pytest.fail("the chaos suite fills a tmpfs: `mount -t tmpfs` needs root here")
    try:
        backend = SqliteBackend(disk.path / "sessions.db")
        figures = run(tmp_path, backend, workers=2, m=mode(), seed=1717, disk=disk)
    finally:
        disk.unmount()
    _verdict(figures)
    assert figures.faults["disk_full"] == 1


def test_postgres_workers_survive_kills_model_faults_and_a_server_restart(
    tmp_path: Path,
) -> None:
    why = pg_available()
    if why:
        pytest.fail(f"the PostgreSQL chaos run needs a server of its own: {why}")
    with throwaway_postgres() as server:
        backend = PostgresBackend(server)
        figures = run(tmp_path, backend, workers=3, m=mode(), seed=1718, restart=server.restart)
    _verdict(figures)
    assert figures.faults["pg_restart"] == 1
