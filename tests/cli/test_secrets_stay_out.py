"""The configured API key stays out of everything Seam stores, exports, logs or sends.

`seam run` with a scripted model makes tool calls that read the key through every channel
a command has: the environment, `/proc/self/environ` and every ancestor's
`/proc/<pid>/environ`, a file in reach holding it, and the key encoded (base64 at each
byte offset, url-safe base64, hex, URL-encoded). Afterwards no stored message, event,
export, log line, file under SEAM_HOME or request body sent to the model holds the key,
raw or encoded. On the local backend a command really can read the parent's environment,
so the tool results must show the redaction, proving the channels were exercised.
"""

from __future__ import annotations

import base64
import json
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from seam.services.sandbox.bwrap import bwrap_available
from tests.cli.conftest import Cli, make_cli, tool_messages
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

# Random, with no prefix: only exact-value redaction can catch it (no pattern knows it).
KEY = secrets.token_urlsafe(33)
LABEL = "[REDACTED:OPENAI_API_KEY]"
WINDOW = 12  # any run of this many characters of an encoded form counts as a leak

PY_ANCESTORS = r"""
import base64, os, urllib.parse
pid = os.getpid()
while pid > 1:
    try:
        raw = open(f"/proc/{pid}/environ", "rb").read()
        status = open(f"/proc/{pid}/status").read()
    except OSError:
        break
    print(pid, raw.replace(b"\0", b"\n").decode(errors="replace"))
    print(base64.b64encode(raw).decode(), base64.urlsafe_b64encode(b"x" + raw).decode())
    print(raw.hex(), urllib.parse.quote(raw), urllib.parse.quote_plus(raw))
    print(os.environ.get("OPENAI_API_KEY"))
    pid = int(status.split("PPid:")[1].split()[0])
"""
QUOTE_STDIN = "python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.stdin.read()))'"
PARENT_KEY = "tr '\\0' '\\n' < /proc/$PPID/environ | grep '^OPENAI_API_KEY=' | cut -d= -f2-"
COMMANDS = [
    "env",
    "printenv OPENAI_API_KEY; printenv OPENAI_API_KEY | base64; printenv OPENAI_API_KEY | xxd -p",
    "tr '\\0' '\\n' < /proc/self/environ",
    "tr '\\0' '\\n' < /proc/$PPID/environ",
    "base64 /proc/$PPID/environ",
    "xxd -p /proc/$PPID/environ",
    f"{PARENT_KEY} | base64",
    f"{PARENT_KEY} | sed 's/^/x/' | base64",
    f"{PARENT_KEY} | sed 's/^/xy/' | base64 -w0",
    f"{PARENT_KEY} | xxd -p",
    f"{PARENT_KEY} | {QUOTE_STDIN}",
    "cat .env",
    "base64 .env; base64 -w0 .env; xxd -p .env",
    "python3 -c \"import urllib.parse; print(urllib.parse.quote(open('.env').read()))\"",
]
# Commands that read the parent's environment: on the local backend they reach the key.
REACHES_KEY_LOCALLY = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]


