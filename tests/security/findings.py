"""What a hostile run left behind, as one line per leak, each naming its channel.

Every check returns failure lines instead of asserting, so one run reports every channel
that leaked (the list the lead checks after merging), not just the first.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.security.leaks import LABEL, Canaries, database_text, json_text
from tests.security.machine import Machine
from tests.security.moves import BREATHER, Move
from tests.support.openai_server import OpenAIServer

OK_EXITS = (0, 5)  # completed, or some command needed an approval nobody could give


@dataclass
class Run:
    """One `seam run` of a script: its moves (tool call `i` has id `call_{i}_{tool}`),
    what it printed and the machine it ran on."""

    machine: Machine
    moves: list[Move]
    done: subprocess.CompletedProcess[str]
    canaries: Canaries

    def channel(self, call_id: str) -> str:
        index = call_id.split("_")[1] if call_id.startswith("call_") else ""
        if not index.isdigit() or int(index) >= len(self.moves):
            return f"tool call {call_id}"
        move = self.moves[int(index)]
        return f"{move.tool}: {move.channel}"

    def where(self, leaked: list[str]) -> str:
        return ", ".join(leaked)

    def failed_calls(self) -> set[str]:
        """The ids of the tool calls that ended in an error (refused, denied, blocked)."""
        failed = set()
        for line in self.done.stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("type") == "tool_end" and event["is_error"]:
                failed.add(str(event["call_id"]))
        return failed

    def succeeded(self) -> list[Move]:
        """The moves whose tool call did not end in an error: the ones that could act."""
        failed = self.failed_calls()
        return [m for i, m in enumerate(self.moves) if f"call_{i}_{m.tool}" not in failed]


def turn_ran_through(run: Run, server: OpenAIServer) -> list[str]:
    """The turn ran every move and sent every result back to the model (or the rest of
    the checks would prove nothing)."""
    code = run.done.returncode
    if code not in OK_EXITS:
        tail = run.done.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        return [f"seam run exited {code} before the script ended: {tail[0][:300]}"]
    requests = server.chat_requests
    results = [m for m in requests[-1].body["messages"] if m["role"] == "tool"] if requests else []
    if len(results) != len(run.moves):
        return [f"the model was sent {len(results)} tool results for {len(run.moves)} moves"]
    return []


def model_requests(run: Run, server: OpenAIServer) -> list[str]:
    """No canary in any request body sent to the model; no redaction label in a tool
    result (a label means a secret was read and only the second line hid it)."""
    out: list[str] = []
    seen: set[str] = set()  # a message is sent again with every later request: report it once
    for number, request in enumerate(server.requests):
        body: Any = request.body
        messages = body.get("messages", []) if isinstance(body, dict) else []
        for message in messages:
            leaked = run.canaries.leaks(json_text(message))
            call_id = message.get("tool_call_id") if isinstance(message, dict) else None
            source = run.channel(call_id) if call_id else f"a {message.get('role')} message"
            found = [f"leaked {run.where(leaked)}"] if leaked else []
            if call_id and LABEL in str(message.get("content")):
                # The first line (the sandbox, the guard) let a secret through; only the
                # second line (redaction) hid it.
                found.append("read a secret that only redaction hid")
            line = f"{source}: {'; '.join(found)}"
            if found and line not in seen:
                seen.add(line)
                out.append(f"model request #{number}: {line}")
        rest = (
            {k: v for k, v in body.items() if k != "messages"} if isinstance(body, dict) else body
        )
        leaked = run.canaries.leaks(json_text(rest))
        if leaked:
            out.append(f"model request #{number}: outside the messages: leaked {run.where(leaked)}")
    return sorted(set(out))


def printed_events(run: Run) -> list[str]:
    """No canary in what `seam run --json` printed (every event), nor on stderr."""
    out = []
    for line in run.done.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            event = {"type": "non-JSON line", "text": line}
        leaked = run.canaries.leaks(json_text(event))
        if leaked:
            call_id = event.get("call_id")
            source = run.channel(str(call_id)) if call_id else "no tool call"
            kind = event.get("type")
            out.append(f"--json event {kind} ({source}): leaked {run.where(leaked)}")
    leaked = run.canaries.leaks(run.done.stderr)
    if leaked:
        out.append(f"seam run stderr: leaked {run.where(leaked)}")
    return sorted(set(out))


def seam_files(run: Run, planted: tuple[Path, ...] = ()) -> list[str]:
    """No canary in the store (messages, events: every table), the logs, or any other file
    Seam wrote under `$SEAM_HOME` or the workspace (spilled output); `planted`: files the
    test put a canary in itself."""
    machine = run.machine
    out = []
    planted = (machine.seam / "config.toml", *planted)
    for path in sorted(machine.seam.rglob("*")) if machine.seam.exists() else []:
        if not path.is_file() or path in planted:
            continue
        leaked = run.canaries.leaks(path.read_bytes().decode("latin-1"))
        if path.name.endswith(".db"):
            leaked = sorted({*leaked, *run.canaries.leaks(database_text(path))})
        if leaked:
            out.append(f"$SEAM_HOME/{path.relative_to(machine.seam)}: holds {run.where(leaked)}")
    for path in sorted(machine.project.rglob("*")):
        skip = path in planted or ".git" in path.relative_to(machine.project).parts
        if skip or path.is_symlink() or not path.is_file():
            continue
        leaked = run.canaries.leaks(path.read_bytes().decode("latin-1"))
        if leaked:
            out.append(
                f"workspace file {path.relative_to(machine.project)}: holds {run.where(leaked)}"
            )
    return out


def files_outside(run: Run, before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Nothing outside the workspace (nor its git controls) written, created or deleted;
    each changed path names the moves that aimed at it."""
    out = []
    for key in sorted(before.keys() | after.keys()):
        was, now = before.get(key, "missing"), after.get(key, "missing")
        if was == now:
            continue
        what = "deleted" if now == "missing" else "created" if was == "missing" else "changed"
        aimed = [
            m for m in run.moves if any(key == t or key.startswith(f"{t}/") for t in m.targets)
        ]
        acted = run.succeeded()
        by = [f"{m.tool}: {m.channel}" for m in aimed if m in acted] or [
            f"{m.tool}: {m.channel}"
            for m in acted
            if m.tool in ("terminal", "execute_code") and m.channel != BREATHER
        ]
        culprits = "; ".join(dict.fromkeys(by)) or "a move of this phase"
        out.append(f"{key} {what} (by one of: {culprits})")
    return _fold(out)


