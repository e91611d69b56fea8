"""The empty stack's session store: sessions and transcripts in process memory.

It keeps the same promises as the durable stores (the conformance suite runs against
both), so code tested against it behaves the same on SQLite. Every method finishes
without awaiting, which is what makes `append` atomic here.

Search matches whole words, case- and accent-insensitively, every query word required,
in user and assistant messages only; hits come newest first. Those are the rules of
the SQLite store's FTS5 index (unicode61 tokenizer), reproduced with a scan: fine at
the size an in-memory store lives at, and it keeps `append` free of indexing work.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from seam.contracts.context import CompactionRecord
from seam.contracts.images import as_stored
from seam.contracts.messages import Message
from seam.contracts.search import SEARCHED_ROLES, snippet, terms
from seam.contracts.sessions import (
    ANY_SESSION,
    PLAIN_SESSION,
    DuplicateTitle,
    LoadedSession,
    NewSession,
    SearchHit,
    SearchScope,
    SessionInfo,
    SessionNotFound,
    SessionSummary,
    UsageRecord,
    UsageTotals,
    check_idle,
    check_limit,
    check_page,
    check_title,
    lineage_base,
    preview_line,
    session_to_dict,
)
from seam.core.read_through import replaced
from seam.core.title_book import TitleBook

SECONDS_PER_DAY = 86_400.0


class _Record:
    __slots__ = ("info", "messages", "seqs", "usage")

    def __init__(self, info: SessionInfo) -> None:
        self.info = info
        self.messages: list[Message] = []
        self.usage = UsageTotals()
        # Store-wide append order of each message (ascending), so search can rank hits
        # newest first; it doubles as the message's id (`SearchHit.message_id`).
        self.seqs: list[int] = []


class InMemorySessionStore:
    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._sessions: dict[str, _Record] = {}
        self._titles = TitleBook()
        self._seq = 1  # message ids start at 1, as SQLite's do
        self._compactions: dict[str, list[CompactionRecord]] = {}

    def _record(self, key: str) -> _Record:
        try:
            return self._sessions[key]
        except KeyError:
            raise SessionNotFound(f"no session {key!r}") from None

    def _claim_title(self, key: str, title: str) -> None:
        check_title(title)
        other = self._titles.owner(title)
        if other is not None and other != key:
            raise DuplicateTitle(f"title {title!r} is already used by session {other!r}")

    async def create(self, key: str, new: NewSession = PLAIN_SESSION) -> SessionInfo:
        record = self._sessions.get(key)
        if record is not None:
            return record.info
        title = new.title
        if title is not None:
            self._claim_title(key, title)
            self._titles.put(title, key)
        now = self._clock()
        info = SessionInfo(
            key,
            title,
            new.personality,
            now,
            now,
            0,
            new.parent_key,
            tenant=new.tenant,
            tools=None if new.tools is None else tuple(new.tools),
            model=new.model,
        )
        self._sessions[key] = _Record(info)
        return info

    async def get(self, key: str) -> SessionInfo | None:
        record = self._sessions.get(key)
        return None if record is None else record.info

    async def append(self, key: str, messages: Sequence[Message]) -> None:
        record = self._record(key)
        if not messages:
            return
        record.messages.extend(as_stored(m) for m in messages)
        record.seqs.extend(range(self._seq, self._seq + len(messages)))
        self._seq += len(messages)
        record.info = replaced(
            record.info, updated_at=self._clock(), message_count=len(record.messages)
        )

    async def messages(self, key: str, start: int = 0, limit: int | None = None) -> list[Message]:
        transcript = self._record(key).messages
        check_page(limit)
        if limit is None:
            return transcript[start:]
        first = start if start >= 0 else max(0, len(transcript) + start)
        return transcript[first : first + limit]

    async def set_title(self, key: str, title: str) -> None:
        record = self._record(key)
        self._claim_title(key, title)
        old = record.info.title
        if old is not None:
            self._titles.drop(old)
        self._titles.put(title, key)
        record.info = replace(record.info, title=title)

    async def set_working_dir(self, key: str, path: str | None) -> None:
        record = self._record(key)
        record.info = replace(record.info, working_dir=path)

    async def find_by_title(self, title: str) -> SessionInfo | None:
        key = self._titles.owner(title)
        return None if key is None else self._sessions[key].info

    async def search(
        self, query: str, limit: int = 20, scope: SearchScope = ANY_SESSION
    ) -> list[SearchHit]:
        check_limit(limit)
        wanted = set(terms(query))
        if not wanted or not limit:
            return []
        found: list[tuple[int, str, int, Message]] = []
        for key, record in self._sessions.items():
            if not scope.covers(record.info):
                continue
            for index, message in enumerate(record.messages):
                if (
                    message.role in SEARCHED_ROLES
                    and message.content
                    and wanted.issubset(terms(message.content))
                ):
                    found.append((record.seqs[index], key, index, message))
        found.sort(key=_newest_first)
        return [
            SearchHit(key, index, message.role, snippet(message.content, wanted), seq)
            for seq, key, index, message in found[:limit]
        ]

    async def record_usage(self, key: str, record: UsageRecord) -> None:
        totals = self._record(key).usage
        priced = record.cost_usd is not None
        self._record(key).usage = UsageTotals(
            calls=totals.calls + 1,
            usage=totals.usage + record.usage,
            cost_usd=totals.cost_usd + (record.cost_usd or 0.0),
            unpriced_calls=totals.unpriced_calls + (0 if priced else 1),
        )

    async def usage_totals(self, key: str) -> UsageTotals:
        return self._record(key).usage

    async def delete(self, key: str) -> bool:
        record = self._sessions.pop(key, None)
        if record is None:
            return False
        self._compactions.pop(key, None)
        if record.info.title is not None:
            self._titles.drop(record.info.title)
        return True

    async def load(self, key: str) -> LoadedSession | None:
        record = self._sessions.get(key)
        return None if record is None else LoadedSession(record.info, tuple(record.messages))

    async def next_title(self, title: str) -> str:
        check_title(title)
        base = lineage_base(title)
        return self._titles.next_title(base)

    async def set_next_title(self, key: str, title: str) -> str | None:
        check_title(title)
        if self._record(key).info.title is not None:
            return None
        free = self._titles.next_title(lineage_base(title))
        await self.set_title(key, free)  # never suspends: nothing runs in between
        return free

    async def touch(self, key: str) -> None:
        record = self._record(key)
        record.info = replaced(record.info, updated_at=self._clock())

    async def end(self, key: str) -> None:
        record = self._record(key)
        if record.info.ended_at is None:
            record.info = replace(record.info, ended=True, ended_at=self._clock())

    async def end_idle(self, idle_seconds: float) -> int:
        check_idle(idle_seconds)
        cutoff = self._clock() - idle_seconds
        ended = 0
        for record in self._sessions.values():
            info = record.info
            if not info.ended and info.updated_at < cutoff:
                record.info = replace(info, ended=True, ended_at=info.updated_at + idle_seconds)
                ended += 1
        return ended

    async def list_rich(self, limit: int = 50) -> list[SessionSummary]:
        summaries: list[SessionSummary] = []
        for info in await self.list(limit):
            record = self._sessions[info.key]
            roles = [m.role for m in record.messages]
            first = next((m.content for m in record.messages if m.role == "user"), "")
            summaries.append(
                SessionSummary(
                    info,
                    roles.count("user"),
                    roles.count("assistant"),
                    roles.count("tool"),
                    record.usage,
                    preview_line(first),
                )
            )
        return summaries

    async def list_recently_active(self, since: float, limit: int = 50) -> list[SessionInfo]:
        check_limit(limit)
        active = (r.info for r in self._sessions.values() if r.info.updated_at >= since)
        return sorted(active, key=_recent_first)[:limit]

    async def session_for_message(self, message_id: int) -> SessionInfo | None:
        for record in self._sessions.values():
            at = bisect.bisect_left(record.seqs, message_id)
            if at < len(record.seqs) and record.seqs[at] == message_id:
                return record.info
        return None

    async def resolve_root(self, key: str) -> SessionInfo:
        info = self._record(key).info
        seen = {info.key}
        while info.parent_key is not None and info.parent_key not in seen:
            parent = self._sessions.get(info.parent_key)
            if parent is None:
                break
            seen.add(parent.info.key)
            info = parent.info
        return info

    async def export(self, key: str) -> dict[str, Any]:
        record = self._record(key)
        return session_to_dict(record.info, record.messages, record.usage)

    async def export_all(self) -> list[dict[str, Any]]:
        records = sorted(self._sessions.values(), key=lambda r: (r.info.created_at, r.info.key))
        return [session_to_dict(r.info, r.messages, r.usage) for r in records]

    async def prune(self, older_than_days: float) -> int:
        if not older_than_days >= 0:  # also refuses NaN
            raise ValueError(f"older_than_days must be >= 0, got {older_than_days}")
        cutoff = self._clock() - older_than_days * SECONDS_PER_DAY
        doomed = [
            key
            for key, record in self._sessions.items()
            if record.info.ended and _last_touched(record.info) < cutoff
        ]
        for key in doomed:
            await self.delete(key)
        return len(doomed)

    async def undo(self, key: str, turns: int = 1) -> int:
        if turns < 0:
            raise ValueError(f"turns must be >= 0, got {turns}")
        record = self._record(key)
        users = [i for i, m in enumerate(record.messages) if m.role == "user"]
        if not turns or not users:
            return 0
        cut = users[-min(turns, len(users))]
        removed = len(record.messages) - cut
        del record.messages[cut:]
        del record.seqs[cut:]
        record.info = replace(record.info, updated_at=self._clock(), message_count=cut)
        return removed

    async def record_compaction(self, key: str, record: CompactionRecord) -> None:
        self._record(key)
        self._compactions.setdefault(key, []).append(record)

    async def compactions(self, key: str) -> list[CompactionRecord]:
        self._record(key)
        return list(self._compactions.get(key, ()))

    async def aclose(self) -> None:
        return None

    # Defined last: once the class body binds `list`, later annotations would name this method.
    async def list(self, limit: int = 50) -> list[SessionInfo]:
        check_limit(limit)
        infos = sorted((r.info for r in self._sessions.values()), key=_recent_first)
        return infos[:limit]


def _last_touched(info: SessionInfo) -> float:
    """Last activity or the end, whichever came later (what prune measures age by)."""
    return max(info.updated_at, info.ended_at if info.ended_at is not None else info.updated_at)


def _recent_first(info: SessionInfo) -> tuple[float, str]:
    # Ties go to the smaller key: an arbitrary but stable order both backends share.
    return (-info.updated_at, info.key)


def _newest_first(hit: tuple[int, str, int, Message]) -> int:
    return -hit[0]
