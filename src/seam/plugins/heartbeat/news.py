"""Whether a beat has anything new to look at: when it has not, it makes no model call.

A beat is skipped as "nothing new since <time>" only when all of this holds:

- the last beat that ran (skipped beats aside) answered the all-clear (`ok`) and recorded
  the fingerprint of its inputs and when it read them;
- the inputs fingerprint the same now: the checklist text, the memory snapshot a beat is
  given, the beat's tools, and, when the checklist or the memory mentions days or dates
  ("today", "birthday", "due", "Monday", "2026-12-24"), the date in UTC and in every
  quiet-hours zone;
- nothing happened since it read them (`Activity`): no session other than the
  heartbeat's own was active (a new message, a reply), and no cron job other than the
  heartbeat settled a run (a result, a failure; a delivered notice comes from one of
  these).

When in doubt, it runs: a beat runs every slot when the checklist says so (a line
`every-beat: true`), mentions a time of day ("9:00", "hour", "morning", "meeting",
"soon"), or the beat has tools that reach outside Seam (`terminal`, `web_fetch`, an MCP
tool: nothing Seam sees says whether the world they read changed). A memory Seam cannot
read without freezing it, a damaged ledger, a store that cannot say what is new: all
run the beat.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol
from zoneinfo import ZoneInfo

from seam.plugins.heartbeat.ledger import HeartbeatLedger, HeartbeatRun

EVERY_BEAT = re.compile(r"^\W*every-beat\s*:\s*(?:true|yes|on)\b", re.IGNORECASE | re.MULTILINE)
TIME_OF_DAY = re.compile(
    r"\b(?:\d{1,2}:\d{2}|\d{1,2}\s*(?:am|pm)|hours?|hourly|minutes?|morning|afternoon|evening"
    r"|night|tonight|noon|midnight|o'clock|now|soon|upcoming|meetings?|appointments?|calendar)\b",
    re.IGNORECASE,
)
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
DATES = re.compile(
    r"\b(?:today|tomorrow|yesterday|dates?|days?|daily|weeks?|weekly|weekends?|months?"
    r"|monthly|years?|yearly|birthdays?|anniversar(?:y|ies)|deadlines?|due|overdue"
    rf"|remind(?:ers?)?|{_WEEKDAYS}|{_MONTHS}|\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}/\d{{1,2}})\b",
    re.IGNORECASE,
)
# Tools whose inputs the fingerprint and `Activity` already cover.
INWARD_TOOLS = frozenset({"memory", "memory_search", "session_search"})
# Seconds before the last all-clear's reading that still count as "since": a message
# written a moment before it (or a clock a little apart) runs the next beat once more.
MARGIN = 5.0
NOTHING_NEW = "nothing new since"
# Ledger lines searched back for the last beat that ran (none found: it runs).
LOOK_BACK = 200


class Activity(Protocol):
    """What happened that a beat should see, since a time."""

    async def since(self, at: float) -> str | None:
        """A few words on the first new thing found at or after `at`; None: nothing."""
        ...


def runs_every_slot(checklist: str, tools: Iterable[str]) -> str | None:
    """Why every slot runs whatever is new (see the module doc), or None."""
    if EVERY_BEAT.search(checklist):
        return "every-beat: true"
    if TIME_OF_DAY.search(checklist):
        return "the checklist mentions a time of day"
    outward = sorted(set(tools) - INWARD_TOOLS)
    if outward:
        return f"the beat has tools that reach outside Seam ({', '.join(outward)})"
    return None


def day_key(texts: Sequence[str], now: float, zones: Sequence[str]) -> str:
    """The dates texts that mention days are read against ("" when none does)."""
    if not any(DATES.search(text) for text in texts):
        return ""
    days = []
    for zone in ("UTC", *zones):
        try:
            days.append(datetime.fromtimestamp(now, ZoneInfo(zone)).date().isoformat())
        except (ValueError, KeyError):  # a zone this machine does not know: UTC counts
            days.append(datetime.fromtimestamp(now, UTC).date().isoformat())
    return ",".join(days)


def fingerprint(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:32]


def last_ran(ledger: HeartbeatLedger) -> HeartbeatRun | None:
    """The last beat that ran (not skipped) among the last `LOOK_BACK` lines."""
    for run in reversed(ledger.recent(LOOK_BACK)):
        if run.status != "skipped":
            return run
    return None


def when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")


@dataclass
class BeatNews:
    """What tells a beat whether anything is new (see the module doc): the memory
    snapshot a beat is given (None: it cannot be read as it is), what happened since a
    time, the beat's tools and the person's zones."""

    memory: Callable[[], str | None]
    activity: Activity
    tools: Sequence[str] = ()
    zones: Sequence[str] = field(default_factory=tuple)

    def inputs(self, checklist: str, now: float) -> str | None:
        """The fingerprint of what a beat due now reads; None: it runs whatever it is."""
        if runs_every_slot(checklist, self.tools) is not None:
            return None
        memory = self.memory()
        if memory is None:
            return None
        day = day_key((checklist, memory), now, self.zones)
        return fingerprint(checklist.strip(), memory, ",".join(sorted(self.tools)), day)

    async def nothing_new(self, ledger: HeartbeatLedger, inputs: str | None) -> str | None:
        """The reason a beat with these `inputs` is skipped, or None: it runs."""
        if inputs is None:
            return None
        last = last_ran(ledger)
        if last is None or last.status != "ok" or last.inputs != inputs:
            return None
        if last.inputs_at is None:
            return None
        try:
            news = await self.activity.since(last.inputs_at - MARGIN)
        except Exception:  # cannot tell: run
            return None
        return None if news is not None else f"{NOTHING_NEW} {when(last.inputs_at)}"
