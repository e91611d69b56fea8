"""A tenant's sessions as the API shows them: listed (or found by a search), created,
shown. Only sessions whose key names the tenant are ever listed, so a key never sees,
or even learns of, another tenant's sessions."""

from __future__ import annotations

import secrets
import time
from typing import Any

from seam.apps.cli.durable import submission_dict
from seam.contracts.execution import EventLog, EventQuery, Submission
from seam.contracts.sessions import SessionInfo, UsageTotals, message_to_dict, usage_to_dict
from seam.wiring.runtime import Runtime
from seam.wiring.web import tenant_session_name

# Most sessions a listing reads, and search hits a search reads.
LIST_LIMIT = 500
SEARCH_LIMIT = 100


def session_info(name: str, info: SessionInfo, usage: UsageTotals | None = None) -> dict[str, Any]:
    """A listed session; with `usage` (the listings), its tokens and cost too."""
    out: dict[str, Any] = {
        "name": name,
        "title": info.title,
        "personality": info.personality,
        "message_count": info.message_count,
        "created_at": info.created_at,
        "updated_at": info.updated_at,
    }
    if usage is not None:
        out["usage"] = usage_to_dict(usage)
    return out


def new_session_name() -> str:
    """A name for a session the caller did not name."""
    return f"web-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


async def list_sessions(
    runtime: Runtime, tenant: str, query: str | None, *, usage: bool = False
) -> list[dict[str, Any]]:
    """`tenant`'s sessions (or those `query` finds); with `usage`, each one's tokens and
    cost too. Asked for, not always given: the rich listing that sums them costs about ten
    times the plain one, and the chat's sidebar lists sessions after every turn."""
    if query and query.strip():
        return await _search(runtime, tenant, query, usage)
    listed: list[tuple[SessionInfo, UsageTotals | None]]
    if not usage:
        listed = [(info, None) for info in await runtime.sessions.list(LIST_LIMIT)]
    else:
        rows = await runtime.sessions.list_rich(LIST_LIMIT)
        listed = [(row.info, row.usage) for row in rows]
    out = []
    for info, totals in listed:
        name = tenant_session_name(tenant, info.key)
        if name is not None:
            out.append(session_info(name, info, totals))
    return out


async def _search(runtime: Runtime, tenant: str, query: str, usage: bool) -> list[dict[str, Any]]:
    """Sessions with a hit, once each (their first hit's snippet), best first."""
    store = runtime.sessions
    seen: dict[str, dict[str, Any]] = {}
    for hit in await store.search(query, SEARCH_LIMIT):
        name = tenant_session_name(tenant, hit.session_key)
        if name is None or name in seen:
            continue
        info = await store.get(hit.session_key)
        if info is not None:
            totals = await store.usage_totals(hit.session_key) if usage else None
            seen[name] = {**session_info(name, info, totals), "snippet": hit.snippet}
    return list(seen.values())


def submission_entry(sub: Submission) -> dict[str, Any]:
    """A submission as `seam sessions show --json` lists it, plus what the page needs to
    say that a failed turn will run again (when: `not_before`; how often at most) and
    whether its input is in the transcript yet (`steps`: its turn wrote something; the
    input goes in with the turn's first write)."""
    return {
        **submission_dict(sub),
        "max_attempts": sub.max_attempts,
        "not_before": sub.not_before,
        "steps": sub.steps,
        "personality": sub.personality,
    }


async def session_detail(
    runtime: Runtime, key: str, name: str, info: SessionInfo
) -> dict[str, Any]:
    """The parts of `seam sessions show --json` (see `submission_entry`), the session's
    own personality (`info`'s; None: the default), and `events_after`: where a client
    showing this transcript follows the event log from (`replay_from`)."""
    store = runtime.store
    # Read first: the transcript read after it holds every turn the log holds up to it.
    last = await store.last_seq(key)
    messages = await store.messages(key)
    subs = await store.submissions(key)
    return {
        "key": key,
        "name": name,
        "personality": info.personality,
        "messages": [message_to_dict(m) for m in messages],
        "submissions": [submission_entry(s) for s in subs],
        "usage": usage_to_dict(await store.usage_totals(key)),
        "events_after": await replay_from(store, key, subs, last),
    }


async def replay_from(
    store: EventLog, key: str, subs: list[Submission], last: int, window: int = 1024
) -> int:
    """The sequence number to follow session `key`'s log after, for a client that shows
    the transcript read after `last` was: where the running turn began (its stored steps
    are shown as it streams), else `last` itself. Why: opening a session used to replay
    its whole log, every finished turn drawn and then dropped for the stored copy (15,000
    events for a session of 150 short answers, a second of work for the server and the
    browser on every open).

    A session runs one submission at a time, so the running one's events are the last
    ones: the log is read back from its end, `window` sequence numbers at first and
    eight times more each time, to the last event of another submission."""
    running = {s.id for s in subs if s.state == "running"}
    if not running:
        return last
    while True:
        after = max(0, last - window)
        records = await store.events(key, EventQuery(after_seq=after))
        other = next((r.seq for r in reversed(records) if r.submission_id not in running), None)
        if other is not None:
            return min(other, last)
        if after == 0:
            return 0
        window *= 8


__all__ = [
    "list_sessions",
    "new_session_name",
    "session_detail",
    "session_info",
    "submission_entry",
]
