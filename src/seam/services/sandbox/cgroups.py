"""A cgroup per command: its memory and process caps, and the way to end all of it.

Where this process may create cgroups (root, or a delegated subtree), each call gets its
own: under cgroup v2 in `<mount>/seam.sandbox/` (the root may enable `memory` and `pids`
there; a container's namespace root cannot, and then only `cgroup.kill` is gained), under
cgroup v1 (hybrid hosts, like this CI) beside this process's own `memory` and `pids`
cgroups. The command joins it before it starts (a `sh` shim writes its pid to each
`cgroup.procs`, then execs it), so everything it forks is inside, including daemons that
leave the process group with `setsid`. At the end of the call the cgroup is killed and
removed. A non-root user on a host without delegation gets none: `limits.py` then falls
back to rlimits, and the bubblewrap pid namespace still ends every process of a call.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import os
import shlex
import signal
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from seam.services.sandbox.limits import MB, Limits

log = logging.getLogger(__name__)

V2_DIR = "seam.sandbox"  # the parent of every call's cgroup under cgroup v2
_CONTROLLERS = ("memory", "pids")
_KILL_ROUNDS = 50  # v1 has no cgroup.kill: kill what is listed until nothing is
ZOMBIE_SLACK = 2  # processes still counted in a cgroup that may be reused
POOL_SIZE = 16  # ended calls' cgroups kept for reuse once empty


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, text: str) -> bool:
    try:
        path.write_text(text)
    except OSError:
        return False
    return True


def _counter(path: Path, key: str) -> int:
    """`key N` from a flat-keyed cgroup file (memory.events, pids.events, oom_control)."""
    for line in _read(path).splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


@dataclass(slots=True)
class CallCgroup:
    """One call's cgroup directories (one per hierarchy) and what each of them limits."""

    dirs: list[Path]
    memory: Path | None = None  # the directory whose memory controller caps the call
    pids: Path | None = None
    memory_v2: bool = True
    killer: Path | None = None  # a v2 directory with cgroup.kill
    limits: Limits | None = None
    kind: str = ""  # the backend that used it: bwrap's namespaces leave kernel memory
    # charged a while, which makes a plain process joining after it slow, so no sharing.
    # Counters are cumulative and the directories are reused: a call counts from its start.
    oom_base: int = 0
    pids_base: int = 0
    ooms: int = 0  # kept once the call is closed (its directories may serve another)
    closed: bool = False

    def reopened(self) -> CallCgroup:
        """The same directories for a new call, counting from now."""
        return CallCgroup(
            list(self.dirs),
            self.memory,
            self.pids,
            self.memory_v2,
            self.killer,
            self.limits,
            self.kind,
            oom_base=self._oom_count(),
            pids_base=self._pids_count(),
        )

    def joins(self) -> str:
        """Shell that moves the shell running it into this cgroup."""
        return " && ".join(f"echo $$ > {shlex.quote(str(d / 'cgroup.procs'))}" for d in self.dirs)

    def shim(self, argv: list[str]) -> list[str]:
        """`argv`, started inside this cgroup (for a program that is not a shell: bwrap)."""
        return ["/bin/sh", "-c", f'{self.joins()} && exec "$@" || exit 125', "seam", *argv]

    def _oom_count(self) -> int:
        if self.memory is None:
            return 0
        if self.memory_v2:
            return _counter(self.memory / "memory.events", "oom_kill")
        return _counter(self.memory / "memory.oom_control", "oom_kill")

    def _pids_count(self) -> int:
        return 0 if self.pids is None else _counter(self.pids / "pids.events", "max")

    def oom_kills(self) -> int:
        """Processes of this call the memory cap killed."""
        return self.ooms if self.closed else max(0, self._oom_count() - self.oom_base)

    def pids_hits(self) -> int:
        """Forks of this call the process cap refused."""
        return max(0, self._pids_count() - self.pids_base)

    def alive(self) -> bool:
        return any(_read(d / "cgroup.procs").strip() for d in self.dirs)

    def idle(self) -> bool:
        """Empty, and at most a zombie or two still counted against the process cap (bwrap's
        init, which the host's pid 1 reaps in its own time); a killed fork loop still
        exiting would take the next call's room."""
        if self.alive():
            return False
        current = _read(self.pids / "pids.current").strip() if self.pids is not None else ""
        return not current.isdigit() or int(current) <= ZOMBIE_SLACK

    def kill(self) -> None:
        """SIGKILL every process in the call's cgroup (what `setsid` left behind too)."""
        if self.killer is not None and _write(self.killer / "cgroup.kill", "1"):
            return
        for _ in range(_KILL_ROUNDS):
            pids = {p for d in self.dirs for p in _read(d / "cgroup.procs").split()}
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)

    def remove(self) -> bool:
        """Remove the directories; False while a killed process has not exited yet."""
        kept = []
        for path in self.dirs:
            try:
                path.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                kept.append(path)
        self.dirs = kept
        return not kept


@dataclass(slots=True)
class _Hierarchy:
    base: Path  # where call cgroups are created
    controllers: frozenset[str]
    v2: bool


