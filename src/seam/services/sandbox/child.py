"""One started command, seen from the host: its output, its exit, its group and cgroup.

`_Child` keeps exit and end of output apart (a leftover `server &` can hold the output
open long after the shell exited) and knows how to stop, kill and reap the command's
whole process group, and to end its cgroup (what `setsid` took out of the group).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from typing import Any

from seam.contracts.sandbox import SandboxError
from seam.services.sandbox.cgroups import CallCgroup, Cgroups
from seam.services.sandbox.limits import Limits, memory_limit_text, signal_limit


def signal_group(pgid: int, sig: int) -> bool:
    """Signal a whole process group; False when nothing is left in it."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # the id now names someone else's group: not ours to kill
        return False
    return True


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Child(asyncio.SubprocessProtocol):
    """One started command: its output goes straight to `sink`, and exit and end of output
    are separate futures (a leftover `server &` can hold the output open long after the
    shell itself exited)."""

    def __init__(self, sink: Callable[[bytes], None]) -> None:
        loop = asyncio.get_running_loop()
        self._sink = sink
        self.exited: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()  # end of output
        self.transport: asyncio.SubprocessTransport | None = None
        self.cgroup: CallCgroup | None = None  # the call's cgroup, where one can be made
        self.cgroups: Cgroups | None = None
        self.hit: str | None = None  # the limit that ended it, when one did

    def end_cgroup(self) -> None:
        """SIGKILL whatever is left in the call's cgroup (daemons that left the group)."""
        if self.cgroup is not None and self.cgroups is not None:
            self.cgroups.close_call(self.cgroup)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        assert isinstance(data, bytes)
        self._sink(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        _resolve(self.closed)

    def process_exited(self) -> None:
        _resolve(self.exited)

    def connection_lost(self, exc: Exception | None) -> None:
        self.close()  # exited and output closed: release the transport now

    @property
    def pid(self) -> int:
        assert self.transport is not None
        return self.transport.get_pid()

    @property
    def returncode(self) -> int | None:
        assert self.transport is not None
        return self.transport.get_returncode()

    def close(self) -> None:
        """Drop the pipes; only call once `exited` is done (closing earlier kills the leader
        and races the child watcher for its exit status)."""
        assert self.transport is not None
        self.transport.close()

    async def stop(self, grace: float) -> None:
        """SIGTERM the group, give it `grace` seconds to exit and close its output, SIGKILL."""
        signal_group(self.pid, signal.SIGTERM)
        await asyncio.wait((self.exited, self.closed), timeout=grace)
        signal_group(self.pid, signal.SIGKILL)
        self.end_cgroup()
        await asyncio.shield(self.exited)

    async def kill(self, grace: float) -> None:
        """SIGKILL the group at once (a cancelled call, a closed sandbox) and reap it."""
        signal_group(self.pid, signal.SIGKILL)
        self.end_cgroup()
        # End of output: the killed processes that held it are gone too.
        await asyncio.wait((self.exited, self.closed), timeout=grace)
        await asyncio.shield(self.exited)
        self.close()

    def end_with_leader(self) -> None:
        """Make the group end when its leader does: what a finished job left running
        would be out of reach (its group id is not safe to signal later)."""
        self.exited.add_done_callback(self._kill_leftovers)

    def _kill_leftovers(self, _: object) -> None:
        signal_group(self.pid, signal.SIGKILL)
        self.end_cgroup()

    async def settle(self, grace: float) -> bool:
        """After exit: wait up to `grace` for the end of output; False if it never came
        (a process that left the group holds it), and then stop reading."""
        done, _ = await asyncio.wait((self.closed,), timeout=grace)
        self.close()
        return bool(done)


async def abandon(starting: asyncio.Future[tuple[Any, Child]], grace: float) -> None:
    try:
        _, child = await starting
    except Exception:  # it never started: nothing to kill
        return
    await child.kill(grace)


def raise_for_limit(child: Child, code: int, output: str, limits: Limits) -> None:
    """A command a limit ended is a tool error naming the limit and its config key."""
    hit = child.hit
    if hit is None and child.cgroup is not None and child.cgroup.oom_kills():
        hit = memory_limit_text(limits)
    if hit is None:
        hit = signal_limit(code, limits)
    if hit is not None:
        shown = f"\n{output}" if output.strip() else ""
        raise SandboxError(f"killed: exceeded the sandbox {hit}{shown}")
