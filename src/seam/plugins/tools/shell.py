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

from seam.contracts.git_controls import names_git_controls
from seam.contracts.sandbox import CommandResult, Sandbox, SandboxError, StartOptions
from seam.contracts.tool_spec import SpecTool, ToolSpec
from seam.contracts.tools import Tool, ToolContext, ToolError, ToolRegistry

MAX_TIMEOUT = 3600.0  # seconds; longer jobs belong in background mode
SPILL_DIR = ".seam/spill"  # under the sandbox's working dir
COMMAND_SHOWN = 80  # characters of a command shown in `process list`

_TIMEOUT = {
    "type": "number",
    "exclusiveMinimum": 0,
    "maximum": MAX_TIMEOUT,
    "description": f"Seconds before it is killed (default 180, max {MAX_TIMEOUT:g}).",
}


def _text(args: Mapping[str, Any], name: str) -> str:
    """A text argument that must hold more than spaces. Its type is the schema's business
    (checked before `run`); a blank command, or an `id` missing where the action needs
    one, is checked here."""
    value = args.get(name)
    if value is None:
        raise ToolError(f"missing required argument {name!r}")
    if not value.strip():
        raise ToolError(f"argument {name!r} must not be empty")
    return str(value)


def _timeout(args: Mapping[str, Any]) -> float | None:
    value = args.get("timeout")
    return None if value is None else float(value)


def _sandbox(ctx: ToolContext) -> Sandbox:
    if ctx.sandbox is None:
        raise ToolError("no sandbox is configured: commands cannot run in this session")
    return ctx.sandbox


async def _gate(ctx: ToolContext, sandbox: Sandbox, command: str, tool: str) -> bool:
    """Refuses what the gate refuses; returns whether the command may write git's hooks and
    config (a person approved this very command, and it is about them)."""
    gate = ctx.gate
    if gate is None:
        return False
    decision = await gate.check(
        command,
        session_key=ctx.session_key,
        tool=tool,
        call_id=ctx.call_id,
        approver=ctx.approvals,
        mode=ctx.approval_mode,
        # Without isolation (the local backend) the gate is stricter; a sandbox that does
        # not say counts as none.
        isolated=getattr(sandbox, "isolated", False),
        working_dir=sandbox.working_dir,
    )
    if not decision.allowed:
        reason = decision.reason  # the gate's own reasons already begin "refused"
        raise ToolError(reason if reason.startswith("refused") else f"refused: {reason}")
    return decision.by_person and names_git_controls(command)


def _spiller(ctx: ToolContext, sandbox: Sandbox) -> Callable[[str, str], Awaitable[str]]:
    async def spill(name: str, text: str) -> str:
        path = posixpath.join(sandbox.working_dir, SPILL_DIR, name)
        if ctx.redact is not None:  # what the output held stays out of the file as well
            text = ctx.redact(text)
        await ctx.storage.write_text(path, text)
        return path

    return spill


async def _run(
    ctx: ToolContext, sandbox: Sandbox, command: str, seconds: float | None, git_writes: bool
) -> CommandResult:
    try:
        return await sandbox.run(
            command,
            timeout=seconds,
            spill=_spiller(ctx, sandbox),
            allow_git_control_writes=git_writes,
            redact=ctx.redact,
        )
    except SandboxError as exc:
        raise ToolError(str(exc)) from None


def _report(result: CommandResult) -> str:
    head = f"exit code {result.exit_code} ({result.duration_ms:.0f} ms)"
    parts = [head, result.output or "(no output)"]
    if result.spill_path:
        parts.append(f"(full output saved to {result.spill_path}; page through it with read_file)")
    return "\n".join(parts)


class Terminal(SpecTool):
    spec = ToolSpec(
        name="terminal",
        description=(
            "Run a shell command in the working directory; stdout and stderr are interleaved. "
            "Use background for servers and long jobs."
        ),
        arguments={
            "command": {"type": "string", "description": "The command (bash syntax)."},
            "timeout": _TIMEOUT,
            "background": {"type": "boolean", "description": "Start it and return at once."},
        },
        required=("command",),
    )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        command = _text(args, "command")
        timeout = _timeout(args)
        background = bool(args.get("background", False))
        sandbox = _sandbox(ctx)
        git_writes = await _gate(ctx, sandbox, command, self.name)
        if not background:
            return _report(await _run(ctx, sandbox, command, timeout, git_writes))
        try:
            info = await sandbox.start(command, StartOptions(allow_git_control_writes=git_writes))
        except SandboxError as exc:
            raise ToolError(str(exc)) from None
        return (
            f"started background process {info.id} (pid {info.pid}); read its output with "
            f"process action=poll id={info.id}, stop it with action=kill"
        )


class Process(SpecTool):
    spec = ToolSpec(
        name="process",
        description=(
            "List background processes started by terminal, poll one for new output, or kill it."
        ),
        arguments={
            "action": {"type": "string", "enum": ["list", "poll", "kill"]},
            "id": {
                "type": "string",
                "minLength": 1,
                "description": "Process id, e.g. p1 (poll and kill).",
            },
        },
        required=("action",),
        idempotent=False,  # kill is not
    )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        action: str = args["action"]
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
                info, text = await sandbox.poll(_text(args, "id"))
                return (
                    f"{info.id} {_state(info.running, info.exit_code)}\n{text or '(no new output)'}"
                )
            if action == "kill":
                info = await sandbox.kill(_text(args, "id"))
                return f"{info.id} stopped ({_state(info.running, info.exit_code)})"
        except SandboxError as exc:
            raise ToolError(str(exc)) from None
        raise ToolError(f"unknown action {action!r}; use list, poll or kill")


def _state(running: bool, exit_code: int | None) -> str:
    return "running" if running else f"exited with code {exit_code}"


def _cut(text: str, limit: int) -> str:
    line = text.replace("\n", " ")
    return line if len(line) <= limit else f"{line[:limit]}…"


class ExecuteCode(SpecTool):
    spec = ToolSpec(
        name="execute_code",
        description="Run a Python 3 snippet in the working directory and return what it prints.",
        arguments={
            "code": {"type": "string", "description": "Python source; print what you need."},
            "timeout": _TIMEOUT,
        },
        required=("code",),
    )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        code = _text(args, "code")
        timeout = _timeout(args)
        sandbox = _sandbox(ctx)
        # The gate (and a person asked to approve) sees the code itself, not a file name.
        git_writes = await _gate(ctx, sandbox, f"python3 -c {shlex.quote(code)}", self.name)
        # The snippet goes to Python on stdin (a quoted here-document, so the shell
        # expands nothing in it), never as a file in the person's project: the shell keeps
        # a large one in the system temp dir (the sandbox's private /tmp under bwrap).
        marker = f"SEAM_SNIPPET_{secrets.token_hex(8)}"
        command = f"python3 - <<'{marker}'\n{code.rstrip(chr(10))}\n{marker}"
        return _report(await _run(ctx, sandbox, command, timeout, git_writes))


SHELL_TOOLS: tuple[Tool, ...] = (Terminal(), Process(), ExecuteCode())


def register_shell_tools(registry: ToolRegistry) -> None:
    for tool in SHELL_TOOLS:
        registry.register_tool(tool)
