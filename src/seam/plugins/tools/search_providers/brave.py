"""Brave Search API: `GET https://api.search.brave.com/res/v1/web/search?q=...&count=N`
with the key in `X-Subscription-Token`. Web results are `web.results[]` objects with
`title`, `url` and `description` (which carries <strong> markup, removed by the tool)."""

from __future__ import annotations

from seam.plugins.tools.search_providers import SearchHit
from seam.plugins.tools.search_providers.http import HttpSearch, hits_from, lookup

API_ROOT = "https://api.search.brave.com"
MAX_COUNT = 20  # the API's own limit on `count`


class BraveSearch(HttpSearch):
    name = "brave"

    def __init__(self, key: str, *, url: str = "", timeout: float = 15.0) -> None:
        """`url` overrides the API root (a proxy, or a test's fake on loopback)."""
        super().__init__(
            url or API_ROOT, timeout=timeout, headers={"X-Subscription-Token": key}, secret=key
        )

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        params: dict[str, str | int] = {"q": query, "count": min(limit, MAX_COUNT)}
        data = await self._call("GET", "/res/v1/web/search", params=params)
        results = lookup(data, "web", "results")
        if results is None and isinstance(data, dict) and "web" not in data:
            return []  # a query with no web results has no `web` at all
        return hits_from(results, "title", "url", "description", self.name)[:limit]
