"""`seam memory consolidate | history | revert` as a person runs them: the real `seam`
process, its own SEAM_HOME, and the model a scripted OpenAI-compatible server on
loopback answering in the consolidation protocol (honestly, then hostilely). The first test
runs each command as a process of its own; the others in the test process, to save the
start-up time (tests/cli/conftest.py)."""

from __future__ import annotations

import json
import re

import pytest

from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer, error_reply, text_reply

OLD, NEW = "Lives in Berlin", "Moved to Lisbon in May; no longer lives in Berlin"
ENTRIES = [OLD, "Prefers tea", "prefers tea.", NEW]
DROP_OLD = {"op": "drop", "id": 1, "newer": 3, "reason": "moved to Lisbon"}


def reply(*operations: dict[str, object]) -> object:
    return text_reply(json.dumps({"operations": list(operations)}))


def memory_text(cli: Cli) -> str:
    return (cli.home / "memory" / "MEMORY.md").read_text(encoding="utf-8")


def one_line_error(result: object, fragment: str) -> None:
    code, stderr = getattr(result, "returncode", None), getattr(result, "stderr", "")
    assert code == 1 and stderr.startswith("seam: ") and fragment in stderr, stderr
    assert stderr.count("\n") == 1


def test_consolidate_shows_the_diff_records_the_run_and_reverts_it(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    path = cli.home / "memory" / "MEMORY.md"
    path.parent.mkdir(parents=True)
    original = "Lives in Berlin  \r\n§\r\nPrefers tea\r\n§\r\nprefers tea.\r\n§\r\n" + NEW + "\r\n"
    path.write_bytes(original.encode())
    openai_server.push(reply(DROP_OLD), reply(DROP_OLD))

    dry = cli.spawn("memory", "consolidate", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "-Lives in Berlin  \n" in dry.stdout and "dry run: nothing was written" in dry.stderr
    assert path.read_bytes() == original.encode()

    done = cli.spawn("memory", "consolidate")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("--- a/memory/MEMORY.md\n+++ b/memory/MEMORY.md\n")
    assert "drop in memory/MEMORY.md: 'Lives in Berlin'" in done.stderr
    assert "dedupe in memory/MEMORY.md: 'Prefers tea' -> 'prefers tea.'" in done.stderr
    assert memory_text(cli) == "prefers tea.\n§\n" + NEW + "\n"
    found = re.search(r"seam memory revert (\S+)", done.stderr)
    assert found is not None
    run_id = found.group(1)
    sent = json.loads(openai_server.chat_requests[1].body["messages"][-1]["content"])
    assert [entry["text"] for entry in sent["entries"]] == [OLD, "prefers tea.", NEW]

    listed = cli.spawn("memory", "history")
    assert listed.returncode == 0 and listed.stdout.startswith(run_id)
    assert "1 dedupe, 1 drop; 1 model call" in listed.stdout
    shown = cli.spawn("memory", "history", run_id)
    assert shown.returncode == 0 and shown.stdout.splitlines()[1] == "--- a/memory/MEMORY.md"

    undone = cli.spawn("memory", "revert", run_id)
    assert undone.returncode == 0, undone.stderr
    assert path.read_bytes() == original.encode()
    one_line_error(cli.spawn("memory", "revert", run_id), "was already reverted")
    one_line_error(cli.spawn("memory", "revert", "nope"), "no consolidation run 'nope'")


@pytest.mark.in_process
def test_a_hostile_answer_is_refused_with_its_reason(cli: Cli, openai_server: OpenAIServer) -> None:
    path = cli.home / "memory" / "MEMORY.md"
    path.parent.mkdir(parents=True)
    path.write_text("\n§\n".join(ENTRIES) + "\n", encoding="utf-8")
    openai_server.push(
        reply(
            {"op": "drop", "id": 1, "newer": 3, "reason": "x"},
            {"op": "drop", "id": 2, "newer": 3, "reason": "x"},
        )
    )
    done = cli("memory", "consolidate")
    assert done.returncode == 0, done.stderr
    assert "refused in memory/MEMORY.md: the answer is refused: the answer drops 2" in done.stderr
    assert memory_text(cli) == f"{OLD}\n§\nprefers tea.\n§\n{NEW}\n"  # only the exact duplicate

    openai_server.push(error_reply(400))  # a request the provider refuses: not retried
    failed = cli("memory", "consolidate")
    assert failed.returncode == 1
    last = failed.stderr.splitlines()[-1]
    assert last == "seam: the model gave no answer for memory/MEMORY.md (see above)"
    assert memory_text(cli) == f"{OLD}\n§\nprefers tea.\n§\n{NEW}\n"


@pytest.mark.in_process
def test_enable_adds_a_cron_job_and_disable_removes_it(cli: Cli) -> None:
    enabled = cli("memory", "consolidate", "--enable", "--cron", "0 3 * * *")
    assert enabled.returncode == 0, enabled.stderr
    assert enabled.stdout == "memory-consolidate\n"
    listed = cli("cron", "list")
    assert listed.stdout.startswith("memory-consolidate  on      0 3 * * * (UTC)")
    bad = cli("memory", "consolidate", "--enable", "--every", "often")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "not an interval" in bad.stderr
    disabled = cli("memory", "consolidate", "--disable")
    assert disabled.returncode == 0 and "unscheduled" in disabled.stderr
    assert "memory-consolidate" not in cli("cron", "list").stdout
