"""The local sandbox: commands run as plain subprocesses in the session's working directory.

No isolation beyond the process group (and a cgroup where one can be made: see
`cgroups.py`), the filtered environment, the limits and the timeout: a
command can read, write and reach whatever the runtime's user can (`network` and the
session's reach are not enforced here: the file tools still check the reach, and the
command gate is what stands between a command and the person's files). Use the
bubblewrap sandbox where that matters.
"""

from __future__ import annotations

from seam.contracts.storage import Reach
from seam.services.sandbox.process import GroupSandbox, GroupSandboxProvider


class LocalSandbox(GroupSandbox):
    name = "local"
    isolated = False

    def _argv(
        self, command: str, env: dict[str, str], *, git_writes: bool = False
    ) -> tuple[list[str], dict[str, str]]:
        return [self._shell, "-c", command], env  # nothing is hidden here, git included


class LocalSandboxProvider(GroupSandboxProvider):
    name = "local"

    def _make(self, working_dir: str, network: bool, reach: Reach | None) -> LocalSandbox:
        return LocalSandbox(
            working_dir,
            base_env=self.base_env,
            options=self.options,
            clock=self.clock,
            cgroups=self._cgroups,
        )
