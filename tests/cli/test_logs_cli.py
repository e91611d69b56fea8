"""`seam logs`: reads the JSON lines (rotated files too), filters by session and level,
and `--follow` prints lines as they are appended, across a rotation."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.conftest import Cli

pytestmark = pytest.mark.in_process

KEY_S = 'agent-session:["local","default","s"]'
KEY_T = 'agent-session:["local","default","t"]'


def _line(message: str, level: str = "info", session: str | None = None) -> str:
    body: dict[str, object] = {"ts": 1796150000.5, "level": level, "logger": "seam.loop"}
    body["message"] = message
    if session is not None:
        body["session"], body["submission"] = session, "sub-9"
    return json.dumps(body) + "\n"


def _write(cli: Cli, name: str, *lines: str) -> Path:
    folder = cli.home / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    with path.open("a", encoding="utf-8") as out:
        out.writelines(lines)
    return path


def test_lines_of_every_file_oldest_first_filtered(cli: Cli) -> None:
    _write(cli, "seam.jsonl.2", _line("oldest", "warning", KEY_S))
    _write(cli, "seam.jsonl.1", _line("older", "info", KEY_S), "not json at all\n")
    _write(cli, "seam.jsonl", _line("newest", "error", KEY_S), _line("other", "error", KEY_T))
    everything = cli("logs")
    assert everything.returncode == 0, everything.stderr
    assert [line.split()[-1] for line in everything.stdout.splitlines()] == [
        "oldest",
        "older",
        "newest",
        "other",
    ]
    filtered = cli("logs", "--session", "s", "--level", "warning")
    lines = filtered.stdout.splitlines()
    assert [line.split()[-1] for line in lines] == ["oldest", "newest"]
    assert "WARNING" in lines[0] and "[s / sub-9]" in lines[0]
    assert "ERROR" in lines[1]


def test_an_unknown_level_is_a_usage_error(cli: Cli) -> None:
    result = cli("logs", "--level", "loud")
    assert result.returncode == 2
    assert "--level must be one of" in result.stderr


def test_no_log_yet_prints_nothing(cli: Cli) -> None:
    result = cli("logs")
    assert (result.returncode, result.stdout) == (0, "")


class _Reader:
    """Lines from a child's stdout, each awaited with a deadline (no sleeps)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        self._fd = proc.stdout.fileno()
        os.set_blocking(self._fd, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._fd, selectors.EVENT_READ)
        self._buffer = ""

    def next_line(self, timeout: float = 15.0) -> str:
        deadline = time.monotonic() + timeout
        while "\n" not in self._buffer:
            left = deadline - time.monotonic()
            assert left > 0, f"no line within {timeout} s (have {self._buffer!r})"
            if self._selector.select(left):
                chunk = os.read(self._fd, 65536)
                assert chunk, "the command exited"
                self._buffer += chunk.decode()
        line, self._buffer = self._buffer.split("\n", 1)
        return line


def test_follow_prints_appended_lines_and_follows_a_rotation(cli: Cli) -> None:
    current = _write(cli, "seam.jsonl", _line("before", "info", KEY_S))
    proc = cli.popen("logs", "--follow", "--session", "s")
    try:
        reader = _Reader(proc)
        assert reader.next_line().endswith("before")
        _write(cli, "seam.jsonl", _line("skipped", "info", KEY_T), _line("appended", "info", KEY_S))
        assert reader.next_line().endswith("appended")
        # Rotation as RotatingFileHandler does it: rename, then a new file.
        _write(cli, "seam.jsonl", _line("last of the old file", "info", KEY_S))
        current.rename(current.with_name("seam.jsonl.1"))
        _write(cli, "seam.jsonl", _line("first of the new file", "warning", KEY_S))
        assert reader.next_line().endswith("last of the old file")
        assert reader.next_line().endswith("first of the new file")
    finally:
        proc.kill()
        proc.wait(timeout=10)
