"""No tracebacks: each fault of the environment (config, argv, stdin, the disk, the
database) ends in one line naming what is wrong and what to do, a non-zero exit, and
stored data left as it was. (Faults of the model's endpoint: test_faults.py.)

Read-only and full SEAM_HOMEs are real filesystems: a tmpfs mounted in the test's tmp dir
(size-limited for "full", remounted read-only for "read-only"); those tests need root and
are skipped where mounting is not allowed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from seam.apps.cli.runner import execute
from tests.cli.conftest import SEAM, Cli, make_cli
from tests.support.openai_server import OpenAIServer, text_reply

pytestmark = pytest.mark.in_process

QUICK = 15.0


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("seam: ")
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def shown(cli: Cli, name: str) -> dict[str, Any]:
    result = cli("sessions", "show", name, "--json")
    assert result.returncode == 0, result.stderr
    body: dict[str, Any] = json.loads(result.stdout)
    return body


def first_turn(cli: Cli, server: OpenAIServer) -> None:
    server.push(text_reply("First answer."))
    result = cli("run", "--session", "kept", "first question")
    assert result.returncode == 0, result.stderr


# -- config, argv, stdin ---------------------------------------------------------------


def test_config_that_is_not_utf8_is_one_line(cli: Cli, openai_server: OpenAIServer) -> None:
    cli.home.mkdir(parents=True)
    config = cli.home / "config.toml"
    config.write_bytes(b"\xff\xfe[\x00m\x00o\x00d\x00e\x00l\x00]\x00")
    before = digest(config)

    result = cli("run", "hi")

    assert result.returncode == 2
    line = one_line(result)
    assert str(config) in line and "not UTF-8" in line
    assert digest(config) == before
    assert openai_server.chat_requests == []


def test_a_prompt_that_is_not_utf8_is_a_usage_error(cli: Cli, openai_server: OpenAIServer) -> None:
    first_turn(cli, openai_server)
    db = cli.home / "sessions.db"
    before = shown(cli, "kept")
    bad = os.fsdecode(b"caf\xe9")  # latin-1 bytes, as a shell in the wrong locale sends them

    for args in (("run", bad), ("run", "--session", bad, "hi"), ("chat", "--session", bad)):
        result = cli(*args)
        assert result.returncode == 2, (args, result.stderr)
        line = one_line(result)
        assert "not valid UTF-8" in line and "0xe9" in line

    piped = subprocess.run(
        [str(SEAM), "run", "-"],
        cwd=cli.project,
        env=cli.env,
        input=b"caf\xe9\n",
        capture_output=True,
        timeout=QUICK,
    )
    assert piped.returncode == 2
    assert b"not valid UTF-8" in piped.stderr and len(piped.stderr.splitlines()) == 1
    assert shown(cli, "kept") == before
    assert len(openai_server.chat_requests) == 1
    assert db.exists()


def closed_stdin(cli: Cli, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SEAM), *args],
        cwd=cli.project,
        env=cli.env,
        stdin=None,
        capture_output=True,
        encoding="utf-8",
        timeout=QUICK,
        preexec_fn=lambda: os.close(0),
    )


def test_closed_stdin_is_one_line(cli: Cli, openai_server: OpenAIServer) -> None:
    result = closed_stdin(cli, "run", "-")
    assert result.returncode == 2
    assert "stdin is closed" in one_line(result)

    result = closed_stdin(cli, "chat")
    assert result.returncode == 2
    assert "stdin is closed" in one_line(result)

    with open(os.devnull) as null:
        started = time.monotonic()
        result = subprocess.run(
            [str(SEAM), "chat"],
            cwd=cli.project,
            env=cli.env,
            stdin=null,
            capture_output=True,
            encoding="utf-8",
            timeout=QUICK,
        )
    assert time.monotonic() - started < QUICK
    assert result.returncode == 2
    assert "not a terminal" in one_line(result)
    assert openai_server.chat_requests == []


def test_run_with_stdin_closed_still_answers(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(text_reply("Fine."))
    result = closed_stdin(cli, "run", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Fine.\n"


# -- the database ----------------------------------------------------------------------


def test_a_locked_database_is_one_line(cli: Cli, openai_server: OpenAIServer) -> None:
    first_turn(cli, openai_server)
    db_path = cli.home / "sessions.db"
    before = shown(cli, "kept")
    holder = sqlite3.connect(db_path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        started = time.monotonic()
        result = cli("run", "--session", "kept", "second question")
        took = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()

    assert took < QUICK
    assert result.returncode == 1
    line = one_line(result)
    assert "locked" in line and str(db_path) in line
    assert shown(cli, "kept") == before
    assert len(openai_server.chat_requests) == 1


def test_a_damaged_database_is_one_line_and_left_alone(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    cli.home.mkdir(parents=True)
    db_path = cli.home / "sessions.db"
    db_path.write_bytes(b"this is not a database, it is a shopping list\n" * 200)
    before = digest(db_path)

    for args in (("run", "hi"), ("sessions", "list"), ("resume",)):
        result = cli(*args)
        assert result.returncode == 1, (args, result.stderr)
        line = one_line(result)
        assert "damaged" in line and str(db_path) in line and "mv " in line
    assert digest(db_path) == before
    assert openai_server.chat_requests == []


# -- read-only and full SEAM_HOME ------------------------------------------------------


def _mount(*args: str) -> bool:
    done = subprocess.run(["mount", *args], capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs of this test's own, unmounted afterwards."""
    where = tmp_path / "fs"
    where.mkdir()
    if os.geteuid() != 0 or not _mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)):
        pytest.skip("needs root to mount a tmpfs")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def cli_on(tmp_path: Path, home: Path, server: OpenAIServer) -> Cli:
    cli = make_cli(
        tmp_path,
        {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test-key"},
        in_process=True,
    )
    cli.env["SEAM_HOME"] = str(home)
    cli.home = home
    return cli


def test_a_read_only_seam_home_is_one_line(
    tmp_path: Path, tmpfs: Path, openai_server: OpenAIServer
) -> None:
    cli = cli_on(tmp_path, tmpfs / "home", openai_server)
    first_turn(cli, openai_server)
    before = shown(cli, "kept")
    assert _mount("-o", "remount,ro", str(tmpfs))
    try:
        for args in (("run", "--session", "kept", "again"), ("run", "hi")):
            result = cli(*args)
            assert result.returncode == 1, (args, result.stderr)
            line = one_line(result)
            assert "SEAM_HOME" in line and "writable" in line
    finally:
        assert _mount("-o", "remount,rw", str(tmpfs))
    assert shown(cli, "kept") == before
    assert len(openai_server.chat_requests) == 1


def fill(folder: Path, leave: int) -> Path:
    """Fill the filesystem of `folder` until only `leave` bytes are free."""
    filler = folder / "filler"
    free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
    with filler.open("wb") as out:
        out.write(b"\0" * max(0, free - leave))
    return filler


@pytest.mark.parametrize("leave_kib", [0, 80, 96, 112, 128])
def test_a_full_disk_is_one_line_and_the_turn_settles_failed_once_there_is_room(
    leave_kib: int, tmp_path: Path, tmpfs: Path, openai_server: OpenAIServer
) -> None:
    """How much room is left decides where the turn fails: opening the store, storing the
    input, storing the answer, or only settling. Wherever it is, the next command (once
    there is room) finds the turn settled failed and never runs it again. (With enough
    room left the turn simply completes; that is checked to be whole too.)"""
    cli = cli_on(tmp_path, tmpfs / "home", openai_server)
    first_turn(cli, openai_server)
    openai_server.push(text_reply("An answer the disk has no room for."))
    filler = fill(tmpfs, leave_kib * 1024)
    try:
        started = time.monotonic()
        result = cli("run", "--session", "kept", "second question")
        took = time.monotonic() - started
    finally:
        filler.unlink()

    assert took < QUICK
    body = shown(cli, "kept")
    if leave_kib and result.returncode == 0:
        assert [s["outcome"] for s in body["submissions"]] == ["completed", "completed"]
        return
    assert result.returncode == 1, result.stderr
    line = one_line(result)
    assert "is full" in line and "Free some space" in line
    assert [s["state"] for s in body["submissions"]] == ["settled"] * len(body["submissions"])
    failed = body["submissions"][1:]
    for sub in failed:
        assert sub["outcome"] == "failed" and "full" in sub["error"]
    assert [m["content"] for m in body["messages"][:2]] == ["first question", "First answer."]
    resumed = cli("resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "nothing to resume" in resumed.stderr
    assert len(openai_server.chat_requests) <= 2  # never asked again after the failure


# -- the backstop ----------------------------------------------------------------------


def test_an_unexpected_error_is_one_line_naming_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SEAM_HOME", str(tmp_path / "home"))

    async def broken() -> int:
        raise RuntimeError("a bug nobody expected")

    with pytest.raises(BaseException) as ended:
        execute(broken())
    assert isinstance(ended.value, SystemExit) and ended.value.code == 1
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("seam: internal error: RuntimeError: a bug nobody expected")
    log = lines[0].split("details in ")[1].rstrip(")")
    assert "a bug nobody expected" in Path(log).read_text()
    assert "Traceback" in Path(log).read_text()
