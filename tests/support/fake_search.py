"""A fake web search service on 127.0.0.1 speaking each provider's real wire format, and
serving the pages its results point at.

- SearXNG: `GET /search?q=...&format=json` (403 without format=json, as an instance whose
  `search.formats` lacks json answers); results `{"title", "url", "content"}`.
- Brave: `GET /res/v1/web/search?q=...&count=N` with `X-Subscription-Token`; results in
  `web.results[]` as `{"title", "url", "description"}`; 401 for a wrong token.
- Tavily: `POST /search` with a JSON body and `Authorization: Bearer KEY`; results
  `{"title", "url", "content", "score"}`; 401 for a wrong key.
- Pages: `GET /page/NAME` answers `pages[NAME]` as HTML.

Tests set `hits` (what every provider answers), `fail_with` (a status and body for the
next searches), `raw` (a body sent as is), `redirect_to` (a 301 to there) or `stall`
(seconds before answering), and read `requests`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

KEY = "fake-search-key-0123456789abcdef"


@dataclass(frozen=True)
class Hit:
    title: str
    url: str
    snippet: str


@dataclass(frozen=True)
class SearchRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: Any


@dataclass
class FakeSearch:
    """The service's script and records; `url` is its root (http://127.0.0.1:PORT)."""

    url: str = ""
    key: str = KEY
    hits: list[Hit] = field(default_factory=list)
    pages: dict[str, str] = field(default_factory=dict)
    fail_with: tuple[int, str] | None = None
    raw: bytes | None = None
    stall: float = 0.0
    redirect_to: str = ""  # searches answer 301 to here
    requests: list[SearchRequest] = field(default_factory=list)

    def page_url(self, name: str) -> str:
        return f"{self.url}/page/{name}"

    def searches(self) -> list[SearchRequest]:
        return [r for r in self.requests if not r.path.startswith("/page/")]

    def answer(self, request: SearchRequest) -> tuple[int, bytes, str]:
        """(status, body, content type) for one request."""
        if request.path.startswith("/page/"):
            page = self.pages.get(request.path.removeprefix("/page/"))
            if page is None:
                return 404, b"<html><body>no such page</body></html>", "text/html"
            return 200, page.encode(), "text/html; charset=utf-8"
        if self.stall:
            time.sleep(self.stall)
        if self.redirect_to:
            return 301, b"", "text/html"
        if self.fail_with is not None:
            status, text = self.fail_with
            return status, text.encode(), "application/json"
        if self.raw is not None:
            return 200, self.raw, "application/json"
        return self._search(request)

    def _search(self, request: SearchRequest) -> tuple[int, bytes, str]:
        if request.method == "GET" and request.path == "/search":
            if request.query.get("format") != "json":
                return 403, b"<html>403 Forbidden</html>", "text/html"
            body: Any = {"query": request.query.get("q"), "results": self._items("content")}
        elif request.path == "/res/v1/web/search":
            if request.headers.get("x-subscription-token") != self.key:
                return _unauthorized("brave")
            count = int(request.query.get("count", "20"))
            body = {"type": "search", "web": {"type": "search", "results": self._items()[:count]}}
        elif request.method == "POST" and request.path == "/search":
            if request.headers.get("authorization") != f"Bearer {self.key}":
                return _unauthorized("tavily")
            wanted = int((request.body or {}).get("max_results", 5))
            body = {
                "query": (request.body or {}).get("query"),
                "results": self._items("content")[:wanted],
            }
        else:
            return 404, b'{"detail": "not found"}', "application/json"
        return 200, json.dumps(body).encode(), "application/json"

    def _items(self, snippet: str = "description") -> list[dict[str, Any]]:
        key = "content" if snippet == "content" else "description"
        return [{"title": h.title, "url": h.url, key: h.snippet, "score": 0.9} for h in self.hits]


def _unauthorized(provider: str) -> tuple[int, bytes, str]:
    said = {"brave": {"type": "ErrorResponse", "error": {"code": "SUBSCRIPTION_TOKEN_INVALID"}}}
    body = said.get(provider, {"detail": {"error": "Unauthorized: missing or invalid API key."}})
    return 401, json.dumps(body).encode(), "application/json"


def _handler(fake: FakeSearch) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._serve(None)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            self._serve(body)

        def _serve(self, body: Any) -> None:
            split = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(split.query).items()}
            headers = {k.lower(): v for k, v in self.headers.items()}
            request = SearchRequest(self.command, split.path, query, headers, body)
            fake.requests.append(request)
            status, payload, content_type = fake.answer(request)
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                if status == 301:
                    self.send_header("Location", fake.redirect_to)
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the client gave up (a timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def serve_fake_search() -> Iterator[FakeSearch]:
    """A running fake service, shut down after use."""
    fake = FakeSearch()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(name="fake_search")
def fake_search_fixture() -> Iterator[FakeSearch]:
    yield from serve_fake_search()
