"""Resource limits for one command: memory, processes, file size and CPU time.

Two mechanisms, because neither works everywhere:

- A cgroup per call (`cgroups.py`) where this process can create one (root on cgroup v2,
  or v1 as here): `memory.max` counts what the processes really use (a JVM's reserved
  address space does not trip it), `pids.max` binds root too, and killing the cgroup ends
  every process of the call, daemons that `setsid` out of the process group included.
- `setrlimit`, always, by a one-line `ulimit` prelude in the shell that runs the command,
  so no `preexec_fn` fork of this process is needed: file size (`RLIMIT_FSIZE`) and CPU
  seconds per process (`RLIMIT_CPU`) everywhere; address space (`RLIMIT_AS`) only when no
  memory cgroup exists (it counts reservations, so a JVM needs `memory_mb` above its heap);
  and under bubblewrap without a pids cgroup, `RLIMIT_NPROC`, set inside the sandbox's new
  user namespace, where it counts only the sandbox's own processes. For uid 0 the kernel
  never enforces `RLIMIT_NPROC`: root relies on the pids cgroup.

Soft and hard limits are both set, and capabilities are dropped, so a command cannot
raise them again. A limit already lower on the host is kept (never raised).
"""

from __future__ import annotations

import resource
import signal
from dataclasses import dataclass

MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-call caps; 0 turns one off. Named after their `[sandbox]` config keys."""

    memory_mb: int = 2048
    max_processes: int = 256
    max_file_mb: int = 1024
    cpu_seconds: int = 300

    def __post_init__(self) -> None:
        for name in ("memory_mb", "max_processes", "max_file_mb", "cpu_seconds"):
            if getattr(self, name) < 0:
                value = getattr(self, name)
                raise ValueError(f"Limits.{name} must be 0 (off) or more, got {value}")

    def describe(self) -> str:
        """`memory 2048 MB, 256 processes, files 1024 MB, CPU 300 s` (what is on)."""
        parts = [
            f"memory {self.memory_mb} MB" if self.memory_mb else "memory unlimited",
            f"{self.max_processes} processes" if self.max_processes else "processes unlimited",
            f"files {self.max_file_mb} MB" if self.max_file_mb else "files unlimited",
            f"CPU {self.cpu_seconds} s" if self.cpu_seconds else "CPU unlimited",
        ]
        return ", ".join(parts)


DEFAULT_LIMITS = Limits()
NO_LIMITS = Limits(memory_mb=0, max_processes=0, max_file_mb=0, cpu_seconds=0)


def _capped(kind: int, wanted: int) -> int:
    """`wanted`, or the host's hard limit when that is lower (it cannot be raised)."""
    _, hard = resource.getrlimit(kind)
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)


def ulimit_prelude(limits: Limits, *, memory_rlimit: bool, nproc_rlimit: bool) -> str:
    """The `ulimit` line a bash runs before the command ("" when nothing is limited)."""
    flags: list[str] = []
    if limits.max_file_mb:  # bash counts -f in 1024-byte blocks
        flags += ["-f", str(_capped(resource.RLIMIT_FSIZE, limits.max_file_mb * MB) // 1024)]
    if memory_rlimit and limits.memory_mb:
        flags += ["-v", str(_capped(resource.RLIMIT_AS, limits.memory_mb * MB) // 1024)]
    if nproc_rlimit and limits.max_processes:
        flags += ["-u", str(_capped(resource.RLIMIT_NPROC, limits.max_processes))]
    lines = [f"ulimit -S -H {' '.join(flags)}"] if flags else []
    if limits.cpu_seconds:
        # SIGXCPU at the soft limit (a clear cause); with soft == hard the kernel would
        # send SIGKILL instead, so the hard one, a SIGKILL, comes a second later.
        seconds = _capped(resource.RLIMIT_CPU, limits.cpu_seconds)
        lines.append(f"ulimit -S -t {seconds} && ulimit -H -t {seconds + 1}")
    return " && ".join(lines)


def limited_script(command: str, prelude: str) -> str:
    """The script the shell runs: the limits, then `command`, on the same first line (so
    the command's line numbers in error messages are what the model expects, and no
    second shell is started)."""
    return f"{prelude} || exit 126; {command}" if prelude else command


def signal_limit(exit_code: int, limits: Limits) -> str | None:
    """The limit a command's exit status says it hit (a signal kills it; the shell or
    bwrap reports it as 128 + the signal, asyncio as minus the signal)."""
    sig = -exit_code if exit_code < 0 else exit_code - 128 if exit_code > 128 else 0
    if sig == signal.SIGXCPU and limits.cpu_seconds:
        return f"CPU time limit ({limits.cpu_seconds} s; [sandbox] cpu_seconds)"
    if sig == signal.SIGXFSZ and limits.max_file_mb:
        return f"file size limit ({limits.max_file_mb} MB; [sandbox] max_file_mb)"
    return None


def memory_limit_text(limits: Limits) -> str:
    return f"memory limit ({limits.memory_mb} MB; [sandbox] memory_mb)"


def process_limit_text(limits: Limits) -> str:
    return f"process limit ({limits.max_processes} processes; [sandbox] max_processes)"


# What programs print when an allocation fails under RLIMIT_AS (no memory cgroup here).
_NO_MEMORY = ("MemoryError", "Cannot allocate memory", "bad_alloc", "out of memory")


def memory_rlimit_note(exit_code: int, output: str, limits: Limits) -> list[str]:
    """A note naming the memory cap when a failed command's output says it ran out."""
    if not limits.memory_mb or exit_code == 0 or not any(m in output for m in _NO_MEMORY):
        return []
    return [f"[the sandbox {memory_limit_text(limits)} may have stopped it]"]
