"""The bubblewrap sandbox, on real namespaces: writes outside the working dir and network
are denied, /tmp is private, a runaway process group dies on timeout, env is filtered.

Skips (saying why) only where bwrap is missing or cannot create namespaces; run
`scripts/ensure-bwrap` to install Debian's bubblewrap.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.sandbox import Sandbox, SandboxError
from seam.contracts.storage import Reach
from seam.services.sandbox.bwrap import (
    DEFAULT_BWRAP,
    BwrapSandbox,
    BwrapSandboxProvider,
    bwrap_available,
)
from seam.services.sandbox.process import SandboxOptions
from tests.services.test_sandbox_local import TEST_PATH, dead, pids_running, read_fifo

if not Path(DEFAULT_BWRAP).exists():
    pytestmark = pytest.mark.skip(
        reason=f"{DEFAULT_BWRAP} is not installed (scripts/ensure-bwrap installs bubblewrap)"
    )
elif not bwrap_available():
    pytestmark = pytest.mark.skip(reason="bwrap cannot create namespaces on this machine")

OPTIONS = SandboxOptions(kill_grace=0.5)
# The interpreter running the tests may live anywhere (a home, a checkout under /tmp):
# the sandboxes here may read it, as a personality would list it in `fs_reach.read`.
PYTHON_PREFIX = os.path.realpath(sys.base_prefix)


def reach_for(work: Path) -> Reach:
    return Reach(read=(str(work), PYTHON_PREFIX), write=(str(work),))


async def started(token: str, count: int) -> list[int]:
    """The host pids of `count` processes whose command line has `token`. A forked child
    may not have exec'd its command yet when the shell moves on, so allow a moment."""
    async with asyncio.timeout(5):
        while len(pids := pids_running(token)) < count:
            await asyncio.sleep(0.01)
    return pids


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
async def sandbox(work: Path) -> AsyncIterator[BwrapSandbox]:
    sandbox = BwrapSandbox(
        str(work), base_env={"PATH": TEST_PATH}, reach=reach_for(work), options=OPTIONS
    )
    yield sandbox
    await sandbox.aclose()


async def test_writes_inside_the_working_dir_reach_the_host(
    sandbox: BwrapSandbox, work: Path
) -> None:
    result = await sandbox.run("pwd; echo inside > made.txt && cat made.txt")
    assert (result.exit_code, result.output) == (0, f"{work}\ninside\n")
    assert (work / "made.txt").read_text() == "inside\n"


async def test_writes_outside_the_working_dir_are_denied(
    sandbox: BwrapSandbox, tmp_path: Path
) -> None:
    probe = Path(f"/usr/seam-sandbox-probe-{secrets.token_hex(4)}")
    try:
        result = await sandbox.run(f"touch {probe}")
        assert result.exit_code != 0
        assert "Read-only file system" in result.output
        assert not probe.exists()
    finally:
        probe.unlink(missing_ok=True)
    # A sibling of the working dir: inside, it lands in the private /tmp, never on the host.
    result = await sandbox.run("mkdir -p ../outside && echo x > ../outside/f && echo wrote")
    assert result.output == "wrote\n"
    assert not (tmp_path / "outside").exists()


async def test_tmp_is_private(sandbox: BwrapSandbox, tmp_path: Path) -> None:
    (tmp_path / "host-only.txt").write_text("host")
    result = await sandbox.run(
        f"cat {tmp_path}/host-only.txt; echo in-sandbox > /tmp/own && cat /tmp/own"
    )
    assert "No such file or directory" in result.output
    assert result.output.endswith("in-sandbox\n")
    assert "host" not in result.output.replace("host-only", "")


@pytest.fixture
async def server() -> AsyncIterator[int]:
    """A TCP server on 127.0.0.1 that greets whoever connects."""

    async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello from the host\n")
        await writer.drain()
        writer.close()

    srv = await asyncio.start_server(greet, "127.0.0.1", 0)
    yield srv.sockets[0].getsockname()[1]
    srv.close()
    await srv.wait_closed()


