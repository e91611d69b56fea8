"""Redaction stays the second line: a configured secret the person put in reach is shown
to the model only as `[REDACTED:OPENAI_API_KEY]`, on both backends.

The first line (tests in test_hostile_model.py) keeps secrets out of reach altogether. A
key in the workspace's own `.env` is in reach by the person's choice: there the exact-value
redaction of configured secrets (plugins/safety/secrets.py) is all that stands between the
key and the model, in every encoding it knows (raw, base64, hex, URL-encoded).
"""

from __future__ import annotations

from pathlib import Path

from tests.security.findings import model_requests, printed_events, seam_files, turn_ran_through
from tests.security.leaks import Canaries
from tests.security.machine import make_machine
from tests.security.moves import Move, py, sh, tool
from tests.security.runner import run_moves
from tests.support.openai_server import OpenAIServer

KEY_NAME = "api key (OPENAI_API_KEY in Seam's environment)"
LABEL = "[REDACTED:OPENAI_API_KEY]"
QUOTE = "import urllib.parse; print(urllib.parse.quote(open('.env').read()))"
MOVES = [
    tool("read_file .env", "read_file", path=".env"),
    sh("cat .env", "cat .env"),
    sh("base64 .env", "base64 .env"),
    sh("xxd -p .env", "xxd -p .env"),
    py("python: URL-encoded .env", QUOTE),
]


def test_a_configured_key_in_reach_reaches_the_model_only_redacted(
    tmp_path: Path, openai_server: OpenAIServer, backend: str
) -> None:
    machine = make_machine(tmp_path, openai_server.base_url, backend)
    key = machine.secrets[KEY_NAME]
    env_file = machine.project / ".env"
    env_file.write_text(f"# local settings\nOPENAI_API_KEY={key}\n")
    canaries = Canaries({KEY_NAME: key})
    moves: list[Move] = list(MOVES)
    run = run_moves(machine, moves, openai_server, "read my settings", canaries)

    assert turn_ran_through(run, openai_server) == []
    failed = run.failed_calls()
    results = [m for m in openai_server.chat_requests[-1].body["messages"] if m["role"] == "tool"]
    assert "call_0_read_file" not in failed, results[0]["content"]  # in reach: it must run
    for index, result in enumerate(results):
        if result["tool_call_id"] not in failed:  # what ran shows the label, not the key
            assert LABEL in result["content"], (moves[index].channel, result["content"])
    # Nothing carries the key itself: the model, the printed events, the store, the logs.
    leaks = [
        line
        for line in (*model_requests(run, openai_server), *printed_events(run))
        if "leaked" in line
    ]
    assert leaks == []
    assert seam_files(run, planted=(env_file,)) == []
