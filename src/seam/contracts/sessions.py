"""The conversation store: sessions and their ordered transcripts.

Small on purpose (see openai-agents' `Session`): what the loop needs (create, read,
append) plus what surfaces need to find a past conversation (list, search, title) and to
look after the store (export, prune, undo).

Vocabulary: a *turn* is a user message and everything after it up to the next user
message; a *lineage* is a chain of sessions linked by `parent_key` (a subagent's session,
a conversation continued under a new title); a session is *ended* once `end` marks it,
and only ended sessions are ever pruned.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol, runtime_checkable

from seam.contracts.images import image_summary
from seam.contracts.messages import EMPTY_USAGE, Message, Usage


class SessionNotFound(KeyError):
    pass


class DuplicateTitle(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class SessionInfo:
    key: str
    title: str | None
    personality: str | None
    created_at: float
    updated_at: float
    message_count: int
    parent_key: str | None = None
    ended: bool = False
    # The session's spec, kept so any process can rebuild it (SessionFactory.resolve):
    # its tenant, its tool names (None: the personality's toolset) and model override.
    tenant: str | None = None
    tools: tuple[str, ...] | None = None
    model: str | None = None
    # When `end` first marked the session ended (None while it is open).
    ended_at: float | None = None
    # Where its turns run (an editor's project, per ACP); None: the runtime's directory.
    # Part of the spec, so a resumed turn runs where it started.
    working_dir: str | None = None


@dataclass(frozen=True, slots=True)
class NewSession:
    """What a session is created with, past its key: the `SessionInfo` fields its
    creator chooses (its spec and where it sits in a lineage)."""

    personality: str | None = None
    title: str | None = None
    parent_key: str | None = None
    tenant: str | None = None
    tools: Sequence[str] | None = None
    model: str | None = None


PLAIN_SESSION = NewSession()


@dataclass(frozen=True, slots=True)
class SearchScope:
    """Which sessions `search` looks in: all but `exclude_session` (the asking one, so
    its own words are not found again), and only those created for `tenant` when given."""

    exclude_session: str | None = None
    tenant: str | None = None

    def covers(self, info: SessionInfo) -> bool:
        """Whether the session is searched."""
        if info.key == self.exclude_session:
            return False
        return self.tenant is None or info.tenant == self.tenant


ANY_SESSION = SearchScope()


@dataclass(frozen=True, slots=True)
class SearchHit:
    session_key: str
    message_index: int
    role: str
    snippet: str
    # Store-wide id of the message (`session_for_message` finds its session again). Stable
    # while the message exists; the id of a removed message may be handed out again.
    message_id: int


@dataclass(frozen=True, slots=True)
class LoadedSession:
    """A session's row and its whole transcript, read together (they agree)."""

    info: SessionInfo
    messages: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """Tokens (and cost, when the model's price is known) of one model call."""

    provider: str
    model: str
    usage: Usage
    cost_usd: float | None = None
    turn_id: str = ""


@dataclass(frozen=True, slots=True)
class UsageTotals:
    calls: int = 0
    usage: Usage = EMPTY_USAGE
    cost_usd: float = 0.0
    # Calls whose price was unknown (their cost is not in cost_usd).
    unpriced_calls: int = 0


PREVIEW_CHARS = 80


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One row of the rich list: what a person scanning past sessions wants to see."""

    info: SessionInfo
    user_messages: int
    assistant_messages: int
    tool_messages: int
    usage: UsageTotals
    # The first user message on one line, at most PREVIEW_CHARS ("" when there is none).
    preview: str

    @property
    def last_activity(self) -> float:
        return self.info.updated_at


def preview_line(text: str) -> str:
    """`text` folded onto one line and cut to PREVIEW_CHARS (an ellipsis marks a cut)."""
    line = " ".join(text.split())
    return line if len(line) <= PREVIEW_CHARS else line[: PREVIEW_CHARS - 1] + "…"


# DOTALL: a title holding a line break is numbered as any other.
_NUMBERED = re.compile(r"(.*\S) #([1-9][0-9]*)", re.DOTALL)


def lineage_base(title: str) -> str:
    """`title` without a ` #N` lineage suffix ("Trip #3" -> "Trip")."""
    match = _NUMBERED.fullmatch(title)
    return title if match is None else match.group(1)


def next_lineage_title(base: str, taken: Iterable[str]) -> str:
    """The rule of `SessionStore.next_title`, given the titles in use that are `base` or
    start with `base #` (others are ignored): `base #N` counts when N is digits without a
    leading zero. String tests, no regex: cheap enough to run over a long lineage."""
    prefix = f"{base} #"
    at = len(prefix)
    highest = 0
    for title in taken:
        if title == base:
            number = 1
        elif title.startswith(prefix):
            number = _lineage_number(title[at:])
        else:
            continue
        if number > highest:
            highest = number
    return lineage_title(base, highest)


def lineage_title(base: str, highest: int) -> str:
    """The next title of lineage `base` when its highest number taken is `highest` (0:
    none taken)."""
    return base if highest == 0 else f"{base} #{highest + 1}"


def lineage_places(title: str) -> tuple[tuple[str, int], ...]:
    """The lineages `title` counts in with its number in each, as `next_lineage_title`
    counts: its own (1) and, for "X #N", X's (N). For a store that indexes lineages."""
    head, sep, digits = title.rpartition(" #")
    number = _lineage_number(digits) if sep else 0
    return ((title, 1), (head, number)) if number else ((title, 1),)


