"""The `session_search` tool: search over past conversations, by words and by meaning.

It leaves the current session out: its messages are already in the model's context (or
in the summary compression left), and being the newest they would crowd out the past the
model is asking about. Hits come one short line each: the session (its title when it has
one, else its key), when it was last active, who spoke, a snippet of at most 160
characters around the match, and which signal found it. With a `SessionRecall` that
searches by meaning (`services/recall`), hits are the best first, by words (every word
required, case and accents ignored) and by meaning fused; without one they are the
store's full-text hits, newest first. User and assistant messages only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from seam.contracts.sessions import SearchHit, SearchScope, SessionInfo, SessionStore
from seam.contracts.tool_spec import SpecTool, ToolSpec
from seam.contracts.tools import ToolContext, ToolError, ToolRegistry

if TYPE_CHECKING:
    from seam.contracts.session_recall import RecallHit, SessionRecall

DEFAULT_LIMIT = 5
MAX_LIMIT = 20


class SessionSearchTool(SpecTool):
    spec = ToolSpec(
        name="session_search",
        description=(
            "Search your past conversations with this user (not the current one) by words "
            "and by meaning: a question in other words finds what was said; returns short "
            "snippets, best matches first, each saying whether words or meaning found it."
        ),
        arguments={
            "query": {
                "type": "string",
                "description": "What to look for: words, or a question about what was said.",
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
        },
        required=("query",),
        concurrent=True,
        idempotent=True,
    )

    def __init__(
        self, sessions: SessionStore | None, recall: Callable[[], SessionRecall] | None = None
    ) -> None:
        """`recall` builds the search by words and meaning when first needed (its module
        and the embedder load then); None: the store's full-text search alone."""
        self._sessions = sessions
        self._recall = recall

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
        scope = SearchScope(exclude_session=ctx.session_key, tenant=tenant)
        recall = None if self._recall is None else self._recall()
        if recall is None or not await recall.by_meaning():
            hits = await self._sessions.search(query, limit, scope)
            if not hits:
                return f"No past conversation has all of these words: {query.strip()}"
            return await self._lines(hits, [""] * len(hits), "newest first")
        found = await recall.search(query, limit, scope)
        if not found:
            return f"No past conversation matches: {query.strip()}"
        return await self._lines([f.hit for f in found], _found_by(found), "best first")

    async def _lines(self, hits: list[SearchHit], notes: list[str], order: str) -> str:
        assert self._sessions is not None
        infos: dict[str, SessionInfo | None] = {}
        lines = [f"{len(hits)} match{'es' if len(hits) > 1 else ''}, {order}:"]
        for hit, note in zip(hits, notes, strict=True):
            if hit.session_key not in infos:
                infos[hit.session_key] = await self._sessions.get(hit.session_key)
            where = _where(hit.session_key, infos[hit.session_key])
            lines.append(f"- {where} {hit.role}{note}: {hit.snippet}")
        return "\n".join(lines)


def _found_by(found: list[RecallHit]) -> list[str]:
    """Each hit's signals as the line shows them: " (words)", " (meaning)" or both."""
    return [f" ({' + '.join(f.signals)})" for f in found]


def _where(key: str, info: SessionInfo | None) -> str:
    if info is None:  # deleted between the search and now
        return f"[{key}]"
    name = f'"{info.title}"' if info.title else key
    day = time.strftime("%Y-%m-%d", time.gmtime(info.updated_at))
    return f"[{name}, {day}]"


def register_session_search_tool(
    registry: ToolRegistry,
    sessions: SessionStore | None,
    recall: Callable[[], SessionRecall] | None = None,
) -> None:
    registry.register_tool(SessionSearchTool(sessions, recall))
