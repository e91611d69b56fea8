"""Approvals with no one there, through the real console script (its own process).

A scripted hostile model asks for things that need approval: deleting a directory, a cron
job, a new skill, a destructive MCP tool. With stdin a pipe nobody can answer, whatever
the pipe holds (an "o" is a script's text, not a person's yes; a blank line is not a
person's no): nothing runs, `seam run` exits 5 (`approval_unavailable`) and the model and
the person are told "no one was available to approve ...", with how to allow it and never
"denied". `--yes` answers for the person. A cron run and a heartbeat say the same.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Cli, json_lines, tool_messages
from tests.plugins.test_skills import write_skill
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

DELETE = ("terminal", json.dumps({"command": "rm -r build"}))
MCP_SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"
# A personality with every registered tool (the default one leaves out cron and skills).
OPEN_CONFIG = 'name = "Open"\n'


def open_personality(cli: Cli) -> None:
    folder = cli.home / "personalities" / "open"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SOUL.md").write_text("You may use every tool.")
    (folder / "config.toml").write_text(OPEN_CONFIG)


def no_one_told(openai_server: OpenAIServer, request: int) -> str:
    """What the model was told about its one call, checked for the honest wording."""
    [told] = tool_messages(openai_server, request)
    content = str(told["content"])
    assert "no one was available to approve" in content, content
    assert "denied" not in content and "refused: refused" not in content, content
    assert "--yes" in content and "seam chat" in content, content
    return content


def the_line(stderr: str) -> str:
    """The one `seam:` line a run that waited on an approval ends with."""
    lines = [line for line in stderr.splitlines() if line.startswith("seam: ")]
    assert len(lines) == 1, stderr
    assert "no one was available to approve" in lines[0] and "denied" not in lines[0]
    return lines[0]


@pytest.mark.parametrize("piped", ["o\n", "\n"])
def test_a_pipe_is_nobody_whatever_it_holds(
    cli: Cli, openai_server: OpenAIServer, piped: str
) -> None:
    (cli.project / "build").mkdir()
    openai_server.push(tool_call_reply([DELETE]), text_reply("Left it."))

    result = cli.spawn("run", "remove the build directory", stdin=piped)

    assert result.returncode == 5, result.stderr
    assert (cli.project / "build").is_dir()
    assert "approve? [o]nce" not in result.stderr  # nobody was asked
    line = the_line(result.stderr)
    assert line.startswith("seam: terminal: no one was available to approve 'rm -r build'")
    told = no_one_told(openai_server, 1)
    assert '[guard] allow = ["rm -r build"]' in told and '[guard] allow = ["rm -r' in line


def test_yes_answers_for_the_person(cli: Cli, openai_server: OpenAIServer) -> None:
    (cli.project / "build").mkdir()
    openai_server.push(tool_call_reply([DELETE]), text_reply("Removed."))

    result = cli.spawn("run", "--yes", "--json", "remove the build directory", stdin="d\n")

    assert result.returncode == 0, result.stderr
    assert not (cli.project / "build").exists()
    assert "approved (--yes)" in result.stderr
    events = json_lines(result.stdout)
    assert [e["decision"] for e in events if e["type"] == "tool_approval_response"] == ["once"]
    assert tool_messages(openai_server, 1)[0]["content"].startswith("exit code 0")


def test_cron_and_skill_write_from_a_pipe(cli: Cli, openai_server: OpenAIServer) -> None:
    open_personality(cli)
    write_skill(cli.home / "skills", "triage", "Triage a bug report.")
    cron = json.dumps({"action": "add", "prompt": "wipe it", "every": "1h", "deliver": "none"})
    skill = json.dumps({"name": "wiper", "description": "Wipes things.", "body": "Wipe."})
    openai_server.push(
        tool_call_reply([("cron", cron), ("skill_write", skill)]), text_reply("Nothing done.")
    )

    result = cli.spawn("run", "--personality", "open", "schedule a wipe", stdin="a\n")

    assert result.returncode == 5, result.stderr
    line = the_line(result.stderr)  # the first of the two that waited
    assert line.startswith(
        ("seam: cron: no one was available to approve cron add", "seam: skill_write: no one")
    )
    assert "[guard] allow" not in line  # it would help neither
    told = sorted(str(m["content"]) for m in tool_messages(openai_server, 1))
    assert len(told) == 2, told
    assert all("no one was available to approve" in t and "denied" not in t for t in told), told
    assert "approve cron add" in told[0] and "approve skill_write create" in told[1]
    assert all("[guard] allow" not in t for t in told)
    assert not (cli.home / "skills" / "wiper").exists()
    listed = cli.spawn("cron", "list", "--json")
    assert json.loads(listed.stdout) == [], listed.stderr


def test_an_mcp_tool_that_asks_from_a_pipe(cli: Cli, openai_server: OpenAIServer) -> None:
    cli.write_config(
        f"[mcp.servers.notes]\ncommand = [{sys.executable!r}, {str(MCP_SERVER)!r}]\n"
        'env = { NOTES_TOKEN = "abc" }\n'
    )
    call = ("mcp__notes__delete_note", json.dumps({"title": "taxes"}))
    openai_server.push(tool_call_reply([call]), text_reply("Kept it."))

    result = cli.spawn("run", "delete my taxes note", stdin="always\n", timeout=90)

    assert result.returncode == 5, result.stderr
    line = the_line(result.stderr)
    assert line.startswith("seam: mcp__notes__delete_note: no one was available to approve")
    told = no_one_told(openai_server, 1)
    assert "deleted" not in told and "[guard] allow" not in told


def test_a_cron_run_tells_the_model_and_the_person(cli: Cli, openai_server: OpenAIServer) -> None:
    (cli.project / "build").mkdir()
    added = cli.spawn("cron", "add", "--every", "1h", "--deliver", "none", "clean up")
    assert added.returncode == 0, added.stderr
    [job] = json.loads(cli.spawn("cron", "list", "--json").stdout)
    openai_server.push(tool_call_reply([DELETE]), text_reply("Could not clean up."))

    result = cli.spawn("cron", "run", job["id"])

    assert result.returncode == 0, result.stderr
    assert "Could not clean up." in result.stdout
    assert (cli.project / "build").is_dir()
    assert the_line(result.stderr).startswith("seam: terminal: no one was available")
    no_one_told(openai_server, 1)


def test_a_heartbeat_does_not_wait_for_nobody(cli: Cli, openai_server: OpenAIServer) -> None:
    (cli.project / "build").mkdir()
    cli.write_config(
        '[heartbeat]\nevery = "30m"\ndeliver = "none"\ntools = ["terminal"]\n'
        "[guard]\napproval_timeout = 120\n"
    )
    (cli.home / "HEARTBEAT.md").write_text("- Remove the build directory.\n")
    openai_server.push(tool_call_reply([DELETE]), text_reply("HEARTBEAT_OK"))

    # Waiting out the approval timeout would outlast the test's own limit.
    result = cli.spawn("heartbeat", "run", timeout=60)

    assert result.returncode == 0, result.stderr
    assert (cli.project / "build").is_dir()
    no_one_told(openai_server, 1)
