"""The terminal, process and execute_code tools over a real LocalSandbox, with a context
built by hand (ScopedStorage over FsStorage) and a small gate that refuses `rm -rf x`."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.guardrail import Approver, Classification, GateDecision
from seam.contracts.tools import Tool, ToolContext, ToolError
from seam.core.storage import ScopedStorage
from seam.core.tool_registry import DefaultToolRegistry
from seam.plugins.tools.shell import (
    SHELL_TOOLS,
    ExecuteCode,
    Process,
    Terminal,
    register_shell_tools,
)
from seam.services.sandbox.local import LocalSandbox
from seam.services.sandbox.process import SandboxOptions
from seam.services.storage.fs import FsStorage
from tests.services.test_sandbox_local import TEST_PATH, dead, read_fifo
from tests.support.tools import checked


class FakeGate:
    """Refuses anything containing `rm -rf x`; remembers what it was asked."""

    def __init__(self) -> None:
        self.checks: list[dict[str, Any]] = []

    async def check(
        self,
        command: str,
        *,
        session_key: str,
        tool: str,
        call_id: str,
        approver: Approver | None,
        mode: str,
        isolated: bool = True,
        working_dir: str | None = None,
    ) -> GateDecision:
        self.checks.append(
            {
                "command": command,
                "session_key": session_key,
                "tool": tool,
                "call_id": call_id,
                "approver": approver,
                "mode": mode,
                "isolated": isolated,
                "working_dir": working_dir,
            }
        )
        if "rm -rf x" in command:
            verdict = Classification("needs_approval", "pattern:rm-recursive", "deletes", command)
            return GateDecision(False, verdict, "recursive delete denied by the person", "deny")
        return GateDecision(True, Classification("safe", "proof:read", "ok", command), "safe")


class Approvals:
    async def request(self, *, call_id: str, tool: str, command: str, reason: str) -> str:
        raise AssertionError("the fake gate never asks")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
async def sandbox(work: Path) -> AsyncIterator[LocalSandbox]:
    sandbox = LocalSandbox(
        str(work),
        base_env={"PATH": TEST_PATH},
        options=SandboxOptions(output_limit=2000, kill_grace=0.5),
    )
    yield sandbox
    await sandbox.aclose()


@pytest.fixture
def gate() -> FakeGate:
    return FakeGate()


@pytest.fixture
def ctx(work: Path, sandbox: LocalSandbox, gate: FakeGate) -> ToolContext:
    return ToolContext(
        session_key="s1",
        storage=ScopedStorage(FsStorage(), working_dir=str(work)),
        working_dir=str(work),
        call_id="call-7",
        sandbox=sandbox,
        gate=gate,
        approvals=Approvals(),
    )


async def run(tool: Tool, ctx: ToolContext, **args: Any) -> str:
    return await checked(tool).run(args, ctx)


HEADER = re.compile(r"^exit code (-?\d+) \((\d+) ms\)\n")


def test_tools_are_registered_with_short_definitions() -> None:
    registry = DefaultToolRegistry()
    register_shell_tools(registry)
    assert registry.names() == ["execute_code", "process", "terminal"]
    for tool in SHELL_TOOLS:
        assert isinstance(tool, Tool)
        assert len(tool.description.split()) <= 25, tool.name
        assert (tool.concurrent, tool.idempotent) == (False, False), tool.name
        for prop in tool.parameters["properties"].values():
            assert len(prop.get("description", "").split()) <= 12


# --- terminal --------------------------------------------------------------------------


async def test_terminal_reports_exit_code_duration_and_output(
    ctx: ToolContext, gate: FakeGate
) -> None:
    out = await run(Terminal(), ctx, command="echo hi; echo oops >&2; exit 3")
    match = HEADER.match(out)
    assert match is not None and match.group(1) == "3"
    assert out[match.end() :] == "hi\noops\n"
    [check] = gate.checks
    assert check == {
        "command": "echo hi; echo oops >&2; exit 3",
        "session_key": "s1",
        "tool": "terminal",
        "call_id": "call-7",
        "approver": ctx.approvals,
        "mode": "manual",
        # The local sandbox isolates nothing: the gate is told, and where it starts.
        "isolated": False,
        "working_dir": ctx.working_dir,
    }
    assert (await run(Terminal(), ctx, command="true")).endswith("\n(no output)")


async def test_a_refused_command_is_a_tool_error_and_never_runs(
    ctx: ToolContext, work: Path
) -> None:
    (work / "x").mkdir()
    with pytest.raises(ToolError, match="recursive delete denied by the person"):
        await run(Terminal(), ctx, command="rm -rf x")
    assert (work / "x").is_dir()
    with pytest.raises(ToolError, match="denied"):
        await run(Terminal(), ctx, command="rm -rf x", background=True)
    assert await ctx.sandbox.processes() == []  # type: ignore[union-attr]


async def test_without_a_gate_commands_just_run(ctx: ToolContext) -> None:
    out = await run(Terminal(), replace(ctx, gate=None), command="echo free")
    assert out.endswith("\nfree\n")


async def test_without_a_sandbox_the_tools_refuse(ctx: ToolContext) -> None:
    bare = replace(ctx, sandbox=None)
    for tool, args in (
        (Terminal(), {"command": "ls"}),
        (Process(), {"action": "list"}),
        (ExecuteCode(), {"code": "print(1)"}),
    ):
        with pytest.raises(ToolError, match="no sandbox is configured"):
            await tool.run(args, bare)


async def test_terminal_timeout_kills_the_command(ctx: ToolContext) -> None:
    out = await run(Terminal(), ctx, command="sleep 1000 & echo $!; wait", timeout="0.3")
    assert out.startswith("exit code 124 (")
    assert "timed out after 0.3 s" in out
    assert await dead(int(out.splitlines()[1]))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument 'command'"),
        ({"command": "  "}, "'command' must not be empty"),
        ({"command": ""}, "'command' must not be empty"),
        ({"command": 5}, "'command' must be a string (got 5)"),
        ({"command": "ls", "timeout": "soon"}, "'timeout' must be a number (got \"soon\")"),
        ({"command": "ls", "timeout": -1}, "'timeout' must be > 0 (got -1)"),
        ({"command": "ls", "timeout": 5000}, "'timeout' must be <= 3600 (got 5000)"),
        ({"command": "ls", "background": "maybe"}, "'background' must be true or false"),
    ],
)
async def test_terminal_bad_arguments_are_named(
    ctx: ToolContext, args: Mapping[str, Any], message: str
) -> None:
    with pytest.raises(ToolError, match=re.escape(message)):
        await checked(Terminal()).run(args, ctx)


async def test_long_output_is_spilled_through_storage(ctx: ToolContext, work: Path) -> None:
    out = await run(Terminal(), ctx, command="seq 1 3000")
    assert "characters omitted" in out
    assert out.count("\n") < 800
    spilled = re.search(r"full output saved to (\S+);", out)
    assert spilled is not None
    path = Path(spilled.group(1))
    assert path.parent == work / ".seam" / "spill"
    assert path.read_text() == "".join(f"{i}\n" for i in range(1, 3001))


async def test_spill_obeys_the_storage_reach(ctx: ToolContext, work: Path) -> None:
    read_only = replace(ctx, storage=ScopedStorage(FsStorage(), working_dir=str(work), write=()))
    out = await run(Terminal(), read_only, command="seq 1 3000")
    assert "[full output not saved: write '" in out
    assert "outside the allowed write roots" in out
    assert not (work / ".seam").exists()


# --- background processes --------------------------------------------------------------


async def test_background_run_poll_list_and_kill(ctx: ToolContext, work: Path) -> None:
    os.mkfifo(work / "ready")
    started = await run(
        Terminal(), ctx, command="echo bg-out; sleep 1000 & echo $! > ready; wait", background=True
    )
    assert started.startswith("started background process p1 (pid ")
    assert "process action=poll id=p1" in started
    child = int(await read_fifo(work / "ready"))
    # Output arrives asynchronously: poll through the tool until the line is there.
    seen = ""
    async with asyncio.timeout(10):
        while "bg-out" not in seen:
            seen += await run(Process(), ctx, action="poll", id="p1")
            await asyncio.sleep(0.01)
    assert seen.startswith("p1 running\n")
    assert await run(Process(), ctx, action="poll", id="p1") == "p1 running\n(no new output)"
    listed = await run(Process(), ctx, action="list")
    assert re.fullmatch(
        r"p1  running  pid \d+  echo bg-out; sleep 1000 & echo \$! > ready; wait", listed
    )

    assert await run(Process(), ctx, action="kill", id="p1") == "p1 stopped (exited with code -15)"
    assert await dead(child)
    assert "p1  exited with code -15" in await run(Process(), ctx, action="list")


async def test_process_bad_requests_are_named(ctx: ToolContext) -> None:
    assert await run(Process(), ctx, action="list") == "no background processes"
    with pytest.raises(ToolError, match=r"no background process 'p4' \(known: none\)"):
        await run(Process(), ctx, action="poll", id="p4")
    with pytest.raises(ToolError, match="missing required argument 'id'"):
        await run(Process(), ctx, action="kill")
    with pytest.raises(
        ToolError, match='\'action\' must be one of "list", "poll", "kill" \\(got "stop"\\)'
    ):
        await run(Process(), ctx, action="stop", id="p1")


# --- execute_code ----------------------------------------------------------------------


async def test_execute_code_runs_python_in_the_working_dir(
    ctx: ToolContext, work: Path, gate: FakeGate
) -> None:
    code = "import os\nprint(os.getcwd())\nprint(6 * 7)\n"
    out = await run(ExecuteCode(), ctx, code=code)
    assert out.startswith("exit code 0 (")
    assert out.endswith(f"\n{work}\n42\n")
    assert list(work.iterdir()) == []  # no snippet file in the project, ever
    [check] = gate.checks
    assert check["tool"] == "execute_code"
    assert check["command"].startswith("python3 -c ")
    assert "print(6 * 7)" in check["command"]  # the gate sees the code itself


async def test_execute_code_errors_are_output_not_tool_errors(ctx: ToolContext) -> None:
    out = await run(ExecuteCode(), ctx, code="print('before')\n1 / 0\n")
    assert out.startswith("exit code 1 (")
    assert "before\n" in out and "ZeroDivisionError: division by zero" in out
    slow = await run(ExecuteCode(), ctx, code="import time\ntime.sleep(1000)\n", timeout=0.3)
    assert slow.startswith("exit code 124 (")


async def test_execute_code_refused_by_the_gate_writes_nothing(
    ctx: ToolContext, work: Path
) -> None:
    with pytest.raises(ToolError, match="recursive delete denied"):
        await run(ExecuteCode(), ctx, code="import os\nos.system('rm -rf x')\n")
    assert not (work / ".seam").exists()


async def test_execute_code_writes_no_file_so_a_read_only_reach_can_run_it(
    ctx: ToolContext, work: Path
) -> None:
    read_only = replace(ctx, storage=ScopedStorage(FsStorage(), working_dir=str(work), write=()))
    code = "import sys\nprint(sys.argv[0] or '-', 'a $HOME `x` \\\\ line')\n\n\n"
    out = await run(ExecuteCode(), read_only, code=code)
    assert out.startswith("exit code 0 (")
    assert out.endswith("\n- a $HOME `x` \\ line\n")  # the shell expanded nothing
    assert list(work.iterdir()) == []
