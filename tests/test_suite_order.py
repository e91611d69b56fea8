"""The parallel suite's order (`tests/support/durations.py`): longest first by the last
run's times, new tests before them, and the times written back merged over the last."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest

from tests.support.durations import DurationLog, longest_first, read_durations

When = Literal["setup", "call", "teardown"]


def test_units_go_longest_first_and_a_new_test_counts_as_the_mean() -> None:
    queue = {
        "a.py::fast": {"a.py::fast": False},
        "group": {"b.py::one": False, "b.py::two": False},
        "c.py::slow": {"c.py::slow": False},
        "d.py::new": {"d.py::new": False},
        "e.py::also_new": {"e.py::also_new": False},
        "f.py::tiny": {"f.py::tiny": False},
    }
    times = {"a.py::fast": 0.5, "b.py::one": 3.0, "b.py::two": 4.0, "c.py::slow": 5.0}
    times["f.py::tiny"] = 0.0  # the mean of the known: 12.5 / 5 = 2.5
    longest_first(queue, times)
    assert list(queue) == [
        "group",
        "c.py::slow",
        "d.py::new",
        "e.py::also_new",
        "a.py::fast",
        "f.py::tiny",
    ]


def test_without_figures_the_order_is_xdists() -> None:
    queue = {f"t.py::{n}": {f"t.py::{n}": False} for n in "zyxw"}
    longest_first(queue, {})
    assert list(queue) == ["t.py::z", "t.py::y", "t.py::x", "t.py::w"]


def test_no_file_or_a_broken_one_means_no_figures(tmp_path: Path) -> None:
    assert read_durations(None) == {}
    assert read_durations(tmp_path / "missing.json") == {}
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert read_durations(broken) == {}
    broken.write_text('["a list"]')
    assert read_durations(broken) == {}
    mixed = tmp_path / "mixed.json"
    mixed.write_text('{"t.py::a": 1.5, "t.py::b": "x"}')
    assert read_durations(mixed) == {"t.py::a": 1.5}


def _report(nodeid: str, when: When, duration: float) -> pytest.TestReport:
    return pytest.TestReport(nodeid, ("t.py", 1, nodeid), {}, "passed", None, when, (), duration)


def test_each_tests_phases_are_summed_and_merged_over_the_last_figures(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "durations.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"elsewhere.py::kept": 9.0, "t.py::a": 99.0}))
    log = DurationLog(path)
    phases: list[tuple[When, float]] = [("setup", 0.25), ("call", 1.0), ("teardown", 0.25)]
    for when, duration in phases:
        log.pytest_runtest_logreport(_report("t.py::a", when, duration))
    log.pytest_runtest_logreport(_report("t.py::b", "call", 0.5))
    log.pytest_sessionfinish()
    assert read_durations(path) == {"elsewhere.py::kept": 9.0, "t.py::a": 1.5, "t.py::b": 0.5}
    assert [p.name for p in path.parent.iterdir()] == ["durations.json"]


def test_a_session_that_ran_nothing_leaves_the_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    DurationLog(path).pytest_sessionfinish()
    assert not path.exists()
