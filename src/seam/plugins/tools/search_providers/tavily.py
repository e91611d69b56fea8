"""Tavily: `POST https://api.tavily.com/search` with a JSON body (`query`, `max_results`,
`search_depth`) and the key as `Authorization: Bearer tvly-...`. Results are `results[]`
objects with `title`, `url` and `content`."""

from __future__ import annotations

from seam.plugins.tools.search_providers import SearchHit
from seam.plugins.tools.search_providers.http import HttpSearch, hits_from, lookup

API_ROOT = "https://api.tavily.com"


class TavilySearch(HttpSearch):
    name = "tavily"

    def __init__(self, key: str, *, url: str = "", timeout: float = 15.0) -> None:
        """`url` overrides the API root (a proxy, or a test's fake on loopback)."""
        headers = {"Authorization": f"Bearer {key}"}
        super().__init__(url or API_ROOT, timeout=timeout, headers=headers, secret=key)

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        body = {"query": query, "max_results": limit, "search_depth": "basic"}
        data = await self._call("POST", "/search", body=body)
        return hits_from(lookup(data, "results"), "title", "url", "content", self.name)[:limit]
