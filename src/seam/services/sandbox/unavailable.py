"""The backend in force when bubblewrap cannot run and `local` was not chosen: nothing runs.

Unknown is never safe: a machine without a working bubblewrap must not quietly run the
model's commands on the host. Every command is refused with one line naming the two
ways out (install bubblewrap, or choose the unsandboxed `local` backend in config).
`isolated` is True because nothing here touches the host: the gate needs no extra care
for commands that will be refused anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from seam.contracts.sandbox import (
    START_DEFAULTS,
    CommandResult,
    ProcessInfo,
    SandboxError,
    SpillWriter,
    StartOptions,
)
from seam.contracts.storage import Reach

FIX = (
    "install bubblewrap (apt-get install bubblewrap; scripts/start does it as root), or set"
    ' [sandbox] backend = "local" in config.toml to run commands unsandboxed'
)


class UnavailableSandbox:
    name = "unavailable"
    isolated = True

    def __init__(self, working_dir: str, reason: str) -> None:
        self._working_dir = working_dir
        self._message = f"refused: commands cannot run: {reason}; {FIX}"

    @property
    def working_dir(self) -> str:
        return self._working_dir

    def _refuse(self) -> SandboxError:
        return SandboxError(self._message)

    async def run(
        self,
        command: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - nothing runs
        env: Mapping[str, str] | None = None,
        spill: SpillWriter | None = None,
        allow_git_control_writes: bool = False,
        redact: Callable[[str], str] | None = None,
    ) -> CommandResult:
        raise self._refuse()

    async def start(self, command: str, options: StartOptions = START_DEFAULTS) -> ProcessInfo:
        raise self._refuse()

    async def processes(self) -> list[ProcessInfo]:
        return []

    async def poll(self, process_id: str) -> tuple[ProcessInfo, str]:
        raise self._refuse()

    async def kill(self, process_id: str) -> ProcessInfo:
        raise self._refuse()

    async def aclose(self) -> None:
        return None


class UnavailableSandboxProvider:
    name = "unavailable"

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def for_session(
        self, session_key: str, *, working_dir: str, network: bool, reach: Reach | None = None
    ) -> UnavailableSandbox:
        return UnavailableSandbox(working_dir, self.reason)

    async def aclose(self) -> None:
        return None
