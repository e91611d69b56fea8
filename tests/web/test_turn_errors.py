"""A model's errors and retries on the event stream, as the page reads them: a turn's
error under an event name a browser does not take for a lost connection, with the
provider's reason; each retry as it happens; a failed turn's reason in the session."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from seam.apps.web.retries import RetryBoard
from seam.services.llm.openai_compat import OpenAICompatProvider
from tests.support.openai_server import OpenAIServer, error_reply, text_reply
from tests.web.harness import read_sse, serving, sse_events

REASON = "Invalid value for 'temperature': must be at most 2"


def provider(server: OpenAIServer, retries: RetryBoard | None = None) -> OpenAICompatProvider:
    return OpenAICompatProvider(
        base_url=server.base_url, api_key="k", model="test-model", on_retry=retries
    )


async def test_a_model_error_is_a_turn_error_event_with_the_providers_reason(
    tmp_path: Path,
) -> None:
    body = {"error": {"message": REASON, "type": "invalid_request_error"}}
    with OpenAIServer() as server:
        server.push(error_reply(400, body))
        async with serving(provider(server), tmp_path) as served, served.client() as client:
            await client.post("/api/sessions/e/messages", json={"text": "hi"})
            events = await sse_events(client, "/api/sessions/e/events")
            names = [e["event"] for e in events]
            assert "error" not in names, names  # EventSource would call it a lost connection
            error = next(e for e in events if e["event"] == "turn_error")
            assert error["data"]["type"] == "error" and REASON in error["data"]["message"]
            assert events[-1]["data"]["finish_reason"] == "error"
            detail = (await client.get("/api/sessions/e")).json()
            sub = detail["submissions"][0]
            assert sub["outcome"] == "failed" and REASON in sub["error"]
            assert sub["max_attempts"] >= 1 and "not_before" in sub
            assert [m["role"] for m in detail["messages"]] == ["user"]


async def test_each_retry_reaches_the_stream_as_it_happens(tmp_path: Path) -> None:
    retries = RetryBoard()
    with OpenAIServer() as server:
        server.push(error_reply(503), text_reply("at last"))
        async with (
            serving(provider(server, retries), tmp_path, retries=retries) as served,
            served.client() as client,
        ):
            await client.post("/api/sessions", json={"name": "r"})
            async with client.stream("GET", "/api/sessions/r/events") as response:
                lines = response.aiter_lines()
                assert await anext(lines) == "retry: 1000"  # the stream follows retries now
                await client.post("/api/sessions/r/messages", json={"text": "hi"})
                events = await asyncio.wait_for(read_sse(lines), 20)
    names = [e["event"] for e in events]
    assert names.count("retry") == 1 and names.index("retry") < names.index("text_delta")
    retry = next(e for e in events if e["event"] == "retry")
    assert "id" not in retry  # live news: no sequence number to resume from
    data = retry["data"]
    assert data["attempt"] == 2 and data["attempts"] >= 2 and data["delay"] >= 0
    assert "503" in data["reason"] and data["message"].startswith("retrying in ")
    assert data["session_key"].endswith('"r"]') and data["submission_id"]
    ids = [e["id"] for e in events if "id" in e]
    assert ids == list(range(1, len(ids) + 1))


async def test_a_retry_of_another_session_or_outside_a_turn_reaches_no_stream() -> None:
    board = RetryBoard()
    from seam.contracts.model import RetryNotice
    from seam.wiring.web import LOG_FIELDS

    with board.subscribe("mine") as queue:
        board(RetryNotice(2, 3, 1.0, "HTTP 503"))
        token = LOG_FIELDS.set({"session": "other", "submission": "s"})
        board(RetryNotice(2, 3, 1.0, "HTTP 503"))
        LOG_FIELDS.reset(token)
        token = LOG_FIELDS.set({"session": "mine", "submission": "s"})
        board(RetryNotice(3, 3, 2.0, "HTTP 503"))
        LOG_FIELDS.reset(token)
        assert queue.qsize() == 1
        got = queue.get_nowait()
        assert json.loads(json.dumps(got))["attempt"] == 3


def test_a_stream_that_opens_during_a_back_off_gets_the_pending_retry() -> None:
    from seam.contracts.model import RetryNotice
    from seam.wiring.web import LOG_FIELDS

    board = RetryBoard()
    token = LOG_FIELDS.set({"session": "mine", "submission": "s"})
    board(RetryNotice(2, 4, 30.0, "HTTP 503"))
    LOG_FIELDS.reset(token)
    with board.subscribe("mine") as queue:
        late = queue.get_nowait()
        assert late["attempt"] == 2 and 29 < late["delay"] <= 30
    board.seen("mine")  # the attempt began
    with board.subscribe("mine") as queue:
        assert queue.empty()
