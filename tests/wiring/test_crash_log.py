"""The CLI's crash log: written under `$SEAM_HOME/logs`, else the system temp dir, and
never through a link planted at its (predictable) name in a shared temp dir."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from seam.apps.cli.log_setup import write_crash_log

STAMP = "20260101-000000"


@pytest.fixture
def stamped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A fixed time in the name, and a temp dir of the test's own."""
    monkeypatch.setattr(time, "strftime", lambda _format: STAMP)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


def test_the_crash_log_lands_in_seam_home(
    stamped: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEAM_HOME", str(tmp_path / "home"))
    where = write_crash_log(ValueError("boom"))
    assert where == str(tmp_path / "home" / "logs" / f"crash-{STAMP}-{os.getpid()}.log")
    assert "ValueError: boom" in Path(where).read_text()


def test_a_link_planted_at_the_temp_name_is_not_followed(
    stamped: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "not-a-dir").write_text("")
    monkeypatch.setenv("SEAM_HOME", str(tmp_path / "not-a-dir" / "home"))  # cannot take it
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (stamped / f"seam-crash-{STAMP}-{os.getpid()}.log").symlink_to(victim)
    assert write_crash_log(ValueError("boom")) is None
    assert victim.read_text() == "keep me\n"