class Cgroups:
    """Finds, once, where this process can create cgroups, and makes one per call."""

    def __init__(self, hierarchies: list[_Hierarchy]) -> None:
        self._hierarchies = hierarchies
        self._ids = itertools.count(1)
        self._pending: list[CallCgroup] = []  # killed, not yet removable
        # Emptied call cgroups kept for the next calls: creating and removing one (a
        # memory cgroup above all) costs more than the command `true` itself.
        self._free: list[CallCgroup] = []

    @property
    def bases(self) -> list[Path]:
        """Where call cgroups are made (empty: nowhere, this process may not)."""
        return [h.base for h in self._hierarchies]

    @property
    def controllers(self) -> frozenset[str]:
        return frozenset().union(*(h.controllers for h in self._hierarchies))

    @classmethod
    def probe(cls, proc: Path = Path("/proc/self")) -> Cgroups:
        hierarchies: list[_Hierarchy] = []
        own = _own_paths(_read(proc / "cgroup"))
        for mount, kind, options in _mounts(_read(proc / "mounts")):
            if kind == "cgroup2":
                found = _v2_hierarchy(Path(mount))
            else:
                wanted = [c for c in _CONTROLLERS if c in options.split(",")]
                found = _v1_hierarchy(Path(mount), own, wanted) if wanted else None
            if found is not None:
                _remove_stale(found.base)
                hierarchies.append(found)
        if any(not h.v2 for h in hierarchies):  # hybrid: v1 does it all, a bare v2 adds a join
            hierarchies = [h for h in hierarchies if h.controllers or not h.v2]
        return cls(hierarchies)

    def open_call(self, limits: Limits, kind: str = "") -> CallCgroup | None:
        """A cgroup holding `limits` for a call of a `kind` of backend (one of its own kind
        emptied earlier, or a new one), or None when none can be made here."""
        for index, free in enumerate(self._free):
            # Killed, but bwrap's pid namespace may take a moment to empty: only reuse
            # an empty one (a leftover in it would count, and die, with the next call).
            if free.limits == limits and free.kind == kind and free.idle():
                del self._free[index]
                return free.reopened()
        self.sweep()
        if not self._hierarchies:
            return None
        name = f"seam-{os.getpid()}-{next(self._ids)}"
        call = CallCgroup(dirs=[], limits=limits, kind=kind)
        for hierarchy in self._hierarchies:
            path = hierarchy.base / name
            try:
                path.mkdir()
            except OSError as exc:
                log.debug("cannot create cgroup %s: %s", path, exc)
                continue
            call.dirs.append(path)
            if hierarchy.v2 and call.killer is None:
                call.killer = path if (path / "cgroup.kill").exists() else None
            self._limit(call, hierarchy, path, limits)
        return call if call.dirs else None

    @staticmethod
    def _limit(call: CallCgroup, hierarchy: _Hierarchy, path: Path, limits: Limits) -> None:
        if "memory" in hierarchy.controllers and call.memory is None and limits.memory_mb:
            size = str(limits.memory_mb * MB)
            if hierarchy.v2:
                ok = _write(path / "memory.max", size)
                _write(path / "memory.swap.max", "0")
            else:
                ok = _write(path / "memory.limit_in_bytes", size)
                _write(path / "memory.memsw.limit_in_bytes", size)
            if ok:
                call.memory, call.memory_v2 = path, hierarchy.v2
        cap = limits.max_processes
        wants_pids = "pids" in hierarchy.controllers and cap and call.pids is None
        if wants_pids and _write(path / "pids.max", str(cap)):
            call.pids = path

    def close_call(self, call: CallCgroup) -> None:
        """Kill what is left in the call's cgroup; keep it for another call once empty
        (or remove it, later if still busy)."""
        if call.closed:
            return
        call.kill()
        call.ooms = call.oom_kills()
        call.closed = True
        self._free.append(call)  # newest last: the oldest is likeliest to be empty
        while len(self._free) > POOL_SIZE:
            oldest = self._free.pop(0)
            if not oldest.remove():
                self._pending.append(oldest)

    def sweep(self) -> None:
        """Remove the call cgroups that were still busy when their call ended."""
        self._pending = [call for call in self._pending if not call.remove()]

    def clear(self) -> None:
        """Remove every cgroup kept for reuse (the process is done with sandboxes)."""
        self.sweep()
        self._pending += [call for call in self._free if not call.remove()]
        self._free.clear()


def _remove_stale(base: Path) -> None:
    """Empty call cgroups a Seam process that is gone left behind (it died mid-call)."""
    try:
        names = [p for p in base.iterdir() if p.name.startswith("seam-") and p.is_dir()]
    except OSError:
        return
    for path in names:
        pid = path.name.split("-")[1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                path.rmdir()


def _mounts(text: str) -> list[tuple[str, str, str]]:
    found = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
            found.append((parts[1], parts[2], parts[3]))
    return found


def _own_paths(text: str) -> dict[str, str]:
    """This process's cgroup per v1 controller ("" key: its v2 cgroup)."""
    paths: dict[str, str] = {}
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2) if line.count(":") >= 2 else ("", "", "")
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _v1_hierarchy(mount: Path, own: dict[str, str], wanted: list[str]) -> _Hierarchy | None:
    base = mount / own.get(wanted[0], "/").lstrip("/")
    if not os.access(base, os.W_OK):
        return None
    return _Hierarchy(base, frozenset(wanted), v2=False)


def _v2_hierarchy(mount: Path) -> _Hierarchy | None:
    base = mount / V2_DIR
    try:
        base.mkdir(exist_ok=True)
    except OSError:
        return None
    if not os.access(base, os.W_OK):
        return None
    available = set(_read(mount / "cgroup.controllers").split()) & set(_CONTROLLERS)
    for controller in sorted(available):
        # Enabled for our children (the root may; a populated non-root cgroup may not).
        _write(mount / "cgroup.subtree_control", f"+{controller}")
        _write(base / "cgroup.subtree_control", f"+{controller}")
    enabled = set(_read(base / "cgroup.subtree_control").split()) & available
    return _Hierarchy(base, frozenset(enabled), v2=True)


@cache
def shared_cgroups() -> Cgroups:
    """The process's one `Cgroups` (probed on first use; its cgroups removed at exit)."""
    cgroups = Cgroups.probe()
    atexit.register(cgroups.clear)
    return cgroups