def _lineage_number(digits: str) -> int:
    """`digits` as a lineage number: 0 unless ASCII digits without a leading zero."""
    return int(digits) if digits.isascii() and digits.isdigit() and digits[0] != "0" else 0


def message_to_dict(message: Message) -> dict[str, Any]:
    """A message in the export format; its images named by hash, type and size (their
    bytes stay in the store), and only when it has some."""
    out = {
        "role": message.role,
        "content": message.content,
        "tool_calls": [
            {"id": call.id, "name": call.name, "arguments": call.arguments}
            for call in message.tool_calls
        ],
        "tool_call_id": message.tool_call_id,
        "name": message.name,
        "interrupted": message.interrupted,
    }
    if message.images:
        out["images"] = [image_summary(image) for image in message.images]
    return out


def usage_to_dict(totals: UsageTotals) -> dict[str, Any]:
    u = totals.usage
    return {
        "calls": totals.calls,
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_read_tokens": u.cache_read_tokens,
        "cache_write_tokens": u.cache_write_tokens,
        "reasoning_tokens": u.reasoning_tokens,
        "cost_usd": round(totals.cost_usd, 6),
        "unpriced_calls": totals.unpriced_calls,
    }


def session_to_dict(
    info: SessionInfo, messages: Sequence[Message], usage: UsageTotals
) -> dict[str, Any]:
    """The export format, the same from every backend: every `SessionInfo` field (tuples
    as lists), then `messages` (in order) and `usage` (the session's totals)."""
    out: dict[str, Any] = {}
    for f in fields(info):
        value = getattr(info, f.name)
        out[f.name] = list(value) if isinstance(value, tuple) else value
    out["messages"] = [message_to_dict(m) for m in messages]
    out["usage"] = usage_to_dict(usage)
    return out


# Argument rules every backend applies the same way.


def check_limit(limit: int) -> None:
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")


def check_page(limit: int | None) -> None:
    """`messages`' limit: None (to the end) or a count, never negative."""
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0 or None, got {limit}")


def check_idle(idle_seconds: float) -> None:
    if not idle_seconds >= 0:  # also refuses NaN
        raise ValueError(f"idle_seconds must be >= 0, got {idle_seconds}")


def check_title(title: str) -> None:
    if not title.strip():
        raise ValueError(f"title must not be blank, got {title!r}")


@runtime_checkable
class Transcript(Protocol):
    """One conversation: its row and its messages, read and written.

    For `SessionFactory` and the agent loop's turns (create, load, append), and ACP and
    the runtime, which keep where a session's turns run (`set_working_dir`)."""

    async def create(self, key: str, new: NewSession = PLAIN_SESSION) -> SessionInfo:
        """Create the session, or return the existing one unchanged (idempotent)."""
        ...

    async def get(self, key: str) -> SessionInfo | None:
        """The session's row alone (cheap: no transcript)."""
        ...

    async def load(self, key: str) -> LoadedSession | None:
        """The row and the whole transcript from one consistent read; None when unknown."""
        ...

    async def append(self, key: str, messages: Sequence[Message]) -> None:
        """Append in order, atomically. Raises SessionNotFound for an unknown key."""
        ...

    async def messages(self, key: str, start: int = 0, limit: int | None = None) -> list[Message]:
        """Messages `start`.. in order (negative start counts from the end)."""
        ...

    async def touch(self, key: str) -> None:
        """Mark activity without a message (`updated_at` = now). Raises SessionNotFound."""
        ...

    async def set_working_dir(self, key: str, path: str | None) -> None:
        """Store where the session's turns run (None: the runtime's own directory), so a
        process resuming it works there too. Raises SessionNotFound."""
        ...


@runtime_checkable
class SessionTitles(Protocol):
    """Unique session titles, so a person can name a session and find it by name.

    For the titles hook (names a session with the next title of a lineage) and
    `seam sessions` (finds a session by its title)."""

    async def set_title(self, key: str, title: str) -> None:
        """Titles are unique across sessions: raises DuplicateTitle."""
        ...

    async def find_by_title(self, title: str) -> SessionInfo | None: ...

    async def next_title(self, title: str) -> str:
        """A free title for the next session of a lineage named `title`: `title` itself
        when no session uses it or a numbered form of it, else `title #N` with N one more
        than the highest number taken (`title` alone counts as 1). A ` #N` suffix on
        `title` is dropped first, so continuing "X #2" proposes "X #3". Only a proposal:
        another writer may take it before `set_title`, which then raises DuplicateTitle."""
        ...

    async def set_next_title(self, key: str, title: str) -> str | None:
        """Give an untitled session `next_title(title)`, picked and written in one
        transaction, and return it; None (nothing written) when the session has a title.
        Concurrent callers get distinct titles: none of them is refused the number
        another took, so sessions titled alike in a burst cost one write each. Raises
        SessionNotFound for an unknown key, ValueError for a blank title."""
        ...