def encoded_forms(value: str) -> Iterator[str]:
    data = value.encode()
    yield value
    yield data.hex()
    yield data.hex().upper()
    yield quote(value, safe="")
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data).decode()
        core = encoded[(8 * offset + 5) // 6 : (8 * (offset + len(data))) // 6]
        yield core
        yield core.replace("+", "-").replace("/", "_")


def leaks(text: str) -> list[str]:
    """Every WINDOW-long piece of the key (in any form) that `text` holds."""
    found = []
    for form in encoded_forms(KEY):
        for at in range(len(form) - WINDOW + 1):
            if form[at : at + WINDOW] in text:
                found.append(form[at : at + WINDOW])
                break
    return found


def leaking_files(root: Path, skip: Path | None = None) -> list[str]:
    """The files under `root` (but `skip`) that hold a piece of the key."""
    return [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*"))
        if path.is_file() and path != skip and leaks(path.read_bytes().decode("latin-1"))
    ]


@pytest.fixture(params=["local", "bwrap"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "bwrap" and not bwrap_available():
        pytest.skip("bubblewrap is missing or cannot create namespaces here")
    return str(request.param)


def test_a_configured_key_read_through_every_channel_is_stored_nowhere(
    tmp_path: Path, openai_server: OpenAIServer, backend: str
) -> None:
    # The run a process of its own (its tools read their ancestors' environments); the
    # commands that read the stores afterwards in the test process.
    cli: Cli = make_cli(
        tmp_path,
        {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": KEY},
        in_process=True,
    )
    cli.write_config(f'[sandbox]\nbackend = "{backend}"\n')
    env_file = cli.project / ".env"
    env_file.write_text(f"# local settings\nOPENAI_API_KEY={KEY}\n")
    calls = [("terminal", json.dumps({"command": c})) for c in COMMANDS]
    calls += [
        ("execute_code", json.dumps({"code": PY_ANCESTORS})),
        ("read_file", json.dumps({"path": ".env"})),
    ]
    openai_server.push(tool_call_reply(calls), text_reply("Read them all."))

    # Approve whatever the guard asks about: the point is what happens to the output.
    result = cli.spawn("run", "--yes", "--json", "--session", "leaky", "read the key")

    assert result.returncode == 0, result.stderr
    # The key really was configured: the provider was called with it.
    assert openai_server.chat_requests[0].headers["authorization"] == f"Bearer {KEY}"
    results = [m["content"] for m in tool_messages(openai_server, 1)]
    assert len(results) == len(calls)
    if backend == "local":
        for index in REACHES_KEY_LOCALLY:
            content = results[index]
            refused = any(w in content for w in ("denied", "forbidden", "blocked", "approval"))
            assert LABEL in content or refused, (COMMANDS[index], content)
        assert sum(LABEL in content for content in results) >= 5, results
    assert LABEL in results[-1]  # read_file of .env

    # What the model was sent next, what `seam run --json` printed, what it logged.
    for request in openai_server.chat_requests:
        assert leaks(json.dumps(request.body)) == []
    assert leaks(result.stdout) == []
    assert leaks(result.stderr) == []
    # The stores (messages, events, submissions in sessions.db and its WAL) and every other
    # file Seam keeps; the project's files, bar the user's own .env.
    assert leaking_files(cli.home) == []
    assert leaking_files(cli.project, skip=env_file) == []
    for args in (("sessions", "show", "leaky"), ("sessions", "show", "leaky", "--json")):
        shown = cli(*args)
        assert shown.returncode == 0, shown.stderr
        assert leaks(shown.stdout + shown.stderr) == []
        assert "--json" not in args or LABEL in shown.stdout
    exported = cli("sessions", "export")
    assert exported.returncode == 0, exported.stderr
    assert LABEL in exported.stdout
    assert leaks(exported.stdout) == []


def test_the_key_is_still_found_when_it_was_not_redacted() -> None:
    """The leak check itself: each encoding a command produces is recognised."""
    for command in ("base64", "xxd -p"):
        done = subprocess.run(
            command.split(),
            input=f"OPENAI_API_KEY={KEY}\n",
            text=True,
            capture_output=True,
            check=True,
        )
        assert leaks(done.stdout.replace("\n", ""))
    assert leaks(quote(KEY, safe=""))
    assert leaks(base64.urlsafe_b64encode(b"xy" + KEY.encode()).decode())


def test_a_key_pasted_into_chat_is_kept_redacted_in_its_history(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    import os
    import pty

    from tests.cli.conftest import SEAM
    from tests.cli.test_terminal import PROMPT_SHOWN, Terminal

    cli = make_cli(tmp_path, {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": KEY})
    openai_server.push(text_reply("Please do not paste keys."))
    pid, fd = pty.fork()
    if pid == 0:  # the child: become `seam chat` on the pty, never return into pytest
        try:
            os.chdir(cli.project)
            env = {**cli.env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
            os.execve(str(SEAM), [str(SEAM), "chat"], env)
        finally:
            os._exit(127)
    terminal = Terminal(fd)
    try:
        at = terminal.wait_for(PROMPT_SHOWN, after=terminal.wait_for("Ctrl-D to leave"))
        terminal.type(f"my key is {KEY}\r")
        at = terminal.wait_for("Please do not paste keys.", after=at)
        terminal.wait_for(PROMPT_SHOWN, after=at)
        terminal.type("\x04")
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    history = (cli.home / "history").read_text()
    assert f"+my key is {LABEL}" in history
    assert leaks(history) == []
