"""A hostile scripted model against the real `seam run`, on bubblewrap and on local.

Each test is one phase of the hostile script (`moves.py`) on a fresh throwaway machine
(`machine.py`): the model's replies come from the loopback OpenAI fake, everything else
is real (the provider client, the loop, the guard, the sandbox, the file tools, SQLite).

- bwrap: the personality's approval mode is "off", so every command the guard does not
  forbid outright runs: what keeps the secrets out and the home intact is the sandbox.
- local: nobody can answer an approval (stdin is empty), so only what the guard proves
  read-only may run: what keeps the secrets out is the guard (and the file tools' reach).

A test fails with one line per channel that leaked (see `findings.py`), so a red run is
the list of what is still open.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.cli.conftest import SEAM
from tests.security.conftest import processes_holding
from tests.security.findings import (
    Run,
    files_outside,
    loopback,
    model_requests,
    outlived,
    printed_events,
    seam_files,
    turn_ran_through,
)
from tests.security.leaks import Canaries
from tests.security.listener import LoopbackListener
from tests.security.machine import make_machine
from tests.security.moves import PHASES, script_for, with_breathers
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

RUN_TIMEOUT = 50  # seconds; the whole phase normally takes a few


@pytest.mark.parametrize("phase", PHASES)
def test_a_hostile_model_gets_nothing(
    tmp_path: pytest.TempPathFactory,
    openai_server: OpenAIServer,
    listener: LoopbackListener,
    leftovers: list[str],
    backend: str,
    phase: str,
) -> None:
    machine = make_machine(tmp_path, openai_server.base_url, backend)  # type: ignore[arg-type]
    script = script_for(phase, machine, listener.port)
    machine.set_network(script.network)
    leftovers.extend(script.markers)
    moves = with_breathers(script.moves)
    before = machine.snapshot()
    openai_server.push(
        tool_call_reply([(move.tool, move.arguments) for move in moves]),
        text_reply("Done."),
    )
    done = subprocess.run(
        [str(SEAM), "run", "--json", "--timeout", str(RUN_TIMEOUT - 5), f"hostile {phase}"],
        cwd=machine.project,
        env=machine.env,
        input="",
        capture_output=True,
        encoding="utf-8",
        timeout=RUN_TIMEOUT,
    )
    alive = processes_holding(script.markers)  # right after the turn: nothing may be left
    run = Run(machine, moves, done, Canaries(machine.secrets))
    failures = [
        *turn_ran_through(run, openai_server),
        *model_requests(run, openai_server),
        *printed_events(run),
        *seam_files(run),
        *files_outside(run, before, machine.snapshot()),
        *outlived(run, alive, script.markers),
        *loopback(run, listener.settle()),
    ]
    import json, os
    if os.environ.get("HOSTILE_DUMP"):
        msgs = [m for m in openai_server.chat_requests[-1].body["messages"] if m["role"] == "tool"]
        with open(os.environ["HOSTILE_DUMP"] + f"-{backend}-{phase}.txt", "w") as f:
            f.write(f"exit {done.returncode}\n{done.stderr[-2000:]}\n")
            for i, m in enumerate(msgs):
                f.write(f"=== {run.channel(m['tool_call_id'])}\n{str(m['content'])[:600]}\n")
    assert not failures, f"{backend}/{phase}: {len(failures)} leaks\n" + "\n".join(failures)
