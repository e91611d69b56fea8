"""The `session_search` tool: full-text search over past conversations.

It leaves the current session out: its messages are already in the model's context (or
in the summary compression left), and being the newest they would crowd out the past the
model is asking about. Hits come newest first, one short line each: the session (its
title when it has one, else its key), when it was last active, who spoke, and a snippet
of at most 160 characters around the match. The search rules are the store's: whole
words, every word required, case and accents ignored, user and assistant messages only.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from seam.contracts.sessions import SearchScope, SessionInfo, SessionStore
from seam.contracts.tool_spec import SpecTool, ToolSpec
from seam.contracts.tools import ToolContext, ToolError, ToolRegistry

DEFAULT_LIMIT = 5
MAX_LIMIT = 20


class SessionSearchTool(SpecTool):
    spec = ToolSpec(
        name="session_search",
        description=(
            "Search your past conversations with this user (not the current one) for words; "
            "returns short snippets, newest first."
        ),
        arguments={
            "query": {"type": "string", "description": "Words that must all appear."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
        },
        required=("query",),
        concurrent=True,
        idempotent=True,
    )

    def __init__(self, sessions: SessionStore | None) -> None:
        self._sessions = sessions

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        if self._sessions is None:
            raise ToolError("session search is not configured")
        # Types and the limit's range are checked against the schema before `run`.
        query: str = args["query"]
        if not query.strip():
            raise ToolError("give one or more words to search for in 'query'")
        limit = int(args.get("limit", DEFAULT_LIMIT))
        # Only this tenant's conversations: one person's agent never reads another's.
        own = await self._sessions.get(ctx.session_key)
        tenant = own.tenant if own is not None else None
        hits = await self._sessions.search(
            query, limit, SearchScope(exclude_session=ctx.session_key, tenant=tenant)
        )
        if not hits:
            return f"No past conversation has all of these words: {query.strip()}"
        infos: dict[str, SessionInfo | None] = {}
        lines = [f"{len(hits)} match{'es' if len(hits) > 1 else ''}, newest first:"]
        for hit in hits:
            if hit.session_key not in infos:
                infos[hit.session_key] = await self._sessions.get(hit.session_key)
            lines.append(
                f"- {_where(hit.session_key, infos[hit.session_key])} {hit.role}: {hit.snippet}"
            )
        return "\n".join(lines)


def _where(key: str, info: SessionInfo | None) -> str:
    if info is None:  # deleted between the search and now
        return f"[{key}]"
    name = f'"{info.title}"' if info.title else key
    day = time.strftime("%Y-%m-%d", time.gmtime(info.updated_at))
    return f"[{name}, {day}]"


def register_session_search_tool(registry: ToolRegistry, sessions: SessionStore | None) -> None:
    registry.register_tool(SessionSearchTool(sessions))
