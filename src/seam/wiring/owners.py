"""Who holds a lease: worker identities that say whether their process is still alive.

An owner id is `<host>:<pid>:<start time>`. On the same host a lease held by a process
that no longer exists (or whose pid now belongs to a newer process) can be reclaimed at
once, so `seam resume` right after a crash does not wait out the 30-second lease. On
other hosts nothing is known, and their leases expire as usual.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence

HOST = socket.gethostname()


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    # Field 22, counted after the command name, which is in parentheses and may hold spaces.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def owner_id(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{HOST}:{pid}:{_start_time(pid) or '0'}"


def dead_owners(owners: Sequence[str]) -> list[str]:
    """The owners in `owners` known to be dead: this host's, whose process is gone."""
    dead = []
    for owner in owners:
        host, _, rest = owner.partition(":")
        pid_text, _, started = rest.partition(":")
        if host != HOST or not pid_text.isdigit():
            continue
        if _start_time(int(pid_text)) != started:
            dead.append(owner)
    return dead
