"""Where commands run: a sandbox per tenant, a working-directory view per session."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from seam.contracts.storage import Reach


class SandboxError(Exception):
    pass


# Writes a command's full output somewhere the model can read it later and returns that
# path; passed per call because the caller's storage reach can change from turn to turn.
SpillWriter = Callable[[str, str], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class CommandResult:
    exit_code: int  # -signal when killed by a signal; 124 when the timeout killed it
    output: str  # stdout and stderr interleaved, capped; see `truncated`
    duration_ms: float
    timed_out: bool = False
    truncated: bool = False
    # Where the full output was spilled when it was over the cap (a storage path), if any.
    spill_path: str | None = None


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    id: str
    command: str
    pid: int
    running: bool
    exit_code: int | None
    started_at: float


@dataclass(frozen=True, slots=True)
class StartOptions:
    """How `Sandbox.start` launches a background process: one object the protocol and
    each sandbox take, instead of the same keyword list restated in every one."""

    env: Mapping[str, str] | None = None
    # As `Sandbox.run`'s: True only for a command a person approved that is about them.
    allow_git_control_writes: bool = False


START_DEFAULTS = StartOptions()


@runtime_checkable
class Sandbox(Protocol):
    """Runs shell commands for one session, in its working directory."""

    @property
    def name(self) -> str: ...

    @property
    def working_dir(self) -> str: ...

    @property
    def isolated(self) -> bool:
        """True when commands run isolated from the host (bubblewrap), False when they run
        as plain processes (local): the command gate is stricter then."""
        ...

    async def run(
        self,
        command: str,
        *,
        # The sandbox enforces this itself: it must kill the whole process group.
        timeout: float | None = None,  # noqa: ASYNC109
        env: Mapping[str, str] | None = None,
        spill: SpillWriter | None = None,
        # Git's hooks and config are read-only in a sandbox (code planted there runs on the
        # host later); True only for a command a person approved that is about them.
        allow_git_control_writes: bool = False,
        # What the loop redacts results with: applied before a long output is cut to its
        # head and tail, so the cut never leaves a piece of a secret behind.
        redact: Callable[[str], str] | None = None,
    ) -> CommandResult: ...

    async def start(self, command: str, options: StartOptions = START_DEFAULTS) -> ProcessInfo:
        """Start a background process; its output is kept for `poll`."""
        ...

    async def processes(self) -> list[ProcessInfo]: ...

    async def poll(self, process_id: str) -> tuple[ProcessInfo, str]:
        """The process's state and the output produced since the last poll."""
        ...

    async def kill(self, process_id: str) -> ProcessInfo: ...

    async def aclose(self) -> None:
        """Kill every process this sandbox started."""
        ...


@runtime_checkable
class SandboxProvider(Protocol):
    """One backend per tenant; hands each session its own working-directory view.

    Implementations cache per session key, so background processes outlive a turn.
    `reach` is the session's file reach (the same value its file tools check): a backend
    that isolates shows a command only what it allows; None means the working dir only.
    """

    def for_session(
        self, session_key: str, *, working_dir: str, network: bool, reach: Reach | None = None
    ) -> Sandbox: ...

    async def aclose(self) -> None: ...


# Where the sandbox shows each trusted skill's folder (`/skills/<name>`): the guard and
# `skill_view` name the same path.
SKILLS_MOUNT = "/skills"
