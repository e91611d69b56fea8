"""The local sandbox: commands run as plain subprocesses in the session's working directory.

No isolation beyond the process group, the filtered environment and the timeout: a
command can read, write and reach whatever the runtime's user can (`network` is not
enforced here). Use the bubblewrap sandbox where that matters.
"""

from __future__ import annotations

from seam.services.sandbox.process import GroupSandbox, GroupSandboxProvider


class LocalSandbox(GroupSandbox):
    name = "local"
    isolated = False

    def _argv(self, command: str, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        return [self._shell, "-c", command], env


class LocalSandboxProvider(GroupSandboxProvider):
    def _make(self, working_dir: str, network: bool) -> LocalSandbox:
        return LocalSandbox(
            working_dir, base_env=self._base_env, options=self._options, clock=self._clock
        )
