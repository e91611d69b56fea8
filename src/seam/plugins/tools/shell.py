"""The command tools: `terminal`, `process` and `execute_code`, all through `ctx.sandbox`.

Every command passes `ctx.gate` first (classification, remembered approvals, asking the
person), so each surface gets the same safety rules. A non-zero exit is an ordinary
result the model reads; only a refused or unrunnable command is a tool error. Files the
tools write (spilled output) go through `ctx.storage`, so reach holds; an `execute_code`
snippet is never a file in the project (it reaches Python on stdin).
"""

from __future__ import annotations

import posixpath
import secrets
import shlex
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from seam.contracts.sandbox import CommandResult, Sandbox, SandboxError
from seam.contracts.tools import Tool, ToolContext, ToolError, ToolRegistry

MAX_TIMEOUT = 3600.0  # seconds; longer jobs belong in background mode
SPILL_DIR = ".seam/spill"  # under the sandbox's working dir
COMMAND_SHOWN = 80  # characters of a command shown in `process list`

_TIMEOUT = {"type": "number", "description": "Seconds before it is killed (default 180)."}


def _str_arg(args: Mapping[str, Any], name: str) -> str:
    value = args.get(name)
    if value is None:
        raise ToolError(f"missing required argument {name!r}")
    if not isinstance(value, str):
        raise ToolError(f"argument {name!r} must be a string, not {type(value).__name__}")
    if not value.strip():
        raise ToolError(f"argument {name!r} must not be empty")
    return value


def _timeout_arg(args: Mapping[str, Any]) -> float | None:
    """Accepts "30" as well as 30: small models often quote numbers."""
    value = args.get("timeout")
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ToolError(f"argument 'timeout' must be a number, got {value!r}") from None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ToolError(f"argument 'timeout' must be a number, not {type(value).__name__}")
    if not 0 < value <= MAX_TIMEOUT:
        raise ToolError(
            f"argument 'timeout' must be between 0 and {MAX_TIMEOUT:g} seconds, got {value:g}; "
            "use background mode for longer jobs"
        )
    return float(value)


def _bool_arg(args: Mapping[str, Any], name: str) -> bool:
    value = args.get(name, False)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise ToolError(f"argument {name!r} must be true or false, got {value!r}")
    return value


def _sandbox(ctx: ToolContext) -> Sandbox:
    if ctx.sandbox is None:
        raise ToolError("no sandbox is configured: commands cannot run in this session")
    return ctx.sandbox


async def _gate(ctx: ToolContext, command: str, tool: str) -> None:
    gate = ctx.gate
    if gate is None:
        return
    decision = await gate.check(
        command,
        session_key=ctx.session_key,
        tool=tool,
        call_id=ctx.call_id,
        approver=ctx.approvals,
        mode=ctx.approval_mode,
    )
    if not decision.allowed:
        raise ToolError(f"refused: {decision.reason}")


def _spiller(ctx: ToolContext, sandbox: Sandbox) -> Callable[[str, str], Awaitable[str]]:
    async def spill(name: str, text: str) -> str:
        path = posixpath.join(sandbox.working_dir, SPILL_DIR, name)
        await ctx.storage.write_text(path, text)
        return path

    return spill


async def _run(
    ctx: ToolContext, sandbox: Sandbox, command: str, seconds: float | None
) -> CommandResult:
    try:
        # `spill` is an extension of our sandboxes over the contract (see sandbox/process.py).
        return await sandbox.run(command, timeout=seconds, spill=_spiller(ctx, sandbox))
    except SandboxError as exc:
        raise ToolError(str(exc)) from None


def _report(result: CommandResult) -> str:
    head = f"exit code {result.exit_code} ({result.duration_ms:.0f} ms)"
    parts = [head, result.output or "(no output)"]
    if result.spill_path:
        parts.append(f"(full output saved to {result.spill_path}; page through it with read_file)")
    return "\n".join(parts)


class Terminal:
    name = "terminal"
    description = (
        "Run a shell command in the working directory; stdout and stderr are interleaved. "
        "Use background for servers and long jobs."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command (bash syntax)."},
            "timeout": _TIMEOUT,
            "background": {"type": "boolean", "description": "Start it and return at once."},
        },
        "required": ["command"],
    }
    concurrent = False
    idempotent = False

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        command = _str_arg(args, "command")
        timeout = _timeout_arg(args)
        background = _bool_arg(args, "background")
        sandbox = _sandbox(ctx)
        await _gate(ctx, command, self.name)
        if not background:
            return _report(await _run(ctx, sandbox, command, timeout))
        try:
            info = await sandbox.start(command)
        except SandboxError as exc:
            raise ToolError(str(exc)) from None
        return (
            f"started background process {info.id} (pid {info.pid}); read its output with "
            f"process action=poll id={info.id}, stop it with action=kill"
        )


class Process:
    name = "process"
    description = (
        "List background processes started by terminal, poll one for new output, or kill it."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["list", "poll", "kill"]},
            "id": {"type": "string", "description": "Process id, e.g. p1 (poll and kill)."},
        },
        "required": ["action"],
    }
    concurrent = False
    idempotent = False  # kill is not

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        action = _str_arg(args, "action")
        sandbox = _sandbox(ctx)
        try:
            if action == "list":
                infos = await sandbox.processes()
                if not infos:
                    return "no background processes"
                return "\n".join(
                    f"{i.id}  {_state(i.running, i.exit_code)}  pid {i.pid}  "
                    f"{_cut(i.command, COMMAND_SHOWN)}"
                    for i in infos
                )
            if action == "poll":
                info, text = await sandbox.poll(_str_arg(args, "id"))
                return (
                    f"{info.id} {_state(info.running, info.exit_code)}\n{text or '(no new output)'}"
                )
            if action == "kill":
                info = await sandbox.kill(_str_arg(args, "id"))
                return f"{info.id} stopped ({_state(info.running, info.exit_code)})"
        except SandboxError as exc:
            raise ToolError(str(exc)) from None
        raise ToolError(f"unknown action {action!r}; use list, poll or kill")


def _state(running: bool, exit_code: int | None) -> str:
    return "running" if running else f"exited with code {exit_code}"


def _cut(text: str, limit: int) -> str:
    line = text.replace("\n", " ")
    return line if len(line) <= limit else f"{line[:limit]}…"


class ExecuteCode:
    name = "execute_code"
    description = "Run a Python 3 snippet in the working directory and return what it prints."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "Python source; print what you need."},
            "timeout": _TIMEOUT,
        },
        "required": ["code"],
    }
    concurrent = False
    idempotent = False

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        code = _str_arg(args, "code")
        timeout = _timeout_arg(args)
        sandbox = _sandbox(ctx)
        # The gate (and a person asked to approve) sees the code itself, not a file name.
        await _gate(ctx, f"python3 -c {shlex.quote(code)}", self.name)
        # The snippet goes to Python on stdin (a quoted here-document, so the shell
        # expands nothing in it), never as a file in the person's project: the shell keeps
        # a large one in the system temp dir (the sandbox's private /tmp under bwrap).
        marker = f"SEAM_SNIPPET_{secrets.token_hex(8)}"
        command = f"python3 - <<'{marker}'\n{code.rstrip(chr(10))}\n{marker}"
        return _report(await _run(ctx, sandbox, command, timeout))


SHELL_TOOLS: tuple[Tool, ...] = (Terminal(), Process(), ExecuteCode())


def register_shell_tools(registry: ToolRegistry) -> None:
    for tool in SHELL_TOOLS:
        registry.register_tool(tool)
