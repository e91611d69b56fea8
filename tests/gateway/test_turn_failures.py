"""A turn whose driving raises (not a turn that settles failed), in process over the fake
platform and a real SQLite store. The fault is the store's own: a trigger, added through
a second connection to the database file, refuses the update that gives a submission its
lease, so `Runtime.ask` raises every time it takes the turn (aborting still works).

The chat is told in one line, the turn is driven again until it has had three tries in
all, then aborted with a line saying so; the count is kept in the store, so a restart
does not grant three more; another chat goes on meanwhile."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from seam.core.scripted_model import ScriptedModel, text_step
from seam.services.sessions.sqlite import SQLiteSessionStore
from tests.gateway.fake_chat import FakePlatform
from tests.gateway.harness import gateway_running, make_runtime, section, until

SID = "tg:42:1000"
FAULT = "injected store fault"


def break_leases(db: Path) -> None:
    """From now on the store refuses to lease submission `SID` (a real SQLite error)."""
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TRIGGER lease_fault BEFORE UPDATE ON submissions "
            f"WHEN NEW.id = '{SID}' AND NEW.lease_owner IS NOT NULL "
            f"BEGIN SELECT RAISE(ABORT, '{FAULT}'); END"
        )
    conn.close()


def texts(platform: FakePlatform, chat: str) -> list[str]:
    shown = (platform.messages[i] for i in platform.order)
    return [m.text for m in shown if m.chat == f"telegram:{chat}"]


def drivings(caplog: pytest.LogCaptureFixture) -> int:
    return sum(r.getMessage() == f"driving {SID} failed" for r in caplog.records)


async def test_a_turn_that_breaks_is_told_tried_three_times_then_aborted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "sessions.db"
    store = SQLiteSessionStore(str(db))
    runtime = make_runtime(ScriptedModel([text_step("for 43")]), store)  # type: ignore[arg-type]
    platform = FakePlatform()
    break_leases(db)
    with caplog.at_level(logging.ERROR, logger="seam.gateway"):
        async with gateway_running(runtime, platform, tmp_path, config=section(("42", "43"))):
            platform.say("hello", user="42")
            await until(platform, lambda: any("gave up" in t for t in texts(platform, "42")), "x")
            platform.say("hi", user="43")
            await until(platform, lambda: "for 43" in texts(platform, "43"), "the other chat")
    said = texts(platform, "42")
    assert len(said) == 2 and said[0].count("\n") == 0
    assert "could not handle" in said[0] and FAULT in said[0]
    assert said[1].startswith("I gave up on that message after 3 tries")
    assert drivings(caplog) == 3
    sub = await store.submission(SID)
    assert sub is not None and sub.state == "settled" and sub.outcome == "aborted"
    await store.aclose()


async def test_the_limit_on_a_breaking_turn_survives_a_restart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "sessions.db"
    store = SQLiteSessionStore(str(db))
    runtime = make_runtime(ScriptedModel([]), store)  # type: ignore[arg-type]
    platform = FakePlatform()
    break_leases(db)
    with caplog.at_level(logging.ERROR, logger="seam.gateway"):
        # The first process tries once (its rescue loop does not come round again).
        async with gateway_running(runtime, platform, tmp_path, rescue_every=3600.0):
            platform.say("hello", user="42")
            await until(platform, lambda: len(texts(platform, "42")) == 1, "the error")
        assert drivings(caplog) == 1
        # The next one has the two tries left, not three more.
        async with gateway_running(runtime, platform, tmp_path):
            await until(platform, lambda: any("gave up" in t for t in texts(platform, "42")), "x")
    assert drivings(caplog) == 3
    said = texts(platform, "42")
    assert [("could not handle" in t, "after 3 tries" in t) for t in said] == [
        (True, False),
        (False, True),
    ]
    await store.aclose()
