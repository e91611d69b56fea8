"""`seam sessions export` and `seam sessions prune`, through the real `seam` command."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from seam.contracts.messages import Message
from seam.contracts.sessions import NewSession
from seam.core.identity import DEFAULT_HARNESS, create_session_storage_key
from seam.services.sessions.sqlite import SQLiteSessionStore
from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.in_process

DAY = 86_400.0


def key(name: str) -> str:
    return create_session_storage_key("local", DEFAULT_HARNESS, name)


def listed(cli: Cli) -> list[str]:
    result = cli("sessions", "list")
    assert result.returncode == 0, result.stderr
    return [line.split()[0] for line in result.stdout.splitlines()[1:]]


def seed(path: Path, sessions: list[tuple[str, float, bool]]) -> None:
    """Writes sessions straight into the store file: (name, last activity, ended)."""

    async def write() -> None:
        for name, at, ended in sessions:
            store = SQLiteSessionStore(str(path), clock=lambda at=at: at)
            await store.create(key(name), NewSession(personality="default"))
            await store.append(key(name), [Message("user", f"hello from {name}")])
            if ended:
                await store.end(key(name))
            await store.aclose()

    path.parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(write())


def set_title(path: Path, name: str, title: str) -> None:
    async def write() -> None:
        store = SQLiteSessionStore(str(path))
        await store.set_title(key(name), title)
        await store.aclose()

    asyncio.run(write())


def test_export_prints_a_session_or_all_of_them(cli: Cli, openai_server: OpenAIServer) -> None:
    (cli.project / "note.txt").write_text("The meeting is at 3pm.")
    openai_server.push(
        tool_call_reply([("read_file", '{"path": "note.txt"}')]),
        text_reply("The meeting is at 3pm."),
        text_reply("Another answer."),
    )
    assert cli("run", "--session", "demo", "When is the meeting?").returncode == 0
    assert cli("run", "--session", "later", "Something else").returncode == 0

    one = cli("sessions", "export", "demo")
    assert one.returncode == 0, one.stderr
    demo = json.loads(one.stdout)
    assert demo["name"] == "demo"
    assert demo["key"] == key("demo")
    assert demo["personality"] == "default"
    assert demo["ended"] is False
    assert demo["message_count"] == 4
    assert [m["role"] for m in demo["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert demo["messages"][0]["content"] == "When is the meeting?"
    assert demo["messages"][1]["tool_calls"][0]["name"] == "read_file"
    assert "The meeting is at 3pm." in demo["messages"][2]["content"]
    assert demo["usage"]["calls"] == 2
    assert demo["usage"]["input_tokens"] > 0

    everything = cli("sessions", "export")
    assert everything.returncode == 0, everything.stderr
    exported = json.loads(everything.stdout)
    assert [s["name"] for s in exported] == ["demo", "later"]  # oldest first
    assert exported[0] == demo

    set_title(cli.home / "sessions.db", "later", "Plans for Friday")
    by_title = cli("sessions", "export", "Plans for Friday")
    assert by_title.returncode == 0, by_title.stderr
    assert json.loads(by_title.stdout)["name"] == "later"


def test_export_of_an_unknown_session_is_a_clear_error(cli: Cli) -> None:
    unknown = cli("sessions", "export", "nosuch")
    assert unknown.returncode == 1
    assert unknown.stdout == ""
    assert unknown.stderr == "seam: no session named or titled 'nosuch' (see: seam sessions list)\n"
    empty = cli("sessions", "export")
    assert empty.returncode == 0
    assert json.loads(empty.stdout) == []


def test_prune_deletes_old_ended_sessions_only(cli: Cli) -> None:
    cli.write_config('[sessions]\nidle_end = ""\n')  # no idle end: "ancient-open" stays open
    now = time.time()
    seed(
        cli.home / "sessions.db",
        [
            ("ancient-ended", now - 200 * DAY, True),
            ("ancient-open", now - 300 * DAY, False),
            ("recent-ended", now - 10 * DAY, True),
            ("today", now, False),
        ],
    )
    assert listed(cli) == ["today", "recent-ended", "ancient-ended", "ancient-open"]

    pruned = cli("sessions", "prune", "--older-than", "90d")
    assert pruned.returncode == 0, pruned.stderr
    assert pruned.stdout == "pruned 1 ended session with no activity for 90d\n"
    assert listed(cli) == ["today", "recent-ended", "ancient-open"]
    assert "hello from ancient-ended" not in cli("sessions", "search", "hello").stdout

    again = cli("sessions", "prune", "--older-than", "2w")
    assert again.stdout == "nothing to prune: no ended session has been idle for 2w\n"
    hours = cli("sessions", "prune", "--older-than", "24h")
    assert hours.stdout == "pruned 1 ended session with no activity for 24h\n"
    assert listed(cli) == ["today", "ancient-open"]  # never an open session


@pytest.mark.parametrize("age", ["90", "d", "-5d", "90 days", "1.5.3d", "9y", "", "ninety"])
def test_prune_refuses_a_bad_age_and_deletes_nothing(cli: Cli, age: str) -> None:
    seed(cli.home / "sessions.db", [("ancient-ended", time.time() - 200 * DAY, True)])
    result = cli("sessions", "prune", "--older-than", age)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"seam: --older-than takes an age like 90d, 12h or 2w (hours, days, weeks), not {age!r}\n"
    )
    assert listed(cli) == ["ancient-ended"]


def test_prune_needs_an_age(cli: Cli) -> None:
    result = cli("sessions", "prune")
    assert result.returncode == 2
    assert "--older-than" in result.stderr
