"""One `seam run --json` of a scripted model's moves on a throwaway machine."""

from __future__ import annotations

import subprocess

from tests.cli.conftest import SEAM
from tests.security.findings import Run
from tests.security.leaks import Canaries
from tests.security.machine import Machine
from tests.security.moves import Move
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

RUN_TIMEOUT = 50  # seconds; a phase normally takes a few


def run_moves(
    machine: Machine, moves: list[Move], server: OpenAIServer, prompt: str, canaries: Canaries
) -> Run:
    """The model asks for one move a step (so the circuit breaker sees them in order), then
    answers "Done."; nobody is there to approve anything (stdin is empty)."""
    server.push(
        *(
            tool_call_reply([(move.tool, move.arguments)], id_offset=i)
            for i, move in enumerate(moves)
        ),
        text_reply("Done."),
    )
    done = subprocess.run(
        [str(SEAM), "run", "--json", "--timeout", str(RUN_TIMEOUT - 5), prompt],
        cwd=machine.project,
        env=machine.env,
        input="",
        capture_output=True,
        encoding="utf-8",
        timeout=RUN_TIMEOUT,
    )
    return Run(machine, moves, done, canaries)
