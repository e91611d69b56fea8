"""Web search providers behind one small protocol, so `web_search` (plugins/tools/
web_search.py) speaks to SearXNG, Brave or Tavily the same way and a new provider is one
module: `search(query, limit)` gives raw hits or raises `SearchFailed` with one line.

Hits are returned as the provider sent them: cleaning (markup, control characters,
lengths) and the address check happen once, in the tool, for every provider alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result as the provider sent it: untrusted page text, not yet cleaned."""

    title: str
    url: str
    snippet: str


class SearchFailed(Exception):
    """The provider could not answer (HTTP error, timeout, a body that is not its JSON);
    the message is one line the model can read, never holding the API key."""


@runtime_checkable
class SearchProvider(Protocol):
    @property
    def name(self) -> str:
        """What the results and errors call it: "searxng", "brave", "tavily"."""
        ...

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        """At most `limit` hits for `query`, best first; `SearchFailed` when none came."""
        ...


__all__ = ["SearchFailed", "SearchHit", "SearchProvider"]
