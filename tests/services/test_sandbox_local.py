"""The local sandbox on real subprocesses: exit codes, output, timeouts that kill the whole
process group, caps and spills, the filtered environment, cancellation, background jobs.

The helpers at the top are shared with the bwrap and shell-tool tests.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.sandbox import ProcessInfo, Sandbox, SandboxError
from seam.services.sandbox.local import LocalSandbox, LocalSandboxProvider
from seam.services.sandbox.process import SandboxOptions, filter_env

# The test's own Python first, so `python3` inside a command is one that exists.
TEST_PATH = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"


def alive(pid: int) -> bool:
    """A zombie waiting for a reaper counts as dead: it runs nothing."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


async def dead(*pids: int) -> bool:
    """True once every pid has finished dying. A SIGKILLed process can close its files
    (ending our output) a moment before the kernel marks it dead, so allow a second."""
    try:
        async with asyncio.timeout(1):
            while any(alive(pid) for pid in pids):
                await asyncio.sleep(0.01)
    except TimeoutError:
        left = {pid: Path(f"/proc/{pid}/stat").read_text() for pid in pids if alive(pid)}
        raise AssertionError(f"still running: {left}") from None
    return True


def pids_running(token: str) -> list[int]:
    """Host pids whose command line contains `token` (works across pid namespaces)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if token.encode() in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


async def read_fifo(path: Path) -> str:
    """Blocks (in a thread) until a command has written to the fifo and closed it."""
    async with asyncio.timeout(10):
        return await asyncio.to_thread(path.read_text)


async def poll_until(sandbox: Sandbox, process_id: str, want: str) -> tuple[ProcessInfo, str]:
    """Poll until `want` has appeared in the output, which arrives asynchronously."""
    seen = ""
    async with asyncio.timeout(10):
        while True:
            info, text = await sandbox.poll(process_id)
            seen += text
            if want in seen:
                return info, seen
            await asyncio.sleep(0.01)


async def poll_exit(sandbox: Sandbox, process_id: str) -> ProcessInfo:
    async with asyncio.timeout(10):
        while True:
            info, _ = await sandbox.poll(process_id)
            if not info.running:
                return info
            await asyncio.sleep(0.01)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
async def make(work: Path) -> AsyncIterator[Callable[..., LocalSandbox]]:
    """Sandboxes on `work` with the given options, all closed after the test."""
    made: list[LocalSandbox] = []

    def make(base_env: Mapping[str, str] | None = None, **options: Any) -> LocalSandbox:
        sandbox = LocalSandbox(
            str(work),
            base_env={"PATH": TEST_PATH} if base_env is None else base_env,
            options=SandboxOptions(**{"kill_grace": 0.5, **options}),
        )
        made.append(sandbox)
        return sandbox

    yield make
    for sandbox in made:
        await sandbox.aclose()


@pytest.fixture
def sandbox(make: Callable[..., LocalSandbox]) -> LocalSandbox:
    return make()


# --- foreground commands ---------------------------------------------------------------


async def test_run_reports_output_exit_code_and_duration(sandbox: LocalSandbox) -> None:
    ok = await sandbox.run("echo hello")
    assert (ok.exit_code, ok.output, ok.timed_out, ok.truncated) == (0, "hello\n", False, False)
    assert ok.duration_ms > 0
    assert (await sandbox.run("echo failing; exit 7")).exit_code == 7
    killed = await sandbox.run("kill -9 $$")
    assert killed.exit_code == -9  # killed by a signal: its negative number


async def test_stderr_is_interleaved_with_stdout_in_order(sandbox: LocalSandbox) -> None:
    result = await sandbox.run("echo out1; echo err1 >&2; echo out2; echo err2 >&2")
    assert result.output == "out1\nerr1\nout2\nerr2\n"


async def test_commands_run_in_the_working_directory(sandbox: LocalSandbox, work: Path) -> None:
    result = await sandbox.run("pwd; echo made > made.txt")
    assert result.output == f"{work}\n"
    assert (work / "made.txt").read_text() == "made\n"


async def test_timeout_kills_the_whole_process_group(sandbox: LocalSandbox) -> None:
    result = await sandbox.run("sleep 1000 & echo $$ $!; wait", timeout=0.3)
    assert (result.exit_code, result.timed_out) == (124, True)
    assert "timed out after 0.3 s" in result.output
    shell, child = map(int, result.output.split()[:2])
    assert await dead(shell, child)
    assert result.duration_ms < 5000


async def test_timeout_escalates_to_sigkill_when_sigterm_is_ignored(
    make: Callable[..., LocalSandbox],
) -> None:
    sandbox = make(kill_grace=0.2)
    result = await sandbox.run("trap '' TERM; sleep 1000 & echo $$ $!; wait", timeout=0.3)
    assert result.timed_out
    assert await dead(*map(int, result.output.split()[:2]))


async def test_processes_a_command_leaves_behind_are_stopped(sandbox: LocalSandbox) -> None:
    result = await sandbox.run("sleep 1000 & echo $!")
    assert result.exit_code == 0
    assert await dead(int(result.output.split()[0]))
    assert "stopped the background processes it left running" in result.output
    assert result.duration_ms < 5000


async def test_cancelling_run_kills_the_process_group(sandbox: LocalSandbox, work: Path) -> None:
    fifo = work / "ready"
    os.mkfifo(fifo)
    task = asyncio.ensure_future(sandbox.run("sleep 1000 & echo $$ $! > ready; wait"))
    shell, child = map(int, (await read_fifo(fifo)).split())
    assert alive(shell) and alive(child)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await dead(shell, child)


async def test_output_over_the_cap_keeps_head_and_tail_and_spills_the_rest(
    make: Callable[..., LocalSandbox],
) -> None:
    sandbox = make(output_limit=1000)
    spilled: dict[str, str] = {}

    async def spill(name: str, text: str) -> str:
        spilled[name] = text
        return f"/spill/{name}"

    result = await sandbox.run("seq 1 5000", spill=spill)
    full = "".join(f"{i}\n" for i in range(1, 5001))
    assert result.truncated
    assert result.output.startswith("1\n2\n3\n")
    assert result.output.endswith("4999\n5000\n")
    assert f"of {len(full):,} characters omitted" in result.output
    assert len(result.output) < 1100
    [(name, text)] = spilled.items()
    assert text == full
    assert result.spill_path == f"/spill/{name}"

    unspilled = await sandbox.run("seq 1 5000")
    assert unspilled.truncated and unspilled.spill_path is None
    short = await sandbox.run("seq 1 10", spill=spill)
    assert (short.truncated, short.spill_path, len(spilled)) == (False, None, 1)


async def test_a_failing_spill_keeps_the_result(make: Callable[..., LocalSandbox]) -> None:
    sandbox = make(output_limit=100)

    async def spill(name: str, text: str) -> str:
        raise PermissionError("write refused")

    result = await sandbox.run("seq 1 1000; exit 3", spill=spill)
    assert result.exit_code == 3
    assert result.spill_path is None
    assert result.output.endswith("1000\n[full output not saved: write refused]")


async def test_secrets_never_reach_a_command(make: Callable[..., LocalSandbox], work: Path) -> None:
    base = {
        "PATH": TEST_PATH,
        "HOME": str(work),
        "LANG": "C.UTF-8",
        "OPENAI_API_KEY": "sk-openai",
        "GITHUB_TOKEN": "ghp-token",
        "MY_SECRET": "hunter2",
        "MY_SETTING": "kept",
        "SSH_AUTH_SOCK": "/run/agent",
        "SEAM_HOME": "/seam",
        "UNLISTED": "dropped",
    }
    sandbox = make(base, pass_env=("MY_*",))
    result = await sandbox.run("env", env={"GREETING": "hi", "DEPLOY_TOKEN": "t0k"})
    seen = dict(line.split("=", 1) for line in result.output.splitlines())
    assert seen["PATH"] == TEST_PATH
    assert (seen["HOME"], seen["LANG"], seen["GREETING"]) == (str(work), "C.UTF-8", "hi")
    assert seen["MY_SETTING"] == "kept"  # passed by the pass_env glob, not a secret
    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "MY_SECRET", "SSH_AUTH_SOCK", "SEAM_HOME"):
        assert name not in seen
    assert "UNLISTED" not in seen and "DEPLOY_TOKEN" not in seen
    for value in ("sk-openai", "ghp-token", "hunter2", "t0k"):
        assert value not in result.output


def test_env_filter_names_look_alike_secrets() -> None:
    base = {
        "PATH": "/bin",
        "LC_ALL": "C",
        "ANTHROPIC_API_KEY": "a",
        "AWS_SECRET_ACCESS_KEY": "b",
        "DB_PASSWORD": "c",
        "GIT_AUTHOR_NAME": "d",
    }
    assert filter_env(base) == {"PATH": "/bin", "LC_ALL": "C"}
    assert filter_env(base, pass_env=("GIT_*",))["GIT_AUTHOR_NAME"] == "d"
    assert filter_env({})["PATH"] == "/usr/local/bin:/usr/bin:/bin"


async def test_bad_input_is_refused_with_a_clear_message(
    sandbox: LocalSandbox, tmp_path: Path
) -> None:
    with pytest.raises(SandboxError, match="does not exist"):
        LocalSandbox(str(tmp_path / "missing"), base_env={})
    with pytest.raises(SandboxError, match="empty"):
        await sandbox.run("   ")
    with pytest.raises(SandboxError, match="timeout must be positive"):
        await sandbox.run("true", timeout=0)
    with pytest.raises(ValueError, match="output_limit must be at least 1, got 0"):
        SandboxOptions(output_limit=0)


# --- background processes --------------------------------------------------------------


async def test_background_start_poll_and_kill(sandbox: LocalSandbox, work: Path) -> None:
    fifo = work / "ready"
    os.mkfifo(fifo)
    info = await sandbox.start("echo one; sleep 1000 & echo $! > ready; wait")
    assert (info.id, info.running, info.exit_code) == ("p1", True, None)
    child = int(await read_fifo(fifo))
    _, text = await poll_until(sandbox, "p1", "one\n")
    assert text == "one\n"
    info, new = await sandbox.poll("p1")
    assert (info.running, new) == (True, "")  # nothing new since the last poll
    assert [p.id for p in await sandbox.processes()] == ["p1"]

    killed = await sandbox.kill("p1")
    assert (killed.running, killed.exit_code) == (False, -15)
    assert await dead(killed.pid, child)
    [listed] = await sandbox.processes()
    assert (listed.running, listed.exit_code) == (False, -15)


async def test_a_background_process_that_finishes_keeps_its_exit_code(
    sandbox: LocalSandbox,
) -> None:
    await sandbox.start("echo done; exit 3")
    await poll_until(sandbox, "p1", "done\n")
    info = await poll_exit(sandbox, "p1")
    assert (info.running, info.exit_code) == (False, 3)
    with pytest.raises(SandboxError, match=r"no background process 'p9' \(known: p1\)"):
        await sandbox.poll("p9")


async def test_a_finished_background_job_leaves_nothing_running(
    sandbox: LocalSandbox,
) -> None:
    await sandbox.start("sleep 1000 >/dev/null 2>&1 & echo $!")
    _, text = await poll_until(sandbox, "p1", "\n")
    assert (await poll_exit(sandbox, "p1")).exit_code == 0
    assert await dead(int(text))


async def test_background_output_is_bounded(make: Callable[..., LocalSandbox], work: Path) -> None:
    sandbox = make(buffer_limit=1000)
    fifo = work / "ready"
    os.mkfifo(fifo)
    # More than a pipe's 64 KiB: by the time it reaches the fifo, most has been buffered.
    await sandbox.start("seq 1 20000; echo end; echo > ready")
    await read_fifo(fifo)
    _, text = await poll_until(sandbox, "p1", "end\n")
    assert "characters dropped" in text
    assert text.endswith("19999\n20000\nend\n")
    assert len(text) < 3000


async def test_too_many_background_processes_is_refused(make: Callable[..., LocalSandbox]) -> None:
    sandbox = make(max_processes=2)
    await sandbox.start("sleep 1000")
    await sandbox.start("sleep 1000")
    with pytest.raises(SandboxError, match="2 background processes are running"):
        await sandbox.start("sleep 1000")
    await sandbox.kill("p1")
    assert (await sandbox.start("echo room")).id == "p3"  # the finished one made room
    assert [p.id for p in await sandbox.processes()] == ["p2", "p3"]


async def test_aclose_kills_everything_the_sandbox_started(
    sandbox: LocalSandbox, work: Path
) -> None:
    fifo = work / "ready"
    os.mkfifo(fifo)
    await sandbox.start("sleep 1000 & echo $! > ready; wait")
    background_child = int(await read_fifo(fifo))
    await sandbox.start("sleep 1000")
    os.unlink(fifo)
    os.mkfifo(fifo)
    running = asyncio.ensure_future(sandbox.run("sleep 1000 & echo $! > ready; wait"))
    foreground_child = int(await read_fifo(fifo))

    await sandbox.aclose()
    assert await dead(background_child, foreground_child)
    assert not any(p.running for p in await sandbox.processes())
    assert (await running).exit_code == -15
    with pytest.raises(SandboxError, match="closed"):
        await sandbox.run("true")


# --- the provider ----------------------------------------------------------------------


async def test_provider_keeps_one_sandbox_per_session_and_dir(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    provider = LocalSandboxProvider(
        base_env={"PATH": TEST_PATH}, options=SandboxOptions(kill_grace=0.5)
    )
    first = provider.for_session("s1", working_dir=str(a), network=False)
    assert provider.for_session("s1", working_dir=str(a), network=False) is first
    assert provider.for_session("s1", working_dir=str(b), network=False) is not first
    assert provider.for_session("s2", working_dir=str(a), network=False) is not first
    assert isinstance(first, Sandbox)
    assert (first.name, first.working_dir) == ("local", str(a))

    info = await first.start("sleep 1000")
    await provider.aclose()
    assert await dead(info.pid)
    fresh = provider.for_session("s1", working_dir=str(a), network=False)
    assert fresh is not first
    assert (await fresh.run("echo again")).output == "again\n"
    await provider.aclose()
