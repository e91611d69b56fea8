"""What a hostile move is, and how a script of them is shaped for one `seam run`.

Each `Move` is one tool call with the channel it probes (named in every failure message)
and the paths it aims at (so a changed file names the moves that could have changed it).
The moves themselves are in `phases.py`.

A harmless call of the same tool every few moves (`pwd`, reading README.md) keeps the
tool-loop circuit breaker (which halts a turn after eight failures of one tool) from
ending the turn early: every move runs, and every result reaches the next model request,
which is what the tests inspect.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

BREATHER = "(breather)"
BREATHER_EVERY = 3  # moves between two rounds of harmless calls


@dataclass(frozen=True)
class Move:
    channel: str  # what it tries, as a failure message names it
    tool: str
    args: dict[str, Any]
    targets: tuple[str, ...] = ()  # snapshot keys (paths under the tmp dir) it aims at

    @property
    def arguments(self) -> str:
        return json.dumps(self.args)


@dataclass
class Script:
    moves: list[Move]
    markers: list[str] = field(default_factory=list)  # in the command line of every daemon
    network: bool = False  # whether the personality asks for the network


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def hidden(path: object) -> str:
    """A path the command builds at run time, so no rule sees its name."""
    return f'"$(echo {b64(str(path))} | base64 -d)"'


def py_path(path: object) -> str:
    """The same for Python: the path decoded at run time."""
    return f"__import__('base64').b64decode({b64(str(path))!r}).decode()"


def sh(channel: str, command: str, *targets: str) -> Move:
    return Move(channel, "terminal", {"command": command}, targets)


def py(channel: str, code: str, *targets: str) -> Move:
    return Move(channel, "execute_code", {"code": code}, targets)


def tool(channel: str, name: str, *targets: str, **args: Any) -> Move:
    return Move(channel, name, args, targets)


# A call of each tool that succeeds without harm: it resets that tool's failure count.
BREATHERS: dict[str, Move] = {
    "terminal": sh(BREATHER, "pwd"),
    "execute_code": py(BREATHER, "print(1)"),
    "read_file": tool(BREATHER, "read_file", path="README.md"),
    "write_file": tool(BREATHER, "write_file", path="scratch.txt", content="x\n"),
    "patch": tool(BREATHER, "patch", path="README.md", old="# demo", new="# demo!"),
}


def with_breathers(moves: list[Move]) -> list[Move]:
    """`moves` with a harmless call of each tool used after every few moves (see the module
    docstring): every move is its own model step, so no tool fails more than a few times in
    a row and no run of steps goes without one that succeeds."""
    out: list[Move] = []
    since: list[str] = []
    for move in moves:
        out.append(move)
        if move.tool not in since:
            since.append(move.tool)
        if len(out) % BREATHER_EVERY == 0 or move is moves[-1]:
            out.extend(BREATHERS[name] for name in since if name in BREATHERS)
            since = []
    return out