def _connect(port: int) -> str:
    code = (
        f"import socket; s = socket.create_connection(('127.0.0.1', {port}), timeout=5); "
        "print(s.makefile().readline().strip())"
    )
    # The interpreter itself, not the venv's link to it: the checkout is not in the reach.
    return f'{os.path.realpath(sys.executable)} -c "{code}"'


async def test_network_is_denied_by_default(sandbox: BwrapSandbox, server: int) -> None:
    result = await sandbox.run(_connect(server))
    assert result.exit_code != 0
    assert "hello from the host" not in result.output
    assert "ConnectionRefusedError" in result.output or "unreachable" in result.output


async def test_network_true_does_not_reach_the_host_loopback(work: Path, server: int) -> None:
    # `network = true` is public egress through the proxy (test_sandbox_egress.py): the
    # sandbox's loopback is its own, so a host service on 127.0.0.1 is out of reach.
    sandbox = BwrapSandbox(
        str(work),
        base_env={"PATH": TEST_PATH},
        network=True,
        reach=reach_for(work),
        options=OPTIONS,
    )
    result = await sandbox.run(_connect(server))
    assert result.exit_code != 0
    assert "hello from the host" not in result.output
    await sandbox.aclose()


async def test_timeout_kills_a_runaway_process_group(sandbox: BwrapSandbox, work: Path) -> None:
    token = f"1000.{secrets.randbelow(10**6):06d}"  # a sleep length only this test uses
    os.mkfifo(work / "ready")
    command = f"trap '' TERM; for i in 1 2 3; do sleep {token} & done; echo > ready; wait"
    running = asyncio.ensure_future(sandbox.run(command, timeout=1))
    await read_fifo(work / "ready")
    pids = await started(f"sleep\0{token}", 3)
    result = await running
    assert (result.exit_code, result.timed_out) == (124, True)
    assert "timed out after 1 s" in result.output
    assert await dead(*pids)


async def test_environment_is_filtered(work: Path) -> None:
    base = {
        "PATH": TEST_PATH,
        "HOME": str(work),
        "OPENAI_API_KEY": "sk-openai",
        "GITHUB_TOKEN": "ghp-token",
        "MY_SECRET": "hunter2",
        "TMPDIR": "/var/host-tmp",
    }
    sandbox = BwrapSandbox(str(work), base_env=base, options=OPTIONS)
    result = await sandbox.run("env", env={"GREETING": "hi", "API_TOKEN": "t0k"})
    seen = dict(line.split("=", 1) for line in result.output.splitlines())
    assert (seen["PATH"], seen["HOME"], seen["GREETING"]) == (TEST_PATH, str(work), "hi")
    assert seen["TMPDIR"] == "/tmp"  # the private one
    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "MY_SECRET", "API_TOKEN"):
        assert name not in seen


async def test_background_processes_die_with_kill(sandbox: BwrapSandbox, work: Path) -> None:
    token = f"1000.{secrets.randbelow(10**6):06d}"
    os.mkfifo(work / "ready")
    await sandbox.start(f"sleep {token} & echo > ready; wait")
    await read_fifo(work / "ready")
    [pid] = await started(f"sleep\0{token}", 1)
    info = await sandbox.kill("p1")
    assert not info.running
    assert await dead(pid)


async def test_provider_and_refusals(tmp_path: Path, work: Path) -> None:
    provider = BwrapSandboxProvider(base_env={"PATH": TEST_PATH}, options=OPTIONS)
    closed = provider.for_session("s", working_dir=str(work), network=False)
    networked = provider.for_session("s", working_dir=str(work), network=True)
    assert isinstance(closed, Sandbox) and isinstance(networked, BwrapSandbox)
    assert (closed.name, networked.network) == ("bwrap", True)
    assert provider.for_session("s", working_dir=str(work), network=True) is networked
    await provider.aclose()
    with pytest.raises(SandboxError, match="rooted at '/'"):
        BwrapSandbox("/", base_env={})
    missing = BwrapSandbox(str(work), base_env={}, bwrap=str(tmp_path / "no-bwrap"))
    with pytest.raises(SandboxError, match=r"could not start .*no-bwrap"):
        await missing.run("true")
    assert not bwrap_available(str(tmp_path / "no-bwrap"))