def _fold(lines: list[str], keep: int = 12) -> list[str]:
    """A deleted home is hundreds of lines: keep the first few and count the rest."""
    if len(lines) <= keep:
        return lines
    return [*lines[:keep], f"... and {len(lines) - keep} more paths changed"]


def loopback(run: Run, received: list[bytes]) -> list[str]:
    """The listener on the host's loopback got nothing: neither a canary nor a connection."""
    out = []
    for data in received:
        text = data.decode("latin-1")
        first = text.splitlines()[0][:60] if text else "(nothing)"
        leaked = run.canaries.leaks(text)
        if leaked:
            out.append(f"loopback listener got {run.where(leaked)} (connection opening {first!r})")
        else:
            out.append(f"loopback listener reached from a command (connection opening {first!r})")
    return out


def outlived(run: Run, alive: dict[int, str], markers: list[str]) -> list[str]:
    """No process a move started is alive once `seam run` has exited."""
    out = []
    for pid, cmdline in sorted(alive.items()):
        marker = next(m for m in markers if m in cmdline)
        by = [f"{m.tool}: {m.channel}" for m in run.moves if marker in json.dumps(m.args)]
        out.append(f"process {pid} ({cmdline[:60]!r}) outlived its call (by: {'; '.join(by)})")
    return out
