"""The bubblewrap sandbox: a command sees the system read-only and only what its reach grants.

Each command runs under Debian's `bwrap` in a view built from nothing (see `mounts.py`):
the system directories read-only, the working directory and the reach's roots (writable
only where the reach says), a private `/tmp`, an empty home, and nothing the reach denies
(`$SEAM_HOME`, credentials, shell start-up files), masked even inside a mounted root.
Every namespace is unshared, the network one too (with `network = true` the only way
out is the filtering proxy of `egress.py`: public destinations only), and a pid
namespace, so `/proc` shows only the sandbox's own processes (never Seam's environment).
All capabilities are dropped, the environment is cleared and rebuilt from the filtered
one, and when `bwrap` dies everything inside dies with it: bwrap exits when the command's
shell does, its pid namespace's init goes with it, and the kernel kills every process
left in the namespace (`sleep 1000 &`, `setsid` daemons alike). `.git/hooks` and
`.git/config` are read-only unless the person approved the command writing there, and
each trusted skill's folder is shown read-only at `/skills/<name>` (see `mounts.py`); the
limits are in `limits.py`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from seam.contracts.sandbox import SKILLS_MOUNT, SandboxError
from seam.contracts.storage import Reach
from seam.services.sandbox.cgroups import Cgroups
from seam.services.sandbox.egress import (
    SOCKET_INSIDE,
    EgressProxy,
    bridge_command,
    proxy_env,
    python_inside,
)
from seam.services.sandbox.mounts import View, mount_args
from seam.services.sandbox.process import (
    GroupSandbox,
    GroupSandboxProvider,
    SandboxOptions,
    default_shell,
)

DEFAULT_BWRAP = "/usr/bin/bwrap"  # where Debian's bubblewrap package puts it
# A working directory in, the trusted skills a session there may run ({name: folder}).
SkillFolders = Callable[[str], Mapping[str, str]]


def _isolation() -> list[str]:
    # The network namespace too, always: `network = true` goes through the proxy.
    return [
        "--unshare-all",
        "--cap-drop", "ALL",
        "--die-with-parent",
        "--as-pid-1",  # the shell is the pid namespace's init: when it exits, all inside die
        "--new-session",
        "--clearenv",
    ]  # fmt: skip


def bwrap_available(bwrap: str = DEFAULT_BWRAP) -> bool:
    """True when `bwrap` is installed and can create its namespaces on this machine."""
    if not os.access(bwrap, os.X_OK):
        return False
    mounts = mount_args("/tmp", Reach(), home=None)
    argv = [bwrap, *mounts, *_isolation(), "--", default_shell(), "-c", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False, env={})
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


class BwrapSandbox(GroupSandbox):
    """`skills`: the trusted skills of the working directory, asked again before each
    command (so a skill untrusted since, or changed, is gone from the next one)."""

    name = "bwrap"
    isolated = True
    _namespaced = True  # bwrap makes user and pid namespaces for each command
    skills_at = SKILLS_MOUNT  # where a skill's folder is seen (`/skills/<name>`)

    def __init__(
        self,
        working_dir: str,
        *,
        base_env: Mapping[str, str],
        network: bool = False,
        reach: Reach | None = None,
        options: SandboxOptions | None = None,
        clock: Callable[[], float] = time.time,
        bwrap: str = DEFAULT_BWRAP,
        read_only: tuple[str, ...] = (),
        cgroups: Cgroups | None = None,
        egress: EgressProxy | None = None,
        skills: SkillFolders | None = None,
    ) -> None:
        super().__init__(
            working_dir, base_env=base_env, options=options, clock=clock, cgroups=cgroups
        )
        if self.working_dir == "/":
            raise SandboxError("refusing a bwrap sandbox rooted at '/': it would all be writable")
        self.network = network
        # None: the working dir, read-write, and nothing else (plus the always-deny list).
        self.reach = reach or Reach(read=(self.working_dir,), write=(self.working_dir,))
        home = base_env.get("HOME", "")
        # The home is shown empty at its own path, so programs that write there still work.
        self.home = os.path.realpath(home) if Path(home).is_absolute() else None
        self._bwrap = bwrap
        self._read_only = tuple(os.path.realpath(p) for p in read_only)
        self._owns_egress = egress is None
        self._egress = (egress or EgressProxy()) if network else None
        self._egress_socket: str | None = None
        self._python = python_inside()
        self._skills = skills
        self._skill_folders: tuple[tuple[str, str], ...] = ()

    async def _prepare(self) -> None:
        if self._skills is not None:
            # Off the event loop: trust is checked by hashing the skills' files.
            found = await asyncio.to_thread(self._skills, self.working_dir)
            self._skill_folders = tuple(sorted(found.items()))
        if self._egress is None:
            return
        if self._python is None:
            raise SandboxError("network = true needs /usr/bin/python3 for the sandbox's proxy")
        self._egress_socket = await self._egress.start()

    async def aclose(self) -> None:
        await super().aclose()
        if self._egress is not None and self._owns_egress:
            await self._egress.aclose()

    def mounts(self, *, git_writes: bool = False) -> list[str]:
        """What the next command will see (computed from the filesystem as it is now)."""
        view = View(read_only=self._read_only, git_writes=git_writes, skills=self._skill_folders)
        return mount_args(
            self.working_dir, self.reach, home=self.home, network=self.network, view=view
        )

    def _argv(
        self, command: str, env: dict[str, str], *, git_writes: bool = False
    ) -> tuple[list[str], dict[str, str]]:
        argv = [self._bwrap, *self.mounts(git_writes=git_writes), *_isolation()]
        if self.network:  # egress through the filtering proxy only (see egress.py)
            assert self._egress_socket is not None, "_prepare() starts the proxy"
            argv += ("--bind", self._egress_socket, SOCKET_INSIDE)
            env = {**env, **proxy_env()}
            command = f"{bridge_command(self._python or 'python3')}\n{command}"
        # The shell is the namespace's pid 1 (`--as-pid-1`: no bwrap init left for the host
        # to reap), and a pid 1 ignores signals it has no handler for. A trapped signal
        # keeps bash from exec-ing the last command in its place, so the command runs as
        # an ordinary process (SIGXCPU, SIGTERM and the rest act on it as usual).
        command = f"trap : USR2; {command}"
        # /tmp inside is the private tmpfs, whatever the host's TMPDIR says.
        for key, value in {**env, "TMPDIR": "/tmp"}.items():
            argv += ("--setenv", key, value)
        argv += ("--chdir", self.working_dir, "--", self._shell, "-c", command)
        # bwrap itself starts with an empty environment: its /proc/1/environ shows nothing.
        return argv, {}


@dataclass(eq=False, kw_only=True)
class BwrapSandboxProvider(GroupSandboxProvider):
    """Bubblewrap sandboxes; `read_only`: directories every command sees read-only even
    where the reach denies them; `skills`: the trusted skills of a working directory
    (`{name: folder}`), shown read-only at `/skills/<name>`; `network_allow`: hosts (or
    host:port) the egress proxy lets through although they are not public."""

    name = "bwrap"

    bwrap: str = DEFAULT_BWRAP
    read_only: tuple[str, ...] = ()
    network_allow: tuple[str, ...] = ()
    skills: SkillFolders | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self._egress = EgressProxy(self.network_allow)

    async def aclose(self) -> None:
        await super().aclose()
        await self._egress.aclose()

    def _make(self, working_dir: str, network: bool, reach: Reach | None) -> BwrapSandbox:
        return BwrapSandbox(
            working_dir,
            base_env=self.base_env,
            network=network,
            reach=reach,
            options=self.options,
            clock=self.clock,
            bwrap=self.bwrap,
            read_only=self.read_only,
            cgroups=self._cgroups,
            egress=self._egress,
            skills=self.skills,
        )
