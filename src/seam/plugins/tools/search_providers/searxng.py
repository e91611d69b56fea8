"""SearXNG: a metasearch engine the owner runs (or trusts), no key. Its JSON API is
`GET /search?q=...&format=json`, answered only when the instance's `search.formats`
lists json; results are objects with `title`, `url` and `content`."""

from __future__ import annotations

from seam.plugins.tools.search_providers import SearchHit
from seam.plugins.tools.search_providers.http import HttpSearch, hits_from, lookup


class SearxngSearch(HttpSearch):
    name = "searxng"

    def __init__(self, url: str, *, timeout: float = 15.0) -> None:
        """`url`: the instance's root (`http://127.0.0.1:8888`), as the owner configured it."""
        super().__init__(url, timeout=timeout, headers={})

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        # SearXNG pages by its own size (about 20) and takes no count: cut here.
        data = await self._call("GET", "/search", params={"q": query, "format": "json"})
        return hits_from(lookup(data, "results"), "title", "url", "content", self.name)[:limit]
