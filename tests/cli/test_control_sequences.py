"""What the model, a tool or a transcript holds never drives the terminal.

An answer or a file can carry escape sequences: OSC 52 sets the clipboard, OSC 8 plants a
link that opens somewhere else than it says, CSI sequences clear the screen or move the
cursor to paint over what a person is about to read. Seam shows them, never obeys them.
"""

from __future__ import annotations

import json
import re

import pytest

from seam.apps.cli.render import Style, terminal_safe
from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.in_process

# Any control character a terminal acts on, but newline and tab.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

HOSTILE = (
    "Done.\x1b]52;c;cm0gLXJmIH4=\x07"  # OSC 52: put `rm -rf ~` on the clipboard
    "\x1b]8;;https://evil.example/\x1b\\docs.python.org\x1b]8;;\x1b\\"  # OSC 8 link
    "\x1b[2J\x1b[H\x1b[3A\x1b[10;10H"  # clear, home, up 3, move
    "\x1bP+q544e\x1b\\"  # DCS
    "\x9b2J\x9d0;title\x07"  # C1 CSI and OSC
    "all good\rALL BAD\x08\x08\x7f"  # carriage return overwrite, backspaces, DEL
)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),
        ("\x1b]8;;http://x/\x1b\\y\x1b]8;;\x1b\\", "\\x1b]8;;http://x/\\x1b\\y\\x1b]8;;\\x1b\\"),
        ("\x1b[2J\x1b[1;1H", "\\x1b[2J\\x1b[1;1H"),
        ("\x9b31m", "\\x9b31m"),
        ("ok\rno", "ok\\x0dno"),
        ("line\r\nnext\n\ttab", "line\nnext\n\ttab"),
        ("naïve → ünïcode ✓", "naïve → ünïcode ✓"),
    ],
)
def test_control_characters_are_shown_not_obeyed(text: str, shown: str) -> None:
    assert terminal_safe(text) == shown


def test_clean_text_is_the_same_object_and_styling_keeps_only_its_own_codes() -> None:
    text = "plain\ttext\n" * 100
    assert terminal_safe(text) is text
    styled = Style(True).bold(HOSTILE)
    assert styled.startswith("\x1b[1m") and styled.endswith("\x1b[0m")
    assert CONTROL.search(styled[4:-4]) is None
    assert CONTROL.search(Style(False).dim(HOSTILE)) is None


def test_run_prints_a_hostile_answer_harmlessly(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(text_reply(HOSTILE))

    result = cli("run", "hello")

    assert result.returncode == 0, result.stderr
    assert CONTROL.search(result.stdout) is None, repr(result.stdout)
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07" in result.stdout  # visible, so a reader can tell
    # --json is for programs: the JSON escapes the text, and the text is the model's own.
    openai_server.push(text_reply(HOSTILE))
    as_json = cli("run", "--json", "hello")
    assert CONTROL.search(as_json.stdout) is None
    events = [json.loads(line) for line in as_json.stdout.splitlines()]
    [done] = [e for e in events if e["type"] == "done"]
    assert done["text"] == HOSTILE
    assert events[-1]["type"] == "exit"


def test_chat_shows_hostile_answers_and_tool_output_harmlessly(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    missing = "no-such\x1b[2J\x1b]52;c;eA==\x07file"
    openai_server.push(
        tool_call_reply([("read_file", json.dumps({"path": missing}))]), text_reply(HOSTILE)
    )

    result = cli("chat", "--session", "hostile", stdin="hello\n/personality\n/sessions\n")

    assert result.returncode == 0, result.stderr
    assert "✗ read_file: error: " in result.stdout
    assert CONTROL.search(result.stdout) is None, repr(result.stdout)
    assert "\\x1b]8;;https://evil.example/" in result.stdout


def test_sessions_show_and_list_print_a_hostile_transcript_harmlessly(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    (cli.project / "notes.txt").write_text(f"{HOSTILE}\nsecond line")
    openai_server.push(
        tool_call_reply([("read_file", '{"path": "notes.txt"}')]), text_reply(HOSTILE)
    )
    assert cli("run", "--session", "hostile", f"read notes.txt \x1b[2J{HOSTILE}").returncode == 0

    for args in (
        ("sessions", "show", "hostile"),
        ("sessions", "list"),
        ("sessions", "search", "good"),
    ):
        shown = cli(*args)
        assert shown.returncode == 0, shown.stderr
        assert CONTROL.search(shown.stdout) is None, (args, shown.stdout)
    shown = cli("sessions", "show", "hostile")
    assert "seam: Done.\\x1b]52;c;" in shown.stdout
    assert "→ read_file: 1|Done.\\x1b]52;c;" in shown.stdout
    for args in (("sessions", "show", "hostile", "--json"), ("sessions", "export", "hostile")):
        exported = cli(*args)
        assert CONTROL.search(exported.stdout) is None, args
        messages = json.loads(exported.stdout)["messages"]
        assert messages[-1]["content"] == HOSTILE  # the same value, only escaped


def test_resume_and_worker_reports_show_control_sequences_as_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`seam resume` / `seam worker` print each settled answer; a stored answer that holds
    an OSC 52 clipboard write reaches the terminal as text."""
    from seam.apps.cli.durable import _report
    from seam.contracts.execution import Submission
    from seam.wiring.runtime import Runtime

    key = 'agent-session:["local","default","demo"]'
    sub = Submission(
        "s1", key, "hi", "settled", 0.0, 0.0, outcome="completed", result="ok\x1b]52;c;aGk=\x07"
    )
    _report(Runtime, sub, as_json=False)  # type: ignore[arg-type]  # only session_name_of
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "== demo · s1 · completed" in out and "\\x1b]52" in out
