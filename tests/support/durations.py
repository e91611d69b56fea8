"""Longest first: the order in which the parallel suite hands out its tests.

xdist hands out the next unit of work to whichever worker is nearly idle, in collection
order. A long test collected late (a `seam` process per step, a PostgreSQL worker pair)
then starts when the other worker has little left, and that worker waits idle for it: on
two workers, up to half that test's time is added to the run. Handing out the longest
units first (the classic longest-processing-time rule) leaves only short tests for the
end, so both workers finish close together.

How long a test takes is what it took last time: `DurationLog` (the controller process
only) sums each test's setup, call and teardown and merges them into a JSON file when the
session ends. `scripts/test` names that file (`SEAM_TEST_DURATIONS`, next to the bytecode
and mypy caches, so a fresh clone on the same machine starts from it); without the
variable nothing is read or written and the order is xdist's own. A test with no figure
(new, or renamed) counts as the mean of the known ones: ahead of the thousands of short
tests, so a slow new test is not left for the end, and behind the known long ones, so a
file with few figures (a partial run) does not push those back. The order is a guess
about time, never about which tests run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path

import pytest

ENV = "SEAM_TEST_DURATIONS"


def durations_path() -> Path | None:
    """The file `scripts/test` named, or None (no ordering, nothing written)."""
    where = os.environ.get(ENV, "").strip()
    return Path(where) if where else None


def read_durations(path: Path | None) -> dict[str, float]:
    """The last figures; empty when there are none or the file is not readable JSON (a
    broken file only costs the ordering, never the run)."""
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(v, (int, float))}


def longest_first(
    workqueue: MutableMapping[str, dict[str, bool]], durations: Mapping[str, float]
) -> None:
    """Reorder xdist's queue of units (scope -> its node ids) in place, by total time,
    longest first; a test without a figure counts as the mean of the known ones."""
    guess = sum(durations.values()) / len(durations) if durations else 0.0

    def cost(item: tuple[str, dict[str, bool]]) -> float:
        return -sum(durations.get(nodeid, guess) for nodeid in item[1])

    ordered = sorted(workqueue.items(), key=cost)  # stable: ties keep collection order
    workqueue.clear()
    workqueue.update(ordered)


class DurationLog:
    """Registered in the controller: each test's setup + call + teardown time, written
    (merged over the last figures, so a partial run keeps the rest) at the end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.times: dict[str, float] = {}

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.times[report.nodeid] = self.times.get(report.nodeid, 0.0) + report.duration

    @pytest.hookimpl
    def pytest_sessionfinish(self) -> None:
        if not self.times:
            return
        merged = {**read_durations(self.path), **{k: round(v, 3) for k, v in self.times.items()}}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(merged, sort_keys=True, indent=0), encoding="utf-8")
            tmp.replace(self.path)
        except OSError:
            pass  # a cache that cannot be written only costs the next run its ordering
