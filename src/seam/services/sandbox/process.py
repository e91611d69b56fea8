"""What both sandboxes share: process groups, limits, output, env filtering, background jobs.

A backend only says how a shell command becomes an argv (`GroupSandbox._argv`); running it
in its own process group and cgroup under the `[sandbox]` limits, capping and spilling its
output, killing everything it started on a timeout, a cancellation or its end, turning a
limit it hit into an error naming the limit, and keeping a table of background processes
live here, so the local and the bubblewrap sandboxes cannot drift apart on any of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from seam.contracts.sandbox import (
    START_DEFAULTS,
    CommandResult,
    ProcessInfo,
    SandboxError,
    StartOptions,
)
from seam.contracts.storage import Reach
from seam.services.sandbox.cgroups import CallCgroup, Cgroups, shared_cgroups
from seam.services.sandbox.child import Child, abandon, raise_for_limit, signal_group
from seam.services.sandbox.env import SAFE_ENV, SECRET_ENV, filter_env, is_secret
from seam.services.sandbox.limits import (
    DEFAULT_LIMITS,
    NO_LIMITS,
    Limits,
    limited_script,
    memory_rlimit_note,
    process_limit_text,
    ulimit_prelude,
)
from seam.services.sandbox.output import Capture, OutputRing

__all__ = [  # the names other modules and tests import from here
    "SAFE_ENV",
    "SECRET_ENV",
    "Capture",
    "GroupSandbox",
    "GroupSandboxProvider",
    "Limits",
    "OutputRing",
    "SandboxOptions",
    "filter_env",
    "is_secret",
]

log = logging.getLogger(__name__)

# `spill(name, text) -> path`: saves a command's full output; the caller picks where.
SpillWriter = Callable[[str, str], Awaitable[str]]

TIMEOUT_EXIT_CODE = 124  # what coreutils' `timeout` returns; models know it
PIDS_POLL = 0.1  # seconds between looks at a running command's process-cap counter


@dataclass(frozen=True, slots=True)
class SandboxOptions:
    timeout: float = 180.0  # seconds a foreground command may run
    output_limit: int = 50_000  # characters of output kept in a result (head + tail)
    spill_limit: int = 10_000_000  # characters kept for the spill file, so memory stays bounded
    kill_grace: float = 2.0  # seconds between SIGTERM and SIGKILL
    buffer_limit: int = 50_000  # characters of unread output kept per background process
    max_processes: int = 16  # background processes kept in the table
    pass_env: tuple[str, ...] = ()  # extra base-env names (globs) commands may see
    limits: Limits = DEFAULT_LIMITS  # memory, processes, file size, CPU per call ([sandbox])

    def __post_init__(self) -> None:
        for name in ("timeout", "kill_grace"):
            if not getattr(self, name) > 0:
                raise ValueError(
                    f"SandboxOptions.{name} must be positive, got {getattr(self, name)!r}"
                )
        for name in ("output_limit", "spill_limit", "buffer_limit", "max_processes"):
            if getattr(self, name) < 1:
                raise ValueError(
                    f"SandboxOptions.{name} must be at least 1, got {getattr(self, name)!r}"
                )


def default_shell() -> str:
    return "/bin/bash" if Path("/bin/bash").exists() else "/bin/sh"


class _Background:
    __slots__ = ("child", "command", "id", "read_at", "ring", "started_at")

    def __init__(self, id: str, command: str, child: Child, ring: OutputRing, at: float) -> None:
        self.id = id
        self.command = command
        self.child = child
        self.ring = ring
        self.started_at = at
        self.read_at = 0

    def info(self) -> ProcessInfo:
        code = self.child.returncode
        return ProcessInfo(
            self.id, self.command, self.child.pid, code is None, code, self.started_at
        )


class GroupSandbox:
    """Runs each command in a new process group (and cgroup) in the working directory.

    Subclasses supply `name` and `_argv`. Commands see only the filtered base environment
    (plus the caller's variables, secrets dropped), never the runtime's own, and run
    under the options' `limits` (see `limits.py`).
    """

    name = "sandbox"
    isolated = False  # the command gate is stricter where commands are not isolated
    # True where each command gets user and pid namespaces of its own (bwrap): RLIMIT_NPROC
    # then counts only the command's processes (on the host it would count all of the
    # user's), and what it leaves behind dies with the namespace when its shell exits.
    _namespaced = False

    def __init__(
        self,
        working_dir: str,
        *,
        base_env: Mapping[str, str],
        options: SandboxOptions | None = None,
        clock: Callable[[], float] = time.time,
        shell: str | None = None,
        cgroups: Cgroups | None = None,
    ) -> None:
        real = os.path.realpath(working_dir)
        if not Path(real).is_dir():
            raise SandboxError(f"working directory {working_dir!r} does not exist")
        self._working_dir = real
        self._options = options or SandboxOptions()
        self._env = filter_env(base_env, pass_env=self._options.pass_env)
        self._clock = clock
        self._shell = shell or default_shell()
        self._cgroups = cgroups if cgroups is not None else shared_cgroups()
        self._running: set[Child] = set()
        # Commands still starting: `aclose` waits for them (callers register a started
        # command before their next await), so none slips past it.
        self._starting = 0
        self._started = asyncio.Event()
        self._jobs: dict[str, _Background] = {}
        self._job_count = 0
        self._closed = False

    @property
    def working_dir(self) -> str:
        return self._working_dir

    @property
    def limits(self) -> Limits:
        return self._options.limits

    def _argv(
        self, command: str, env: dict[str, str], *, git_writes: bool = False
    ) -> tuple[list[str], dict[str, str]]:
        """The argv that runs `command` through the shell, and the env to start it with
        (`git_writes`: the person approved writing `.git/hooks` or `.git/config`)."""
        raise NotImplementedError

    async def _prepare(self) -> None:
        """Anything a backend must have running before its next command (its proxy)."""

    def _limited(self, command: str) -> tuple[str, CallCgroup | None]:
        """`command` under the limits, and the cgroup it must start in (if any)."""
        limits = self._options.limits
        if limits == NO_LIMITS:
            return command, None
        call = self._cgroups.open_call(limits, self.name)
        prelude = ulimit_prelude(
            limits,
            memory_rlimit=call is None or call.memory is None,
            nproc_rlimit=self._namespaced and (call is None or call.pids is None),
        )
        if call is not None and not self._namespaced:  # the shell joins it itself
            prelude = f"{call.joins()} && {prelude}" if prelude else call.joins()
        return limited_script(command, prelude), call

    async def _spawn(
        self,
        command: str,
        env: Mapping[str, str] | None,
        sink: Callable[[bytes], None],
        git_writes: bool = False,
    ) -> Child:
        if self._closed:
            raise SandboxError("the sandbox is closed")
        if not isinstance(command, str) or not command.strip():
            raise SandboxError("the command is empty")
        merged = self._env
        if env:
            merged = {**merged, **{k: v for k, v in env.items() if not is_secret(k)}}
        await self._prepare()
        script, call = self._limited(command)
        argv, proc_env = self._argv(script, merged, git_writes=git_writes)
        if call is not None and self._namespaced:  # joined before bwrap starts
            if shutil.which(argv[0]) is None:  # the shim's `exec` would only exit 127
                self._cgroups.close_call(call)
                raise SandboxError(f"could not start {argv[0]}: not found or not executable")
            argv = call.shim(argv)
        loop = asyncio.get_running_loop()
        self._starting += 1
        self._started.clear()

        def protocol() -> Child:
            child = Child(sink)
            child.cgroup, child.cgroups = call, self._cgroups
            return child

        starting = asyncio.ensure_future(
            loop.subprocess_exec(
                protocol,
                *argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=self._working_dir,
                env=proc_env,
                start_new_session=True,
            )
        )
        try:
            _, child = await asyncio.shield(starting)
        except asyncio.CancelledError:
            # Cancelled mid-start, asyncio would kill only the shell, not what it already
            # forked: let the start finish, then kill the whole group.
            await abandon(starting, self._options.kill_grace)
            raise
        except OSError as exc:
            if call is not None:
                self._cgroups.close_call(call)
            raise SandboxError(f"could not start {argv[0]}: {exc.strerror or exc}") from None
        finally:
            self._starting -= 1
            if not self._starting:
                self._started.set()
        return child

    async def _wait(self, child: Child, limit: float) -> bool:
        """Wait for the command's exit (True), its timeout, or its process cap (False)."""
        call = child.cgroup
        if call is None or call.pids is None:
            done, _ = await asyncio.wait((child.exited,), timeout=limit)
            return bool(done)
        # A fork loop at the cap would spin until the timeout: end it when it gets there.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        while (remaining := deadline - loop.time()) > 0:
            done, _ = await asyncio.wait((child.exited,), timeout=min(PIDS_POLL, remaining))
            if done:
                return True
            if call.pids_hits():
                child.hit = process_limit_text(self._options.limits)
                return False
        return False

    async def _finish(self, child: Child, limit: float, notes: list[str]) -> bool:
        """Run `child` to its end, leaving nothing behind; True when it timed out."""
        grace = self._options.kill_grace
        timed_out = False
        if not await self._wait(child, limit):
            timed_out = child.hit is None
            if timed_out:
                notes.append(f"[timed out after {limit:g} s; the process group was killed]")
            await child.stop(grace)
        elif signal_group(child.pid, 0):
            # Leftovers in the group (`server &`) would outlive the call: stop them.
            notes.append(
                "[stopped the background processes it left running; "
                "run long-lived commands in background mode]"
            )
            await child.stop(grace)
        elif not self._namespaced and child.cgroup is not None and child.cgroup.alive():
            notes.append("[killed the processes it left running outside its process group]")
        child.end_cgroup()  # a `setsid` daemon, which the group signals never reach
        if not await child.settle(grace):
            notes.append("[output cut: a process that left the group still holds it open]")
        return timed_out

    async def run(
        self,
        command: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - enforced on the process group
        env: Mapping[str, str] | None = None,
        spill: SpillWriter | None = None,
        allow_git_control_writes: bool = False,
        redact: Callable[[str], str] | None = None,
    ) -> CommandResult:
        """Run `command` to its end. `allow_git_control_writes`: only when the person
        approved this very command writing `.git/hooks` or `.git/config` (bwrap mounts
        them read-only otherwise); `redact` runs before a long output is cut. A command a
        limit killed raises `SandboxError`."""
        options = self._options
        limit = options.timeout if timeout is None else timeout
        if not limit > 0:
            raise SandboxError(f"timeout must be positive, got {timeout}")
        started = time.perf_counter()
        capture = Capture(options.output_limit, options.spill_limit if spill else 0)
        child = await self._spawn(command, env, capture.feed, allow_git_control_writes)
        self._running.add(child)
        notes: list[str] = []
        try:
            timed_out = await self._finish(child, limit, notes)
        except BaseException:
            # Cancelled (or failed) mid-run: never leave the group behind.
            with contextlib.suppress(asyncio.CancelledError):
                await child.kill(options.kill_grace)
            raise
        finally:
            self._running.discard(child)
        capture.finish()
        output = capture.text(redact)
        code = TIMEOUT_EXIT_CODE if timed_out else child.returncode
        assert code is not None
        raise_for_limit(child, code, output, options.limits)
        if code != 0 and (child.cgroup is None or child.cgroup.memory is None):
            notes.extend(memory_rlimit_note(code, output, options.limits))
        spill_path = None
        if capture.truncated and spill is not None:
            try:
                spill_path = await spill(f"cmd-{secrets.token_hex(4)}.log", capture.full())
            except Exception as exc:  # the command already ran: keep its result whatever
                log.warning("could not spill command output: %s", exc)
                notes.append(f"[full output not saved: {exc}]")
        if notes:
            output = "\n".join((output.rstrip("\n"), *notes)) if output else "\n".join(notes)
        return CommandResult(
            exit_code=code,
            output=output,
            duration_ms=(time.perf_counter() - started) * 1000,
            timed_out=timed_out,
            truncated=capture.truncated,
            spill_path=spill_path,
        )

    async def start(self, command: str, options: StartOptions = START_DEFAULTS) -> ProcessInfo:
        self._make_room()
        ring = OutputRing(self._options.buffer_limit)
        child = await self._spawn(command, options.env, ring.feed, options.allow_git_control_writes)
        child.end_with_leader()
        self._job_count += 1
        job = _Background(f"p{self._job_count}", command, child, ring, self._clock())
        self._jobs[job.id] = job
        return job.info()

    def _make_room(self) -> None:
        limit = self._options.max_processes
        if len(self._jobs) < limit:
            return
        for job in self._jobs.values():  # oldest first
            if job.child.closed.done() and job.child.exited.done():
                del self._jobs[job.id]
                return
        raise SandboxError(f"{limit} background processes are running; kill one first")

    def _job(self, process_id: str) -> _Background:
        job = self._jobs.get(process_id)
        if job is None:
            known = ", ".join(self._jobs) or "none"
            raise SandboxError(f"no background process {process_id!r} (known: {known})")
        return job

    async def processes(self) -> list[ProcessInfo]:
        return [job.info() for job in self._jobs.values()]

    async def poll(self, process_id: str) -> tuple[ProcessInfo, str]:
        job = self._job(process_id)
        ring = job.ring
        text = ring.read(job.read_at)
        job.read_at = ring.end
        return job.info(), text

    async def kill(self, process_id: str) -> ProcessInfo:
        job = self._job(process_id)
        await self._stop_job(job)
        return job.info()

    async def _stop_job(self, job: _Background) -> None:
        child = job.child
        # Once the output has closed and the leader exited, its group may be gone and the
        # id reused: only signal a job that is visibly still there.
        if child.exited.done() and child.closed.done():
            child.close()  # asyncio may not have released it yet
            return
        grace = self._options.kill_grace
        await child.stop(grace)
        await child.settle(grace)

    async def aclose(self) -> None:
        """Kill every process this sandbox started: background jobs and commands in flight."""
        self._closed = True
        while self._starting:
            await self._started.wait()
        grace = self._options.kill_grace
        await asyncio.gather(
            *(child.stop(grace) for child in self._running),
            *(self._stop_job(job) for job in self._jobs.values()),
        )


@dataclass(eq=False, kw_only=True)  # a service with identity, not a value
class GroupSandboxProvider:
    """One sandbox per (session, working dir, network, reach), kept so background processes
    outlive the turn that started them. Subclasses say how to build one (`_make`) and
    add their own fields (a dataclass each, so none restates these)."""

    name = "sandbox"

    base_env: Mapping[str, str]
    options: SandboxOptions = field(default_factory=SandboxOptions)
    clock: Callable[[], float] = time.time

    def __post_init__(self) -> None:
        self.base_env = dict(self.base_env)  # a copy: the caller's mapping may change
        self._cgroups = shared_cgroups()
        self._sandboxes: dict[tuple[str, str, bool, Reach | None], GroupSandbox] = {}

    def _make(self, working_dir: str, network: bool, reach: Reach | None) -> GroupSandbox:
        raise NotImplementedError

    def for_session(
        self, session_key: str, *, working_dir: str, network: bool, reach: Reach | None = None
    ) -> GroupSandbox:
        key = (session_key, working_dir, network, reach)
        sandbox = self._sandboxes.get(key)
        if sandbox is None:
            sandbox = self._sandboxes[key] = self._make(working_dir, network, reach)
        return sandbox

    async def aclose(self) -> None:
        sandboxes = list(self._sandboxes.values())
        self._sandboxes.clear()
        await asyncio.gather(*(sandbox.aclose() for sandbox in sandboxes))
        self._cgroups.clear()
