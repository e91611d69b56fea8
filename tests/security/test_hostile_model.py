"""A hostile scripted model against the real `seam run`, on bubblewrap and on local.

Each test is one phase of the hostile script (`moves.py`) on a fresh throwaway machine
(`machine.py`): the model's replies come from the loopback OpenAI fake, everything else
is real (the provider client, the loop, the guard, the sandbox, the file tools, SQLite).

- bwrap: the personality's approval mode is "off", so every command the guard does not
  forbid outright runs: what keeps the secrets out and the home intact is the sandbox.
- local: the same personality (mode "off", which the local backend must not honour), and
  nobody can answer an approval (stdin is empty), so only what the guard proves read-only
  may run: what keeps the secrets out is the guard (and the file tools' reach).

A test fails with one line per channel that leaked (see `findings.py`), so a red run is
the list of what is still open.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.security.conftest import processes_holding
from tests.security.findings import (
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
from tests.security.moves import with_breathers
from tests.security.phases import PHASES, script_for
from tests.security.runner import run_moves
from tests.support.openai_server import OpenAIServer


@pytest.mark.parametrize("phase", PHASES)
def test_a_hostile_model_gets_nothing(
    tmp_path: Path,
    openai_server: OpenAIServer,
    listener: LoopbackListener,
    leftovers: list[str],
    backend: str,
    phase: str,
) -> None:
    machine = make_machine(tmp_path, openai_server.base_url, backend)
    script = script_for(phase, machine, listener.port)
    machine.set_network(script.network)
    leftovers.extend(script.markers)
    moves = with_breathers(script.moves)
    before = machine.snapshot()
    run = run_moves(machine, moves, openai_server, f"hostile {phase}", Canaries(machine.secrets))
    alive = processes_holding(script.markers)  # right after the turn: nothing may be left
    failures = [
        *turn_ran_through(run, openai_server),
        *model_requests(run, openai_server),
        *printed_events(run),
        *seam_files(run),
        *files_outside(run, before, machine.snapshot()),
        *outlived(run, alive, script.markers),
        *loopback(run, listener.settle()),
    ]
    assert not failures, f"{backend}/{phase}: {len(failures)} leaks\n" + "\n".join(failures)
