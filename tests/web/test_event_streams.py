"""The events route served ahead of FastAPI (`apps/web/event_streams.py`): a plain request
streams with the same headers and wire format, everything else is FastAPI's route's to
answer (so its errors read as they always have), the route stays documented, and a client
that goes away ends its stream on the server."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from seam.apps.web.event_streams import plain_start
from seam.core import ScriptedModel
from seam.core.scripted_model import text_step
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.wiring.web_keys import WebSection
from tests.web.harness import serving, sse_events


def _scope(query: bytes = b"", last_event_id: bytes | None = None) -> dict[str, object]:
    headers = [(b"host", b"x")]
    if last_event_id is not None:
        headers.append((b"last-event-id", last_event_id))
    return {"query_string": query, "headers": headers}


def test_only_plain_start_points_are_served_ahead_of_the_router() -> None:
    assert plain_start(_scope()) == 0
    assert plain_start(_scope(b"after=7")) == 7
    assert plain_start(_scope(b"after=1&after=9&other=x")) == 9  # the last, as FastAPI
    assert plain_start(_scope(b"after=7", b"3")) == 3  # the header wins, as in the route
    assert plain_start(_scope(b"", b" ")) == 0
    assert plain_start(_scope(b"", b"-4")) == 0
    for query in (b"after=-1", b"after=x", b"after=", b"after=1.5"):
        assert plain_start(_scope(query)) is None, query  # FastAPI words the 422
    assert plain_start(_scope(b"", b"abc")) is None  # the route words the 400


async def test_errors_read_as_the_routes_always_did(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as client:
        await client.post("/api/sessions", json={"name": "e"})
        bad_id = await client.get("/api/sessions/e/events", headers={"Last-Event-ID": "abc"})
        assert bad_id.status_code == 400
        assert bad_id.json()["error"] == {
            "type": "invalid_request",
            "message": "Last-Event-ID must be an event's sequence number",
        }
        for query in ("after=-1", "after=x"):
            bad = await client.get(f"/api/sessions/e/events?{query}")
            assert bad.status_code == 422, query
            assert bad.json()["error"]["message"].startswith("query.after: ")
        missing = await client.get("/api/sessions/nobody/events")
        assert missing.status_code == 404
        assert missing.json()["error"] == {
            "type": "not_found",
            "message": "no session named 'nobody'",
        }
        posted = await client.post("/api/sessions/e/events")
        assert posted.status_code == 405
        no_key = await served.client(None).get("/api/sessions/e/events")
        assert no_key.status_code == 401


async def test_a_key_whose_scope_does_not_reach_the_route_is_refused(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as client:
        await client.post("/api/sessions", json={"name": "s"})
        keys = tmp_path / "keys.json"
        data = json.loads(keys.read_text())
        for key in data["keys"]:
            key["scope"] = "everything"  # unknown to this server: refused, 403
        keys.write_text(json.dumps(data))
        refused = await client.get("/api/sessions/s/events")
        assert refused.status_code == 403
        assert "scope 'everything' is unknown" in refused.json()["error"]["message"]


async def test_a_plain_stream_has_the_routes_headers_and_wire_format(tmp_path: Path) -> None:
    model = ScriptedModel([text_step("hello")])
    async with serving(model, tmp_path) as served, served.client() as client:
        await client.post("/api/sessions/w/messages", json={"text": "hi"})
        async with client.stream("GET", "/api/sessions/w/events") as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
            assert response.headers["cache-control"] == "no-cache"
            assert response.headers["x-accel-buffering"] == "no"
            assert response.headers["x-frame-options"] == "DENY"  # the security headers
            assert response.headers["transfer-encoding"] == "chunked"
            lines = response.aiter_lines()
            assert await anext(lines) == "retry: 1000"
            assert await anext(lines) == ""
            assert (await anext(lines)).startswith("id: 1")
            assert await anext(lines) == "event: run_start"
        events = await sse_events(client, "/api/sessions/w/events?after=1")
        assert events[0]["id"] == 2 and events[-1]["event"] == "done"


class CountingStore(SQLiteSessionStore):
    """Counts the reads an event stream's opening makes."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.reads: Counter[str] = Counter()

    async def get(self, key: str) -> Any:
        self.reads["get"] += 1
        return await super().get(key)

    async def events(self, *args: Any, **kwargs: Any) -> Any:
        self.reads["events"] += 1
        return await super().events(*args, **kwargs)

    async def session_events(self, *args: Any, **kwargs: Any) -> Any:
        self.reads["session_events"] += 1
        return await super().session_events(*args, **kwargs)


async def test_opening_a_stream_reads_the_session_and_its_log_at_once(tmp_path: Path) -> None:
    """A thousand browsers reconnecting at once each cost the server one store read, and
    the events they missed come in the same write as the stream's first line."""
    store = CountingStore(str(tmp_path / "sessions.db"))
    model = ScriptedModel([text_step("hello")])
    async with serving(model, tmp_path, store=store) as served, served.client() as client:
        await client.post("/api/sessions/w/messages", json={"text": "hi"})
        await sse_events(client, "/api/sessions/w/events")  # the turn is over
        store.reads.clear()
        async with client.stream("GET", "/api/sessions/w/events?after=1") as response:
            chunks = response.aiter_bytes()
            first = await anext(chunks)
        assert first.startswith(b"retry: 1000\n\nid: 2\n")
        assert b"event: done" in first  # everything after `after=1`, in the first write
        assert store.reads == Counter(session_events=1)


async def test_the_route_stays_documented(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as client:
        spec = (await client.get("/openapi.json")).json()
        route = spec["paths"]["/api/sessions/{name}/events"]["get"]
        assert "text/event-stream" in route["responses"]["200"]["content"]
        names = {p["name"] for p in route["parameters"]}
        assert names == {"name", "after", "last-event-id"}


async def test_clients_that_go_away_end_their_streams(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as client:
        await client.post("/api/sessions", json={"name": "gone"})
        for _ in range(10):
            async with client.stream("GET", "/api/sessions/gone/events") as response:
                assert await anext(response.aiter_lines()) == "retry: 1000"
        # Each disconnection is seen by the server's next turns of its loop; a request
        # or two later every stream has ended (bounded, no sleeping).
        for _ in range(200):
            if "seam_open_streams 0" in (await client.get("/metrics")).text:
                break
        assert "seam_open_streams 0" in (await client.get("/metrics")).text


async def test_a_stream_carries_cors_headers_when_origins_are_configured(tmp_path: Path) -> None:
    config = WebSection(cors_origins=["http://app.example"], heartbeat_seconds=0.5)
    async with (
        serving(ScriptedModel([]), tmp_path, config=config) as served,
        served.client() as client,
    ):
        await client.post("/api/sessions", json={"name": "c"})
        origin = {"Origin": "http://app.example"}
        for _ in range(2):  # the shared head is never changed in place
            async with client.stream("GET", "/api/sessions/c/events", headers=origin) as got:
                assert got.headers["access-control-allow-origin"] == "http://app.example"
                assert await anext(got.aiter_lines()) == "retry: 1000"