@runtime_checkable
class SessionCatalogue(Protocol):
    """Finding past sessions among all of them: recent lists and full-text search.

    For the surfaces that list sessions (`seam sessions`, the web API) and the
    session-search tool (a hit's message leads back to its session)."""

    async def list(self, limit: int = 50) -> list[SessionInfo]:
        """Most recently updated first."""
        ...

    async def list_rich(self, limit: int = 50) -> builtins.list[SessionSummary]:
        """`list`'s sessions, in its order, with message counts, usage and a preview."""
        ...

    async def list_recently_active(
        self, since: float, limit: int = 50
    ) -> builtins.list[SessionInfo]:
        """Sessions with activity at or after `since` (seconds since the epoch), most
        recently updated first."""
        ...

    async def search(
        self, query: str, limit: int = 20, scope: SearchScope = ANY_SESSION
    ) -> builtins.list[SearchHit]:
        """Full-text search over message content; any user text is a valid query.
        Only the sessions `scope` covers are searched (still `limit` hits)."""
        ...

    async def session_for_message(self, message_id: int) -> SessionInfo | None:
        """The session holding the message a `SearchHit.message_id` names; None when the
        message no longer exists."""
        ...

    async def resolve_root(self, key: str) -> SessionInfo:
        """The top of the session's lineage: follows `parent_key` while the parent
        exists (a missing parent or a loop ends the walk). Raises SessionNotFound."""
        ...


@runtime_checkable
class SessionUpkeep(Protocol):
    """Looking after the store rather than one conversation's turn.

    For `seam sessions` (export, prune, delete), the runtime's idle sweep (`end_idle`)
    and taking turns back (`undo`)."""

    async def end(self, key: str) -> None:
        """Mark the session ended; `ended_at` keeps the first time. Not activity, and the
        session still accepts messages. Raises SessionNotFound."""
        ...

    async def end_idle(self, idle_seconds: float) -> int:
        """End every open session with no activity for `idle_seconds`; returns how many.
        Each is marked ended as of when it went idle (last activity + `idle_seconds`), so
        `prune` ages it from then, not from whenever this ran."""
        ...

    async def undo(self, key: str, turns: int = 1) -> int:
        """Remove the last `turns` turns (each a user message and everything after it; all
        of them when there are fewer) and return how many messages went. Messages before
        the first user message stay; recorded usage stays (it was spent). Counts as
        activity when something was removed. Raises SessionNotFound."""
        ...

    async def export(self, key: str) -> dict[str, Any]:
        """The session as a JSON-ready dict (`session_to_dict`). Raises SessionNotFound."""
        ...

    async def export_all(self) -> builtins.list[dict[str, Any]]:
        """Every session as `export` gives it, oldest first (created_at, then key)."""
        ...

    async def prune(self, older_than_days: float) -> int:
        """Delete ended sessions with no activity and no `end` within the last
        `older_than_days` days; returns how many. Sessions not ended are never touched."""
        ...

    async def delete(self, key: str) -> bool: ...


@runtime_checkable
class UsageLedger(Protocol):
    """Tokens (and cost) of each model call, summed per session.

    The turn records each call (alone here, or with its messages through
    `ExecutionStore.append_for`); `/usage`, `seam sessions`, the web API and the
    heartbeat read the totals."""

    async def record_usage(self, key: str, record: UsageRecord) -> None:
        """Add one model call's usage to the session. Raises SessionNotFound."""
        ...

    async def usage_totals(self, key: str) -> UsageTotals:
        """Summed over every recorded call of the session. Raises SessionNotFound."""
        ...


@runtime_checkable
class SessionRenamer(Protocol):
    """A store that moves a session to another key in one step, with everything keyed by
    it (transcript, usage, submissions, events, checkpoints): a rename, where the name is
    part of the key. False when `old` does not exist; `new` must not exist."""

    async def rename(self, old: str, new: str) -> bool: ...


@runtime_checkable
class SessionStore(
    Transcript, SessionTitles, SessionCatalogue, SessionUpkeep, UsageLedger, Protocol
):
    """The whole conversation store, as backends implement it and wiring hands it out:
    every consumer's protocol above, plus closing. Code that needs only part of it can
    ask for that part (`Transcript`, `SessionCatalogue`, ...)."""

    async def aclose(self) -> None: ...
