"""What a beat reads besides its checklist, as `news.BeatNews` asks for it: the memory
snapshot it would be given, and what happened in the store since a time.

Activity is any session other than the heartbeat's own that was active (a message came
in, a reply went out) and any run of another cron job that settled (its result or its
failure). A notice delivered to the person comes from one of these (a chat reply, a cron
run), so it shows through them. The heartbeat's own sessions (`heartbeat:<slot>`,
`cron:heartbeat:<slot>`, the `heartbeat` personality) and its own job are left out, or
every beat would be news to the next one.
"""

from __future__ import annotations

from collections.abc import Callable

from seam.contracts.cron import CronStore
from seam.contracts.memory import MemoryProvider
from seam.contracts.sessions import SessionCatalogue, SessionInfo
from seam.plugins.heartbeat.cron_kind import HEARTBEAT_JOB
from seam.plugins.heartbeat.personality import HEARTBEAT_PERSONALITY

# Sessions active since then looked at; this many, all the heartbeat's own: it runs.
SESSIONS = 50
# Each job's newest runs looked at for one that settled since then.
RUNS = 5
OWN_PREFIXES = ("heartbeat:", f"cron:{HEARTBEAT_JOB}:")


def own_session(info: SessionInfo, name_of: Callable[[str], str]) -> bool:
    """Whether a session is one of the heartbeat's own beats (`name_of`: its public name
    from its storage key)."""
    if info.personality == HEARTBEAT_PERSONALITY:
        return True
    try:
        name = name_of(info.key)
    except ValueError:
        name = info.key
    return name.startswith(OWN_PREFIXES) or name == f"cron:{HEARTBEAT_JOB}"


class StoreActivity:
    """`news.Activity` over the session store and the cron store (None: no cron);
    `name_of` reads a session's public name from its storage key (wiring's)."""

    def __init__(
        self,
        sessions: SessionCatalogue,
        cron: CronStore | None,
        name_of: Callable[[str], str] = str,
    ) -> None:
        self.sessions = sessions
        self.cron = cron
        self.name_of = name_of

    async def since(self, at: float) -> str | None:
        active = await self.sessions.list_recently_active(at, limit=SESSIONS)
        for info in active:
            if not own_session(info, self.name_of):
                return f"session {info.title or info.key} was active"
        if len(active) >= SESSIONS:
            return "more sessions were active than Seam looks at"
        return await self._cron_since(at)

    async def _cron_since(self, at: float) -> str | None:
        if self.cron is None:
            return None
        for job in await self.cron.list_all():
            if job.id == HEARTBEAT_JOB or job.kind == "heartbeat":
                continue
            for run in await self.cron.runs(job.id, limit=RUNS):
                if run.outcome is not None and (run.settled_at or run.started_at) >= at:
                    return f"cron job {job.id} ran ({run.outcome})"
        return None


def beat_memory(memory: MemoryProvider | None) -> Callable[[], str | None]:
    """The memory snapshot a beat would be given, read as it is now: "" for no memory
    (None), None for a memory that cannot be read without freezing it (the beat runs)."""
    if memory is None:
        return lambda: ""
    snapshot: Callable[[], str | None] | None = getattr(memory, "snapshot", None)
    if not callable(snapshot):
        return lambda: None

    def read() -> str | None:
        try:
            return snapshot() or ""
        except Exception:  # unreadable now: cannot tell, so the beat runs
            return None

    return read
