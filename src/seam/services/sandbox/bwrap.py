"""The bubblewrap sandbox: a read-only view of the machine with only the working dir writable.

Each command runs under Debian's `bwrap` with the root bound read-only, the working
directory bound writable, a private `/tmp`, fresh `/dev` and `/proc`, every namespace
unshared (so no network unless the personality allows it) and all capabilities dropped.
The new pid namespace also means that when `bwrap` dies, everything inside dies with
it, so killing the process group on the host side leaves nothing behind.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Mapping

from seam.contracts.sandbox import SandboxError
from seam.services.sandbox.process import (
    GroupSandbox,
    GroupSandboxProvider,
    SandboxOptions,
    default_shell,
)

DEFAULT_BWRAP = "/usr/bin/bwrap"  # where Debian's bubblewrap package puts it


def _isolation(working_dir: str, network: bool) -> list[str]:
    return [
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        # After the tmpfs, so a working dir under /tmp stays the real one.
        "--bind", working_dir, working_dir,
        "--unshare-all",
        *(["--share-net"] if network else []),
        "--cap-drop", "ALL",
        "--die-with-parent",
        "--new-session",
        "--chdir", working_dir,
    ]  # fmt: skip


def bwrap_available(bwrap: str = DEFAULT_BWRAP) -> bool:
    """True when `bwrap` is installed and can create its namespaces on this machine."""
    if not os.access(bwrap, os.X_OK):
        return False
    argv = [bwrap, *_isolation("/tmp", False), "--", default_shell(), "-c", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False, env={})
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


class BwrapSandbox(GroupSandbox):
    name = "bwrap"
    isolated = True

    def __init__(
        self,
        working_dir: str,
        *,
        base_env: Mapping[str, str],
        network: bool = False,
        options: SandboxOptions | None = None,
        clock: Callable[[], float] = time.time,
        bwrap: str = DEFAULT_BWRAP,
    ) -> None:
        super().__init__(working_dir, base_env=base_env, options=options, clock=clock)
        if self.working_dir == "/":
            raise SandboxError("refusing a bwrap sandbox rooted at '/': it would all be writable")
        self.network = network
        self._prefix = [bwrap, *_isolation(self.working_dir, network), "--clearenv"]

    def _argv(self, command: str, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        argv = list(self._prefix)
        # /tmp inside is the private tmpfs, whatever the host's TMPDIR says.
        for key, value in {**env, "TMPDIR": "/tmp"}.items():
            argv += ("--setenv", key, value)
        argv += ("--", self._shell, "-c", command)
        return argv, {}


class BwrapSandboxProvider(GroupSandboxProvider):
    def __init__(
        self,
        *,
        base_env: Mapping[str, str],
        options: SandboxOptions | None = None,
        clock: Callable[[], float] = time.time,
        bwrap: str = DEFAULT_BWRAP,
    ) -> None:
        super().__init__(base_env=base_env, options=options, clock=clock)
        self._bwrap = bwrap

    def _make(self, working_dir: str, network: bool) -> BwrapSandbox:
        return BwrapSandbox(
            working_dir,
            base_env=self._base_env,
            network=network,
            options=self._options,
            clock=self._clock,
            bwrap=self._bwrap,
        )
