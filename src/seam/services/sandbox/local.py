"""The local sandbox: commands run as plain subprocesses in the session's working directory.

No isolation beyond the process group, the filtered environment and the timeout: the
command can read, write and reach whatever the runtime's user can (`network` is not
enforced here). Use the bubblewrap sandbox where that matters.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from seam.services.sandbox.process import GroupSandbox, SandboxOptions


class LocalSandbox(GroupSandbox):
    name = "local"

    def _argv(self, command: str, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        return [self._shell, "-c", command], env


class LocalSandboxProvider:
    """One `LocalSandbox` per (session, working dir, network), kept so background
    processes outlive the turn that started them."""

    def __init__(
        self,
        *,
        base_env: Mapping[str, str],
        options: SandboxOptions | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._base_env = dict(base_env)
        self._options = options or SandboxOptions()
        self._clock = clock
        self._sandboxes: dict[tuple[str, str, bool], LocalSandbox] = {}

    def for_session(self, session_key: str, *, working_dir: str, network: bool) -> LocalSandbox:
        key = (session_key, working_dir, network)
        sandbox = self._sandboxes.get(key)
        if sandbox is None:
            sandbox = LocalSandbox(
                working_dir, base_env=self._base_env, options=self._options, clock=self._clock
            )
            self._sandboxes[key] = sandbox
        return sandbox

    async def aclose(self) -> None:
        sandboxes = list(self._sandboxes.values())
        self._sandboxes.clear()
        for sandbox in sandboxes:
            await sandbox.aclose()
