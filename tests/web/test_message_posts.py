"""The busy routes served outside the app (`apps/web/front.py`): a plain message is posted
and answered as FastAPI's route answers it, anything else is the route's to answer (its
body replayed), and every request is counted and rate-limited once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx

from seam.apps.web.message_posts import plain_message, plain_request
from seam.core import ScriptedModel
from seam.core.scripted_model import text_step
from seam.wiring.web_keys import WebSection
from tests.web.harness import serving, sse_events

ROUTE = "/api/sessions/m/messages"


def _scope(*headers: tuple[bytes, bytes], path: str = ROUTE) -> dict[str, object]:
    return {"method": "POST", "path": path, "headers": [(b"host", b"x"), *headers]}


def test_only_json_bodies_of_a_declared_length_within_the_cap_are_plain() -> None:
    json_type = (b"content-type", b"application/json")
    assert plain_request(_scope(json_type, (b"content-length", b"20")), 1000) == "m"
    charset = (b"content-type", b"Application/JSON; charset=utf-8")
    assert plain_request(_scope(charset, (b"content-length", b"20")), 1000) == "m"
    not_plain = [
        _scope((b"content-length", b"20")),  # no type: FastAPI parses it anyway
        _scope((b"content-type", b"application/merge-patch+json"), (b"content-length", b"2")),
        _scope((b"content-type", b"text/plain"), (b"content-length", b"20")),
        _scope(json_type),  # chunked or no length
        _scope(json_type, (b"transfer-encoding", b"chunked")),
        _scope(json_type, (b"content-length", b"20"), (b"content-length", b"20")),
        _scope(json_type, (b"content-length", b"x")),
        _scope(json_type, (b"content-length", b"20"), path="/api/sessions/m/cancel"),
    ]
    for scope in not_plain:
        assert plain_request(scope, 1000) is None, scope
    # Over the configured cap is still plain when the route's widened cap (images) allows.
    assert plain_request(_scope(json_type, (b"content-length", b"5000")), 1000) == "m"
    assert plain_request(_scope(json_type, (b"content-length", b"99999999")), 1000) is None


def test_only_bodies_the_routes_model_takes_as_they_are_are_plain() -> None:
    assert plain_message(b'{"text": "hi"}') == ("hi", None, None)
    assert plain_message(b'{"text": ""}') == ("", None, None)  # the backend's own 400
    full = {"text": "hi", "submission_id": "s", "personality": "p"}
    assert plain_message(json.dumps(full).encode()) == ("hi", "s", "p")
    nulls = {"text": "hi", "submission_id": None, "personality": None}
    assert plain_message(json.dumps(nulls).encode()) == ("hi", None, None)
    not_plain: list[object] = [
        {},
        {"text": None},
        {"text": 5},
        {"text": "x" * 200_001},
        {"text": "hi", "submission_id": ""},
        {"text": "hi", "submission_id": "s" * 201},
        {"text": "hi", "personality": "p" * 101},
        {"text": "hi", "images": []},
        {"text": "hi", "other": 1},
        ["text"],
    ]
    for body in not_plain:
        assert plain_message(json.dumps(body).encode()) is None, body
    assert plain_message(b'{"text": "\\ud800"}') is None  # a lone surrogate: pydantic's 422
    assert plain_message(b"{") is None
    assert plain_message(b"") is None


def _volatile(headers: httpx.Headers) -> list[tuple[str, str]]:
    return [(k, v) for k, v in headers.multi_items() if k != "date"]


async def test_a_plain_post_is_answered_as_the_route_answers_it(tmp_path: Path) -> None:
    model = ScriptedModel([text_step("done")])
    async with serving(model, tmp_path) as served, served.client() as client:
        body = {"text": "hi", "submission_id": "same"}
        first = await client.post(ROUTE, json=body)
        assert first.status_code == 202 and first.json()["id"] == "same"
        await sse_events(client, "/api/sessions/m/events")
        plain = await client.post(ROUTE, json=body)  # settled now: the same answer twice
        # A JSON type FastAPI reads as JSON, but that is not plain: the long way.
        other_type = {"Content-Type": "application/merge-patch+json"}
        long_way = await client.post(ROUTE, content=json.dumps(body), headers=other_type)
        assert plain.status_code == long_way.status_code == 202
        assert plain.content == long_way.content
        assert plain.json()["state"] == "settled" and plain.json()["session"] == "m"
        assert _volatile(plain.headers) == _volatile(long_way.headers)
        assert plain.headers["x-frame-options"] == "DENY"  # the security headers


async def test_what_is_not_plain_is_the_routes_to_answer(tmp_path: Path) -> None:
    model = ScriptedModel([text_step("one"), text_step("two")])
    async with serving(model, tmp_path) as served, served.client() as client:
        for body in ({"text": 5}, {"text": "hi", "other": 1}, {"text": "hi", "submission_id": ""}):
            refused = await client.post(ROUTE, json=body)
            assert refused.status_code == 422, body
            assert refused.json()["error"]["type"] == "invalid_request"
        empty = await client.post(ROUTE, json={"text": " "})
        assert empty.status_code == 400
        assert empty.json()["error"] == {"type": "invalid_request", "message": "text is empty"}
        # Replayed to FastAPI, which posts it: an empty images list is no image.
        posted = await client.post(ROUTE, json={"text": "hi", "images": []})
        assert posted.status_code == 202
        reader = await client.post("/api/sessions", json={"name": "r"})
        assert reader.status_code == 201
        keys = tmp_path / "keys.json"
        data = json.loads(keys.read_text())
        for key in data["keys"]:
            key["scope"] = "read"
        keys.write_text(json.dumps(data))
        refused = await client.post(ROUTE, json={"text": "hi"})
        assert refused.status_code == 403
        assert "may only read" in refused.json()["error"]["message"]


def _requests(metrics: str) -> int:
    found = re.search(r"^seam_http_requests_total (\d+)$", metrics, re.MULTILINE)
    assert found is not None
    return int(found.group(1))


async def test_each_request_is_counted_and_limited_once(tmp_path: Path) -> None:
    config = WebSection(rate_limit=6, heartbeat_seconds=1)
    model = ScriptedModel([text_step("one")])
    async with (
        serving(model, tmp_path, config=config) as served,
        served.client() as client,
    ):
        before = _requests((await client.get("/metrics")).text)  # 1
        assert (await client.post(ROUTE, json={"text": "hi"})).status_code == 202  # 2
        assert (await client.get("/api/sessions/ghost/events")).status_code == 404  # 3
        assert (await client.post(ROUTE, json={"text": 5})).status_code == 422  # 4
        after = _requests((await client.get("/metrics")).text)  # 5
        assert after == before + 4
        assert (await client.post(ROUTE, json={"text": "again"})).status_code == 202  # 6
        limited = await client.post(ROUTE, json={"text": "too many"})
        assert limited.status_code == 429 and "Retry-After" in limited.headers
        assert limited.json()["error"]["type"] == "rate_limited"
        assert limited.headers["x-frame-options"] == "DENY"


def test_the_plain_bounds_are_the_routes_own() -> None:
    """The fast path restates `NewMessage`'s fields and lengths (it cannot import the app
    that imports it); a field added to the model or a bound changed must change it too,
    or a body the route would refuse could be posted the fast way."""
    from annotated_types import MaxLen

    from seam.apps.web.app import NewMessage
    from seam.apps.web.message_posts import _LONGEST

    declared = {
        name: next(m.max_length for m in field.metadata if isinstance(m, MaxLen))
        for name, field in NewMessage.model_fields.items()
        if name != "images"
    }
    assert declared == _LONGEST
