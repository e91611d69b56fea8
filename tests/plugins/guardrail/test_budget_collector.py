"""A command's check has a CPU budget (10 ms of the thread's time). The garbage collector
runs on that same clock: a pass over a big heap, which a long-lived process has, can
take the whole budget, and a command the guard would have refused or allowed came back
"too costly to check". The check runs again, once, when a collection ran during it."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from seam.plugins.guardrail import walk as walk_module
from seam.plugins.guardrail.classifier import CommandClassifier
from seam.plugins.guardrail.shell import OverBudget
from tests.support.collect import collect

STORE = "/srv/seam/store.db"
DELETE = f"sqlite3 {STORE} 'DELETE FROM messages'"


def guard() -> CommandClassifier:
    return CommandClassifier(home="/home/me", protected=["/home/me/.seam", STORE])


def test_a_collection_that_spends_the_budget_does_not_change_the_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checker = guard()
    checker.classify("ls")  # warmed up, off the clock
    script = walk_module.Walk.script
    calls = []

    def collected_first(self: Any, *args: Any, **kwargs: Any) -> str:
        calls.append(1)
        if len(calls) == 1:  # the collector runs and the budget is gone
            collect()
            raise OverBudget("the command takes too long to parse")
        return script(self, *args, **kwargs)

    monkeypatch.setattr(walk_module.Walk, "script", collected_first)
    # Only the collection this test runs: one the heap of a whole suite's worker starts
    # during the retry as well would spend its budget too (seen on a loaded machine).
    gc.disable()
    try:
        found = checker.classify(DELETE)
    finally:
        gc.enable()
    assert (found.verdict, found.rule) == ("forbidden", "floor:seam-home")
    assert len(calls) == 2


def test_a_command_over_budget_with_no_collection_is_asked_about_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checker = guard()
    checker.classify("ls")
    calls = []

    def too_costly(self: Any, *args: Any, **kwargs: Any) -> str:
        calls.append(1)
        raise OverBudget("the command takes too long to parse")

    monkeypatch.setattr(walk_module.Walk, "script", too_costly)
    gc.disable()  # no pass may run during the check
    try:
        found = checker.classify("ls -la")
    finally:
        gc.enable()
    assert (found.verdict, found.rule) == ("needs_approval", "budget:exceeded")
    assert len(calls) == 1
